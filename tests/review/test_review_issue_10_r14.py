"""Review round 14 of commit 80435ff (rule C9: names a model instance holds are bound as
python-statemachine binds them; a model class defining ``__dict__`` is refused).

python-statemachine (the reference) is the oracle throughout: each test runs a chart on it and
on the compiled runtime and asserts the compiled answer equals the reference's. The first part
holds the breaks found (each fails on 80435ff, fixed since); the second pins behaviours
checked that hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import types
from collections.abc import Callable
from typing import Any

import pydantic
import pytest
from statemachine import State, StateChart
from statemachine.io import load

from statecharts import UnsupportedChart, compile_chart

LOG: list[Any] = []


def _run(instance: Any, events: tuple[str, ...]) -> list[Any]:
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
    return _run(instance, events), list(LOG)


def _same(chart: type[StateChart[Any]], make: Callable[[], Any], **options: Any) -> Any:
    """Assert the compiled chart answers as python-statemachine; the reference's answer."""
    reference = _outcome(chart, make, compiled=False, **options)
    compiled = _outcome(chart, make, compiled=True, **options)
    assert compiled == reference
    return reference


def _twice(chart: type[StateChart[Any]], make: Callable[[], Any], **options: Any) -> Any:
    """``_same`` for a first model of a type and a later one (``create``'s fast path)."""
    first = _same(chart, make, **options)
    assert _same(chart, make, **options) == first
    return first


def _holding(cls: type, **values: Any) -> Callable[[], Any]:
    def make() -> Any:
        model = cls()
        for name, value in values.items():
            setattr(model, name, value)
        return model

    return make


class ChartNames(StateChart[Any]):
    """The guard and the action are the chart's; a model's class lacks them (``chart_only``)."""

    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")

    def allowed(self) -> bool:
        LOG.append("chart allowed")
        return True

    def act(self) -> None:
        LOG.append("chart act")


class NoCallbacks(StateChart[Any]):
    """A chart declaring no callback at all."""

    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)


class Empty:
    pass


# ============================================================================================
# Breaks (each failed on 80435ff; fixed since)
# ============================================================================================


class LazyAttributes:
    """A model answering unknown names through ``__getattr__``, which fails for them (a lazy
    proxy reaching a backend, say). python-statemachine never asks it for a name ``dir(model)``
    does not list."""

    def __init__(self) -> None:
        self.x = 1

    def __getattr__(self, name: str) -> Any:
        if name == "state" or name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(f"no backend for {name}")


class RecordedAttributes:
    """A model recording each name its ``__getattr__`` is asked for."""

    def __init__(self) -> None:
        self.x = 1

    def __getattr__(self, name: str) -> Any:
        if name != "state" and not name.startswith("__"):
            LOG.append(f"asked {name}")
        raise AttributeError(name)


# break 1 (new in 80435ff; both answered as python-statemachine on 5afd3f8): a name the chart
# provides is looked for on a model instance holding values with ``hasattr(model, name)``
# (``_shadowed``'s ``chart_names`` loop), which runs the class's ``__getattr__``.
# python-statemachine lists the model's names by ``dir(model)`` and reads only those, so it
# never calls ``__getattr__`` here: the chart runs (b, then a), nothing asked. The compiled
# ``create`` raises the ``__getattr__``'s RuntimeError (lazy), or asks it for ``act`` and
# ``allowed`` on each create, first model and later ones (recorded).
@pytest.mark.parametrize(
    "model_type", [LazyAttributes, RecordedAttributes], ids=["lazy", "recorded"]
)
def test_c9_chart_names_are_not_asked_of_a_models_getattr_as_in_psm(model_type: type) -> None:
    reference = _twice(ChartNames, model_type)
    assert reference == (
        [["b"], ["a"]],
        ["chart allowed", "chart act", "chart allowed", "chart act"],
    )


class DictProperty:
    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        return {}


class ViaMixin(DictProperty):
    """A model class whose ``__dict__`` is a base class's property."""


class DictAttribute:
    """A model class with a plain class attribute called ``__dict__``."""

    __dict__: dict[str, Any] = {}  # type: ignore[assignment]


# break 2 (new in 80435ff; each answered as python-statemachine on 5afd3f8): the refusal of a
# model class defining ``__dict__`` is raised for every chart, since every chart has
# naming-convention names a model instance could hold, even where nothing of the model's is
# bound: a chart with no callbacks, or a chart whose names the model's class lacks.
# python-statemachine lists an instance's names by ``dir(model)``, which reads that same
# ``__dict__`` (empty here), so nothing of the instance is bound and the chart runs; the
# compiled chart reads the same ``__dict__`` for those names, so it could run too (what needs
# the real dict is only a value shadowing a callable of the class, which these have none
# of). The compiled ``create`` raises UnsupportedChart.
@pytest.mark.parametrize(
    ("chart", "make", "expected"),
    [
        (NoCallbacks, ViaMixin, ([["b"], ["a"]], [])),
        (NoCallbacks, DictAttribute, ([["b"], ["a"]], [])),
        (
            ChartNames,
            ViaMixin,
            ([["b"], ["a"]], ["chart allowed", "chart act", "chart allowed", "chart act"]),
        ),
        (
            ChartNames,
            _holding(ViaMixin, allowed=False),
            ([["b"], ["a"]], ["chart allowed", "chart act", "chart allowed", "chart act"]),
        ),
    ],
    ids=[
        "no-callbacks-mixin-property",
        "no-callbacks-class-attribute",
        "chart-names-mixin-property",
        "chart-names-mixin-property-value-held",
    ],
)
def test_c9_a_model_class_defining_dict_runs_where_nothing_of_its_class_is_shadowed(
    chart: type[StateChart[Any]], make: Callable[[], Any], expected: Any
) -> None:
    assert _twice(chart, make) == expected


class Prepared(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a, on="act")

    def prepare_event(self) -> dict[str, Any]:
        return {"extra": 1}

    def act(self, extra: int) -> None:
        LOG.append(("act", extra))


# break 3 (older than 80435ff: the instance ``resume`` and ``restore`` build is set up by
# ``Instance.__init__``, never the ``_MachineInstance.__init__`` of a chart with a
# ``prepare_event``, so its ``_prepared`` is unset): python-statemachine's ``start_value``
# machine sends on (a, then b, the action getting the prepared argument); every ``send`` of
# the compiled instance resumed raises AttributeError ("'Prepared' object has no attribute
# '_prepared'")
@pytest.mark.parametrize("model", [None, Empty], ids=["no-model", "model"])
def test_c10_a_chart_with_prepare_event_resumed_sends_as_psm(model: Any) -> None:
    make = (lambda: None) if model is None else model
    reference = _same(Prepared, make, resume="b")
    assert reference == ([["a"], ["b"]], [("act", 1), ("act", 1)])


def test_c19_a_chart_with_prepare_event_restored_sends_as_psm() -> None:
    reference = Prepared()
    compiled = compile_chart(Prepared)
    restored = compiled.restore(compiled.create().snapshot())
    LOG.clear()
    reference.send("go")
    expected = ([state.id for state in reference.configuration], list(LOG))
    LOG.clear()
    restored.send("go")
    assert ([state.id for state in restored.configuration], list(LOG)) == expected


SCXML = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s0" version="1.0"
  datamodel="python">
  <state id="s0"><transition event="go" target="s1" /></state>
  <state id="s1"><transition event="go" target="s0" /></state>
</scxml>"""


# break 3, on a chart python-statemachine's SCXML loader builds (it gives every loaded chart a
# prepare_event): resuming or restoring any SCXML chart, then sending, raises AttributeError
@pytest.mark.parametrize("how", ["resume", "restore"])
def test_c18_an_scxml_chart_resumed_or_restored_sends_as_psm(how: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        reference = load(SCXML, format="scxml", trusted=True)(start_value="s1")
        reference.send("go")
        chart = compile_chart(load(SCXML, format="scxml", trusted=True))
        if how == "resume":
            instance = chart.resume("s1")
        else:
            started = chart.create()
            started.send("go")
            instance = chart.restore(started.snapshot(), started.model)
        instance.send("go")
    expected = [state.id for state in reference.configuration]
    assert expected == ["s0"]
    assert [state.id for state in instance.configuration] == expected


# ============================================================================================
# Pins (behaviours checked that hold)
# ============================================================================================


def _says(name: str, answer: Any) -> Callable[[], Any]:
    def callback() -> Any:
        LOG.append(f"model {name}")
        return answer

    return callback


class Unless(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, unless="blocked") | b.to(a)

    def blocked(self) -> bool:
        LOG.append("chart blocked")
        return True


class Expression(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed and not blocked") | b.to(a)

    def allowed(self) -> bool:
        LOG.append("chart allowed")
        return True

    def blocked(self) -> bool:
        LOG.append("chart blocked")
        return True


class StaticNames(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on="act") | b.to(a)

    @staticmethod
    def allowed() -> bool:
        LOG.append("chart static")
        return True

    @classmethod
    def act(cls) -> None:
        LOG.append("chart class act")


class AttributeNames(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed") | b.to(a)
    allowed = True


class EnterExit(StateChart[Any]):
    a = State(initial=True)
    b = State(enter="hello", exit="bye")
    go = a.to(b) | b.to(a)

    def hello(self) -> None:
        LOG.append("chart hello")

    def bye(self) -> None:
        LOG.append("chart bye")


class Validated(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, validators="check") | b.to(a)

    def check(self) -> None:
        LOG.append("chart check")


class TwiceNamed(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="x", on="x") | b.to(a, cond=["x", "y"])

    def x(self) -> bool:
        LOG.append("chart x")
        return True

    def y(self) -> bool:
        LOG.append("chart y")
        return True


class Convention(ChartNames):
    def on_enter_b(self) -> None:
        LOG.append("chart enter b")


def _fail() -> None:
    raise ValueError("invalid")


# python-statemachine combines a name's callbacks (the chart's, then the instance's) with
# ``and`` before ``unless`` or ``not`` negates it: ``unless="blocked"`` with the chart's True
# and the instance's False lets the transition through
@pytest.mark.parametrize(
    ("chart", "values"),
    [
        (Unless, {"blocked": False}),
        (Unless, {"blocked": True}),
        (Unless, {"blocked": None}),
        (Unless, {"blocked": _says("blocked", False)}),
        (Expression, {"allowed": False}),
        (Expression, {"blocked": False}),
        (Expression, {"blocked": 0, "allowed": 1}),
        (Expression, {"blocked": _says("blocked", False)}),
        (StaticNames, {"allowed": False}),
        (StaticNames, {"act": _says("act", None)}),
        (StaticNames, {"act": 5}),
        (AttributeNames, {"allowed": None}),
        (AttributeNames, {"allowed": _says("allowed", True)}),
        (EnterExit, {"hello": _says("hello", None)}),
        (EnterExit, {"bye": _says("bye", None), "hello": 3}),
        (Validated, {"check": _says("check", None)}),
        (Validated, {"check": _fail}),
        (Validated, {"check": 0}),
        (TwiceNamed, {"x": 0}),
        (TwiceNamed, {"y": 0}),
        (TwiceNamed, {"x": _says("x", True)}),
        (Convention, {"on_enter_b": 0}),
        (Convention, {"on_enter_b": None, "allowed": None}),
        (Convention, {"on_enter_b": _says("enter b", None)}),
    ],
    ids=lambda item: item.__name__ if isinstance(item, type) else repr(sorted(item)),
)
def test_c9_pin_chart_names_held_by_the_instance_answer_as_psm(
    chart: type[StateChart[Any]], values: dict[str, Any]
) -> None:
    _twice(chart, _holding(Empty, **values))


class NestedNames(StateChart[Any]):
    class outer(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")

    def allowed(self) -> bool:
        LOG.append("chart allowed")
        return True

    def act(self) -> None:
        LOG.append("chart act")


class AwaitedNames(ChartNames):
    async def on_enter_b(self) -> None:
        LOG.append("enter b")


class InitNames(ChartNames):
    def __init__(self, model: Any = None, flag: int = 1) -> None:
        self.flag = flag
        super().__init__(model)


class InitField(StateChart[Any]):
    """The guard is a field the chart's own ``__init__`` sets."""

    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")

    def __init__(self, model: Any = None) -> None:
        self.allowed = False
        super().__init__(model)

    def act(self) -> None:
        LOG.append("chart act")


class PreparedNames(ChartNames):
    def prepare_event(self) -> dict[str, Any]:
        return {"k": 1}


async def _async_false() -> bool:
    LOG.append("model async")
    return False


@pytest.mark.parametrize(
    "values",
    [
        {"allowed": False},
        {"allowed": None},
        {"allowed": _says("allowed", False)},
        {"act": _says("act", None)},
        {"act": 0},
    ],
    ids=repr,
)
@pytest.mark.parametrize(
    "chart", [ChartNames, NestedNames, AwaitedNames, InitNames, InitField, PreparedNames]
)
def test_c9_pin_chart_names_held_on_chart_kinds_answer_as_psm(
    chart: type[StateChart[Any]], values: dict[str, Any]
) -> None:
    _twice(chart, _holding(Empty, **values))


@pytest.mark.parametrize("resume", ["a", "b"])
@pytest.mark.parametrize("chart", [ChartNames, NestedNames])
def test_c9_pin_chart_names_held_read_on_resume_as_psm(
    chart: type[StateChart[Any]], resume: str
) -> None:
    _same(chart, _holding(Empty, allowed=False), resume=resume)
    _same(chart, _holding(Empty, act=_says("act", None)), resume=resume)


def test_c9_pin_an_async_callback_held_on_an_async_chart_is_awaited_as_psm() -> None:
    reference = _twice(AwaitedNames, _holding(Empty, allowed=_async_false))
    assert reference == ([["a"], ["a"]], ["chart allowed", "model async"] * 2)


class ParallelNames(StateChart[Any]):
    class p(State.Parallel):
        class r1(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b, cond="allowed")

        class r2(State.Compound):
            c = State(initial=True)
            d = State(enter="hello")
            go = c.to(d, on="act")

    def allowed(self) -> bool:
        LOG.append("chart allowed")
        return True

    def act(self) -> None:
        LOG.append("chart act")

    def hello(self) -> None:
        LOG.append("chart hello")


@pytest.mark.parametrize(
    "values",
    [{"allowed": False}, {"act": _says("act", None)}, {"hello": _says("hello", None)}],
    ids=repr,
)
def test_c9_pin_a_parallel_chart_binds_held_chart_names_as_psm(values: dict[str, Any]) -> None:
    _twice(ParallelNames, _holding(Empty, **values), events=("go",))


@dataclasses.dataclass
class Record:
    allowed: Any = False


@dataclasses.dataclass(slots=True)
class SlottedRecord:
    allowed: Any = False
    state: Any = None


class Fields(pydantic.BaseModel):
    allowed: Any = False
    state: Any = None


class Mapping(dict[str, Any]):
    pass


class Listed:
    """A model whose ``__dir__`` lists a name only its ``__getattr__`` answers."""

    def __dir__(self) -> list[str]:
        return ["allowed"]

    def __getattr__(self, name: str) -> Any:
        if name == "allowed":
            return False
        raise AttributeError(name)


class SlotDict:
    __slots__ = ("__dict__",)


class SlotDictChild(SlotDict):
    __slots__ = ()


@pytest.mark.parametrize(
    "make",
    [
        Record,
        lambda: Record(True),
        lambda: Record(_says("allowed", False)),
        SlottedRecord,
        lambda: SlottedRecord(True),
        Fields,
        lambda: Fields(allowed=True),
        lambda: Fields(allowed=_says("allowed", False)),
        lambda: types.SimpleNamespace(allowed=False),
        lambda: types.SimpleNamespace(act=_says("act", None)),
        lambda: types.SimpleNamespace(allowed=None),
        _holding(Mapping, allowed=False),
        lambda: Mapping(allowed=False),
        Listed,
        _holding(SlotDict, allowed=False),
        _holding(SlotDictChild, allowed=False),
    ],
    ids=[
        "dataclass",
        "dataclass-true",
        "dataclass-callable",
        "slotted-dataclass",
        "slotted-dataclass-true",
        "pydantic",
        "pydantic-true",
        "pydantic-callable",
        "namespace",
        "namespace-action",
        "namespace-none",
        "dict-subclass-attribute",
        "dict-subclass-item",
        "dir-lists-getattr-name",
        "slots-dict",
        "slots-dict-child",
    ],
)
def test_c9_pin_chart_names_held_by_model_shapes_answer_as_psm(make: Callable[[], Any]) -> None:
    _twice(ChartNames, make)


class NoQualname:
    def __call__(self) -> bool:
        return True


@pytest.mark.parametrize(
    "value", [bool, len, NoQualname()], ids=["type", "builtin", "callable-object"]
)
def test_c9_pin_an_unadaptable_callable_held_under_a_chart_name_fails_as_psm(value: Any) -> None:
    assert _twice(ChartNames, _holding(Empty, allowed=value)) == ("raises", "AttributeError")


def test_c9_pin_models_alternating_holding_and_not_answer_as_psm_on_the_fast_path() -> None:
    sequence: list[dict[str, Any]] = [
        {},
        {"allowed": False},
        {},
        {"allowed": 0},
        {"act": 1},
        {},
        {"allowed": _says("allowed", False)},
        {},
        {"allowed": True},
        {"allowed": None},
        {"other": 3},
        {},
    ]
    for chart in (ChartNames, NestedNames):
        for values in (*sequence, *reversed(sequence)):
            _same(chart, _holding(Empty, **values))


class ShadowedByMixin(DictProperty):
    def allowed(self) -> bool:
        return True


def test_c9_pin_a_dict_from_a_base_class_is_refused_naming_the_model_where_it_shadows() -> None:
    model = ShadowedByMixin()
    model.allowed = False  # type: ignore[method-assign]
    with pytest.raises(
        UnsupportedChart, match=r"a model class defining __dict__.*ShadowedByMixin"
    ):
        compile_chart(ChartNames).create(model)


def test_c16_pin_the_variant_for_a_held_chart_name_reads_as_code() -> None:
    chart = compile_chart(ChartNames)
    assert "allowed(inst)" in chart.source(Empty)
    model = Empty()
    model.allowed = False  # type: ignore[attr-defined]
    chart.create(model)
    runtime: Any = chart._runtime
    variant = runtime.variants[(Empty, frozenset({"allowed"}))]
    assert "(allowed(inst) and _held(inst, 'allowed'" in variant.source
