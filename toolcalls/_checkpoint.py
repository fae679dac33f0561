"""Session checkpoints: the tracker's snapshot plus the calls the executor had in flight.

The picture is ``{"format": "toolcalls.session", "version": 1, "tracker": <tracker snapshot>,
"inFlight": [{"id", "name", "state": "pending" | "executing"}], "unreported": [<settled call,
as ExecutionView.to_dict()>], "finished": bool, "position": <any JSON>}``. ``inFlight`` lists the
calls the session had registered for execution and not yet settled, in arrival order:
``pending`` ones were waiting for a concurrency slot (their tool never started), ``executing``
ones were running. ``unreported`` are calls that settled but were not yet handed to the
consumer. ``remembered`` are the settled calls the executor still knows (``max_history``), so
that a re-delivered id is still not run twice once the tracker forgets it; ``refused``
(``[{"id", "name", "args"}]``, oldest first) the calls reusing a remembered id that were
refused and reported (``"error"`` too when their arguments could not run, and then ``args`` is
``{"argsText": their text}``), so that their
re-delivery is still not reported twice (both optional:
an older checkpoint without them reads as empty). ``position`` is the caller's (where its
stream stood).

The resume rule (``ToolCallSession.resume``): a ``pending`` call is submitted again (its tool
never ran); an ``executing`` call is submitted again only if its tool is named in ``rerun``
(the caller says running it twice is harmless), otherwise it ends in ``error`` with kind
``interrupted`` and is reported, so the model hears about it. No call is ever dropped silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ._errors import CheckpointError
from ._execution import ExecutionView, ToolError, ToolErrorKind

FORMAT = "toolcalls.session"
VERSION = 1

#: A call refused for reusing a remembered id: ``(id, name, args, error or None)``.
Refused = tuple[str, str, dict[str, Any], ToolError | None]


class _InFlight(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    state: Literal["pending", "executing"]


class _Error(BaseModel):
    """A ``ToolError`` in its wire shape (``ToolError.to_dict()``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    kind: ToolErrorKind
    message: str
    details: dict[str, Any] = {}


class _Unreported(BaseModel):
    model_config = ConfigDict(extra="forbid")

    toolCallId: str
    toolName: str
    args: dict[str, Any]
    status: Literal["success", "error"]
    result: Any = None
    error: _Error | None = None


class _Refused(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    args: dict[str, Any]
    error: _Error | None = None


class _Picture(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["toolcalls.session"]
    version: int
    tracker: dict[str, Any]
    inFlight: list[_InFlight]
    unreported: list[_Unreported]
    remembered: list[_Unreported] = []
    refused: list[_Refused] = []
    finished: bool
    position: Any = None


class SessionPicture:
    """A checked session checkpoint, read back (see the module docstring)."""

    __slots__ = (
        "finished",
        "in_flight",
        "position",
        "refused",
        "remembered",
        "tracker",
        "unreported",
    )

    def __init__(
        self,
        tracker: dict[str, Any],
        in_flight: list[tuple[str, str, str]],
        unreported: list[ExecutionView],
        finished: bool,
        position: Any,
        remembered: list[ExecutionView],
        refused: list[Refused],
    ) -> None:
        self.remembered = remembered
        self.refused = refused
        self.tracker = tracker
        self.in_flight = in_flight
        self.unreported = unreported
        self.finished = finished
        self.position = position


def take(
    tracker: dict[str, Any],
    in_flight: list[tuple[str, str, str]],
    unreported: list[ExecutionView],
    finished: bool,
    position: Any,
    remembered: list[ExecutionView],
    refused: list[Refused],
) -> dict[str, Any]:
    """The picture of a session (``in_flight`` as ``(id, name, "pending" | "executing")``,
    ``refused`` as ``(id, name, args, error or None)``)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "tracker": tracker,
        "inFlight": [{"id": i, "name": n, "state": s} for i, n, s in in_flight],
        "unreported": [
            _json(state.to_dict(), f"unreported.{index}") for index, state in enumerate(unreported)
        ],
        "remembered": [_remembered(state, index) for index, state in enumerate(remembered)],
        "refused": [_refused(item, index) for index, item in enumerate(refused)],
        "finished": finished,
        "position": _json(position, "position"),
    }


def _refused(item: Refused, index: int) -> Any:
    call_id, name, args, error = item
    data: dict[str, Any] = {"id": call_id, "name": name, "args": args}
    if error is not None:
        data["error"] = error.to_dict()
    return _json(data, f"refused.{index}")


def _remembered(state: ExecutionView, index: int) -> Any:
    """A remembered call as JSON. Only its id, tool and arguments matter to a re-delivery, so
    a result JSON cannot hold (the consumer already has it) is remembered as one that could
    not be sent back, not refused."""
    where = f"remembered.{index}"
    try:
        return _json(state.to_dict(), where)
    except CheckpointError:
        error = ToolError.result_unserializable(state.tool_name, "the result is not JSON")
        kept = ExecutionView(state.tool_call_id, state.tool_name, state.args, "error", None, error)
        return _json(kept.to_dict(), where)


def _json(value: Any, where: str) -> Any:
    """``value`` as plain JSON data, or ``CheckpointError`` naming where it is."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except RecursionError:
        raise CheckpointError(where, "not representable as JSON (it nests too deeply)") from None
    except (TypeError, ValueError) as error:
        raise CheckpointError(where, f"not representable as JSON ({error})") from None


def read(data: Mapping[str, Any]) -> SessionPicture:
    """Check a picture; raise ``CheckpointError`` naming the first bad field."""
    if not isinstance(data, Mapping):
        raise CheckpointError("checkpoint", f"expected a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise CheckpointError("format", f"expected {FORMAT!r}, got {data.get('format')!r}")
    version = data.get("version")
    if type(version) is not int or version != VERSION:  # not True, not 1.0 (T22)
        raise CheckpointError(
            "version",
            f"unsupported version {data.get('version')!r} (this library reads {VERSION})",
        )
    try:
        picture = _Picture.model_validate(dict(data))
    except ValidationError as error:
        first = error.errors()[0]
        raise CheckpointError(".".join(str(p) for p in first["loc"]), first["msg"]) from None
    unreported = [_state(item, "unreported", i) for i, item in enumerate(picture.unreported)]
    in_flight: list[tuple[str, str, str]] = [(c.id, c.name, c.state) for c in picture.inFlight]
    remembered = [_state(item, "remembered", i) for i, item in enumerate(picture.remembered)]
    # The same call twice is damage; two calls with one id (S10 allows a new call once the
    # id is forgotten) are not.
    for field, items in (("unreported", picture.unreported), ("remembered", picture.remembered)):
        seen: set[str] = set()
        for index, item in enumerate(items):
            entry = item.model_dump_json()
            if entry in seen:
                where = f"{field}.{index}"
                raise CheckpointError(where, f"call {item.toolCallId!r} is listed twice")
            seen.add(entry)
    refused: list[Refused] = [
        (item.id, item.name, item.args, None if item.error is None else _error(item.error))
        for item in picture.refused
    ]
    return SessionPicture(
        picture.tracker,
        in_flight,
        unreported,
        picture.finished,
        picture.position,
        remembered,
        refused,
    )


def _state(item: _Unreported, field: str, index: int) -> ExecutionView:
    error = None
    if item.status == "error":
        if item.error is None:
            raise CheckpointError(f"{field}.{index}.error", "missing for an error")
        error = _error(item.error)
    result = item.result if item.status == "success" else None
    args = MappingProxyType(item.args)
    return ExecutionView(item.toolCallId, item.toolName, args, item.status, result, error)


def _error(data: _Error) -> ToolError:
    """A ``ToolError`` from its wire shape (detail keys back to snake_case)."""
    details = {_snake(key): value for key, value in data.details.items()}
    return ToolError(data.kind, data.message, details)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
