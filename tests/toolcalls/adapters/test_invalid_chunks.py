"""A chunk an adapter cannot read raises ``InvalidChunk`` naming the field, and changes
nothing: the adapter goes on exactly as if it had never seen it, even when the bad part came
after good ones in the same chunk."""

# Rules checked here (docs/spec.md): A6.

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolcalls import InvalidChunk, ToolCallsError
from toolcalls.adapters import (
    AISDKAdapter,
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    StreamAdapter,
)

from .support import chat_chunk, fragment


def gemini(*calls: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": [{"functionCall": c} for c in calls]}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


def tool_use(index: int, call_id: str, name: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


CASES: list[tuple[Callable[[], StreamAdapter], list[Any], Any, str]] = [
    (
        OpenAIChatAdapter,
        [chat_chunk(fragment(0, '{"a": 1}', id="a", name="f")), chat_chunk(finish="tool_calls")],
        chat_chunk(fragment(1, "{}", id="b", name="g"), {"index": "2", "function": {}}),
        r"tool_calls\[\]\.index: expected an integer, got str",
    ),
    (
        OpenAIChatAdapter,
        [chat_chunk(fragment(0, '{"a": 1}', id="a", name="f")), chat_chunk(finish="tool_calls")],
        chat_chunk(fragment(0, "}"), {"index": 0, "function": {"arguments": 7}}),
        r"tool_calls\[\]\.function\.arguments: expected a string, got int",
    ),
    (
        OpenAIResponsesAdapter,
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {
                    "type": "function_call",
                    "id": "fc",
                    "call_id": "a",
                    "name": "f",
                    "arguments": "",
                },
            },
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "arguments": "{}",
            },
        ],
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {
                "type": "function_call",
                "id": "fc2",
                "call_id": "b",
                "name": "g",
                "arguments": ["x"],
            },
        },
        r"item\.arguments: expected a string, got list",
    ),
    (
        AnthropicAdapter,
        [
            tool_use(0, "a", "f"),
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        ],
        tool_use(1, "b", 42),  # a stopped call is waiting: it must not be released
        r"content_block\.name: expected a string, got int",
    ),
    (
        GeminiAdapter,
        [
            gemini({"name": "f", "willContinue": True}),
            gemini({"partialArgs": [{"jsonPath": "$.a", "numberValue": 1}]}),
        ],
        gemini(
            {"partialArgs": [{"jsonPath": "$.b", "numberValue": 2}], "willContinue": True},
            {"partialArgs": [{"jsonPath": "b", "numberValue": 3}]},
        ),
        r"jsonPath: not a JSON path: 'b'",
    ),
    (
        GeminiAdapter,
        [gemini({"name": "f", "args": {}}, finish="STOP")],
        gemini({"name": "g", "args": {"x": 1}}, {"name": "h", "args": {"x": float("nan")}}),
        r"functionCall\.args: not JSON",
    ),
    (
        AISDKAdapter,
        [
            {"type": "tool-input-start", "toolCallId": "a", "toolName": "f"},
            {"type": "tool-input-available", "toolCallId": "a", "toolName": "f", "input": {}},
        ],
        {"type": "tool-input-error", "toolCallId": "b", "toolName": "g", "errorText": 5},
        r"tool-input-error\.errorText: expected a string, got int",
    ),
    # An index routes fragments to a call: one of the wrong type (a bool is not an integer)
    # or missing where the protocol always sends one is refused, in every adapter alike.
    (
        AnthropicAdapter,
        [tool_use(0, "a", "f"), {"type": "content_block_stop", "index": 0}],
        {"type": "content_block_delta", "delta": {"type": "input_json_delta"}},
        r"content_block_delta\.index: expected an integer, got nothing",
    ),
    (
        AnthropicAdapter,
        [tool_use(0, "a", "f"), {"type": "content_block_stop", "index": 0}],
        {"type": "content_block_stop", "index": True},
        r"content_block_stop\.index: expected an integer, got bool",
    ),
    (
        OpenAIResponsesAdapter,
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "function_call", "id": "fc", "call_id": "a", "name": "f"},
            },
        ],
        {"type": "response.function_call_arguments.delta", "output_index": "0", "delta": "{"},
        r"response\.function_call_arguments\.delta\.output_index: expected an integer, got str",
    ),
    (
        OpenAIChatAdapter,
        [chat_chunk(fragment(0, '{"a": 1}', id="a", name="f"))],
        {"choices": [{"index": 0.0, "delta": {}}]},
        r"choices\[\]\.index: expected an integer, got float",
    ),
]


@pytest.mark.parametrize(("make", "good", "bad", "problem"), CASES)
@pytest.mark.parametrize("position", [0, 1, 2, 3])
def test_a_malformed_chunk_raises_naming_the_field_and_changes_nothing(
    make: Callable[[], StreamAdapter], good: list[Any], bad: Any, problem: str, position: int
) -> None:
    expected = make().feed_all(good)
    adapter = make()
    events = []
    position = min(position, len(good))
    for number, chunk in enumerate([*good, None]):
        if number == position:
            with pytest.raises(InvalidChunk, match=problem) as raised:
                adapter.feed(bad)
            assert isinstance(raised.value, ToolCallsError)
            assert isinstance(raised.value, ValueError)
            assert str(raised.value).startswith("invalid provider chunk: ")
        if chunk is not None:
            events.extend(adapter.feed(chunk))
    events.extend(adapter.finish())
    assert events == expected
