"""Behaviour found by this round's differential variants and mutation samples (C3, C5)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from statemachine import Event, HistoryState, State, StateChart, StateMachine
from statemachine.exceptions import TransitionNotAllowed

from statecharts import UnsupportedChart, VirtualClock, compile_chart


class Flag:
    """A model whose flag enables the eventless transition that ends the chart."""

    def __init__(self) -> None:
        self.flag = False


def ending_chart(hierarchical: bool, strict: bool, awaited: bool = False) -> type[StateChart]:  # type: ignore[type-arg]
    """A chart an eventless transition ends once ``flag`` is set, and an event ``kick``."""
    if hierarchical:

        class Nested(StateChart):  # type: ignore[type-arg]
            allow_event_without_transition = not strict

            class work(State.Compound):
                queued = State(initial=True)
                done = State(final=True)
                queued.to(done, cond="flag")

            complete = State(final=True)
            kick = work.to.itself()
            done_state_work = work.to(complete)

            if awaited:

                async def on_enter_complete(self) -> None:
                    await asyncio.sleep(0)

        return Nested

    class Flat(StateChart):  # type: ignore[type-arg]
        allow_event_without_transition = not strict

        queued = State(initial=True)
        complete = State(final=True)
        queued.to(complete, cond="flag")
        kick = queued.to.itself()

        if awaited:

            async def on_enter_complete(self) -> None:
                await asyncio.sleep(0)

    return Flat


@pytest.mark.parametrize("hierarchical", [False, True])
@pytest.mark.parametrize("strict", [False, True])
def test_c5_an_event_whose_macrostep_ended_the_instance_before_it_ran_is_dropped_quietly(
    hierarchical: bool, strict: bool
) -> None:
    """python-statemachine's synchronous engine takes the eventless transitions a guard
    enabled since the last event first; when they end the machine, the event sent is dropped
    without ``TransitionNotAllowed``, strict or not (only the next send is refused)."""
    declared = ending_chart(hierarchical, strict)
    reference_model, model = Flag(), Flag()
    reference, instance = declared(reference_model), compile_chart(declared).create(model)
    reference_model.flag = model.flag = True
    assert reference.send("kick") is None
    outcome = instance.send("kick")
    assert reference.is_terminated
    assert instance.is_terminated
    assert not outcome.applied
    assert outcome.reason == "terminated"
    assert outcome.event == "kick"
    assert outcome.source.id == "complete"
    if strict:  # the next event meets a stopped machine
        with pytest.raises(TransitionNotAllowed, match="Can't Kick when in Complete"):
            reference.send("kick")
        with pytest.raises(TransitionNotAllowed, match="Can't Kick when in Complete"):
            instance.send("kick")
    else:
        assert reference.send("kick") is None
        assert instance.send("kick").reason == "terminated"


@pytest.mark.parametrize("hierarchical", [False, True])
def test_c5_an_async_strict_chart_refuses_the_event_its_macrostep_ended_the_instance_before(
    hierarchical: bool,
) -> None:
    """python-statemachine's async engine answers the caller of an event dropped because the
    machine stopped as it answers a new event: a strict chart raises ``TransitionNotAllowed``."""
    declared = ending_chart(hierarchical, strict=True, awaited=True)

    async def scenario(compiled: bool) -> str:
        model = Flag()
        machine: Any = compile_chart(declared).create(model) if compiled else declared(model)
        await machine.activate_initial_state()
        model.flag = True
        try:
            await machine.send("kick")
        except TransitionNotAllowed as error:
            return f"refused: {error}"
        return "dropped"

    assert asyncio.run(scenario(False)) == "refused: Can't Kick when in Complete."
    assert asyncio.run(scenario(True)) == "refused: Can't Kick when in Complete."


#: What the gated chart's callbacks saw, in order (module-level: a chart method handing
#: ``self`` to unreadable code is refused, so the log is not on the machine).
LOG: list[tuple[Any, ...]] = []
GATES: list[asyncio.Event] = []


class Gated(StateChart):  # type: ignore[type-arg]
    """Entering ``busy`` waits on a gate the test opens, so a run stays in progress while
    other tasks send; ``note`` records its payload from either state."""

    idle = State(initial=True)
    busy = State()
    go = idle.to(busy)
    back = busy.to(idle)
    note = idle.to.itself(internal=True, on="record") | busy.to.itself(internal=True, on="record")

    async def on_enter_busy(self) -> None:
        LOG.append(("enter busy",))
        await GATES[-1].wait()
        LOG.append(("entered busy",))

    def record(self, *args: Any, **kwargs: Any) -> None:
        LOG.append(("record", args, kwargs.get("x")))


async def gated(compiled: bool, scenario: Any) -> list[tuple[Any, ...]]:
    """Run ``scenario(machine)`` on python-statemachine's machine or the compiled instance of
    ``Gated`` with a fresh log and gate; the log."""
    LOG.clear()
    GATES.append(asyncio.Event())
    machine: Any = compile_chart(Gated).create() if compiled else Gated()
    await machine.activate_initial_state()
    await scenario(machine, GATES[-1])
    return list(LOG)


def test_c21_an_event_another_task_sends_during_a_run_waits_for_it_with_its_payload() -> None:
    """A task's event joining another task's run keeps its positional and keyword payload,
    and its ``send`` returns once the run took it (``queued``), as python-statemachine's
    caller awaits its future."""
    answers: list[Any] = []

    async def scenario(machine: Any, gate: asyncio.Event) -> None:
        run = asyncio.create_task(machine.send("go"))
        await asyncio.sleep(0)  # the run waits in busy's enter
        joined = asyncio.create_task(machine.send("note", 1, 2, x=3))
        await asyncio.sleep(0)
        assert not joined.done()  # waiting for the run, not answered at once
        gate.set()
        await run
        answers.append(await joined)
        LOG.append(("joined answered",))

    reference = asyncio.run(gated(False, scenario))
    assert answers == [None]  # python-statemachine's answer
    answers.clear()
    assert asyncio.run(gated(True, scenario)) == reference
    assert reference[:3] == [("enter busy",), ("entered busy",), ("record", (1, 2), 3)]
    assert reference[-1] == ("joined answered",)
    (outcome,) = answers
    assert not outcome.applied
    assert outcome.reason == "queued"
    assert outcome.event == "note"


def test_c21_a_raise_created_idle_and_awaited_during_a_run_joins_it_with_its_payload() -> None:
    """``raise_`` outside a run, created while the instance is idle and awaited once another
    task's run holds it, joins that run with its payload."""

    async def scenario(machine: Any, gate: asyncio.Event) -> None:
        later = machine.raise_("note", 4, 5, x=6)
        run = asyncio.create_task(machine.send("go"))
        await asyncio.sleep(0)
        joined = asyncio.create_task(later)
        await asyncio.sleep(0)
        gate.set()
        await run
        await joined

    reference = asyncio.run(gated(False, scenario))
    assert asyncio.run(gated(True, scenario)) == reference
    assert ("record", (4, 5), 6) in reference


def test_c21_an_event_queued_idle_that_another_run_takes_reports_queued() -> None:
    """An event sent to an idle instance is queued when ``send`` is called; a run another task
    starts before it is awaited takes it, and awaiting it then answers ``queued``."""
    answers: list[Any] = []

    async def scenario(machine: Any, gate: asyncio.Event) -> None:
        later = machine.send("note", 7, x=8)
        run = asyncio.create_task(machine.send("go"))
        await asyncio.sleep(0)
        waiting = asyncio.create_task(later)
        await asyncio.sleep(0)
        gate.set()
        await run
        answers.append(await waiting)

    reference = asyncio.run(gated(False, scenario))
    assert answers == [None]
    answers.clear()
    assert asyncio.run(gated(True, scenario)) == reference
    assert ("record", (7,), 8) in reference
    (outcome,) = answers
    assert not outcome.applied
    assert outcome.reason == "queued"


class Greeting(StateChart):  # type: ignore[type-arg]
    """The initial state's async ``enter`` sends ``hello``; whichever of ``first`` and
    ``hello`` runs first leaves ``start``, and the other finishes in ``done``."""

    start = State(initial=True)
    after_first = State()
    after_hello = State()
    done = State(final=True)
    first = start.to(after_first, on="said_first") | after_hello.to(done, on="said_first")
    hello = start.to(after_hello, on="said_hello") | after_first.to(done, on="said_hello")

    async def on_enter_start(self) -> None:
        LOG.append(("enter start",))
        await self.send("hello")

    def said_hello(self) -> None:
        LOG.append(("hello",))

    def said_first(self) -> None:
        LOG.append(("first",))


def test_c21_the_first_event_runs_after_the_initial_entry_before_what_it_sent() -> None:
    """An async instance's first event, sent without ``activate_initial_state``, is queued
    behind the initial entry: events the initial state's callbacks send follow it."""

    async def scenario(compiled: bool) -> list[tuple[Any, ...]]:
        LOG.clear()
        machine: Any = compile_chart(Greeting).create() if compiled else Greeting()
        await machine.send("first")
        return list(LOG)

    reference = asyncio.run(scenario(False))
    assert reference == [("enter start",), ("first",), ("hello",)]
    assert asyncio.run(scenario(True)) == reference


class Delayed(StateChart):  # type: ignore[type-arg]
    """An event declared with a delay, and an async callback."""

    a = State(initial=True)
    b = State()
    later = Event(a.to(b), delay=50)
    back = b.to(a)

    async def on_enter_b(self) -> None:
        LOG.append(("enter b",))


def test_c17_an_event_declared_with_a_delay_sent_to_an_idle_async_instance_waits_for_it() -> None:
    """Sent from a task to an idle async instance, an event declared with ``delay`` runs once
    due, as python-statemachine runs it (it was run at once, queued as a plain event)."""

    async def scenario(compiled: bool) -> tuple[list[str], float]:
        LOG.clear()
        machine: Any = compile_chart(Delayed).create() if compiled else Delayed()
        await machine.activate_initial_state()
        loop = asyncio.get_running_loop()
        started = loop.time()
        await machine.send("later")
        return [state.id for state in machine.configuration], loop.time() - started

    for compiled in (False, True):
        configuration, waited = asyncio.run(scenario(compiled))
        assert configuration == ["b"]
        assert waited >= 0.045, compiled


class Jobs(StateChart):  # type: ignore[type-arg]
    """A flat chart taking any ``job.<n>`` by a prefix."""

    a = State(initial=True)
    b = State()
    a.to(b, event="job.*")
    back = b.to(a)


def test_c16_a_flat_chart_s_code_for_an_undeclared_name_names_its_constants_after_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The function a flat chart generates for names a prefix takes (written under
    ``$STATECHARTS_SOURCE_DIR``, as tracebacks show it) reports its outcome with constants
    named after the source, the state after and the transition."""
    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(tmp_path))
    instance = compile_chart(Jobs).create()
    outcome = instance.send("job.7")
    assert outcome.applied
    assert outcome.event == "job.7"
    sources = [path.read_text(encoding="utf-8") for path in tmp_path.iterdir()]
    assert any(
        "return _Outcome(True, ev, DEF_a, DEF_b, DEF_a_job_b, None)" in source
        for source in sources
    )


class Fork(StateChart):  # type: ignore[type-arg]
    """``go`` leads to ``m``, whose eventless transitions reach ``z`` by ``x`` or ``y``, as the
    model's flag says."""

    a = State(initial=True)
    m = State()
    x = State()
    y = State()
    z = State()
    go = a.to(m)
    m.to(x, cond="flag")
    m.to(y, unless="flag")
    x.to(z)
    y.to(z)
    back = z.to(a)


def test_c5_each_eventless_chain_of_a_flat_chart_reports_its_own_transitions() -> None:
    """Two chains from one event to one state, by different ways: each outcome lists the
    transitions its macrostep took, and a chain met again is reported alike (the same
    remembered outcome)."""
    chart = compile_chart(Fork)
    ways = {}
    for flag in (True, False, True):
        model = Flag()
        model.flag = flag
        outcome = chart.create(model).send("go")
        assert outcome.target is not None
        assert outcome.target.id == "z"
        ways.setdefault(flag, []).append(outcome)
    assert [t.id for t in ways[True][0].transitions] == ["a:go:m", "m::x", "x::z"]
    assert [t.id for t in ways[False][0].transitions] == ["a:go:m", "m::y", "y::z"]
    assert ways[True][1] is ways[True][0]


class Refused(StateChart):  # type: ignore[type-arg]
    """A guard expression, on a transition of a compound state no instance starts in, naming
    an event."""

    a = State(initial=True)

    class later(State.Compound):
        b = State(initial=True)
        c = State(final=True)
        go = b.to(c, cond="fine and start")

    start = a.to(later)

    def fine(self) -> bool:
        return True


def test_c6_a_guard_expression_naming_an_event_is_refused_when_compiled() -> None:
    """The names a guard expression reads are checked when the chart compiles, as a guard
    named alone is, though a statechart generates that transition's code only once an
    instance first meets it."""
    with pytest.raises(UnsupportedChart, match="a callback naming an event"):
        compile_chart(Refused)


class Leftovers(StateChart):  # type: ignore[type-arg]
    """``go`` queues ``check`` and ``end``; ``check``'s guard raises, leaving ``end`` queued,
    which the next send runs first, ending the chart."""

    catch_errors_as_events = False

    a = State(initial=True)
    b = State()
    done = State(final=True)
    go = a.to(b, on="queue_two")
    check = b.to.itself(cond="explode")
    end = b.to(done)
    later = b.to(a)

    def queue_two(self) -> None:
        self.send("check")
        self.send("end")

    def explode(self) -> bool:
        raise ValueError("the guard failed")


def test_c11_an_event_sent_after_leftovers_that_end_the_chart_is_dropped_as_terminated() -> None:
    """The events an earlier failure left queued run before the next one sent; when they end
    the chart, that event is dropped, as python-statemachine drops it: ignored, ``terminated``."""
    reference, instance = Leftovers(), compile_chart(Leftovers).create()
    for machine in (reference, instance):
        with pytest.raises(ValueError, match="the guard failed"):
            machine.send("go")
    assert reference.send("later") is None
    outcome = instance.send("later")
    assert reference.is_terminated
    assert instance.is_terminated
    assert outcome.applied is False
    assert outcome.reason == "terminated"
    assert outcome.event == "later"


class Ending(StateChart):  # type: ignore[type-arg]
    """A top-level final state whose ``enter`` reads the machine's configuration."""

    a = State(initial=True)
    done = State(final=True)
    finish = a.to(done)

    def on_enter_done(self) -> None:
        configuration = [state.id for state in self.configuration]
        LOG.append(("in done", configuration, self.current_state_value, self.is_terminated))


def test_c15_a_final_state_s_enter_reads_the_configuration_it_enters() -> None:
    """While a top-level final state's ``enter`` runs, the configuration is that state and
    the chart is not terminated yet, as in python-statemachine."""
    logs = []
    for make in (Ending, lambda: compile_chart(Ending).create()):
        LOG.clear()
        make().send("finish")
        logs.append(list(LOG))
    assert logs[0] == [("in done", ["done"], "done", False)]
    assert logs[1] == logs[0]


class Slot:
    """A data descriptor with ``__get__`` and ``__delete__`` only, recording who deletes."""

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return "slot"

    def __delete__(self, instance: Any) -> None:
        LOG.append(("deleted through", instance is None, type(instance).__name__))


class Clearing(StateChart):  # type: ignore[type-arg]
    """A callback deleting a chart attribute its descriptor owns."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on="clear")
    back = b.to(a)
    slot = Slot()

    def clear(self) -> None:
        del self.slot


def test_c10_a_chart_descriptor_s_delete_gets_the_running_instance() -> None:
    """``del self.name`` in a callback reaches the chart's descriptor with the instance the
    callback runs on, as in python-statemachine (the machine, named after the chart)."""
    logs = []
    for make in (Clearing, lambda: compile_chart(Clearing).create()):
        LOG.clear()
        make().send("go")
        logs.append(list(LOG))
    assert logs[0] == [("deleted through", False, "Clearing")]
    assert logs[1] == logs[0]


class Resume(StateChart):  # type: ignore[type-arg]
    """A transition to a history state with no default, whose ``on`` callbacks are async."""

    catch_errors_as_events = False

    paused = State(initial=True)

    class steps(State.Compound):
        one = State(initial=True)
        two = State()
        h = HistoryState()
        step = one.to(two)

    start = paused.to(steps)
    resume = paused.to(steps.h, on=["first", "second"])
    pause = steps.to(paused)

    async def first(self) -> None:
        LOG.append(("first starts",))
        await asyncio.sleep(0)
        LOG.append(("first ends",))

    async def second(self) -> None:
        LOG.append(("second starts",))
        await asyncio.sleep(0)
        LOG.append(("second ends",))


def test_c21_the_on_group_of_a_transition_to_an_empty_history_runs_gathered() -> None:
    """python-statemachine's async engine gathers a transition's ``on`` group when it runs
    without an error handler, through a history state too, recorded or not (it runs the
    group again entering the state history recorded): the callbacks interleave."""

    async def scenario(compiled: bool) -> tuple[list[tuple[Any, ...]], list[str]]:
        LOG.clear()
        machine: Any = compile_chart(Resume).create() if compiled else Resume()
        await machine.activate_initial_state()
        for event in ("start", "step", "pause", "resume"):
            await machine.send(event)
            LOG.append(("configuration", [state.id for state in machine.configuration]))
        return list(LOG), [state.id for state in machine.configuration]

    interleaved = [("first starts",), ("second starts",), ("first ends",), ("second ends",)]
    reference = asyncio.run(scenario(False))
    assert reference[0][3:11] == interleaved * 2
    assert reference[1] == ["steps", "two"]
    assert asyncio.run(scenario(True)) == reference


class Switch(StateMachine):
    """A strict machine: ``nope``'s only transition has a guard that never lets it through,
    so it is refused."""

    off = State(initial=True)
    on = State()
    switch = off.to(on) | on.to(off)
    nope = on.to.itself(cond="never")

    def never(self) -> bool:
        return False


def test_c17_delayed_events_left_after_a_refused_one_still_run_when_due() -> None:
    """Three delayed events due at once on a virtual clock, the second refused by a strict
    machine: the clock's advance raises python-statemachine's error, and the third, kept,
    runs on the next advance (it waited for a wake-up nobody asked for)."""
    clock = VirtualClock()
    instance = compile_chart(Switch).create(clock=clock)
    for event in ("switch", "nope", "switch"):
        instance.send(event, delay=100)
    with pytest.raises(TransitionNotAllowed, match="Can't Nope when in On"):
        clock.advance(0.1)
    assert [state.id for state in instance.configuration] == ["on"]
    clock.advance(0.1)
    assert [state.id for state in instance.configuration] == ["off"]
    assert clock.next_due() is None
