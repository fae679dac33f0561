"""The chart's class methods and descriptors answer through the compiled instance as through
python-statemachine's machine: ``self.kind()`` binds a class method to the chart's class (so
``cls is Chart``, and ``cls(...)`` builds python-statemachine's machine), a custom descriptor
read through ``self`` gets the chart's class as ``owner``, and compiling a chart never calls
its descriptors' ``__set_name__`` again (they keep the chart's class as their owner).

Rules checked here (docs/spec.md): C6, C19.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import InstanceSnapshotError, compile_chart


class Log:
    """A model keeping what callbacks saw."""

    def __init__(self) -> None:
        self.log: list[Any] = []


def _both(cls: type[StateChart[Log]], *events: str) -> tuple[Any, Any]:
    """(configuration ids, model log) after ``events``, on python-statemachine and compiled."""
    reference = cls(Log())
    compiled = compile_chart(cls).create(Log())
    for event in events:
        reference.send(event)
        compiled.send(event)
    return (
        ([s.id for s in reference.configuration], reference.model.log),
        ([s.id for s in compiled.configuration], compiled.model.log),
    )


class ClassOfSelf(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    @classmethod
    def owner(cls, tag: str) -> tuple[str, bool, bool]:
        return (tag, cls is ClassOfSelf, issubclass(cls, StateChart))

    def record(self) -> None:
        self.model.log.append(self.owner("t"))


def test_a_class_method_called_through_self_is_bound_to_the_chart_class() -> None:
    reference, compiled = _both(ClassOfSelf, "go")
    assert reference == (["b"], [("t", True, True)])
    assert compiled == reference


class InitAndClassMethod(StateChart[Log]):
    """A chart with its own ``__init__`` (its instance class has another base)."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    def __init__(self, model: Log) -> None:
        self.tag = "init"
        super().__init__(model)

    @classmethod
    def built(cls) -> Any:
        return type(cls(Log())).__name__, issubclass(cls, StateChart)

    def record(self) -> None:
        self.model.log.append((self.tag, self.built()))


def test_a_class_method_building_the_chart_builds_python_statemachines_machine() -> None:
    """``cls(...)`` in a class method reached through ``self`` is python-statemachine's
    machine of the chart, as it is there."""
    reference, compiled = _both(InitAndClassMethod, "go")
    assert reference == (["b"], [("init", ("InitAndClassMethod", True))])
    assert compiled == reference


class Owner:
    """A non-data descriptor answering what it was read with."""

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return owner is Described and instance.model is not None


class Stored:
    """A data descriptor keeping its value on the model, answering the owner it was read
    with."""

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return (owner is Described, getattr(instance.model, "stored", None))

    def __set__(self, instance: Any, value: Any) -> None:
        instance.model.stored = value


class Described(StateChart[Log]):
    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, cond="flag") | a.to(c)
    finish = b.to(c, on="keep")
    flag = Owner()
    slot = Stored()

    def keep(self) -> None:
        self.slot = 7
        self.model.log.append(self.slot)


def test_a_custom_descriptor_read_through_self_gets_the_chart_class_as_owner() -> None:
    """A guard naming a descriptor, and a callback setting and reading a data descriptor:
    ``owner`` is the chart's class, ``instance`` the machine (the compiled instance)."""
    reference, compiled = _both(Described, "go", "finish")
    assert reference == (["c"], [(True, 7)])
    assert compiled == reference


class ByPartialMethod(StateChart[Log]):
    """A ``partialmethod`` over a class method binds it to the class it is read with."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    @classmethod
    def _owner(cls, tag: str) -> tuple[str, bool]:
        return (tag, cls is ByPartialMethod)

    owner = functools.partialmethod(_owner, "p")

    def record(self) -> None:
        self.model.log.append(self.owner())


def test_a_partialmethod_of_a_class_method_is_bound_to_the_chart_class() -> None:
    reference, compiled = _both(ByPartialMethod, "go")
    assert reference == (["b"], [("p", True)])
    assert compiled == reference


class Naming:
    """Counts the ``__set_name__`` calls it gets (a field or registry descriptor)."""

    def __init__(self) -> None:
        self.calls: list[tuple[type, str]] = []

    def __set_name__(self, owner: type, name: str) -> None:
        self.calls.append((owner, name))

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self if instance is None else len(self.calls)


class Marker:
    """Not a descriptor (no ``__get__``), but told its name: class-level data."""

    def __init__(self) -> None:
        self.calls: list[tuple[type, str]] = []

    def __set_name__(self, owner: type, name: str) -> None:
        self.calls.append((owner, name))


class Named(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")
    counted = Naming()
    marker = Marker()

    def record(self) -> None:
        self.model.log.append((self.counted, len(self.marker.calls)))


def test_compiling_calls_no_descriptors_set_name_again() -> None:
    """Python calls ``__set_name__`` once, when the chart's class is made; compiling the
    chart (and running it) calls it no more, so descriptors keep the chart's class."""
    compile_chart(Named)
    reference, compiled = _both(Named, "go")
    assert vars(Named)["counted"].calls == [(Named, "counted")]
    assert vars(Named)["marker"].calls == [(Named, "marker")]
    assert reference == (["b"], [(1, 1)])
    assert compiled == reference


class Field:
    """A field descriptor keeping its value in the instance's ``__dict__`` under its name, as
    python-statemachine's machine (which has a ``__dict__``) keeps it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return instance.__dict__.get(self.name, 0)

    def __set__(self, instance: Any, value: Any) -> None:
        instance.__dict__[self.name] = value


class Counted(StateChart[Log]):
    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="bump")
    finish = b.to(c, cond="counted")
    count = Field()

    def bump(self) -> None:
        self.count = self.count + 1
        self.model.log.append(self.count)

    def counted(self) -> bool:
        return self.count == 1


def test_a_field_descriptor_keeping_its_value_in_the_instance_dict_works_alike() -> None:
    """The compiled instance of a chart with a custom descriptor has a ``__dict__``, as
    python-statemachine's machine has: a descriptor keeping its value there works alike
    (without one, its ``AttributeError`` would be swallowed as ``error.execution``)."""
    reference, compiled = _both(Counted, "go", "finish")
    assert reference == (["c"], [1])
    assert compiled == reference


def test_a_snapshot_refuses_what_a_descriptor_keeps_in_the_instance_dict() -> None:
    """C19: what a descriptor keeps in the instance's ``__dict__`` is no field of the chart;
    a snapshot refuses it rather than drop it."""
    instance = compile_chart(Counted).create(Log())
    instance.snapshot()
    instance.send("go")
    with pytest.raises(InstanceSnapshotError) as caught:
        instance.snapshot()
    assert caught.value.field == "fields.count"


class OwnedProperty(property):
    """A property subclass reading ``owner``."""

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return (owner is WithOwnedProperty, super().__get__(instance, owner))


class WithOwnedProperty(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    @OwnedProperty
    def shown(self) -> str:
        return "shown"

    def record(self) -> None:
        self.model.log.append(self.shown)


def test_a_property_subclass_reading_owner_gets_the_chart_class() -> None:
    reference, compiled = _both(WithOwnedProperty, "go")
    assert reference == (["b"], [(True, "shown")])
    assert compiled == reference
