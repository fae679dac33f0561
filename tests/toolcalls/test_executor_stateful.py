"""The executor against the execution chart and a plain-Python model of section X.

``DerivedExecutorMachine`` is derived from ``ExecutionChart`` by
``statecharts.testing.chart_machine``: each chart event becomes an operation on a real executor
(``start`` registers the call, ``succeed`` completes its tool, ``fail`` aborts it, or registers
it for a tool that does not exist while it is still announced), and after every step each
call's status must equal the chart's own instance, final states absorbing late completions,
aborts and re-registrations.

``ExecutorMachine`` stays hand-written for what no single call's chart expresses: the
concurrency queue, eviction, ``reset`` and the ``on_call_settled`` log across calls.

The machine owns an event loop and steps it itself. Every tool awaits a future keyed by the
call's ``token`` argument, which the test resolves, fails or leaves hanging; "stubborn" tools
ignore cancellation and return once their future is resolved, producing late completions.
Rules register new, duplicate, unknown-tool and invalid-argument calls, complete or fail tools
in any order, abort one call, reset, and advance the loop. After every step the executor must
agree with the model: the calls tracked (ids, status, error kind, arrival order), the
``on_call_settled`` log, the number in flight.
"""

# Rules checked here (docs/spec.md): M2, X2, X4, X10, X11, X13, X18.

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from statecharts import compile_chart
from statecharts.testing import chart_machine, transition_cover
from toolcalls import AbortSignal, ExecutionChart, ExecutionView, ToolExecutor

from .executor_support import chunk

TOOLS = ["gate", "stubborn", "typed"]
Entry = tuple[str, int, str, str | None]  # (id, token, status, error kind)


@dataclass
class ModelCall:
    token: int
    tool: str
    status: str = "pending"
    kind: str | None = None


class SeedModel:
    """Section X's rules, written as plainly as possible."""

    def __init__(self, max_history: int, max_concurrency: int | None) -> None:
        self.max_history = max_history
        self.max_concurrency = max_concurrency
        self.calls: dict[str, ModelCall] = {}
        self.queue: list[str] = []
        self.log: list[Entry] = []

    @property
    def executing(self) -> list[str]:
        return [i for i, c in self.calls.items() if c.status == "executing"]

    @property
    def in_flight(self) -> list[str]:
        return [i for i, c in self.calls.items() if c.status in ("pending", "executing")]

    def register(self, call_id: str, token: int, tool: str, problem: str | None) -> bool:
        if call_id in self.calls:
            return False
        self.calls[call_id] = ModelCall(token, tool)
        if problem is not None:
            self._settle(call_id, "error", problem)
        elif self._slot_free():
            self.calls[call_id].status = "executing"
        else:
            self.queue.append(call_id)
        self._evict()
        return True

    def finish(self, call_id: str, status: str, kind: str | None) -> None:
        was_executing = self.calls[call_id].status == "executing"
        if call_id in self.queue:
            self.queue.remove(call_id)
        self._settle(call_id, status, kind)
        if was_executing:
            while self.queue and self._slot_free():
                self.calls[self.queue.pop(0)].status = "executing"
        self._evict()

    def reset(self) -> None:
        self.calls.clear()
        self.queue.clear()

    def _slot_free(self) -> bool:
        limit = self.max_concurrency
        return limit is None or len(self.executing) < limit

    def _settle(self, call_id: str, status: str, kind: str | None) -> None:
        call = self.calls[call_id]
        call.status, call.kind = status, kind
        self.log.append((call_id, call.token, status, kind))

    def _evict(self) -> None:
        while len(self.calls) > self.max_history:
            settled = [i for i, c in self.calls.items() if c.status in ("success", "error")]
            if not settled:
                return
            del self.calls[settled[0]]


class ExecutorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.futures: dict[int, asyncio.Future[Any]] = {}
        self.tokens = itertools.count()
        self.ids_used: list[str] = []
        self.orphans: list[int] = []  # stubborn tools dropped or aborted, still awaiting
        self.log: list[Entry] = []
        self.executor = ToolExecutor({})
        self.model = SeedModel(0, None)

    # -- tools whose completion the test controls -----------------------------------------

    async def gate(self, args: dict[str, Any], signal: AbortSignal) -> Any:
        return await self.futures[args["token"]]

    async def stubborn(self, args: dict[str, Any], signal: AbortSignal) -> Any:
        future = self.futures[args["token"]]
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            return await future

    async def typed(self, token: int, n: int) -> Any:
        return await self.futures[token]

    def record(self, state: ExecutionView) -> None:
        kind = state.error.kind if state.error is not None else None
        self.log.append((state.tool_call_id, state.args["token"], state.status, kind))

    def advance_loop(self) -> None:
        for _ in range(8):
            self.loop.run_until_complete(asyncio.sleep(0))

    # -- rules -----------------------------------------------------------------------------

    @initialize(
        max_history=st.integers(min_value=0, max_value=4),
        max_concurrency=st.none() | st.integers(min_value=1, max_value=3),
    )
    def build(self, max_history: int, max_concurrency: int | None) -> None:
        tools: dict[str, Any] = {"gate": self.gate, "stubborn": self.stubborn, "typed": self.typed}
        self.executor = ToolExecutor(
            tools,
            on_call_settled=self.record,
            max_history=max_history,
            max_concurrency=max_concurrency,
        )
        self.loop.run_until_complete(self.executor.__aenter__())
        self.model = SeedModel(max_history, max_concurrency)

    def _register(self, call_id: str | None, tool: str, problem: str | None = None) -> None:
        token = next(self.tokens)
        call_id = call_id or f"c{token}"
        self.futures[token] = self.loop.create_future()
        args: dict[str, Any] = {"token": token}
        if tool == "typed":
            args["n"] = "not a number" if problem == "invalid_arguments" else 1
        expected = self.model.register(call_id, token, tool, problem)
        assert self.executor.register_call(chunk(call_id, tool, **args)) is expected
        self.ids_used.append(call_id)

    @rule(tool=st.sampled_from(TOOLS))
    def register(self, tool: str) -> None:
        self._register(None, tool)

    @precondition(lambda self: self.ids_used)
    @rule(data=st.data(), tool=st.sampled_from(TOOLS))
    def register_same_id_again(self, data: st.DataObject, tool: str) -> None:
        self._register(data.draw(st.sampled_from(self.ids_used)), tool)

    @rule()
    def register_unknown_tool(self) -> None:
        self._register(None, "missing", "unknown_tool")

    @rule()
    def register_invalid_arguments(self) -> None:
        self._register(None, "typed", "invalid_arguments")

    @precondition(lambda self: self.model.executing)
    @rule(data=st.data(), succeed=st.booleans())
    def complete(self, data: st.DataObject, succeed: bool) -> None:
        call_id = data.draw(st.sampled_from(self.model.executing))
        self._resolve(self.model.calls[call_id].token, succeed)
        self.advance_loop()
        if succeed:
            self.model.finish(call_id, "success", None)
        else:
            self.model.finish(call_id, "error", "tool_raised")

    @precondition(lambda self: self.model.in_flight)
    @rule(data=st.data())
    def abort(self, data: st.DataObject) -> None:
        call_id = data.draw(st.sampled_from(self.model.in_flight))
        self._orphan([call_id])
        assert self.executor.abort(call_id, "test") is True
        self.model.finish(call_id, "error", "aborted")
        self.advance_loop()

    @rule()
    def reset(self) -> None:
        self._orphan(self.model.in_flight)
        logged = len(self.log)
        self.executor.reset()
        self.model.reset()
        self.advance_loop()
        assert len(self.log) == logged

    @precondition(lambda self: self.model.executing)
    @rule(data=st.data(), succeed=st.booleans())
    def complete_then_reset_before_the_loop_runs(self, data: st.DataObject, succeed: bool) -> None:
        call_id = data.draw(st.sampled_from(self.model.executing))
        self._resolve(self.model.calls[call_id].token, succeed)
        self.reset()

    @precondition(lambda self: self.orphans)
    @rule(data=st.data())
    def late_completion_of_a_dropped_call(self, data: st.DataObject) -> None:
        token = data.draw(st.sampled_from(self.orphans))
        self.orphans.remove(token)
        self._resolve(token, True)
        self.advance_loop()

    @rule()
    def advance(self) -> None:
        self.advance_loop()

    def _resolve(self, token: int, succeed: bool) -> None:
        future = self.futures[token]
        if succeed:
            future.set_result(f"result {token}")
        else:
            future.set_exception(RuntimeError(f"tool failed {token}"))
            future.exception()  # retrieved: a tool cancelled before awaiting it never will

    def _orphan(self, call_ids: list[str]) -> None:
        """Stubborn tools keep awaiting after their call is dropped: remember their futures."""
        for call_id in call_ids:
            call = self.model.calls[call_id]
            running = call.tool == "stubborn" and call.status == "executing"
            if running and not self.futures[call.token].done():
                self.orphans.append(call.token)

    # -- invariants ------------------------------------------------------------------------

    @invariant()
    def agrees_with_the_model(self) -> None:
        tracked = [
            (c.tool_call_id, c.args["token"], c.status, c.error.kind if c.error else None)
            for c in self.executor.calls
        ]
        expected = [(i, c.token, c.status, c.kind) for i, c in self.model.calls.items()]
        assert tracked == expected
        assert self.executor.in_flight == len(self.model.in_flight)

    @invariant()
    def on_call_settled_fires_exactly_once_per_settled_call(self) -> None:
        assert self.log == self.model.log
        tokens = [token for _, token, _, _ in self.log]
        assert len(tokens) == len(set(tokens))

    @invariant()
    def in_flight_calls_are_never_evicted(self) -> None:
        tracked = {c.tool_call_id for c in self.executor.calls}
        assert set(self.model.in_flight) <= tracked

    @invariant()
    def history_exceeds_max_only_when_everything_is_in_flight(self) -> None:
        calls = self.executor.calls
        if len(calls) > self.model.max_history:
            assert not any(c.settled for c in calls)

    def teardown(self) -> None:
        for future in self.futures.values():
            if not future.done():
                future.set_result(None)
        self.loop.run_until_complete(self.executor.aclose())
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


TestExecutorMachine = ExecutorMachine.TestCase


# -- the derived machine: the execution chart against a real executor ---------------------


class ExecutorAdapter:
    """A real ``ToolExecutor`` as the SUT of ``ExecutionChart``, one call per key.

    A key's call is announced at ``create`` and registered by ``start``; until then its status
    is ``pending``. The tool awaits a future per key, which ``succeed`` resolves."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.futures: dict[str, asyncio.Future[Any]] = {}
        self.executor = ToolExecutor({"gate": self.gate}, max_history=1000)
        self.loop.run_until_complete(self.executor.__aenter__())

    async def gate(self, args: dict[str, Any], signal: AbortSignal) -> Any:
        return await self.futures[args["key"]]

    def advance(self) -> None:
        for _ in range(6):
            self.loop.run_until_complete(asyncio.sleep(0))

    def create(self, key: str) -> None:
        self.futures[key] = self.loop.create_future()

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None:
        registered = self.executor.get_call(key) is not None
        applied: bool | None = None
        if event == "start":
            applied = self.executor.register_call(chunk(key, "gate", key=key))
        elif event == "succeed" and registered and not self.futures[key].done():
            self.futures[key].set_result(payload.get("result"))  # late ones are dropped
        elif event == "fail" and not registered:
            applied = self.executor.register_call(chunk(key, "missing", key=key))
        elif event == "fail":
            applied = self.executor.abort(key, "test")
        self.advance()
        return applied

    def configuration(self, key: str) -> set[str]:
        call = self.executor.get_call(key)
        return {"pending"} if call is None else {call.status}

    def close(self) -> None:
        for future in self.futures.values():
            if not future.done():
                future.set_result(None)
        self.loop.run_until_complete(self.executor.aclose())
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


EXECUTION = compile_chart(ExecutionChart)
DerivedExecutorMachine = chart_machine(
    EXECUTION,
    ExecutorAdapter,
    payloads={"succeed": st.fixed_dictionaries({"result": st.integers() | st.none()})},
    model=lambda key: SimpleNamespace(),
    paths=transition_cover(EXECUTION, model=lambda key: SimpleNamespace()),
)
TestExecutorMatchesTheExecutionChart = DerivedExecutorMachine.TestCase
TestExecutorMatchesTheExecutionChart.settings = settings(stateful_step_count=30)
