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
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from .._errors import AdapterError
from .._execution import ToolCallState
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

    def __init__(self, *, id_prefix: str | None = None) -> None:
        super().__init__(id_prefix=id_prefix)
        self._streaming: dict[int, _Streaming] = {}

    def _reset(self) -> None:
        super()._reset()
        self._streaming.clear()

    def feed(self, chunk: Any) -> list[Event]:
        book = self._book
        for candidate in get(chunk, "candidates") or ():
            number = get(candidate, "index") or 0
            content = get(candidate, "content")
            for part in (get(content, "parts") or ()) if content is not None else ():
                function_call = field2(part, "functionCall", "function_call")
                if function_call is not None:
                    self._function_call(number, function_call)
            reason = field2(candidate, "finishReason", "finish_reason")
            if reason is not None:
                reason = str(getattr(reason, "value", reason))
                streaming = self._streaming.pop(number, None)
                if streaming is not None:
                    if reason == "STOP":
                        self._end(streaming)
                    else:
                        why = f"the candidate finished with {reason!r}"
                        book.truncate(streaming.call, why)
        return book.take() if book.out else []

    def _function_call(self, number: int, function_call: Any) -> None:
        book = self._book
        name = get(function_call, "name")
        partial = field2(function_call, "partialArgs", "partial_args")
        goes_on = bool(field2(function_call, "willContinue", "will_continue"))
        streaming = self._streaming.get(number)
        if name:
            if streaming is not None:  # a new call begins: the previous one ended
                self._end(self._streaming.pop(number))
            call = book.start(get(function_call, "id") or self._new_id(), name)
            if not goes_on and not partial:
                args = get(function_call, "args")
                if args:
                    book.delta(call, json.dumps(_plain(args), ensure_ascii=False))
                book.ready(call)
                return
            streaming = self._streaming[number] = _Streaming(call)
        elif streaming is None:
            return  # an empty terminator with no call streaming (Vertex repeats it)
        for piece in partial or ():
            _apply(streaming, piece)
        if not goes_on:
            self._end(self._streaming.pop(number))

    def _end(self, streaming: _Streaming) -> None:
        if streaming.args:
            self._book.delta(streaming.call, json.dumps(streaming.args, ensure_ascii=False))
        self._book.ready(streaming.call)

    def finish(self) -> list[Event]:
        self._streaming.clear()
        return super().finish()

    def function_response(self, call: Settled) -> dict[str, Any]:
        """The ``functionResponse`` part for a settled call; the id goes back only if the
        model sent it (one this adapter generated means nothing to the model)."""
        call_id = call.tool_call_id if isinstance(call, ToolCallState) else call.id
        return gemini_function_response(call, send_id=call_id not in self.generated_ids)


def _apply(streaming: _Streaming, piece: Any) -> None:
    """Set the value of one ``partialArgs`` entry at its JSON path."""
    path = field2(piece, "jsonPath", "json_path")
    if not isinstance(path, str) or not path.startswith("$"):
        raise AdapterError("functionCall.partialArgs[].jsonPath", f"not a JSON path: {path!r}")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = _STEP.match(path, position)
        if match is None:
            raise AdapterError("functionCall.partialArgs[].jsonPath", f"cannot read {path!r}")
        name, index, single, double = match.groups()
        if index is not None:
            steps.append(int(index))
        else:
            steps.append(name if name is not None else (single if single is not None else double))
        position = match.end()
    if not steps:
        raise AdapterError("functionCall.partialArgs[].jsonPath", "the path names no field")
    value, is_string = _value(piece)
    container: Any = streaming.args
    for step, following in itertools.pairwise(steps):
        container = _child(container, step, [] if isinstance(following, int) else {})
    last = steps[-1]
    if is_string and path in streaming.continuing:
        before = _get(container, last)
        value = (before if isinstance(before, str) else "") + value
    _set(container, last, value)
    if is_string and field2(piece, "willContinue", "will_continue"):
        streaming.continuing.add(path)
    else:
        streaming.continuing.discard(path)


def _value(piece: Any) -> tuple[Any, bool]:
    for wire, python in (("numberValue", "number_value"), ("boolValue", "bool_value")):
        value = field2(piece, wire, python)
        if value is not None:
            return value, False
    text = field2(piece, "stringValue", "string_value")
    if text is not None:
        return text, True
    return None, False  # nullValue, or nothing: JSON null


def _child(container: Any, step: str | int, empty: Any) -> Any:
    current = _get(container, step)
    if current is None:
        _set(container, step, empty)
        current = empty
    return current


def _get(container: Any, step: str | int) -> Any:
    if isinstance(container, dict):
        return container.get(step)
    if isinstance(step, int) and isinstance(container, list) and step < len(container):
        return container[step]
    return None


def _set(container: Any, step: str | int, value: Any) -> None:
    if isinstance(container, dict) and isinstance(step, str):
        container[step] = value
    elif isinstance(container, list) and isinstance(step, int):
        container.extend([None] * (step + 1 - len(container)))
        container[step] = value
    else:
        where = "an object" if isinstance(container, dict) else "an array"
        raise AdapterError("functionCall.partialArgs[].jsonPath", f"{step!r} cannot index {where}")


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if dump is not None else value
