"""Rules of the statechart runtime that a mutation sample of ``statecharts/_runtime.py``
(seed 2602) found untested; each test is named after what a chart author observes and
compares with python-statemachine. (The async one is in test_runtime_mutants_r10_async.py.)

Rules checked here (docs/spec.md): C5 (the processing loop and its queues).
"""

from __future__ import annotations

from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import TransitionNotAllowed

from statecharts import VirtualClock, compile_chart


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


class StrictHop(StateChart[Any]):
    """A strict chart whose initial state leaves at once by an eventless transition;
    ``go`` and ``back`` move between ``b`` and ``c``; ``kick`` (in ``b``) queues ``back``,
    which ``b`` does not allow, then ``later``."""

    allow_event_without_transition = False

    a = State(initial=True)
    b = State()
    c = State()
    a.to(b)
    go = b.to(c)
    back = c.to(b)
    later = b.to(b, internal=True, on="noted")
    kick = b.to(b, internal=True, on="kicked")

    def noted(self) -> None:
        self.model.log.append("later")

    def kicked(self) -> None:
        self.model.log.append("kicked")
        self.send("back")
        self.send("later")


class Model:
    """Where ``StrictHop``'s callbacks log."""

    def __init__(self) -> None:
        self.log: list[str] = []


def test_c5_after_an_eventless_transition_a_strict_chart_still_refuses_an_event_not_allowed() -> (
    None
):
    """The eventless transitions taken (and tried) in a macrostep leave the next external
    event an external one: on a strict chart, one no transition takes raises
    ``TransitionNotAllowed``, as python-statemachine raises it, and the instance stays put,
    whether it runs on a clock or not."""
    reference = StrictHop(Model())
    assert ids(reference) == ["b"]
    reference.send("go")
    with pytest.raises(TransitionNotAllowed) as expected:
        reference.send("go")
    chart = compile_chart(StrictHop)
    for clock in (None, VirtualClock()):
        instance = chart.create(Model(), clock=clock)
        assert ids(instance) == ["b"]
        instance.send("go")
        with pytest.raises(TransitionNotAllowed) as refused:
            instance.send("go")
        assert str(refused.value) == str(expected.value)
        assert ids(instance) == ids(reference) == ["c"]


def test_c5_an_event_a_strict_chart_refuses_after_an_eventless_transition_keeps_the_queue() -> (
    None
):
    """A queued event a strict chart refuses raises ``TransitionNotAllowed`` from the
    ``send`` that ran it and keeps the events queued behind it, as python-statemachine keeps
    them, also when an eventless transition was taken before: they run first at the next
    ``send``."""
    logs: list[list[str]] = []
    errors: list[str] = []
    chart = compile_chart(StrictHop)
    for machine in (StrictHop(Model()), chart.create(Model(), clock=VirtualClock())):
        assert ids(machine) == ["b"]
        with pytest.raises(TransitionNotAllowed) as refused:
            machine.send("kick")
        errors.append(str(refused.value))
        machine.model.log.append("raised")
        machine.send("later")
        logs.append(list(machine.model.log))
    assert errors[1] == errors[0] == "Can't Back when in B."
    assert logs[1] == logs[0] == ["kicked", "raised", "later", "later"]
