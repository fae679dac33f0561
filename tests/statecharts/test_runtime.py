"""How instances of a compiled chart run: outcomes, failures, queued events, models."""

# Rules checked here (docs/spec.md): C4, C5, C7, C8, C9, C10, C11.

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest
from statemachine import State, StateChart, StateMachine
from statemachine.exceptions import InvalidDefinition, InvalidStateValue, TransitionNotAllowed

from statecharts import Instance, Outcome, UnsupportedChart, compile_chart

from .charts import (
    HIERARCHICAL,
    Boom,
    Door,
    Recorder,
    Relay,
    Shop,
    ShopModel,
    Strict,
    Ticker,
    Triage,
)


def test_applied_outcome_names_source_target_and_transition() -> None:
    chart = compile_chart(Triage)
    instance = chart.create(Recorder())
    outcome = instance.send("route", amount=42)
    assert outcome.applied
    assert bool(outcome) is True
    assert outcome.reason is None
    assert (outcome.event, outcome.source.id, outcome.target) == ("route", "inbox", instance.state)
    assert outcome.transition is chart.transitions[1]
    assert instance.state.id == "large"


@pytest.mark.parametrize(
    ("setup", "event", "reason"),
    [
        ([], "teleport", "unknown_event"),
        ([], "reset", "no_transition"),
        ([("route", {"amount": -1})], "route", "terminated"),
    ],
)
def test_event_without_enabled_transition_is_ignored_with_a_reason(
    setup: list[tuple[str, dict[str, Any]]], event: str, reason: str
) -> None:
    instance = compile_chart(Triage).create(Recorder())
    for name, payload in setup:
        instance.send(name, **payload)
    before = instance.state
    outcome = instance.send(event)
    assert not outcome
    assert (outcome.applied, outcome.reason, outcome.target, outcome.transition) == (
        False,
        reason,
        None,
        None,
    )
    assert instance.state is before


def test_event_whose_guards_all_fail_is_ignored_as_guards_rejected() -> None:
    model = Recorder()
    model.locked = True
    instance = compile_chart(Triage).create(model)
    outcome = instance.send("route", amount=50)
    assert (outcome.applied, outcome.reason, instance.state.id) == (
        False,
        "guards_rejected",
        "inbox",
    )


def test_guards_are_tried_in_declaration_order_and_the_first_enabled_wins() -> None:
    model = Recorder()
    instance = compile_chart(Triage).create(model)
    instance.send("route", amount=3)
    assert instance.state.id == "small"
    guards = [entry[0] for entry in model.log if entry[0].startswith("is_")]
    assert guards == ["is_small"]


def test_final_state_ignores_every_later_event() -> None:
    instance = compile_chart(Door).create(Recorder())
    assert instance.send("demolish").applied
    assert instance.is_terminated
    assert [instance.send(e).reason for e in ("open", "close", "nope")] == ["terminated"] * 3


def test_strict_chart_raises_transition_not_allowed_like_python_statemachine() -> None:
    instance = compile_chart(Strict).create(Recorder())
    with pytest.raises(TransitionNotAllowed, match=r"Can't Hum when in Off."):
        instance.send("hum")
    with pytest.raises(TransitionNotAllowed, match=r"Can't teleport when in Off."):
        instance.send("teleport")
    assert instance.state.id == "off"


def test_event_must_be_a_string() -> None:
    instance = compile_chart(Door).create(Recorder())
    with pytest.raises(TypeError, match=r"event must be a str, got int"):
        instance.send(3)  # type: ignore[arg-type]


def test_dotted_event_matches_its_declared_prefix_as_in_python_statemachine() -> None:
    model = ShopModel()
    instance = compile_chart(Shop).create(model)
    assert instance.send("add.more").applied
    assert instance.state.id == "cart"
    assert not instance.send("promo").applied
    assert instance.send("promo.code.extra", code="X").applied


# -- failures leave a documented state ---------------------------------------------------------


class Fragile(StateChart):
    """Each group has one callback that raises when asked to."""

    catch_errors_as_events = False

    a = State(initial=True, exit="exit_a")
    b = State(enter="enter_b", final=True)
    go = a.to(b, cond="guard", before="before_go", on="on_go_action", after="after_go")

    def _maybe(self, name: str, boom: str) -> None:
        self.model.log.append(name)
        if boom == name:
            raise Boom(name)

    def guard(self, boom: str = "") -> bool:
        self._maybe("guard", boom)
        return True

    def before_go(self, boom: str = "") -> None:
        self._maybe("before", boom)

    def exit_a(self, boom: str = "") -> None:
        self._maybe("exit", boom)

    def on_go_action(self, boom: str = "") -> None:
        self._maybe("on", boom)

    def enter_b(self, boom: str = "") -> None:
        self._maybe("enter", boom)

    def after_go(self, boom: str = "") -> None:
        self._maybe("after", boom)


class FragileMachine(Fragile, StateMachine):  # type: ignore[misc]
    """The same chart as python-statemachine's StateMachine, the documented reference."""


@pytest.mark.parametrize(
    ("failing", "state_after"),
    [
        ("guard", "a"),
        ("before", "a"),
        ("exit", "a"),
        ("on", "a"),
        ("enter", "a"),
        ("after", "b"),
    ],
)
def test_exception_in_a_callback_reaches_the_caller_and_leaves_the_reference_state(
    failing: str, state_after: str
) -> None:
    compiled_model, reference_model = Recorder(), Recorder()
    instance = compile_chart(Fragile).create(compiled_model)
    reference = FragileMachine(reference_model)
    with pytest.raises(Boom, match=failing):
        instance.send("go", boom=failing)
    with pytest.raises(Boom, match=failing):
        reference.send("go", boom=failing)
    assert instance.state.id == state_after
    assert [s.id for s in reference.configuration] == [state_after]
    assert compiled_model.log == reference_model.log


def test_instance_keeps_working_after_a_callback_failed() -> None:
    instance = compile_chart(Fragile).create(Recorder())
    with pytest.raises(Boom):
        instance.send("go", boom="on")
    assert instance.send("go").applied
    assert instance.state.id == "b"


# -- run to completion -------------------------------------------------------------------------


def test_events_sent_by_callbacks_run_after_the_current_event_in_order() -> None:
    model = Recorder()
    instance = compile_chart(Relay).create(model)
    outcome = instance.send("go")
    assert outcome.applied
    assert outcome.target is not None
    assert outcome.target.id == "b"
    assert instance.state.id == "c"
    forwarded = [entry for entry in model.log if entry[0] == "on_enter_state"]
    assert [entry[2] for entry in forwarded] == ["a", "b", "c"]


def test_event_sent_from_a_callback_reports_queued() -> None:
    seen: list[Outcome] = []

    class Echo(StateChart):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="again") | b.to(a)

        def again(self) -> None:
            seen.append(self.send("go"))

    instance = compile_chart(Echo).create()
    instance.send("go")
    assert [(o.applied, o.reason) for o in seen] == [(False, "queued")]
    assert instance.state.id == "a"


def test_events_queued_by_a_failing_event_are_dropped() -> None:
    class Dropping(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State()
        go = a.to(b, on="queue_then_fail") | b.to(a)

        def queue_then_fail(self) -> None:
            self.send("go")
            if self.model.level:
                self.model.level -= 1
                raise Boom("once")

    failing_once = [Recorder(), Recorder()]
    for model in failing_once:
        model.level = 1
    instance = compile_chart(Dropping).create(failing_once[0])
    reference = Dropping(failing_once[1])
    for machine in (instance, reference):
        with pytest.raises(Boom):
            machine.send("go")
    assert instance.state.id == "a"
    assert [s.id for s in reference.configuration] == ["a"]
    assert instance.send("go").applied
    reference.send("go")
    assert instance.state.id == "a"
    assert [s.id for s in reference.configuration] == ["a"]


# -- self-transitions as python-statemachine runs them -----------------------------------------


def test_internal_self_transition_runs_no_exit_but_enters_in_a_statechart() -> None:
    model = Recorder()
    instance = compile_chart(Ticker).create(model)
    model.log.clear()
    instance.send("tick")
    assert [entry[0] for entry in model.log] == [
        "before_transition",
        "count",
        "on_enter_state",
        "after_transition",
    ]


def test_internal_self_transition_runs_no_entry_in_a_state_machine() -> None:
    model = Recorder()
    instance = compile_chart(Strict).create(model)
    instance.send("switch")
    model.log.clear()
    instance.send("hum")
    assert model.log == [("hummed",)]


def test_external_self_transition_exits_and_enters() -> None:
    model = Recorder()
    instance = compile_chart(Ticker).create(model)
    model.log.clear()
    instance.send("bump")
    assert [entry[0] for entry in model.log] == [
        "before_transition",
        "on_exit_state",
        "count",
        "on_enter_state",
        "after_transition",
    ]


def test_targetless_transition_runs_actions_and_stays() -> None:
    model = ShopModel()
    instance = compile_chart(Shop).create(model)
    instance.send("add")
    outcome = instance.send("ping")
    assert outcome.applied
    assert outcome.transition is not None
    assert outcome.transition.target is None
    assert instance.state.id == "cart"
    assert ("pong", "ping", "cart", None, None, (), ()) in model.log


# -- instances and models ----------------------------------------------------------------------


def test_instances_are_small_slotted_objects_sharing_one_chart() -> None:
    chart = compile_chart(Door)
    first, second = chart.create(Recorder()), chart.create(Recorder())
    assert isinstance(first, Instance)
    assert not hasattr(first, "__dict__")
    assert sys.getsizeof(first) <= 64
    assert first.chart is second.chart is chart
    assert type(first) is type(second)


def test_initial_state_entry_receives_the_create_keywords() -> None:
    model = Recorder()
    compile_chart(Door).create(model, reason="inspection")
    assert model.log[0] == (
        "on_enter_state",
        "__initial__",
        "closed",
        "",
        "closed",
        (),
        (("reason", "inspection"),),
    )


def test_resume_enters_a_state_without_running_callbacks() -> None:
    model = Recorder()
    instance = compile_chart(Door).resume("opened", model)
    assert instance.state.id == "opened"
    assert model.log == []
    assert instance.send("close").applied


#: Statecharts whose start runs no eventless transition (python-statemachine's start_value
#: runs the macrostep after entering; resume runs nothing).
_RESUMABLE = [
    name
    for name, (declared, _, _) in sorted(HIERARCHICAL.items())
    if not any(t.is_eventless and not t.initial for t in compile_chart(declared).transitions)
]


@pytest.mark.parametrize("name", _RESUMABLE)
def test_c10_resume_starts_where_python_statemachines_start_value_does(name: str) -> None:
    """C10: ``resume(state)`` in a statechart enters the configuration python-statemachine's
    ``start_value=state`` enters (the other regions of a parallel ancestor too, in its order),
    running no callback; every event then goes the same way."""
    declared, model_type, events = HIERARCHICAL[name]
    chart = compile_chart(declared)
    assert chart.is_structured or name == "assembly"
    for state in chart.states:
        if state.kind != "atomic" or state.final:  # entering a final raises done.state.*
            continue
        model = model_type()
        instance = chart.resume(state.id, model)
        assert model.log == []
        reference = declared(model_type(), start_value=state.value)
        assert ids(instance.configuration) == ids(reference.configuration), state.id
        for event in events:
            reference_ids = _configuration_after(reference, event)
            assert _configuration_after(instance, event) == reference_ids, (state.id, event)


def _configuration_after(machine: Any, event: str) -> list[str] | str:
    try:
        machine.send(event)
    except Exception as error:  # compared across the two engines
        return type(error).__name__
    return ids(machine.configuration)


def ids(states: Any) -> list[str]:
    return [state.id for state in states]


def test_resume_of_an_unknown_state_names_the_states() -> None:
    with pytest.raises(InvalidStateValue, match=r"'ajar' is not a state of Door"):
        compile_chart(Door).resume("ajar")


def test_chart_methods_see_the_instance_as_self_and_can_call_each_other() -> None:
    class Helpers(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="outer")

        def outer(self) -> None:
            self.inner(self.model)

        def inner(self, model: list[str]) -> None:
            model.append(f"inner, terminated: {self.is_terminated}")

    log: list[str] = []
    compile_chart(Helpers).create(log).send("go")
    assert log == ["inner, terminated: False"]


def test_callback_names_resolve_on_model_instance_attributes() -> None:
    class Flags:
        def __init__(self, open_: bool) -> None:
            self.open = open_

    class Gatekeeper(StateChart):
        shut = State(initial=True)
        through = State(final=True)
        walk = shut.to(through, cond="open")

    chart = compile_chart(Gatekeeper)
    assert chart.create(Flags(True)).send("walk").applied
    assert not chart.create(Flags(False)).send("walk").applied


def test_an_instance_attribute_shadowing_a_model_class_callback_runs_instead() -> None:
    """As python-statemachine binds ``getattr(model, name)``: the instance's callable, not
    the method of its class."""

    class Model:
        def __init__(self) -> None:
            self.calls: list[str] = []

        def hook(self) -> None:
            self.calls.append("class method")

    class Hooked(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="hook")

    def run(make: Callable[[Model], Any]) -> list[str]:
        patched = Model()
        patched.hook = lambda: patched.calls.append("instance attribute")  # type: ignore[method-assign]
        make(patched).send("go")
        return patched.calls

    assert run(compile_chart(Hooked).create) == run(Hooked) == ["instance attribute"]


def test_name_missing_from_model_class_and_instance_is_reported_at_creation() -> None:
    class Flags:
        def __init__(self, **flags: bool) -> None:
            self.__dict__.update(flags)

    class Gatekeeper(StateChart):
        shut = State(initial=True)
        through = State(final=True)
        walk = shut.to(through, cond="open")

    chart = compile_chart(Gatekeeper)
    assert chart.create(Flags(open=True)).send("walk").applied
    with pytest.raises(InvalidDefinition) as ours:
        chart.create(Flags(closed=True))
    with pytest.raises(InvalidDefinition) as theirs:
        Gatekeeper(Flags(closed=True))
    assert str(ours.value) == str(theirs.value)


class _Target:
    def __init__(self) -> None:
        self.log: list[str] = []

    def act(self) -> None:
        self.log.append("act")


class _Proxy:
    """A model delegating to another object: ``act`` is answered by ``__getattr__`` only."""

    def __init__(self) -> None:
        self._target = _Target()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


class _ListingProxy(_Proxy):
    """A proxy listing what it delegates in ``dir()``, as python-statemachine looks names up."""

    def __dir__(self) -> list[str]:
        return [*object.__dir__(self), *dir(self._target)]


class _Lying:
    """A model whose ``dir()`` lists ``act`` it has not."""

    def __dir__(self) -> list[str]:
        return [*object.__dir__(self), "act"]


class _Hiding:
    """A model whose ``dir()`` leaves out a name its class defines."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def act(self) -> None:
        self.log.append("model act")

    def on_enter_b(self) -> None:
        self.log.append("model enter b")

    def __dir__(self) -> list[str]:
        return [n for n in object.__dir__(self) if n not in ("act", "on_enter_b")]


class _Acting(StateChart):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="act")


class _ActingInside(StateChart):
    """A statechart (its own binding) with the same callback."""

    class outer(State.Compound):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="act")


@pytest.mark.parametrize("chart", [_Acting, _ActingInside], ids=lambda chart: chart.__name__)
def test_a_name_a_model_answers_only_through_getattr_is_not_found_at_creation(
    chart: type[StateChart],
) -> None:
    """C12: python-statemachine finds a model's names by ``dir(model)``; a name only
    ``__getattr__`` answers is not found, with its error, when the instance is created."""
    with pytest.raises(InvalidDefinition) as theirs:
        chart(_Proxy())
    with pytest.raises(InvalidDefinition) as ours:
        compile_chart(chart).create(_Proxy())
    assert str(ours.value) == str(theirs.value)
    assert "Did not found name 'act'" in str(ours.value)
    model = _ListingProxy()
    compile_chart(chart).create(model).send("go")
    assert model._target.log == ["act"]


def test_a_name_a_models_dir_lists_is_read_from_the_instance() -> None:
    """C9, C12: a proxy listing the names it delegates in ``dir()`` provides them, as in
    python-statemachine."""
    reference = _Acting(_ListingProxy())
    reference.send("go")
    model = _ListingProxy()
    compile_chart(_Acting).create(model).send("go")
    assert model._target.log == reference.model._target.log == ["act"]


def test_a_name_a_models_dir_lists_but_it_lacks_raises_as_in_python_statemachine() -> None:
    """C12: python-statemachine reads each name ``dir()`` lists when the machine is built: a
    name listed but missing raises its ``AttributeError`` then."""
    with pytest.raises(AttributeError) as theirs:
        _Acting(_Lying())
    with pytest.raises(AttributeError) as ours:
        compile_chart(_Acting).create(_Lying())
    assert str(ours.value) == str(theirs.value)


def test_a_name_a_models_dir_leaves_out_is_not_the_models() -> None:
    """C12: a model class's ``__dir__`` leaving out a name the class defines hides it from
    python-statemachine: not found (its error) when nothing else provides it; where the
    chart provides it too (python-statemachine then runs the chart's only) or it is a
    naming-convention callback (python-statemachine then does not run it), the compiled
    run, resolving the model's class once, refuses the instance when it is created."""
    with pytest.raises(InvalidDefinition) as theirs:
        _Acting(_Hiding())
    with pytest.raises(InvalidDefinition) as ours:
        compile_chart(_Acting).create(_Hiding())
    assert str(ours.value) == str(theirs.value)

    class Both(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="act")

        def act(self) -> None:
            self.model.log.append("chart act")

    class Conventional(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

    for chart, name in ((Both, "act"), (Conventional, "on_enter_b")):
        with pytest.raises(UnsupportedChart, match=f"_Hiding.{name}") as refused:
            compile_chart(chart).create(_Hiding())
        assert refused.value.chart == chart.__name__
        assert "__dir__" in refused.value.construct
        assert compile_chart(chart).create(Recorder()) is not None


def test_payload_keyword_named_like_an_injected_value_is_dropped() -> None:
    model = Recorder()
    instance = compile_chart(Triage).create(model)
    instance.send("route", amount=3, source="spoofed")
    on_route = next(entry for entry in model.log if entry[0] == "on_route")
    assert on_route[3] == "inbox"


def test_positional_payload_binds_as_in_python_statemachine() -> None:
    model = ShopModel()
    reference_model = ShopModel()
    instance = compile_chart(Shop).create(model)
    reference = Shop(reference_model)
    for machine in (instance, reference):
        machine.send("add", 7, 8, tag="x")
    assert model.log == reference_model.log


# -- the instance API and the observation hook ------------------------------------------------


def test_configuration_of_a_flat_chart_is_the_current_state() -> None:
    chart = compile_chart(Door)
    instance = chart.create(Recorder())
    assert instance.configuration == {Door.closed}
    instance.send("open")
    assert instance.configuration == {Door.opened}
    assert [state.id for state in instance.configuration] == [instance.state.id]


def test_outcome_lists_the_transitions_its_event_took() -> None:
    chart = compile_chart(Triage)
    instance = chart.create(Recorder())
    taken = instance.send("route", amount=3)
    assert taken.transitions == (taken.transition,) == (chart.transitions[0],)
    assert instance.send("route", amount=3).transitions == ()


def test_create_without_a_model_gives_a_model_object_as_python_statemachine_does() -> None:
    from statemachine.model import Model

    class Plain(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

    instance = compile_chart(Plain).create()
    assert type(instance.model) is Model
    assert type(compile_chart(Plain).resume("b").model) is Model
    assert type(Plain().model) is Model


def test_create_and_resume_set_up_instances_through_instance_init(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[Any] = []
    original = Instance.__init__

    def spy(self: Instance, node: Any, model: Any) -> None:
        made.append(node.state.id)
        original(self, node, model)

    monkeypatch.setattr(Instance, "__init__", spy)
    chart = compile_chart(Door)
    chart.create(Recorder())
    chart.resume("opened", Recorder())
    assert made == ["closed", "opened"]


def test_observers_see_every_outcome_while_registered_and_nothing_after() -> None:
    from statecharts import observe_outcomes

    chart = compile_chart(Relay)
    seen: list[tuple[str, str | None]] = []
    with observe_outcomes(lambda instance, outcome: seen.append((outcome.event, outcome.reason))):
        instance = chart.create(Recorder())
        instance.send("go")
        instance.send("teleport")
    instance.send("go")
    # the event queued by a callback is reported when queued, then when it runs
    assert seen == [("go", "queued"), ("go", None), ("go", None), ("teleport", "unknown_event")]


def test_observers_are_scoped_to_their_block_and_may_overlap() -> None:
    from statecharts import observe_outcomes

    chart = compile_chart(Door)
    outer: list[str] = []
    inner: list[str] = []
    instance = chart.create(Recorder())
    with observe_outcomes(lambda _, outcome: outer.append(outcome.event)):
        instance.send("open")
        with observe_outcomes(lambda _, outcome: inner.append(outcome.event)):
            instance.send("close")
        instance.send("open")
    assert outer == ["open", "close", "open"]
    assert inner == ["close"]


def test_observers_see_events_sent_from_other_threads() -> None:
    import threading

    from statecharts import observe_outcomes

    chart = compile_chart(Door)
    seen: list[str] = []
    lock = threading.Lock()

    def observe(_: Instance, outcome: Outcome) -> None:
        with lock:
            seen.append(outcome.event)

    def run() -> None:
        instance = chart.create(Recorder())
        for _ in range(50):
            instance.send("open")
            instance.send("close")

    with observe_outcomes(observe):
        threads = [threading.Thread(target=run) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(seen) == 4 * 100


# -- errors caught as events (python-statemachine's StateChart default) ------------------------


class CaughtFlat(StateChart):
    a = State(initial=True)
    b = State(enter="greet")
    c = State()
    z = State(final=True)

    go = a.to(b, on="boom_on")
    pick = a.to(c, cond="boom_guard") | a.to(b)
    later = a.to(b, before="boom_before")
    error_execution = b.to(z) | c.to(z)

    def boom_on(self) -> None:
        raise ValueError("on")

    def boom_guard(self) -> bool:
        raise ValueError("guard")

    def boom_before(self) -> None:
        raise ValueError("before")

    def greet(self) -> None:
        raise ValueError("enter")


@pytest.mark.parametrize(
    ("event", "reason"),
    [("go", None), ("pick", None), ("later", "failed")],
)
def test_a_raising_callback_becomes_error_execution_as_in_python_statemachine(
    event: str, reason: str | None
) -> None:
    reference = CaughtFlat()
    reference.send(event)
    instance = compile_chart(CaughtFlat).create()
    outcome = instance.send(event)
    assert [s.id for s in instance.configuration] == [s.id for s in reference.configuration]
    assert outcome.reason == reason
    if reason is None:
        # the transition completed, its raising callbacks skipped, then error.execution ran
        assert outcome.transitions[-1].target == "z"
        assert outcome.transitions[-1].events == ("error_execution", "error.execution")


def test_a_raising_enter_of_the_initial_state_does_not_stop_create() -> None:
    class Start(StateChart):
        a = State(initial=True, enter="boom")
        b = State(final=True)
        go = a.to(b)
        error_execution = a.to(b)

        def boom(self) -> None:
            raise ValueError("enter")

    assert [s.id for s in Start().configuration] == ["b"]
    assert compile_chart(Start).create().state.id == "b"


def test_an_error_while_handling_error_execution_is_dropped() -> None:
    class Loop(StateChart):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="boom")
        error_execution = b.to(a, on="boom")

        def boom(self) -> None:
            raise ValueError("again")

    reference = Loop()
    reference.send("go")
    instance = compile_chart(Loop).create()
    instance.send("go")
    # the handler's failing action cancels it: both stay in b, no error.execution loop
    assert instance.state.id == reference.current_state_value == "b"


def test_raise_from_outside_a_callback_is_a_send() -> None:
    instance = compile_chart(Door).create(Recorder())
    assert instance.raise_("open").applied
    assert instance.state.id == "opened"


def test_events_queued_behind_a_raising_guard_run_before_the_next_event() -> None:
    class Feed(StateChart):
        catch_errors_as_events = False

        a = State(initial=True)
        b = State()
        c = State()

        fan = a.to(b, on="fan_out")
        check = b.to(c, cond="explode")
        step = b.to(c) | c.to(a)

        def fan_out(self) -> None:
            self.send("check")
            self.send("step")

        def explode(self) -> bool:
            raise ValueError("guard")

    reference = Feed()
    instance = compile_chart(Feed).create()
    for machine in (reference, instance):
        with pytest.raises(ValueError, match="guard"):
            machine.send("fan")
    assert reference.current_state_value == instance.state.id == "b"
    reference.send("step")
    outcome = instance.send("step")
    # the left-over "step" ran first (b -> c), then this one (c -> a)
    assert reference.current_state_value == instance.state.id == "a"
    assert outcome.transition is not None
    assert outcome.transition.id == "c:step:a"


class Seen:
    """A model collecting the keyword names each ``after`` callback received."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []


class Ping(StateChart[Seen]):
    a = State(initial=True)
    b = State(final=True)

    ping = a.to(None, after="log")
    go = a.to(b, after="log")

    def log(self, **kw: Any) -> None:
        self.model.seen.append(sorted(kw))


def test_after_of_a_targetless_transition_gets_the_configurations_as_in_python_statemachine() -> (
    None
):
    reference_model, model = Seen(), Seen()
    reference = Ping(reference_model)
    instance = compile_chart(Ping).create(model)
    for event in ("ping", "go"):
        reference.send(event)
        instance.send(event)
    assert model.seen == reference_model.seen
    assert "new_configuration" in model.seen[0]
    assert "new_configuration" not in model.seen[1]
