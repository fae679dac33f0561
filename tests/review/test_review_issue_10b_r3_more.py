"""Breaks found by an independent review of issue 10 (round 3). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C3, C10, C20, C21.

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import compile_chart


class Model:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def __repr__(self) -> str:
        return "Model()"


def _ids(states: Any) -> list[str]:
    return [state.id for state in states]


class Notifier:
    """A client whose calls are coroutines (an HTTP or queue client)."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    async def notify(self, what: str) -> None:
        await asyncio.sleep(0)
        self.log.append(("notified", what))


class ReturnsAwaitable(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    async def on_enter_a(self) -> None:
        self.model.log.append("enter a")

    def on_enter_b(self) -> Any:
        return Notifier(self.model.log).notify("b")  # a plain def handing back an awaitable


async def _go(machine: Any) -> tuple[list[str], list[Any]]:
    await machine.send("go")
    await asyncio.sleep(0.01)
    return _ids(machine.configuration), list(machine.model.log)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_C21_an_awaitable_a_plain_callback_returns_is_awaited() -> None:
    """In an async chart, `on_enter_b` is a plain `def` returning its client's coroutine:
    python-statemachine's async engine awaits what a callback returns and the notification
    happens; the compiled runtime awaits only `async def` callbacks, drops the coroutine (a
    'never awaited' RuntimeWarning) and the notification is silently lost."""
    reference = asyncio.run(_go(ReturnsAwaitable(Model())))
    compiled = asyncio.run(_go(compile_chart(ReturnsAwaitable).create(Model())))
    assert reference == (["b"], ["enter a", ("notified", "b")])
    assert compiled == reference


request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)


class ReadsContext(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a, on="act")

    async def on_enter_state(self, state: Any) -> None:
        self.model.log.append(("enter", state.id, request_id.get()))

    def act(self) -> None:
        self.model.log.append(("act", request_id.get()))
        request_id.set("set by the action")


async def _in_request(machine: Any) -> tuple[list[Any], str | None]:
    await machine.activate_initial_state()
    request_id.set("req-42")
    await machine.send("go")
    return list(machine.model.log), request_id.get()


def test_C21_callbacks_run_in_the_callers_context() -> None:
    """A web handler sets a `ContextVar` (request id, tracing span) and awaits `send`: in
    python-statemachine every callback runs in the awaiting task's context, so the plain `act`
    logs `req-42` and what it sets is seen by `enter b` and the caller; the compiled runtime
    runs plain callbacks in its greenlet's own context: `act` sees `None` and its value is lost."""
    reference = asyncio.run(_in_request(ReadsContext(Model())))
    compiled = asyncio.run(_in_request(compile_chart(ReadsContext).create(Model())))
    assert reference == (
        [("enter", "a", None), ("act", "req-42"), ("enter", "b", "set by the action")],
        "set by the action",
    )
    assert compiled == reference


class Approval(StateChart[Model]):
    pending = State(initial=True)
    approved = State()
    decide = pending.to(approved) | approved.to(pending)

    def __init__(self, model: Any = None, reviewer: str = "ana", **kwargs: Any) -> None:
        self.reviewer = reviewer
        super().__init__(model, **kwargs)

    def on_enter_state(self, state: Any) -> None:
        self.model.log.append(state.id)


def test_C10_resume_of_a_flat_chart_with_an_init_starts_in_the_given_state() -> None:
    """A workflow engine resumes a checkpoint: `Chart.resume("approved", model)` of a chart with
    its own `__init__`. The runtime hands `(node, model)` to that `__init__`, so the instance's
    model is the runtime's `StateNode`, the initial state is entered again (its `enter` runs)
    and the instance is in `pending`, not `approved`."""
    model = Model()
    instance = compile_chart(Approval).resume("approved", model)
    assert instance.model is model
    assert _ids(instance.configuration) == ["approved"]
    assert model.log == []


class LazyStart(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    async def on_enter_a(self) -> None:
        self.model.log.append("enter a")


async def _fresh(machine_factory: Any) -> tuple[list[str], list[Any]]:
    machine = machine_factory()
    return _ids(machine.configuration), list(machine.model.log)


def test_C21_an_async_instance_not_yet_activated_has_no_active_state() -> None:
    """An async chart made inside a running loop has not entered its initial state yet (its
    `enter` has not run): python-statemachine's `configuration` is empty then; the compiled
    instance already reports `['a']`, so code checking where a fresh workflow is reads a state
    that was never entered."""
    reference = asyncio.run(_fresh(lambda: LazyStart(Model())))
    compiled = asyncio.run(_fresh(lambda: compile_chart(LazyStart).create(Model())))
    assert reference == ([], [])
    assert compiled == reference


def _hooked(group: str) -> type[StateChart[Model]]:
    """An async chart whose `go` has two `group` callbacks, the first raising."""

    class Hooked(StateChart[Model]):
        a = State(initial=True)
        b = State()
        go = a.to(b, **{group: ["first_hook", "second_hook"]}) | b.to(a)
        error_execution = a.to.itself(internal=True, on="handled") | b.to.itself(
            internal=True, on="handled"
        )

        def first_hook(self) -> bool:
            self.model.log.append("first")
            raise ValueError("first hook failed")

        def second_hook(self) -> bool:
            self.model.log.append("second")
            return True

        def handled(self, error: Exception) -> None:
            self.model.log.append(("handled", str(error)))

        async def on_enter_b(self) -> None:
            self.model.log.append("enter b")

    Hooked.__name__ = f"Hooked_{group}"
    return Hooked


async def _go_hooked(machine: Any) -> tuple[str | None, list[str], list[Any]]:
    try:
        await machine.send("go")
    except ValueError as error:
        return str(error), _ids(machine.configuration), list(machine.model.log)
    return None, _ids(machine.configuration), list(machine.model.log)


@pytest.mark.parametrize("group", ["validators", "before", "after"])
def test_C21_the_callbacks_after_a_failing_one_run_as_in_the_async_engine(group: str) -> None:
    """In an async chart the first of two `before` (or `after`, or validator) callbacks raises:
    python-statemachine's async engine still runs the second one before the error is handled
    (or, for a validator, raised); the compiled runtime follows the sync engine and skips it, so
    e.g. an audit hook after a failing notification hook silently never runs."""
    chart_class = _hooked(group)
    reference = asyncio.run(_go_hooked(chart_class(Model())))
    compiled = asyncio.run(_go_hooked(compile_chart(chart_class).create(Model())))
    assert "second" in reference[2]
    assert compiled == reference
