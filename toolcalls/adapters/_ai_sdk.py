"""The AI SDK UI message stream protocol: its chunks in, our events out.

``tool-input-start`` starts a call. Its ``tool-input-delta`` text is kept, not forwarded:
``tool-input-available`` carries the input the AI SDK itself settled on (it may have repaired
the model's text), and that input becomes the arguments (the streamed text when it has none;
``{}`` when there is neither).

A call with its input available is not ready yet: within the same step the stream may still
ask the user to approve it (``tool-approval-request``) or report that the server ran it
(``tool-output-available``). So calls become ready at the end of the step (``finish-step``,
``finish``, or the end of the stream), and then the session runs them; a call the server ran
becomes ready with its result at once (the session aborts its own run before it starts), and a
call waiting for approval ends in ``error`` with ``kind`` ``"approval_requested"``, not run.
A ``preliminary`` output is progress, not the result. ``tool-input-error``,
``tool-output-error`` and ``tool-output-denied`` end the call in ``error``. An ``error`` or
``abort`` chunk cuts the calls not yet ready off, and a stream that ends those still streaming
their input: they end in error, truncated.

A call marked ``providerExecuted`` ran on the provider's side (a provider's web search, say):
it is not reported at all, and its later chunks are ignored.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import InvalidChunk
from ._base import Event, StreamAdapter, _Call, text_field
from ._base import field as get

_NO_INPUT: Any = object()


class AISDKAdapter(StreamAdapter):
    """Reads AI SDK UI message stream chunks (the JSON of each SSE ``data:`` line)."""

    def __init__(self, *, id_prefix: str | None = None) -> None:
        super().__init__(id_prefix=id_prefix)
        self._provider_run: set[str] = set()  # ids of provider-executed calls
        self._text: dict[str, list[str]] = {}  # streamed input text, by call id
        self._available: dict[str, Any] = {}  # calls whose input is complete, until step end

    def _reset(self) -> None:
        super()._reset()
        self._text.clear()
        self._available.clear()

    def _feed(self, chunk: Any) -> list[Event]:
        call_id = get(chunk, "toolCallId")
        if call_id is not None:
            if not isinstance(call_id, str):
                raise InvalidChunk(f"{get(chunk, 'type')}.toolCallId", "missing or not a string")
            if get(chunk, "providerExecuted") is True:
                self._provider_run.add(call_id)
            if call_id in self._provider_run:
                return []
        return super()._feed(chunk)

    def _start(self, chunk: Any) -> None:
        self._call(chunk, start=True)

    def _delta(self, chunk: Any) -> None:
        text = text_field(chunk, "inputTextDelta", "tool-input-delta")
        call = self._call(chunk, start=False)
        if call is not None and call.open and call.id not in self._available:
            self._text.setdefault(call.id, []).append(text)

    def _input_available(self, chunk: Any) -> None:
        given = get(chunk, "input")
        if given is not None:
            try:
                text = json.dumps(given, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as error:
                raise InvalidChunk("tool-input-available.input", f"not JSON: {error}") from None
        call = self._call(chunk, start=True)
        if call is not None and call.open:
            self._available[call.id] = _NO_INPUT if given is None else text

    def _release(self, call_id: str) -> _Call | None:
        """Make a call whose input is available ready, with its arguments."""
        call = self._book.calls.get(call_id)
        text = self._available.pop(call_id, _NO_INPUT)
        streamed = self._text.pop(call_id, [])
        if call is None:
            return None
        for piece in [text] if text is not _NO_INPUT else streamed:
            self._book.delta(call, piece)
        self._book.ready(call)
        return call

    def _step_end(self, chunk: Any) -> None:
        for call_id in list(self._available):
            self._release(call_id)

    def _approval(self, chunk: Any) -> None:
        call_id = self._id(chunk)
        approval = get(chunk, "approvalId")
        call = self._book.calls.get(call_id)
        if call is not None and call.open:
            self._available.pop(call_id, None)
            self._text.pop(call_id, None)
            where = f" ({approval})" if isinstance(approval, str) and approval else ""
            message = f"the stream asks the user to approve this call{where}; it was not run"
            self._book.fail(call, "approval_requested", message)

    def _input_error(self, chunk: Any) -> None:
        message = text_field(chunk, "errorText", "tool-input-error") or "invalid tool input"
        call = self._call(chunk, start=True)
        if call is not None:
            self._forget(call.id)
            self._book.fail(call, "invalid_input", message)

    def _output(self, chunk: Any) -> None:
        call_id = self._id(chunk)
        if get(chunk, "preliminary") is True:
            return  # progress of a streaming tool, not its result
        if call_id in self._available:
            self._release(call_id)  # the server ran it within the step
        event = {"type": "result", "id": call_id, "result": get(chunk, "output")}
        self._book.out.append(event)

    def _output_error(self, chunk: Any) -> None:
        message = text_field(chunk, "errorText", "tool-output-error") or "the tool failed"
        self._ended(chunk, "tool_error", message)

    def _denied(self, chunk: Any) -> None:
        self._ended(chunk, "denied", "the user denied running this call")

    def _ended(self, chunk: Any, kind: str, message: str) -> None:
        call_id = self._id(chunk)
        self._forget(call_id)
        error = {"kind": kind, "message": message}
        call = self._book.calls.get(call_id)
        if call is not None:
            call.open = False
        self._book.out.append({"type": "error", "id": call_id, "error": error})

    def _stream_error(self, chunk: Any) -> None:
        kind = get(chunk, "type")
        why = "the stream was aborted" if kind == "abort" else "the stream failed"
        text = get(chunk, "errorText") or get(chunk, "reason")
        self._available.clear()
        self._text.clear()
        for call in self._book.open_calls():
            self._book.truncate(call, f"{why} ({text})" if text else why)

    def _end(self, failure: str | None) -> list[Event]:
        # A stream that ended cleanly without closing the step: what was available is
        # complete. One that failed proves nothing: those calls are cut off with the rest.
        if failure is None:
            for call_id in list(self._available):
                self._release(call_id)
        self._available.clear()
        self._text.clear()
        return super()._end(failure)

    def _forget(self, call_id: str) -> None:
        self._available.pop(call_id, None)
        self._text.pop(call_id, None)

    def _id(self, chunk: Any) -> str:
        call_id = get(chunk, "toolCallId")
        if not isinstance(call_id, str) or not call_id:
            raise InvalidChunk(f"{get(chunk, 'type')}.toolCallId", "missing or not a string")
        return call_id

    def _call(self, chunk: Any, *, start: bool) -> _Call | None:
        call_id = self._id(chunk)
        call = self._book.calls.get(call_id)
        if call is None and start:
            name = text_field(chunk, "toolName", str(get(chunk, "type")))
            if not name:
                raise InvalidChunk(f"{get(chunk, 'type')}.toolName", "missing")
            call = self._book.start(call_id, name)
        return call


AISDKAdapter._handlers = {
    "tool-input-start": AISDKAdapter._start,
    "tool-input-delta": AISDKAdapter._delta,
    "tool-input-available": AISDKAdapter._input_available,
    "tool-approval-request": AISDKAdapter._approval,
    "tool-input-error": AISDKAdapter._input_error,
    "tool-output-available": AISDKAdapter._output,
    "tool-output-error": AISDKAdapter._output_error,
    "tool-output-denied": AISDKAdapter._denied,
    "finish-step": AISDKAdapter._step_end,
    "finish": AISDKAdapter._step_end,
    "error": AISDKAdapter._stream_error,
    "abort": AISDKAdapter._stream_error,
}
