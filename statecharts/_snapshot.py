"""Instance snapshots: a versioned, JSON-able picture of where an instance is, and its restore.

The picture (C17)::

    {"format": "statecharts.instance", "version": 1, "chart": "shop.Order",
     "configuration": ["open", "shopping", "cart"],          # the active states, in the
                                                              # instance's (entry) order
     "history": {"steps.deep": ["basics", "email"]},          # history values recorded so far
     "queued": {"internal": [], "external": []},              # events an earlier failure left
     "timers": [],                                            # delayed events (none yet)
     "fields": {"order_id": 7}}                               # a custom __init__'s fields

A restored instance continues exactly as the original would have: the configuration's order
decides the order transitions are selected in, so it is kept as taken. The model is not part
of the picture: it is the caller's (pass it to ``Chart.restore``). Restoring checks everything
first (the format, version and chart, every id, that the configuration and each history value
is one the chart can be in, that queued payloads are plain JSON) and builds the instance only
then, so a damaged or foreign snapshot raises ``SnapshotError`` naming the field and the reason,
and nothing is half-restored.

Delayed events (timers) belong to the runtime's timer queue: ``_timer_pictures`` and
``_restore_timers`` are the one place they are written and read. Until the runtime keeps
timers between events, an instance never holds one when it is idle, so ``timers`` is empty;
a picture that lists timers is refused rather than dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._errors import SnapshotError
from ._ir import StateDef

if TYPE_CHECKING:
    from ._runtime import Chart, Instance

FORMAT = "statecharts.instance"
VERSION = 1
_KEYS = ("format", "version", "chart", "configuration", "history", "queued", "timers", "fields")


def take(instance: Instance) -> dict[str, Any]:
    """The picture of ``instance`` (see the module docstring); ``SnapshotError`` if it is
    running an event (a snapshot is taken between events) or holds what JSON cannot keep."""
    from ._runtime import _BUSY

    pending = instance._pending
    if pending is _BUSY or (pending is not None and pending.busy):
        raise SnapshotError(
            "instance",
            "it is running an event (taken from a callback); take snapshots between events",
        )
    node: Any = instance._node
    queued: dict[str, list[Any]] = {"internal": [], "external": []}
    timers: list[Any] = []
    if pending is not None:  # events a failed event left, run before the next one
        for kind in ("internal", "external"):
            queue = getattr(pending, kind)
            queued[kind] = [
                _event_picture(item, f"queued.{kind}[{index}]") for index, item in enumerate(queue)
            ]
        timers = _timer_pictures(pending)
    history = getattr(node, "history", ())
    fields = vars(instance) if hasattr(instance, "__dict__") else {}
    return {
        "format": FORMAT,
        "version": VERSION,
        "chart": instance.chart.qualname,
        "configuration": [state.id for state in node.declared_configuration],
        "history": {name: [state.id for state in states] for name, states in history},
        "queued": queued,
        "timers": timers,
        "fields": {
            name: _plain(value, f"fields.{name}") for name, value in sorted(fields.items())
        },
    }


def restore(chart: Chart, picture: Any, model: Any) -> Instance:
    """An instance of ``chart`` where ``picture`` says, with ``model`` (no callback runs)."""
    from ._hierarchy import HBinding
    from ._runtime import _Queues

    checked = _Checked(chart, picture)
    runtime = chart._runtime
    assert runtime is not None
    binding: Any = runtime.binding(model)
    if binding.instance_names:
        binding.check_instance(model)
    declared = runtime.declared_states
    if isinstance(binding, HBinding):
        history = {
            name: [declared[state_id] for state_id in ids] for name, ids in checked.history.items()
        }
        node = binding.node(tuple(declared[i] for i in checked.configuration), history)
    else:
        node = binding.nodes[checked.configuration[0]]
    instance: Instance = binding.cls(node, model)
    for name, value in checked.fields.items():
        object.__setattr__(instance, name, value)
    if checked.internal or checked.external or checked.timers:
        queues = _Queues()
        queues.internal.extend(checked.internal)
        queues.external.extend(checked.external)
        _restore_timers(queues, checked.timers)
        queues.busy = False  # as an earlier failure leaves them: run before the next event
        instance._pending = queues
    return instance


# -- the runtime's queues ----------------------------------------------------------------------


def _timer_pictures(queues: Any) -> list[Any]:
    """The delayed events an idle instance holds (the timer queue's extension point)."""
    if queues.delayed:
        raise SnapshotError(
            "timers", f"{len(queues.delayed)} delayed events are pending; snapshots keep none yet"
        )
    return []


def _restore_timers(queues: Any, timers: list[Any]) -> None:
    """Put pictured delayed events back on the timer queue (none can be pictured yet)."""
    assert not timers


# -- checking a picture ------------------------------------------------------------------------


class _Checked:
    """A picture read and checked against the chart; raises ``SnapshotError`` at the first
    thing wrong."""

    def __init__(self, chart: Chart, picture: Any) -> None:
        self.chart = chart
        self.states = {state.id: state for state in chart.states}
        _check_header(chart, picture)
        self.configuration = self._configuration(picture["configuration"])
        self.history = self._history(picture["history"])
        queued = picture["queued"]
        if not isinstance(queued, Mapping) or set(queued) != {"internal", "external"}:
            raise SnapshotError("queued", "must be an object with 'internal' and 'external' lists")
        self.internal = self._events(queued["internal"], "queued.internal")
        self.external = self._events(queued["external"], "queued.external")
        timers = picture["timers"]
        if not isinstance(timers, list):
            raise SnapshotError("timers", f"must be a list, got {_kind(timers)}")
        if timers:
            raise SnapshotError("timers", "delayed events cannot be restored by this runtime yet")
        self.timers: list[Any] = timers
        self.fields = self._fields(picture["fields"])

    def _ids(self, value: Any, where: str) -> list[StateDef]:
        if not isinstance(value, list):
            raise SnapshotError(where, f"must be a list of state ids, got {_kind(value)}")
        found: list[StateDef] = []
        for index, state_id in enumerate(value):
            here = f"{where}[{index}]"
            if not isinstance(state_id, str):
                raise SnapshotError(here, f"must be a state id, got {_kind(state_id)}")
            state = self.states.get(state_id)
            if state is None:
                raise SnapshotError(here, f"{state_id!r} is not a state of {self.chart.name}")
            if state.kind in ("shallow_history", "deep_history"):
                raise SnapshotError(here, f"{state_id!r} is a history pseudo-state")
            if state in found:
                raise SnapshotError(here, f"{state_id!r} is listed twice")
            found.append(state)
        return found

    def _configuration(self, value: Any) -> list[str]:
        states = self._ids(value, "configuration")
        if not states and self.chart.is_hierarchical:
            # python-statemachine leaves a statechart with no active state when it enters a
            # history state that has neither a record nor a default: an instance can be there
            return []
        _legal(self.states, {state.id for state in states}, None, "configuration")
        return [state.id for state in states]

    def _history(self, value: Any) -> dict[str, list[str]]:
        if not isinstance(value, Mapping):
            raise SnapshotError("history", f"must be an object, got {_kind(value)}")
        history: dict[str, list[str]] = {}
        for name, ids in value.items():
            where = f"history.{name}"
            owner = self.states.get(name) if isinstance(name, str) else None
            if owner is None or owner.kind not in ("shallow_history", "deep_history"):
                raise SnapshotError(where, f"{name!r} is not a history state of {self.chart.name}")
            states = self._ids(ids, where)
            if not states:
                raise SnapshotError(where, "a recorded history lists at least one state")
            assert owner.parent is not None
            active = {state.id for state in states}
            if owner.kind == "shallow_history":
                for index, state in enumerate(states):
                    if state.parent != owner.parent:
                        raise SnapshotError(
                            f"{where}[{index}]",
                            f"{state.id!r} is not a child of {owner.parent!r} "
                            "(a shallow history records children)",
                        )
                _one_level(self.states, active, owner.parent, where)
            else:
                for index, state in enumerate(states):
                    if not _inside(self.states, state, owner.parent):
                        raise SnapshotError(
                            f"{where}[{index}]",
                            f"{state.id!r} is not inside {owner.parent!r} "
                            "(a deep history records its descendants)",
                        )
                _legal(self.states, active, owner.parent, where)
            history[name] = [state.id for state in states]
        return history

    def _events(self, value: Any, where: str) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
        if not isinstance(value, list):
            raise SnapshotError(where, f"must be a list, got {_kind(value)}")
        events = []
        for index, item in enumerate(value):
            here = f"{where}[{index}]"
            if not isinstance(item, Mapping) or set(item) != {"event", "args", "kwargs"}:
                raise SnapshotError(here, "must be an object with 'event', 'args' and 'kwargs'")
            if not isinstance(item["event"], str) or not item["event"]:
                raise SnapshotError(f"{here}.event", "must be a non-empty string")
            if not isinstance(item["args"], list):
                raise SnapshotError(f"{here}.args", f"must be a list, got {_kind(item['args'])}")
            if not isinstance(item["kwargs"], Mapping):
                raise SnapshotError(
                    f"{here}.kwargs", f"must be an object, got {_kind(item['kwargs'])}"
                )
            args = _plain(item["args"], f"{here}.args")
            kwargs = _plain(dict(item["kwargs"]), f"{here}.kwargs")
            events.append((item["event"], tuple(args), kwargs))
        return events

    def _fields(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise SnapshotError("fields", f"must be an object, got {_kind(value)}")
        runtime = self.chart._runtime
        assert runtime is not None
        allowed = runtime.instance_fields
        fields = {}
        for name, field in value.items():
            if name not in allowed:
                raise SnapshotError(
                    f"fields.{name}",
                    f"{self.chart.name} keeps no field of that name"
                    + (f" (its __init__ sets {', '.join(sorted(allowed))})" if allowed else ""),
                )
            fields[name] = _plain(field, f"fields.{name}")
        return fields


def _check_header(chart: Chart, picture: Any) -> None:
    """The snapshot is an object with exactly the known fields, of this format, version and
    chart."""
    if not isinstance(picture, Mapping):
        raise SnapshotError("snapshot", f"must be a JSON object, got {_kind(picture)}")
    for key in picture:
        if key not in _KEYS:
            raise SnapshotError(
                str(key), "unknown field (a snapshot has " + ", ".join(_KEYS) + ")"
            )
    for key in _KEYS:
        if key not in picture:
            raise SnapshotError(key, "missing")
    if picture["format"] != FORMAT:
        raise SnapshotError("format", f"{picture['format']!r} is not {FORMAT!r}")
    version = picture["version"]
    if type(version) is not int or version < 1:
        raise SnapshotError("version", f"must be a positive integer, got {version!r}")
    if version != VERSION:
        raise SnapshotError(
            "version", f"{version} is not a version this runtime reads ({VERSION})"
        )
    if picture["chart"] != chart.qualname:
        raise SnapshotError(
            "chart", f"the snapshot is of {picture['chart']!r}, not of {chart.qualname!r}"
        )


def _inside(states: Mapping[str, StateDef], state: StateDef, ancestor: str) -> bool:
    parent = state.parent
    while parent is not None:
        if parent == ancestor:
            return True
        parent = states[parent].parent
    return False


def _children(states: Mapping[str, StateDef], parent: str | None) -> list[StateDef]:
    return [
        state
        for state in states.values()
        if state.parent == parent and state.kind not in ("shallow_history", "deep_history")
    ]


def _one_level(
    states: Mapping[str, StateDef], active: set[str], parent: str | None, where: str
) -> list[str]:
    """The active children of ``parent``, checked: one of a compound (or of the chart), all
    regions of a parallel state."""
    children = _children(states, parent)
    on = [child.id for child in children if child.id in active]
    owner = "the chart" if parent is None else repr(parent)
    if parent is not None and states[parent].kind == "parallel":
        for child in children:
            if child.id not in active:
                raise SnapshotError(
                    where, f"region {child.id!r} of the parallel state {owner} is not active"
                )
    elif not on:
        raise SnapshotError(where, f"no state of {owner} is active")
    elif len(on) > 1:
        raise SnapshotError(
            where, f"{on[0]!r} and {on[1]!r} are both active; {owner} is in one at a time"
        )
    return on


def _legal(states: Mapping[str, StateDef], active: set[str], root: str | None, where: str) -> None:
    """Raise unless ``active`` is exactly a configuration of ``root``'s inside (the whole
    chart for ``None``): from the root down, one child of each compound, every region of each
    parallel state, and nothing else."""
    reached: set[str] = set()
    todo = [root]
    while todo:
        parent = todo.pop()
        if parent is not None and states[parent].kind == "atomic":
            continue
        for child in _one_level(states, active, parent, where):
            reached.add(child)
            todo.append(child)
    for state_id in sorted(active - reached, key=lambda i: states[i].order):
        parent = states[state_id].parent
        raise SnapshotError(
            where,
            f"{state_id!r} is active but "
            + (f"its parent {parent!r} is not" if parent not in active else "it is not reachable"),
        )


def _event_picture(item: tuple[str, tuple[Any, ...], dict[str, Any]], where: str) -> Any:
    event, args, kwargs = item
    return {
        "event": event,
        "args": _plain(list(args), f"{where}.args"),
        "kwargs": _plain(dict(kwargs), f"{where}.kwargs"),
    }


def _plain(value: Any, where: str) -> Any:
    """``value`` if it is plain JSON data that comes back equal from JSON (so a restored
    instance sees the same value), else ``SnapshotError`` naming where it is."""
    try:
        loaded = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError, RecursionError) as error:
        raise SnapshotError(where, f"not plain JSON data ({error})") from None
    if loaded != value or not _same_types(loaded, value):
        raise SnapshotError(
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
