"""What the tracker records for one call: the chart instance's model.

Fields hold ``UNSET`` until the seed says they exist: ``args`` after a successful ``ready``,
``result`` once a result arrived (``None`` is a result), ``error`` once the call failed.
Argument fragments are kept as a list and joined once, when the text is needed, so streaming
N bytes costs time linear in N.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final


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


class CallRecord:
    """One call's data; its status is the state of the chart instance that owns it."""

    __slots__ = ("_outcome", "args", "error", "id", "name", "parts", "result", "seq")

    def __init__(self, call_id: str, name: str, seq: int) -> None:
        self.id = call_id
        self.name = name
        self.seq = seq
        self.parts: list[str] = []
        self.args: Any = UNSET
        self.result: Any = UNSET
        self.error: Any = UNSET
        self._outcome: Any = UNSET

    @property
    def args_text(self) -> str:
        """The accumulated argument text (joined once, then kept joined)."""
        parts = self.parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""

    def parse_arguments(self) -> bool:
        """Parse the arguments; keep the parsed value or the failure for ``take_parsed``."""
        text = self.args_text
        try:
            self._outcome = parse_json(text)
        except ValueError as failure:
            self._outcome = parse_failure(failure)
            return False
        return True

    @property
    def parsed(self) -> Any:
        """The value ``parse_arguments`` produced (taken once)."""
        value, self._outcome = self._outcome, UNSET
        return value

    @property
    def parse_error(self) -> dict[str, Any]:
        """The failure ``parse_arguments`` produced (taken once)."""
        value: dict[str, Any] = self.parsed
        return value


class _ConstantError(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``, which JSON.parse rejects and Python accepts."""


def _reject_constant(name: str) -> Any:
    raise _ConstantError(name)


_CONSTANT_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN')


def _constant_position(text: str, name: str) -> int:
    """Where the first ``name`` token outside a string literal starts."""
    for match in _CONSTANT_OR_STRING.finditer(text):
        if match.group() == name:
            return match.start()
    return 0


def _parse_int(text: str) -> int | float:
    """Integers beyond Python's digit limit parse as JSON.parse parses them: as a float."""
    return float(text) if len(text) > 4000 else int(text)


def parse_json(text: str) -> Any:
    """Parse ``text`` with ``JSON.parse`` semantics (RFC 8259): ``NaN``, ``Infinity`` and the
    empty string fail, surrounding whitespace is fine. Raises ``ValueError`` on failure."""
    try:
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except (json.JSONDecodeError, _ConstantError):
            raise
        except ValueError:
            # An integer past Python's digit limit: JSON.parse reads it as a float.
            return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int)
    except _ConstantError as error:
        name = str(error)
        message = f"{name} is not a JSON value"
        raise json.JSONDecodeError(message, text, _constant_position(text, name)) from None
    except RecursionError:
        raise ValueError("arguments nest too deeply to parse") from None


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
