"""Details of the compiled runtime a mutation run found untested, each checked against
python-statemachine where it has the same behaviour: errors after termination, internal
events raised with options, events left over by a failing guard, what a custom ``__init__``
gets without a model, and the runtime's own messages (``repr``, unknown states, snapshots of
an async instance not started).

Rules checked here (docs/spec.md): C5, C7, C11, C17, C19, C20, C21.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
from statemachine import Event, State, StateChart
from statemachine.exceptions import InvalidDefinition, InvalidStateValue, TransitionNotAllowed
from statemachine.io import load
from statemachine.model import Model

from statecharts import (
    InstanceSnapshotError,
    Outcome,
    UnsupportedChart,
    VirtualClock,
    compile_chart,
    observe_outcomes,
)


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []
        self.fail = True


def both(chart: type[StateChart[Any]]) -> list[Any]:
    """A python-statemachine instance and a compiled one of ``chart``, each with a ``Log``."""
    return [chart(Log()), compile_chart(chart).create(Log())]


def ids(machine: Any) -> list[str]:
    return [state.id for state in machine.configuration]


class StrictBox(StateChart[Log]):
    allow_event_without_transition = False

    class box(State.Compound):
        a = State(initial=True)
        b = State()
        hop = a.to(b)

    end = State(final=True)
    go = box.to(end)


class StrictFlat(StateChart[Log]):
    """Flat, with an eventless transition: it runs in the statechart processing loop."""

    allow_event_without_transition = False
    a = State(initial=True)
    b = State()
    end = State(final=True)
    go = a.to(b)
    hop = a.to(a)
    b.to(end)


@pytest.mark.parametrize("chart", [StrictBox, StrictFlat])
@pytest.mark.parametrize("event", ["hop", "nope"])
def test_c5_a_terminated_strict_statechart_refuses_events_as_python_statemachine_does(
    chart: type[StateChart[Log]], event: str
) -> None:
    errors = []
    for machine in both(chart):
        machine.send("go")
        with pytest.raises(TransitionNotAllowed) as raised:
            machine.send(event)
        errors.append((str(raised.value), [s.id for s in raised.value.configuration]))
    assert errors[0] == errors[1]
    assert errors[1][1] == ["end"]


@pytest.mark.parametrize("chart", [StrictBox, StrictFlat])
def test_c5_a_terminated_statechart_still_says_what_a_non_string_event_is(
    chart: type[StateChart[Log]],
) -> None:
    instance = compile_chart(chart).create()
    instance.send("go")
    assert instance.is_terminated
    with pytest.raises(TypeError, match=r"^event must be a str, got int: 3$"):
        instance.send(3)  # type: ignore[arg-type]


class Raising(StateChart[Log]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="kick")
    ping = b.to(c, on="got")
    deep = Event(b.to(c, on="got"), internal=True)
    ext = b.to(a) | c.to(a)

    def kick(self, how: str = "raise") -> None:
        self.send("ext")
        if how == "raise":
            self.raise_("ping", 7, send_id="s1", tag=1)
        else:
            self.send("deep", tag=2)
        self.model.log.append("kicked")

    def got(self, *args: Any, event_data: Any, **kwargs: Any) -> None:
        self.model.log.append(("got", args, event_data.args, sorted(kwargs)))

    def on_enter_state(self, state: Any, event: Any, **kwargs: Any) -> None:
        payload = {key: value for key, value in kwargs.items() if key in ("tag", "internal")}
        self.model.log.append((state.id, str(event), payload))


@pytest.mark.parametrize("how", ["raise", "declared"])
def test_c11_an_internal_event_with_options_runs_before_events_sent_earlier(how: str) -> None:
    """``raise_`` with a ``send_id``, and ``send`` of an event declared ``internal``, queue it
    on the internal queue (it runs within the macrostep, before ``ext`` sent just before), its
    payload without the option."""
    logs = []
    for machine in both(Raising):
        machine.send("go", how=how)
        logs.append((ids(machine), machine.model.log))
    assert logs[0] == logs[1]
    log = logs[1][1]
    entered = [entry[:2] for entry in log if isinstance(entry, tuple) and entry[0] != "got"]
    event = "ping" if how == "raise" else "deep"
    assert entered == [("a", "__initial__"), ("b", "go"), ("c", event), ("a", "ext")]
    got = next(entry for entry in log if entry[0] == "got")
    assert got[1:3] == (((7,), (7,)) if how == "raise" else ((), ()))
    assert "tag" in got[3]
    assert not {"internal", "send_id", "delay"} & set(got[3])


def test_c5_an_internal_event_sent_from_a_callback_is_queued_under_its_own_name() -> None:
    outcomes = []

    class Queues(StateChart[Log]):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="kick")
        back = b.to(a)

        def kick(self) -> None:
            outcomes.append(self.send("back", internal=True, tag=3))

    instance = compile_chart(Queues).create(Log())
    instance.send("go")
    assert [(o.applied, o.event, o.reason) for o in outcomes] == [(False, "back", "queued")]
    assert instance.state.id == "a"


class Leftover(StateChart[Log]):
    catch_errors_as_events = False

    class box(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="kick")
        y = b.to(a, cond="shaky")
        z = a.to(b) | b.to(a)

    w = box.to.itself(internal=True, on="note")

    def kick(self) -> None:
        self.send("y")
        self.send("z")

    def shaky(self) -> bool:
        if self.model.fail:
            self.model.fail = False
            raise ValueError("shaky")
        return True

    def note(self) -> None:
        self.model.log.append("w")

    def on_enter_state(self, state: Any, event: Any) -> None:
        self.model.log.append((state.id, str(event)))


def test_c7_events_left_over_by_a_raising_guard_run_before_the_next_event() -> None:
    """A guard raised while ``y`` (queued by ``go``) was selected: ``z``, queued behind it,
    stays queued and runs before the next event sent, ``w``, as in python-statemachine."""
    logs = []
    for machine in both(Leftover):
        with pytest.raises(ValueError, match="shaky"):
            machine.send("go")
        assert ids(machine) == ["box", "b"]
        machine.send("w")
        logs.append((ids(machine), machine.model.log))
    assert logs[0] == logs[1]
    assert logs[1][1].index(("a", "z")) < logs[1][1].index("w")


def test_c20_a_chart_with_a_custom_init_created_without_a_model_gets_a_fresh_model() -> None:
    class Counter(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def __init__(self, model: Any = None, start: int = 1) -> None:
            self.start = start
            super().__init__(model)

    reference, instance = Counter(), compile_chart(Counter).create()
    assert type(reference.model) is Model
    assert type(instance.model) is Model
    assert instance.model is not compile_chart(Counter).create().model
    assert instance.send("go").applied


def test_c10_an_instance_shows_its_class_state_and_model() -> None:
    class Lamp(StateChart):
        off = State(initial=True)
        on = State()
        flip = off.to(on) | on.to(off)

    instance = compile_chart(Lamp).create("the model")
    assert repr(instance) == "<LampInstance state='off' model='the model'>"


def test_c19_resume_in_an_unknown_state_names_the_value_and_the_states() -> None:
    class Lamp(StateChart):
        off = State(initial=True)
        on = State()
        flip = off.to(on) | on.to(off)

    with pytest.raises(InvalidStateValue) as raised:
        compile_chart(Lamp).resume("dim")
    assert raised.value.value == "dim"
    assert str(raised.value) == "'dim' is not a state of Lamp (states: off, on)"


def test_c21_an_async_instance_not_started_cannot_be_snapshotted() -> None:
    class Later(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        async def on_enter_a(self) -> None:
            pass

    instance = compile_chart(Later).create()
    with pytest.raises(InstanceSnapshotError) as raised:
        instance.snapshot()
    assert raised.value.field == "instance"
    assert "initial state is not entered yet" in raised.value.reason


class StrictLeftover(StateChart[Log]):
    catch_errors_as_events = False
    allow_event_without_transition = False

    class box(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="kick")
        y = b.to(a, cond="shaky")
        z = b.to(a, cond="never")

    def kick(self) -> None:
        self.send("y")

    def shaky(self) -> bool:
        raise ValueError("shaky")

    def never(self) -> bool:
        return False


def test_c7_after_a_queued_event_s_guard_raised_a_strict_chart_still_refuses_events() -> None:
    """The failure left the instance's queues in place (python-statemachine keeps them); the
    next event whose guards all fail is still refused with ``TransitionNotAllowed``, not
    dropped as an internal event would be."""
    errors = []
    for machine in both(StrictLeftover):
        with pytest.raises(ValueError, match="shaky"):
            machine.send("go")
        for _ in range(2):
            with pytest.raises(TransitionNotAllowed) as raised:
                machine.send("z")
            errors.append(str(raised.value))
        assert ids(machine) == ["box", "b"]
    assert errors == ["Can't Z when in Box, B."] * 4


class Retry(StateChart[Log]):
    """Flat, with an eventless transition whose ``before`` fails twice, then lets it run."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b)
    b.to(c, before="attempt")
    error_execution = b.to(a, on="note")

    def attempt(self) -> None:
        self.model.log.append("attempt")
        if self.model.log.count("attempt") <= 2:
            raise ValueError("not yet")

    def note(self, error: Exception) -> None:
        self.model.log.append(("error", str(error)))

    def on_enter_state(self, state: Any, event: Any) -> None:
        self.model.log.append((state.id, str(event)))


def test_c7_a_failed_eventless_microstep_is_retried_before_its_error_is_handled() -> None:
    """python-statemachine counts a microstep whose ``before`` raised as taken, so the
    macrostep selects eventless transitions again before it takes ``error.execution`` from the
    internal queue; the third attempt succeeds and the errors find no transition in ``c``. The
    compiled flat chart handled the first error at once (and ended in ``a``)."""
    runs = []
    seen: list[Outcome] = []
    for machine in both(Retry):
        with observe_outcomes(lambda _, outcome: seen.append(outcome)):
            machine.send("go")
        runs.append((ids(machine), machine.model.log))
    assert runs[0] == runs[1]
    assert runs[1][0] == ["c"]
    assert runs[1][1].count("attempt") == 3
    # observers see each failed microstep, as they do in a hierarchical chart
    assert [(o.event, o.reason) for o in seen[:4]] == [
        ("go", None),
        ("", "failed"),
        ("", "failed"),
        ("", None),
    ]


class Lamp(StateChart):
    off = State(initial=True)
    on = State()
    flip = off.to(on) | on.to(off)


def test_c5_an_outcome_is_an_immutable_value_that_says_what_happened() -> None:
    chart = compile_chart(Lamp)
    first, second = chart.create(), chart.create()
    applied, again = first.send("flip"), second.send("flip")
    ignored = first.send("nope")
    assert applied == again
    assert hash(applied) == hash(again)
    assert applied != ignored
    assert applied != "flip"
    assert len({applied, again, ignored}) == 2
    assert repr(applied) == "Outcome(applied, 'flip': off:flip:on)"
    assert repr(ignored) == "Outcome(ignored, 'nope' in 'on': unknown_event)"
    assert applied.transitions == (applied.transition,)
    assert ignored.transitions == ()
    with pytest.raises(AttributeError, match="Outcome is immutable"):
        applied.applied = False  # type: ignore[misc]
    assert applied.applied


def test_c10_create_refuses_extra_positional_arguments_and_constructor_options() -> None:
    chart = compile_chart(Lamp)
    with pytest.raises(
        TypeError, match=r"^create\(\) takes one positional argument \(a model\), got 3$"
    ):
        chart.create(None, 1, 2)
    for option in ("listeners", "start_value", "state_field"):
        with pytest.raises(
            TypeError, match=rf"^create\(\) does not take python-statemachine's '{option}' option"
        ):
            chart.create(None, **{option: "x"})
    with pytest.raises(TypeError, match=r"'listeners' option"):  # the first, in name order
        chart.create(None, start_value="x", listeners=[])
    instance = chart.create(None, unrelated="payload")  # other keywords go to enter callbacks
    assert type(instance.model) is Model


def test_c21_a_chart_with_async_callbacks_takes_no_clock() -> None:
    class Slow(StateChart):
        off = State(initial=True)
        on = State()
        flip = off.to(on) | on.to(off)

        async def on_enter_on(self) -> None:
            pass

    with pytest.raises(TypeError, match=r"^a chart with async callbacks takes no clock$"):
        compile_chart(Slow).create(clock=VirtualClock())


def test_c17_run_until_idle_refuses_to_run_from_inside_a_callback() -> None:
    """Reached from a model method (a chart method reading ``self.run_until_idle`` is refused
    at compile time: python-statemachine's machine has none, C6)."""
    errors: list[str] = []

    class Holder:
        instance: Any = None

        def wait(self) -> None:
            try:
                self.instance.run_until_idle()
            except RuntimeError as error:
                errors.append(str(error))

    class Impatient(StateChart):
        off = State(initial=True)
        on = State()
        flip = off.to(on, on="wait") | on.to(off)

    holder = Holder()
    instance = holder.instance = compile_chart(Impatient).create(holder, clock=VirtualClock())
    assert instance.send("flip").applied
    assert errors == ["run_until_idle() cannot run from inside a callback"]


class GuardError(StateChart):
    class box(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, cond="shaky")
        error_execution = a.to(b)

    def shaky(self) -> bool:
        raise ValueError("shaky")


def test_c5_an_ignored_event_reports_the_transitions_its_errors_took_and_no_target() -> None:
    """The guard raised, so ``go`` was ignored; its macrostep took the ``error.execution``
    transition, which the outcome lists, but an ignored event has no target."""
    instance = compile_chart(GuardError).create()
    outcome = instance.send("go")
    assert (outcome.applied, outcome.reason, outcome.target) == (False, "guards_rejected", None)
    assert [t.id for t in outcome.transitions] == ["a:error_execution|error.execution:b"]
    assert ids(instance) == ["box", "b"]


SENDIDS = """<?xml version="1.0" encoding="UTF-8"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s0" version="1.0" datamodel="python">
  <datamodel><data id="seen" expr="[]" /></datamodel>
  <state id="s0">
    <onentry>
      <send event="tick" delay="1s" id="the-tick" />
      <send event="tock" delay="2s" />
      <raise event="inner" />
    </onentry>
    <transition event="inner">
      <assign location="seen" expr="seen + [(str(_event.name), _event.type, _event.sendid)]" />
    </transition>
    <transition event="tick">
      <assign location="seen" expr="seen + [(str(_event.name), _event.type, _event.sendid)]" />
    </transition>
    <transition event="tock" target="done">
      <assign location="seen" expr="seen + [(str(_event.name), _event.type, _event.sendid)]" />
    </transition>
  </state>
  <final id="done" />
</scxml>
"""


def test_c18_a_loaded_chart_sees_each_event_s_type_and_sendid_as_python_statemachine() -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        reference = load(SENDIDS, format="scxml", trusted=True)()
        clock = VirtualClock()
        instance = compile_chart(load(SENDIDS, format="scxml", trusted=True)).create(clock=clock)
        instance.run_until_idle()
    assert (
        instance.model.seen
        == reference.model.seen
        == [
            ("inner", "internal", None),
            ("tick", "external", "the-tick"),
            ("tock", "external", None),
        ]
    )
    assert ids(instance) == ids(reference) == ["done"]


class Initial(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b)

    def on_enter_a(
        self, transition: Any, event: Any, source: Any, target: Any, event_data: Any
    ) -> None:
        self.model.log.append(
            (
                str(transition.event),
                [str(e) for e in transition.events],
                str(event),
                source.id,
                target.id,
                transition.source.id,
                transition.target.id,
                str(event_data.transition.event),
            )
        )


def test_c8_the_initial_state_s_enter_callbacks_get_the_initial_transition() -> None:
    logs = [machine.model.log for machine in both(Initial)]
    assert logs[0] == logs[1]
    assert logs[1] == [
        ("__initial__", ["__initial__"], "__initial__", "", "a", "", "a", "__initial__")
    ]


class StrictPrefix(StateChart):
    allow_event_without_transition = False
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="never") | b.to(a)

    def never(self) -> bool:
        return False


@pytest.mark.parametrize("event", ["go.now", "go.now.really"])
def test_c5_a_strict_chart_refuses_a_prefix_event_whose_guards_all_fail(event: str) -> None:
    """``go.now`` matches the descriptor ``go`` (SCXML's prefix matching); its guard fails,
    so a strict chart raises as python-statemachine does, every time."""
    errors = []
    for machine in both(StrictPrefix):
        for _ in range(2):
            with pytest.raises(TransitionNotAllowed) as raised:
                machine.send(event)
            errors.append((str(raised.value), [s.id for s in raised.value.configuration]))
    assert errors == [(f"Can't {event} when in A.", ["a"])] * 4


class QueuedUnknown(StateChart[Log]):
    catch_errors_as_events = False
    allow_event_without_transition = False
    a = State(initial=True)
    b = State()
    go = a.to(b, on="kick")
    back = b.to(a)
    nxt = a.to(b) | b.to(a)

    def kick(self) -> None:
        self.send("nope")
        self.send("back")

    def on_enter_state(self, state: Any, event: Any) -> None:
        self.model.log.append((state.id, str(event)))


def test_c5_a_strict_chart_refuses_a_queued_unknown_event_and_keeps_the_rest_queued() -> None:
    runs = []
    for machine in both(QueuedUnknown):
        with pytest.raises(TransitionNotAllowed, match=r"^Can't nope when in B\.$"):
            machine.send("go")
        assert ids(machine) == ["b"]
        machine.send("nxt")  # ``back``, kept queued, runs first
        runs.append((ids(machine), machine.model.log))
    assert runs[0] == runs[1]
    assert runs[1][1][-2:] == [("a", "back"), ("b", "nxt")]


class RaisesUnmatched(StateChart[Log]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="kick")
    sub = b.to(c)
    back = c.to(a) | b.to(a)

    def kick(self) -> None:
        self.raise_("nope")  # no transition: dropped
        self.raise_("sub.deeper")  # matches ``sub`` by prefix

    def on_enter_state(self, state: Any, event: Any) -> None:
        self.model.log.append((state.id, str(event)))


def test_c11_internal_events_without_a_transition_are_dropped_and_prefixes_match() -> None:
    runs = []
    seen: list[Outcome] = []
    for machine in both(RaisesUnmatched):
        with observe_outcomes(lambda _, outcome: seen.append(outcome)):
            machine.send("go")
        runs.append((ids(machine), machine.model.log))
    assert runs[0] == runs[1]
    assert runs[1] == (["c"], [("a", "__initial__"), ("b", "go"), ("c", "sub.deeper")])
    assert [(o.event, o.applied, o.reason) for o in seen] == [
        ("go", True, None),
        ("nope", False, "unknown_event"),
        ("sub.deeper", True, None),
    ]


class BrokenCallbacks(StateChart):
    a = State(initial=True)
    b = State()
    by_guard = a.to(b, cond="bad_guard")
    by_action = a.to(b, on="bad")
    by_before = a.to(b, before="bad")
    back = b.to(a)
    error_execution = a.to(a)

    def bad_guard(self) -> bool:
        raise InvalidDefinition("guard broken")

    def bad(self) -> None:
        raise InvalidDefinition("action broken")


@pytest.mark.parametrize(
    ("event", "message"),
    [("by_guard", "guard broken"), ("by_action", "action broken"), ("by_before", "action broken")],
)
def test_c7_an_invalid_definition_raised_by_a_callback_is_never_caught_as_an_event(
    event: str, message: str
) -> None:
    for machine in (BrokenCallbacks(), compile_chart(BrokenCallbacks).create()):
        with pytest.raises(InvalidDefinition, match=message):
            machine.send(event)
        assert ids(machine) == ["a"]


def test_c7_an_initial_enter_callback_that_raises_fails_creation_without_caught_errors() -> None:
    class NoStart(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def on_enter_a(self) -> None:
            raise ValueError("no start")

    with pytest.raises(ValueError, match="no start"):
        NoStart()
    with pytest.raises(ValueError, match="no start"):
        compile_chart(NoStart).create()


class Eventful(StateChart[Log]):
    """Flat, with an eventless transition somewhere (so it runs in the statechart loop)."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b)
    b.to(c, cond="ready")

    def ready(self) -> bool:
        return bool(self.model.log)


def test_c5_an_event_ignored_again_is_reported_again() -> None:
    instance = compile_chart(Eventful).create(Log())
    seen: list[Outcome] = []
    with observe_outcomes(lambda _, outcome: seen.append(outcome)):
        first, second = instance.send("nope"), instance.send("nope")
    assert first == second
    assert (second.applied, second.reason, second.source.id) == (False, "unknown_event", "a")
    assert seen == [first, second]


def test_c17_a_terminated_instance_drops_its_delayed_events() -> None:
    class Fuse(StateChart[Log]):
        a = State(initial=True)
        end = State(final=True)
        light = a.to(a, on="schedule", internal=True)
        stop = a.to(end)
        bang = a.to(end, on="boom")

        def schedule(self) -> None:
            self.send("bang", delay=1000)

        def boom(self) -> None:
            self.model.log.append("boom")

    clock = VirtualClock()
    instance = compile_chart(Fuse).create(Log(), clock=clock)
    instance.send("light")
    assert instance.next_due() == 1.0
    instance.send("stop")
    assert instance.is_terminated
    assert instance.next_due() is None
    instance.run_until_idle()
    clock.advance(5)
    assert instance.model.log == []


def test_c17_run_due_does_nothing_without_queues_or_from_a_callback() -> None:
    calls: list[Any] = []

    class PingLog(Log):  # a model method reaches the instance (a chart method may not: C6)
        instance: Any = None

        def poke(self) -> None:
            self.instance.send("ping", delay=10)
            calls.append(self.instance.run_due())  # the instance is running: it settles later

    class Pinger(StateChart[Log]):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="poke") | b.to(a)
        ping = b.to(a)

    instance = compile_chart(Pinger).create(PingLog())
    assert instance.run_due() is None  # no clock, nothing queued
    assert instance.clock is None
    clock = VirtualClock()
    model = PingLog()
    instance = model.instance = compile_chart(Pinger).create(model, clock=clock)
    instance.send("go")
    assert calls == [None]
    assert ids(instance) == ["b"]
    assert instance.next_due() == 0.01
    clock.advance(0.01)
    assert ids(instance) == ["a"]


def test_c17_run_until_idle_without_a_clock_runs_events_left_over_by_a_failure() -> None:
    instance = compile_chart(Leftover).create(Log())
    with pytest.raises(ValueError, match="shaky"):
        instance.send("go")
    assert instance.clock is None
    instance.run_until_idle()  # ``z``, left over, runs now
    assert instance.model.log[-1] == ("a", "z")
    assert ids(instance) == ["box", "a"]


def test_c17_a_delayed_send_without_a_clock_waits_in_real_time_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    monkeypatch.setattr("statecharts._runtime.time.sleep", slept.append)
    instance = compile_chart(Lamp).create()
    assert instance.send("flip", delay=250).applied
    assert instance.send("flip", delay=-5).applied  # due in the past: at once
    assert slept == [0.25]
    assert ids(instance) == ["off"]


UNREACHABLE = """<?xml version="1.0" encoding="UTF-8"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s0" version="1.0" datamodel="python">
  <state id="s0">
    <onentry><send event="hello" target="#_nobody" /></onentry>
    <transition event="error.communication" target="pass" />
    <transition event="*" target="fail" />
  </state>
  <final id="pass" />
  <final id="fail" />
</scxml>
"""


def test_c18_a_send_to_a_session_that_does_not_exist_raises_error_communication() -> None:
    """Executable content reaches the engine's invoke manager, which has no child session
    (invoke is refused), so ``<send target="#_nobody">`` fails as python-statemachine's does;
    the machine offers its ``catch_errors_as_events`` flag as python-statemachine's does."""
    with contextlib.redirect_stdout(io.StringIO()):
        reference = load(UNREACHABLE, format="scxml", trusted=True)()
        instance = compile_chart(load(UNREACHABLE, format="scxml", trusted=True)).create()
    assert ids(instance) == ids(reference) == ["pass"]
    assert instance.catch_errors_as_events is reference.catch_errors_as_events is True


def test_c7_a_statechart_whose_initial_entry_sends_a_failing_event_fails_creation() -> None:
    class Boot(StateChart):
        catch_errors_as_events = False

        class box(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b, on="boom")
            back = b.to(a)

        def on_enter_a(self) -> None:
            self.send("go")

        def boom(self) -> None:
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        Boot()
    with pytest.raises(ValueError, match="boom"):
        compile_chart(Boot).create()


@pytest.mark.parametrize(
    ("name", "construct"),
    [("prepare_event", "a prepare_event callback"), ("on_invoke_state", "invoke")],
)
def test_c6_a_model_bringing_a_refused_callback_is_refused_naming_it(
    name: str, construct: str
) -> None:
    model_type = type("Helper", (), {name: lambda self: None})
    with pytest.raises(UnsupportedChart) as raised:
        compile_chart(Lamp).create(model_type())
    assert str(raised.value) == (
        f"Lamp: {construct} is not supported by the compiled runtime (Helper.{name} on the model)"
    )


def test_c19_resume_takes_a_clock_and_a_statechart_resumes_with_its_ancestors() -> None:
    clock = VirtualClock()
    instance = compile_chart(Lamp).resume("on", clock=clock)
    assert instance.clock is clock
    assert ids(instance) == ["on"]
    assert ids(compile_chart(Leftover).resume("b")) == ["box", "b"]


def test_c4_a_declared_event_is_a_method_of_the_instance_as_in_python_statemachine() -> None:
    reference, instance = Lamp(), compile_chart(Lamp).create()
    reference.flip()
    outcome = instance.flip()  # type: ignore[attr-defined]
    assert outcome.applied
    assert outcome.event == "flip"
    assert ids(instance) == ids(reference) == ["on"]
    assert type(instance).flip.__name__ == "flip"  # type: ignore[attr-defined]


def test_c7_an_error_after_a_strict_chart_terminated_is_refused_as_an_event() -> None:
    """The ``after`` callback of the transition into the final state raises: its
    ``error.execution`` cannot be sent to a strict machine that stopped, so the sender gets
    ``TransitionNotAllowed``, as from python-statemachine; the instance stays terminated."""

    class Late(StateChart):
        allow_event_without_transition = False
        a = State(initial=True)
        end = State(final=True)
        go = a.to(end, after="late")

        def late(self) -> None:
            raise ValueError("late")

    for machine in (Late(), compile_chart(Late).create()):
        with pytest.raises(TransitionNotAllowed, match=r"^Can't Error execution when in End\.$"):
            machine.send("go")
        assert ids(machine) == ["end"]


def test_c5_a_strict_chart_drops_an_internal_event_whose_guards_all_fail() -> None:
    class Inner(StateChart):
        allow_event_without_transition = False
        a = State(initial=True)
        b = State()
        go = a.to(b, on="kick")
        back = b.to(a)
        inner = b.to(a, cond="never")

        def kick(self) -> None:
            self.raise_("inner")

        def never(self) -> bool:
            return False

    for machine in (Inner(), compile_chart(Inner).create()):
        machine.send("go")  # no TransitionNotAllowed: an internal event is dropped
        assert ids(machine) == ["b"]


def test_c20_a_chart_with_a_custom_init_keeps_the_clock_create_was_given() -> None:
    class Timed(StateChart):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="later")
        ping = b.to(a)

        def __init__(self, model: Any = None, tag: str = "x") -> None:
            self.tag = tag
            super().__init__(model)

        def later(self) -> None:
            self.send("ping", delay=500)

    clock = VirtualClock()
    instance = compile_chart(Timed).create(tag="y", clock=clock)
    assert instance.clock is clock
    assert instance.tag == "y"  # type: ignore[attr-defined]
    instance.send("go")
    assert (ids(instance), instance.next_due()) == (["b"], 0.5)
    clock.advance(1)
    assert ids(instance) == ["a"]


@pytest.mark.parametrize(
    "options",
    [{"start_value": "b"}, {"state_field": "where"}, {"listeners": [object()]}],
)
def test_c20_a_custom_init_handing_over_python_statemachine_options_is_refused_saying_why(
    options: dict[str, Any],
) -> None:
    class Forwards(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def __init__(self, model: Any = None, **kwargs: Any) -> None:
            self.options = sorted(kwargs)
            super().__init__(model, **kwargs)

    with pytest.raises(TypeError) as raised:
        compile_chart(Forwards).create(**options)
    assert str(raised.value) == (
        "the compiled runtime does not take python-statemachine's state_field, start_value or "
        "listeners options (Chart.restore starts elsewhere; observe_outcomes() watches events)"
    )
    assert compile_chart(Forwards).create(listeners=[]).options == ["listeners"]  # type: ignore[attr-defined]


class NestedMissing(StateChart):
    class box(State.Compound):
        a = State(initial=True)
        b = State()
        hop = a.to(b, on="missing_cb") | b.to(a)


class Bare:
    pass


@pytest.mark.parametrize("model_type", [Bare, type(None)])
def test_c12_a_nested_transition_s_callback_found_nowhere_is_refused_at_creation(
    model_type: type,
) -> None:
    """python-statemachine refuses the instance (the name is on neither the chart nor the
    model); the compiled one was created and ran ``hop`` without the callback (its error
    caught as an event), a different answer given silently."""
    model = None if model_type is type(None) else model_type()
    errors = []
    for make in (NestedMissing, compile_chart(NestedMissing).create):
        with pytest.raises(InvalidDefinition) as raised:
            make(model)
        errors.append(str(raised.value))
    assert errors[0] == errors[1]
    assert "missing_cb" in errors[1]


def test_c12_a_model_carrying_a_nested_transition_s_callback_runs_it() -> None:
    class Carrier:
        def __init__(self) -> None:
            self.calls = 0

        def missing_cb(self) -> None:
            self.calls += 1

    instance = compile_chart(NestedMissing).create(Carrier())
    instance.send("hop")
    assert instance.model.calls == 1
    assert ids(instance) == ["box", "b"]
