"""Behaviour found by this round's differential variants and mutation samples (C3, C5)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from statemachine import Event, State, StateChart
from statemachine.exceptions import TransitionNotAllowed

from statecharts import compile_chart


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
