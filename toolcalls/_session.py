"""A session wires the stream to execution and back (DESIGN §4).

Events go into a ``ToolCallTracker``. A call whose arguments parse (it becomes ``running``) is
registered with a ``ToolExecutor``; when its tool settles, the tracker receives the ``result``
or ``error`` event, and the settled call is handed to whoever iterates the session, to send
back to the model. The session adds no state of its own beyond which calls it is executing::

    async with ToolCallSession(tools={"search": search}) as session:
        async for settled in session.run(provider_events):
            send_back(settled.to_dict())

Leaving the ``async with`` block (or ``aclose()``) aborts tools still running; their calls end
in ``error`` (kind ``aborted``) in the tracker and are not reported.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, Self

from ._errors import InvalidEvent, ToolCallsError
from ._execution import ToolCallState, ToolError
from ._executor import ToolExecutor
from ._tools import Tool, ToolFunction
from ._tracker import Outcome, ToolCallTracker
from .events import ToolCallEvent


class SessionClosed(ToolCallsError, RuntimeError):
    """An event was applied after ``finish()`` or ``aclose()``."""


class ToolCallSession:
    """Tracks a stream of tool call events and runs each call once its arguments are ready.

    ``max_history`` bounds both the tracker and the executor (oldest finished calls are
    forgotten first, never an in-flight one); ``max_concurrency`` bounds tools running at
    once. Use it on one event loop, with one consumer of ``settled()``/``run()``.
    """

    def __init__(
        self,
        tools: Mapping[str, ToolFunction | Tool],
        *,
        max_history: int = 50,
        max_concurrency: int | None = None,
    ) -> None:
        self._tracker = ToolCallTracker(max_history=max_history)
        self._executor = ToolExecutor(
            tools,
            on_call_settled=self._on_settled,
            max_history=max_history,
            max_concurrency=max_concurrency,
        )
        self._running: set[str] = set()  # ids this session registered that have not settled
        self._silenced: set[str] = set()  # ids the stream ended while their tool still ran
        self._ready: deque[ToolCallState] = deque()
        self._wakeup: asyncio.Event | None = None
        self._finished = False
        self._closed = False

    @property
    def tracker(self) -> ToolCallTracker:
        """The tracker of the stream: every call, as the stream and the tools left it."""
        return self._tracker

    @property
    def executor(self) -> ToolExecutor:
        """The executor running the calls."""
        return self._executor

    @property
    def in_flight(self) -> int:
        """How many calls this session is executing."""
        return len(self._running)

    # -- input -------------------------------------------------------------------------------

    def apply(self, event: Mapping[str, Any] | ToolCallEvent) -> Outcome:
        """Apply one stream event; a call it makes ``running`` is registered for execution.

        Returns the tracker's outcome; raises ``InvalidEvent`` for a malformed event (nothing
        changes) and ``SessionClosed`` after ``finish()`` or ``aclose()``. When the stream
        itself ends a call whose tool is running (a ``result`` or ``error`` event), the tool
        is aborted and the call is not reported again.
        """
        if self._finished or self._closed:
            raise SessionClosed("the session takes no more events (finish() or aclose() ran)")
        outcome = self._tracker.apply(event)
        if not outcome.applied:
            return outcome
        call_id = _event_id(event)
        if outcome.type == "ready" and outcome.status == "running":
            self._register(call_id)
        elif outcome.type in ("result", "error") and call_id in self._running:
            self._running.discard(call_id)
            self._silenced.add(call_id)
            self._executor.abort(call_id, "the stream ended the call")
        return outcome

    def finish(self) -> None:
        """No more events will come: ``settled()`` ends once the running calls settle."""
        self._finished = True
        self._wake()

    def _register(self, call_id: str) -> None:
        call = self._tracker.get(call_id)
        assert call is not None
        if not isinstance(call.args, dict):
            self._report_unrunnable(call_id, call.name, "arguments must be a JSON object")
            return
        self._running.add(call_id)
        chunk = {"toolCallId": call_id, "toolName": call.name, "args": call.args}
        if not self._executor.register_call(chunk):
            self._running.discard(call_id)
            self._report_unrunnable(
                call_id, call.name, "the executor still tracks a call with this id"
            )

    def _report_unrunnable(self, call_id: str, tool_name: str, reason: str) -> None:
        """End a call the executor cannot take in ``error``, and report it as settled."""
        error = ToolError(
            "invalid_arguments",
            f"cannot run tool {tool_name!r}: {reason}",
            {"tool_name": tool_name, "errors": [{"loc": [], "msg": reason, "type": "session"}]},
        )
        self._tracker.apply({"type": "error", "id": call_id, "error": error.to_dict()})
        state = ToolCallState(call_id, tool_name, MappingProxyType({}), "error", None, error)
        self._ready.append(state)
        self._wake()

    # -- results -----------------------------------------------------------------------------

    def _on_settled(self, state: ToolCallState) -> None:
        """The executor settled a call: tell the tracker, and queue it for the consumer."""
        call_id = state.tool_call_id
        if call_id in self._silenced:
            self._silenced.discard(call_id)
            return
        self._running.discard(call_id)
        if state.status == "success":
            try:
                self._tracker.apply({"type": "result", "id": call_id, "result": state.result})
            except InvalidEvent as problem:
                failure = {"kind": "unrecordable_result", "message": str(problem)}
                self._tracker.apply({"type": "error", "id": call_id, "error": failure})
        else:
            assert state.error is not None
            self._tracker.apply({"type": "error", "id": call_id, "error": state.error.to_dict()})
        self._ready.append(state)
        self._wake()

    def settled(self) -> AsyncIterator[ToolCallState]:
        """Each settled call, as it settles (``success`` or ``error``), to send upstream.

        Ends after ``finish()`` once nothing is running, or when the session closes.
        """
        return self._settled(None)

    def run(
        self, events: AsyncIterable[Mapping[str, Any]] | Iterable[Mapping[str, Any]]
    ) -> AsyncIterator[ToolCallState]:
        """Apply ``events`` (read concurrently) and yield each settled call; end when the
        events are exhausted and every call settled. A malformed event stops the iteration
        with ``InvalidEvent`` at once (calls already running keep running)."""
        return self._settled(events)

    async def _settled(
        self, events: AsyncIterable[Mapping[str, Any]] | Iterable[Mapping[str, Any]] | None
    ) -> AsyncIterator[ToolCallState]:
        feeder = None if events is None else asyncio.create_task(self._feed(events))
        try:
            while True:
                while self._ready:
                    yield self._ready.popleft()
                if feeder is not None and feeder.done():
                    feeder.result()  # re-raise what stopped the events, if anything
                if self._closed or (self._finished and not self._running):
                    return
                wakeup = self._wakeup
                if wakeup is None:
                    wakeup = self._wakeup = asyncio.Event()
                wakeup.clear()
                await wakeup.wait()
        finally:
            if feeder is not None and not feeder.done():
                feeder.cancel()
                await asyncio.gather(feeder, return_exceptions=True)

    async def _feed(
        self, events: AsyncIterable[Mapping[str, Any]] | Iterable[Mapping[str, Any]]
    ) -> None:
        try:
            if isinstance(events, AsyncIterable):
                async for event in events:
                    self.apply(event)
            else:
                for event in events:
                    self.apply(event)
                    await asyncio.sleep(0)
            self.finish()
        finally:
            self._wake()

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()

    # -- lifecycle ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Abort every running tool and forget every call (nothing is reported for them)."""
        self._executor.reset()
        self._tracker = ToolCallTracker(max_history=self._tracker.max_history)
        self._running.clear()
        self._silenced.clear()
        self._ready.clear()

    async def aclose(self) -> None:
        """Abort tools still running (their calls end in ``error``, kind ``aborted``, and are
        not reported) and end ``settled()``."""
        if not self._closed:
            self._closed = True
            running, self._running = self._running, set()
            await self._executor.aclose()
            for call_id in running:
                error = ToolError.aborted(self._tool_name(call_id), "the session closed")
                self._tracker.apply({"type": "error", "id": call_id, "error": error.to_dict()})
        self._wake()

    def _tool_name(self, call_id: str) -> str:
        call = self._tracker.get(call_id)
        return call.name if call is not None else ""

    async def __aenter__(self) -> Self:
        await self._executor.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<ToolCallSession calls={len(self._tracker)} running={len(self._running)}>"


def _event_id(event: Mapping[str, Any] | ToolCallEvent) -> str:
    """The id of an event the tracker already accepted."""
    if isinstance(event, Mapping):
        return str(event["id"])
    return event.id
