"""ToolCallSession end to end against a hand-written asyncio loop doing the same work, in one run.

The workload: 1,000 calls, each streamed as ``start``, 20 argument deltas and ``ready``, to a
trivial ``async def`` tool; every result is collected. The hand-written loop keeps a dict per
call, joins the fragments and ``json.loads`` them on ``ready``, ``create_task``-s the tool and
``gather``-s the results. The session runs the same stream through each way of feeding it:

- ``apply()`` per event, then ``finish()`` and ``settled()``;
- ``run(list)``;
- ``run(async generator)`` (a generator that never awaits anything); its reference is the
  hand-written loop reading the same generator (``async for`` costs either side alike);
- streaming: events arrive from an ``asyncio.Queue`` fed by a producer task (a bounded queue,
  so both sides really await); its reference is the hand-written loop reading the same queue.

Each time is the median of several repeats on a fresh event loop, the paths interleaved so
drift hits all alike; ratios are against the reference of this same run that reads the same
source, and, in the last column, against the hand-written loop over a list. Target: every
path <= 2.5x its reference. Run: ``python benchmarks/bench_session.py`` (``--quick`` for a
smoke run).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from toolcalls import AbortSignal, ToolCallSession

Event = dict[str, Any]
Path = Callable[[list[Event]], Coroutine[Any, Any, float]]
TARGET = 2.5
QUEUE_SIZE = 64


async def tool(args: dict[str, Any], signal: AbortSignal) -> Any:
    """The trivial ``async def`` tool: returns one of its arguments."""
    return args["i"]


def stream(calls: int, deltas: int) -> list[Event]:
    """Each call in turn: start, its arguments in ``deltas`` fragments, ready."""
    events: list[Event] = []
    for index in range(calls):
        call_id = f"call_{index}"
        text = json.dumps({"query": "abcd" * (deltas * 2), "i": index})
        size = -(-len(text) // deltas)
        events.append({"type": "start", "id": call_id, "name": "tool"})
        events.extend(
            {"type": "delta", "id": call_id, "argsTextDelta": text[at : at + size]}
            for at in range(0, len(text), size)
        )
        events.append({"type": "ready", "id": call_id})
    return events


# -- the hand-written references ---------------------------------------------------------------


async def _hand(events: Any, is_async: bool) -> list[Any]:
    calls: dict[str, dict[str, Any]] = {}
    tasks: list[asyncio.Task[Any]] = []
    tools = {"tool": tool}
    signal = AbortSignal()

    def handle(event: Event) -> None:
        kind = event["type"]
        if kind == "delta":
            calls[event["id"]]["parts"].append(event["argsTextDelta"])
        elif kind == "start":
            calls[event["id"]] = {"name": event["name"], "parts": []}
        elif kind == "ready":
            call = calls[event["id"]]
            args = json.loads("".join(call["parts"]))
            tasks.append(asyncio.create_task(tools[call["name"]](args, signal)))

    if is_async:
        async for event in events:
            handle(event)
    else:
        for event in events:
            handle(event)
    return await asyncio.gather(*tasks)


async def _hand_timed(events: list[Event], source: Any, is_async: bool) -> float:
    """The hand-written loop over ``source`` (the events, as a list or read from an async
    source), timed, its results checked."""
    begin = time.perf_counter()
    results = await _hand(source, is_async)
    elapsed = time.perf_counter() - begin
    assert len(results) == _calls(events)
    return elapsed


async def hand_list(events: list[Event]) -> float:
    return await _hand_timed(events, events, False)


async def hand_generator(events: list[Event]) -> float:
    return await _hand_timed(events, _generate(events), True)


async def hand_queue(events: list[Event]) -> float:
    return await _hand_timed(events, _from_queue(events), True)


# -- the session ---------------------------------------------------------------------------------


def _session() -> ToolCallSession:
    return ToolCallSession({"tool": tool}, max_history=100_000)


async def session_apply(events: list[Event]) -> float:
    async with _session() as session:
        begin = time.perf_counter()
        for event in events:
            session.apply(event)
        session.finish()
        settled = [state async for state in session.settled()]
        elapsed = time.perf_counter() - begin
    _check(settled, events)
    return elapsed


async def session_run_list(events: list[Event]) -> float:
    async with _session() as session:
        begin = time.perf_counter()
        settled = [state async for state in session.run(events)]
        elapsed = time.perf_counter() - begin
    _check(settled, events)
    return elapsed


async def _generate(events: list[Event]) -> AsyncIterator[Event]:
    for event in events:
        yield event


async def session_run_generator(events: list[Event]) -> float:
    async with _session() as session:
        begin = time.perf_counter()
        settled = [state async for state in session.run(_generate(events))]
        elapsed = time.perf_counter() - begin
    _check(settled, events)
    return elapsed


async def session_queue(events: list[Event]) -> float:
    async with _session() as session:
        begin = time.perf_counter()
        settled = [state async for state in session.run(_from_queue(events))]
        elapsed = time.perf_counter() - begin
    _check(settled, events)
    return elapsed


async def _from_queue(events: list[Event]) -> AsyncIterator[Event]:
    """The events as a provider's stream: a producer task feeds a bounded queue."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue(QUEUE_SIZE)

    async def produce() -> None:
        for event in events:
            await queue.put(event)
        await queue.put(None)

    producer = asyncio.create_task(produce())
    while (event := await queue.get()) is not None:
        yield event
    await producer


def _calls(events: list[Event]) -> int:
    return sum(1 for event in events if event["type"] == "start")


def _check(settled: list[Any], events: list[Event]) -> None:
    assert len(settled) == _calls(events)
    assert all(state.status == "success" for state in settled)


# -- measurement ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    name: str
    path: Path
    reference: str | None  # the row it is compared with (None: it is a reference)


ROWS = [
    Row("hand-written loop (list)", hand_list, None),
    Row("session.apply() + settled()", session_apply, "hand-written loop (list)"),
    Row("session.run(list)", session_run_list, "hand-written loop (list)"),
    Row("hand-written loop (async gen)", hand_generator, None),
    Row("session.run(async generator)", session_run_generator, "hand-written loop (async gen)"),
    Row("hand-written loop (queue)", hand_queue, None),
    Row("session.run(queue)", session_queue, "hand-written loop (queue)"),
]


def measure(events: list[Event], repeats: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {row.name: [] for row in ROWS}
    for repeat in range(repeats):
        for row in ROWS if repeat % 2 == 0 else ROWS[::-1]:
            gc.collect()
            samples[row.name].append(asyncio.run(row.path(events)))
    return {name: statistics.median(times) for name, times in samples.items()}


def report(medians: dict[str, float], calls: int, deltas: int, repeats: int) -> str:
    header = f"{'path':<30} {'time ms':>9} {'ratio':>7} {'target':>7}  {'verdict':<9} vs list"
    lines = [
        f"{calls:,} calls x {deltas} deltas, a trivial async tool; medians of {repeats} runs",
        header,
        "-" * len(header),
    ]
    plain = medians[ROWS[0].name]
    for row in ROWS:
        time_ms = medians[row.name] * 1e3
        to_list = f"{medians[row.name] / plain:>6.2f}x"
        if row.reference is None:
            name, ratio = row.name, "1.00x"
            lines.append(f"{name:<30} {time_ms:>9.1f} {ratio:>7} {'':>7}  reference {to_list}")
            continue
        ratio_value = medians[row.name] / medians[row.reference]
        verdict = "met" if ratio_value <= TARGET else "MISSED"
        lines.append(
            f"{row.name:<30} {time_ms:>9.1f} {ratio_value:>6.2f}x {TARGET:>6.1f}x  "
            f"{verdict:<9} {to_list}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few calls and runs (smoke run)")
    args = parser.parse_args(argv)
    calls, deltas, repeats = (100, 20, 3) if args.quick else (1_000, 20, 7)
    events = stream(calls, deltas)
    print(f"Python {sys.version.split()[0]}; {len(events):,} events")
    print(report(measure(events, repeats), calls, deltas, repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
