"""The adapters against the SDKs' own accumulators, on the same streams, measured in one run.

One tool call whose arguments (1 KB and 100 KB of JSON) stream in 4-character fragments:

(a) OpenAI Chat Completions: ``OpenAIChatAdapter`` feeding a ``ToolCallTracker``, against
    openai's ``ChatCompletionStreamState.handle_chunk``, both reading the same
    ``ChatCompletionChunk`` objects (and ours reading the chunks' JSON dicts too);
(b) Anthropic Messages: ``AnthropicAdapter`` feeding a tracker, against anthropic's
    ``accumulate_event`` (which re-parses the whole partial input on every fragment), both
    reading the same ``RawMessageStreamEvent`` objects;
(c) ``events()`` reading one stream given as a list, a synchronous generator (read ahead on a
    thread, as a blocking SDK stream is) and an async generator: ratios against the list.

Times are per chunk, medians of repeated runs; ratios are against the references measured here.
Run: ``python benchmarks/bench_adapters.py`` (``--quick``: a smoke run, 1 KB and 20 KB).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import RawMessageStreamEvent
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from pydantic import TypeAdapter

from toolcalls import ToolCallTracker
from toolcalls.adapters import AnthropicAdapter, OpenAIChatAdapter, StreamAdapter

FRAGMENT = 4


def arguments(size: int) -> str:
    """A JSON object of about ``size`` bytes, shaped like real arguments: records with
    numbers, nested lists, escapes and non-ASCII text."""
    rows: list[dict[str, Any]] = []
    args = {"table": "measurements", "rows": rows}
    while len(json.dumps(args)) < size:
        n = len(rows)
        rows.append(
            {
                "id": n,
                "name": f'sensor "{n}"',
                "tags": ["a", "b"],
                "value": n / 7,
                "note": "Zürich\nline 2",
            }
        )
    return json.dumps(args)


def fragments(text: str) -> list[str]:
    return [text[i : i + FRAGMENT] for i in range(0, len(text), FRAGMENT)]


def openai_chunks(text: str) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [choice],
        }

    first = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "write", "arguments": ""},
    }
    chunks = [chunk({"role": "assistant", "tool_calls": [first]})]
    chunks += [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
        for part in fragments(text)
    ]
    chunks.append(chunk({}, "tool_calls"))
    return chunks


def anthropic_events(text: str) -> list[dict[str, Any]]:
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
    block = {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": block},
    ]
    events += [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": part},
        }
        for part in fragments(text)
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "usage": {"output_tokens": 1},
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        },
        {"type": "message_stop"},
    ]
    return events


def ours(make: Callable[[], StreamAdapter]) -> Callable[[list[Any]], Any]:
    def run(chunks: list[Any]) -> Any:
        adapter, tracker = make(), ToolCallTracker()
        apply = tracker.apply
        for chunk in chunks:
            for event in adapter.feed(chunk):
                apply(event)
        for event in adapter.finish():
            apply(event)
        return tracker.list()[0].args

    return run


def openai_reference(chunks: list[Any]) -> Any:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(chunk)
    tool_calls = state.current_completion_snapshot.choices[0].message.tool_calls
    assert tool_calls is not None
    return json.loads(tool_calls[0].function.arguments)


def anthropic_reference(events: list[Any]) -> Any:
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    assert snapshot is not None
    return snapshot.content[0].input  # type: ignore[union-attr]


def per_chunk(run: Callable[[list[Any]], Any], chunks: list[Any], repeats: int) -> float:
    """Median seconds per chunk over ``repeats`` runs of the whole stream."""
    times = []
    gc.collect()
    gc.disable()  # as timeit does: the stream's many objects make collections noise
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            run(chunks)
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return statistics.median(times) / len(chunks)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:9.2f} us"


def run(quick: bool) -> list[str]:
    lines: list[str] = []
    chunk_type: TypeAdapter[Any] = TypeAdapter(ChatCompletionChunk)
    event_type: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    for size in (1_000, 20_000 if quick else 100_000):
        text = arguments(size)
        small = size < 10_000
        repeats = (3 if quick else 15) if small else (1 if quick else 3)
        label = f"{size // 1000} KB"

        dicts = openai_chunks(text)
        objects = [chunk_type.validate_python(chunk) for chunk in dicts]
        expected = json.loads(text)
        assert ours(OpenAIChatAdapter)(objects) == openai_reference(objects) == expected
        mine = per_chunk(ours(OpenAIChatAdapter), objects, repeats)
        mine_dicts = per_chunk(ours(OpenAIChatAdapter), dicts, repeats)
        reference = per_chunk(openai_reference, objects, repeats)
        lines.append(f"(a) OpenAI Chat Completions, {label} in {len(dicts)} chunks, per chunk")
        if not small:
            # Control: as many chunks, in 1 KB streams. Many chunks outgrow the CPU caches
            # whatever the argument size; this separates that from the cost of size.
            one_kb = openai_chunks(arguments(1_000))
            streams = [openai_chunks(arguments(1_000)) for _ in range(len(dicts) // len(one_kb))]
            flat = per_chunk(
                lambda many: [ours(OpenAIChatAdapter)(c) for c in many], streams, repeats
            )
            flat *= len(streams) / sum(len(c) for c in streams)
        lines.append(f"  adapter + tracker (SDK objects)   {_us(mine)}")
        lines.append(f"  adapter + tracker (JSON dicts)    {_us(mine_dicts)}")
        lines.append(f"  ChatCompletionStreamState         {_us(reference)}")
        if not small:
            lines.append(f"  control: as many chunks in 1 KB streams (dicts) {_us(flat)}")
            lines.append(
                f"  linear in argument size: {label} costs {mine_dicts / flat:.2f}x the control"
            )
        ratio = reference / mine
        verdict = "met" if ratio >= 10 else "MISSED"
        lines.append(f"  target >= 10x faster than openai's accumulator: {ratio:.1f}x ({verdict})")

        events = anthropic_events(text)
        typed = [event_type.validate_python(event) for event in events]
        assert ours(AnthropicAdapter)(typed) == anthropic_reference(typed) == expected
        mine = per_chunk(ours(AnthropicAdapter), typed, repeats)
        reference = per_chunk(anthropic_reference, typed, repeats)
        lines.append(f"(b) Anthropic Messages, {label} in {len(events)} events, per event")
        lines.append(f"  adapter + tracker (SDK objects)   {_us(mine)}")
        lines.append(f"  accumulate_event                  {_us(reference)}")
        ratio = reference / mine
        if small:
            lines.append(f"  ratio: {ratio:.1f}x (no target at 1 KB)")
        else:
            verdict = "met" if ratio >= 50 else "MISSED"
            if quick:
                verdict = "a smoke run at 20 KB: the target is for 100 KB"
            lines.append(
                f"  target >= 50x faster than anthropic's at 100 KB: {ratio:.1f}x ({verdict})"
            )
    lines += through_events(openai_chunks(arguments(20_000 if quick else 100_000)), repeats=3)
    return lines


def through_events(chunks: list[Any], repeats: int) -> list[str]:
    """``events()`` over one stream given as a list (read inline), as a synchronous generator
    (read ahead on a thread, as a blocking SDK stream is) and as an async generator."""

    async def drain(stream: Any) -> None:
        async for _ in OpenAIChatAdapter().events(stream):
            pass

    async def agen() -> Any:
        for chunk in chunks:
            yield chunk

    def timed(make: Callable[[], Any]) -> float:
        times = []
        for _ in range(repeats):
            stream = make()
            start = time.perf_counter()
            asyncio.run(drain(stream))
            times.append(time.perf_counter() - start)
        return statistics.median(times) / len(chunks)

    as_list = timed(lambda: chunks)
    as_sync = timed(lambda: (chunk for chunk in chunks))
    as_async = timed(agen)
    return [
        f"(c) events() on one stream of {len(chunks)} chunk dicts, per chunk",
        f"  a list (read inline)                {_us(as_list)}   1.00x",
        f"  a synchronous generator (a thread)  {_us(as_sync)}   {as_sync / as_list:.2f}x",
        f"  an async generator                  {_us(as_async)}   {as_async / as_list:.2f}x",
    ]


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = parser.parse_args(None if argv is None else list(argv))
    print(f"Python {sys.version.split()[0]}; medians of repeated runs")
    print("\n".join(run(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
