"""One tool call's execution, declared as a chart, and the executor's sans-I/O bookkeeping.

The chart (X2: pending -> executing -> success | error)::

    pending --start--> executing --succeed--> success
       |                   |
       +-------fail--------+-------fail-----> error

``CallBook`` keeps the calls: arrival order, idempotency by id, the queue of calls waiting for a
concurrency slot, and eviction (oldest settled first, never an in-flight call). It never runs a
tool: each operation sends events to the calls' chart instances and returns the *effects* the
asyncio shell must carry out (run a tool, stop one, report a settled call, drop an aborted
one). A call's status is its chart instance's state; nothing else sets it.
"""

from __future__ import annotations

import copy
import heapq
import pickle
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from statemachine import State, StateChart

from statecharts import Instance, _runtime, compile_chart

from ._tools import SCALARS, AbortSignal, ArgumentsInvalid, PreparedTool, copy_args, is_flat

if TYPE_CHECKING:
    import asyncio

ExecutionStatus = Literal["pending", "executing", "success", "error"]
ToolErrorKind = Literal[
    "unknown_tool",
    "invalid_arguments",
    "tool_raised",
    "timeout",
    "aborted",
    "worker_died",
    "result_unserializable",
    "cluster_unreachable",
    "interrupted",
]


class ExecutionChart(StateChart["ExecutionModel"]):
    """The lifecycle of one tool call; the model is the call's record (``ExecutionModel``).

    ``fail`` leaves ``pending`` when a call cannot run (unknown tool, invalid arguments, aborted
    while queued) and ``executing`` when the tool raised, timed out or was aborted. Final
    states absorb late events: a completion after a timeout is ignored.
    """

    catch_errors_as_events = False

    pending = State(initial=True)
    executing = State()
    success = State(final=True)
    error = State(final=True)

    start = pending.to(executing)
    succeed = executing.to(success)
    fail = pending.to(error) | executing.to(error)

    def on_succeed(self, result: Any) -> None:
        """Keep the tool's result on the call."""
        self.model.result = result

    def on_fail(self, error: ToolError) -> None:
        """Keep the structured error on the call."""
        self.model.error = error


EXECUTION = compile_chart(ExecutionChart)
_EXECUTING = EXECUTION.state("executing")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _exception_type(exc: BaseException) -> str:
    kind = type(exc)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in when the exception cannot be turned into text."""
    try:
        return str(exc)
    except Exception as problem:
        return f"<{type(exc).__name__} whose str() raised {type(problem).__name__}>"


@dataclass(frozen=True, slots=True)
class ToolError:
    """How a call ended in ``error``: a value, not an exception.

    ``kind`` says whose fault it was: ``"unknown_tool"`` and ``"invalid_arguments"`` (the model
    asked for something the registry cannot run; the tool was never called), ``"tool_raised"``,
    ``"timeout"``, ``"aborted"``; where tools run on a cluster, ``"worker_died"`` (the process
    running the tool ended mid-call), ``"result_unserializable"`` (the result could not be sent
    back) and ``"cluster_unreachable"``; after a resume, ``"interrupted"`` (the call was
    executing when its process died and was not run again). ``message`` is one readable
    sentence; ``details`` holds the facts as JSON-friendly values (``tool_name`` always, then
    ``available``, ``errors`` (pydantic's ``loc``/``msg``/``type``),
    ``exception_type``/``exception_message``, ``timeout`` or ``reason``; ``detail`` for the
    cluster's kinds). ``exception`` is the exception a tool raised, for logging (not compared).
    """

    kind: ToolErrorKind
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)
    exception: BaseException | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle and deep-copy the error; its ``exception`` goes along only when it can be
        rebuilt (many exceptions' ``__init__`` take other arguments than their ``args``), else
        ``None``: it is for logging, never compared."""
        exception = self.exception
        if exception is not None:
            try:
                pickle.loads(pickle.dumps(exception))
            except Exception:
                exception = None
        return (ToolError, (self.kind, self.message, dict(self.details), exception))

    def to_dict(self) -> dict[str, Any]:
        """The wire shape: ``{"kind", "message", "details"}`` with camelCase detail keys; a new
        object each time, sharing nothing with this error."""
        details = {_camel(key): copy.deepcopy(value) for key, value in self.details.items()}
        return {"kind": self.kind, "message": self.message, "details": details}

    @classmethod
    def unknown_tool(cls, tool_name: str, available: Iterable[str]) -> ToolError:
        """No tool of that name is registered."""
        names = sorted(available)
        listed = ", ".join(repr(name) for name in names) or "none"
        return cls(
            "unknown_tool",
            f"no tool named {tool_name!r} is registered (available: {listed})",
            {"tool_name": tool_name, "available": names},
        )

    @classmethod
    def invalid_arguments(cls, tool_name: str, errors: list[dict[str, Any]]) -> ToolError:
        """The arguments do not fit the tool's declared parameters."""
        parts = [
            f"{'.'.join(str(part) for part in error['loc']) or '(arguments)'}: {error['msg']}"
            for error in errors
        ]
        return cls(
            "invalid_arguments",
            f"invalid arguments for tool {tool_name!r}: " + "; ".join(parts),
            {"tool_name": tool_name, "errors": errors},
        )

    @classmethod
    def tool_raised(cls, tool_name: str, exc: BaseException) -> ToolError:
        """The tool raised ``exc``."""
        kind, text = _exception_type(exc), exception_text(exc)
        return cls(
            "tool_raised",
            f"tool {tool_name!r} raised {kind}" + (f": {text}" if text else ""),
            {"tool_name": tool_name, "exception_type": kind, "exception_message": text},
            exc,
        )

    @classmethod
    def timeout(cls, tool_name: str, seconds: float) -> ToolError:
        """The tool ran longer than its timeout."""
        return cls(
            "timeout",
            f"tool {tool_name!r} timed out after {seconds:g} s",
            {"tool_name": tool_name, "timeout": seconds},
        )

    @classmethod
    def aborted(cls, tool_name: str, reason: str | None) -> ToolError:
        """The call was aborted before it finished."""
        because = f": {reason}" if reason else ""
        return cls(
            "aborted",
            f"tool {tool_name!r} was aborted{because}",
            {"tool_name": tool_name, "reason": reason},
        )

    @classmethod
    def worker_died(cls, tool_name: str, detail: str) -> ToolError:
        """The process running the tool ended before the tool returned."""
        return cls(
            "worker_died",
            f"the worker running tool {tool_name!r} died: {detail}",
            {"tool_name": tool_name, "detail": detail},
        )

    @classmethod
    def result_unserializable(cls, tool_name: str, detail: str) -> ToolError:
        """The tool returned, but its result could not be sent back."""
        return cls(
            "result_unserializable",
            f"the result of tool {tool_name!r} could not be sent back: {detail}",
            {"tool_name": tool_name, "detail": detail},
        )

    @classmethod
    def cluster_unreachable(cls, tool_name: str, detail: str) -> ToolError:
        """The cluster that runs the tool could not be reached."""
        return cls(
            "cluster_unreachable",
            f"cannot run tool {tool_name!r}: the cluster is unreachable: {detail}",
            {"tool_name": tool_name, "detail": detail},
        )

    @classmethod
    def interrupted(cls, tool_name: str) -> ToolError:
        """The call was executing when the process holding it died; it was not run again."""
        return cls(
            "interrupted",
            f"tool {tool_name!r} was executing when its process stopped; it was not run again",
            {"tool_name": tool_name},
        )


@dataclass(frozen=True, slots=True)
class ExecutionView:
    """The executor's immutable view of one call, as ``calls``, ``get_call`` and ``wait`` give it.

    ``args`` is a read-only view of the arguments as registered. ``result`` is set only in
    ``success`` (``None`` may be a real result), ``error`` only in ``error``.
    """

    tool_call_id: str
    tool_name: str
    args: Mapping[str, Any]
    status: ExecutionStatus
    result: Any = None
    error: ToolError | None = None

    @property
    def settled(self) -> bool:
        """Whether the call reached ``success`` or ``error``."""
        return self.status == "success" or self.status == "error"

    def to_dict(self) -> dict[str, Any]:
        """The wire shape with camelCase keys (X12); ``result``/``error`` only when set. A new
        object each time, sharing nothing with the call (a result that cannot be copied is
        the tool's own object)."""
        args = self.args
        data: dict[str, Any] = {
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "args": copy_args(args, is_flat(args)),
            "status": self.status,
        }
        if self.status == "success":
            data["result"] = _copied(self.result)
        elif self.error is not None:
            data["error"] = self.error.to_dict()
        return data

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle and deep-copy with ``args`` as a plain dict (a read-only view of a mapping
        cannot be pickled or copied), read-only again once loaded."""
        return (
            _view,
            (
                self.tool_call_id,
                self.tool_name,
                dict(self.args),
                self.status,
                self.result,
                self.error,
            ),
        )


def _view(
    tool_call_id: str,
    tool_name: str,
    args: dict[str, Any],
    status: ExecutionStatus,
    result: Any,
    error: ToolError | None,
) -> ExecutionView:
    """An ``ExecutionView`` loaded by ``pickle`` or made by ``copy.deepcopy``."""
    return ExecutionView(tool_call_id, tool_name, MappingProxyType(args), status, result, error)


def _copied(value: Any) -> Any:
    """A deep copy of ``value``, or ``value`` itself when it cannot be copied."""
    if type(value) in SCALARS:
        return value
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


#: The name before 0.2, so views pickled under it still load (``toolcalls.ToolCallState`` warns).
ToolCallState = ExecutionView


#: The chart's nodes, for a call without a separate model: a call's record is its chart
#: instance (see ``ExecutionModel``). The binding is the one for no model, so the chart's
#: callbacks are resolved on the chart alone (the record's own names are never callbacks).
_PENDING = EXECUTION.create(None)._node
_BINDING = _PENDING.binding
if _BINDING.initial is not None or _BINDING.instance_names:  # pragma: no cover - by design
    raise RuntimeError("ExecutionChart's pending state must have no enter callback")
_EXECUTING_NODE = _BINDING.nodes["executing"]
#: The compiled transitions of the hot path (a call starting, a tool returning): run directly
#: when that is what send() would do (the instance class keeps the plain send, checked once
#: below; not re-entrant; nothing observes outcomes, as chart coverage does).
_FIRE_START = _PENDING.table["start"]
_FIRE_SUCCEED = _EXECUTING_NODE.table["succeed"]
_SEND = Instance.send
#: A raw tool's arguments, copied from the call's own when the tool starts (not before: a call
#: waiting to start holds one object less).
COPY_ON_START: Any = object()


if TYPE_CHECKING:
    _RecordBase = Instance
else:
    _RecordBase = _BINDING.cls  # the chart's instance class, for no model


class ExecutionModel(_RecordBase):
    """The record of one call, and its chart instance in one object: the chart's model is the
    record itself (``model`` is ``self`` while the call is tracked), and the shell attaches
    its task, timer, abort signal and waiters. Private to the executor.

    One object rather than a record plus an instance: with thousands of calls waiting at once,
    each object more per call is work for the cyclic garbage collector that bare
    ``asyncio.create_task`` never causes.
    """

    __slots__ = (
        "args",
        "bound",
        "dropped",
        "error",
        "handle",
        "result",
        "seq",
        "signal",
        "timer",
        "tool",
        "tool_call_id",
        "tool_name",
        "view",
        "waiters",
    )

    handle: asyncio.Task[None] | None
    timer: asyncio.TimerHandle | None
    signal: AbortSignal | None
    waiters: list[asyncio.Future[ExecutionView]] | None

    def __init__(self, tool_call_id: str, tool_name: str, args: dict[str, Any], seq: int) -> None:
        # ``EXECUTION.create(record)`` without its checks: ``pending`` has no enter callback
        # and the chart's names are all the chart's own (checked once, above).
        self._node = _PENDING
        self._pending = None
        self.model = self  # the chart's callbacks write the outcome here (a cycle, broken
        # when the call is forgotten: ``release``)
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.args = args
        self.seq = seq
        self.tool: PreparedTool | None = None
        self.bound: Any = None
        self.result: Any = None
        self.error: ToolError | None = None
        self.dropped = False
        self.view: ExecutionView | None = None
        self.handle = self.timer = self.signal = self.waiters = None

    @property
    def status(self) -> ExecutionStatus:
        """The chart's state."""
        status: ExecutionStatus = self._node.state.id  # type: ignore[assignment]
        return status

    @property
    def settled(self) -> bool:
        """Whether the chart reached a final state."""
        return self._node.terminated

    def to_view(self) -> ExecutionView:
        """The current view: built once per change of state for flat arguments (read-only,
        they share nothing), each time with a copy of nested ones, whose lists and dicts the
        receiver may change (X21)."""
        view = self.view
        if view is None:
            args = self.args
            flat = SCALARS.issuperset(map(type, args.values()))  # is_flat, inlined
            status = self.status
            view = ExecutionView(
                self.tool_call_id,
                self.tool_name,
                MappingProxyType(args if flat else copy.deepcopy(args)),
                status,
                self.result if status == "success" else None,
                self.error,
            )
            if flat:
                self.view = view
        return view

    def tool_input(self) -> Any:
        """What the tool's ``invoke`` takes, as the tool starts: the validated arguments, or a
        raw tool's own copy (made now for flat arguments)."""
        bound = self.bound
        return dict(self.args) if bound is COPY_ON_START else bound

    def release(self) -> None:
        """Break the record's cycle (its model is itself) once it is no longer tracked, so
        reference counting frees it at once."""
        self.model = None

    def __repr__(self) -> str:
        return f"<ExecutionModel {self.tool_call_id!r} {self.tool_name!r} {self.status}>"


if ExecutionModel.send is not _SEND:  # pragma: no cover - by design
    raise RuntimeError("ExecutionChart declares event options: its hot path must go through send")


EffectKind = Literal["stop", "run", "settle", "drop"]


#: What the shell must do, as ``(kind, call, reason)``: ``stop`` a call's running tool (abort
#: its signal with ``reason``, cancel its task), ``run`` its tool, report that it ``settle``-d,
#: or ``drop`` it (aborted by reset or close: stop its tool, fail its waiters with ``reason``,
#: never report it settled). A plain tuple: one is made per call on the hot path.
Effect = tuple[EffectKind, ExecutionModel, str | None]
Effects = list[Effect]


class CallBook:
    """The calls an executor tracks, and every rule about them, without any I/O.

    Operations return effects in the order to carry them out: stops, then runs, then the
    settled call. A call settles at most once; after ``clear`` or ``drop_in_flight`` its record
    is ``dropped`` and every later report about it is ignored.
    """

    def __init__(
        self, tools: Mapping[str, PreparedTool], max_history: int, max_concurrency: int | None
    ) -> None:
        self.tools = tools
        self.max_history = max_history
        self.max_concurrency = max_concurrency
        self.calls: dict[str, ExecutionModel] = {}
        self.in_flight = 0
        self.executing = 0
        self._seq = 0
        self._settled: list[tuple[int, str]] = []  # heap of (arrival, id) of tracked settled calls
        self._queue: deque[ExecutionModel] = deque()  # calls waiting for a concurrency slot
        self._left_queue = 0  # queued calls that settled while waiting (dropped lazily)

    def admit(
        self, tool_call_id: str, tool_name: str, args: dict[str, Any], flat: bool
    ) -> Effects | None:
        """Track a new call and decide its fate; ``None`` if the id is already tracked.

        ``args`` becomes the call's own (the caller copied it, or owns it and never changes
        it); ``flat`` says whether ``is_flat(args)``. An unknown tool or invalid arguments
        settle the call in ``error`` at once; otherwise it starts, or waits in ``pending``
        when every concurrency slot is taken.
        """
        if tool_call_id in self.calls:
            return None
        tool = self.tools.get(tool_name)
        if tool is None:
            return self.reject(
                tool_call_id, tool_name, args, ToolError.unknown_tool(tool_name, self.tools)
            )
        if tool.mode == "raw":  # the tool gets its own copy, unvalidated (made as it starts)
            bound: Any = COPY_ON_START if flat else copy.deepcopy(args)
        else:
            try:
                bound = tool.validate(args, flat)
            except ArgumentsInvalid as exc:
                error = ToolError.invalid_arguments(tool_name, exc.errors)
                return self.reject(tool_call_id, tool_name, args, error)
        self._seq += 1
        call = ExecutionModel(tool_call_id, tool_name, args, self._seq)
        call.tool, call.bound = tool, bound
        self.calls[tool_call_id] = call
        self.in_flight += 1
        effects: Effects
        if self.max_concurrency is not None and self.executing >= self.max_concurrency:
            self._queue.append(call)
            effects = []
        else:
            effects = [self._start(call)]
        if len(self.calls) > self.max_history and self._settled:
            self._evict()
        return effects

    def reject(
        self, tool_call_id: str, tool_name: str, args: dict[str, Any], error: ToolError
    ) -> Effects | None:
        """Track a call that cannot run, settled in ``error`` at once (its tool is never
        called); ``None`` if the id is already tracked."""
        if tool_call_id in self.calls:
            return None
        self._seq += 1
        call = ExecutionModel(tool_call_id, tool_name, args, self._seq)
        self.calls[tool_call_id] = call
        self.in_flight += 1
        return self._finish(call, "fail", error)

    def remember(
        self, tool_call_id: str, tool_name: str, args: dict[str, Any], state: ExecutionView
    ) -> None:
        """Track a call that settled elsewhere (a resumed session's), as settled, without
        running or reporting it: a re-delivery of its id is then recognised."""
        if tool_call_id in self.calls:
            return
        self._seq += 1
        call = ExecutionModel(tool_call_id, tool_name, args, self._seq)
        if state.status == "success":
            call.send("start")
            call.send("succeed", result=state.result)
        else:
            call.send("fail", error=state.error)
        self.calls[tool_call_id] = call
        heapq.heappush(self._settled, (call.seq, tool_call_id))
        if len(self.calls) > self.max_history:
            self._evict()

    def succeed(self, call: ExecutionModel, result: Any) -> Effects:
        """The tool returned ``result``; ignored if the call was dropped or already settled."""
        return self._finish(call, "succeed", result)

    def fail(self, call: ExecutionModel, error: ToolError) -> Effects:
        """The tool failed; ignored if the call was dropped or already settled."""
        return self._finish(call, "fail", error)

    def cancelled(self, call: ExecutionModel) -> Effects:
        """Someone else cancelled the call's task (``asyncio.run`` ending with calls in
        flight, typically): the call and every queued call end in ``error`` (kind
        ``aborted``); no queued call starts, since the loop may be going away."""
        if call.dropped:
            return []
        queued = list(self._queue)
        self._queue.clear()
        effects = self.fail(call, ToolError.aborted(call.tool_name, "cancelled"))
        for waiting in queued:
            effects += self.fail(waiting, ToolError.aborted(waiting.tool_name, "cancelled"))
        return effects

    def time_out(self, call: ExecutionModel) -> Effects:
        """The call's timeout expired: stop the tool and settle the call in ``error``."""
        if call.dropped or call.tool is None or call.tool.timeout is None:
            return []
        error = ToolError.timeout(call.tool_name, call.tool.timeout)
        return self._finish(call, "fail", error, True, "timeout")

    def abort(self, tool_call_id: str, reason: str | None) -> Effects | None:
        """Abort one in-flight call: it settles in ``error`` (kind ``aborted``). ``None`` when
        no in-flight call has that id."""
        call = self.calls.get(tool_call_id)
        if call is None or call.settled:
            return None
        return self._finish(call, "fail", ToolError.aborted(call.tool_name, reason), True, reason)

    def forget(self, tool_call_id: str) -> bool:
        """Forget one settled call (an in-flight one stays); return whether one was forgotten.
        Its heap entry stays behind and is skipped when it surfaces, or dropped once such
        entries outnumber the calls tracked (eviction may never come to trim them)."""
        call = self.calls.get(tool_call_id)
        if call is None or not call.settled:
            return False
        calls = self.calls
        del calls[tool_call_id]
        call.release()  # no cycle left: the record is freed at once
        settled = self._settled
        if len(settled) > 2 * len(calls) + 32:  # mostly entries of forgotten calls: drop them
            self._settled = [
                (seq, key)
                for seq, key in settled
                if (kept := calls.get(key)) is not None and kept.seq == seq
            ]
            heapq.heapify(self._settled)
        return True

    def clear(self, reason: str) -> Effects:
        """Forget every call; in-flight ones are dropped (never settled)."""
        effects = self.drop_in_flight(reason)
        for call in self.calls.values():
            call.dropped = True
            call.release()
        self.calls.clear()
        self._settled.clear()
        return effects

    def drop_in_flight(self, reason: str) -> Effects:
        """Drop every in-flight call (never settled); settled calls stay tracked."""
        dropped = [call for call in self.calls.values() if not call.settled]
        for call in dropped:
            call.dropped = True  # no event reaches its chart any more
            call.release()
            del self.calls[call.tool_call_id]
        self._queue.clear()
        self.in_flight = self.executing = 0
        return [("drop", call, reason) for call in dropped]

    # -- rules -------------------------------------------------------------------------------

    def _start(self, call: ExecutionModel) -> Effect:
        """Move a call to ``executing``; the shell runs its tool."""
        if call._node is _PENDING and call._pending is None and not _runtime._observers:
            _FIRE_START(call, (), {})  # the compiled transition, without send()'s dispatch
        else:
            call.send("start")
        call.view = None
        self.executing += 1
        return ("run", call, None)

    def _finish(
        self,
        call: ExecutionModel,
        event: str,
        value: Any,
        stop: bool = False,
        reason: str | None = None,
    ) -> Effects:
        """Send the ending event; when the chart took it, settle the call, free its slot and
        (``stop``: the end came from outside the tool) have the shell stop the tool."""
        if call.dropped:
            return []
        if event == "succeed":
            if call._node is _EXECUTING_NODE and call._pending is None and not _runtime._observers:
                outcome = _FIRE_SUCCEED(call, (), {"result": value})
            else:
                outcome = call.send(event, result=value)
        else:
            outcome = call.send(event, error=value)
        if not outcome.applied:
            return []
        call.view = None
        self.in_flight -= 1
        heapq.heappush(self._settled, (call.seq, call.tool_call_id))
        effects: Effects = []
        if outcome.source is _EXECUTING:
            self.executing -= 1
            if stop:
                effects.append(("stop", call, reason))
            if self._queue:
                self._start_queued(effects)
        elif call.tool is not None and self._queue:  # it was waiting for a slot: let it go
            self._left_queue += 1
            if self._left_queue * 2 > len(self._queue):
                self._queue = deque(c for c in self._queue if not c.settled and not c.dropped)
                self._left_queue = 0
        effects.append(("settle", call, None))
        if len(self.calls) > self.max_history:
            self._evict()
        return effects

    def _start_queued(self, effects: Effects) -> None:
        limit = self.max_concurrency
        queue = self._queue
        while queue and (limit is None or self.executing < limit):
            call = queue.popleft()
            if not call.dropped and not call.settled:
                effects.append(self._start(call))

    def _evict(self) -> None:
        calls, settled = self.calls, self._settled
        while len(calls) > self.max_history and settled:
            seq, tool_call_id = heapq.heappop(settled)
            call = calls.get(tool_call_id)
            if call is not None and call.seq == seq:  # not forgotten (or re-registered) since
                del calls[tool_call_id]
                call.release()
