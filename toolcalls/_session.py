"""A session wires the stream to execution and back (DESIGN §4).

Events go into a ``ToolCallTracker``. A call whose arguments parse (it becomes ``running``) is
registered with a ``ToolExecutor``; when its tool settles, the tracker receives the ``result``
or ``error`` event, and the settled call is handed to whoever iterates the session, to send
back to the model. The session adds no state of its own beyond which calls it is executing::

    async with ToolCallSession(tools={"search": search}) as session:
        async for settled in session.run(provider_events):
            send_back(settled.to_dict())

Leaving the ``async with`` block (or ``aclose()``) aborts tools still running; their calls, and
those still streaming arguments, end in ``error`` (kind ``aborted``) and are not reported. Every
other call the stream started is reported once: settled by its tool, or in ``error`` when it
could not run (unknown tool, arguments that do not parse or are not an object, or a stream that
ended before its arguments were complete). A call the stream itself ends is not reported.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, Self

from ._errors import InvalidEvent, SessionClosed
from ._execution import ToolCallState, ToolError
from ._executor import ToolExecutor
from ._tools import Tool, ToolFunction
from ._tracker import Outcome, ToolCallTracker
from .events import ToolCallEvent


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
        elif outcome.type == "ready":
            self._report_parse_failure(call_id)
        elif outcome.type in ("result", "error") and call_id in self._running:
            self._running.discard(call_id)
            self._silenced.add(call_id)
            self._executor.abort(call_id, "the stream ended the call")
        return outcome

    def finish(self) -> None:
        """No more events will come: calls still streaming their arguments end in ``error``
        (and are reported), and ``settled()`` ends once the running calls settle."""
        if not self._finished:
            self._finished = True
            for call in self._tracker.list():
                if call.status == "pending":
                    self._fail_unrunnable(
                        call.id, call.name, "the stream ended before the arguments were complete"
                    )
        self._wake()

    def _register(self, call_id: str) -> None:
        call = self._tracker.get(call_id)
        assert call is not None
        if not isinstance(call.args, dict):
            self._fail_unrunnable(call_id, call.name, "arguments must be a JSON object")
            return
        self._running.add(call_id)
        chunk = {"toolCallId": call_id, "toolName": call.name, "args": call.args}
        # The tracker forgot an earlier call with this id (max_history) and took a new one;
        # the executor may still keep the earlier, settled one: forget it too.
        if not self._executor.register_call(chunk) and not (
            self._executor.forget(call_id) and self._executor.register_call(chunk)
        ):
            self._running.discard(call_id)
            self._fail_unrunnable(call_id, call.name, "a call with this id is still running")

    def _report_parse_failure(self, call_id: str) -> None:
        """Report a call whose arguments did not parse (the tracker already ended it), so the
        model hears about every call it made."""
        call = self._tracker.get(call_id)
        assert call is not None
        message = call.error["message"] if isinstance(call.error, dict) else str(call.error)
        self._report(call_id, call.name, _unrunnable(call.name, message, "json_invalid"))

    def _fail_unrunnable(self, call_id: str, tool_name: str, reason: str) -> None:
        """End a call the executor cannot take in ``error``, and report it as settled."""
        error = _unrunnable(tool_name, reason, "session")
        self._tracker.apply({"type": "error", "id": call_id, "error": error.to_dict()})
        self._report(call_id, tool_name, error)

    def _report(self, call_id: str, tool_name: str, error: ToolError) -> None:
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
                if self._closed:
                    return
                if feeder is not None and feeder.done():
                    feeder.result()  # re-raise what stopped the events, if anything
                if self._finished and not self._running:
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
                    if self._closed:
                        return
                    self.apply(event)
            else:
                for event in events:
                    if self._closed:
                        return
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
        self._wake()

    async def aclose(self) -> None:
        """Abort tools still running and end ``settled()``: every call not finished (running,
        or still streaming its arguments) ends in ``error``, kind ``aborted``, unreported;
        events ``run()`` has not read yet are not applied."""
        if not self._closed:
            self._closed = True
            self._running.clear()
            await self._executor.aclose()
            for call in self._tracker.list():
                if call.status in ("pending", "running"):
                    error = ToolError.aborted(call.name, "the session closed")
                    self._tracker.apply({"type": "error", "id": call.id, "error": error.to_dict()})
        self._wake()

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


def _unrunnable(tool_name: str, reason: str, error_type: str) -> ToolError:
    """The error of a call that never reached its tool."""
    return ToolError(
        "invalid_arguments",
        f"cannot run tool {tool_name!r}: {reason}",
        {"tool_name": tool_name, "errors": [{"loc": [], "msg": reason, "type": error_type}]},
    )


def _event_id(event: Mapping[str, Any] | ToolCallEvent) -> str:
    """The id of an event the tracker already accepted."""
    if isinstance(event, Mapping):
        return str(event["id"])
    return event.id
