"""Tracker checkpoints: a versioned JSON picture of every call, and its exact restore.

The picture is ``{"format": "toolcalls.tracker", "version": 1, "maxHistory": n | null,
"calls": [...]}`` where each call is ``ToolCall.to_dict()`` (the seed's wire shape), in start
order. Restoring checks the structure with pydantic and then the seed's rules across fields
(a pending call has no args, a done call has a result, args are what argsText parses to...), so
a damaged or hand-edited snapshot fails with the path of the first bad field, not later.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ._errors import SnapshotError
from ._record import FINISHED, UNSET, Status, ToolCall, parse_json
from .events import NonEmpty

FORMAT = "toolcalls.tracker"
VERSION = 1


class _CallPicture(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=False)

    id: NonEmpty
    name: NonEmpty
    args_text: Annotated[str, Field(strict=True)]
    status: Literal["pending", "running", "done", "error"]
    args: Any = None
    result: Any = None
    error: Any = None


class _Picture(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=False)

    format: Literal["toolcalls.tracker"]
    version: int
    max_history: Annotated[int, Field(strict=True, ge=1)] | None
    calls: list[_CallPicture]


def _json_value(value: Any, where: str) -> Any:
    """``value`` as plain JSON data (lists, dicts, finite numbers), or ``SnapshotError``."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise SnapshotError(where, f"not representable as JSON ({error})") from None


def take_snapshot(max_history: int | None, calls: list[ToolCall]) -> dict[str, Any]:
    """The picture of a tracker holding ``calls`` (in start order)."""
    pictures = []
    for index, call in enumerate(calls):
        picture = call.to_dict()
        for key in ("args", "result", "error"):
            if key in picture:
                picture[key] = _json_value(picture[key], f"calls.{index}.{key}")
        pictures.append(picture)
    return {"format": FORMAT, "version": VERSION, "maxHistory": max_history, "calls": pictures}


def read_snapshot(data: Mapping[str, Any]) -> tuple[int | None, list[ToolCall]]:
    """Validate a picture; return its ``max_history`` and calls, or raise ``SnapshotError``."""
    if not isinstance(data, Mapping):
        raise SnapshotError("snapshot", f"expected a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise SnapshotError("format", f"expected {FORMAT!r}, got {data.get('format')!r}")
    if data.get("version") != VERSION:
        raise SnapshotError(
            "version",
            f"unsupported version {data.get('version')!r} (this library reads {VERSION})",
        )
    try:
        picture = _Picture.model_validate(dict(data))
    except ValidationError as error:
        first = error.errors()[0]
        raise SnapshotError(".".join(str(p) for p in first["loc"]), first["msg"]) from None
    calls = [_call(call, index) for index, call in enumerate(picture.calls)]
    _check_ids_and_history(calls, picture.max_history)
    return picture.max_history, calls


def _call(picture: _CallPicture, index: int) -> ToolCall:
    """One call, checked against the seed's rules for its status."""
    given = picture.model_fields_set
    where = f"calls.{index}"
    status: Status = picture.status
    present = {key: key in given for key in ("args", "result", "error")}
    rules = {
        "pending": {"args": False, "result": False, "error": False},
        "running": {"args": True, "result": False, "error": False},
        "done": {"args": True, "result": True, "error": False},
        "error": {"result": False, "error": True},
    }[status]
    for key, required in rules.items():
        if present[key] != required:
            verb = "is missing" if required else "must be absent"
            raise SnapshotError(f"{where}.{key}", f"{verb} for a {status} call")
    if present["error"] and picture.error is None:
        raise SnapshotError(f"{where}.error", "must not be null")
    if present["args"]:
        try:
            parsed = parse_json(picture.args_text)
        except ValueError:
            raise SnapshotError(
                f"{where}.args", "present, but argsText is not valid JSON"
            ) from None
        if parsed != picture.args:
            raise SnapshotError(f"{where}.args", "does not match what argsText parses to")
    return ToolCall(
        id=picture.id,
        name=picture.name,
        args_text=picture.args_text,
        args=picture.args if present["args"] else UNSET,
        status=status,
        result=picture.result if present["result"] else UNSET,
        error=picture.error if present["error"] else UNSET,
    )


def _check_ids_and_history(calls: list[ToolCall], max_history: int | None) -> None:
    seen: set[str] = set()
    for index, call in enumerate(calls):
        if call.id in seen:
            raise SnapshotError(f"calls.{index}.id", f"duplicate id {call.id!r}")
        seen.add(call.id)
    finished = sum(1 for call in calls if call.status in FINISHED)
    if max_history is not None and len(calls) > max_history and finished:
        raise SnapshotError(
            "calls",
            f"{len(calls)} calls exceed maxHistory {max_history} while {finished} are finished "
            "(a tracker would have forgotten them)",
        )
