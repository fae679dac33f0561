"""The session end to end, under Hypothesis' stateful testing.

The machine owns an event loop and steps it only when a tool ends or the test advances it, so
stream events, settlements and resets interleave with the consumer in every order. Calls
stream in (some to an unknown tool, some with arguments that do not parse or are not an
object), tools wait on futures the test opens or fails in any order, the stream may end a
running call itself, and the session may be reset. A consumer task collects what
``settled()`` yields. After every step: the tracker agrees with the executor on every call the
executor settled, a call is running in the tracker exactly when its tool is in flight, every
settled call is reported exactly once, and nothing from before a reset is reported after it.
"""

# Rules checked here (docs/spec.md): M2, S1, S2, S3, S5, S7.

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import hypothesis
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from toolcalls import AbortSignal, ExecutionView, ToolCallSession

STREAM_STATUS = {"success": "done", "error": "error"}


class SessionMachine(RuleBasedStateMachine):
    calls = Bundle("calls")
    tokens = Bundle("tokens")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.gates: dict[int, asyncio.Future[Any]] = {}
        self.session = ToolCallSession({"gate": self.tool}, max_history=1000)
        self.reported: list[ExecutionView] = []
        self.current: set[str] = set()  # ids streamed since the last reset
        self.ended_by_stream: set[str] = set()
        self.ids = itertools.count()
        self.tokens_used = itertools.count()
        self.loop.run_until_complete(self.session.__aenter__())
        self.consumer = self.loop.create_task(self.consume())

    async def tool(self, args: dict[str, Any], signal: AbortSignal) -> Any:
        return await self.gate(int(args["token"]))

    def gate(self, token: int) -> asyncio.Future[Any]:
        if token not in self.gates:
            self.gates[token] = self.loop.create_future()
        return self.gates[token]

    async def consume(self) -> None:
        while True:
            async for state in self.session.settled():
                self.reported.append(state)
            await asyncio.sleep(0)

    def step(self, rounds: int = 4) -> None:
        for _ in range(rounds):
            self.loop.run_until_complete(asyncio.sleep(0))

    def teardown(self) -> None:
        self.consumer.cancel()
        self.loop.run_until_complete(self.session.aclose())
        self.loop.run_until_complete(asyncio.gather(self.consumer, return_exceptions=True))
        self.loop.close()

    # -- the stream ----------------------------------------------------------------------------

    @initialize(target=calls)
    def first_call(self) -> str:
        return self.start("gate")

    @rule(target=calls, tool=st.sampled_from(["gate", "gate", "missing"]))
    def start(self, tool: str) -> str:
        call_id = f"c{next(self.ids)}"
        assert self.session.apply({"type": "start", "id": call_id, "name": tool}).applied
        self.current.add(call_id)
        return call_id

    @rule(target=tokens, call_id=calls)
    def ready_with_arguments(self, call_id: str) -> int:
        token = next(self.tokens_used)
        self.session.apply(
            {"type": "delta", "id": call_id, "argsTextDelta": f'{{"token": {token}}}'}
        )
        self.session.apply({"type": "ready", "id": call_id})
        return token

    @rule(call_id=calls, text=st.sampled_from(["[1, 2]", '{"token": ', "null", ""]))
    def ready_with_bad_arguments(self, call_id: str, text: str) -> None:
        self.session.apply({"type": "delta", "id": call_id, "argsTextDelta": text})
        self.session.apply({"type": "ready", "id": call_id})

    @precondition(lambda self: self.session.in_flight > 0)
    @rule(data=st.data(), kind=st.sampled_from(["result", "error"]))
    def stream_ends_a_running_call(self, data: st.DataObject, kind: str) -> None:
        running = sorted(c.id for c in self.session.tracker.list() if c.status == "running")
        self.stream_ends_the_call(data.draw(st.sampled_from(running)), kind)

    @rule(call_id=calls, kind=st.sampled_from(["result", "error"]))
    def stream_ends_the_call(self, call_id: str, kind: str) -> None:
        before = self.session.tracker.get(call_id)
        outcome = self.session.apply({"type": kind, "id": call_id, kind: "from the stream"})
        if outcome.applied and before is not None and before.status == "running":
            self.ended_by_stream.add(call_id)
            hypothesis.event("the stream ended a running call")

    # -- the tools -------------------------------------------------------------------------------

    @rule(token=tokens, value=st.integers())
    def tool_returns(self, token: int, value: int) -> None:
        gate = self.gate(token)
        if not gate.done():
            hypothesis.event("a tool returned")
            gate.set_result(value)
        self.step()

    @rule(token=tokens)
    def tool_raises(self, token: int) -> None:
        gate = self.gate(token)
        if not gate.done():
            gate.set_exception(RuntimeError(f"tool {token} failed"))
            gate.exception()  # marked as seen: a call that never ran its tool never awaits it
        self.step()

    @rule()
    def reset(self) -> None:
        if self.session.in_flight:
            hypothesis.event("reset with calls in flight")
        self.session.reset()
        self.current.clear()
        self.ended_by_stream.clear()
        self.reported.clear()
        self.step()

    @rule()
    def advance(self) -> None:
        self.step(10)

    # -- invariants -----------------------------------------------------------------------------

    @invariant()
    def tracker_agrees_with_every_settled_execution(self) -> None:
        for state in self.session.executor.calls:
            call = self.session.tracker.get(state.tool_call_id)
            assert call is not None
            if not state.settled:
                assert call.status == "running"
            elif state.tool_call_id in self.ended_by_stream:
                assert call.error == "from the stream" or call.result == "from the stream"
            elif isinstance(call.error, dict) and call.error.get("type") == "invalid_arguments":
                # The arguments did not parse: the tracker keeps the parser's own error.
                assert state.error is not None
                assert state.error.details["errors"][0]["type"] == "json_invalid"
            else:
                assert call.status == STREAM_STATUS[state.status]
                if state.status == "success":
                    assert call.result == state.result
                else:
                    assert state.error is not None
                    assert call.error == state.error.to_dict()

    @invariant()
    def running_in_the_tracker_exactly_when_its_tool_is_in_flight(self) -> None:
        running = {c.id for c in self.session.tracker.list() if c.status == "running"}
        in_flight = {s.tool_call_id for s in self.session.executor.calls if not s.settled}
        assert running == in_flight
        assert self.session.in_flight == len(in_flight)

    @invariant()
    def every_settled_call_is_reported_once_and_only_from_this_generation(self) -> None:
        ids = [state.tool_call_id for state in self.reported]
        assert len(ids) == len(set(ids))
        assert set(ids) <= self.current
        assert not set(ids) & self.ended_by_stream
        for state in self.reported:
            assert state.settled
            call = self.session.tracker.get(state.tool_call_id)
            assert call is not None
            assert call.status == STREAM_STATUS[state.status]


TestSessionEndToEnd = SessionMachine.TestCase
#: The scenarios that matter need several steps in a row, so this runs more examples than the
#: quick profile's default (never fewer than the loaded profile asks for).
TestSessionEndToEnd.settings = hypothesis.settings(
    stateful_step_count=40, max_examples=max(200, hypothesis.settings.default.max_examples)
)
