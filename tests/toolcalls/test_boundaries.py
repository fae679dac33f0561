"""One definition at each boundary: where a fast hand-written reader stands beside a pydantic
model of the same input, they accept and refuse the same things and name the same field (T17,
T18, X3, X20). The cases are built from the models' own fields, so a field added to a model is
checked here without this file changing."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from toolcalls import InvalidEvent, InvalidToolCall, ToolCallReadyChunk, ToolCallTracker
from toolcalls._executor import _read_chunk
from toolcalls.events import (
    DeltaEvent,
    ErrorEvent,
    ReadyEvent,
    ResultEvent,
    StartEvent,
    parse_event,
)

MISSING: Any = object()
#: Values tried in every field: absent, null, empty, and each JSON type.
CANDIDATES: tuple[Any, ...] = (MISSING, None, "", "x", 0, 1.5, True, [], {}, ["x"], {"k": 1})
VALID_EVENTS: dict[str, dict[str, Any]] = {
    "start": {"type": "start", "id": "c1", "name": "search"},
    "delta": {"type": "delta", "id": "c1", "argsTextDelta": '{"q": 1}'},
    "ready": {"type": "ready", "id": "c1"},
    "result": {"type": "result", "id": "c1", "result": {"hits": 3}},
    "error": {"type": "error", "id": "c1", "error": "boom"},
}
MODELS = (StartEvent, DeltaEvent, ReadyEvent, ResultEvent, ErrorEvent)


def _name(value: Any) -> str:
    return "missing" if value is MISSING else repr(value)


def _event_cases() -> list[Any]:
    cases = []
    for model in MODELS:
        kind = model.model_fields["type"].default
        for name, info in model.model_fields.items():
            if name == "type":
                continue
            for key in {info.alias or name, name}:
                for value in CANDIDATES:
                    event = {k: v for k, v in VALID_EVENTS[kind].items() if k != info.alias}
                    if value is not MISSING:
                        event[key] = value
                    cases.append(pytest.param(event, id=f"{kind}.{key}={_name(value)}"))
    return cases


def _model_verdict(event: dict[str, Any]) -> str | None:
    try:
        parse_event(event)
    except InvalidEvent as error:
        return error.field
    return None


def _tracker_verdict(event: dict[str, Any]) -> str | None:
    try:
        ToolCallTracker().apply(event)
    except InvalidEvent as error:
        return error.field
    return None


@pytest.mark.parametrize("event", _event_cases())
def test_event_models_and_the_trackers_fast_reading_agree_on_every_field(
    event: dict[str, Any],
) -> None:
    assert _tracker_verdict(event) == _model_verdict(event)


@pytest.mark.parametrize("kind", [*VALID_EVENTS, "other", "", None, 3])
def test_event_models_and_the_tracker_agree_on_the_type_tag(kind: Any) -> None:
    event = {"type": kind, "id": "c1", "name": "search"}
    assert _tracker_verdict(event) == _model_verdict(event)


def _chunk_cases() -> list[Any]:
    valid = {"toolCallId": "c1", "toolName": "search", "args": {"q": 1}}
    cases = []
    for name, info in ToolCallReadyChunk.model_fields.items():
        for key in {info.alias or name, name}:
            for value in (*CANDIDATES, {"q": [1]}):
                chunk = {k: v for k, v in valid.items() if k != (info.alias or name)}
                if value is not MISSING:
                    chunk[key] = value
                cases.append(pytest.param(chunk, id=f"{key}={_name(value)}"))
    return cases


def _chunk_model_verdict(chunk: dict[str, Any]) -> str | None:
    try:
        ToolCallReadyChunk.model_validate(chunk)
    except ValidationError as error:
        location = error.errors()[0]["loc"]
        field = ToolCallReadyChunk.model_fields.get(str(location[0]))
        return (field.alias if field is not None and field.alias else None) or str(location[0])
    return None


def _read_chunk_verdict(chunk: dict[str, Any]) -> str | None:
    try:
        _read_chunk(chunk)
    except InvalidToolCall as error:
        return error.field
    return None


@pytest.mark.parametrize("chunk", _chunk_cases())
def test_ready_chunk_model_and_the_executors_fast_reading_agree_on_every_field(
    chunk: dict[str, Any],
) -> None:
    assert _read_chunk_verdict(chunk) == _chunk_model_verdict(chunk)
