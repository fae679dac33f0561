"""Rules a fourth review of issue 8 found broken: the executor used from another thread while its
loop runs, a callback raising ``CancelledError``, waiters that gave up, forgotten calls, views
kept by the user, and refused calls across a resume."""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import pickle
import time
from decimal import Decimal
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import pytest

from toolcalls import AbortSignal, ExecutionView, Tool, ToolCallSession, ToolError, ToolExecutor

from .executor_support import Gates, chunk, run_async


async def quick(args: dict[str, Any], signal: AbortSignal) -> int:
    return 1


# -- X20: another thread ------------------------------------------------------------------------


@run_async
async def test_register_call_from_another_thread_while_the_loop_runs_is_refused_unchanged() -> (
    None
):
    async with ToolExecutor({"t": quick}) as executor:

        def other_thread() -> None:
            executor.register_call(chunk("a", "t"))

        with pytest.raises(RuntimeError, match="another thread"):
            await asyncio.to_thread(other_thread)
        assert executor.calls == []
        assert executor.in_flight == 0
        assert executor.register_call(chunk("a", "t"))  # from the loop's thread it runs
        assert (await executor.wait("a")).result == 1


@run_async
async def test_a_ready_applied_from_another_thread_is_refused_and_the_call_stays_pending() -> None:
    async with ToolCallSession({"t": quick}) as session:
        session.apply({"type": "start", "id": "a", "name": "t"})
        session.apply({"type": "delta", "id": "a", "argsTextDelta": "{}"})

        def other_thread() -> None:
            session.apply({"type": "ready", "id": "a"})

        with pytest.raises(RuntimeError, match="another thread"):
            await asyncio.to_thread(other_thread)
        assert session.tracker.get("a").status == "pending"  # type: ignore[union-attr]
        session.apply({"type": "ready", "id": "a"})
        session.finish()
        assert [(s.tool_call_id, s.result) async for s in session.settled()] == [("a", 1)]


def test_register_call_outside_a_running_loop_still_queues_on_the_bound_loop() -> None:
    """Not another thread: the loop is bound but not running (between two runs of it), so the
    task waits for the loop to run again."""
    loop = asyncio.new_event_loop()
    try:
        executor = ToolExecutor({"t": quick})
        loop.run_until_complete(executor.__aenter__())
        assert executor.register_call(chunk("a", "t"))
        assert loop.run_until_complete(executor.wait("a")).result == 1
        loop.run_until_complete(executor.aclose())
    finally:
        loop.close()


# -- X10: the callback ---------------------------------------------------------------------------


@run_async
async def test_a_callback_raising_cancelled_error_is_kept_and_the_executor_goes_on() -> None:
    def callback(view: ExecutionView) -> None:
        raise asyncio.CancelledError

    async with ToolExecutor({"t": quick}, on_call_settled=callback) as executor:
        for call_id in ("a", "b"):
            executor.register_call(chunk(call_id, "t"))
        await asyncio.wait_for(executor.join(), 5)
        assert [type(f.exception) for f in executor.callback_errors] == [
            asyncio.CancelledError,
            asyncio.CancelledError,
        ]
        assert [c.status for c in executor.calls] == ["success", "success"]


@run_async
async def test_a_callback_raising_keyboard_interrupt_still_stops_the_program() -> None:
    def callback(view: ExecutionView) -> None:
        raise KeyboardInterrupt

    executor = ToolExecutor({"t": quick}, on_call_settled=callback)
    with pytest.raises(KeyboardInterrupt):
        executor.register_call(chunk("a", "missing"))  # settles at once: the callback runs
    assert executor.callback_errors == ()


# -- waiters that gave up ------------------------------------------------------------------------


@run_async
async def test_a_join_that_timed_out_leaves_no_waiter_behind() -> None:
    gates = Gates()
    async with ToolExecutor({"gate": gates.tool}) as executor:
        executor.register_call(chunk("busy", "gate", key="busy"))
        for _ in range(20):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(executor.join(), 0.001)
        assert executor._idle == []
        joining = asyncio.ensure_future(executor.join())
        await asyncio.sleep(0)
        gates.open("busy")
        await asyncio.wait_for(joining, 5)  # a joiner still waiting is woken


@run_async
async def test_a_wait_that_timed_out_leaves_no_waiter_behind() -> None:
    gates = Gates()
    async with ToolExecutor({"gate": gates.tool}) as executor:
        executor.register_call(chunk("busy", "gate", key="busy"))
        for _ in range(20):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(executor.wait("busy"), 0.001)
        assert executor._book.calls["busy"].waiters == []
        waiting = asyncio.ensure_future(executor.wait("busy"))
        await asyncio.sleep(0)
        gates.open("busy", "done")
        assert (await asyncio.wait_for(waiting, 5)).result == "done"


# -- X19: forgetting ---------------------------------------------------------------------------


@run_async
async def test_forgetting_each_settled_call_keeps_the_books_bounded() -> None:
    async with ToolExecutor({"t": quick}, max_history=50) as executor:
        for index in range(500):
            executor.register_call(chunk(f"c{index}", "t"))
            await executor.wait(f"c{index}")
            assert executor.forget(f"c{index}")
        assert executor.calls == []
        assert len(executor._book._settled) <= 32
        for index in range(60):  # eviction still finds the oldest settled call first
            executor.register_call(chunk(f"d{index}", "t"))
        await executor.join()
        assert [c.tool_call_id for c in executor.calls] == [f"d{i}" for i in range(10, 60)]


# -- X12: views kept by the user ---------------------------------------------------------------


@run_async
async def test_a_view_pickles_and_deep_copies_with_read_only_arguments() -> None:
    async def fails(args: dict[str, Any], signal: AbortSignal) -> None:
        raise ValueError("no")

    async with ToolExecutor({"t": quick, "fails": fails}) as executor:
        executor.register_call({"toolCallId": "a", "toolName": "t", "args": {"q": [1]}})
        executor.register_call({"toolCallId": "b", "toolName": "fails", "args": {}})
        views = [await executor.wait("a"), await executor.wait("b")]
    for view in views:
        for kept in (copy.deepcopy(view), pickle.loads(pickle.dumps(view))):
            assert kept == view
            assert type(kept) is ExecutionView
            assert isinstance(kept.args, MappingProxyType)
            assert kept.to_dict() == view.to_dict()
    copied = copy.deepcopy(views[0])
    assert copied.args["q"] is not views[0].args["q"]
    assert views[1].error == ToolError.tool_raised("fails", ValueError("no"))


# -- S10: refused calls across a resume --------------------------------------------------------


def _call(call_id: str, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "start", "id": call_id, "name": "echo"},
        {"type": "delta", "id": call_id, "argsTextDelta": text},
        {"type": "ready", "id": call_id},
    ]


async def _echo(x: int) -> int:
    return x


async def _reported(session: ToolCallSession, count: int) -> list[tuple[str, str]]:
    settled = session.settled()
    return [
        ((state := await asyncio.wait_for(anext(settled), 5)).tool_call_id, state.status)
        for _ in range(count)
    ]


@run_async
async def test_a_checkpoint_keeps_the_refused_calls_so_their_redelivery_is_not_reported() -> None:
    session = ToolCallSession({"echo": _echo}, max_history=1)
    for event in _call("a", '{"x": 1}'):
        session.apply(event)
    assert await _reported(session, 1) == [("a", "success")]
    session.apply({"type": "start", "id": "b", "name": "echo"})
    for event in _call("a", '{"x": 2}'):  # another call reusing a's id: refused, reported
        session.apply(event)
    assert await _reported(session, 1) == [("a", "error")]
    saved = json.loads(json.dumps(session.checkpoint()))
    await session.aclose()
    assert saved["refused"] == [{"id": "a", "name": "echo", "args": {"x": 2}}]

    resumed = ToolCallSession.resume(saved, {"echo": _echo})
    resumed.apply({"type": "start", "id": "c", "name": "echo"})
    for event in _call("a", '{"x": 2}'):
        resumed.apply(event)
    resumed.finish()  # b and c never got their arguments: they are reported in error
    reported = [(s.tool_call_id, s.status) async for s in resumed.settled()]
    assert reported == [("b", "error"), ("c", "error")]


@run_async
async def test_a_checkpoint_without_refused_calls_still_resumes() -> None:
    session = ToolCallSession({"echo": _echo})
    for event in _call("a", '{"x": 1}'):
        session.apply(event)
    await session.executor.join()  # settled, not yet reported
    saved = json.loads(json.dumps(session.checkpoint()))
    await session.aclose()
    del saved["refused"]  # as a checkpoint taken before refused calls were kept
    resumed = ToolCallSession.resume(saved, {"echo": _echo})
    resumed.finish()
    assert [(s.tool_call_id, s.status) async for s in resumed.settled()] == [("a", "success")]


# -- X15: timeouts --------------------------------------------------------------------------------


@pytest.mark.parametrize("seconds", [Decimal("0.05"), Fraction(1, 20), 1])
def test_a_timeout_of_any_real_number_is_taken_as_float_seconds(seconds: Any) -> None:
    assert Tool(quick, timeout=seconds).timeout == float(seconds)
    assert type(Tool(quick, timeout=seconds).timeout) is float


@pytest.mark.parametrize("seconds", ["1", True, complex(1, 0), Decimal("NaN"), Fraction(-1, 2)])
def test_a_timeout_that_is_not_a_positive_real_number_is_refused(seconds: Any) -> None:
    with pytest.raises(ValueError, match="timeout must be"):
        Tool(quick, timeout=seconds)


@run_async
async def test_a_decimal_timeout_ends_the_call_in_timeout() -> None:
    async def slow(args: dict[str, Any], signal: AbortSignal) -> None:
        await asyncio.sleep(5)

    tool = Tool(slow, timeout=Decimal("0.05"))  # type: ignore[arg-type]
    async with ToolExecutor({"slow": tool}) as executor:
        executor.register_call(chunk("a", "slow"))
        state = await asyncio.wait_for(executor.wait("a"), 5)
    assert (state.status, state.error.kind) == ("error", "timeout")  # type: ignore[union-attr]


@run_async
async def test_a_timeout_counts_from_when_the_tool_starts_not_from_registration() -> None:
    async def quickish(args: dict[str, Any], signal: AbortSignal) -> str:
        await asyncio.sleep(0.01)
        return "ok"

    async with ToolExecutor({"t": Tool(quickish, timeout=0.1)}) as executor:
        executor.register_call(chunk("a", "t"))
        time.sleep(0.2)  # the loop is busy: the tool has not started yet
        assert (await executor.wait("a")).status == "success"


# -- X19: a call aborted before its tool started -----------------------------------------------


@run_async
async def test_a_queued_call_aborted_while_its_start_is_carried_out_never_runs_its_tool() -> None:
    ran: list[str] = []
    executor: ToolExecutor

    async def tool(args: dict[str, Any], signal: AbortSignal) -> str:
        ran.append(args["key"])
        if args["key"] == "a":
            signal.add_callback(lambda _: executor.abort("b", "its group was aborted"))
        await asyncio.sleep(5)
        return "late"

    async with ToolExecutor({"t": tool}, max_concurrency=1) as executor:
        for key in ("a", "b"):
            executor.register_call(chunk(key, "t", key=key))
        await asyncio.sleep(0)
        assert executor.abort("a")
        await asyncio.sleep(0.01)
        assert [(c.tool_call_id, c.status) for c in executor.calls] == [
            ("a", "error"),
            ("b", "error"),
        ]
    assert ran == ["a"]


# -- X6: a signal waited on in another loop ------------------------------------------------------


@run_async
async def test_a_thread_tool_waiting_for_its_signal_on_its_own_loop_is_woken() -> None:
    def tool(args: dict[str, Any], signal: AbortSignal) -> str | None:
        async def inner() -> str | None:
            return await signal.wait()

        return asyncio.run(inner())

    async with ToolExecutor({"t": Tool(tool, timeout=0.05)}) as executor:
        executor.register_call(chunk("a", "t"))
        state = await asyncio.wait_for(executor.wait("a"), 5)
    assert state.error is not None
    assert state.error.kind == "timeout"


# -- X18 and X20: loops ------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_calls_left_executing_on_a_closed_loop_end_in_error_when_the_executor_moves_on() -> None:
    settled: list[tuple[str, str, str | None]] = []

    async def tool(args: dict[str, Any], signal: AbortSignal) -> int:
        await asyncio.sleep(0.05)
        return 1

    def record(view: ExecutionView) -> None:
        settled.append((view.tool_call_id, view.status, view.error.kind if view.error else None))

    executor = ToolExecutor({"t": tool}, max_concurrency=1, on_call_settled=record)

    async def first() -> None:
        for call_id in ("a", "queued"):
            executor.register_call(chunk(call_id, "t"))
        await asyncio.sleep(0)

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(first())
    finally:
        loop.close()

    async def second() -> str:
        executor.register_call(chunk("b", "t"))
        await asyncio.wait_for(executor.join(), 5)
        await executor.aclose()
        return (await executor.wait("b")).status

    assert asyncio.run(second()) == "success"
    assert settled == [
        ("a", "error", "aborted"),
        ("queued", "success", None),
        ("b", "success", None),
    ]
    gc.collect()  # the closed loop's task is destroyed (and logged as pending) here, not later


@run_async
async def test_a_loop_in_another_thread_is_refused_while_the_executors_loop_runs() -> None:
    async with ToolExecutor({"t": quick}) as executor:

        def worker() -> None:
            async def register() -> None:
                executor.register_call(chunk("w", "t"))

            asyncio.run(register())

        with pytest.raises(RuntimeError, match="another thread"):
            await asyncio.to_thread(worker)
        assert executor.register_call(chunk("m", "t"))
        assert (await executor.wait("m")).result == 1


# -- X21: views of nested arguments --------------------------------------------------------------


@run_async
async def test_changing_a_views_nested_arguments_changes_nothing_the_executor_holds() -> None:
    async with ToolExecutor({"t": quick}) as executor:
        executor.register_call({"toolCallId": "a", "toolName": "t", "args": {"items": [1, 2]}})
        view = await executor.wait("a")
        view.args["items"].append(3)
        assert executor.get_call("a").args == {"items": [1, 2]}  # type: ignore[union-attr]
        assert executor.calls[0].args == {"items": [1, 2]}


# -- X12: an exception that cannot be rebuilt ----------------------------------------------------


class UpstreamFailure(Exception):
    def __init__(self, code: int, detail: str) -> None:
        super().__init__(f"{code}: {detail}")


@run_async
async def test_a_view_whose_exception_cannot_be_rebuilt_copies_without_it() -> None:
    async def failing(args: dict[str, Any], signal: AbortSignal) -> None:
        raise UpstreamFailure(503, "down")

    async def raising(args: dict[str, Any], signal: AbortSignal) -> None:
        raise ValueError("no")

    async with ToolExecutor({"failing": failing, "raising": raising}) as executor:
        executor.register_call(chunk("a", "failing"))
        executor.register_call(chunk("b", "raising"))
        a, b = await executor.wait("a"), await executor.wait("b")
    for kept in (copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert kept == a
        assert kept.error is not None
        assert kept.error.exception is None
    for kept in (copy.deepcopy(b), pickle.loads(pickle.dumps(b))):
        assert kept.error is not None
        assert isinstance(kept.error.exception, ValueError)


# -- X13: records of dropped calls ---------------------------------------------------------------


@run_async
async def test_a_call_dropped_in_flight_is_freed_once_its_tool_stopped() -> None:
    from toolcalls._execution import ExecutionModel

    def records() -> int:
        return sum(1 for thing in gc.get_objects() if type(thing) is ExecutionModel)

    gates = Gates()
    gc.collect()
    gc.disable()
    try:
        before = records()
        async with ToolExecutor({"gate": gates.tool}) as executor:
            for key in ("a", "b"):
                executor.register_call(chunk(key, "gate", key=key))
            await asyncio.sleep(0)
            executor.reset()
            await asyncio.sleep(0.01)
            assert gates.cancelled == ["a", "b"]
            assert records() - before == 0
    finally:
        gc.enable()


# -- S10 and R6: re-delivery -------------------------------------------------------------------


@pytest.mark.parametrize("text", ['{"x": ', "[1]"], ids=["unparsable", "not-an-object"])
@run_async
async def test_a_refused_call_whose_arguments_cannot_run_is_reported_once(text: str) -> None:
    session = ToolCallSession({"echo": _echo}, max_history=1)
    for event in _call("a", '{"x": 1}'):
        session.apply(event)
    reported = await _reported(session, 1)
    for round_ in range(3):
        session.apply({"type": "start", "id": f"other-{round_}", "name": "echo"})
        for event in _call("a", text):
            session.apply(event)
    reported += await _reported(session, 1)
    saved = json.loads(json.dumps(session.checkpoint()))
    await session.aclose()
    assert reported == [("a", "success"), ("a", "error")]
    assert saved["refused"][0]["error"]["kind"] == "invalid_arguments"
    # Arguments that cannot run are kept by their text (the checkpoint's documented form).
    assert saved["refused"][0]["args"] == {"argsText": text}
    resumed = ToolCallSession.resume(saved, {"echo": _echo})
    resumed.apply({"type": "start", "id": "c", "name": "echo"})
    for event in _call("a", text):
        resumed.apply(event)
    resumed.finish()
    # Only the calls that never got their arguments are reported, not a again.
    assert [s.tool_call_id async for s in resumed.settled()] == [
        "other-0",
        "other-1",
        "other-2",
        "c",
    ]


@run_async
async def test_an_interrupted_call_delivered_again_after_a_resume_never_runs_again() -> None:
    runs: list[int] = []

    async def slow(x: int) -> int:
        runs.append(x)
        await asyncio.sleep(0.05)
        return x

    session = ToolCallSession({"echo": slow}, max_history=1)
    for event in _call("a", '{"x": 1}'):
        session.apply(event)
    await asyncio.sleep(0)
    saved = json.loads(json.dumps(session.checkpoint()))
    await session.aclose()
    resumed = ToolCallSession.resume(saved, {"echo": slow})
    assert await _reported(resumed, 1) == [("a", "error")]
    resumed.apply({"type": "start", "id": "b", "name": "echo"})
    for event in _call("a", '{"x": 1}'):
        resumed.apply(event)
    resumed.finish()
    assert [s.tool_call_id async for s in resumed.settled()] == ["b"]
    assert runs == [1]


def _left_on_a_closed_loop() -> ToolExecutor:
    async def long(args: dict[str, Any], signal: AbortSignal) -> int:
        await asyncio.sleep(0.05)
        return 1

    executor = ToolExecutor({"t": long}, max_concurrency=1)

    async def first() -> None:
        executor.register_call(chunk("a", "t"))
        await asyncio.sleep(0)

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(first())
    finally:
        loop.close()
    return executor


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_join_and_wait_on_the_next_loop_end_the_closed_loops_calls_first() -> None:
    executor = _left_on_a_closed_loop()

    async def main() -> tuple[str, str | None]:
        await asyncio.wait_for(executor.join(), 5)
        state = await asyncio.wait_for(executor.wait("a"), 5)
        await executor.aclose()
        return state.status, state.error.kind if state.error else None

    assert asyncio.run(main()) == ("error", "aborted")
    gc.collect()  # the closed loop's task is destroyed (and logged as pending) here, not later


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_session_read_on_the_next_loop_reports_the_closed_loops_call() -> None:
    async def slow(x: int) -> int:
        await asyncio.sleep(0.05)
        return x

    session = ToolCallSession({"echo": slow})

    async def first() -> None:
        for event in _call("a", '{"x": 1}'):
            session.apply(event)
        await asyncio.sleep(0)  # its tool starts

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(first())
    finally:
        loop.close()

    async def main() -> list[tuple[str, str]]:
        session.finish()
        reported: list[tuple[str, str]] = [
            (s.tool_call_id, s.status) async for s in session.settled()
        ]
        await session.aclose()
        return reported

    assert asyncio.run(main()) == [("a", "error")]
    gc.collect()  # the closed loop's task is destroyed (and logged as pending) here, not later


@run_async
async def test_distinct_calls_reusing_an_id_with_arguments_that_cannot_run_are_each_reported() -> (
    None
):
    session = ToolCallSession({"echo": _echo}, max_history=1)
    for event in _call("a", '{"x": 1}'):
        session.apply(event)
    reported: list[tuple[str, str]] = await _reported(session, 1)
    for round_, text in enumerate(['{"x": ', '{"q": "abc", "limit": ', '{"x": ']):
        session.apply({"type": "start", "id": f"other-{round_}", "name": "echo"})
        for event in _call("a", text):
            session.apply(event)
        if round_ < 2:  # the third is the first again: not reported again
            reported += await _reported(session, 1)
    await session.aclose()
    assert reported == [("a", "success"), ("a", "error"), ("a", "error")]


@run_async
async def test_changing_an_interrupted_views_nested_arguments_changes_nothing_remembered() -> None:
    async def slow(items: list[int]) -> int:
        await asyncio.sleep(0.05)
        return len(items)

    session = ToolCallSession({"echo": slow}, max_history=1)
    for event in _call("a", '{"items": [1, 2]}'):
        session.apply(event)
    await asyncio.sleep(0)
    saved = json.loads(json.dumps(session.checkpoint()))
    await session.aclose()
    resumed = ToolCallSession.resume(saved, {"echo": slow})
    [state] = [s async for s in _take(resumed, 1)]
    state.args["items"].append(3)
    assert resumed.executor.get_call("a").args == {"items": [1, 2]}  # type: ignore[union-attr]
    await resumed.aclose()


async def _take(session: ToolCallSession, count: int) -> Any:
    settled = session.settled()
    for _ in range(count):
        yield await asyncio.wait_for(anext(settled), 5)
