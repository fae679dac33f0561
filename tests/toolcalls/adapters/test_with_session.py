"""Adapters feeding a session: truncated calls are reported, never run (S2, A4); synchronous
streams are read off the loop (A1)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from toolcalls import ExecutionView, InvalidChunk, ToolCallSession
from toolcalls.adapters import (
    AISDKAdapter,
    OpenAIChatAdapter,
    StreamSuperseded,
    openai_chat_tool_message,
)
from toolcalls.adapters._base import _READ_AHEAD

from .support import chat_chunk, fragment


def run(adapter: Any, chunks: list[Any], runs: list[Any]) -> tuple[list[ExecutionView], Any]:
    def f(a: int) -> int:
        runs.append(a)
        return a

    async def main() -> tuple[list[ExecutionView], Any]:
        async with ToolCallSession({"f": f, "rm": f}) as session:
            settled = [state async for state in session.run(adapter.events(chunks))]
            return settled, session.tracker.list()

    return asyncio.run(main())


def test_a_truncated_call_is_reported_in_error_and_never_run() -> None:
    runs: list[Any] = []
    chunks = [
        chat_chunk(fragment(0, '{"a": 1}', id="good", name="f")),
        chat_chunk(fragment(1, '{"a": 2}', id="cut", name="f")),
        chat_chunk(finish="length"),
    ]
    settled, calls = run(OpenAIChatAdapter(), chunks, runs)
    assert runs == []
    assert sorted(s.tool_call_id for s in settled) == ["cut", "good"]
    for state in settled:
        assert state.status == "error"
        assert state.error is not None
        assert "truncated" in state.error.message
        assert state.error.details["errors"][0]["type"] == "truncated"
    # Every call of the response gets an answer, so the next request is well formed.
    answered = {openai_chat_tool_message(s)["tool_call_id"] for s in settled}
    assert answered == {call.id for call in calls}


def test_a_call_the_stream_itself_ended_while_streaming_is_not_reported() -> None:
    runs: list[Any] = []
    chunks = [
        {"type": "tool-input-start", "toolCallId": "d", "toolName": "rm"},
        {"type": "tool-output-denied", "toolCallId": "d"},
    ]
    settled, calls = run(AISDKAdapter(), chunks, runs)
    assert (runs, settled) == ([], [])
    assert calls[0].error["kind"] == "denied"


class _WaitsForTheLoop:
    """A synchronous stream whose second chunk arrives only once a task on the loop has run,
    as a blocking SDK stream waits on the network while tools run."""

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = chunks
        self.loop_ran = threading.Event()
        self.read_on: set[str] = set()

    def __iter__(self) -> _WaitsForTheLoop:
        return self

    def __next__(self) -> Any:
        self.read_on.add(threading.current_thread().name)
        if not self.chunks:
            raise StopIteration
        if len(self.chunks) == 1 and not self.loop_ran.wait(timeout=5):
            raise TimeoutError("the event loop was blocked while the stream was read")
        return self.chunks.pop(0)


def test_A1_a_blocking_sync_stream_is_read_off_the_loop_so_tools_keep_running() -> None:
    """``events()`` over a plain (synchronous) SDK stream: while the stream waits for its next
    chunk, the loop goes on (here a task that the stream itself waits for)."""
    stream = _WaitsForTheLoop(
        [
            chat_chunk(fragment(0, '{"a": 1}', id="one", name="f")),
            chat_chunk(finish="tool_calls"),
        ]
    )

    async def main() -> list[str]:
        asyncio.get_running_loop().call_later(0.05, stream.loop_ran.set)
        return [event["type"] async for event in OpenAIChatAdapter().events(stream)]

    assert asyncio.run(main()) == ["start", "delta", "ready"]
    assert threading.main_thread().name not in stream.read_on


def test_A4_a_sync_stream_that_fails_on_its_reader_thread_truncates_and_raises() -> None:
    """A dropped connection in a synchronous stream (read on a worker thread) still cuts the
    open calls off, naming the error, then propagates it to the caller."""

    def dropped() -> Any:
        yield chat_chunk(fragment(0, '{"a": ', id="cut", name="f"))
        raise ConnectionResetError("peer went away")

    events: list[dict[str, Any]] = []

    async def main() -> None:
        async for event in OpenAIChatAdapter().events(dropped()):
            events.append(event)

    with pytest.raises(ConnectionResetError):
        asyncio.run(main())
    assert [e["type"] for e in events] == ["start", "delta", "error"]
    assert "ConnectionResetError: peer went away" in events[-1]["error"]["message"]


def _endless(read: list[int]) -> Any:
    """A synchronous stream that never ends, counting what was read of it."""
    number = 0
    while True:
        read.append(number)
        yield chat_chunk(fragment(0, " ", id="c", name="f") if number == 0 else fragment(0, " "))
        number += 1


def test_A1_a_sync_stream_is_read_ahead_only_a_bounded_way() -> None:
    """The reader thread reads ahead of a slow consumer, but only so far (its buffer is
    bounded), and stops reading once the consumer stops."""
    read: list[int] = []

    async def main() -> None:
        events = OpenAIChatAdapter().events(_endless(read))
        assert (await anext(events))["type"] == "start"
        for _ in range(50):  # the consumer dawdles; the reader fills its buffer
            await asyncio.sleep(0.002)
        await events.aclose()

    asyncio.run(main())
    stopped_at = len(read)
    assert stopped_at <= 2 * _READ_AHEAD + 2
    time.sleep(0.05)
    assert len(read) == stopped_at  # nothing more is read once the consumer closed


def test_A1_inline_reads_a_sync_stream_on_the_loops_own_thread() -> None:
    """``inline=True`` is for iterators tied to the thread that made them (a database cursor
    of recorded chunks): every chunk is read on the loop's thread."""
    threads: set[str] = set()

    def stream() -> Any:
        threads.add(threading.current_thread().name)
        yield chat_chunk(fragment(0, '{"a": 1}', id="one", name="f"))
        threads.add(threading.current_thread().name)
        yield chat_chunk(finish="tool_calls")

    async def main() -> list[str]:
        adapter = OpenAIChatAdapter()
        return [event["type"] async for event in adapter.events(stream(), inline=True)]

    assert asyncio.run(main()) == ["start", "delta", "ready"]
    assert threads == {threading.current_thread().name}


def test_A1_a_new_stream_takes_over_from_one_its_consumer_abandoned() -> None:
    """A consumer that stops reading one stream without closing it (its generator is still
    alive) and starts the next: the next stream starts clean, and the old one, if read again,
    raises ``StreamSuperseded`` rather than yield anything more."""
    first_stream = [
        chat_chunk(fragment(0, '{"a": 1}', name="f")),
        chat_chunk(finish="tool_calls"),
    ]
    second_stream = [
        chat_chunk(fragment(0, '{"a": 2}', name="f")),
        chat_chunk(finish="tool_calls"),
    ]

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        adapter = OpenAIChatAdapter()
        first = adapter.events(first_stream)
        assert (await anext(first))["type"] == "start"  # then abandoned, never closed
        second = [event async for event in adapter.events(second_stream)]
        with pytest.raises(StreamSuperseded, match="handed another stream"):
            await anext(first)
        return second, []

    second, rest_of_first = asyncio.run(main())
    assert [(e["type"], e["id"]) for e in second] == [
        ("start", "call_1"),
        ("delta", "call_1"),
        ("ready", "call_1"),
    ]
    assert rest_of_first == []


def test_A4_a_chunk_refused_mid_stream_ends_the_open_calls_truncated_then_raises() -> None:
    """``events()`` over a stream with a malformed chunk: the stream cannot go on, so the call
    it left open ends truncated, naming the refusal, and then ``InvalidChunk`` propagates."""
    bad = chat_chunk(fragment(0, "}"))
    bad["choices"][0]["index"] = "zero"
    stream = [chat_chunk(fragment(0, '{"a": ', id="cut", name="f")), bad]
    seen: list[dict[str, Any]] = []

    async def main() -> None:
        async for event in OpenAIChatAdapter().events(stream):
            seen.append(event)

    with pytest.raises(InvalidChunk):
        asyncio.run(main())
    assert [(e["type"], e["id"]) for e in seen] == [
        ("start", "cut"),
        ("delta", "cut"),
        ("error", "cut"),
    ]
    assert seen[-1]["error"]["kind"] == "truncated"
    assert "InvalidChunk" in seen[-1]["error"]["message"]
