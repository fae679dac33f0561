"""AI SDK UI message stream chunks: the protocol maps onto our events."""

from __future__ import annotations

import pytest

from toolcalls.adapters import AdapterError, AISDKAdapter

from .support import calls, summary


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
    assert summary(AISDKAdapter(), [chunk]) == [("a", "f", "running", {"x": [1]})]


def test_quirk_empty_arguments_mean_no_arguments() -> None:
    chunks = [
        {"type": "tool-input-start", "toolCallId": "a", "toolName": "now"},
        {"type": "tool-input-delta", "toolCallId": "a", "inputTextDelta": ""},
        {"type": "tool-input-available", "toolCallId": "a", "toolName": "now"},
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
    with pytest.raises(AdapterError, match=r"tool-input-start\.toolCallId"):
        AISDKAdapter().feed({"type": "tool-input-start", "toolName": "f"})
