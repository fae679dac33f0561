"""What every adapter shares: per-call bookkeeping that turns provider facts into our events.

An adapter reads one provider's stream and says, in provider terms, "call X started", "here is
a fragment of its arguments", "it is complete", "the response was cut off". ``CallBook`` turns
those facts into the five native events and holds the rules every provider gets the same way:

- empty argument text (nothing, or only whitespace) means "no arguments" and becomes ``{}``;
- a call that was cut off (token limit, a stream error, a stream that just ends) is never made
  ready: it ends in ``error`` with ``kind`` ``"truncated"`` and a message that says so, even if
  the text it has so far happens to parse;
- a call keeps the id and name it started with, whatever later chunks repeat.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

from .._errors import InvalidChunk
from .._record import TRUNCATED

Event = dict[str, Any]


@dataclass(slots=True)
class _Call:
    id: str
    name: str
    has_text: bool = False  # a non-blank fragment was emitted
    open: bool = True  # started and neither ready nor ended


class CallBook:
    """The calls of one stream, by id, and the events that move them."""

    __slots__ = ("calls", "out", "seen")

    def __init__(self) -> None:
        self.calls: dict[str, _Call] = {}
        self.out: list[Event] = []
        self.seen: set[str] = set()  # ids the provider gave in this stream, started or not

    def start(self, call_id: str, name: str) -> _Call:
        if call_id in self.calls:
            # Two calls under one id (a provider repeating one, or a provider id equal to one
            # generated earlier): the later call gets a suffix rather than merge into the first.
            number = 2
            while f"{call_id}_{number}" in self.calls or f"{call_id}_{number}" in self.seen:
                number += 1
            call_id = f"{call_id}_{number}"
        call = _Call(call_id, name)
        self.calls[call_id] = call
        self.out.append({"type": "start", "id": call_id, "name": name})
        return call

    def delta(self, call: _Call, text: str) -> None:
        if text and call.open:
            if not call.has_text and not text.isspace():
                call.has_text = True
            self.out.append({"type": "delta", "id": call.id, "argsTextDelta": text})

    def ready(self, call: _Call) -> None:
        """The call's arguments are complete; no text at all means ``{}``."""
        if call.open:
            if not call.has_text:
                self.out.append({"type": "delta", "id": call.id, "argsTextDelta": "{}"})
            call.open = False
            self.out.append({"type": "ready", "id": call.id})

    def truncate(self, call: _Call, why: str) -> None:
        """The call was cut off before its arguments were complete: it ends in error."""
        if call.open:
            call.open = False
            message = f"arguments truncated: {why}"
            error = {"kind": TRUNCATED, "message": message}
            self.out.append({"type": "error", "id": call.id, "error": error})

    def fail(self, call: _Call, kind: str, message: str) -> None:
        """End an open call in error for a reason other than truncation."""
        if call.open:
            call.open = False
            error = {"kind": kind, "message": message}
            self.out.append({"type": "error", "id": call.id, "error": error})

    def open_calls(self) -> list[_Call]:
        return [call for call in self.calls.values() if call.open]

    def take(self) -> list[Event]:
        """The events produced since the last call, in order."""
        out = self.out
        self.out = []
        return out


class StreamAdapter:
    """Base of the adapters: ``feed`` a chunk, get events; ``finish`` at the end of a stream.

    Adapters are sans-I/O and synchronous. ``events`` wraps an iterator (sync or async) of
    chunks into an async iterator of events, so ``session.run(adapter.events(stream))`` is
    the whole loop. One adapter reads one stream at a time; after ``finish`` it may read the
    next one, and the ids it generates keep counting, so they stay unique across turns.
    """

    #: Prefix of the ids generated for calls the provider sent without one.
    id_prefix = "call"

    def __init__(self, *, id_prefix: str | None = None) -> None:
        if id_prefix is not None:
            self.id_prefix = id_prefix
        self._book = CallBook()
        self._generated = 0
        self.generated_ids: set[str] = set()

    #: For adapters of typed event streams: the handler of each ``type`` (others are ignored).
    _handlers: ClassVar[dict[str, Callable[[Any, Any], object]]] = {}

    def feed(self, chunk: Any) -> list[Event]:
        """Read one chunk (an SDK object or its JSON as a dict); return the events it makes."""
        handler = self._handlers.get(field(chunk, "type"))
        if handler is None:
            return []
        handler(self, chunk)
        book = self._book
        return book.take() if book.out else []

    def finish(self) -> list[Event]:
        """The stream ended: calls still open were cut off and end in error (truncated)."""
        return self._cut_off("the stream ended before the call was complete")

    def _cut_off(self, why: str) -> list[Event]:
        book = self._book
        for call in book.open_calls():
            book.truncate(call, why)
        self._reset()
        return book.take()

    def _reset(self) -> None:
        """Forget per-stream routing so the adapter can read another stream."""
        self._book.calls.clear()
        self._book.seen.clear()

    def _new_id(self) -> str:
        """A deterministic id for a call the provider did not name: prefix and a counter,
        skipping any id the provider used in this stream."""
        book = self._book
        while True:
            call_id = f"{self.id_prefix}_{self._generated}"
            self._generated += 1
            if call_id not in book.calls and call_id not in book.seen:
                self.generated_ids.add(call_id)
                return call_id

    def feed_all(self, chunks: Iterable[Any]) -> list[Event]:
        """Every event of a whole recorded stream, ``finish()`` included."""
        out: list[Event] = []
        for chunk in chunks:
            out.extend(self.feed(chunk))
        out.extend(self.finish())
        return out

    async def events(self, stream: AsyncIterable[Any] | Iterable[Any]) -> AsyncIterator[Event]:
        """Events of every chunk of ``stream`` (an SDK stream, async or not), then ``finish``.

        A plain iterator other than a list or tuple (a synchronous SDK stream waiting on the
        network) is read on a worker thread of its own, so the event loop, and the tools it runs,
        never wait on it. If reading the stream raises (a dropped connection, say), the calls
        still open are truncated, naming the error, and then the error propagates.
        """
        try:
            if isinstance(stream, (list, tuple)):
                for chunk in stream:
                    for event in self.feed(chunk):
                        yield event
            else:
                chunks = stream if isinstance(stream, AsyncIterable) else _on_a_thread(stream)
                async for chunk in chunks:
                    for event in self.feed(chunk):
                        yield event
        except InvalidChunk:
            raise
        except Exception as error:
            for event in self._cut_off(
                f"reading the stream failed ({type(error).__name__}: {error})"
            ):
                yield event
            raise
        for event in self.finish():
            yield event


async def _on_a_thread(stream: Iterable[Any]) -> AsyncIterator[Any]:
    """The chunks of a blocking iterator, each ``next`` run on one worker thread of its own (not
    the loop's default pool, which blocking tools may fill)."""
    chunks = iter(stream)
    loop = asyncio.get_running_loop()
    reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolcalls-stream-reader")
    try:
        while True:
            chunk = await loop.run_in_executor(reader, next, chunks, _ABSENT)
            if chunk is _ABSENT:
                return
            yield chunk
    finally:
        reader.shutdown(wait=False)


def field(obj: Any, name: str) -> Any:
    """``obj[name]`` for a mapping, ``obj.name`` for an SDK object; ``None`` when absent."""
    if type(obj) is dict:
        return obj.get(name)
    value = getattr(obj, name, _ABSENT)
    if value is _ABSENT:
        return obj.get(name) if isinstance(obj, Mapping) else None
    return value


_ABSENT: Any = object()


def field2(obj: Any, wire: str, python: str) -> Any:
    """A field under its wire (camelCase) or Python (snake_case) name."""
    if type(obj) is dict or isinstance(obj, Mapping):
        value = obj.get(wire)
        return obj.get(python) if value is None else value
    return getattr(obj, python, None)


def text_field(obj: Any, name: str, where: str) -> str:
    """A string field that may be absent (``""``); anything else is an ``InvalidChunk``."""
    value = field(obj, name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidChunk(f"{where}.{name}", f"expected a string, got {type(value).__name__}")
    return value
