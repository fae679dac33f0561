"""Review round 10 of issue 10: the microstep change of 4284200's round (``_emit_microstep``
no longer re-assigns ``inst._node`` when the last state's arrival set it) attacked against
python-statemachine 3.2's own engines.

The change itself held: every chart tried (nested compound states entered in one
microstep, parallel regions entered together, shallow and deep history with and without
defaults, final states in compound and parallel states, top-level final states, internal and
targetless transitions, error.execution handlers, callbacks sending events, each with every
callback in turn raising an ``Exception`` or a ``BaseException``, with errors caught as
events or not, sync and async, and with a ``prepare_event`` raising at each of its calls)
showed callbacks the same configuration and ``is_terminated`` and ended alike. The breaks
below are older, found by the same sweep, around the end of a top-level parallel state:

1. C11/C15 -- a ``BaseException`` raised by the ``enter`` callback of the final state that
   completes a top-level parallel state: python-statemachine never stops its engine (the
   final state's done.state events were never queued), so ``is_terminated`` stays false and a
   later event of the parallel state is taken; the compiled instance is terminated at once
   and ignores that event (``terminated``). Sync and async.
2. C7/C15 -- the macrostep completing a top-level parallel state fails (an ``after``
   callback of a strict chart, or a ``prepare_event`` raising while ``done.state`` is
   selected): python-statemachine stops its engine only at the end of its next macrostep, so
   ``is_terminated`` is false after the failed ``send`` and a strict chart drops the next event
   quietly (only the one after it raises ``TransitionNotAllowed``); the compiled instance is
   terminated at once and the strict chart raises for the next event already.
3. C15 -- with ``atomic_configuration_update`` (``StateMachine``), a microstep entering the
   final states of all regions of a parallel state (through a deep history) raises
   ``done.state.<parallel>`` once per final state entered in python-statemachine (its
   configuration is the new one while entering), twice here; the compiled chart raises it once
   (it counts final regions on the configuration growing state by state, a ``StateChart``'s).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from statemachine import HistoryState, State, StateChart, StateMachine
from statemachine.exceptions import TransitionNotAllowed

from statecharts import compile_chart


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


# -- 1. a BaseException in the enter callback completing a top-level parallel state ---------


class Halt(BaseException):
    """An author's own ``BaseException`` (asyncio lets a ``KeyboardInterrupt`` stop its loop)."""


class Interrupt:
    """The model: the first ``enter`` of ``f2`` raises ``KeyboardInterrupt`` (or ``Halt``)."""

    def __init__(self) -> None:
        self.armed = True


class Interrupted(StateChart[Interrupt]):
    """A top-level parallel state of two regions, each with a final state; ``leave`` goes on
    to ``other``."""

    class p(State.Parallel):
        class r1(State.Compound):
            a1 = State(initial=True)
            f1 = State(final=True)
            fin1 = a1.to(f1)

        class r2(State.Compound):
            a2 = State(initial=True)
            f2 = State(final=True)
            fin2 = a2.to(f2)

    other = State(final=True)
    leave = p.to(other)

    def on_enter_f2(self) -> None:
        if self.model.armed:
            self.model.armed = False
            raise KeyboardInterrupt


class InterruptedAsync(Interrupted):
    async def on_enter_f2(self) -> None:  # type: ignore[override]
        if self.model.armed:
            self.model.armed = False
            raise Halt


def _interrupted_sync(make: Any) -> list[Any]:
    machine = make(Interrupt())
    machine.send("fin1")
    with pytest.raises(KeyboardInterrupt):
        machine.send("fin2")
    seen: list[Any] = [ids(machine), machine.is_terminated]
    machine.send("leave")
    return [*seen, ids(machine), machine.is_terminated]


def _interrupted_async(make: Any) -> list[Any]:
    async def scenario() -> list[Any]:
        machine = make(Interrupt())
        await machine.activate_initial_state()
        await machine.send("fin1")
        with pytest.raises(Halt):
            await machine.send("fin2")
        seen: list[Any] = [ids(machine), machine.is_terminated]
        await machine.send("leave")
        return [*seen, ids(machine), machine.is_terminated]

    return asyncio.run(scenario())


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_c15_a_base_exception_entering_the_last_final_region_leaves_the_machine_running(
    variant: str,
) -> None:
    """The final state ``f2`` completes the top-level parallel ``p`` but its ``enter``
    raises a ``BaseException``: python-statemachine leaves ``f2`` entered (C11) yet never
    reaches its final-state handling, so its engine runs on: ``is_terminated`` is false and
    ``leave`` is taken. The compiled instance is terminated and ignores ``leave``."""
    declared, scenario = (
        (Interrupted, _interrupted_sync)
        if variant == "sync"
        else (InterruptedAsync, _interrupted_async)
    )
    reference = scenario(declared)
    assert reference == [["f1", "f2", "p", "r1", "r2"], False, ["other"], True]
    assert scenario(compile_chart(declared).create) == reference


# -- 2. the macrostep completing a top-level parallel state fails ----------------------------


class StrictAfter(StateMachine):
    """A strict chart (``StateMachine``'s flags): the ``after`` callback of ``fin2``, the
    transition completing the top-level parallel ``p``, raises."""

    class p(State.Parallel):
        class r1(State.Compound):
            a1 = State(initial=True)
            f1 = State(final=True)
            fin1 = a1.to(f1)

        class r2(State.Compound):
            a2 = State(initial=True)
            f2 = State(final=True)
            fin2 = a2.to(f2, after="boom")

    other = State(final=True)
    leave = p.to(other)

    def boom(self) -> None:
        raise ValueError("boom")


class PreparedDone(StateChart[Any]):
    """A ``StateChart`` (errors caught as events) whose ``prepare_event`` raises for
    ``done.state.p``, the event the completed top-level parallel ``p`` raises, while the
    guard of its (never enabled) transition is checked: a failure while transitions are
    selected, which reaches the sender (C7)."""

    class p(State.Parallel):
        class r1(State.Compound):
            a1 = State(initial=True)
            f1 = State(final=True)
            fin1 = a1.to(f1)

        class r2(State.Compound):
            a2 = State(initial=True)
            f2 = State(final=True)
            fin2 = a2.to(f2)

    other = State(final=True)
    leave = p.to(other)
    done_state_p = p.to(other, cond="never")

    def never(self) -> bool:
        return False

    def prepare_event(self, event: Any) -> dict[str, Any]:
        if str(event) == "done.state.p":
            raise ValueError("boom")
        return {}


def _failed_completion(make: Any) -> list[Any]:
    machine = make()
    machine.send("fin1")
    with pytest.raises(ValueError, match="boom"):
        machine.send("fin2")
    seen: list[Any] = [ids(machine), machine.is_terminated]
    for _ in range(2):
        try:
            machine.send("leave")
            seen.append("leave dropped")
        except TransitionNotAllowed as error:
            seen.append(f"refused: {error}")
    return [*seen, machine.is_terminated]


@pytest.mark.parametrize("declared", [StrictAfter, PreparedDone])
def test_c15_a_failed_macrostep_completing_a_top_level_parallel_terminates_only_after_the_next(
    declared: type[StateChart[Any]],
) -> None:
    """python-statemachine stops its engine for a completed top-level parallel state at the
    end of the macrostep; when that macrostep fails it stops at the end of the next one, run
    by the next ``send``, whose event is dropped quietly: ``is_terminated`` is false between
    the two sends, and a strict chart raises ``TransitionNotAllowed`` only for the event after.
    The compiled instance is terminated as soon as the failed ``send`` returns."""
    reference = _failed_completion(declared)
    assert reference[:3] == [["f1", "f2", "p", "r1", "r2"], False, "leave dropped"]
    assert _failed_completion(compile_chart(declared).create) == reference


# -- 3. done.state of a parallel state under atomic configuration updates ---------------------


class Log:
    def __init__(self) -> None:
        self.log: list[str] = []


class Regions(StateMachine):
    """``StateMachine``'s flags (the configuration switched at once, before the entries):
    ``resume`` enters ``c`` through its deep history, which recorded both regions of ``p`` in
    their final states; each ``done.state.p`` is counted by a targetless transition."""

    idle = State(initial=True)

    class c(State.Compound):
        class p(State.Parallel):
            class r1(State.Compound):
                a1 = State(initial=True)
                f1 = State(final=True)
                fin1 = a1.to(f1)

            class r2(State.Compound):
                a2 = State(initial=True)
                f2 = State(final=True)
                fin2 = a2.to(f2)

        h = HistoryState(type="deep")

    finished = c.to(None, event="done.state.p", on="counted")
    go = idle.to(c)
    leave = c.to(idle)
    resume = idle.to(c.h)

    def counted(self) -> None:
        self.model.log.append("done.state.p")


def test_c15_an_atomic_chart_raises_done_state_of_a_parallel_for_each_final_region_entered() -> (
    None
):
    """python-statemachine asks whether the parallel state is final on its configuration of the
    moment, the new one under ``atomic_configuration_update``: entering ``f1`` and ``f2`` in one
    microstep raises ``done.state.p`` at each, so ``resume`` counts it twice (three in all)."""
    logs = []
    for machine in (Regions(Log()), compile_chart(Regions).create(Log())):
        for event in ("go", "fin1", "fin2", "leave", "resume"):
            machine.send(event)
        logs.append((ids(machine), machine.model.log))
    assert logs[0] == (["c", "f1", "f2", "p", "r1", "r2"], ["done.state.p"] * 3)
    assert logs[1] == logs[0]
