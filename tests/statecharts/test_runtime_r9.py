"""Rules of round 9's runtime changes, each compared with python-statemachine: an instance
attribute shadowing a callback of its model's class runs instead of it, and the bindings
generated for such instances are kept within a bound (C9); create's and send's keyword
arguments (C8); observers and the chart's own descriptors (C11, C20)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import UnsupportedChart, compile_chart, observe_outcomes


class Model:
    """A model whose class provides every callback the charts below name."""

    limit = 3  # a plain class attribute read as a guard

    def __init__(self) -> None:
        self.log: list[str] = []

    def act(self) -> None:
        self.log.append("class act")

    def allowed(self) -> bool:
        self.log.append("class allowed")
        return True

    @staticmethod
    def note() -> None:
        pass  # the instances below log through the callable they hold instead

    def on_enter_b(self) -> None:
        self.log.append("class on_enter_b")

    def after_go(self) -> None:
        self.log.append("class after_go")


class Shadowed(StateChart):
    a = State(initial=True)
    b = State()
    go = a.to(b, on=["act", "note"], cond=["allowed", "limit"])
    back = b.to(a)


class Finishing(StateChart):
    """A chart whose final state inside a compound one gives done data: the values a model
    instance holds are then looked at by name (not only its callable values)."""

    class outer(State.Compound):
        a = State(initial=True)
        b = State()
        done = State(final=True)
        go = a.to(b, on=["act", "note"], cond=["allowed", "limit"])
        back = b.to(a)
        finish = b.to(done)

    after = State(final=True)
    done_state_outer = outer.to(after)


def _shadow(model: Model, names: tuple[str, ...]) -> None:
    for name in names:

        def held(name: str = name) -> bool:
            model.log.append(f"instance {name}")
            return True

        setattr(model, name, held)


def _run(make: Callable[[Model], Any], names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    model = Model()
    _shadow(model, names)
    machine = make(model)
    machine.send("go")
    return model.log, sorted(state.id for state in machine.configuration)


SHADOWS = [
    ("act",),
    ("allowed",),
    ("note",),
    ("on_enter_b",),
    ("after_go",),
    ("limit",),
    ("act", "on_enter_b", "allowed"),
]


@pytest.mark.parametrize("names", SHADOWS, ids="+".join)
@pytest.mark.parametrize("declared", [Shadowed, Finishing], ids=lambda c: c.__name__)
def test_an_instance_attribute_shadowing_a_class_callback_runs_instead(
    declared: type[StateChart[Any]], names: tuple[str, ...]
) -> None:
    chart = compile_chart(declared)
    assert _run(chart.create, names) == _run(declared, names)


def test_instances_of_one_model_class_shadowing_different_names_each_run_their_own() -> None:
    chart = compile_chart(Shadowed)
    for names in [("act",), (), ("allowed",), ("act",), ("on_enter_b", "after_go"), ()]:
        assert _run(chart.create, names) == _run(Shadowed, names), names


def test_an_instance_attribute_shadowing_a_callback_of_a_model_with_its_own_dir_runs() -> None:
    class Listing(Model):
        def __dir__(self) -> list[str]:
            return [*object.__dir__(self), "extra"]

    def run(make: Callable[[Model], Any]) -> list[str]:
        model = Listing()
        _shadow(model, ("act",))
        make(model).send("go")
        return model.log

    assert (
        run(compile_chart(Shadowed).create)
        == run(Shadowed)
        == [
            "class allowed",
            "instance act",
            "class on_enter_b",
            "class after_go",
        ]
    )


def test_a_shadowed_prepare_event_is_refused_when_the_instance_is_created() -> None:
    class Preparing(Model):
        def prepare_event(self) -> dict[str, Any]:
            return {}

    class Prepared(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def prepare_event(self) -> dict[str, Any]:
            return {}

    model = Preparing()
    model.prepare_event = lambda: {}  # type: ignore[method-assign]
    with pytest.raises(UnsupportedChart, match=r"holds itself.*Preparing\.prepare_event"):
        compile_chart(Prepared).create(model)


def test_the_bindings_kept_for_instances_holding_callbacks_are_bounded() -> None:
    """One binding is generated for each set of names instances hold; no more than a bound
    of them is kept, the oldest dropped first, and an instance whose set was dropped still
    runs its own callbacks."""
    from statecharts._runtime import _VARIANTS_KEPT

    class Many(StateChart):
        a = State(initial=True)
        b = State()
        go = a.to(b, on=[f"step{i}" for i in range(8)])
        back = b.to(a)

    steps = {f"step{i}": (lambda self: None) for i in range(8)}
    Wide = type("Wide", (), steps)
    chart = compile_chart(Many)
    runtime = chart._runtime
    assert runtime is not None
    first: list[str] = []
    for mask in range(1, 2 + _VARIANTS_KEPT):
        model = Wide()
        calls: list[str] = []
        held = [f"step{i}" for i in range(8) if mask >> i & 1]
        for name in held:
            setattr(model, name, lambda name=name, calls=calls: calls.append(name))
        chart.create(model).send("go")
        assert calls == held
        if mask == 1:
            first = calls
        assert len(runtime.variants) <= _VARIANTS_KEPT
    model = Wide()
    model.step0 = lambda: first.append("again")
    chart.create(model).send("go")
    assert first == ["step0", "again"]


class Entering(StateChart):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.seen: list[list[str]] = []
        super().__init__(*args, **kwargs)

    def on_enter_state(self, **kwargs: Any) -> None:
        self.seen.append(sorted(kwargs))


def test_a_machine_keyword_is_refused_as_psm_refuses_it_building_the_event() -> None:
    chart = compile_chart(Entering)
    refused = "multiple values for keyword argument 'machine'"
    for make in (Entering, chart.create):
        with pytest.raises(TypeError, match=refused):
            make(machine=1)
        machine = make()
        with pytest.raises(TypeError, match=refused):
            machine.send("go", machine=1)


def test_create_takes_the_model_by_keyword_and_send_id_as_an_option() -> None:
    """As python-statemachine's constructor: ``model=m`` is the model, ``send_id`` is the
    initial event's option (no callback is handed it), the rest is the entry's payload."""
    model = Model()
    for make in (Entering, compile_chart(Entering).create):
        machine = make(model=model, send_id="s", extra=1)
        assert machine.model is model
        assert "send_id" not in machine.seen[0]
        assert "extra" in machine.seen[0]
    with pytest.raises(TypeError, match="multiple values for argument 'model'"):
        compile_chart(Entering).create(model, model=model)


class Relay(StateChart):
    """``go``'s action sends ``next``: an external event queued by a callback."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="relay")
    next = b.to(c)

    def relay(self) -> None:
        self.send("next")


def test_observers_see_each_queued_event_with_the_instance_it_ran_on() -> None:
    seen: list[tuple[Any, str, bool]] = []
    instance = compile_chart(Relay).create()
    with observe_outcomes(lambda who, outcome: seen.append((who, outcome.event, outcome.applied))):
        instance.send("go")
    assert ("next", True) in [(event, applied) for _, event, applied in seen]
    assert all(who is instance for who, _, _ in seen)


class Owned:
    """A descriptor reading the class it is read through, as a classmethod does."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return owner


class Stored:
    """A data descriptor with ``__get__`` and ``__set__`` only, storing on the instance."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = f"_stored_{name}"

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return getattr(instance, self.name, "unset") if instance is not None else self

    def __set__(self, instance: Any, value: Any) -> None:
        object.__setattr__(instance, self.name, f"stored {value}")


class Described(StateChart):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="look")
    whose = Owned()
    note = Stored()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.seen: list[Any] = []
        super().__init__(*args, **kwargs)

    def look(self) -> None:
        self.seen.append(self.whose is Described)
        self.note = 1
        self.seen.append(self.note)


def test_a_chart_descriptor_reads_the_chart_class_and_a_setter_runs_as_in_psm() -> None:
    """A descriptor of the chart class gets the declared class as its owner (not the class
    the compiled instances are made of), and one with ``__set__`` only stores through it."""
    compiled = compile_chart(Described).create()
    reference = Described()
    for machine in (compiled, reference):
        machine.send("go")
    assert compiled.seen == reference.seen == [True, "stored 1"]
