"""Our final arguments equal those of the SDKs' own accumulators, on generated streams.

Hypothesis draws several calls with JSON arguments (escaped or raw non-ASCII text, emoji as
surrogate-pair escapes), cuts each argument text at arbitrary points (inside ``\\u`` escapes,
between the halves of a surrogate pair, next to multi-byte characters) and interleaves the
fragments of parallel calls. The same chunks go through openai's ``ChatCompletionStreamState``
and anthropic's ``accumulate_event``, and through our adapter into a tracker.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from anthropic.lib.streaming._messages import accumulate_event
from hypothesis import given
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from toolcalls.adapters import AnthropicAdapter, OpenAIChatAdapter

from .support import chat_chunk, fragment, track

TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from('"\\/\n\té😀'),
    max_size=12,
)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
ARGUMENTS = st.dictionaries(TEXT, JSON_VALUE, max_size=4)


@st.composite
def cut(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` in fragments cut at any points (empty fragments included)."""
    points = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@st.composite
def parallel_calls(draw: st.DrawFn) -> tuple[list[str], list[tuple[int, str]]]:
    """The argument texts of 1-4 calls, and their fragments interleaved as (call, fragment)."""
    texts = []
    queues = []
    for _ in range(draw(st.integers(1, 4))):
        args = draw(ARGUMENTS)
        # "" is a no-argument call, as Anthropic and some OpenAI-compatible servers send it.
        text = (
            ""
            if not args and draw(st.booleans())
            else json.dumps(args, ensure_ascii=draw(st.booleans()))
        )
        texts.append(text)
        queues.append(draw(cut(text)))
    order: list[tuple[int, str]] = []
    positions = [0] * len(queues)
    while any(p < len(q) for p, q in zip(positions, queues, strict=True)):
        choices = [i for i, q in enumerate(queues) if positions[i] < len(q)]
        i = draw(st.sampled_from(choices))
        order.append((i, queues[i][positions[i]]))
        positions[i] += 1
    return texts, order


def openai_stream(texts: list[str], order: list[tuple[int, str]]) -> list[dict[str, Any]]:
    chunks = [
        chat_chunk(fragment(i, "", id=f"call_{i}", name=f"tool{i}")) for i in range(len(texts))
    ]
    chunks += [chat_chunk(fragment(i, text)) for i, text in order]
    chunks.append(chat_chunk(finish="tool_calls"))
    chunks[0]["choices"][0]["delta"]["role"] = "assistant"
    return chunks


@given(parallel_calls())
def test_openai_chat_final_arguments_equal_chat_completion_stream_state(
    drawn: tuple[list[str], list[tuple[int, str]]],
) -> None:
    texts, order = drawn
    chunks = openai_stream(texts, order)
    state = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    reference = state.get_final_completion().choices[0].message.tool_calls or []
    ours = track(OpenAIChatAdapter(), chunks).list()
    assert [(c.id, c.name, c.args_text or "{}") for c in ours] == [
        (r.id, r.function.name, r.function.arguments or "{}") for r in reference
    ]
    assert [c.args for c in ours] == [json.loads(r.function.arguments or "{}") for r in reference]
    assert [json.loads(text or "{}") for text in texts] == [c.args for c in ours]


def anthropic_stream(texts: list[str], order: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """Anthropic streams one block at a time: the fragments of each call in turn."""
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    for i in range(len(texts)):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": f"tool{i}", "input": {}}
        events.append({"type": "content_block_start", "index": i, "content_block": block})
        for _, text in (entry for entry in order if entry[0] == i):
            delta = {"type": "input_json_delta", "partial_json": text}
            events.append({"type": "content_block_delta", "index": i, "delta": delta})
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {
            "type": "message_delta",
            "usage": {"output_tokens": 9},
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        }
    )
    events.append({"type": "message_stop"})
    return events


@given(parallel_calls())
def test_anthropic_final_input_equals_the_sdk_accumulation(
    drawn: tuple[list[str], list[tuple[int, str]]],
) -> None:
    texts, order = drawn
    events = anthropic_stream(texts, order)
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    assert snapshot is not None
    ours = track(AnthropicAdapter(), events).list()
    assert [(c.id, c.name, c.args) for c in ours] == [
        (block.id, block.name, block.input) for block in snapshot.content
    ]
