"""The AI SDK UI message stream protocol: its chunks in, our events out.

The protocol's tool chunks map onto ours: ``tool-input-start`` is ``start``,
``tool-input-delta`` is ``delta``, ``tool-input-available`` is ``ready`` (its parsed ``input``
becomes the arguments when no delta streamed them, and a call that streamed nothing is ``{}``),
``tool-output-available`` is ``result``, and ``tool-input-error``, ``tool-output-error`` and
``tool-output-denied`` are ``error``. A ``tool-input-available`` or ``tool-input-error`` for a
call that never started starts it first. An ``error`` or ``abort`` chunk, or a stream that just
ends, cuts the calls still streaming their input off: they end in error, truncated.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import AdapterError
from ._base import StreamAdapter, _Call, text_field
from ._base import field as get


class AISDKAdapter(StreamAdapter):
    """Reads AI SDK UI message stream chunks (the JSON of each SSE ``data:`` line)."""

    def _start(self, chunk: Any) -> None:
        self._call(chunk, start=True)

    def _delta(self, chunk: Any) -> None:
        call = self._call(chunk, start=False)
        if call is not None:
            self._book.delta(call, text_field(chunk, "inputTextDelta", "tool-input-delta"))

    def _available(self, chunk: Any) -> None:
        call = self._call(chunk, start=True)
        if call is not None and call.open:
            given = get(chunk, "input")
            if not call.has_text and given is not None:
                self._book.delta(call, json.dumps(given, ensure_ascii=False))
            self._book.ready(call)

    def _input_error(self, chunk: Any) -> None:
        call = self._call(chunk, start=True)
        if call is not None:
            message = text_field(chunk, "errorText", "tool-input-error") or "invalid tool input"
            self._book.fail(call, "invalid_input", message)

    def _output(self, chunk: Any) -> None:
        event = {"type": "result", "id": self._id(chunk), "result": get(chunk, "output")}
        self._book.out.append(event)

    def _output_error(self, chunk: Any) -> None:
        message = text_field(chunk, "errorText", "tool-output-error") or "the tool failed"
        self._ended(chunk, "tool_error", message)

    def _denied(self, chunk: Any) -> None:
        self._ended(chunk, "denied", "the user denied running this call")

    def _ended(self, chunk: Any, kind: str, message: str) -> None:
        error = {"kind": kind, "message": message}
        self._book.out.append({"type": "error", "id": self._id(chunk), "error": error})

    def _stream_error(self, chunk: Any) -> None:
        kind = get(chunk, "type")
        why = "the stream was aborted" if kind == "abort" else "the stream failed"
        text = get(chunk, "errorText") or get(chunk, "reason")
        for call in self._book.open_calls():
            self._book.truncate(call, f"{why} ({text})" if text else why)

    def _id(self, chunk: Any) -> str:
        call_id = get(chunk, "toolCallId")
        if not isinstance(call_id, str) or not call_id:
            raise AdapterError(f"{get(chunk, 'type')}.toolCallId", "missing or not a string")
        return call_id

    def _call(self, chunk: Any, *, start: bool) -> _Call | None:
        call_id = self._id(chunk)
        call = self._book.calls.get(call_id)
        if call is None and start:
            name = text_field(chunk, "toolName", str(get(chunk, "type")))
            if not name:
                raise AdapterError(f"{get(chunk, 'type')}.toolName", "missing")
            call = self._book.start(call_id, name)
        return call


AISDKAdapter._handlers = {
    "tool-input-start": AISDKAdapter._start,
    "tool-input-delta": AISDKAdapter._delta,
    "tool-input-available": AISDKAdapter._available,
    "tool-input-error": AISDKAdapter._input_error,
    "tool-output-available": AISDKAdapter._output,
    "tool-output-error": AISDKAdapter._output_error,
    "tool-output-denied": AISDKAdapter._denied,
    "error": AISDKAdapter._stream_error,
    "abort": AISDKAdapter._stream_error,
}
