"""Breaks found by an independent review of issue 10 (round 7), continued: callbacks asking
whether the machine is the chart's instance where no scan reads them, the chart's descriptors,
and charts of one name. Fix the code, do not weaken the test. If a test is wrong, say why in
your report."""

# Rules checked here (docs/spec.md): C6, C12, C19. The docs (README's table, spec C6) now say
# asking whether the machine is the chart's instance (``isinstance(machine, Chart)``,
# ``type(machine) is Chart``) is refused: at compile time in the chart's code, with
# ``UnsupportedChart`` when it runs in a model's callback given ``machine``. The compiled
# instance is not of the chart's class, so the answer differs; in the first tests the callback
# is one the scans never read (a model's static or class method, a decorated method, a
# partialmethod, a property or an instance attribute handing out a callable; a chart's
# callback given as a functools.partial, a bound method of another object, a decorated
# function) and the run answers False where python-statemachine answers True, silently; then
# a class method reached through ``self`` and the chart's descriptors get the compiled class
# (named as the chart) for the chart's. Each test passes once the chart is refused naming it
# (at compile time or when the callback runs) or the run agrees.

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import InvalidDefinition

from statecharts import InstanceSnapshotError, UnsupportedChart, compile_chart


class Log:
    """A model keeping what callbacks saw."""

    def __init__(self) -> None:
        self.log: list[Any] = []


class Checked(StateChart[Log]):
    """The model's ``check`` is the callback; python-statemachine hands it the machine."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="check")


def passing(function: Callable[..., Any]) -> Callable[..., Any]:
    """A decorator as applications write them (functools.wraps, arguments handed on whole)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return wrapper


class ByStaticMethod(Log):
    @staticmethod
    def check(machine: Any) -> None:
        machine.model.log.append(isinstance(machine, Checked))


class ByClassMethod(Log):
    @classmethod
    def check(cls, machine: Any) -> None:
        machine.model.log.append(isinstance(machine, Checked))


class ByDecoratedMethod(Log):
    @passing
    def check(self, machine: Any) -> None:
        self.log.append(isinstance(machine, Checked))


class ByPartialMethod(Log):
    def _check(self, machine: Any, tag: str) -> None:
        self.log.append(isinstance(machine, Checked))

    check = functools.partialmethod(_check, tag="t")


class ByProperty(Log):
    @property
    def check(self) -> Callable[..., None]:
        return lambda machine: self.log.append(isinstance(machine, Checked))


class ByInstanceAttribute(Log):
    def __init__(self) -> None:
        super().__init__()
        self.check = lambda machine: self.log.append(type(machine) is Checked)


def _run(instance: Any) -> list[Any] | None:
    """The model's log after ``go`` (``None``: ``UnsupportedChart`` naming the chart)."""
    try:
        instance.send("go")
    except UnsupportedChart as refusal:
        refused = refusal.chart
    else:
        return instance.model.log  # type: ignore[no-any-return]
    assert refused == instance.chart.name
    return None


@pytest.mark.parametrize(
    "model",
    [
        ByStaticMethod,
        ByClassMethod,
        ByDecoratedMethod,
        ByPartialMethod,
        ByProperty,
        ByInstanceAttribute,
    ],
    ids=lambda model: model.__name__,
)
def test_C6_a_models_callback_asking_whether_machine_is_the_chart_raises_unsupported(
    model: type[Log],
) -> None:
    """C6: a model's callback given ``machine`` asks ``isinstance(machine, Checked)`` (or
    ``type(machine) is Checked``): python-statemachine logs True. Compiled, only a plain
    method of the model's class is scanned when the model type is bound; a static or class
    method (returned before the scan), a ``functools.wraps`` decorated method (its wrapper has
    no ``machine`` parameter), a ``partialmethod``, a property or an instance attribute handing
    out a lambda run unscanned and log False, silently. It should raise ``UnsupportedChart``
    naming the callback when it runs (or log True)."""
    reference = Checked(model())
    reference.send("go")
    assert reference.model.log == [True]
    compiled = _run(compile_chart(Checked).create(model()))
    if compiled is not None:
        assert compiled == reference.model.log


class _Helper:
    def record(self, machine: Any) -> None:
        machine.model.log.append(isinstance(machine, ByBoundMethod))


@passing
def _record(machine: Any) -> None:
    machine.model.log.append(isinstance(machine, ByDecoratedFunction))


class ByPartial(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(
        b,
        on=functools.partial(
            lambda tag, machine: machine.model.log.append(isinstance(machine, ByPartial)), "t"
        ),
    )


class ByBoundMethod(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=_Helper().record)


class ByDecoratedFunction(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=_record)


@pytest.mark.parametrize(
    "cls", [ByPartial, ByBoundMethod, ByDecoratedFunction], ids=lambda cls: cls.__name__
)
def test_C6_a_callable_callback_asking_whether_machine_is_the_chart_is_refused(
    cls: type[StateChart[Log]],
) -> None:
    """C6: a chart's callback given as a callable asks ``isinstance(machine, Chart)``:
    python-statemachine logs True. The compiler scans a lambda or plain function given as
    a callback, but not a ``functools.partial``, a bound method of another object, or a
    ``functools.wraps`` decorated function (the wrapper's ``*args``/``**kwargs`` are not
    followed for a callback), so the chart compiles and logs False, silently. It should be
    refused naming the chart (or log True)."""
    reference = cls(Log())
    reference.send("go")
    assert reference.model.log == [True]
    try:
        chart = compile_chart(cls)
    except UnsupportedChart as refusal:
        refused = refusal.chart
    else:
        compiled = _run(chart.create(Log()))
        if compiled is not None:
            assert compiled == reference.model.log
        return
    assert refused == cls.__name__


# --- a class method reached through self -----------------------------------------------------


class KindBySelf(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    @classmethod
    def kind(cls) -> bool:
        return cls is KindBySelf

    def record(self) -> None:
        self.model.log.append(self.kind())


class FreshBySelf(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    @classmethod
    def fresh(cls) -> Any:
        return cls(Log()).current_state_value

    def record(self) -> None:
        self.model.log.append(self.fresh())


class GuardBySelf(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="is_mine") | a.to(c)

    @classmethod
    def mine(cls) -> bool:
        return cls is GuardBySelf

    @property
    def is_mine(self) -> bool:
        return self.mine()


@pytest.mark.parametrize(
    "cls", [KindBySelf, FreshBySelf, GuardBySelf], ids=lambda cls: cls.__name__
)
def test_C6_a_class_method_called_through_self_gets_the_chart_class(
    cls: type[StateChart[Log]],
) -> None:
    """C6: a class method called as ``self.kind()`` gets the chart class as ``cls`` in
    python-statemachine; compiled, ``self`` is the compiled instance, so ``cls`` is its class
    (named after the chart, but not the chart's class). ``cls is Chart`` is False (a guard
    built on it takes ``a -> c`` where python-statemachine takes ``a -> b``), and
    ``cls(Log())`` builds a compiled instance the wrong way, its ``TypeError`` swallowed as
    ``error.execution`` (nothing logged, where python-statemachine logs ``'a'``): silently. The
    class method should get the chart's class, or the chart be refused naming it."""
    reference = cls(Log())
    reference.send("go")
    expected = ([state.id for state in reference.configuration], reference.model.log)
    assert expected in ((["b"], [True]), (["b"], ["a"]), (["b"], []))
    try:
        chart = compile_chart(cls)
    except UnsupportedChart as refusal:
        refused = refusal.chart
    else:
        instance = chart.create(Log())
        instance.send("go")
        assert ([state.id for state in instance.configuration], instance.model.log) == expected
        return
    assert refused == cls.__name__


# --- the chart's descriptors ------------------------------------------------------------------


class OwnerFlag:
    """A descriptor answering whether it is read through the chart's class (``owner``)."""

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return owner is OwnedGuard


class OwnedGuard(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="ok") | a.to(c)
    ok = OwnerFlag()


def test_C6_a_descriptor_read_as_a_guard_gets_the_charts_class_as_owner() -> None:
    """C6: a custom descriptor on the chart is read with ``owner`` the chart's class in
    python-statemachine (``ok`` is True, ``go`` takes ``a -> b``); compiled, the descriptor is
    copied into the instance class and read with that class as ``owner`` (named after the
    chart, not the chart), so ``ok`` is False and ``go`` takes ``a -> c``, silently. It should
    answer as python-statemachine does, or the chart be refused naming it."""
    reference = OwnedGuard(Log())
    reference.send("go")
    assert [state.id for state in reference.configuration] == ["b"]
    try:
        chart = compile_chart(OwnedGuard)
    except UnsupportedChart as refusal:
        refused = refusal.chart
    else:
        instance = chart.create(Log())
        instance.send("go")
        assert [state.id for state in instance.configuration] == ["b"]
        return
    assert refused == "OwnedGuard"


class OwnerField:
    """A descriptor remembering the class it was set on (``__set_name__``), as field and
    registry descriptors do."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.owner = owner
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return isinstance(instance, self.owner)


class Fielded(StateChart[Log]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="mine") | a.to(c)
    mine = OwnerField()


def test_C6_compiling_a_chart_leaves_its_descriptors_set_names_alone() -> None:
    """C6: compiling ``Fielded`` builds the instance class with the chart's descriptor in its
    namespace, so Python calls the descriptor's ``__set_name__`` again, with the compiled
    instance class (now named ``Fielded``, indistinguishable by name) as ``owner``: the
    descriptor, shared with the declared chart, now remembers the wrong class. After
    compiling, python-statemachine's own machine of the chart answers ``mine`` False and
    takes ``a -> c`` where it took ``a -> b`` before (and a registry keyed by
    ``owner.__name__`` gets the compiled class under the chart's name). Compiling should not
    change how python-statemachine runs the chart (nor call ``__set_name__`` again), or refuse
    the chart naming it."""
    before = Fielded(Log())
    before.send("go")
    assert [state.id for state in before.configuration] == ["b"]
    try:
        compile_chart(Fielded)
    except UnsupportedChart as refusal:
        refused = refusal.chart
    else:
        assert vars(Fielded)["mine"].owner is Fielded
        after = Fielded(Log())
        after.send("go")
        assert [state.id for state in after.configuration] == ["b"]
        return
    assert refused == "Fielded"


# --- two charts of one name --------------------------------------------------------------------


def _local_chart(steps: int) -> type[StateChart[Log]]:
    """A chart made in a function (a factory, a test helper): every chart it makes has the
    same ``__module__`` and ``__qualname__``."""
    if steps == 1:

        class Local(StateChart[Log]):
            a = State(initial=True)
            b = State(final=True)
            go = a.to(b)

        return Local

    class Local(StateChart[Log]):  # type: ignore[no-redef]
        a = State(initial=True)
        b = State()
        c = State(final=True)
        go = a.to(b)
        finish = b.to(c)

    return Local


def test_C19_a_snapshot_of_another_chart_of_the_same_name_is_refused() -> None:
    """C19: restoring a snapshot "of another chart" raises ``InstanceSnapshotError``; the
    check compares ``module.qualname`` only, so two charts made by one factory (same module,
    same ``_local_chart.<locals>.Local``) pass for one: a snapshot of the two-step chart in
    ``b`` restores into the one-step chart, where ``b`` is final, and the restored instance is
    terminated (``finish`` can never run), silently. It should be refused."""
    two_steps, one_step = compile_chart(_local_chart(2)), compile_chart(_local_chart(1))
    assert two_steps.declared is not one_step.declared
    instance = two_steps.create(Log())
    instance.send("go")
    snapshot = instance.snapshot()
    assert not instance.is_terminated
    with pytest.raises(InstanceSnapshotError):
        one_step.restore(snapshot, Log())


# --- a model answering names through __getattr__ -------------------------------------------------


class _Target:
    def __init__(self) -> None:
        self.log: list[str] = []

    def act(self) -> None:
        self.log.append("act")


class Proxy:
    """A model delegating to another object (a proxy, a wrapper): ``act`` is answered by
    ``__getattr__`` only, not listed by ``dir()``."""

    def __init__(self) -> None:
        self._target = _Target()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


class Proxied(StateChart[Any]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="act")


def test_C12_a_callback_name_a_model_answers_only_through_getattr_is_not_found() -> None:
    """C12 (C9 reads names the class lacks from the instance, but as python-statemachine
    finds them): python-statemachine finds a callback name on the model by ``dir(model)``: a proxy
    model answering ``act`` through ``__getattr__`` only is refused when the machine is built
    (``InvalidDefinition``: "Did not found name 'act' from model or statemachine"). Compiled,
    the name is looked up with ``hasattr`` on the instance, found, and ``act`` runs: a run
    python-statemachine never makes, silently. It should raise ``InvalidDefinition`` as
    python-statemachine does (when the instance is created or the event sent)."""
    with pytest.raises(InvalidDefinition, match="act"):
        Proxied(Proxy())
    with pytest.raises(InvalidDefinition, match="act"):
        _create_and_go(Proxied, Proxy())


def _create_and_go(cls: type[StateChart[Any]], model: Any) -> None:
    compile_chart(cls).create(model).send("go")
