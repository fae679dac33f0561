"""The compiled runtime behaves exactly as python-statemachine's engine.

Hypothesis generates sequences of declared and undeclared events with payloads (keyword and
positional, some asking a callback to raise) for every chart in ``charts.DIFFERENTIAL``. Each
sequence runs on python-statemachine's engine and on the compiled runtime; after every event
the test asserts the same state, the same applied/ignored decision, the same exception (type and
message) and the same callbacks called in the same order with the same arguments.
"""

# Rules checked here (docs/spec.md): C3, C17, M1.

from __future__ import annotations

from typing import Any

import hypothesis
import pytest
from hypothesis import given
from hypothesis import strategies as st

from statecharts import Outcome, VirtualClock, compile_chart, observe_outcomes

from .charts import DIFFERENTIAL, HIERARCHICAL, TIMED, VARIANTS

CHARTS = {**DIFFERENTIAL, **HIERARCHICAL, **VARIANTS}

UNDECLARED = ["nope", "go.now", "add.more", "promo.code.extra", "promo", "route.x"]
CALLBACK_NAMES = [
    "on_enter_state",
    "on_exit_state",
    "before_transition",
    "after_transition",
    "is_small",
    "is_large",
    "on_route",
    "count",
    "lights_off",
    "creak",
    "slam",
    "remember",
    "not_full",
    "check_amount",
    "on_add",
    "apply_code",
    "begin",
    "on_working",
    "wrap_up",
    "report",
    "record_error",
    "fix",
    "raise_more",
    "send_more",
    "on_enter_heating",
    "on_enter_baking",
    "prod",
    "halt",
]


class Watcher:
    """A python-statemachine listener that records which transitions were taken, with the
    keyword arguments of the event that took them: an event of the same name raised or sent
    from a callback (these charts add ``via=`` or other keywords) is not the one the test sent,
    and the compiled outcome reports the sent event only."""

    def __init__(self) -> None:
        self.taken: list[tuple[str, dict[str, Any]]] = []

    def on_transition(self, event: Any, event_data: Any) -> None:
        self.taken.append((str(event), dict(event_data.trigger_data.kwargs)))

    def took(self, event: str, kwargs: dict[str, Any]) -> bool:
        """Whether the sent event took a transition (python-statemachine passes on a subset of
        the keywords sent: it drops ``source``)."""
        return any(
            name == event
            and all(key in kwargs and kwargs[key] == value for key, value in got.items())
            for name, got in self.taken
        )


def payloads() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "amount": st.integers(min_value=-3, max_value=120),
            "boom": st.sampled_from(CALLBACK_NAMES),
            "code": st.sampled_from(["", "SPRING", "x"]),
            "degrees": st.integers(min_value=0, max_value=30),
            "extra": st.none() | st.booleans(),
            "source": st.just("user-supplied source is dropped"),
        },
    )


def steps(events: list[str]) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    send = st.tuples(
        st.just("send"),
        st.sampled_from(events) | st.sampled_from(events) | st.sampled_from(UNDECLARED),
        st.lists(st.integers(min_value=0, max_value=50), max_size=2).map(tuple) | st.just(()),
        payloads(),
    )
    flip = st.tuples(st.just("flip"), st.sampled_from(["locked", "ready"]))
    return st.lists(st.one_of(send, send, send, flip), max_size=25)


def matched(transition: Any, event: str) -> bool:
    """Whether one of a transition's event names takes the event: equal, ``*``, or a prefix
    (``go`` and ``go.*`` take ``go.now``)."""
    return any(
        name in (event, "*") or event.startswith(name[:-1] if name.endswith(".*") else name + ".")
        for name in transition.events
    )


def expected_reason(chart: Any, event: str, active: list[str], terminated: bool) -> str:
    """Why an event is ignored, read from the declaration alone (docs/statecharts.md, Outcome):
    a stopped chart says ``terminated``; otherwise ``unknown_event`` when neither a declared
    name nor a wildcard or prefix of any active state's transitions matches it,
    ``no_transition`` when only another state's transitions declare it, else
    ``guards_rejected``."""

    if terminated:
        return "terminated"
    here = [t for t in chart.transitions if t.source in active and matched(t, event)]
    if here:
        return "guards_rejected"
    if event in {name for t in chart.transitions for name in t.events}:
        return "no_transition"
    return "unknown_event"


def check_outcome(chart: Any, outcome: Outcome, event: str, instance: Any) -> None:
    """What an outcome must say of the event it answers, whatever the chart: the event's name
    and either the transitions taken (the first one this event's, from the state the outcome
    names) or, ignored, no transition and the reason the declaration gives for the
    configuration the event met (``failed`` when a callback raised and the chart catches errors
    as events). Eventless transitions a guard enabled since the last event run before it, so
    an ignored event met the configuration it leaves."""
    assert outcome.event == event
    assert type(outcome.applied) is bool
    assert bool(outcome) is outcome.applied
    if outcome.applied:
        assert outcome.reason is None
        # no target exactly when no state is active (a history state with nothing recorded
        # and no default, as python-statemachine leaves it)
        assert (outcome.target is None) == (not list(instance.configuration))
        assert outcome.transitions
        assert outcome.transitions[0] is outcome.transition
        assert outcome.transition is not None
        assert matched(outcome.transition, event)
        if not chart.is_hierarchical:
            assert outcome.transition.source == outcome.source.id
        return
    assert outcome.target is None
    assert outcome.transition is None
    if outcome.reason == "failed":
        assert chart.flags.catch_errors_as_events
        return
    assert outcome.transitions == ()
    met = [state.id for state in instance.configuration]
    assert outcome.source.id in met or not met  # a history with no default: none (C3)
    assert outcome.reason == expected_reason(chart, event, met, instance.is_terminated), met


def run(action: Any) -> tuple[Any, Any]:
    try:
        return action(), None
    except Exception as error:
        return None, (type(error).__name__, str(error))


@pytest.mark.parametrize("name", sorted(CHARTS))
@given(data=st.data())
def test_compiled_runtime_matches_python_statemachine(name: str, data: st.DataObject) -> None:
    declared, model_type, events = CHARTS[name]
    chart = compile_chart(declared)
    reference_model, compiled_model = model_type(), model_type()
    watcher = Watcher()
    reference = declared(reference_model, listeners=[watcher])
    instance = chart.create(compiled_model)
    assert compiled_model.log == reference_model.log
    assert [s.id for s in reference.configuration] == [s.id for s in instance.configuration]

    for step in data.draw(steps(events)):
        if step[0] == "flip":
            for model in (reference_model, compiled_model):
                setattr(model, step[1], not getattr(model, step[1]))
            continue
        _, event, args, kwargs = step
        watcher.taken.clear()
        _, reference_error = run(lambda e=event, a=args, k=kwargs: reference.send(e, *a, **k))
        outcome, compiled_error = run(lambda e=event, a=args, k=kwargs: instance.send(e, *a, **k))

        assert compiled_error == reference_error, (event, args, kwargs)
        assert [s.id for s in reference.configuration] == [s.id for s in instance.configuration]
        assert compiled_model.log == reference_model.log
        if reference_error is None:
            reference_applied = watcher.took(event, kwargs)
            assert outcome.applied == reference_applied, (event, args, kwargs)
            check_outcome(chart, outcome, event, instance)
            hypothesis.event("applied" if outcome.applied else f"ignored: {outcome.reason}")
        else:
            hypothesis.event(f"raised {reference_error[0]}")


class FakeTime:
    """python-statemachine's clock in a test: ``monotonic`` reads it, and ``sleep`` (its
    synchronous engine waiting for a delayed event) jumps to the earliest event queued."""

    def __init__(self, start: float) -> None:
        self.now = start
        self.engine: Any = None

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        heap = self.engine.external_queue.queue.queue if self.engine is not None else []
        waiting = [trigger.execution_time for trigger in heap if not trigger.cancelled]
        self.now = max(self.now, min(waiting)) if waiting else self.now + seconds


@pytest.mark.parametrize("name", sorted(TIMED))
@given(data=st.data())
def test_compiled_runtime_on_a_virtual_clock_matches_python_statemachine_with_delayed_events(
    name: str, data: st.DataObject
) -> None:
    """C17: delayed events, sent from callbacks, declared on an event and cancelled, run on a
    virtual clock as python-statemachine runs them on a clock of its own (its synchronous
    engine waits for them before ``send`` returns; the compiled instance runs them with
    ``run_until_idle``)."""
    declared, model_type, events = TIMED[name]
    chart = compile_chart(declared)
    start = 1000.0
    fake = FakeTime(start)
    reference_model, compiled_model = model_type(), model_type()
    watcher = Watcher()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("statemachine.event_data.monotonic", fake.monotonic)
        patch.setattr("statemachine.engines.sync.monotonic", fake.monotonic)
        patch.setattr("statemachine.engines.sync.sleep", fake.sleep)
        reference = declared(reference_model, listeners=[watcher])
        fake.engine = reference._engine
        clock = VirtualClock(start)
        instance = chart.create(compiled_model, clock=clock)
        instance.run_until_idle()
        assert compiled_model.log == reference_model.log
        for step in data.draw(steps(events)):
            if step[0] == "flip":
                for model in (reference_model, compiled_model):
                    setattr(model, step[1], not getattr(model, step[1]))
                continue
            _, event, args, kwargs = step
            watcher.taken.clear()
            applied: list[str] = []
            _, reference_error = run(lambda e=event, a=args, k=kwargs: reference.send(e, *a, **k))

            def record(_: Any, outcome: Outcome, applied: list[str] = applied) -> None:
                if outcome.applied:
                    applied.append(outcome.event)

            with observe_outcomes(record):
                _, compiled_error = run(
                    lambda e=event, a=args, k=kwargs: (
                        instance.send(e, *a, **k),
                        instance.run_until_idle(),
                    )
                )
            assert compiled_error == reference_error, (event, args, kwargs)
            assert [s.id for s in reference.configuration] == [
                s.id for s in instance.configuration
            ]
            assert compiled_model.log == reference_model.log
            # python-statemachine sums float seconds; the virtual clock keeps whole nanoseconds
            assert clock.now_ns() == round(fake.now * 1_000_000_000)
            if reference_error is None:
                taken = [name for name, _ in watcher.taken]  # every event, as ``applied`` lists
                assert (event in applied) == (event in taken), (event, args, kwargs)
                hypothesis.event("applied" if event in applied else "ignored")
