"""Async charts: a rule of the statechart runtime a mutation sample of
``statecharts/_runtime.py`` (seed 2602) found untested. (Apart from
test_runtime_mutants_r10.py: async charts cannot run under mutmut's trampolines, so the
mutation script runs this file only when it re-runs a survivor for real.)

Rules checked here (docs/spec.md): C5 (an event the instance ended before taking).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from statemachine.exceptions import TransitionNotAllowed

from statecharts import compile_chart

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
