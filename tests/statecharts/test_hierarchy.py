"""Statecharts: compound, parallel and history states, eventless transitions and done.state
events run as python-statemachine's StateChart runs them (the differential test compares every
callback; these tests name each rule)."""

# Rules checked here (docs/spec.md): C13, C15.

from __future__ import annotations

from typing import Any

import pytest
from statemachine import HistoryState, State, StateChart
from statemachine.exceptions import TransitionNotAllowed

from statecharts import compile_chart

from .charts import Order, Pipeline, Player, Recorder, Wizard


def ids(states: Any) -> list[str]:
    return [state.id for state in states]


def test_compound_states_are_read_with_their_parents_and_kinds() -> None:
    chart = compile_chart(Order)
    assert chart.is_hierarchical
    assert chart.state("open").kind == "compound"
    assert chart.state("shopping").parent == "open"
    assert chart.state("browsing").parent == "shopping"
    assert ids(chart.children("open")) == ["shopping", "checkout", "paid"]
    assert chart.initial.id == "open"
    assert [t.initial for t in chart.transitions].count(True) == 2


def test_entering_a_compound_state_enters_its_initial_descendants() -> None:
    instance = compile_chart(Order).create(Recorder())
    assert ids(instance.configuration) == ["open", "shopping", "browsing"]
    assert instance.state.id == "browsing"


def test_a_parent_transition_applies_in_every_child() -> None:
    instance = compile_chart(Order).create(Recorder())
    instance.send("add")
    outcome = instance.send("cancel")
    assert outcome.transition is not None
    assert outcome.transition.source == "open"
    assert ids(instance.configuration) == ["closed"]
    assert instance.is_terminated


def test_reaching_a_compound_final_state_raises_done_state_in_the_same_macrostep() -> None:
    instance = compile_chart(Order).create(Recorder())
    instance.send("proceed")
    outcome = instance.send("pay")
    assert [t.id for t in outcome.transitions] == [
        "checkout:pay:paid",
        "open:done_state_open|done.state.open:closed",
    ]
    assert instance.is_terminated


def test_parallel_regions_are_all_active_in_document_order() -> None:
    instance = compile_chart(Player).create(Recorder())
    instance.send("play")
    assert ids(instance.configuration) == ["playing", "sound", "muted", "speed", "normal"]


def test_one_event_takes_a_transition_in_each_region() -> None:
    instance = compile_chart(Player).create(Recorder())
    instance.send("play")
    outcome = instance.send("toggle")
    assert [t.id for t in outcome.transitions] == ["muted:toggle:loud", "normal:toggle:slow"]
    assert ids(instance.configuration) == ["playing", "sound", "speed", "loud", "slow"]


def test_in_guards_see_the_other_regions() -> None:
    model = Recorder()
    model.ready = False
    instance = compile_chart(Player).create(model)
    instance.send("play")
    instance.send("toggle")  # sound: loud; speed stays normal (not ready)
    assert not instance.send("fade").applied  # loud -> quiet needs In('slow')
    model.ready = True
    instance.send("toggle")  # sound: muted; speed: slow
    instance.send("toggle")  # sound: loud; speed: normal
    instance.send("toggle")  # sound: muted; speed: slow
    instance.send("toggle")  # sound: loud; speed: normal
    assert ids(instance.configuration)[-2:] == ["loud", "normal"]


def test_a_parallel_state_is_done_when_every_region_is_final() -> None:
    reference = Player(Recorder())
    instance = compile_chart(Player).create(Recorder())
    for event in ["play", "toggle", "fade"]:
        reference.send(event)
        instance.send(event)
        assert ids(instance.configuration) == ids(reference.configuration)
    assert ids(instance.configuration) == ["over"]


@pytest.mark.parametrize(
    ("back", "expected"),
    [("resume", ["steps", "basics", "name"]), ("restore", ["steps", "basics", "email"])],
)
def test_shallow_history_resumes_the_child_and_deep_history_the_leaf(
    back: str, expected: list[str]
) -> None:
    instance = compile_chart(Wizard).create(Recorder())
    for event in ["start", "next_field", "pause", back]:
        instance.send(event)
    assert ids(instance.configuration) == expected


def test_history_without_a_record_or_default_enters_what_python_statemachine_enters() -> None:
    # python-statemachine 3.2 enters nothing here (the history state declares no default)
    reference = Wizard(Recorder())
    reference.send("resume")
    instance = compile_chart(Wizard).create(Recorder())
    instance.send("resume")
    assert ids(instance.configuration) == ids(reference.configuration)


def test_eventless_transitions_run_until_none_is_enabled() -> None:
    model = Recorder()
    model.locked = True
    instance = compile_chart(Pipeline).create(model)
    assert ids(instance.configuration) == ["complete"]
    assert ("collect", None, None, None, None, (), (("total", 0),)) in model.log


def test_eventless_guards_are_tried_again_at_every_send() -> None:
    model = Recorder()
    instance = compile_chart(Pipeline).create(model)
    assert ids(instance.configuration) == ["work", "queued"]
    model.locked = True
    assert instance.send("nothing").reason == "terminated"
    assert ids(instance.configuration) == ["complete"]


def test_error_execution_is_handled_by_a_parent_transition() -> None:
    model = Recorder()
    model.locked = True
    model.ready = False
    instance = compile_chart(Pipeline).create(model)
    assert ids(instance.configuration) == ["work", "checked"]
    outcome = instance.send("retry", boom="again")
    assert ids(instance.configuration) == ["failed"]
    assert outcome.transitions[-1].id == "work:error_execution|error.execution:failed"


def test_a_strict_statechart_refuses_events_after_termination() -> None:
    class Strict(StateChart):
        allow_event_without_transition = False

        class box(State.Compound):
            a = State(initial=True)
            b = State(final=True)
            go = a.to(b)

        end = State(final=True)
        done_state_box = box.to(end)

    instance = compile_chart(Strict).create()
    instance.send("go")
    assert instance.is_terminated
    with pytest.raises(TransitionNotAllowed):
        instance.send("go")


def test_history_values_are_kept_per_instance() -> None:
    class Two(StateChart):
        class box(State.Compound):
            a = State(initial=True)
            b = State()
            h = HistoryState()
            flip = a.to(b) | b.to(a)

        out = State()
        leave = box.to(out)
        back = out.to(box.h)

    chart = compile_chart(Two)
    first, second = chart.create(), chart.create()
    for event in ["flip", "leave"]:
        first.send(event)
    second.send("leave")
    first.send("back")
    second.send("back")
    assert ids(first.configuration) == ["box", "b"]
    assert ids(second.configuration) == ["box", "a"]


def test_c13_undeclared_names_a_prefix_matches_share_code_and_report_their_own_name() -> None:
    class Calls(StateChart):
        class p(State.Compound):
            idle = State(initial=True)
            busy = State()
            call = idle.to(busy, event="tool.*") | busy.to(idle, event="tool.*")

    chart = compile_chart(Calls)
    instance = chart.create()
    first = instance.send("tool.a1")
    second = instance.send("tool.b2")
    assert (first.event, first.applied, second.event, second.applied) == (
        "tool.a1",
        True,
        "tool.b2",
        True,
    )
    source = chart.source()
    assert "tool.a1" not in source
    assert "tool.b2" not in source
    assert [state.id for state in instance.configuration] == ["p", "idle"]


class _Log:
    def __init__(self) -> None:
        self.log: list[Any] = []
        self.calls = 0


def _rerun_chart(default: bool, catch: bool, on_error_event: bool) -> type[StateChart[_Log]]:
    """A transition entering a compound state through its history state, whose ``on`` action
    raises on its second run (the rerun python-statemachine gives default history content):
    into the other region of a parallel state, or (``default``) into a compound state whose
    history state has a default transition whose own ``on`` raises too."""

    class Actions(StateChart[_Log]):
        catch_errors_as_events = catch

        def boom(self) -> None:
            raise RuntimeError("boom")

        def notify(self) -> None:
            self.model.calls += 1
            self.model.log.append(("notify", self.model.calls))
            if self.model.calls == 2:
                raise ValueError("notification failed")

        def fallback(self) -> None:
            self.model.log.append("fallback")
            raise ValueError("fallback failed")

        def done(self) -> None:
            self.model.log.append("done")

    class IntoRegion(Actions):
        class p(State.Parallel):
            class left(State.Compound):
                s1 = State(initial=True)
                s2 = State()
                m12 = s1.to(s2)

            class right(State.Compound):
                t1 = State(initial=True)
                t2 = State()
                h = HistoryState()
                m = t1.to(t2)

        if on_error_event:
            error_execution = p.left.to(p.right.h, on="notify", after="done")
        else:
            jump = p.left.to(p.right.h, on="notify", after="done")
        fail = p.left.s1.to(p.left.s2, on="boom")

    class WithDefault(Actions):
        s1 = State(initial=True)
        s2 = State()

        class c(State.Compound):
            t1 = State(initial=True)
            t2 = State()
            h = HistoryState()
            h.to(t2, on="fallback")
            m = t1.to(t2) | t2.to(t1)

        leave = c.to(s1) | s2.to(s1)

        if on_error_event:
            error_execution = s2.to(c.h, on="notify", after="done")
        else:
            jump = s1.to(c.h, on="notify", after="done")
        fail = s1.to(s2, on="boom")

    return WithDefault if default else IntoRegion


@pytest.mark.parametrize("default", [False, True])
@pytest.mark.parametrize("catch", [True, False])
@pytest.mark.parametrize("on_error_event", [False, True])
def test_c15_history_content_rerun_fails_as_python_statemachine_fails(
    default: bool, catch: bool, on_error_event: bool
) -> None:
    """C7/C15: python-statemachine reruns the ``on`` content of the transition entering a
    region through a history state without a record. Rerunning the microstep's own transition,
    each callback is isolated as its first run is (caught as ``error.execution``, the
    transition completes); a history default's content, or any content while handling
    ``error.execution``, cancels the microstep; without catching, the error reaches the
    caller."""
    declared = _rerun_chart(default, catch, on_error_event)
    event = "fail" if on_error_event else "jump"
    results = []
    for machine in (declared(_Log()), compile_chart(declared).create(_Log())):
        try:
            machine.send(event)
            raised = None
        except Exception as error:  # compared across the two engines
            raised = (type(error).__name__, str(error))
        results.append((raised, machine.model.log, ids(machine.configuration)))
    assert results[1] == results[0]
