"""Breaks found by an independent review of branch adapters (round 5). Each test reproduces
one; fix the code, do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from toolcalls import InvalidChunk
from toolcalls.adapters import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
)

Event = dict[str, Any]


def _added(
    index: int | str, name: str, call_id: str | None = None, item_id: str | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "name": name,
        "arguments": "",
        "status": "in_progress",
    }
    if call_id is not None:
        item["call_id"] = call_id
    if item_id is not None:
        item["id"] = item_id
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def _delta(index: int, text: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "output_index": index, "delta": text}


def _done(index: int, arguments: str) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.done",
        "output_index": index,
        "arguments": arguments,
    }


def _chat(
    call_id: str | None = None, name: str | None = None, arguments: str = ""
) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    tool_call: dict[str, Any] = {"index": 0, "function": function}
    if call_id is not None:
        tool_call["id"] = call_id
    delta = {"tool_calls": [tool_call]}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def _finish() -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}


def _started(events: list[Event]) -> list[tuple[str, str]]:
    return [(event["id"], event["name"]) for event in events if event["type"] == "start"]


def test_A6_a_refused_responses_item_added_starts_no_call() -> None:
    """``response.output_item.added`` with an ``output_index`` that is not an integer raises
    ``InvalidChunk``, but only after the call was started: the adapter is not "left as it
    was", and the refused item's call (never accepted) is reported at ``finish()``."""
    adapter = OpenAIResponsesAdapter()
    with pytest.raises(InvalidChunk):
        adapter.feed(_added("0", "write", "call_1", "fc_1"))
    assert adapter.finish() == []


@pytest.mark.parametrize(
    "second",
    [
        pytest.param(_added(1, "g", "call_0", "fc_2"), id="provider-id-equal-to-a-generated-one"),
        pytest.param(_added(1, "g", "call_a", "fc_2"), id="provider-id-repeated-by-another-item"),
    ],
)
def test_A5_a_responses_call_bringing_a_taken_id_is_a_call_of_its_own(second: Event) -> None:
    """A second function_call item (its own item id and output index, another tool) brings a
    ``call_id`` already taken: one the adapter generated for an item sent without one, or the
    first item's. The docs say it gets a suffix rather than merge; the adapter takes it for the
    first call delivered again: tool ``g`` never starts (its deltas go to the first call or
    nowhere), so a call of the response is never reported (S2)."""
    first_id = "call_a" if second["item"]["call_id"] == "call_a" else None
    chunks = [_added(0, "f", first_id, "fc_1" if first_id else None), _delta(0, '{"a": 1}')]
    chunks += [_done(0, '{"a": 1}'), second, _delta(1, '{"b": 2}'), _done(1, '{"b": 2}')]
    events = OpenAIResponsesAdapter().feed_all(chunks)
    started = _started(events)
    assert [name for _, name in started] == ["f", "g"]
    assert len({call_id for call_id, _ in started}) == 2
    assert [event["type"] for event in events if event["type"] in ("ready", "error")] == [
        "ready",
        "ready",
    ]


def test_A4_a_stream_taken_over_while_its_task_still_reads_it_does_not_end_as_complete() -> None:
    """Two tasks share one adapter (a pooled adapter, say). The second task's ``events()``
    takes it over while the first task is still reading its stream: the first task's events
    just stop, as if the stream had ended, and its open call ``call_a`` never gets another
    event: not ``ready``, not ``truncated``, and no error tells the first task why."""
    entered, release = threading.Event(), threading.Event()

    def first_stream() -> Iterator[dict[str, Any]]:
        yield _chat("call_a", "f", '{"x": 1')
        entered.set()
        release.wait()
        yield _chat(arguments="}")
        yield _finish()

    async def main() -> tuple[list[Event], list[BaseException]]:
        adapter = OpenAIChatAdapter()
        first: list[Event] = []
        failures: list[BaseException] = []

        async def read_first() -> None:
            try:
                async for event in adapter.events(first_stream()):
                    first.append(event)
            except Exception as error:
                failures.append(error)

        task = asyncio.create_task(read_first())
        await asyncio.to_thread(entered.wait)
        while len(first) < 2:
            await asyncio.sleep(0)
        second = adapter.events([_chat("call_b", "g", "{}"), _finish()])
        await anext(second)  # the second task's stream starts on the shared adapter
        release.set()
        await task
        async for _event in second:  # the second stream runs to its end
            pass
        return first, failures

    first, failures = asyncio.run(main())
    ends = [event for event in first if event["type"] in ("ready", "error")]
    assert failures or [event["id"] for event in ends] == ["call_a"]


@pytest.mark.parametrize(
    "chunk",
    [
        _added(0, "f", "call_1") | {"item": _added(0, "f", "call_1")["item"] | {"id": ["fc_1"]}},
        {"type": "response.function_call_arguments.delta", "item_id": ["fc_1"], "delta": "{}"},
    ],
    ids=["item.id", "item_id"],
)
def test_A6_a_responses_item_id_that_is_not_a_string_raises_invalid_chunk(
    chunk: dict[str, Any],
) -> None:
    """The round-4 fix covered a list-typed ``output_index``; an item id given as a list (in
    the added item, or a delta's ``item_id``) still raises a bare ``TypeError: unhashable type``
    (after the call was started, for the added item), which ``events()`` reports as a failed
    stream rather than ``InvalidChunk`` naming the field."""
    adapter = OpenAIResponsesAdapter()
    with pytest.raises(InvalidChunk):
        adapter.feed(chunk)
    assert adapter.finish() == []


def _gemini(function_call: dict[str, Any]) -> dict[str, Any]:
    content = {"role": "model", "parts": [{"functionCall": function_call}]}
    return {"candidates": [{"index": 0, "content": content}]}


def test_A6_a_vertex_string_piece_that_is_not_a_string_raises_invalid_chunk() -> None:
    """A Vertex streamed call's string value goes on (``willContinue``) and the next piece for
    that path brings ``stringValue: 5``: the adapter raises a bare ``TypeError: can only
    concatenate str (not "int") to str`` instead of ``InvalidChunk`` naming the field (A6)."""
    adapter = GeminiAdapter()
    piece = {"jsonPath": "$.text", "stringValue": "ab", "willContinue": True}
    adapter.feed(_gemini({"name": "write", "willContinue": True, "partialArgs": [piece]}))
    bad = {"willContinue": True, "partialArgs": [{"jsonPath": "$.text", "stringValue": 5}]}
    with pytest.raises(InvalidChunk):
        adapter.feed(_gemini(bad))


@pytest.mark.parametrize(
    ("piece", "value"),
    [
        ({"jsonPath": "$.n", "numberValue": "7"}, 7),
        ({"jsonPath": "$.flag", "boolValue": "false"}, False),
    ],
    ids=["numberValue-as-text", "boolValue-as-text"],
)
def test_A6_a_vertex_piece_of_the_wrong_type_never_reaches_the_tool_as_text(
    piece: dict[str, Any], value: Any
) -> None:
    """A Vertex ``partialArgs`` piece whose ``numberValue`` (or ``boolValue``) is JSON text, as
    a proxy re-encoding proto3 JSON writes it: the adapter passes the text on as the argument,
    so the tool gets ``"7"`` for a number and ``"false"`` (truthy) for a boolean. It must read
    the value as its field says, or refuse the chunk."""
    adapter = GeminiAdapter()
    try:
        events = adapter.feed(_gemini({"name": "f", "partialArgs": [piece]}))
    except InvalidChunk:
        return
    deltas = [event["argsTextDelta"] for event in events if event["type"] == "delta"]
    field = piece["jsonPath"][2:]
    assert [json.loads(text)[field] for text in deltas] == [value]
    assert [type(json.loads(text)[field]) for text in deltas] == [type(value)]


@pytest.mark.parametrize("given", [[1, 2], "text", 5])
def test_A6_an_anthropic_block_input_that_is_not_an_object_raises_invalid_chunk(
    given: Any,
) -> None:
    """A ``tool_use`` block's ``input`` is an object; the round-4 fix refused Gemini ``args``
    that are not one, but Anthropic's ``content_block_start`` with ``input: [1, 2]`` is taken
    as the call's arguments (``[1, 2]``) and made ready, instead of ``InvalidChunk``."""
    block = {"type": "tool_use", "id": "toolu_a", "name": "f", "input": given}
    with pytest.raises(InvalidChunk):
        AnthropicAdapter().feed(
            {"type": "content_block_start", "index": 0, "content_block": block}
        )


def test_A4_a_failed_stream_reports_the_call_still_waiting_for_its_id_as_truncated() -> None:
    """A compatible server sends a call's name and first fragment, its id to follow; then the
    connection drops. A stream that just ends reports that call truncated (``finish()`` starts
    the calls still waiting), but a stream that fails cuts off only the started calls: this
    call is never reported at all, so the model never hears it was cut off (S2)."""

    def stream() -> Iterator[dict[str, Any]]:
        yield _chat(name="f", arguments='{"x": 1')
        raise ConnectionError("dropped")

    async def main() -> list[Event]:
        events: list[Event] = []
        try:
            async for event in OpenAIChatAdapter().events(stream()):
                events.append(event)
        except ConnectionError:
            return events
        raise AssertionError("the stream's error did not propagate")

    events = asyncio.run(main())
    assert [(event["type"], event.get("name")) for event in events][:1] == [("start", "f")]
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["kind"] == "truncated"
    assert "ConnectionError" in events[-1]["error"]["message"]
