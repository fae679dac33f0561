"""Hostile review of commit 5afd3f8 (break 13, rule C9): a model instance's non-callable value
shadowing a callable of its class is read, as python-statemachine reads it.

python-statemachine binds ``getattr(model, name)`` when it builds the machine (and reads a
non-callable one again on each call). The compiled runtime resolves names on the model's
class and asks the instance (``_shadowed``, ``Runtime.for_instance``) only when its values
suggest a shadow. Every test compares the compiled chart with python-statemachine, the
reference: the first part holds the breaks found (each failed on 5afd3f8; fixed or refused
since), the second pins behaviours checked that hold.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import threading
from collections.abc import Callable
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import UnsupportedChart, compile_chart

LOG: list[Any] = []


def _run(chart: type[StateChart[Any]], instance: Any, events: tuple[str, ...]) -> list[Any]:
    steps: list[Any] = []
    for event in events:
        try:
            result = instance.send(event)
            if asyncio.iscoroutine(result):
                asyncio.run(result)
            steps.append(sorted(state.id for state in instance.configuration))
        except Exception as error:
            steps.append(type(error).__name__)
    return steps


def _outcome(
    chart: type[StateChart[Any]],
    make: Callable[[], Any],
    compiled: bool,
    events: tuple[str, ...] = ("go", "go"),
    after: Callable[[Any], None] | None = None,
    resume: str | None = None,
) -> Any:
    LOG.clear()
    model = make()
    try:
        if compiled:
            runtime = compile_chart(chart)
            instance = runtime.create(model) if resume is None else runtime.resume(resume, model)
        else:
            instance = chart(model) if resume is None else chart(model, start_value=resume)
    except Exception as error:
        return ("raises", type(error).__name__)
    if after is not None:
        after(model)
    return _run(chart, instance, events), list(LOG)


def _same(chart: type[StateChart[Any]], make: Callable[[], Any], **options: Any) -> Any:
    """Assert the compiled chart answers as python-statemachine; the reference's answer."""
    reference = _outcome(chart, make, compiled=False, **options)
    compiled = _outcome(chart, make, compiled=True, **options)
    assert compiled == reference
    return reference


def _holding(cls: type, **values: Any) -> Callable[[], Any]:
    def make() -> Any:
        model = cls()
        for name, value in values.items():
            setattr(model, name, value)
        return model

    return make


def _has_dict(model: Any) -> bool:
    return any(isinstance(value, dict) for value in gc.get_referents(model))


class Guarded(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")


class NestedGuarded(StateChart[Any]):
    class outer(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")


class ParallelGuarded(StateChart[Any]):
    class p(State.Parallel):
        class r1(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b, cond="allowed")

        class r2(State.Compound):
            c = State(initial=True)
            d = State()
            go2 = c.to(d, on="act")


class AwaitedGuarded(Guarded):
    async def on_enter_b(self) -> None:
        LOG.append("enter b")


class InitGuarded(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")

    def __init__(self, model: Any = None, flag: int = 1) -> None:
        self.flag = flag
        super().__init__(model)


class PreparedGuarded(Guarded):
    def prepare_event(self) -> dict[str, Any]:
        return {"k": 1}


class Methods:
    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("act")


# ============================================================================================
# Breaks (each fails)
# ============================================================================================


class NoQualname:
    """A callable object python-statemachine cannot adapt (no ``__qualname__``)."""

    def __call__(self) -> bool:
        LOG.append("called")
        return True


class UnadaptableObject:
    allowed = NoQualname()

    def act(self) -> None:
        LOG.append("act")


class UnadaptableBuiltin:
    allowed = len

    def act(self) -> None:
        LOG.append("act")


class UnadaptablePartial:
    allowed = functools.partial(LOG.append, "p")

    def act(self) -> None:
        LOG.append("act")


class TypeOnClass:
    allowed = bool

    def act(self) -> None:
        LOG.append("act")


# break A (fixed): a callable of the model's class python-statemachine cannot adapt, shadowed
# by the instance's value: python-statemachine binds getattr(model, name), the value, never
# adapting the class's callable, so the machine builds and the guard reads the value (False:
# stays in a). The compiled chart failed every instance of the class on create with the
# AttributeError python-statemachine raises only for an unshadowed instance.
@pytest.mark.parametrize(
    "model_type",
    [UnadaptableObject, UnadaptableBuiltin, UnadaptablePartial],
    ids=["callable-object-without-qualname", "builtin-len", "partial-of-builtin"],
)
def test_c9_a_value_shadowing_an_unadaptable_callable_of_the_class_builds_as_in_psm(
    model_type: type,
) -> None:
    reference = _same(Guarded, _holding(model_type, allowed=0))
    assert reference == ([["a"], ["a"]], [])


# break A (fixed), with a callable shadow (the pre-existing half of C9): the instance's lambda
# runs in python-statemachine; the compiled chart raises AttributeError on create
def test_c9_a_callable_shadowing_an_unadaptable_callable_of_the_class_runs_as_in_psm() -> None:
    reference = _same(Guarded, _holding(UnadaptableObject, allowed=lambda: False))
    assert reference == ([["a"], ["a"]], [])


# break A' (fixed): a type on the class (``allowed = bool``) shadowed by the instance's value:
# python-statemachine reads the value and runs; the compiled chart refuses the instance
# (UnsupportedChart, "a callback without an inspectable signature") though nothing of the
# class's callable is used
def test_c9_a_value_shadowing_a_type_on_the_class_is_read_as_in_psm() -> None:
    reference = _same(Guarded, _holding(TypeOnClass, allowed=0))
    assert reference == ([["a"], ["a"]], [])


def test_c9_a_type_on_the_class_no_instance_shadows_fails_on_create_as_in_psm() -> None:
    """Unshadowed, python-statemachine fails to adapt the type when it builds the machine."""
    reference = _same(Guarded, _holding(TypeOnClass))
    assert reference == ("raises", "AttributeError")


class OwnDictProperty:
    """A model class whose ``__dict__`` is a property (python-statemachine never reads it:
    ``getattr(model, name)`` reads the instance's real attributes)."""

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        return {}

    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("act")


# break B (refused since): the compiled runtime takes the instance's names from its
# ``__dict__``; a class answering that with a property of its own hid every shadow:
# python-statemachine read False (stays in a), the compiled chart ran the method (went to b).
# Such a class is now refused when its first instance is created, naming ``__dict__``.
@pytest.mark.parametrize(
    "values",
    [{}, {"allowed": False}, {"act": 0}, {"act": lambda: LOG.append("lambda")}],
    ids=["no-value", "guard-value", "action-value", "action-callable"],
)
def test_c6_a_model_whose_class_defines_dict_is_refused_not_read_otherwise(
    values: dict[str, Any],
) -> None:
    assert _outcome(Guarded, _holding(OwnDictProperty, **values), compiled=False)[0] != "raises"
    with pytest.raises(UnsupportedChart, match=r"OwnDictProperty\.__dict__"):
        compile_chart(Guarded).create(_holding(OwnDictProperty, **values)())


class ChartAllowed(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on="act") | b.to(a)

    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("chart act")


class ChartAllowedValue(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed") | b.to(a)
    allowed = True


class Empty:
    pass


# break C (fixed): a declared name the chart provides and the model's class lacks, held by the
# model instance: python-statemachine lists it by dir(model) and binds it too (a guard is false if
# either is; an action runs both), as the compiled chart does for naming-convention names
# (``on_enter_b``); the compiled chart ignores the instance's
@pytest.mark.parametrize(
    ("chart", "values", "expected"),
    [
        (ChartAllowed, {"allowed": False}, ([["a"], ["a"]], [])),
        (ChartAllowedValue, {"allowed": False}, ([["a"], ["a"]], [])),
        (
            ChartAllowed,
            {"act": lambda: LOG.append("instance act")},
            ([["b"], ["a"]], ["chart act", "instance act"]),
        ),
    ],
    ids=["chart-method-instance-value", "chart-attribute-instance-value", "instance-callable"],
)
def test_c9_a_name_the_chart_provides_held_by_the_model_instance_is_read_as_in_psm(
    chart: type[StateChart[Any]], values: dict[str, Any], expected: Any
) -> None:
    assert _same(chart, _holding(Empty, **values)) == expected


# ============================================================================================
# Pins (behaviours checked that hold)
# ============================================================================================


class Base:
    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("act")


class Inherits(Base):
    pass


class AttributeBase:
    allowed = True

    def act(self) -> None:
        LOG.append("act")


class MethodOverAttribute(AttributeBase):
    def allowed(self) -> bool:  # type: ignore[override]
        return True


class AttributeOverMethod(Base):
    allowed = True  # type: ignore[assignment]


class SlotOverMethod(Base):
    __slots__ = ("allowed",)  # type: ignore[misc]


class SlotAndDict(Base):
    __slots__ = ("kept",)

    def __init__(self) -> None:
        self.kept = 1


class ClassAndStatic:
    @classmethod
    def allowed(cls) -> bool:
        return True

    @staticmethod
    def act() -> None:
        LOG.append("act")


class PartialMethod:
    def _allowed(self, answer: bool) -> bool:
        return answer

    allowed = functools.partialmethod(_allowed, True)

    def act(self) -> None:
        LOG.append("act")


class Cached:
    @functools.cached_property
    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("act")


class WithGetattr(Methods):
    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


class WithGetattribute(Methods):
    def __getattribute__(self, name: str) -> Any:
        return object.__getattribute__(self, name)


class WithDir(Methods):
    def __dir__(self) -> list[str]:
        return ["allowed", "act"]


@pytest.mark.parametrize(
    ("model_type", "values"),
    [
        (Inherits, {"allowed": False}),
        (Inherits, {"allowed": None}),
        (Inherits, {"act": 0}),
        (Inherits, {"allowed": 0, "other": 1}),
        (MethodOverAttribute, {"allowed": False}),
        (AttributeOverMethod, {"allowed": False}),
        (SlotOverMethod, {"allowed": False}),
        (SlotAndDict, {"allowed": False}),
        (ClassAndStatic, {"allowed": False, "act": 0}),
        (PartialMethod, {"allowed": 0}),
        (Cached, {"allowed": 0}),
        (WithGetattr, {"allowed": 0}),
        (WithGetattribute, {"allowed": 0}),
        (WithDir, {"allowed": 0}),
        (Methods, {"unrelated": 1}),
    ],
    ids=lambda item: item.__name__ if isinstance(item, type) else repr(sorted(item)),
)
@pytest.mark.parametrize("chart", [Guarded, NestedGuarded, AwaitedGuarded, InitGuarded])
def test_c9_pin_shadows_on_class_shapes_and_chart_kinds_answer_as_psm(
    chart: type[StateChart[Any]], model_type: type, values: dict[str, Any]
) -> None:
    _same(chart, _holding(model_type, **values))


def test_c9_pin_an_unset_slot_over_a_base_method_raises_as_psm() -> None:
    assert _same(Guarded, _holding(SlotOverMethod)) == ("raises", "AttributeError")


def test_c9_pin_a_parallel_chart_reads_the_shadows_as_psm() -> None:
    reference = _same(
        ParallelGuarded, _holding(Methods, allowed=False, act=0), events=("go", "go2")
    )
    assert reference[0][-1] == ["a", "d", "p", "r1", "r2"]


def test_c9_pin_a_chart_with_prepare_event_reads_the_shadows_as_psm() -> None:
    _same(PreparedGuarded, _holding(Methods, allowed=False))
    _same(PreparedGuarded, _holding(Methods, act=0))


@pytest.mark.parametrize("resume", ["a", "b"])
def test_c9_pin_resume_reads_the_shadows_as_psm(resume: str) -> None:
    _same(Guarded, _holding(Methods, allowed=False), resume=resume)
    _same(NestedGuarded, _holding(Methods, act=0), resume=resume)


@pytest.mark.parametrize(
    "after",
    [
        lambda model: setattr(model, "allowed", True),
        lambda model: delattr(model, "allowed"),
        lambda model: setattr(model, "allowed", lambda: False),
    ],
    ids=["set-true", "deleted", "replaced-by-callable"],
)
@pytest.mark.parametrize("chart", [Guarded, NestedGuarded])
def test_c9_pin_a_value_shadow_is_read_again_on_each_call_as_psm(
    chart: type[StateChart[Any]], after: Callable[[Any], None]
) -> None:
    _same(chart, _holding(Methods, allowed=False), after=after)


def test_c9_pin_a_shadow_set_after_create_changes_nothing_as_psm() -> None:
    reference = _same(Guarded, _holding(Methods), after=lambda m: setattr(m, "allowed", 0))
    assert reference == ([["b"], ["a"]], ["act", "act"])


class Conventions(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)


class ConventionMethods:
    def on_enter_b(self) -> None:
        LOG.append("enter b")

    def before_go(self) -> None:
        LOG.append("before go")

    def on_go(self) -> None:
        LOG.append("on go")

    def after_transition(self) -> None:
        LOG.append("after transition")

    def on_exit_a(self) -> None:
        LOG.append("exit a")


@pytest.mark.parametrize("value", [0, None])
@pytest.mark.parametrize(
    "name", ["on_enter_b", "before_go", "on_go", "after_transition", "on_exit_a"]
)
def test_c9_pin_a_convention_callback_shadowed_by_a_value_answers_as_psm(
    name: str, value: Any
) -> None:
    _same(Conventions, _holding(ConventionMethods, **{name: value}))


class PreparedModel(Methods):
    def prepare_event(self) -> dict[str, Any]:
        return {"k": 2}


def test_c9_pin_a_prepare_event_shadowed_by_a_value_is_refused_where_psm_raises() -> None:
    with pytest.raises(TypeError):
        PreparedGuarded(_holding(PreparedModel, prepare_event=0)())
    with pytest.raises(UnsupportedChart):
        compile_chart(PreparedGuarded).create(_holding(PreparedModel, prepare_event=0)())


def test_c9_pin_many_models_of_one_type_alternating_shadows_answer_as_psm() -> None:
    chart = compile_chart(Guarded)
    for index in range(12):
        values = [{"allowed": False}, {"act": None}, {}, {"other": 1}][index % 4]
        model = _holding(Methods, **values)()
        reference = Guarded(_holding(Methods, **values)())
        instance = chart.create(model)
        reference.send("go")
        instance.send("go")
        assert [s.id for s in instance.configuration] == [s.id for s in reference.configuration]


def test_c9_pin_the_same_model_twice_reads_its_shadow_each_time() -> None:
    chart = compile_chart(Guarded)
    model = _holding(Methods, allowed=False)()
    first, second = chart.create(model), chart.create(model)
    first.send("go")
    second.send("go")
    assert [s.id for s in first.configuration] == [s.id for s in second.configuration] == ["a"]


def test_c9_pin_threads_creating_concurrently_read_each_models_shadow() -> None:
    chart = compile_chart(Guarded)
    wrong: list[Any] = []

    def work(offset: int) -> None:
        try:
            for index in range(100):
                shadowed = (index + offset) % 2 == 1
                model = Methods()
                if shadowed:
                    model.allowed = 0  # type: ignore[assignment,method-assign]
                instance = chart.create(model)
                instance.send("go")
                expected = ["a"] if shadowed else ["b"]
                if [s.id for s in instance.configuration] != expected:
                    wrong.append((offset, index))
        except Exception as error:
            wrong.append(error)

    threads = [threading.Thread(target=work, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def _fresh_model_type() -> type:
    class Fresh:
        def __init__(self) -> None:
            self.total = 0
            self.name = "fresh"

        def allowed(self) -> bool:
            return True

        def act(self) -> None:
            LOG.append("act")

        def on_enter_b(self) -> None:
            LOG.append("enter b")

    return Fresh


@pytest.mark.parametrize("chart", [Guarded, NestedGuarded, AwaitedGuarded])
def test_c9_pin_a_model_holding_values_but_no_shadow_keeps_them_inline(
    chart: type[StateChart[Any]],
) -> None:
    runtime = compile_chart(chart)
    model_type = _fresh_model_type()
    for how in ("create", "create", "resume", "create", "resume"):
        model = model_type()
        assert not _has_dict(model)
        if how == "create":
            runtime.create(model)
        else:
            runtime.resume("b", model)
        assert not _has_dict(model), how


def test_c9_pin_a_model_holding_no_shadow_after_a_shadowed_one_keeps_values_inline() -> None:
    runtime = compile_chart(Guarded)
    model_type = _fresh_model_type()
    shadowed = model_type()
    shadowed.allowed = False
    runtime.create(shadowed)
    model = model_type()
    runtime.create(model)
    assert not _has_dict(model)
