"""Where and how a tool runs: the runner seam of ``ToolExecutor`` and ``ToolCallSession``.

The executor decides *when* a call runs and keeps its lifecycle; a runner only carries out one
call: ``await runner.run(tool, args, bound, signal)`` returns the tool's result or raises. The
executor cancels that awaitable when the call is aborted or times out (after aborting
``signal``), so a runner stops remote work when it is cancelled. A failure the tool itself
did not cause (a worker died, a result could not be sent back) is raised as ``ToolFailure``
carrying the ``ToolError`` to record; any other exception is the tool's own (``tool_raised``).

``LocalRunner`` (the default) runs ``async def`` tools on the executor's loop and plain ``def``
tools in the loop's default thread pool; ``toolcalls.ray.RayRunner`` runs them on a Ray cluster.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ._errors import ToolAborted
from ._tools import AbortSignal, PreparedTool


@runtime_checkable
class Runner(Protocol):
    """Runs one tool call somewhere; ``ToolExecutor(tools, runner=...)`` takes one.

    ``check(tools)`` runs once when an executor is built, before any call: raise ``InvalidTool``
    for a tool this runner cannot run. ``run(tool, args, bound, signal)`` runs one call whose
    arguments were already validated: ``args`` is the call's JSON arguments (read them, never
    change them), ``bound`` what ``tool.invoke`` takes (the validated form). It returns the
    result, raises the tool's exception, raises ``ToolFailure`` for a failure outside the tool,
    and stops the work when cancelled.
    """

    def check(self, tools: Mapping[str, PreparedTool]) -> None:
        """Refuse (``InvalidTool``) a tool this runner cannot run."""

    async def run(
        self, tool: PreparedTool, args: Mapping[str, Any], bound: Any, signal: AbortSignal
    ) -> Any:
        """Run one call and return its result."""


class LocalRunner:
    """Runs tools in this process: ``async def`` tools on the event loop (cancelled on abort),
    plain ``def`` tools in the loop's default thread pool (signalled on abort: a thread cannot
    be killed, so its late result is dropped and it runs on until it returns)."""

    __slots__ = ()

    def check(self, tools: Mapping[str, PreparedTool]) -> None:
        """Every tool ``prepare_tool`` accepted runs locally."""

    async def run(
        self, tool: PreparedTool, args: Mapping[str, Any], bound: Any, signal: AbortSignal
    ) -> Any:
        """Run the tool here and return its result. A plain tool runs in a worker thread (with
        the caller's context variables); what it raises there, ``SystemExit`` included, comes
        back here as an exception."""
        if tool.is_async:
            return await tool.invoke(bound, signal)
        loop = asyncio.get_running_loop()
        run = contextvars.copy_context().run
        outcome: _ThreadOutcome = await loop.run_in_executor(
            None, _call_catching, run, tool.invoke, bound, signal
        )
        if outcome.raised is not None:
            raise outcome.raised
        result = outcome.value
        if inspect.isawaitable(result):
            result = await result
        return result

    def __repr__(self) -> str:
        return "LocalRunner()"


@dataclass(frozen=True, slots=True)
class _ThreadOutcome:
    """How a tool ended in its worker thread: its return value, or what it raised."""

    value: Any = None
    raised: BaseException | None = None


def _call_catching(
    run: Callable[..., Any],
    invoke: Callable[[Any, AbortSignal], Any],
    bound: Any,
    signal: AbortSignal,
) -> _ThreadOutcome:
    """Call the tool in the worker thread, catching everything it raises there: the thread
    pool would hand a ``SystemExit`` to the loop as-is, and it would end the host.

    A call aborted (or timed out) while it waited for a free worker thread never starts its
    tool; otherwise the executor hears, on its loop, that the tool starts now (its timeout
    counts from here, X15)."""
    if signal.aborted:
        return _ThreadOutcome(raised=ToolAborted(signal.reason))
    on_start, loop = signal._on_start, signal._loop
    if on_start is not None and loop is not None:
        try:
            loop.call_soon_threadsafe(on_start)
        except RuntimeError:  # the loop is closed: nobody waits for the call any more
            return _ThreadOutcome(raised=ToolAborted("its event loop was closed"))
    try:
        return _ThreadOutcome(run(invoke, bound, signal))
    except BaseException as exc:
        return _ThreadOutcome(raised=exc)


#: The runner an executor uses when none is given (it holds no state, so one is shared).
LOCAL_RUNNER = LocalRunner()
