"""OpenAI Responses API: stream events in, our events out.

A ``function_call`` output item starts a call (``response.output_item.added``), named by its
``call_id`` (the id results go back under), not its item ``id``. Argument deltas are routed by
``output_index``, which counts every output item and stays put; the ``item_id`` may rotate
between events of one call, so it is only a fallback. ``response.function_call_arguments.done``
or ``response.output_item.done`` makes the call ready (with the item's full arguments when no
delta carried them). ``response.incomplete`` (``max_output_tokens``), ``response.failed``, an
``error`` event, or a stream that just ends cuts the open calls off: they end in error,
truncated, and never run.
"""

from __future__ import annotations

from typing import Any

from ._base import Event, StreamAdapter, _Call, int_field, text_field
from ._base import field as get


class OpenAIResponsesAdapter(StreamAdapter):
    """Reads OpenAI Responses stream events (``ResponseStreamEvent`` or dicts)."""

    def __init__(self, *, id_prefix: str | None = None) -> None:
        super().__init__(id_prefix=id_prefix)
        self._by_index: dict[int, _Call] = {}
        self._by_item: dict[str, _Call] = {}
        self._text: dict[str, list[str]] = {}  # the argument text streamed, by call id
        self._items: dict[str, tuple[int | None, str]] = {}  # call id -> (output index, item id)
        self._last_sequence = -1

    def _reset(self) -> None:
        super()._reset()
        self._by_index.clear()
        self._by_item.clear()
        self._text.clear()
        self._items.clear()
        self._last_sequence = -1

    def _feed(self, chunk: Any) -> list[Event]:
        number = get(chunk, "sequence_number")
        if type(number) is int:
            # Events are numbered in order: one seen again (a resumed stream redelivers from
            # ``starting_after``) or out of order is skipped, never applied twice.
            if number <= self._last_sequence:
                return []
            events = super()._feed(chunk)  # a refused event (InvalidChunk) keeps its number
            self._last_sequence = number
            return events
        return super()._feed(chunk)

    def _delta(self, chunk: Any) -> None:
        text = text_field(chunk, "delta", "delta")
        call = self._route(chunk)
        if call is not None and call.open and text:
            self._text.setdefault(call.id, []).append(text)
            self._book.delta(call, text)

    def _arguments_done(self, chunk: Any) -> None:
        arguments = text_field(chunk, "arguments", "arguments.done")
        call = self._route(chunk)
        if call is not None:
            self._complete(call, arguments)

    def _item_done(self, chunk: Any) -> None:
        item = get(chunk, "item")
        if item is not None and get(item, "type") == "function_call":
            arguments = text_field(item, "arguments", "item")
            call = self._route(chunk) or self._added(chunk)
            if call is None:
                return
            if get(item, "status") == "incomplete":  # closed by max_output_tokens
                self._book.truncate(call, "the response closed the item as incomplete")
            else:
                self._complete(call, arguments)

    def _completed(self, chunk: Any) -> None:
        self._settle_all(get(chunk, "response"))

    def _incomplete(self, chunk: Any) -> None:
        response = get(chunk, "response")
        details = None if response is None else get(response, "incomplete_details")
        reason = None if details is None else get(details, "reason")
        self._cut(f"the response is incomplete ({reason or 'no reason given'})")

    def _failed(self, chunk: Any) -> None:
        self._cut(f"the stream failed ({_failure(chunk)})")

    def _cut(self, why: str) -> None:
        for call in self._book.open_calls():
            self._book.truncate(call, why)

    def _added(self, chunk: Any) -> _Call | None:
        item = get(chunk, "item")
        if item is None or get(item, "type") != "function_call":
            return None
        # Everything is read before anything changes (A6).
        name = text_field(item, "name", "item")
        arguments = text_field(item, "arguments", "item")
        item_id = text_field(item, "id", "item")
        call_id = text_field(item, "call_id", "item") or item_id
        index = int_field(chunk, "output_index", str(get(chunk, "type")))
        book = self._book
        call = self._same_item(call_id, index, item_id)
        if call is None:  # a new item; one bringing a taken id gets a suffix (A5)
            call = book.start(call_id or self._new_id(), name or "(unnamed)")
            self._items[call.id] = (index, item_id)
            if arguments:
                self._text[call.id] = [arguments]
                book.delta(call, arguments)
        if index is not None:
            self._by_index[index] = call
        if item_id:
            self._by_item[item_id] = call
        return call

    def _same_item(self, call_id: str, index: int | None, item_id: str) -> _Call | None:
        """The call this item already started (the item delivered again), if any: the call of
        that id, if it came from the same item (by item id, or lacking one, output index)."""
        call = self._book.calls.get(call_id) if call_id else None
        if call is None:
            return None
        known_index, known_item = self._items.get(call.id, (None, ""))
        if item_id and known_item:
            return call if item_id == known_item else None
        return call if index == known_index else None

    def _route(self, chunk: Any) -> _Call | None:
        index = int_field(chunk, "output_index", str(get(chunk, "type")))
        call = self._by_index.get(index) if index is not None else None
        item_id = text_field(chunk, "item_id", str(get(chunk, "type")))
        if call is None:
            call = self._by_item.get(item_id) if item_id else None
            if call is None and index is None:
                open_calls = self._book.open_calls()
                call = open_calls[0] if len(open_calls) == 1 else None
        if call is not None and item_id:
            self._by_item[item_id] = call  # a rotated item id names the same call
        return call

    def _complete(self, call: _Call, arguments: str) -> None:
        """The item's final ``arguments`` are the truth: if the deltas said something else
        (a lost or repeated delta), the call fails rather than run on the wrong text."""
        if not call.open:
            return
        streamed = "".join(self._text.pop(call.id, ()))
        if not streamed.strip():
            self._book.delta(call, arguments)
        elif arguments and arguments != streamed:
            message = "the streamed arguments differ from the item's final arguments; not run"
            self._book.fail(call, "arguments_mismatch", message)
            return
        self._book.ready(call)

    def _settle_all(self, response: Any) -> None:
        """``response.completed``: calls whose done events never came take their arguments
        from the final output items."""
        book = self._book
        output = (get(response, "output") or ()) if response is not None else ()
        finals = [
            (
                text_field(item, "call_id", "response.output[]"),
                text_field(item, "arguments", "response.output[]"),
                get(item, "status"),
            )
            for item in output
            if get(item, "type") == "function_call"
        ]
        for call_id, arguments, status in finals:
            call = book.calls.get(call_id)
            if call is not None and call.open:
                if status == "incomplete":
                    book.truncate(call, "the response closed the item as incomplete")
                else:
                    self._complete(call, arguments)
        for call in book.open_calls():
            book.ready(call)


OpenAIResponsesAdapter._handlers = {
    "response.function_call_arguments.delta": OpenAIResponsesAdapter._delta,
    "response.output_item.added": OpenAIResponsesAdapter._added,
    "response.function_call_arguments.done": OpenAIResponsesAdapter._arguments_done,
    "response.output_item.done": OpenAIResponsesAdapter._item_done,
    "response.completed": OpenAIResponsesAdapter._completed,
    "response.incomplete": OpenAIResponsesAdapter._incomplete,
    "response.failed": OpenAIResponsesAdapter._failed,
    "error": OpenAIResponsesAdapter._failed,
}


def _failure(chunk: Any) -> str:
    error = get(chunk, "error")
    if error is None:
        response = get(chunk, "response")
        error = None if response is None else get(response, "error")
    if error is None:
        return str(get(chunk, "type"))
    code, message = get(error, "code"), get(error, "message")
    return ": ".join(str(part) for part in (code, message) if part) or "no reason given"
