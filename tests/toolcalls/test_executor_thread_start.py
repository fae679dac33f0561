"""A plain ``def`` tool starts when a worker thread is free, and its timeout counts from then.

The local runner hands such a tool to the loop's default thread pool. While every worker is
busy the call waits there; X15 counts a timeout from the start of execution, so the wait does
not count, and a call aborted or timed out before a thread takes it never starts its tool.
Each test gives the loop a pool of one worker, so which call waits is certain.
"""

# Rules checked here (docs/spec.md): X15, X16, X17.

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from toolcalls import ExecutionView, Tool, ToolExecutor

from .executor_support import chunk, run_async


def _one_worker() -> ThreadPoolExecutor:
    pool = ThreadPoolExecutor(max_workers=1)
    asyncio.get_running_loop().set_default_executor(pool)
    return pool


async def _settled(executor: ToolExecutor, call_id: str, limit: float = 5.0) -> ExecutionView:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        state = executor.get_call(call_id)
        if state is not None and state.settled:
            return state
        await asyncio.sleep(0.005)
    raise AssertionError(f"{call_id} did not settle within {limit} s")


class _Hold:
    """A plain tool that keeps its worker thread until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()

    def __call__(self, args: dict[str, Any]) -> str:
        self.started.set()
        self.release.wait(5.0)
        return "held"


@run_async
async def test_a_thread_tool_waiting_for_a_worker_does_not_spend_its_timeout_waiting() -> None:
    _one_worker()
    hold = _Hold()

    def quick(args: dict[str, Any]) -> str:
        time.sleep(0.05)  # well within its timeout once it runs
        return "quick"

    tools: dict[str, Any] = {"hold": hold, "quick": Tool(quick, timeout=0.5)}
    async with ToolExecutor(tools) as executor:
        executor.register_call(chunk("h", "hold"))
        executor.register_call(chunk("q", "quick"))
        await asyncio.sleep(1.0)  # twice the timeout, spent waiting for the worker
        hold.release.set()
        state = await _settled(executor, "q")
    assert (state.status, state.result) == ("success", "quick")


@run_async
async def test_a_thread_tool_that_runs_past_its_timeout_times_out_from_its_start() -> None:
    _one_worker()
    hold = _Hold()
    stop = threading.Event()

    def slow(args: dict[str, Any]) -> str:
        stop.wait(5.0)
        return "late"

    tools: dict[str, Any] = {"hold": hold, "slow": Tool(slow, timeout=0.1)}
    async with ToolExecutor(tools) as executor:
        executor.register_call(chunk("h", "hold"))
        executor.register_call(chunk("s", "slow"))
        await asyncio.sleep(0.2)
        assert executor.get_call("s").status == "executing"  # type: ignore[union-attr]
        begun = time.monotonic()
        hold.release.set()
        state = await _settled(executor, "s")
        waited = time.monotonic() - begun
        stop.set()
    assert state.status == "error"
    assert state.error is not None
    assert state.error.kind == "timeout"
    assert waited >= 0.09  # counted from the start, not from registration (0.2 s before)


@run_async
async def test_a_thread_tool_aborted_while_waiting_for_a_worker_never_runs() -> None:
    _one_worker()
    hold = _Hold()
    ran: list[str] = []

    def victim(args: dict[str, Any]) -> str:
        ran.append("victim")
        return "ran"

    async with ToolExecutor({"hold": hold, "victim": victim}) as executor:
        executor.register_call(chunk("h", "hold"))
        executor.register_call(chunk("v", "victim"))
        await asyncio.sleep(0.05)
        assert hold.started.is_set()
        assert executor.abort("v", "not needed")
        hold.release.set()
        await _settled(executor, "h")
        await asyncio.sleep(0.05)  # the worker is free: the victim's job has been taken
        state = executor.get_call("v")
    assert ran == []
    assert state is not None
    assert state.status == "error"
    assert state.error is not None
    assert state.error.kind == "aborted"


@run_async
async def test_a_thread_tool_does_not_time_out_while_it_waits_for_a_worker() -> None:
    """The timeout is not armed before a thread starts the tool: however long it waits, a
    waiting call is still executing, and it runs once the worker is free."""
    _one_worker()
    hold = _Hold()
    tools: dict[str, Any] = {"hold": hold, "quick": Tool(lambda args: "quick", timeout=0.05)}
    async with ToolExecutor(tools) as executor:
        executor.register_call(chunk("h", "hold"))
        executor.register_call(chunk("q", "quick"))
        await asyncio.sleep(0.2)
        assert executor.get_call("q").status == "executing"  # type: ignore[union-attr]
        hold.release.set()
        state = await _settled(executor, "q")
    assert (state.status, state.result) == ("success", "quick")


@run_async
async def test_a_thread_tool_that_returns_quickly_leaves_no_timeout_behind() -> None:
    tools: dict[str, Any] = {"quick": Tool(lambda args: "quick", timeout=0.05)}
    async with ToolExecutor(tools) as executor:
        executor.register_call(chunk("q", "quick"))
        state = await _settled(executor, "q")
        await asyncio.sleep(0.15)  # past the timeout: nothing fires on the settled call
        assert executor.get_call("q") == state
        call = executor._book.calls["q"]
        assert call.timer is None
    assert (state.status, state.result) == ("success", "quick")
