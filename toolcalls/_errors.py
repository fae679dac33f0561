"""Errors raised by ``toolcalls``: whose fault it was, and where.

::

    ToolCallsError
    ├── InvalidEvent (ValueError)     the stream broke the protocol: a malformed event
    └── SnapshotError (ValueError)    a tracker snapshot is damaged or from an unknown version

Both name the field at fault (``field``) and the reason (``reason``) as attributes, so a caller
can log them or map them to a response without parsing the message. Raising either leaves the
tracker exactly as it was.
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


class InvalidEvent(_FieldError):
    """A malformed stream event; nothing was changed."""

    subject = "event"


class SnapshotError(_FieldError):
    """A snapshot that cannot be restored; nothing was built."""

    subject = "snapshot"
