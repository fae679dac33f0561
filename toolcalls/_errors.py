"""Every error ``toolcalls`` raises on purpose, in one tree: whose fault it was, and where (P2).

::

    ToolCallsError                        base of every error below
    ├── _FieldError (ValueError)          a value at ``field`` was rejected for ``reason``
    │   ├── InvalidChunk                  a provider chunk an adapter cannot read
    │   ├── InvalidEvent                  the stream broke the protocol: a malformed event (T17)
    │   ├── InvalidToolCall               register_call() got a malformed chunk (X20)
    │   └── SnapshotError                 a tracker snapshot is damaged, of an unknown
    │                                     version, or holds a value JSON cannot (T22)
    ├── InvalidTool (TypeError)           ToolExecutor() got a tool it cannot call (X7)
    ├── ExecutorClosed (RuntimeError)     register_call() after aclose() (X14)
    ├── SessionClosed (RuntimeError)      an event applied after finish() or aclose() (S5)
    └── ToolAborted                       the call was aborted: AbortSignal.raise_if_aborted(),
                                          or wait() for a call dropped by reset()/aclose() (X13)

Whose fault: the four field errors are the input's (a provider's stream, the stream of
events, the caller's chunk, a stored snapshot), and name the field and the reason as
attributes, so a caller can log them or map them to a response without parsing the message;
``InvalidTool`` is the developer's; ``ExecutorClosed`` and ``SessionClosed`` are a use after
the end. Raising any of them leaves the tracker, executor, session or adapter exactly as it was.

How a *tool* failed is not an exception but data: a call ends in ``error`` with a ``ToolError``
whose ``kind`` is ``unknown_tool``, ``invalid_arguments``, ``tool_raised``, ``timeout`` or
``aborted`` (X9). Outside the tree: ``KeyError`` from ``ToolExecutor.wait()`` for an id that is
not tracked, ``RuntimeError`` from ``register_call()`` without a usable event loop (X20), and
``ValueError`` for a constructor option out of range (``max_history``, ``timeout`` ...).
"""

from __future__ import annotations


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
    """A snapshot that cannot be taken or restored; nothing was built."""

    subject = "snapshot"


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


class ToolAborted(ToolCallsError):
    """The call was aborted; ``reason`` says why (``"reset"``, ``"closed"``, ``"timeout"``...)."""

    def __init__(self, reason: str | None) -> None:
        super().__init__(f"tool call aborted: {reason}" if reason else "tool call aborted")
        self.reason = reason
