"""Streaming tool calls, tracked and run as declared statecharts.

The tracker (seed 000) routes interleaved stream events by id to one compiled chart instance
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
from ._tracker import Outcome, ToolCallTracker, tool_call_streaming_state_machine

__all__ = [
    "UNSET",
    "AbortSignal",
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
    "Outcome",
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
