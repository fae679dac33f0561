"""Anthropic Messages: raw stream events in, our events out.

A ``tool_use`` content block starts a call (``content_block_start``, with the call's ``id`` and
``name``); ``input_json_delta`` fragments are routed by the block ``index``. A block may carry
its whole ``input`` in ``content_block_start`` and no deltas: that input is the arguments. A
no-argument call streams a single empty ``partial_json``: that means ``{}``.

``content_block_stop`` alone does not prove a call complete: when the message hits
``max_tokens`` the open block is stopped too, and its partial input may happen to parse. So a
stopped call becomes ready as soon as the model is seen to go on (a later block starts) or the
message says why it stopped (``message_delta``) with a reason other than a limit. ``max_tokens``
or ``model_context_window_exceeded``, an ``error`` event, or a stream that ends first cut the
open calls off: they end in error, truncated, and never run. ``server_tool_use`` blocks run on
Anthropic's side and are not reported. A ``content_block_start`` seen again for the same index
(same block type, id and name) is the same block delivered twice and changes nothing; so is a
``message_start`` seen again with the same message id. Indices count again from 0 in each
message, and a new message cuts off the calls the last one never proved complete.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from .._errors import InvalidChunk
from ._base import StreamAdapter, _Call, int_field, text_field
from ._base import field as get

_CUT = frozenset({"max_tokens", "model_context_window_exceeded", "refusal"})


class AnthropicAdapter(StreamAdapter):
    """Reads Anthropic Messages stream events (``RawMessageStreamEvent`` or dicts)."""

    id_prefix = "toolu"

    def __init__(self, *, id_prefix: str | None = None) -> None:
        super().__init__(id_prefix=id_prefix)
        self._blocks: dict[int, _Call] = {}
        self._start_input: dict[str, Any] = {}
        self._stopped: list[_Call] = []  # stopped blocks waiting to be proven complete
        #: The blocks started in this message, by index: (block type, provider id, name).
        self._started: dict[int, tuple[Any, str, str]] = {}
        self._message: str | None = None  # the id of the message being read

    def _reset(self) -> None:
        super()._reset()
        self._blocks.clear()
        self._start_input.clear()
        self._stopped.clear()
        self._started.clear()
        self._message = None

    def _message_start(self, chunk: Any) -> None:
        """A new message: block indices count from 0 again. Calls of the last message that
        were never proven complete are cut off; the same message delivered again (same id)
        changes nothing."""
        message = get(chunk, "message")
        message_id = text_field(message, "id", "message_start.message") if message else ""
        if message_id and message_id == self._message:
            return
        if self._book.open_calls():
            self._cut("a new message started before the last one said why it stopped")
        self._message = message_id or None
        self._started.clear()
        self._blocks.clear()

    def _delta(self, chunk: Any) -> None:
        call = self._blocks.get(int_field(chunk, "index", "content_block_delta", required=True))
        if call is not None:
            delta = get(chunk, "delta")
            if get(delta, "type") == "input_json_delta":
                self._book.delta(call, text_field(delta, "partial_json", "delta"))

    def _block_start(self, chunk: Any) -> None:
        index = int_field(chunk, "index", "content_block_start", required=True)
        block = get(chunk, "content_block")
        kind = None if block is None else get(block, "type")
        name = given_id = ""
        if kind == "tool_use":
            name = text_field(block, "name", "content_block")
            if not name:
                raise InvalidChunk("content_block.name", "missing (the tool's name)")
            given_id = text_field(block, "id", "content_block")
            given = get(block, "input")
            if (
                given is not None
                and not isinstance(given, Mapping)
                and not hasattr(given, "model_dump")
            ):
                raise InvalidChunk(
                    "content_block.input", f"expected an object, got {type(given).__name__}"
                )
        repeated = self._started.get(index)
        if repeated is not None:
            if repeated == (kind, given_id, name):
                return  # the same block delivered again: it changes nothing (A5)
            raise InvalidChunk(
                "content_block_start.index",
                f"block {index} already started in this message, as {_describe(repeated)}",
            )
        self._started[index] = (kind, given_id, name)
        self._release()  # a later block started: the model went on
        if kind == "tool_use":
            call = self._book.start(given_id or self._new_id(), name)
            self._blocks[index] = call
            if given:
                self._start_input[call.id] = given

    def _block_stop(self, chunk: Any) -> None:
        call = self._blocks.pop(
            int_field(chunk, "index", "content_block_stop", required=True), None
        )
        if call is not None:
            self._stopped.append(call)

    def _message_delta(self, chunk: Any) -> None:
        delta = get(chunk, "delta")
        reason = None if delta is None else get(delta, "stop_reason")
        if reason is not None and not isinstance(reason, str):
            raise InvalidChunk(
                "message_delta.delta.stop_reason", f"expected a string, got {reason!r}"
            )
        if reason in _CUT:
            self._cut(f"the message stopped at {reason!r}")
        elif reason is not None:
            self._release()

    def _message_stop(self, chunk: Any) -> None:
        self._release()

    def _error(self, chunk: Any) -> None:
        error = get(chunk, "error")
        why = "the stream failed"
        if error is not None:
            why += f" ({get(error, 'type')}: {get(error, 'message')})"
        self._cut(why)

    def _cut(self, why: str) -> None:
        for call in self._book.open_calls():
            self._book.truncate(call, why)
        self._stopped.clear()

    _handlers: ClassVar[dict[str, Callable[[Any, Any], object]]] = {
        "message_start": _message_start,
        "content_block_delta": _delta,
        "content_block_start": _block_start,
        "content_block_stop": _block_stop,
        "message_delta": _message_delta,
        "message_stop": _message_stop,
        "error": _error,
    }

    def _release(self) -> None:
        """Make every stopped call ready: the model went on, so none was cut off."""
        book = self._book
        for call in self._stopped:
            given = self._start_input.pop(call.id, None)
            if not call.has_text and given is not None:
                book.delta(call, json.dumps(_plain(given), ensure_ascii=False))
            book.ready(call)
        self._stopped.clear()


def _describe(block: tuple[Any, str, str]) -> str:
    kind, call_id, name = block
    return f"tool_use {call_id!r} ({name!r})" if kind == "tool_use" else f"a {kind!r} block"


def _plain(value: Any) -> Any:
    """An SDK model's input as plain JSON data (the input of a block is already a dict)."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if dump is not None else value
