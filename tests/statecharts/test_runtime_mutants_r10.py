"""Rules of the statechart runtime that a mutation sample of ``statecharts/_runtime.py``
found untested; each test is named after what a chart author observes and
compares with python-statemachine. (The async one is in test_runtime_mutants_r10_async.py.)

Rules checked here (docs/spec.md): C5 (the processing loop and its queues), C7 (errors as
events), C11 (observers), C17 (delayed events and clocks), C19 (snapshots).

Seed 2602 and seed 2605 (measured on b657057).
"""

from __future__ import annotations

from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import TransitionNotAllowed

from statecharts import VirtualClock, compile_chart, observe_outcomes

from .test_runtime_r8 import Flag, ending_chart


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


# -- seed 2605 ---------------------------------------------------------------------------------


class Timed(StateChart[Any]):
    """A flat chart whose ``go`` action sends ``ping`` with a delay (its outcome kept in the
    model's log) and ``pong`` with a longer one; both are self transitions logging their
    name."""

    idle = State(initial=True)
    go = idle.to.itself(internal=True, on="sent")
    ping = idle.to.itself(internal=True, on="pinged")
    pong = idle.to.itself(internal=True, on="ponged")

    def sent(self) -> None:
        self.model.log.append(self.send("ping", delay=10))
        self.send("pong", delay=20)

    def pinged(self) -> None:
        self.model.log.append("ping")

    def ponged(self) -> None:
        self.model.log.append("pong")


class RecordingClock:
    """A clock that only records the wake-ups asked of it; the test runs them."""

    def __init__(self) -> None:
        self.wakes: list[tuple[Any, float, Any]] = []

    def now(self) -> float:
        return 0.0

    def wake(self, instance: Any, due: float, order: int) -> None:
        self.wakes.append((instance, due, order))


def test_c17_a_queued_outcome_is_not_applied_and_says_queued() -> None:
    """An event a callback sends with a delay, and one sent with a delay not due yet, answer
    an outcome whose ``applied`` is ``False`` (a bool, as every outcome's) and whose reason
    is ``queued``."""
    instance = compile_chart(Timed).create(Model(), clock=VirtualClock())
    instance.send("go")
    (from_callback,) = instance.model.log
    later = instance.send("pong", delay=5)
    for outcome in (from_callback, later):
        assert outcome.applied is False
        assert (outcome.reason, outcome.target, outcome.transition) == ("queued", None, None)
    assert from_callback.event == "ping"
    assert later.event == "pong"


def test_c17_a_clock_is_asked_to_wake_an_instance_with_the_order_its_event_was_sent() -> None:
    """``wake(instance, due, order)`` gets the order the earliest delayed event was sent in
    (an int, later events getting larger ones), and ``run_due(order)`` at the due time runs
    it."""
    clock = RecordingClock()
    instance = compile_chart(Timed).create(Model(), clock=clock)
    instance.send("go")
    ((woken, due, order),) = clock.wakes
    assert woken is instance
    assert due == pytest.approx(0.010)
    assert isinstance(order, int)
    clock.now = lambda: 0.010  # type: ignore[method-assign]
    instance.run_due(order)
    assert instance.model.log[1:] == ["ping"]
    (_, due_next, order_next) = clock.wakes[1]
    assert due_next == pytest.approx(0.020)
    assert isinstance(order_next, int)
    assert order_next > order


def test_c17_a_clock_without_wake_is_refused_naming_what_a_clock_needs() -> None:
    """``create(clock=...)`` refuses an object that has ``now()`` but no ``wake``, with a
    ``TypeError`` saying what a clock must have, not an ``AttributeError``."""

    class NowOnly:
        def now(self) -> float:
            return 0.0

    with pytest.raises(TypeError, match=r"clock must be .* with now\(\) and wake\("):
        compile_chart(Timed).create(Model(), clock=NowOnly())  # type: ignore[arg-type]


def test_c19_a_chart_restored_without_a_model_gets_a_fresh_model() -> None:
    """``Chart.restore(snapshot)`` without a model gives the instance a fresh ``Model()``, as
    ``create()`` does and as python-statemachine gives a machine built without one."""
    chart = compile_chart(StrictHop)
    original = chart.create()
    snapshot = original.snapshot()
    restored, again = chart.restore(snapshot), chart.restore(snapshot)
    assert type(restored.model) is type(StrictHop().model)  # python-statemachine's Model
    assert restored.model is not again.model
    assert restored.model is not original.model
    assert ids(restored) == ids(again) == ["b"]


class Promo(StateChart[Any]):
    """A flat chart (errors caught as events): ``promo``'s action fails, and
    ``error.execution`` leads on to ``failed``; ``promo.code`` reaches ``promo`` by prefix."""

    a = State(initial=True)
    b = State()
    failed = State()
    promo = a.to(b, on="charge")
    error_execution = b.to(failed)
    back = failed.to(a)

    def charge(self) -> None:
        raise ValueError("declined")


def test_c7_an_event_matched_by_prefix_whose_action_fails_queues_error_execution() -> None:
    """An event name reaching a transition by prefix (``promo.code`` for ``promo``) is not
    ``error.execution``: its failing action queues ``error.execution``, which the chart
    handles, as python-statemachine does."""
    reference = Promo()
    reference.send("promo.code")
    instance = compile_chart(Promo).create()
    outcome = instance.send("promo.code")
    assert ids(instance) == ids(reference) == ["failed"]
    assert outcome.applied
    assert [(t.source, t.target) for t in outcome.transitions] == [("a", "b"), ("b", "failed")]


class StrictRaise(StateChart[Any]):
    """A strict flat chart with an eventless transition (run by the processing loop):
    ``go``'s action raises ``stray``, an event no transition of ``b`` takes, then ``on``."""

    allow_event_without_transition = False

    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="raising")
    stray = a.to(a)
    on = b.to(c)
    c.to(a, cond="never")

    def raising(self) -> None:
        self.raise_("stray")
        self.raise_("on")

    def never(self) -> bool:
        return False


def test_c5_an_internal_event_a_strict_chart_has_no_transition_for_is_dropped() -> None:
    """A strict chart refuses external events no transition takes, but drops internal ones
    quietly, as python-statemachine does: the next internal event still runs."""
    reference = StrictRaise()
    reference.send("go")
    instance = compile_chart(StrictRaise).create()
    outcome = instance.send("go")
    assert ids(instance) == ids(reference) == ["c"]
    assert [(t.source, t.target) for t in outcome.transitions] == [("a", "b"), ("b", "c")]


def test_c11_observers_see_an_event_dropped_because_the_instance_ended() -> None:
    """An event dropped quietly because the macrostep before it ended the instance is
    reported to observers too, with its ``terminated`` outcome."""
    declared = ending_chart(hierarchical=True, strict=False)
    model = Flag()
    instance = compile_chart(declared).create(model)
    model.flag = True
    seen: list[tuple[str, bool, Any]] = []
    with observe_outcomes(
        lambda inst, outcome: seen.append((outcome.event, outcome.applied, outcome.reason))
    ):
        outcome = instance.send("kick")
    assert outcome.reason == "terminated"
    assert [entry for entry in seen if entry[0] == "kick"] == [("kick", False, "terminated")]


# -- found on the way: an observer that raises -------------------------------------------------


class Notes:
    """The callbacks of the observed charts: ``go``'s action queues ``note``, which logs."""

    def queue_note(self) -> None:
        self.send("note")  # type: ignore[attr-defined]

    def noted(self) -> None:
        self.model.log.append("note")  # type: ignore[attr-defined]

    def never(self) -> bool:
        return False


class Observed(Notes, StateChart[Any]):
    """``go`` and ``back`` between ``a`` and ``b``; ``go``'s action queues ``note``."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on="queue_note")
    back = b.to(a)
    note = b.to.itself(internal=True, on="noted")


class ObservedEventless(Notes, StateChart[Any]):
    """The same, with an eventless transition from ``b`` (so the chart runs the processing
    loop, and ``go`` from ``a`` takes its short way)."""

    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="queue_note")
    back = b.to(a)
    note = b.to.itself(internal=True, on="noted")
    b.to(c, cond="never")
    c.to(a)


class ObservedNested(Notes, StateChart[Any]):
    """The same inside a compound state."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="queue_note")
        back = b.to(a)
        note = b.to.itself(internal=True, on="noted")


class Refused(Exception):
    """What the failing observer raises."""


@pytest.mark.parametrize("declared", [Observed, ObservedEventless, ObservedNested])
def test_c11_an_observer_that_raises_leaves_the_instance_usable(
    declared: type[StateChart[Any]],
) -> None:
    """An exception an observer raises reaches the sender; the event stays taken and the
    instance is not left busy: the next ``send`` runs (it is not queued for ever). Events a
    callback queued during the failed send (``note``) are dropped, as after a failing
    callback."""

    def failing(instance: Any, outcome: Any) -> None:
        if outcome.event == "go":
            raise Refused(outcome.event)

    instance = compile_chart(declared).create(Model())
    with observe_outcomes(failing), pytest.raises(Refused):
        instance.send("go")
    assert "b" in ids(instance)
    outcome = instance.send("back")
    assert outcome.applied
    assert "a" in ids(instance)
    assert instance.model.log == []


# -- seed 2608 ---------------------------------------------------------------------------------


def test_c17_a_stale_wake_up_runs_nothing_and_asks_again_in_turn() -> None:
    """``run_due(order)`` for a wake-up that is not the earliest timer's (its timer ran or
    was dropped since) runs nothing, even when the earliest timer is due, and asks the clock
    again for that timer with its own order, so instances sharing a clock keep the order
    their events were sent in."""
    clock = RecordingClock()
    instance = compile_chart(Timed).create(Model(), clock=clock)
    instance.send("go")
    ((_, due, order),) = clock.wakes
    clock.now = lambda: 0.010  # type: ignore[method-assign]
    instance.run_due(order + 1000)  # a stale wake-up
    assert instance.model.log[1:] == []
    assert clock.wakes[-1] == (instance, due, order)
    instance.run_due(order)
    assert instance.model.log[1:] == ["ping"]


class WildFlat(StateChart[Any]):
    """A flat chart (errors caught as events) whose wildcard transition's ``before`` fails."""

    a = State(initial=True)
    b = State()
    anything = a.to(b, event="*", before="boom") | b.to(a, event="*")

    def boom(self) -> None:
        raise ValueError("boom")


def test_c7_a_wildcard_transition_whose_before_fails_reports_its_source() -> None:
    """An undeclared event taken by a wildcard transition whose ``before`` fails cancels the
    transition, as python-statemachine does (errors caught as events): the instance stays in
    the source, and the outcome, not applied (``failed``), names that source."""
    reference = WildFlat()
    reference.send("zap")
    instance = compile_chart(WildFlat).create()
    outcome = instance.send("zap")
    assert ids(instance) == ids(reference) == ["a"]
    assert (outcome.applied, outcome.event, outcome.reason) == (False, "zap", "failed")
    assert outcome.source is not None
    assert outcome.source.id == "a"


class ClassGuarded(StateChart[Any]):
    """A guard that is a class method of the chart, asking its ``cls``."""

    a = State(initial=True)
    b = State()
    go = a.to(b, cond="named") | b.to(a)

    @classmethod
    def named(cls) -> bool:
        return cls.__name__ == "ClassGuarded"


def test_c8_a_class_method_guard_gets_the_chart_s_class() -> None:
    """A class method of the chart used as a guard is bound to the chart's class, as
    python-statemachine binds it: ``cls`` is the declared chart."""
    reference, instance = ClassGuarded(), compile_chart(ClassGuarded).create()
    reference.send("go")
    instance.send("go")
    assert ids(instance) == ids(reference) == ["b"]


# -- seed 2609 ---------------------------------------------------------------------------------


class HopThenSlide(StateChart[Any]):
    """``go`` leads to ``b``, whose eventless transition's guard (never true) raises ``hop``
    and sends ``probe`` the first time it is asked; ``hop`` leads to ``c``, whose eventless
    transition slides on to ``d`` at once; ``probe`` stays in ``d`` but leads from ``c`` to
    ``e``."""

    a = State(initial=True)
    b = State()
    c = State()
    d = State()
    e = State()
    go = a.to(b)
    b.to(e, cond="never")
    hop = b.to(c)
    c.to(d)
    back = d.to(a) | e.to(a)
    probe = c.to(e) | d.to.itself(internal=True)
    asked = False

    def never(self) -> bool:
        if not self.asked:
            self.asked = True
            self.raise_("hop")
            self.send("probe")
        return False


def test_c5_eventless_transitions_run_after_an_internal_event_in_the_same_macrostep() -> None:
    """After an event whose target's eventless transitions are none enabled (their guard
    raising an internal event and sending an external one), the internal event runs and the
    eventless transitions of the state it reached are taken in the same macrostep, before the
    external event, as python-statemachine takes them."""
    reference = HopThenSlide()
    reference.send("go")
    instance = compile_chart(HopThenSlide).create()
    outcome = instance.send("go")
    assert ids(instance) == ids(reference) == ["d"]
    assert [(t.source, t.target) for t in outcome.transitions] == [
        ("a", "b"),
        ("b", "c"),
        ("c", "d"),
    ]  # (``probe`` ran in ``d`` afterwards, as an event of its own: no move to ``e``)
