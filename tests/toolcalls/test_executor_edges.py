"""The executor's edges that mutation testing showed no test looked at: options, loops, chunk
objects, callbacks that fail or succeed quietly, and its repr."""

# Rules checked here (docs/spec.md): X2, X16.

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from typing import Any

import pytest

from toolcalls import AbortSignal, ExecutionView, InvalidToolCall, ToolError, ToolExecutor

from .executor_support import Gates, Recorder, chunk, run_async, settle

# -- options -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_history": "5"}, "max_history must be an int >= 0, not '5'"),
        ({"max_history": True}, "max_history must be an int >= 0, not True"),
        ({"max_history": 2.0}, "max_history must be an int >= 0, not 2.0"),
        ({"max_concurrency": "2"}, "max_concurrency must be None or an int >= 1, not '2'"),
        ({"max_concurrency": True}, "max_concurrency must be None or an int >= 1, not True"),
        ({"max_concurrency": 1.5}, "max_concurrency must be None or an int >= 1, not 1.5"),
    ],
)
def test_options_of_the_wrong_type_are_refused_with_a_value_error(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match="must be") as refused:
        ToolExecutor({}, **options)
    assert str(refused.value) == message


def test_a_new_executor_is_open_and_its_repr_says_what_it_holds() -> None:
    executor = ToolExecutor({"b": lambda args: 1, "a": lambda args: 2})
    assert executor.closed is False
    assert repr(executor) == "<ToolExecutor tools=['a', 'b'] calls=0 in_flight=0>"

    async def main() -> None:
        executor.register_call(chunk("c1", "missing"))
        await executor.aclose()

    asyncio.run(main())
    assert executor.closed is True
    assert repr(executor) == "<ToolExecutor tools=['a', 'b'] calls=1 in_flight=0 closed>"


# -- the event loop ----------------------------------------------------------------------------

NO_LOOP = "ToolExecutor needs an event loop: use it from async code"
OTHER_LOOP = "ToolExecutor is in use on another event loop"


def test_without_any_loop_registering_a_runnable_call_says_so_exactly() -> None:
    executor = ToolExecutor({"t": lambda args: 1})
    with pytest.raises(RuntimeError) as refused:
        executor.register_call(chunk("c1", "t"))
    assert str(refused.value) == NO_LOOP


def test_a_call_registered_between_runs_of_its_open_loop_runs_on_that_loop() -> None:
    async def echo(args: dict[str, Any]) -> Any:
        return args["n"]

    executor = ToolExecutor({"echo": echo})
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(executor.__aenter__())
        assert executor.register_call(chunk("c1", "echo", n=1))  # no loop running right now
        assert loop.run_until_complete(executor.wait("c1")).result == 1
        loop.run_until_complete(executor.aclose())
    finally:
        loop.close()


def test_an_executor_in_flight_on_one_loop_refuses_calls_from_another() -> None:
    gates_ready = threading.Event()
    release: list[asyncio.Future[Any]] = []
    other_loop = asyncio.new_event_loop()

    async def hangs(args: dict[str, Any]) -> Any:
        future = asyncio.get_running_loop().create_future()
        release.append(future)
        gates_ready.set()
        return await future

    executor = ToolExecutor({"hangs": hangs})

    async def first() -> Any:
        executor.register_call(chunk("c1", "hangs"))
        return (await executor.wait("c1")).result

    thread_result: list[Any] = []
    thread = threading.Thread(
        target=lambda: thread_result.append(other_loop.run_until_complete(first()))
    )
    thread.start()
    try:
        assert gates_ready.wait(5)

        async def second() -> None:
            with pytest.raises(RuntimeError) as refused:
                executor.register_call(chunk("c2", "hangs"))
            assert str(refused.value) == OTHER_LOOP

        asyncio.run(second())
        assert [c.tool_call_id for c in executor.calls] == ["c1"]
    finally:
        other_loop.call_soon_threadsafe(release[0].set_result, "done")
        thread.join(5)
        other_loop.close()
    assert thread_result == ["done"]


OTHER_THREAD = (
    "ToolExecutor is used from another thread than its event loop's: "
    "hand the call over with loop.call_soon_threadsafe"
)


@run_async
async def test_a_call_from_another_thread_is_told_how_to_hand_it_over_exactly() -> None:
    async def quick(args: dict[str, Any]) -> int:
        return 1

    async with ToolExecutor({"t": quick}) as executor:

        def worker() -> str:
            with pytest.raises(RuntimeError) as refused:
                executor.register_call(chunk("w", "t"))
            return str(refused.value)

        assert await asyncio.to_thread(worker) == OTHER_THREAD
        assert executor.calls == []


async def _hangs(args: dict[str, Any]) -> None:
    await asyncio.Event().wait()


def test_waiting_from_another_loop_while_calls_run_on_an_open_loop_is_refused() -> None:
    # The calls' loop is open (only not running now): nothing on this loop could end them, so
    # join() and wait() would wait forever; they refuse as register_call does, changing nothing.
    executor = ToolExecutor({"hangs": _hangs})
    loop = asyncio.new_event_loop()
    try:

        async def first() -> None:
            executor.register_call(chunk("a", "hangs"))
            await asyncio.sleep(0)  # its tool starts

        loop.run_until_complete(first())

        async def elsewhere() -> list[str]:
            refusals = []
            with pytest.raises(RuntimeError) as refused:
                await asyncio.wait_for(executor.join(), 5)
            refusals.append(str(refused.value))
            with pytest.raises(RuntimeError) as refused:
                await asyncio.wait_for(executor.wait("a"), 5)
            refusals.append(str(refused.value))
            return refusals

        assert asyncio.run(elsewhere()) == [OTHER_LOOP, OTHER_LOOP]
        assert [(c.tool_call_id, c.status) for c in executor.calls] == [("a", "executing")]
        loop.run_until_complete(executor.aclose())
    finally:
        loop.close()


def test_waiting_on_another_loop_with_nothing_in_flight_leaves_the_executor_on_its_loop() -> None:
    # join() and wait() only read: with nothing in flight they return at once on any loop and
    # take nothing over; the executor's next call still runs on its own (open) loop.
    async def echo(args: dict[str, Any]) -> Any:
        return args["n"]

    executor = ToolExecutor({"echo": echo})
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(executor.__aenter__())
        executor.register_call(chunk("a", "echo", n=1))
        assert loop.run_until_complete(executor.wait("a")).result == 1

        async def elsewhere() -> Any:
            await asyncio.wait_for(executor.join(), 5)
            return (await asyncio.wait_for(executor.wait("a"), 5)).result

        assert asyncio.run(elsewhere()) == 1
        assert executor.register_call(chunk("b", "echo", n=2))  # no loop running right now
        assert loop.run_until_complete(executor.wait("b")).result == 2
        loop.run_until_complete(executor.aclose())
    finally:
        loop.close()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_call_left_executing_on_a_closed_loop_ends_saying_its_loop_was_closed() -> None:
    recorder = Recorder()
    executor = ToolExecutor({"hangs": _hangs}, on_call_settled=recorder)
    loop = asyncio.new_event_loop()
    try:

        async def first() -> None:
            executor.register_call(chunk("a", "hangs"))
            await asyncio.sleep(0)

        loop.run_until_complete(first())
    finally:
        loop.close()

    async def second() -> None:
        await asyncio.wait_for(executor.join(), 5)

    asyncio.run(second())
    assert [(s.tool_call_id, s.error) for s in recorder.settled] == [
        ("a", ToolError.aborted("hangs", "its event loop was closed"))
    ]
    gc.collect()  # the closed loop's task is destroyed (and logged as pending) here, not later


# -- chunk objects -----------------------------------------------------------------------------


class OnlyId:
    tool_call_id = "c1"


class NoArgs:
    tool_call_id = "c1"
    tool_name = "echo"


@run_async
async def test_an_object_chunk_needs_both_names_and_may_leave_out_its_args() -> None:
    async def echo(args: dict[str, Any]) -> Any:
        return dict(args)

    async with ToolExecutor({"echo": echo}) as executor:
        with pytest.raises(InvalidToolCall) as refused:
            executor.register_call(OnlyId())
        assert refused.value.field == "chunk"
        assert executor.register_call(NoArgs())
        assert (await executor.wait("c1")).result == {}


# -- callbacks ---------------------------------------------------------------------------------


@run_async
async def test_a_plain_callback_returning_nothing_records_no_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = Recorder()
    async with ToolExecutor({"t": lambda args: 1}, on_call_settled=recorder) as executor:
        executor.register_call(chunk("c1", "t"))
        executor.register_call(chunk("c2", "missing"))
        await executor.join()
        await settle()
    assert recorder.ids == ["c2", "c1"]
    assert executor.callback_errors == ()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@run_async
async def test_an_async_callback_that_succeeds_leaves_no_trace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    async def on_settled(state: ExecutionView) -> None:
        await asyncio.sleep(0)
        seen.append(state.tool_call_id)

    gc.collect()  # another test's garbage is reported now, outside the window below
    caplog.clear()
    async with ToolExecutor({"t": lambda args: 1}, on_call_settled=on_settled) as executor:
        executor.register_call(chunk("c1", "t"))
        await executor.join()
    await settle()
    assert seen == ["c1"]
    assert executor.callback_errors == ()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@run_async
async def test_a_failing_callback_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def on_settled(state: ExecutionView) -> None:
        raise LookupError("no such conversation")

    with caplog.at_level(logging.ERROR, logger="toolcalls"):
        async with ToolExecutor({}, on_call_settled=on_settled) as executor:
            executor.register_call(chunk("c1", "missing"))
    [record] = caplog.records
    assert record.getMessage() == "on_call_settled raised for tool call 'c1' (error)"
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], LookupError)


def test_only_the_last_100_callback_failures_are_kept() -> None:
    def on_settled(state: ExecutionView) -> None:
        raise LookupError(state.tool_call_id)

    executor = ToolExecutor({}, on_call_settled=on_settled)
    logging.getLogger("toolcalls").disabled = True
    try:
        for n in range(101):
            executor.register_call(chunk(f"c{n}", "missing"))
    finally:
        logging.getLogger("toolcalls").disabled = False
    failures = executor.callback_errors
    assert len(failures) == 100
    assert [f.call.tool_call_id for f in failures[:2]] == ["c1", "c2"]


# -- how tools end -----------------------------------------------------------------------------


@run_async
async def test_a_tool_that_raises_leaves_no_unretrieved_task_exception(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fails(args: dict[str, Any]) -> None:
        raise RuntimeError("down")

    gc.collect()  # another test's garbage is reported now, outside the window below
    caplog.clear()
    async with ToolExecutor({"fails": fails}) as executor:
        executor.register_call(chunk("c1", "fails"))
        await executor.join()
    await settle()
    gc.collect()
    assert executor.calls[0].error == ToolError.tool_raised("fails", RuntimeError("down"))
    assert "never retrieved" not in caplog.text


@run_async
async def test_a_tool_raising_cancelled_error_itself_fails_alone_and_the_queue_goes_on() -> None:
    gates = Gates()

    async def gives_up(args: dict[str, Any], signal: AbortSignal) -> None:
        raise asyncio.CancelledError

    tools = {"gives_up": gives_up, "gate": gates.tool}
    async with ToolExecutor(tools, max_concurrency=1) as executor:
        executor.register_call(chunk("c1", "gives_up"))
        executor.register_call(chunk("c2", "gate", key="next"))
        await settle()
        assert gates.started == ["next"]
        gates.open("next", "ran")
        await executor.join()
    assert [(c.status, c.result) for c in executor.calls] == [("error", None), ("success", "ran")]
    assert executor.calls[0].error == ToolError.aborted("gives_up", "cancelled")


def _ended_by_the_loop(tool: Any) -> tuple[ToolExecutor, Recorder, dict[str, AbortSignal]]:
    """Run ``tool`` for call c1 (c2 waits for the one slot) until ``asyncio.run`` ends and
    cancels what is left, as a loop ending without ``aclose()`` does."""
    signals: dict[str, AbortSignal] = {}

    async def watched(args: dict[str, Any], signal: AbortSignal) -> Any:
        signals[args["key"]] = signal
        return await tool()

    recorder = Recorder()
    executor = ToolExecutor({"t": watched}, on_call_settled=recorder, max_concurrency=1)

    async def main() -> None:
        executor.register_call(chunk("c1", "t", key="c1"))
        executor.register_call(chunk("c2", "t", key="c2"))
        await asyncio.sleep(0)  # c1's tool starts

    asyncio.run(main())
    return executor, recorder, signals


CANCELLED = [
    ("c1", ToolError.aborted("t", "cancelled")),
    ("c2", ToolError.aborted("t", "cancelled")),
]


def test_a_tool_whose_cleanup_raises_as_the_loop_ends_is_aborted_not_failed() -> None:
    async def cleans_up_badly() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            raise RuntimeError("cleanup failed")

    executor, recorder, signals = _ended_by_the_loop(cleans_up_badly)
    assert [(s.tool_call_id, s.error) for s in recorder.settled] == CANCELLED
    assert (signals["c1"].aborted, signals["c1"].reason) == (True, "cancelled")
    assert list(signals) == ["c1"]  # the queued call never started
    assert executor.in_flight == 0


def test_a_tool_that_swallows_the_loops_cancellation_is_aborted_not_successful() -> None:
    async def swallows() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return "finished anyway"
        return "never"

    executor, recorder, signals = _ended_by_the_loop(swallows)
    assert [(s.tool_call_id, s.error) for s in recorder.settled] == CANCELLED
    assert (signals["c1"].aborted, signals["c1"].reason) == (True, "cancelled")
    assert executor.in_flight == 0


# -- waiters that give up as their call settles ------------------------------------------------


@run_async
async def test_a_wait_cancelled_just_before_its_call_settles_leaves_the_settling_undisturbed() -> (
    None
):
    gates = Gates()
    async with ToolExecutor({"gate": gates.tool}) as executor:
        executor.register_call(chunk("a", "gate", key="a"))
        waiting = asyncio.ensure_future(executor.wait("a"))
        await settle()  # it waits for "a"
        waiting.cancel()  # its waiter is cancelled now; wait() resumes later
        assert executor.abort("a")  # "a" settles first
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert (await executor.wait("a")).error == ToolError.aborted("gate", "aborted")


@run_async
async def test_a_join_cancelled_just_before_the_last_call_settles_ends_cancelled() -> None:
    gates = Gates()
    async with ToolExecutor({"gate": gates.tool}) as executor:
        executor.register_call(chunk("a", "gate", key="a"))
        joining = asyncio.ensure_future(executor.join())
        await settle()
        joining.cancel()
        assert executor.abort("a")  # nothing in flight: the joiners are woken, and forgotten
        with pytest.raises(asyncio.CancelledError):
            await joining
        await asyncio.wait_for(executor.join(), 5)


# -- on_call_settled returning a value ---------------------------------------------------------


@run_async
async def test_a_callback_returning_a_plain_value_is_not_awaited_nor_a_failure() -> None:
    told: list[str] = []

    def callback(view: ExecutionView) -> int:
        told.append(view.tool_call_id)
        return len(told)  # not an awaitable: nothing to wait for

    async def quick(args: dict[str, Any]) -> int:
        return 1

    async with ToolExecutor({"t": quick}, on_call_settled=callback) as executor:
        executor.register_call(chunk("a", "t"))
        await executor.join()
        await settle()
    assert told == ["a"]
    assert executor.callback_errors == ()
