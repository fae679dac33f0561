"""A session wires the stream to execution and back.

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

Re-delivery is harmless: while the executor still remembers an id (its ``max_history``), a
call with that id is never run or reported again, even once the tracker forgot it; the
tracker's new call takes the outcome the remembered call had (or, if its tool or arguments
differ, an error saying the id is taken).

The session hands calls to its tracker and executor through typed calls, not wire events:
arguments are parsed once (by the tracker), shared with the executor when they are flat and
copied once when they nest, and a tool's result is copied once, into the tracker.
"""

from __future__ import annotations

import asyncio
from asyncio.events import _get_running_loop as _running_loop
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Collection, Iterable, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, Final, Self

from . import _checkpoint
from ._errors import CheckpointError, InvalidEvent, SessionClosed, SnapshotError
from ._execution import ExecutionView, ToolError
from ._executor import ToolExecutor
from ._record import TRUNCATED, UNSET, ToolCallModel
from ._runner import Runner
from ._snapshot import same_json
from ._tools import SCALARS, Tool, ToolFunction, copy_args, is_flat
from ._tracker import ApplyOutcome, ToolCallTracker, copied
from .events import ToolCallEvent

#: What ``SessionClosed`` says once the session takes no more events.
_NO_MORE_EVENTS: Final = "the session takes no more events (finish() or aclose() ran)"
#: How many events ``run()`` applies from a list (or an async source that never waits) before
#: it lets the loop run the tools it started: fair to tools, without a loop turn per event.
BATCH: Final = 256


class ToolCallSession:
    """Tracks a stream of tool call events and runs each call once its arguments are ready.

    ``max_history`` bounds both the tracker and the executor (oldest finished calls are
    forgotten first, never an in-flight one); ``max_concurrency`` bounds tools running at
    once; ``runner`` decides where they run (see ``ToolExecutor``). Use it on one event loop,
    with one consumer of ``settled()``/``run()``.
    """

    def __init__(
        self,
        tools: Mapping[str, ToolFunction | Tool],
        *,
        max_history: int = 50,
        max_concurrency: int | None = None,
        runner: Runner | None = None,
    ) -> None:
        self._tracker = self._new_tracker(max_history)
        self._executor = ToolExecutor(
            tools,
            on_call_settled=self._on_settled,
            max_history=max_history,
            max_concurrency=max_concurrency,
            runner=runner,
        )
        self._running: set[str] = set()  # ids handed to the executor that have not settled
        self._ready: deque[ExecutionView] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop ready events ran on
        self._finished = False
        self._closed = False
        self._stopped = False  # finished or closed: no more events
        self._deferred: dict[str, None] = {}  # resumed calls to hand over on start_resumed()
        #: Calls refused for reusing a remembered id, by id: (tool name, arguments (for
        #: arguments that cannot run, ``{"argsText": their text}``), their error or ``None``,
        #: the remembered call they were refused against), so an identical re-delivery is
        #: reported once while the executor remembers that call.
        self._refused: dict[str, tuple[str, dict[str, Any], ToolError | None, object]] = {}
        #: The ``position`` of the checkpoint this session was resumed from (else ``None``).
        self.position: Any = None

    def _new_tracker(self, max_history: int | None) -> ToolCallTracker:
        tracker = ToolCallTracker(max_history=max_history)
        tracker._listener = self
        return tracker

    @property
    def tracker(self) -> ToolCallTracker:
        """The tracker of the stream: every call, as the stream and the tools left it."""
        return self._tracker

    @property
    def executor(self) -> ToolExecutor:
        """The executor running the calls (read it; calls registered on it directly are not
        the session's and are never reported)."""
        return self._executor

    @property
    def in_flight(self) -> int:
        """How many calls this session is executing."""
        return len(self._running)

    # -- input -------------------------------------------------------------------------------

    def apply(self, event: Mapping[str, Any] | ToolCallEvent) -> ApplyOutcome:
        """Apply one stream event; a call it makes ``running`` is registered for execution.

        Returns the tracker's outcome. Raises ``InvalidEvent`` for a malformed event,
        ``SessionClosed`` after ``finish()`` or ``aclose()``, and ``RuntimeError`` for a
        ``ready`` event applied without the session's running event loop (or from another
        thread while it runs); in every case nothing changes. When the stream itself ends a
        call whose tool is running (a ``result`` or ``error`` event), the tool is aborted and
        the call is not reported.
        """
        if self._stopped:
            raise SessionClosed(_NO_MORE_EVENTS)
        return self._tracker.apply(event)  # it calls back the three methods below

    def _before_ready(self) -> None:
        """A ``ready`` event may start a tool: once the session takes no more events (its
        tracker is public: events may reach it directly), or without a usable loop, fail
        before it is applied."""
        if self._stopped:
            raise SessionClosed(_NO_MORE_EVENTS)
        loop = _running_loop()
        if loop is None or loop is not self._loop:
            self._loop = self._executor._bind_loop()

    def _arguments_ended(self, record: ToolCallModel) -> None:
        call_id, args, executor = record.id, record.args, self._executor
        if type(args) is dict and call_id not in executor._book.calls:  # the usual case
            self._running.add(call_id)
            flat = SCALARS.issuperset(map(type, args.values()))  # is_flat, inlined
            # Flat arguments are shared (nobody changes them: the tracker hands out copies,
            # the executor a read-only view, the tool its own); nested ones are copied once.
            executor._admit(call_id, record.name, args if flat else copy_args(args, flat), flat)
        else:
            self._hand_over(record)

    def _ended_by_stream(self, record: ToolCallModel) -> None:
        call_id = record.id
        if call_id in self._running:
            self._running.discard(call_id)  # it settles now, unreported
            self._executor.abort(call_id, "the stream ended the call")
        elif self._executor.get_call(call_id) is None:
            self._report_truncated(record)

    def _report_truncated(self, record: ToolCallModel) -> None:
        """A provider adapter ended a call whose arguments were cut off (kind ``truncated``):
        the stream ended before they were complete, so it could not run, and it is reported
        in ``error`` like the calls ``finish()`` ends (S2). Other errors the stream sends for a
        call still streaming are the stream's own word, and are not reported (S3)."""
        reason = record.error
        if not (isinstance(reason, dict) and reason.get("kind") == TRUNCATED):
            return
        error = _unrunnable(record.name, str(reason.get("message", TRUNCATED)), TRUNCATED)
        # Through the executor, which remembers it: its re-delivery is not reported again.
        self._running.add(record.id)
        self._executor._reject(record.id, record.name, {}, error)

    def finish(self) -> None:
        """No more events will come: calls still streaming their arguments end in ``error``
        (and are reported), and ``settled()`` ends once the running calls settle."""
        if not self._finished:
            self._finished = self._stopped = True
            reason = "the stream ended before the arguments were complete"
            for record, status in self._tracker._unfinished():
                if status == "pending":
                    error = _unrunnable(record.name, reason, "session")
                    self._hand_over(record, error, cut_short=True)
        self._wake()

    def _hand_over(
        self, record: ToolCallModel, error: ToolError | None = None, cut_short: bool = False
    ) -> None:
        """Give the executor a call whose arguments ended (or, with ``error``, that cannot
        run; ``cut_short``: the stream ended before they were complete): it runs the tool, or
        settles the call in ``error`` at once. Either way the settled call comes back through
        ``_on_settled``."""
        call_id, name, args = record.id, record.name, record.args
        if error is None:
            if args is UNSET:  # the arguments did not parse (the tracker ended the call)
                error = _unrunnable(name, record.error["message"], "json_invalid")
            elif type(args) is not dict:
                error = _unrunnable(name, "arguments must be a JSON object", "session")
        if error is not None:
            args = {}
        executor = self._executor
        known = executor.get_call(call_id)
        if known is not None:  # re-delivery of a call the executor remembers
            if cut_short:  # a re-delivery the stream ended early: the call was reported
                self._tracker._send(call_id, "error", error.to_dict())  # type: ignore[union-attr]
            else:
                # A call that cannot run is told apart by its text (errors have no position).
                same_as = {"argsText": record.args_text} if error is not None else args
                self._redelivered(call_id, name, args, error, known, same_as)
            return
        self._running.add(call_id)
        if error is not None:
            executor._reject(call_id, name, args, error)
        else:
            flat = is_flat(args)
            executor._admit(call_id, name, args if flat else copy_args(args, flat), flat)

    def _redelivered(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        error: ToolError | None,
        known: ExecutionView,
        same_as: dict[str, Any],
    ) -> None:
        """A call the executor remembers came again. The same call (same tool, arguments
        equal as JSON, or the same reason it cannot run) is never run or reported twice: the
        tracker's call takes the remembered outcome. Another call reusing the id is not run
        either; it ends in ``error`` (its own, when its arguments cannot run, else "the id is
        taken") and is reported, so the model hears about it, once: an identical re-delivery
        of it, while the executor remembers the call it was refused against, is not."""
        unrunnable = error  # it cannot run: the same call only if the earlier one could not
        if unrunnable is not None:
            same = known.tool_name == name and known.error == unrunnable
        else:
            same = known.tool_name == name and same_json(dict(known.args), args)
        if same:
            self._record(call_id, known)
            return
        if error is None:
            reason = f"id {call_id!r} is taken by an earlier call with other arguments"
            error = _unrunnable(name, reason, "duplicate_id")
        calls = self._executor._book.calls
        holder = calls[call_id]  # the remembered call this one is refused against
        refusals = self._refused
        refused = refusals.get(call_id)
        if (
            refused is not None
            and refused[3] is holder
            and refused[0] == name
            and refused[2] == unrunnable
            and same_json(refused[1], same_as)
        ):
            self._tracker._send(call_id, "error", error.to_dict())  # reported before
            return
        refusals[call_id] = (name, copy_args(same_as, is_flat(same_as)), unrunnable, holder)
        if len(refusals) > self._executor._book.max_history:
            # Only a refusal against a call the executor still remembers can match again:
            # keep those (no more than the executor holds), forget the others.
            self._refused = {i: r for i, r in refusals.items() if calls.get(i) is r[3]}
        self._tracker._send(call_id, "error", error.to_dict())
        view = MappingProxyType(copy_args(args, is_flat(args)))
        self._ready.append(ExecutionView(call_id, name, view, "error", None, error))
        self._wake()

    # -- results -----------------------------------------------------------------------------

    def _on_settled(self, state: ExecutionView) -> None:
        """The executor settled a call: tell the tracker, and queue it for the consumer."""
        call_id = state.tool_call_id
        running = self._running
        if call_id not in running:  # ended by the stream (or not the session's)
            return
        running.discard(call_id)
        result = state.result
        if state.status == "success" and type(result) in SCALARS:  # the usual case
            self._tracker._send(call_id, "result", result)
        else:
            self._record(call_id, state)
        self._ready.append(state)
        waiter = self._waiter  # _wake(), inlined: every settled call passes here
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _record(self, call_id: str, state: ExecutionView) -> None:
        """Record how a call ended in the tracker (ignored if the tracker ended it already)."""
        tracker = self._tracker
        if state.status == "success":
            try:
                tracker._send(call_id, "result", copied(state.result, "result"))
            except InvalidEvent as problem:
                failure = {"kind": "unrecordable_result", "message": str(problem)}
                tracker._send(call_id, "error", failure)
        else:
            assert state.error is not None
            tracker._send(call_id, "error", state.error.to_dict())

    def settled(self) -> AsyncIterator[ExecutionView]:
        """Each settled call, as it settles (``success`` or ``error``), to send upstream.

        Ends after ``finish()`` once nothing is running, or when the session closes.
        """
        return self._settled(None)

    def run(
        self, events: AsyncIterable[Mapping[str, Any]] | Iterable[Mapping[str, Any]]
    ) -> AsyncIterator[ExecutionView]:
        """Apply ``events`` (read concurrently) and yield each settled call; end when the
        events are exhausted and every call settled. A malformed event stops the iteration
        with ``InvalidEvent`` at once (calls already running keep running). Stopping the
        iteration early stops reading the events."""
        return self._settled(events)

    async def _settled(
        self, events: AsyncIterable[Mapping[str, Any]] | Iterable[Mapping[str, Any]] | None
    ) -> AsyncIterator[ExecutionView]:
        self._executor._left_behind()  # its loop closed under running calls: they end now
        feeder = None if events is None else asyncio.ensure_future(self._feed(events))
        ready = self._ready
        try:
            while True:
                while ready:
                    yield ready.popleft()
                if self._closed:
                    return
                if feeder is not None and feeder.done():
                    feeder.result()  # re-raise what stopped the events, if anything
                if self._finished and not self._running:
                    return
                waiter = self._waiter = asyncio.get_running_loop().create_future()
                try:
                    await waiter
                finally:
                    self._waiter = None
        finally:
            if feeder is not None and not feeder.done():
                feeder.cancel()
                await asyncio.gather(feeder, return_exceptions=True)

    async def _feed(
        self, events: AsyncIterable[Mapping[str, Any]] | Iterable[Mapping[str, Any]]
    ) -> None:
        # ``self.apply(event)``, inlined: the tracker may change (reset) between events.
        count = 0
        try:
            if isinstance(events, AsyncIterable):
                async for event in events:
                    if self._stopped:
                        self.apply(event)  # raises SessionClosed
                    self._tracker.apply(event)
                    count += 1
                    if count == BATCH:  # a source that never waits must not starve tools
                        count = 0
                        await asyncio.sleep(0)
            else:
                for event in events:
                    if self._stopped:
                        self.apply(event)
                    self._tracker.apply(event)
                    count += 1
                    if count == BATCH:
                        count = 0
                        await asyncio.sleep(0)
            self.finish()
        except SessionClosed:
            if not self._closed:  # finish() ran meanwhile: tell the consumer
                raise
        finally:
            self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- checkpoints -------------------------------------------------------------------------

    def checkpoint(self, position: Any = None) -> dict[str, Any]:
        """A JSON-serialisable checkpoint of this session: the tracker's snapshot, the calls
        being executed (``pending`` or ``executing``), settled calls not yet handed to the
        consumer, and ``position`` (yours: where your stream stood, any JSON value).

        ``ToolCallSession.resume`` continues it, in this process or another. Raises
        ``SnapshotError`` when a value the tracker holds cannot be JSON.
        """
        executor = self._executor
        in_flight: list[tuple[str, str, str]] = []
        for call in self._tracker.list():
            if call.id in self._deferred:  # claimed for this process, about to run
                in_flight.append((call.id, call.name, "executing"))
            elif call.id in self._running:
                state = executor.get_call(call.id)
                status = "executing" if state is None else state.status
                in_flight.append((call.id, call.name, status))
        # Every settled call the executor remembers, the tracker's too: once the tracker
        # forgets one, a re-delivery of its id must still not run it again after a resume;
        # and the calls refused for reusing a remembered id, not to report them twice.
        remembered = [state for state in executor.calls if state.settled]
        return _checkpoint.take(
            self._tracker.snapshot(),
            in_flight,
            list(self._ready),
            self._finished,
            position,
            remembered,
            [
                (call_id, name, same_as, error)
                for call_id, (name, same_as, error, holder) in self._refused.items()
                if executor._book.calls.get(call_id) is holder
            ],
        )

    @classmethod
    def resume(
        cls,
        checkpoint: Mapping[str, Any],
        tools: Mapping[str, ToolFunction | Tool],
        *,
        rerun: Collection[str] = (),
        max_concurrency: int | None = None,
        runner: Runner | None = None,
    ) -> ToolCallSession:
        """A session continuing ``checkpoint`` (from ``checkpoint()``), with these tools.

        The rule for the calls it was executing: one still ``pending`` (its tool never
        started) runs now; one ``executing`` runs again only if its tool's name is in
        ``rerun`` (you say running it twice is harmless), otherwise it ends in ``error``, kind
        ``interrupted``, and is reported like any settled call. Settled calls that were not yet
        reported are reported first. ``max_history`` is the checkpoint's. Call it from the event
        loop the session will run on when calls are to run. Raises ``CheckpointError`` naming
        the field for a damaged checkpoint (``tracker.calls.0.status`` for damage in the
        tracker's snapshot it holds); nothing is started then.
        """
        session = cls._prepare_resume(
            checkpoint, tools, rerun=rerun, max_concurrency=max_concurrency, runner=runner
        )
        session._start_resumed()
        return session

    @classmethod
    def _prepare_resume(
        cls,
        checkpoint: Mapping[str, Any],
        tools: Mapping[str, ToolFunction | Tool],
        *,
        rerun: Collection[str],
        max_concurrency: int | None,
        runner: Runner | None,
    ) -> ToolCallSession:
        """``resume`` up to starting calls: everything checked, interrupted calls recorded,
        the calls to run kept aside (``checkpoint()`` lists them as ``executing``, so a claim
        saved now already says they run here)."""
        picture = _checkpoint.read(checkpoint)
        try:
            tracker = ToolCallTracker.restore(picture.tracker)
        except CheckpointError:
            raise
        except SnapshotError as damaged:  # named where it is in the checkpoint
            raise CheckpointError(f"tracker.{damaged.field}", damaged.reason) from None
        listed: set[str] = set()
        for index, (call_id, name, _state) in enumerate(picture.in_flight):
            restored = tracker.get(call_id)
            where = f"inFlight.{index}"
            if call_id in listed:
                raise CheckpointError(where, f"call {call_id!r} is listed twice")
            if restored is None or restored.status != "running":
                raise CheckpointError(where, f"call {call_id!r} is not running")
            if restored.name != name:
                raise CheckpointError(where, f"names {name!r}, the tracker {restored.name!r}")
            listed.add(call_id)
        for index, call in enumerate(tracker.list()):
            if call.status == "running" and call.id not in listed:
                raise CheckpointError(
                    f"tracker.calls.{index}", f"call {call.id!r} is running but not in flight"
                )
        max_history = tracker.max_history if tracker.max_history is not None else 50
        session = cls(
            tools, max_history=max_history, max_concurrency=max_concurrency, runner=runner
        )
        tracker._listener = session
        session._tracker = tracker
        session._finished = session._stopped = picture.finished
        session._ready.extend(picture.unreported)
        session.position = picture.position
        for settled in picture.remembered:
            session._executor._remember(settled)
        for call_id, name, state in picture.in_flight:
            if state == "pending" or name in rerun:
                session._deferred[call_id] = None
            else:
                error = ToolError.interrupted(name)
                args = tracker.get(call_id).args  # type: ignore[union-attr]
                tracker._send(call_id, "error", error.to_dict())  # may evict it: read it first
                kept = copy_args(args, is_flat(args)) if isinstance(args, dict) else {}
                interrupted = ExecutionView(
                    call_id, name, MappingProxyType(kept), "error", None, error
                )
                session._ready.append(interrupted)
                session._executor._remember(interrupted)  # delivered again: not run again
        # Refused calls reported already: not reported again.
        calls = session._executor._book.calls
        session._refused.update(
            (call_id, (name, args, error, calls[call_id]))
            for call_id, name, args, error in picture.refused
            if call_id in calls  # refused against a settled or interrupted call
        )
        return session

    def _start_resumed(self) -> None:
        """Hand over the calls ``_prepare_resume`` kept aside, in arrival order."""
        deferred, self._deferred = self._deferred, {}
        if deferred:
            self._before_ready()  # the loop the tools run on (RuntimeError without one)
        for call_id in deferred:
            record = self._tracker._record(call_id)
            assert record is not None  # restored: the tracker holds every call in flight
            self._hand_over(record)

    # -- lifecycle ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Abort every running tool and forget every call (nothing is reported for them)."""
        self._executor.reset()
        self._tracker._listener = _DROPPED  # a kept reference to it fails loudly on ready
        self._tracker = self._new_tracker(self._tracker.max_history)
        self._running.clear()
        self._ready.clear()
        self._refused.clear()
        self._wake()

    async def aclose(self) -> None:
        """Abort tools still running and end ``settled()``: every call not finished (running,
        or still streaming its arguments) ends in ``error``, kind ``aborted``, unreported;
        events ``run()`` has not read yet are not applied. Every call of it (a second one, or
        one after a cancelled one) returns once the stopped tools have finished."""
        if not self._closed:
            self._closed = self._stopped = True
            self._running.clear()
            for record, _ in self._tracker._unfinished():
                error = ToolError.aborted(record.name, "the session closed")
                self._tracker._send(record.id, "error", error.to_dict())
            self._wake()
        await self._executor.aclose()  # it aborts in-flight calls, then waits for them
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


_NO_ARGS: Final[Mapping[str, Any]] = MappingProxyType({})


class _Dropped:
    """The listener of a tracker ``reset()`` replaced: it starts nothing. A ``ready`` event
    applied to it raises before anything changes (the session runs nothing for it, and a call
    left ``running`` there would wait for ever); other events are tracked as before."""

    def _before_ready(self) -> None:
        raise SessionClosed("this tracker was dropped by reset(): apply events to the session")

    def _arguments_ended(self, record: ToolCallModel) -> None:  # pragma: no cover - never
        raise AssertionError("a ready event reached a dropped tracker")

    def _ended_by_stream(self, record: ToolCallModel) -> None:
        """A call of the dropped tracker ended: nothing runs for it."""


_DROPPED: Final = _Dropped()


def _unrunnable(tool_name: str, reason: str, error_type: str) -> ToolError:
    """The error of a call that never reached its tool."""
    return ToolError(
        "invalid_arguments",
        f"cannot run tool {tool_name!r}: {reason}",
        {"tool_name": tool_name, "errors": [{"loc": [], "msg": reason, "type": error_type}]},
    )
