"""Review round 9 of issue 10: the divergences-r8 merge (6c45e41) attacked against
python-statemachine 3.2's own engines: a raising ``prepare_event``, ``BaseException`` queues,
async sends with options, callables a model hands out or holds, and naming-convention
callbacks a model instance holds (the create path: ``Chart.create``, ``_variant``,
``Runtime.for_instance``)."""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import (
    AsyncioClock,
    Instance,
    InstanceSnapshotError,
    UnsupportedChart,
    VirtualClock,
    compile_chart,
)

LOG: list[Any] = []


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


def _recording(name: str) -> Any:
    def record(*args: Any, **kwargs: Any) -> None:
        LOG.append(name)

    return record


class Plain:
    """A model whose class defines no callback."""


class Stepping(StateChart[Any]):
    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b)
    back = b.to(a)
    finish = b.to(c)


def _steps(make: Any, model: Any, events: tuple[str, ...] = ("go", "back", "go")) -> Any:
    """What a run shows: whether creating raised, else per event the configuration after
    it (or what ``send`` raised); the callbacks' log last."""
    LOG.clear()
    try:
        machine = make(model)
    except Exception as error:
        return ("create raised", type(error).__name__, str(error))
    steps: list[Any] = []
    for event in events:
        try:
            machine.send(event)
            steps.append((event, ids(machine)))
        except Exception as error:
            steps.append((event, repr(error), ids(machine)))
    return steps, list(LOG)


def _refused_or_same(chart: type[StateChart[Any]], make_model: Any, **kw: Any) -> None:
    """The compiled instance runs as python-statemachine's machine, or is refused with
    ``UnsupportedChart`` (when compiled, created or sent to)."""
    reference = _steps(chart, make_model(), **kw)
    try:
        compiled = _steps(compile_chart(chart).create, make_model(), **kw)
    except UnsupportedChart:
        return
    if compiled[0] == "create raised" and compiled[1] == "UnsupportedChart":
        return
    if any(len(step) == 3 and "UnsupportedChart" in step[1] for step in compiled[0]):
        return
    assert compiled == reference


# -- 1. a class given as a callback -------------------------------------------------------


class Record:
    """A class named as a callback (its instances record the call)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        LOG.append(("record", sorted(kwargs)))


class ChartNamingAClass(Stepping):
    on_enter_b = Record


class ModelNamingAClass:
    on_enter_b = Record


class GuardedByTheModel(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="ok") | b.to(a, cond="ok")


class ModelGuardIsAClass:
    ok = Record


class Checking:
    """A callable object with neither ``__qualname__`` nor ``__code__``."""

    def __call__(self, *args: Any, **kwargs: Any) -> bool:
        LOG.append("checked")
        return True


class ChartGuardIsACallableObject(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="ok") | b.to(a, cond="ok")
    ok = Checking()


class ChartConventionIsACallableObject(Stepping):
    on_enter_b = Checking()


class ModelGuardIsACallableObject:
    ok = Checking()


class ActionIsAClass(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on=Record) | b.to(a)


# break 1: a class given as a callback (a chart's or a model class's attribute, or given to
# on= itself), or a callable object without __qualname__ / __code__ a chart's or a model
# class's attribute holds, makes python-statemachine's machine fail when it is built
# (AttributeError, read for its signature cache); the compiled instance calls it instead
# (refused only when a model instance holds it, test_divergences_r8)
@pytest.mark.parametrize(
    ("chart", "model"),
    [
        (ChartNamingAClass, Plain),
        (Stepping, ModelNamingAClass),
        (GuardedByTheModel, ModelGuardIsAClass),
        (ActionIsAClass, Plain),
        (ChartGuardIsACallableObject, Plain),
        (ChartConventionIsACallableObject, Plain),
        (GuardedByTheModel, ModelGuardIsACallableObject),
    ],
    ids=[
        "chart-convention",
        "model-convention",
        "model-guard",
        "action-given-a-class",
        "chart-guard-object",
        "chart-convention-object",
        "model-guard-object",
    ],
)
def test_c6_a_class_given_as_a_callback_fails_or_is_refused_as_in_python_statemachine(
    chart: type[StateChart[Any]], model: type
) -> None:
    with pytest.raises(AttributeError, match=r"__code__|__qualname__"):
        chart(model())
    _refused_or_same(chart, model)


# -- 2. a model instance holding its own class as a naming-convention callback -------------


def _holding_its_class() -> Any:
    model = Plain()
    model.on_enter_b = Plain  # type: ignore[attr-defined]
    return model


def _holding_another_class() -> Any:
    model = Plain()
    model.on_enter_b = Record  # type: ignore[attr-defined]
    return model


def test_c9_a_model_instance_holding_another_class_as_a_convention_callback_fails_as_in_psm() -> (
    None
):
    """The instance's values are looked at (a variant is generated for ``on_enter_b``) and
    binding the class fails, as python-statemachine's machine fails to build."""
    reference = _steps(Stepping, _holding_another_class())
    assert reference[0] == "create raised"
    assert _steps(compile_chart(Stepping).create, _holding_another_class()) == reference


# break 2: _variant looks at the garbage collector's view of the model instance and skips
# the model's own class there (every instance refers to it), so a convention callback the
# instance holds that is its own class is never seen: python-statemachine's machine fails
# to build (AttributeError, no __code__), the compiled instance silently runs no callback
def test_c9_a_model_instance_holding_its_own_class_as_a_convention_callback_is_seen() -> None:
    reference = _steps(Stepping, _holding_its_class())
    assert reference[0] == "create raised"
    _refused_or_same(Stepping, _holding_its_class)


class ActingModel:
    def act(self) -> None:
        LOG.append("class act")


def _shadowing_with_its_class() -> Any:
    model = ActingModel()
    model.act = ActingModel  # type: ignore[assignment,method-assign]
    return model


# break 2: the same for an instance attribute shadowing a method of its class (5c03250)
def test_c9_a_model_instance_shadowing_a_method_with_its_own_class_is_seen() -> None:
    reference = _steps(Acting, _shadowing_with_its_class(), ("go",))
    assert reference[0] == "create raised"
    _refused_or_same(Acting, _shadowing_with_its_class, events=("go",))


# -- 3. an async callback the model instance holds, the chart otherwise synchronous --------


async def _async_enter_b(*args: Any, **kwargs: Any) -> None:
    LOG.append("async enter b")


async def _async_act(*args: Any, **kwargs: Any) -> None:
    LOG.append("async act")


async def _async_yes() -> bool:
    return True


class Acting(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a, on="act")


class AsyncGuarded(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed") | b.to(a, cond="allowed")


class HoldsAsyncAct:
    def __init__(self) -> None:
        self.act = _async_act


class HandsOutAsyncAct:
    @property
    def act(self) -> Any:
        return _async_act


class HoldsAsyncGuard:
    def __init__(self) -> None:
        self.allowed = _async_yes


class ActsInItsClass:
    def act(self) -> None:
        LOG.append("class act")


def _shadowing_with_async_act() -> Any:
    model = ActsInItsClass()
    model.act = _async_act  # type: ignore[method-assign,assignment]
    return model


def _holding_async_convention() -> Any:
    model = Plain()
    model.on_enter_b = _async_enter_b  # type: ignore[attr-defined]
    return model


# break 3: python-statemachine builds its machine on the async engine when any callback it
# binds is a coroutine function, the model instance's too, and awaits it; the compiled chart
# decides asyncness on the classes only, so an async callback held by the model instance
# (a convention callback, a named one, one a property hands out) raises a TypeError inside
# the run that catch_errors_as_events swallows as error.execution: the callback silently
# never runs (an async guard counts false)
@pytest.mark.parametrize(
    ("chart", "model", "events", "where"),
    [
        (Stepping, _holding_async_convention, ("go", "back", "go"), "Plain.on_enter_b"),
        (Acting, HoldsAsyncAct, ("go", "go"), "HoldsAsyncAct.act"),
        (Acting, HandsOutAsyncAct, ("go", "go"), "HandsOutAsyncAct.act"),
        (AsyncGuarded, HoldsAsyncGuard, ("go", "go"), "HoldsAsyncGuard.allowed"),
        (Acting, _shadowing_with_async_act, ("go", "go"), "ActsInItsClass.act"),
    ],
    ids=["convention", "held", "property", "guard", "shadowing-a-method"],
)
def test_c21_an_async_callback_a_model_instance_holds_is_awaited_as_in_psm_or_refused_when_created(
    chart: type[StateChart[Any]], model: Any, events: tuple[str, ...], where: str
) -> None:
    """Sent outside any event loop, python-statemachine's async engine runs each ``send``
    to completion, awaiting the callback; the compiled chart, synchronous by its classes,
    refuses the instance when it is created, naming the model's attribute and the fix."""
    reference = _steps(chart, model(), events)
    assert reference[1] or chart is AsyncGuarded  # the callback ran
    with pytest.raises(UnsupportedChart) as refused:
        compile_chart(chart).create(model())
    assert refused.value.where == f"{where}, when the instance is created"
    assert "declare this one on the model's class" in str(refused.value)


# -- 4. a prepare_event raising a BaseException while a microstep runs ---------------------


class Interruption(BaseException):
    """A ``BaseException`` of the chart author's own."""


PREPARE = {"calls": 0, "fails_at": 0}


class PreparingToEnter(StateChart[Any]):
    """``prepare_event`` raises an ``Interruption`` on a chosen call: the fifth prepares the
    entry of ``b`` (after ``a`` was exited and ``act`` ran), the eighth that of ``c``."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="act")
    more = b.to(c)

    def prepare_event(self) -> dict[str, Any]:
        PREPARE["calls"] += 1
        LOG.append(("prepare", PREPARE["calls"]))
        if PREPARE["calls"] == PREPARE["fails_at"]:
            raise Interruption(PREPARE["calls"])
        return {}

    def on_exit_a(self) -> None:
        LOG.append("exit a")

    def act(self) -> None:
        LOG.append("act")

    def on_enter_b(self) -> None:
        LOG.append("enter b")


class PreparingToEnterStrict(PreparingToEnter):
    catch_errors_as_events = False


class PreparingToEnterAsync(PreparingToEnter):
    async def act(self) -> None:  # type: ignore[override]
        LOG.append("act")


def _interrupted_prepare(make: Any, fails_at: int) -> list[Any]:
    LOG.clear()
    PREPARE.update(calls=0, fails_at=fails_at)
    try:
        machine = make()
    except Interruption as raised:  # while the initial state is entered
        return [*LOG, ("create interrupted", raised.args)]
    for event in ("go", "more"):
        try:
            machine.send(event)
        except Interruption as raised:
            LOG.append(("interrupted", raised.args, ids(machine)))
    LOG.append(ids(machine))
    return list(LOG)


def _interrupted_prepare_async(make: Any, fails_at: int) -> list[Any]:
    LOG.clear()
    PREPARE.update(calls=0, fails_at=fails_at)

    async def main() -> None:
        machine = make()
        await machine.activate_initial_state()
        for event in ("go", "more"):
            try:
                await machine.send(event)
            except Interruption as raised:
                LOG.append(("interrupted", raised.args, ids(machine)))
        LOG.append(ids(machine))

    asyncio.run(main())
    return list(LOG)


@pytest.mark.parametrize("fails_at", [1, 2, 3, 4, 6, 7, 9])
@pytest.mark.parametrize("chart", [PreparingToEnter, PreparingToEnterStrict])
def test_c11_a_prepare_event_raising_a_base_exception_outside_an_entry_runs_as_in_psm(
    chart: type[StateChart[Any]], fails_at: int
) -> None:
    """Raised while selecting, or preparing an exit, ``on`` or ``after``: same as there."""
    reference = _interrupted_prepare(chart, fails_at)
    assert _interrupted_prepare(compile_chart(chart).create, fails_at) == reference


# break 4: a prepare_event raising a BaseException (no Exception) while the arguments of an
# entry are prepared leaves python-statemachine's machine in no state at all (the source was
# exited, the target not entered yet), so the next event finds no transition; the compiled
# instance reports the target active (its enter callbacks never ran) and takes the next
# event from there
@pytest.mark.parametrize("fails_at", [5, 8])
@pytest.mark.parametrize("chart", [PreparingToEnter, PreparingToEnterStrict])
def test_c11_a_prepare_event_raising_a_base_exception_preparing_an_entry_enters_nothing(
    chart: type[StateChart[Any]], fails_at: int
) -> None:
    reference = _interrupted_prepare(chart, fails_at)
    assert reference[-1] == []
    assert _interrupted_prepare(compile_chart(chart).create, fails_at) == reference


@pytest.mark.parametrize("fails_at", [5, 8])
def test_c21_a_prepare_event_raising_a_base_exception_preparing_an_entry_enters_nothing(
    fails_at: int,
) -> None:
    reference = _interrupted_prepare_async(PreparingToEnterAsync, fails_at)
    assert reference[-1] == []
    compiled = _interrupted_prepare_async(compile_chart(PreparingToEnterAsync).create, fails_at)
    assert compiled == reference


class PreparingToEnterNested(StateChart[Any]):
    """A compound target: the third ``prepare_event`` call prepares the exit of ``idle``,
    the fourth the entry of ``work``, the fifth that of its initial child ``first``."""

    idle = State(initial=True)

    class work(State.Compound):
        first = State(initial=True)
        second = State()
        step = first.to(second)

    back = idle.to(work)
    leave = work.to(idle)

    def prepare_event(self) -> dict[str, Any]:
        return PreparingToEnter.prepare_event(self)  # type: ignore[arg-type]

    def on_exit_idle(self) -> None:
        LOG.append("exit idle")

    def on_enter_work(self) -> None:
        LOG.append("enter work")

    def on_enter_first(self) -> None:
        LOG.append("enter first")


def _interrupted_nested(make: Any, fails_at: int) -> list[Any]:
    LOG.clear()
    PREPARE.update(calls=0, fails_at=fails_at)
    try:
        machine = make()
    except Interruption as raised:
        return [*LOG, ("create interrupted", raised.args)]
    for event in ("back", "step", "leave", "back"):
        try:
            machine.send(event)
        except Interruption as raised:
            LOG.append(("interrupted", raised.args, ids(machine)))
        LOG.append((event, ids(machine)))
    return list(LOG)


# break 4 (statechart): python-statemachine exits and enters state by state, so a
# BaseException preparing the arguments of a later exit or entry leaves the states exited so
# far gone and those entered so far active (``[]``, ``["work"]``); the compiled instance
# shows the microstep's whole target entered (``["first", "work"]``, ``["idle"]``) or its
# whole source still active (``["second", "work"]``), and runs the next events from there
@pytest.mark.parametrize("fails_at", range(1, 14))
def test_c11_a_prepare_event_raising_a_base_exception_in_a_statechart_runs_as_in_psm(
    fails_at: int,
) -> None:
    reference = _interrupted_nested(PreparingToEnterNested, fails_at)
    assert _interrupted_nested(compile_chart(PreparingToEnterNested).create, fails_at) == (
        reference
    )


# -- 5. a class-level value shadowed by a callable the model instance holds -----------------


class Defaults:
    """A model class with a non-callable default for a guard and a convention hook."""

    allowed: Any = None
    on_enter_b: Any = None

    def __init__(self, allowed: Any = None, on_enter_b: Any = None) -> None:
        if allowed is not None:
            self.allowed = allowed
        if on_enter_b is not None:
            self.on_enter_b = on_enter_b


class DefaultsFalse:
    allowed: Any = False

    def __init__(self, allowed: Any) -> None:
        self.allowed = allowed


@pytest.mark.parametrize("held", [True, 1, 0, ""], ids=repr)
def test_c9_a_value_the_instance_holds_over_a_class_default_is_read_as_in_psm(held: Any) -> None:
    for model in (Defaults, DefaultsFalse):
        reference = _steps(AsyncGuarded, model(held), ("go", "go", "go"))
        assert _steps(compile_chart(AsyncGuarded).create, model(held), ("go", "go", "go")) == (
            reference
        )


# break 5 (fixed by 5c03250 while this review ran): a model class giving a guard a
# non-callable default (allowed = None or False) and an instance holding a callable under
# that name: python-statemachine binds the instance's callable and calls it; the compiled
# instance read the callable as a value and took its truthiness (a guard answering False
# passed)
@pytest.mark.parametrize("model", [Defaults, DefaultsFalse])
def test_c9_a_callable_the_instance_holds_over_a_class_default_value_is_called(
    model: type,
) -> None:
    def make() -> Any:
        return model(lambda: False)

    reference = _steps(AsyncGuarded, make(), ("go", "go", "go"))
    assert reference == ([("go", ["a"]), ("go", ["a"]), ("go", ["a"])], [])
    _refused_or_same(AsyncGuarded, make, events=("go", "go", "go"))


# break 5 (fixed by 5c03250): the same for a naming-convention hook whose class default is
# None (a common optional-hook pattern): python-statemachine runs the instance's callable on
# entering b, the compiled instance ran nothing
def test_c9_a_convention_hook_the_instance_holds_over_a_class_default_none_runs() -> None:
    def make() -> Any:
        return Defaults(on_enter_b=_recording("hook b"))

    reference = _steps(Stepping, make())
    assert reference[1] == ["hook b", "hook b"]
    _refused_or_same(Stepping, make)


# -- held under attack ----------------------------------------------------------------------


class Recalled(StateChart[Any]):
    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b)
    back = b.to(a)
    finish = b.to(c)

    def on_exit_a(self) -> None:
        LOG.append("chart exit a")


def _holding_conventions() -> Any:
    model = Plain()
    model.on_enter_b = _recording("held enter b")  # type: ignore[attr-defined]
    model.after_back = _recording("held after back")  # type: ignore[attr-defined]
    return model


def test_c9_convention_callbacks_a_model_instance_holds_run_after_restore_and_resume() -> None:
    """A snapshot restored (through JSON), or an instance resumed (with a clock or none),
    with a model instance holding naming-convention callbacks runs them, as the machine
    python-statemachine builds with that model runs them."""
    LOG.clear()
    reference = Recalled(_holding_conventions())
    reference.send("go")
    reference.send("back")
    expected = list(LOG)
    assert expected == ["chart exit a", "held enter b", "held after back"]
    chart = compile_chart(Recalled)
    stored = json.dumps(chart.create().snapshot())
    makers: list[Any] = [
        lambda model: chart.restore(json.loads(stored), model),
        lambda model: chart.restore(json.loads(stored), model, clock=VirtualClock()),
        lambda model: chart.resume("a", model),
        lambda model: chart.resume("a", model, clock=VirtualClock()),
        lambda model: chart.create(model, clock=VirtualClock()),
    ]
    for make in makers:
        LOG.clear()
        instance = make(_holding_conventions())
        instance.send("go")
        instance.send("back")
        assert expected == LOG


class SlottedGuard:
    __slots__ = ("allowed", "state")
    allowed: Any


@pytest.mark.parametrize(
    ("initial", "changes"),
    [
        (lambda: True, [None, lambda: False, 0, "del", None]),
        (1, [None, lambda: False, 0, "del"]),
        (None, [lambda: True, None]),
    ],
    ids=["callable", "value", "unset"],
)
def test_c9_a_name_a_slotted_model_holds_is_bound_when_the_instance_is_created(
    initial: Any, changes: list[Any]
) -> None:
    """A slot is a descriptor of the model's class: its callable, read when the machine is
    built, stays the guard; a value is read on each call; a slot unset then is no guard."""

    def flips(make: Any) -> Any:
        model = SlottedGuard()
        if initial is not None:
            model.allowed = initial
        try:
            machine = make(model)
        except Exception as error:
            return ("create raised", repr(error))
        seen: list[Any] = []
        for change in changes:
            if change == "del":
                del model.allowed
            elif change is not None:
                model.allowed = change
            try:
                machine.send("go")
                seen.append(ids(machine))
            except Exception as error:
                seen.append(repr(error))
        return seen

    assert flips(compile_chart(AsyncGuarded).create) == flips(AsyncGuarded)


class Ticking(StateChart[Any]):
    """``start`` schedules ``tick`` (5 ms) and ``tock`` (10 ms); ``tick``'s ``after`` raises
    an ``Interruption``."""

    idle = State(initial=True)
    a = State()
    b = State()
    c = State(final=True)
    start = idle.to(a, on="arm")
    tick = a.to(b, after="ticked")
    tock = b.to(c, on="tocked") | a.to(c, on="tocked")

    def arm(self) -> None:
        LOG.append("arm")
        self.send("tick", delay=5)
        self.send("tock", delay=10)

    def ticked(self) -> None:
        LOG.append("ticked")
        raise Interruption("tick")

    def tocked(self) -> None:
        LOG.append("tocked")


@pytest.mark.parametrize("how", ["instance", "clock", "advance"])
def test_c11_a_delayed_event_interrupted_on_a_virtual_clock_leaves_the_later_timer(
    how: str,
) -> None:
    """python-statemachine's synchronous engine, interrupted by a ``BaseException`` in the
    delayed ``tick``, keeps ``tock`` and runs it when due; on a ``VirtualClock`` the next
    advance runs it."""
    LOG.clear()
    reference = Ticking()
    with pytest.raises(Interruption):
        reference.send("start")
    LOG.append(ids(reference))
    expected = [*LOG, "tocked", ["c"]]
    LOG.clear()
    clock = VirtualClock()
    instance = compile_chart(Ticking).create(clock=clock)
    instance.send("start")

    def advance() -> None:
        if how == "instance":
            instance.run_until_idle()
        elif how == "clock":
            clock.run_until_idle()
        else:
            clock.advance(0.02)

    with pytest.raises(Interruption):
        advance()
    LOG.append(ids(instance))
    advance()
    assert [*LOG, ids(instance)] == expected


# -- 6. a snapshot of a chart a BaseException left in no state -------------------------------


class Stranded(StateChart[Any]):
    """``go``'s action queues ``poke`` and raises ``KeyboardInterrupt``: python-statemachine
    leaves the machine in no state (``a`` was exited, ``b`` not entered) with ``poke``
    queued."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="act")
    more = b.to(c)
    poke = a.to.itself(on="poked") | b.to.itself(on="poked")  # type: ignore[no-untyped-call]

    def act(self) -> None:
        LOG.append("act")
        self.send("poke")
        raise KeyboardInterrupt

    def poked(self) -> None:
        LOG.append("poked")


def _stranded(machine: Any) -> Any:
    with pytest.raises(KeyboardInterrupt):
        machine.send("go")
    return machine


def test_c11_an_instance_a_base_exception_left_in_no_state_runs_on_as_in_psm() -> None:
    def run(machine: Any) -> list[Any]:
        LOG.clear()
        _stranded(machine)
        LOG.append(ids(machine))
        for event in ("more", "go", "poke"):
            machine.send(event)
            LOG.append((event, ids(machine)))
        return [*LOG, machine.is_terminated]

    reference = run(Stranded())
    assert reference[:2] == ["act", []]
    assert run(compile_chart(Stranded).create()) == reference


# break 6: Instance.snapshot() takes a flat instance a BaseException left in no state
# (configuration [], ``poke`` queued), and Chart.restore refuses that very snapshot
# (InstanceSnapshotError: "no state of the chart is active"); C19 says the restored instance
# continues exactly as the original would (else the snapshot should be refused when taken)
def test_c19_a_snapshot_of_an_instance_left_in_no_state_restores_or_is_refused_when_taken() -> (
    None
):
    chart = compile_chart(Stranded)
    original = _stranded(chart.create())
    try:
        stored = json.dumps(original.snapshot())
    except InstanceSnapshotError:
        return  # refused when taken: fine
    restored = chart.restore(json.loads(stored))
    LOG.clear()
    for machine in (original, restored):
        machine.send("more")
        machine.send("go")
        LOG.append(ids(machine))
    assert LOG[: len(LOG) // 2] == LOG[len(LOG) // 2 :]


#: What ``Hopping.hopping`` raises.
HOP_WITH: list[BaseException] = []


class Hopping(StateChart[Any]):
    """``go``'s action raises ``hop`` and ``other`` and sends ``ext``; ``hop``'s ``before``
    raises ``HOP_WITH[0]`` with ``other`` and ``ext`` still queued."""

    a = State(initial=True)
    b = State()
    c = State()
    d = State(final=True)
    go = a.to(b, on="first")
    hop = b.to(c, before="hopping")
    finish = c.to(d)
    other = b.to.itself(internal=True, on="log") | c.to.itself(internal=True, on="log")  # type: ignore[no-untyped-call]
    ext = a.to.itself(on="log") | b.to.itself(on="log") | c.to.itself(on="log")  # type: ignore[no-untyped-call]
    poke = a.to.itself(on="log") | b.to.itself(on="log") | c.to.itself(on="log")  # type: ignore[no-untyped-call]

    def first(self) -> None:
        self.raise_("hop")
        self.raise_("other")
        self.send("ext")

    def hopping(self) -> None:
        raise HOP_WITH[0]

    def log(self, event: Any) -> None:
        LOG.append(str(event))


@pytest.mark.parametrize("error", [KeyboardInterrupt, Interruption], ids=lambda e: e.__name__)
@pytest.mark.parametrize("clock", [False, True], ids=["no-clock", "virtual-clock"])
def test_c19_a_snapshot_after_a_base_exception_keeps_the_events_left_queued(
    error: type[BaseException], clock: bool
) -> None:
    """Interrupted by a ``BaseException`` with ``other`` (internal) and ``ext`` (external)
    queued, the snapshot keeps both: the restored instance runs them at the next ``send``, as
    python-statemachine's interrupted machine runs them."""

    HOP_WITH[:] = [error()]
    LOG.clear()
    reference = Hopping()
    with pytest.raises(error):
        reference.send("go")
    reference.send("poke")
    expected = [*LOG, ids(reference)]
    chart = compile_chart(Hopping)
    original = chart.create()
    with pytest.raises(error):
        original.send("go")
    stored = json.dumps(original.snapshot())
    LOG.clear()
    restored = chart.restore(json.loads(stored), clock=VirtualClock() if clock else None)
    restored.send("poke")
    assert [*LOG, ids(restored)] == expected
    assert expected[:3] == ["other", "ext", "poke"]


# -- 7. an AsyncioClock shared by instances, one timer interrupted -----------------------------


class Armed(StateChart[Any]):
    """``start`` schedules ``tick`` after ``delay`` ms; its ``after`` raises what ``boom``
    names (nothing for ``"fine"``)."""

    idle = State(initial=True)
    armed = State()
    fired = State(final=True)
    start = idle.to(armed, on="arm")
    tick = armed.to(fired, after="ticked")

    def arm(self, delay: float, boom: str) -> None:
        self.send("tick", boom, delay=delay)

    def ticked(self, boom: str) -> None:
        LOG.append(("ticked", boom))
        if boom == "interrupt":
            raise Interruption(boom)
        if boom == "error":
            raise ValueError(boom)


class ArmedStrict(Armed):
    catch_errors_as_events = False


def _shared_asyncio_clock(chart: type[StateChart[Any]], boom: str) -> list[Any]:
    """Two instances on one ``AsyncioClock``: the first's timer (5 ms) raises, the second's
    (15 ms) is fine. What the loop's exception handler got, and where both end."""
    LOG.clear()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(
            lambda _loop, context: LOG.append(("handler", type(context["exception"]).__name__))
        )
        clock = AsyncioClock()
        first = compile_chart(chart).create(clock=clock)
        second = compile_chart(chart).create(clock=clock)
        first.send("start", 5, boom)
        second.send("start", 15, "fine")
        try:  # a guard against waiting for ever, not a time asserted
            await asyncio.wait_for(clock.until_idle(first, second), 0.5)
        except TimeoutError:
            LOG.append("the second instance's timer never ran")
        LOG.append((ids(first), ids(second)))

    asyncio.run(main())
    return list(LOG)


@pytest.mark.parametrize("chart", [Armed, ArmedStrict])
def test_c17_an_asyncio_clock_runs_the_other_wake_ups_after_a_timer_raised_an_exception(
    chart: type[StateChart[Any]],
) -> None:
    log = _shared_asyncio_clock(chart, "error")
    assert log[-1] == (["fired"], ["fired"])
    assert ("ticked", "fine") in log


# break 7: AsyncioClock._fire catches an Exception only: a delayed event raising a
# BaseException that is no Exception (the author's own; the loop reports it to its
# exception handler) leaves the wake-ups queued after it without a loop.call_at, so another
# instance's timer on the same clock never runs (until_idle spins for ever); the docstring
# says the other wake-ups due still run, and C11 that a BaseException leaves queued events
# in place (on a VirtualClock the second timer runs)
@pytest.mark.parametrize("chart", [Armed, ArmedStrict])
def test_c17_an_asyncio_clock_runs_the_other_wake_ups_after_a_timer_was_interrupted(
    chart: type[StateChart[Any]],
) -> None:
    log = _shared_asyncio_clock(chart, "interrupt")
    assert ("handler", "Interruption") in log
    assert log[-1] == (["fired"], ["fired"])


@pytest.mark.parametrize("boom", ["error", "interrupt"])
def test_c17_a_virtual_clock_runs_the_other_instances_timer_after_one_raised(boom: str) -> None:
    LOG.clear()
    clock = VirtualClock()
    first = compile_chart(ArmedStrict).create(clock=clock)
    second = compile_chart(ArmedStrict).create(clock=clock)
    first.send("start", 5, boom)
    second.send("start", 15, "fine")
    with pytest.raises((ValueError, Interruption)):
        clock.run_until_idle()
    clock.run_until_idle()
    assert [("ticked", boom), ("ticked", "fine")] == LOG
    assert (ids(first), ids(second)) == (["fired"], ["fired"])


# -- 8. create(model=...) ---------------------------------------------------------------------


class Greeting(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)


class GreetingModel:
    def on_enter_b(self) -> None:
        LOG.append("model enter b")


# break 8: python-statemachine's constructor takes the model by keyword (``Chart(model=m)``);
# Chart.create takes it positionally only and passes ``model=m`` on as a keyword argument
# of the initial entry, so the instance silently runs on a fresh Model(): ``instance.model
# is not m`` and the model's callbacks never run (create refuses python-statemachine's
# other constructor options, state_field, start_value and listeners, with a TypeError)
def test_c9_create_with_the_model_as_a_keyword_binds_it_or_refuses_it() -> None:
    model = GreetingModel()
    LOG.clear()
    reference = Greeting(model=model)
    reference.send("go")
    assert reference.model is model
    assert LOG == ["model enter b"]
    LOG.clear()
    other = GreetingModel()
    try:
        instance = compile_chart(Greeting).create(model=other)
    except TypeError:
        return  # refused, as the other constructor options are
    instance.send("go")
    assert (instance.model is other, LOG) == (True, ["model enter b"])


class Entering(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_enter_a(self, **kwargs: Any) -> None:
        LOG.append(sorted(name for name in kwargs if name not in {"machine", "model"}))


def _entered(make: Any, kwargs: dict[str, Any]) -> Any:
    LOG.clear()
    try:
        make(None, **kwargs)
    except TypeError as error:
        return ("raised", type(error).__name__)
    return list(LOG)


@pytest.mark.parametrize("kwargs", [{"x": 1}, {"event": "e"}, {"source": 2}, {"delay": 5}])
def test_c8_create_hands_its_keyword_arguments_to_the_initial_entry_as_psm(
    kwargs: dict[str, Any],
) -> None:
    reference = _entered(Entering, kwargs)
    assert _entered(compile_chart(Entering).create, kwargs) == reference


# break 9: python-statemachine's constructor builds its initial event from the keyword
# arguments as send builds one: ``send_id`` is an option (no callback gets it), and
# ``machine`` collides with the machine it passes (TypeError); compiled create hands
# ``send_id`` to the initial enter callbacks as payload and runs with ``machine=`` silently
@pytest.mark.parametrize("kwargs", [{"send_id": "s"}, {"machine": 1}], ids=repr)
def test_c8_create_takes_the_initial_events_options_as_psm_constructor_takes_them(
    kwargs: dict[str, Any],
) -> None:
    reference = _entered(Entering, kwargs)
    assert _entered(compile_chart(Entering).create, kwargs) == reference


# -- 10. a clock refusing a wake-up ------------------------------------------------------------


class Scheduling(StateChart[Any]):
    idle = State(initial=True)
    armed = State()
    fired = State(final=True)
    start = idle.to(armed, on="arm")
    tick = armed.to(fired, on="ticked")
    poke = idle.to.itself(on="poked") | armed.to.itself(on="poked")  # type: ignore[no-untyped-call]

    def arm(self) -> None:
        self.send("tick", delay=5)

    def ticked(self) -> None:
        LOG.append("ticked")

    def poked(self) -> None:
        LOG.append("poked")


# break 10: Instance._settle records the wake-up as asked for (queues.woken) before the
# clock's wake() accepted it; an AsyncioClock used outside any event loop refuses it
# (RuntimeError, as documented), but the instance then never asks again: inside a loop
# later, its due ``tick`` never runs, and AsyncioClock.until_idle(instance) waits for ever
def test_c17_a_delayed_event_whose_wake_up_the_clock_refused_runs_once_a_loop_runs() -> None:
    LOG.clear()
    clock = AsyncioClock()
    instance = compile_chart(Scheduling).create(clock=clock)
    with pytest.raises(RuntimeError, match="running event loop"):
        instance.send("start")
    assert ids(instance) == ["armed"]

    async def main() -> None:
        instance.send("poke")  # settles again, inside the loop
        try:  # a guard against waiting for ever, not a time asserted
            await asyncio.wait_for(clock.until_idle(instance), 0.5)
        except TimeoutError:
            LOG.append("tick never ran")

    asyncio.run(main())
    assert (LOG, ids(instance)) == (["poked", "ticked"], ["fired"])


# -- 11. a synchronous callback returning a coroutine -----------------------------------------


def _coroutine(tag: str) -> Any:
    async def body() -> str:
        LOG.append(tag)
        return tag

    return body()


class ReturnsFromOn(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a, on="act")

    def act(self) -> Any:
        return _coroutine("on's coroutine ran")


class ReturnsFromBefore(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, before="act") | b.to(a, before="act")

    def act(self) -> Any:
        return _coroutine("before's coroutine ran")


class ReturnsFromConvention(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_go(self) -> Any:
        return _coroutine("on_go's coroutine ran")


# break 11: python-statemachine's synchronous send returns what the event's ``before`` or
# ``on`` callback returned, and runs it to completion when it is awaitable
# (run_async_from_sync): a plain callback returning a coroutine has that coroutine run; the
# compiled send returns an Outcome (C5) and drops the coroutine unawaited, so the code in it
# silently never runs (an ``after``'s or two ``on`` callbacks' coroutines run on neither)
@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
@pytest.mark.parametrize("chart", [ReturnsFromOn, ReturnsFromBefore, ReturnsFromConvention])
def test_c21_a_coroutine_a_plain_callback_returns_runs_as_psm_send_runs_it(
    chart: type[StateChart[Any]],
) -> None:
    reference = _steps(chart, None, ("go",))
    assert len(reference[1]) == 1  # the coroutine ran, once
    _refused_or_same(chart, lambda: None, events=("go",))


# -- 12. a negative delay behind events a BaseException left queued -----------------------


def _hopped_then_poked(make: Any, options: dict[str, Any]) -> list[Any]:
    """``Hopping`` interrupted with ``other`` (internal) and ``ext`` (external) left queued,
    then ``poke`` sent with ``options``."""
    HOP_WITH[:] = [KeyboardInterrupt()]
    LOG.clear()
    machine = make()
    with pytest.raises(KeyboardInterrupt):
        machine.send("go")
    machine.send("poke", **options)
    if isinstance(machine, Instance):
        machine.run_until_idle()
    return [*LOG, ids(machine)]


@pytest.mark.parametrize("options", [{}, {"delay": 0}, {"delay": 5}], ids=repr)
@pytest.mark.parametrize("clock", [False, True], ids=["no-clock", "virtual-clock"])
def test_c17_an_event_sent_after_a_base_exception_runs_after_those_it_left_queued(
    options: dict[str, Any], clock: bool
) -> None:
    reference = _hopped_then_poked(Hopping, options)
    chart = compile_chart(Hopping)

    def make() -> Any:
        return chart.create(clock=VirtualClock()) if clock else chart.create()

    assert _hopped_then_poked(make, options) == reference
    assert reference[:3] == ["other", "ext", "poke"]


def test_c17_an_event_due_in_the_past_runs_before_those_a_base_exception_left_on_a_clock() -> None:
    reference = _hopped_then_poked(Hopping, {"delay": -1000})
    compiled = _hopped_then_poked(
        lambda: compile_chart(Hopping).create(clock=VirtualClock()), {"delay": -1000}
    )
    assert compiled == reference
    assert reference[:3] == ["other", "poke", "ext"]


# break 12: python-statemachine orders its external queue by due time: ``poke`` sent with a
# negative delay (due before ``ext`` was sent) runs before the ``ext`` a BaseException left
# queued (docs/statecharts.md: a negative delay runs at once, ahead of events due later);
# the compiled instance without a clock runs ``ext`` first (on a VirtualClock it agrees)
@pytest.mark.parametrize("send_id", [None, "n"])
def test_c17_an_event_due_in_the_past_runs_before_those_a_base_exception_left_queued(
    send_id: str | None,
) -> None:
    options: dict[str, Any] = {"delay": -1000}
    if send_id is not None:
        options["send_id"] = send_id
    reference = _hopped_then_poked(Hopping, options)
    assert _hopped_then_poked(compile_chart(Hopping).create, options) == reference


def test_c19_an_event_due_in_the_past_runs_before_the_queued_events_a_snapshot_restored() -> None:
    """The snapshot keeps ``other`` and ``ext``; restored without a clock, ``poke`` due in
    the past runs before ``ext``, as in the interrupted python-statemachine machine (and
    in an instance restored on a VirtualClock)."""
    reference = _hopped_then_poked(Hopping, {"delay": -1000})
    chart = compile_chart(Hopping)
    HOP_WITH[:] = [KeyboardInterrupt()]
    original = chart.create()
    with pytest.raises(KeyboardInterrupt):
        original.send("go")
    stored = json.dumps(original.snapshot())
    seen = []
    for clock in (VirtualClock(), None):
        LOG.clear()
        restored = chart.restore(json.loads(stored), clock=clock)
        restored.send("poke", delay=-1000)
        restored.run_until_idle()
        seen.append([*LOG, ids(restored)])
    assert seen == [reference, reference]


# -- 13. a non-callable instance attribute shadowing a method of the model's class -----------


class GuardsInItsClass:
    """A model whose class guards with a method; instances may shadow it."""

    def __init__(self, allowed: Any = None, notify: Any = None) -> None:
        if allowed is not None:
            self.allowed = allowed  # type: ignore[method-assign]
        if notify is not None:
            self.notify = notify  # an unrelated callable

    def allowed(self) -> bool:
        return True


def test_c9_a_callable_instance_attribute_shadowing_a_method_runs_instead_of_it() -> None:
    """Fixed meanwhile (5c03250): python-statemachine binds ``getattr(model, name)``."""

    def make() -> Any:
        return GuardsInItsClass(lambda: False)

    reference = _steps(AsyncGuarded, make(), ("go", "go"))
    assert reference[0] == [("go", ["a"]), ("go", ["a"])]
    assert _steps(compile_chart(AsyncGuarded).create, make(), ("go", "go")) == reference


def test_c9_a_value_shadowing_a_method_is_read_when_the_instance_holds_another_callable() -> None:
    def make() -> Any:
        return GuardsInItsClass(False, notify=_recording("notify"))

    reference = _steps(AsyncGuarded, make(), ("go", "go"))
    assert reference[0] == [("go", ["a"]), ("go", ["a"])]
    assert _steps(compile_chart(AsyncGuarded).create, make(), ("go", "go")) == reference


# break 13 (fixed): a non-callable instance attribute shadowing a method of the model's class
# (``model.allowed = False`` over ``def allowed``): python-statemachine binds
# ``getattr(model, name)`` and reads False; the compiled instance ran the class's method (True)
# unless the instance happened to hold some other callable or a dict
@pytest.mark.parametrize("value", [False, 0, None, ""], ids=repr)
def test_c9_a_value_shadowing_a_method_of_the_models_class_is_read_as_in_psm(value: Any) -> None:
    def make() -> Any:
        model = GuardsInItsClass()
        model.allowed = value  # type: ignore[method-assign]
        return model

    reference = _steps(AsyncGuarded, make(), ("go", "go"))
    assert reference[0] == [("go", ["a"]), ("go", ["a"])]
    _refused_or_same(AsyncGuarded, make, events=("go", "go"))


class ArmedInterruptible(Armed):
    def ticked(self, boom: str) -> None:
        LOG.append(("ticked", boom))
        if boom == "interrupt":
            raise KeyboardInterrupt


# break 7 (KeyboardInterrupt): a delayed event raising KeyboardInterrupt stops the loop, as
# asyncio stops it; "one clock serves successive asyncio.run calls" (AsyncioClock), but in
# the next run the other instance's timer, queued on the clock behind the interrupted one,
# never runs (no loop.call_at is asked for it again)
def test_c17_an_asyncio_clock_runs_the_other_timers_in_the_next_run_after_an_interrupt() -> None:
    LOG.clear()
    clock = AsyncioClock()
    chart = compile_chart(ArmedInterruptible)
    first, second = chart.create(clock=clock), chart.create(clock=clock)

    async def start() -> None:
        first.send("start", 5, "interrupt")
        second.send("start", 15, "fine")
        await clock.until_idle(first, second)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(start())

    async def again() -> None:
        try:  # a guard against waiting for ever, not a time asserted
            await asyncio.wait_for(clock.until_idle(first, second), 0.5)
        except TimeoutError:
            LOG.append("the second instance's timer never ran")

    asyncio.run(again())
    assert (LOG, ids(first), ids(second)) == (
        [("ticked", "interrupt"), ("ticked", "fine")],
        ["fired"],
        ["fired"],
    )


# -- 14. a model class with its own __getattribute__ ------------------------------------------


class Instrumented:
    """A model whose ``__getattribute__`` wraps its callbacks (a tracing proxy)."""

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if name in ("allowed", "act") and callable(value):

            def traced() -> Any:
                LOG.append(("traced", name))
                return value()

            return traced
        return value

    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("act")


class Overriding:
    """A model whose ``__getattribute__`` answers ``allowed`` with another guard."""

    def __getattribute__(self, name: str) -> Any:
        if name == "allowed":
            return lambda: False
        return object.__getattribute__(self, name)

    def allowed(self) -> bool:
        return True

    def act(self) -> None:
        LOG.append("act")


class GuardedActing(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on="act") | b.to(a, cond="allowed", on="act")


# break 14: python-statemachine binds getattr(model, name), which a model class's own
# __getattribute__ answers (a tracing proxy's wrapper, another guard); the compiled instance
# resolves the names on the class and calls its methods directly, bypassing it: the traces
# never happen, and a guard __getattribute__ answers False passes (True, the method's)
@pytest.mark.parametrize("model", [Instrumented, Overriding])
def test_c9_a_model_with_its_own_getattribute_is_bound_through_it_or_refused(model: type) -> None:
    reference = _steps(GuardedActing, model(), ("go", "go"))
    if model is Instrumented:
        assert reference[1][:3] == [("traced", "allowed"), ("traced", "act"), "act"]
    else:
        assert reference == ([("go", ["a"]), ("go", ["a"])], [])
    _refused_or_same(GuardedActing, model, events=("go", "go"))


# -- 15. the machine scan's verdict kept by the code a held closure runs -----------------------


def _calling(checker: Any) -> Any:
    """A closure handing the machine to ``checker``: one code object, many cells."""
    return lambda machine: checker(machine)


def _benign(machine: Any) -> bool:
    return True


def _asks_the_class(machine: Any) -> bool:
    return isinstance(machine, StateChart)


class HoldsAGuard:
    def __init__(self, allowed: Any) -> None:
        self.allowed = allowed


def _yes_or_no() -> type[StateChart[Any]]:
    class YesOrNo(StateChart[Any]):
        a = State(initial=True)
        yes = State(final=True)
        no = State(final=True)
        go = a.to(yes, cond="allowed") | a.to(no)

    return YesOrNo


def _answer(make: Any, guard: Any) -> Any:
    try:
        machine = make(HoldsAGuard(guard))
        machine.send("go")
    except UnsupportedChart:
        return "refused"
    return ids(machine)


def test_c6_a_held_closure_handing_the_machine_to_code_asking_its_class_is_refused() -> None:
    chart = _yes_or_no()
    assert _answer(chart, _calling(_asks_the_class)) == ["yes"]
    assert _answer(compile_chart(chart).create, _calling(_asks_the_class)) == "refused"


# break 15: the scan's verdict on a callable a model instance holds is kept by the code it
# runs (_codegen.verdict, 5b43d43), but a closure's verdict depends on its cells too: once
# ``lambda machine: checker(machine)`` was read with a benign checker, the same lambda made
# around one asking isinstance(machine, StateChart) is not refused and answers "no" where
# python-statemachine answers "yes" (read first, it is refused)
@pytest.mark.parametrize("wrapped", [False, True], ids=["closure", "partial-of-closure"])
def test_c6_a_held_closure_is_vetted_by_what_its_cells_hold(wrapped: bool) -> None:
    def held(checker: Any) -> Any:
        closure = _calling(checker)
        return functools.partial(closure) if wrapped else closure

    chart = _yes_or_no()
    compiled = compile_chart(chart)
    assert _answer(compiled.create, held(_benign)) == ["yes"]
    assert _answer(chart, held(_asks_the_class)) == ["yes"]
    assert _answer(compiled.create, held(_asks_the_class)) in ("refused", ["yes"])


# -- 16. an instance __dict__ that is a dict subclass ----------------------------------------


class TrackingDict(dict):  # type: ignore[type-arg]
    """A ``__dict__`` some libraries give their objects (tracking changes)."""


def _holding_in_a_dict_subclass(callback_name: str, value: Any, model: type) -> Any:
    def make() -> Any:
        instance = model()
        instance.__dict__ = TrackingDict({callback_name: value})
        return instance

    return make


# break 16: _variant looks at the garbage collector's view of the instance for a callable or
# a ``dict`` (``type(value) is dict``, the ``__dict__``): a ``__dict__`` that is a dict
# subclass (an OrderedDict, a change-tracking dict) hides the callables in it, so a
# convention callback or a shadowing callable it holds silently never runs, where
# python-statemachine's dir(model) lists it and runs it
@pytest.mark.parametrize("which", ["convention", "shadow"])
def test_c9_callbacks_held_in_a_dict_subclass_dict_run_as_in_psm(which: str) -> None:
    if which == "convention":
        chart: type[StateChart[Any]] = Stepping
        make = _holding_in_a_dict_subclass("on_enter_b", _recording("held enter b"), Plain)
        events: tuple[str, ...] = ("go", "back", "go")
    else:
        chart = AsyncGuarded
        make = _holding_in_a_dict_subclass("allowed", lambda: False, GuardsInItsClass)
        events = ("go", "go")
    reference = _steps(chart, make(), events)
    assert reference[1] == ["held enter b", "held enter b"] or reference[0][0] == ("go", ["a"])
    _refused_or_same(chart, make, events=events)
