"""Streaming tool calls, tracked and run as declared statecharts.

The tracker (spec section T) routes interleaved stream events by id to one compiled chart instance
per call::

    m = tool_call_streaming_state_machine()
    m.apply({"type": "start", "id": "t1", "name": "search"})
    m.get("t1")        # ToolCall snapshot, or None
    m.list()           # snapshots in start order
"""

from ._chart import ToolCallChart
from ._errors import (
    CheckpointConflict,
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
from ._execution import ExecutionChart, ExecutionStatus, ToolCallState, ToolError, ToolErrorKind
from ._executor import CallbackFailure, ToolCallReadyChunk, ToolExecutor
from ._record import UNSET, ToolCall
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
    "ExecutionChart",
    "ExecutionStatus",
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
    "ToolCall",
    "ToolCallChart",
    "ToolCallReadyChunk",
    "ToolCallSession",
    "ToolCallState",
    "ToolCallTracker",
    "ToolCallsError",
    "ToolError",
    "ToolErrorKind",
    "ToolExecutor",
    "ToolFailure",
    "tool_call_streaming_state_machine",
]


def __getattr__(name: str) -> object:
    """Deprecated names, kept for one release."""
    if name == "Outcome":
        import warnings

        warnings.warn(
            "toolcalls.Outcome is deprecated: use toolcalls.ApplyOutcome (statecharts.Outcome is "
            "another class)",
            DeprecationWarning,
            stacklevel=2,
        )
        return ApplyOutcome
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
