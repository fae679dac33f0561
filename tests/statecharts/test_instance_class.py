"""The compiled instance's class answers what a callback reads off python-statemachine's
machine's class: its name (``type(machine).__name__``, ``machine.__class__.__name__``), its
``__qualname__``, ``__module__`` and ``__doc__`` are the chart's, for the awaited (async)
variant too. It is not the chart's class: ``isinstance(machine, Chart)``, ``type(machine) is
Chart`` and any other use of the class are refused, at compile time in a chart method, when
the callback runs in a model's. Its repr still says it is the compiled instance.

Rules checked here (docs/spec.md): C6, C20, C21.
"""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import UnsupportedChart, compile_chart

#: What a callback can read off the machine's class and gets the chart's answer for.
NAMING = ("__name__", "__qualname__", "__module__", "__doc__")


class Log:
    """A model keeping what its callbacks saw."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def by_class(self, machine: Any) -> None:
        self.log.append(machine.__class__.__name__)

    def by_type(self, machine: Any) -> None:
        self.log.append(
            (type(machine).__name__, type(machine).__qualname__, type(machine).__module__)
        )


class Named(StateChart[Log]):
    """A chart whose class a callback reads."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="by_class")
    again = b.to(c, on="by_type")


class Asked(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="name_it")

    def name_it(self) -> None:
        self.model.log.append((self.__class__.__name__, type(self).__qualname__))


class Async(StateChart[Log]):
    """Async callbacks: the awaited instance class."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="name_it")

    async def name_it(self) -> None:
        await asyncio.sleep(0)
        self.model.log.append((type(self).__name__, self.__class__.__qualname__))


class AsyncModel(Log):
    async def by_class(self, machine: Any) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        self.log.append(machine.__class__.__name__)


class Initialised(StateChart[Log]):
    """A custom ``__init__``; with ``AsyncModel`` the instance switches to the awaited class."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="by_class")
    again = b.to(c, on="by_type")

    def __init__(self, model: Any = None, **kwargs: Any) -> None:
        self.opened = True
        super().__init__(model, **kwargs)


def _local_chart() -> type[StateChart[Log]]:
    class Local(StateChart[Log]):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="by_type")

    return Local


def _runs(
    declared: type[StateChart[Any]], model: type[Log] = Log, events: tuple[str, ...] = ("go",)
) -> tuple[Any, Any]:
    """python-statemachine's machine and the compiled instance after ``events``, with their
    models' logs (async callbacks awaited in an event loop)."""
    reference, instance = declared(model()), compile_chart(declared).create(model())

    async def run() -> None:
        for machine in (reference, instance):
            for event in events:
                result = machine.send(event)
                if asyncio.iscoroutine(result):
                    await result

    asyncio.run(run())
    return reference, instance


def test_the_compiled_instance_class_is_named_after_the_chart() -> None:
    """A model's method reading ``machine.__class__.__name__``, ``type(machine).__name__``
    (and ``__qualname__``, ``__module__``) logs what python-statemachine's logs."""
    reference, instance = _runs(Named, events=("go", "again"))
    assert reference.model.log == [
        "Named",
        ("Named", "Named", __name__),
    ]
    assert instance.model.log == reference.model.log
    for read in (type, lambda value: value.__class__):
        assert read(instance).__name__ == read(reference).__name__ == "Named"


def test_a_chart_method_reading_its_class_name_compiles_and_answers_alike() -> None:
    """C6: ``self.__class__.__name__`` and ``type(self).__qualname__`` in a chart method are
    answered as python-statemachine answers them, so they compile."""
    reference, instance = _runs(Asked)
    assert reference.model.log == [("Asked", "Asked")]
    assert instance.model.log == reference.model.log


def test_the_awaited_instance_class_is_named_after_the_chart() -> None:
    """C21: a chart with async callbacks runs on its awaited instance class, named as the
    chart; so is the class a custom ``__init__``'s instance switches to for an async model
    (C20)."""
    reference, instance = _runs(Async)
    assert reference.model.log == [("Async", "Async")]
    assert instance.model.log == reference.model.log
    assert "activate_initial_state" in vars(type(instance))  # the awaited class
    for name in NAMING:
        assert getattr(type(instance), name) == getattr(Async, name), name
    reference, instance = _runs(Initialised, AsyncModel, ("go", "again"))
    assert "activate_initial_state" in vars(type(instance))  # switched to the awaited class
    assert reference.model.log == ["Initialised", ("Initialised", "Initialised", __name__)]
    assert instance.model.log == reference.model.log
    for name in NAMING:
        assert getattr(type(instance), name) == getattr(Initialised, name), name


def test_the_compiled_instance_class_has_the_charts_module_and_qualname() -> None:
    """``__module__``, ``__qualname__`` (``<locals>`` included) and ``__doc__`` of the
    instance's class are the chart's, whether the chart is declared in a module or in a
    function."""
    local = _local_chart()
    for declared in (Named, Asked, Initialised, local):
        instance = compile_chart(declared).create(Log())
        for name in NAMING:
            assert getattr(type(instance), name) == getattr(declared, name), (declared, name)
        for name in ("__module__", "__doc__"):
            assert getattr(instance, name) == getattr(declared(Log()), name), (declared, name)
    assert type(compile_chart(local).create(Log())).__qualname__ == "_local_chart.<locals>.Local"
    reference, instance = _runs(local)
    assert instance.model.log == reference.model.log == [("Local", local.__qualname__, __name__)]


class ByInstance(Log):
    def by_class(self, machine: Any) -> None:
        self.log.append(isinstance(machine, Named))


class ByIdentity(Log):
    def by_class(self, machine: Any) -> None:
        self.log.append(type(machine) is Named)


class ByClassIdentity(Log):
    def by_class(self, machine: Any) -> None:
        self.log.append(machine.__class__ is Named)


class ByNewMachine(Log):
    def by_class(self, machine: Any) -> None:
        self.log.append(machine.__class__(Log()).current_state_value)


class ByClassAttribute(Log):
    def by_class(self, machine: Any) -> None:
        self.log.append(len(type(machine).states))


@pytest.mark.parametrize(
    ("model", "where"),
    [
        (ByInstance, "passes machine on to the builtin isinstance"),
        (ByIdentity, "passes machine on to the class type"),
        (ByClassIdentity, "reads machine.__class__"),
        (ByNewMachine, "reads machine.__class__"),
        (ByClassAttribute, "passes machine on to the class type"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_the_compiled_instance_is_not_an_instance_of_the_chart_and_asking_is_refused(
    model: type[Log], where: str
) -> None:
    """C6: the instance's class is named as the chart but is not the chart's class (a
    ``__class__`` reporting the chart would make ``isinstance`` true, while ``type()`` still
    told otherwise and ``machine.__class__(...)`` built python-statemachine's machine): a model's
    callback asking ``isinstance(machine, Chart)``, ``type(machine) is Chart``, or using the
    class otherwise, raises ``UnsupportedChart`` naming it when it runs."""
    reference = Named(model())
    reference.send("go")
    assert reference.model.log in ([True], ["a"], [3])
    instance = compile_chart(Named).create(model())
    assert not isinstance(instance, Named)
    assert type(instance) is not Named
    assert instance.__class__ is type(instance)
    with pytest.raises(UnsupportedChart, match="a model's callback using") as caught:
        instance.send("go")
    assert caught.value.chart == "Named"
    assert where in caught.value.where, caught.value.where


class _Check(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="same") | a.to(c)


class SelfInstance(_Check):
    def same(self) -> bool:
        return isinstance(self, SelfInstance)


class SelfType(_Check):
    def same(self) -> bool:
        return type(self) is SelfType


class SelfClass(_Check):
    def same(self) -> bool:
        return self.__class__ is SelfClass


class SelfClassCall(_Check):
    def same(self) -> bool:
        return bool(self.__class__(Log()))


class SelfClassStore(_Check):
    def same(self) -> bool:
        self.__class__.__name__ = "Renamed"
        return True


@pytest.mark.parametrize(
    ("declared", "where"),
    [
        (SelfInstance, "passes self on to the builtin isinstance"),
        (SelfType, "passes self on to the class type"),
        (SelfClass, "reads self.__class__"),
        (SelfClassCall, "reads self.__class__"),
        (SelfClassStore, "reads self.__class__"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_a_chart_method_asking_whether_self_is_the_charts_instance_is_refused(
    declared: type[_Check], where: str
) -> None:
    """C6: python-statemachine answers these as the chart's instance (``b``); the compiled
    instance is not one, so a chart method asking is refused at compile time."""
    reference = declared(Log())
    reference.send("go")
    assert [state.id for state in reference.configuration] == ["b"]
    with pytest.raises(UnsupportedChart) as caught:
        compile_chart(declared)
    assert caught.value.chart == declared.__name__
    assert where in caught.value.where, caught.value.where


def test_the_repr_still_says_it_is_the_compiled_instance() -> None:
    """The class is named as the chart, the repr keeps ``<ChartInstance ...>`` (awaited and
    custom ``__init__`` instances too), so a traceback or log tells it from
    python-statemachine's machine (``Named(model=..., configuration=[...])``)."""
    model = Log()
    assert repr(compile_chart(Named).create(model)) == f"<NamedInstance state='a' model={model!r}>"
    assert repr(compile_chart(Async).create(model)).startswith("<AsyncInstance state='a' ")
    instance = compile_chart(Initialised).create(AsyncModel())
    assert repr(instance).startswith("<InitialisedInstance state='a' ")


class ForgetfulInstance(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b)

    def __init__(self, model: Any = None, start: bool = True) -> None:
        if start:
            super().__init__(model)


def test_an_init_not_handing_over_is_named_by_the_chart() -> None:
    """C20: the error names the chart's ``__init__`` (a chart whose name ends in ``Instance``
    keeps it)."""
    with pytest.raises(TypeError, match=r"^ForgetfulInstance\.__init__ returned without"):
        compile_chart(ForgetfulInstance).create(Log(), start=False)


def test_pickling_a_compiled_instance_still_fails_loudly_and_snapshots_restore() -> None:
    """The class's name and module are the chart's, so pickle finds the chart under them and
    refuses (it is not the same object) rather than pickling another class; snapshots are
    how an instance is kept (C19)."""
    for declared in (ForgetfulInstance, Initialised):  # slots only; a __dict__ too
        instance = compile_chart(declared).create(Log())
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            with pytest.raises(pickle.PicklingError):
                pickle.dumps(instance, protocol)
    chart = compile_chart(ForgetfulInstance)
    instance = chart.create(Log())
    instance.send("go")
    restored = chart.restore(instance.snapshot(), Log())
    assert type(restored) is type(instance)
    assert restored.state.id == "b"
