"""Results back: each provider's message or item for a settled call, success and error."""

# Rules checked here (docs/spec.md): A7.

from __future__ import annotations

import asyncio
import datetime
import json
import subprocess
import sys
from types import MappingProxyType
from typing import Any

import pytest

from toolcalls import ExecutionView, ToolCallView, ToolError
from toolcalls.adapters import (
    GeminiAdapter,
    OpenAIChatAdapter,
    ai_sdk_tool_output,
    anthropic_tool_result,
    gemini_function_response,
    openai_chat_tool_message,
    openai_responses_output,
)

from .support import chat_chunk, fragment

OK = ExecutionView("c1", "search", MappingProxyType({}), "success", {"hits": ["é"]})
FAILED = ExecutionView(
    "c2", "search", MappingProxyType({}), "error", None, ToolError("timeout", "too slow", {})
)
FAILED_JSON = '{"error": {"kind": "timeout", "message": "too slow", "details": {}}}'


def test_openai_chat_tool_message() -> None:
    assert openai_chat_tool_message(OK) == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": '{"hits": ["é"]}',
    }
    assert openai_chat_tool_message(FAILED)["content"] == FAILED_JSON


def test_openai_responses_function_call_output() -> None:
    assert openai_responses_output(OK) == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": '{"hits": ["é"]}',
    }
    assert openai_responses_output(FAILED)["output"] == FAILED_JSON


def test_anthropic_tool_result_flags_errors() -> None:
    assert anthropic_tool_result(OK) == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": '{"hits": ["é"]}',
        "is_error": False,
    }
    assert anthropic_tool_result(FAILED)["is_error"] is True


def test_gemini_function_response_output_and_error() -> None:
    assert gemini_function_response(OK) == {
        "functionResponse": {"name": "search", "response": {"output": {"hits": ["é"]}}, "id": "c1"}
    }
    body = gemini_function_response(FAILED, send_id=False)["functionResponse"]
    assert body == {"name": "search", "response": {"error": FAILED.error.to_dict()}}  # type: ignore[union-attr]


def test_gemini_adapter_sends_back_only_the_ids_the_model_sent() -> None:
    adapter = GeminiAdapter()
    adapter.feed(
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {"functionCall": {"name": "search", "args": {}}},
                            {"functionCall": {"id": "c1", "name": "search", "args": {}}},
                        ]
                    }
                }
            ]
        }
    )
    generated = ExecutionView("call_0", "search", MappingProxyType({}), "success", 1)
    assert "id" not in adapter.function_response(generated)["functionResponse"]
    assert adapter.function_response(OK)["functionResponse"]["id"] == "c1"


def test_ai_sdk_tool_output_available_and_error() -> None:
    assert ai_sdk_tool_output(OK) == {
        "type": "tool-output-available",
        "toolCallId": "c1",
        "output": {"hits": ["é"]},
    }
    assert ai_sdk_tool_output(FAILED) == {
        "type": "tool-output-error",
        "toolCallId": "c2",
        "errorText": "too slow",
    }


def test_string_results_are_sent_as_they_are() -> None:
    state = ExecutionView("c1", "f", MappingProxyType({}), "success", "plain text")
    assert openai_chat_tool_message(state)["content"] == "plain text"


@pytest.mark.parametrize(
    "builder",
    [
        openai_chat_tool_message,
        openai_responses_output,
        anthropic_tool_result,
        gemini_function_response,
        ai_sdk_tool_output,
    ],
)
def test_results_json_cannot_hold_are_still_sent_as_json(builder: Any) -> None:
    when = datetime.datetime(2026, 1, 2, 3, 4, tzinfo=datetime.UTC)
    state = ExecutionView("c1", "f", MappingProxyType({}), "success", {"at": when, "tags": {1}})
    message = json.dumps(builder(state))
    assert "2026-01-02T03:04:00Z" in message


def test_tracker_views_work_too() -> None:
    done = ToolCallView(id="c1", name="f", args_text="{}", args={}, status="done", result=[1])
    failed = ToolCallView(
        id="c2", name="f", args_text="{", status="error", error={"message": "bad"}
    )
    assert openai_chat_tool_message(done)["content"] == "[1]"
    assert anthropic_tool_result(failed)["is_error"] is True
    assert ai_sdk_tool_output(failed)["errorText"] == "bad"


def test_an_unsettled_call_is_refused() -> None:
    running = ToolCallView(id="c1", name="f", args_text="{}", args={}, status="running")
    with pytest.raises(ValueError, match="c1 has not settled"):
        openai_chat_tool_message(running)
    with pytest.raises(TypeError, match="expected an ExecutionView or ToolCallView"):
        openai_chat_tool_message({"id": "c1"})  # type: ignore[arg-type]


def test_events_reads_sync_and_async_streams_then_finishes() -> None:
    chunks = [chat_chunk(fragment(0, "{}", id="a", name="f")), chat_chunk(finish="tool_calls")]

    async def agen():  # type: ignore[no-untyped-def]
        for chunk in chunks:
            yield chunk

    async def collect(stream: object) -> list[dict]:
        return [event async for event in OpenAIChatAdapter().events(stream)]  # type: ignore[arg-type]

    expected = OpenAIChatAdapter().feed_all(chunks)
    assert asyncio.run(collect(chunks)) == expected
    assert asyncio.run(collect(agen())) == expected
    truncated = asyncio.run(collect(chunks[:1]))
    assert truncated[-1]["type"] == "error"


def test_a_stream_that_raises_truncates_the_open_calls_then_the_error_propagates() -> None:
    async def broken():  # type: ignore[no-untyped-def]
        yield chat_chunk(fragment(0, '{"a": 1}', id="a", name="f"))
        raise ConnectionError("peer closed")

    async def collect() -> list[dict]:
        events = []
        stream = OpenAIChatAdapter().events(broken())
        with pytest.raises(ConnectionError, match="peer closed"):  # noqa: PT012
            async for event in stream:
                events.append(event)
        return events

    events = asyncio.run(collect())
    assert [event["type"] for event in events] == ["start", "delta", "error"]
    assert events[-1]["error"] == {
        "kind": "truncated",
        "message": "arguments truncated: reading the stream failed (ConnectionError: peer closed)",
    }


def test_the_adapters_import_and_read_dicts_without_the_provider_sdks() -> None:
    probe = (
        "import sys\n"
        "for name in ('openai', 'anthropic', 'google', 'google.genai', 'jiter'):\n"
        "    sys.modules[name] = None\n"
        "from toolcalls.adapters import ADAPTERS\n"
        "events = ADAPTERS['anthropic']().feed_all([\n"
        "    {'type': 'content_block_start', 'index': 0,\n"
        "     'content_block': {'type': 'tool_use', 'id': 't', 'name': 'f', 'input': {}}},\n"
        "    {'type': 'content_block_stop', 'index': 0}, {'type': 'message_stop'}])\n"
        "print([event['type'] for event in events])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "['start', 'delta', 'ready']"
