"""Rules of the statechart runtime that a mutation sample of ``statecharts/_hierarchy.py``
(seed 2502) found untested: what a top-level final state's ``enter`` callbacks see, what a
strict chart's refusal of an undeclared name says, how ``error.execution`` taken by a wildcard
transition is handled after another name the wildcard matched, and how the generated source
names an ``In(...)`` guard's states and a dynamic microstep's outcome. Each test is named
after what a chart author observes and, where the rule is a semantic one, compares with
python-statemachine.

Rules checked here (docs/spec.md): C5, C8, C15, C16.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import TransitionNotAllowed

from statecharts import compile_chart


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []


class Ends(StateChart[Log]):
    """A compound state left for a top-level final state whose ``enter`` callback asks
    whether the machine has terminated."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)

    done = State(final=True)
    finish = work.to(done)

    def on_enter_done(self, machine: Any) -> None:
        self.model.log.append((machine.is_terminated, ids(machine)))


def test_c8_a_top_level_final_state_s_enter_callback_runs_before_the_machine_terminates() -> None:
    """python-statemachine stops its engine once the enter callbacks of a top-level final
    state ran: inside them the machine is in the final state, not terminated yet."""
    logs = []
    for machine in (Ends(Log()), compile_chart(Ends).create(Log())):
        machine.send("finish")
        assert machine.is_terminated
        logs.append(machine.model.log)
    assert logs[0] == logs[1] == [(False, ["done"])]


def jobs_chart() -> type[StateChart[Any]]:
    """A strict chart whose compound state takes undeclared names by their prefix behind a
    guard that never passes; declared anew at each call, so the code for those names is
    generated in the test that asks for it."""

    class Jobs(StateChart[Any]):
        allow_event_without_transition = False

        class desk(State.Compound):
            idle = State(initial=True)
            job = State()
            pick = idle.to(job, event="pick.*", cond="never")

        def never(self) -> bool:
            return False

    return Jobs


def test_c5_a_strict_chart_s_refusal_of_an_undeclared_name_names_that_event() -> None:
    """``TransitionNotAllowed`` for ``pick.1`` (no guard lets it through) says what
    python-statemachine's says: the event sent and the configuration it was refused in."""
    chart = jobs_chart()
    messages = []
    for machine in (chart(), compile_chart(chart).create()):
        for _ in range(2):  # generated on first use, then reused
            with pytest.raises(TransitionNotAllowed) as raised:
                machine.send("pick.1")
            messages.append((str(raised.value), str(raised.value.event)))
        assert ids(machine) == ["desk", "idle"]
    assert messages == [("Can't pick.1 when in Desk, Idle.", "pick.1")] * 4


class Errors(StateChart[Log]):
    """A compound state whose ``error.*`` transition takes both an undeclared ``error.other``
    and ``error.execution`` (declared by no transition), its ``on`` callback raising."""

    class desk(State.Compound):
        idle = State(initial=True)
        handled = State()
        trip = idle.to(idle, on="fail")
        handle = idle.to(handled, event="error.*", on="handler")
        reset = handled.to(idle)

    def fail(self) -> None:
        self.model.log.append("fail")
        raise ValueError("tripped")

    def handler(self, event: Any) -> None:
        self.model.log.append(("handler", str(event)))
        raise RuntimeError("handler failed")


def test_c15_an_on_error_handling_error_execution_cancels_it_after_error_other_ran() -> None:
    """``error.other`` first takes the wildcard transition (its ``on`` error caught as an
    event, the transition completed); ``error.execution`` then takes the same transition from
    the same configuration, and its ``on`` error is not caught again: the microstep is
    cancelled and the chart stays in ``idle``, as in python-statemachine."""
    trails = []
    for machine in (Errors(Log()), compile_chart(Errors).create(Log())):
        machine.send("error.other")
        steps = [ids(machine)]
        machine.send("reset")
        machine.send("trip")
        steps.append(ids(machine))
        trails.append((steps, machine.model.log))
    expected_log = [("handler", "error.other"), "fail", ("handler", "error.execution")]
    assert trails[0] == trails[1] == ([["desk", "handled"], ["desk", "idle"]], expected_log)


class Regions(StateChart[Any]):
    """An ``In(...)`` guard in one region of a parallel state, naming a state of the other."""

    class r(State.Parallel):
        class x(State.Compound):
            a = State(initial=True)
            a2 = State()
            go = a.to(a2, cond="In('b')")
            back = a2.to(a)

        class y(State.Compound):
            b = State(initial=True)
            b2 = State()
            hop = b.to(b2)
            hop_back = b2.to(b)


def test_c16_an_in_guard_reads_one_constant_named_after_its_states_in_every_function() -> None:
    """A state's function and its positional variant test the same state set, through one
    constant named after it (``IN_b``), not a second copy of it (``IN_b_2``)."""
    chart = compile_chart(Regions)
    tested = re.findall(r"_in_states\(inst, (\w+)\)", chart.source())
    assert len(tested) >= 2
    assert set(tested) == {"IN_b"}
    trails = []
    for machine in (Regions(), chart.create()):
        machine.send("go")
        trail = [ids(machine)]
        machine.send("back")
        machine.send("hop")
        machine.send("go")  # b is no longer active: the guard is false
        trails.append([*trail, ids(machine)])
    assert trails[0] == trails[1] == [["a2", "b", "r", "x", "y"], ["a", "b2", "r", "x", "y"]]


def take_chart() -> type[StateChart[Any]]:
    """A compound state whose transition takes undeclared names by their prefix (declared
    anew at each call, so its code is generated in the test that sends one)."""

    class Take(StateChart[Any]):
        class desk(State.Compound):
            idle = State(initial=True)
            job = State()
            take = idle.to(job, event="job.*")
            rest = job.to(idle)

    return Take


def test_c16_a_microstep_for_undeclared_names_names_its_outcome_constants_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The microstep generated when ``job.1`` first runs (its source written under
    ``$STATECHARTS_SOURCE_DIR``, as tracebacks show it) builds its outcome from constants
    named as the rest of its ``DEF_`` constants: ``DEF_source``, ``DEF_target``,
    ``DEF_first``, ``DEF_taken``."""
    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(tmp_path))
    instance = compile_chart(take_chart()).create()
    outcome = instance.send("job.1")
    assert outcome.applied
    assert outcome.event == "job.1"
    assert outcome.target is not None
    assert outcome.target.id == "job"
    assert len(outcome.transitions) == 1
    sources = [path.read_text(encoding="utf-8") for path in tmp_path.iterdir()]
    returns = {
        line.strip()
        for source in sources
        for line in source.splitlines()
        if "_Outcome(True" in line
    }
    assert returns == {
        "return _Outcome(True, ev, DEF_source, DEF_target, DEF_first, None, DEF_taken)"
    }
