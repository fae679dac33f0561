"""The compiled chart: an immutable description of a declared python-statemachine chart.

Everything derived from a chart (the runtime, the diagrams, the generated tests) reads this
description and nothing else. It is plain data: states, events and transitions in declaration
order, each callback recorded as the declaration named it (a method name, a boolean expression,
a callable), so renderers and tests can be written against hand-built values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal


class Group(StrEnum):
    """Where a callback runs, in the order the reference engine runs the groups."""

    VALIDATORS = "validators"
    COND = "cond"
    BEFORE = "before"
    EXIT = "exit"
    ON = "on"
    ENTER = "enter"
    AFTER = "after"


class RefKind(StrEnum):
    """How a callback was declared."""

    NAME = "name"  # an attribute name, looked up on the chart class and on the model
    EXPRESSION = "expression"  # a boolean expression over names, e.g. "a and not b"
    CALLABLE = "callable"  # a function or other callable given directly
    PROPERTY = "property"  # a property object given directly


@dataclass(frozen=True, slots=True)
class CallbackDef:
    """One declared callback of a state or transition.

    Groups keep callbacks in declaration order; they run in ``run_order`` (by priority).

    ``expected`` is ``True`` for ``cond`` guards, ``False`` for ``unless`` guards and ``None``
    for actions. ``convention`` marks callbacks that exist only when a chart or model attribute
    of that name does (``on_enter_<state>``, ``before_<event>`` ...); ``only_event`` restricts a
    ``<group>_<event>`` convention to the event it names.
    """

    group: Group
    kind: RefKind
    ref: str
    priority: int
    expected: bool | None = None
    convention: bool = False
    only_event: str | None = None
    func: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    lookup_name: str = ""

    @property
    def label(self) -> str:
        """The callback as a diagram shows it: ``name``, or ``not name`` for an ``unless``
        (``not (a or b)`` for an expression)."""
        if self.expected is not False:
            return self.ref
        return f"not ({self.ref})" if self.kind is RefKind.EXPRESSION else f"not {self.ref}"


def run_order(callbacks: tuple[CallbackDef, ...]) -> tuple[CallbackDef, ...]:
    """Callbacks of one group in the order they run: by priority, then declaration order."""
    return tuple(sorted(callbacks, key=lambda callback: callback.priority))


StateKind = Literal["atomic", "compound", "parallel", "shallow_history", "deep_history"]


@dataclass(frozen=True, slots=True)
class StateDef:
    """A state: its attribute name (``id``), display name, stored value and role.

    ``parent`` is the id of the compound or parallel state holding it (``None`` at the top);
    ``kind`` says whether it is atomic, compound, parallel or a history pseudo-state. States
    are listed parents first, in declaration order.
    """

    id: str
    name: str
    value: Any
    initial: bool
    final: bool
    enter: tuple[CallbackDef, ...] = ()
    exit: tuple[CallbackDef, ...] = ()
    order: int = 0
    parent: str | None = None
    kind: StateKind = "atomic"

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True, slots=True)
class TransitionDef:
    """A transition in declaration order (per source state, which is the order guards run in).

    ``id`` is stable across runs and machines (``source:events:target``, with ``#n`` added
    when several transitions share that triple), so coverage files can key on it.
    ``target`` is ``None`` for a targetless transition, which runs actions and stays put;
    a transition with several targets (into parallel regions) lists the others in
    ``extra_targets``.
    ``events`` is empty for an eventless transition; ``initial`` marks a compound or parallel
    state's default entry into its children.
    """

    id: str
    source: str
    target: str | None
    events: tuple[str, ...]
    internal: bool
    validators: tuple[CallbackDef, ...] = ()
    cond: tuple[CallbackDef, ...] = ()
    before: tuple[CallbackDef, ...] = ()
    on: tuple[CallbackDef, ...] = ()
    after: tuple[CallbackDef, ...] = ()
    order: int = 0
    initial: bool = False
    #: Every target, for a transition with several (into parallel regions); else ``()``.
    extra_targets: tuple[str, ...] = ()

    @property
    def targets(self) -> tuple[str, ...]:
        """The transition's targets: ``target`` and, for a transition with several (into
        parallel regions), the others."""
        if self.target is None:
            return ()
        return (self.target, *self.extra_targets)

    @property
    def is_eventless(self) -> bool:
        """Whether the transition is taken without an event (``initial``: a compound state's
        default entry)."""
        return not self.events

    @property
    def guards(self) -> tuple[CallbackDef, ...]:
        """The callbacks that decide whether the transition is enabled, in evaluation order."""
        return run_order(self.validators) + run_order(self.cond)

    @property
    def actions(self) -> tuple[CallbackDef, ...]:
        """The transition's own actions, in the order they run."""
        return run_order(self.before) + run_order(self.on) + run_order(self.after)


@dataclass(frozen=True, slots=True)
class EventDef:
    """A declared event: the id sent on the wire, its display name and the delay (in
    milliseconds, ``0``: none) its declaration gives it (``Event(delay=...)``).

    ``sent_after`` lists the other delays (milliseconds, ascending) the chart's own executable
    content sends it with (an SCXML ``<send event="timeout" delay="5s"/>``: a transition on
    ``timeout`` is then taken 5 s after the send), so diagrams can say when it fires.
    """

    id: str
    name: str
    delay: float = 0
    sent_after: tuple[float, ...] = ()

    @property
    def delays(self) -> tuple[float, ...]:
        """Every delay the event is known to fire after (milliseconds, ascending; ``()``:
        none, it fires when sent)."""
        declared = (self.delay,) if self.delay else ()
        return tuple(sorted(set(declared + self.sent_after)))


@dataclass(frozen=True, slots=True)
class Flags:
    """The python-statemachine class options that change how a chart runs (defaults: a
    ``StateChart``'s)."""

    allow_event_without_transition: bool = True
    enable_self_transition_entries: bool = True
    catch_errors_as_events: bool = True
    atomic_configuration_update: bool = False


@dataclass(frozen=True, slots=True)
class ChartDef:
    """The whole compiled description of one declared chart class.

    ``attributes`` names what the chart class defines itself (methods, properties, constants):
    a naming-convention callback (``CallbackDef.convention``) exists on the chart only if its
    name is there, so a renderer can tell which to draw without the class.
    """

    name: str
    qualname: str
    states: tuple[StateDef, ...]
    events: tuple[EventDef, ...]
    transitions: tuple[TransitionDef, ...]
    flags: Flags = Flags()
    #: The ids of the states a chart starts in when it names them itself
    #: (``start_configuration_values``, as charts loaded from SCXML do); empty: ``initial``.
    start_configuration: tuple[str, ...] = ()
    attributes: frozenset[str] = frozenset()
    states_by_id: Mapping[str, StateDef] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "states_by_id", {state.id: state for state in self.states})

    @property
    def initial(self) -> StateDef:
        """The initial (top-level) state."""
        return next(state for state in self.states if state.initial and state.parent is None)

    @property
    def is_hierarchical(self) -> bool:
        """Whether the chart has compound, parallel or history states, or eventless
        transitions (it then runs python-statemachine's statechart processing loop)."""
        return self.is_structured or any(t.is_eventless for t in self.transitions)

    @property
    def is_structured(self) -> bool:
        """Whether the chart has compound, parallel or history states or transitions with
        several targets (it then runs on the statechart interpreter; a flat chart, eventless
        transitions or not, runs on flat generated code)."""
        if self.start_configuration:
            return True
        return any(
            state.parent is not None or state.kind != "atomic" for state in self.states
        ) or any(transition.extra_targets for transition in self.transitions)

    def children(self, state_id: str | None) -> tuple[StateDef, ...]:
        """The states directly inside ``state_id`` (``None``: the top-level states)."""
        return tuple(state for state in self.states if state.parent == state_id)

    @property
    def finals(self) -> tuple[StateDef, ...]:
        """The final states, in declaration order."""
        return tuple(state for state in self.states if state.final)

    def state(self, state_id: str) -> StateDef:
        """The state with this id; raises ``KeyError`` naming the known ids otherwise."""
        try:
            return self.states_by_id[state_id]
        except KeyError:
            known = ", ".join(state.id for state in self.states)
            raise KeyError(f"{self.name} has no state {state_id!r} (states: {known})") from None

    def start_transitions(self) -> tuple[TransitionDef, ...]:
        """The transitions an instance takes entering its start configuration: the initial
        transition of each compound or parallel state entered into a child that is not itself
        a start state (or on the way to one), parents first. Creating an instance is no
        event, so no ``Outcome`` lists them; coverage and the path search count them here."""
        start = self.start_configuration or (self.initial.id,)
        explicit: set[str] = set()
        for state_id in start:
            current: str | None = state_id
            while current is not None:
                explicit.add(current)
                current = self.state(current).parent
        taken: list[TransitionDef] = []
        entering = [state.id for state in self.children(None) if state.id in explicit]
        while entering:
            state = self.state(entering.pop(0))
            initial = [t for t in self.transitions if t.initial and t.source == state.id]
            if state.kind == "parallel":
                for region in self.children(state.id):
                    if region.kind in ("shallow_history", "deep_history"):
                        continue
                    if region.id not in explicit:
                        taken += [t for t in initial if region.id in t.targets]
                    entering.append(region.id)
            elif state.kind == "compound":
                inside = [child.id for child in self.children(state.id) if child.id in explicit]
                if not inside and initial:
                    taken.append(initial[0])
                    inside = list(initial[0].targets)
                entering += inside
        return tuple(taken)

    def transitions_from(self, state_id: str) -> tuple[TransitionDef, ...]:
        """The transitions leaving a state, in the order their guards are tried."""
        return tuple(t for t in self.transitions if t.source == state_id)
