"""Breaks found by an independent review of issue 8 (round 4). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import pickle
import subprocess
import sys
import textwrap
import threading
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from toolcalls import AbortSignal, Tool, ToolCallSession, ToolExecutor

ROOT = Path(__file__).parents[2]


def _stream_call(call_id: str, text: str, name: str = "echo") -> list[dict[str, Any]]:
    return [
        {"type": "start", "id": call_id, "name": name},
        {"type": "delta", "id": call_id, "argsTextDelta": text},
        {"type": "ready", "id": call_id},
    ]


async def _reported_now(session: ToolCallSession) -> list[tuple[str, str]]:
    """The calls reported so far (without finishing the session)."""
    await asyncio.sleep(0.05)
    reported: list[tuple[str, str]] = []
    iterator = session.settled()
    while True:
        try:
            state = await asyncio.wait_for(anext(iterator), 0.1)
        except TimeoutError:
            return reported
        reported.append((state.tool_call_id, state.status))


# -- re-delivery of a refused call whose arguments cannot run ---------------------------------


def _redelivered_three_times(text: str) -> list[tuple[str, str]]:
    """``a`` runs; then, three times, the tracker forgets ``a`` and a call ``a`` with ``text``
    as its arguments comes; what is reported."""

    async def echo(x: int) -> int:
        return x

    async def main() -> list[tuple[str, str]]:
        session = ToolCallSession({"echo": echo}, max_history=1)
        for event in _stream_call("a", '{"x": 1}'):
            session.apply(event)
        reported = await _reported_now(session)
        for round_ in range(3):
            # a call still streaming pushes the finished ``a`` out of the tracker
            session.apply({"type": "start", "id": f"other-{round_}", "name": "echo"})
            for event in _stream_call("a", text):
                session.apply(event)
            reported += await _reported_now(session)
        await session.aclose()
        return reported

    return asyncio.run(main())


def test_S10_a_refused_call_with_unparsable_arguments_delivered_again_is_reported_once() -> None:
    """A call reuses the id of a remembered call with arguments that do not parse: it is
    refused and reported (S10). Delivered again, identical, it is reported again, every time:
    a refusal for arguments that cannot run is not remembered as one for other arguments is
    (S10: an identical re-delivery of a refused call is not reported again)."""
    assert _redelivered_three_times('{"x": ') == [("a", "success"), ("a", "error")]


def test_S10_a_refused_call_with_non_object_arguments_delivered_again_is_reported_once() -> None:
    """The same with arguments that parse but are not a JSON object (``[1]``): every identical
    re-delivery is reported once more."""
    assert _redelivered_three_times("[1]") == [("a", "success"), ("a", "error")]


# -- a thread tool waiting for its signal on its own loop ---------------------------------------


def test_X6_a_thread_tool_awaiting_its_signal_on_its_own_loop_hears_the_abort() -> None:
    """A plain ``def`` tool wraps an async client, so it runs its own loop
    (``asyncio.run``) and awaits ``signal.wait()`` there. The call times out and the signal is
    aborted from the executor's thread, which sets the waiter's result without waking the
    tool's loop: the tool never returns, and the host's ``asyncio.run`` hangs at exit waiting
    for that worker thread."""
    script = textwrap.dedent(
        """
        import asyncio
        from toolcalls import AbortSignal, Tool, ToolExecutor

        def tool(args, signal: AbortSignal):
            async def inner():
                return await signal.wait()
            return asyncio.run(inner())

        async def main():
            async with ToolExecutor({"t": Tool(tool, timeout=0.2)}) as executor:
                executor.register_call({"toolCallId": "a", "toolName": "t", "args": {}})
                state = await executor.wait("a")
                print(state.status, state.error.kind, flush=True)

        asyncio.run(main())
        print("exited", flush=True)
        """
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=ROOT,
        )
        output = done.stdout
    except subprocess.TimeoutExpired as expired:
        stdout = expired.stdout
        output = (stdout.decode() if isinstance(stdout, bytes) else stdout or "") + "(hung)"
    assert output.splitlines() == ["error timeout", "exited"], output


# -- an executor moving to a new loop once its loop is closed -----------------------------------


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_X18_calls_of_a_closed_loop_do_not_hold_the_slots_of_the_next_loop() -> None:
    """An executor (``max_concurrency=1``) runs on a loop the host closes with a call still
    running (``run_until_complete`` then ``close()``, as a test harness does). The executor is
    bound again to the next loop, as documented, but the dead loop's call stays ``executing``
    forever: it holds the only slot, so a call registered on the new loop waits in
    ``pending`` forever, ``join()`` never returns, and ``aclose()`` raises ``RuntimeError``
    (it cancels the dead loop's task)."""

    async def tool(args: dict[str, Any], signal: AbortSignal) -> int:
        await asyncio.sleep(0.05)
        return 1

    executor = ToolExecutor({"t": tool}, max_concurrency=1)

    async def first() -> None:
        executor.register_call({"toolCallId": "a", "toolName": "t", "args": {}})
        await asyncio.sleep(0)  # its tool starts

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(first())
    finally:
        loop.close()

    async def second() -> tuple[str, bool, BaseException | None]:
        executor.register_call({"toolCallId": "b", "toolName": "t", "args": {}})
        try:
            state = await asyncio.wait_for(executor.wait("b"), 2)
            status: str = state.status
        except TimeoutError:
            view = executor.get_call("b")
            status = "stuck " + (view.status if view else "?")
        try:
            await asyncio.wait_for(executor.join(), 1)
            joined = True
        except TimeoutError:
            joined = False
        try:
            await executor.aclose()
            raised = None
        except BaseException as exc:  # what escapes is the finding
            raised = exc
        return status, joined, raised

    status, joined, raised = asyncio.run(second())
    gc.collect()  # the dead loop's task is reported here, under this test's filters
    assert status == "success", f"the call on the new loop is {status}"
    assert joined, "join() on the new loop never returns"
    assert raised is None, f"aclose() raised {raised!r}"


# -- a reported view's nested arguments --------------------------------------------------------


def test_X21_changing_a_reported_views_nested_arguments_never_changes_the_executor() -> None:
    """The consumer of a session normalises, in place, the arguments of a call it was handed
    (``view.args["items"].append(...)``): the list is the executor's own, so the executor's
    record changes (X21: the view's arguments are a copy), and an identical re-delivery of the
    call is then refused as "taken by an earlier call with other arguments" and reported a
    second time (S10)."""

    async def echo(items: list[int]) -> int:
        return len(items)

    async def main() -> tuple[Any, list[tuple[str, str]]]:
        session = ToolCallSession({"echo": echo}, max_history=1)
        for event in _stream_call("a", '{"items": [1, 2]}'):
            session.apply(event)
        state = await anext(session.settled())
        state.args["items"].append(3)  # a read-only view, yet this goes through
        kept = session.executor.get_call("a")
        args = None if kept is None else dict(kept.args)
        session.apply({"type": "start", "id": "b", "name": "echo"})  # the tracker forgets a
        for event in _stream_call("a", '{"items": [1, 2]}'):  # delivered again, identical
            session.apply(event)
        again = await _reported_now(session)
        await session.aclose()
        return args, again

    args, again = asyncio.run(main())
    assert args == {"items": [1, 2]}, f"the executor now holds {args}"
    assert again == [], f"an identical re-delivery was reported again: {again}"


# -- an abort callback that aborts another call -------------------------------------------------


def test_X19_a_call_aborted_before_its_tool_started_never_runs_its_tool() -> None:
    """``max_concurrency=1``: ``a`` runs, ``b`` waits. ``a``'s tool registered an abort callback
    that aborts its sibling ``b`` (cancel the whole group). ``abort("a")`` frees the slot, so
    the book starts ``b``; the callback, run while the executor is still carrying that out,
    aborts ``b``, which settles in ``error``; then the executor starts ``b``'s tool anyway, with
    a fresh signal that is never aborted: the tool of an aborted call runs to its end."""
    ran: list[str] = []

    async def main() -> list[tuple[str, str]]:
        executor: ToolExecutor

        async def tool(args: dict[str, Any], signal: AbortSignal) -> str:
            ran.append(args["name"])
            if args["name"] == "a":
                signal.add_callback(lambda _: executor.abort("b", "its group was aborted"))
            await asyncio.sleep(0.2)
            return str(args["name"])

        async with ToolExecutor({"t": tool}, max_concurrency=1) as executor:
            for name in ("a", "b"):
                executor.register_call(
                    {"toolCallId": name, "toolName": "t", "args": {"name": name}}
                )
            await asyncio.sleep(0.01)
            assert executor.abort("a")
            await asyncio.sleep(0.05)
            return [(state.tool_call_id, state.status) for state in executor.calls]

    assert asyncio.run(main()) == [("a", "error"), ("b", "error")]
    assert ran == ["a"], "the tool of the aborted call b ran"


# -- a timeout given as another kind of number --------------------------------------------------


@pytest.mark.parametrize("seconds", [Decimal("0.1"), Fraction(1, 10)], ids=["Decimal", "Fraction"])
def test_X15_a_timeout_that_is_not_a_float_is_refused_or_honoured(seconds: Any) -> None:
    """A host reads its timeouts from a config as ``Decimal`` (or computes a ``Fraction``):
    ``Tool`` accepts it as a positive number, then the call it times is stranded
    ``executing`` forever: ``register_call`` raises ``TypeError`` from ``call_later`` after
    tracking the call (``Decimal``), or the timeout's handler raises formatting the message
    (``Fraction``), so the call never settles."""

    async def slow(args: dict[str, Any], signal: AbortSignal) -> None:
        await asyncio.sleep(5)

    try:
        tool = Tool(slow, timeout=seconds)
    except (TypeError, ValueError):
        return  # refused up front: fine

    async def main() -> str:
        async with ToolExecutor({"slow": tool}) as executor:
            try:
                executor.register_call({"toolCallId": "a", "toolName": "slow", "args": {}})
            except Exception as exc:  # refused: then nothing may be tracked
                tracked = [c.status for c in executor.calls]
                return "raised" if not tracked else f"raised {exc!r}, yet tracked: {tracked}"
            try:
                state = await asyncio.wait_for(executor.wait("a"), 2)
            except TimeoutError:
                return "stuck executing"
            return f"{state.status} {state.error.kind if state.error else None}"

    outcome = asyncio.run(main())
    assert outcome in ("error timeout", "raised"), outcome


# -- records of calls dropped while in flight ---------------------------------------------------


def test_X13_a_call_dropped_in_flight_by_reset_is_freed_without_the_cycle_collector() -> None:
    """Commit 0eba75f makes a call's record its own chart instance (``model`` is the record)
    and says the cycle is broken "when the call is evicted, forgotten or reset", so that a
    record the executor lets go of is freed at once by reference counting. A call still
    running when ``reset()`` (or ``aclose()``) drops it is not: its own cycle is not broken on
    a drop, and the frame of its cancelled ``_execute``, held by the ``CancelledError``'s
    traceback, refers to it; once its tool stopped nothing else does, yet it stays allocated
    until the cycle collector runs (the work the commit set out to spare)."""
    from toolcalls._execution import ExecutionModel

    def records() -> int:
        return sum(1 for thing in gc.get_objects() if type(thing) is ExecutionModel)

    async def hang(args: dict[str, Any], signal: AbortSignal) -> None:
        await asyncio.sleep(10)

    async def main() -> tuple[int, int]:
        before = records()
        async with ToolExecutor({"hang": hang}) as executor:
            for index in range(3):
                executor.register_call({"toolCallId": f"r{index}", "toolName": "hang", "args": {}})
            await asyncio.sleep(0)  # the tools start
            executor.reset()
            await asyncio.sleep(0.01)  # the cancelled tools end
            after_reset = records() - before
            for index in range(3):
                executor.register_call({"toolCallId": f"c{index}", "toolName": "hang", "args": {}})
            await asyncio.sleep(0)
        await asyncio.sleep(0.01)
        return after_reset, records() - before

    gc.collect()
    gc.disable()
    try:
        after_reset, after_close = asyncio.run(main())
    finally:
        gc.enable()
    assert after_reset == 0, f"{after_reset} records of calls dropped by reset() still allocated"
    assert after_close == 0, f"{after_close} records of calls dropped by aclose() still allocated"


# -- an interrupted call delivered again after the resume ---------------------------------------


def test_R6_an_interrupted_call_delivered_again_after_a_resume_never_runs_again() -> None:
    """``max_history=1``: ``a``'s tool is executing when the session is checkpointed; the
    resume (no ``rerun``) reports ``a`` in ``error``, kind ``interrupted``. Then ``start b``
    pushes ``a`` out of the tracker and the stream re-delivers ``a``, identical: the resumed
    executor does not remember the interrupted call, so its tool runs a second time (R6: an
    executing call runs again only when its tool is in ``rerun``) and ``a`` is reported a
    second time (S10)."""
    runs: list[int] = []

    async def slow(x: int) -> int:
        runs.append(x)
        await asyncio.sleep(0.05)
        return x

    async def main() -> list[tuple[str, str]]:
        session = ToolCallSession({"slow": slow}, max_history=1)
        for event in _stream_call("a", '{"x": 1}', "slow"):
            session.apply(event)
        await asyncio.sleep(0)  # a's tool starts
        saved = json.loads(json.dumps(session.checkpoint()))
        await session.aclose()
        resumed = ToolCallSession.resume(saved, {"slow": slow})
        reported = await _reported_now(resumed)
        resumed.apply({"type": "start", "id": "b", "name": "slow"})  # the tracker forgets a
        for event in _stream_call("a", '{"x": 1}', "slow"):  # delivered again, identical
            resumed.apply(event)
        reported += await _reported_now(resumed)
        await resumed.aclose()
        return reported

    assert asyncio.run(main()) == [("a", "error")]
    assert runs == [1], "the interrupted call's tool ran again after the resume"


# -- the view of a call whose tool raised --------------------------------------------------------


class UpstreamFailure(Exception):
    """An exception whose ``__init__`` takes two arguments, as many clients' errors do."""

    def __init__(self, code: int, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code


def test_X12_the_view_of_a_call_whose_tool_raised_can_be_deep_copied_and_pickled() -> None:
    """A tool raises an exception whose ``__init__`` takes two arguments (as HTTP clients'
    errors do). The call's view keeps it in ``error.exception`` (for logging, not compared),
    and ``copy.deepcopy(view)`` and ``pickle`` rebuild it with ``args`` alone: both raise
    ``TypeError``, so the reported view of a failed call cannot be kept as a successful
    one can (test_X12_a_reported_view_can_be_deep_copied_and_pickled)."""

    async def failing(args: dict[str, Any], signal: AbortSignal) -> None:
        raise UpstreamFailure(503, "upstream down")

    async def main() -> Any:
        async with ToolExecutor({"failing": failing}) as executor:
            executor.register_call({"toolCallId": "a", "toolName": "failing", "args": {}})
            return await executor.wait("a")

    view = asyncio.run(main())
    assert view.error is not None
    assert view.error.kind == "tool_raised"
    assert copy.deepcopy(view) == view
    assert pickle.loads(pickle.dumps(view)) == view


# -- a loop in another thread -------------------------------------------------------------------


def test_X20_a_loop_in_another_thread_never_takes_the_executor_from_its_running_loop() -> None:
    """An executor is entered (``async with``) on the main loop. A worker thread runs its own
    loop and registers a call: it is not refused (``register_call`` says it raises
    ``RuntimeError`` from another loop than the one it runs on, or from another thread while
    that loop runs); the executor is bound to the worker's loop while the main loop still
    runs, and the main loop's own registrations then fail while that call is in flight."""

    async def tool(args: dict[str, Any], signal: AbortSignal) -> str:
        await asyncio.sleep(0.2)
        return "done"

    async def main() -> tuple[str, str]:
        async with ToolExecutor({"t": tool}) as executor:
            outcome: list[str] = []
            registered = threading.Event()

            def worker() -> None:
                async def register() -> None:
                    try:
                        executor.register_call({"toolCallId": "w", "toolName": "t"})
                        outcome.append("accepted")
                        registered.set()
                        await executor.wait("w")
                    except RuntimeError:
                        outcome.append("refused")
                        registered.set()

                asyncio.run(register())

            thread = threading.Thread(target=worker)
            thread.start()
            await asyncio.to_thread(registered.wait, 5)
            try:
                executor.register_call({"toolCallId": "m", "toolName": "t"})
                mine = "accepted"
            except RuntimeError as exc:
                mine = f"refused: {exc}"
            await asyncio.to_thread(thread.join, 5)
            return outcome[0], mine

    theirs, mine = asyncio.run(main())
    assert mine == "accepted", f"the main loop's own call was {mine}"
    assert theirs == "refused", "a loop in another thread took the executor"


# -- when an async tool's timeout starts ----------------------------------------------------------


def test_X15_an_async_tools_timeout_counts_from_when_it_starts_not_from_registration() -> None:
    """``Tool(fn, timeout=0.3)``: the host registers a call, then keeps the loop busy for
    0.6 s before it next awaits (it applies a long batch of events, as ``apply`` in a loop
    does). The tool then starts and needs 0.02 s, yet the call ends in ``error``, kind
    ``timeout`` ("timed out after 0.3 s"): the timer was armed at registration (X15: counted
    from the start of execution)."""

    async def quickish(args: dict[str, Any], signal: AbortSignal) -> str:
        await asyncio.sleep(0.02)
        return "ok"

    async def main() -> str:
        async with ToolExecutor({"t": Tool(quickish, timeout=0.3)}) as executor:
            executor.register_call({"toolCallId": "a", "toolName": "t", "args": {}})
            time.sleep(0.6)  # the loop is busy with the host's own work
            state = await executor.wait("a")
            return state.status if state.error is None else f"{state.status}: {state.error}"

    assert asyncio.run(main()) == "success"
