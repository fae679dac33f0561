"""RayRunner against bare Ray and against the local runner, measured in one run.

1. Overhead per call: one trivial call at a time (the latency a call pays), through
   ``ToolExecutor(runner=RayRunner())`` (``register_call`` then ``wait``) against bare Ray
   doing the same work (``f.remote(...)`` of a plain remote function, then ``await``). The two
   alternate call by call, so drift hits both alike; medians are compared. Target <= 1.3x.
2. Throughput on a CPU-bound tool (pure Python, holds the GIL): a batch of calls registered at
   once and joined, with the local runner (threads in this process: one GIL, so about one core)
   and with RayRunner on a local cluster of 2 and then 4 worker CPUs. Target: 2 workers
   >= 1.7x the local runner. The same batch on 2 plain processes (a process pool, no Ray) is
   the reference for what parallelism the machine offers during the run.

The machine's load average is printed before and after: on a shared machine it says how much of
the cores the run really had. Run: ``python benchmarks/bench_ray.py`` (``--quick`` for a smoke
run). Needs the ``ray`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import multiprocessing
import os
import statistics
import time
from typing import Any

import ray

from toolcalls import ToolExecutor
from toolcalls.ray import RayRunner


def echo(i: int) -> int:
    """The trivial tool."""
    return i


def burn(n: int) -> int:
    """The CPU-bound tool: pure Python arithmetic, holding the GIL throughout."""
    total = 0
    for k in range(n):
        total += k * k % 7
    return total


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


async def overhead(calls: int) -> tuple[float, float]:
    """Median seconds per call: (bare Ray, RayRunner through the executor)."""
    bare = ray.remote(max_retries=0)(echo)
    bare_times: list[float] = []
    runner_times: list[float] = []
    runner = RayRunner()
    async with ToolExecutor({"echo": echo}, runner=runner) as executor:
        for i in range(10):  # warm both paths: worker processes, imports, caches
            await bare.remote(i)
            executor.register_call({"toolCallId": f"w{i}", "toolName": "echo", "args": {"i": i}})
            await executor.wait(f"w{i}")
        for i in range(calls):
            start = time.perf_counter()
            assert await bare.remote(i) == i
            bare_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            executor.register_call({"toolCallId": f"c{i}", "toolName": "echo", "args": {"i": i}})
            state = await executor.wait(f"c{i}")
            runner_times.append(time.perf_counter() - start)
            assert state.result == i, state
            executor.forget(f"c{i}")
    runner.close()
    return statistics.median(bare_times), statistics.median(runner_times)


async def throughput(runner: Any, calls: int, n: int) -> float:
    """Calls per second for a batch of CPU-bound calls run at once."""
    kwargs: dict[str, Any] = {} if runner is None else {"runner": runner}
    async with ToolExecutor({"burn": burn}, max_history=calls * 2, **kwargs) as executor:
        for i in range(4):  # warm the workers
            executor.register_call({"toolCallId": f"w{i}", "toolName": "burn", "args": {"n": 1}})
        await executor.join()
        start = time.perf_counter()
        for i in range(calls):
            executor.register_call({"toolCallId": f"c{i}", "toolName": "burn", "args": {"n": n}})
        await executor.join()
        elapsed = time.perf_counter() - start
        failed = [c for c in executor.calls if c.status != "success"]
        assert not failed, failed[:1]
    return calls / elapsed


def processes(workers: int, calls: int, n: int) -> float:
    """Calls per second for the same batch on plain worker processes (no Ray, no executor):
    how much parallelism the machine offers right now."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        list(pool.map(burn, [1] * workers))
        start = time.perf_counter()
        list(pool.map(burn, [n] * calls))
        return calls / (time.perf_counter() - start)


def on_cluster(cpus: int, calls: int, n: int) -> float:
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    try:
        runner = RayRunner()
        rate = asyncio.run(throughput(runner, calls, n))
        runner.close()
        return rate
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few, short calls")
    quick = parser.parse_args().quick
    sequential = 20 if quick else 300
    batch, n = (8, 20_000) if quick else (24, 1_500_000)

    print(f"bench_ray.py{' --quick' if quick else ''}: {load()} at the start")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        bare, through = asyncio.run(overhead(sequential))
    finally:
        ray.shutdown()
    local = asyncio.run(throughput(None, batch, n))
    plain = processes(2, batch, n)
    two = on_cluster(2, batch, n)
    four = on_cluster(4, batch, n)

    print()
    print(f"1. overhead per call, one call at a time, median of {sequential}")
    print(f"   {'bare Ray (f.remote + await)':<40} {bare * 1e6:9.0f} us   1.00x")
    ratio = through / bare
    print(
        f"   {'RayRunner through ToolExecutor':<40} {through * 1e6:9.0f} us   {ratio:.2f}x"
        f"   target <= 1.3x: {'met' if ratio <= 1.3 else 'NOT met'}"
    )
    print()
    print(f"2. throughput, {batch} CPU-bound calls at once (pure Python, {n:,} steps each)")
    print(f"   {'local runner (threads, one GIL)':<40} {local:9.2f} calls/s   1.00x")
    print(
        f"   {'RayRunner, 2 workers':<40} {two:9.2f} calls/s   {two / local:.2f}x"
        f"   target >= 1.7x: {'met' if two / local >= 1.7 else 'NOT met'}"
    )
    print(f"   {'RayRunner, 4 workers':<40} {four:9.2f} calls/s   {four / local:.2f}x")
    print(
        f"   {'2 plain processes (no Ray): the ceiling':<40} {plain:9.2f} calls/s"
        f"   {plain / local:.2f}x   (what 2 workers can reach on this machine now)"
    )
    print()
    print(f"{load()} at the end")


if __name__ == "__main__":
    main()
