"""Async charts: rules of the statechart runtime a mutation sample of
``statecharts/_runtime.py`` (seed 6421) found untested, compared with python-statemachine's
async engine. (Apart from test_runtime_mutants_r7.py: async charts cannot run under mutmut's
trampolines, so the mutation script runs this file only when it re-runs a survivor for real.)

Rules checked here (docs/spec.md): C11, C21.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
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


class Jobs(StateChart[Any]):
    """An async flat chart whose transition takes undeclared names by their prefix, with a
    ``before`` group whose first callback raises (errors reach the sender)."""

    catch_errors_as_events = False
    idle = State(initial=True)
    busy = State()
    take = idle.to(busy, event="job.*", before=["fail", "record"])
    rest = busy.to(idle)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.log: list[Any] = []
        super().__init__(*args, **kwargs)

    async def fail(self) -> None:
        self.log.append("fail")
        raise ValueError("declined")

    async def record(self) -> None:
        self.log.append("record")


def test_c21_an_undeclared_name_s_async_group_runs_to_its_end_when_one_callback_raises() -> None:
    """python-statemachine's async engine gathers a group: ``record`` still runs after
    ``fail`` raised, then the error reaches the sender; the same for a name a prefix
    matches."""

    async def run(machine: Any) -> tuple[list[str], list[Any]]:
        await machine.activate_initial_state()
        with pytest.raises(ValueError, match="declined"):
            await machine.send("job.1")
        return ids(machine), machine.log

    reference = asyncio.run(run(Jobs()))
    compiled = asyncio.run(run(compile_chart(Jobs).create()))
    assert compiled == reference == (["idle"], ["fail", "record"])


class Plain(StateChart[Any]):
    """An async chart with no custom ``__init__`` (so no instance fields of its own)."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b)

    async def on_go(self) -> None:
        await asyncio.sleep(0)


def test_c10_an_async_instance_takes_no_attribute_its_chart_does_not_declare() -> None:
    """As a synchronous chart's instance: the async instance class adds no ``__dict__``."""
    instance: Any = compile_chart(Plain).create()
    with pytest.raises(AttributeError):
        instance.undeclared = 1
    assert not hasattr(instance, "__dict__")


def test_c16_an_async_instance_s_class_keeps_the_chart_s_docstring() -> None:
    assert type(compile_chart(Plain).create()).__doc__ == Plain.__doc__
    assert Plain.__doc__
