"""The tool executor: runs ready tool calls and tracks them (spec section X; asyncio).

The bookkeeping lives in ``CallBook`` (sans-I/O, see ``_execution``); this module is the shell
that carries out its effects: it hands calls to its runner (``_runner``: tasks and worker
threads here, or a cluster), arms timeouts, aborts signals, wakes waiters and calls
``on_call_settled``. A tool's outcome goes back to the book as
an event for the call's chart; the shell never sets a status.

Errors: ``InvalidToolCall``, ``InvalidTool``, ``ExecutorClosed`` and ``ToolAborted``, drawn with
the rest of the tree in ``_errors``; ``KeyError`` from ``wait()`` for an id that is not tracked.
How a call failed is not an exception but data: ``ExecutionView.error`` is a ``ToolError``
whose ``kind`` is ``unknown_tool``, ``invalid_arguments``, ``tool_raised``, ``timeout`` or
``aborted`` (or one a runner adds: ``worker_died``, ``result_unserializable``,
``cluster_unreachable``).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import inspect
import logging
from asyncio.events import _get_running_loop as _running_loop
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from ._errors import ExecutorClosed, InvalidToolCall, ToolAborted, ToolFailure
from ._execution import CallBook, Effects, ExecutionModel, ExecutionView, ToolError
from ._runner import LOCAL_RUNNER, LocalRunner, Runner
from ._tools import SCALARS as _SCALARS
from ._tools import (
    AbortSignal,
    PreparedTool,
    Tool,
    ToolFunction,
    copy_args,
    is_async,
    is_flat,
    prepare_tool,
)

logger = logging.getLogger("toolcalls")

SettledCallback = Callable[[ExecutionView], object]
#: How many failures of ``on_call_settled`` an executor remembers (the oldest are forgotten).
CALLBACK_ERRORS_KEPT = 100
_MISSING: Any = object()
_STR: frozenset[type] = frozenset({str})


class ToolCallReadyChunk(BaseModel):
    """The AI SDK's "tool call ready" chunk: ``{"toolCallId", "toolName", "args"}``."""

    model_config = ConfigDict(frozen=True, validate_by_name=True, validate_by_alias=True)

    tool_call_id: str = Field(alias="toolCallId", min_length=1, strict=True)
    tool_name: str = Field(alias="toolName", min_length=1, strict=True)
    args: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CallbackFailure:
    """``on_call_settled`` raised ``exception`` when told that ``call`` settled."""

    call: ExecutionView
    exception: BaseException


class ToolExecutor:
    """Runs tool calls as their arguments become ready and tracks each one's lifecycle.

    ``tools`` maps names to implementations (``(args, signal) -> result | awaitable``, or
    ``Tool(fn, timeout=...)``; see ``toolcalls._tools`` for how parameters are read).
    ``on_call_settled(state)`` runs exactly once per call that reaches ``success`` or
    ``error``, synchronously at that moment (inside ``register_call`` for a call that cannot
    run); an awaitable it returns is run as a task. ``max_history`` bounds the calls kept:
    the oldest settled ones are evicted first, never an in-flight one. ``max_concurrency``
    bounds the tools executing at once; later calls wait in ``pending``, in arrival order (a
    plain ``def`` tool that timed out or was aborted frees its slot when its call settles, while
    its thread runs on until it returns: threads cannot be killed). ``runner`` decides where
    tools run: ``LocalRunner`` (the default: this process) or ``toolcalls.ray.RayRunner``.

    Use it on one event loop, from that loop's thread, as ``async with`` (``aclose()`` on
    exit aborts in-flight calls, the counterpart of a component unmounting, X14).
    """

    def __init__(
        self,
        tools: Mapping[str, ToolFunction | Tool],
        *,
        on_call_settled: SettledCallback | None = None,
        max_history: int = 50,
        max_concurrency: int | None = None,
        runner: Runner | None = None,
    ) -> None:
        if isinstance(max_history, bool) or not isinstance(max_history, int) or max_history < 0:
            raise ValueError(f"max_history must be an int >= 0, not {max_history!r}")
        if max_concurrency is not None and (
            isinstance(max_concurrency, bool)
            or not isinstance(max_concurrency, int)
            or max_concurrency < 1
        ):
            raise ValueError(
                f"max_concurrency must be None or an int >= 1, not {max_concurrency!r}"
            )
        prepared = {name: prepare_tool(name, spec) for name, spec in tools.items()}
        if runner is None:
            runner = LOCAL_RUNNER
        elif not isinstance(runner, Runner):
            raise TypeError(f"runner must have check() and run() (a Runner), not {runner!r}")
        runner.check(prepared)
        self._runner = runner
        self._local = type(runner) is LocalRunner  # a subclass may instrument run(): call it
        self._book = CallBook(prepared, max_history, max_concurrency)
        self._on_call_settled = on_call_settled
        # An async callback's coroutine needs a loop: every call needs one then.
        self._callback_needs_loop = on_call_settled is not None and is_async(on_call_settled)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._draining: set[asyncio.Task[Any]] = set()  # stopped tools and callback tasks
        self._idle: list[asyncio.Future[None]] = []
        self._callback_errors: deque[CallbackFailure] = deque(maxlen=CALLBACK_ERRORS_KEPT)

    # -- the API of section X (X3, X12, X13) -------------------------------------------------

    def register_call(self, chunk: Mapping[str, Any] | ToolCallReadyChunk | Any) -> bool:
        """Register a ready call; return whether it is new (re-delivery of a tracked id is a
        no-op returning ``False``; an id evicted or reset since is a new call).

        Accepts a mapping with ``toolCallId``/``toolName``/``args`` (or snake_case keys), a
        ``ToolCallReadyChunk``, or any object with ``tool_call_id``, ``tool_name``, ``args``
        attributes. Raises ``InvalidToolCall`` for a malformed chunk and ``ExecutorClosed``
        after ``aclose()``, and ``RuntimeError`` when called without a running event loop (or
        from another loop than the one it runs on, or from another thread while its loop runs)
        for a call that may need one (a registered tool, or an ``async`` ``on_call_settled``);
        in every case nothing changes.
        """
        tool_call_id, tool_name, args = _read_chunk(chunk)
        book = self._book
        if self._closed or (
            (tool_name in book.tools or self._callback_needs_loop)
            and (self._loop is None or _running_loop() is not self._loop)
        ):
            self._check_open(tool_call_id, tool_name)  # raises, or binds the running loop
        if tool_call_id in book.calls:
            return False
        flat = _SCALARS.issuperset(map(type, args.values()))  # is_flat, inlined
        # copy_args, inlined
        effects = book.admit(
            tool_call_id, tool_name, dict(args) if flat else copy.deepcopy(dict(args)), flat
        )
        if effects:
            self._apply(effects)
        return True

    # -- the typed entry points a session uses (arguments copied once, at the edge) ----------

    def _check_open(self, tool_call_id: str, tool_name: str) -> None:
        """Raise, before anything changes, what ``register_call`` raises for a call that
        cannot be taken now: ``ExecutorClosed``, or ``RuntimeError`` without a usable loop."""
        if self._closed:
            raise ExecutorClosed(f"cannot register call {tool_call_id!r}: the executor is closed")
        if tool_name in self._book.tools or self._callback_needs_loop:
            self._bind_loop()  # the call may start a tool or a callback task: fail now

    def _admit(self, tool_call_id: str, tool_name: str, args: dict[str, Any], flat: bool) -> None:
        """Register a new call (its id not tracked) whose arguments the executor now owns
        (nobody changes them after); ``flat`` says whether ``is_flat(args)``. The caller
        checked what ``_check_open`` checks."""
        effects = self._book.admit(tool_call_id, tool_name, args, flat)
        if effects:
            self._apply(effects)

    def _reject(
        self, tool_call_id: str, tool_name: str, args: dict[str, Any], error: ToolError
    ) -> None:
        """Track a new call (its id not tracked) that cannot run, settled in ``error`` at once
        (``on_call_settled`` runs)."""
        effects = self._book.reject(tool_call_id, tool_name, args, error)
        if effects:
            self._apply(effects)

    def _remember(self, state: ExecutionView) -> None:
        """Track a call that settled before a resume, settled (nothing runs or is reported)."""
        args = dict(state.args)
        self._book.remember(
            state.tool_call_id, state.tool_name, copy_args(args, is_flat(args)), state
        )

    @property
    def calls(self) -> list[ExecutionView]:
        """Views of every tracked call, in arrival order."""
        return [call.to_view() for call in self._book.calls.values()]

    def get_call(self, tool_call_id: str) -> ExecutionView | None:
        """The view of one tracked call, or ``None``."""
        call = self._book.calls.get(tool_call_id)
        return None if call is None else call.to_view()

    def reset(self) -> None:
        """Abort every in-flight call and forget every call. Aborted calls never settle:
        ``on_call_settled`` is not called for them, their waiters get ``ToolAborted("reset")``
        and a late result of their tools is dropped."""
        self._apply(self._book.clear("reset"))

    async def wait(self, tool_call_id: str) -> ExecutionView:
        """The call's view once it settled. Raises ``KeyError`` if the id is not tracked,
        ``ToolAborted`` if the call is dropped by ``reset()``/``aclose()`` meanwhile, and
        ``RuntimeError`` on another loop than the one calls are running on."""
        self._left_behind()
        call = self._book.calls.get(tool_call_id)
        if call is None:
            raise KeyError(tool_call_id)
        if call.settled:
            return call.to_view()
        waiter: asyncio.Future[ExecutionView] = asyncio.get_running_loop().create_future()
        if call.waiters is None:
            call.waiters = []
        call.waiters.append(waiter)
        try:
            return await waiter
        finally:
            if waiter.cancelled() and call.waiters is not None:  # the waiter gave up
                _discard(call.waiters, waiter)

    # -- beyond the original API (X19) -------------------------------------------------------

    def forget(self, tool_call_id: str) -> bool:
        """Forget one settled call (as eviction would), so its id can be registered again;
        return whether a settled call was forgotten (an in-flight call is never forgotten)."""
        return self._book.forget(tool_call_id)

    def abort(self, tool_call_id: str, reason: str | None = "aborted") -> bool:
        """End one in-flight call in ``error`` (kind ``aborted``), stopping its tool; unlike
        ``reset`` it settles, so ``on_call_settled`` runs. Return whether a call was aborted."""
        effects = self._book.abort(tool_call_id, reason)
        if effects is None:
            return False
        self._apply(effects)
        return True

    async def join(self) -> None:
        """Wait until no call is in flight (returns at once if none is). Raises
        ``RuntimeError`` on another loop than the one calls are running on."""
        self._left_behind()
        while self._book.in_flight:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._idle.append(waiter)
            try:
                await waiter
            finally:
                if waiter.cancelled():  # the joiner gave up (a timeout): forget its waiter
                    _discard(self._idle, waiter)

    @property
    def runner(self) -> Runner:
        """Where this executor runs its tools."""
        return self._runner

    @property
    def in_flight(self) -> int:
        """How many tracked calls are ``pending`` or ``executing``."""
        return self._book.in_flight

    @property
    def callback_errors(self) -> tuple[CallbackFailure, ...]:
        """The recent failures of ``on_call_settled`` (each is also logged on "toolcalls")."""
        return tuple(self._callback_errors)

    @property
    def closed(self) -> bool:
        """Whether ``aclose()`` was called."""
        return self._closed

    async def aclose(self) -> None:
        """Abort in-flight calls (dropped as by ``reset``; settled calls stay readable), then
        wait for cancelled ``async def`` tools and pending callback tasks to finish. Worker
        threads cannot be interrupted: their signal is aborted and their result dropped."""
        if not self._closed:
            self._closed = True
            self._apply(self._book.drop_in_flight("closed"))
        while self._draining:
            await asyncio.gather(*self._draining, return_exceptions=True)

    async def __aenter__(self) -> Self:
        self._bind_loop()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        book = self._book
        return (
            f"<ToolExecutor tools={sorted(book.tools)} calls={len(book.calls)} "
            f"in_flight={book.in_flight}{' closed' if self._closed else ''}>"
        )

    def _bind_loop(self) -> asyncio.AbstractEventLoop:
        """The loop this executor runs tools on: bound when first needed (``async with``, or a
        call registered from a running loop) and bound again once that loop is closed.

        Raises ``RuntimeError``, before anything changes, when there is no usable loop (none
        bound and none running), when called from another thread while its loop runs (a
        task cannot be made there safely), or from another running loop while calls of its
        own loop are still in flight.
        """
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        loop = self._loop
        if running is not None and running is loop:
            return loop
        if loop is not None and not loop.is_closed():
            if running is not None and self._book.in_flight:
                raise RuntimeError("ToolExecutor is in use on another event loop")
            if loop.is_running():  # in its own thread, the running loop would be ``loop``
                raise RuntimeError(
                    "ToolExecutor is used from another thread than its event loop's: "
                    "hand the call over with loop.call_soon_threadsafe"
                )
            if running is None:
                return loop
        if running is None:
            raise RuntimeError("ToolExecutor needs an event loop: use it from async code")
        self._loop = running
        if loop is not None and self._book.in_flight:  # its loop was closed under its calls
            self._orphaned()
        return running

    def _left_behind(self) -> None:
        """Before waiting on the running loop for calls in flight on another loop: if that
        loop was closed, move to this one, ending them (``_orphaned``), or nothing would;
        if it is open, raise ``RuntimeError`` (as ``register_call`` does): nothing here could
        end them, the wait would never end."""
        loop = self._loop
        if loop is not None and self._book.in_flight and loop is not _running_loop():
            self._bind_loop()

    def _orphaned(self) -> None:
        """The loop the executing calls ran on was closed without stopping them: they end in
        ``error`` (kind ``aborted``) and are reported; calls waiting for a slot start on the
        new loop."""
        book = self._book
        for call in [call for call in book.calls.values() if call.status == "executing"]:
            effects = book.abort(call.tool_call_id, "its event loop was closed")
            if effects:
                self._apply(effects)

    # -- effects -----------------------------------------------------------------------------

    def _apply(self, effects: Effects) -> None:
        for kind, call, reason in effects:
            if kind == "run":
                self._run(call)
            elif kind == "settle":
                self._settle(call)
            elif kind == "stop":
                self._stop(call, reason)
            else:
                self._drop(call, reason)
        if not self._book.in_flight and self._idle:
            self._wake_idle()

    # -- running a tool: the one place that knows where and how a tool runs ---------------
    #
    # ``_run`` launches a call's tool as a task that hands it to the runner (where tools run:
    # the local runner awaits an ``async def`` tool here directly and runs any other in a
    # worker thread). However it ends, ``_execute`` reports it to the book as one event for the
    # call's chart (``succeed`` or ``fail``), and ``_stop`` abandons it. Nothing else touches
    # tasks or threads of tools.

    def _run(self, call: ExecutionModel) -> None:
        if call.settled or call.dropped:  # aborted meanwhile (by an abort callback, say)
            return
        tool, loop = call.tool, self._loop
        assert tool is not None
        assert loop is not None  # bound when the call was registered
        call.handle = loop.create_task(self._execute(call, tool))

    async def _execute(self, call: ExecutionModel, tool: PreparedTool) -> None:
        """Run the tool and report how it ended to the book, as an event for its chart.

        The call's signal is made here, when the tool starts (a task stopped before its first
        step never runs this body, and a call waiting to start holds one object less).
        Whatever the tool raises is data (kind ``tool_raised``), ``SystemExit`` included: a
        tool cannot end the host. A ``KeyboardInterrupt`` raised on the loop thread settles the
        call and goes on, so Ctrl-C still stops the program."""
        signal = self._started(call, tool)
        task = asyncio.current_task()  # (not call.handle: an eager task runs before it is set)
        bound = call.tool_input()
        try:
            if tool.is_async and self._local:  # the usual case, without a hop
                result = await tool.invoke(bound, signal)
            else:
                result = await self._runner.run(tool, call.args, bound, signal)
        except asyncio.CancelledError:
            if signal.aborted:  # we stopped it: the book already settled or dropped the call
                del task  # the error's traceback holds this frame: no cycle through the task
                raise
            if _cancelled_by_someone_else(signal, task):  # asyncio.run ending, typically
                self._cancelled(call, signal)
                raise
            # The tool raised CancelledError itself (it awaited something cancelled).
            self._apply(self._book.fail(call, ToolError.aborted(tool.name, "cancelled")))
        except ToolFailure as exc:  # the runner failed the call, not the tool
            self._apply(self._book.fail(call, exc.error))
        except ToolAborted as exc:
            self._apply(self._book.fail(call, ToolError.aborted(tool.name, exc.reason)))
        except BaseException as exc:
            if _cancelled_by_someone_else(signal, task):  # its cleanup raised while cancelled
                self._cancelled(call, signal)
            else:
                self._apply(self._book.fail(call, ToolError.tool_raised(tool.name, exc)))
            if isinstance(exc, KeyboardInterrupt) and tool.is_async:
                _passed_on(task)
                del task  # the error's traceback holds this frame: no cycle through the task
                raise
        else:
            if not signal.aborted and task is not None and task.cancelling():
                self._cancelled(call, signal)  # it swallowed the cancellation
            else:
                self._apply(self._book.succeed(call, result))

    def _started(self, call: ExecutionModel, tool: PreparedTool) -> AbortSignal:
        """The call's tool starts: make its signal, and arm its timeout, which counts from
        now (X15), not from registration. A plain ``def`` tool the local runner hands to a
        worker thread starts when a thread is free: its timeout is armed then."""
        signal = call.signal = AbortSignal()
        signal._loop = loop = self._loop
        if tool.timeout is not None and loop is not None:
            if tool.is_async or not self._local:
                call.timer = loop.call_later(tool.timeout, self._time_out, call)
            else:
                signal._on_start = functools.partial(self._arm_timeout, call)
        return signal

    def _arm_timeout(self, call: ExecutionModel) -> None:
        """A worker thread started the call's tool: its timeout counts from now (X15), unless
        the call settled or was dropped meanwhile."""
        loop, tool, signal = self._loop, call.tool, call.signal
        if call.settled or call.dropped or call.timer is not None:
            return
        if loop is None or signal is None or signal._loop is not loop:  # on another loop now
            return
        assert tool is not None
        assert tool.timeout is not None
        call.timer = loop.call_later(tool.timeout, self._time_out, call)

    def _cancelled(self, call: ExecutionModel, signal: AbortSignal) -> None:
        """Someone else cancelled the call's task (the loop is going away): abort its signal,
        so a tool in a worker thread hears of it too, and end it (and the queued calls)."""
        signal.abort("cancelled")
        self._apply(self._book.cancelled(call))

    def _time_out(self, call: ExecutionModel) -> None:
        call.timer = None
        self._apply(self._book.time_out(call))

    def _stop(self, call: ExecutionModel, reason: str | None) -> None:
        """Abandon a call's running tool: abort its signal, cancel its task."""
        if call.timer is not None:
            call.timer.cancel()
            call.timer = None
        if call.signal is not None:
            call.signal.abort(reason)
        task = call.handle
        if task is not None:
            call.handle = None
            if not task.done() and not task.get_loop().is_closed():
                task.cancel()
                self._draining.add(task)
                task.add_done_callback(self._draining.discard)

    def _settle(self, call: ExecutionModel) -> None:
        if call.timer is not None:
            call.timer.cancel()
            call.timer = None
        call.handle = None
        waiters = call.waiters
        if waiters is not None:
            call.waiters = None
            for waiter in waiters:
                if _waiting(waiter):
                    waiter.set_result(call.to_view())
        if self._on_call_settled is not None:
            self._notify(call.to_view())

    def _drop(self, call: ExecutionModel, reason: str | None) -> None:
        self._stop(call, reason)
        waiters, call.waiters = call.waiters, None
        for waiter in waiters or ():
            if _waiting(waiter):
                waiter.set_exception(ToolAborted(reason))

    def _wake_idle(self) -> None:
        idle, self._idle = self._idle, []
        for waiter in idle:
            if _waiting(waiter):
                waiter.set_result(None)

    # -- on_call_settled ---------------------------------------------------------------------

    def _notify(self, state: ExecutionView) -> None:
        callback = self._on_call_settled
        assert callback is not None
        try:
            outcome = callback(state)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # CancelledError too: the bookkeeping goes on
            self._callback_failed(state, exc)
            return
        if outcome is not None and inspect.isawaitable(outcome):
            try:
                loop = self._bind_loop()
            except RuntimeError as exc:  # a plain callback returned an awaitable, off any loop
                if inspect.iscoroutine(outcome):
                    outcome.close()
                self._callback_failed(state, exc)
                return
            task = loop.create_task(_await(outcome))
            self._draining.add(task)
            task.add_done_callback(lambda done: self._callback_done(state, done))

    def _callback_done(self, state: ExecutionView, task: asyncio.Task[Any]) -> None:
        self._draining.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exception = task.exception()
            assert exception is not None
            self._callback_failed(state, exception)

    def _callback_failed(self, state: ExecutionView, exc: BaseException) -> None:
        logger.error(
            "on_call_settled raised for tool call %r (%s)",
            state.tool_call_id,
            state.status,
            exc_info=exc,
        )
        self._callback_errors.append(CallbackFailure(state, exc))


def _cancelled_by_someone_else(signal: AbortSignal, task: asyncio.Task[Any] | None) -> bool:
    """Whether the running tool's ``task`` was cancelled, not by the executor (which aborts
    the signal first): the loop is going away, whatever the tool did about it."""
    return not signal.aborted and task is not None and task.cancelling() > 0


def _passed_on(task: asyncio.Task[Any] | None) -> None:
    """The exception ending ``task`` goes on to the host through the loop: once the task is
    done, read it there, or asyncio would also log it as never retrieved."""
    if task is not None:
        task.add_done_callback(_retrieved)


def _retrieved(task: asyncio.Task[Any]) -> None:
    task.exception()


def _waiting(waiter: asyncio.Future[Any]) -> bool:
    """Whether a waiter still waits (not done, and its loop not closed under it)."""
    return not waiter.done() and not waiter.get_loop().is_closed()


def _discard(waiters: list[Any], waiter: Any) -> None:
    """Remove ``waiter`` from ``waiters`` if it is there."""
    with contextlib.suppress(ValueError):
        waiters.remove(waiter)


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _read_chunk(chunk: Any) -> tuple[str, str, Mapping[str, Any]]:
    """``(tool_call_id, tool_name, args)`` of a ready chunk; raises ``InvalidToolCall``."""
    if type(chunk) is dict:  # the usual case, checked without the generic path's cost
        tool_call_id, tool_name = chunk.get("toolCallId"), chunk.get("toolName")
        args = chunk.get("args", _MISSING)
        if (
            type(tool_call_id) is str
            and tool_call_id
            and type(tool_name) is str
            and tool_name
            and type(args) is dict
            and _STR.issuperset(map(type, args))  # every key a plain str
        ):
            return tool_call_id, tool_name, args
    if isinstance(chunk, Mapping):
        tool_call_id = _key(chunk, "toolCallId", "tool_call_id")
        tool_name = _key(chunk, "toolName", "tool_name")
        args = chunk.get("args", _MISSING)
    elif hasattr(chunk, "tool_call_id") and hasattr(chunk, "tool_name"):
        tool_call_id, tool_name = chunk.tool_call_id, chunk.tool_name
        args = getattr(chunk, "args", _MISSING)
    else:
        raise InvalidToolCall(
            "chunk", f"expected a mapping or a ToolCallReadyChunk, got {type(chunk).__name__}"
        )
    _require_name("toolCallId", tool_call_id)
    _require_name("toolName", tool_name)
    if args is _MISSING:
        return tool_call_id, tool_name, {}
    if not isinstance(args, Mapping):
        raise InvalidToolCall("args", f"must be a mapping, got {type(args).__name__}")
    for key in args:
        if not isinstance(key, str):  # a JSON object's keys are strings, as the model says
            raise InvalidToolCall("args", f"keys must be strings, got {type(key).__name__}")
    return tool_call_id, tool_name, args


def _key(chunk: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = chunk.get(camel, _MISSING)
    return chunk.get(snake, _MISSING) if value is _MISSING else value


def _require_name(field: str, value: Any) -> None:
    if value is _MISSING:
        raise InvalidToolCall(field, "missing")
    if not isinstance(value, str):
        raise InvalidToolCall(field, f"must be a string, got {type(value).__name__}")
    if not value:
        raise InvalidToolCall(field, "must not be empty")
