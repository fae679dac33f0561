"""Behaviour found by this round's differential variants and mutation samples (C3, C5)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from statemachine import State, StateChart
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
