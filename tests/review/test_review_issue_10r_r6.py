"""Breaks found by an independent review of issue 10 (round 6). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C6 ("refuse, never approximate": a run may never give a
# different answer silently) and C15 (`configuration` as python-statemachine's). Most charts
# below hand python-statemachine's machine to code the compile-time scan does not read (a
# functools.wraps wrapper's *args, a lambda, a static or class method, a cached_property, a
# helper given event_data, **kwargs, an __eq__, a model's method); there it is asked what it
# is (type, isinstance, __class__), and the compiled instance answers otherwise, silently.
# Each test passes once the chart is refused at compile time naming the chart, or the run
# agrees with python-statemachine's.

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from statemachine import Event, State, StateChart

from statecharts import UnsupportedChart, compile_chart


class Model:
    """A model keeping a log of what callbacks saw."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def audit(self, machine: Any, event: str) -> None:
        """An audit hook shared by several charts: records which chart ran which event."""
        self.log.append(f"{machine.__class__.__name__}:{event}")


def _outcome(
    cls: type[StateChart[Any]], events: tuple[str, ...] = ("go",)
) -> tuple[tuple[list[str], list[str]], tuple[list[str], list[str]] | None]:
    """The configuration ids and the model's log after ``events`` on python-statemachine's
    engine and compiled (``None``: the compiler refused the chart, naming it)."""
    model = Model()
    reference = cls(model)
    for event in events:
        reference.send(event)
    expected = ([state.id for state in reference.configuration], model.log)
    chart = _compiled(cls)
    if chart is None:
        return expected, None
    model = Model()
    instance = chart.create(model)
    for event in events:
        instance.send(event)
    return expected, ([state.id for state in instance.configuration], model.log)


def _compiled(cls: type[StateChart[Any]]) -> Any:
    """The compiled chart, or ``None`` when the compiler refuses it (naming the chart)."""
    try:
        return compile_chart(cls)
    except UnsupportedChart as refusal:
        message = str(refusal)
    assert cls.__name__ in message
    return None


def _assert_faithful(cls: type[StateChart[Any]]) -> None:
    expected, compiled = _outcome(cls)
    if compiled is not None:
        assert compiled == expected


LOG: list[str] = []


def traced(function: Callable[..., Any]) -> Callable[..., Any]:
    """A tracing decorator as users write them: it logs the class and the method called."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        LOG.append(f"{type(args[0]).__name__}.{function.__name__}")
        return function(*args, **kwargs)

    return wrapper


class Traced(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="ship")

    @traced
    def ship(self) -> None:
        self.model.log.append("shipped")


def test_C6_a_tracing_decorator_given_self_in_args_does_not_answer_differently() -> None:
    """A chart method is wrapped by a `functools.wraps` tracing decorator that logs
    `type(args[0]).__name__`: python-statemachine logs `Traced.ship`, the compiled chart is not
    refused (the wrapper's `*args` is never followed) and logs `TracedInstance.ship`."""
    LOG.clear()
    model = Model()
    Traced(model).send("go")
    expected = list(LOG)
    assert expected == ["Traced.ship"]
    chart = _compiled(Traced)
    if chart is None:
        return
    LOG.clear()
    chart.create(Model()).send("go")
    assert expected == LOG


class LambdaAction(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=lambda machine, model: model.log.append(type(machine).__name__))


def test_C6_a_lambda_callback_given_machine_does_not_answer_differently() -> None:
    """An inline `on=lambda machine, model: model.log.append(type(machine).__name__)` (lambdas
    are how python-statemachine users write small callbacks): python-statemachine logs
    `LambdaAction`, the compiled chart compiles (lambdas are never scanned) and logs another
    class's name."""
    _assert_faithful(LambdaAction)


class StaticGuard(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="is_chart") | a.to(c)

    @staticmethod
    def is_chart(machine: Any) -> bool:
        return isinstance(machine, StateChart)


def test_C6_a_static_method_guard_given_machine_does_not_answer_differently() -> None:
    """A static method guard takes `machine` and checks `isinstance(machine, StateChart)`:
    python-statemachine goes to `b`, the compiled chart compiles (static methods are not
    checked for escapes) and silently goes to `c`."""
    _assert_faithful(StaticGuard)


class ClassGuard(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="mine") | a.to(c)

    @classmethod
    def mine(cls, machine: Any) -> bool:
        return isinstance(machine, cls)


def test_C6_a_class_method_guard_given_machine_does_not_answer_differently() -> None:
    """A class method guard `isinstance(machine, cls)` (is this event for my chart?): `b` on
    python-statemachine, `c` compiled, with no refusal."""
    _assert_faithful(ClassGuard)


class CachedGuard(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="is_chart") | a.to(c)

    @functools.cached_property
    def is_chart(self) -> bool:
        return isinstance(self, StateChart)


def test_C6_a_cached_property_guard_is_scanned_like_a_property() -> None:
    """A guard named after a `functools.cached_property` whose body hands `self` to
    `isinstance`: a plain `property` with that body is refused, the cached one is not scanned
    at all, and the compiled run silently ends in `c` where python-statemachine ends in `b`."""
    _assert_faithful(CachedGuard)


def chart_of(event_data: Any) -> bool:
    """A module helper reading the event's machine."""
    return isinstance(event_data.machine, StateChart)


class EventDataHelper(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="ok") | a.to(c)

    def ok(self, event_data: Any) -> bool:
        return chart_of(event_data)


def test_C6_a_helper_given_event_data_does_not_answer_differently() -> None:
    """A chart method hands `event_data` (not `self`) to a module helper that checks
    `isinstance(event_data.machine, StateChart)`: `b` on python-statemachine, `c` compiled;
    `event_data.machine` is followed only when read in the chart method itself."""
    _assert_faithful(EventDataHelper)


class KeywordMachine(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="ok") | a.to(c)

    def ok(self, **kwargs: Any) -> bool:
        return isinstance(kwargs["machine"], StateChart)


def test_C6_a_guard_taking_machine_from_kwargs_does_not_answer_differently() -> None:
    """A guard with `**kwargs` reads `kwargs["machine"]` (python-statemachine passes the
    machine among the keyword arguments): `b` there, silently `c` compiled."""
    _assert_faithful(KeywordMachine)


class Probe:
    """Compares equal to any python-statemachine machine."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StateChart)

    __hash__ = object.__hash__


PROBE = Probe()


class EqualityGuard(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="matches") | a.to(c)

    def matches(self) -> bool:
        probe = PROBE
        return self == probe


def test_C6_self_as_an_operand_of_equality_reaches_the_other_operands_eq() -> None:
    """The scan treats `self == probe` as harmless, but `==` hands `self` to `probe.__eq__`,
    code the compiler never reads; here it checks `isinstance(other, StateChart)`: `b` on
    python-statemachine, silently `c` compiled."""
    _assert_faithful(EqualityGuard)


class Audited(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="audit")


def test_C6_a_model_method_given_machine_does_not_answer_differently() -> None:
    """The model's `audit(machine, event)` logs `machine.__class__.__name__`: `Audited:go` on
    python-statemachine, `AuditedInstance:go` compiled. C6 says the machine API reached
    through a model's method raises `UnsupportedChart` at run time; a dunder is answered."""
    expected, compiled = _outcome(Audited)
    assert expected == (["b"], ["Audited:go"])
    if compiled is not None:
        assert compiled == expected


class Review(StateChart[Model]):
    draft = State(initial=True)
    review = State()
    done = State(final=True)
    submit = draft.to(review, on="announce")
    approve = Event(review.to(done), name="Approve the draft")

    def announce(self) -> None:
        self.model.log.append(f"waiting for: {self.approve.name}")


def test_C6_an_event_read_on_self_answers_as_python_statemachines_event() -> None:
    """An action logs the human name of the next event, `self.approve.name` (python-
    statemachine's machine holds its events as `BoundEvent`s with `name`, `id`, `delay`): the
    compiled instance's `approve` is a bound method, the read raises `AttributeError`, which
    `error.execution` swallows, and the log stays empty, with no refusal."""
    expected, compiled = _outcome(Review, ("submit",))
    assert expected == (["review"], ["waiting for: Approve the draft"])
    if compiled is not None:
        assert compiled == expected


class Shop(StateChart[Model]):
    class work(State.Parallel, initial=True):
        class pay(State.Compound):
            unpaid = State(initial=True)
            paid = State()
            settle = unpaid.to(paid)

        class ship(State.Compound):
            packing = State(initial=True)
            shipped = State()
            dispatch = packing.to(shipped)

    done = State(final=True)
    close = work.to(done, cond="all_done")

    def all_done(self) -> bool:
        return bool(self.configuration >= {Shop.work.pay.paid, Shop.work.ship.shipped})


def test_C15_configuration_is_a_set_of_states_as_python_statemachines() -> None:
    """A guard asks whether both regions are done with `self.configuration >= {paid,
    shipped}` (python-statemachine's `configuration` is an `OrderedSet`): compiled it is a
    tuple, the comparison raises `TypeError`, the guard counts as false and `close` is
    silently not taken (`isdisjoint`, `|`, `&`, `== {...}` fail or answer the same way)."""
    expected, compiled = _outcome(Shop, ("settle", "dispatch", "close"))
    assert expected == (["done"], [])
    if compiled is not None:
        assert compiled == expected
