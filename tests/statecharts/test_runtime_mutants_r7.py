"""Rules of the statechart runtime that mutation samples of ``statecharts/_runtime.py``
(seeds 6421 and 7717) found untested; each test is named after what a chart author observes
and, where the rule is a semantic one, compares with python-statemachine. (Async charts:
test_runtime_mutants_r7_async.py.)

Rules checked here (docs/spec.md): C4, C5, C7, C8, C11, C16, C17, C20.
"""

from __future__ import annotations

from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import TransitionNotAllowed

from statecharts import VirtualClock, compile_chart, observe_outcomes


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


def test_c20_an_init_that_skips_the_hand_over_is_refused_naming_the_declared_class() -> None:
    """The error names the chart as declared (``Sometimes``), not the compiled instance
    class behind it."""

    class Sometimes(StateChart[Any]):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def __init__(self, start: bool = True) -> None:
            self.started = start
            if start:
                super().__init__()

    chart = compile_chart(Sometimes)
    with pytest.raises(TypeError) as raised:
        chart.create(False)
    assert str(raised.value) == (
        "Sometimes.__init__ returned without calling super().__init__(...), "
        "so no state was entered"
    )


class Preparing:
    """A model with a ``prepare_event`` of its own."""

    def __init__(self) -> None:
        self.log: list[Any] = []
        self.prepared = 0

    def prepare_event(self, event: Any) -> dict[str, Any]:
        self.prepared += 1
        return {"owner": "model", "by_model": str(event)}


class Prepared(StateChart[Preparing]):
    """A chart whose ``prepare_event`` and its model's both add keyword arguments."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    def prepare_event(self, event: Any) -> dict[str, Any]:
        return {"owner": "chart", "by_chart": str(event)}

    def record(self, owner: str, by_chart: str = "-", by_model: str = "-") -> None:
        self.model.log.append((owner, by_chart, by_model))


def test_c8_the_model_s_prepare_event_runs_on_the_model_after_the_chart_s() -> None:
    """Both hooks run, the model's on the model and after the chart's (so its value of a
    keyword both give wins), as in python-statemachine."""
    reference_model, model = Preparing(), Preparing()
    Prepared(reference_model).send("go")
    compile_chart(Prepared).create(model).send("go")
    assert model.log == reference_model.log == [("model", "go", "go")]
    assert model.prepared == reference_model.prepared > 0


class Payload(StateChart[Any]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.log: list[Any] = []
        super().__init__(*args, **kwargs)

    def record(self, *args: Any, amount: int = 0) -> None:
        self.log.append((args, amount))


@pytest.mark.parametrize(
    "options", [{"delay": 0}, {"internal": False}, {"delay": 0, "internal": True}]
)
def test_c4_a_send_with_options_that_runs_at_once_keeps_its_positional_payload(
    options: dict[str, Any],
) -> None:
    """``delay=0`` or ``internal=...`` from outside a callback runs the event at once, with
    the positional payload as well as the keywords, as python-statemachine runs it."""
    reference = Payload()
    reference.send("go", 1, 2, amount=3, **options)
    instance: Any = compile_chart(Payload).create()
    instance.send("go", 1, 2, amount=3, **options)
    assert instance.log == reference.log == [((1, 2), 3)]


class StrictWork(StateChart[Any]):
    """A strict hierarchical chart whose transition raises an internal event no guard of the
    new state allows."""

    allow_event_without_transition = False

    class work(State.Compound):
        idle = State(initial=True)
        busy = State()
        start = idle.to(busy, on="nudge")
        poke = busy.to(idle, cond="never")

    done = State(final=True)
    finish = work.to(done)

    def nudge(self) -> None:
        self.raise_("poke")

    def never(self) -> bool:
        return False


def test_c11_a_strict_statechart_drops_a_raised_event_no_transition_allows() -> None:
    """An internal event of a strict chart that no guard lets through is dropped, as
    python-statemachine drops it; the same event sent from outside is refused."""
    reference = StrictWork()
    instance = compile_chart(StrictWork).create()
    reference.send("start")
    outcome = instance.send("start")
    assert outcome.applied
    assert ids(instance) == ids(reference) == ["busy", "work"]
    with pytest.raises(TransitionNotAllowed):
        reference.send("poke")
    with pytest.raises(TransitionNotAllowed):
        instance.send("poke")
    assert ids(instance) == ids(reference) == ["busy", "work"]


class Ahead(StateChart[Any]):
    """A callback queues ``one``, then ``two`` with a negative delay (due in the past)."""

    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="queue")
    one = b.to(c) | c.to(b)
    two = b.to(c) | c.to(b)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.log: list[str] = []
        super().__init__(*args, **kwargs)

    def queue(self) -> None:
        self.send("one")
        self.send("two", delay=-1)

    def on_transition(self, event: Any) -> None:
        self.log.append(str(event))


def test_c17_an_event_due_in_the_past_runs_ahead_of_the_events_queued_before_it() -> None:
    reference = Ahead()
    instance: Any = compile_chart(Ahead).create()
    reference.send("go")
    instance.send("go")
    assert instance.log == reference.log == ["go", "two", "one"]
    assert ids(instance) == ids(reference) == ["b"]


class StrictFlat(StateChart[Any]):
    """A strict flat chart whose transition raises an event the target has no transition
    for."""

    allow_event_without_transition = False
    a = State(initial=True)
    b = State()
    go = a.to(b, on="again")
    back = b.to(a)

    def again(self) -> None:
        self.raise_("go")


def test_c11_a_strict_flat_chart_drops_a_raised_event_its_state_has_no_transition_for() -> None:
    reference = StrictFlat()
    instance = compile_chart(StrictFlat).create()
    reference.send("go")
    outcome = instance.send("go")
    assert outcome.applied
    assert ids(instance) == ids(reference) == ["b"]
    with pytest.raises(TransitionNotAllowed):
        reference.send("go")
    with pytest.raises(TransitionNotAllowed):
        instance.send("go")


class Fails(StateChart[Any]):
    """A ``before`` that raises, its ``error.execution`` handled by a transition."""

    a = State(initial=True)
    b = State()
    broken = State()
    go = a.to(b, before="boom")
    error_execution = a.to(broken)
    fix = broken.to(a) | b.to(a)

    def boom(self) -> None:
        raise ValueError("declined")


def test_c5_a_failed_event_reports_no_target_and_the_transitions_its_error_took() -> None:
    reference = Fails()
    instance = compile_chart(Fails).create()
    reference.send("go")
    outcome = instance.send("go")
    assert not outcome.applied
    assert outcome.reason == "failed"
    assert outcome.target is None
    assert [t.id for t in outcome.transitions] == ["a:error_execution|error.execution:broken"]
    assert ids(instance) == ids(reference) == ["broken"]


class Later(StateChart[Any]):
    """A callback sends an event with a delay and keeps what ``send`` returned."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on="later")
    tick = b.to(a)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.outcomes: list[Any] = []
        super().__init__(*args, **kwargs)

    def later(self) -> None:
        self.outcomes.append(self.send("tick", delay=10))


def test_c11_a_delayed_event_sent_from_a_callback_is_reported_queued() -> None:
    clock = VirtualClock()
    instance: Any = compile_chart(Later).create(clock=clock)
    instance.send("go")
    (outcome,) = instance.outcomes
    assert not outcome.applied
    assert outcome.reason == "queued"
    assert ids(instance) == ["b"]
    instance.run_until_idle()
    assert ids(instance) == ["a"]


class Kept(StateChart[Any]):
    """A validator that raises while a queued event is selected: python-statemachine keeps
    the events queued behind it."""

    a = State(initial=True)
    b = State()
    c = State()
    start = a.to(b, on="queue_two")
    go = b.to(c, validators="check")
    back = b.to(a) | c.to(a)

    def queue_two(self) -> None:
        self.send("go")
        self.send("back")

    def check(self) -> None:
        raise ValueError("not yet")


@pytest.mark.parametrize("clock", [None, "virtual"])
def test_c17_run_until_idle_runs_the_events_a_raising_validator_left_queued(
    clock: str | None,
) -> None:
    """What a later ``send`` would run first (as in python-statemachine), ``run_until_idle``
    runs now, with or without a clock."""
    reference = Kept()
    with pytest.raises(ValueError, match="not yet"):
        reference.send("start")
    instance = compile_chart(Kept).create(clock=VirtualClock() if clock else None)
    with pytest.raises(ValueError, match="not yet"):
        instance.send("start")
    assert ids(instance) == ids(reference) == ["b"]
    instance.run_until_idle()
    assert ids(instance) == ["a"]


class Jobs(StateChart[Any]):
    """A strict flat chart taking undeclared names by their prefix, one transition behind a
    guard that never passes; a transition raises such a name."""

    allow_event_without_transition = False
    idle = State(initial=True)
    busy = State()
    start = idle.to(busy, on="ask")
    pick = busy.to(idle, event="pick.*", cond="never")
    done = busy.to(idle)

    def ask(self) -> None:
        self.raise_("pick.1")

    def never(self) -> bool:
        return False


def test_c5_a_raised_name_no_guard_lets_through_is_dropped_and_observed_from_its_state() -> None:
    """The strict chart drops the internal event (as python-statemachine does); observers see
    it ignored, from the state it was tried in."""
    reference = Jobs()
    reference.send("start")
    seen: list[Any] = []
    instance = compile_chart(Jobs).create()
    with observe_outcomes(lambda _, outcome: seen.append(outcome)):
        instance.send("start")
    assert ids(instance) == ids(reference) == ["busy"]
    (ignored,) = [outcome for outcome in seen if outcome.event == "pick.1"]
    assert (ignored.applied, ignored.reason) == (False, "guards_rejected")
    assert ignored.source.id == "busy"


class Entered(StateChart[Any]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.log: list[Any] = []
        super().__init__(*args, **kwargs)

    def on_enter_a(self, source: Any) -> None:
        self.log.append(source)


def test_c16_the_generated_source_names_the_start_transition_s_empty_source_state_none() -> None:
    """The initial entry's ``source`` is python-statemachine's empty state; its constant in the
    generated source of a flat chart is ``STATE_none``."""
    assert "source=STATE_none" in compile_chart(Entered).source()
    reference = Entered()
    instance: Any = compile_chart(Entered).create()
    assert [type(s).__name__ for s in instance.log] == [type(s).__name__ for s in reference.log]


class Noting:
    def __init__(self) -> None:
        self.log: list[Any] = []


class PreparedEventless(StateChart[Noting]):
    """A chart with a ``prepare_event`` and an eventless transition with a guard and an
    ``on`` callback."""

    class box(State.Compound):
        a = State(initial=True)
        b = State()
        c = State()
        go = a.to(b)
        b.to(c, cond="ok", on="moved")
        back = c.to(a)

    def prepare_event(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.model.log.append(("prepare", args))
        return {"extra": 1}

    def ok(self, *args: Any, extra: int = 0) -> bool:
        self.model.log.append(("ok", args, extra))
        return True

    def moved(self, *args: Any, extra: int = 0) -> None:
        self.model.log.append(("moved", args, extra))


def test_c8_an_eventless_transition_of_a_prepared_chart_prepares_without_a_payload() -> None:
    """The event's payload (``5``) reaches the event's own microstep; the eventless one after
    it prepares and calls its callbacks with no positional arguments, as in
    python-statemachine."""
    reference, model = Noting(), Noting()
    machine = PreparedEventless(reference)
    instance = compile_chart(PreparedEventless).create(model)
    machine.send("go", 5)
    instance.send("go", 5)
    assert ids(instance) == ids(machine) == ["box", "c"]
    assert model.log == reference.log
    assert ("ok", (), 1) in model.log
    assert ("moved", (), 1) in model.log


class Waking(VirtualClock):
    """A virtual clock that records the wake-ups it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.wakes: list[float] = []

    def wake(self, instance: Any, due: float, order: int) -> None:
        self.wakes.append(float(due))
        super().wake(instance, due, order)


class Ticking(StateChart[Any]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="later")
    tick = b.to(c)
    poke = b.to(b, internal=True) | c.to(c, internal=True)
    reset = c.to(a)

    def later(self) -> None:
        self.send("tick", delay=10)


def test_c17_a_clock_is_asked_once_to_wake_an_instance_for_its_next_delayed_event() -> None:
    """Events run meanwhile do not ask the clock again for the wake-up already asked for."""
    clock = Waking()
    instance = compile_chart(Ticking).create(clock=clock)
    instance.send("go")
    instance.send("poke")
    instance.send("poke")
    instance.send("nothing")
    assert clock.wakes == [0.01]
    clock.advance(0.02)
    assert ids(instance) == ["c"]
    assert clock.wakes == [0.01]


class Configured(StateChart[Any]):
    """A custom ``__init__`` and a ``prepare_event``: both python-statemachine features."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on="moved")
    back = b.to(a)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.log: list[Any] = []
        super().__init__(*args, **kwargs)

    def prepare_event(self, event: Any) -> dict[str, Any]:
        return {"extra": 1}

    def moved(self, extra: int = 0) -> None:
        self.log.append(extra)


def test_c20_a_chart_with_a_custom_init_and_a_prepare_event_starts_and_runs() -> None:
    reference = Configured()
    instance: Any = compile_chart(Configured).create()
    assert ids(instance) == ids(reference) == ["a"]
    reference.send("go")
    instance.send("go")
    assert ids(instance) == ids(reference) == ["b"]
    assert instance.log == reference.log == [1]


class Anything(StateChart[Any]):
    """A flat chart whose state takes any event (``*``)."""

    idle = State(initial=True)
    seen = State()
    spot = idle.to(seen, event="*")
    reset = seen.to(idle)


def test_c4_a_wildcard_transition_takes_an_undeclared_name_without_a_dot() -> None:
    reference = Anything()
    instance = compile_chart(Anything).create()
    reference.send("whatever")
    outcome = instance.send("whatever")
    assert outcome.applied
    assert outcome.event == "whatever"
    assert ids(instance) == ids(reference) == ["seen"]


def test_c16_a_compiled_instance_s_class_keeps_the_chart_s_docstring() -> None:
    """``help(instance)`` reads as the chart does."""
    assert type(compile_chart(Anything).create()).__doc__ == Anything.__doc__
    assert Anything.__doc__


class Fielded(StateChart[Any]):
    """A guard named after a field the custom ``__init__`` sets before handing over."""

    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed")
    back = b.to(a)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.allowed = lambda: True
        super().__init__(*args, **kwargs)


def test_c20_a_callback_named_after_a_field_set_before_the_hand_over_resolves_to_it() -> None:
    reference = Fielded()
    instance = compile_chart(Fielded).create()
    reference.send("go")
    instance.send("go")
    assert ids(instance) == ids(reference) == ["b"]


def test_c1_a_class_compiled_from_two_threads_at_once_is_one_chart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second thread waits for the first one's compilation and gets the same chart."""
    import threading
    import time

    from statecharts import _runtime
    from statecharts._compiler import read_chart

    class Raced(StateChart[Any]):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

    reading = threading.Event()

    def slow_read(cls: Any) -> Any:
        reading.set()
        time.sleep(0.3)  # the other thread finds no chart yet and waits for the lock
        return read_chart(cls)

    monkeypatch.setattr(_runtime, "read_chart", slow_read)
    found: list[Any] = []
    first = threading.Thread(target=lambda: found.append(compile_chart(Raced)))
    first.start()
    assert reading.wait(5)
    second = threading.Thread(target=lambda: found.append(compile_chart(Raced)))
    second.start()
    first.join(10)
    second.join(10)
    assert len(found) == 2
    assert found[0] is found[1]
    assert compile_chart(Raced) is found[0]


class Shared:
    """A model logging into a list several instances share."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log


class Echo(StateChart[Shared]):
    idle = State(initial=True)
    ping = idle.to(idle, on="heard")

    def heard(self, word: str = "") -> None:
        self.model.log.append(f"{self.model.name}:{word}")


def test_c17_timers_of_several_instances_on_one_clock_run_in_due_then_sending_order() -> None:
    """Three events due at the same time, sent to two instances in turn, run in the order
    they were sent, across the instances (one delayed event per wake-up)."""
    clock = VirtualClock()
    log: list[str] = []
    chart = compile_chart(Echo)
    first = chart.create(Shared("A", log), clock=clock)
    second = chart.create(Shared("B", log), clock=clock)
    first.send("ping", word="x", delay=10)
    second.send("ping", word="y", delay=10)
    first.send("ping", word="z", delay=10)
    assert log == []
    clock.advance(0.02)
    assert log == ["A:x", "B:y", "A:z"]


class Noted(StateChart[Any]):
    """A validator that raises an internal event, then fails, while a queued event is
    selected: both queues are kept for the next event."""

    a = State(initial=True)
    b = State()
    c = State()
    start = a.to(b, on="queue")
    go = b.to(c, validators="check")
    note = a.to(a) | b.to(b) | c.to(c)
    back = b.to(a) | c.to(a)

    def queue(self) -> None:
        self.send("go")
        self.send("back")

    def check(self) -> None:
        self.raise_("note")
        raise ValueError("not yet")


def test_c19_a_snapshot_keeps_the_internal_events_a_raising_validator_left_queued() -> None:
    chart = compile_chart(Noted)
    instance = chart.create()
    with pytest.raises(ValueError, match="not yet"):
        instance.send("start")
    picture = instance.snapshot()
    assert picture["queued"] == {
        "internal": [{"event": "note", "args": [], "kwargs": {}}],
        "external": [{"event": "back", "args": [], "kwargs": {}}],
    }
    assert chart.restore(picture).snapshot() == picture


class ModelGuarded(StateChart[Any]):
    """A guard and an action the model provides (the chart has neither)."""

    a = State(initial=True)
    b = State()
    go = a.to(b, cond="ready", on="record")
    back = b.to(a)


def test_c16_the_source_of_a_chart_whose_callbacks_the_model_provides_can_be_read() -> None:
    """``Chart.source()`` with no model type is the source for instances created without a
    model, whose callbacks are then looked up on the model when they run."""
    source = compile_chart(ModelGuarded).source()
    assert "ready" in source
    assert "record" in source
