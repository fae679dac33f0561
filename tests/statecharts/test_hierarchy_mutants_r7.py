"""Rules of the statechart runtime that a mutation sample of ``statecharts/_hierarchy.py``
(seed 8803) found untested: undeclared event names a prefix descriptor matches, what an
ignored event's outcome names, a raising ``after`` or validator in a compound chart, and the
errors and generated source a reader sees. Each test is named after what a chart author
observes and, where the rule is a semantic one, compares with python-statemachine.

Rules checked here (docs/spec.md): C4, C5, C7, C11, C15, C16, C19.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import InvalidStateValue, TransitionNotAllowed

from statecharts import compile_chart


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


def jobs_chart(strict: bool = False) -> type[StateChart[Any]]:
    """A compound state whose transitions take undeclared names by their prefix (``job.1``,
    ``task.1``), one of them behind a guard that never passes; declared anew at each call,
    so the code for those names is generated in the test that asks for it."""

    class Jobs(StateChart[Any]):
        allow_event_without_transition = not strict

        class desk(State.Compound):
            idle = State(initial=True)
            job = State()
            task = State()
            take_job = idle.to(job, event="job.*")
            take_task = idle.to(task, event="task.*")
            rest = job.to(idle) | task.to(idle)
            pick = idle.to(job, event="pick.*", cond="never")

        def never(self) -> bool:
            return False

    return Jobs


def trail(machine: Any, events: list[str]) -> list[Any]:
    found = []
    for event in events:
        machine.send(event)
        found.append(ids(machine))
    return found


def test_c4_undeclared_names_matched_by_different_prefixes_take_their_own_transitions() -> None:
    """From the same configuration, ``job.1`` takes the ``job.*`` transition and ``task.1``
    the ``task.*`` one (each with one candidate, chosen alike), as in python-statemachine."""
    chart = jobs_chart()
    events = ["job.1", "rest", "task.1", "rest", "job.2", "rest", "task.2"]
    expected = trail(chart(), events)
    assert expected[2] == ["desk", "task"]
    assert trail(compile_chart(chart).create(), events) == expected


def test_c5_an_undeclared_name_no_guard_lets_through_is_ignored_naming_the_event() -> None:
    chart = jobs_chart()
    reference = chart()
    instance = compile_chart(chart).create()
    reference.send("pick.1")
    for _ in range(2):  # generated on first use, then reused
        outcome = instance.send("pick.1")
        assert not outcome.applied
        assert outcome.event == "pick.1"
        assert outcome.reason == "guards_rejected"
        assert outcome.source.id == "idle"
    assert ids(instance) == ids(reference) == ["desk", "idle"]


def test_c5_a_strict_chart_refuses_an_undeclared_name_no_guard_lets_through() -> None:
    chart = jobs_chart(strict=True)
    reference = chart()
    instance = compile_chart(chart).create()
    with pytest.raises(TransitionNotAllowed):
        reference.send("pick.1")
    with pytest.raises(TransitionNotAllowed):
        instance.send("pick.1")
    assert ids(instance) == ids(reference) == ["desk", "idle"]


def test_c16_code_generated_for_an_undeclared_name_names_its_constants_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The microstep generated when ``job.1`` first runs (its source written under
    ``$STATECHARTS_SOURCE_DIR``, as tracebacks show it) names the transitions it reports the
    way the rest of the generated code does: ``DEF_source``, ``DEF_target``, ``DEF_first``."""
    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(tmp_path))
    instance = compile_chart(jobs_chart()).create()
    instance.send("job.1")
    sources = [path.read_text(encoding="utf-8") for path in tmp_path.iterdir()]
    microsteps = [source for source in sources if "DEF_source" in source]
    assert microsteps
    assert all("DEF_target" in source and "DEF_first" in source for source in microsteps)


class Finished(StateChart[Any]):
    """A compound state and a final top-level state; events after the end are dropped."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)

    done = State(final=True)
    finish = work.to(done)


def test_c5_an_event_after_the_chart_terminated_is_ignored_naming_the_event() -> None:
    reference = Finished()
    instance = compile_chart(Finished).create()
    reference.send("finish")
    instance.send("finish")
    reference.send("go")
    outcome = instance.send("go")
    assert not outcome.applied
    assert outcome.event == "go"
    assert outcome.reason == "terminated"
    assert ids(instance) == ids(reference) == ["done"]


def test_c19_resuming_in_a_state_that_is_not_atomic_is_refused_listing_the_atomic_states() -> None:
    with pytest.raises(InvalidStateValue) as raised:
        compile_chart(Finished).resume("work")
    assert "'work' is not an atomic state of Finished (states: a, b, done)" in str(raised.value)


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []


class LateFailure(StateChart[Log]):
    """A compound chart that catches errors as events, whose ``after`` callback raises; only
    the target of that transition handles ``error.execution``."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        c = State()
        go = a.to(b, after="boom")
        back = b.to(a) | c.to(a)
        error_execution = b.to(c, on="record")

    def boom(self) -> None:
        raise ValueError("after failed")

    def record(self, error: Any = None, source: Any = None) -> None:
        self.model.log.append((type(error).__name__, str(error), source.id))


def test_c7_a_raising_after_callback_leaves_the_transition_taken() -> None:
    """An ``after`` runs once the target is entered: its error, caught as
    ``error.execution``, is handled from the target, as in python-statemachine."""
    reference = LateFailure(Log())
    instance = compile_chart(LateFailure).create(Log())
    reference.send("go")
    instance.send("go")
    assert ids(instance) == ids(reference) == ["c", "work"]
    assert instance.model.log == reference.model.log == [("ValueError", "after failed", "b")]


class Kept(StateChart[Log]):
    """A compound chart's transition with a validator that raises, selected from events a
    callback queued (a validator's error reaches the sender even when errors are caught)."""

    class flow(State.Compound):
        a = State(initial=True)
        b = State()
        c = State()
        start = a.to(b, on="queue_two")
        go = b.to(c, validators="check")
        back = b.to(a) | c.to(a)
        look = a.to(a, on="seen") | b.to(b, on="seen")

    def queue_two(self) -> None:
        self.send("go")
        self.send("back")

    def check(self) -> None:
        raise ValueError("not yet")

    def seen(self, state: Any) -> None:
        self.model.log.append(state.id)


def test_c11_events_queued_behind_a_raising_validator_of_a_compound_chart_are_kept() -> None:
    """The validator's error reaches the sender and the events queued behind it run before
    the next event sent, as in python-statemachine."""
    trails = []
    for machine in (Kept(Log()), compile_chart(Kept).create(Log())):
        steps: list[Any] = []
        with pytest.raises(ValueError, match="not yet"):
            machine.send("start")
        steps.append(ids(machine))
        machine.send("look")  # "back" runs first, from b to a; then "look" in a
        steps.append(ids(machine))
        trails.append((steps, machine.model.log))
    assert trails[0] == trails[1] == ([["b", "flow"], ["a", "flow"]], ["a"])


class Moves(StateChart[Log]):
    """A compound state's transitions whose ``on`` callback asks for the transition."""

    class open(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="moved")
        back = b.to(a, on="moved")

    def moved(self, transition: Any) -> None:
        self.model.log.append((transition.source.id, transition.event, transition.target.id))


def test_c16_the_generated_source_names_a_declared_transition_after_its_id() -> None:
    """Each declared transition's constant in the generated source is named after the
    transition (``TRANSITION_a_go_b`` for ``a:go:b``), not like the start transition."""
    chart = compile_chart(Moves)
    source = chart.source()
    assert "transition=TRANSITION_a_go_b" in source
    assert "transition=TRANSITION_b_back_a" in source
    instance = chart.create(Log())
    instance.send("go")
    instance.send("back")
    reference = Moves(Log())
    reference.send("go")
    reference.send("back")
    assert instance.model.log == reference.model.log == [("a", "go", "b"), ("b", "back", "a")]


@pytest.mark.parametrize("strict", [False, True])
def test_c5_a_running_statechart_says_what_a_non_string_event_is(strict: bool) -> None:
    """Not only once terminated: from any configuration, an event that is not a ``str`` is
    a ``TypeError`` naming its type and value, strict chart or not."""
    instance = compile_chart(jobs_chart(strict=strict)).create()
    for _ in range(2):
        with pytest.raises(TypeError, match=r"^event must be a str, got int: 3$"):
            instance.send(3)  # type: ignore[arg-type]
    assert ids(instance) == ["desk", "idle"]


class Chosen(StateChart[Any]):
    """A compound state whose event has a guarded transition and a fallback after it, in a
    chart that does not catch errors as events."""

    catch_errors_as_events = False

    class box(State.Compound):
        a = State(initial=True)
        b = State()
        c = State()
        go = a.to(b, cond="ok") | a.to(c)
        back = b.to(a) | c.to(a)

    def ok(self) -> bool:
        return True

    def on_enter_b(self) -> None:
        pass


def test_c16_the_generated_source_shows_the_fallback_after_a_guarded_transition() -> None:
    """Every transition gets its microstep in ``Chart.source()``: the guard may refuse
    ``a --go [ok]--> b``, so ``a --go--> c`` is shown too."""
    lines = compile_chart(Chosen).source().splitlines()
    assert "    # a --go [ok]--> b" in lines
    assert "    # a --go--> c" in lines


def test_c16_the_generated_try_block_is_indented_one_level() -> None:
    lines = compile_chart(Chosen).source().splitlines()
    bodies = [lines[i + 1] for i, line in enumerate(lines) if line == "    try:"]
    assert bodies
    assert all(body.startswith(" " * 8) and body[8] != " " for body in bodies)


def test_c5_a_declared_event_the_configuration_has_no_transition_for_is_no_transition() -> None:
    instance = compile_chart(Finished).create()
    outcome = instance.send("go")
    assert outcome.applied
    outcome = instance.send("go")  # from b: the chart declares go, b has no transition for it
    assert not outcome.applied
    assert outcome.reason == "no_transition"
    assert outcome.event == "go"
