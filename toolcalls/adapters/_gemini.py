"""Gemini ``generateContent`` stream chunks (Gemini API and Vertex AI) in, our events out.

The Gemini API sends each function call whole, in one part: ``name``, ``args`` as an object,
and often no ``id``. Parallel calls are several parts, possibly in several chunks, with no
index; a call without an id gets a deterministic one (``call_0``, ``call_1``, ...).

Vertex AI with ``streamFunctionCallArguments`` streams a call instead: a part with the ``name``
and ``willContinue``, then parts whose ``partialArgs`` set values addressed by JSON path
(``$.location``, ``$.items[0].name``; a string value with ``willContinue`` goes on in the next
piece for that path), ended by an empty ``functionCall`` or one without ``willContinue``. The
adapter rebuilds the arguments and emits them as JSON text when the call ends. A candidate that
finishes for a reason other than ``STOP`` (``MAX_TOKENS``, say) while a call streams, or a
stream that just ends, cuts that call off: it ends in error, truncated, and never runs.

Gemini's thinking models put a ``thoughtSignature`` on a function call's part, and want it back
with that part in the next request. The adapter keeps each call's signature
(``thought_signatures``, across streams) and ``function_call_part(call)`` rebuilds the model's
part with it, for the history.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .._errors import InvalidChunk
from .._execution import ExecutionView
from ._base import Event, StreamAdapter, _Call, field2
from ._base import field as get
from ._results import Settled, gemini_function_response

_STEP = re.compile(
    r"\.([A-Za-z_$][\w$-]*)"  # .name
    r"|\[(\d+)\]"  # [0]
    r"|\['((?:[^'\\]|\\.)*)'\]"  # ['name']
    r'|\["((?:[^"\\]|\\.)*)"\]'  # ["name"]
)


@dataclass(slots=True)
class _Streaming:
    """A Vertex call whose arguments are still arriving."""

    call: _Call
    args: dict[str, Any] = field(default_factory=dict)
    continuing: set[str] = field(default_factory=set)  # paths whose string goes on


class GeminiAdapter(StreamAdapter):
    """Reads ``GenerateContentResponse`` chunks (google-genai objects or wire dicts)."""

    def __init__(self, *, id_prefix: str | None = None, candidate: int | None = 0) -> None:
        """``candidate`` is the index of the candidate whose calls are reported
        (``candidateCount > 1`` asks for alternative answers, and each would run its tools);
        ``None`` reports every candidate's."""
        super().__init__(id_prefix=id_prefix)
        if candidate is not None and (type(candidate) is not int or candidate < 0):
            raise ValueError(
                f"candidate must be a candidate index (an int >= 0) or None, not {candidate!r}"
            )
        self.candidate = candidate
        self._streaming: dict[int, _Streaming] = {}
        #: Whole calls the model sent with an id, as ``(name, args text)``: the same call
        #: delivered again (a retried or replayed chunk) is skipped, never run twice.
        self._whole: dict[str, tuple[str, str]] = {}
        #: The ``thoughtSignature`` (base64 text) of each call that had one, by call id; kept
        #: after ``finish()``, since the next request sends it back (``function_call_part``).
        self.thought_signatures: dict[str, str] = {}

    def _reset(self) -> None:
        super()._reset()
        self._streaming.clear()
        self._whole.clear()

    def _feed(self, chunk: Any) -> list[Event]:
        # Read the whole chunk first: a malformed part raises before anything changed.
        candidates = [_read_candidate(candidate) for candidate in get(chunk, "candidates") or ()]
        if self.candidate is not None:
            candidates = [read for read in candidates if read[0] == self.candidate]
        book = self._book
        for _, calls, _ in candidates:
            book.seen.update(call.id for call in calls if call.id is not None)
        for number, calls, reason in candidates:
            for function_call in calls:
                self._function_call(number, function_call)
            if reason is not None:
                streaming = self._streaming.pop(number, None)
                if streaming is not None:
                    if reason == "STOP":
                        self._complete(streaming)
                    else:
                        why = f"the candidate finished with {reason!r}"
                        book.truncate(streaming.call, why)
        return book.take() if book.out else []

    def _function_call(self, number: int, function_call: _FunctionCall) -> None:
        book = self._book
        streaming = self._streaming.get(number)
        if function_call.name:
            if streaming is not None:  # a new call begins: the previous one ended
                self._complete(self._streaming.pop(number))
            whole = not function_call.goes_on and not function_call.pieces
            if whole and function_call.id is not None:
                seen = (function_call.name, function_call.args_text)
                if self._whole.get(function_call.id) == seen:
                    return  # the same whole call delivered again: it already ran once
                self._whole[function_call.id] = seen
            call = book.start(function_call.id or self._new_id(), function_call.name)
            if function_call.signature is not None:
                self.thought_signatures[call.id] = function_call.signature
            if whole:
                book.delta(call, function_call.args_text)
                book.ready(call)
                return
            streaming = self._streaming[number] = _Streaming(call)
        elif streaming is None:
            return  # an empty terminator with no call streaming (Vertex repeats it)
        elif function_call.signature is not None:  # the signature may come on a later part
            self.thought_signatures.setdefault(streaming.call.id, function_call.signature)
        for piece in function_call.pieces:
            _apply(streaming, piece)
        if not function_call.goes_on:
            self._complete(self._streaming.pop(number))

    def _complete(self, streaming: _Streaming) -> None:
        if streaming.args:
            self._book.delta(streaming.call, json.dumps(streaming.args, ensure_ascii=False))
        self._book.ready(streaming.call)

    def _end(self, failure: str | None) -> list[Event]:
        self._streaming.clear()
        return super()._end(failure)

    def function_response(self, call: Settled) -> dict[str, Any]:
        """The ``functionResponse`` part for a settled call; the id goes back only if the
        model sent it (one this adapter generated means nothing to the model)."""
        call_id = call.tool_call_id if isinstance(call, ExecutionView) else call.id
        return gemini_function_response(call, send_id=call_id not in self.generated_ids)

    def function_call_part(self, call: Settled) -> dict[str, Any]:
        """The model's ``functionCall`` part of a call (wire keys), for the history sent back:
        its name and arguments, its id if the model sent one, and its ``thoughtSignature`` if
        it had one (thinking models refuse a history whose calls lost theirs)."""
        if isinstance(call, ExecutionView):
            call_id, name, args = call.tool_call_id, call.tool_name, call.args
        else:
            call_id, name, args = call.id, call.name, call.args
        plain = _thawed(args) if isinstance(args, Mapping) else {}
        body: dict[str, Any] = {"name": name, "args": plain}
        if call_id not in self.generated_ids:
            body["id"] = call_id
        part: dict[str, Any] = {"functionCall": body}
        signature = self.thought_signatures.get(call_id)
        if signature is not None:
            part["thoughtSignature"] = signature
        return part


@dataclass(frozen=True, slots=True)
class _Piece:
    """One ``partialArgs`` entry, read: where, what, and whether its string goes on."""

    path: str
    steps: tuple[str | int, ...]
    value: Any
    is_string: bool
    goes_on: bool


@dataclass(frozen=True, slots=True)
class _FunctionCall:
    name: str | None
    id: str | None
    args_text: str  # the whole arguments of a complete call, as JSON text ("" for none)
    pieces: tuple[_Piece, ...]
    goes_on: bool
    signature: str | None = None  # the part's thoughtSignature, as base64 text


_WHERE = "candidates[].content.parts[].functionCall"
#: The largest array index a JSON path may name: the arguments are built as the path says, so
#: ``$.items[30000000]`` would otherwise be 30 million nulls from 30 bytes of wire.
_MAX_INDEX = 100_000


def _read_candidate(candidate: Any) -> tuple[int, list[_FunctionCall], str | None]:
    number = get(candidate, "index") or 0
    if type(number) is not int:
        raise InvalidChunk("candidates[].index", f"expected an integer, got {_kind(number)}")
    content = get(candidate, "content")
    calls = []
    for part in (get(content, "parts") or ()) if content is not None else ():
        function_call = field2(part, "functionCall", "function_call")
        if function_call is not None:
            read = _read_function_call(function_call)
            signature = field2(part, "thoughtSignature", "thought_signature")
            if signature is not None:
                read = replace(read, signature=_signature_text(signature))
            calls.append(read)
    reason = field2(candidate, "finishReason", "finish_reason")
    return number, calls, None if reason is None else str(getattr(reason, "value", reason))


def _thawed(value: Any) -> Any:
    """A call's arguments as plain JSON data (a view's are read-only mappings and tuples)."""
    if isinstance(value, Mapping):
        return {key: _thawed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thawed(item) for item in value]
    return value


def _signature_text(signature: Any) -> str:
    """A ``thoughtSignature`` as the wire's base64 text (google-genai holds it as bytes)."""
    if isinstance(signature, bytes):
        return base64.b64encode(signature).decode("ascii")
    if isinstance(signature, str):
        return signature
    where = "candidates[].content.parts[].thoughtSignature"
    raise InvalidChunk(where, f"expected base64 text or bytes, got {_kind(signature)}")


def _read_function_call(function_call: Any) -> _FunctionCall:
    name, call_id = get(function_call, "name"), get(function_call, "id")
    for key, value in (("name", name), ("id", call_id)):
        if value is not None and not isinstance(value, str):
            raise InvalidChunk(f"{_WHERE}.{key}", f"expected a string, got {_kind(value)}")
    args = get(function_call, "args")
    if args is not None and not isinstance(args, Mapping):
        raise InvalidChunk(f"{_WHERE}.args", f"expected an object, got {_kind(args)}")
    args_text = ""
    if args:
        try:
            args_text = json.dumps(_plain(args), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise InvalidChunk(f"{_WHERE}.args", f"not JSON: {error}") from None
    pieces = tuple(
        _read_piece(piece) for piece in field2(function_call, "partialArgs", "partial_args") or ()
    )
    goes_on = bool(field2(function_call, "willContinue", "will_continue"))
    return _FunctionCall(name or None, call_id or None, args_text, pieces, goes_on)


def _read_piece(piece: Any) -> _Piece:
    where = f"{_WHERE}.partialArgs[].jsonPath"
    path = field2(piece, "jsonPath", "json_path")
    if not isinstance(path, str) or not path.startswith("$"):
        raise InvalidChunk(where, f"not a JSON path: {path!r}")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = _STEP.match(path, position)
        if match is None:
            raise InvalidChunk(where, f"cannot read {path!r} at {path[position:]!r}")
        name, index, single, double = match.groups()
        if index is not None:
            if len(index) > 6 or int(index) > _MAX_INDEX:
                raise InvalidChunk(where, f"array index {index} in {path!r} is over {_MAX_INDEX}")
            steps.append(int(index))
        else:
            steps.append(name if name is not None else (single if single is not None else double))
        position = match.end()
    if not steps or not isinstance(steps[0], str):
        raise InvalidChunk(where, f"{path!r} must start with a field of the arguments object")
    value, is_string = _value(piece)
    goes_on = is_string and bool(field2(piece, "willContinue", "will_continue"))
    return _Piece(path, tuple(steps), value, is_string, goes_on)


def _apply(streaming: _Streaming, piece: _Piece) -> None:
    """Set the value of one ``partialArgs`` entry at its path. A later path wins over an
    earlier one it contradicts (a field first given as text, then as an array)."""
    container: Any = streaming.args
    for step, following in itertools.pairwise(piece.steps):
        container = _child(container, step, int if isinstance(following, int) else str)
    last = piece.steps[-1]
    value = piece.value
    if piece.is_string and piece.path in streaming.continuing:
        before = _get(container, last)
        value = (before if isinstance(before, str) else "") + value
    _set(container, last, value)
    if piece.goes_on:
        streaming.continuing.add(piece.path)
    else:
        streaming.continuing.discard(piece.path)


def _value(piece: Any) -> tuple[Any, bool]:
    where = f"{_WHERE}.partialArgs[]"
    number = field2(piece, "numberValue", "number_value")
    if number is not None:
        if type(number) not in (int, float) or not math.isfinite(number):
            raise InvalidChunk(f"{where}.numberValue", f"expected a finite number, got {number!r}")
        # A protobuf double: google-genai reads 3 as 3.0, JSON as 3. The same stream gives the
        # same arguments either way, and an integer stays an integer.
        if isinstance(number, float) and number.is_integer() and abs(number) <= 2**53:
            number = int(number)
        return number, False
    flag = field2(piece, "boolValue", "bool_value")
    if flag is not None:
        if type(flag) is not bool:
            raise InvalidChunk(f"{where}.boolValue", f"expected true or false, got {flag!r}")
        return flag, False
    text = field2(piece, "stringValue", "string_value")
    if text is not None:
        if not isinstance(text, str):
            raise InvalidChunk(f"{where}.stringValue", f"expected a string, got {_kind(text)}")
        return text, True
    return None, False  # nullValue, or nothing: JSON null


def _child(container: Any, step: str | int, key: type) -> Any:
    """The container at ``step``, made (or remade) to take keys of type ``key``."""
    current = _get(container, step)
    if not isinstance(current, dict if key is str else list):
        current = {} if key is str else []
        _set(container, step, current)
    return current


def _get(container: Any, step: str | int) -> Any:
    if isinstance(container, dict):
        return container.get(step)
    if isinstance(step, int) and step < len(container):
        return container[step]
    return None


def _set(container: Any, step: str | int, value: Any) -> None:
    if isinstance(container, dict):
        container[step] = value
    else:
        assert isinstance(step, int)
        container.extend([None] * (step + 1 - len(container)))
        container[step] = value


def _kind(value: Any) -> str:
    return type(value).__name__


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if dump is not None else value
