"""Divergences from python-statemachine left open by earlier rounds, each reproduced on both
engines and compared: a ``prepare_event`` that raises, a ``BaseException`` with events queued,
an async ``send`` with options never awaited, a model property handing out a callable given
the machine, and naming-convention callbacks a model instance holds.

Rules checked here (docs/spec.md): C6, C7, C9, C11, C21.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statemachine import State, StateChart
from statemachine.exceptions import InvalidDefinition

from statecharts import UnsupportedChart, compile_chart

from . import foreign_callables


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


# -- 1. a prepare_event that raises ----------------------------------------------------------

#: What the charts' callbacks did, in order (module-level: a chart method handing ``self``
#: to code the compiler cannot read is refused, so the counter is no field of the chart).
PREPARE_LOG: list[Any] = []
#: The number of ``prepare_event`` calls so far, and the one that raises.
PREPARE_COUNT = {"calls": 0, "fails_at": 0}


def _prepare(event: Any) -> dict[str, Any]:
    PREPARE_COUNT["calls"] += 1
    PREPARE_LOG.append(("prepare", str(event)))
    if PREPARE_COUNT["calls"] == PREPARE_COUNT["fails_at"]:
        raise ValueError(f"prepare {event} #{PREPARE_COUNT['calls']}")
    return {}


class _Prepares:
    """``prepare_event`` (``_prepare``) and the ``error.execution`` handler, logged."""

    def prepare_event(self, event: Any) -> dict[str, Any]:
        return _prepare(event)

    def handle(self, error: Exception) -> None:
        PREPARE_LOG.append(("handle", repr(error)))


class Preparing(_Prepares, StateChart[Any]):
    """A chart whose ``prepare_event`` raises on a chosen call: while an event's transition
    is selected, or once its microstep runs (exit, ``on``, enter, ``after``), with an event
    raised internally and an ``error.execution`` handler."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="inner", after="later")
    more = b.to(c, cond="allowed")
    error_execution = a.to(a, on="handle") | b.to(b, on="handle")

    def on_exit_a(self) -> None:
        PREPARE_LOG.append("exit a")

    def on_enter_b(self) -> None:
        PREPARE_LOG.append("enter b")

    def allowed(self) -> bool:
        PREPARE_LOG.append("allowed")
        return True

    def later(self) -> None:
        PREPARE_LOG.append("later")

    def inner(self) -> None:
        PREPARE_LOG.append("inner")
        self.raise_("more")


class PreparingStrict(Preparing):
    """The same chart without errors caught as events."""

    catch_errors_as_events = False


class PreparingNested(_Prepares, StateChart[Any]):
    """A compound target whose initial child is entered by default, and eventless transitions
    (one leaving the initial state, so a microstep follows the initial entry at once)."""

    boot = State(initial=True)
    idle = State()

    class work(State.Compound):
        first = State(initial=True)
        second = State()
        third = State()
        step = first.to(second)
        second.to(third, on="stepped")

    boot.to(idle)
    back = idle.to(work)
    leave = work.to(idle)
    error_execution = idle.to(idle, on="handle") | work.to(work, on="handle")

    def on_enter_first(self) -> None:
        PREPARE_LOG.append("enter first")

    def on_exit_work(self) -> None:
        PREPARE_LOG.append("exit work")

    def stepped(self) -> None:
        PREPARE_LOG.append("stepped")


class PreparingNestedStrict(PreparingNested):
    catch_errors_as_events = False


def _prepare_run(make: Any, fails_at: int, events: list[str]) -> Any:
    """What a run shows: whether creating raised, then per event whether ``send`` raised and
    the configuration after it; the callbacks' log last."""
    PREPARE_LOG.clear()
    PREPARE_COUNT.update(calls=0, fails_at=fails_at)
    try:
        machine = make()
    except Exception as error:
        return ("create raised", repr(error), list(PREPARE_LOG))
    steps = [ids(machine)]
    for event in events:
        try:
            machine.send(event)
            steps.append(("sent", event, ids(machine)))
        except Exception as error:
            steps.append(("raised", repr(error), ids(machine)))
    return steps, list(PREPARE_LOG)


PREPARING = [Preparing, PreparingStrict]


@pytest.mark.parametrize("chart", PREPARING, ids=lambda chart: chart.__name__)
@pytest.mark.parametrize("fails_at", range(1, 16))
def test_c7_a_raising_prepare_event_fails_where_python_statemachine_fails_it(
    chart: type[StateChart[Any]], fails_at: int
) -> None:
    """Raising while the initial state is entered reaches the caller of ``create`` (as it
    reaches the chart's constructor); while a transition is selected it reaches the sender;
    once the microstep runs, with errors caught as events, it cancels the microstep and
    becomes ``error.execution``, as python-statemachine's microstep handles it."""
    events = ["go", "more", "go"]
    compiled = compile_chart(chart)
    reference = _prepare_run(chart, fails_at, events)
    assert _prepare_run(compiled.create, fails_at, events) == reference


def test_c7_a_prepare_event_raising_in_an_exit_becomes_error_execution() -> None:
    """The fourth call prepares the exit of ``a``: the microstep is cancelled (``a`` stays
    active) and the handler runs, as in python-statemachine."""
    reference = _prepare_run(Preparing, 4, ["go"])
    assert _prepare_run(compile_chart(Preparing).create, 4, ["go"]) == reference
    steps, log = reference
    assert steps == [["a"], ("sent", "go", ["a"])]
    assert ("handle", "ValueError('prepare go #4')") in log


def test_c7_a_prepare_event_raising_in_the_initial_entry_reaches_the_caller_of_create() -> None:
    PREPARE_COUNT.update(calls=0, fails_at=1)
    with pytest.raises(ValueError, match="prepare __initial__ #1"):
        Preparing()
    PREPARE_COUNT.update(calls=0, fails_at=1)
    with pytest.raises(ValueError, match="prepare __initial__ #1"):
        compile_chart(Preparing).create()


@settings(max_examples=60, deadline=None)
@given(
    fails_at=st.integers(1, 40),
    events=st.lists(st.sampled_from(["back", "step", "leave", "nope"]), max_size=6),
    strict=st.booleans(),
)
def test_c7_a_prepare_event_raising_at_any_call_of_a_nested_chart_runs_as_in_psm(
    fails_at: int, events: list[str], strict: bool
) -> None:
    chart = PreparingNestedStrict if strict else PreparingNested
    compiled = compile_chart(chart)
    reference = _prepare_run(chart, fails_at, events)
    assert _prepare_run(compiled.create, fails_at, events) == reference


class PreparingAsync(Preparing):
    """The chart on python-statemachine's async engine (an ``async def`` callback)."""

    async def inner(self) -> None:  # type: ignore[override]
        PREPARE_LOG.append("inner")
        await self.raise_("more")


@pytest.mark.parametrize("fails_at", range(1, 16))
def test_c21_a_raising_prepare_event_of_an_async_chart_fails_as_in_python_statemachine(
    fails_at: int,
) -> None:
    async def run(machine: Any) -> Any:
        try:
            await machine.activate_initial_state()
        except Exception as error:
            return ("activation raised", repr(error), list(PREPARE_LOG))
        steps: list[Any] = [ids(machine)]
        for event in ["go", "more", "go"]:
            try:
                await machine.send(event)
                steps.append(("sent", event, ids(machine)))
            except Exception as error:
                steps.append(("raised", repr(error), ids(machine)))
        return steps, list(PREPARE_LOG)

    def outcome(make: Any) -> Any:
        PREPARE_LOG.clear()
        PREPARE_COUNT.update(calls=0, fails_at=fails_at)
        try:
            machine = make()  # outside the event loop, as python-statemachine's is made
        except Exception as error:
            return ("create raised", repr(error), list(PREPARE_LOG))
        return asyncio.run(run(machine))

    reference = outcome(PreparingAsync)
    assert outcome(compile_chart(PreparingAsync).create) == reference


# -- 2. a BaseException while events are queued ----------------------------------------------


class Interruption(BaseException):
    """A ``BaseException`` of the chart author's own."""


#: The callbacks' calls so far, the call that raises and what it raises.
INTERRUPT = {"calls": 0, "raises_at": 0}
INTERRUPT_WITH: list[BaseException] = []
INTERRUPT_LOG: list[Any] = []


def _act(machine: Any, name: str) -> None:
    """A callback: counts, raises on the chosen call, and queues events by the count."""
    INTERRUPT["calls"] += 1
    calls = INTERRUPT["calls"]
    INTERRUPT_LOG.append((name, calls))
    if calls == INTERRUPT["raises_at"]:
        raise INTERRUPT_WITH[0]
    if calls % 3 == 0:
        machine.raise_("step")
    if calls % 4 == 1:
        machine.send("ping")


class Interrupting(StateChart[Any]):
    """A statechart whose callbacks raise internal events and send external ones."""

    idle = State(initial=True)

    class work(State.Compound):
        first = State(initial=True)
        second = State()
        step = first.to(second, before="act") | second.to(first, before="act")

    done = State(final=True)
    start = idle.to(work, before="act")
    stop = work.to(idle, before="act")
    finish = work.to(done, cond="allowed")
    ping = idle.to.itself(on="act") | work.to.itself(internal=True, on="act")

    def act(self) -> None:
        _act(self, "act")

    def allowed(self) -> bool:
        _act(self, "allowed")
        return INTERRUPT["calls"] % 5 == 0

    def on_enter_second(self) -> None:
        _act(self, "enter second")


class InterruptingStrict(Interrupting):
    catch_errors_as_events = False


class InterruptingFlat(StateChart[Any]):
    """The flat chart: its instance runs the flat runtime's queues."""

    idle = State(initial=True)
    first = State()
    second = State()
    done = State(final=True)
    start = idle.to(first, before="act")
    step = first.to(second, before="act") | second.to(first, before="act")
    stop = first.to(idle, before="act") | second.to(idle, before="act")
    finish = first.to(done, cond="allowed") | second.to(done, cond="allowed")
    ping = idle.to.itself(on="act") | first.to.itself(on="act") | second.to.itself(on="act")

    def act(self) -> None:
        _act(self, "act")

    def allowed(self) -> bool:
        _act(self, "allowed")
        return INTERRUPT["calls"] % 5 == 0

    def on_enter_second(self) -> None:
        _act(self, "enter second")


class InterruptingFlatStrict(InterruptingFlat):
    catch_errors_as_events = False


INTERRUPTING = [Interrupting, InterruptingStrict, InterruptingFlat, InterruptingFlatStrict]
EVENTS = ["start", "step", "stop", "finish", "ping"]


def _interrupt_run(make: Any, raises_at: int, error: BaseException, events: list[str]) -> Any:
    INTERRUPT.update(calls=0, raises_at=raises_at)
    INTERRUPT_WITH[:] = [error]
    INTERRUPT_LOG.clear()
    machine = make()
    steps: list[Any] = []
    for event in events:
        try:
            machine.send(event)
            steps.append(("sent", event, ids(machine)))
        except BaseException as raised:
            steps.append(("raised", type(raised).__name__, ids(machine)))
    return steps, list(INTERRUPT_LOG)


BASE_EXCEPTIONS = [KeyboardInterrupt, SystemExit, GeneratorExit, Interruption]


class Hopping(StateChart[Any]):
    """``go``'s action raises ``hop`` and ``other`` and sends ``ext``; ``hop``'s ``before``
    raises what the test chooses, with ``other`` and ``ext`` still queued."""

    a = State(initial=True)
    b = State()
    c = State()
    d = State(final=True)
    go = a.to(b, on="first")
    hop = b.to(c, before="hopping")
    finish = c.to(d)
    other = b.to.itself(internal=True, on="log") | c.to.itself(internal=True, on="log")
    ext = a.to.itself(on="log") | b.to.itself(on="log") | c.to.itself(on="log")
    poke = a.to.itself(on="log") | b.to.itself(on="log") | c.to.itself(on="log")

    def first(self) -> None:
        INTERRUPT_LOG.append("first")
        self.raise_("hop")
        self.raise_("other")
        self.send("ext")

    def hopping(self) -> None:
        INTERRUPT_LOG.append("hopping")
        raise INTERRUPT_WITH[0]

    def log(self, event: Any) -> None:
        INTERRUPT_LOG.append(str(event))


class HoppingStrict(Hopping):
    catch_errors_as_events = False


class HoppingNested(StateChart[Any]):
    """The same inside a compound state (python-statemachine's processing loop)."""

    class top(State.Compound):
        a = State(initial=True)
        b = State()
        c = State()
        go = a.to(b, on="first")
        hop = b.to(c, before="hopping")
        other = b.to.itself(internal=True, on="log") | c.to.itself(internal=True, on="log")
        ext = a.to.itself(on="log") | b.to.itself(on="log") | c.to.itself(on="log")
        poke = a.to.itself(on="log") | b.to.itself(on="log") | c.to.itself(on="log")

    d = State(final=True)
    finish = top.to(d)

    first = Hopping.first
    hopping = Hopping.hopping
    log = Hopping.log


HOPPING = [Hopping, HoppingStrict, HoppingNested]


@pytest.mark.parametrize("chart", HOPPING, ids=lambda chart: chart.__name__)
@pytest.mark.parametrize("error", BASE_EXCEPTIONS, ids=lambda error: error.__name__)
def test_c11_events_queued_when_a_callback_raises_a_base_exception_run_at_the_next_send(
    chart: type[StateChart[Any]], error: type[BaseException]
) -> None:
    """python-statemachine's synchronous engine clears its queues on an ``Exception`` only:
    after a ``BaseException`` the internal ``other`` and the external ``ext`` left queued
    run at the next ``send``, before its event, as there."""

    def run(make: Any) -> Any:
        INTERRUPT_WITH[:] = [error()]
        INTERRUPT_LOG.clear()
        machine = make()
        with pytest.raises(error):
            machine.send("go")
        INTERRUPT_LOG.append(ids(machine))
        machine.send("poke")
        return [*INTERRUPT_LOG, ids(machine)]

    reference = run(chart)
    assert run(compile_chart(chart).create) == reference
    assert reference[:3] == ["first", "hopping", reference[2]]
    assert reference[3:6] == ["other", "ext", "poke"]


@settings(max_examples=80, deadline=None)
@given(
    chart=st.sampled_from(INTERRUPTING),
    raises_at=st.integers(1, 25),
    error=st.sampled_from([*BASE_EXCEPTIONS, ValueError]),
    events=st.lists(st.sampled_from(EVENTS), max_size=8),
)
def test_c11_a_callback_raising_at_any_call_leaves_the_queues_as_python_statemachine(
    chart: type[StateChart[Any]],
    raises_at: int,
    error: type[BaseException],
    events: list[str],
) -> None:
    reference = _interrupt_run(chart, raises_at, error(), events)
    assert _interrupt_run(compile_chart(chart).create, raises_at, error(), events) == reference


class HoppingAsync(Hopping):
    """``Hopping`` on python-statemachine's async engine."""

    async def first(self) -> None:  # type: ignore[override]
        INTERRUPT_LOG.append("first")
        await self.raise_("hop")
        await self.raise_("other")
        await self.send("ext")


@pytest.mark.parametrize("error", BASE_EXCEPTIONS, ids=lambda error: error.__name__)
def test_c21_an_async_chart_interrupted_by_a_base_exception_keeps_its_external_events_only(
    error: type[BaseException],
) -> None:
    """python-statemachine's async engine, interrupted, clears its internal queue (``other``
    is gone) and keeps the external one (``ext`` runs at the next ``send``). A
    ``KeyboardInterrupt`` or ``SystemExit`` in a gathered callback's task stops the event
    loop itself, as asyncio stops it."""

    def run(machine: Any) -> Any:
        INTERRUPT_WITH[:] = [error()]
        INTERRUPT_LOG.clear()

        async def go() -> None:
            await machine.send("go")

        async def poke() -> None:
            await machine.send("poke")

        try:
            asyncio.run(go())
        except BaseException as raised:
            INTERRUPT_LOG.append(type(raised).__name__)
        INTERRUPT_LOG.append(ids(machine))
        asyncio.run(poke())
        return [*INTERRUPT_LOG, ids(machine)]

    reference = run(HoppingAsync())
    assert run(compile_chart(HoppingAsync).create()) == reference
    assert reference[-3:-1] == ["ext", "poke"]
    assert "other" not in reference


# -- 3. an async send with options, never awaited --------------------------------------------

IDLE_LOG: list[Any] = []


class Poked(StateChart[Any]):
    """An async chart: ``poke`` goes to ``b``, ``go`` on to ``c``."""

    a = State(initial=True)
    b = State()
    c = State()
    poke = a.to(b, on="poked")
    go = b.to(c) | a.to(a)
    back = c.to(a)

    def poked(self, *args: Any, x: int = 0) -> None:
        IDLE_LOG.append(("poked", args, x))

    async def on_go(self) -> None:
        IDLE_LOG.append(("go from", ids(self)))


SEND_OPTIONS = [
    {"x": 1},
    {"send_id": "s1"},
    {"delay": 0},
    {"delay": 0, "send_id": "s2", "x": 2},
    {"internal": False},
    {"internal": True},
    {"delay": 1},
]


def _poked_run(machine: Any, scenario: Any) -> list[Any]:
    IDLE_LOG.clear()
    asyncio.run(scenario(machine))
    return [*IDLE_LOG, ids(machine)]


@pytest.mark.parametrize("started", [True, False], ids=["started", "not-started"])
@pytest.mark.parametrize("options", SEND_OPTIONS, ids=repr)
def test_c21_an_unawaited_send_with_options_to_an_idle_instance_queues_the_event(
    options: dict[str, Any], started: bool
) -> None:
    """python-statemachine puts the event on its queue when ``send`` is called, options or
    none, started or not: a coroutine closed unawaited leaves it for the next run, so
    ``go`` finds the instance in ``b``."""

    async def scenario(machine: Any) -> None:
        if started:
            await machine.activate_initial_state()
        sent = machine.send("poke", 7, **options)
        sent.close()
        await asyncio.sleep(0.005)  # past the 1 ms delay
        await machine.send("go")

    reference = _poked_run(Poked(), scenario)
    assert _poked_run(compile_chart(Poked).create(), scenario) == reference
    assert reference == [("poked", (7,), options.get("x", 0)), ("go from", []), ["c"]]


@pytest.mark.parametrize("options", SEND_OPTIONS, ids=repr)
def test_c21_a_send_with_options_awaited_after_the_next_one_ran_first(
    options: dict[str, Any],
) -> None:
    """Awaited only after ``go`` was sent and awaited, ``poke`` still ran first: it was
    queued when its ``send`` was called, and the run ``go`` started took it."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        sent = machine.send("poke", 7, **options)
        await asyncio.sleep(0.005)
        await machine.send("go")
        await sent
        IDLE_LOG.append(("after", ids(machine)))

    reference = _poked_run(Poked(), scenario)
    assert _poked_run(compile_chart(Poked).create(), scenario) == reference
    assert reference[:2] == [("poked", (7,), options.get("x", 0)), ("go from", [])]


def test_c21_an_unawaited_raise_from_outside_queues_the_event_as_a_send() -> None:
    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        machine.raise_("poke", 7).close()
        await machine.send("go")

    reference = _poked_run(Poked(), scenario)
    assert _poked_run(compile_chart(Poked).create(), scenario) == reference


def test_c21_a_delayed_internal_send_from_outside_is_refused_when_send_is_called() -> None:
    """python-statemachine refuses the options as ``send`` builds the event, before any
    coroutine exists."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        with pytest.raises(InvalidDefinition, match="delayed and internal"):
            machine.send("poke", delay=5, internal=True)
        await machine.send("go")

    reference = _poked_run(Poked(), scenario)
    assert _poked_run(compile_chart(Poked).create(), scenario) == reference


#: Options a script's ``send`` takes; the negative delay is a second, so an event sent with it
#: before the initial entry is due before the instance was made on both engines, however
#: long the run took to get there.
SCRIPT_OPTIONS = st.sampled_from(
    [{}, {"x": 3}, {"send_id": "s"}, {"delay": 0}, {"delay": -1000}, {"internal": True}]
)
SCRIPT_STEP = st.tuples(
    st.sampled_from(["closed", "awaited", "kept", "activate", "cancel"]),
    st.sampled_from(["poke", "go", "back", "nope"]),
    SCRIPT_OPTIONS,
)


@settings(max_examples=60, deadline=None)
@given(script=st.lists(SCRIPT_STEP, max_size=8))
def test_c21_sends_queued_awaited_or_not_run_in_the_order_python_statemachine_runs_them(
    script: list[tuple[str, str, dict[str, Any]]],
) -> None:
    """Each step sends an event (with options or none) and closes its coroutine, awaits it
    or keeps it to await at the end; or activates the instance, or cancels ``send_id``
    ``s``."""

    async def scenario(machine: Any) -> None:
        kept = []
        for how, event, options in script:
            if how == "activate":
                await machine.activate_initial_state()
            elif how == "cancel":
                machine.cancel_event("s")
            else:
                sent = machine.send(event, 7, **options)
                if how == "closed":
                    sent.close()
                elif how == "awaited":
                    await sent
                else:
                    kept.append(sent)
            IDLE_LOG.append((how, event, ids(machine)))
        for sent in kept:
            await sent
        await machine.activate_initial_state()

    reference = _poked_run(Poked(), scenario)
    assert _poked_run(compile_chart(Poked).create(), scenario) == reference


def test_c21_an_event_due_before_the_initial_entry_is_ignored_as_in_python_statemachine() -> None:
    """Sent before activation with a negative delay, ``poke`` is due before the initial entry
    python-statemachine queued when the instance was made: it is taken first, in no state,
    and ignored; ``go`` then loops on ``a``."""

    async def scenario(machine: Any) -> None:
        await asyncio.sleep(0.002)
        machine.send("poke", 7, delay=-1000).close()
        await machine.send("go")

    reference = _poked_run(Poked(), scenario)
    assert _poked_run(compile_chart(Poked).create(), scenario) == reference
    assert reference == [("go from", []), ["a"]]


class PokedStrict(Poked):
    allow_event_without_transition = False


def test_c21_an_event_due_before_the_initial_entry_of_a_strict_chart_is_refused() -> None:
    """python-statemachine fails the run on it and loses the initial entry queued behind it;
    the compiled runtime refuses the ``send`` instead."""

    async def scenario(machine: Any) -> None:
        await asyncio.sleep(0.002)
        with pytest.raises(UnsupportedChart, match="due before the initial state is entered"):
            machine.send("poke", delay=-1000)

    _poked_run(compile_chart(PokedStrict).create(), scenario)


@pytest.mark.parametrize("options", SEND_OPTIONS, ids=repr)
def test_c21_a_first_send_with_options_outside_any_event_loop_runs_after_the_initial_entry(
    options: dict[str, Any],
) -> None:
    def run(machine: Any) -> list[Any]:
        IDLE_LOG.clear()
        machine.send("poke", 7, **options)
        machine.send("go")
        return [*IDLE_LOG, ids(machine)]

    assert run(compile_chart(Poked).create()) == run(Poked())


# -- 4. a model property handing out a callable defined elsewhere -----------------------------

HOLDER = foreign_callables.Holder()
CHECKER = foreign_callables.Checker()
#: Callables a model's property hands out (or a model instance holds), by how they are made;
#: each given ``machine`` asks something of python-statemachine's machine.
FOREIGN = {
    "module_function": foreign_callables.is_machine,
    "reads_the_class": foreign_callables.has_bases,
    "lambda_of_another_object": HOLDER.check,
    "bound_method": CHECKER.method,
    "wrapped": foreign_callables.wrapped,
    "partial": functools.partial(foreign_callables.matches, True),
    "partial_of_partial": functools.partial(functools.partial(foreign_callables.matches), True),
}


def _handing_out(value: Any) -> property:
    return property(lambda self: value)


#: A model class whose properties hand out the callables of ``FOREIGN``.
Handing = type("Handing", (), {name: _handing_out(value) for name, value in FOREIGN.items()})


class Holding:
    """A model instance holding the callables of ``FOREIGN`` (its class has none)."""

    def __init__(self) -> None:
        for name, value in FOREIGN.items():
            setattr(self, name, value)


def _guarded_by(name: str) -> type[StateChart[Any]]:
    class Guarded(StateChart[Any]):
        a = State(initial=True)
        yes = State(final=True)
        no = State(final=True)
        go = a.to(yes, cond=name) | a.to(no)

    return Guarded


@pytest.mark.parametrize("model", [Handing, Holding], ids=lambda model: model.__name__)
@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_c6_a_callable_a_model_hands_out_using_the_machine_is_refused_when_it_runs(
    name: str, model: type
) -> None:
    """python-statemachine's machine answers the guard ``True``; the compiled instance would
    answer otherwise, so the run raises ``UnsupportedChart`` naming the callback, whatever
    form the callable takes (a ``functools.partial`` and a callable object too)."""
    chart = _guarded_by(name)
    reference = chart(model())
    reference.send("go")
    assert ids(reference) == ["yes"]
    instance = compile_chart(chart).create(model())
    with pytest.raises(UnsupportedChart, match=f"{model.__name__}.{name} "):
        instance.send("go")


class Toggling(StateChart[Any]):
    a = State(initial=True)
    b = State()
    flip = a.to(b, cond="allowed") | b.to(a, cond="allowed")


def _flips(machine: Any, changes: list[Any]) -> list[Any]:
    """Flip once per entry of ``changes``, first setting ``allowed`` on the model to it
    (``None``: leave it)."""
    seen = [ids(machine)]
    for change in changes:
        if change is not None:
            machine.model.allowed = change
        machine.send("flip")
        seen.append(ids(machine))
    return seen


class HoldsAllowed:
    def __init__(self, allowed: Any) -> None:
        self.allowed = allowed


@pytest.mark.parametrize(
    ("initial", "changes"),
    [
        (lambda: True, [None, lambda: False, 0]),  # a callable then is kept
        (1, [None, lambda: False, 0]),  # a value then is read on each call, never called
    ],
    ids=["callable", "value"],
)
def test_c9_a_name_a_model_instance_holds_is_resolved_when_the_instance_is_created(
    initial: Any, changes: list[Any]
) -> None:
    """python-statemachine resolves the model's names when the machine is built: a callable
    found then is the callback for good (setting another later changes nothing); a value is
    read again on each call, and returned as it is, a callable too."""
    reference = _flips(Toggling(HoldsAllowed(initial)), changes)
    assert _flips(compile_chart(Toggling).create(HoldsAllowed(initial)), changes) == reference


GETTER_READS: list[int] = []


class HandsOutOnce:
    """A property handing out a new guard on each read, counting the reads."""

    @property
    def allowed(self) -> Any:
        GETTER_READS.append(1)
        reads = len(GETTER_READS)
        return lambda: reads % 2 == 1


class Stepping(StateChart[Any]):
    a = State(initial=True)
    b = State()
    step = a.to(b, cond="allowed") | b.to(a)


def test_c9_a_model_property_handing_out_a_callable_is_read_when_the_instance_is_created() -> None:
    """The getter runs when the instance is created and its callable is the guard from then
    on, as python-statemachine binds it (read again on each call, it would flip)."""

    def run(make: Any) -> Any:
        GETTER_READS.clear()
        machine = make(HandsOutOnce())
        created = len(GETTER_READS)
        seen = []
        for _ in range(4):
            machine.send("step")
            seen.append(ids(machine))
        return created, len(GETTER_READS), seen

    reference = run(Stepping)
    assert run(compile_chart(Stepping).create) == reference
    assert reference == (1, 1, [["b"], ["a"], ["b"], ["a"]])


class HoldsACallableObject:
    def __init__(self) -> None:
        self.allowed = foreign_callables.Checker()


def test_c9_a_callable_object_a_model_holds_fails_when_created_as_in_python_statemachine() -> None:
    """python-statemachine reads the callable's ``__qualname__`` when it binds it, which an
    instance of a class has not: creating the machine raises ``AttributeError``."""
    with pytest.raises(AttributeError, match="__qualname__") as reference:
        Toggling(HoldsACallableObject())
    with pytest.raises(AttributeError, match="__qualname__") as compiled:
        compile_chart(Toggling).create(HoldsACallableObject())
    assert str(compiled.value) == str(reference.value)


# -- 5. naming-convention callbacks a model instance holds ------------------------------------

CONVENTION_LOG: list[Any] = []


class Plain:
    """A model whose class defines no callback."""


class Conventional(StateChart[Any]):
    """A chart with no callbacks of its own but ``on_exit_a``."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b)
    back = b.to(a)
    finish = b.to(c)

    def on_exit_a(self) -> None:
        CONVENTION_LOG.append("chart exit a")


def _recording(name: str) -> Any:
    def record(*args: Any, **kwargs: Any) -> None:
        CONVENTION_LOG.append(name)

    return record


CONVENTIONS = [
    "on_enter_b",
    "on_exit_a",
    "before_go",
    "on_go",
    "after_go",
    "on_enter_state",
    "on_exit_state",
    "before_transition",
    "on_transition",
    "after_transition",
]


def _conventions_run(make: Any, names: list[str], late: list[str]) -> list[Any]:
    CONVENTION_LOG.clear()
    model = Plain()
    for name in names:
        setattr(model, name, _recording(name))
    machine = make(model)
    for name in late:  # set after the instance was made: python-statemachine never runs it
        setattr(model, name, _recording(f"late {name}"))
    for event in ["go", "back", "go", "finish"]:
        machine.send(event)
        CONVENTION_LOG.append((event, ids(machine)))
    return list(CONVENTION_LOG)


@pytest.mark.parametrize("name", CONVENTIONS)
def test_c9_a_naming_convention_callback_only_the_model_instance_holds_runs(name: str) -> None:
    """python-statemachine finds the model's names by ``dir(model)`` when it builds the
    machine, so a callback set on the instance alone runs (after the chart's own)."""
    reference = _conventions_run(Conventional, [name], [])
    assert _conventions_run(compile_chart(Conventional).create, [name], []) == reference
    assert name in reference


def test_c9_naming_convention_callbacks_the_instance_holds_run_in_the_reference_order() -> None:
    reference = _conventions_run(Conventional, CONVENTIONS, [])
    assert _conventions_run(compile_chart(Conventional).create, CONVENTIONS, []) == reference


def test_c9_a_naming_convention_callback_set_after_the_instance_was_made_never_runs() -> None:
    reference = _conventions_run(Conventional, ["on_go"], ["on_enter_b", "on_go"])
    compiled = _conventions_run(
        compile_chart(Conventional).create, ["on_go"], ["on_enter_b", "on_go"]
    )
    assert compiled == reference
    assert "late on_go" not in reference
    assert "on_go" in reference


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(st.sampled_from(CONVENTIONS), unique=True, max_size=4),
    late=st.lists(st.sampled_from(CONVENTIONS), unique=True, max_size=2),
)
def test_c9_instances_holding_any_naming_convention_callbacks_run_as_in_psm(
    names: list[str], late: list[str]
) -> None:
    """Instances of one model class holding different callbacks, made in turn: each runs
    its own, none another's."""
    reference = _conventions_run(Conventional, names, late)
    assert _conventions_run(compile_chart(Conventional).create, names, late) == reference
    # the chart's binding for a model holding none is not the one made for these
    assert _conventions_run(compile_chart(Conventional).create, [], []) == _conventions_run(
        Conventional, [], []
    )


class NestedConventional(StateChart[Any]):
    """A compound state: the naming-convention names of its children and of itself."""

    idle = State(initial=True)

    class work(State.Compound):
        first = State(initial=True)
        second = State()
        step = first.to(second)

    done = State(final=True)
    go = idle.to(work)
    finish = work.to(done)


def test_c9_a_statechart_runs_the_naming_convention_callbacks_the_instance_holds() -> None:
    names = ["on_enter_work", "on_enter_first", "on_exit_first", "on_step", "on_enter_done"]

    def run(make: Any) -> list[Any]:
        CONVENTION_LOG.clear()
        model = Plain()
        for name in names:
            setattr(model, name, _recording(name))
        machine = make(model)
        for event in ["go", "step", "finish"]:
            machine.send(event)
        return [*CONVENTION_LOG, ids(machine)]

    reference = run(NestedConventional)
    assert run(compile_chart(NestedConventional).create) == reference
    assert reference[:2] == ["on_enter_work", "on_enter_first"]


class Listing:
    """A model whose ``__dir__`` lists a callback its ``__getattr__`` answers."""

    def __dir__(self) -> list[str]:
        return [*object.__dir__(self), "on_enter_b"]

    def __getattr__(self, name: str) -> Any:
        if name == "on_enter_b":
            return _recording("listed on_enter_b")
        raise AttributeError(name)


def test_c9_a_naming_convention_callback_a_models_dir_lists_runs() -> None:
    def run(make: Any) -> list[Any]:
        CONVENTION_LOG.clear()
        machine = make(Listing())
        machine.send("go")
        return [*CONVENTION_LOG, ids(machine)]

    reference = run(Conventional)
    assert run(compile_chart(Conventional).create) == reference
    assert "listed on_enter_b" in reference


class PreparingAlone(StateChart[Any]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b)


def test_c9_a_prepare_event_only_the_model_instance_holds_is_refused_when_created() -> None:
    """python-statemachine would run it before every callback; the compiled runtime takes a
    model's ``prepare_event`` from its class only."""
    model = Plain()
    model.prepare_event = lambda: {}  # type: ignore[attr-defined]
    with pytest.raises(UnsupportedChart, match=r"Plain\.prepare_event, set on the instance"):
        compile_chart(PreparingAlone).create(model)


class ConventionalAsync(Conventional):
    async def on_exit_a(self) -> None:
        CONVENTION_LOG.append("chart exit a")


def test_c21_an_async_chart_runs_the_naming_convention_callbacks_the_instance_holds() -> None:
    def run(make: Any) -> list[Any]:
        CONVENTION_LOG.clear()
        model = Plain()
        for name in ["on_go", "on_enter_b"]:
            setattr(model, name, _recording(name))
        machine = make(model)

        async def go() -> None:
            await machine.send("go")

        asyncio.run(go())
        return [*CONVENTION_LOG, ids(machine)]

    reference = run(ConventionalAsync)
    assert run(compile_chart(ConventionalAsync).create) == reference
    assert reference == ["chart exit a", "on_go", "on_enter_b", ["b"]]


class HoldsOtherCallables:
    """A model holding a callable and a dict that are no callbacks."""

    def __init__(self) -> None:
        self.notify = _recording("notify")
        self.options: dict[str, Any] = {"on_enter_b": "not a callback"}


def test_c9_a_model_instance_holding_other_callables_runs_no_callback_of_theirs() -> None:
    def run(make: Any) -> list[Any]:
        CONVENTION_LOG.clear()
        machine = make(HoldsOtherCallables())
        machine.send("go")
        return [*CONVENTION_LOG, ids(machine)]

    reference = run(Conventional)
    assert run(compile_chart(Conventional).create) == reference == ["chart exit a", ["b"]]


DONE_LOG: list[Any] = []


class Finishing(StateChart[Any]):
    """A final state inside a compound one: what its ``enter`` callbacks give is the done
    data of ``done.state.work``."""

    class work(State.Compound):
        busy = State(initial=True)
        finished = State(final=True)
        complete = busy.to(finished)

    after = State(final=True)
    done_state_work = work.to(after, on="record")

    def record(self, *args: Any, total: int = 0) -> None:
        DONE_LOG.append((args, total))


@pytest.mark.parametrize("value", ["a value", {"total": 3}], ids=["value", "mapping"])
def test_c9_a_non_callable_naming_convention_value_the_instance_holds_is_done_data(
    value: Any,
) -> None:
    """python-statemachine reads ``on_enter_finished`` from the instance as a value and hands
    it on as the done data of the compound state's ``done.state`` event."""

    def run(make: Any) -> list[Any]:
        DONE_LOG.clear()
        model = Plain()
        model.on_enter_finished = value  # type: ignore[attr-defined]
        machine = make(model)
        machine.send("complete")
        return [*DONE_LOG, ids(machine)]

    reference = run(Finishing)
    assert run(compile_chart(Finishing).create) == reference
    assert reference[0] == ((("a value",), 0) if value == "a value" else ((), 3))


ALLOWED_VALUES = st.sampled_from(["yes", "no", "one", "zero", "keep"])


def _allowed(label: str) -> Any:
    return {
        "yes": lambda: True,
        "no": lambda: False,
        "one": 1,
        "zero": 0,
        "keep": None,
    }[label]


@settings(max_examples=60, deadline=None)
@given(
    initial=ALLOWED_VALUES.filter(lambda label: label != "keep"),
    changes=st.lists(ALLOWED_VALUES, max_size=6),
)
def test_c9_a_model_name_reassigned_between_events_answers_as_in_psm(
    initial: str, changes: list[str]
) -> None:
    """Whatever ``allowed`` holds when the instance is made and whatever it is set to
    between events, the guard answers as python-statemachine's bound callback does."""
    values = [_allowed(label) for label in changes]
    reference = _flips(Toggling(HoldsAllowed(_allowed(initial))), values)
    compiled = _flips(compile_chart(Toggling).create(HoldsAllowed(_allowed(initial))), values)
    assert compiled == reference


def test_c21_a_run_waiting_for_a_delayed_event_lets_other_tasks_send_meanwhile() -> None:
    """python-statemachine's async engine awaits a delayed event polling its queue: ``go``,
    sent by another task while ``poke`` waits, is due first and runs first (a run blocking
    the event loop until ``poke`` is due would run it first, ending in ``c``)."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()

        async def poke() -> None:
            await machine.send("poke", 7, delay=30)

        async def go() -> None:
            await asyncio.sleep(0.01)
            await machine.send("go")

        await asyncio.gather(poke(), go())

    reference = _poked_run(Poked(), scenario)
    assert _poked_run(compile_chart(Poked).create(), scenario) == reference
    assert reference == [("go from", []), ("poked", (7,), 0), ["b"]]


def test_c21_a_run_cancelled_while_a_delayed_event_waits_keeps_it_for_the_next_send() -> None:
    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        waiting = asyncio.ensure_future(machine.send("poke", 7, delay=20))
        await asyncio.sleep(0.005)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        IDLE_LOG.append(("cancelled", ids(machine)))
        await asyncio.sleep(0.03)
        await machine.send("go")

    reference = _poked_run(Poked(), scenario)
    assert _poked_run(compile_chart(Poked).create(), scenario) == reference
    assert reference == [("cancelled", ["a"]), ("poked", (7,), 0), ("go from", []), ["c"]]


class Sending(StateChart[Any]):
    """``start``'s action sends ``poke``, then ``go`` with a ``send_id``, then ``go`` due a
    second in the past."""

    idle = State(initial=True)
    a = State()
    b = State()
    c = State(final=True)
    start = idle.to(a, on="send_all")
    poke = a.to(b, on="poked")
    go = b.to(c) | a.to(a, on="looped")

    def send_all(self) -> None:
        self.send("poke")
        self.send("go", send_id="s")
        self.send("go", delay=-1000)

    def poked(self) -> None:
        IDLE_LOG.append("poked")

    def looped(self) -> None:
        IDLE_LOG.append("looped")


def test_c17_events_queued_before_a_timed_one_run_before_it_when_one_is_due_in_the_past() -> None:
    """The event due in the past runs first; ``poke``, sent before ``go`` with its
    ``send_id``, still runs before that one, as python-statemachine orders them by the time
    each was sent."""

    def run(machine: Any) -> list[Any]:
        IDLE_LOG.clear()
        machine.send("start")
        return [*IDLE_LOG, ids(machine)]

    reference = run(Sending())
    assert run(compile_chart(Sending).create()) == reference == ["looped", "poked", ["c"]]


@pytest.mark.parametrize("started", [True, False], ids=["started", "not-started"])
def test_c21_an_event_queued_unawaited_with_a_send_id_is_cancelled_by_cancel_event(
    started: bool,
) -> None:
    """Queued when ``send`` was called, it is in the queue ``cancel_event`` cancels from:
    awaited afterwards, it runs nothing."""

    async def scenario(machine: Any) -> None:
        if started:
            await machine.activate_initial_state()
        sent = machine.send("poke", 7, send_id="s")
        machine.cancel_event("s")
        await sent
        await machine.send("go")

    reference = _poked_run(Poked(), scenario)
    assert _poked_run(compile_chart(Poked).create(), scenario) == reference
    assert reference == [("go from", []), ["a"]]
