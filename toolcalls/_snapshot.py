"""Tracker snapshots: a versioned JSON picture of every call, and its exact restore.

The picture is ``{"format": "toolcalls.tracker", "version": 1, "maxHistory": n | null,
"calls": [...]}`` where each call is ``ToolCallView.to_dict()`` (the wire shape, T15), in start
order (T22). Restoring checks the structure with pydantic and then the rules across fields
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
from ._record import FINISHED, UNSET, Status, ToolCallView, parse_json
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
    """``value`` as plain JSON data (lists, dicts, finite numbers), or ``SnapshotError``.

    Keys become strings as JSON writes them (``1`` -> ``"1"``), like a tuple becomes a list;
    two keys of one mapping that would become the same string fail, naming the key, since
    one value would be lost."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise SnapshotError(where, f"not representable as JSON ({error})") from None
    except RecursionError:
        raise SnapshotError(where, "nests too deeply to write as JSON") from None
    try:  # json.dumps wrote valid JSON: only _unique_keys can refuse it
        return json.loads(text, object_pairs_hook=_unique_keys)
    except ValueError as error:
        raise SnapshotError(
            where, f"two keys of one mapping both become the JSON key {error.args[0]!r}"
        ) from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object hook refusing a key written twice (``ValueError`` with the key)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(key)
            seen.add(key)
    return value


def same_json(left: Any, right: Any) -> bool:
    """Whether two JSON values are the same value: equal *and* of the same JSON types, so
    ``true`` is not ``1`` and ``1.0`` is not ``1`` (Python's ``==`` says they are)."""
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        return left.keys() == right.keys() and all(
            same_json(value, right[key]) for key, value in left.items()
        )
    if type(left) is list:
        return len(left) == len(right) and all(map(same_json, left, right))
    return bool(left == right)


def take_snapshot(max_history: int | None, calls: list[ToolCallView]) -> dict[str, Any]:
    """The picture of a tracker holding ``calls`` (in start order)."""
    pictures = []
    for index, call in enumerate(calls):
        picture = call.to_dict()
        for key in ("args", "result", "error"):
            if key in picture:
                picture[key] = _json_value(picture[key], f"calls.{index}.{key}")
        pictures.append(picture)
    return {"format": FORMAT, "version": VERSION, "maxHistory": max_history, "calls": pictures}


def read_snapshot(data: Mapping[str, Any]) -> tuple[int | None, list[ToolCallView]]:
    """Validate a picture; return its ``max_history`` and calls, or raise ``SnapshotError``."""
    if not isinstance(data, Mapping):
        raise SnapshotError("snapshot", f"expected a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise SnapshotError("format", f"expected {FORMAT!r}, got {data.get('format')!r}")
    version = data.get("version")
    if type(version) is not int or version != VERSION:  # not True, not 1.0
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


def _call(picture: _CallPicture, index: int) -> ToolCallView:
    """One call, checked against the rules for its status (T3, T14, T26)."""
    given = picture.model_fields_set
    where = f"calls.{index}"
    status: Status = picture.status
    present = {key: key in given for key in ("args", "result", "error")}
    # True: required, False: must be absent; a key not listed may be either (result and
    # error are optional, T26).
    rules = {
        "pending": {"args": False, "result": False, "error": False},
        "running": {"args": True, "result": False, "error": False},
        "done": {"args": True, "error": False},
        "error": {"result": False},
    }[status]
    for key, required in rules.items():
        if present[key] != required:
            verb = "is missing" if required else "must be absent"
            raise SnapshotError(f"{where}.{key}", f"{verb} for a {status} call")
    parsed: Any = UNSET
    if present["args"]:
        try:
            parsed = parse_json(picture.args_text)
        except ValueError:
            raise SnapshotError(
                f"{where}.args", "present, but argsText is not valid JSON"
            ) from None
        if not same_json(parsed, picture.args):
            raise SnapshotError(f"{where}.args", "does not match what argsText parses to")
    # The restored tracker owns its values: args as argsText parses, result and error copied
    # (and checked to be JSON), so the caller's snapshot and the tracker never share.
    return ToolCallView(
        id=picture.id,
        name=picture.name,
        args_text=picture.args_text,
        args=parsed if present["args"] else UNSET,
        status=status,
        result=_json_value(picture.result, f"{where}.result") if present["result"] else UNSET,
        error=_json_value(picture.error, f"{where}.error") if present["error"] else UNSET,
    )


def _check_ids_and_history(calls: list[ToolCallView], max_history: int | None) -> None:
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
