"""Instance snapshots: a versioned, JSON-able picture of where an instance is, and its restore.

The picture (C19)::

    {"format": "statecharts.instance", "version": 2, "chart": "shop.Order",
     "structure": "3f0c5e1a9b2d7c64",                        # the chart's states and
                                                              # transitions, digested
     "configuration": ["open", "shopping", "cart"],          # the active states, in the
                                                              # instance's (entry) order
     "history": {"steps.deep": ["basics", "email"]},          # history values recorded so far
     "queued": {"internal": [], "external": []},              # events an earlier failure left
     "timers": [{"event": "remind", "args": [], "kwargs": {},  # delayed events, in the
                 "send_id": "r1", "due_in_ms": 250.0}],       # order they run
     "fields": {"order_id": 7}}                               # a custom __init__'s fields

and, only for a statechart whose top-level parallel state is complete without having stopped
the machine yet, ``"stopping": "running"`` (it never will: the final state completing it was
interrupted) or ``"pending"`` (it stops at the end of the next macrostep).

A restored instance continues exactly as the original would have: the configuration's order
decides the order transitions are selected in, so it is kept as taken. The model is not part
of the picture: it is the caller's (pass it to ``Chart.restore``). Restoring checks everything
first (the format, version and chart, every id, that the configuration and each history value
is one the chart can be in, that queued payloads are plain JSON) and builds the instance only
then, so a damaged or foreign snapshot raises ``InstanceSnapshotError`` naming the field and
the reason, and nothing is half-restored.

The chart is named by its ``module.qualname`` and told apart by its ``structure``: a digest of
its states (id, parent, kind, initial, final) and transitions (source, targets, events,
internal, initial), in declaration order, so two charts of one name (made by one factory
function, or a chart whose states or transitions changed since the snapshot was taken) do not
restore each other's snapshots, while the same chart declared again (in another process)
does. Callbacks are not part of it: what they are named or do is the program's. Version 1
pictures (taken before the structure was kept, with no ``structure``) are still read, checked
by the chart's name only; snapshots are taken at version 2, which runtimes reading only
version 1 refuse (``version``).

Delayed events (timers) are kept relative to the instance's clock: ``due_in_ms`` is how long
after the snapshot was taken each is due (whole nanoseconds, as the runtime keeps due times,
so the same remaining time gives the same picture and timers due together stay together;
negative: overdue, it runs first). ``Chart.restore(snapshot, model, clock=...)`` schedules
them on the clock given, each due that long after the restore, in the listed order (which
breaks a tie as the order they were sent did), with its ``send_id`` (so ``cancel_event`` still
reaches it); a snapshot listing
timers needs that clock. Version 1 pictures always had ``timers`` empty before timers were
kept, and runtimes of that time refuse a picture listing any rather than drop them, so the
version stays 1.

A queued event or timer sent otherwise than its place says (an internal event with a
``send_id``, an event sent with a delay other than its declared one, an internal one sent from
outside a run) also has ``"sent": {"send_id": ..., "delay": ..., "internal": ...}``: the event
object and ``trigger_data`` its callbacks receive read those, restored as taken. Only such
events have it, so other pictures are as before; a runtime that does not know the key refuses
the picture (``queued.internal[0]``) rather than run the event otherwise.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from ._clock import finite_number
from ._errors import InstanceSnapshotError
from ._ir import ChartDef, StateDef

FORMAT = "statecharts.instance"
VERSION = 2
#: The versions ``check`` reads (1: no ``structure``).
READ_VERSIONS = (1, 2)
_TIMER_KEYS = ("event", "args", "kwargs", "send_id", "due_in_ms")
#: The keys of an event's ``sent`` (see the module docstring).
_SENT_KEYS = ("send_id", "delay", "internal")
#: How an event was sent, where its place does not say it: ``(send_id, delay, internal)``
#: (the runtime's ``_Queues.sent`` values, by the ``id`` of the event's item).
Sent = tuple[Any, Any, bool]
_KEYS = (
    "format",
    "version",
    "chart",
    "structure",
    "configuration",
    "history",
    "queued",
    "timers",
    "fields",
    "stopping",
)
#: Fields a snapshot has only when they say something (``stopping``: a statechart whose
#: top-level parallel state is complete but has not stopped it, or is about to).
_OPTIONAL = ("structure", "stopping")
#: ``stopping``'s values: the machine runs on although its top-level parallel state is
#: complete; or it stops at the end of its next macrostep.
STOPPING = ("running", "pending")


def structure(chart: ChartDef) -> str:
    """The digest of a chart's states and transitions a snapshot keeps (``structure``): the
    same for the same declaration in any process, different for charts of one name whose
    states or transitions differ."""
    shape = {
        "states": [
            [state.id, state.parent, state.kind, state.initial, state.final]
            for state in chart.states
        ],
        "transitions": [
            [t.source, list(t.targets), list(t.events), t.internal, t.initial]
            for t in chart.transitions
        ],
        "start": list(chart.start_configuration),
    }
    text = json.dumps(shape, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def take(
    chart: ChartDef,
    digest: str,
    configuration: Iterable[str],
    history: Iterable[tuple[str, Iterable[str]]],
    queued: Mapping[str, Iterable[tuple[str, tuple[Any, ...], dict[str, Any]]]],
    delayed: Iterable[Any],
    now: int,
    fields: Mapping[str, Any],
    instance_fields: frozenset[str],
    stopping: str | None = None,
    sent: Mapping[int, Sent] | None = None,
) -> dict[str, Any]:
    """The picture of an idle instance (see the module docstring) from what it holds
    (``stopping``: see ``STOPPING``; ``sent``: how queued events were sent, by their items'
    ``id``); ``InstanceSnapshotError`` for what JSON cannot keep, or a field the chart does not
    keep."""
    for name in fields:
        if name not in instance_fields:
            raise InstanceSnapshotError(
                f"fields.{name}",
                f"not a field of {chart.name} (one its __init__ sets, or class-level data a "
                "callback sets); a snapshot keeps only those",
            )
    picture = {
        "format": FORMAT,
        "version": VERSION,
        "chart": chart.qualname,
        "structure": digest,
        "configuration": list(configuration),
        "history": {name: list(ids) for name, ids in history},
        "queued": {
            kind: [
                _event_picture(item, f"queued.{kind}[{index}]", sent)
                for index, item in enumerate(queued.get(kind, ()))
            ]
            for kind in ("internal", "external")
        },
        "timers": timer_pictures(delayed, now, sent),
        "fields": {
            name: _plain(value, f"fields.{name}") for name, value in sorted(fields.items())
        },
    }
    if stopping is not None:
        picture["stopping"] = stopping
    return picture


def check(chart: ChartDef, digest: str, picture: Any, instance_fields: frozenset[str]) -> Checked:
    """``picture`` read and checked against ``chart`` (whose ``structure`` is ``digest``):
    ``InstanceSnapshotError`` at the first thing wrong, before anything is built."""
    return Checked(chart, digest, picture, instance_fields)


# -- the runtime's timer queue -----------------------------------------------------------------


def timer_pictures(
    delayed: Iterable[Any], now: int, sent: Mapping[int, Sent] | None = None
) -> list[dict[str, Any]]:
    """The delayed events an idle instance holds (the runtime's ``(due, sequence, send_id,
    (event, args, kwargs))`` entries, due in nanoseconds of the clock), in the order they
    run, each due ``due_in_ms`` after ``now`` (the clock's time, in nanoseconds)."""
    pictures = []
    for index, (due, _, send_id, item) in enumerate(
        sorted(delayed, key=lambda entry: (entry[0], entry[1]))
    ):
        where = f"timers[{index}]"
        picture = _event_picture(item, where, sent)
        picture["send_id"] = _plain(send_id, f"{where}.send_id")
        picture["due_in_ms"] = _due_in_ms(due, now)
        pictures.append(picture)
    return pictures


def _due_in_ms(due: int, now: int) -> float:
    # whole nanoseconds apart: two timers due together stay due together in the picture
    return (due - now) / 1_000_000


def restore_timers(
    timers: Iterable[Timer], now: int
) -> list[tuple[int, Any, tuple[str, tuple[Any, ...], dict[str, Any]], Sent | None]]:
    """Checked timers as ``(due, send_id, (event, args, kwargs), sent)``, in the order they
    run, each due ``due_in_ms`` after ``now`` (the restoring clock's time; both in
    nanoseconds)."""
    return [
        (
            now + _nanoseconds(timer.due_in_ms),
            timer.send_id,
            (timer.event, timer.args, timer.kwargs),
            timer.sent,
        )
        for timer in timers
    ]


def _nanoseconds(milliseconds: float) -> int:
    """Finite ``milliseconds`` in whole nanoseconds, exact however large."""
    whole = int(milliseconds)
    return whole * 1_000_000 + round((milliseconds - whole) * 1_000_000)


class Timer(NamedTuple):
    """A delayed event read from a picture."""

    event: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    send_id: Any
    due_in_ms: float
    sent: Sent | None = None


# -- checking a picture ------------------------------------------------------------------------


class Checked:
    """A picture read and checked against the chart; raises ``InstanceSnapshotError`` at the first
    thing wrong."""

    def __init__(
        self, chart: ChartDef, digest: str, picture: Any, instance_fields: frozenset[str]
    ) -> None:
        self.instance_fields = instance_fields
        self.chart = chart
        self.states = {state.id: state for state in chart.states}
        _check_header(chart, digest, picture)
        self.configuration = self._configuration(picture["configuration"])
        self.history = self._history(picture["history"])
        queued = picture["queued"]
        if not isinstance(queued, Mapping) or set(queued) != {"internal", "external"}:
            raise InstanceSnapshotError(
                "queued", "must be an object with 'internal' and 'external' lists"
            )
        #: how queued events were sent (``Sent``), by the ``id`` of their items here
        self.sent: dict[int, Sent] = {}
        self.internal = self._events(queued["internal"], "queued.internal")
        self.external = self._events(queued["external"], "queued.external")
        self.timers = self._timers(picture["timers"])
        self.fields = self._fields(picture["fields"])
        self.stopping: str | None = picture.get("stopping")

    def _ids(self, value: Any, where: str) -> list[StateDef]:
        if not isinstance(value, list):
            raise InstanceSnapshotError(where, f"must be a list of state ids, got {_kind(value)}")
        found: list[StateDef] = []
        for index, state_id in enumerate(value):
            here = f"{where}[{index}]"
            if not isinstance(state_id, str):
                raise InstanceSnapshotError(here, f"must be a state id, got {_kind(state_id)}")
            state = self.states.get(state_id)
            if state is None:
                raise InstanceSnapshotError(
                    here, f"{state_id!r} is not a state of {self.chart.name}"
                )
            if state.kind in ("shallow_history", "deep_history"):
                raise InstanceSnapshotError(here, f"{state_id!r} is a history pseudo-state")
            if state in found:
                raise InstanceSnapshotError(here, f"{state_id!r} is listed twice")
            found.append(state)
        return found

    def _configuration(self, value: Any) -> list[str]:
        states = self._ids(value, "configuration")
        active = {state.id for state in states}
        if not self.chart.is_hierarchical:
            _one_state(self.states, active, "configuration")
        else:
            # python-statemachine can leave a statechart in part of a configuration (entering
            # a history state with neither a record nor a default enters nothing; an internal
            # transition of a parallel state leaves its ancestors), so any part of one is
            # accepted, and only states that cannot be active together are refused
            _consistent(self.states, active, None, "configuration")
        return [state.id for state in states]

    def _history(self, value: Any) -> dict[str, list[str]]:
        if not isinstance(value, Mapping):
            raise InstanceSnapshotError("history", f"must be an object, got {_kind(value)}")
        history: dict[str, list[str]] = {}
        for name, ids in value.items():
            where = f"history.{name}"
            owner = self.states.get(name) if isinstance(name, str) else None
            if owner is None or owner.kind not in ("shallow_history", "deep_history"):
                raise InstanceSnapshotError(
                    where, f"{name!r} is not a history state of {self.chart.name}"
                )
            states = self._ids(ids, where)
            assert owner.parent is not None
            active = {state.id for state in states}
            if owner.kind == "shallow_history":
                for index, state in enumerate(states):
                    if state.parent != owner.parent:
                        raise InstanceSnapshotError(
                            f"{where}[{index}]",
                            f"{state.id!r} is not a child of {owner.parent!r} "
                            "(a shallow history records children)",
                        )
                _consistent(self.states, active, owner.parent, where)
            else:
                for index, state in enumerate(states):
                    if not _inside(self.states, state, owner.parent):
                        raise InstanceSnapshotError(
                            f"{where}[{index}]",
                            f"{state.id!r} is not inside {owner.parent!r} "
                            "(a deep history records its descendants)",
                        )
                _consistent(self.states, active, owner.parent, where)
            history[name] = [state.id for state in states]
        return history

    def _events(self, value: Any, where: str) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
        if not isinstance(value, list):
            raise InstanceSnapshotError(where, f"must be a list, got {_kind(value)}")
        events = []
        for index, item in enumerate(value):
            here = f"{where}[{index}]"
            if not isinstance(item, Mapping) or set(item) - {"sent"} != {
                "event",
                "args",
                "kwargs",
            }:
                raise InstanceSnapshotError(
                    here, "must be an object with 'event', 'args' and 'kwargs' (and 'sent')"
                )
            event = _event(item, here)
            if "sent" in item:
                self.sent[id(event)] = _sent(item["sent"], f"{here}.sent")
            events.append(event)
        return events

    def _timers(self, value: Any) -> list[Timer]:
        if not isinstance(value, list):
            raise InstanceSnapshotError("timers", f"must be a list, got {_kind(value)}")
        timers: list[Timer] = []
        for index, item in enumerate(value):
            here = f"timers[{index}]"
            if not isinstance(item, Mapping) or set(item) - {"sent"} != set(_TIMER_KEYS):
                raise InstanceSnapshotError(
                    here,
                    "must be an object with "
                    + ", ".join(f"'{k}'" for k in _TIMER_KEYS)
                    + " (and 'sent')",
                )
            event, args, kwargs = _event(item, here)
            due = _milliseconds(item["due_in_ms"], f"{here}.due_in_ms")
            if timers and due < timers[-1].due_in_ms:
                raise InstanceSnapshotError(
                    f"{here}.due_in_ms",
                    f"{due} is due before timers[{index - 1}] ({timers[-1].due_in_ms}); "
                    "timers are listed in the order they run",
                )
            send_id = _plain(item["send_id"], f"{here}.send_id")
            sent = _sent(item["sent"], f"{here}.sent") if "sent" in item else None
            timers.append(Timer(event, args, kwargs, send_id, due, sent))
        return timers

    def _fields(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise InstanceSnapshotError("fields", f"must be an object, got {_kind(value)}")
        allowed = self.instance_fields
        fields = {}
        for name, field in value.items():
            if name not in allowed:
                raise InstanceSnapshotError(
                    f"fields.{name}",
                    f"{self.chart.name} keeps no field of that name"
                    + (f" (it keeps {', '.join(sorted(allowed))})" if allowed else ""),
                )
            fields[name] = _plain(field, f"fields.{name}")
        return fields


def _milliseconds(value: Any, where: str) -> float:
    """A timer's ``due_in_ms``: a finite number (an integer too large for a float is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceSnapshotError(
            where, f"must be a finite number of milliseconds, got {value!r}"
        )
    try:
        due = float(value)
    except OverflowError:
        due = math.inf
    if not math.isfinite(due):
        shown = repr(value) if len(repr(value)) < 40 else f"a number of {len(repr(value))} digits"
        raise InstanceSnapshotError(where, f"must be a finite number of milliseconds, got {shown}")
    return due


def _event(item: Mapping[str, Any], here: str) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """The ``event``, ``args`` and ``kwargs`` of a pictured event, checked."""
    if not isinstance(item["event"], str) or not item["event"]:
        raise InstanceSnapshotError(f"{here}.event", "must be a non-empty string")
    if not isinstance(item["args"], list):
        raise InstanceSnapshotError(f"{here}.args", f"must be a list, got {_kind(item['args'])}")
    if not isinstance(item["kwargs"], Mapping):
        raise InstanceSnapshotError(
            f"{here}.kwargs", f"must be an object, got {_kind(item['kwargs'])}"
        )
    args = _plain(item["args"], f"{here}.args")
    kwargs = _plain(dict(item["kwargs"]), f"{here}.kwargs")
    return item["event"], tuple(args), kwargs


def _check_header(chart: ChartDef, digest: str, picture: Any) -> None:
    """The snapshot is an object with exactly the known fields (of its version), of this
    format, a version read here, and this chart (its name and, from version 2, its
    structure)."""
    if not isinstance(picture, Mapping):
        raise InstanceSnapshotError("snapshot", f"must be a JSON object, got {_kind(picture)}")
    for key in picture:
        if key not in _KEYS:
            raise InstanceSnapshotError(
                str(key), "unknown field (a snapshot has " + ", ".join(_KEYS) + ")"
            )
    for key in _KEYS:
        if key not in picture and key not in _OPTIONAL:
            raise InstanceSnapshotError(key, "missing")
    if "stopping" in picture and picture["stopping"] not in STOPPING:
        raise InstanceSnapshotError(
            "stopping",
            f"must be one of {', '.join(map(repr, STOPPING))}, got {picture['stopping']!r}",
        )
    if picture["format"] != FORMAT:
        raise InstanceSnapshotError("format", f"{picture['format']!r} is not {FORMAT!r}")
    version = _version(picture["version"])
    if version == 1 and "structure" in picture:
        raise InstanceSnapshotError(
            "structure", "unknown field (a version 1 snapshot has none; version 2 keeps it)"
        )
    if version > 1 and "structure" not in picture:
        raise InstanceSnapshotError("structure", "missing")
    if picture["chart"] != chart.qualname:
        raise InstanceSnapshotError(
            "chart", f"the snapshot is of {picture['chart']!r}, not of {chart.qualname!r}"
        )
    if version > 1 and picture["structure"] != digest:
        raise InstanceSnapshotError(
            "structure",
            f"the snapshot is of another chart named {chart.qualname!r} (structure "
            f"{picture['structure']!r}, not {digest!r}: its states or transitions differ)",
        )


def _version(version: Any) -> int:
    """The snapshot's ``version``, one this runtime reads."""
    if type(version) is not int or version < 1:
        raise InstanceSnapshotError("version", f"must be a positive integer, got {version!r}")
    if version not in READ_VERSIONS:
        read = ", ".join(str(known) for known in READ_VERSIONS)
        raise InstanceSnapshotError(
            "version", f"{version} is not a version this runtime reads ({read})"
        )
    return version


def _inside(states: Mapping[str, StateDef], state: StateDef, ancestor: str) -> bool:
    parent = state.parent
    while parent is not None:
        if parent == ancestor:
            return True
        parent = states[parent].parent
    return False


def _one_state(states: Mapping[str, StateDef], active: set[str], where: str) -> None:
    """A flat chart is in exactly one state."""
    on = [state_id for state_id in states if state_id in active]
    if not on:
        raise InstanceSnapshotError(where, "no state of the chart is active")
    if len(on) > 1:
        raise InstanceSnapshotError(
            where, f"{on[0]!r} and {on[1]!r} are both active; the chart is in one at a time"
        )


def _consistent(
    states: Mapping[str, StateDef], active: set[str], root: str | None, where: str
) -> None:
    """Raise unless ``active`` is part of some configuration of ``root``'s inside: with their
    ancestors (up to ``root``), the states never put two children of one compound state (or
    two top-level states) in it at once."""
    closure = set(active)
    for state_id in active:
        parent = states[state_id].parent
        while parent is not None and parent != root:
            closure.add(parent)
            parent = states[parent].parent
    by_parent: dict[str | None, list[str]] = {}
    for state in states.values():  # in document order
        if state.id in closure:
            by_parent.setdefault(state.parent, []).append(state.id)
    for parent, children in by_parent.items():
        if len(children) > 1 and (parent is None or states[parent].kind != "parallel"):
            owner = "the chart" if parent is None else repr(parent)
            raise InstanceSnapshotError(
                where,
                f"{children[0]!r} and {children[1]!r} are both active (or hold active states); "
                f"{owner} is in one at a time",
            )


def _event_picture(
    item: tuple[str, tuple[Any, ...], dict[str, Any]],
    where: str,
    sent: Mapping[int, Sent] | None = None,
) -> dict[str, Any]:
    event, args, kwargs = item
    picture = {
        "event": event,
        "args": _plain(list(args), f"{where}.args"),
        "kwargs": _plain(dict(kwargs), f"{where}.kwargs"),
    }
    how = sent.get(id(item)) if sent else None
    if how is not None:
        picture["sent"] = {
            key: _plain(value, f"{where}.sent.{key}")
            for key, value in zip(_SENT_KEYS, how, strict=True)
        }
    return picture


def _sent(value: Any, where: str) -> Sent:
    """A pictured event's ``sent``, checked."""
    if not isinstance(value, Mapping) or set(value) != set(_SENT_KEYS):
        raise InstanceSnapshotError(
            where, "must be an object with " + ", ".join(f"'{k}'" for k in _SENT_KEYS)
        )
    delay = value["delay"]
    if delay is not None and not finite_number(delay):
        raise InstanceSnapshotError(f"{where}.delay", "must be null or a finite number")
    if not isinstance(value["internal"], bool):
        raise InstanceSnapshotError(f"{where}.internal", "must be true or false")
    return _plain(value["send_id"], f"{where}.send_id"), delay, value["internal"]


def _plain(value: Any, where: str) -> Any:
    """``value`` if it is plain JSON data that comes back equal from JSON (so a restored
    instance sees the same value), else ``InstanceSnapshotError`` naming where it is."""
    try:
        loaded = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError, RecursionError) as error:
        raise InstanceSnapshotError(where, f"not plain JSON data ({error})") from None
    if loaded != value or not _same_types(loaded, value):
        raise InstanceSnapshotError(
            where, "does not come back equal from JSON (a tuple, a non-string key ...)"
        )
    return loaded


def _same_types(left: Any, right: Any) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, list):
        return all(_same_types(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict):
        return all(_same_types(left[key], right[key]) for key in left)
    return True


def _kind(value: Any) -> str:
    return type(value).__name__
