"""Every error ``toolcalls`` raises on purpose, in one tree: whose fault it was, and where (P2).

::

    ToolCallsError                        base of every error below
    ├── _FieldError (ValueError)          a value at ``field`` was rejected for ``reason``
    │   ├── InvalidChunk                  a provider chunk an adapter cannot read
    │   ├── InvalidEvent                  the stream broke the protocol: a malformed event (T17)
    │   ├── InvalidToolCall               register_call() got a malformed chunk (X20)
    │   └── SnapshotError                 a tracker snapshot is damaged, of an unknown
    │       │                             version, or holds a value JSON cannot (T22)
    │       └── CheckpointError           a session checkpoint (which holds a tracker
    │                                     snapshot) is damaged or does not fit (R6)
    ├── InvalidTool (TypeError)           ToolExecutor() got a tool it cannot call (X7)
    ├── ExecutorClosed (RuntimeError)     register_call() after aclose() (X14)
    ├── SessionClosed (RuntimeError)      an event applied after finish() or aclose() (S5)
    ├── StreamSuperseded (RuntimeError)   an adapter's events() was handed over to another
    │                                     stream before this one ended (A1)
    ├── CheckpointConflict (RuntimeError) another process saved or resumed the checkpoint
    │                                     since: this one no longer owns the stream
    ├── ToolAborted                       the call was aborted: AbortSignal.raise_if_aborted(),
    │                                     or wait() for a call dropped by reset()/aclose() (X13)
    ├── ProtocolError (RuntimeError)      an implementation under the conformance suite broke
    │                                     the JSON-lines protocol (no answer, not JSON, died)
    ├── ImplementationFailed              an implementation under the conformance suite
    │                                     answered a request with a failure, or raised
    └── ToolFailure                       a runner failed a call outside its tool (a worker
                                          died...): the executor records its ToolError

Whose fault: the four field errors are the input's (a provider's stream, the stream of
events, the caller's chunk, a stored snapshot), and name the field and the reason as
attributes, so a caller can log them or map them to a response without parsing the message;
``InvalidTool`` is the developer's; ``ExecutorClosed`` and ``SessionClosed`` are a use after
the end; the conformance errors are those of the implementation that ``toolcalls conformance``
checks. Raising any of them leaves the tracker, executor, session or adapter exactly as it was.

How a *tool* failed is not an exception but data: a call ends in ``error`` with a ``ToolError``
whose ``kind`` is ``unknown_tool``, ``invalid_arguments``, ``tool_raised``, ``timeout`` or
``aborted`` (X9), and where tools run on a cluster ``worker_died``, ``result_unserializable``,
``cluster_unreachable``, or ``interrupted`` after a resume; a runner hands such an error to the
executor as ``ToolFailure``, which the executor turns into that data. Outside the tree:
``KeyError`` from ``ToolExecutor.wait()`` for an id that is not tracked, ``RuntimeError`` from
``register_call()`` without a usable event loop (X20), and ``ValueError`` for a constructor
option out of range (``max_history``, ``timeout`` ...).
"""

from __future__ import annotations

from typing import Any


class ToolCallsError(Exception):
    """Base class of every error ``toolcalls`` raises on purpose."""


class _FieldError(ToolCallsError, ValueError):
    """A value at ``field`` was rejected because of ``reason``."""

    subject = "value"

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"invalid {self.subject}: {field}: {reason}")


class InvalidChunk(_FieldError):
    """A provider chunk that breaks its protocol (``toolcalls.adapters``); nothing was changed."""

    subject = "provider chunk"


class InvalidEvent(_FieldError):
    """A malformed stream event; nothing was changed."""

    subject = "event"


class InvalidToolCall(_FieldError):
    """A chunk ``register_call`` cannot read; ``field`` and ``reason`` say what is wrong."""

    subject = "tool call chunk"


class SnapshotError(_FieldError):
    """A tracker snapshot that cannot be taken or restored; nothing was built."""

    subject = "snapshot"


class CheckpointError(SnapshotError):
    """A session checkpoint that cannot be read or resumed; nothing was built or claimed.

    A subclass of ``SnapshotError`` because a checkpoint holds the tracker's snapshot; damage
    there is this error too, its ``field`` starting ``tracker.``."""

    subject = "session checkpoint"


class InvalidTool(ToolCallsError, TypeError):
    """A tool the executor cannot call (not callable, unreadable signature, ``*args``...).

    Raised by ``ToolExecutor(...)``; ``tool_name`` and ``reason`` are kept as attributes.
    """

    def __init__(self, tool_name: str, reason: str) -> None:
        super().__init__(f"tool {tool_name!r}: {reason}")
        self.tool_name = tool_name
        self.reason = reason


class ExecutorClosed(ToolCallsError, RuntimeError):
    """``register_call`` after ``aclose()``: a closed executor runs nothing."""


class SessionClosed(ToolCallsError, RuntimeError):
    """An event was applied after ``finish()`` or ``aclose()``."""


class StreamSuperseded(ToolCallsError, RuntimeError):
    """The adapter was handed another stream (``events()``, ``feed`` or ``finish``) while
    ``events()`` was still reading this one: one adapter reads one stream at a time."""


class ToolAborted(ToolCallsError):
    """The call was aborted; ``reason`` says why (``"reset"``, ``"closed"``, ``"timeout"``...)."""

    def __init__(self, reason: str | None) -> None:
        super().__init__(f"tool call aborted: {reason}" if reason else "tool call aborted")
        self.reason = reason


class ProtocolError(ToolCallsError, RuntimeError):
    """An implementation under the conformance suite broke the protocol: no answer, not JSON,
    a wrong shape, or it died. The message says which request and what came back."""


class ImplementationFailed(ToolCallsError):
    """An implementation under the conformance suite answered a request with a failure
    (``{"ok": false}``) or raised."""


class ToolFailure(ToolCallsError):
    """Raised by a runner when a call failed for a reason outside the tool (a worker died, a
    result could not be sent back...); ``error``, a ``ToolError``, is what the call records
    (typed loosely here: this module imports nothing of the package)."""

    def __init__(self, error: Any) -> None:
        super().__init__(error.message)
        self.error = error


class CheckpointConflict(ToolCallsError, RuntimeError):
    """A checkpoint was saved or resumed elsewhere since this process read it: it no longer
    owns the stream, and nothing was written. ``key``, ``expected`` and ``found`` (versions)
    say which checkpoint and how far it moved."""

    def __init__(self, key: str, expected: int, found: int) -> None:
        super().__init__(
            f"checkpoint {key!r} is at version {found}, not {expected}: another process "
            "saved or resumed it since"
        )
        self.key = key
        self.expected = expected
        self.found = found
