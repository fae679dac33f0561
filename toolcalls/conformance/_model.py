"""Seed 000 (section T of docs/spec.md) written as plainly as possible: the suite's oracle.

``SeedModel`` keeps each call as its wire shape in a dict and applies the rules one by one. It
shares no code with ``toolcalls``' tracker (not its chart, its record or its parser), so a
mistake in the tracker cannot hide by being made on both sides of a comparison. ``apply``
returns what the event did (applied, or why not, and the status after it), which
implementations that report it are held to as well.

Arguments parse as ``JSON.parse`` does (T13), with this project's two limits (nesting deeper
than 256 levels and numbers beyond a double fail); ``parse_failure_error`` is the exact
``error`` T8 gives a call whose arguments did not parse, for implementations held to T8's
wording (this package's tracker); other implementations word it as they like.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: The event types of the seed (T4).
TYPES = ("start", "delta", "ready", "result", "error")
FINAL = ("done", "error")
#: How deeply arguments may nest (T13).
DEPTH_LIMIT = 256
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


@dataclass(frozen=True)
class Effect:
    """What one event did: ``applied``, else ``reason`` (``unknown_id``, ``duplicate_start``,
    ``not_allowed``); ``status`` is the call's status afterwards (``None``: no such call)."""

    applied: bool
    status: str | None
    reason: str | None = None


class _ParseFailed(Exception):
    """The argument text is not JSON as T13 reads it; ``error`` is T8's ``error`` value."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.error = error


def joined_pairs(text: str) -> str:
    """``text`` with each high + low surrogate pair made the character it encodes (T27)."""
    return _PAIR.sub(
        lambda pair: chr(
            0x10000 + ((ord(pair.group()[0]) - 0xD800) << 10) + (ord(pair.group()[1]) - 0xDC00)
        ),
        text,
    )


def _failure(message: str, text: str, position: int | None) -> _ParseFailed:
    error: dict[str, Any] = {
        "type": "invalid_arguments",
        "message": f"arguments are not valid JSON: {message}",
    }
    if position is not None:
        line = text.count("\n", 0, position) + 1
        error["position"] = position
        error["line"] = line
        error["column"] = position - (text.rfind("\n", 0, position) + 1) + 1
    return _ParseFailed(error)


#: A JSON string literal from its opening quote: to its closing quote, or to the end of the
#: text when it is unterminated (a backslash escapes the next character, the last one too).
_STRING = re.compile(r'"(?:[^"\\]|\\[\s\S])*(?:"|\\?\Z)')


def _unquoted(text: str) -> Iterator[tuple[int, str]]:
    """Each character of ``text`` outside JSON string literals, with its index (quotes and
    the literals' contents left out); a literal is skipped in one step."""
    index, end = 0, len(text)
    while index < end:
        quote = text.find('"', index)
        if quote < 0:
            yield from enumerate(text[index:], index)
            return
        yield from enumerate(text[index:quote], index)
        found = _STRING.match(text, quote)
        assert found is not None  # it matches from any quote
        index = found.end()


def _outside_strings(text: str, token: str) -> int:
    """Where ``token`` first occurs outside a JSON string literal (0 if nowhere)."""
    first = token[:1]
    for index, char in _unquoted(text):
        if char == first and text.startswith(token, index):
            return index
    return 0


def _depth_exceeded_at(text: str) -> int | None:
    """The position of the first bracket nested deeper than ``DEPTH_LIMIT``, or ``None``."""
    depth = 0
    for index, char in _unquoted(text):
        if char in "[{":
            depth += 1
            if depth > DEPTH_LIMIT:
                return index
        elif char in "]}":
            depth -= 1
    return None


class _Constant(Exception):
    def __init__(self, token: str, message: str) -> None:
        super().__init__(message)
        self.token = token


def _constant(name: str) -> Any:
    raise _Constant(name, f"{name} is not a JSON value")


def _too_big(text: str) -> _Constant:
    shown = text if len(text) <= 20 else text[:20] + "…"
    return _Constant(text, f"number {shown} is out of range")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _too_big(text)
    return value


def _int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > 320:  # far beyond a double (about 1.8e308); int() would refuse it anyway
        raise _too_big(text)
    value = int(text)
    if abs(value) >= 2**1024 - 2**970:  # rounds to infinity as a double
        raise _too_big(text)
    return value


def _strings_joined(value: Any) -> Any:
    if isinstance(value, str):
        return joined_pairs(value)
    if isinstance(value, list):
        return [_strings_joined(item) for item in value]
    if isinstance(value, dict):
        return {joined_pairs(key): _strings_joined(item) for key, item in value.items()}
    return value


def parse_arguments(text: str) -> Any:
    """The value ``text`` holds, as T13 reads JSON; raises ``_ParseFailed`` with T8's error."""
    too_deep = _depth_exceeded_at(text)
    if too_deep is not None:
        raise _failure(f"arguments nest deeper than {DEPTH_LIMIT} levels", text, too_deep)
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except _Constant as rejected:
        raise _failure(str(rejected), text, _outside_strings(text, rejected.token)) from None
    except json.JSONDecodeError as error:
        raise _failure(error.msg, text, error.pos) from None
    except RecursionError:
        raise _failure("arguments nest too deeply to parse", text, None) from None
    return _strings_joined(value)


class SeedModel:
    """The calls of seed 000 by id, in start order, each in its wire shape (T15)."""

    def __init__(self) -> None:
        self.calls: dict[str, dict[str, Any]] = {}
        #: The ids of calls whose arguments did not parse (their ``error`` is T8's).
        self.parse_failures: set[str] = set()

    def apply(self, event: dict[str, Any]) -> Effect | None:
        """Apply one well-formed event; ``None`` when its type is not the seed's (nothing
        changes: an implementation may refuse it)."""
        kind, call_id = event.get("type"), event.get("id")
        if kind not in TYPES:
            return None
        call = self.calls.get(call_id)  # type: ignore[arg-type]
        if kind == "start":
            if call is not None:
                return Effect(False, call["status"], "duplicate_start")
            self.calls[call_id] = {  # type: ignore[index]
                "id": call_id,
                "name": event["name"],
                "argsText": "",
                "status": "pending",
            }
            return Effect(True, "pending")
        if call is None:
            return Effect(False, None, "unknown_id")
        status = call["status"]
        if kind == "delta" and status == "pending":
            call["argsText"] = joined_pairs(call["argsText"] + event["argsTextDelta"])
        elif kind == "ready" and status == "pending":
            try:
                call["args"] = parse_arguments(call["argsText"])
                call["status"] = "running"
            except _ParseFailed as failure:
                call["status"], call["error"] = "error", failure.error
                self.parse_failures.add(call_id)  # type: ignore[arg-type]
        elif kind == "result" and status == "running":
            call["status"] = "done"
            if "result" in event:  # T26: a result event may leave its value out
                call["result"] = copy.deepcopy(event["result"])
        elif kind == "error" and status in ("pending", "running"):
            call["status"] = "error"
            if "error" in event:
                call["error"] = copy.deepcopy(event["error"])
        else:
            return Effect(False, status, "not_allowed")
        return Effect(True, call["status"])

    def get(self, call_id: str) -> dict[str, Any] | None:
        call = self.calls.get(call_id)
        return None if call is None else copy.deepcopy(call)

    def list(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(call) for call in self.calls.values()]

    def parse_failed(self, call_id: str) -> bool:
        """Whether the call ended in error because its arguments did not parse."""
        return call_id in self.parse_failures
