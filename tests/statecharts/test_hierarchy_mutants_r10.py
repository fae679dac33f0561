"""Rules of the statechart runtime that a mutation sample of ``statecharts/_hierarchy.py``
(seed 2604) found untested: the arguments a transition's ``after`` callbacks get, an
``after`` group failing while ``error.execution`` is handled, the transitions an outcome lists
when a history state's default transition is taken, and how much code ``Chart.source`` shows
for a chart of parallel regions. Each test is named after what a chart author observes and,
where the rule is a semantic one, compares with python-statemachine. (The generated sources
themselves are pinned by test_hierarchy_source.py.)

Rules checked here (docs/spec.md): C7, C8, C15, C16.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from statemachine import HistoryState, State, StateChart, StateMachine

from statecharts import compile_chart


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []


class Afters(StateChart[Log]):
    """Inside a compound state: ``go`` has a target, ``stay`` none; both have an ``after``
    callback recording the names of the arguments it is offered."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, after="offered")
        stay = b.to(None, after="offered")

    def offered(self, **kwargs: Any) -> None:
        self.model.log.append(sorted(kwargs))


def test_c8_only_a_targetless_transition_s_after_callbacks_get_the_configurations() -> None:
    """python-statemachine hands the configurations before and after the microstep
    (``previous_configuration``, ``new_configuration``) to the ``after`` callbacks of a
    targetless transition only; one with a target gets the usual arguments."""
    logs = []
    for machine in (Afters(Log()), compile_chart(Afters).create(Log())):
        machine.send("go")
        machine.send("stay")
        logs.append(machine.model.log)
    assert logs[1] == logs[0]
    usual = ["event", "event_data", "machine", "model", "source", "state", "target"]
    assert logs[0] == [
        [*usual, "transition"],
        sorted([*usual, "transition", "previous_configuration", "new_configuration"]),
    ]


class HandledAfter(StateChart[Log]):
    """``go``'s action fails; ``error.execution`` is handled by a targetless transition
    whose two ``after`` callbacks are ``first`` (which fails) and ``second``."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="boom")
        error_execution = b.to(None, after=["first", "second"])

    def boom(self) -> None:
        raise ValueError("boom")

    def first(self) -> None:
        self.model.log.append("first")
        raise KeyError("first")

    def second(self) -> None:
        self.model.log.append("second")


def test_c7_an_after_group_failing_while_error_execution_is_handled_stops_at_the_failure() -> None:
    """While ``error.execution`` is handled, a targetless transition's ``after`` callbacks
    run as one group, as python-statemachine runs them: the first failure ends the group
    (``second`` does not run) and is dropped, queueing no second ``error.execution``."""
    results = []
    for machine in (HandledAfter(Log()), compile_chart(HandledAfter).create(Log())):
        outcome = machine.send("go")
        results.append((machine.model.log, ids(machine)))
    assert results[1] == results[0] == (["first"], ["b", "work"])
    assert outcome.applied


class Resumes(StateChart[Log]):
    """``jump`` enters ``c`` through its history state, which has a declared default
    transition (to ``t2``) for when nothing is recorded."""

    s1 = State(initial=True)

    class c(State.Compound):
        t1 = State(initial=True)
        t2 = State()
        h = HistoryState()
        h.to(t2)
        m = t1.to(t2) | t2.to(t1)

    jump = s1.to(c.h)
    leave = c.to(s1)


def test_c15_an_outcome_lists_the_history_default_transition_it_took() -> None:
    """Entering a history state with nothing recorded takes its default transition; the
    outcome lists it after the event's own transition, as the microstep took them, and the
    configuration is python-statemachine's."""
    reference = Resumes(Log())
    reference.send("jump")
    instance = compile_chart(Resumes).create(Log())
    outcome = instance.send("jump")
    assert ids(instance) == ids(reference) == ["c", "t2"]
    assert [(t.source, t.target) for t in outcome.transitions] == [("s1", "h"), ("h", "t2")]


def regions(count: int) -> type[StateChart[Any]]:
    """A chart of ``count`` parallel regions, each toggled between two states by an event
    of its own: 2**count configurations, 2*count transitions."""
    body: dict[str, Any] = {}
    for n in range(count):
        off, on = State(f"off{n}", initial=True), State(f"on{n}")
        region = {f"off{n}": off, f"on{n}": on, f"flip{n}": off.to(on) | on.to(off)}
        body[f"r{n}"] = type(f"r{n}", (State.Compound,), region)
    parallel = type("grid", (State.Parallel,), body)
    return type("Grid", (StateChart,), {"grid": parallel})  # type: ignore[return-value]


def test_c16_the_source_shows_one_microstep_per_transition_not_per_configuration() -> None:
    """``Chart.source`` walks the configurations until it has shown every transition: for
    three parallel regions (8 configurations, 6 transitions) it shows one microstep
    function per transition and the initial entry (each with its variant for positional
    arguments), not one per configuration."""
    source = compile_chart(regions(3)).source()
    functions = re.findall(r"^def (\w+)\(", source, flags=re.MULTILINE)
    microsteps = [
        name
        for name in functions
        if ("__to__" in name or name.startswith("enter_")) and not name.endswith("__positional")
    ]
    assert len(microsteps) == 6 + 1
    for n in range(3):
        assert f"# {'off'}{n} --flip{n}--> on{n}" in source
        assert f"# on{n} --flip{n}--> off{n}" in source


class Completes(StateMachine):
    """A strict chart whose top-level parallel ``p`` completes with ``fin2``, whose ``after``
    callback raises ``poke`` (a targetless transition of ``p``), then fails when the model says
    so."""

    class p(State.Parallel):
        class r1(State.Compound):
            a1 = State(initial=True)
            f1 = State(final=True)
            fin1 = a1.to(f1)

        class r2(State.Compound):
            a2 = State(initial=True)
            f2 = State(final=True)
            fin2 = a2.to(f2, after="maybe_fail")

    other = State(final=True)
    leave = p.to(other)
    poke = p.to(None)

    def maybe_fail(self) -> None:
        self.raise_("poke")
        if self.model.fail:
            raise ValueError("boom")


class Failing:
    def __init__(self, fail: bool) -> None:
        self.fail = fail


def test_c15_a_machine_left_to_stop_drops_the_next_event_after_other_instances_ran_there() -> None:
    """After a failed macrostep completed a top-level parallel state, the next ``send``
    stops the machine first and drops its event quietly, as python-statemachine does, also
    once another instance of the chart took that event in the same configuration (the
    compiled chart's code for it, generated then, does not let ``send`` skip that first
    macrostep)."""
    chart = compile_chart(Completes)
    ran = chart.create(Failing(False))
    ran.send("fin1")
    ran.send("fin2")
    assert ran.is_terminated
    answers = []
    for machine in (Completes(Failing(True)), chart.create(Failing(True))):
        machine.send("fin1")
        with pytest.raises(ValueError, match="boom"):
            machine.send("fin2")
        answers.append(machine.is_terminated)
        outcome = machine.send("poke")
        answers.append((ids(machine), machine.is_terminated))
    assert answers[2:] == answers[:2] == [False, (["f1", "f2", "p", "r1", "r2"], True)]
    assert outcome.reason == "terminated"


# -- seed 2607 ---------------------------------------------------------------------------------


class Wild(StateChart[Log]):
    """A compound state with a wildcard transition whose guard records the event it is given
    (an undeclared name reaches it through the dynamic selection)."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        anything = a.to(b, event="*", cond="seen") | b.to(a, event="*", cond="seen")

    def seen(self, event: Any) -> bool:
        self.model.log.append(str(event))
        return True


def test_c8_a_wildcard_transition_s_guard_gets_the_undeclared_event_sent() -> None:
    """The guard of a wildcard transition taken for an undeclared name is given that name
    as ``event``, as python-statemachine gives it."""
    logs = []
    for machine in (Wild(Log()), compile_chart(Wild).create(Log())):
        machine.send("zap")
        machine.send("zip")
        logs.append((machine.model.log, ids(machine)))
    assert logs[1] == logs[0]
    assert logs[0][0] == ["zap", "zip"]


class Recorded(StateChart[Log]):
    """A top-level parallel state: region ``r1`` leaves its compound ``sub`` (recording its
    history) before reaching its final state; ``r2`` ends with ``fin2``."""

    class p(State.Parallel):
        class r1(State.Compound):
            class sub(State.Compound):
                s1 = State(initial=True)
                s2 = State()
                h = HistoryState()
                step = s1.to(s2)

            f1 = State(final=True)
            fin1 = sub.to(f1)

        class r2(State.Compound):
            a2 = State(initial=True)
            f2 = State(final=True)
            fin2 = a2.to(f2)


def test_c15_a_completed_parallel_state_stops_the_machine_with_history_recorded() -> None:
    """A top-level parallel state completed after a region recorded a history value stops
    the machine at the end of the macrostep, as python-statemachine's engine stops."""
    results = []
    for machine in (Recorded(Log()), compile_chart(Recorded).create(Log())):
        for event in ("step", "fin1", "fin2"):
            machine.send(event)
        results.append((ids(machine), machine.is_terminated))
    assert results[1] == results[0] == (["f1", "f2", "p", "r1", "r2"], True)
