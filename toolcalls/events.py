"""The five stream events of a tool call, as frozen pydantic models.

On the wire (seed 000) an event is a JSON object with a ``type`` tag and the seed's camelCase
keys; snake_case keys are accepted too::

    {"type": "start", "id": "t1", "name": "search"}
    {"type": "delta", "id": "t1", "argsTextDelta": "{\\"q\\":"}
    {"type": "ready", "id": "t1"}
    {"type": "result", "id": "t1", "result": {"hits": 3}}      # null is a real result
    {"type": "error", "id": "t1", "error": "rate limited"}     # result and error are optional

``ToolCallTracker.apply`` takes these models or plain mappings; both are held to the same rules
(a test checks that the tracker's fast validation of mappings agrees with these models).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_serializer
from pydantic.alias_generators import to_camel

from ._errors import InvalidEvent
from ._record import UNSET

__all__ = [
    "DeltaEvent",
    "ErrorEvent",
    "EventType",
    "ReadyEvent",
    "ResultEvent",
    "StartEvent",
    "ToolCallEvent",
    "parse_event",
]

EventType = Literal["start", "delta", "ready", "result", "error"]
EVENT_TYPES: tuple[EventType, ...] = ("start", "delta", "ready", "result", "error")

NonEmpty = Annotated[str, Field(strict=True, min_length=1)]


class _Event(BaseModel):
    model_config = ConfigDict(
        frozen=True, populate_by_name=True, alias_generator=to_camel, extra="ignore"
    )

    def to_wire(self) -> dict[str, Any]:
        """The event as the seed's JSON object, camelCase keys (an absent value left out)."""
        wire = self.model_dump(by_alias=True)
        return {key: value for key, value in wire.items() if value is not UNSET}


class StartEvent(_Event):
    """A new call named ``name`` begins, pending."""

    type: Literal["start"] = "start"
    id: NonEmpty
    name: NonEmpty


class DeltaEvent(_Event):
    """A fragment of the call's argument JSON text."""

    type: Literal["delta"] = "delta"
    id: NonEmpty
    args_text_delta: Annotated[str, Field(strict=True)]


class ReadyEvent(_Event):
    """The arguments are complete: parse them and start running."""

    type: Literal["ready"] = "ready"
    id: NonEmpty


class ResultEvent(_Event):
    """The tool returned ``result`` (``None`` is a result: JSON null). Optional, as in the
    seed: without it the call ends ``done`` with no result."""

    type: Literal["result"] = "result"
    id: NonEmpty
    result: Any = UNSET

    @model_serializer
    def _wire(self) -> dict[str, Any]:  # an absent result is left out, never written
        data: dict[str, Any] = {"type": self.type, "id": self.id}
        if self.result is not UNSET:
            data["result"] = self.result
        return data


class ErrorEvent(_Event):
    """The call failed with ``error`` (``None`` is kept as a value). Optional, as in the
    seed: without it the call ends in ``error`` with no error value."""

    type: Literal["error"] = "error"
    id: NonEmpty
    error: Any = UNSET

    @model_serializer
    def _wire(self) -> dict[str, Any]:  # an absent error is left out, never written
        data: dict[str, Any] = {"type": self.type, "id": self.id}
        if self.error is not UNSET:
            data["error"] = self.error
        return data


ToolCallEvent = Annotated[
    StartEvent | DeltaEvent | ReadyEvent | ResultEvent | ErrorEvent,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[ToolCallEvent] = TypeAdapter(ToolCallEvent)


def parse_event(data: Mapping[str, Any]) -> ToolCallEvent:
    """Validate a wire event into its model; raise ``InvalidEvent`` naming the first bad field."""
    if not isinstance(data, Mapping):
        raise InvalidEvent("event", f"expected a JSON object, got {type(data).__name__}")
    if data.get("type") not in EVENT_TYPES:
        raise InvalidEvent("type", unknown_type_reason(data.get("type")))
    try:
        return _ADAPTER.validate_python(dict(data))
    except ValidationError as error:
        first = error.errors()[0]
        location = [str(part) for part in first["loc"][1:]] or ["event"]
        raise InvalidEvent(".".join(location), first["msg"]) from None


def unknown_type_reason(value: Any) -> str:
    """Why a ``type`` value is rejected."""
    expected = ", ".join(EVENT_TYPES)
    if value is None:
        return f"missing (expected one of {expected})"
    return f"unknown event type {value!r} (expected one of {expected})"
