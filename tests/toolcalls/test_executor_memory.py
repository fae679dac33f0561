"""What a call costs in memory: a waiting call holds one object more than a bare asyncio task
(its record, which is also its chart instance), a record the executor lets go of is freed at
once by reference counting, and a raw tool's private copy of its arguments is made as it
starts, equal to the arguments as registered whoever changed what since.

Counting objects the cyclic collector tracks is what matters for speed: with thousands of calls
waiting at once, every object more per call brings the collector's full collection nearer, a
cost that bare ``create_task`` never pays (``benchmarks/bench_executor.py``)."""

# Rules checked here (docs/spec.md): X11 and X19 (an evicted or forgotten call is let go of),
# X13 (reset), X21 (no shared arguments).

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from toolcalls import AbortSignal, ToolExecutor
from toolcalls._execution import ExecutionModel
from toolcalls._runner import LocalRunner
from toolcalls._tools import PreparedTool

from .executor_support import Gates, chunk, run_async

CALLS = 200


async def echo(args: dict[str, Any], signal: AbortSignal) -> Any:
    return args["i"]


@pytest.fixture
def collector_paused() -> Iterator[None]:
    """Keep the cyclic collector from running, so only reference counting frees objects (and
    what it cannot free stays countable)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def tracked() -> int:
    """How many objects the cyclic collector tracks now (garbage collected first)."""
    gc.collect()
    return len(gc.get_objects())


def records() -> int:
    """How many call records exist, reachable or not (while the collector does not run)."""
    return sum(1 for thing in gc.get_objects() if type(thing) is ExecutionModel)


@run_async
async def test_a_waiting_call_holds_one_tracked_object_more_than_a_bare_task() -> None:
    signal = AbortSignal()
    arguments = [{"i": i} for i in range(CALLS)]
    before = tracked()
    tasks = [asyncio.create_task(echo(args, signal)) for args in arguments]
    bare = tracked() - before
    await asyncio.gather(*tasks)
    del tasks

    chunks = [chunk(f"call-{i}", "echo", i=i) for i in range(CALLS)]
    async with ToolExecutor({"echo": echo}, max_history=CALLS) as executor:
        executor.register_call(chunk("warm-up", "echo", i=-1))  # one-off objects made first
        await executor.join()
        before = tracked()
        for item in chunks:
            executor.register_call(item)
        waiting = tracked() - before
        assert executor.in_flight == CALLS
        await executor.join()
    assert waiting <= bare + CALLS, (waiting / CALLS, bare / CALLS)


def allocated() -> int:
    """The collector's count of objects allocated (less those freed) since it last ran: tracked
    or not (an arguments dict of plain values is untracked, yet counts towards a collection)."""
    return gc.get_count()[0]


@run_async
async def test_registering_a_call_allocates_about_one_collector_object_more_than_a_bare_task(
    collector_paused: None,
) -> None:
    signal = AbortSignal()
    arguments = [{"i": i} for i in range(CALLS)]
    before = allocated()
    tasks = [asyncio.create_task(echo(args, signal)) for args in arguments]
    bare = allocated() - before
    await asyncio.gather(*tasks)
    del tasks

    chunks = [chunk(f"call-{i}", "echo", i=i) for i in range(CALLS)]
    async with ToolExecutor({"echo": echo}, max_history=CALLS) as executor:
        executor.register_call(chunk("warm-up", "echo", i=-1))
        await executor.join()
        before = allocated()
        for item in chunks:
            executor.register_call(item)
        registered = allocated() - before
        await executor.join()
    # The record; the call's own copy of the arguments takes a dict freed meanwhile from
    # CPython's free list, and a raw tool's copy is made as the tool starts. A second object
    # per call (a copy made at registration, a separate chart instance) is caught here.
    assert registered < bare + CALLS * 3 // 2, (registered / CALLS, bare / CALLS)


@run_async
async def test_an_evicted_call_is_freed_at_once_without_the_cycle_collector(
    collector_paused: None,
) -> None:
    before = records()
    async with ToolExecutor({"echo": echo}, max_history=3) as executor:
        for i in range(20):
            executor.register_call(chunk(f"call-{i}", "echo", i=i))
        await executor.join()
        assert [call.tool_call_id for call in executor.calls] == ["call-17", "call-18", "call-19"]
        assert records() - before == 3


@run_async
async def test_a_forgotten_or_reset_call_is_freed_at_once_without_the_cycle_collector(
    collector_paused: None,
) -> None:
    before = records()
    async with ToolExecutor({"echo": echo}) as executor:
        for i in range(3):
            executor.register_call(chunk(f"call-{i}", "echo", i=i))
        await executor.join()
        assert executor.forget("call-0")
        assert records() - before == 2
        executor.reset()
        assert records() - before == 0


@run_async
async def test_a_raw_tool_that_waited_for_a_slot_gets_its_own_copy_of_the_arguments() -> None:
    gates = Gates()
    seen: list[dict[str, Any]] = []

    async def mutate(args: dict[str, Any]) -> None:
        seen.append(dict(args))
        args["query"] = "changed by the tool"

    async with ToolExecutor({"gate": gates.tool, "mutate": mutate}, max_concurrency=1) as ex:
        ex.register_call(chunk("first", "gate", key="first"))
        sent = {"query": "as registered", "limit": 3}
        ex.register_call({"toolCallId": "queued", "toolName": "mutate", "args": sent})
        sent["query"] = "changed by the caller"
        await asyncio.sleep(0)
        assert ex.get_call("queued").status == "pending"  # type: ignore[union-attr]
        gates.open("first")
        await ex.join()
    assert seen == [{"query": "as registered", "limit": 3}]
    assert dict(ex.get_call("queued").args) == {"query": "as registered", "limit": 3}  # type: ignore[union-attr]


class Recording(LocalRunner):
    """The local runner, noting what each call hands it."""

    __slots__ = ("handed",)

    def __init__(self) -> None:
        self.handed: list[tuple[Mapping[str, Any], Any]] = []

    async def run(
        self, tool: PreparedTool, args: Mapping[str, Any], bound: Any, signal: AbortSignal
    ) -> Any:
        self.handed.append((args, bound))
        return await super().run(tool, args, bound, signal)


@run_async
async def test_a_runner_gets_a_raw_tools_private_copy_apart_from_the_calls_arguments() -> None:
    async def mutate(args: dict[str, Any]) -> Any:
        args["i"] = "changed"
        return args

    runner = Recording()
    async with ToolExecutor({"mutate": mutate}, runner=runner) as ex:
        ex.register_call(chunk("c1", "mutate", i=1))
        result = (await ex.wait("c1")).result
    [(args, bound)] = runner.handed
    assert bound is not args
    assert dict(args) == {"i": 1}
    assert bound == result == {"i": "changed"}
    assert dict(ex.get_call("c1").args) == {"i": 1}  # type: ignore[union-attr]
