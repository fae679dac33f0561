"""Run instances of a compiled chart.

An instance is a slotted object holding its current state node, its model and a run-to-completion
queue marker. A state node maps each event to a generated function (see ``_codegen``), so sending
an event is one dict lookup and one call. All instances of a chart share its nodes.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import heapq
import inspect
import itertools
import sys
import threading
import time
import types
from collections import deque
from collections.abc import Callable, Coroutine, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

from statemachine import StateChart, StateMachine
from statemachine.event import Event as DeclaredEvent
from statemachine.event import raise_delayed_internal
from statemachine.exceptions import (
    InvalidDefinition,
    InvalidStateValue,
    StateMachineError,
    TransitionNotAllowed,
)
from statemachine.model import Model
from statemachine.orderedset import OrderedSet
from statemachine.state import State as DeclaredState
from statemachine.transition import Transition as DeclaredTransition

from . import _async, _snapshot
from ._clock import NS, Clock, Due, VirtualClock, clock_ns, finite_number, milliseconds_ns
from ._codegen import FunctionWriter, Module, Step, _dyn, _kwall, verdict, write_function
from ._compiler import (
    RUNTIME_NAMES,
    chart_attributes,
    custom_init,
    declared_states,
    descriptor_matches,
    foreign_machine_use,
    init_fields,
    read_chart,
)
from ._compiler import declared_transitions as all_declared_transitions
from ._errors import InstanceSnapshotError, UnsupportedChart
from ._hierarchy import HBinding, Support, describe_transition
from ._ir import CallbackDef, ChartDef, Group, RefKind, StateDef, TransitionDef
from ._resolve import (
    _MISSING,
    Resolved,
    Resolver,
    _static_lookup,
    check_model,
    hold,
    parse_guard,
)

OutcomeReason = Literal[
    "unknown_event", "no_transition", "guards_rejected", "terminated", "queued", "failed"
]


class Outcome:
    """What sending one event did.

    ``applied`` is true when a transition ran; then ``transition`` is the one taken and
    ``target`` the state the instance is in now (``None`` when it is in none: a history state
    with no default and nothing recorded, as python-statemachine leaves it). Otherwise
    ``reason`` says why the event was ignored: ``"unknown_event"`` (the chart declares no
    such event), ``"no_transition"`` (none from this state), ``"guards_rejected"``
    (transitions exist but no guard allowed one), ``"terminated"`` (the instance is in a
    final state), ``"queued"`` (sent from inside a callback: it runs once the current event
    is done, as python-statemachine runs it) or
    ``"failed"`` (a ``before`` callback raised in a chart that catches errors as events: the
    transition was cancelled and ``error.execution`` raised).
    ``transitions`` lists every transition the event's macrostep took, in order (for a flat
    chart, just ``transition``): on a hierarchical chart each microstep's chosen transitions,
    then the initial (and history default) transitions entering states took, after them.
    An outcome is true exactly when it was applied.
    """

    __slots__ = ("applied", "event", "reason", "source", "target", "transition", "transitions")

    applied: bool
    event: str
    source: StateDef
    target: StateDef | None
    transition: TransitionDef | None
    transitions: tuple[TransitionDef, ...]
    reason: OutcomeReason | None

    def __init__(
        self,
        applied: bool,
        event: str,
        source: StateDef,
        target: StateDef | None,
        transition: TransitionDef | None,
        reason: OutcomeReason | None,
        transitions: tuple[TransitionDef, ...] | None = None,
    ) -> None:
        if transitions is None:
            transitions = () if transition is None else (transition,)
        object.__setattr__(self, "transitions", transitions)
        object.__setattr__(self, "applied", applied)
        object.__setattr__(self, "event", event)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "transition", transition)
        object.__setattr__(self, "reason", reason)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Outcome is immutable")

    def __bool__(self) -> bool:
        return self.applied

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outcome):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[Any, ...]:
        return (
            self.applied,
            self.event,
            self.source,
            self.target,
            self.transition,
            self.reason,
            self.transitions,
        )

    def __repr__(self) -> str:
        if self.applied:
            assert self.transition is not None
            return f"Outcome(applied, {self.event!r}: {self.transition.id})"
        return f"Outcome(ignored, {self.event!r} in {self.source.id!r}: {self.reason})"


_BUSY: Any = ()
#: ``send`` keywords that are python-statemachine options, never payload.
#: What ``send`` takes apart from the payload (``machine``: refused, as the event's own).
#: ``_EVENT_METHOD`` marks a call of an event method (``instance.go(...)``), which takes
#: ``send_id`` alone as an option: its ``delay`` and ``internal`` keywords are payload.
_EVENT_METHOD = "\x00event method"
#: ``_OUTSIDE`` marks an event sent from outside the run that holds the instance (another
#: task's): an internal one joins the external queue, its event object still internal, as
#: python-statemachine's engine uses its internal queue only for its own steps' events.
_OUTSIDE = "\x00outside the run"
_SEND_OPTIONS = frozenset({"delay", "send_id", "internal", "machine", _EVENT_METHOD, _OUTSIDE})
_sequence = itertools.count()


class _SendOptions(NamedTuple):
    """A ``send``'s payload and options, as ``Instance._options`` reads them."""

    payload: dict[str, Any]
    delay: float
    send_id: Any
    internal: bool
    #: the delay as sent, where not the declared one (its event object reads it)
    sent: float | None


def _send_options(instance: Instance, event: str, kwargs: dict[str, Any]) -> _SendOptions:
    """``Instance._options`` where an option is given or declared, else the payload as it is
    with the defaults (no copy)."""
    optioned = instance._node.binding.runtime.optioned
    if (kwargs and not _SEND_OPTIONS.isdisjoint(kwargs)) or event in optioned:
        return instance._options(event, kwargs)
    return _SendOptions(kwargs, 0, None, False, None)


#: The bindings generated for model instances holding callbacks themselves kept per chart
#: (``Runtime.variants``), the oldest dropped first: one for each set of names held.
_VARIANTS_KEPT = 64
_IGNORED_CACHE_SIZE = 256

#: Called with every outcome while registered (see ``observe_outcomes``).
Observer = Callable[["Instance", Outcome], None]
_observers: tuple[Observer, ...] = ()
_observers_lock = threading.Lock()


@contextmanager
def observe_outcomes(observer: Observer) -> Iterator[Observer]:
    """Call ``observer(instance, outcome)`` for every outcome of every compiled instance, from
    any thread, until the block ends: each ``send`` and each event queued by a callback when it
    runs. Several observers may be active at once; each sees everything sent while it is.

    This is the runtime's hook for test tooling (``statecharts.testing.record_coverage``); the
    cost when nothing observes is one global read per event. The observer runs on the thread
    that sent the event, so it must be thread-safe if instances run on several threads; an
    exception it raises reaches the sender.
    """
    global _observers
    with _observers_lock:
        _observers = (*_observers, observer)
    try:
        yield observer
    finally:
        with _observers_lock:
            remaining = list(_observers)
            remaining.remove(observer)
            _observers = tuple(remaining)


def _notify(instance: Instance, outcome: Outcome) -> None:
    for observer in _observers:
        observer(instance, outcome)


Item = tuple[str, tuple[Any, ...], dict[str, Any]]
#: A queued external event: (due, sequence, send_id, item); ordered by due time (whole
#: nanoseconds of the clock: no float sum puts a later-sent event due at the same time
#: first), then by the order the events were sent.
Timed = tuple[int, int, Any, Item]
#: How long an async instance's run awaits at a time for a delayed event to fall due (as
#: python-statemachine's async engine polls its queue).
_POLL_SECONDS = 0.001
#: ``_Queues.trigger`` of an event taken from the internal queue with no ``send_id``.
_INTERNAL_TRIGGER = (True, None, None)
#: ``_Queues.trigger`` of an external event taken from a queue, sent with no options.
_PLAIN = (False, None, None)


class _Queues:
    """Events waiting on an instance: ``internal`` ones (``raise_``, ``error.execution``, run
    within the current macrostep) and external ones (``send`` from a callback, each run as a
    macrostep of its own afterwards). External events sent while no delayed event waits are in
    ``external``, in order; the others (delayed events, events with a ``send_id``, and events
    sent while a delayed one waits) in ``timed``, a heap ordered by due time, which every event
    in ``external`` precedes (python-statemachine's external queue, ordered by due time).

    ``busy`` is false while the instance is idle with events still waiting: timers, or events
    left over from an event whose guards raised; those run first at the next ``send``.
    ``clock`` is the instance's clock (``None``: real time, waiting as python-statemachine's
    synchronous engine waits). ``trigger`` is ``(internal, send_id, delay)`` of the event
    being run when it was taken from a queue (``None``: sent from outside; ``delay`` ``None``:
    the declared one). ``sent`` holds, by the ``id`` of an item waiting, how it was sent where
    its place in the queues does not say it (``note``).
    """

    __slots__ = (
        "budget",
        "busy",
        "clock",
        "current",
        "dropped",
        "external",
        "in_internal",
        "internal",
        "keep",
        "sent",
        "timed",
        "trigger",
        "woken",
    )

    def __init__(self, clock: Clock | None = None) -> None:
        self.timed: list[Timed] = []
        self.external: deque[Item] = deque()
        self.internal: deque[Item] = deque()
        self.dropped: list[Item] = []
        self.busy = True
        self.in_internal = False
        self.keep = False
        self.clock = clock
        self.trigger: tuple[bool, Any, float | None] | None = None
        self.sent: dict[int, tuple[Any, float | None, bool]] = {}
        self.woken: int | None = None
        #: The external event taken last: the one a run cancelled meanwhile was running.
        self.current: Item | None = None
        #: How many delayed events this run may still take (``None``: all that are due); a
        #: clock's wake-up takes one, then asks to be woken again, so the timers of several
        #: instances on one clock run in due order, then sending order, across instances.
        self.budget: int | None = None

    @property
    def delayed(self) -> list[Timed]:
        """The timed events (the name code written before ``timed`` reads)."""
        return self.timed

    def now_ns(self) -> int:
        """The clock's time in whole nanoseconds (``time.monotonic_ns()`` without one)."""
        clock = self.clock
        return time.monotonic_ns() if clock is None else clock_ns(clock)

    def put(
        self,
        item: Item,
        delay_ms: float = 0,
        send_id: Any = None,
        sent: float | None = None,
        internal: bool = False,
    ) -> None:
        """Queue an external event, due after ``delay_ms`` milliseconds (``sent``: the delay
        it was sent with, where not the declared one; ``internal``: sent so, from outside a
        run; see ``note``)."""
        if sent is not None or internal:  # ``note``, inline: every event sent from a callback
            self.sent[id(item)] = (None, sent, internal)
        if delay_ms or send_id is not None or self.timed:
            now = self.now_ns()
            if delay_ms < 0 and self.external:
                # due in the past, it runs ahead of the events sent before it (due when
                # sent, no later than now), as in python-statemachine: they join the heap,
                # still ahead of every timed event (each was sent after them)
                sent = min(now, self.timed[0][0] - 1) if self.timed else now
                for waiting in self.external:
                    heapq.heappush(self.timed, (sent, next(_sequence), None, waiting))
                self.external.clear()
            due = now + milliseconds_ns(delay_ms)
            heapq.heappush(self.timed, (due, next(_sequence), send_id, item))
        else:
            self.external.append(item)

    def pending_external(self) -> bool:
        return bool(self.external or self.timed)

    def holds(self, item: Item) -> bool:
        return any(entry is item for entry in self.external) or any(
            entry[3] is item for entry in self.timed
        )

    def take(self, awaited: bool = False) -> Item | None:
        """The next external event that is due (``None``: none is). Without a clock this
        waits for the next delayed event, as python-statemachine's synchronous engine does;
        ``awaited`` (an async instance's run), it awaits in steps of a millisecond, as its
        async engine polls, so other tasks run meanwhile and events they send join in."""
        while True:
            if self.external:
                item = self.current = self.external.popleft()
                self.trigger = self.triggered(item, False, None) if self.sent else None
                return item
            timed = self.timed
            if not timed:
                return None
            due = timed[0][0]
            clock = self.clock
            if clock is None:
                wait = due - time.monotonic_ns()
                if wait > 0:
                    if awaited and _async.inside_a_run():
                        _async.wait(asyncio.sleep(min(wait / NS, _POLL_SECONDS)))
                        continue
                    time.sleep(wait / NS)
            elif due > clock_ns(clock):
                return None
            break
        budget = self.budget
        if budget is not None:
            if budget <= 0:
                return None  # the clock wakes the instance again for the next one
            self.budget = budget - 1
        _, _, send_id, item = heapq.heappop(timed)
        self.trigger = self.triggered(item, False, send_id)
        self.current = item
        return item

    def note(self, item: Item, send_id: Any, delay: float | None, internal: bool = False) -> None:
        """Remember how ``item`` was sent where a queue's place does not say it: an internal
        event's ``send_id``, a delay other than the declared one, or ``internal`` for one in
        the external queue (sent so from outside a run)."""
        if send_id is not None or delay is not None or internal:
            self.sent[id(item)] = (send_id, delay, internal)

    def triggered(self, item: Item, internal: bool, send_id: Any) -> tuple[bool, Any, Any]:
        """The ``trigger`` of ``item``, taken now from a queue (its notes forgotten)."""
        noted = self.sent.pop(id(item), None) if self.sent else None
        if noted is None:
            return (internal, send_id, None) if internal or send_id is not None else _PLAIN
        return internal or noted[2], send_id if noted[0] is None else noted[0], noted[1]

    def next_internal(self) -> Item:
        """Take the next internal event, setting ``trigger`` for it."""
        item = self.internal.popleft()
        self.trigger = self.triggered(item, True, None) if self.sent else _INTERNAL_TRIGGER
        return item

    def forget(self, items: Iterable[Item]) -> None:
        """Drop the notes of ``items``, leaving the queues (no later item may read them)."""
        if self.sent:
            for item in items:
                self.sent.pop(id(item), None)

    def clear_internal(self) -> None:
        self.forget(self.internal)
        self.internal.clear()

    def cancel(self, send_id: Any) -> None:
        timed = [entry for entry in self.timed if entry[2] != send_id]
        if len(timed) != len(self.timed):
            self.forget(entry[3] for entry in self.timed if entry[2] == send_id)
            heapq.heapify(timed)
            self.timed = timed

    def drop_external(self) -> None:
        """Drop the external events (each kept in ``dropped``: a task waiting for one is
        answered as python-statemachine answers it)."""
        if self.external or self.timed:
            self.dropped = self.items()
            self.forget(self.dropped)
        self.external.clear()
        self.timed.clear()

    def items(self) -> list[Item]:
        """The external events waiting."""
        return [*self.external, *(entry[3] for entry in self.timed)]

    def idle(self) -> bool:
        """Whether nothing is queued and the instance has no clock to remember."""
        return not (self.timed or self.external or self.internal) and self.clock is None


#: python-statemachine's machine API (a ``StateChart``'s public names).
_MACHINE_API = frozenset(name for name in dir(StateChart) if not name.startswith("_"))


class _MachineAPIMissing(UnsupportedChart, AttributeError):
    """python-statemachine's machine API reached at run time on a compiled instance (past
    the compile-time check: through a model's method, a helper ...). An ``UnsupportedChart``
    (an ``InvalidDefinition``), so it reaches the caller rather than becoming
    ``error.execution``; an ``AttributeError``, so ``hasattr`` and ``getattr(..., default)``
    still answer."""

    def __init__(self, instance: Any, name: str, verb: str) -> None:
        chart = instance._node.binding.chart
        super().__init__(
            chart.name,
            "python-statemachine's machine API",
            f"a callback {'reads' if verb == 'read' else 'sets'} machine.{name} at run time",
            "the compiled instance offers send, raise_, cancel_event, configuration, "
            "configuration_values, current_state_value, state, model, is_terminated and the "
            "event methods",
        )


#: What ``Instance.configuration`` builds its ``OrderedSet`` with.
_new_object = object.__new__
#: Class-level names of python-statemachine's own (its flags, such as
#: ``catch_errors_as_events``, and what its metaclass sets on every chart class): settings and
#: metadata of the machine, no field of the chart's.
_MACHINE_NAMES = frozenset(dir(StateMachine)) | {"initial_state", "final_states"}


class _Unavailable:
    """A name of python-statemachine's machine API (or a state, ``self.b.is_active``) the
    compiled instance lacks: reading it raises ``_MachineAPIMissing``. A class attribute
    rather than ``__getattr__``, which would slow every attribute read of the instance; a
    non-data descriptor, so a custom ``__init__``'s field of that name still wins."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        raise _MachineAPIMissing(instance, self.name, "read")


#: Descriptors whose ``__get__`` ignores the class it is read through (``owner``): these
#: types (not their subclasses) go into the instance class as the chart declares them.
_OWNER_BLIND = (types.FunctionType, property, staticmethod)


class _ChartOwned:
    """A descriptor of the chart (a class method, a ``partialmethod``, a custom descriptor)
    read through the compiled instance with the chart's class as ``owner``, as it is read
    through python-statemachine's machine of the chart: ``self.kind()`` binds a class method
    to the chart's class, so ``cls is Chart`` holds and ``cls(...)`` builds python-statemachine's
    machine. ``instance`` is the compiled instance (the machine). Not itself told its name:
    the chart's descriptor was, when the chart's class was made."""

    __slots__ = ("descriptor", "owner")

    def __init__(self, descriptor: Any, owner: type) -> None:
        self.descriptor = descriptor
        self.owner = owner

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        descriptor = self.descriptor
        return type(descriptor).__get__(descriptor, instance, self.owner)


class _ChartOwnedSet(_ChartOwned):
    """A data descriptor of the chart (``__get__`` and ``__set__``), as ``_ChartOwned``."""

    __slots__ = ()

    def __set__(self, instance: Any, value: Any) -> None:
        descriptor = self.descriptor
        type(descriptor).__set__(descriptor, instance, value)


class _ChartOwnedDelete(_ChartOwned):
    """A data descriptor of the chart (``__get__`` and ``__delete__``), as ``_ChartOwned``."""

    __slots__ = ()

    def __delete__(self, instance: Any) -> None:
        descriptor = self.descriptor
        type(descriptor).__delete__(descriptor, instance)


class _ChartOwnedData(_ChartOwnedSet, _ChartOwnedDelete):
    """A data descriptor of the chart (``__get__``, ``__set__`` and ``__delete__``)."""

    __slots__ = ()


def _as_declared(value: Any, declared: type) -> Any:
    """A chart attribute as the instance class holds it: a descriptor that reads ``owner``
    wrapped so it gets the chart's class (``_ChartOwned``), anything else as declared."""
    kind = type(value)
    if kind in _OWNER_BLIND or not hasattr(kind, "__get__"):  # a subclass may read owner
        return value
    setter, deleter = hasattr(kind, "__set__"), hasattr(kind, "__delete__")
    if setter and deleter:
        return _ChartOwnedData(value, declared)
    if setter:
        return _ChartOwnedSet(value, declared)
    if deleter:
        return _ChartOwnedDelete(value, declared)
    return _ChartOwned(value, declared)


def _make_class(name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> type:
    """``type(name, bases, namespace)``, without calling ``__set_name__`` on the namespace's
    values: they are the chart's own (a field or registry descriptor), told their name and
    owner once, when the chart's class was made, and set on the new class afterwards
    (``setattr`` tells them nothing), so they keep the chart's class as their owner."""
    named = {
        key: value for key, value in namespace.items() if hasattr(type(value), "__set_name__")
    }
    cls = type(name, bases, {k: v for k, v in namespace.items() if k not in named})
    for key, value in named.items():
        setattr(cls, key, value)
    return cls


class Instance:
    """One running instance of a compiled chart.

    Chart methods run with the instance as ``self``; per-instance data belongs on ``model``.
    Not thread-safe: send events to one instance from one thread at a time.
    """

    __slots__ = ("_held", "_node", "_pending", "model")
    #: Whether the event sent is refused (a strict chart) when the macrostep before it ends
    #: the instance: python-statemachine's async engine answers its caller so, its
    #: synchronous engine drops the event quietly.
    _refuses_dropped = False

    _node: StateNode
    _pending: _Queues | None
    model: Any
    #: The model's names as the instance read them when created (set only for charts
    #: reading some: ``Binding.held_names``).
    _held: dict[str, Any]
    #: ``send`` of the instance's base class (a chart's declared event options aside)
    _send_plain: Callable[..., Outcome]

    def __init__(self, node: StateNode, model: Any) -> None:
        """Set up an instance in ``node`` (the one place an instance's slots are set; use
        ``Chart.create`` or ``Chart.resume``)."""
        self._node = node
        self.model = model
        self._pending = None

    @property
    def state(self) -> StateDef:
        """The current state."""
        return self._node.state

    @property
    def configuration(self) -> OrderedSet[DeclaredState]:
        """The active states, ancestors included, as python-statemachine's ``configuration``
        gives them: an ``OrderedSet`` of its declared ``State`` objects (``id``, ``parent``,
        ``is_atomic`` ...) in its order, so guards comparing it with sets of states (``>=``,
        ``&``, ``isdisjoint``, ``==``) answer as there. A new set on each read."""
        found: OrderedSet[DeclaredState] = _new_object(OrderedSet)
        # OrderedSet(states) costs three times as much (its __init__ and State.__hash__ are
        # Python): a copy of the node's dict fills its one slot, _d
        found._d = self._node.declared_keys.copy()
        return found

    @property
    def configuration_values(self) -> OrderedSet[Any]:
        """The values of the active states, in ``configuration``'s order (python-statemachine's
        ``configuration_values``)."""
        return OrderedSet(state.value for state in self._node.declared_configuration)

    @property
    def current_state_value(self) -> Any:
        """python-statemachine's ``current_state_value``: the active state's value, an
        ``OrderedSet`` of them when several are active, ``None`` when none is. Read-only: the
        compiled instance keeps its own state (setting it raises ``UnsupportedChart``)."""
        values = [state.value for state in self._node.declared_configuration]
        if len(values) == 1:
            return values[0]
        return OrderedSet(values) if values else None

    @current_state_value.setter
    def current_state_value(self, value: Any) -> None:
        raise _MachineAPIMissing(self, "current_state_value", "set")

    @property
    def chart(self) -> Chart:
        """The compiled chart this instance runs."""
        return self._node.binding.chart

    @property
    def is_terminated(self) -> bool:
        """Whether the instance reached a top-level final state (every later event is
        ignored). A top-level parallel state whose regions all rest in final states
        terminates once the macrostep ends with it still final (its done.state event may
        leave it), as python-statemachine's engine stops: not while the run goes on."""
        node = self._node
        if not node.terminated:
            return False
        if node.state.final and node.state.parent is None:
            return True
        pending = self._pending
        return not (pending is _BUSY or (isinstance(pending, _Queues) and pending.busy))

    def send(self, event: str, /, *args: Any, **kwargs: Any) -> Outcome:
        """Send ``event`` with a payload; return the outcome. Never raises for an ignored event
        (unless the chart sets ``allow_event_without_transition = False``).

        Exceptions from guards and actions follow the chart's ``catch_errors_as_events``, as
        in python-statemachine: when set (a ``StateChart``'s default) they become
        ``error.execution`` events; otherwise they reach the caller, the instance is in the
        source state if a guard, ``before``, ``exit``, ``on`` or ``enter`` callback raised,
        and events queued meanwhile are dropped (kept, to run before the next event, when a
        guard or validator raised, or after a ``BaseException``). Sent from a callback, the
        event is queued and runs once the current one is done (outcome ``"queued"``).
        """
        if kwargs and not _SEND_OPTIONS.isdisjoint(kwargs):
            return self._send_with_options(event, args, kwargs)
        if self._pending is not None:
            return self._send_busy(event, args, kwargs)
        fire = self._node.table.get(event)
        if fire is None:
            found = self._node.binding.unmatched(self._node, event)
            if isinstance(found, Outcome):
                if _observers:
                    _notify(self, found)
                return found
            fire = found
        self._pending = _BUSY
        try:
            outcome: Outcome = fire(self, args, kwargs)
            if _observers:  # one raising leaves the instance settled, as a callback would
                _notify(self, outcome)
        except BaseException:
            self._settle_failure()
            raise
        if self._pending is _BUSY:
            self._pending = None
            return outcome
        return self._run_queues(outcome)

    def raise_(self, event: str, /, *args: Any, **kwargs: Any) -> Outcome:
        """Raise an internal event from a callback: it runs within the current macrostep,
        before events sent with ``send``. Outside a callback it is the same as ``send``."""
        if (
            kwargs and not _SEND_OPTIONS.isdisjoint(kwargs)
        ) or event in self._node.binding.runtime.optioned:
            return self._send_with_options(event, args, {**kwargs, "internal": True})
        pending = self._pending
        if pending is None or (pending is not _BUSY and not pending.busy):
            # python-statemachine's raise_ is send(..., internal=True): from outside a run
            # the event takes the external queue, its event object internal
            return self._send_with_options(event, args, {**kwargs, "internal": True})
        self._refuse_when_stopped(event)
        queues = self._queues()
        queues.internal.append((event, args, kwargs))
        return Outcome(False, event, self._node.state, None, None, "queued")

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able picture of where this instance is: its configuration, history values,
        events an earlier failure left queued, pending delayed events (due times relative to
        its clock) and the fields a custom ``__init__`` set; the model is not in it.
        ``Chart.restore`` continues from it exactly as this instance would. Raises
        ``InstanceSnapshotError`` from inside a callback, for a payload JSON cannot keep, and
        for a flat chart's instance a ``BaseException`` left in no state."""
        pending = self._pending
        if isinstance(pending, _Unstarted):
            raise InstanceSnapshotError(
                "instance",
                "its initial state is not entered yet: send an event or await "
                "activate_initial_state() first",
            )
        if pending is _BUSY or (pending is not None and pending.busy):
            raise InstanceSnapshotError(
                "instance",
                "it is running an event (taken from a callback); take snapshots between events",
            )
        node: Any = self._node
        runtime = node.binding.runtime
        if not node.declared_configuration and not runtime.hierarchical:
            raise InstanceSnapshotError(
                "instance",
                "no state is active: a BaseException stopped a transition between leaving "
                "its source and entering its target, where a flat chart cannot be restored",
            )
        return _snapshot.take(
            runtime.chart,
            runtime.structure,
            [state.id for state in node.declared_configuration],
            [
                (name, [state.id for state in states])
                for name, states in getattr(node, "history", ())
            ],
            {}
            if pending is None
            else {"internal": pending.internal, "external": pending.external},
            [] if pending is None else pending.timed,
            0 if pending is None else pending.now_ns(),
            vars(self) if runtime.has_fields else {},
            runtime.instance_fields,
            node.binding.stopping(node),
            None if pending is None else pending.sent,
        )

    def cancel_event(self, send_id: str) -> None:
        """Cancel the events sent with this ``send_id`` that have not run yet (delayed ones,
        typically); an unknown ``send_id`` is not an error, as in python-statemachine."""
        pending = self._pending
        if isinstance(pending, _Unstarted):  # events sent before the initial entry
            pending = pending.queues
        if isinstance(pending, _Queues):
            pending.cancel(send_id)

    @property
    def clock(self) -> Clock | None:
        """The clock delayed events wait on (``None``: real time, waiting as
        python-statemachine's synchronous engine does)."""
        pending = self._pending
        return pending.clock if isinstance(pending, _Queues) else None

    def next_due(self) -> float | None:
        """When the earliest delayed event waiting on this instance is due, on its clock's
        scale (``None``: none waits)."""
        pending = self._pending
        if isinstance(pending, _Queues) and pending.timed:
            return pending.timed[0][0] / NS
        return None

    def run_due(self, order: int | None = None) -> None:
        """Run the delayed events that are due on the instance's clock, each as a macrostep
        of its own (what a clock calls when it wakes the instance; ``order``: the one the
        wake-up was asked with). From a callback, or when nothing is due, it does nothing."""
        pending = self._pending
        if not isinstance(pending, _Queues):
            return
        pending.woken = None  # this wake-up is spent: settling asks for the next one
        if pending.busy:  # woken from one of its own callbacks: it settles later
            return
        timed = pending.timed
        if not (pending.external or pending.internal) and (
            not timed
            or timed[0][0] > pending.now_ns()
            or (order is not None and timed[0][1] != order)
        ):
            # A stale wake-up (a failure dropped its timer, or it was asked for a timer that
            # ran since): no macrostep runs, and the clock is asked to wake the instance for
            # the delayed event that waits now, if any, in its turn among other instances'.
            self._settle(pending)
            return
        pending.busy = True
        pending.budget = 1  # one delayed event per wake-up: see _Queues.budget
        self._drain(pending)

    def run_until_idle(self) -> None:
        """Run everything queued and every delayed event, in order, until none is left.

        On a ``VirtualClock`` this advances the clock to each next delayed event (running
        other instances' timers that fall due on the way, as the shared clock does); without
        a clock it waits in real time. A delayed event that keeps scheduling others keeps it
        running. Raises ``RuntimeError`` from a callback, and ``TypeError`` on a clock it
        cannot advance (run such instances on their own driver, ``AsyncioClock`` ...).
        """
        pending = self._pending
        if pending is _BUSY or (isinstance(pending, _Queues) and pending.busy):
            raise RuntimeError("run_until_idle() cannot run from inside a callback")
        while isinstance(pending, _Queues) and pending.pending_external():
            clock = pending.clock
            if clock is None:
                pending.busy = True
                self._drain(pending)
            elif isinstance(clock, VirtualClock):
                wait = max(0, pending.timed[0][0] - clock.now_ns()) if pending.timed else 0
                self.run_due()
                if self._pending is pending and pending.timed and not pending.busy:
                    clock.advance_ns(wait)
            else:
                raise TypeError(
                    f"run_until_idle() advances a VirtualClock, not {type(clock).__name__}"
                )
            pending = self._pending

    # -- queues ------------------------------------------------------------------------------

    def _send_with_options(
        self, event: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Outcome:
        """``send`` with python-statemachine's options: ``delay`` (milliseconds), ``send_id``
        (to cancel a delayed event) and ``internal``; none of them is payload. Left out, the
        delay and ``internal`` are the declared event's."""
        self._refuse_when_stopped(event)
        outside = _OUTSIDE in kwargs
        kwargs, delay, send_id, internal, sent = self._options(event, kwargs)
        pending = self._pending
        busy = pending is _BUSY or (isinstance(pending, _Queues) and pending.busy)
        item = (event, args, kwargs)
        if busy and internal and not outside:
            queues = self._queues()
            queues.internal.append(item)
            queues.note(item, send_id, sent)
            return Outcome(False, event, self._node.state, None, None, "queued")
        if (
            not busy
            and not delay
            and send_id is None
            and sent is None
            and not internal
            and _SEND_OPTIONS.isdisjoint(kwargs)
        ):
            return self._send_plain(event, *args, **kwargs)
        if busy:
            self._queues().put(item, delay, send_id, sent, internal)
            outcome = Outcome(False, event, self._node.state, None, None, "queued")
            if _observers:
                _notify(self, outcome)
            return outcome
        if not isinstance(pending, _Queues):
            pending = self._pending = _Queues()
        if pending.clock is None and delay > 0:
            # python-statemachine's synchronous engine waits until the event is due (one due
            # in the past joins the queue by its due time, ahead of those sent before it)
            time.sleep(delay / 1000)
            delay = 0
        pending.busy = True
        pending.put(item, delay, send_id, sent, internal)
        result = self._drain(pending, item)
        if result is None:  # not due yet
            result = Outcome(False, event, self._node.state, None, None, "queued")
        return result

    def _options(self, event: str, kwargs: dict[str, Any]) -> _SendOptions:
        """The payload of a ``send`` with options, and its delay (milliseconds, checked),
        ``send_id`` and ``internal``, the declared event's where left out. Refuses a
        ``machine`` keyword, as python-statemachine does building the event."""
        if "machine" in kwargs:
            raise TypeError(f"send({event!r}) got multiple values for keyword argument 'machine'")
        kwargs = dict(kwargs)
        kwargs.pop(_OUTSIDE, None)  # (read by _send_with_options)
        if kwargs.pop(_EVENT_METHOD, False):
            # python-statemachine's event method: the event's declared delay and queue
            delay = internal = None
        else:
            delay = kwargs.pop("delay", None)
            internal = kwargs.pop("internal", None)
        send_id = kwargs.pop("send_id", None)
        declared = self._node.binding.runtime.events.get(event)
        if delay is None:
            delay = declared.delay if declared is not None else 0
        if internal is None:
            internal = bool(declared is not None and declared.internal)
        delay = _delay_ms(event, delay)
        if delay and internal:
            raise_delayed_internal(event)
        # what its event object says of the delay, where it is not the declared one
        declared_delay = declared.delay if declared is not None else 0
        sent = None if _same_number(delay, declared_delay) else delay
        return _SendOptions(kwargs, delay, send_id, internal, sent)

    def _refuse_when_stopped(self, event: str) -> None:
        """Refuse an event sent to a strict chart's terminated instance, before it is queued:
        python-statemachine's engine raises ``TransitionNotAllowed`` when it is put on a
        queue of a machine no longer running, delayed, internal or not."""
        node: Any = self._node
        if node.binding.strict and self.is_terminated:
            node.binding.terminated(node, event)

    def _queues(self) -> _Queues:
        pending = self._pending
        if pending is _BUSY or pending is None:
            pending = self._pending = _Queues()
        return pending

    def _send_busy(self, event: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
        pending = self._pending
        assert pending is not None
        if pending is not _BUSY and not pending.busy:
            return self._send_after_leftovers(event, args, kwargs)
        self._refuse_when_stopped(event)
        self._queues().put((event, args, kwargs))
        outcome = Outcome(False, event, self._node.state, None, None, "queued")
        if _observers:
            _notify(self, outcome)
        return outcome

    def _send_after_leftovers(
        self, event: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Outcome:
        """Run the events waiting (left over by an earlier failure, or delayed ones now due),
        then this one (python-statemachine appends it to the same queue)."""
        self._refuse_when_stopped(event)
        queues = self._pending
        assert isinstance(queues, _Queues)
        queues.busy = True
        mine_item = (event, args, kwargs)
        queues.put(mine_item)
        mine = self._drain(queues, mine_item)
        if mine is None:  # the events before it terminated the instance: it was dropped
            mine = Outcome(False, event, self._node.state, None, None, "terminated")
        return mine

    def _drain(self, queues: _Queues, mine: Item | None = None) -> Outcome | None:
        """Run the internal queue, then each due external event as a macrostep of its own;
        return the outcome of ``mine`` if it ran."""
        result: Outcome | None = None
        try:
            self._run_internal(queues, [])
            awaited = self._node.binding.is_async
            while not self._node.terminated and (item := queues.take(awaited)) is not None:
                outcome = self._run_external(queues, *item)
                if item is mine:
                    result = outcome
            if self._node.terminated:
                queues.drop_external()  # a terminated instance takes no more events
        except BaseException:
            self._settle_failure()
            raise
        self._settle(queues)
        return result

    def _run_queues(self, outcome: Outcome) -> Outcome:
        """Finish the macrostep of ``outcome`` (internal events), then run each event sent
        meanwhile as a macrostep of its own."""
        queues = self._pending
        assert isinstance(queues, _Queues)
        try:
            taken = list(outcome.transitions)
            self._run_internal(queues, taken)
            if len(taken) != len(outcome.transitions):
                outcome = Outcome(
                    outcome.applied,
                    outcome.event,
                    outcome.source,
                    self._node.state if outcome.applied else None,
                    outcome.transition,
                    outcome.reason,
                    tuple(taken),
                )
            # python-statemachine stops taking events once the instance terminated, and
            # drops those left (nobody inside the run waits for them)
            awaited = self._node.binding.is_async
            while not self._node.terminated and (item := queues.take(awaited)) is not None:
                self._run_external(queues, *item)
            if self._node.terminated:
                queues.drop_external()
        except BaseException:
            self._settle_failure()
            raise
        self._settle(queues)
        return outcome

    def _settle(self, queues: _Queues) -> None:
        """The instance is idle again: forget the queues, or keep them (not busy) while
        delayed events wait or a clock must be remembered, and have the clock wake the
        instance for the earliest delayed event."""
        if self._pending is not queues:
            return
        if queues.timed and self._node.terminated:
            queues.forget(entry[3] for entry in queues.timed)
            queues.timed.clear()  # a terminated instance runs no delayed event
        queues.budget = None
        if queues.idle():
            self._pending = None
            return
        queues.busy = False
        queues.trigger = None
        clock = queues.clock
        if clock is not None and queues.timed:
            due, order = queues.timed[0][:2]
            woken = queues.woken
            if woken is None or due < woken:  # a later one waits for the wake-up asked for
                clock.wake(self, Due(due), order)
                queues.woken = due  # asked for (a clock refusing it is asked again next time)

    def _take(self, event: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
        """Run one external event (a microstep, or an ignored outcome)."""
        node = self._node
        fire = node.table.get(event)
        if fire is None:
            try:
                found = node.binding.unmatched(node, event)
            except TransitionNotAllowed:
                _selection_failed(self)
                raise
            if isinstance(found, Outcome):
                if _observers:
                    _notify(self, found)
                return found
            fire = found
        outcome: Outcome = fire(self, args, kwargs)
        if _observers:
            _notify(self, outcome)
        return outcome

    def _run_external(
        self, queues: _Queues, event: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Outcome:
        outcome = self._take(event, args, kwargs)
        # An ignored event queues nothing, so this only runs what a taken transition raised;
        # the outcome lists the transitions the internal events took too.
        taken = list(outcome.transitions)
        self._run_internal(queues, taken)
        return _with_transitions(outcome, self._node.state, taken)

    def _run_internal(self, queues: _Queues, taken: list[TransitionDef]) -> None:
        """Run the internal events, in order, until none is left (more may be raised)."""
        queues.in_internal = True
        try:
            while queues.internal:
                event, args, kwargs = queues.next_internal()
                fire = self._node.table.get(event)
                if fire is None:
                    found = self._node.binding.unmatched(self._node, event, strict=False)
                    if isinstance(found, Outcome):
                        if _observers:
                            _notify(self, found)
                        continue
                    fire = found
                outcome = fire(self, args, kwargs)
                if _observers:
                    _notify(self, outcome)
                taken.extend(outcome.transitions)
        finally:
            queues.in_internal = False

    def _settle_failure(self) -> None:
        """After an exception: drop the queues (delayed events too, as python-statemachine
        clears its queues), unless a guard or validator of an event taken from the external
        queue raised (python-statemachine then keeps them). The clock stays. A
        ``BaseException`` (``KeyboardInterrupt``, a cancelled task ...) clears nothing but
        the async engine's internal queue: the events left run at the next ``send``."""
        pending = self._pending
        if pending is _BUSY or pending is None:
            self._pending = None
        elif not isinstance(sys.exc_info()[1], Exception):
            # python-statemachine's engines clear their queues on an ``Exception`` only; its
            # async engine, interrupted, clears its internal queue too
            if self._node.binding.is_async:
                pending.clear_internal()
            pending.keep = False
            pending.in_internal = False
            self._settle(pending)
        elif not pending.keep:
            pending.clear_internal()
            pending.drop_external()
            self._settle(pending)
        else:
            pending.keep = False
            pending.in_internal = False
            # idle again, its queues kept: the clock is asked to wake it for the delayed
            # events left (the wake-up that ran this one is spent)
            self._settle(pending)

    def __repr__(self) -> str:
        # the class is named as the chart; the repr says it is the compiled instance
        return f"<{self.chart.name}Instance state={self._node.state.id!r} model={self.model!r}>"


class StatechartInstance(Instance):
    """An instance of a chart with compound, parallel or history states or eventless
    transitions. ``send`` runs python-statemachine's processing loop: a macrostep (eventless
    transitions and internal events until neither enables one), the event, and macrosteps
    again, taking events queued by callbacks one at a time, until a macrostep takes nothing.
    """

    __slots__ = ()

    def send(self, event: str, /, *args: Any, **kwargs: Any) -> Outcome:
        """Send ``event`` with a payload; return its outcome (``transitions`` lists every
        transition its macrostep took: its own, then eventless ones and internal events')."""
        if kwargs and not _SEND_OPTIONS.isdisjoint(kwargs):
            return self._send_with_options(event, args, kwargs)
        pending = self._pending
        mine = (event, args, kwargs)
        if pending is None:
            node: Any = self._node
            if node.eventless is None and not node.terminated:
                fire = node.table.get(event)
                if fire is not None:  # the usual case: no eventless transition, nothing queued
                    self._pending = _BUSY
                    try:
                        outcome: Outcome = fire(self, args, kwargs)
                        if _observers:  # one raising leaves the instance settled
                            _notify(self, outcome)
                    except BaseException:
                        self._settle_failure()
                        raise
                    after: Any = self._node
                    if self._pending is _BUSY and after.eventless is None:
                        self._pending = None
                        return outcome
                    return self._continue(outcome)
                ignored = node.ignored.get(event)
                if ignored is not None and not node.binding.strict:
                    if _observers:
                        _notify(self, ignored)
                    return ignored  # type: ignore[no-any-return]
            self._pending = _BUSY
        elif pending is _BUSY or pending.busy:
            return self._send_busy(event, args, kwargs)
        else:  # events waiting (left over by a failure, or delayed ones now due) run first
            pending.busy = True
            pending.put(mine)
        return self._loop(mine, None)

    def _continue(self, outcome: Outcome) -> Outcome:
        """The rest of the macrostep after an event taken at once: the eventless chain of a
        flat chart while nothing is queued, else the processing loop."""
        node = self._node
        # flat charts only: a statechart's node finds its eventless transitions lazily, so
        # whether it has a function yet must not choose the path
        if self._pending is _BUSY and type(node) is StateNode and node.eventless is not None:
            return self._chain(outcome)
        return self._loop(None, outcome)

    def _chain(self, outcome: Outcome) -> Outcome:
        """The macrostep after an event whose target has eventless transitions, while nothing
        is queued: the eventless transitions of each state reached, until none is enabled
        (what the processing loop does, without its queues). Once a callback queues an event,
        the processing loop takes over where the chain stands."""
        taken = list(outcome.transitions)
        tried = False
        try:
            while True:
                eventless: Any = self._node.eventless
                if eventless is None:
                    break
                step: Outcome = eventless(self, (), {})
                # a microstep whose ``before`` raised counts as taken (python-statemachine
                # selects eventless transitions again before taking its error.execution)
                failed = step.reason == "failed"
                if step.applied or failed:
                    if _observers:
                        _notify(self, step)
                    taken.extend(step.transitions)
                if self._pending is not _BUSY:
                    tried = not (step.applied or failed)
                    break
                if not step.applied:
                    break
        except BaseException:
            self._settle_failure()
            raise
        node = self._node
        outcome = _chained(node.binding.chained, outcome, node.state, taken)
        if self._pending is _BUSY:
            self._pending = None
            return outcome
        return self._loop(None, outcome, tried)

    def _loop(self, mine: Any, outcome: Outcome | None, tried: bool = False) -> Outcome:
        """The processing loop for the event sent (``mine``, or its ``outcome`` if taken)."""
        result = self._run_loop(mine, outcome, tried=tried)
        assert result is not None
        return result

    def _drain(self, queues: _Queues, mine: Item | None = None) -> Outcome | None:
        """Run python-statemachine's processing loop over the events waiting (``mine`` among
        them; after a clock's wake-up, the delayed events due); return the outcome of
        ``mine`` if it ran."""
        return self._run_loop(mine, None, queued=True)

    def _run_loop(
        self,
        mine: Any,
        outcome: Outcome | None,
        queued: bool | None = None,
        tried: bool = False,
    ) -> Outcome | None:
        """``_processing_loop`` (see its arguments), then the instance idle again: after a
        failure its queues settled as python-statemachine leaves them and the exception
        re-raised; otherwise the queues kept (delayed events waiting, a clock to remember)
        or forgotten."""
        try:
            result = self._processing_loop(mine, outcome, queued, tried)
        except BaseException:
            self._settle_failure()
            raise
        pending = self._pending
        if isinstance(pending, _Queues):
            self._settle(pending)
        else:
            self._pending = None
        return result

    def _processing_loop(
        self,
        mine: Any,
        outcome: Outcome | None,
        queued: bool | None = None,
        tried: bool = False,
    ) -> Outcome | None:
        """python-statemachine's ``processing_loop``; ``mine`` is the event sent (taken first
        unless it is queued behind waiting events), ``outcome`` its outcome if already taken
        (``tried``: and the current state's eventless transitions were just tried, none
        enabled). External events not yet due on the instance's clock stay queued."""
        pending = self._pending
        if queued is None:
            queued = isinstance(pending, _Queues) and pending.holds(mine)
        stopped = self._node.terminated
        took = True
        collecting: list[TransitionDef] | None = None
        if outcome is not None:
            collecting = list(outcome.transitions)
        while took:  # python-statemachine stops once a macrostep ends in a final configuration
            taken: list[TransitionDef] = []
            took = self._macrostep(taken, tried)
            tried = False
            if collecting is not None and outcome is not None:
                collecting.extend(taken)
                outcome = _with_transitions(outcome, self._node.state, collecting)
                collecting = None
            if self._node.terminated:
                break
            item = self._next_item(mine if outcome is None and not queued else None)
            if item is None:
                continue
            result = self._take(*item)
            if item is mine:
                outcome = result
                collecting = list(result.transitions)
            took = True
        pending = self._pending
        if isinstance(pending, _Queues) and self._node.terminated:
            pending.drop_external()
        if outcome is None:
            if mine is None or (queued and not self._node.terminated):
                return None
            return self._dropped(mine[0], stopped)
        # (the transitions collected for the outcome were folded into it by the macrostep
        # after the event: one always runs once an event was taken)
        return outcome

    def _dropped(self, event: str, stopped: bool) -> Outcome:
        """The outcome of the event sent when the instance ended before taking it: refused
        by a strict chart if it had ``stopped`` before the send (or the async engine answers
        so), else dropped quietly, as python-statemachine's synchronous engine drops it."""
        if stopped or (self._refuses_dropped and not getattr(_unawaited, "sending", False)):
            return self._terminated(self._node, event)
        outcome = Outcome(False, event, self._node.state, None, None, "terminated")
        if _observers:
            _notify(self, outcome)
        return outcome

    def _next_item(self, mine: Item | None) -> Item | None:
        """The external event to take next: ``mine`` (the event sent, first in
        python-statemachine's queue), else the next queued one that is due."""
        pending = self._pending
        if mine is not None:
            if isinstance(pending, _Queues):
                pending.trigger = None
            return mine
        if isinstance(pending, _Queues) and pending.pending_external():
            # None: the next delayed event is not due yet
            return pending.take(self._node.binding.is_async)
        return None

    def _run_queues(self, outcome: Outcome) -> Outcome:
        """After entering the initial configuration: python-statemachine's processing loop
        (a macrostep, then the next queued event, until neither takes anything)."""
        self._run_loop(None, None, queued=True)
        return outcome

    def _macrostep(self, taken: list[TransitionDef], tried: bool = False) -> bool:
        """Take eventless transitions and internal events until neither enables one; return
        whether any transition was taken (``tried``: the current state's eventless transitions
        were just tried, none enabled; the internal events come first)."""
        took = False
        while True:
            node = self._node
            binding = node.binding
            if tried:
                tried = False
            elif self._eventless(node, taken):
                took = True
                continue
            pending = self._pending
            if not isinstance(pending, _Queues) or not pending.internal:
                if node.pending:  # a top-level parallel state completed: stop, if still so
                    self._node = binding.settled(node)
                return took
            event, args, kwargs = pending.next_internal()
            pending.in_internal = True
            try:
                fire = node.table.get(event)
                if fire is None:
                    found = binding.unmatched(node, event, strict=False)
                    if isinstance(found, Outcome):
                        if _observers:
                            _notify(self, found)
                        continue
                    fire = found
                outcome = fire(self, args, kwargs)
            finally:
                pending.in_internal = False
            if _observers:
                _notify(self, outcome)
            if outcome.applied or outcome.reason == "failed":
                took = True
            taken.extend(outcome.transitions)

    def _eventless(self, node: Any, taken: list[TransitionDef]) -> bool:
        """Take the node's eventless transitions once, if any is enabled."""
        eventless = node.binding.eventless(node)
        if eventless is None:
            return False
        pending = self._pending
        if isinstance(pending, _Queues):
            pending.in_internal = True
            pending.trigger = _INTERNAL_TRIGGER
        try:
            outcome: Outcome = eventless(self, (), {})
        finally:
            if isinstance(pending, _Queues):
                pending.in_internal = False
        if not outcome.applied and outcome.reason != "failed":
            return False
        if _observers:
            _notify(self, outcome)
        taken.extend(outcome.transitions)
        return True  # a microstep that failed was taken too, as python-statemachine counts

    def _terminated(self, node: Any, event: str) -> Outcome:
        outcome: Outcome = node.binding.terminated(node, event)
        if _observers:
            _notify(self, outcome)
        return outcome


Instance._send_plain = Instance.send
StatechartInstance._send_plain = StatechartInstance.send
for _name in sorted(_MACHINE_API):
    if not hasattr(StatechartInstance, _name):
        setattr(Instance, _name, _Unavailable(_name))
del _name


class _MachineInstance(StatechartInstance):
    """An instance of a chart with a ``prepare_event`` (the charts python-statemachine's
    SCXML, JSON and YAML loaders build): it also offers what their executable content calls on
    the machine it receives (``name``, ``catch_errors_as_events``, ``_put_nonblocking``), and
    its callbacks get the keyword arguments ``prepare_event`` adds."""

    __slots__ = ("_prepared",)

    #: The keyword arguments prepared in the current microstep, by (transition, state
    #: entered, state exited): python-statemachine prepares each set once.
    _prepared: dict[Any, dict[str, Any]]

    def __init__(self, node: Any, model: Any) -> None:
        super().__init__(node, model)
        self._prepared = {}

    @property
    def catch_errors_as_events(self) -> bool:
        """The chart's ``catch_errors_as_events`` flag."""
        return self._node.binding.chart.flags.catch_errors_as_events

    @property
    def _engine(self) -> Any:
        """What executable content reaches for on python-statemachine's engine: its invoke
        manager, which here never has a child session to send to (invoke is refused)."""
        return _NO_SESSIONS

    def _put_nonblocking(self, trigger_data: Any, internal: bool = False) -> None:
        """Queue a python-statemachine ``TriggerData`` (what ``Event.put`` does): its
        event's delay, ``send_id`` and payload, on the internal queue if ``internal``."""
        event = trigger_data.event
        options: dict[str, Any] = {"delay": event.delay or 0, "internal": bool(internal)}
        if trigger_data.send_id is not None:
            options["send_id"] = trigger_data.send_id
        kwargs = {**trigger_data.kwargs, **options}
        self._send_with_options(str(event.id), tuple(trigger_data.args), kwargs)


class _NoSessions:
    """An engine stand-in whose invoke manager has no child sessions (``<send
    target="#_id">`` then raises ``error.communication``, as for an unreachable one)."""

    __slots__ = ()

    @property
    def _invoke_manager(self) -> _NoSessions:
        return self

    def send_to_child(self, invokeid: str, event: str, **kwargs: Any) -> bool:
        return False


_NO_SESSIONS = _NoSessions()
_flagged_events: dict[tuple[str, str, bool, type, float], DeclaredEvent] = {}


def _prep(
    inst: Any,
    args: tuple[Any, ...],
    kw: dict[str, Any],
    injected: dict[str, Any],
    key: Any,
) -> dict[str, Any]:
    """The keyword arguments a callback of a chart with ``prepare_event`` receives: the
    payload and the injected values, with the event as it was queued (internal or not, its
    ``send_id``), updated with what each ``prepare_event`` returns (the chart's, then the
    model's), as python-statemachine builds them: once per microstep and ``key`` (the
    transition, the state entered, the state exited); the ``on`` group adds the
    configurations to the set it shares."""
    cache = inst._prepared
    kwall = cache.get(key)
    if kwall is not None:
        if "previous_configuration" in injected:
            kwall["previous_configuration"] = injected["previous_configuration"]
            kwall["new_configuration"] = injected["new_configuration"]
        return kwall  # type: ignore[no-any-return]
    kwall = cache[key] = _kwall(kw, injected)
    binding: Any = inst._node.binding
    # each gets the arguments as they were before any added to them (python-statemachine
    # calls them all, then updates); an async chart gathers them
    calls = tuple(
        functools.partial(
            _dyn, inst if owner == "chart" else inst.model, "prepare_event", args, kwall
        )
        for owner in binding.prepare_owners
    )
    results = _async.gather(inst, calls) if binding.is_async else [call() for call in calls]
    for result in results:
        kwall.update(result)
    return kwall


def _with_transitions(
    outcome: Outcome, state: StateDef, transitions: list[TransitionDef]
) -> Outcome:
    if len(transitions) == len(outcome.transitions):
        return outcome
    return Outcome(
        outcome.applied,
        outcome.event,
        outcome.source,
        state if outcome.applied and outcome.target is not None else None,
        outcome.transition,
        outcome.reason,
        tuple(transitions),
    )


#: What a binding remembers of its eventless chains: by the ids of the event's outcome, the
#: state the chain ended in and the transitions taken, those objects and the chain's outcome.
Chains = dict[tuple[int, int, tuple[int, ...]], tuple[Outcome, StateDef, Outcome]]
#: How many chains a binding remembers (a chart has few; past this, outcomes are made anew),
#: and how long a chain may be to be remembered: an eventless loop that runs as often as the
#: model says meets a new, long chain each time, and its outcome is its caller's alone.
_CHAINS_KEPT = 256
_CHAIN_KEPT_LENGTH = 8


def _chained(
    chains: Chains, outcome: Outcome, state: StateDef, transitions: list[TransitionDef]
) -> Outcome:
    """``_with_transitions`` for a flat chart's eventless chain, remembered per binding: the
    outcomes and states are its generated code's constants, so a chain met once is met again
    (the entry holds every object its key names, so no id in it is reused while it is kept)."""
    if len(transitions) > _CHAIN_KEPT_LENGTH:
        return _with_transitions(outcome, state, transitions)
    key = (id(outcome), id(state), tuple(map(id, transitions)))
    known = chains.get(key)
    if known is not None and known[0] is outcome and known[1] is state:
        return known[2]
    combined = _with_transitions(outcome, state, transitions)
    if len(chains) < _CHAINS_KEPT:
        chains[key] = (outcome, state, combined)
    return combined


def _selection_failed(instance: Instance) -> None:
    """A guard or validator raised: python-statemachine keeps the queued events then (unless
    an internal event was being selected)."""
    pending = instance._pending
    if pending is not _BUSY and pending is not None and not pending.in_internal:
        pending.keep = True


def _caught(instance: Instance, error: Exception) -> None:
    """An action raised, with errors caught as events: queue ``error.execution``."""
    if isinstance(error, InvalidDefinition):
        raise error
    _queue_error(instance, error)


def _queue_error(instance: Instance, error: Exception) -> None:
    node: Any = instance._node
    if node.terminated and node.binding.strict:
        # python-statemachine refuses any event once a strict machine stopped
        raise _not_allowed(DeclaredEvent(id=ERROR_EXECUTION), node) from error
    instance._queues().internal.append((ERROR_EXECUTION, (), {"error": error}))


def _guard_failed(instance: Instance, error: Exception) -> bool:
    """A guard raised, with errors caught as events: it counts as false."""
    if isinstance(error, InvalidDefinition):
        _selection_failed(instance)
        raise error
    _caught(instance, error)
    return False


def _reject(
    instance: Instance, event: DeclaredEvent, node: StateNode, outcome: Outcome
) -> Outcome:
    """No transition of a strict chart was enabled: raise ``TransitionNotAllowed``, except
    for an internal event, which is dropped as python-statemachine drops it."""
    pending = instance._pending
    if pending is not _BUSY and pending is not None and pending.in_internal:
        return outcome
    _selection_failed(instance)
    raise _not_allowed(event, node)


def _failed(instance: Instance, error: Exception, handling_error: bool) -> None:
    """A ``before`` (or, while handling ``error.execution``, an ``on``) or ``after`` callback
    raised: queue ``error.execution``, unless this is already its handling."""
    if isinstance(error, InvalidDefinition):
        raise error
    if not handling_error:
        _queue_error(instance, error)


ERROR_EXECUTION = "error.execution"


Fire = Callable[[Instance, tuple[Any, ...], dict[str, Any]], Outcome]


class StateNode:
    """A state as the runtime holds it: the event table and what it was compiled from."""

    #: A flat chart never waits to stop at the end of a macrostep (a statechart's node may:
    #: ``HNode.pending``).
    pending = False

    __slots__ = (
        "active_ids",
        "binding",
        "configuration",
        "declared",
        "declared_configuration",
        "declared_keys",
        "eventless",
        "ignored",
        "state",
        "table",
        "terminated",
    )

    def __init__(self, binding: Binding, state: StateDef, declared: DeclaredState) -> None:
        self.binding = binding
        self.state = state
        self.configuration: tuple[StateDef, ...] = (state,)
        self.active_ids = frozenset({state.id})
        self.declared = declared
        self.declared_configuration: tuple[DeclaredState, ...] = (declared,)
        #: ``Instance.configuration``'s set, hashed once (``State.__hash__`` is Python)
        self.declared_keys: dict[DeclaredState, None] = {declared: None}
        self.terminated = state.final
        self.table: dict[str, Fire] = {}
        #: The function trying the state's eventless transitions (``None``: it has none).
        self.eventless: Fire | None = None
        self.ignored: dict[str, Outcome] = {}


class Binding:
    """A chart's generated code for one kind of model (the model type, plus which callback
    names its instances carry in their own ``__dict__``)."""

    __slots__ = (
        "_dynamic",
        "_gaps",
        "_groups",
        "_initial_name",
        "_label",
        "_lock",
        "_module",
        "by_values",
        "chained",
        "chart",
        "chart_names",
        "checks_model",
        "cls",
        "held_names",
        "initial",
        "initial_node",
        "instance_callbacks",
        "instance_names",
        "instance_shadows",
        "is_async",
        "method_shadows",
        "nodes",
        "resolver",
        "runtime",
        "source",
        "strict",
    )

    def __init__(self, runtime: Runtime, resolver: Resolver) -> None:
        chart = runtime.chart
        self.chart = chart
        self.runtime = runtime
        self.resolver = resolver
        self.initial: Callable[[Instance, tuple[Any, ...], dict[str, Any]], None] | None = None
        self.cls = runtime.instance_class
        self.strict = not chart.flags.allow_event_without_transition
        self.nodes = {
            state.id: StateNode(self, state, runtime.declared_states[state.id])
            for state in chart.states
        }
        self._groups: dict[tuple[str, str], tuple[Resolved, ...]] = {}
        self._gaps: dict[str, StateNode] = {}
        self._dynamic: dict[tuple[str, tuple[int, ...], bool], Callable[..., Outcome]] = {}
        #: The outcomes of eventless chains met so far (``_chained``).
        self.chained: Chains = {}
        self.initial_node = self.nodes[chart.initial.id]
        #: Whether instances must be checked for callback names in their own ``__dict__``.
        self._lock = threading.Lock()
        model_type = resolver.model_type
        self._label = chart.name
        if model_type is not None:
            self._label = f"{chart.name}, model {model_type.__name__}"
        self._module = Module(self._label, resolver.awaited)
        self._generate()
        #: The generated source of the per-(state, event) functions.
        self.source = self._module.source
        #: The names each model instance is checked for when created (``check_model``).
        self.instance_names = tuple(resolver.instance_names.items())
        #: The model's names each instance reads when created and keeps (``hold``).
        self.held_names = tuple(resolver.held)
        self.checks_model = bool(self.instance_names or self.held_names)
        self.is_async = False

    def gap(self, source: StateDef) -> StateNode:
        """The node of the empty configuration between leaving ``source`` and entering the
        target (what ``on`` callbacks of a ``StateChart`` see in ``configuration``)."""
        found = self._gaps.get(source.id)
        if found is None:
            found = StateNode(self, source, self.runtime.declared_states[source.id])
            found.configuration = ()
            found.active_ids = frozenset()
            found.declared_configuration = ()
            found.declared_keys = {}
            self._gaps[source.id] = found
        return found

    # -- generation --------------------------------------------------------------------------

    def _resolved(
        self, owner: str, group: Group, callbacks: tuple[CallbackDef, ...]
    ) -> tuple[Resolved, ...]:
        key = (owner, group.value)
        found = self._groups.get(key)
        if found is None:
            where = self.runtime.where[owner]
            found = self.resolver.resolve_group(callbacks, where)
            self._groups[key] = found
        return found

    def _state_group(self, state: StateDef, group: Group) -> tuple[Resolved, ...]:
        callbacks = state.enter if group is Group.ENTER else state.exit
        return self._resolved(f"state:{state.id}", group, callbacks)

    def _step(self, transition: TransitionDef, event: str | None, eventless: bool = False) -> Step:
        """What the generator needs of one transition fired by ``event`` (None: by ``ev``;
        ``eventless``: taken without one, its outcome's event is ``""`` as in a statechart)."""
        chart, module, runtime = self.chart, self._module, self.runtime
        owner = f"transition:{transition.id}"
        source = chart.state(transition.source)
        target = chart.state(transition.target) if transition.target is not None else None
        exits = target is not None and not transition.internal
        enters = target is not None and (
            not transition.internal or chart.flags.enable_self_transition_entries
        )
        after = target or source
        declared = runtime.declared_states
        values = {
            "transition": module.const(
                runtime.declared_transitions[transition.id], f"TRANSITION_{transition.id}"
            ),
            "source": module.const(declared[source.id], f"STATE_{source.id}"),
            "target": (
                module.const(declared[target.id], f"STATE_{target.id}") if target else "None"
            ),
            "state_after": module.const(declared[after.id], f"STATE_{after.id}"),
        }
        if eventless:
            event = ""
        if event is None:
            parts = ", ".join(
                module.const(value, f"{kind}_{name}")
                for value, kind, name in (
                    (source, "DEF", source.id),
                    (after, "DEF", after.id),
                    (transition, "DEF", transition.id),
                )
            )
            outcome = f"_Outcome(True, ev, {parts}, None)"
        else:
            applied = Outcome(True, event, source, after, transition, None)
            outcome = module.const(applied, f"TOOK_{transition.id}")
        if event is None:
            source_def = module.const(source, f"DEF_{source.id}")
            failed = f"_Outcome(False, ev, {source_def}, None, None, 'failed')"
        else:
            cancelled = Outcome(False, event, source, None, None, "failed")
            failed = module.const(cancelled, f"FAILED_{transition.id}")
        return Step(
            validators=self._resolved(owner, Group.VALIDATORS, transition.validators),
            cond=self._resolved(owner, Group.COND, transition.cond),
            before=self._resolved(owner, Group.BEFORE, transition.before),
            exit=self._state_group(source, Group.EXIT) if exits else (),
            on=self._resolved(owner, Group.ON, transition.on),
            enter=self._state_group(target, Group.ENTER) if enters and target else (),
            after=self._resolved(owner, Group.AFTER, transition.after),
            changes_node=target is not None and target.id != source.id,
            values=values,
            outcome=outcome,
            failed=failed,
            gap=(
                module.const(self.gap(source), f"NODE_leaving_{source.id}")
                if exits and not chart.flags.atomic_configuration_update
                else None
            ),
            entering_node=(
                module.const(self.entering(target), f"NODE_entering_{target.id}")
                if target is not None and target.final and target.id != source.id
                else None
            ),
            label=describe_transition(transition),
        )

    def entering(self, target: StateDef) -> StateNode:
        """The node of top-level final ``target`` while its ``enter`` callbacks run: its
        configuration, not yet terminated (python-statemachine stops its engine after them,
        so ``is_terminated`` reads False there)."""
        key = f"entering {target.id}"
        found = self._gaps.get(key)
        if found is None:
            node = self.nodes[target.id]
            found = StateNode(self, target, node.declared)
            found.table = node.table
            found.ignored = node.ignored
            found.terminated = False
            self._gaps[key] = found
        return found

    def _write_fire(
        self,
        name: str,
        state: StateDef,
        candidates: list[TransitionDef],
        event: str | None,
        handling_error: bool = False,
    ) -> None:
        """Generate the function ``event`` runs from ``state``; with ``event`` None, a
        function for any event name, passed as ``ev`` (``handling_error``: for
        ``error.execution``)."""
        module = self._module
        module.namespace.update(_FIRE_HELPERS)
        if event is not None:
            handling_error = event == ERROR_EXECUTION
        node_from = module.const(self.nodes[state.id], f"NODE_{state.id}")
        if event is None:
            event_expr, parameters = "_event_object(ev)", "inst, args, kw, ev"
        else:
            event_expr = module.const(self.runtime.event_object(event), f"EVENT_{event}")
            parameters = "inst, args, kw"
        steps = [self._step(transition, event) for transition in candidates]

        def body(writer: FunctionWriter) -> None:
            for transition, step in zip(candidates, steps, strict=True):
                target = transition.target or state.id
                node_to = module.const(self.nodes[target], f"NODE_{target}")
                if writer.step(0, step, node_from, node_to):
                    return
            if self.strict:
                if event is None:
                    state_def = module.const(state, f"DEF_{state.id}")
                    rejected = f"_Outcome(False, ev, {state_def}, None, None, 'guards_rejected')"
                else:
                    ignored = Outcome(False, event, state, None, None, "guards_rejected")
                    rejected = module.const(ignored, f"REJECTED_{state.id}_{event}")
                writer.emit(0, f"return _reject(inst, {event_expr}, {node_from}, {rejected})")
            elif event is None:
                state_def = module.const(state, f"DEF_{state.id}")
                writer.emit(
                    0, f"return _Outcome(False, ev, {state_def}, None, None, 'guards_rejected')"
                )
            else:
                ignored = Outcome(False, event, state, None, None, "guards_rejected")
                name = f"REJECTED_{state.id}_{event}"
                writer.emit(0, f"return {module.const(ignored, name)}")

        write_function(
            module,
            name,
            parameters,
            body,
            event_expr,
            event,
            positional_variant=True,
            catch=self.chart.flags.catch_errors_as_events,
            handling_error=handling_error,
        )

    def _write_eventless(
        self, name: str, state: StateDef, candidates: list[TransitionDef]
    ) -> None:
        """Generate the function trying ``state``'s eventless transitions in declaration order:
        the first enabled one runs as any transition does (its callbacks get ``event=None``);
        none enabled gives an outcome that is not applied."""
        module = self._module
        module.namespace.update(_FIRE_HELPERS)
        node_from = module.const(self.nodes[state.id], f"NODE_{state.id}")
        steps = [self._step(transition, None, eventless=True) for transition in candidates]
        none = Outcome(False, "", state, None, None, "guards_rejected")

        def body(writer: FunctionWriter) -> None:
            for transition, step in zip(candidates, steps, strict=True):
                target = transition.target or state.id
                node_to = module.const(self.nodes[target], f"NODE_{target}")
                if writer.step(0, step, node_from, node_to):
                    return
            writer.emit(0, f"return {module.const(none, f'NOT_TAKEN_{state.id}')}")

        write_function(
            module,
            name,
            "inst, args, kw",
            body,
            "None",
            None,
            positional_variant=False,
            catch=self.chart.flags.catch_errors_as_events,
        )

    def _generate(self) -> None:
        chart = self.chart
        names: dict[tuple[str, str], str] = {}
        eventless_names: dict[str, str] = {}
        for state in chart.states:
            transitions = chart.transitions_from(state.id)
            eventless = [t for t in transitions if t.is_eventless]
            if eventless:
                name = self._module.unique(f"{state.id}__eventless")
                eventless_names[state.id] = name
                self._write_eventless(name, state, eventless)
            for event in self.runtime.event_order:
                candidates = [
                    t for t in transitions if any(descriptor_matches(d, event) for d in t.events)
                ]
                if candidates:
                    name = self._module.unique(f"{state.id}__{event}")
                    names[state.id, event] = name
                    self._write_fire(name, state, candidates, event)
        self._write_initial()
        namespace = self._module.build()
        for (state_id, event), name in names.items():
            self.nodes[state_id].table[event] = namespace[name]
        for state_id, name in eventless_names.items():
            self.nodes[state_id].eventless = namespace[name]
        self.initial = namespace.get(self._initial_name)
        if self.initial is None and eventless_names:
            self.initial = _enter_nothing  # the initial macrostep may take eventless ones

    def _write_initial(self) -> None:
        chart, runtime, module = self.chart, self.runtime, self._module
        initial = chart.initial
        enter = self._state_group(initial, Group.ENTER)
        self._initial_name = ""
        if not enter:
            return
        state = module.const(runtime.declared_states[initial.id], f"STATE_{initial.id}")
        event = module.const(runtime.initial_event, "EVENT___initial__")

        def body(writer: FunctionWriter) -> None:
            empty = module.const(runtime.initial_source, "STATE_none")
            transition = module.const(runtime.initial_transition, "TRANSITION___initial__")
            phase = writer.phase(transition, state, empty, state)
            writer.emit(0, f"# enter the initial state {initial.id}")
            writer.isolated(0, writer.handled(writer.call_lines(enter, phase)))

        self._initial_name = module.unique(f"enter_{initial.id}")
        module.namespace.update(_FIRE_HELPERS)
        write_function(
            module,
            self._initial_name,
            "inst, args, kw",
            body,
            event,
            "__initial__",
            False,
            catch=chart.flags.catch_errors_as_events,
        )

    # -- events the table does not hold ------------------------------------------------------

    def unmatched(self, node: StateNode, event: str, strict: bool = True) -> Fire | Outcome:
        """The function for an event the node's table lacks, or the outcome of ignoring it
        (``TransitionNotAllowed`` for a strict chart, unless ``strict`` is false).

        Ignored outcomes are cached per node (undeclared names only up to a bound), so a
        stream of unknown events costs one lookup each.
        """
        outcome = node.ignored.get(event)
        if outcome is None:
            if not isinstance(event, str):
                raise TypeError(f"event must be a str, got {type(event).__name__}: {event!r}")
            runtime = self.runtime
            if runtime.prefix_matching and ("." in event or runtime.has_wildcard):
                candidates = tuple(
                    t.order
                    for t in self.chart.transitions_from(node.state.id)
                    if any(descriptor_matches(d, event) for d in t.events)
                )
                if candidates:
                    dynamic = self._dynamic_fire(node, candidates, event == ERROR_EXECUTION)
                    return lambda inst, args, kw: dynamic(inst, args, kw, event)
            reason: OutcomeReason
            if node.state.final:
                reason = "terminated"
            elif event in runtime.event_ids:
                reason = "no_transition"
            else:
                reason = "unknown_event"
            outcome = Outcome(False, event, node.state, None, None, reason)
            if len(node.ignored) < _IGNORED_CACHE_SIZE:
                node.ignored[event] = outcome
        if self.strict and strict:
            raise _not_allowed(self.runtime.event_object(event), node)
        return outcome

    def _dynamic_fire(
        self, node: StateNode, candidates: tuple[int, ...], handling_error: bool
    ) -> Callable[..., Outcome]:
        key = (node.state.id, candidates, handling_error)
        found = self._dynamic.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._dynamic.get(key)
            if found is None:
                self._module = Module(self._label, self.resolver.awaited)
                transitions = [self.chart.transitions[i] for i in candidates]
                name = self._module.unique(f"{node.state.id}__any_event")
                self._write_fire(name, node.state, transitions, None, handling_error)
                found = self._module.build()[name]
                self._dynamic[key] = found
        return found

    # -- instances ---------------------------------------------------------------------------

    def eventless(self, node: StateNode) -> Fire | None:
        """The function trying the node's eventless transitions, or ``None`` if it has none."""
        return node.eventless

    def settled(self, node: StateNode) -> StateNode:
        """``node`` at the end of a macrostep: a flat chart's never waits to stop (only a
        statechart's top-level parallel state does, ``HBinding.settled``)."""
        return node

    def stopping(self, node: StateNode) -> str | None:
        """What a snapshot says of a flat chart's stopping: nothing (``HBinding.stopping``)."""
        return None

    def terminated(self, node: StateNode, event: str) -> Outcome:
        """The outcome of an event sent once the instance terminated (python-statemachine
        drops it, or raises ``TransitionNotAllowed`` for a strict chart)."""
        if not isinstance(event, str):
            raise TypeError(f"event must be a str, got {type(event).__name__}: {event!r}")
        if self.strict:
            raise _not_allowed(self.runtime.event_object(event), node)
        return Outcome(False, event, node.state, None, None, "terminated")

    def check_instance(self, model: Any) -> dict[str, Any] | None:
        """Raise python-statemachine's error if the model lacks a name the chart needs of it
        (as ``dir(model)`` lists them; see ``check_model``); what the instance keeps of the
        model's names (``hold``), if any."""
        read = check_model(self.chart.name, model, self.instance_names, self.resolver.plain_dir)
        if not self.held_names:
            return None
        return hold(model, self.held_names, read, self.verdict)

    def verdict(self, value: Any) -> str | None:
        """What the machine scan says of a callable the model hands out."""
        return verdict(self.resolver, value)

    def enter_initial(self, instance: Instance, kwargs: dict[str, Any]) -> None:
        """Run the initial state's ``enter`` callbacks, and any events they send."""
        assert self.initial is not None
        if instance._pending is None:
            instance._pending = _BUSY
        try:
            self.initial(instance, (), kwargs)
        except BaseException:
            instance._settle_failure()
            raise
        if instance._pending is _BUSY and self.initial_node.eventless is None:
            instance._pending = None
        else:
            initial = self.chart.initial
            instance._run_queues(Outcome(True, "__initial__", initial, initial, None, None))


_FIRE_HELPERS: dict[str, Any] = {}


def _enter_nothing(inst: Instance, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    """The initial entry of a chart whose initial state has no ``enter`` callback."""


def _event_object(name: str) -> DeclaredEvent:
    """The event object callbacks receive for an undeclared event name (as the reference)."""
    return DeclaredEvent(id=name, name=name)


def _event_now(inst: Instance, event: Any) -> Any:
    """The event object callbacks of the event being run receive: ``event`` (the declared
    one) unless it was sent otherwise, then one saying so, as python-statemachine builds one
    per send: internal (``raise_``, ``done.state``, ``error.execution`` ...), or with a delay
    other than the declared one."""
    pending = inst._pending
    trigger = pending.trigger if isinstance(pending, _Queues) else None
    if trigger is None or trigger is _PLAIN or event is None:  # (None: eventless)
        return event
    return _flagged(event, trigger[0], trigger[2])


def _same_number(one: Any, other: Any) -> bool:
    """Equal and of one type: an event object reads its delay as it was given (``3.0`` is
    not ``3`` there)."""
    return type(one) is type(other) and one == other


def _flagged(event: Any, internal: bool, delay: float | None) -> Any:
    """``event`` as sent ``internal`` (or not) with ``delay`` (``None``: the declared one)."""
    declared_delay = getattr(event, "delay", 0)
    if delay is None:
        delay = declared_delay
    if bool(getattr(event, "internal", False)) == internal and _same_number(delay, declared_delay):
        return event
    key = (str(event), event.name, internal, type(delay), delay)  # (3 and 3.0 read apart)
    flagged = _flagged_events.get(key)
    if flagged is None:
        flagged = DeclaredEvent(id=str(event), name=event.name, internal=internal, delay=delay)
        if len(_flagged_events) < _IGNORED_CACHE_SIZE:
            _flagged_events[key] = flagged
    return flagged


def _not_allowed(event: DeclaredEvent, node: Any) -> TransitionNotAllowed:
    return TransitionNotAllowed(event, OrderedSet(node.declared_configuration))


class Runtime:
    """Everything about running a chart that does not depend on the model."""

    def __init__(self, chart: Chart, declared: type[StateChart[Any]]) -> None:
        self.chart = chart
        self.declared = declared
        self.attributes = chart_attributes(declared)
        all_states = declared_states(declared)
        self.declared_states: dict[str, DeclaredState] = {s.id: s for s in all_states}
        declared_transitions = all_declared_transitions(declared)
        self.declared_transition_list = declared_transitions
        self.declared_transitions = {
            definition.id: transition
            for definition, transition in zip(chart.transitions, declared_transitions, strict=True)
        }
        #: How python-statemachine names each state and transition in its error messages.
        self.where = {
            f"state:{s.id}": str(d) for s, d in zip(chart.states, all_states, strict=True)
        }
        self.where.update(
            (f"transition:{t.id}", str(d))
            for t, d in zip(chart.transitions, declared_transitions, strict=True)
        )
        self.events = {str(event.id): event for event in declared._events}
        #: Every event name the chart knows, declared events first, in declaration order.
        self.event_order = tuple(
            dict.fromkeys([*self.events, *(e for t in chart.transitions for e in t.events)])
        )
        self.event_ids = frozenset(self.event_order)
        descriptors = {e for t in chart.transitions for e in t.events}
        self.has_wildcard = "*" in descriptors
        self.prefix_matching = bool(descriptors)
        self.initial_event = DeclaredEvent(id="__initial__")
        self.initial_source = DeclaredState()
        self.initial_transition = DeclaredTransition(
            self.initial_source, self.declared_states[chart.initial.id], event="__initial__"
        )
        #: The chart's own ``prepare_event`` (python-statemachine's hook adding keyword
        #: arguments to every callback; its loaders set one for the SCXML system variables).
        self.prepare = getattr(declared, "prepare_event", None)
        #: Compound, parallel or history states (or a ``prepare_event``) need the statechart
        #: interpreter; a flat chart with eventless transitions runs its flat generated code
        #: in the statechart processing loop (``StatechartInstance``).
        self.hierarchical = chart.is_structured or self.prepare is not None
        self.has_eventless = any(t.is_eventless for t in chart.transitions)
        base: type[Instance] = (
            StatechartInstance if self.hierarchical or self.has_eventless else Instance
        )
        extra: dict[str, Any] = {}
        methods = _event_methods(declared)
        if self.prepare is not None:
            base = _MachineInstance
            extra["prepare_event"] = self.prepare
            for name in ("name", "id"):  # an event declared there is the class's, as there
                if name not in methods:
                    extra[name] = getattr(declared, name)
        #: Declared events whose declaration sets ``delay`` or ``internal``.
        self.optioned = frozenset(
            str(event.id) for event in declared._events if event.delay or event.internal
        )
        if self.optioned:
            extra["send"] = _optioned_send(base, self.optioned)
        namespace: dict[str, Any] = {
            **methods,
            **{k: _as_declared(v, declared) for k, v in self.attributes.items()},
            **extra,
            # named as the chart, as python-statemachine's machine's class is: a callback
            # reading type(machine).__name__ (__qualname__, __module__, __doc__) gets the
            # chart's answer; it is not the chart's class, and the scan refuses asking so
            "__module__": declared.__module__,
            "__qualname__": declared.__qualname__,
            "__doc__": declared.__doc__,
        }
        for state in chart.states:  # python-statemachine's machine has them (self.b.is_active)
            if state.id not in namespace and not hasattr(base, state.id):
                namespace[state.id] = _Unavailable(state.id)
        init = custom_init(declared)
        #: The chart's class-level data (``attempts = 0``): python-statemachine's machine has
        #: a ``__dict__``, so a callback's ``self.attempts += 1`` sets it on the instance (and
        #: the class default, mutable ones included, is shared until then), here as there.
        self.class_fields = frozenset(
            name
            for name, value in self.attributes.items()
            if not hasattr(type(value), "__get__") and name not in _MACHINE_NAMES
        )
        #: The per-instance fields a custom ``__init__`` or a callback sets (in snapshots).
        self.instance_fields: frozenset[str] = self.class_fields
        self.resolvable_fields: frozenset[str] = frozenset()
        #: Whether the chart has a custom descriptor (not a class method): it may keep its
        #: value in the instance's ``__dict__``, as python-statemachine's machine has one.
        described = any(
            isinstance(namespace.get(name), _ChartOwned) and not isinstance(value, classmethod)
            for name, value in self.attributes.items()
        )
        #: Whether instances have a ``__dict__`` (for those fields, or descriptors); only
        #: then do they pay for one.
        self.has_fields = bool(self.class_fields) or init is not None or described
        if not self.has_fields:
            namespace["__slots__"] = ()
        bases: tuple[type, ...] = (base,)
        if init is not None:  # the chart's __init__, with its fields
            self.instance_fields |= init_fields(init[1])
            self.resolvable_fields = init_fields(init[1], before_super=True)
            bases = (_Constructed, base)
        self.instance_class: type[Instance] = _make_class(declared.__name__, bases, namespace)
        self.custom_init = init is not None
        if init is not None:
            setattr(self.instance_class, "__init__", _rebound(init[1], self.instance_class))  # noqa: B010
            setattr(self.instance_class, "__chart_runtime__", self)  # noqa: B010
        self.callback_names = _callback_names(chart)
        self.chart_only = Resolver(
            chart.name, declared, self.attributes, self.event_ids, None, self.resolvable_fields
        )
        self.by_type: dict[type, Binding] = {}
        #: The naming-convention callbacks the chart's states and transitions look up
        #: (``on_enter_b``, ``before_go``, ``on_transition`` ...), and those a model instance
        #: may not hold alone (the runtime has no place for them there).
        self.conventions = frozenset(
            callback.ref
            for groups in (
                *((state.enter, state.exit) for state in chart.states),
                *((t.before, t.on, t.after) for t in chart.transitions),
            )
            for group in groups
            for callback in group
            if callback.convention
        )
        self.refused_conventions = frozenset(
            ("prepare_event", "on_invoke_state", *(f"on_invoke_{s.id}" for s in chart.states))
        )
        #: Whether an ``enter`` callback's value can matter (the done data of a final state
        #: in a compound one): then a model instance's non-callable values are looked at too.
        self.done_data = any(state.final and state.parent is not None for state in chart.states)
        #: The bindings for model instances holding naming-convention callbacks their class
        #: lacks, by (model type, the names held).
        self.variants: dict[tuple[type, frozenset[str]], Binding] = {}
        self._lock = threading.RLock()
        self._awaited: type[Instance] | None = None

    @functools.cached_property
    def structure(self) -> str:
        """The digest of the chart's states and transitions its snapshots keep (C19)."""
        return _snapshot.structure(self.chart)

    def event_object(self, name: str) -> DeclaredEvent:
        """The declared event called ``name``, or an event object for an undeclared name."""
        return self.events.get(name) or _event_object(name)

    def binding(self, model: Any) -> Binding:
        """The generated code for this model's type (compiled on first use of the type)."""
        return self.binding_for_type(type(model))

    def binding_for_type(self, model_type: type) -> Binding:
        """The generated code for a model type (compiled on first use of the type)."""
        binding = self.by_type.get(model_type)
        if binding is None:
            with self._lock:
                binding = self.by_type.get(model_type)
                if binding is None:
                    binding = self._bind(model_type)
                    self.by_type[model_type] = binding
        return binding

    def awaited_class(self) -> type[Instance]:
        """The instance class for models that make the chart's callbacks async (one)."""
        with self._lock:
            if self._awaited is None:
                self._awaited = _awaited_class(self.instance_class)
            return self._awaited

    def for_instance(self, binding: Any, model: Any) -> Any:
        """``binding``, or for a model instance holding callbacks itself (naming-convention
        callbacks its class lacks, listed by ``dir(model)``, or callbacks of its class an
        instance attribute shadows), which python-statemachine runs, the binding running
        those, generated once for each set of names."""
        own = getattr(model, "__dict__", None)
        if not isinstance(own, dict):
            own = {}
        names: frozenset[str] = binding.instance_callbacks
        shadows: frozenset[str] = binding.instance_shadows
        # the names its class lacks as ``dir(model)`` lists them: its ``__dict__``'s, unless
        # its class has a ``__dir__`` of its own; a shadow is one its ``__dict__`` holds
        listed: Any = own if binding.resolver.plain_dir else dir(model)
        held = (names - shadows).intersection(listed) | shadows.intersection(own)
        if not held:
            return binding
        model_type = type(model)
        refused = sorted(held & self.refused_conventions)
        if refused:
            raise UnsupportedChart(
                self.chart.name,
                "a callback the model instance holds itself",
                f"{model_type.__name__}.{refused[0]}, set on the instance, when it is created",
                "define it on the model's class",
            )
        key = (model_type, held)
        variant = self.variants.get(key)
        if variant is None:
            with self._lock:
                variant = self.variants.get(key)
                if variant is None:
                    if len(self.variants) >= _VARIANTS_KEPT:  # the oldest goes
                        del self.variants[next(iter(self.variants))]
                    variant = self.variants[key] = self._bind(model_type, held)
        return variant

    def _bind(self, model_type: type, held: frozenset[str] = frozenset()) -> Binding:
        if hasattr(model_type, "prepare_event") and self.prepare is None:
            raise UnsupportedChart(
                self.chart.name,
                "a prepare_event callback",
                f"{model_type.__name__}.prepare_event on the model",
            )
        for name in ("on_invoke_state", *(f"on_invoke_{s.id}" for s in self.chart.states)):
            if hasattr(model_type, name):
                raise UnsupportedChart(
                    self.chart.name, "invoke", f"{model_type.__name__}.{name} on the model"
                )
        vet = functools.partial(foreign_machine_use, self.declared)
        resolver = Resolver(
            self.chart.name,
            self.declared,
            self.attributes,
            self.event_ids,
            None if model_type is type(None) else model_type,
            self.resolvable_fields,
            vet=vet,
            instance_callbacks=held,
        )
        binding = self._binding_of(resolver)
        prepares_async = self.prepare is not None and (
            _async.is_async(self.prepare)
            or _async.is_async(getattr(model_type, "prepare_event", None))
        )
        if resolver.is_async or prepares_async:  # again, every awaitable result awaited
            resolver = Resolver(
                self.chart.name,
                self.declared,
                self.attributes,
                self.event_ids,
                None if model_type is type(None) else model_type,
                self.resolvable_fields,
                awaited=True,
                vet=vet,
                instance_callbacks=held,
            )
            binding = self._binding_of(resolver)
            binding.is_async = True
            binding.cls = self.awaited_class()
        # the callbacks a model instance may hold itself (a variant holds its own): those of
        # its class an instance attribute would shadow, and the naming-convention ones its
        # class lacks; and whether its values tell (its names are its ``__dict__``'s; a
        # non-callable value held there can matter only as a final state's done data, or
        # shadowing a method: C9)
        binding.by_values = resolver.plain_dir and not self.done_data
        binding.instance_callbacks = binding.instance_shadows = frozenset()
        binding.method_shadows = binding.chart_names = ()
        if model_type is not type(None) and not held:
            shadows = frozenset(resolver.shadowable).union(
                name
                for name in self.refused_conventions
                if _static_lookup(model_type, name) is not _MISSING
            )
            binding.instance_shadows = shadows
            # what an instance's non-callable value would change unseen by its values: the
            # class's callable it shadows, or the chart's it joins, where python-statemachine
            # reads the value (C9)
            binding.method_shadows = tuple(
                sorted(name for name in shadows if _callable_on_class(model_type, name))
            )
            binding.chart_names = tuple(sorted(resolver.chart_only))
            binding.instance_callbacks = shadows.union(
                resolver.chart_only,
                (
                    name
                    for name in self.conventions | self.refused_conventions
                    if _static_lookup(model_type, name) is _MISSING
                ),
            )
            if _own_dict(model_type):
                if shadows:
                    _refuse_own_dict(self.chart.name, model_type)
                # its names as ``dir`` lists them come from that ``__dict__``, not its values
                binding.by_values = False
        return binding  # type: ignore[no-any-return]

    def _binding_of(self, resolver: Resolver) -> Any:
        binding: Any
        if self.hierarchical:
            support = Support(Outcome, _BUSY, _FIRE_HELPERS, _not_allowed, _reject)
            binding = HBinding(self, resolver, support)
            binding.resolve_all()  # generation is lazy; asyncness must be known now
        else:
            binding = Binding(self, resolver)
        binding.is_async = False
        return binding


class _Unstarted:
    """The ``_pending`` of an async instance not activated yet: its initial state is entered
    by the first event, or ``activate_initial_state()``, as python-statemachine's async
    engine defers it (``kwargs`` go to the initial ``enter`` callbacks)."""

    __slots__ = ("created", "kwargs", "queues")

    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs
        #: events sent before, queued when their ``send`` was called (run after the entry)
        self.queues: _Queues | None = None
        #: when python-statemachine would have queued its initial entry (``monotonic_ns``)
        self.created = time.monotonic_ns()


def _unstarted(instance: Instance, binding: Any, kwargs: dict[str, Any]) -> None:
    """An async instance waits for its first event to enter its initial state, with no
    active state until then, as python-statemachine's async engine defers it."""
    instance._pending = _Unstarted(kwargs)  # type: ignore[assignment]
    if not binding.chart.is_hierarchical and isinstance(binding, Binding):
        instance._node = binding.gap(binding.chart.initial)  # the empty configuration


#: Set while an async instance's ``send`` runs to completion outside any event loop.
_unawaited = threading.local()


def _completed(coroutine: Any) -> Any:
    """``_async.complete`` for a ``send``: outside any event loop python-statemachine's async
    engine gives the event no future, so one dropped because the instance ended is answered
    quietly there (``_dropped``)."""
    if _async.loop_running():
        return coroutine
    sending = getattr(_unawaited, "sending", False)
    _unawaited.sending = True
    try:
        return _async.complete(coroutine)
    finally:
        _unawaited.sending = sending


def _awaited_class(base: type[Instance]) -> type[Instance]:
    """The instance class of a chart with async callbacks: python-statemachine's awaitable
    send path, over ``base`` (a subclass with no new slots, so a custom ``__init__``'s
    instance can switch to it once its model is known).

    ``send`` (and ``raise_``, and the event methods) return a coroutine to await when an event
    loop runs in this thread, and run to completion otherwise, as python-statemachine's
    ``send`` does with its async engine; from inside a callback they queue the event and
    return an awaitable outcome (``await self.send(...)`` works, and so does not awaiting it).
    The initial state is entered by the first event or ``await activate_initial_state()``.
    An event another task sends while one runs joins its queue, as python-statemachine's
    async engine queues it; that task's ``send`` returns (outcome ``queued``) once the run
    took it.
    """
    base_send, base_raise = base.send, base.raise_

    def send(self: Instance, event: str, /, *args: Any, **kwargs: Any) -> Any:
        """Send ``event``: awaitable in a running event loop, as python-statemachine's."""
        if _async.running(self):
            return _async.Done(base_send(self, event, *args, **kwargs))
        if _async.driven(self):
            # another task's run holds the instance: the event joins its queue now, as
            # python-statemachine puts it when ``send`` is called, awaited or not
            joined = _join(self, base_send, event, args, _from_another_task(kwargs))
            return _joining(self, joined)
        if _async.loop_running():
            queued = _queue_now(self, event, args, kwargs)
            if queued is not None:
                return queued
        return _completed(_driven(self, base_send, base_send, event, args, kwargs))

    def raise_(self: Instance, event: str, /, *args: Any, **kwargs: Any) -> Any:
        """Raise an internal event (from a callback), else send it: awaitable, as ``send``."""
        if _async.running(self):
            return _async.Done(base_raise(self, event, *args, **kwargs))
        if _async.driven(self):  # as send(..., internal=True) from another task
            outside = _from_another_task({**kwargs, "internal": True})
            return _joining(self, _join(self, base_send, event, args, outside))
        if _async.loop_running():  # python-statemachine's raise_ is send(..., internal=True)
            queued = _queue_now(self, event, args, {**kwargs, "internal": True})
            if queued is not None:
                return queued
        return _async.complete(_driven(self, base_raise, base_send, event, args, kwargs))

    def activate_initial_state(self: Instance) -> Any:
        """Enter the initial state now, if no event did yet (an awaitable, as ``send``);
        while another task's run holds the instance it returns at once, as
        python-statemachine's processing loop does."""
        return _async.complete(_driven(self, None, base_send, "", (), {}))

    return type(
        base.__name__,
        (base,),
        {
            "__slots__": (),
            "__module__": base.__module__,
            "__qualname__": base.__qualname__,
            "__doc__": base.__doc__,
            "send": send,
            "raise_": raise_,
            "activate_initial_state": activate_initial_state,
            "_refuses_dropped": True,
        },
    )


async def _driven(
    instance: Instance,
    send: Callable[..., Outcome] | None,
    queue: Callable[..., Outcome],
    event: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """Run one event of an async instance (entering its initial state first if no event did
    yet), awaiting its async callbacks on this event loop."""
    pending = instance._pending
    if _async.driven(instance):
        if send is None:  # activating: the run in progress holds the loop, and
            return None  # python-statemachine's processing loop returns at once then
        return await _joined(instance, *_join(instance, queue, event, args, kwargs))
    if (
        isinstance(pending, _Unstarted)
        and send is not None
        and not _SEND_OPTIONS.isdisjoint(kwargs)
    ):
        # queued behind the initial entry with its options, as python-statemachine puts it
        return await _run_unstarted(
            instance, pending, *_queue_unstarted(instance, pending, event, args, kwargs)
        )
    if isinstance(pending, _Unstarted):
        instance._pending = None
        binding: Any = instance._node.binding
        instance._node = binding.initial_node
        queued = pending.queues  # events sent before, queued behind the initial entry
        if binding.initial is not None or queued is not None:
            if send is not None:
                # one run: python-statemachine queues the event behind its initial entry, so
                # events other tasks (or the initial state's callbacks) send meanwhile follow
                return await _async.drive(
                    instance,
                    _first_event,
                    instance,
                    binding,
                    pending.kwargs,
                    (event, args, kwargs),
                    queued,
                )
            if queued is not None:
                await _async.drive(
                    instance, _first_event, instance, binding, pending.kwargs, None, queued
                )
            else:
                await _async.drive(instance, binding.enter_initial, instance, pending.kwargs)
    elif pending is _BUSY or (isinstance(pending, _Queues) and pending.busy):
        raise RuntimeError(
            f"{event!r} was sent to an async instance of {instance.chart.name} while it "
            "runs an event outside any event loop task"
        )
    elif send is None and isinstance(pending, _Queues) and not pending.idle():
        # python-statemachine's activate_initial_state runs its processing loop: the events
        # waiting (sent, never awaited) run
        await _async.drive(instance, _take_over, instance, pending, None)
    if send is None:
        return None
    return await _async.drive(instance, send, instance, event, *args, **kwargs)


def _first_event(
    instance: Instance,
    binding: Any,
    initial: dict[str, Any],
    mine: Item | None,
    queued: _Queues | None = None,
    put: bool = True,
) -> Any:
    """Enter the initial state of an async instance, then run the events ``queued`` when
    sent before and its first event ``mine`` (events sent while the initial state is entered
    run after it; ``put``: ``mine`` is not queued yet)."""
    queues = instance._pending = queued if queued is not None else _Queues()
    queues.busy = True
    if mine is not None and put:
        queues.put(mine)
    if binding.initial is not None:
        try:
            binding.initial(instance, (), initial)
        except BaseException:
            instance._settle_failure()
            raise
    outcome = instance._drain(queues, mine)
    if outcome is None and mine is not None:
        return _not_run(instance, queues, mine)
    return outcome


def _not_run(instance: Instance, queues: _Queues, mine: Item) -> Outcome:
    """The outcome of an event its run did not take: dropped when the instance terminated
    (answered as python-statemachine answers it), else a delayed one not due yet, or one
    cancelled (``cancel_event``)."""
    node: Any = instance._node
    if node.terminated and not queues.holds(mine):
        return node.binding.terminated(node, mine[0])  # type: ignore[no-any-return]
    return Outcome(False, mine[0], node.state, None, None, "queued")


def _from_another_task(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keywords of an event sent while another task's run holds the instance: an
    internal one is marked so, for the external queue (not this task's step)."""
    return {**kwargs, _OUTSIDE: True} if kwargs.get("internal") else kwargs


def _join(
    instance: Instance,
    queue: Callable[..., Outcome],
    event: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Outcome, Item | None]:
    """Queue ``event`` on the run another task holds ``instance`` with; its outcome
    (``queued``) and the item queued."""
    pending = instance._pending
    before = pending.items() if isinstance(pending, _Queues) else []
    outcome = queue(instance, event, *args, **kwargs)
    queues = instance._pending
    mine = None
    if isinstance(queues, _Queues):
        mine = next((item for item in queues.items() if not _among(item, before)), None)
    return outcome, mine


def _joining(instance: Instance, joined: tuple[Outcome, Item | None]) -> Any:
    """What ``send`` returns for an event queued on another task's run: an awaitable
    waiting for the run, or (from inside a run, or from a thread no event loop of the run
    runs in) the outcome, awaitable, as python-statemachine returns at once there."""
    if not _async.may_wait(instance):
        return _async.Done(joined[0])
    return _joined(instance, *joined)


async def _joined(instance: Instance, outcome: Outcome, mine: Item | None) -> Any:
    """A task's event queued on another task's run: returned (``queued``) once the run has
    taken it, as python-statemachine's caller awaits its future (at once from inside a run,
    or from another event loop: no future there)."""
    queues = joined = instance._pending
    if not _async.may_wait(instance):
        return outcome
    while await _async.finished(instance):
        # the run was cancelled: python-statemachine wakes the callers waiting for it, and
        # the first to wake takes the loop over, running the events left (its own among them)
        if mine is not None and isinstance(joined, _Queues) and joined.current is mine:
            raise StateMachineError(
                "The task running the processing loop was cancelled while it processed this event."
            )
        queues = instance._pending
        if mine is None or not (isinstance(queues, _Queues) and queues.holds(mine)):
            return outcome
        if not _async.driven(instance):
            return await _async.drive(instance, _take_over, instance, queues, mine)
    if mine is not None and isinstance(queues, _Queues) and _among(mine, queues.dropped):
        # dropped when the run terminated the instance: answered as python-statemachine
        # answers the caller of an event it drops
        node: Any = instance._node
        return node.binding.terminated(node, mine[0])
    return outcome


def _queue_now(
    instance: Instance, event: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Coroutine[Any, Any, Any] | None:
    """An event sent from outside any run, in a running event loop, to an instance idle or
    not started yet: queued now, with its options, as python-statemachine puts it when
    ``send`` is called (a coroutine never awaited leaves it for the next run); the coroutine
    running it. ``None`` while the instance runs outside any task."""
    pending = instance._pending
    if isinstance(pending, _Unstarted):
        return _run_unstarted(
            instance, pending, *_queue_unstarted(instance, pending, event, args, kwargs)
        )
    if pending is None:
        queues = instance._pending = _Queues()
        queues.busy = False
    elif isinstance(pending, _Queues) and not pending.busy:
        queues = pending
    else:
        return None
    # from outside a run, an internal event goes to the external queue, as there; an event
    # declared with a delay waits for it
    options = _send_options(instance, event, kwargs)
    mine = (event, args, options.payload)
    queues.put(mine, options.delay, options.send_id, options.sent, options.internal)
    return _run_queued(instance, queues, mine)


def _queue_unstarted(
    instance: Instance,
    unstarted: _Unstarted,
    event: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Item | None, Outcome | None]:
    """Queue an event sent to an instance not started yet behind its initial entry; the
    item queued, or the outcome of one due before that entry (a negative ``delay``):
    python-statemachine takes it first, in no state, and ignores it."""
    queues = unstarted.queues
    if queues is None:
        queues = unstarted.queues = _Queues()
        queues.busy = False
    options = _send_options(instance, event, kwargs)
    delay = options.delay
    if delay < 0 and time.monotonic_ns() + milliseconds_ns(delay) < unstarted.created:
        node: Any = instance._node
        binding = node.binding
        if binding.strict:  # there it fails the run and drops the initial entry
            raise UnsupportedChart(
                binding.chart.name,
                "an event due before the initial state is entered, on a chart without "
                "events without transitions",
                f"send({event!r}, delay={delay!r}) before activate_initial_state()",
                "send it after the initial state is entered, or with a delay of 0 or more",
            )
        reason: OutcomeReason = (
            "no_transition" if event in binding.runtime.event_ids else "unknown_event"
        )
        return None, Outcome(False, event, node.state, None, None, reason)
    mine = (event, args, options.payload)
    queues.put(mine, delay, options.send_id, options.sent, options.internal)
    return mine, None


async def _run_unstarted(
    instance: Instance, unstarted: _Unstarted, mine: Item | None, ignored: Outcome | None
) -> Any:
    """Run the event ``send`` queued on an instance not started when it was called (or
    answer ``ignored``, for one due before the initial entry): the initial state is entered
    first, unless a run did meanwhile."""
    queues = unstarted.queues
    pending: Any = instance._pending
    if pending is unstarted and not _async.driven(instance):
        instance._pending = None
        binding: Any = instance._node.binding
        instance._node = binding.initial_node
        outcome = await _async.drive(
            instance, _first_event, instance, binding, unstarted.kwargs, mine, queues, False
        )
        return outcome if ignored is None else ignored
    if mine is None or queues is None:
        return ignored
    return await _run_queued(instance, queues, mine)


async def _run_queued(instance: Instance, queues: _Queues, mine: Item) -> Any:
    """Run the event ``send`` queued (``mine``, after the events waiting before it)."""
    if _async.driven(instance):  # another task's run started meanwhile: it takes the event
        return await _joined(
            instance, Outcome(False, mine[0], instance._node.state, None, None, "queued"), mine
        )
    if instance._pending is not queues or queues.busy or not queues.holds(mine):
        # run meanwhile (by a send not awaiting a run), or dropped by a failure
        return Outcome(False, mine[0], instance._node.state, None, None, "queued")
    return await _async.drive(instance, _take_over, instance, queues, mine)


def _take_over(instance: Instance, queues: _Queues, mine: Item | None) -> Outcome | None:
    """Run the events a cancelled run left queued, ``mine`` among them; its outcome."""
    if instance._pending is not queues or queues.busy:  # pragma: no cover - checked before
        raise RuntimeError("the instance's queue changed while taking its run over")
    queues.busy = True
    outcome = instance._drain(queues, mine)
    if mine is None:
        return None
    if outcome is None:
        return _not_run(instance, queues, mine)
    return outcome


def _among(item: Item, items: list[Item]) -> bool:
    return any(entry is item for entry in items)


class _Constructed(Instance):
    """The base of instances of a chart with a custom ``__init__``: the chart's ``__init__``
    runs first and hands over here with ``super().__init__(...)``, as it hands over to
    python-statemachine's, which enters the initial state with the keyword arguments."""

    __slots__ = ()

    def __init__(
        self,
        model: Any = None,
        state_field: str = "state",
        start_value: Any = None,
        listeners: Any = None,
        **kwargs: Any,
    ) -> None:
        if state_field != "state" or start_value is not None or listeners:
            raise TypeError(
                "the compiled runtime does not take python-statemachine's state_field, "
                "start_value or listeners options (Chart.restore starts elsewhere; "
                "observe_outcomes() watches events)"
            )
        if kwargs:
            _initial_payload(kwargs)
        if model is None:
            model = Model()  # type: ignore[no-untyped-call]
        runtime: Runtime = getattr(type(self), "__chart_runtime__")  # noqa: B009
        binding = runtime.binding(model)
        binding, held = _bound(binding, model)
        queues = getattr(self, "_pending", None)  # holding the clock create() was given
        super().__init__(binding.initial_node, model)  # a _MachineInstance sets _prepared too
        if held is not None:
            self._held = held
        if binding.cls is not type(self):  # the model's callbacks are async
            self.__class__ = binding.cls
        self._pending = queues
        if binding.is_async:
            if queues is not None:
                raise TypeError("a chart with async callbacks takes no clock")
            _unstarted(self, binding, kwargs)
        elif binding.initial is not None:
            binding.enter_initial(self, kwargs)
        elif queues is not None:
            self._settle(queues)


def _rebound(function: Any, cls: type) -> Any:
    """The chart's ``__init__`` with its zero-argument ``super()`` meaning ``cls``'s base (a
    copy: the declared class keeps its own)."""
    cells = tuple(
        types.CellType(cls) if name == "__class__" else cell
        for name, cell in zip(
            function.__code__.co_freevars, function.__closure__ or (), strict=True
        )
    )
    rebound = types.FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__, cells
    )
    rebound.__kwdefaults__ = function.__kwdefaults__
    rebound.__qualname__ = function.__qualname__
    rebound.__doc__ = function.__doc__
    return rebound


def _construct(
    cls: type[Instance], args: tuple[Any, ...], kwargs: dict[str, Any], clock: Clock | None
) -> Instance:
    """Run a chart's custom ``__init__`` on a new instance; it must hand over to
    ``super().__init__(...)``, which enters the initial state (with ``clock``, if given)."""
    instance = Instance.__new__(cls)
    if clock is not None:
        instance._pending = _Queues(_check_clock(clock))
    instance.__init__(*args, **kwargs)  # type: ignore[misc]
    try:
        instance._node  # noqa: B018 - set by the hand-over
    except AttributeError:
        raise TypeError(
            f"{cls.__name__}.__init__ returned without calling "
            "super().__init__(...), so no state was entered"
        ) from None
    return instance


def _bound(binding: Any, model: Any) -> tuple[Any, dict[str, Any] | None]:
    """The binding an instance with ``model`` runs (a variant if the model instance holds
    naming-convention callbacks its class lacks), and what the instance keeps of the model's
    names, checked as python-statemachine checks them when it builds the machine."""
    if binding.instance_callbacks:
        binding = _variant(binding, model)
    return binding, binding.check_instance(model) if binding.checks_model else None


def _variant(binding: Any, model: Any) -> Any:
    """The binding for a model instance that may hold naming-convention callbacks its class
    lacks, or values shadowing callables of its class: a variant generated for those it holds,
    else ``binding``."""
    if not binding.by_values:
        return binding.runtime.for_instance(binding, model)
    # the garbage collector's view of the instance: none of its values callable (nor a dict,
    # maybe its ``__dict__``), it holds no callback; reading ``__dict__`` would make CPython
    # build the dict it keeps inline, 64 bytes for good. Its class is seen once (the type it
    # visits): seen again, the instance holds it.
    cls = type(model)
    typed = held = False
    for value in gc.get_referents(model):
        if value is cls and not typed:
            typed = True
        elif callable(value) or isinstance(value, dict):
            return binding.runtime.for_instance(binding, model)
        else:
            held = True
    if held and _shadowed(binding.method_shadows, binding.chart_names, model):
        return binding.runtime.for_instance(binding, model)
    return binding


def _shadowed(shadows: tuple[str, ...], chart_names: tuple[str, ...], model: Any) -> bool:
    """Whether ``model``, holding no callable, may hold a value under one of ``shadows``, each
    a callable its class gives it (``getattr`` then reads the value: the class's is
    callable), or of ``chart_names``, the chart's callbacks its class lacks (found on the
    instance)."""
    for name in shadows:
        if not callable(getattr(model, name, None)):
            return True
    for name in chart_names:
        try:  # not ``hasattr``: a class's ``__getattr__`` is not asked, as ``dir`` does not
            _generic_lookup(model, name)
        except AttributeError:
            continue
        return True
    return False


_generic_lookup = object.__getattribute__


#: How CPython gives instances their ``__dict__`` (a class's own, or a builtin's such as
#: ``types.SimpleNamespace``'s).
_DICT_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType)


def _own_dict(model_type: type) -> bool:
    """Whether ``model_type`` defines ``__dict__`` itself (a property, say), rather than
    CPython giving its instances their dict."""
    own = _static_lookup(model_type, "__dict__")
    return own is not _MISSING and type(own) not in _DICT_DESCRIPTORS


def _refuse_own_dict(chart: str, model_type: type) -> None:
    """Refuse a model class defining ``__dict__`` itself when an instance may shadow a
    callback of its class: which ones it shadows is read from that ``__dict__``, where
    python-statemachine's ``getattr`` reads the instance's own values. (Names its class lacks
    are listed from that same ``__dict__`` by ``dir``, as there.)"""
    owner = next(klass for klass in model_type.__mro__ if "__dict__" in vars(klass))
    raise UnsupportedChart(
        chart,
        "a model class defining __dict__ with callbacks an instance may shadow",
        f"{owner.__name__}.__dict__ (of {model_type.__name__})",
        "the callbacks a model instance shadows are read from its own __dict__",
    )


def _callable_on_class(model_type: type, name: str) -> bool:
    """Whether ``name`` of ``model_type`` gives its instances a callable (a function, a
    static or class method, a callable object)."""
    value = _static_lookup(model_type, name)
    return isinstance(value, classmethod) or callable(value)


def _new_instance(
    cls: type[Instance], node: Any, model: Any, held: dict[str, Any] | None
) -> Instance:
    """An instance of ``cls`` in ``node`` without running a chart's custom ``__init__``
    (``held``: what it keeps of the model's names)."""
    instance = Instance.__new__(cls)
    # the runtime's own set-up (a ``_MachineInstance``'s too), not the chart's ``__init__``
    if isinstance(instance, _Constructed):
        super(_Constructed, instance).__init__(node, model)
    else:
        cls.__init__(instance, node, model)
    if held is not None:
        instance._held = held
    return instance


def _optioned_send(base: type[Instance], optioned: frozenset[str]) -> Callable[..., Outcome]:
    """``send`` for a chart declaring events with ``delay`` or ``internal``: those take the
    options path, which applies the declaration."""
    plain = base.send

    def send(self: Instance, event: str, /, *args: Any, **kwargs: Any) -> Outcome:
        if event in optioned:
            return self._send_with_options(event, args, kwargs)
        return plain(self, event, *args, **kwargs)

    send.__doc__ = plain.__doc__
    return send


def _event_methods(declared: type[StateChart[Any]]) -> dict[str, Callable[..., Outcome]]:
    """A method per declared event attribute (``self.hop()`` in a callback sends ``hop``), as
    python-statemachine binds them."""
    methods: dict[str, Callable[..., Outcome]] = {}
    for klass in reversed(declared.__mro__):
        for name, value in vars(klass).items():
            if (
                isinstance(value, DeclaredEvent)
                and name.isidentifier()
                and name not in RUNTIME_NAMES
                and not _provided(name)
            ):
                methods[name] = _event_method(name, str(value.id))
    return methods


def _provided(name: str) -> bool:
    """Whether the instance class provides ``name`` itself: a name of python-statemachine's
    machine API it lacks (``_Unavailable``) is no such name, an event declared under it being
    what the chart's class holds there, as in python-statemachine."""
    return hasattr(Instance, name) and not isinstance(
        inspect.getattr_static(Instance, name), _Unavailable
    )


def _event_method(name: str, event: str) -> Callable[..., Outcome]:
    def send_event(self: Instance, *args: Any, **kwargs: Any) -> Outcome:
        if "delay" in kwargs or "internal" in kwargs:
            # payload there: the event method takes send_id alone as an option
            kwargs[_EVENT_METHOD] = True
        return self.send(event, *args, **kwargs)

    send_event.__name__ = send_event.__qualname__ = name
    send_event.__doc__ = f"Send {event!r} (python-statemachine's event method)."
    return send_event


def _callback_names(chart: ChartDef) -> frozenset[str]:
    """Every name a callback of the chart could be looked up by."""
    names: set[str] = set()
    groups: list[tuple[CallbackDef, ...]] = []
    for state in chart.states:
        groups += [state.enter, state.exit]
    for transition in chart.transitions:
        groups += [
            transition.validators,
            transition.cond,
            transition.before,
            transition.on,
            transition.after,
        ]
    for group in groups:
        for callback in group:
            if callback.kind is RefKind.EXPRESSION:
                parse_guard(callback.ref, lambda name: _collect(names, name))
            else:
                names.add(callback.lookup_name or callback.ref)
    return frozenset(names)


def _collect(names: set[str], name: str) -> Any:
    from ._resolve import Const

    names.add(name)
    return Const(True)


#: CPython's type flags: a class defined in Python; instances the garbage collector visits.
_HEAP_TYPE, _COLLECTED = 1 << 9, 1 << 14
#: Types of values that are neither callable nor a dict (checked first: cheaper).
_DATA = frozenset({int, float, str, bool, bytes, complex, type(None)})


#: What ``Chart.create`` keeps per model type to set up its instances directly.
_Direct = tuple[type[Instance], Any, bool, tuple[str, ...], tuple[str, ...]]


def _direct_entry(binding: Any, model_type: type) -> _Direct | None:
    """What ``Chart.create`` needs to set up an instance of ``binding`` for a model of
    ``model_type`` itself, or ``None`` when creating one must call out: to check the
    model's names, to enter the initial state through callbacks or asynchronously, or to
    tell held callbacks from the model's values other than ``_variant``'s way.

    The third item says whether a model's values must be scanned as ``_variant`` scans
    them (an instance the collector never visits holds none). ``create`` scans them when its
    class is the last referent, as it is when every class of the model's but ``object`` is
    a Python class that Python compiled (the only classes admitted). The fourth names the
    callables of the model's class a value it holds would shadow, the fifth the chart's
    callbacks a value it holds would join (see ``_shadowed``).
    """
    if binding.checks_model or binding.is_async or binding.initial is not None:
        return None
    if binding.cls.__init__ is not Instance.__init__:
        return None  # its set-up is more than the three slots ``create`` sets
    if not binding.instance_callbacks:
        return binding.cls, binding.initial_node, False, (), ()
    if not binding.by_values:
        return None
    if not all(base.__flags__ & _HEAP_TYPE for base in model_type.__mro__[:-1]):
        return None
    collected = bool(model_type.__flags__ & _COLLECTED)
    shadows, chart_names = binding.method_shadows, binding.chart_names
    return binding.cls, binding.initial_node, collected, shadows, chart_names


class _NoModel:
    """The type of ``_NO_MODEL``: never a model's, so no model type ``create`` caches (an
    ``object()`` passed as the model, say) can match the default."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no model>"


#: ``create()`` called without a model (a chart's own ``__init__`` then gets no argument).
_NO_MODEL: Any = _NoModel()
_referents = gc.get_referents


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Chart(ChartDef):
    """A compiled chart: the immutable description (see ``ChartDef``) plus the means to run it.

    Create instances with ``create`` (enters the initial state, running its ``enter``
    callbacks) or ``resume`` (puts an instance in a given state without running callbacks, for
    restoring a checkpoint). All instances share this object.
    """

    declared: type[StateChart[Any]] | None = field(default=None, repr=False)
    _runtime: Runtime | None = field(default=None, repr=False)
    _by_type: dict[type, Binding] = field(default_factory=dict, repr=False)
    #: The instance class running a chart's own ``__init__`` (``None``: the chart has none).
    _custom_init: type[Instance] | None = field(default=None, repr=False)
    #: Per model type seen, what ``create`` needs to set up an instance directly (see
    #: ``_direct_entry``; ``None``: it cannot).
    _direct: dict[type, _Direct | None] = field(default_factory=dict, repr=False)

    _registry: ClassVar[dict[type, Chart]] = {}

    def create(
        self,
        model: Any = _NO_MODEL,
        /,
        *args: Any,
        clock: Clock | None = None,
        **kwargs: Any,
    ) -> Instance:
        """A new instance in the initial state: ``create(model=None, **kwargs)``, ``kwargs``
        going to the initial ``enter`` callbacks. For a chart with a custom ``__init__``, the
        arguments are that ``__init__``'s, as constructing the python-statemachine chart takes
        them: it runs, sets its fields on the instance, and enters the initial state through
        ``super().__init__(...)``.

        Callback names are resolved on the chart and on the model's class, once per class (see
        ``statecharts._resolve`` for how that differs from python-statemachine). The instance
        keeps its state itself: unlike python-statemachine it neither starts from nor writes
        ``model.state`` (``resume`` starts elsewhere). Raises
        python-statemachine's ``InvalidDefinition`` if a declared name resolves nowhere, and
        whatever an initial ``enter`` callback raises. Without a model, the instance gets a
        fresh python-statemachine ``Model()``, as a python-statemachine chart does.

        ``clock`` is what delayed events wait on: ``None`` (real time; a ``send`` returns once
        the delayed events its macrostep scheduled have run, as in python-statemachine's
        synchronous engine), a ``VirtualClock`` (deterministic: see ``run_until_idle``) or an
        ``AsyncioClock`` (real time on an event loop).
        """
        model_type = type(model)
        direct = self._direct.get(model_type)
        if direct is not None and clock is None and not args and not kwargs:
            # the path below for a binding ``_direct_entry`` admits, without its calls
            cls, node, scans, shadows, chart_names = direct
            values = _referents(model) if scans else None
            # ``_variant``'s scan of the values held, the class last (a class mypyc compiled
            # is not among them: the path below scans)
            if values and values.pop() is model_type:
                for value in values:
                    if type(value) not in _DATA and (callable(value) or isinstance(value, dict)):
                        break  # maybe a callback held: the path below looks
                else:
                    # and none under a name that would change what runs (``_shadowed``,
                    # inlined for its commonest case, a method of the class; ``getattr``
                    # never raises there: no such name is a descriptor of the class's)
                    scans = False
                    if values:
                        for name in shadows:
                            if not callable(getattr(model, name)):
                                scans = True
                                break
                        else:
                            scans = bool(chart_names) and _shadowed((), chart_names, model)
            if not scans:
                instance: Instance = _new_object(cls)
                instance._node = node
                instance.model = model
                instance._pending = None
                return instance
        return self._create(model, args, kwargs, clock)

    def _create(
        self, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any], clock: Clock | None
    ) -> Instance:
        """``create``'s general path: every model, every chart."""
        if self._custom_init is not None:
            given = args if model is _NO_MODEL else (model, *args)
            return _construct(self._custom_init, given, kwargs, clock)
        if args or kwargs:
            model = _check_create_arguments(model, args, kwargs)
        if model is _NO_MODEL or model is None:
            model = Model()  # type: ignore[no-untyped-call]
        binding: Any = self._by_type.get(type(model))
        if binding is None:
            binding = self._binding(model)
        if type(model) not in self._direct:  # (a chart's own ``__init__`` returned above)
            self._direct[type(model)] = _direct_entry(binding, type(model))
        if binding.instance_callbacks:
            binding = _variant(binding, model)
        held = binding.check_instance(model) if binding.checks_model else None
        instance: Instance = binding.cls(binding.initial_node, model)
        if held is not None:
            instance._held = held
        if clock is not None or binding.is_async or binding.initial is not None:
            _start(instance, binding, kwargs, clock)
        return instance

    def source(self, model_type: type | None = None) -> str:
        """The Python source generated for this chart and a model type (``None``: instances
        created without a model), one function per (state, event), named ``state__event``.

        ``statecharts source MODULE:CLASS`` prints it. Tracebacks through a running chart show
        these lines, in a file named ``<statecharts CHART>``.
        """
        runtime = self._runtime
        assert runtime is not None
        if model_type is None:
            model_type = Model
        if runtime.hierarchical:
            # Generated lazily at run time, in the order events arrive: a fresh binding
            # generates every reachable (configuration, event) in a fixed order instead.
            binding: Any = runtime._bind(model_type)
            binding.generate_all()
            return binding.source  # type: ignore[no-any-return]
        return runtime.binding_for_type(model_type).source

    def __repr__(self) -> str:
        return (
            f"<Chart {self.qualname}: {len(self.states)} states, {len(self.events)} events, "
            f"{len(self.transitions)} transitions>"
        )

    def _binding(self, model: Any) -> Binding:
        runtime = self._runtime
        assert runtime is not None
        return runtime.binding(model)

    def resume(self, state: str, model: Any = None, *, clock: Clock | None = None) -> Instance:
        """An instance already in ``state`` (an id), without running any callback; ``clock``
        as in ``create``.

        Raises python-statemachine's ``InvalidStateValue`` for an unknown state.
        """
        instance = self._resume(state, model)
        if clock is not None:
            queues = instance._pending = _Queues(_check_clock(clock))
            instance._settle(queues)
        return instance

    def _resume(self, state: str, model: Any) -> Instance:
        if model is None:
            model = Model()  # type: ignore[no-untyped-call]
        runtime = self._runtime
        assert runtime is not None
        binding = runtime.binding(model)
        binding, held = _bound(binding, model)
        if isinstance(binding, HBinding):
            return _new_instance(binding.cls, binding.resume_node(state), model, held)
        node = binding.nodes.get(state)
        if node is None:
            raise InvalidStateValue(  # type: ignore[no-untyped-call]
                state,
                f"{state!r} is not a state of {self.name} (states: "
                + ", ".join(s.id for s in self.states)
                + ")",
            )
        return _new_instance(binding.cls, node, model, held)

    def restore(self, snapshot: Any, model: Any = None, *, clock: Clock | None = None) -> Instance:
        """An instance where ``snapshot`` (from ``Instance.snapshot``, perhaps through JSON)
        says, with ``model`` (a fresh ``Model()`` by default) and ``clock`` (as ``create``
        takes it), without running any callback. The delayed events the snapshot lists are
        scheduled on ``clock``, each due as long after the restore as it was due after the
        snapshot, with its ``send_id``; a snapshot listing any needs a clock.

        Raises ``InstanceSnapshotError``, naming the field and what is wrong, for a snapshot
        that is damaged, of another format, version or chart, or names a configuration or
        history value the chart cannot be in; nothing is built then.
        """
        runtime = self._runtime
        assert runtime is not None
        checked = _snapshot.check(self, runtime.structure, snapshot, runtime.instance_fields)
        if clock is not None:
            clock = _check_clock(clock)
        elif checked.timers:
            raise InstanceSnapshotError(
                "timers",
                f"{len(checked.timers)} delayed events are pending: restore(snapshot, model, "
                "clock=...) takes the clock they wait on",
            )
        if model is None:
            model = Model()  # type: ignore[no-untyped-call]
        binding: Any = runtime.binding(model)
        binding, held = _bound(binding, model)
        declared = runtime.declared_states
        if isinstance(binding, HBinding):
            history = {
                name: [declared[state_id] for state_id in ids]
                for name, ids in checked.history.items()
            }
            node = binding.node(
                tuple(declared[i] for i in checked.configuration),
                history,
                binding.stopping_mode(checked.stopping),
            )
        else:
            node = binding.nodes[checked.configuration[0]]
        instance = _new_instance(binding.cls, node, model, held)
        for name, value in checked.fields.items():
            object.__setattr__(instance, name, value)
        if checked.internal or checked.external or checked.timers or clock is not None:
            queues = _Queues(clock)
            queues.internal.extend(checked.internal)
            queues.external.extend(checked.external)
            queues.sent.update(checked.sent)  # keyed by the ids of the items just queued
            for due, send_id, item, sent in _snapshot.restore_timers(
                checked.timers, queues.now_ns()
            ):
                heapq.heappush(queues.timed, (due, next(_sequence), send_id, item))
                if sent is not None:
                    queues.sent[id(item)] = sent
            instance._pending = queues
            instance._settle(queues)  # idle: queued events run before the next event
        return instance


def _start(instance: Instance, binding: Any, kwargs: dict[str, Any], clock: Any) -> None:
    """Enter a new instance's initial state (an async one's on its first event) with the
    keyword arguments ``create`` was given, on ``clock`` if given."""
    queues = None
    if clock is not None:
        queues = instance._pending = _Queues(_check_clock(clock))
    if binding.is_async:
        if queues is not None:
            raise TypeError("a chart with async callbacks takes no clock")
        _unstarted(instance, binding, kwargs)
    elif binding.initial is not None:
        binding.enter_initial(instance, kwargs)
    elif queues is not None:
        instance._settle(queues)


def _check_create_arguments(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The model ``create`` was given (``model=m`` as python-statemachine's constructor takes
    it, taken out of ``kwargs``), the rest left as the initial event's payload
    (``_initial_payload``). Refuses what ``create`` does not take: more positional arguments
    than a model, and python-statemachine's other constructor options."""
    if args:
        raise TypeError(f"create() takes one positional argument (a model), got {1 + len(args)}")
    if "model" in kwargs:
        if model is not _NO_MODEL:
            raise TypeError("create() got multiple values for argument 'model'")
        model = kwargs.pop("model")
    _initial_payload(kwargs)
    if not _CONSTRUCTOR_OPTIONS.isdisjoint(kwargs):
        option = sorted(_CONSTRUCTOR_OPTIONS.intersection(kwargs))[0]
        raise TypeError(
            f"create() does not take python-statemachine's {option!r} option "
            "(use resume() to start in a given state; observe_outcomes() to watch events)"
        )
    return model


def _initial_payload(kwargs: dict[str, Any]) -> None:
    """Make the keyword arguments of a new instance its initial event's payload, as
    python-statemachine builds that event: ``send_id`` taken out (an option no callback is
    handed), ``machine`` refused (the event's own)."""
    if "machine" in kwargs:
        raise TypeError("create() got multiple values for keyword argument 'machine'")
    kwargs.pop("send_id", None)


def _check_clock(clock: Any) -> Clock:
    if not (callable(getattr(clock, "now", None)) and callable(getattr(clock, "wake", None))):
        raise TypeError(
            f"clock must be a VirtualClock, an AsyncioClock or another object with now() and "
            f"wake(instance, due, order), got {clock!r}"
        )
    return clock  # type: ignore[no-any-return]


def _delay_ms(event: str, delay: Any) -> float:
    """A ``delay`` option checked: a finite number of milliseconds (a negative one is due in
    the past, so it runs at once, ahead of events due later, as in python-statemachine)."""
    if finite_number(delay):
        return delay  # as given: the event object callbacks receive reads it so, as there
    raise ValueError(
        f"delay of event {event!r} must be a finite number of milliseconds, got {delay!r}"
    )


#: python-statemachine constructor options ``create`` refuses rather than pass as payload.
_CONSTRUCTOR_OPTIONS = frozenset({"start_value", "listeners", "state_field"})

_compile_lock = threading.Lock()


def compile_chart(cls: type[StateChart[Any]]) -> Chart:
    """Compile a declared python-statemachine chart class into an immutable ``Chart``.

    Compiling the same class again returns the same object. Raises ``UnsupportedChart`` for
    constructs the runtime refuses and ``InvalidDefinition`` for definition errors.
    """
    found = Chart._registry.get(cls)
    if found is not None:
        return found
    with _compile_lock:
        found = Chart._registry.get(cls)
        if found is not None:
            return found
        definition = read_chart(cls)
        chart = Chart(
            name=definition.name,
            qualname=definition.qualname,
            states=definition.states,
            events=definition.events,
            transitions=definition.transitions,
            flags=definition.flags,
            start_configuration=definition.start_configuration,
            attributes=definition.attributes,
            declared=cls,
        )
        runtime = Runtime(chart, cls)
        for name in runtime.callback_names:
            runtime.chart_only.chart_leaf(name)  # refusals that need no model surface now
        object.__setattr__(chart, "_runtime", runtime)
        object.__setattr__(chart, "_by_type", runtime.by_type)
        if runtime.custom_init:
            object.__setattr__(chart, "_custom_init", runtime.instance_class)
        Chart._registry[cls] = chart
        return chart


_FIRE_HELPERS.update(
    _prep=_prep,
    _Outcome=Outcome,
    _event_object=_event_object,
    _event_now=_event_now,
    _not_allowed=_not_allowed,
    _reject=_reject,
    _caught=_caught,
    _failed=_failed,
    _guard_failed=_guard_failed,
    _selection_failed=_selection_failed,
)
