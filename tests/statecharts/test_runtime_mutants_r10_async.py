"""Async charts: rules of the statechart runtime mutation samples of
``statecharts/_runtime.py`` (seeds 2602 and 2605) found untested. (Apart from
test_runtime_mutants_r10.py: async charts cannot run under mutmut's trampolines, so the
mutation script runs this file only when it re-runs a survivor for real.)

Rules checked here (docs/spec.md): C5 (an event the instance ended before taking), C17
(a cancelled delayed event), C6 (held callables scanned).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import TransitionNotAllowed

from statecharts import UnsupportedChart, compile_chart

from . import foreign_callables
from .test_runtime_r8 import Flag, ending_chart


@pytest.mark.parametrize("hierarchical", [False, True])
def test_c5_a_strict_async_chart_refuses_a_dropped_event_in_a_thread_that_never_sent_before(
    hierarchical: bool,
) -> None:
    """In a thread whose event loop makes its first ``send`` ever, a strict async chart whose
    macrostep ends the instance before the event sent refuses that event with
    ``TransitionNotAllowed``, as python-statemachine's async engine refuses it: whether the
    thread sent before does not change the answer."""
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

    def in_a_new_thread(compiled: bool) -> str:
        answers: list[str] = []
        failures: list[BaseException] = []

        def run() -> None:
            try:
                answers.append(asyncio.run(scenario(compiled)))
            except BaseException as error:  # reported below, in the test's thread
                failures.append(error)

        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
        assert failures == []
        return answers[0]

    assert in_a_new_thread(compiled=False) == "refused: Can't Kick when in Complete."
    assert in_a_new_thread(compiled=True) == "refused: Can't Kick when in Complete."


PINGS: list[str] = []


class Pinger(StateChart[Any]):
    """An async chart: ``ping`` logs itself."""

    idle = State(initial=True)
    ping = idle.to.itself(internal=True, on="pinged")

    async def pinged(self) -> None:
        PINGS.append("ping")


def test_c17_a_delayed_first_event_cancelled_before_it_is_awaited_answers_queued() -> None:
    """A delayed ``send`` to an async instance not started yet, cancelled by its
    ``send_id`` before its coroutine is awaited, never runs, as in python-statemachine
    (whose ``send`` answers ``None``); the compiled one answers an outcome not applied
    (``applied is False``), ``queued``, and the initial state is entered."""

    async def scenario(machine: Any) -> tuple[Any, list[str], list[str]]:
        PINGS.clear()
        sending = machine.send("ping", delay=50, send_id="x")
        machine.cancel_event("x")
        answer = await sending
        return answer, list(PINGS), [state.id for state in machine.configuration]

    reference, log, configuration = asyncio.run(scenario(Pinger()))
    assert (reference, log, configuration) == (None, [], ["idle"])
    outcome, log, configuration = asyncio.run(scenario(compile_chart(Pinger).create()))
    assert (log, configuration) == ([], ["idle"])
    assert outcome.applied is False
    assert (outcome.event, outcome.reason) == ("ping", "queued")


class HoldsAMachineCheck:
    """A model instance holding, as the guard ``allowed``, a function that hands the machine
    it is given to ``isinstance`` (python-statemachine's machine is a ``StateChart``)."""

    def __init__(self) -> None:
        self.allowed = foreign_callables.is_machine


class AsyncGuarded(StateChart[Any]):
    """An async chart (its ``enter`` of ``yes`` awaits) guarded by the model's ``allowed``."""

    a = State(initial=True)
    yes = State(final=True)
    no = State(final=True)
    go = a.to(yes, cond="allowed") | a.to(no)

    async def on_enter_yes(self) -> None:
        await asyncio.sleep(0)


def test_c6_an_async_chart_refuses_a_held_callable_that_asks_the_machine() -> None:
    """A callable the model instance holds, used by an async chart, is scanned as a
    synchronous chart scans it: python-statemachine's machine answers the guard ``True``, the
    compiled one would answer otherwise, so the run raises ``UnsupportedChart`` naming it."""

    async def run(machine: Any) -> list[str]:
        await machine.activate_initial_state()
        await machine.send("go")
        return [state.id for state in machine.configuration]

    assert asyncio.run(run(AsyncGuarded(HoldsAMachineCheck()))) == ["yes"]
    instance = compile_chart(AsyncGuarded).create(HoldsAMachineCheck())
    with pytest.raises(UnsupportedChart, match=r"HoldsAMachineCheck\.allowed "):
        asyncio.run(run(instance))
