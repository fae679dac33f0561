"""A model instance's value shadowing a callable of its class (rule C9): python-statemachine
binds ``getattr(model, name)`` when it builds the machine, so a non-callable value held under
the name of a method is read instead of the method running. The compiled instance answers the
same, on every path ``create`` takes (its first model of a type, later ones, hierarchical
charts, async charts), without building the ``__dict__`` of a model that holds no such value."""

from __future__ import annotations

import asyncio
import functools
import gc
import inspect
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statemachine import State, StateChart

from statecharts import compile_chart

LOG: list[str] = []


class Guarded(StateChart[Any]):
    """A flat chart: the guard and the action are the model's."""

    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")


class NestedGuarded(StateChart[Any]):
    """The same transitions inside a compound state."""

    class outer(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")


class AwaitedGuarded(Guarded):
    """The flat chart, async (an async enter callback of its own)."""

    async def on_enter_b(self) -> None:
        LOG.append("enter b")


class Methods:
    """Guard and action as methods of the model's class."""

    def __init__(self, **values: Any) -> None:
        self.total = 0
        for name, value in values.items():
            setattr(self, name, value)

    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("act")


def _act() -> None:
    LOG.append("static act")


class StaticAndClass:
    """Guard as a class method, action as a static method."""

    def __init__(self, **values: Any) -> None:
        self.total = 0
        for name, value in values.items():
            setattr(self, name, value)

    @classmethod
    def allowed(cls) -> bool:
        return True

    act = staticmethod(_act)


def _answer(value: bool) -> bool:
    return value


class CallableObjects:
    """Guard and action as callable objects held by the class (a partial, a static method)."""

    allowed = functools.partial(_answer, True)
    act = staticmethod(_act)

    def __init__(self, **values: Any) -> None:
        for name, value in values.items():
            setattr(self, name, value)


def _run(make: Any, model: Any, events: tuple[str, ...] = ("go", "go")) -> Any:
    """The configuration after each event and the log (or what creating raised)."""
    LOG.clear()
    machine = make(model)
    steps = []
    for event in events:
        result = machine.send(event)
        if inspect.iscoroutine(result):
            asyncio.run(result)
        steps.append(sorted(state.id for state in machine.configuration))
    return steps, list(LOG)


def _same_as_psm(chart: type[StateChart[Any]], model_type: type, **values: Any) -> None:
    compiled = compile_chart(chart)
    reference = _run(chart, model_type(**values))
    # the first model of a type and a later one take different paths through ``create``
    assert _run(compiled.create, model_type(**values)) == reference
    assert _run(compiled.create, model_type(**values)) == reference


SHADOWING = [False, 0, None, "", 1, "yes", 2.5]


@pytest.mark.parametrize("value", SHADOWING, ids=repr)
@pytest.mark.parametrize("chart", [Guarded, NestedGuarded, AwaitedGuarded])
def test_c9_a_value_shadowing_a_guard_method_is_read_as_in_psm(
    chart: type[StateChart[Any]], value: Any
) -> None:
    _same_as_psm(chart, Methods, allowed=value)


@pytest.mark.parametrize("value", SHADOWING, ids=repr)
@pytest.mark.parametrize("chart", [Guarded, NestedGuarded])
def test_c9_a_value_shadowing_an_action_method_is_read_not_run_as_in_psm(
    chart: type[StateChart[Any]], value: Any
) -> None:
    reference = _run(chart, Methods(act=value))
    assert "act" not in reference[1]
    _same_as_psm(chart, Methods, act=value)


@pytest.mark.parametrize("model_type", [StaticAndClass, CallableObjects])
@pytest.mark.parametrize("name", ["allowed", "act"])
def test_c9_a_value_shadowing_a_static_class_method_or_callable_object_is_read_as_in_psm(
    model_type: type, name: str
) -> None:
    _same_as_psm(Guarded, model_type, **{name: False})


def test_c9_a_model_created_before_and_after_one_shadowing_answers_by_its_own_values() -> None:
    compiled = compile_chart(Guarded)
    plain = _run(Guarded, Methods())
    shadowed = _run(Guarded, Methods(allowed=False))
    assert plain != shadowed
    for values in ({}, {"allowed": False}, {}, {"allowed": False}, {"other": False}, {}):
        expected = shadowed if values.get("allowed") is False else plain
        assert _run(compiled.create, Methods(**values)) == expected


def test_c9_a_value_shadowing_a_method_is_read_on_a_resumed_instance_too() -> None:
    compiled = compile_chart(Guarded)
    instance = compiled.resume("b", Methods(allowed=False))
    assert instance.send("go").applied is False
    assert compiled.resume("b", Methods()).send("go").applied is True


def test_c9_a_model_holding_no_shadow_keeps_its_values_inline() -> None:
    """Telling costs no ``__dict__``: the model's values stay where CPython keeps them."""
    compiled = compile_chart(Guarded)
    for _ in range(3):
        model = Methods()
        compiled.create(model).send("go")
        assert not any(isinstance(value, dict) for value in gc.get_referents(model))


NAMES = st.sampled_from(["allowed", "act", "total", "other"])
VALUES = st.one_of(
    st.sampled_from([False, True, 0, 1, None, "", "x"]),
    st.just(lambda: False),
    st.just(_act),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(NAMES, VALUES, max_size=3), min_size=1, max_size=4))
def test_c9_models_holding_any_values_answer_as_in_psm(models: list[dict[str, Any]]) -> None:
    """Models of one type in a row, each holding values (callable or not) under its class's
    callback names or others: every one runs as python-statemachine runs it."""
    compiled = compile_chart(Guarded)
    for values in models:
        assert _run(compiled.create, Methods(**values)) == _run(Guarded, Methods(**values))


def test_c6_a_builtin_model_class_giving_its_instances_a_dict_is_not_refused() -> None:
    """Only a model class defining ``__dict__`` itself is refused: ``types.SimpleNamespace``
    gives its instances one as any Python class does."""

    def make(value: Any) -> types.SimpleNamespace:
        return types.SimpleNamespace(allowed=value, act=lambda: LOG.append("ns act"))

    for value in (False, True, lambda: False):
        assert _run(compile_chart(Guarded).create, make(value)) == _run(Guarded, make(value))
