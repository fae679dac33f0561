"""Breaks found by an independent review of the gathered callback groups of async charts
(round 7), continued: an abandoned loop, a second thread, GreenletExit, ``is_terminated`` and
events dropped at termination. Each test reproduces one; fix the code, do not weaken the test.
If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C6 ("refuse, never approximate") and C21 (async callbacks
# are awaited), as in test_review_gather_r7.py, whose helpers these tests share.

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import greenlet
import pytest
from statemachine import State, StateChart

from statecharts import compile_chart
from tests.review.test_review_gather_r7 import Log, both, ids, settle

# --- a send left pending on an event loop closed without cancelling it --------------------


class Abandoned(StateChart[Log]):
    """Its ``go`` gathers ``slow`` (waiting ten seconds) and ``quick`` as ``before``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, before=["slow", "quick"])
    back = b.to(a, on="noted") | a.to(b, on="noted")

    async def slow(self) -> None:
        self.model.log.append("slow")
        await asyncio.sleep(10)

    def quick(self) -> None:
        self.model.log.append("quick")

    def noted(self) -> None:
        self.model.log.append("noted")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_C21_an_instance_whose_send_was_abandoned_with_its_loop_takes_the_next_event() -> None:
    """C21/C6: ``go`` is sent in a task of an event loop that is then closed without
    cancelling it (the task is collected). python-statemachine's processing loop, closed with
    its coroutine, releases the machine: ``back`` sent on a new loop runs (``a`` to ``b``).
    The compiled instance keeps the abandoned run as in progress (its record holds the task,
    so it is never collected): every later ``send`` raises RuntimeError (a future of the
    closed loop) and the instance never takes an event again. It should take ``back``."""
    logs = []
    for machine in (Abandoned(Log()), compile_chart(Abandoned).create(Log())):
        machine.activate_initial_state()
        loop = asyncio.new_event_loop()

        async def start(machine: Any = machine) -> Any:
            sending = asyncio.ensure_future(machine.send("go"))
            await asyncio.sleep(0.01)
            return sending

        sending = loop.run_until_complete(start())
        loop.close()
        del sending
        gc.collect()

        async def again(machine: Any = machine) -> None:
            try:
                await asyncio.wait_for(machine.send("back"), 1)
            except Exception as error:
                machine.model.log.append(("back raised", type(error).__name__))
            machine.model.log.append(("configuration", ids(machine)))

        asyncio.run(again())
        logs.append(machine.model.log)
    assert logs[0] == ["slow", "quick", "noted", ("configuration", ["b"])]
    assert logs[1] == logs[0]


# --- is_terminated read while the parallel state's last region completes ------------------


class Completing(StateChart[Log]):
    """A top-level parallel state whose regions both end in final states; its done.state
    event leaves it for ``done``. ``reads`` (entering ``r2``, the last final child) logs
    what the instance says."""

    catch_errors_as_events = False
    idle = State(initial=True)

    class work(State.Parallel):
        class left(State.Compound):
            l1 = State(initial=True)
            l2 = State(final=True)
            go = l1.to(l2)

        class right(State.Compound):
            r1 = State(initial=True)
            r2 = State(final=True, enter=["reads", "quick"])
            go = r1.to(r2)

    done = State(final=True)
    start = idle.to(work)
    done_state_work = work.to(done)

    async def reads(self) -> None:
        self.model.log.append(("reads", ids(self), self.is_terminated))

    def quick(self) -> None:
        self.model.log.append("quick")


def test_C21_is_terminated_read_while_the_last_region_completes_is_false() -> None:
    """C6: a gathered ``enter`` callback of ``r2`` (both regions of the top-level parallel
    state now final, its done.state transition not yet taken) reads ``is_terminated``.
    python-statemachine terminates only once the macrostep ends with the parallel state
    still final (here the done.state event leaves it): it reads False. The compiled instance
    reads True (the configuration's node counts as terminated). It should read False. (A
    sync chart reads True as well.)"""

    async def scenario(machine: Any) -> None:
        await machine.send("start")
        await machine.send("go")
        machine.model.log.append(("end", ids(machine), machine.is_terminated))

    expected, compiled = both(Completing, scenario)
    assert expected == [
        ("reads", ["work", "left", "right", "l2", "r2"], False),
        "quick",
        ("end", ["done"], True),
    ]
    assert compiled == expected


class Finishing(StateChart[Log]):
    """A flat chart: ``go`` enters the top-level final state ``b``; ``reads`` runs as its
    ``on``, as ``b``'s ``enter`` and as its ``after``."""

    a = State(initial=True)
    b = State(final=True, enter="reads")
    go = a.to(b, on="reads", after="reads")

    def reads(self) -> None:
        self.model.log.append((ids(self), self.is_terminated))


def test_C6_is_terminated_read_by_the_final_states_enter_callback_is_false() -> None:
    """C6: python-statemachine stops its engine (``is_terminated``) after the ``enter``
    callbacks of a top-level final state ran: ``enter`` reads False, ``after`` True. The
    compiled instance reads True already in ``enter``. It should read False there."""
    logs = []
    for machine in (Finishing(Log()), compile_chart(Finishing).create(Log())):
        machine.send("go")
        logs.append(machine.model.log)
    assert logs[0] == [([], False), (["b"], False), (["b"], True)]
    assert logs[1] == logs[0]


# --- a send from another thread while the instance runs on the loop -----------------------


class Threaded(StateChart[Log]):
    """Its ``go`` gathers ``waits`` (0.2 s) and ``quick``; ``poke`` goes to ``c``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on=["waits", "quick"])
    poke = a.to(c, on="poked") | b.to(c, on="poked")
    back = c.to(a)

    async def waits(self) -> None:
        self.model.log.append("waits")
        await asyncio.sleep(0.2)
        self.model.log.append("waited")

    def quick(self) -> None:
        self.model.log.append("quick")

    def poked(self) -> None:
        self.model.log.append("poked")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_C21_a_send_from_another_thread_during_a_run_returns() -> None:
    """C21/C6: while ``go`` runs on the event loop (its gathered ``waits`` sleeping), a
    thread sends ``poke``. python-statemachine queues it (no future: no loop runs in that
    thread), finds the machine busy and returns; the run takes ``poke`` afterwards. The
    compiled ``send`` queues it too (the run takes it) but then raises RuntimeError in the
    thread (it waits on a future of the other thread's loop). It should return."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        running = asyncio.ensure_future(machine.send("go"))
        await asyncio.sleep(0.05)
        answers: list[Any] = []

        def poke() -> None:
            try:
                machine.send("poke")
            except Exception as error:
                answers.append(("raised", type(error).__name__))
            else:
                answers.append("returned")

        thread = threading.Thread(target=poke)
        thread.start()
        while thread.is_alive():
            await asyncio.sleep(0.01)
        machine.model.log.append(("thread", *answers))
        await running
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both(Threaded, scenario)
    gc.collect()  # python-statemachine's send left a loop open in the thread: freed here
    assert expected == [
        "waits",
        "quick",
        ("thread", "returned"),
        "waited",
        "poked",
        ("configuration", ["c"]),
    ]
    assert compiled == expected


# --- a plain callback raising GreenletExit ------------------------------------------------


def exiting(group: str) -> type[StateChart[Log]]:
    """A chart whose ``go`` runs ``exits`` (a plain callback raising ``GreenletExit``, the
    BaseException gevent's ``kill`` raises) and ``quick`` as ``group``."""

    class Exiting(StateChart[Log]):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State()
        go = a.to(b, **{group: ["exits", "quick"]})
        back = b.to(a, on="slow") | a.to(b)

        def exits(self) -> bool:
            self.model.log.append("exits")
            raise greenlet.GreenletExit("stop")

        def quick(self) -> bool:
            self.model.log.append("quick")
            return True

        async def slow(self) -> None:
            """Never run: makes the chart async."""

    Exiting.__name__ = Exiting.__qualname__ = f"Exiting_{group}"
    return Exiting


async def _go_answer(machine: Any) -> None:
    await machine.activate_initial_state()
    try:
        await machine.send("go")
    except BaseException as error:  # GreenletExit is one
        machine.model.log.append(("raised", type(error).__name__))
    else:
        machine.model.log.append("returned")
    machine.model.log.append(("configuration", ids(machine)))


def test_C21_a_gathered_callback_raising_greenlet_exit_fails_the_group() -> None:
    """C21/C6: a plain gathered ``before`` callback raises ``GreenletExit``. With
    python-statemachine it fails its task, the group and the send: the sender gets it and
    the instance stays in ``a``. The compiled callback runs in a greenlet, which ends
    quietly on ``GreenletExit`` (returning it): the group counts it as a result, ``go`` is
    taken (``b``) and ``send`` returns. It should raise, the instance left in ``a``."""
    expected, compiled = both(exiting("before"), _go_answer)
    assert expected == ["exits", "quick", ("raised", "GreenletExit"), ("configuration", ["a"])]
    assert compiled == expected


def test_C21_a_guard_raising_greenlet_exit_reaches_the_sender() -> None:
    """C21/C6: a guard (run in the run's own greenlet) raises ``GreenletExit``:
    python-statemachine's send raises it. The compiled run's greenlet ends quietly and
    ``send`` returns the exception object as its answer. It should raise."""
    expected, compiled = both(exiting("cond"), _go_answer)
    assert expected == ["exits", ("raised", "GreenletExit"), ("configuration", ["a"])]
    assert compiled == expected


# --- a waiting sender's event dropped when the run terminates -----------------------------


class Strict(StateChart[Log]):
    """No event without a transition; ``go`` (gathering ``waiting`` and ``quick``) reaches
    the final state ``b``."""

    allow_event_without_transition = False
    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=["waiting", "quick"])
    poke = a.to(a, on="poked")

    async def waiting(self) -> None:
        self.model.log.append("waiting")
        await asyncio.sleep(0.01)

    def quick(self) -> None:
        self.model.log.append("quick")

    def poked(self) -> None:
        self.model.log.append("poked")


def test_C21_the_sender_whose_event_terminated_the_instance_is_not_answered_with_the_next() -> (
    None
):
    """C21/C6: task 1 sends ``go``, which reaches the final state; task 2 sends ``poke``
    while ``go`` runs. python-statemachine answers task 1 with ``go``'s result and rejects
    task 2's dropped ``poke`` with TransitionNotAllowed (no event without a transition). The
    compiled run raises TransitionNotAllowed to task 1 too, whose event was taken. Task 1's
    send should return."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        first = asyncio.ensure_future(machine.send("go"))
        await settle()
        second = asyncio.ensure_future(machine.send("poke"))
        for name, task in (("first", first), ("second", second)):
            try:
                await task
            except Exception as error:
                machine.model.log.append((name, "raised", type(error).__name__))
            else:
                machine.model.log.append((name, "returned"))
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both(Strict, scenario)
    assert expected == [
        "waiting",
        "quick",
        ("first", "returned"),
        ("second", "raised", "TransitionNotAllowed"),
        ("configuration", ["b"]),
    ]
    assert compiled == expected


class StrictQueued(StateChart[Log]):
    """No event without a transition; ``go``'s ``on`` queues ``poke`` and ``go`` reaches the
    final state ``b`` (a sync chart)."""

    allow_event_without_transition = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="sends")
    poke = a.to(a)

    def sends(self) -> None:
        self.send("poke")


class AsyncStrictQueued(StateChart[Log]):
    """The same chart with an async ``sends`` gathered with a plain ``quick``."""

    allow_event_without_transition = False
    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=["sends", "quick"])
    poke = a.to(a)

    async def sends(self) -> None:
        await self.send("poke")

    def quick(self) -> None:
        self.model.log.append("quick")


def test_C6_an_event_a_callback_queued_dropped_at_termination_raises_nothing() -> None:
    """C6: with ``allow_event_without_transition = False``, ``go``'s callback queues ``poke``
    and ``go`` terminates the instance. python-statemachine drops ``poke`` with the rest of
    the external queue and nobody waits for it: ``send("go")`` returns. The compiled send
    raises TransitionNotAllowed for the dropped ``poke``. It should return."""
    logs = []
    for machine in (StrictQueued(Log()), compile_chart(StrictQueued).create(Log())):
        try:
            machine.send("go")
        except Exception as error:
            machine.model.log.append(("raised", type(error).__name__))
        else:
            machine.model.log.append("returned")
        logs.append(machine.model.log)
    assert logs[0] == ["returned"]
    assert logs[1] == logs[0]


def test_C21_an_event_a_gathered_callback_queued_dropped_at_termination_raises_nothing() -> None:
    """C21/C6: as above, ``poke`` queued by a gathered async callback and awaited in a
    running loop: python-statemachine's send returns, the compiled one raises
    TransitionNotAllowed. It should return."""

    async def scenario(machine: Any) -> None:
        try:
            await machine.send("go")
        except Exception as error:
            machine.model.log.append(("raised", type(error).__name__))
        else:
            machine.model.log.append("returned")

    expected, compiled = both(AsyncStrictQueued, scenario)
    assert expected == ["quick", "returned"]
    assert compiled == expected
