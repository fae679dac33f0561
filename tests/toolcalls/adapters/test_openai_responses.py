"""OpenAI Responses events: calls by output index, rotating item ids, truncation."""

from __future__ import annotations

import itertools
from typing import Any

from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from toolcalls.adapters import OpenAIResponsesAdapter

from .support import calls, summary

_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
#: Events are numbered in the order they are made, as a stream numbers them.
SEQUENCE = itertools.count()


def added(index: int, call_id: str, name: str, item_id: str, arguments: str = "") -> dict:
    item = {
        "id": item_id,
        "type": "function_call",
        "status": "in_progress",
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }
    return {
        "type": "response.output_item.added",
        "output_index": index,
        "item": item,
        "sequence_number": next(SEQUENCE),
    }


def delta(index: int, item_id: str, text: str) -> dict:
    return {
        "type": "response.function_call_arguments.delta",
        "output_index": index,
        "item_id": item_id,
        "delta": text,
        "sequence_number": next(SEQUENCE),
    }


def done(index: int, item_id: str, arguments: str, name: str = "f") -> dict:
    return {
        "type": "response.function_call_arguments.done",
        "output_index": index,
        "item_id": item_id,
        "arguments": arguments,
        "name": name,
        "sequence_number": next(SEQUENCE),
    }


def response(status: str, reason: str | None = None) -> dict:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "model": "m",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": {"reason": reason} if reason else None,
    }


def reasoning_then_two_calls() -> list[dict]:
    return [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "sequence_number": next(SEQUENCE),
            "item": {"id": "rs_1", "type": "reasoning", "summary": []},
        },
        added(1, "call_a", "add", "fc_a"),
        added(2, "call_b", "mul", "fc_b"),
        delta(1, "fc_a", '{"a": 1,'),
        delta(2, "fc_b", '{"a": 2,'),
        delta(1, "fc_a", ' "b": 3}'),
        delta(2, "fc_b", ' "b": 4}'),
        done(1, "fc_a", '{"a": 1, "b": 3}'),
        done(2, "fc_b", '{"a": 2, "b": 4}'),
        {
            "type": "response.completed",
            "response": response("completed"),
            "sequence_number": next(SEQUENCE),
        },
    ]


def test_calls_are_named_by_call_id_and_routed_by_output_index() -> None:
    assert summary(OpenAIResponsesAdapter(), reasoning_then_two_calls()) == [
        ("call_a", "add", "running", {"a": 1, "b": 3}),
        ("call_b", "mul", "running", {"a": 2, "b": 4}),
    ]


def test_sdk_event_objects_are_read_like_dicts() -> None:
    objects = [_EVENT.validate_python(event) for event in reasoning_then_two_calls()]
    assert calls(OpenAIResponsesAdapter(), objects) == calls(
        OpenAIResponsesAdapter(), reasoning_then_two_calls()
    )


def test_quirk_item_id_rotating_between_events_of_one_call() -> None:
    chunks = [
        added(0, "call_a", "search", "fc_1"),
        delta(0, "fc_2", '{"q":'),
        delta(0, "fc_3", ' "x"}'),
        done(0, "fc_4", '{"q": "x"}'),
    ]
    assert summary(OpenAIResponsesAdapter(), chunks) == [
        ("call_a", "search", "running", {"q": "x"})
    ]


def test_quirk_item_id_rotating_without_output_index_follows_the_one_open_call() -> None:
    chunks = [
        added(0, "call_a", "search", "fc_1"),
        delta(0, "fc_2", '{"q": "x"}'),
        done(0, "fc_3", '{"q": "x"}'),
    ]
    for event in chunks[1:]:
        del event["output_index"]
    assert summary(OpenAIResponsesAdapter(), chunks) == [
        ("call_a", "search", "running", {"q": "x"})
    ]


def test_quirk_truncated_by_max_output_tokens_never_becomes_ready() -> None:
    chunks = [
        added(0, "call_a", "write", "fc_1"),
        delta(0, "fc_1", '{"path": "a.txt"}'),  # parses, yet was cut off
        {
            "type": "response.incomplete",
            "response": response("incomplete", "max_output_tokens"),
            "sequence_number": next(SEQUENCE),
        },
    ]
    call = calls(OpenAIResponsesAdapter(), chunks)[0]
    assert (call.status, call.error["kind"]) == ("error", "truncated")
    assert "max_output_tokens" in call.error["message"]


def test_quirk_stream_that_ends_before_the_done_event_truncates() -> None:
    chunks = [added(0, "call_a", "write", "fc_1"), delta(0, "fc_1", "{}")]
    assert summary(OpenAIResponsesAdapter(), chunks) == [("call_a", "write", "error", "truncated")]


def test_a_failed_response_truncates_the_open_calls_naming_the_failure() -> None:
    failed = response("failed")
    failed["error"] = {"code": "server_error", "message": "boom"}
    chunks = [
        added(0, "call_a", "f", "fc_1"),
        {"type": "response.failed", "response": failed, "sequence_number": next(SEQUENCE)},
    ]
    call = calls(OpenAIResponsesAdapter(), chunks)[0]
    assert call.error["kind"] == "truncated"
    assert "server_error: boom" in call.error["message"]


def test_quirk_empty_arguments_mean_no_arguments() -> None:
    chunks = [added(0, "call_a", "now", "fc_1"), done(0, "fc_1", "")]
    assert summary(OpenAIResponsesAdapter(), chunks) == [("call_a", "now", "running", {})]


def test_arguments_only_in_the_done_events_are_used() -> None:
    item_done = {
        "type": "response.output_item.done",
        "output_index": 0,
        "sequence_number": next(SEQUENCE),
        "item": {
            "id": "fc_1",
            "type": "function_call",
            "status": "completed",
            "arguments": '{"a": 1}',
            "call_id": "call_a",
            "name": "f",
        },
    }
    assert summary(OpenAIResponsesAdapter(), [item_done]) == [("call_a", "f", "running", {"a": 1})]
    chunks = [added(0, "call_a", "f", "fc_1"), done(0, "fc_1", '{"b": 2}')]
    assert summary(OpenAIResponsesAdapter(), chunks) == [("call_a", "f", "running", {"b": 2})]


def test_quirk_item_closed_as_incomplete_by_max_output_tokens_never_becomes_ready() -> None:
    item = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_a",
        "name": "write",
        "status": "incomplete",
        "arguments": '{"path": "a.txt"}',
    }
    chunks = [
        added(0, "call_a", "write", "fc_1"),
        delta(0, "fc_1", '{"path": "a.txt"}'),
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": item,
            "sequence_number": next(SEQUENCE),
        },
        {
            "type": "response.incomplete",
            "response": response("incomplete", "max_output_tokens"),
            "sequence_number": next(SEQUENCE),
        },
    ]
    call = calls(OpenAIResponsesAdapter(), chunks)[0]
    assert (call.status, call.error["kind"]) == ("error", "truncated")
    assert "incomplete" in call.error["message"]


def test_an_incomplete_item_in_a_completed_response_is_truncated_too() -> None:
    final = response("completed")
    final["output"] = [
        {
            "id": "fc_1",
            "type": "function_call",
            "call_id": "call_a",
            "name": "f",
            "status": "incomplete",
            "arguments": "{}",
        }
    ]
    chunks = [
        added(0, "call_a", "f", "fc_1"),
        {"type": "response.completed", "response": final, "sequence_number": next(SEQUENCE)},
    ]
    assert summary(OpenAIResponsesAdapter(), chunks) == [("call_a", "f", "error", "truncated")]


def test_quirk_an_event_redelivered_by_a_resumed_stream_is_skipped() -> None:
    chunks = [
        added(0, "call_a", "rm", "fc_1"),
        delta(0, "fc_1", '{"path": "/tmp/'),
        delta(0, "fc_1", "x"),
    ]
    chunks.append(dict(chunks[-1]))  # the same event (same sequence_number) again
    chunks += [delta(0, "fc_1", '"}'), done(0, "fc_1", '{"path": "/tmp/x"}')]
    assert summary(OpenAIResponsesAdapter(), chunks) == [
        ("call_a", "rm", "running", {"path": "/tmp/x"})
    ]


def test_streamed_arguments_that_differ_from_the_final_ones_are_not_run() -> None:
    chunks = [
        added(0, "call_a", "rm", "fc_1"),
        delta(0, "fc_1", '{"path": "/tmp/xx"}'),  # a delta lost its sequence number, say
        done(0, "fc_1", '{"path": "/tmp/x"}'),
    ]
    assert summary(OpenAIResponsesAdapter(), chunks) == [
        ("call_a", "rm", "error", "arguments_mismatch")
    ]
