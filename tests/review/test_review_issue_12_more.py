"""Breaks found by an independent review of issue 12. Each test reproduces one; fix the code,
do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from toolcalls import ToolCallSession, ToolCallTracker
from toolcalls.adapters import AISDKAdapter, OpenAIChatAdapter


def _tracked(events: list[dict[str, Any]]) -> ToolCallTracker:
    tracker = ToolCallTracker()
    for event in events:
        tracker.apply(event)
    return tracker


def _chat(*tool_calls: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    delta = {"tool_calls": list(tool_calls)} if tool_calls else {}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


async def _slowly(chunks: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    """Chunks as a network stream delivers them: one at a time, with time in between."""
    for chunk in chunks:
        await asyncio.sleep(0.01)
        yield chunk


def _run_ai_sdk(chunks: list[dict[str, Any]], name: str) -> tuple[list[str], ToolCallTracker]:
    runs: list[str] = []

    def tool(**kwargs: Any) -> str:
        runs.append(repr(kwargs))
        return "ran locally"

    async def main() -> ToolCallTracker:
        async with ToolCallSession({name: tool}) as session:
            async for _ in session.run(AISDKAdapter().events(_slowly(chunks))):
                pass
            return session.tracker

    return runs, asyncio.run(main())


def test_A2_ai_sdk_call_awaiting_approval_does_not_run() -> None:
    """An AI SDK stream asks the user to approve a dangerous call (``tool-approval-request``
    right after ``tool-input-available``, AI SDK 6); the adapter made the call ready at
    ``tool-input-available``, so the session deletes the file before anyone approved it."""
    chunks: list[dict[str, Any]] = [
        {"type": "start", "messageId": "msg-1"},
        {"type": "start-step"},
        {"type": "tool-input-start", "toolCallId": "call_D", "toolName": "deleteFile"},
        {"type": "tool-input-delta", "toolCallId": "call_D", "inputTextDelta": '{"path":"/x"}'},
        {"type": "tool-input-available", "toolCallId": "call_D", "toolName": "deleteFile",
         "input": {"path": "/x"}},
        {"type": "tool-approval-request", "approvalId": "approval_1", "toolCallId": "call_D"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "tool-calls"},
    ]  # fmt: skip
    runs, _ = _run_ai_sdk(chunks, "deleteFile")
    assert runs == []


def test_A2_ai_sdk_tool_the_server_ran_does_not_run_again_locally() -> None:
    """An AI SDK UI stream carries a server-side tool: ``tool-input-available`` and then the
    server's own ``tool-output-available``; the session runs a local tool of that name as soon
    as the input is available, so the tool runs twice and the server's output is dropped."""
    chunks: list[dict[str, Any]] = [
        {"type": "start-step"},
        {"type": "tool-input-start", "toolCallId": "c1", "toolName": "getWeather"},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"city":"SF"}'},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "getWeather",
         "input": {"city": "SF"}},
        {"type": "tool-output-available", "toolCallId": "c1", "output": {"weather": "sunny"}},
        {"type": "finish-step"},
        {"type": "finish"},
    ]  # fmt: skip
    runs, tracker = _run_ai_sdk(chunks, "getWeather")
    assert runs == []
    call = tracker.get("c1")
    assert call is not None
    assert call.result == {"weather": "sunny"}


def test_A2_ai_sdk_preliminary_output_is_not_the_result() -> None:
    """A streaming AI SDK tool sends ``tool-output-available`` with ``preliminary: true``
    (progress) before its final output; the adapter settles the call with the progress value
    and the tracker ignores the real, final output."""
    events = AISDKAdapter().feed_all(
        [
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "t", "input": {}},
            {
                "type": "tool-output-available",
                "toolCallId": "c1",
                "output": {"status": "loading"},
                "preliminary": True,
            },
            {"type": "tool-output-available", "toolCallId": "c1", "output": {"status": "done"}},
        ]
    )
    call = _tracked(events).get("c1")
    assert call is not None
    assert call.result == {"status": "done"}


def test_A2_ai_sdk_input_available_is_the_arguments() -> None:
    """The AI SDK repairs a model's malformed tool input and sends the repaired object in
    ``tool-input-available`` after the raw deltas (its own client uses ``input``); the adapter
    keeps the raw delta text, so a call the AI SDK accepted fails with invalid JSON."""
    events = AISDKAdapter().feed_all(
        [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "weather"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"city": SF}'},
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "weather",
                "input": {"city": "SF"},
            },
        ]
    )
    call = _tracked(events).get("c1")
    assert call is not None
    assert (call.status, call.args) == ("running", {"city": "SF"})


def test_A5_chat_id_arriving_after_the_name_keeps_one_call() -> None:
    """A compatible server sends a call's name (no id) in the first fragment and its id with
    the next argument fragment; the adapter splits one call into two (``call_0`` with half the
    arguments, an unnamed ``call_x`` with the rest) and neither runs."""
    events = OpenAIChatAdapter().feed_all(
        [
            _chat({"index": 0, "function": {"name": "f", "arguments": '{"a"'}}),
            _chat({"index": 0, "id": "call_x", "function": {"arguments": ":1}"}}),
            _chat(finish="tool_calls"),
        ]
    )
    calls = _tracked(events).list()
    assert [(call.name, call.status, call.args) for call in calls] == [("f", "running", {"a": 1})]


def test_A1_openai_chat_accepts_the_sdk_stream_helper_events() -> None:
    """A user streams with openai's helper (``client.chat.completions.stream()``), whose
    iterator yields ``ChunkEvent``s wrapping each chunk, and hands them to the adapter; every
    event is silently ignored, so the tool calls vanish without an error."""
    pytest.importorskip("openai")
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: Any = ChatCompletionStreamState()
    helper_events: list[Any] = []
    for chunk in [
        _chat({"index": 0, "id": "c1", "type": "function",
               "function": {"name": "f", "arguments": "{}"}}),
        _chat(finish="tool_calls"),
    ]:  # fmt: skip
        helper_events += state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    try:
        events = OpenAIChatAdapter().feed_all(helper_events)
    except ValueError:
        return  # refusing the helper's events loudly is a fix too
    assert [event["type"] for event in events if event["type"] == "ready"] == ["ready"]


def test_A7_documented_loop_answers_every_call_of_a_truncated_response() -> None:
    """A user follows docs/adapters.md "One loop": the assistant message lists every call of
    ``session.tracker.list()`` and the results are what ``session.run`` yields. When the
    response hits ``finish_reason: "length"``, the truncated calls are listed but never
    yielded, so the next request has tool calls without tool messages (OpenAI rejects it)."""
    from toolcalls.adapters import openai_chat_tool_message

    def f(a: int) -> int:
        return a

    chunks = [
        _chat({"index": 0, "id": "good", "function": {"name": "f", "arguments": '{"a":1}'}}),
        _chat({"index": 1, "id": "cut", "function": {"name": "f", "arguments": '{"a":2}'}}),
        _chat(finish="length"),
    ]

    async def main() -> tuple[list[str], list[str]]:
        async with ToolCallSession({"f": f}) as session:
            events = OpenAIChatAdapter().events(chunks)
            results = [openai_chat_tool_message(s) async for s in session.run(events)]
            calls = session.tracker.list()
        return [call.id for call in calls], [result["tool_call_id"] for result in results]

    listed, answered = asyncio.run(main())
    assert sorted(listed) == sorted(answered)


def test_A6_vertex_partial_args_array_index_out_of_all_proportion() -> None:
    """A Vertex chunk addresses ``$.items[4611686018427387904]`` (a corrupt or hostile
    ``jsonPath``); the adapter pads a list up to that index, so the chunk raises
    ``MemoryError`` instead of ``InvalidChunk`` (and ``$.items[30000000]``, 30 bytes on the
    wire, becomes 30 million nulls of arguments)."""
    from toolcalls.adapters import GeminiAdapter, InvalidChunk

    def chunk(function_call: dict[str, Any]) -> dict[str, Any]:
        parts = [{"functionCall": function_call}]
        return {"candidates": [{"index": 0, "content": {"role": "model", "parts": parts}}]}

    adapter = GeminiAdapter()
    adapter.feed(chunk({"name": "f", "willContinue": True}))
    piece = {"jsonPath": f"$.items[{2**62}]", "numberValue": 1}
    with pytest.raises(InvalidChunk):
        adapter.feed(chunk({"partialArgs": [piece], "willContinue": True}))


def test_A1_openai_chat_legacy_function_call_delta_is_read() -> None:
    """A Chat Completions stream with the SDK's (deprecated, still typed) ``delta.function_call``
    ends with ``finish_reason: "function_call"``, a reason the adapter counts as complete; the
    adapter never reads ``delta.function_call``, so the call silently disappears."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [choice]}  # fmt: skip

    events = OpenAIChatAdapter().feed_all(
        [
            chunk({"role": "assistant", "function_call": {"name": "f", "arguments": ""}}),
            chunk({"function_call": {"arguments": '{"a": 1}'}}),
            chunk({}, finish="function_call"),
        ]
    )
    try:
        calls = _tracked(events).list()
    except ValueError:
        return
    assert [(call.name, call.status, call.args) for call in calls] == [("f", "running", {"a": 1})]


def test_A2_responses_redelivered_event_does_not_change_the_arguments() -> None:
    """A client resuming a Responses stream (``starting_after``) gets one argument delta twice,
    with the same ``sequence_number``; the adapter appends it again, so ``{"path": "/tmp/x"}``
    silently becomes ``{"path": "/tmp/xx"}``, still valid JSON, and the tool runs on the wrong
    path (the ``.done`` event's own arguments say ``/tmp/x``)."""
    from toolcalls.adapters import OpenAIResponsesAdapter

    item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "rm"}

    def delta(text: str, number: int) -> dict[str, Any]:
        return {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": text,
            "sequence_number": number,
        }

    events = OpenAIResponsesAdapter().feed_all(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "arguments": "", "status": "in_progress"},
                "sequence_number": 1,
            },
            delta('{"path": "/tmp/', 2),
            delta("x", 3),
            delta("x", 3),  # re-delivered
            delta('"}', 4),
            {
                "type": "response.function_call_arguments.done",
                "item_id": "fc_1",
                "output_index": 0,
                "arguments": '{"path": "/tmp/x"}',
                "sequence_number": 5,
            },
        ]
    )
    call = _tracked(events).get("call_1")
    assert call is not None
    assert call.args == {"path": "/tmp/x"}
