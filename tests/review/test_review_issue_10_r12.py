"""Review of ``Chart.create``'s direct path (``Chart._direct``, ``_direct_entry``).

Once a model type was seen, ``create(model)`` with nothing else sets the instance up
itself, unless ``gc.get_referents(model)`` (its last referent dropped as the model's class)
shows a callable or a dict, when the general path looks for callbacks the model instance
holds (``_variant``). Every rule below compares that path with the general one
(``create(model=m)`` takes it: its keyword arguments are not empty) and, where it can run the
model, with python-statemachine.

The breaks found, fixed since: the direct path took "every class of the model's MRO is a
heap type" for "every class is written in Python", so for a class compiled by mypyc (a heap
type whose instances' traversal never visits their class) it dropped a value the model holds
instead of its class: a naming-convention callback the instance holds was not run, and a model
holding no values made ``create`` raise ``IndexError`` (popping from an empty list). The
direct path now drops the last referent only when it is the model's class.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
from collections.abc import Callable
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import InvalidDefinition, TransitionNotAllowed

from statecharts import Instance, UnsupportedChart, VirtualClock, compile_chart


def _flat() -> type[StateChart[Any]]:
    """A flat chart whose instances the direct path sets up (no initial-entry callbacks, no
    names read on the model); a new class each time, so its first ``create`` is a first."""

    class Flat(StateChart):
        idle = State(initial=True)
        running = State()
        done = State(final=True)
        go = idle.to(running)
        back = running.to(idle)
        stop = running.to(done)

    return Flat


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


def _run(
    make: Callable[[Any], Any], model: Any, log: list[str], events: tuple[str, ...] = ("go",)
) -> tuple[list[str], list[str]]:
    machine = make(model)
    for event in events:
        machine.send(event)
    return list(log), ids(machine)


def _general(chart: Any) -> Callable[[Any], Instance]:
    """``create`` through its general path (a keyword argument: the model's)."""
    return lambda model: chart.create(model=model)


class Plain:
    """A model of a Python class holding only data."""

    def __init__(self, log: list[str] | None = None) -> None:
        self.log = log if log is not None else []


def _held(log: list[str]) -> dict[str, Callable[[Any], Any]]:
    """What a model instance may hold as a callback, by how it is held."""

    class Callback:
        def __call__(self) -> None:
            log.append("callable object")

    class Other:
        def note(self) -> None:
            log.append("bound method")

    return {
        "lambda": lambda: log.append("lambda"),
        "partial": functools.partial(log.append, "partial"),
        "bound method": Other().note,
        "callable object": Callback(),
    }


HOLDERS = ["lambda", "partial", "bound method", "callable object"]
NAMES = ["on_enter_running", "before_go", "on_go", "after_go", "on_exit_idle", "on_enter_state"]


# -- breaks: a model of a class compiled by mypyc ------------------------------------------


def _compiled_plugin() -> type:
    """mypy's ``Plugin``: a mypyc-compiled class Python code may subclass (a heap type whose
    instances' traversal does not visit their class)."""
    plugin = pytest.importorskip("mypy.plugin")
    if not plugin.__file__.endswith((".so", ".pyd")):
        pytest.skip("mypy is not compiled by mypyc here")
    return plugin.Plugin  # type: ignore[no-any-return]


def test_a_model_of_a_compiled_class_holding_on_enter_state_runs_it_on_every_create() -> None:
    """Its instance's referents are its ``__dict__`` alone (its class is not among them):
    the direct path drops the ``__dict__`` as if it were the class and finds nothing held,
    so from the second ``create`` on the callback the instance holds is not run (the general
    path and python-statemachine run it)."""
    base = _compiled_plugin()

    class Compiled(base):  # type: ignore[misc, valid-type]
        def __init__(self, log: list[str], hold: bool) -> None:  # Plugin's own not run
            self.log = log
            if hold:
                self.on_enter_running = lambda: log.append("instance on_enter_running")

    declared = _flat()
    chart = compile_chart(declared)
    log: list[str] = []
    assert _run(chart.create, Compiled(log, hold=False), log) == ([], ["running"])
    for make in (chart.create, _general(chart), declared):
        log = []
        assert _run(make, Compiled(log, hold=True), log) == (
            ["instance on_enter_running"],
            ["running"],
        ), make


def test_a_second_model_of_a_compiled_class_holding_no_values_is_created() -> None:
    """Its instance has no referents at all: the direct path pops from an empty list and
    ``create`` raises ``IndexError`` from the second model on."""
    base = _compiled_plugin()

    class Bare(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:  # Plugin's own not run: no value set
            pass

    chart = compile_chart(_flat())
    for _ in range(3):
        machine = chart.create(Bare())
        assert machine.send("go").applied
        assert ids(machine) == ["running"]


def test_a_second_instance_of_a_compiled_class_as_the_model_is_created() -> None:
    """A mypyc-compiled class's own instance (``ReturnSeeker()`` holds no object values):
    the second ``create`` raises ``IndexError``."""
    _compiled_plugin()
    from mypy.traverser import ReturnSeeker

    chart = compile_chart(_flat())
    for _ in range(3):
        model = ReturnSeeker()
        machine = chart.create(model)
        assert machine.model is model
        assert machine.send("go").applied


def test_a_model_of_a_compiled_class_with_its_values_set_runs_what_it_holds() -> None:
    """Pin: with the compiled base's own values set (``Plugin.__init__`` run) the value
    dropped is one of them, and the ``__dict__`` holding the callback is still seen."""
    base = _compiled_plugin()
    from mypy.options import Options

    class Initialized(base):  # type: ignore[misc, valid-type]
        def __init__(self, log: list[str], hold: bool) -> None:
            super().__init__(Options())
            self.log = log
            if hold:
                self.on_enter_running = lambda: log.append("held")

    declared = _flat()
    chart = compile_chart(declared)
    for hold in (False, True, False, True):
        for make in (chart.create, _general(chart), declared):
            log: list[str] = []
            assert _run(make, Initialized(log, hold), log) == (
                ["held"] if hold else [],
                ["running"],
            )


# -- pins: held callbacks ----------------------------------------------------------------


def _outcome(make: Callable[[Any], Any], model: Any, log: list[str]) -> Any:
    """What running ``go`` on ``make(model)`` gives: the log and the states, or the type of
    what was raised (python-statemachine cannot adapt some callables: the compiled chart
    raises as it does)."""
    try:
        return _run(make, model, log)
    except Exception as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("holder", HOLDERS)
def test_a_model_holding_a_convention_callback_runs_it_on_every_create(
    holder: str, name: str
) -> None:
    declared = _flat()
    chart = compile_chart(declared)
    chart.create(Plain())  # the model type seen: later creates take the direct path
    chart.create(Plain())
    results = []
    for make in (chart.create, chart.create, _general(chart), declared):
        log: list[str] = []
        model = Plain(log)
        setattr(model, name, _held(log)[holder])
        results.append(_outcome(make, model, log))
    assert results[0] == results[1] == results[2] == results[3]
    if holder in ("lambda", "bound method"):
        times = 2 if name == "on_enter_state" else 1  # idle entered, then running
        assert results[0] == ([holder] * times, ["running"])
    plain = Plain()
    assert _run(chart.create, plain, plain.log) == ([], ["running"])


def test_a_model_holding_on_enter_state_as_a_lambda_runs_it_on_every_create() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    for _ in range(4):
        log: list[str] = []
        model = Plain(log)
        model.on_enter_running = lambda log=log: log.append("enter running")  # type: ignore[attr-defined]
        assert _run(chart.create, model, log) == (["enter running"], ["running"])


def test_a_model_holding_a_class_as_a_callback_is_created_as_the_general_path_creates_it() -> None:
    def outcome(make: Callable[[Any], Any]) -> Any:
        model = Plain()
        model.on_enter_running = Plain  # type: ignore[attr-defined]
        try:
            return _run(make, model, model.log)
        except Exception as error:
            return type(error)

    chart = compile_chart(_flat())
    chart.create(Plain())
    assert outcome(chart.create) == outcome(_general(chart))


class Acting:
    def __init__(self) -> None:
        self.log: list[str] = []

    def act(self) -> None:
        self.log.append("class act")


class Acted(StateChart):
    idle = State(initial=True)
    running = State()
    go = idle.to(running, on="act")
    back = running.to(idle)


def test_an_instance_attribute_shadowing_a_method_runs_instead_on_every_create() -> None:
    chart = compile_chart(Acted)
    for make in (chart.create, chart.create, _general(chart), Acted):
        plain = Acting()
        assert _run(make, plain, plain.log) == (["class act"], ["running"])
        shadowing = Acting()
        shadowing.act = lambda model=shadowing: model.log.append("instance act")  # type: ignore[method-assign]
        assert _run(make, shadowing, shadowing.log) == (["instance act"], ["running"])


def test_a_model_type_seen_plain_then_holding_then_plain_runs_only_what_each_holds() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    for hold in (False, True, False, True, True, False):
        for make in (chart.create, declared):
            log: list[str] = []
            model = Plain(log)
            if hold:
                model.before_go = lambda log=log: log.append("before go")  # type: ignore[attr-defined]
            assert _run(make, model, log) == (["before go"] if hold else [], ["running"])


def test_a_model_type_first_seen_holding_then_plain_runs_nothing_for_the_plain() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    log: list[str] = []
    model = Plain(log)
    model.on_go = lambda: log.append("on go")  # type: ignore[attr-defined]
    assert _run(chart.create, model, log) == (["on go"], ["running"])
    for _ in range(3):
        plain = Plain()
        assert _run(chart.create, plain, plain.log) == ([], ["running"])


def test_a_model_holding_its_own_class_runs_what_it_holds() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    chart.create(Plain())
    for hold in (False, True):
        for make in (chart.create, _general(chart), declared):
            log: list[str] = []
            model = Plain(log)
            model.kind = Plain  # type: ignore[attr-defined]
            if hold:
                model.on_enter_running = lambda log=log: log.append("held")  # type: ignore[attr-defined]
            assert _run(make, model, log) == (["held"] if hold else [], ["running"])


def test_a_model_with_its_dict_materialized_runs_what_it_holds() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    chart.create(Plain())
    for hold in (False, True, False):
        for make in (chart.create, declared):
            log: list[str] = []
            model = Plain(log)
            assert vars(model)  # CPython now keeps a real ``__dict__`` for it
            if hold:
                model.on_exit_idle = lambda log=log: log.append("exit idle")  # type: ignore[attr-defined]
            assert _run(make, model, log) == (["exit idle"] if hold else [], ["running"])


def test_a_model_holding_a_dict_or_a_callable_under_another_name_runs_nothing() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    chart.create(Plain())
    for value in ({"on_go": print}, print, len, Plain):
        for make in (chart.create, declared):
            model = Plain()
            model.extra = value  # type: ignore[attr-defined]
            assert _run(make, model, model.log) == ([], ["running"])


def test_a_refused_callback_held_by_a_model_seen_before_is_refused_on_every_create() -> None:
    chart = compile_chart(_flat())
    chart.create(Plain())
    for make in (chart.create, chart.create, _general(chart)):
        model = Plain()
        model.prepare_event = lambda: {}  # type: ignore[attr-defined]
        with pytest.raises(UnsupportedChart, match=r"holds itself.*Plain\.prepare_event"):
            make(model)
    assert ids(chart.create(Plain())) == ["idle"]


# -- pins: model kinds -------------------------------------------------------------------


class Slotted:
    __slots__ = ("log",)

    def __init__(self) -> None:
        self.log: list[str] = []


class SlottedWithDict:
    __slots__ = ("__dict__", "log")

    def __init__(self) -> None:
        self.log: list[str] = []


class Empty:
    __slots__ = ()


@dataclasses.dataclass(slots=True)
class SlottedData:
    log: list[str] = dataclasses.field(default_factory=list)
    number: int = 0


@pytest.mark.parametrize("kind", [Slotted, SlottedData, Empty], ids=lambda k: k.__name__)
def test_models_with_slots_are_created_as_the_general_path_creates_them(kind: type) -> None:
    chart = compile_chart(_flat())
    for make in (chart.create, chart.create, _general(chart)):
        model = kind()
        machine = make(model)
        assert type(machine) is type(chart.create(model=kind()))
        assert machine.model is model
        assert machine.send("go").applied
        assert ids(machine) == ["running"]


def test_a_slotted_model_with_a_dict_slot_runs_what_it_holds() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    chart.create(SlottedWithDict())
    for hold in (True, False, True):
        for make in (chart.create, declared):
            model = SlottedWithDict()
            if hold:
                model.on_enter_running = lambda m=model: m.log.append("held")  # type: ignore[attr-defined]
            assert _run(make, model, model.log) == (["held"] if hold else [], ["running"])


@dataclasses.dataclass(slots=True)
class DataWithCallback:
    on_enter_running: Callable[[], None] | None = None
    log: list[str] = dataclasses.field(default_factory=list)


def test_a_slotted_dataclass_field_named_after_a_callback_is_read_on_every_create() -> None:
    chart = compile_chart(_flat())
    for _ in range(3):
        model = DataWithCallback()
        model.on_enter_running = lambda m=model: m.log.append("field")
        assert _run(chart.create, model, model.log) == (["field"], ["running"])
        assert _run(_general(chart), model, model.log)[1] == ["running"]


class Mapping(dict):  # type: ignore[type-arg]
    pass


class Sequence(list):  # type: ignore[type-arg]
    pass


class Number(int):
    pass


@pytest.mark.parametrize(
    "make_model",
    [lambda: Mapping(a=print), lambda: Sequence([print]), lambda: Number(3)],
    ids=["dict", "list", "int"],
)
def test_models_subclassing_builtins_run_what_they_hold(make_model: Callable[[], Any]) -> None:
    declared = _flat()
    chart = compile_chart(declared)
    chart.create(make_model())
    for hold in (False, True, False):
        for make in (chart.create, declared):
            log: list[str] = []
            model = make_model()
            if hold:
                model.on_enter_running = lambda log=log: log.append("held")
            assert _run(make, model, log) == (["held"] if hold else [], ["running"])


class Dynamic:
    """A model answering a convention callback through ``__getattr__``, listed by its
    ``__dir__``: python-statemachine finds it by ``dir(model)``."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def __dir__(self) -> list[str]:
        return [*object.__dir__(self), "on_enter_running"]

    def __getattr__(self, name: str) -> Any:
        if name == "on_enter_running":
            return lambda: self.log.append("dynamic")
        raise AttributeError(name)


class Answering:
    """A model whose ``__getattr__`` answers a convention callback its ``dir`` does not
    list: python-statemachine does not find it."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name == "on_enter_running":
            return lambda: self.log.append("answered")
        raise AttributeError(name)


@pytest.mark.parametrize("kind", [Dynamic, Answering], ids=lambda k: k.__name__)
def test_models_with_getattr_or_dir_run_what_python_statemachine_runs(kind: type) -> None:
    declared = _flat()
    chart = compile_chart(declared)
    for hold in (False, True, False, True):
        results = []
        for make in (chart.create, chart.create, _general(chart), declared):
            model = kind()
            if hold:
                model.on_go = lambda model=model: model.log.append("held on go")
            results.append(_run(make, model, model.log))
        assert results[0] == results[1] == results[2] == results[3], results
        assert ("held on go" in results[0][0]) is hold


def test_pydantic_models_are_created_as_the_general_path_creates_them() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Record(pydantic.BaseModel):  # type: ignore[misc, name-defined]
        count: int = 0

    chart = compile_chart(_flat())
    for make in (chart.create, chart.create, _general(chart)):
        model = Record(count=1)
        machine = make(model)
        assert machine.model is model
        assert machine.send("go").applied
        assert ids(machine) == ["running"]


# -- pins: no model, object() and None ---------------------------------------------------


def test_create_without_a_model_after_an_object_model_gets_a_fresh_model() -> None:
    from statemachine.model import Model

    chart = compile_chart(_flat())
    given = object()
    assert chart.create(given).model is given
    assert chart.create(given).model is given
    for machine in (chart.create(), chart.create(None), chart.create(model=None)):
        assert type(machine.model) is Model
    first, second = chart.create(), chart.create()
    assert first.model is not second.model
    model = Model()
    assert chart.create(model).model is model


# -- pins: class mutated after the first create ------------------------------------------


def test_a_convention_method_added_to_the_class_later_runs_as_the_general_path_runs_it() -> None:
    class Late:
        def __init__(self) -> None:
            self.log: list[str] = []

    chart = compile_chart(_flat())
    chart.create(Late())
    Late.on_enter_running = lambda self: self.log.append("added")  # type: ignore[attr-defined]
    fast, general = Late(), Late()
    assert _run(chart.create, fast, fast.log) == _run(_general(chart), general, general.log)
    held = Late()
    held.on_enter_running = lambda: held.log.append("held")  # type: ignore[attr-defined]
    assert _run(chart.create, held, held.log) == (["held"], ["running"])


def test_a_model_whose_class_is_reassigned_runs_its_new_class_callbacks() -> None:
    class First:
        pass

    class Second:
        def __init__(self) -> None:
            self.log: list[str] = []

        def on_enter_running(self) -> None:
            self.log.append("second")

    chart = compile_chart(_flat())
    chart.create(First())
    chart.create(Second())
    model = First()
    model.__class__ = Second
    model.log = []
    assert _run(chart.create, model, model.log) == (["second"], ["running"])


# -- pins: threads -------------------------------------------------------------------------


def test_threads_creating_instances_of_one_model_type_each_run_what_theirs_hold() -> None:
    chart = compile_chart(_flat())
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work(seed: int) -> None:
        try:
            barrier.wait()
            for i in range(200):
                log: list[str] = []
                model = Plain(log)
                hold = (i + seed) % 3 == 0
                if hold:
                    model.on_enter_running = lambda log=log: log.append("held")  # type: ignore[attr-defined]
                assert _run(chart.create, model, log) == (["held"] if hold else [], ["running"])
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


# -- pins: the instance created ------------------------------------------------------------


def test_an_instance_created_directly_is_one_the_general_path_would_create() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    chart.create(Plain())
    fast_model, general_model = Plain(), Plain()
    fast, general = chart.create(fast_model), chart.create(model=general_model)
    assert type(fast) is type(general)
    assert fast.model is fast_model
    assert fast.snapshot() == general.snapshot()
    assert fast.state is general.state
    assert not fast.is_terminated
    for event in ("go", "back", "go", "stop", "go"):
        assert fast.send(event) == general.send(event)
    assert ids(fast) == ids(general) == ["done"]
    assert fast.is_terminated


class Strict(StateChart):
    allow_event_without_transition = False
    idle = State(initial=True)
    running = State()
    go = idle.to(running)
    back = running.to(idle)


def test_a_strict_chart_refuses_an_event_of_an_instance_created_directly() -> None:
    chart = compile_chart(Strict)
    chart.create(Plain())
    for make in (chart.create, chart.create, _general(chart), Strict):
        machine = make(Plain())
        with pytest.raises(TransitionNotAllowed):
            machine.send("back")
        assert ids(machine) == ["idle"]


def test_snapshots_resume_and_restore_work_with_instances_created_directly() -> None:
    chart = compile_chart(_flat())
    chart.create(Plain())
    machine = chart.create(Plain())
    machine.send("go")
    snapshot = machine.snapshot()
    model = Plain()
    restored = chart.restore(snapshot, model)
    assert restored.model is model
    assert ids(restored) == ["running"]
    resumed = chart.resume("running", Plain())
    assert ids(resumed) == ["running"]
    assert resumed.send("stop").applied
    log: list[str] = []
    held = Plain(log)
    held.on_exit_running = lambda: log.append("exit running")  # type: ignore[attr-defined]
    assert chart.resume("running", held).send("stop").applied
    assert log == ["exit running"]


def test_a_clock_given_after_instances_were_created_directly_is_used() -> None:
    class Delayed(StateChart):
        idle = State(initial=True)
        running = State()
        go = idle.to(running)
        back = running.to(idle)

    chart = compile_chart(Delayed)
    chart.create(Plain())
    chart.create(Plain())
    clock = VirtualClock()
    machine = chart.create(Plain(), clock=clock)
    machine.send("go", delay=1000)
    assert ids(machine) == ["idle"]
    clock.advance(1.0)
    machine.run_until_idle()
    assert ids(machine) == ["running"]


class FieldCounting(StateChart):
    """Class-level data: each instance counts in its own ``__dict__``."""

    attempts = 0
    idle = State(initial=True)
    running = State()
    go = idle.to(running, on="count")
    back = running.to(idle, on="count")

    def count(self) -> None:
        self.attempts += 1


def test_instances_created_directly_keep_their_own_fields() -> None:
    chart = compile_chart(FieldCounting)
    chart.create(Plain())
    first, second = chart.create(Plain()), chart.create(Plain())
    reference = FieldCounting(Plain())
    for machine in (first, reference):
        machine.send("go")
        machine.send("back")
    assert first.attempts == reference.attempts == 2
    assert second.attempts == 0


# -- pins: charts the direct path must not take -------------------------------------------


class Nested(StateChart):
    class outer(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)
        back = b.to(a)

    end = State(final=True)
    stop = outer.to(end)


class Regions(StateChart):
    class both(State.Parallel):
        class left(State.Compound):
            x = State(initial=True)
            y = State()
            go = x.to(y)
            back = y.to(x)

        class right(State.Compound):
            u = State(initial=True)
            v = State()
            turn = u.to(v)
            undo = v.to(u)


@pytest.mark.parametrize(
    ("declared", "name", "events"),
    [
        (Nested, "on_enter_a", ()),
        (Nested, "on_enter_b", ("go",)),
        (Nested, "on_enter_outer", ()),
        (Regions, "on_enter_x", ()),
        (Regions, "on_enter_y", ("go",)),
        (Regions, "on_enter_both", ()),
    ],
)
def test_hierarchical_charts_run_held_callbacks_on_every_create(
    declared: type[StateChart[Any]], name: str, events: tuple[str, ...]
) -> None:
    chart = compile_chart(declared)
    expected = None
    for make in (chart.create, chart.create, chart.create, declared):
        chart.create(Plain())
        log: list[str] = []
        model = Plain(log)
        setattr(model, name, lambda log=log: log.append("held"))
        result = _run(make, model, log, events)
        assert result[0] == ["held"]
        expected = expected or result
        assert result == expected


class EnteringChart(StateChart):
    idle = State(initial=True)
    running = State()
    go = idle.to(running)
    back = running.to(idle)

    def on_enter_idle(self) -> None:
        self.model.log.append("chart on_enter_idle")


class EnteringModel(Plain):
    def on_enter_idle(self) -> None:
        self.log.append("model on_enter_idle")


def test_a_chart_entering_its_initial_state_through_callbacks_runs_them_on_every_create() -> None:
    chart = compile_chart(EnteringChart)
    for _ in range(3):
        model = Plain()
        chart.create(model)
        assert model.log == ["chart on_enter_idle"]


def test_a_model_class_with_on_enter_initial_runs_it_on_every_create() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    for make in (chart.create, chart.create, chart.create, declared):
        model = EnteringModel()
        make(model)
        assert model.log == ["model on_enter_idle"]


def test_a_model_holding_on_enter_initial_runs_it_on_every_create() -> None:
    declared = _flat()
    chart = compile_chart(declared)
    chart.create(Plain())
    for make in (chart.create, chart.create, declared):
        log: list[str] = []
        model = Plain(log)
        model.on_enter_idle = lambda log=log: log.append("held on_enter_idle")  # type: ignore[attr-defined]
        make(model)
        assert log == ["held on_enter_idle"]
    model = Plain()
    chart.create(model)
    assert model.log == []


class Awaiting(StateChart):
    idle = State(initial=True)
    running = State()
    go = idle.to(running)
    back = running.to(idle)

    async def on_enter_idle(self) -> None:
        self.model.log.append("entered")


def test_an_async_chart_defers_the_initial_entry_of_every_instance() -> None:
    async def run() -> None:
        chart = compile_chart(Awaiting)
        for _ in range(3):
            model = Plain()
            machine = chart.create(model)
            assert ids(machine) == []
            assert model.log == []
            await machine.activate_initial_state()
            assert model.log == ["entered"]
            assert ids(machine) == ["idle"]

    asyncio.run(run())


class Initialized(StateChart):
    idle = State(initial=True)
    running = State()
    go = idle.to(running)
    back = running.to(idle)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.made = True
        super().__init__(*args, **kwargs)


def test_a_chart_with_its_own_init_runs_it_on_every_create() -> None:
    chart = compile_chart(Initialized)
    for _ in range(3):
        model = Plain()
        machine = chart.create(model)
        assert machine.made is True
        assert machine.model is model
    assert chart.create().made is True


class Reading(StateChart):
    """A guard the model's class lacks: each model instance is read for it."""

    idle = State(initial=True)
    running = State()
    go = idle.to(running, cond="ready")
    back = running.to(idle)


def test_a_name_the_model_class_lacks_is_read_from_every_instance() -> None:
    chart = compile_chart(Reading)
    model = Plain()
    model.ready = True  # type: ignore[attr-defined]
    assert chart.create(model).send("go").applied
    model = Plain()
    model.ready = True  # type: ignore[attr-defined]
    assert chart.create(model).send("go").applied
    with pytest.raises(InvalidDefinition):
        chart.create(Plain())
