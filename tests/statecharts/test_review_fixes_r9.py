"""Fixes of review round 9 of issue 10 (breaks 15, 14, 3, 1, 11): the scan's verdict on a
held closure, a model's own ``__getattribute__``, async callbacks a model instance holds,
classes given as callbacks, and coroutines plain callbacks return."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import UnsupportedChart, compile_chart

LOG: list[Any] = []


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


def _run(make: Any, model: Any, events: tuple[str, ...] = ("go",)) -> Any:
    """The configuration after each event (or what creating or sending raised), the log."""
    LOG.clear()
    try:
        machine = make(model)
    except Exception as error:
        return ("create raised", type(error).__name__)
    steps: list[Any] = []
    for event in events:
        try:
            result = machine.send(event)
            if asyncio.iscoroutine(result):
                asyncio.run(result)
            steps.append(ids(machine))
        except Exception as error:
            steps.append(type(error).__name__)
    return steps, list(LOG)


# -- break 15: the verdict on a held closure ------------------------------------------------


class HoldsAGuard:
    def __init__(self, allowed: Any) -> None:
        self.allowed = allowed


class YesOrNo(StateChart[Any]):
    a = State(initial=True)
    yes = State(final=True)
    no = State(final=True)
    go = a.to(yes, cond="allowed") | a.to(no)


def _calling(checker: Any) -> Any:
    return lambda machine: checker(machine)


def _benign(machine: Any) -> bool:
    return True


def _asks_the_class(machine: Any) -> bool:
    return isinstance(machine, StateChart)


def test_c6_a_held_closure_around_code_asking_the_class_is_refused_after_a_benign_one() -> None:
    compiled = compile_chart(YesOrNo)
    benign = compiled.create(HoldsAGuard(_calling(_benign)))
    benign.send("go")
    assert ids(benign) == ["yes"]
    with pytest.raises(UnsupportedChart, match=r"HoldsAGuard\.allowed"):
        compiled.create(HoldsAGuard(_calling(_asks_the_class))).send("go")
    again = compiled.create(HoldsAGuard(_calling(_benign)))
    again.send("go")
    assert ids(again) == ["yes"]


def test_c6_the_verdicts_kept_on_held_closures_stay_bounded() -> None:
    compiled = compile_chart(YesOrNo)
    resolver = None
    for _ in range(300):
        machine = compiled.create(HoldsAGuard(_calling(lambda machine: True)))
        resolver = machine._node.binding.resolver
    assert resolver is not None
    assert 0 < len(resolver.vetted) <= 256


# -- break 14: a model's own __getattribute__ ------------------------------------------------


class GuardedActing(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")

    def on_enter_b(self) -> None:
        LOG.append("enter b")


class AnswersAValue:
    """A ``__getattribute__`` answering a guard attribute with another value."""

    def __getattribute__(self, name: str) -> Any:
        if name == "allowed":
            return False
        return object.__getattribute__(self, name)

    allowed = True

    def act(self) -> None:
        LOG.append("act")


class HandsOutAnAsyncMethod:
    """A ``__getattribute__`` handing out the class's async method."""

    def __getattribute__(self, name: str) -> Any:
        return object.__getattribute__(self, name)

    def allowed(self) -> bool:
        return True

    async def act(self) -> None:
        LOG.append("async act")


class HandsOutAnotherAction:
    def __getattribute__(self, name: str) -> Any:
        if name == "act":
            return lambda: LOG.append("other act")
        return object.__getattribute__(self, name)

    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("act")


class ADict(dict):  # type: ignore[type-arg]
    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("act")


@pytest.mark.parametrize(
    "model", [AnswersAValue, HandsOutAnAsyncMethod, HandsOutAnotherAction, ADict]
)
def test_c9_a_model_with_its_own_getattribute_is_bound_through_it_as_in_psm(model: type) -> None:
    reference = _run(GuardedActing, model(), ("go", "go"))
    assert _run(compile_chart(GuardedActing).create, model(), ("go", "go")) == reference


def test_c9_a_model_whose_getattribute_is_a_builtin_bases_is_bound_on_its_class() -> None:
    machine = compile_chart(GuardedActing).create(ADict())
    assert machine._node.binding.resolver.own_getattribute is False
    assert machine._node.binding.held_names == ()
    own = compile_chart(GuardedActing).create(HandsOutAnotherAction())
    assert own._node.binding.resolver.own_getattribute is True
    assert sorted(own._node.binding.held_names) == ["act", "allowed"]


# -- break 3: an async callback only the model instance holds --------------------------------


class Acting(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a, on="act")


class ActingAwaited(Acting):
    async def on_enter_b(self) -> None:
        LOG.append("enter b")


async def _async_act() -> None:
    LOG.append("async act")


async def _async_tagged(tag: str) -> None:
    LOG.append(tag)


class HoldsAnAct:
    def __init__(self, act: Any) -> None:
        self.act = act


def test_c21_an_async_callback_a_model_instance_holds_on_an_awaited_chart_is_awaited() -> None:
    def make() -> Any:
        return HoldsAnAct(_async_act)

    reference = _run(ActingAwaited, make(), ("go", "go"))
    assert reference[1] == ["async act", "enter b", "async act"]
    assert _run(compile_chart(ActingAwaited).create, make(), ("go", "go")) == reference


def test_c21_an_async_partial_a_model_instance_holds_on_a_synchronous_chart_is_refused() -> None:
    reference = _run(Acting, HoldsAnAct(functools.partial(_async_tagged, "partial act")), ("go",))
    assert reference == ([["b"]], ["partial act"])
    with pytest.raises(UnsupportedChart) as refused:
        compile_chart(Acting).create(HoldsAnAct(functools.partial(_async_tagged, "partial act")))
    assert refused.value.where == "HoldsAnAct.act, when the instance is created"
    assert "synchronous chart" in refused.value.construct


# -- break 1: a class or a callable object given as a callback ---------------------------------


class Record:
    """A class named as a callback."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        LOG.append("record")


class Stepping(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)


class StaticClass(Stepping):
    on_enter_b = staticmethod(Record)


class BuiltinAction(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on=len) | b.to(a)


class PartialOfAClass(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on=functools.partial(Record, 1)) | b.to(a)


class CompoundEnteringAClass(StateChart[Any]):
    class p(State.Compound):
        x = State(initial=True)
        y = State()
        hop = x.to(y)

    done = State(final=True)
    go = p.to(done)
    on_enter_y = Record


def _noted(*args: Any, **kwargs: Any) -> None:
    LOG.append("noted")


class PartialOfAFunction(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on=functools.partial(_noted, 1)) | b.to(a)


def _created(make: Any) -> Any:
    """What creating an instance raised (its type and message), else the log of a ``go``."""
    LOG.clear()
    try:
        machine = make()
    except Exception as error:
        return type(error).__name__, str(error)
    machine.send("go")
    return list(LOG)


@pytest.mark.parametrize(
    "chart", [StaticClass, BuiltinAction, PartialOfAClass, CompoundEnteringAClass]
)
def test_c6_a_callable_psm_cannot_adapt_fails_each_instance_as_in_psm(
    chart: type[StateChart[Any]],
) -> None:
    reference = _created(chart)
    assert reference[0] == "AttributeError"
    compiled = compile_chart(chart)  # the class is defined: compiling it fails nothing
    assert _created(compiled.create) == reference
    assert _created(compiled.create) == reference  # each instance, as each machine there


def test_c6_a_partial_of_a_function_given_as_a_callback_runs_as_in_psm() -> None:
    reference = _created(PartialOfAFunction)
    assert reference == ["noted"]
    assert _created(compile_chart(PartialOfAFunction).create) == reference
