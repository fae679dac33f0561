"""ToolExecutor overhead per call against bare asyncio doing the same work, measured in one run.

Two cases, each 10,000 trivial tool calls registered at once and waited for:

- ``async def`` tools: the executor (``register_call`` for each chunk, then ``join()``) against
  ``asyncio.create_task`` of the same coroutines and one ``gather``;
- plain ``def`` tools: the executor (worker threads) against ``asyncio.to_thread`` of the same
  function for each call and one ``gather``.

Each time is the median of several repeats on a fresh event loop, the cases interleaved so
drift hits all alike; ratios are against the baseline of this same run. Targets: async <= 2x,
sync <= 1.5x. Run: ``python benchmarks/bench_executor.py`` (``--quick`` for a smoke run;
``--no-gc`` pauses the cyclic collector while timing: each waiting call holds more than a bare
task, its record (which is also its chart instance) and its own copy of the arguments, and
with 10,000 at once a few objects more per call can set off a full collection the baseline
escapes, so the two figures tell that cost apart).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from toolcalls import AbortSignal, ToolExecutor

Args = dict[str, Any]
Scenario = Callable[[list[Args]], Coroutine[Any, Any, float]]


async def async_tool(args: Args, signal: AbortSignal) -> Any:
    """The trivial ``async def`` tool: returns one of its arguments."""
    return args["i"]


def sync_tool(args: Args, signal: AbortSignal) -> Any:
    """The trivial plain tool: returns one of its arguments."""
    return args["i"]


async def bare_tasks(calls: list[Args]) -> float:
    signal = AbortSignal()
    start = time.perf_counter()
    await asyncio.gather(*[asyncio.create_task(async_tool(args, signal)) for args in calls])
    return time.perf_counter() - start


async def bare_threads(calls: list[Args]) -> float:
    signal = AbortSignal()
    start = time.perf_counter()
    await asyncio.gather(*[asyncio.to_thread(sync_tool, args, signal) for args in calls])
    return time.perf_counter() - start


def executor_run(tool: Callable[..., Any]) -> Scenario:
    async def run(calls: list[Args]) -> float:
        chunks = [
            {"toolCallId": f"call-{args['i']}", "toolName": "tool", "args": args} for args in calls
        ]
        async with ToolExecutor({"tool": tool}) as executor:
            start = time.perf_counter()
            for chunk in chunks:
                executor.register_call(chunk)
            await executor.join()
            elapsed = time.perf_counter() - start
        return elapsed

    return run


@dataclass(frozen=True)
class Case:
    name: str
    baseline_name: str
    baseline: Scenario
    executor: Scenario
    target: float


CASES = [
    Case("async def tools", "create_task + gather", bare_tasks, executor_run(async_tool), 2.0),
    Case("plain def tools", "to_thread + gather", bare_threads, executor_run(sync_tool), 1.5),
]


@dataclass(frozen=True)
class Row:
    case: Case
    baseline_us: float
    executor_us: float

    @property
    def ratio(self) -> float:
        return self.executor_us / self.baseline_us


def timed(scenario: Scenario, calls: list[Args], collector: bool = True) -> float:
    gc.collect()
    if collector:
        return asyncio.run(scenario(calls))
    gc.disable()
    try:
        return asyncio.run(scenario(calls))
    finally:
        gc.enable()


def measure(number: int, repeats: int, collector: bool = True) -> list[Row]:
    calls = [{"i": i} for i in range(number)]
    samples: dict[str, list[float]] = {}
    for repeat in range(repeats):
        for case in CASES:
            pair = [("baseline", case.baseline), ("executor", case.executor)]
            for side, scenario in pair if repeat % 2 == 0 else pair[::-1]:
                key = f"{case.name}/{side}"
                elapsed = timed(scenario, calls, collector)
                samples.setdefault(key, []).append(elapsed / number * 1e6)
    return [
        Row(
            case,
            statistics.median(samples[f"{case.name}/baseline"]),
            statistics.median(samples[f"{case.name}/executor"]),
        )
        for case in CASES
    ]


def report(rows: list[Row], number: int, repeats: int) -> str:
    header = (
        f"{'case':<17} {'baseline':<21} {'baseline us':>12} {'executor us':>12}"
        f" {'overhead us':>12} {'ratio':>7} {'target':>7}  verdict"
    )
    lines = [f"{number:,} calls registered at once; medians of {repeats} runs", header]
    lines.append("-" * len(header))
    for row in rows:
        verdict = "met" if row.ratio <= row.case.target else "MISSED"
        lines.append(
            f"{row.case.name:<17} {row.case.baseline_name:<21} {row.baseline_us:>12.2f}"
            f" {row.executor_us:>12.2f} {row.executor_us - row.baseline_us:>12.2f}"
            f" {row.ratio:>6.2f}x {row.case.target:>6.1f}x  {verdict}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few calls and runs (smoke run)")
    parser.add_argument(
        "--no-gc",
        action="store_true",
        help="pause the cyclic garbage collector while timing (to tell what the collector "
        "costs, since the executor keeps more objects per waiting call, from the rest)",
    )
    args = parser.parse_args(argv)
    number, repeats = (1_000, 3) if args.quick else (10_000, 7)
    collector = "paused while timing" if args.no_gc else "on"
    print(f"Python {sys.version.split()[0]}; per-call times in microseconds; gc {collector}")
    print(report(measure(number, repeats, not args.no_gc), number, repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
