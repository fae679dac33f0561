"""Details the mutation sample of ``statecharts/_runtime.py`` (seed 4201) found untested: the
outcome of an async instance's first event when entering the initial state ended it, the
outcome an observer sees of a strict chart's internal event no guard admits, the delay of an
undeclared event sent with options, and which instances' due events ``run_until_idle`` runs.

Rules checked here (docs/spec.md): C11, C15, C16, C20.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from statemachine import State, StateChart, StateMachine

from statecharts import VirtualClock, compile_chart, observe_outcomes


def ids(instance: Any) -> list[str]:
    return sorted(state.id for state in instance.configuration)


# -- an async instance whose initial entry ends it ----------------------------------------------


class EndsOnEntry(StateChart[Any]):
    """An async chart whose initial state leaves at once, eventlessly, for a final state."""

    a = State(initial=True)
    done = State(final=True)
    a.to(done)
    go = a.to.itself()

    async def on_enter_a(self) -> None:
        await asyncio.sleep(0)


def test_first_event_of_an_async_instance_its_initial_entry_ended_is_dropped_as_terminated() -> (
    None
):
    """The first event enters the initial configuration, which ends the instance: the event
    is not taken, and its outcome says so (python-statemachine returns ``None`` for it)."""

    async def declared() -> tuple[Any, list[str]]:
        machine = EndsOnEntry()
        return await machine.send("go"), ids(machine)

    async def compiled() -> tuple[Any, list[str]]:
        instance = compile_chart(EndsOnEntry).create()
        return await instance.send("go"), ids(instance)

    assert asyncio.run(declared()) == (None, ["done"])
    outcome, configuration = asyncio.run(compiled())
    assert configuration == ["done"]
    assert (outcome.applied, outcome.event, outcome.reason) == (False, "go", "terminated")


def test_first_sync_send_of_an_async_instance_its_initial_entry_ended_is_dropped() -> None:
    """The same without an event loop: ``send`` runs to completion and answers alike."""
    instance = compile_chart(EndsOnEntry).create()
    outcome = instance.send("go")
    assert (outcome.applied, outcome.event, outcome.reason) == (False, "go", "terminated")
    assert ids(instance) == ["done"]
    assert instance.is_terminated


class EndsOnEntryFlat(StateChart[Any]):
    """A flat async chart whose initial state's ``enter`` raises the event that ends it."""

    a = State(initial=True)
    done = State(final=True)
    finish = a.to(done)
    go = a.to.itself()

    async def on_enter_a(self) -> None:
        await self.raise_("finish")


def test_first_event_of_a_flat_async_instance_its_initial_entry_ended_is_dropped() -> None:
    """The internal event the initial ``enter`` raised runs first and ends the instance, so
    the event sent is dropped (python-statemachine's send returns ``None``)."""

    async def declared() -> tuple[Any, list[str]]:
        machine = EndsOnEntryFlat()
        return await machine.send("go"), ids(machine)

    async def compiled() -> tuple[Any, list[str]]:
        instance = compile_chart(EndsOnEntryFlat).create()
        return await instance.send("go"), ids(instance)

    assert asyncio.run(declared()) == (None, ["done"])
    outcome, configuration = asyncio.run(compiled())
    assert configuration == ["done"]
    assert (outcome.applied, outcome.event, outcome.reason) == (False, "go", "terminated")
    instance = compile_chart(EndsOnEntryFlat).create()
    assert instance.send("go").reason == "terminated"
    assert instance.is_terminated


# -- a strict chart's internal event its guards reject ------------------------------------------


class StrictProbe(StateMachine):
    """A strict chart (``allow_event_without_transition`` off) raising an internal event no
    guard admits: python-statemachine drops it rather than raising."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on="poke")
    probe = b.to(a, cond="never")

    def poke(self) -> None:
        self.raise_("probe")

    def never(self) -> bool:
        return False


def test_strict_internal_event_guards_reject_is_dropped_and_observed_by_its_own_name() -> None:
    declared = StrictProbe()
    declared.send("go")
    instance = compile_chart(StrictProbe).create()
    seen: list[tuple[str, bool, str | None, str]] = []
    with observe_outcomes(lambda _, o: seen.append((o.event, o.applied, o.reason, o.source.id))):
        outcome = instance.send("go")
    assert outcome.applied
    assert ids(instance) == ids(declared) == ["b"]
    assert seen == [("go", True, None, "a"), ("probe", False, "guards_rejected", "b")]


# -- the delay of an event sent with options ----------------------------------------------------


class Toggle(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)


def test_undeclared_event_sent_with_a_send_id_only_runs_now() -> None:
    """Without ``delay``, an event the chart does not declare has no delay of its own: it
    runs at once (ignored), nothing waits on the clock."""
    clock = VirtualClock()
    instance = compile_chart(Toggle).create(clock=clock)
    outcome = instance.send("nope", send_id="x")
    assert (outcome.event, outcome.reason) == ("nope", "unknown_event")
    assert instance.next_due() is None
    assert clock.next_due() is None
    assert clock.now() == 0.0


def test_declared_event_sent_with_a_send_id_only_runs_now() -> None:
    clock = VirtualClock()
    instance = compile_chart(Toggle).create(clock=clock)
    assert instance.send("go", send_id="x").applied
    assert ids(instance) == ["b"]
    assert instance.next_due() is None


# -- run_until_idle and other instances on the same clock ---------------------------------------


class KeepsOne(StateMachine):
    """``go``'s action queues two events; the first one's guard raises, which keeps the
    second queued (a chart without ``catch_errors_as_events``) until the instance runs
    again."""

    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="queue_two")
    boom = b.to.itself(cond="explode")
    tidy = b.to(c)
    back = c.to(a)

    def queue_two(self) -> None:
        self.send("boom")
        self.send("tidy")

    def explode(self) -> bool:
        raise ValueError("the guard")


def test_run_until_idle_leaves_other_instances_due_events_once_its_own_ran() -> None:
    """Its own events all run without advancing the clock: another instance's event, due
    now on the shared clock (kept behind a failure while a delayed event waits there), waits
    for that instance, or the clock, to run it."""
    clock = VirtualClock()
    chart = compile_chart(KeepsOne)
    mine, other = chart.create(clock=clock), chart.create(clock=clock)
    other.send("back", delay=1000)
    for instance in (mine, other):
        with pytest.raises(ValueError, match="the guard"):
            instance.send("go")
        assert ids(instance) == ["b"]
    assert mine.next_due() is None
    assert other.next_due() == 0.0
    mine.run_until_idle()
    assert ids(mine) == ["c"]
    assert mine.next_due() is None
    assert ids(other) == ["b"]
    assert other.next_due() == 0.0
    assert clock.now() == 0.0
    clock.run_until_idle()
    assert ids(other) == ["a"]
    assert clock.now() == 1.0
