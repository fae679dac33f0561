"""Breaks found by an independent review of issue 10. Each test reproduces one; fix the code, do
not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import time
from typing import Any

import pytest
from statemachine import State, StateChart, StateMachine
from statemachine.exceptions import InvalidDefinition, TransitionNotAllowed

from statecharts import UnsupportedChart, compile_chart


class Model:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def __repr__(self) -> str:
        return "Model()"


def _ids(states: Any) -> list[str]:
    return [state.id for state in states]


class CancelTick(StateChart[Model]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="later")
    tick = b.to(c)
    back = c.to(a) | b.to(a)

    def later(self) -> None:
        self.send("tick", send_id="t1", delay=50_000)
        self.cancel_event("t1")


def test_C6_a_cancelled_delayed_event_does_not_run() -> None:
    """A callback sends `tick` with `delay` and `send_id`, then cancels it: python-statemachine
    never runs it and stays in `b`; the compiled runtime runs `tick` at once (the delay is
    ignored, `cancel_event` fails silently as `error.execution`) and ends in `c`."""
    try:
        chart = compile_chart(CancelTick)
    except UnsupportedChart:
        return
    reference = CancelTick(Model())
    instance = chart.create(Model())
    reference.send("go")
    instance.send("go")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["b"]


class DelayedTick(StateChart[Model]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="later")
    tick = b.to(c)
    back = c.to(a) | b.to(a)

    def later(self) -> None:
        self.send("tick", delay=1)

    def on_tick(self, **kwargs: Any) -> None:
        self.model.log.append(sorted(kwargs))


def test_C8_send_delay_is_not_passed_to_callbacks_as_payload() -> None:
    """`self.send("tick", delay=1)` from a callback: python-statemachine takes `delay` as the
    send option; the compiled runtime passes `delay=1` to `tick`'s callbacks as payload, so a
    `**kwargs` callback sees a key the reference never gives."""
    try:
        chart = compile_chart(DelayedTick)
    except UnsupportedChart:
        return
    reference = DelayedTick(Model())
    instance = chart.create(Model())
    reference.send("go")
    instance.send("go")
    assert instance.model.log == reference.model.log


class RaiseDelayed(StateChart[Model]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="later")
    tick = b.to(c)
    back = c.to(a) | b.to(a)

    def later(self) -> None:
        self.raise_("tick", delay=5)


def test_C3_raise_with_a_delay_is_refused_as_the_reference_does() -> None:
    """`self.raise_("tick", delay=5)`: python-statemachine raises `InvalidDefinition` (an
    internal event cannot be delayed) and stays in `a`; the compiled runtime runs `tick` at
    once and silently ends in `c`."""
    try:
        chart = compile_chart(RaiseDelayed)
    except UnsupportedChart:
        return
    reference = RaiseDelayed(Model())
    with pytest.raises(InvalidDefinition):
        reference.send("go")
    instance = chart.create(Model())
    with pytest.raises(InvalidDefinition):
        instance.send("go")
    assert _ids(instance.configuration) == _ids(reference.configuration)


class Nested(StateChart[Model]):
    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)

    z = State(final=True)
    fin = p.to(z)


def test_C10_resume_a_hierarchical_chart() -> None:
    """`Chart.resume("b", model)` restores a checkpoint of a chart with a compound state: it
    fails with `AttributeError: 'HBinding' object has no attribute 'nodes'`."""
    instance = compile_chart(Nested).resume("b", Model())
    assert _ids(instance.configuration) == ["p", "b"]
    instance.send("fin")
    assert _ids(instance.configuration) == ["z"]


def test_issue10_source_shows_the_functions_tracebacks_name() -> None:
    """`Chart.source(Model)` of a hierarchical chart, after an event ran, lacks the selection
    function `a__go` that tracebacks through that event name; only the initial entry and
    the microstep are shown, so the "readable generated code" cannot be read."""
    chart = compile_chart(Nested)
    chart.create(Model()).send("go")
    assert "def a__go(" in chart.source(Model)


class Listener:
    """A python-statemachine listener recording the states entered."""

    def __init__(self) -> None:
        self.entered: list[str] = []

    def on_enter_state(self, state: Any) -> None:
        self.entered.append(state.id)


def test_C3_create_with_start_value_starts_there() -> None:
    """`Nested(model, start_value="b")` starts python-statemachine in `p`/`b`;
    `chart.create(model, start_value="b")` takes `start_value` as a payload for the initial
    callbacks and silently starts in `p`/`a`. Honour it or refuse it."""
    reference = Nested(Model(), start_value="b")
    try:
        instance = compile_chart(Nested).create(Model(), start_value="b")
    except TypeError:
        return
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["p", "b"]


def test_C3_create_with_listeners_calls_them() -> None:
    """`listeners=[...]` is how python-statemachine users observe a machine; given to
    `chart.create`, it becomes a payload keyword and the listener is silently never called."""
    seen, ignored = Listener(), Listener()
    Nested(Model(), listeners=[seen]).send("go")
    try:
        compile_chart(Nested).create(Model(), listeners=[ignored]).send("go")
    except TypeError:
        return
    assert ignored.entered == seen.entered == ["p", "a", "b"]


class TriggerData(StateChart[Model]):
    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)

    z = State(final=True)
    fin = p.to(z)

    def on_go(self, event_data: Any) -> None:
        self.model.log.append(
            (sorted(event_data.trigger_data.kwargs), sorted(event_data.extended_kwargs))
        )


def test_C8_event_data_has_trigger_data_and_extended_kwargs() -> None:
    """The issue lists `event_data.trigger_data` and `.extended_kwargs` as missing; they still
    are, so an `on_go(event_data)` reading them fails and, errors being caught as events, is
    silently skipped: the reference logs the payload keys, the compiled runtime nothing."""
    reference = TriggerData(Model())
    instance = compile_chart(TriggerData).create(Model())
    reference.send("go", size=3)
    instance.send("go", size=3)
    assert instance.model.log == reference.model.log
    assert instance.model.log


class InvokingModel(Model):
    def on_invoke_b(self) -> None:
        self.log.append("invoked b")


class Plain(StateChart[InvokingModel]):
    a = State(initial=True)
    b = State()
    go = a.to(b)
    back = b.to(a)


def test_C6_invoke_declared_on_the_model_is_refused_or_run() -> None:
    """python-statemachine runs a model's `on_invoke_<state>` when the state is entered (its
    naming convention for invoke); the compiler refuses invoke only when the chart declares it,
    so with the model's it compiles, creates, and silently never invokes."""
    reference = Plain(InvokingModel())
    reference.send("go")
    try:
        instance = compile_chart(Plain).create(InvokingModel())
        instance.send("go")
    except UnsupportedChart:
        return
    deadline = time.monotonic() + 5  # python-statemachine runs invoke in a thread
    while time.monotonic() < deadline and not (reference.model.log and instance.model.log):
        time.sleep(0.01)
    assert instance.model.log == reference.model.log == ["invoked b"]


class Boom(Exception):
    """Raised by a callback asked to fail."""


class StrictFinish(StateMachine):
    catch_errors_as_events = True

    a = State(initial=True)
    b = State()
    end = State(final=True)
    go = a.to(end, after="boom")
    hop = a.to(b)
    back = b.to(a)

    def boom(self) -> None:
        raise Boom("after")


def test_C3_after_raising_into_a_final_state_of_a_strict_chart_raises() -> None:
    """A `StateMachine` (strict) with `catch_errors_as_events = True` finishes in a final state
    and its `after` raises: python-statemachine's `error.execution` then raises
    `TransitionNotAllowed` ("Can't Error execution when in End."); the compiled runtime
    returns normally, so the caller never learns of the failure."""
    reference = StrictFinish()
    with pytest.raises(TransitionNotAllowed) as expected:
        reference.send("go")
    instance = compile_chart(StrictFinish).create()
    with pytest.raises(TransitionNotAllowed) as got:
        instance.send("go")
    assert str(got.value) == str(expected.value)


class PreparingModel(Model):
    def prepare_event(self) -> dict[str, Any]:
        return {"extra": 42}

    def on_go(self, extra: Any = None) -> None:
        self.log.append(("go", extra))


class Toggle(StateChart[PreparingModel]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)


def test_C6_prepare_event_on_the_model_is_refused_or_run() -> None:
    """The compiler refuses `prepare_event` on the chart, but python-statemachine also calls a
    model's `prepare_event` and passes what it returns to every callback: `on_go` gets
    `extra=42` there and silently `extra=None` compiled."""
    reference = Toggle(PreparingModel())
    reference.send("go")
    try:
        instance = compile_chart(Toggle).create(PreparingModel())
    except UnsupportedChart:
        return
    instance.send("go")
    assert instance.model.log == reference.model.log == [("go", 42)]


class Regions(StateChart[Model]):
    class par(State.Parallel):
        class r1(State.Compound):
            a = State(initial=True)
            b = State(final=True)
            e = a.to(b)

        class r2(State.Compound):
            c = State(initial=True)
            d = State(final=True)
            e = c.to(d)

    done = State(final=True)
    done_state_par = par.to(done)


def test_D3_mermaid_nests_compound_states_and_separates_regions() -> None:
    """The issue asks Mermaid output with nested states and `--` between parallel regions; a
    parallel chart comes out flat, every initial child drawn as its own top-level `[*] -->`
    start (five starts for one chart), regions as plain states."""
    from statecharts import to_mermaid

    text = to_mermaid(compile_chart(Regions))
    assert "state par {" in text.replace('"', "")
    assert any(line.strip() == "--" for line in text.splitlines())
    assert text.count("[*] -->") < 5


def test_D3_dot_draws_compound_states_as_clusters() -> None:
    """The issue asks DOT output with compound states as clusters; a parallel chart's DOT has
    no `subgraph cluster` at all."""
    from statecharts import to_dot

    assert "subgraph cluster" in to_dot(compile_chart(Regions))


class Membership(StateChart[Model]):
    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)

    z = State(final=True)
    fin = p.to(z)

    def on_enter_b(self, state: Any, machine: Any) -> None:
        self.model.log.append(state in machine.configuration)


def test_C8_the_state_a_callback_gets_is_in_the_machines_configuration() -> None:
    """`on_enter_b(state, machine)` checks `state in machine.configuration`: True on
    python-statemachine; compiled, `state` is the declared `State` but `configuration` holds
    `StateDef`s, so the check is silently False."""
    reference = Membership(Model())
    instance = compile_chart(Membership).create(Model())
    reference.send("go")
    instance.send("go")
    assert instance.model.log == reference.model.log == [True]
