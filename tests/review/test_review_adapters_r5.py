"""Breaks found by an independent review of branch adapters (round 5). Each test reproduces
one; fix the code, do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from toolcalls import InvalidChunk
from toolcalls.adapters import OpenAIChatAdapter

Event = dict[str, Any]


def _chat(
    call_id: str | None = None,
    name: str | None = None,
    arguments: str = "",
    *,
    index: Any = 0,
    finish: str | None = None,
) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    tool_call: dict[str, Any] = {"index": index, "function": function}
    if call_id is not None:
        tool_call["id"] = call_id
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"tool_calls": [tool_call]}, "finish_reason": finish}],
    }


def _finish(reason: str = "tool_calls") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}],
    }


def _ids(events: list[Event]) -> set[str]:
    return {event["id"] for event in events}


async def _collect(events: AsyncIterator[Event]) -> list[Event]:
    return [event async for event in events]


def test_A6_a_stream_events_refused_leaves_no_call_behind_for_the_next_stream() -> None:
    """Turn 1's stream carries a malformed chunk, so ``events()`` raises ``InvalidChunk`` and
    the turn is over; the adapter keeps turn 1's open call, and turn 2's finish reason makes
    that stale call ``ready`` in turn 2's stream (an id turn 2 never started, on the broken
    text ``{"x":``), so turn 2's session rejects the event or runs a call of another turn."""
    adapter = OpenAIChatAdapter()
    bad = _chat(index="zero")
    with pytest.raises(InvalidChunk):
        asyncio.run(_collect(adapter.events([_chat("call_a", "f", '{"x":'), bad])))
    second = [_chat("call_b", "g", "{}"), _finish()]
    events = asyncio.run(_collect(adapter.events(second)))
    assert _ids(events) == {"call_b"}
    assert events == [
        {"type": "start", "id": "call_b", "name": "g"},
        {"type": "delta", "id": "call_b", "argsTextDelta": "{}"},
        {"type": "ready", "id": "call_b"},
    ]


def test_A4_a_superseded_stream_that_then_fails_does_not_cut_off_the_next_streams_calls() -> None:
    """A stream is abandoned mid-way and the next turn's ``events()`` takes the adapter over;
    then the first (synchronous) stream's connection drops. Its ``events()`` cuts off the open
    calls of the *new* stream and resets the adapter: the new stream's call is reported
    truncated to the old consumer, and the new consumer never hears of it again (its next
    fragment becomes an unnamed call)."""
    entered, release = threading.Event(), threading.Event()

    def first_stream() -> Iterator[dict[str, Any]]:
        yield _chat("call_a", "f", "{")
        entered.set()
        release.wait()
        raise ConnectionError("dropped")

    async def main() -> tuple[list[Event], list[BaseException], list[Event]]:
        adapter = OpenAIChatAdapter()
        first: list[Event] = []
        failures: list[BaseException] = []

        async def read_first() -> None:
            try:
                async for event in adapter.events(first_stream()):
                    first.append(event)
            except ConnectionError as error:
                failures.append(error)

        task = asyncio.create_task(read_first())
        await asyncio.to_thread(entered.wait)
        while len(first) < 2:
            await asyncio.sleep(0)
        second_stream = [_chat("call_b", "g", '{"y": '), _chat(arguments="1}"), _finish()]
        second_events = adapter.events(second_stream)
        second = [await anext(second_events)]  # the adapter now reads the second stream
        release.set()
        await task
        second += [event async for event in second_events]
        return first, failures, second

    first, _failures, second = asyncio.run(main())
    assert "call_b" not in _ids(first)
    assert second == [
        {"type": "start", "id": "call_b", "name": "g"},
        {"type": "delta", "id": "call_b", "argsTextDelta": '{"y": '},
        {"type": "delta", "id": "call_b", "argsTextDelta": "1}"},
        {"type": "ready", "id": "call_b"},
    ]


def test_A1_inline_true_reads_an_async_stream_too() -> None:
    """A runtime passes ``inline=True`` to keep its streams on the loop's thread, and some of
    its streams are async (the ``AsyncOpenAI`` client). ``events(stream, inline=True)`` calls
    ``iter()`` on the async stream: ``TypeError: 'async_generator' object is not iterable``."""

    async def stream() -> AsyncIterator[dict[str, Any]]:
        yield _chat("call_a", "f", '{"x": 1}')
        yield _finish()

    async def main() -> list[Event]:
        return await _collect(OpenAIChatAdapter().events(stream(), inline=True))

    assert asyncio.run(main()) == [
        {"type": "start", "id": "call_a", "name": "f"},
        {"type": "delta", "id": "call_a", "argsTextDelta": '{"x": 1}'},
        {"type": "ready", "id": "call_a"},
    ]


def test_A1_a_reader_thread_outliving_its_loop_ends_without_an_unhandled_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A task reading a slow synchronous stream is cancelled and ``asyncio.run`` returns (the
    loop closes). When the stream then ends, the reader thread wakes the consumer's stale
    waiter on the closed loop: ``RuntimeError: Event loop is closed``, unhandled in thread
    ``toolcalls-stream-reader`` (printed to stderr; pytest's thread-exception warning)."""
    crashes: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashes.append(args.exc_value))
    entered, release = threading.Event(), threading.Event()

    def stream() -> Iterator[dict[str, Any]]:
        yield _chat("call_a", "f", "{")
        entered.set()
        release.wait()  # the network is slow; then the stream just ends

    before = set(threading.enumerate())
    readers: list[threading.Thread] = []

    async def main() -> None:
        seen: list[Event] = []

        async def read() -> None:
            async for event in OpenAIChatAdapter().events(stream()):
                seen.append(event)

        task = asyncio.create_task(read())
        await asyncio.to_thread(entered.wait)
        while len(seen) < 2:
            await asyncio.sleep(0)
        await asyncio.sleep(0)  # the reader task now waits for the next chunk
        readers.extend(set(threading.enumerate()) - before)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    release.set()
    for thread in readers:
        thread.join(timeout=30)
    assert crashes == []


def test_A1_breaking_out_of_events_leaves_the_adapter_ready_for_the_next_stream_at_once() -> None:
    """A consumer breaks out of ``async for event in adapter.events(stream)`` (Python does not
    close the generator there) and feeds the next stream with ``feed``. The adapter still holds
    the first stream's open call, so the next stream's finish reason makes that call (an id the
    next stream never started, its text ``{"x": 1``) ready too."""

    async def main() -> list[Event]:
        adapter = OpenAIChatAdapter()
        first = [_chat("call_a", "f", '{"x": 1'), _chat(arguments="}"), _finish()]
        async for _event in adapter.events(first):
            break
        return adapter.feed_all([_chat("call_b", "g", "{}"), _finish()])

    assert asyncio.run(main()) == [
        {"type": "start", "id": "call_b", "name": "g"},
        {"type": "delta", "id": "call_b", "argsTextDelta": "{}"},
        {"type": "ready", "id": "call_b"},
    ]


def test_A4_a_broken_out_events_closed_late_does_not_strand_the_next_streams_call() -> None:
    """After breaking out of ``events()``, the consumer feeds the next stream chunk by chunk,
    awaiting the network between chunks. Meanwhile the loop finalizes the abandoned generator,
    whose clean-up still thinks it owns the adapter and wipes the routing of the call now
    streaming: its next fragment becomes an ``(unnamed)`` call, and the real call never gets
    another event (not ``ready``, not even ``truncated`` at ``finish()``): it is stranded."""

    async def main() -> list[Event]:
        adapter = OpenAIChatAdapter()
        first = [_chat("call_a", "f", '{"x": 1'), _chat(arguments="}"), _finish()]
        async for _event in adapter.events(first):
            break
        adapter.finish()  # the consumer even ends the first stream by hand
        events = adapter.feed(_chat("call_b", "g", '{"y": '))
        for _ in range(5):  # waiting for the next chunk: the loop runs its callbacks
            await asyncio.sleep(0)
        events += adapter.feed(_chat(arguments="2}"))
        events += adapter.feed(_finish())
        return events + adapter.finish()

    assert asyncio.run(main()) == [
        {"type": "start", "id": "call_b", "name": "g"},
        {"type": "delta", "id": "call_b", "argsTextDelta": '{"y": '},
        {"type": "delta", "id": "call_b", "argsTextDelta": "2}"},
        {"type": "ready", "id": "call_b"},
    ]
