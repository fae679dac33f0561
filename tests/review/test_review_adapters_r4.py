"""Breaks found by an independent review of branch adapters (round 4). Each test reproduces
one; fix the code, do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter

from toolcalls import ExecutionView, InvalidChunk, ToolCallSession
from toolcalls.adapters import AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, StreamAdapter

ROOT = Path(__file__).resolve().parents[2]
_ANTHROPIC = TypeAdapter(RawMessageStreamEvent)


# -- builders -------------------------------------------------------------------------------


def _chat(*tool_calls: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"tool_calls": list(tool_calls)} if tool_calls else {}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _fragment(arguments: str, *, name: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    return {"index": 0, "function": function}


def _message_start(message_id: str = "msg_1") -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-x",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return {"type": "message_start", "message": message}


def _tool_start(index: int, call_id: str, name: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def _text_start(index: int) -> dict[str, Any]:
    block = {"type": "text", "text": ""}
    return {"type": "content_block_start", "index": index, "content_block": block}


def _json_delta(index: int, text: str) -> dict[str, Any]:
    delta = {"type": "input_json_delta", "partial_json": text}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _message_delta(reason: str) -> dict[str, Any]:
    delta = {"stop_reason": reason, "stop_sequence": None}
    return {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 1}}


def _sdk(chunks: list[dict[str, Any]]) -> list[Any]:
    """The anthropic SDK's own event objects for these wire events."""
    return [_ANTHROPIC.validate_python(chunk) for chunk in chunks]


def _gemini(*candidates: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": list(candidates), "modelVersion": "gemini-x", "responseId": "r1"}


def _candidate(index: int, *parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "index": index,
        "content": {"role": "model", "parts": list(parts)},
    }
    if finish is not None:
        candidate["finishReason"] = finish
    return candidate


def _kinds(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(event["type"], event["id"]) for event in events]


async def _settle(
    adapter: StreamAdapter, stream: Any, tools: dict[str, Any]
) -> list[ExecutionView]:
    async with ToolCallSession(tools) as session:
        return [settled async for settled in session.run(adapter.events(stream))]


# -- GeminiAdapter.function_call_part (A7) ---------------------------------------------------


def test_A7_function_call_part_of_an_execution_view_keeps_the_calls_args() -> None:
    """A user rebuilds the model's part from what ``session.run`` yields (an ``ExecutionView``,
    as docs/adapters.md and A7 allow): its ``args`` is a read-only mapping, not a ``dict``, so
    ``function_call_part`` sends ``args: {}`` and the history says the model called the tool
    with no arguments."""

    async def weather(city: str) -> str:
        return f"sunny in {city}"

    adapter = GeminiAdapter()
    part = {
        "functionCall": {"name": "weather", "args": {"city": "Moab"}},
        "thoughtSignature": "c2ln",
    }
    stream = [_gemini(_candidate(0, part, finish="STOP"))]
    (settled,) = asyncio.run(_settle(adapter, stream, {"weather": weather}))
    assert settled.status == "success"
    assert adapter.function_call_part(settled) == {
        "functionCall": {"name": "weather", "args": {"city": "Moab"}},
        "thoughtSignature": "c2ln",
    }


# -- events() on a worker thread (A1) --------------------------------------------------------


def test_A1_a_sync_stream_read_on_the_worker_thread_sees_the_callers_context_variables() -> None:
    """A synchronous stream reads a ``ContextVar`` the caller set (a request id for logging, a
    tracing span, as OpenTelemetry's instrumentation does): it saw the caller's value when
    ``events()`` read it inline, but ``run_in_executor`` does not carry the context to the
    reader thread (``asyncio.to_thread`` would), so it now sees the default."""
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
    seen: list[str] = []

    def stream() -> Iterator[dict[str, Any]]:
        seen.append(request_id.get())
        yield _chat({"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}})
        seen.append(request_id.get())
        yield _chat(finish="tool_calls")

    async def main() -> list[str]:
        request_id.set("req-7")
        return [event["type"] async for event in OpenAIChatAdapter().events(stream())]

    assert asyncio.run(main()) == ["start", "delta", "ready"]
    assert seen == ["req-7", "req-7"]


_HANGS = """
import asyncio, threading
from toolcalls.adapters import OpenAIChatAdapter

never = threading.Event()

def stream():
    yield {"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{"}}]}}]}
    never.wait()  # the connection hangs: no more bytes, no error

async def main():
    async def read():
        return [event async for event in OpenAIChatAdapter().events(stream())]
    try:
        await asyncio.wait_for(read(), 0.5)
    except asyncio.TimeoutError:
        print("gave up on the stream", flush=True)

asyncio.run(main())
print("done", flush=True)
"""


def test_A1_giving_up_on_a_hung_sync_stream_does_not_hang_interpreter_exit() -> None:
    """A user reads a synchronous SDK stream through ``events()`` and, as the off-loop reading
    now allows, gives up on it with a timeout when the connection hangs. The program then
    cannot exit: the reader is a ``ThreadPoolExecutor`` worker, which the interpreter joins at
    exit, and it waits forever inside ``next``."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(_HANGS)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired as hung:
        out = hung.stdout.decode() if isinstance(hung.stdout, bytes) else hung.stdout
        pytest.fail(f"the interpreter never exited (20 s) after: {out!r}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["gave", "up", "on", "the", "stream", "done"]


def test_A1_a_stream_abandoned_early_does_not_swallow_the_next_turns_call() -> None:
    """An agent loop reuses one adapter across turns (as docs/adapters.md invites) with a
    server that sends no ids. In turn 1 the consumer stops reading once it has the call (the
    trailing usage chunk is still on its way), so ``events()`` never reaches ``finish()``;
    turn 2's fragments then land in turn 1's finished slot, and turn 2's call is never
    started: no event, no run, no answer for the model."""
    runs: list[int] = []

    async def f(a: int) -> int:
        runs.append(a)
        return a

    usage_sent = threading.Event()

    def turn1() -> Iterator[dict[str, Any]]:
        yield _chat(_fragment('{"a": 1}', name="f"))
        yield _chat(finish="tool_calls")
        usage_sent.wait(5)  # the usage chunk (stream_options.include_usage) comes later
        yield {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []}

    def turn2() -> Iterator[dict[str, Any]]:
        yield _chat(_fragment('{"a": 2}', name="f"))
        yield _chat(finish="tool_calls")

    async def main() -> list[ExecutionView]:
        adapter = OpenAIChatAdapter()
        async with ToolCallSession({"f": f}) as session:
            async for settled in session.run(adapter.events(turn1())):
                assert settled.status == "success"
                break  # the one call of the turn settled: on to the next turn
        usage_sent.set()
        return await _settle(adapter, turn2(), {"f": f})

    second = asyncio.run(main())
    assert runs == [1, 2]
    assert [(view.status, view.result) for view in second] == [("success", 2)]


# -- Anthropic (A4, A6, S10) -----------------------------------------------------------------


def test_A4_a_text_block_start_delivered_again_does_not_make_a_stopped_call_ready() -> None:
    """A ``content_block_start`` delivered again is "the same block, and changes nothing", but
    only for tool_use blocks: a text block's start seen again is taken as the model going on,
    so a stopped call whose message then hits ``max_tokens`` is made ready and runs on input
    that was cut off (it happens to parse)."""
    chunks = [_message_start(), _text_start(0), _stop(0)]
    chunks += [_tool_start(1, "toolu_a", "write"), _json_delta(1, '{"n": 1}'), _stop(1)]
    chunks += [_text_start(0), _message_delta("max_tokens")]
    events = AnthropicAdapter().feed_all(_sdk(chunks))
    assert ("ready", "toolu_a") not in _kinds(events)
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["kind"] == "truncated"


def test_A4_a_new_message_does_not_make_the_last_messages_unproven_call_ready() -> None:
    """Indices now "count again per message", so one stream may hold several messages. When a
    message breaks off after a block stopped but before it said why (a dropped connection, and
    the request is retried into the same stream), the next message's first block is taken as
    the model going on: the unproven call is made ready and runs, and its retry runs too."""
    runs: list[int] = []

    async def write(n: int) -> int:
        runs.append(n)
        return n

    first = [_message_start("msg_1"), _tool_start(0, "toolu_a", "write")]
    first += [_json_delta(0, '{"n": 1}'), _stop(0)]  # ...the connection drops here
    retry = [_message_start("msg_2"), _tool_start(0, "toolu_b", "write")]
    retry += [_json_delta(0, '{"n": 1}'), _stop(0), _message_delta("tool_use")]
    retry += [{"type": "message_stop"}]
    events = AnthropicAdapter().feed_all(_sdk(first + retry))
    assert ("ready", "toolu_a") not in _kinds(events)
    asyncio.run(_settle(AnthropicAdapter(), _sdk(first + retry), {"write": write}))
    assert runs == [1]


def test_S10_an_anthropic_message_delivered_again_does_not_run_its_call_twice() -> None:
    """A proxy (or a resumed SSE connection) delivers a whole message again, its tool_use block
    with the same ``toolu_`` id. The adapter clears its started blocks at the second
    ``message_start`` and renames the call ``toolu_a_2``, so S10 (re-delivery is harmless)
    cannot recognise it and the tool runs twice."""
    runs: list[int] = []

    async def write(n: int) -> int:
        runs.append(n)
        return n

    message = [_message_start("msg_1"), _tool_start(0, "toolu_a", "write")]
    message += [_json_delta(0, '{"n": 1}'), _stop(0), _message_delta("tool_use")]
    message += [{"type": "message_stop"}]
    settled = asyncio.run(_settle(AnthropicAdapter(), _sdk(message + message), {"write": write}))
    assert runs == [1]
    assert [view.tool_call_id for view in settled] == ["toolu_a"]


@pytest.mark.parametrize("index", ["0", None, 1.5, True])
def test_A6_an_anthropic_block_index_that_is_not_an_integer_raises_invalid_chunk(
    index: Any,
) -> None:
    """docs/adapters.md names "a non-integer ``index``" as a chunk the protocol cannot produce,
    which raises ``InvalidChunk``; the Anthropic adapter accepts any index and files the block
    under it, so the deltas of index 0 never reach it."""
    adapter = AnthropicAdapter()
    adapter.feed(_message_start())
    chunk = {**_tool_start(0, "toolu_a", "write"), "index": index}
    with pytest.raises(InvalidChunk):
        adapter.feed(chunk)


@pytest.mark.parametrize(
    "chunk",
    [
        {"type": "message_delta", "delta": {"stop_reason": ["max_tokens"]}},
        {"type": "content_block_delta", "index": [0], "delta": {}},
        {"type": ["content_block_start"]},
    ],
    ids=["stop_reason", "index", "type"],
)
def test_A6_an_unhashable_field_raises_invalid_chunk_not_type_error(chunk: dict[str, Any]) -> None:
    """A malformed chunk (a list where the protocol has a string or an integer) must raise
    ``InvalidChunk`` naming the field (A6); the handler lookups and ``in`` tests raise a bare
    ``TypeError: unhashable type``, which ``events()`` treats as a failed stream."""
    adapter = AnthropicAdapter()
    adapter.feed(_message_start())
    with pytest.raises(InvalidChunk):
        adapter.feed(chunk)


# -- Gemini candidates (S2) ------------------------------------------------------------------


def test_S2_gemini_alternative_candidates_do_not_run_each_tool_once_per_candidate() -> None:
    """With ``candidateCount=2`` Gemini streams two alternative answers, as OpenAI does with
    ``n=2``; the OpenAI adapter now reads only choice 0 for exactly this reason, but the Gemini
    adapter reads every candidate, so the one email the model meant to send is sent twice."""
    sent: list[str] = []

    async def send_email(to: str) -> str:
        sent.append(to)
        return "sent"

    call = {"functionCall": {"name": "send_email", "args": {"to": "ann@example.com"}}}
    stream = [
        _gemini(_candidate(0, call, finish="STOP"), _candidate(1, call, finish="STOP")),
    ]
    settled = asyncio.run(_settle(GeminiAdapter(), stream, {"send_email": send_email}))
    assert sent == ["ann@example.com"]
    assert len(settled) == 1
