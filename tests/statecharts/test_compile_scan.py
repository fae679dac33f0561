"""C6: what the compile-time scan follows when a chart method hands ``self`` to other code.

A helper given ``self`` is read as the method is, its parameter in ``self``'s place, whatever
the call's other arguments are (an expression, a call's result, keywords), wherever the
helper is named statically (a function of the module, of an imported module, a static method
of a plain class, a closure's function) and through ``functools.wraps`` wrappers that hand
``*args, **kwargs`` on whole. Those charts compile and answer as python-statemachine does.
``self`` handed anywhere the scan cannot follow (a builtin, a C-level or non-wraps decorator,
``functools.partial``, ``getattr(...)``, a variable, a return value, a global) is refused at
compile time, naming the chart, the method and the construct; so is a helper reading
python-statemachine's machine API, or a name only the compiled instance has, however deep.
"""

# Rules checked here (docs/spec.md): C6.

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import UnsupportedChart, compile_chart


class Order:
    """A model with the count guards compare against."""

    def __init__(self) -> None:
        self.count = 2
        self.log: list[Any] = []


def over_limit(machine: Any, limit: int) -> bool:
    """A module helper reading only the model."""
    return bool(machine.model.count > limit)


def below(limit: int, machine: Any) -> bool:
    """A helper taking the machine last."""
    return bool(machine.model.count > limit)


def via_helper(machine: Any, limit: int) -> bool:
    """A helper handing the machine on to another."""
    return over_limit(machine, limit)


def _module(name: str, source: str) -> types.ModuleType:
    """A module of the application of its own (its functions' globals are the module's)."""
    module = types.ModuleType(name)
    exec(source, module.__dict__)
    return module


guards = _module(
    "guards", "def over_limit(machine, limit):\n    return machine.model.count > limit\n"
)
#: A package with a submodule: ``rules.checks.over_limit``.
rules = _module("rules", "")
rules.checks = _module(  # type: ignore[attr-defined]
    "rules.checks", "def over_limit(machine, limit):\n    return machine.model.count > limit\n"
)


def logged(function: Callable[..., Any]) -> Callable[..., Any]:
    """A plain ``functools.wraps`` decorator."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return wrapper


def positional_only(function: Callable[..., Any]) -> Callable[..., Any]:
    """A ``functools.wraps`` decorator handing on ``*args`` alone."""

    @functools.wraps(function)
    def wrapper(*args: Any) -> Any:
        return function(*args)

    return wrapper


@logged
def over_one(machine: Any) -> bool:
    return bool(machine.model.count > 1)


@logged
@positional_only
def over_one_twice(machine: Any) -> bool:
    return bool(machine.model.count > 1)


@logged
def over_keyword(*, machine: Any, limit: int) -> bool:
    return bool(machine.model.count > limit)


class Rules:
    """Helpers grouped on a plain class."""

    @staticmethod
    def over(machine: Any, limit: int) -> bool:
        return bool(machine.model.count > limit)


class _Check(StateChart[Order]):
    """``check`` goes to ``big`` when the guard ``too_big`` holds."""

    open = State(initial=True)
    big = State(final=True)
    small = State(final=True)
    check = open.to(big, cond="too_big") | open.to(small)
    margin = 1


class ComputedArgument(_Check):
    def too_big(self) -> bool:
        return over_limit(self, self.margin + 0)


class CallResult(_Check):
    def too_big(self) -> bool:
        return over_limit(self, len("a"))


class FormattedArgument(_Check):
    def too_big(self) -> bool:
        return over_limit(self, int(f"{self.margin}") * abs(-1))


class Keywords(_Check):
    def too_big(self) -> bool:
        return over_limit(limit=1, machine=self)


class SelfLast(_Check):
    def too_big(self) -> bool:
        return below(self.margin, self)


class ThroughTwoHelpers(_Check):
    def too_big(self) -> bool:
        return via_helper(self, 1)


class ImportedModule(_Check):
    def too_big(self) -> bool:
        return bool(guards.over_limit(self, 1))


class Submodule(_Check):
    def too_big(self) -> bool:
        return bool(rules.checks.over_limit(self, 1))  # type: ignore[attr-defined]


class Decorated(_Check):
    def too_big(self) -> bool:
        return bool(over_one(self))


class DecoratedTwice(_Check):
    def too_big(self) -> bool:
        return bool(over_one_twice(self))


class DecoratedKeywords(_Check):
    def too_big(self) -> bool:
        return bool(over_keyword(limit=1, machine=self))


class StaticMethod(_Check):
    def too_big(self) -> bool:
        return Rules.over(self, 1)


class InAGenerator(_Check):
    def too_big(self) -> bool:
        return any(over_limit(self, limit) for limit in (5, 1))


class InALambda(_Check):
    def too_big(self) -> bool:
        check = lambda: over_limit(self, 1)  # noqa: E731
        return check()


def _closure_chart() -> type[_Check]:
    def local_over(machine: Any) -> bool:
        return bool(machine.model.count > 1)

    class Closure(_Check):
        def too_big(self) -> bool:
            return local_over(self)

    return Closure


def _ids(states: object) -> list[str]:
    return [state.id for state in states]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "declared",
    [
        ComputedArgument,
        CallResult,
        FormattedArgument,
        Keywords,
        SelfLast,
        ThroughTwoHelpers,
        ImportedModule,
        Submodule,
        Decorated,
        DecoratedTwice,
        DecoratedKeywords,
        StaticMethod,
        InAGenerator,
        InALambda,
        _closure_chart(),
    ],
    ids=lambda declared: declared.__name__,
)
def test_c6_a_helper_given_self_is_followed_and_answers_as_python_statemachine(
    declared: type[_Check],
) -> None:
    """C6: a helper reading only the model, given ``self`` with any other arguments, named
    through a module, an imported module, a plain class, a closure, or ``functools.wraps``
    wrappers, compiles and ends where python-statemachine ends."""
    reference = declared(Order())
    reference.send("check")
    instance = compile_chart(declared).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


# -- still refused ---------------------------------------------------------------------------

KEPT: list[Any] = []
LAST: Any = None


def keep_global(machine: Any) -> bool:
    global LAST
    LAST = machine
    return True


def same(machine: Any) -> Any:
    return machine


def keep_in_list(machine: Any) -> bool:
    KEPT.append(machine)
    return True


def keep_on_object(machine: Any) -> bool:
    holder = types.SimpleNamespace()
    holder.machine = machine
    return True


def keep_in_closure(machine: Any) -> bool:
    def inner() -> None:
        KEPT.append(machine)

    inner()
    return True


def snapshot_of(machine: Any) -> Any:
    return machine.snapshot()


def snapshot_two_deep(machine: Any) -> Any:
    return snapshot_of(machine)


def state_of(machine: Any) -> Any:
    return machine.state


def allowed(machine: Any) -> Any:
    return machine.allowed_events


def replaced(function: Callable[..., Any]) -> Callable[..., Any]:
    """A decorator that replaces the function with one of its own."""

    def other(machine: Any) -> bool:
        return bool(machine.allowed_events)

    return other


def replaced_with_wraps(function: Callable[..., Any]) -> Callable[..., Any]:
    """A ``functools.wraps`` decorator whose wrapper reads its first argument itself."""

    @functools.wraps(function)
    def wrapper(*args: Any) -> Any:
        return args[0].allowed_events

    return wrapper


def printing(function: Callable[..., Any]) -> Callable[..., Any]:
    """A ``functools.wraps`` decorator handing ``*args`` to a builtin too."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        print(*args)
        return function(*args, **kwargs)

    return wrapper


def forwarding(function: Callable[..., Any]) -> Callable[..., Any]:
    """A ``functools.wraps`` decorator handing ``*args`` on to a reader of the machine API."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return allowed(*args, **kwargs)

    return wrapper


@replaced
def over_replaced(machine: Any) -> bool:
    return True


@replaced_with_wraps
def over_misread(machine: Any) -> bool:
    return True


@printing
def over_printed(machine: Any) -> bool:
    return True


@forwarding
def over_forwarded(machine: Any) -> bool:
    return True


@functools.cache
def cached(machine: Any) -> bool:
    return True


partial_over = functools.partial(over_limit, limit=1)
dynamic = _module(
    "dynamic",
    "def __getattr__(name):\n"
    "    def peek(machine, limit):\n"
    "        return machine.allowed_events\n"
    "    return peek\n",
)


class Holder:
    def __init__(self, machine: Any) -> None:
        self.machine = machine


def _refusing(body: Callable[[Any], Any]) -> type[_Check]:
    class Refused(_Check):
        def too_big(self) -> bool:
            return bool(body(self))

    return Refused


class GlobalAlias(_Check):
    def too_big(self) -> bool:
        return keep_global(self)


class Returned(_Check):
    def too_big(self) -> bool:
        return bool(same(self).model.count > 1)


class Listed(_Check):
    def too_big(self) -> bool:
        return keep_in_list(self)


class Attribute(_Check):
    def too_big(self) -> bool:
        return keep_on_object(self)


class InClosure(_Check):
    def too_big(self) -> bool:
        return keep_in_closure(self)


class SnapshotTwoDeep(_Check):
    def too_big(self) -> bool:
        return bool(snapshot_two_deep(self))


class StateInHelper(_Check):
    def too_big(self) -> bool:
        return state_of(self) is not None


class Replaced(_Check):
    def too_big(self) -> bool:
        return over_replaced(self)


class Misread(_Check):
    def too_big(self) -> bool:
        return bool(over_misread(self))


class Printed(_Check):
    def too_big(self) -> bool:
        return bool(over_printed(self))


class Forwarded(_Check):
    def too_big(self) -> bool:
        return bool(over_forwarded(self))


class Cached(_Check):
    def too_big(self) -> bool:
        return cached(self)


class Partial(_Check):
    def too_big(self) -> bool:
        return partial_over(self)


class DynamicGetattr(_Check):
    def too_big(self) -> bool:
        return bool(getattr(guards, "over_limit")(self, 1))  # noqa: B009


class ModuleGetattr(_Check):
    def too_big(self) -> bool:
        return bool(dynamic.peek(self, 1))


class Conditional(_Check):
    def too_big(self) -> bool:
        return over_limit(self if self.margin else None, 1)


class Instanceof(_Check):
    def too_big(self) -> bool:
        return isinstance(self, Instanceof)


class Constructed(_Check):
    def too_big(self) -> bool:
        return Holder(self).machine is not None


class BoundMethod(_Check):
    def too_big(self) -> bool:
        return bool(KEPT.count(self))


@pytest.mark.parametrize(
    ("declared", "construct", "where"),
    [
        (GlobalAlias, "handing the machine", "as a value the compiler cannot follow"),
        (GlobalAlias, "handing the machine", "(through keep_global(machine)"),
        (Returned, "handing the machine", "(through same(machine)"),
        (Listed, "handing the machine", "to a callable the compiler cannot name"),
        (Attribute, "handing the machine", "(through keep_on_object(machine)"),
        (InClosure, "handing the machine", "(through keep_in_closure(machine)"),
        (SnapshotTwoDeep, "machine API", "reads self.snapshot (through snapshot_of(machine)"),
        (SnapshotTwoDeep, "machine API", "(through snapshot_two_deep(machine)"),
        (StateInHelper, "machine API", "reads self.state (through state_of(machine)"),
        (Replaced, "machine API", "reads self.allowed_events (through replaced.<locals>.other"),
        (Misread, "handing the machine", "uses *args other than handing it on whole"),
        (Printed, "handing the machine", "to the builtin print"),
        (Forwarded, "machine API", "reads self.allowed_events (through allowed(machine)"),
        (Forwarded, "machine API", "(through over_forwarded(*args)"),
        (Cached, "handing the machine", "functools._lru_cache_wrapper"),
        (Cached, "handing the machine", "a decorator whose wrapper is no Python function"),
        (Partial, "handing the machine", "to a functools.partial object"),
        (DynamicGetattr, "handing the machine", "to a callable the compiler cannot name"),
        (ModuleGetattr, "handing the machine", "to a callable the compiler cannot name"),
        (Conditional, "handing the machine", "as a value the compiler cannot follow"),
        (Instanceof, "handing the machine", "to the builtin isinstance"),
        (Constructed, "handing the machine", "to the class Holder"),
        (BoundMethod, "handing the machine", "to a callable the compiler cannot name"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_c6_self_handed_where_the_scan_cannot_follow_is_refused_naming_the_method(
    declared: type[_Check], construct: str, where: str
) -> None:
    """C6: ``self`` aliased into a global, returned, stored, handed to a builtin, a C-level
    or replacing decorator, ``functools.partial``, a dynamic callable, or to helpers reading
    the machine API (``snapshot()`` two helpers deep, ``state``) is refused at compile time,
    naming the chart, the method, the construct and where."""
    with pytest.raises(UnsupportedChart) as caught:
        compile_chart(declared)
    error = caught.value
    assert error.chart == declared.__name__
    assert construct in error.construct
    assert error.where.startswith(f"{declared.__name__}.too_big ")
    assert where in error.where, error.where
    assert "test_compile_scan.py:" in error.where


def test_c6_python_statemachine_answers_the_refused_helpers_differently() -> None:
    """C6: what the refusals protect: on python-statemachine, ``isinstance(self, Chart)``
    holds and a helper reads ``allowed_events``; the compiled instance is not the chart's
    instance and has no ``allowed_events``, so a compiled run would answer otherwise."""
    reference = Instanceof(Order())
    reference.send("check")
    assert _ids(reference.configuration) == ["big"]
    forwarded = Forwarded(Order())
    forwarded.send("check")
    assert _ids(forwarded.configuration) == ["big"]


class ClassName(_Check):
    def too_big(self) -> bool:
        return self.__class__.__name__ == "ClassName"


class ClassNameInHelper(_Check):
    def too_big(self) -> bool:
        return bool(named(self))


def named(machine: Any) -> bool:
    return bool(machine.__class__.__qualname__ == "ClassNameInHelper")


class ClassUsed(_Check):
    def too_big(self) -> bool:
        return len(self.__class__.states) == 3


class ClassUsedInHelper(_Check):
    def too_big(self) -> bool:
        return bool(counted(self))


def counted(machine: Any) -> bool:
    return len(machine.__class__.states) == 3


class Documented(_Check):
    """Big when documented."""

    def too_big(self) -> bool:
        return self.__doc__ == "Big when documented." and self.__module__ == __name__


def test_c6_a_dunder_read_the_compiled_instance_answers_otherwise_is_refused() -> None:
    """C6: the compiled instance's class is named after the chart, but is not the chart's
    class: ``self.__class__.__name__`` (``__qualname__``), read in a method or a helper given
    ``self``, answers alike and compiles; a method or a helper using ``self.__class__``
    otherwise (``self.__class__.states``) is refused; ``__doc__`` and ``__module__`` answer
    alike and compile."""
    for declared in (ClassUsed, ClassUsedInHelper):
        reference = declared(Order())
        reference.send("check")
        assert _ids(reference.configuration) == ["big"]
        with pytest.raises(UnsupportedChart, match=r"reads self\.__class__"):
            compile_chart(declared)
    for declared in (ClassName, ClassNameInHelper, Documented):
        reference = declared(Order())
        reference.send("check")
        instance = compile_chart(declared).create(Order())
        instance.send("check")
        assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


# -- callables, static and class methods, properties, events -------------------------------


class BaseRules(StateChart[Order]):
    """A base chart of shared behaviour (no states of its own)."""

    def big_enough(self) -> bool:
        return bool(self.model.count > 1)


class ExplicitBase(BaseRules, _Check):
    def too_big(self) -> bool:
        return BaseRules.big_enough(self)


def test_c6_a_base_charts_method_called_explicitly_with_self_is_followed() -> None:
    """C6: ``BaseRules.big_enough(self)`` (calling the base class explicitly, as the
    zero-argument ``super()`` refusal advises) is read like a helper and runs."""
    reference = ExplicitBase(Order())
    reference.send("check")
    instance = compile_chart(ExplicitBase).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


class LambdaReading(StateChart[Order]):
    open = State(initial=True)
    big = State(final=True)
    check = open.to(big, cond=lambda machine: bool(machine.allowed_events))


class LambdaHanding(StateChart[Order]):
    open = State(initial=True)
    big = State(final=True)
    check = open.to(big, cond=lambda machine: isinstance(machine, StateChart))


class LambdaModel(StateChart[Order]):
    open = State(initial=True)
    big = State(final=True)
    small = State(final=True)
    check = open.to(big, cond=lambda model: model.count > 1) | open.to(small)


class StaticHanding(_Check):
    @staticmethod
    def too_big(machine: Any) -> bool:
        return isinstance(machine, StateChart)


class ClassHanding(_Check):
    @classmethod
    def too_big(cls, machine: Any) -> bool:
        return isinstance(machine, cls)


class CachedProperty(_Check):
    @functools.cached_property
    def too_big(self) -> bool:
        return bool(self.model.count > 1)


class Setter(_Check):
    @property
    def level(self) -> int:
        return int(self.model.count)

    @level.setter
    def level(self, value: int) -> None:
        self.model.log.append(type(self))

    def too_big(self) -> bool:
        self.level = 1
        return True


class EventName(_Check):
    def too_big(self) -> bool:
        return bool(self.check.name)


class TracedArgs(_Check):
    @replaced_with_wraps
    def too_big(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("declared", "construct", "where"),
    [
        (LambdaReading, "a callback using", "reads self.allowed_events"),
        (LambdaHanding, "a callback handing", "to the builtin isinstance"),
        (StaticHanding, "handing the machine", "to the builtin isinstance"),
        (ClassHanding, "handing the machine", "to the builtin isinstance"),
        (CachedProperty, "functools.cached_property", "CachedProperty.too_big"),
        (Setter, "handing the machine", "Setter.level passes self on to the class type"),
        (EventName, "machine API", "EventName.too_big reads self.check.name"),
        (TracedArgs, "handing the machine", "uses *args other than handing it on whole"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_c6_machine_given_to_callables_static_methods_setters_and_wrappers_is_checked(
    declared: type[StateChart[Order]], construct: str, where: str
) -> None:
    """C6: a lambda callback's ``machine``, a static or class method's ``machine``, a
    property's setter, a decorated method's wrapper (``self`` in its ``*args``) are scanned as
    a method's ``self``; a ``functools.cached_property`` and reading an event's attributes
    (``self.check.name``: a ``BoundEvent`` there) are refused, naming the chart."""
    with pytest.raises(UnsupportedChart) as caught:
        compile_chart(declared)
    error = caught.value
    assert error.chart == declared.__name__
    assert construct in error.construct or construct in error.where, error
    assert where in error.where, error.where


def test_c6_a_lambda_callback_reading_only_the_model_compiles() -> None:
    """C6: a lambda callback not given the machine is not refused, and answers alike."""
    reference = LambdaModel(Order())
    reference.send("check")
    instance = compile_chart(LambdaModel).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


class _Probe:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, StateChart)

    __hash__ = object.__hash__


PROBE = _Probe()


class ComparedToAnObject(_Check):
    def too_big(self) -> bool:
        probe = PROBE
        return self == probe


class ComparedToNone(_Check):
    def too_big(self, event_data: Any) -> bool:
        return self != None and event_data.machine == self  # noqa: E711


def machine_of(event_data: Any) -> bool:
    return isinstance(event_data.machine, StateChart)


def model_of(event_data: Any) -> bool:
    return bool(event_data.machine.model.count > 1)


class EventDataHanded(_Check):
    def too_big(self, event_data: Any) -> bool:
        return machine_of(event_data)


class EventDataReadingTheModel(_Check):
    def too_big(self, event_data: Any) -> bool:
        return model_of(event_data)


def test_c6_self_compared_with_an_object_reaches_its_eq_and_is_refused() -> None:
    """C6: ``self == probe`` hands ``self`` to ``probe.__eq__`` (here asking whether it is a
    python-statemachine machine): refused; compared with a constant or with the machine itself
    (``event_data.machine == self``) it is not."""
    with pytest.raises(UnsupportedChart, match=r"ComparedToAnObject\.too_big passes self on"):
        compile_chart(ComparedToAnObject)
    reference = ComparedToNone(Order())
    reference.send("check")
    instance = compile_chart(ComparedToNone).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


def test_c6_event_data_handed_to_a_helper_is_followed_to_its_machine() -> None:
    """C6: ``event_data`` handed to a module helper is followed: the helper's
    ``event_data.machine`` is the machine (``isinstance`` on it is refused, reading the model
    compiles and answers alike)."""
    with pytest.raises(UnsupportedChart, match=r"through machine_of\(event_data\)"):
        compile_chart(EventDataHanded)
    reference = EventDataReadingTheModel(Order())
    reference.send("check")
    instance = compile_chart(EventDataReadingTheModel).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


class Inspecting(Order):
    """A model whose callbacks are given the machine."""

    def reads_state(self, machine: Any) -> bool:
        return bool(machine.state.id == "open")

    def hands_on(self, machine: Any) -> bool:
        return isinstance(machine, StateChart)

    def reads_model(self, machine: Any) -> bool:
        return bool(machine.model.count > 1)


def _model_guarded(guard: str) -> type[StateChart[Inspecting]]:
    class ModelGuarded(StateChart[Inspecting]):
        open = State(initial=True)
        big = State(final=True)
        small = State(final=True)
        check = open.to(big, cond=guard) | open.to(small)

    return ModelGuarded


@pytest.mark.parametrize(
    ("guard", "what"),
    [
        ("reads_state", "Inspecting.reads_state reads machine.state at run time"),
        ("hands_on", "Inspecting.hands_on passes machine on to the builtin isinstance"),
    ],
)
def test_c6_a_models_callback_misusing_the_machine_raises_naming_itself(
    guard: str, what: str
) -> None:
    """C6: a model's method (known only at ``create``) given ``machine`` that reads a name
    only the compiled instance has, or hands it where the scan cannot follow, raises
    ``UnsupportedChart`` when it runs, naming the method, never a silent answer."""
    instance = compile_chart(_model_guarded(guard)).create(Inspecting())
    with pytest.raises(UnsupportedChart) as caught:
        instance.send("check")
    assert what in caught.value.where


def test_c6_a_models_callback_reading_what_the_instance_offers_runs() -> None:
    """C6: a model's method given ``machine`` that reads only the model runs, and agrees."""
    declared = _model_guarded("reads_model")
    reference = declared(Inspecting())
    reference.send("check")
    instance = compile_chart(declared).create(Inspecting())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


class KeywordArguments(_Check):
    def too_big(self, **kwargs: Any) -> bool:
        return isinstance(kwargs["machine"], StateChart)


class KeywordGet(_Check):
    def too_big(self, **kwargs: Any) -> bool:
        return bool(kwargs.get("machine").allowed_events)  # type: ignore[union-attr]


class KeywordModel(_Check):
    def too_big(self, **kwargs: Any) -> bool:
        return bool(kwargs["machine"].model.count > 1 and kwargs.get("model") is not None)


def test_c6_the_machine_taken_from_kwargs_is_scanned_as_self() -> None:
    """C6: python-statemachine passes ``machine`` among a callback's ``**kwargs``:
    ``kwargs["machine"]`` and ``kwargs.get("machine")`` are scanned as ``self`` is (handed
    to ``isinstance``, reading ``allowed_events``: refused; reading the model: compiled)."""
    with pytest.raises(UnsupportedChart, match=r"KeywordArguments\.too_big passes self on"):
        compile_chart(KeywordArguments)
    with pytest.raises(UnsupportedChart, match=r"KeywordGet\.too_big reads self\.allowed"):
        compile_chart(KeywordGet)
    reference = KeywordModel(Order())
    reference.send("check")
    instance = compile_chart(KeywordModel).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


class CellNamed(_Check):
    def too_big(self) -> bool:
        return bool(__class__.__name__ == "CellNamed" and __class__ is CellNamed)


class ClassMethodNamed(_Check):
    @classmethod
    def too_big(cls, machine: Any) -> bool:
        return bool(cls.__name__ == "ClassMethodNamed" == cls.__qualname__ and cls.margin == 1)


class ClassMethodReadingTheAPI(_Check):
    @classmethod
    def too_big(cls, machine: Any) -> bool:
        return bool(cls.allowed_events)


class SuperInADecoratedMethod(_Check):
    @logged
    def too_big(self) -> bool:
        return bool(super().__class__)


class SuperInANestedFunction(_Check):
    def too_big(self) -> bool:
        def inner(machine: Any) -> bool:
            return bool(super())

        return inner(self)


def test_c6_a_methods_class_cell_and_a_class_methods_cls_compile_and_answer_alike() -> None:
    """C6: a chart method's ``__class__`` cell (not zero-argument ``super()``) and a class
    method callback's ``cls`` are the chart's class on both engines (the method is not
    rebound; a class method callback is bound to the chart's class): reading them compiles
    and answers as python-statemachine does."""
    for declared in (CellNamed, ClassMethodNamed):
        reference = declared(Order())
        reference.send("check")
        instance = compile_chart(declared).create(Order())
        instance.send("check")
        assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


def test_c6_a_class_methods_cls_reading_the_machine_api_is_still_refused() -> None:
    """C6: a class method's ``cls`` is the chart's class as a callback, but called through
    ``self`` it may be the compiled instance's class (named after the chart, not the chart):
    reading python-statemachine API off it (``cls.allowed_events``) stays refused."""
    with pytest.raises(UnsupportedChart, match=r"ClassMethodReadingTheAPI.too_big reads self"):
        compile_chart(ClassMethodReadingTheAPI)


@pytest.mark.parametrize("declared", [SuperInADecoratedMethod, SuperInANestedFunction])
def test_c6_zero_argument_super_in_a_decorated_or_nested_method_is_refused(
    declared: type[StateChart[Order]],
) -> None:
    """C6: zero-argument ``super()`` in a decorated method (the function under the wrapper)
    or in a function nested in a method is refused as in a plain method: its ``self`` would
    be the compiled instance, not an instance of the chart."""
    with pytest.raises(UnsupportedChart, match="zero-argument super") as caught:
        compile_chart(declared)
    assert caught.value.chart == declared.__name__


class DocExtended(_Check):
    def too_big(self) -> bool:
        self.__doc__ += " (checked)"
        return True


def relabel(machine: Any) -> bool:
    machine.__module__ = "elsewhere"
    return True


class ModuleSetByAHelper(_Check):
    def too_big(self) -> bool:
        return relabel(self)


class ClassRenamed(_Check):
    def too_big(self) -> bool:
        type(self).__name__ = "Renamed"
        return True


@pytest.mark.parametrize(
    ("declared", "what"),
    [
        (DocExtended, "sets self.__doc__"),
        (ModuleSetByAHelper, "sets self.__module__ (through relabel(machine)"),
        (ClassRenamed, "passes self on to the class type"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_c6_setting_the_machines_doc_module_or_class_name_is_refused(
    declared: type[StateChart[Order]], what: str
) -> None:
    """C6: ``__doc__`` and ``__module__`` read off the machine answer alike, but set
    (``self.__doc__ += ...``, a helper's ``machine.__module__ = ...``) they do not:
    python-statemachine's machine keeps them in its ``__dict__``, the compiled instance's are
    read-only; the class's name is not to be set either (the compiled instance's class is not
    the chart's). Refused, naming the chart and what the method does."""
    with pytest.raises(UnsupportedChart) as caught:
        compile_chart(declared)
    assert caught.value.chart == declared.__name__
    assert what in caught.value.where, caught.value.where


class _CallableObject:
    """A callable object as python-statemachine takes one for a callback (named, and with
    its ``__call__``'s code, as its loaders' callables are)."""

    def __init__(self) -> None:
        self.__name__ = self.__qualname__ = type(self).__name__

    @property
    def __code__(self) -> Any:
        return self.__call__.__code__  # type: ignore[attr-defined]


class IsAMachine(_CallableObject):
    """A callable object asking whether it is given python-statemachine's machine."""

    def __call__(self, machine: Any) -> bool:
        return isinstance(machine, StateChart)


def _cond_chart(cond: Any) -> type[StateChart[Order]]:
    class CallableGuarded(StateChart[Order]):
        open = State(initial=True)
        big = State(final=True)
        small = State(final=True)
        check = open.to(big, cond=cond) | open.to(small)

    return CallableGuarded


def reads_allowed_events(self: Any, limit: int) -> bool:
    return bool(self.allowed_events) and limit > 0


class PartialMethodReading(_Check):
    too_big = functools.partialmethod(reads_allowed_events, limit=1)


def test_c6_callable_objects_and_partials_given_the_machine_are_scanned() -> None:
    """C6: a callback given as a callable object (its ``__call__``'s ``machine``) is scanned
    as a lambda is (handing the machine to ``isinstance``: refused); a ``functools.partial``
    reading only the model compiles and answers alike; a chart attribute made with
    ``functools.partialmethod`` is scanned as a method (``self.allowed_events``: refused)."""
    with pytest.raises(UnsupportedChart, match="a callback handing") as caught:
        compile_chart(_cond_chart(IsAMachine()))
    assert "to the builtin isinstance" in caught.value.where
    declared = _cond_chart(functools.partial(over_limit, limit=1))
    reference = declared(Order())
    reference.send("check")
    instance = compile_chart(declared).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]
    with pytest.raises(UnsupportedChart, match=r"PartialMethodReading\.too_big reads self\.all"):
        compile_chart(PartialMethodReading)


class InspectingByObject(Order):
    """A model whose callback is a callable object given the machine."""

    too_big = IsAMachine()


class OverTheLimit(_CallableObject):
    """A callable object reading only the model of the machine it is given."""

    def __call__(self, machine: Any) -> bool:
        return over_limit(machine, 1)


class InspectingTheModelByObject(Order):
    too_big = OverTheLimit()


def test_c6_a_models_callable_object_given_the_machine_is_scanned_when_bound() -> None:
    """C6: a model's callback given as a callable object is read when the model type is
    bound (its ``__call__`` hands the machine to ``isinstance``): it raises
    ``UnsupportedChart`` naming itself when it runs; one reading only the model runs and
    agrees."""
    instance = compile_chart(_Check).create(InspectingByObject())
    with pytest.raises(UnsupportedChart) as caught:
        instance.send("check")
    assert "InspectingByObject.too_big passes machine on to the builtin isinstance" in (
        caught.value.where
    )
    reference = _Check(InspectingTheModelByObject())
    reference.send("check")
    compiled = compile_chart(_Check).create(InspectingTheModelByObject())
    compiled.send("check")
    assert _ids(compiled.configuration) == _ids(reference.configuration) == ["big"]
