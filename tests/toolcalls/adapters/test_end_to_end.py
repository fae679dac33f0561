"""End to end: the real provider clients, a local SSE server, a session running the tools.

For each provider the real Python client (``openai``, ``anthropic``, ``google-genai``), with its
base URL pointed at a server on 127.0.0.1, streams a response with parallel tool calls (one of
them with empty arguments, one for a tool that does not exist). The adapter feeds a
``ToolCallSession``, the tools run, and the results go back in the next request, built by the
results-back helpers; the server checks them and answers 400 if anything is off.
"""

# Rules checked here (docs/spec.md): A1, A7.

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types as genai_types

from toolcalls import ExecutionView, ToolCallSession
from toolcalls.adapters import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    anthropic_tool_result,
    openai_chat_tool_message,
    openai_responses_output,
)

from .sse_server import Script, Turn, serve


def get_weather(city: str) -> dict[str, str]:
    return {"city": city, "sky": "sunny"}


async def get_time() -> str:
    return "12:00"


TOOLS = {"get_weather": get_weather, "get_time": get_time}
WEATHER = json.dumps({"city": "Zürich", "sky": "sunny"}, ensure_ascii=False)


def by_id(items: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {item[key]: item for item in items}


async def run_session(events: Any) -> list[ExecutionView]:
    async with ToolCallSession(TOOLS) as session:
        return [settled async for settled in session.run(events)]


# -- OpenAI Chat Completions ---------------------------------------------------------------------


def chat_frame(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [choice],
    }
    return None, chunk


def tool_delta(index: int, arguments: str, **first: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if first:
        entry.update(id=first["id"], type="function")
        entry["function"]["name"] = first["name"]
    return {"tool_calls": [entry]}


def check_chat_results(path: str, body: dict[str, Any]) -> None:
    assert path == "/v1/chat/completions", path
    messages = body["messages"]
    assistant = messages[1]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_w", "call_t", "call_x"]
    results = by_id([m for m in messages if m["role"] == "tool"], "tool_call_id")
    assert results["call_w"]["content"] == WEATHER, results
    assert results["call_t"]["content"] == "12:00", results
    error = json.loads(results["call_x"]["content"])["error"]
    assert error["kind"] == "unknown_tool", error


CHAT_TURNS = [
    Turn(
        lambda path, body: None,
        [
            chat_frame({"role": "assistant", "content": None}),
            chat_frame(tool_delta(0, "", id="call_w", name="get_weather")),
            chat_frame(tool_delta(1, "", id="call_t", name="get_time")),  # "" = no arguments
            chat_frame(tool_delta(0, '{"city": "Z\\u0')),  # cut inside an escape
            chat_frame(tool_delta(2, '{"path": "/"}', id="call_x", name="delete_everything")),
            chat_frame(tool_delta(0, '0fcrich"}')),
            chat_frame({}, "tool_calls"),
            (None, "[DONE]"),
        ],
    ),
    Turn(
        check_chat_results,
        [chat_frame({"role": "assistant", "content": "It is sunny."}, "stop"), (None, "[DONE]")],
    ),
]


def test_openai_chat_completions_client_end_to_end() -> None:
    script = Script(list(CHAT_TURNS))

    async def main(url: str) -> str:
        async with openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as client:
            messages: list[dict[str, Any]] = [{"role": "user", "content": "weather and time?"}]
            stream = await client.chat.completions.create(
                model="m",
                messages=messages,
                stream=True,  # type: ignore[arg-type]
            )
            adapter = OpenAIChatAdapter()
            async with ToolCallSession(TOOLS) as session:
                settled = [s async for s in session.run(adapter.events(stream))]
                calls = session.tracker.list()
            tool_calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.args_text},
                }
                for c in calls
            ]
            messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
            messages += [openai_chat_tool_message(s) for s in settled]
            answer = await client.chat.completions.create(
                model="m",
                messages=messages,
                stream=True,  # type: ignore[arg-type]
            )
            return "".join([c.choices[0].delta.content or "" async for c in answer])

    with serve(script) as url:
        text = asyncio.run(main(url))
    assert script.failures == []
    assert text == "It is sunny."
    assert len(script.requests) == 2


# -- OpenAI Responses ----------------------------------------------------------------------------


SEQUENCE = itertools.count()


def responses_frame(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    payload.setdefault("sequence_number", next(SEQUENCE))
    return payload["type"], payload


def function_item(item_id: str, call_id: str, name: str, arguments: str = "") -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "status": "in_progress",
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }


def response(status: str, output: list[Any]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "model": "m",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
    }


def check_responses_results(path: str, body: dict[str, Any]) -> None:
    assert path == "/v1/responses", path
    outputs = by_id(
        [i for i in body["input"] if i.get("type") == "function_call_output"], "call_id"
    )
    assert outputs["call_w"]["output"] == WEATHER, outputs
    assert outputs["call_t"]["output"] == "12:00", outputs


RESPONSES_TURNS = [
    Turn(
        lambda path, body: None,
        [
            responses_frame({"type": "response.created", "response": response("in_progress", [])}),
            responses_frame(
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": function_item("fc_1", "call_w", "get_weather"),
                }
            ),
            responses_frame(
                {
                    "type": "response.output_item.added",
                    "output_index": 1,
                    "item": function_item("fc_2", "call_t", "get_time"),
                }
            ),
            responses_frame(
                {
                    "type": "response.function_call_arguments.delta",
                    "output_index": 0,
                    "item_id": "fc_1",
                    "delta": '{"city": "Z',
                }
            ),
            # the item id rotates between events of one call
            responses_frame(
                {
                    "type": "response.function_call_arguments.delta",
                    "output_index": 0,
                    "item_id": "fc_1b",
                    "delta": 'ürich"}',
                }
            ),
            responses_frame(
                {
                    "type": "response.function_call_arguments.done",
                    "output_index": 1,
                    "item_id": "fc_2",
                    "arguments": "",
                    "name": "get_time",
                }
            ),
            responses_frame(
                {
                    "type": "response.function_call_arguments.done",
                    "output_index": 0,
                    "item_id": "fc_1c",
                    "arguments": '{"city": "Zürich"}',
                    "name": "get_weather",
                }
            ),
            responses_frame({"type": "response.completed", "response": response("completed", [])}),
        ],
    ),
    Turn(
        check_responses_results,
        [
            responses_frame({"type": "response.completed", "response": response("completed", [])}),
        ],
    ),
]


def test_openai_responses_client_end_to_end() -> None:
    script = Script(list(RESPONSES_TURNS))

    async def main(url: str) -> None:
        async with openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as client:
            stream = await client.responses.create(model="m", input="weather?", stream=True)
            settled = await run_session(OpenAIResponsesAdapter().events(stream))
            follow_up: list[Any] = [openai_responses_output(s) for s in settled]
            answer = await client.responses.create(model="m", input=follow_up, stream=True)
            async for _ in answer:
                pass

    with serve(script) as url:
        asyncio.run(main(url))
    assert script.failures == []
    assert len(script.requests) == 2


# -- Anthropic Messages --------------------------------------------------------------------------


def anthropic_frame(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return payload["type"], payload


def tool_block(index: int, call_id: str, name: str) -> tuple[str, dict[str, Any]]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return anthropic_frame({"type": "content_block_start", "index": index, "content_block": block})


def input_delta(index: int, text: str) -> tuple[str, dict[str, Any]]:
    delta = {"type": "input_json_delta", "partial_json": text}
    return anthropic_frame({"type": "content_block_delta", "index": index, "delta": delta})


def block_stop(index: int) -> tuple[str, dict[str, Any]]:
    return anthropic_frame({"type": "content_block_stop", "index": index})


MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "m",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def check_anthropic_results(path: str, body: dict[str, Any]) -> None:
    assert path == "/v1/messages", path
    assistant, results = body["messages"][1], body["messages"][2]
    assert [b["id"] for b in assistant["content"]] == ["toolu_w", "toolu_t", "toolu_x"]
    blocks = by_id(results["content"], "tool_use_id")
    assert blocks["toolu_w"] == {
        "type": "tool_result",
        "tool_use_id": "toolu_w",
        "content": WEATHER,
        "is_error": False,
    }, blocks
    assert blocks["toolu_t"]["content"] == "12:00", blocks
    assert blocks["toolu_x"]["is_error"] is True, blocks
    assert "unknown_tool" in blocks["toolu_x"]["content"], blocks


ANTHROPIC_TURNS = [
    Turn(
        lambda path, body: None,
        [
            anthropic_frame({"type": "message_start", "message": MESSAGE}),
            tool_block(0, "toolu_w", "get_weather"),
            input_delta(0, ""),
            input_delta(0, '{"city": "Z\\u00'),
            anthropic_frame({"type": "ping"}),
            input_delta(0, 'fcrich"}'),
            block_stop(0),
            tool_block(1, "toolu_t", "get_time"),
            input_delta(1, ""),  # the whole input of a no-argument call
            block_stop(1),
            tool_block(2, "toolu_x", "delete_everything"),
            input_delta(2, '{"path": "/"}'),
            block_stop(2),
            anthropic_frame(
                {
                    "type": "message_delta",
                    "usage": {"output_tokens": 9},
                    "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                }
            ),
            anthropic_frame({"type": "message_stop"}),
        ],
    ),
    Turn(
        check_anthropic_results,
        [
            anthropic_frame({"type": "message_start", "message": MESSAGE}),
            anthropic_frame(
                {
                    "type": "message_delta",
                    "usage": {"output_tokens": 1},
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                }
            ),
            anthropic_frame({"type": "message_stop"}),
        ],
    ),
]


def test_anthropic_client_end_to_end() -> None:
    script = Script(list(ANTHROPIC_TURNS))

    async def main(url: str) -> None:
        async with anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0) as client:
            messages: list[dict[str, Any]] = [{"role": "user", "content": "weather and time?"}]
            stream = await client.messages.create(
                model="m",
                max_tokens=100,
                messages=messages,
                stream=True,  # type: ignore[arg-type]
            )
            async with ToolCallSession(TOOLS) as session:
                settled = [s async for s in session.run(AnthropicAdapter().events(stream))]
                calls = session.tracker.list()
            uses = [
                {
                    "type": "tool_use",
                    "id": c.id,
                    "name": c.name,
                    "input": c.args if c.has_args else {},
                }
                for c in calls
            ]
            messages.append({"role": "assistant", "content": uses})
            messages.append(
                {"role": "user", "content": [anthropic_tool_result(s) for s in settled]}
            )
            answer = await client.messages.create(
                model="m",
                max_tokens=100,
                messages=messages,
                stream=True,  # type: ignore[arg-type]
            )
            async for _ in answer:
                pass

    with serve(script) as url:
        asyncio.run(main(url))
    assert script.failures == []
    assert len(script.requests) == 2


# -- Gemini --------------------------------------------------------------------------------------


def gemini_frame(parts: list[Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return None, {"candidates": [candidate], "modelVersion": "m", "responseId": "r1"}


def check_gemini_results(path: str, body: dict[str, Any]) -> None:
    assert ":streamGenerateContent" in path, path
    model, results = body["contents"][1], body["contents"][2]
    assert [p["functionCall"]["name"] for p in model["parts"]] == [
        "get_weather",
        "get_weather",
        "get_time",
    ]
    responses = [part["functionResponse"] for part in results["parts"]]
    assert responses == [
        {"name": "get_weather", "response": {"output": {"city": "Zürich", "sky": "sunny"}}},
        {"name": "get_weather", "response": {"output": {"city": "Moab", "sky": "sunny"}}},
        {"name": "get_time", "response": {"output": "12:00"}},
    ], responses  # no ids: the model sent none, so none of the generated ones go back


GEMINI_TURNS = [
    Turn(
        lambda path, body: None,
        [
            gemini_frame(
                [
                    {"functionCall": {"name": "get_weather", "args": {"city": "Zürich"}}},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Moab"}}},
                ]
            ),
            gemini_frame([{"functionCall": {"name": "get_time", "args": {}}}], "STOP"),
        ],
    ),
    Turn(check_gemini_results, [gemini_frame([{"text": "Sunny."}], "STOP")]),
]


def test_google_genai_client_end_to_end() -> None:
    script = Script(list(GEMINI_TURNS))

    async def main(url: str) -> None:
        options = genai_types.HttpOptions(base_url=url)
        client = genai.Client(api_key="k", http_options=options)
        contents: list[Any] = [{"role": "user", "parts": [{"text": "weather?"}]}]
        model_parts: list[Any] = []

        async def chunks() -> Any:
            stream = await client.aio.models.generate_content_stream(model="m", contents=contents)
            async for chunk in stream:
                for candidate in chunk.candidates or ():
                    model_parts.extend(candidate.content.parts or ())
                yield chunk

        adapter = GeminiAdapter()
        settled = await run_session(adapter.events(chunks()))
        settled.sort(key=lambda state: state.tool_call_id)
        contents.append(genai_types.Content(role="model", parts=model_parts))
        responses = [adapter.function_response(state) for state in settled]
        contents.append({"role": "user", "parts": responses})
        answer = await client.aio.models.generate_content_stream(model="m", contents=contents)
        async for _ in answer:
            pass
        await client.aio.aclose()

    with serve(script) as url:
        asyncio.run(main(url))
    assert script.failures == []
    assert len(script.requests) == 2


def check_vertex_results(path: str, body: dict[str, Any]) -> None:
    assert ":streamGenerateContent" in path, path
    responses = [part["functionResponse"] for part in body["contents"][-1]["parts"]]
    assert responses == [
        {"name": "get_weather", "response": {"output": {"city": "Zürich", "sky": "sunny"}}},
    ], responses


VERTEX_TURNS = [
    Turn(
        lambda path, body: None,
        [
            gemini_frame([{"functionCall": {"name": "get_weather", "willContinue": True}}]),
            gemini_frame(
                [
                    {
                        "functionCall": {
                            "willContinue": True,
                            "partialArgs": [
                                {"jsonPath": "$.city", "stringValue": "Zü", "willContinue": True}
                            ],
                        }
                    }
                ]
            ),
            gemini_frame(
                [
                    {
                        "functionCall": {
                            "willContinue": True,
                            "partialArgs": [{"jsonPath": "$.city", "stringValue": "rich"}],
                        }
                    }
                ]
            ),
            gemini_frame([{"functionCall": {}}]),
            gemini_frame([{"functionCall": {}}], "STOP"),
        ],
    ),
    Turn(check_vertex_results, [gemini_frame([{"text": "Sunny."}], "STOP")]),
]


def test_google_genai_vertex_client_streaming_partial_args_end_to_end() -> None:
    script = Script(list(VERTEX_TURNS))

    async def main(url: str) -> None:
        options = genai_types.HttpOptions(base_url=url)
        client = genai.Client(vertexai=True, api_key="k", http_options=options)
        contents: list[Any] = [{"role": "user", "parts": [{"text": "weather?"}]}]
        stream = await client.aio.models.generate_content_stream(model="m", contents=contents)
        adapter = GeminiAdapter()
        settled = await run_session(adapter.events(stream))
        call = {"name": "get_weather", "args": {"city": "Zürich"}}
        contents.append({"role": "model", "parts": [{"function_call": call}]})
        responses = [adapter.function_response(state) for state in settled]
        contents.append({"role": "user", "parts": responses})
        answer = await client.aio.models.generate_content_stream(model="m", contents=contents)
        async for _ in answer:
            pass
        await client.aio.aclose()

    with serve(script) as url:
        asyncio.run(main(url))
    assert script.failures == []
    assert len(script.requests) == 2
