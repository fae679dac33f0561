"""Anthropic Messages events: blocks by index, whole inputs, empty inputs, max_tokens."""

# Rules checked here (docs/spec.md): A1, A3, A4, A5, A6.

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter

from toolcalls import InvalidChunk
from toolcalls.adapters import AnthropicAdapter

from .support import calls, summary

_EVENT: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)


def start(index: int, call_id: str, name: str, given: dict | None = None) -> dict:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": given or {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, text: str) -> dict:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": text},
    }


def stop(index: int) -> dict:
    return {"type": "content_block_stop", "index": index}


def message_delta(reason: str) -> dict:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": {"output_tokens": 5},
    }


MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
}


def text_then_two_calls() -> list[dict]:
    return [
        MESSAGE_START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        stop(0),
        {"type": "ping"},
        start(1, "toolu_a", "read"),
        delta(1, ""),
        delta(1, '{"path": '),
        delta(1, '"a.py"}'),
        stop(1),
        start(2, "toolu_b", "read"),
        delta(2, '{"path": "b.py"}'),
        stop(2),
        message_delta("tool_use"),
        {"type": "message_stop"},
    ]


def test_tool_use_blocks_become_calls_routed_by_index() -> None:
    assert summary(AnthropicAdapter(), text_then_two_calls()) == [
        ("toolu_a", "read", "running", {"path": "a.py"}),
        ("toolu_b", "read", "running", {"path": "b.py"}),
    ]


def test_sdk_event_objects_are_read_like_dicts() -> None:
    events = [event for event in text_then_two_calls() if event["type"] != "ping"]
    objects = [_EVENT.validate_python(event) for event in events]
    assert calls(AnthropicAdapter(), objects) == calls(AnthropicAdapter(), text_then_two_calls())


def test_a_stopped_block_is_ready_once_the_model_goes_on() -> None:
    adapter = AnthropicAdapter()
    for chunk in text_then_two_calls()[:10]:
        adapter.feed(chunk)
    events = adapter.feed(start(2, "toolu_b", "read"))
    assert events[0] == {"type": "ready", "id": "toolu_a"}


def test_quirk_empty_partial_json_means_no_arguments() -> None:
    chunks = [
        MESSAGE_START,
        start(0, "toolu_a", "tabs"),
        delta(0, ""),
        stop(0),
        message_delta("tool_use"),
    ]
    call = calls(AnthropicAdapter(), chunks)[0]
    assert (call.status, call.args, call.args_text) == ("running", {}, "{}")


def test_quirk_whole_input_in_content_block_start_without_deltas() -> None:
    chunks = [
        MESSAGE_START,
        start(0, "toolu_a", "read", {"path": "a.py", "n": [1, 2]}),
        stop(0),
        message_delta("tool_use"),
    ]
    assert summary(AnthropicAdapter(), chunks) == [
        ("toolu_a", "read", "running", {"path": "a.py", "n": [1, 2]})
    ]


def test_deltas_win_over_an_input_given_at_block_start() -> None:
    chunks = [
        MESSAGE_START,
        start(0, "toolu_a", "read", {"path": "old"}),
        delta(0, '{"path": "new"}'),
        stop(0),
        message_delta("end_turn"),
    ]
    assert calls(AnthropicAdapter(), chunks)[0].args == {"path": "new"}


def test_quirk_max_tokens_truncates_even_a_stopped_block_whose_input_parses() -> None:
    chunks = [
        MESSAGE_START,
        start(0, "toolu_a", "write"),
        delta(0, '{"path": "a.txt"}'),
        stop(0),
        message_delta("max_tokens"),
        {"type": "message_stop"},
    ]
    call = calls(AnthropicAdapter(), chunks)[0]
    assert (call.status, call.error["kind"]) == ("error", "truncated")
    assert "max_tokens" in call.error["message"]


def test_quirk_stream_that_ends_before_the_block_stops_truncates() -> None:
    chunks = [MESSAGE_START, start(0, "toolu_a", "bash"), delta(0, '{"command": "ls"}')]
    assert summary(AnthropicAdapter(), chunks) == [("toolu_a", "bash", "error", "truncated")]


def test_quirk_stream_that_ends_after_the_block_stops_but_before_the_message_says_why() -> None:
    chunks = [MESSAGE_START, start(0, "toolu_a", "bash"), delta(0, '{"command": "ls"}'), stop(0)]
    assert summary(AnthropicAdapter(), chunks) == [("toolu_a", "bash", "error", "truncated")]


def test_an_error_event_truncates_the_open_calls_naming_the_error() -> None:
    chunks = [
        MESSAGE_START,
        start(0, "toolu_a", "bash"),
        delta(0, '{"command": "l'),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    call = calls(AnthropicAdapter(), chunks)[0]
    assert call.error["kind"] == "truncated"
    assert "overloaded_error: Overloaded" in call.error["message"]


def test_server_tool_use_blocks_are_not_reported() -> None:
    block = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    chunks = [
        MESSAGE_START,
        {"type": "content_block_start", "index": 0, "content_block": block},
        delta(0, '{"query": "x"}'),
        stop(0),
        message_delta("end_turn"),
    ]
    assert calls(AnthropicAdapter(), chunks) == []


def test_A5_a_block_start_delivered_again_keeps_one_call() -> None:
    """A re-delivered ``content_block_start`` (mid-arguments or after the stop) is the same
    block: the call keeps its id and text, and no second call is started."""
    chunks = [MESSAGE_START, start(0, "toolu_a", "read"), delta(0, '{"path": ')]
    chunks += [start(0, "toolu_a", "read"), delta(0, '"a.py"}'), stop(0)]
    chunks += [start(0, "toolu_a", "read"), message_delta("tool_use")]
    assert summary(AnthropicAdapter(), chunks) == [
        ("toolu_a", "read", "running", {"path": "a.py"})
    ]


def test_A6_a_different_call_at_a_started_index_is_refused_and_changes_nothing() -> None:
    """Two tool_use blocks at one index of one message cannot come from the protocol: the
    second raises ``InvalidChunk`` naming the field, and the first call goes on untouched."""
    adapter = AnthropicAdapter()
    assert adapter.feed(MESSAGE_START) == []
    adapter.feed(start(0, "toolu_a", "read"))
    with pytest.raises(InvalidChunk) as caught:
        adapter.feed(start(0, "toolu_b", "write"))
    assert caught.value.field == "content_block_start.index"
    assert "toolu_a" in str(caught.value)
    assert adapter.feed(delta(0, "{}")) == [
        {"type": "delta", "id": "toolu_a", "argsTextDelta": "{}"}
    ]


def test_A5_block_indices_count_again_in_each_message() -> None:
    """Index 0 of the next message is a new block, so its call starts normally."""
    first = [MESSAGE_START, start(0, "toolu_a", "read"), delta(0, "{}"), stop(0)]
    next_message = {**MESSAGE_START, "message": {**MESSAGE_START["message"], "id": "msg_2"}}
    second = [message_delta("tool_use"), {"type": "message_stop"}, next_message]
    second += [start(0, "toolu_b", "read"), delta(0, "{}"), stop(0), message_delta("tool_use")]
    assert summary(AnthropicAdapter(), first + second) == [
        ("toolu_a", "read", "running", {}),
        ("toolu_b", "read", "running", {}),
    ]
