"""Breaks found by an independent review of issue 12. Each test reproduces one; fix the code,
do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import datetime
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from toolcalls import ToolCallSession, ToolCallTracker
from toolcalls.adapters import (
    AISDKAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    ai_sdk_tool_output,
    anthropic_tool_result,
    gemini_function_response,
    openai_chat_tool_message,
    openai_responses_output,
)

ROOT = Path(__file__).resolve().parents[2]


def _readies(events: list[dict[str, Any]]) -> list[str]:
    return [event["id"] for event in events if event["type"] == "ready"]


def _chat(*tool_calls: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "delta": {"tool_calls": list(tool_calls)}, "finish_reason": finish}
        ],
    }


def test_A4_responses_item_done_with_status_incomplete_never_becomes_ready() -> None:
    """A Responses stream cut by max_output_tokens closes the open function_call item with
    ``response.output_item.done`` whose item ``status`` is ``"incomplete"``, then sends
    ``response.incomplete``; the adapter makes the call ready on the done event, so a truncated
    call whose arguments happen to parse runs."""
    item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "write_file"}
    adapter = OpenAIResponsesAdapter()
    events = adapter.feed_all(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress", "arguments": ""},
            },
            {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc_1",
                "output_index": 0,
                "delta": '{"path":"notes.md"}',
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**item, "status": "incomplete", "arguments": '{"path":"notes.md"}'},
            },
            {
                "type": "response.incomplete",
                "response": {
                    "status": "incomplete",
                    "output": [
                        {**item, "status": "incomplete", "arguments": '{"path":"notes.md"}'}
                    ],
                    "incomplete_details": {"reason": "max_output_tokens"},
                },
            },
        ]
    )
    assert _readies(events) == []
    errors = [event for event in events if event["type"] == "error"]
    assert [error["error"]["kind"] for error in errors] == ["truncated"]


def test_A4_a_stream_that_raises_mid_call_ends_the_call_truncated() -> None:
    """The SDK stream raises mid-arguments (connection reset, an APIError frame) while the user
    runs ``session.run(adapter.events(stream))``; ``events()`` lets the exception through
    without ending the open call, so it stays ``pending`` forever instead of ending in error
    (truncated), and the adapter keeps it open for the next stream."""

    async def failing() -> AsyncIterator[dict[str, Any]]:
        yield _chat({"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"a": 1'}})
        raise ConnectionError("peer closed the connection")

    adapter = OpenAIChatAdapter()
    seen: list[dict[str, Any]] = []

    async def consume() -> None:
        async for event in adapter.events(failing()):
            seen.append(event)

    with pytest.raises(ConnectionError):
        asyncio.run(consume())
    tracker = ToolCallTracker()
    for event in seen:
        tracker.apply(event)
    call = tracker.get("c1")
    assert call is not None
    assert call.status == "error", call
    assert call.error["kind"] == "truncated"


def test_A5_generated_id_never_collides_with_a_provider_id() -> None:
    """An OpenAI-compatible server sends one parallel call without an id and another with the
    id ``call_0``; the adapter generates ``call_0`` for the first, so both calls share one id,
    the tracker ignores the second start, and neither tool runs (their texts are glued)."""
    adapter = OpenAIChatAdapter()
    events = adapter.feed_all(
        [
            _chat(
                {"index": 0, "function": {"name": "f", "arguments": "{}"}},
                {"index": 1, "id": "call_0", "function": {"name": "g", "arguments": "{}"}},
            ),
            _chat(finish="tool_calls"),
        ]
    )
    starts = [event["id"] for event in events if event["type"] == "start"]
    assert len(set(starts)) == 2, starts
    tracker = ToolCallTracker()
    for event in events:
        assert tracker.apply(event).applied, event
    assert sorted(call.status for call in tracker.list()) == ["running", "running"]


def test_A4_chat_empty_string_finish_reason_is_not_a_cut() -> None:
    """Several OpenAI-compatible servers send ``"finish_reason": ""`` on every intermediate
    chunk instead of null; the adapter reads ``""`` as a stop reason and truncates the call on
    its first chunk, so a complete call never runs."""
    adapter = OpenAIChatAdapter()
    events = adapter.feed_all(
        [
            _chat(
                {"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"a":'}},
                finish="",
            ),
            _chat({"index": 0, "function": {"arguments": "1}"}}, finish=""),
            _chat(finish="tool_calls"),
        ]
    )
    assert _readies(events) == ["c1"], events


def test_A1_gemini_sdk_objects_give_the_same_arguments_as_dicts() -> None:
    """A Vertex ``partialArgs`` stream read through google-genai objects turns the integer
    ``numberValue`` 3 into ``3.0`` (the SDK's float field), while the same stream as dicts gives
    ``3``; a tool typed ``days: int`` gets a float only when the user passes SDK objects."""
    types = pytest.importorskip("google.genai.types")
    wire = [
        {"candidates": [{"index": 0, "content": {"role": "model", "parts": [
            {"functionCall": {"name": "forecast", "willContinue": True}}]}}]},
        {"candidates": [{"index": 0, "content": {"role": "model", "parts": [
            {"functionCall": {"partialArgs": [{"jsonPath": "$.days", "numberValue": 3}],
                              "willContinue": True}}]}}]},
        {"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model",
            "parts": [{"functionCall": {}}]}}]},
    ]  # fmt: skip
    sdk = [types.GenerateContentResponse.model_validate(chunk) for chunk in wire]

    def arguments(chunks: list[Any]) -> str:
        events = GeminiAdapter().feed_all(chunks)
        return "".join(e["argsTextDelta"] for e in events if e["type"] == "delta")

    assert arguments(wire) == '{"days": 3}'
    assert arguments(sdk) == arguments(wire)


def test_A4_ai_sdk_provider_executed_call_does_not_run_locally() -> None:
    """An AI SDK UI stream carries a provider-executed tool (``providerExecuted: true``, e.g.
    a provider's web search); the adapter makes it ready like a client tool, so the session
    runs a local tool of that name for a call the provider already ran."""
    runs: list[str] = []

    def web_search(query: str) -> str:
        runs.append(query)
        return "local"

    chunks = [
        {"type": "tool-input-start", "toolCallId": "ws_1", "toolName": "web_search",
         "providerExecuted": True},
        {"type": "tool-input-available", "toolCallId": "ws_1", "toolName": "web_search",
         "input": {"query": "x"}, "providerExecuted": True},
    ]  # fmt: skip

    async def main() -> None:
        async with ToolCallSession({"web_search": web_search}) as session:
            async for _ in session.run(AISDKAdapter().events(chunks)):
                pass

    asyncio.run(main())
    assert runs == []


_BUILDERS: list[Callable[[Any], dict[str, Any]]] = [
    openai_chat_tool_message,
    openai_responses_output,
    anthropic_tool_result,
    gemini_function_response,
    ai_sdk_tool_output,
]


@pytest.mark.parametrize("builder", _BUILDERS, ids=lambda b: b.__name__)
def test_A7_results_back_for_a_result_that_is_not_json(
    builder: Callable[[Any], dict[str, Any]],
) -> None:
    """A tool returns a ``datetime`` (or a set, a dataclass): the session settles it as a
    success, then every results-back builder raises ``TypeError`` from ``json.dumps``, so the
    agent loop crashes after the tool ran and the model never hears the result."""

    def now() -> datetime.datetime:
        return datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)

    async def main() -> list[Any]:
        adapter = OpenAIChatAdapter()
        chunks = [
            _chat({"index": 0, "id": "c1", "function": {"name": "now", "arguments": ""}}),
            _chat(finish="tool_calls"),
        ]
        async with ToolCallSession({"now": now}) as session:
            return [settled async for settled in session.run(adapter.events(chunks))]

    (settled,) = asyncio.run(main())
    assert settled.status == "success"
    message = builder(settled)
    json.dumps(message)  # goes into the next request as JSON


def test_L6_replay_format_runs_a_provider_recording(capsys: pytest.CaptureFixture[str]) -> None:
    """A user runs ``toolcalls replay examples/openai-chat.jsonl --format openai-chat`` as the
    spec (L6) and issue 12 promise; the command line has no ``--format`` option and exits 2."""
    from toolcalls.__main__ import main

    example = ROOT / "examples" / "openai-chat.jsonl"
    assert example.is_file()
    status: object
    try:
        status = main(["replay", str(example), "--format", "openai-chat"])
    except SystemExit as exit_:
        status = exit_.code
    assert status == 0, capsys.readouterr().err
