"""Variants of review round 7's gathered-group breaks the review tests leave out: each runs
on python-statemachine and compiled, and the answers must be the same (docs/spec.md C6, C21)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from statemachine import State, StateChart

from statecharts import compile_chart


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []


def ids(machine: Any) -> list[str]:
    return [state.id for state in machine.configuration]


def both_async(
    chart: type[StateChart[Any]], scenario: Callable[[Any], Awaitable[None]]
) -> tuple[list[Any], list[Any]]:
    logs = []
    for machine in (chart(Log()), compile_chart(chart).create(Log())):

        async def bounded(machine: Any = machine) -> None:
            try:
                await asyncio.wait_for(scenario(machine), 2)
            except TimeoutError:
                machine.model.log.append("timed out")

        asyncio.run(bounded())
        logs.append(machine.model.log)
    return logs[0], logs[1]


def both_sync(
    chart: type[StateChart[Any]], scenario: Callable[[Any], None]
) -> tuple[list[Any], list[Any]]:
    logs = []
    for machine in (chart(Log()), compile_chart(chart).create(Log())):
        scenario(machine)
        logs.append(machine.model.log)
    return logs[0], logs[1]


class NestedFinishing(StateChart[Log]):
    """A compound state, left for the top-level final state ``done``."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        step = a.to(b)

    done = State(final=True, enter="reads")
    finish = work.to(done, on="reads", after="reads")

    def reads(self) -> None:
        self.model.log.append((ids(self), self.is_terminated))


def test_C6_is_terminated_read_by_a_statecharts_final_states_enter_callback_is_false() -> None:
    """C6: a chart with compound states (the hierarchy runtime): ``enter`` of the top-level
    final state reads False, ``after`` True, as python-statemachine's engine stops after the
    enter callbacks."""

    def scenario(machine: Any) -> None:
        machine.send("finish")
        machine.model.log.append(("end", machine.is_terminated))

    expected, compiled = both_sync(NestedFinishing, scenario)
    assert expected == [([], False), (["done"], False), (["done"], True), ("end", True)]
    assert compiled == expected


class SyncCompleting(StateChart[Log]):
    """The parallel chart of the review's test, every callback plain (a sync chart)."""

    idle = State(initial=True)

    class work(State.Parallel):
        class left(State.Compound):
            l1 = State(initial=True)
            l2 = State(final=True)
            go = l1.to(l2)

        class right(State.Compound):
            r1 = State(initial=True)
            r2 = State(final=True, enter="reads")
            go = r1.to(r2)

    done = State(final=True)
    start = idle.to(work)
    done_state_work = work.to(done)

    def reads(self) -> None:
        self.model.log.append(("reads", self.is_terminated))


class StaysCompleted(StateChart[Log]):
    """A top-level parallel state whose regions end final, with no done.state transition:
    the instance terminates at the end of the macrostep."""

    class work(State.Parallel):
        class left(State.Compound):
            l1 = State(initial=True)
            l2 = State(final=True)
            go = l1.to(l2)

        class right(State.Compound):
            r1 = State(initial=True)
            r2 = State(final=True, enter="reads")
            go = r1.to(r2, after="reads")

    def reads(self) -> None:
        self.model.log.append(("reads", self.is_terminated))


def test_C6_is_terminated_read_while_a_sync_charts_last_region_completes_is_false() -> None:
    """C6: the sync variant of the review's parallel test, and one whose parallel state
    stays final (terminated once the macrostep ends, not in the callbacks before)."""

    def scenario(machine: Any) -> None:
        machine.send("go")
        machine.model.log.append(("end", ids(machine), machine.is_terminated))

    def started(machine: Any) -> None:
        machine.send("start")
        scenario(machine)

    expected, compiled = both_sync(SyncCompleting, started)
    assert expected == [("reads", False), ("end", ["done"], True)]
    assert compiled == expected
    expected, compiled = both_sync(StaysCompleted, scenario)
    assert expected[-1][2] is True
    assert compiled == expected


class AsyncFinishing(StateChart[Log]):
    """A flat async chart: ``b``'s enter gathers ``reads`` and ``quick``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True, enter=["reads", "quick"])
    go = a.to(b, after="after_go")

    async def reads(self) -> None:
        self.model.log.append(("enter", self.is_terminated))

    def quick(self) -> None:
        self.model.log.append("quick")

    async def after_go(self) -> None:
        self.model.log.append(("after", self.is_terminated))


def test_C21_is_terminated_read_by_an_async_final_states_enter_callback_is_false() -> None:
    """C21/C6: as the sync flat test, with gathered async ``enter`` callbacks."""

    async def scenario(machine: Any) -> None:
        await machine.send("go")

    expected, compiled = both_async(AsyncFinishing, scenario)
    assert expected == [("enter", False), "quick", ("after", True)]
    assert compiled == expected


class NestedStrictQueued(StateChart[Log]):
    """No event without a transition; ``go``'s ``on`` queues ``poke``, then ``go`` reaches
    the top-level final state (a chart with a compound state)."""

    allow_event_without_transition = False

    class work(State.Compound):
        a = State(initial=True)
        poke = a.to(a)

    b = State(final=True)
    go = work.to(b, on="sends")

    def sends(self) -> None:
        self.send("poke")


def test_C6_an_event_a_statecharts_callback_queued_dropped_at_termination_raises_nothing() -> None:
    """C6: the hierarchy runtime drops the queued ``poke`` at termination, as
    python-statemachine does: ``send("go")`` returns."""

    def scenario(machine: Any) -> None:
        try:
            machine.send("go")
        except Exception as error:
            machine.model.log.append(("raised", type(error).__name__))
        else:
            machine.model.log.append(("returned", ids(machine)))

    expected, compiled = both_sync(NestedStrictQueued, scenario)
    assert expected == [("returned", ["b"])]
    assert compiled == expected


class StartSends(StateChart[Log]):
    """The initial state's ``enter`` sends ``back`` (an async chart)."""

    catch_errors_as_events = False
    a = State(initial=True, enter="sends")
    b = State()
    go = a.to(b, on="noted")
    back = b.to(a, on="noted")

    async def sends(self) -> None:
        self.model.log.append(("enter a", ids(self)))
        if not self.model.log[1:]:
            await self.send("back")

    def noted(self) -> None:
        self.model.log.append(("noted", ids(self)))


def test_C21_an_event_the_initial_states_enter_sends_runs_after_the_first_event() -> None:
    """C21/C6: the first event enters the initial state; its ``enter`` callback sends
    ``back``. python-statemachine queues the first event ``go`` before the initial entry
    runs, so ``go`` runs first, then ``back``."""

    async def scenario(machine: Any) -> None:
        await machine.send("go")
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both_async(StartSends, scenario)
    assert compiled == expected


class Held(StateChart[Log]):
    """``go``'s ``on`` waits for the model's gate; ``poke`` goes to ``c``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="hold")
    poke = b.to(c, on="noted") | a.to(c, on="noted")
    back = c.to(a)

    async def hold(self) -> None:
        self.model.log.append("holds")
        await asyncio.sleep(0.01)

    def noted(self) -> None:
        self.model.log.append(("noted", ids(self)))


def test_C21_an_event_raised_from_another_task_joins_the_run() -> None:
    """C21: ``raise_`` from another task while a run holds the instance joins the run's
    queue as ``send`` does (python-statemachine puts it on the external queue: it is not
    the running machine's step)."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        first = asyncio.ensure_future(machine.send("go"))
        await asyncio.sleep(0)
        await machine.raise_("poke")
        await first
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both_async(Held, scenario)
    assert expected[-1] == ("configuration", ["c"])
    assert compiled == expected


class Handover(StateChart[Log]):
    """``go``'s ``before`` waits ten seconds; ``poke`` and ``prod`` each note where they run."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, before="waiting")
    poke = a.to(c, on="noted") | b.to(c, on="noted")
    prod = c.to(a, on="noted") | a.to(c, on="noted")

    async def waiting(self) -> None:
        self.model.log.append("waiting")
        await asyncio.sleep(10)

    def noted(self) -> None:
        self.model.log.append(("noted", ids(self)))


def test_C21_cancelling_the_sender_hands_the_run_to_the_first_of_two_waiting_tasks() -> None:
    """C21: two tasks wait with ``poke`` and ``prod`` when the sender of ``go`` is cancelled:
    the first takes the run over and runs both events in order; both return."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        first = asyncio.ensure_future(machine.send("go"))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(machine.send("poke"))
        third = asyncio.ensure_future(machine.send("prod"))
        await asyncio.sleep(0)
        first.cancel()
        for name, task in (("first", first), ("second", second), ("third", third)):
            try:
                await task
            except asyncio.CancelledError:
                machine.model.log.append((name, "cancelled"))
            else:
                machine.model.log.append((name, "returned"))
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both_async(Handover, scenario)
    assert expected[-1] == ("configuration", ["a"])
    assert compiled == expected


class NestedCancelled(StateChart[Log]):
    """A compound chart, errors caught as events (``on`` one by one): ``go``'s ``on`` sends
    ``more`` and waits."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        c = State()
        go = a.to(b, on="queues")
        more = a.to(c, on="noted") | b.to(c, on="noted")
        back = c.to(a, on="noted")

    async def queues(self) -> None:
        self.model.log.append("queues more")
        await self.send("more")
        await asyncio.sleep(10)

    def noted(self) -> None:
        self.model.log.append(("noted", ids(self)))


def test_C21_a_run_cancelled_in_a_one_by_one_on_callback_stays_where_it_got() -> None:
    """C21: as the review's gathered test, from an ``on`` callback run one by one in a
    statechart: the cancelled run leaves the instance between ``a``'s exit and ``b``'s
    entry (only ``work`` active), where ``more``, kept, and ``back`` find no transition, as
    python-statemachine leaves it."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        try:
            await asyncio.wait_for(machine.send("go"), 0.02)
        except TimeoutError:
            machine.model.log.append(("timed out", ids(machine)))
        await machine.send("back")
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both_async(NestedCancelled, scenario)
    assert compiled == expected


class Idle(StateChart[Log]):
    """An async chart: ``poke`` goes to ``b``, ``go`` on to ``c``."""

    a = State(initial=True)
    b = State()
    c = State()
    poke = a.to(b)
    go = b.to(c) | a.to(a)
    back = c.to(a)

    async def on_go(self) -> None:
        self.model.log.append(("go from", ids(self)))


def test_C21_an_unawaited_send_to_an_idle_instance_queues_the_event() -> None:
    """C21/C6: ``send("poke")`` called in a running loop and never awaited (its coroutine
    closed). python-statemachine puts the event on the queue when ``send`` is called, so the
    next ``send("go")`` runs ``poke`` first (``a`` to ``b``, then ``go`` to ``c``)."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        sent = machine.send("poke")
        sent.close()
        await machine.send("go")
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both_async(Idle, scenario)
    assert expected == [("go from", []), ("configuration", ["c"])]
    assert compiled == expected
