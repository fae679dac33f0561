"""Rules a fourth review of issue 8 found broken: the executor used from another thread while its
loop runs, a callback raising ``CancelledError``, waiters that gave up, forgotten calls, views
kept by the user, and refused calls across a resume."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
from types import MappingProxyType
from typing import Any

import pytest

from toolcalls import AbortSignal, ExecutionView, ToolCallSession, ToolError, ToolExecutor

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
