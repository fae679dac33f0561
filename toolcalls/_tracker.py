"""The streaming tool call tracker (spec section T): a dispatcher over compiled chart instances.

``apply`` validates an event, routes it by id to that call's instance of ``ToolCallChart`` and
reports an ``ApplyOutcome``. The tracker is sans-I/O: events in, outcomes and views out; it
never blocks and never calls back into user code.
"""

from __future__ import annotations

import copy
import heapq
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from statecharts import Instance, _runtime, compile_chart

from ._chart import ToolCallChart
from ._errors import InvalidEvent
from ._record import FINISHED, STATUSES, UNSET, Status, ToolCallModel, ToolCallView
from ._snapshot import read_snapshot, take_snapshot
from .events import (
    EVENT_TYPES,
    DeltaEvent,
    ErrorEvent,
    EventType,
    ReadyEvent,
    ResultEvent,
    StartEvent,
    ToolCallEvent,
    unknown_type_reason,
)

ApplyReason = Literal["unknown_id", "duplicate_start", "not_allowed"]

_CHART = compile_chart(ToolCallChart)
_PROBE = _CHART.create(ToolCallModel("", "", 0))
#: The pending state's node and the instances' ``send``, for the tracker's hot path.
_PENDING = _PROBE._node
_SEND = type(_PROBE).send
_BINDING = _PENDING.binding


def _starts_bare() -> bool:
    """Whether starting an instance runs nothing: ``pending`` has no ``enter`` callback (none
    declared, no conventional one defined) and no eventless transition, and ``ToolCallModel``
    provides every name the chart declares. Then ``_NEW_INSTANCE(_PENDING, record)`` is
    ``_CHART.create(record)`` without its checks and its empty initial step, per call."""
    pending = _CHART.state("pending")
    declared = [c.ref for c in pending.enter if not c.convention]
    conventional = [c.lookup_name for c in pending.enter if c.convention]
    eventless = [t for t in _CHART.transitions_from("pending") if not t.events]
    return (
        not declared
        and not eventless
        and not _BINDING.instance_names
        and not any(hasattr(ToolCallChart, n) or hasattr(ToolCallModel, n) for n in conventional)
    )


if not _starts_bare():  # pragma: no cover - by design
    raise RuntimeError("ToolCallChart's pending state must have no enter callback")
#: ``_CHART.create(record)`` without its checks per call (see ``_starts_bare``).
_NEW_INSTANCE = _BINDING.cls


def _delta_only_appends() -> bool:
    """Whether the chart's ``delta`` does nothing but its declared action, which appends the
    fragment to the record's ``parts``: an internal self-transition on ``pending``, no guard,
    and no conventional callback (``on_delta``, ``before_transition``...) on the chart or the
    record. Then the hot path appends the fragment itself, skipping the call machinery
    (otherwise every fragment goes through ``send``)."""
    (transition,) = [t for t in _CHART.transitions if "delta" in t.events]
    callbacks = [
        *transition.validators,
        *transition.cond,
        *transition.before,
        *transition.on,
        *transition.after,
    ]
    declared = [c.ref for c in callbacks if not c.convention]
    conventional = [c.lookup_name for c in callbacks if c.convention]
    return (
        transition.internal
        and transition.source == transition.target == "pending"
        and declared == ["append_arguments"]
        and not any(hasattr(ToolCallChart, n) or hasattr(ToolCallModel, n) for n in conventional)
    )


#: See ``_delta_only_appends`` (a test checks the action still only appends).
_DELTA_ONLY_APPENDS: Final = _delta_only_appends()
_MISSING: Any = object()
#: The chart event each wire event type sends (the chart calls the wire's ``error`` ``fail``, T24).
CHART_EVENTS: Final = {"delta": "delta", "ready": "ready", "result": "result", "error": "fail"}
_IMMUTABLE: Final = (str, int, float, bool, type(None))


@dataclass(frozen=True, slots=True)
class ApplyOutcome:
    """What ``apply`` did with one event (named apart from ``statecharts.Outcome``, which is what
    sending an event to one chart instance did).

    ``applied`` is true when the event moved its call (or, for ``start``, created it).
    Otherwise ``reason`` says why it was ignored: ``"unknown_id"`` (no call has that id),
    ``"duplicate_start"`` (the id is already tracked; the first start wins) or
    ``"not_allowed"`` (the event is not allowed in the call's status, e.g. a delta after ready).
    ``status`` is the call's status after the event (``None`` for an unknown id).
    """

    applied: bool
    type: EventType
    status: Status | None
    reason: ApplyReason | None = None

    def __bool__(self) -> bool:
        return self.applied

    @property
    def message(self) -> str:
        """A sentence for logs: what happened and why."""
        if self.applied:
            return f"{self.type} applied; call is {self.status}"
        if self.reason == "unknown_id":
            return f"{self.type} ignored: no call with that id"
        if self.reason == "duplicate_start":
            return f"start ignored: the id is already tracked (call is {self.status})"
        return f"{self.type} ignored: not allowed while the call is {self.status}"


def _outcome_table() -> dict[tuple[str, bool, str | None], ApplyOutcome]:
    table: dict[tuple[str, bool, str | None], ApplyOutcome] = {}
    for kind in EVENT_TYPES:
        table[kind, False, None] = ApplyOutcome(False, kind, None, "unknown_id")
        for status in STATUSES:
            table[kind, True, status] = ApplyOutcome(True, kind, status)
            reason: ApplyReason = "duplicate_start" if kind == "start" else "not_allowed"
            table[kind, False, status] = ApplyOutcome(False, kind, status, reason)
    return table


_OUTCOMES: Final = _outcome_table()
_DELTA_APPLIED: Final = _OUTCOMES["delta", True, "pending"]
_DELTA_UNKNOWN: Final = _OUTCOMES["delta", False, None]


def copied(value: Any, field_name: str) -> Any:
    """An independent copy of a payload value, so the caller's object and ours never alias."""
    if isinstance(value, _IMMUTABLE) or value is UNSET:
        return value
    try:
        return copy.deepcopy(value)
    except Exception as error:
        raise InvalidEvent(field_name, f"value cannot be copied ({error})") from None


class Listener(Protocol):
    """What a tracker tells the session that owns it (the typed hand-off: no wire events)."""

    def _before_ready(self) -> None:
        """A ``ready`` event is about to end a pending call's arguments; raising stops it
        before anything changes."""

    def _arguments_ended(self, record: ToolCallModel) -> None:
        """A ``ready`` event ended the arguments of the call ``record`` holds: it is
        ``running``, or in ``error`` when they did not parse (and then the tracker may have
        forgotten it already, ``max_history``)."""

    def _ended_by_stream(self, record: ToolCallModel) -> None:
        """A ``result`` or ``error`` event from the stream ended the call ``record`` holds
        (the tracker may have forgotten it already, ``max_history``)."""


class ToolCallTracker:
    """Tracks interleaved streaming tool calls by id, one compiled chart instance per call.

    ``max_history`` (default unbounded) bounds how many calls are kept: when more are tracked,
    the oldest finished calls (by start order) are forgotten first, never a pending or running
    one. A forgotten id is unknown afterwards: its later events are ignored, and a new start
    with it begins a new call.
    """

    __slots__ = ("_calls", "_finished", "_listener", "_max_history", "_next_seq")

    def __init__(self, *, max_history: int | None = None) -> None:
        if max_history is not None and (
            not isinstance(max_history, int) or isinstance(max_history, bool) or max_history < 1
        ):
            raise ValueError(f"max_history must be a positive int or None, got {max_history!r}")
        self._max_history = max_history
        self._calls: dict[str, Instance] = {}
        self._finished: list[tuple[int, str]] = []  # (start order, id) of finished calls
        self._next_seq = 0
        self._listener: Listener | None = None  # a session, told what the stream did

    @property
    def max_history(self) -> int | None:
        return self._max_history

    # -- events ------------------------------------------------------------------------------

    def apply(self, event: Mapping[str, Any] | ToolCallEvent) -> ApplyOutcome:
        """Apply one event; return what happened.

        Accepts a wire mapping (camelCase or snake_case keys) or a model from
        ``toolcalls.events``. Raises ``InvalidEvent`` (a ``ValueError``) naming the field for a
        malformed event, and then nothing has changed. An event the rules ignore (T9-T12) is not
        an error: it returns an outcome with ``applied`` false and a ``reason``.
        """
        if type(event) is not dict:
            event = _as_mapping(event)
        elif event.get("type") == "delta":  # most events are fragments: the short way
            try:
                call_id, text = event["id"], event["argsTextDelta"]
            except KeyError:  # snake_case, or malformed: the general path says which
                call_id = text = None
            if type(call_id) is str and call_id and type(text) is str:
                instance = self._calls.get(call_id)
                if instance is None:
                    return _DELTA_UNKNOWN
                if (
                    instance._node is _PENDING
                    and _DELTA_ONLY_APPENDS
                    and instance._pending is None
                    and type(instance).send is _SEND
                    and not _runtime._observers
                ):
                    # What the chart's transition does (its action), without send()'s
                    # dispatch: not re-entrant, and nothing observes outcomes (as chart
                    # coverage does).
                    instance.model.parts.append(text)
                    return _DELTA_APPLIED
                if instance.send("delta", text=text).applied:
                    return _DELTA_APPLIED
                return _OUTCOMES["delta", False, instance._node.state.id]
        kind = event.get("type")
        if type(kind) is not str:
            kind = _plain_str(kind)
        if kind not in _HANDLERS:
            raise InvalidEvent("type", unknown_type_reason(event.get("type")))
        call_id = event.get("id")
        if type(call_id) is not str:
            call_id = _plain_str(call_id)
        if not call_id:
            raise InvalidEvent("id", _id_reason(event.get("id")))
        return _HANDLERS[kind](self, call_id, event)

    def _start(self, call_id: str, event: Mapping[str, Any]) -> ApplyOutcome:
        name = event.get("name")
        if type(name) is not str:
            name = _plain_str(name)
        if not name:
            raise InvalidEvent("name", _string_reason(event.get("name"), "the tool's name"))
        calls = self._calls
        existing = calls.get(call_id)
        if existing is not None:
            return _OUTCOMES["start", False, existing._node.state.id]
        calls[call_id] = _NEW_INSTANCE(_PENDING, ToolCallModel(call_id, name, self._next_seq))
        self._next_seq += 1
        if self._max_history is not None and len(calls) > self._max_history:
            self._evict()
        return _OUTCOMES["start", True, "pending"]

    def _delta(self, call_id: str, event: Mapping[str, Any]) -> ApplyOutcome:
        key = "argsTextDelta"
        text = event.get(key, _MISSING)
        if text is _MISSING and "args_text_delta" in event:
            key = "args_text_delta"
            text = event[key]
        if type(text) is not str:
            given, text = text, _plain_str(text)
            if text is None:
                raise InvalidEvent(key, _string_reason(given, "a text fragment", True))
        instance = self._calls.get(call_id)
        if instance is None:
            return _OUTCOMES["delta", False, None]
        applied = instance.send("delta", text=text).applied
        return _OUTCOMES["delta", applied, instance._node.state.id]

    def _ready(self, call_id: str, event: Mapping[str, Any]) -> ApplyOutcome:
        listener = self._listener
        if listener is None:
            return self._send(call_id, "ready", _MISSING)
        instance = self._calls.get(call_id)
        if instance is None:
            return _OUTCOMES["ready", False, None]
        if instance._node.state.id == "pending":
            listener._before_ready()  # may raise: nothing has changed yet
        outcome = self._send(call_id, "ready", _MISSING)
        if outcome.applied:
            listener._arguments_ended(instance.model)  # the record, even if just evicted
        return outcome

    def _result(self, call_id: str, event: Mapping[str, Any]) -> ApplyOutcome:
        # Optional (T26): a result event without one ends the call done, no result.
        value = event.get("result", UNSET)
        return self._ended_by_stream(call_id, "result", copied(value, "result"))

    def _error(self, call_id: str, event: Mapping[str, Any]) -> ApplyOutcome:
        # Optional (T26); null is kept as a value (like a null result).
        value = event.get("error", UNSET)
        return self._ended_by_stream(call_id, "error", copied(value, "error"))

    def _ended_by_stream(self, call_id: str, kind: str, value: Any) -> ApplyOutcome:
        instance = self._calls.get(call_id)
        outcome = self._send(call_id, kind, value)
        if outcome.applied and self._listener is not None:
            assert instance is not None
            self._listener._ended_by_stream(instance.model)  # the record, even if evicted
        return outcome

    def _record(self, call_id: str) -> ToolCallModel | None:
        """The live record of a call (not a copy: read it, never change it), or ``None``."""
        instance = self._calls.get(call_id)
        return None if instance is None else instance.model

    def _unfinished(self) -> list[tuple[ToolCallModel, Status]]:
        """The live records of the pending and running calls with their status, in start
        order (read them, never change them)."""
        return [
            (instance.model, instance._node.state.id)  # type: ignore[misc]
            for instance in self._calls.values()
            if not instance._node.state.final
        ]

    def _send(self, call_id: str, kind: str, value: Any) -> ApplyOutcome:
        """Send ``ready`` (``value`` is ``_MISSING``), or end a call as a ``result`` or
        ``error`` event would with ``value`` (``UNSET``: no value), which the tracker now
        owns. A session ends calls through this typed hand-off, the value copied already:
        the listener is not told. Returns the outcome; never raises."""
        instance = self._calls.get(call_id)
        if instance is None:
            return _OUTCOMES[kind, False, None]
        if value is _MISSING:
            outcome = instance.send(CHART_EVENTS[kind])
        else:
            outcome = instance.send(CHART_EVENTS[kind], value=value)
        status = instance._node.state.id
        if outcome.applied and status in FINISHED:
            record: ToolCallModel = instance.model
            heapq.heappush(self._finished, (record.seq, call_id))
            if self._max_history is not None and len(self._calls) > self._max_history:
                self._evict()
        return _OUTCOMES[kind, outcome.applied, status]

    def _evict(self) -> None:
        """Forget the oldest finished calls until within ``max_history`` (or none is left)."""
        calls, finished, limit = self._calls, self._finished, self._max_history
        assert limit is not None
        while len(calls) > limit and finished:
            _, call_id = heapq.heappop(finished)
            del calls[call_id]

    # -- queries -----------------------------------------------------------------------------

    def get(self, call_id: str) -> ToolCallView | None:
        """The view of the call with this id, or ``None`` if it is not tracked."""
        instance = self._calls.get(call_id)
        return None if instance is None else _view(instance)

    def list(self) -> list[ToolCallView]:
        """Views of every tracked call, in start order."""
        return [_view(instance) for instance in self._calls.values()]

    def __len__(self) -> int:
        return len(self._calls)

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._calls

    def __iter__(self) -> Iterator[str]:
        """The tracked ids, in start order."""
        return iter(list(self._calls))

    def __repr__(self) -> str:
        return f"<ToolCallTracker calls={len(self._calls)} max_history={self._max_history}>"

    # -- checkpoints -------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """A versioned, JSON-serialisable picture of every tracked call (see ``restore``).

        Raises ``SnapshotError`` naming the call and field whose value JSON cannot hold.
        """
        return take_snapshot(self._max_history, self.list())

    @classmethod
    def restore(cls, snapshot: Mapping[str, Any]) -> ToolCallTracker:
        """Rebuild the tracker ``snapshot()`` pictured: ``restore(s).snapshot() == s``, and it
        goes on as the original would. Values are the picture's JSON (a tuple result comes back
        as a list). Raises ``SnapshotError`` naming the field for an unknown version or a
        damaged snapshot."""
        max_history, calls = read_snapshot(snapshot)
        tracker = cls(max_history=max_history)
        for seq, call in enumerate(calls):
            record = ToolCallModel(call.id, call.name, seq)
            if call.args_text:
                record.parts.append(call.args_text)
            record.args, record.result, record.error = call.args, call.result, call.error
            tracker._calls[call.id] = _CHART.resume(call.status, record)
            if call.status in FINISHED:
                heapq.heappush(tracker._finished, (seq, call.id))
        tracker._next_seq = len(calls)
        return tracker


_HANDLERS: Final = {
    "start": ToolCallTracker._start,
    "delta": ToolCallTracker._delta,
    "ready": ToolCallTracker._ready,
    "result": ToolCallTracker._result,
    "error": ToolCallTracker._error,
}


def _view(instance: Instance) -> ToolCallView:
    record: ToolCallModel = instance.model
    return ToolCallView(
        id=record.id,
        name=record.name,
        args_text=record.args_text,
        args=copy.deepcopy(record.args),
        status=instance._node.state.id,  # type: ignore[arg-type]
        result=copy.deepcopy(record.result),
        error=copy.deepcopy(record.error),
    )


def _as_mapping(event: Any) -> Mapping[str, Any]:
    """Turn an event model or any other mapping into a dict the handlers read."""
    if isinstance(event, StartEvent | DeltaEvent | ReadyEvent | ResultEvent | ErrorEvent):
        return event.to_wire()
    if isinstance(event, Mapping):
        return dict(event)
    kind = type(event).__name__
    raise InvalidEvent("event", f"expected a JSON object or an event model, got {kind}")


def _plain_str(value: Any) -> Any:
    """A ``str`` subclass (a ``StrEnum`` member, say) as a plain ``str``; ``None`` for others."""
    return str.__str__(value) if isinstance(value, str) else None


def _id_reason(value: Any) -> str:
    if value is None:
        return "missing (every event names its call)"
    if value == "":
        return "must not be empty"
    return f"must be a string, got {type(value).__name__}"


def _string_reason(value: Any, what: str, allow_empty: bool = False) -> str:
    if value is _MISSING or value is None:
        return f"missing ({what})"
    if value == "" and not allow_empty:
        return "must not be empty"
    return f"must be a string ({what}), got {type(value).__name__}"


def tool_call_streaming_state_machine(*, max_history: int | None = None) -> ToolCallTracker:
    """The original API's constructor (T1): a new, empty ``ToolCallTracker``."""
    return ToolCallTracker(max_history=max_history)
