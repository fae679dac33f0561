"""Run instances of a compiled chart.

An instance is a slotted object holding its current state node, its model and a run-to-completion
queue marker. A state node maps each event to a generated function (see ``_codegen``), so sending
an event is one dict lookup and one call. All instances of a chart share its nodes.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from statemachine import StateChart
from statemachine.event import Event as DeclaredEvent
from statemachine.exceptions import InvalidStateValue, TransitionNotAllowed
from statemachine.orderedset import OrderedSet
from statemachine.state import State as DeclaredState
from statemachine.transition import Transition as DeclaredTransition

from ._codegen import FunctionWriter, Module, Step, write_function
from ._compiler import chart_attributes, descriptor_matches, read_chart
from ._ir import CallbackDef, ChartDef, Group, RefKind, StateDef, TransitionDef
from ._resolve import Resolved, Resolver, not_found, parse_guard

Reason = Literal["unknown_event", "no_transition", "guards_rejected", "terminated", "queued"]


class Outcome:
    """What sending one event did.

    ``applied`` is true when a transition ran; then ``transition`` is the one taken and
    ``target`` the state the instance is in now. Otherwise ``reason`` says why the event was
    ignored: ``"unknown_event"`` (the chart declares no such event), ``"no_transition"`` (none
    from this state), ``"guards_rejected"`` (transitions exist but no guard allowed one),
    ``"terminated"`` (the instance is in a final state) or ``"queued"`` (sent from inside a
    callback: it runs once the current event is done, as python-statemachine runs it).
    An outcome is true exactly when it was applied.
    """

    __slots__ = ("applied", "event", "reason", "source", "target", "transition")

    applied: bool
    event: str
    source: StateDef
    target: StateDef | None
    transition: TransitionDef | None
    reason: Reason | None

    def __init__(
        self,
        applied: bool,
        event: str,
        source: StateDef,
        target: StateDef | None,
        transition: TransitionDef | None,
        reason: Reason | None,
    ) -> None:
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
        return (self.applied, self.event, self.source, self.target, self.transition, self.reason)

    def __repr__(self) -> str:
        if self.applied:
            assert self.transition is not None
            return f"Outcome(applied, {self.event!r}: {self.transition.id})"
        return f"Outcome(ignored, {self.event!r} in {self.source.id!r}: {self.reason})"


_BUSY: Any = ()
_IGNORED_CACHE_SIZE = 256
_new = object.__new__


class Instance:
    """One running instance of a compiled chart.

    Chart methods run with the instance as ``self``; per-instance data belongs on ``model``.
    Not thread-safe: send events to one instance from one thread at a time.
    """

    __slots__ = ("_node", "_pending", "model")

    _node: StateNode
    _pending: deque[tuple[str, tuple[Any, ...], dict[str, Any]]] | None
    model: Any

    def __init__(self, node: StateNode, model: Any) -> None:
        self._node = node
        self.model = model
        self._pending = None

    @property
    def state(self) -> StateDef:
        """The current state."""
        return self._node.state

    @property
    def chart(self) -> Chart:
        """The compiled chart this instance runs."""
        return self._node.binding.chart

    @property
    def is_terminated(self) -> bool:
        """Whether the instance reached a final state (every later event is ignored)."""
        return self._node.state.final

    def send(self, event: str, /, *args: Any, **kwargs: Any) -> Outcome:
        """Send ``event`` with a payload; return the outcome. Never raises for an ignored event
        (unless the chart sets ``allow_event_without_transition = False``).

        Exceptions from guards and actions reach the caller unchanged. If a guard, ``before``,
        ``exit``, ``on`` or ``enter`` callback raised, the instance is still in the source state;
        if an ``after`` callback raised, the transition had been taken. Events queued by
        callbacks during a failed event are dropped. This is python-statemachine's behaviour.
        """
        if self._pending is not None:
            return self._enqueue(event, args, kwargs)
        fire = self._node.table.get(event)
        if fire is None:
            found = self._node.binding.unmatched(self._node, event)
            if isinstance(found, Outcome):
                return found
            fire = found
        self._pending = _BUSY
        try:
            outcome: Outcome = fire(self, args, kwargs)
            if self._pending is not _BUSY:
                self._drain()
        finally:
            self._pending = None
        return outcome

    def _enqueue(self, event: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
        if self._pending is _BUSY:
            self._pending = deque()
        assert self._pending is not None
        self._pending.append((event, args, kwargs))
        return Outcome(False, event, self._node.state, None, None, "queued")

    def _drain(self) -> None:
        """Run the events callbacks queued, in order (more may be queued meanwhile)."""
        queue = self._pending
        assert queue is not None
        assert queue is not _BUSY
        while queue:
            event, args, kwargs = queue.popleft()
            fire = self._node.table.get(event)
            if fire is None:
                found = self._node.binding.unmatched(self._node, event)
                if isinstance(found, Outcome):
                    self._ran_queued(found)
                    continue
                fire = found
            self._ran_queued(fire(self, args, kwargs))

    def _ran_queued(self, outcome: Outcome) -> None:
        """Called with the outcome of each queued event; a hook for ``statecharts.testing``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} state={self._node.state.id!r} model={self.model!r}>"


Fire = Callable[[Instance, tuple[Any, ...], dict[str, Any]], Outcome]


class StateNode:
    """A state as the runtime holds it: the event table and what it was compiled from."""

    __slots__ = ("binding", "declared", "ignored", "state", "table")

    def __init__(self, binding: Binding, state: StateDef, declared: DeclaredState) -> None:
        self.binding = binding
        self.state = state
        self.declared = declared
        self.table: dict[str, Fire] = {}
        self.ignored: dict[str, Outcome] = {}


class Binding:
    """A chart's generated code for one kind of model (the model type, plus which callback
    names its instances carry in their own ``__dict__``)."""

    __slots__ = (
        "_dynamic",
        "_groups",
        "_lock",
        "_module",
        "chart",
        "cls",
        "initial",
        "initial_node",
        "instance_names",
        "nodes",
        "resolver",
        "runtime",
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
        self._dynamic: dict[tuple[str, tuple[int, ...]], Callable[..., Outcome]] = {}
        self.initial_node = self.nodes[chart.initial.id]
        #: Whether instances must be checked for callback names in their own ``__dict__``.
        self._lock = threading.Lock()
        self._module = Module(chart.name)
        self._generate()
        #: Declared names the model's class lacks: each instance must provide them.
        self.instance_names = tuple(resolver.instance_names.items())

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

    def _step(self, transition: TransitionDef, event: str | None) -> Step:
        """What the generator needs of one transition fired by ``event`` (None: by ``ev``)."""
        chart, module, runtime = self.chart, self._module, self.runtime
        owner = f"transition:{transition.id}"
        source = chart.state(transition.source)
        target = chart.state(transition.target) if transition.target is not None else None
        exits = target is not None and not transition.internal
        enters = target is not None and (
            not transition.internal or chart.flags.enable_self_transition_entries
        )
        after = target or source
        values = {
            "transition": module.const(runtime.declared_transitions[transition.id], "T"),
            "source": module.const(runtime.declared_states[source.id], "S"),
            "target": module.const(runtime.declared_states[target.id] if target else None, "S"),
            "state_after": module.const(runtime.declared_states[after.id], "S"),
        }
        if event is None:
            parts = ", ".join(module.const(v, "D") for v in (source, after, transition))
            outcome = f"_Outcome(True, ev, {parts}, None)"
        else:
            outcome = module.const(Outcome(True, event, source, after, transition, None), "O")
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
        )

    def _write_fire(
        self, name: str, state: StateDef, candidates: list[TransitionDef], event: str | None
    ) -> None:
        """Generate the function ``event`` runs from ``state``; with ``event`` None, a
        function for any event name, passed as ``ev``."""
        module = self._module
        module.namespace.update(
            _Outcome=Outcome, _event_object=_event_object, _not_allowed=_not_allowed
        )
        node_from = module.const(self.nodes[state.id], "N")
        if event is None:
            event_expr, parameters = "_event_object(ev)", "inst, args, kw, ev"
        else:
            event_expr = module.const(self.runtime.event_object(event), "E")
            parameters = "inst, args, kw"
        steps = [self._step(transition, event) for transition in candidates]

        def body(writer: FunctionWriter) -> None:
            for transition, step in zip(candidates, steps, strict=True):
                node_to = module.const(self.nodes[transition.target or state.id], "N")
                if writer.step(0, step, node_from, node_to):
                    return
            if self.strict:
                writer.emit(0, f"raise _not_allowed({event_expr}, {node_from})")
            elif event is None:
                state_def = module.const(state, "D")
                writer.emit(
                    0, f"return _Outcome(False, ev, {state_def}, None, None, 'guards_rejected')"
                )
            else:
                ignored = Outcome(False, event, state, None, None, "guards_rejected")
                writer.emit(0, f"return {module.const(ignored, 'O')}")

        write_function(module, name, parameters, body, event_expr, event, positional_variant=True)

    def _generate(self) -> None:
        chart = self.chart
        names: dict[tuple[str, str], str] = {}
        for state in chart.states:
            transitions = chart.transitions_from(state.id)
            for event in self.runtime.event_ids:
                candidates = [
                    t for t in transitions if any(descriptor_matches(d, event) for d in t.events)
                ]
                if candidates:
                    name = f"fire_{len(names)}"
                    names[state.id, event] = name
                    self._write_fire(name, state, candidates, event)
        self._write_initial()
        namespace = self._module.build()
        for (state_id, event), name in names.items():
            self.nodes[state_id].table[event] = namespace[name]
        self.initial = namespace.get("initial")

    def _write_initial(self) -> None:
        chart, runtime, module = self.chart, self.runtime, self._module
        initial = chart.initial
        enter = self._state_group(initial, Group.ENTER)
        if not enter:
            return
        state = module.const(runtime.declared_states[initial.id], "S")
        event = module.const(runtime.initial_event, "E")

        def body(writer: FunctionWriter) -> None:
            empty = module.const(runtime.initial_source, "S")
            transition = module.const(runtime.initial_transition, "T")
            phase = writer.phase(transition, state, empty, state)
            for line in writer.call_lines(enter, phase):
                writer.emit(0, line)

        write_function(module, "initial", "inst, args, kw", body, event, "__initial__", False)

    # -- events the table does not hold ------------------------------------------------------

    def unmatched(self, node: StateNode, event: str) -> Fire | Outcome:
        """The function for an event the node's table lacks, or the outcome of ignoring it.

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
                    dynamic = self._dynamic_fire(node, candidates)
                    return lambda inst, args, kw: dynamic(inst, args, kw, event)
            reason: Reason
            if node.state.final:
                reason = "terminated"
            elif event in runtime.event_ids:
                reason = "no_transition"
            else:
                reason = "unknown_event"
            outcome = Outcome(False, event, node.state, None, None, reason)
            if len(node.ignored) < _IGNORED_CACHE_SIZE:
                node.ignored[event] = outcome
        if self.strict:
            raise _not_allowed(self.runtime.event_object(event), node)
        return outcome

    def _dynamic_fire(
        self, node: StateNode, candidates: tuple[int, ...]
    ) -> Callable[..., Outcome]:
        key = (node.state.id, candidates)
        found = self._dynamic.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._dynamic.get(key)
            if found is None:
                self._module = Module(self.chart.name)
                transitions = [self.chart.transitions[i] for i in candidates]
                self._write_fire("fire_dynamic", node.state, transitions, None)
                found = self._module.build()["fire_dynamic"]
                self._dynamic[key] = found
        return found

    # -- instances ---------------------------------------------------------------------------

    def check_instance(self, model: Any) -> None:
        """Raise python-statemachine's error if the model lacks a name the class lacks too."""
        for name, where in self.instance_names:
            if not hasattr(model, name):
                raise not_found(where, [name])

    def enter_initial(self, instance: Instance, kwargs: dict[str, Any]) -> None:
        """Run the initial state's ``enter`` callbacks, and any events they send."""
        assert self.initial is not None
        instance._pending = _BUSY
        try:
            self.initial(instance, (), kwargs)
            if instance._pending is not _BUSY:
                instance._drain()
        finally:
            instance._pending = None


def _event_object(name: str) -> DeclaredEvent:
    """The event object callbacks receive for an undeclared event name (as the reference)."""
    return DeclaredEvent(id=name, name=name)


def _not_allowed(event: DeclaredEvent, node: StateNode) -> TransitionNotAllowed:
    return TransitionNotAllowed(event, OrderedSet([node.declared]))


class Runtime:
    """Everything about running a chart that does not depend on the model."""

    def __init__(self, chart: Chart, declared: type[StateChart[Any]]) -> None:
        self.chart = chart
        self.declared = declared
        self.attributes = chart_attributes(declared)
        self.declared_states: dict[str, DeclaredState] = {s.id: s for s in declared.states}
        declared_transitions: list[DeclaredTransition] = [
            t for state in declared.states for t in state.transitions
        ]
        self.declared_transitions = {
            definition.id: transition
            for definition, transition in zip(chart.transitions, declared_transitions, strict=True)
        }
        #: How python-statemachine names each state and transition in its error messages.
        self.where = {
            f"state:{s.id}": str(d) for s, d in zip(chart.states, declared.states, strict=True)
        }
        self.where.update(
            (f"transition:{t.id}", str(d))
            for t, d in zip(chart.transitions, declared_transitions, strict=True)
        )
        self.events = {str(event.id): event for event in declared._events}
        self.event_ids = frozenset(self.events) | {e for t in chart.transitions for e in t.events}
        descriptors = {e for t in chart.transitions for e in t.events}
        self.has_wildcard = "*" in descriptors
        self.prefix_matching = bool(descriptors)
        self.initial_event = DeclaredEvent(id="__initial__")
        self.initial_source = DeclaredState()
        self.initial_transition = DeclaredTransition(
            self.initial_source, self.declared_states[chart.initial.id], event="__initial__"
        )
        self.instance_class: type[Instance] = type(
            f"{declared.__name__}Instance",
            (Instance,),
            {
                **{k: v for k, v in self.attributes.items()},
                "__slots__": (),
                "__module__": declared.__module__,
                "__doc__": declared.__doc__,
            },
        )
        self.callback_names = _callback_names(chart)
        self.chart_only = Resolver(chart.name, declared, self.attributes, self.event_ids, None)
        self.by_type: dict[type, Binding] = {}
        self._lock = threading.RLock()

    def event_object(self, name: str) -> DeclaredEvent:
        """The declared event called ``name``, or an event object for an undeclared name."""
        return self.events.get(name) or _event_object(name)

    def binding(self, model: Any) -> Binding:
        """The generated code for this model's type (compiled on first use of the type)."""
        model_type = type(model)
        binding = self.by_type.get(model_type)
        if binding is None:
            with self._lock:
                binding = self.by_type.get(model_type)
                if binding is None:
                    binding = self._bind(model_type)
                    self.by_type[model_type] = binding
        return binding

    def _bind(self, model_type: type) -> Binding:
        resolver = Resolver(
            self.chart.name,
            self.declared,
            self.attributes,
            self.event_ids,
            None if model_type is type(None) else model_type,
        )
        return Binding(self, resolver)


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
    names.discard("state")
    return frozenset(names)


def _collect(names: set[str], name: str) -> Any:
    from ._resolve import Const

    names.add(name)
    return Const(True)


@dataclass(frozen=True, slots=True, eq=False)
class Chart(ChartDef):
    """A compiled chart: the immutable description (see ``ChartDef``) plus the means to run it.

    Create instances with ``create`` (enters the initial state, running its ``enter``
    callbacks) or ``resume`` (puts an instance in a given state without running callbacks, for
    restoring a checkpoint). All instances share this object.
    """

    declared: type[StateChart[Any]] | None = field(default=None, repr=False)
    _runtime: Runtime | None = field(default=None, repr=False)
    _by_type: dict[type, Binding] = field(default_factory=dict, repr=False)

    _registry: ClassVar[dict[type, Chart]] = {}

    def create(self, model: Any = None, /, **kwargs: Any) -> Instance:
        """A new instance in the initial state; ``kwargs`` go to the initial ``enter`` callbacks.

        Callback names are resolved on the chart and on the model's class, once per class (see
        ``statecharts._resolve`` for how that differs from python-statemachine). The instance
        keeps its state itself: unlike python-statemachine it neither starts from nor writes
        ``model.state`` (``resume`` starts elsewhere). Raises
        python-statemachine's ``InvalidDefinition`` if a declared name resolves nowhere, and
        whatever an initial ``enter`` callback raises.
        """
        binding = self._by_type.get(type(model))
        if binding is None:
            binding = self._binding(model)
        if binding.instance_names:
            binding.check_instance(model)
        instance = _new(binding.cls)
        instance._node = binding.initial_node
        instance.model = model
        instance._pending = None
        if binding.initial is not None:
            binding.enter_initial(instance, kwargs)
        return instance

    def _binding(self, model: Any) -> Binding:
        runtime = self._runtime
        assert runtime is not None
        return runtime.binding(model)

    def resume(self, state: str, model: Any = None) -> Instance:
        """An instance already in ``state`` (an id), without running any callback.

        Raises python-statemachine's ``InvalidStateValue`` for an unknown state.
        """
        runtime = self._runtime
        assert runtime is not None
        binding = runtime.binding(model)
        if binding.instance_names:
            binding.check_instance(model)
        node = binding.nodes.get(state)
        if node is None:
            raise InvalidStateValue(  # type: ignore[no-untyped-call]
                state,
                f"{state!r} is not a state of {self.name} (states: "
                + ", ".join(s.id for s in self.states)
                + ")",
            )
        return binding.cls(node, model)


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
            attributes=definition.attributes,
            declared=cls,
        )
        runtime = Runtime(chart, cls)
        for name in runtime.callback_names:
            runtime.chart_only.chart_leaf(name)  # refusals that need no model surface now
        object.__setattr__(chart, "_runtime", runtime)
        object.__setattr__(chart, "_by_type", runtime.by_type)
        Chart._registry[cls] = chart
        return chart
