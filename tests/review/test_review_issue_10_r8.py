"""Review round 8 of issue 10: breaks found against python-statemachine 3.2's own engines."""

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
        self.log: list[Any] = []


def _ending(hierarchical: bool) -> type[StateChart]:  # type: ignore[type-arg]
    """A strict chart with an async callback that an eventless transition ends once ``flag``
    is set, and an event ``kick``."""
    if hierarchical:

        class Nested(StateChart):  # type: ignore[type-arg]
            allow_event_without_transition = False

            class work(State.Compound):
                queued = State(initial=True)
                done = State(final=True)
                queued.to(done, cond="flag")

            complete = State(final=True)
            kick = work.to.itself()
            done_state_work = work.to(complete)

            async def on_enter_complete(self) -> None:
                await asyncio.sleep(0)

        return Nested

    class Flat(StateChart):  # type: ignore[type-arg]
        allow_event_without_transition = False

        queued = State(initial=True)
        complete = State(final=True)
        queued.to(complete, cond="flag")
        kick = queued.to.itself()

        async def on_enter_complete(self) -> None:
            await asyncio.sleep(0)

    return Flat


def _outcome(machine: Any) -> str:
    try:
        machine.send("kick")
    except TransitionNotAllowed as error:
        return f"refused: {error}"
    return "dropped"


@pytest.mark.parametrize("hierarchical", [False, True])
def test_c15_an_async_chart_sent_to_without_a_loop_drops_the_event_an_eventless_end_came_before(
    hierarchical: bool,
) -> None:
    """An async chart's ``send`` without a running event loop runs to completion (C21).
    python-statemachine's async engine then gives the event no future (there is no running
    loop when it is put), so when the eventless transitions taken before it end the machine
    the event is dropped quietly: ``send`` returns None, even for a strict chart. The compiled
    async instance refuses it with ``TransitionNotAllowed`` ("Can't Kick when in Complete."),
    as if a caller awaited it."""
    declared = _ending(hierarchical)
    reference_model, model = Flag(), Flag()
    reference, instance = declared(reference_model), compile_chart(declared).create(model)
    reference_model.flag = model.flag = True
    assert _outcome(reference) == "dropped"
    assert reference.is_terminated
    assert _outcome(instance) == "dropped"
    assert instance.is_terminated


#: What the delayed chart's callbacks saw, in order.
LOG: list[tuple[Any, ...]] = []


class Delayed(StateChart):  # type: ignore[type-arg]
    """``tick`` is declared with a 50 ms delay and has an async callback; ``poke`` is declared
    internal."""

    a = State(initial=True)
    b = State()
    tick = Event(a.to(b) | b.to(a), delay=50)
    poke = Event(a.to.itself(internal=True) | b.to.itself(internal=True), internal=True)
    plain = a.to(b) | b.to(a)

    async def on_tick(self, *args: Any) -> None:
        LOG.append(("tick", args))

    def on_poke(self, *args: Any) -> None:
        LOG.append(("poke", args))

    async def on_plain(self, *args: Any) -> None:
        LOG.append(("plain", args))


def _delayed(compiled: bool, scenario: Any) -> Any:
    async def main() -> Any:
        LOG.clear()
        machine: Any = compile_chart(Delayed).create() if compiled else Delayed()
        await machine.activate_initial_state()
        answer = await scenario(machine)
        return answer, [state.id for state in machine.configuration], list(LOG)

    return asyncio.run(main())


@pytest.mark.parametrize("declared", [True, False])
def test_c17_cancel_event_from_another_task_reaches_an_awaited_delayed_send(
    declared: bool,
) -> None:
    """A task awaits ``send`` of a delayed event with a ``send_id`` (declared delay, or
    ``delay=50``); 10 ms later another task calls ``cancel_event(send_id)``.
    python-statemachine put the event on its queue when ``send`` was called, so the cancel
    drops it: it never runs and the instance stays in ``a``. The compiled async instance runs
    it anyway once due (``on_tick`` called, in ``b``)."""

    async def scenario(machine: Any) -> None:
        event = "tick" if declared else "plain"
        options = {} if declared else {"delay": 50}
        waiting = asyncio.ensure_future(machine.send(event, send_id="s1", **options))
        await asyncio.sleep(0.01)
        machine.cancel_event("s1")
        await waiting

    reference = _delayed(False, scenario)
    assert reference == (None, ["a"], [])
    assert _delayed(True, scenario)[1:] == reference[1:]


@pytest.mark.parametrize("declared", [True, False])
def test_c17_a_delayed_send_not_yet_awaited_is_queued_when_called(declared: bool) -> None:
    """``send`` of a delayed event (declared delay, or ``delay=50``) is called and not awaited,
    then ``await send("poke", 2)``: python-statemachine put the delayed event when ``send``
    was called, so poke's processing loop takes poke, then waits for the delayed event and
    runs it (in ``b`` once poke's send returns; a coroutine never awaited still ran). The
    compiled async instance never queued it: poke's send returns in ``a`` and the delayed
    event never runs."""

    async def scenario(machine: Any) -> None:
        event = "tick" if declared else "plain"
        options = {} if declared else {"delay": 50}
        later = machine.send(event, 1, **options)  # never awaited
        await machine.send("poke", 2)
        later.close()

    reference = _delayed(False, scenario)
    assert reference[1] == ["b"]
    assert _delayed(True, scenario)[1:] == reference[1:]


@pytest.mark.parametrize(
    ("event", "options"),
    [("tick", {"internal": True}), ("poke", {"delay": 10})],
)
def test_c17_a_delayed_internal_send_is_refused_when_called(
    event: str, options: dict[str, Any]
) -> None:
    """From a task, ``raise_("tick")`` (declared delay), ``send("tick", internal=True)`` and
    ``send("poke", delay=10)`` (declared internal) ask for a delayed internal event:
    python-statemachine's ``send`` raises ``InvalidDefinition`` when called, before any
    coroutine exists. The compiled async instance returns a coroutine, and raises only once it
    is awaited (a caller guarding the call alone, or gathering later, sees no error then)."""
    from statemachine.exceptions import InvalidDefinition

    async def scenario(machine: Any) -> str:
        calls = [lambda: machine.send(event, **options)]
        if event == "tick":
            calls.append(lambda: machine.raise_("tick"))
        answers = []
        for call in calls:
            try:
                pending = call()
            except InvalidDefinition:
                answers.append("refused when called")
                continue
            try:
                await pending
            except InvalidDefinition:
                answers.append("refused when awaited")
        return ",".join(answers)

    reference = _delayed(False, scenario)
    assert reference[0].split(",")[0] == "refused when called"
    assert _delayed(True, scenario) == reference


def test_c5_an_applied_outcome_names_as_target_a_state_the_instance_is_in() -> None:
    """Oracle gap (``check_outcome`` asserts only ``target is not None`` for an applied
    outcome). ``resume`` goes from ``paused`` to a shallow history state with no default
    and nothing recorded: python-statemachine's engine ends with an empty configuration, and
    so does the compiled instance. The compiled outcome is applied with ``target`` ``paused``,
    the state the instance just left, where ``Outcome`` promises "``target`` the state the
    instance is in now" (``instance.state`` says ``paused`` too)."""
    from statemachine import HistoryState

    class Doc(StateChart):  # type: ignore[type-arg]
        class form(State.Compound):
            shallow = HistoryState()
            step1 = State(initial=True)
            step2 = State()
            nxt = step1.to(step2)

        paused = State(initial=True)
        resume = paused.to(form.shallow)
        pause = form.to(paused)

    reference, instance = Doc(), compile_chart(Doc).create()
    reference.send("resume")
    outcome = instance.send("resume")
    assert [state.id for state in reference.configuration] == []
    assert [state.id for state in instance.configuration] == []
    assert outcome.applied
    assert outcome.target is None or outcome.target.id in {
        state.id for state in instance.configuration
    }, outcome.target.id
