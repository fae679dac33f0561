"""Async charts: rules of the statechart runtime a mutation sample of
``statecharts/_runtime.py`` (seed 6421) found untested, compared with python-statemachine's
async engine. (Apart from test_runtime_mutants_r7.py: async charts cannot run under mutmut's
trampolines, so the mutation script runs this file only when it re-runs a survivor for real.)

Rules checked here (docs/spec.md): C11, C21.
"""

from __future__ import annotations

import asyncio
from typing import Any

from statemachine import State, StateChart

from statecharts import compile_chart


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


class Relay(StateChart[Any]):
    """An async chart whose entry callback raises the next event, with a payload."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b)
    hop = b.to(c)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.log: list[Any] = []
        super().__init__(*args, **kwargs)

    async def on_enter_b(self) -> None:
        await self.raise_("hop", 7)

    async def on_hop(self, *args: Any) -> None:
        self.log.append(("hop", args))


def test_c21_an_event_raised_from_an_async_callback_runs_by_its_name_with_its_payload() -> None:
    async def run(machine: Any) -> tuple[list[str], list[Any]]:
        await machine.activate_initial_state()
        await machine.send("go")
        return ids(machine), machine.log

    reference = asyncio.run(run(Relay()))
    compiled = asyncio.run(run(compile_chart(Relay).create()))
    assert compiled == reference == (["c"], [("hop", (7,))])
