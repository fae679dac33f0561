"""What ``compile_chart`` reads from a declaration, and what it refuses."""

# Rules checked here (docs/spec.md): C2, C6, C12.

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import InvalidDefinition

from statecharts import (
    CallbackDef,
    Chart,
    ChartDef,
    Group,
    RefKind,
    UnsupportedChart,
    compile_chart,
    run_order,
)

from .charts import Door, Gate, Shop, Triage


def declared(callbacks: tuple[CallbackDef, ...]) -> list[tuple[str, str, bool | None]]:
    """The non-convention callbacks of a group: (kind, ref, expected)."""
    return [(c.kind.value, c.ref, c.expected) for c in callbacks if not c.convention]


def test_compile_reads_states_in_declaration_order() -> None:
    chart = compile_chart(Triage)
    assert [(s.id, s.name, s.value, s.initial, s.final) for s in chart.states] == [
        ("inbox", "Inbox", "inbox", True, False),
        ("small", "Small", "small", False, False),
        ("large", "Large", "large", False, False),
        ("rejected", "Rejected", "rejected", False, True),
    ]
    assert chart.initial.id == "inbox"
    assert [s.id for s in chart.finals] == ["rejected"]


def test_compile_reads_events_and_transitions_in_declaration_order() -> None:
    chart = compile_chart(Triage)
    assert [e.id for e in chart.events] == ["route", "reset", "reject"]
    assert [(t.id, t.source, t.target, t.events, t.internal) for t in chart.transitions] == [
        ("inbox:route:small", "inbox", "small", ("route",), False),
        ("inbox:route:large", "inbox", "large", ("route",), False),
        ("inbox:route:rejected", "inbox", "rejected", ("route",), False),
        ("small:reset:inbox", "small", "inbox", ("reset",), False),
        ("small:reject:rejected", "small", "rejected", ("reject",), False),
        ("large:reset:inbox", "large", "inbox", ("reset",), False),
        ("large:reject:rejected", "large", "rejected", ("reject",), False),
    ]


def test_guards_keep_their_declared_form() -> None:
    triage, gate, shop = compile_chart(Triage), compile_chart(Gate), compile_chart(Shop)
    assert declared(triage.transitions[1].cond) == [
        ("name", "is_large", True),
        ("name", "is_blocked", False),
    ]
    assert declared(gate.transitions[0].cond) == [("expression", "ready and not locked", True)]
    pull = gate.transitions_from("ajar")[0]
    assert declared(pull.cond) == [("expression", "locked or big", False)]
    checkout = next(t for t in shop.transitions if t.events == ("checkout",))
    assert declared(checkout.cond) == [("name", "has_items", True), ("name", "can_pay", True)]
    assert declared(checkout.validators) == [("name", "check_amount", None)]
    assert declared(checkout.before) == [("callable", "remember", None)]
    assert [c.label for c in checkout.cond] == ["has_items", "can_pay"]
    assert [c.label for c in pull.cond] == ["not (locked or big)"]
    assert [c.label for c in triage.transitions[1].cond] == ["is_large", "not is_blocked"]


def test_actions_keep_their_declared_form_and_run_order() -> None:
    door = compile_chart(Door)
    closed, opened = door.state("closed"), door.state("opened")
    assert declared(closed.enter) == [("name", "lights_off", None)]
    assert declared(closed.exit) == [("name", "creak", None)]
    assert declared(opened.exit) == [("callable", "slam", None)]
    assert [(c.ref, c.priority) for c in run_order(opened.exit)] == [
        ("on_exit_state", 0),
        ("slam", 30),
        ("on_exit_opened", 30),
    ]
    conventions = [c.ref for c in closed.enter if c.convention]
    assert conventions == ["on_enter_state", "on_enter_closed"]


def test_naming_conventions_are_limited_to_their_event() -> None:
    shop = compile_chart(Shop)
    add = shop.transitions_from("browsing")[0]
    by_ref = {c.ref: c.only_event for c in add.on}
    assert by_ref["on_add"] == "add"
    assert by_ref["on_transition"] is None


def test_compiling_the_same_class_twice_returns_the_same_chart() -> None:
    assert compile_chart(Door) is compile_chart(Door)


def test_compiled_chart_is_immutable() -> None:
    chart = compile_chart(Door)
    with pytest.raises(dataclasses.FrozenInstanceError):
        chart.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        chart.states[0].final = True  # type: ignore[misc]
    assert isinstance(chart.transitions, tuple)
    assert isinstance(chart, ChartDef)
    assert isinstance(chart, Chart)


def test_unknown_state_lookup_names_the_known_states() -> None:
    with pytest.raises(KeyError, match=r"Door has no state 'ajar'.*closed, opened, gone"):
        compile_chart(Door).state("ajar")


def test_transition_ids_are_stable_and_unique() -> None:
    class Twice(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, cond="x") | a.to(b)
        x = False

    assert [t.id for t in compile_chart(Twice).transitions] == ["a:go:b", "a:go:b#2"]


def test_signatures_are_resolved_at_compile_time_never_per_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chart = compile_chart(Triage)
    from .charts import Recorder

    instance = chart.create(Recorder())

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("signature inspected while running events")

    monkeypatch.setattr(inspect, "signature", forbidden)
    monkeypatch.setattr(inspect.Signature, "from_callable", forbidden)
    assert instance.send("route", amount=3).applied
    assert instance.send("reset").applied
    assert instance.send("route", amount=30).applied


# -- refusal, not approximation ---------------------------------------------------------------


def refusal(cls_body: dict[str, Any]) -> UnsupportedChart:
    chart = type("Refused", (StateChart,), cls_body)
    with pytest.raises(UnsupportedChart) as caught:
        compile_chart(chart)
    return caught.value


def test_invoke_is_refused_naming_the_state() -> None:
    class Invoking(StateChart):
        a = State(initial=True, invoke=lambda: 1)
        b = State(final=True)
        go = a.to(b)

    with pytest.raises(UnsupportedChart, match=r"invoke.*state 'a'"):
        compile_chart(Invoking)


def test_error_execution_transitions_compile_and_record_the_flag() -> None:
    class Catching(StateChart):
        a = State(initial=True)
        b = State(final=True)
        error_execution = a.to(b)

    chart = compile_chart(Catching)
    assert chart.flags.catch_errors_as_events is True
    assert chart.transitions[0].events == ("error_execution", "error.execution")


def test_an_async_generator_callback_is_refused() -> None:
    # async callbacks run (tests/statecharts/test_async.py); an async generator is no callback
    class Async(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="later")

        async def later(self) -> Any:
            yield None

    with pytest.raises(UnsupportedChart, match=r"an async generator as a callback.*later"):
        compile_chart(Async)


def test_attribute_shadowing_the_runtime_api_is_refused() -> None:
    class Shadow(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def chart(self) -> None:
            return None

    with pytest.raises(UnsupportedChart, match=r"runtime's own API.*'chart'"):
        compile_chart(Shadow)


def test_callback_naming_an_event_is_refused() -> None:
    class Loop(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="stop")
        stop = b.from_(a)

    with pytest.raises(UnsupportedChart, match=r"a callback naming an event.*'stop'"):
        compile_chart(Loop)


def test_an_enter_callback_of_any_state_naming_an_event_is_refused_when_compiled() -> None:
    # the first of three states, not only the last one looked at
    class Entering(StateChart):
        idle = State(initial=True, enter="go")
        busy = State()
        done = State(final=True)
        go = idle.to(busy)
        end = busy.to(done)

    with pytest.raises(UnsupportedChart, match=r"a callback naming an event.*'go'"):
        compile_chart(Entering)


def test_a_guard_naming_an_event_called_state_is_refused_when_compiled() -> None:
    # ``state`` is no exception: a callback naming an event is refused before any instance
    class Named(StateChart):
        idle = State(initial=True)
        done = State(final=True)
        go = idle.to(done, cond="state")
        other = idle.to(done, event="state")

    # (an event called ``state``, the instance's own attribute, is refused first since)
    with pytest.raises(UnsupportedChart, match=r"event 'state'"):
        compile_chart(Named)


def test_class_level_listeners_are_refused() -> None:
    class Listening(StateChart):
        listeners = (object(),)
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

    with pytest.raises(UnsupportedChart, match=r"a class-level listener"):
        compile_chart(Listening)


def test_compile_rejects_something_that_is_not_a_chart() -> None:
    with pytest.raises(TypeError, match=r"needs a python-statemachine StateChart class"):
        compile_chart(dict)  # type: ignore[arg-type]


# -- definition problems are python-statemachine's own ---------------------------------------


def test_no_initial_state_is_reported_as_python_statemachine_reports_it() -> None:
    with pytest.raises(InvalidDefinition, match=r"one and only one initial state"):

        class TwoInitials(StateChart):
            a = State(initial=True)
            b = State(initial=True)
            go = a.to(b)


def test_unreachable_state_is_reported_as_python_statemachine_reports_it() -> None:
    with pytest.raises(InvalidDefinition, match=r"unreachable states.*'island'"):

        class Island(StateChart):
            a = State(initial=True)
            b = State(final=True)
            island = State()
            go = a.to(b)
            leave = island.to(b)


def test_non_final_state_without_exit_is_reported_as_python_statemachine_reports_it() -> None:
    with pytest.raises(InvalidDefinition, match=r"no outgoing transition.*'stuck'"):

        class Trap(StateChart):
            a = State(initial=True)
            stuck = State()
            go = a.to(stuck)


def test_unreachable_final_state_is_reported_as_python_statemachine_reports_it() -> None:
    with pytest.raises(InvalidDefinition, match=r"Disconnected states.*'end'"):

        class NoWayToEnd(StateChart):
            a = State(initial=True)
            b = State()
            end = State(final=True)
            go = a.to(b) | b.to(a)


def test_unresolved_callback_name_is_reported_as_python_statemachine_reports_it() -> None:
    class Missing(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, cond="nowhere")

    chart = compile_chart(Missing)
    with pytest.raises(InvalidDefinition) as ours:
        chart.create()
    with pytest.raises(InvalidDefinition) as theirs:
        Missing()
    assert str(ours.value) == str(theirs.value)


def test_malformed_guard_expression_is_reported_at_compile_time() -> None:
    class Malformed(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, cond="ready and (")
        ready = True

    with pytest.raises(InvalidDefinition, match=r"Failed to parse boolean expression"):
        compile_chart(Malformed)


def test_hand_built_ir_gets_its_state_index() -> None:
    from statecharts import StateDef, TransitionDef

    a = StateDef("a", "A", "a", True, False)
    b = StateDef("b", "B", "b", False, True)
    go = TransitionDef("a:go:b", "a", "b", ("go",), False)
    chart = ChartDef("Hand", "tests.Hand", (a, b), (), (go,))
    assert chart.state("b") is b
    assert chart.transitions_from("a") == (go,)
    assert Group.COND.value == "cond"
    assert RefKind.EXPRESSION.value == "expression"


def test_every_runtime_instance_attribute_is_protected_from_chart_attributes() -> None:
    from statecharts import Instance
    from statecharts._compiler import RUNTIME_NAMES
    from statecharts._runtime import StatechartInstance, _MachineInstance, _Unavailable

    for cls in (Instance, StatechartInstance, _MachineInstance):
        # (python-statemachine's machine API the instance lacks only raises: a chart may
        # declare such a name itself)
        own = {
            name
            for name, value in vars(cls).items()
            if not name.startswith("__") and not isinstance(value, _Unavailable)
        }
        # a chart may declare the flag itself: the attribute then gives the same value
        own.discard("catch_errors_as_events")
        assert own <= RUNTIME_NAMES, cls


def test_chart_attribute_named_like_a_runtime_internal_is_refused() -> None:
    class Shadow(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def _drain(self) -> None:
            return None

    with pytest.raises(UnsupportedChart, match=r"runtime's own API.*'_drain'"):
        compile_chart(Shadow)


# -- C6: the machine handed to other code ------------------------------------------------------


class _Log:
    def __init__(self) -> None:
        self.log: list[Any] = []


def _record(machine: Any, what: str) -> None:
    """A module helper a chart hands itself to, reading only what the instance offers."""
    machine.model.log.append(
        (what, machine.current_state_value, list(machine.configuration_values))
    )


def _peek(machine: Any) -> Any:
    return machine.allowed_events


def _via(machine: Any) -> Any:
    return _peek(machine)


class _Toggle(StateChart[_Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)


class _ThroughHelpers(_Toggle):
    def on_enter_b(self) -> None:
        _via(self)


class _Aliased(_Toggle):
    def on_enter_b(self) -> None:
        keep = self
        keep.model.log.append(1)


class _Returned(_Toggle):
    def on_enter_b(self) -> Any:
        return self


class _Printed(_Toggle):
    def on_enter_b(self) -> None:
        print(self)


class _Setattr(_Toggle):
    def on_enter_b(self) -> None:
        setattr(self, "x", 1)  # noqa: B010


class _Vars(_Toggle):
    def on_enter_b(self) -> None:
        vars(self)["x"] = 1


class _Dict(_Toggle):
    def on_enter_b(self) -> None:
        self.__dict__["x"] = 1


class _Attrgetter(_Toggle):
    def on_enter_b(self) -> None:
        operator.attrgetter("states")(self)


class _Recorded(_Toggle):
    def on_enter_b(self) -> None:
        _record(self, "enter b")


@pytest.mark.parametrize(
    ("declared", "where"),
    [
        (_ThroughHelpers, "reads self.allowed_events (through _peek(machine)"),
        (_Aliased, "passes self on"),
        (_Returned, "passes self on"),
        (_Printed, "passes self on"),
        (_Setattr, "passes self on"),
        (_Vars, "passes self on"),
        (_Dict, "reads self.__dict__"),
        (_Attrgetter, "passes self on"),
    ],
)
def test_c6_the_machine_handed_to_code_the_compiler_cannot_check_is_refused(
    declared: type[StateChart[_Log]], where: str
) -> None:
    """C6: a helper of the module given ``self`` is read as the method is (its parameter in
    ``self``'s place, helpers it calls too); ``self`` handed anywhere else is refused, naming
    the method and the line."""
    with pytest.raises(UnsupportedChart) as caught:
        compile_chart(declared)
    assert caught.value.where.startswith(f"{declared.__name__}.on_enter_b ")
    assert where in caught.value.where


def test_c6_a_helper_reading_what_the_instance_offers_runs_as_python_statemachine_runs() -> None:
    """C6: ``current_state_value`` and ``configuration_values`` are offered as
    python-statemachine gives them, so a helper reading them is compiled and agrees."""
    reference, instance = _Recorded(_Log()), compile_chart(_Recorded).create(_Log())
    for machine in (reference, instance):
        machine.send("go")
        machine.send("go")
        machine.send("go")
    assert instance.model.log == reference.model.log == [("enter b", "b", ["b"])] * 2


class _AskingModel(_Log):
    def ready(self, machine: Any) -> bool:
        return bool(machine.allowed_events)


def test_c6_machine_api_reached_at_run_time_fails_loudly_not_as_error_execution() -> None:
    """C6: a model's method (unknown when the chart compiles) given ``machine`` reads
    python-statemachine's API the instance lacks: the run raises ``UnsupportedChart`` naming
    it, never a swallowed ``error.execution``; ``hasattr`` still answers ``False``."""

    class Guarded(StateChart[_Log]):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, cond="ready")

    instance = compile_chart(Guarded).create(_AskingModel())
    with pytest.raises(UnsupportedChart, match=r"machine\.allowed_events"):
        instance.send("go")
    assert not hasattr(instance, "allowed_events")
    assert not hasattr(instance, "no_such_thing")
    with pytest.raises(UnsupportedChart, match=r"sets machine\.current_state_value"):
        instance.current_state_value = "b"  # type: ignore[misc]


def _logged(function: Any) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return wrapper


class _Decorated(_Toggle):
    @_logged
    def on_enter_b(self) -> None:
        self.model.log.append(self.allowed_events)


def test_c6_a_decorated_method_is_read_through_its_wrapper() -> None:
    """C6: a method wrapped by a ``functools.wraps`` decorator is read as itself too."""
    with pytest.raises(
        UnsupportedChart, match=r"_Decorated\.on_enter_b reads self\.allowed_events"
    ):
        compile_chart(_Decorated)
