"""Ways a call could be lost, run twice or escape the executor, each reproduced and closed.

A tool cannot end the host (``sys.exit`` in a tool is data); an ``async`` ``on_call_settled``
without a loop fails before anything changes; a queued call is not lost when the loop ends
without ``aclose()``; an ``AbortSignal`` callback added while another thread aborts still runs.
"""

# Rules checked here (docs/spec.md): X9, X10, X20.

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
from typing import Any

import pytest

from toolcalls import AbortSignal, ExecutionView, ToolError, ToolExecutor

from .executor_support import Recorder, chunk, run_async


class Fatal(BaseException):
    """A tool's own ``BaseException`` that is not an ``Exception``."""


# -- a tool cannot end the host ----------------------------------------------------------------


def exits(args: dict[str, Any]) -> None:
    sys.exit(3)


async def exits_async(args: dict[str, Any]) -> None:
    sys.exit(4)


def raises_fatal(args: dict[str, Any]) -> None:
    raise Fatal("custom")


def test_a_tool_calling_sys_exit_ends_in_error_and_the_host_runs_on() -> None:
    async def main() -> list[ExecutionView]:
        tools = {"exits": exits, "exits_async": exits_async, "fatal": raises_fatal}
        async with ToolExecutor(tools) as executor:
            for name in tools:
                executor.register_call(chunk(name, name))
            await executor.join()
            return executor.calls

    calls = asyncio.run(main())  # would raise SystemExit if a tool's exit escaped
    assert [(c.tool_call_id, c.status) for c in calls] == [
        ("exits", "error"),
        ("exits_async", "error"),
        ("fatal", "error"),
    ]
    errors = [c.error for c in calls]
    assert errors == [
        ToolError.tool_raised("exits", SystemExit(3)),
        ToolError.tool_raised("exits_async", SystemExit(4)),
        ToolError.tool_raised("fatal", Fatal("custom")),
    ]
    assert errors[0] is not None
    assert errors[0].details["exception_type"] == "SystemExit"
    assert isinstance(errors[0].exception, SystemExit)


def test_keyboard_interrupt_in_an_async_tool_settles_its_call_and_still_interrupts() -> None:
    async def interrupted(args: dict[str, Any]) -> None:
        raise KeyboardInterrupt

    recorder = Recorder()
    executor = ToolExecutor({"tool": interrupted}, on_call_settled=recorder)

    async def main() -> None:
        async with executor:
            executor.register_call(chunk("c1", "tool"))
            await executor.join()

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    assert [(s.tool_call_id, s.status) for s in recorder.settled] == [("c1", "error")]
    assert recorder.settled[0].error == ToolError.tool_raised("tool", KeyboardInterrupt())


def test_keyboard_interrupt_passed_on_by_the_executor_is_not_logged_as_never_retrieved(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The interrupt reached the host (asyncio.run raised it): the tool's task must not also
    # be reported later, at whichever moment the garbage collector finds it, as an error
    # "Task exception was never retrieved".
    async def interrupted(args: dict[str, Any]) -> None:
        raise KeyboardInterrupt

    async def main() -> None:
        async with ToolExecutor({"tool": interrupted}) as executor:
            executor.register_call(chunk("c1", "tool"))
            await executor.join()

    gc.collect()  # another test's garbage is reported now, outside the window below
    caplog.clear()
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    gc.collect()
    assert "never retrieved" not in caplog.text
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


@run_async
async def test_keyboard_interrupt_raised_by_a_plain_tool_in_its_thread_is_data() -> None:
    def interrupted(args: dict[str, Any]) -> None:
        raise KeyboardInterrupt

    async with ToolExecutor({"tool": interrupted}) as executor:
        executor.register_call(chunk("c1", "tool"))
        settled = await executor.wait("c1")
    assert settled.error == ToolError.tool_raised("tool", KeyboardInterrupt())


# -- an async on_call_settled needs a loop -----------------------------------------------------


def test_async_callback_without_a_running_loop_fails_before_anything_changes() -> None:
    seen: list[ExecutionView] = []

    async def on_settled(state: ExecutionView) -> None:
        seen.append(state)

    executor = ToolExecutor({}, on_call_settled=on_settled)
    with pytest.raises(RuntimeError, match="needs an event loop"):
        executor.register_call(chunk("c1", "missing"))
    assert executor.calls == []

    async def main() -> bool:
        registered = executor.register_call(chunk("c1", "missing"))
        await executor.aclose()  # waits for the callback task
        return registered

    assert asyncio.run(main()) is True
    assert [(s.tool_call_id, s.status) for s in seen] == [("c1", "error")]


def test_plain_callback_returning_an_awaitable_off_the_loop_is_a_callback_failure() -> None:
    async def later(state: ExecutionView) -> None:
        raise AssertionError("never awaited")

    executor = ToolExecutor({}, on_call_settled=lambda state: later(state))
    assert executor.register_call(chunk("c1", "missing")) is True
    assert [c.status for c in executor.calls] == ["error"]
    [failure] = executor.callback_errors
    assert failure.call.tool_call_id == "c1"
    assert isinstance(failure.exception, RuntimeError)
    assert "needs an event loop" in str(failure.exception)


# -- the loop ends without aclose() ------------------------------------------------------------


def test_a_queued_call_is_not_lost_when_the_loop_ends_without_aclose(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started: list[str] = []

    async def hangs(args: dict[str, Any]) -> None:
        started.append(args["key"])
        await asyncio.Event().wait()

    recorder = Recorder()
    executor = ToolExecutor({"hangs": hangs}, on_call_settled=recorder, max_concurrency=1)

    async def main() -> None:
        executor.register_call(chunk("c1", "hangs", key="first"))
        executor.register_call(chunk("c2", "hangs", key="queued"))
        await asyncio.sleep(0)  # c1 runs; c2 waits for the slot; then the loop ends

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(main())
    assert started == ["first"]
    assert [(c.tool_call_id, c.status) for c in executor.calls] == [
        ("c1", "error"),
        ("c2", "error"),
    ]
    assert [c.error for c in executor.calls] == [
        ToolError.aborted("hangs", "cancelled"),
        ToolError.aborted("hangs", "cancelled"),
    ]
    assert recorder.ids == ["c1", "c2"]
    assert executor.in_flight == 0
    assert "destroyed but it is pending" not in caplog.text


def test_a_loop_ending_without_aclose_aborts_the_signals_of_running_tools() -> None:
    """The tools hear it too (a plain tool in its thread cannot be cancelled), reason
    "cancelled", as the calls' errors say."""
    signals: dict[str, AbortSignal] = {}

    async def hangs(args: dict[str, Any], signal: AbortSignal) -> None:
        signals["async"] = signal
        await asyncio.Event().wait()

    def waits(args: dict[str, Any], signal: AbortSignal) -> None:
        signals["thread"] = signal
        signal.wait_sync(5)

    executor = ToolExecutor({"hangs": hangs, "waits": waits})

    async def main() -> None:
        executor.register_call(chunk("c1", "hangs"))
        executor.register_call(chunk("c2", "waits"))
        while len(signals) < 2:
            await asyncio.sleep(0.001)

    asyncio.run(main())
    assert {name: (s.aborted, s.reason) for name, s in signals.items()} == {
        "async": (True, "cancelled"),
        "thread": (True, "cancelled"),
    }
    assert [c.error for c in executor.calls] == [
        ToolError.aborted("hangs", "cancelled"),
        ToolError.aborted("waits", "cancelled"),
    ]


# -- AbortSignal and threads -------------------------------------------------------------------


class _AbortingList(list[Any]):
    """A callback list whose ``append`` lets another thread abort the signal first (for up to
    0.2 s): the interleaving that lost callbacks when the check and the append were apart."""

    def __init__(self, signal: AbortSignal) -> None:
        super().__init__()
        self.signal = signal
        self.thread: threading.Thread | None = None

    def append(self, item: Any) -> None:
        self.thread = threading.Thread(target=self.signal.abort, args=("from a thread",))
        self.thread.start()
        self.thread.join(0.2)
        super().append(item)


def test_abort_signal_callback_added_while_another_thread_aborts_runs_once() -> None:
    signal = AbortSignal()
    callbacks = _AbortingList(signal)
    signal._callbacks = callbacks
    ran: list[str | None] = []
    signal.add_callback(lambda s: ran.append(s.reason))
    assert callbacks.thread is not None
    callbacks.thread.join(5)
    assert signal.aborted
    assert ran == ["from a thread"]


def test_abort_signal_callbacks_added_from_many_threads_all_run_exactly_once() -> None:
    signal = AbortSignal()
    ran: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(9)

    def add(index: int) -> None:
        barrier.wait()
        for offset in range(50):

            def record(s: AbortSignal, n: int = index * 50 + offset) -> None:
                with lock:
                    ran.append(n)

            signal.add_callback(record)

    def abort() -> None:
        barrier.wait()
        signal.abort("race")

    threads = [threading.Thread(target=add, args=(i,)) for i in range(8)]
    threads.append(threading.Thread(target=abort))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert sorted(ran) == list(range(400))
