"""What the tracker records for one call: the chart instance's model.

Fields hold ``UNSET`` until they exist (T14): ``args`` after a successful ``ready``,
``result`` once a result arrived (``None`` is a result), ``error`` once the call failed.
Argument fragments are kept as a list and joined once, when the text is needed, so streaming
N bytes costs time linear in N.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal


class _Unset:
    """The type of ``UNSET``: a field the call does not have (as opposed to ``None``)."""

    _instance: _Unset | None = None

    def __new__(cls) -> _Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


Status = Literal["pending", "running", "done", "error"]
STATUSES: tuple[Status, ...] = ("pending", "running", "done", "error")
FINISHED: frozenset[str] = frozenset({"done", "error"})
#: ``kind`` of the error that ends a call whose arguments were cut off before they were complete
#: (the provider adapters end such calls with it; the session reports them, S2).
TRUNCATED: Final = "truncated"


class ToolCallModel:
    """One call's data; its status is the state of the chart instance that owns it."""

    __slots__ = ("args", "error", "id", "name", "parts", "result", "seq")

    def __init__(self, call_id: str, name: str, seq: int) -> None:
        self.id = call_id
        self.name = name
        self.seq = seq
        self.parts: list[str] = []
        self.args: Any = UNSET
        self.result: Any = UNSET
        self.error: Any = UNSET

    @property
    def args_text(self) -> str:
        """The accumulated argument text (joined once, then kept joined), as JavaScript would
        hold it: a surrogate pair split across fragments is one character."""
        parts = self.parts
        if len(parts) == 1:
            text = parts[0]
            if text.isascii():
                return text
        text = utf16_text("".join(parts))
        parts[:] = [text]
        return text

    def parse_arguments(self) -> bool:
        """The chart's parse step: parse the complete text as JSON.parse would and keep the
        value in ``args``, or the failure in ``error``. Returns whether it parsed."""
        try:
            self.args = parse_json(self.args_text)
        except ValueError as failure:
            self.error = parse_failure(failure)
            return False
        return True

    @property
    def parsed(self) -> Any:
        """The arguments the parse step produced (``args``); reading them changes nothing."""
        return self.args


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf16_text(text: str) -> str:
    """``text`` with every high + low surrogate pair made the one character it encodes.

    A server that splits text in UTF-16 code units (as JavaScript strings are) may end one
    fragment with the high half of a pair and start the next with the low half; JavaScript's
    concatenation then holds one character, Python's two lone surrogates that cannot be
    encoded. Lone surrogates stay as they are."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallView:
    """The tracker's immutable view of one call, in the seed's wire shape (T2, T15, T16).

    ``args``, ``result`` and ``error`` are ``UNSET`` until the call has them (``None`` is a
    real value). The view holds its own copies: changing them never changes the tracker.
    """

    id: str
    name: str
    args_text: str
    args: Any = UNSET
    status: Status
    result: Any = UNSET
    error: Any = UNSET

    @property
    def has_args(self) -> bool:
        return self.args is not UNSET

    @property
    def has_result(self) -> bool:
        return self.result is not UNSET

    @property
    def has_error(self) -> bool:
        return self.error is not UNSET

    def to_dict(self) -> dict[str, Any]:
        """The wire shape (T15): camelCase keys, keys that are not set left out."""
        data: dict[str, Any] = {"id": self.id, "name": self.name, "argsText": self.args_text}
        if self.args is not UNSET:
            data["args"] = copy.deepcopy(self.args)
        data["status"] = self.status
        if self.result is not UNSET:
            data["result"] = copy.deepcopy(self.result)
        if self.error is not UNSET:
            data["error"] = copy.deepcopy(self.error)
        return data


#: The name before 0.2, so views pickled under it still load (``toolcalls.ToolCall`` warns).
ToolCall = ToolCallView


#: How deeply arguments may nest. JSON.parse allows more, but a deeper value could not be
#: copied into views (Python recurses per level), so it is a parse failure here.
MAX_DEPTH = 256


class _Rejected(ValueError):
    """A token JSON.parse would turn into something this tracker cannot keep."""

    def __init__(self, token: str, message: str) -> None:
        super().__init__(message)
        self.token = token


def reject_constant(name: str) -> Any:
    """A ``parse_constant`` for ``json.loads``: ``NaN`` and ``Infinity`` are not JSON."""
    raise _Rejected(name, f"{name} is not a JSON value")


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _out_of_range(text)
    return value


#: Digits beyond which an integer is certainly outside a double's range (its maximum is about
#: 1.8e308, 309 digits); JSON allows no leading zeros, so the count is exact up to the sign.
_MAX_INT_DIGITS = 310


def _parse_int(text: str) -> int:
    """An integer, kept exact (JSON.parse would round beyond 2**53); one outside a double's
    range fails as a float literal would (JSON.parse would give Infinity)."""
    if len(text) > _MAX_INT_DIGITS:
        raise _out_of_range(text)
    value = int(text)
    if len(text) >= _MAX_INT_DIGITS - 2:
        try:
            float(value)
        except OverflowError:
            raise _out_of_range(text) from None
    return value


def _out_of_range(text: str) -> _Rejected:
    return _Rejected(text, f"number {text[:20]}{'…' if len(text) > 20 else ''} is out of range")


_BRACKET = re.compile(r'[\[\]{}"\\]')


def _outside_strings(text: str, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` (which also matches ``"`` and ``\\``) that lie outside
    string literals, in one pass: linear however many escaped quotes the text holds (a
    pattern for whole string literals backtracks over an unclosed one at every quote)."""
    in_string, skip = False, -1
    for match in pattern.finditer(text):
        at, found = match.start(), match.group()
        if at <= skip:  # the character after a backslash
            continue
        if in_string:
            if found == "\\":
                skip = at + 1
            elif found == '"':
                in_string = False
        elif found == '"':
            in_string = True
        elif found != "\\":
            yield match


def _token_position(text: str, token: str) -> int:
    """Where ``token`` first appears outside a string literal (0 if it cannot be found)."""
    pattern = re.compile(r'["\\]|' + re.escape(token))
    return next((match.start() for match in _outside_strings(text, pattern)), 0)


def _too_deep_at(text: str) -> int | None:
    """Where the nesting first exceeds ``MAX_DEPTH``, or ``None``; cheap for ordinary text."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for match in _outside_strings(text, _BRACKET):
        if match.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        else:
            depth -= 1
    return None


_DECODER: Final = json.JSONDecoder(
    parse_constant=reject_constant, parse_float=_parse_float, parse_int=_parse_int
)
#: For text too short to hold an integer ``_parse_int`` checks (the usual case): the scanner's
#: own integers, the same values without a Python call per number.
_SHORT_DECODER: Final = json.JSONDecoder(parse_constant=reject_constant, parse_float=_parse_float)
_SHORT: Final = _MAX_INT_DIGITS - 2


def parse_json(text: str, what: str = "arguments nest") -> Any:
    """Parse ``text`` with ``JSON.parse`` semantics (RFC 8259): ``NaN``, ``Infinity`` and the
    empty string fail, surrounding whitespace is fine. Two limits of this tracker fail too:
    nesting deeper than ``MAX_DEPTH`` and numbers, integer or not, outside a double's range
    (JSON.parse would give Infinity, which JSON cannot write back). One difference: integers
    are kept exact, where JSON.parse rounds those beyond 2**53. Raises ``ValueError``
    (usually ``json.JSONDecodeError``, with the position) on failure; ``what`` starts the
    message for nesting too deep."""
    too_deep = _too_deep_at(text)
    if too_deep is not None:
        raise json.JSONDecodeError(f"{what} deeper than {MAX_DEPTH} levels", text, too_deep)
    if text.startswith("\ufeff"):  # as json.loads (and JSON.parse) refuse it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        value = (_SHORT_DECODER if len(text) < _SHORT else _DECODER).decode(text)
    except _Rejected as error:
        raise json.JSONDecodeError(str(error), text, _token_position(text, error.token)) from None
    except RecursionError:
        raise ValueError("arguments nest too deeply to parse") from None
    if not text.isascii() and _SURROGATE.search(text) is not None:
        # A raw surrogate half next to an escaped one (text split in UTF-16 code units):
        # JSON.parse holds one character, json.loads two halves.
        value = _pairs_joined(value)
    return value


def _pairs_joined(value: Any) -> Any:
    """``value`` with every string's surrogate pairs made characters (see ``utf16_text``)."""
    if type(value) is str:
        return utf16_text(value)
    if type(value) is list:
        return [_pairs_joined(item) for item in value]
    if type(value) is dict:
        return {utf16_text(key): _pairs_joined(item) for key, item in value.items()}
    return value


def parse_failure(failure: ValueError) -> dict[str, Any]:
    """The ``error`` of a call whose arguments are not valid JSON: the parser's message and,
    when it has one, the position (0-based character offset, 1-based line and column)."""
    if isinstance(failure, json.JSONDecodeError):
        return {
            "type": "invalid_arguments",
            "message": f"arguments are not valid JSON: {failure.msg}",
            "position": failure.pos,
            "line": failure.lineno,
            "column": failure.colno,
        }
    return {"type": "invalid_arguments", "message": f"arguments are not valid JSON: {failure}"}
