"""Adapters feeding a session: truncated calls are reported, never run (S2, A4)."""

from __future__ import annotations

import asyncio
from typing import Any

from toolcalls import ExecutionView, ToolCallSession
from toolcalls.adapters import AISDKAdapter, OpenAIChatAdapter, openai_chat_tool_message

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
