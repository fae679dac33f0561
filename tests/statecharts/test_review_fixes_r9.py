"""Fixes of review round 9 of issue 10 (breaks 15, 14, 3, 1, 11): the scan's verdict on a
held closure, a model's own ``__getattribute__``, async callbacks a model instance holds,
classes given as callbacks, and coroutines plain callbacks return (rules C6, C9, C13, C21)."""

from __future__ import annotations

import asyncio
import functools
import gc
import inspect
import types
import warnings
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import InvalidDefinition

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
            if inspect.iscoroutine(result):
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


# -- break 11: a coroutine a plain before or on callback returns -----------------------------


async def _tagged_coroutine(tag: str) -> str:
    LOG.append(tag)
    return tag


@types.coroutine
def _generator_coroutine() -> Any:
    LOG.append("generator coroutine")
    return "done"
    yield  # a generator-based coroutine


class ReturnsACoroutine(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a)

    def act(self) -> Any:
        return _tagged_coroutine("ran")


class ReturnsAGeneratorCoroutine(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, before="act") | b.to(a)

    def act(self) -> Any:
        return _generator_coroutine()


@pytest.mark.parametrize("chart", [ReturnsACoroutine, ReturnsAGeneratorCoroutine])
def test_c21_an_awaitable_a_plain_callback_returns_as_the_events_only_result_is_refused(
    chart: type[StateChart[Any]],
) -> None:
    reference = _run(chart, None)
    assert reference[0] == [["b"]]
    assert len(reference[1]) == 1  # psm's send ran it
    LOG.clear()
    machine = compile_chart(chart).create()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # closed, never left unawaited
        with pytest.raises(UnsupportedChart) as refused:
            machine.send("go")
        gc.collect()
    assert refused.value.where == f"{chart.__name__}.act, when the event runs"
    assert ids(machine) == ["a"]
    assert LOG == []  # refused before it ran


class ReturnsValues(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a, before="maybe")

    def act(self) -> Any:
        LOG.append("act")
        return 42

    def maybe(self) -> Any:
        LOG.append("maybe")
        return None if LOG else 0


def test_c21_a_plain_callback_returning_another_value_runs_as_in_psm() -> None:
    events = ("go", "go", "go", "go")
    reference = _run(ReturnsValues, None, events)
    assert reference[1] == ["act", "maybe", "act", "maybe"]
    assert _run(compile_chart(ReturnsValues).create, None, events) == reference


class TwoResults(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, before="first", on="act") | b.to(a)

    def first(self) -> None:
        LOG.append("first")

    def act(self) -> Any:
        return _tagged_coroutine("never")


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
def test_c21_an_awaitable_among_the_events_results_is_refused_never_dropped() -> None:
    """python-statemachine's ``send`` returns two results as a list and runs neither (its
    coroutine is dropped); the compiled run refuses the awaitable (round 10: psm runs it when
    the other result's callback fails as ``error.execution``, which the compiled run cannot
    tell ahead)."""
    reference = _run(TwoResults, None)
    assert reference == ([["b"]], ["first"])
    instance = compile_chart(TwoResults).create()
    with pytest.raises(UnsupportedChart, match=r"TwoResults\.act, when the event runs"):
        instance.send("go")
    gc.collect()


class Counting:
    def __init__(self) -> None:
        self.total = 0

    def count(self) -> None:
        self.total += 1


class Ticking(StateChart[Any]):
    a = State(initial=True)
    tick = a.to(a, on="count")


def test_c13_a_callback_that_returns_none_only_has_its_result_left_unchecked() -> None:
    machine = compile_chart(Ticking).create(Counting())
    machine.send("tick")
    assert machine.model.total == 1
    assert "_returned" not in machine._node.binding.source


def _plain_generator() -> Any:
    yield "not awaitable"


class ReturnsGenerators(StateChart[Any]):
    """``act`` hands out a plain generator first, a generator-based coroutine next."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a, on="act")

    def act(self) -> Any:
        LOG.append("act")
        return _generator_coroutine() if LOG.count("act") > 1 else _plain_generator()


def test_c21_a_generator_based_coroutine_is_refused_after_a_plain_generator_was_not() -> None:
    reference = _run(ReturnsGenerators, None, ("go", "go"))
    assert reference == ([["b"], ["a"]], ["act", "act", "generator coroutine"])
    LOG.clear()
    machine = compile_chart(ReturnsGenerators).create()
    machine.send("go")
    with pytest.raises(UnsupportedChart, match=r"ReturnsGenerators\.act"):
        machine.send("go")
    assert LOG == ["act", "act"]


class Fielded(StateChart[Any]):
    """A chart whose ``on`` callback is a field its ``__init__`` sets (C20); errors are
    caught as events."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="handler")

    def __init__(self, model: Any = None, handler: Any = None) -> None:
        self.handler = handler
        super().__init__(model)


def test_c21_an_async_callable_a_chart_field_holds_is_refused_not_swallowed_as_an_error() -> None:
    """python-statemachine awaits it; the compiled chart, synchronous by its classes, refuses
    it when it runs, to the sender, where ``catch_errors_as_events`` swallowed it."""
    reference = _run(lambda model: Fielded(model, _async_act), None)
    assert reference == ([["b"]], ["async act"])
    machine = compile_chart(Fielded).create(handler=_async_act)
    with pytest.raises(InvalidDefinition, match=r"^handler is an async callback"):
        machine.send("go")
    assert ids(machine) == ["a"]


def _hands_on(machine: Any) -> bool:
    return isinstance(machine, StateChart)


class FieldGuarded(StateChart[Any]):
    """A guard a chart field holds (set by the chart's ``__init__`` before the hand-over)."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="check") | a.to(c)

    def __init__(self, model: Any = None, check: Any = _hands_on) -> None:
        self.check = check
        super().__init__(model)


def test_c6_a_chart_field_s_callable_handing_the_machine_to_a_builtin_is_refused() -> None:
    """As a model's callback doing the same is: python-statemachine's machine is a
    ``StateChart``, the compiled instance is not, so the answer would differ silently."""
    reference = FieldGuarded()
    reference.send("go")
    assert [s.id for s in reference.configuration] == ["b"]
    instance = compile_chart(FieldGuarded).create()
    with pytest.raises(UnsupportedChart, match=r"FieldGuarded\.check"):
        instance.send("go")
    harmless = compile_chart(FieldGuarded).create(None, lambda: True)
    assert harmless.send("go").applied
    assert [s.id for s in harmless.configuration] == ["b"]
