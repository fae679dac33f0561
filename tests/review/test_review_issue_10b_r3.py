"""Breaks found by an independent review of issue 10 (round 3). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C3, C7, C21.

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from statemachine import State, StateChart, StateMachine

from statecharts import UnsupportedChart, compile_chart


class Model:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def __repr__(self) -> str:
        return "Model()"


def _ids(states: Any) -> list[str]:
    return [state.id for state in states]


class SlowEntry(StateChart[Model]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b) | b.to(c) | c.to(a)

    async def on_enter_state(self, state: Any) -> None:
        self.model.log.append(state.id)
        await asyncio.sleep(0.01)


async def _two_tasks(machine: Any) -> tuple[list[Any], list[str], list[Any]]:
    await machine.activate_initial_state()
    machine.model.log.clear()
    results = await asyncio.gather(machine.send("go"), machine.send("go"), return_exceptions=True)
    errors = [result for result in results if isinstance(result, BaseException)]
    return errors, _ids(machine.configuration), list(machine.model.log)


def test_C3_two_tasks_sending_to_one_async_instance_both_run() -> None:
    """Two tasks of a workflow engine each send `go` to one async instance: python-statemachine's
    async engine queues the second behind the first and runs both (ends in `c`); the compiled
    instance raises RuntimeError in the second task and drops its event (ends in `b`). The issue
    asks for python-statemachine's async engine, refused only at compile time."""
    reference = asyncio.run(_two_tasks(SlowEntry(Model())))
    compiled = asyncio.run(_two_tasks(compile_chart(SlowEntry).create(Model())))
    assert reference == ([], ["c"], ["b", "c"])
    assert compiled == reference


class CancellableEntry(StateChart[Model]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b) | b.to(c) | c.to(a)

    async def on_enter_b(self) -> None:
        self.model.log.append("enter b")
        await asyncio.sleep(1)
        self.model.log.append("enter b done")

    async def on_enter_c(self) -> None:
        self.model.log.append("enter c")


async def _cancel_then_send(machine: Any) -> tuple[list[str], list[str]]:
    await machine.activate_initial_state()
    task = asyncio.ensure_future(machine.send("go"))
    await asyncio.sleep(0.05)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await asyncio.wait_for(machine.send("go"), 5)
    return _ids(machine.configuration), list(machine.model.log)


def test_C7_a_task_cancelled_inside_enter_leaves_the_instance_where_the_reference_does() -> None:
    """The task awaiting `send("go")` is cancelled (a timeout, a shutdown) while `enter b`
    awaits: python-statemachine is in `b` after it and the next `go` enters `c`; the compiled
    instance rolls back to `a`, so the next `go` runs `a -> b` and `enter b` a second time."""
    reference = asyncio.run(_cancel_then_send(CancellableEntry(Model())))
    compiled = asyncio.run(_cancel_then_send(compile_chart(CancellableEntry).create(Model())))
    assert reference == (["c"], ["enter b", "enter c"])
    assert compiled == reference


class TwoArgumentSuper(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="ready") | b.to(a)

    def __init__(self, model: Any = None, ready: bool = True) -> None:
        self.ready = ready
        super(TwoArgumentSuper, self).__init__(model)  # noqa: UP008 - the form under test

    def on_enter_b(self) -> None:
        self.model.log.append(("b", self.ready))


def test_C20_an_init_handing_over_with_two_argument_super_runs_or_is_refused() -> None:
    """A chart's `__init__` hands over with `super(TwoArgumentSuper, self).__init__(model)`, the
    explicit form many codebases still use: python-statemachine runs it; `compile_chart` accepts
    it, then every `create()` raises `TypeError: super(type, obj): obj must be an instance or
    subtype of type`. Run it, or refuse it at compile time as C20 refuses other hand-overs."""
    try:
        chart = compile_chart(TwoArgumentSuper)
    except UnsupportedChart:
        return
    reference = TwoArgumentSuper(Model())
    instance = chart.create(Model())
    reference.send("go")
    instance.send("go")
    assert reference.model.log == [("b", True)]
    assert instance.model.log == reference.model.log


class ParallelStay(StateMachine):
    class p(State.Parallel):
        class r1(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b)

        class r2(State.Compound):
            x = State(initial=True)
            y = State()
            go2 = x.to(y)

    stay = p.to.itself(internal=True)


def test_C19_a_snapshot_the_instance_took_restores() -> None:
    """A `StateMachine` with a parallel state takes its internal self-transition `stay`:
    python-statemachine (and, faithfully, the compiled runtime) is then in `['a', 'x']`, its
    ancestors left; `snapshot()` pictures that, and `Chart.restore` refuses its own snapshot
    (`configuration: no state of the chart is active`), so the workflow cannot be resumed."""
    chart = compile_chart(ParallelStay)
    instance = chart.create(Model())
    instance.send("stay")
    instance.send("go")
    picture = json.loads(json.dumps(instance.snapshot()))
    restored = chart.restore(picture, Model())
    assert _ids(restored.configuration) == _ids(instance.configuration)
    for machine in (instance, restored):
        machine.send("go2")
    assert _ids(restored.configuration) == _ids(instance.configuration)
