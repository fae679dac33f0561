"""AI SDK UI message stream chunks: the protocol maps onto our events."""

from __future__ import annotations

import pytest

from toolcalls.adapters import AISDKAdapter, InvalidChunk

from .support import calls, summary

STEP_END = {"type": "finish-step"}


def test_streamed_input_then_output() -> None:
    chunks = [
        {"type": "start", "messageId": "m1"},
        {"type": "tool-input-start", "toolCallId": "a", "toolName": "search"},
        {"type": "tool-input-start", "toolCallId": "b", "toolName": "search"},
        {"type": "tool-input-delta", "toolCallId": "a", "inputTextDelta": '{"q":'},
        {"type": "tool-input-delta", "toolCallId": "b", "inputTextDelta": '{"q": "go"}'},
        {"type": "tool-input-delta", "toolCallId": "a", "inputTextDelta": ' "rust"}'},
        {
            "type": "tool-input-available",
            "toolCallId": "a",
            "toolName": "search",
            "input": {"q": "rust"},
        },
        {
            "type": "tool-input-available",
            "toolCallId": "b",
            "toolName": "search",
            "input": {"q": "go"},
        },
        {"type": "tool-output-available", "toolCallId": "a", "output": [1, 2]},
        {"type": "tool-output-error", "toolCallId": "b", "errorText": "timed out"},
        {"type": "finish"},
    ]
    done, failed = calls(AISDKAdapter(), chunks)
    assert (done.status, done.args, done.result) == ("done", {"q": "rust"}, [1, 2])
    assert (failed.status, failed.error) == (
        "error",
        {"kind": "tool_error", "message": "timed out"},
    )


def test_input_available_without_a_start_or_deltas_starts_the_call() -> None:
    chunk = {
        "type": "tool-input-available",
        "toolCallId": "a",
        "toolName": "f",
        "input": {"x": [1]},
    }
    assert summary(AISDKAdapter(), [chunk, STEP_END]) == [("a", "f", "running", {"x": [1]})]


def test_quirk_empty_arguments_mean_no_arguments() -> None:
    chunks = [
        {"type": "tool-input-start", "toolCallId": "a", "toolName": "now"},
        {"type": "tool-input-delta", "toolCallId": "a", "inputTextDelta": ""},
        {"type": "tool-input-available", "toolCallId": "a", "toolName": "now"},
        STEP_END,
    ]
    assert summary(AISDKAdapter(), chunks) == [("a", "now", "running", {})]


def test_input_error_and_denial_end_the_call_in_error() -> None:
    chunks = [
        {
            "type": "tool-input-error",
            "toolCallId": "a",
            "toolName": "f",
            "input": "{x",
            "errorText": "JSON parsing failed",
        },
        {"type": "tool-input-available", "toolCallId": "b", "toolName": "rm", "input": {}},
        {"type": "tool-output-denied", "toolCallId": "b"},
    ]
    assert summary(AISDKAdapter(), chunks) == [
        ("a", "f", "error", "invalid_input"),
        ("b", "rm", "error", "denied"),
    ]


@pytest.mark.parametrize("end", [{"type": "error", "errorText": "boom"}, {"type": "abort"}, None])
def test_quirk_stream_cut_off_mid_input_truncates(end: dict | None) -> None:
    chunks = [
        {"type": "tool-input-start", "toolCallId": "a", "toolName": "write"},
        {"type": "tool-input-delta", "toolCallId": "a", "inputTextDelta": "{}"},
    ]
    if end is not None:
        chunks.append(end)
    assert summary(AISDKAdapter(), chunks) == [("a", "write", "error", "truncated")]


def test_a_chunk_without_a_tool_call_id_is_refused() -> None:
    with pytest.raises(InvalidChunk, match=r"tool-input-start\.toolCallId"):
        AISDKAdapter().feed({"type": "tool-input-start", "toolName": "f"})


def test_provider_executed_calls_are_not_reported_so_nothing_runs_them_again() -> None:
    chunks = [
        {
            "type": "tool-input-start",
            "toolCallId": "ws",
            "toolName": "web_search",
            "providerExecuted": True,
        },
        {"type": "tool-input-delta", "toolCallId": "ws", "inputTextDelta": "{}"},
        {
            "type": "tool-input-available",
            "toolCallId": "ws",
            "toolName": "web_search",
            "input": {},
            "providerExecuted": True,
        },
        {
            "type": "tool-output-available",
            "toolCallId": "ws",
            "output": "hits",
            "providerExecuted": True,
        },
        {"type": "tool-input-available", "toolCallId": "mine", "toolName": "f", "input": {}},
        STEP_END,
    ]
    assert summary(AISDKAdapter(), chunks) == [("mine", "f", "running", {})]


def test_calls_become_ready_at_the_end_of_their_step() -> None:
    adapter = AISDKAdapter()
    available = {
        "type": "tool-input-available",
        "toolCallId": "a",
        "toolName": "f",
        "input": {"q": 1},
    }
    assert [e["type"] for e in adapter.feed(available)] == ["start"]
    assert [e["type"] for e in adapter.feed(STEP_END)] == ["delta", "ready"]


def test_a_call_waiting_for_approval_is_not_run() -> None:
    chunks = [
        {"type": "tool-input-start", "toolCallId": "d", "toolName": "deleteFile"},
        {"type": "tool-input-delta", "toolCallId": "d", "inputTextDelta": '{"path": "/x"}'},
        {
            "type": "tool-input-available",
            "toolCallId": "d",
            "toolName": "deleteFile",
            "input": {"path": "/x"},
        },
        {"type": "tool-approval-request", "approvalId": "approval_1", "toolCallId": "d"},
        STEP_END,
    ]
    (call,) = calls(AISDKAdapter(), chunks)
    assert (call.status, call.error["kind"]) == ("error", "approval_requested")
    assert "approval_1" in call.error["message"]


def test_a_call_the_server_ran_is_done_with_the_servers_output() -> None:
    chunks = [
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "weather"},
        {
            "type": "tool-input-available",
            "toolCallId": "c",
            "toolName": "weather",
            "input": {"city": "SF"},
        },
        {"type": "tool-output-available", "toolCallId": "c", "output": {"sky": "sunny"}},
        STEP_END,
    ]
    (call,) = calls(AISDKAdapter(), chunks)
    assert (call.status, call.args, call.result) == ("done", {"city": "SF"}, {"sky": "sunny"})


def test_a_preliminary_output_is_not_the_result() -> None:
    chunks = [
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": {}},
        {"type": "tool-output-available", "toolCallId": "c", "output": 1, "preliminary": True},
        {"type": "tool-output-available", "toolCallId": "c", "output": 2},
    ]
    assert calls(AISDKAdapter(), chunks)[0].result == 2


def test_the_input_the_ai_sdk_settled_on_wins_over_the_streamed_text() -> None:
    chunks = [
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "weather"},
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"city": SF}'},
        {
            "type": "tool-input-available",
            "toolCallId": "c",
            "toolName": "weather",
            "input": {"city": "SF"},
        },
        STEP_END,
    ]
    assert summary(AISDKAdapter(), chunks) == [("c", "weather", "running", {"city": "SF"})]


def test_streamed_text_is_the_arguments_when_the_input_is_missing() -> None:
    chunks = [
        {"type": "tool-input-start", "toolCallId": "c", "toolName": "f"},
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"a": '},
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "1}"},
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "f"},
        STEP_END,
    ]
    assert summary(AISDKAdapter(), chunks) == [("c", "f", "running", {"a": 1})]


def test_a_stream_that_ends_cleanly_makes_the_available_calls_ready() -> None:
    chunks = [{"type": "tool-input-available", "toolCallId": "c", "toolName": "f", "input": {}}]
    assert summary(AISDKAdapter(), chunks) == [("c", "f", "running", {})]


def test_an_error_chunk_cuts_off_calls_not_yet_ready_even_with_their_input() -> None:
    chunks = [
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "f", "input": {}},
        {"type": "error", "errorText": "boom"},
    ]
    assert summary(AISDKAdapter(), chunks) == [("c", "f", "error", "truncated")]
