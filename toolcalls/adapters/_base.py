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
import contextvars
import threading
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from contextlib import AbstractAsyncContextManager, aclosing, nullcontext
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, overload

from .._errors import InvalidChunk, StreamSuperseded
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
        self._reading: object | None = None  # the stream ``events()`` is reading, if any
        self._inside = False  # ``events()`` itself is feeding or finishing

    #: For adapters of typed event streams: the handler of each ``type`` (others are ignored).
    _handlers: ClassVar[dict[str, Callable[[Any, Any], object]]] = {}

    def feed(self, chunk: Any) -> list[Event]:
        """Read one chunk (an SDK object or its JSON as a dict); return the events it makes.

        Fed by hand while an ``events()`` still holds an unfinished stream (one its consumer
        broke out of), that stream is abandoned first: this chunk starts a new one."""
        if self._reading is not None and not self._inside:
            self._abandon()
        return self._feed(chunk)

    def _feed(self, chunk: Any) -> list[Event]:
        """``feed`` for adapters of typed event streams: the handler of the chunk's ``type``."""
        kind = field(chunk, "type")
        if not isinstance(kind, str):
            if kind is None:
                return []
            raise InvalidChunk("type", f"expected a string, got {type(kind).__name__}")
        handler = self._handlers.get(kind)
        if handler is None:
            return []
        handler(self, chunk)
        book = self._book
        return book.take() if book.out else []

    def finish(self) -> list[Event]:
        """The stream ended: calls still open were cut off and end in error (truncated)."""
        if self._reading is not None and not self._inside:
            self._abandon()
        return self._end(None)

    def _end(self, failure: str | None) -> list[Event]:
        """End the stream: it ran out (``failure`` is ``None``) or failed, saying why. Calls
        still open are cut off, and the adapter is ready for another stream."""
        why = failure or "the stream ended before the call was complete"
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

    async def events(
        self, stream: AsyncIterable[Any] | Iterable[Any], *, inline: bool = False
    ) -> AsyncIterator[Event]:
        """Events of every chunk of ``stream`` (an SDK stream, async or not), then ``finish``.

        A plain iterator other than a list or tuple (a synchronous SDK stream waiting on the
        network) is read ahead on a daemon thread of its own, in the caller's context, so the
        event loop, and the tools it runs, never wait on it; ``inline=True`` reads it on the
        loop's thread instead (for iterators tied to their thread). If reading the stream fails
        (a dropped connection, a chunk that raises ``InvalidChunk``), the calls still open are
        truncated, naming the error, and then the error propagates. One adapter reads one
        stream at a time: a consumer that stops early leaves the adapter ready for the next
        stream, and if the adapter is handed another stream (``events()``, ``feed``,
        ``finish``) before this one ended, this one raises ``StreamSuperseded``.
        """
        if self._reading is not None:  # an earlier stream was abandoned, never finished
            self._abandon()
        token = self._reading = object()
        ended = False  # the stream ran out, or failed and was cut off
        try:
            async with aclosing(self._read(stream, inline, token)) as events:
                async for event in events:
                    yield event
            ended = True
        except Exception as error:
            ended = True
            if self._reading is not token:
                raise
            self._reading = None
            why = f"reading the stream failed ({type(error).__name__}: {error})"
            for event in self._end(why):
                yield event
            raise
        finally:
            if self._reading is token:
                self._reading = None
                if not ended:  # closed or cancelled mid-stream
                    self._abandon()
        for event in self._end(None):
            yield event

    async def _read(
        self, stream: AsyncIterable[Any] | Iterable[Any], inline: bool, token: object
    ) -> AsyncGenerator[Event, None]:
        """The events of each chunk, until the stream ends; ``StreamSuperseded`` if another
        stream takes the adapter over meanwhile."""
        closing: AbstractAsyncContextManager[Any] = nullcontext()
        if isinstance(stream, AsyncIterable):
            chunks: AsyncIterable[Any] = stream  # the caller's own stream stays theirs to close
        elif inline or isinstance(stream, (list, tuple)):
            for chunk in stream:
                for event in self._owned_feed(chunk, token):
                    yield event
                    _check_owner(self, token)
            return
        else:
            chunks = _read_ahead(stream)
            closing = aclosing(chunks)
        async with closing:
            async for chunk in chunks:
                for event in self._owned_feed(chunk, token):
                    yield event
                    _check_owner(self, token)

    def _owned_feed(self, chunk: Any, token: object) -> list[Event]:
        _check_owner(self, token)
        self._inside = True
        try:
            return self._feed(chunk)
        finally:
            self._inside = False

    def _abandon(self) -> None:
        """Forget a stream its consumer stopped reading: its routing, and events not taken."""
        self._reading = None
        self._book.take()
        self._reset()


#: How many chunks the reader thread buffers for the consumer. A batch handed over frees its
#: room at once, so at most twice as many are read ahead of what the consumer has seen.
_READ_AHEAD = 512


class _Reader:
    """Reads a blocking iterator on a daemon thread, handing chunks to the loop in batches.

    The thread wakes the loop only when the consumer is waiting, so a fast stream costs a
    batch hand-over, not a thread hop per chunk; a daemon thread never holds up interpreter
    exit when a consumer gives up on a stream that hangs.
    """

    def __init__(self, stream: Iterable[Any], loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.room = threading.Semaphore(_READ_AHEAD)
        self.buffer: deque[Any] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.done = False
        self.error: BaseException | None = None
        self.stopped = False
        context = contextvars.copy_context()
        self.thread = threading.Thread(
            target=context.run,
            args=(self._read, iter(stream)),
            name="toolcalls-stream-reader",
            daemon=True,
        )

    def _read(self, chunks: Iterator[Any]) -> None:
        try:
            while True:
                self.room.acquire()
                if self.stopped:
                    return
                chunk = next(chunks, _ABSENT)
                if chunk is _ABSENT:
                    break
                self._hand_over(chunk)
        except BaseException as error:  # handed to the consumer, which re-raises it
            self.error = error
        self._hand_over(_ABSENT)

    def _hand_over(self, chunk: Any) -> None:
        with self.lock:
            if chunk is _ABSENT:
                self.done = True
            else:
                self.buffer.append(chunk)
            waiter, self.waiter = self.waiter, None
        if waiter is not None and not self.stopped:
            try:
                self.loop.call_soon_threadsafe(_wake, waiter)
            except RuntimeError:  # the loop closed (its consumer was cancelled with it)
                self.stopped = True

    async def chunks(self) -> AsyncGenerator[Any, None]:
        self.thread.start()
        try:
            while True:
                with self.lock:
                    batch = list(self.buffer)
                    self.buffer.clear()
                    done = self.done
                    if not batch and not done:
                        waiter = self.waiter = self.loop.create_future()
                if batch:
                    self.room.release(len(batch))
                    for chunk in batch:
                        yield chunk
                elif done:
                    if self.error is not None:
                        raise self.error
                    return
                else:
                    await waiter
        finally:
            with self.lock:
                self.stopped = True
                self.waiter = None
            self.room.release()  # a reader waiting for room wakes, sees the stop, and ends


def _check_owner(adapter: StreamAdapter, token: object) -> None:
    if adapter._reading is not token:
        raise StreamSuperseded(
            "this adapter was handed another stream before this one ended; its open calls "
            "belong to the new stream's reader now (one adapter reads one stream at a time)"
        )


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _read_ahead(stream: Iterable[Any]) -> AsyncGenerator[Any, None]:
    """The chunks of a blocking iterator, read ahead on a daemon thread (see ``_Reader``)."""
    return _Reader(stream, asyncio.get_running_loop()).chunks()


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


@overload
def int_field(obj: Any, name: str, where: str, *, required: Literal[True]) -> int: ...
@overload
def int_field(obj: Any, name: str, where: str, *, required: bool = False) -> int | None: ...
def int_field(obj: Any, name: str, where: str, *, required: bool = False) -> int | None:
    """An integer field (a ``bool`` is not one); absent gives ``None`` unless ``required``.

    Anything else is an ``InvalidChunk`` naming the field: an index of the wrong type could
    only route fragments to the wrong call.
    """
    value = field(obj, name)
    if type(value) is int or (value is None and not required):
        return value
    got = "nothing" if value is None else type(value).__name__
    raise InvalidChunk(f"{where}.{name}", f"expected an integer, got {got}")


def text_field(obj: Any, name: str, where: str) -> str:
    """A string field that may be absent (``""``); anything else is an ``InvalidChunk``."""
    value = field(obj, name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidChunk(f"{where}.{name}", f"expected a string, got {type(value).__name__}")
    return value
