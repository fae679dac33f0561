"""Streaming tool calls, tracked and run as declared statecharts.

The tracker (spec section T) routes interleaved stream events by id to one compiled chart instance
per call::

    m = tool_call_streaming_state_machine()
    m.apply({"type": "start", "id": "t1", "name": "search"})
    m.get("t1")        # a ToolCallView, or None
    m.list()           # views of every call, in start order
"""

from ._chart import ToolCallChart
from ._errors import (
    CheckpointConflict,
    CheckpointError,
    ExecutorClosed,
    ImplementationFailed,
    InvalidChunk,
    InvalidEvent,
    InvalidTool,
    InvalidToolCall,
    ProtocolError,
    SessionClosed,
    SnapshotError,
    ToolAborted,
    ToolCallsError,
    ToolFailure,
)
from ._execution import ExecutionChart, ExecutionStatus, ExecutionView, ToolError, ToolErrorKind
from ._executor import CallbackFailure, ToolCallReadyChunk, ToolExecutor
from ._record import UNSET, ToolCallView
from ._runner import LocalRunner, Runner
from ._session import ToolCallSession
from ._tools import AbortSignal, Tool
from ._tracker import ApplyOutcome, ToolCallTracker, tool_call_streaming_state_machine

__all__ = [
    "UNSET",
    "AbortSignal",
    "ApplyOutcome",
    "CallbackFailure",
    "CheckpointConflict",
    "CheckpointError",
    "ExecutionChart",
    "ExecutionStatus",
    "ExecutionView",
    "ExecutorClosed",
    "ImplementationFailed",
    "InvalidChunk",
    "InvalidEvent",
    "InvalidTool",
    "InvalidToolCall",
    "LocalRunner",
    "ProtocolError",
    "Runner",
    "SessionClosed",
    "SnapshotError",
    "Tool",
    "ToolAborted",
    "ToolCallChart",
    "ToolCallReadyChunk",
    "ToolCallSession",
    "ToolCallTracker",
    "ToolCallView",
    "ToolCallsError",
    "ToolError",
    "ToolErrorKind",
    "ToolExecutor",
    "ToolFailure",
    "tool_call_streaming_state_machine",
]


#: Names before 0.2, each with the name that replaced it and why it changed. They answer for one
#: release, with a ``DeprecationWarning``.
_RENAMED: dict[str, tuple[str, str]] = {
    "Outcome": ("ApplyOutcome", "statecharts.Outcome is another class"),
    "ToolCall": ("ToolCallView", "the tracker's immutable view of one call"),
    "ToolCallState": ("ExecutionView", "the executor's immutable view of one call"),
}


def __getattr__(name: str) -> object:
    """Deprecated names, kept for one release."""
    renamed = _RENAMED.get(name)
    if renamed is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    new, why = renamed
    warnings.warn(
        f"toolcalls.{name} is deprecated: use toolcalls.{new} ({why})",
        DeprecationWarning,
        stacklevel=2,
    )
    value: object = globals()[new]
    return value
