"""The statechart runtime: compound, parallel and history states, eventless transitions and
``done.state`` events, with python-statemachine 3.2's ``StateChart`` semantics (the SCXML
algorithm).

A node here is a whole *configuration* (the active states, ancestors included) together with
the history values recorded so far; nodes are made on first reach and shared by every instance
of the chart. For each (node, event) one function is generated on first use: it tries, for each
active atomic state in document order, the transitions of that state and then of its ancestors,
in declaration order, evaluating their guards inline, and hands the selection to a second
generated function, one per (node, event, selection): the microstep. Which states that exits
and enters, in which order, where history leads and which ``done.state`` events follow is
worked out once, when the microstep is generated, by python-statemachine's own algorithm
functions run over the declared states (``BaseEngine``'s exit-set, entry-set, conflict and
history computations); the generated code then only calls the callbacks and moves the instance
to the precomputed next node. So a statechart event costs about what a flat one does, plus one
call per microstep.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from statemachine.engines.base import BaseEngine
from statemachine.orderedset import OrderedSet
from statemachine.state import State as DeclaredState
from statemachine.transition import Transition as DeclaredTransition

from ._codegen import FunctionWriter, Module, Phase, write_function
from ._compiler import descriptor_matches
from ._ir import Group, StateDef, TransitionDef
from ._resolve import Resolved

_IGNORED_CACHE_SIZE = 256
_UNSET: Any = object()


@dataclass(frozen=True, slots=True)
class Support:
    """What the statechart binding uses of the runtime module (passed in, so this module does
    not import it): the outcome type, the busy marker, the generated code's helpers and the
    ``TransitionNotAllowed`` makers."""

    outcome: Any
    busy: Any
    helpers: dict[str, Any]
    not_allowed: Callable[..., Any]
    reject: Callable[..., Any]


#: A node's mode: running; a top-level parallel state completed in this macrostep, stopping
#: at its end if it still is (python-statemachine's ``_root_parallel_final_pending``); stopped
#: by a completed top-level parallel state.
RUNNING, PENDING, STOPPED = 0, 1, 2


@dataclass(frozen=True, slots=True)
class _MicroPlan:
    """A microstep as python-statemachine's algorithm plans it, before any callback runs."""

    transitions: list[DeclaredTransition]
    #: The transitions entering states takes besides ``transitions`` (initial transitions into
    #: children entered by default, a history state's default transition), in entry order.
    entry_transitions: list[DeclaredTransition]
    ordered_exit: list[Any]
    ordered_enter: list[Any]
    default_ids: set[str]
    default_history: dict[str, Any]
    done_events: dict[int, list[str]]
    previous: tuple[DeclaredState, ...]
    new_configuration: tuple[DeclaredState, ...]
    new_node: HNode
    restore_node: HNode
    new_history: dict[str, list[DeclaredState]]
    #: The position in ``ordered_enter`` of the final state completing a top-level parallel
    #: state (python-statemachine marks the machine to stop once its ``enter`` ran).
    completes: int | None = None


@dataclass(frozen=True, slots=True)
class _MicroNames:
    """The generated module's names of what a microstep refers to."""

    configurations: tuple[str, str]
    new_node: str
    restore: str
    outcome: str
    failed: str
    handling_error: bool
    initial: bool = False


class _Planner:
    """What ``BaseEngine``'s planning functions read of a machine: its configuration, history
    values and flags."""

    __slots__ = (
        "atomic_configuration_update",
        "configuration",
        "enable_self_transition_entries",
        "history_values",
    )

    def __init__(
        self,
        configuration: OrderedSet[DeclaredState],
        history: dict[str, list[DeclaredState]],
        enable_self_transition_entries: bool,
    ) -> None:
        self.configuration = configuration
        self.history_values = history
        self.enable_self_transition_entries = enable_self_transition_entries
        self.atomic_configuration_update = False


def _planning_engine(planner: _Planner) -> Any:
    engine: Any = BaseEngine.__new__(BaseEngine)
    engine.sm = planner
    engine._debug = lambda *args, **kwargs: None
    engine._log_id = ""
    return engine


class HNode:
    """A configuration and the history values recorded so far, with its event table."""

    __slots__ = (
        "active_ids",
        "binding",
        "candidates",
        "configuration",
        "declared_configuration",
        "declared_keys",
        "dynamic",
        "eventless",
        "history",
        "ignored",
        "key",
        "label",
        "pending",
        "plans",
        "state",
        "table",
        "terminated",
    )

    def __init__(
        self,
        binding: Any,
        configuration: tuple[DeclaredState, ...],
        history: tuple[tuple[str, tuple[DeclaredState, ...]], ...],
        mode: int = RUNNING,
    ) -> None:
        chart = binding.chart
        self.binding = binding
        self.declared_configuration = configuration
        #: ``Instance.configuration``'s set, hashed once (``State.__hash__`` is Python)
        self.declared_keys = dict.fromkeys(configuration)
        self.history = history
        self.key = _node_key(configuration, history, mode)
        self.configuration = tuple(chart.state(state.id) for state in configuration)
        self.active_ids = frozenset(state.id for state in configuration)
        atomic = [state for state in self.configuration if state.kind == "atomic"]
        self.state: StateDef = atomic[0] if atomic else chart.initial
        self.label = "_".join(state.id for state in atomic) or "start"
        # a top-level final state stops the machine once entered; a top-level parallel state
        # whose regions are all final stops it at the end of the macrostep that completed it
        # (``pending`` until then), as python-statemachine's engine stops
        self.terminated = mode == STOPPED or any(
            state.final and state.parent is None for state in configuration
        )
        self.pending = mode == PENDING
        self.table: dict[str, Callable[..., Any]] = {}
        self.ignored: dict[str, Any] = {}
        self.plans: dict[tuple[str | None, tuple[int, ...]], Callable[..., Any]] = {}
        self.candidates: dict[str | None, list[list[DeclaredTransition]]] = {}
        self.eventless: Any = _UNSET
        self.dynamic: dict[Any, Callable[..., Any]] = {}


def _in_final(state: DeclaredState, active: frozenset[str]) -> bool:
    if state.parallel:
        return all(_in_final(child, active) for child in state.states)
    return any(child.final and child.id in active for child in state.states)


def _parallel_done(configuration: tuple[DeclaredState, ...]) -> bool:
    """Whether a top-level parallel state of ``configuration`` has every region final."""
    active = frozenset(state.id for state in configuration)
    return any(
        state.parallel and state.parent is None and _in_final(state, active)
        for state in configuration
    )


def _node_key(
    configuration: tuple[DeclaredState, ...],
    history: tuple[tuple[str, tuple[DeclaredState, ...]], ...],
    mode: int = RUNNING,
) -> tuple[Any, ...]:
    return (
        tuple(state.id for state in configuration),
        tuple((name, tuple(state.id for state in states)) for name, states in history),
        mode,
    )


def _history_tuple(
    history: dict[str, list[DeclaredState]],
) -> tuple[tuple[str, tuple[DeclaredState, ...]], ...]:
    return tuple(sorted((name, tuple(states)) for name, states in history.items()))


class HBinding:
    """A statechart's generated code for one kind of model: nodes made on first reach, and
    for each (node, event) a selection function and its microsteps, generated on first use."""

    def __init__(self, runtime: Any, resolver: Any, support: Support) -> None:
        self.support = support
        self.Outcome = support.outcome
        chart = runtime.chart
        self.chart = chart
        self.runtime = runtime
        self.resolver = resolver
        self.cls = runtime.instance_class
        self.strict = not chart.flags.allow_event_without_transition
        self.catch = chart.flags.catch_errors_as_events
        self.flags = chart.flags
        #: Whose ``prepare_event`` runs before callbacks: the chart's, then the model's.
        self.prepare = runtime.prepare is not None
        model_type = resolver.model_type
        self.prepare_owners: tuple[str, ...] = ()
        if self.prepare:
            self.prepare_owners = ("chart",)
            if model_type is not None and hasattr(model_type, "prepare_event"):
                self.prepare_owners += ("model",)
        self._groups: dict[tuple[str, str], tuple[Resolved, ...]] = {}
        self._keys: dict[tuple[int, int, int], tuple[int, int, int]] = {}
        self._lock = threading.RLock()
        self._nodes: dict[tuple[Any, ...], HNode] = {}
        self._definitions = {
            id(transition): definition
            for definition, transition in zip(
                chart.transitions, runtime.declared_transition_list, strict=True
            )
        }
        model_type = resolver.model_type
        self._label = chart.name
        if model_type is not None:
            self._label = f"{chart.name}, model {model_type.__name__}"
        self.source = ""
        self.instance_names = tuple(resolver.instance_names.items())
        self.initial_node = self.node((), {})
        self.initial: Callable[..., Any] | None = self._initial_plan()
        self.instance_names = tuple(resolver.instance_names.items())
        self.held_names = tuple(resolver.held)
        self.checks_model = bool(self.instance_names or self.held_names)

    def enter_initial(self, instance: Any, kwargs: dict[str, Any]) -> None:
        """Enter the initial configuration, then run the macrostep that follows."""
        assert self.initial is not None
        if instance._pending is None:
            instance._pending = self.support.busy
        try:
            outcome = self.initial(instance, (), kwargs)
        except BaseException:
            instance._settle_failure()
            raise
        instance._run_queues(outcome)

    def resume_node(self, state_id: str) -> HNode:
        """The node python-statemachine's ``start_value=state_id`` starts in: the
        configuration entering ``state_id`` gives (its ancestors, and the initial states of
        the other regions of each parallel ancestor, in python-statemachine's order), planned
        with its entry algorithm, no callback run; ``InvalidStateValue`` for an id that is
        not an atomic state."""
        from statemachine.exceptions import InvalidStateValue

        state = self.runtime.declared_states.get(state_id)
        if state is None or not state.is_atomic or state.is_history:
            atomic = ", ".join(s.id for s in self.chart.states if s.kind == "atomic")
            raise InvalidStateValue(  # type: ignore[no-untyped-call]
                state_id,
                f"{state_id!r} is not an atomic state of {self.chart.name} (states: {atomic})",
            )
        entry = DeclaredTransition(self.runtime.initial_source, state, event="__initial__")
        entry._specs.clear()  # type: ignore[no-untyped-call]
        with self._lock:
            node = self._plan_microstep(self.initial_node, [entry], True).new_node
        # python-statemachine's engine, started there, stops at once if that configuration
        # completes a top-level parallel state
        return self.settled(node) if node.pending else node

    def check_instance(self, model: Any) -> dict[str, Any] | None:
        """Raise python-statemachine's error if the model lacks a name the chart needs of it
        (as ``dir(model)`` lists them; see ``check_model``); what the instance keeps of the
        model's names (``hold``), if any."""
        from ._codegen import verdict
        from ._resolve import check_model, hold

        read = check_model(self.chart.name, model, self.instance_names, self.resolver.plain_dir)
        if not self.held_names:
            return None
        return hold(model, self.held_names, read, lambda value: verdict(self.resolver, value))

    def resolve_all(self) -> None:
        """Resolve every callback of the chart now (generation resolves them lazily)."""
        for state in self.runtime.declared_states.values():
            self._state_group(state, Group.ENTER)
            self._state_group(state, Group.EXIT)
        for transition in self.runtime.declared_transition_list:
            for group in (Group.VALIDATORS, Group.COND, Group.BEFORE, Group.ON, Group.AFTER):
                self._transition_group(transition, group)
        # the names each model must carry, now that every callback is resolved (an instance
        # lacking one is refused when created, as python-statemachine refuses it), and those
        # it reads when created
        self.instance_names = tuple(self.resolver.instance_names.items())
        self.held_names = tuple(self.resolver.held)
        self.checks_model = bool(self.instance_names or self.held_names)

    # -- nodes -------------------------------------------------------------------------------

    def node(
        self,
        configuration: tuple[DeclaredState, ...] | OrderedSet[DeclaredState],
        history: dict[str, list[DeclaredState]],
        mode: int | None = RUNNING,
    ) -> HNode:
        """The shared node of a configuration, history values and mode (made on first
        reach); mode ``None``: at rest (stopped if a top-level parallel state is complete,
        as a snapshot or a resumed instance is)."""
        return self._node(tuple(configuration), _history_tuple(history), mode)

    def _node(
        self,
        configuration: tuple[DeclaredState, ...],
        history_items: tuple[tuple[str, tuple[DeclaredState, ...]], ...],
        mode: int | None,
    ) -> HNode:
        if mode is None:
            mode = STOPPED if _parallel_done(configuration) else RUNNING
        key = _node_key(configuration, history_items, mode)
        found = self._nodes.get(key)
        if found is None:
            with self._lock:
                found = self._nodes.get(key)
                if found is None:
                    found = HNode(self, configuration, history_items, mode)
                    self._nodes[key] = found
        return found

    def stopping(self, node: HNode) -> str | None:
        """What a snapshot of ``node`` says of its stopping (``_snapshot.STOPPING``), when
        its mode is not the one its configuration gives at rest."""
        if node.pending:
            return "pending"
        if not node.terminated and _parallel_done(node.declared_configuration):
            return "running"
        return None

    def stopping_mode(self, stopping: str | None) -> int | None:
        """The node mode a snapshot's ``stopping`` restores (``None``: at rest)."""
        return {"pending": PENDING, "running": RUNNING}.get(stopping) if stopping else None

    def settled(self, node: HNode) -> HNode:
        """At the end of a macrostep, ``node`` (pending): stopped if a top-level parallel
        state is still complete, else running, as python-statemachine's engine checks."""
        return self._node(node.declared_configuration, node.history, None)

    def _entering(self, node: HNode) -> HNode:
        """A copy of ``node`` (a top-level final state's configuration) not terminated: what
        the final state's ``enter`` callbacks see."""
        found = self._nodes.get(("entering", node.key))
        if found is None:
            found = copy.copy(node)
            found.terminated = False
            self._nodes[("entering", node.key)] = found
        return found

    def _candidates(self, node: HNode, event: str | None) -> list[list[DeclaredTransition]]:
        """For each active atomic state, in configuration order, the transitions an event (or,
        for ``None``, no event) may take: the state's own, then its ancestors', in order."""
        found = node.candidates.get(event)
        if found is not None:
            return found
        result = []
        for state in node.declared_configuration:
            if not state.is_atomic:
                continue
            chain = [state, *state.ancestors()]
            result.append(
                [
                    transition
                    for owner in chain
                    for transition in owner.transitions
                    if not transition.initial and self._matches(transition, event)
                ]
            )
        if event is None or event in self.runtime.event_ids or len(node.candidates) < 64:
            node.candidates[event] = result
        return result

    @staticmethod
    def _matches(transition: DeclaredTransition, event: str | None) -> bool:
        if event is None:
            return bool(transition.is_eventless)
        return any(descriptor_matches(str(d), event) for d in transition.events)

    # -- events the table does not hold ------------------------------------------------------

    def unmatched(self, node: HNode, event: str, strict: bool = True) -> Any:
        """The function for ``event`` from ``node`` (generated now), or the outcome of
        ignoring it (``TransitionNotAllowed`` for a strict chart, unless ``strict`` is false).
        """
        _not_allowed = self.support.not_allowed
        outcome = node.ignored.get(event)
        if outcome is None:
            if not isinstance(event, str):
                raise TypeError(f"event must be a str, got {type(event).__name__}: {event!r}")
            candidates = self._candidates(node, event)
            if any(candidates):
                if event in self.runtime.event_ids:
                    fire = node.table[event] = self._selection(node, event, candidates)
                    return fire
                # an undeclared name a wildcard or prefix matches: code generated once per
                # set of candidates, the name passed in, so a stream of distinct names
                # (``tool.<id>`` ...) keeps nothing per name
                dynamic = self._dynamic_selection(node, event, candidates)
                return lambda inst, args, kw: dynamic(inst, args, kw, event)
            if node.terminated and node.state.final:
                reason = "terminated"
            elif event in self.runtime.event_ids:
                reason = "no_transition"
            else:
                reason = "unknown_event"
            outcome = self.Outcome(False, event, node.state, None, None, reason)
            if len(node.ignored) < _IGNORED_CACHE_SIZE:
                node.ignored[event] = outcome
        if self.strict and strict:
            raise _not_allowed(self.runtime.event_object(event), node)
        return outcome

    def terminated(self, node: HNode, event: str) -> Any:
        """The outcome of an event sent once the instance terminated (python-statemachine
        drops it, or raises ``TransitionNotAllowed`` for a strict chart)."""
        _not_allowed = self.support.not_allowed
        if not isinstance(event, str):
            raise TypeError(f"event must be a str, got {type(event).__name__}: {event!r}")
        if self.strict:
            raise _not_allowed(self.runtime.event_object(event), node)
        return self.Outcome(False, event, node.state, None, None, "terminated")

    def eventless(self, node: HNode) -> Callable[..., Any] | None:
        """The function trying the node's eventless transitions, or ``None`` if it has none."""
        found = node.eventless
        if found is _UNSET:
            candidates = self._candidates(node, None)
            found = self._selection(node, None, candidates) if any(candidates) else None
            if found is not None or not node.pending:
                # (a pending node is never "without eventless transitions": the short way of
                # ``send`` skips the macrostep that would stop the machine first)
                node.eventless = found
        return found  # type: ignore[no-any-return]

    # -- generation --------------------------------------------------------------------------

    def _resolved(self, owner: str, group: Group, callbacks: Any) -> tuple[Resolved, ...]:
        key = (owner, group.value)
        found = self._groups.get(key)
        if found is None:
            where = self.runtime.where[owner]
            found = self.resolver.resolve_group(callbacks, where)
            self._groups[key] = found
        return found

    def _transition_group(
        self, transition: DeclaredTransition, group: Group
    ) -> tuple[Resolved, ...]:
        definition = self._definitions.get(id(transition))
        if definition is None:  # the initial transitions python-statemachine makes on start
            return ()
        return self._resolved(
            f"transition:{definition.id}", group, getattr(definition, group.value)
        )

    def _state_group(self, state: DeclaredState, group: Group) -> tuple[Resolved, ...]:
        definition = self.chart.state(state.id)
        callbacks = definition.enter if group is Group.ENTER else definition.exit
        return self._resolved(f"state:{state.id}", group, callbacks)

    def _module(self) -> Module:
        module = Module(self._label, self.resolver.awaited)
        module.namespace.update(self.support.helpers)
        module.namespace.update(_plan=_plan, _plan_any=_plan_any, _done=_done)
        return module

    def _event_const(self, module: Module, event: str | None) -> str:
        if event is None:
            return "None"
        return module.const(self.runtime.event_object(event), f"EVENT_{event}")

    def _dynamic_selection(
        self, node: HNode, event: str, candidates: list[list[DeclaredTransition]]
    ) -> Callable[..., Any]:
        """The selection function, taking the event name as ``ev``, for undeclared names
        with these candidates (generated on first use, kept per node and candidates)."""
        key = (
            tuple(tuple(id(t) for t in group) for group in candidates),
            event == "error.execution",
        )
        found = node.dynamic.get(key)
        if found is None:
            with self._lock:
                found = node.dynamic.get(key)
                if found is None:
                    found = self._selection(node, event, candidates, dynamic=key)
                    node.dynamic[key] = found
        return found

    def _selection(
        self,
        node: HNode,
        event: str | None,
        candidates: list[list[DeclaredTransition]],
        dynamic: Any = None,
    ) -> Callable[..., Any]:
        """Generate the function choosing, for each active atomic state, the first enabled
        transition; it hands the choice to the microstep (``_plan``). ``dynamic``: a function
        for any undeclared name with these candidates, passed as ``ev``."""
        with self._lock:
            module = self._module()
            event_expr = self._event_const(module, event)
            if dynamic is not None:
                event_expr = "_event_object(ev)"
            node_name = module.const(node, f"NODE_{node.label}")
            handling_error = event == "error.execution"
            label = event or "eventless"
            if dynamic is not None:
                label = "any_event"
            name = module.unique(f"{node.label}__{label}")
            runtime = self.runtime

            def body(writer: FunctionWriter) -> None:
                if self.prepare:  # each microstep prepares its arguments afresh
                    writer.emit(0, "inst._prepared.clear()")
                for index, transitions in enumerate(candidates):
                    variable = f"c{index}"
                    writer.emit(0, f"{variable} = -1")
                    for number, transition in enumerate(transitions):
                        definition = self._definitions[id(transition)]
                        indent = 0
                        if number:
                            writer.emit(0, f"if {variable} < 0:")
                            indent = 1
                        writer.emit(indent, f"# {_describe(definition)}")
                        base = self._phase(writer, module, transition, transition.source)
                        if self.prepare:  # python-statemachine prepares each candidate's
                            writer.emit(indent, writer.prepared(base))  # arguments first
                        validators = writer.gathered(
                            writer.call_lines(
                                self._transition_group(transition, Group.VALIDATORS), base
                            )
                        )
                        cond = self._transition_group(transition, Group.COND)
                        reraise = ["_selection_failed(inst)", "raise"]
                        writer.block(indent, validators, reraise, "except BaseException:")
                        if not cond:
                            writer.emit(indent, f"{variable} = {number}")
                            continue
                        guard = f"enabled = {writer.guard(cond, base)}"
                        if self.catch:
                            writer.block(indent, [guard], ["enabled = _guard_failed(inst, error)"])
                        else:
                            writer.block(indent, [guard], reraise, "except BaseException:")
                        writer.emit(indent, "if enabled:")
                        writer.emit(indent + 1, f"{variable} = {number}")
                choice = ", ".join(f"c{index}" for index in range(len(candidates)))
                if dynamic is not None:
                    dynamic_key = module.const(dynamic, "CANDIDATES")
                    writer.emit(
                        0,
                        f"return _plan_any(inst, args, kw, {node_name}, {dynamic_key}, "
                        f"({choice},), ev)",
                    )
                    return
                writer.emit(
                    0, f"return _plan(inst, args, kw, {node_name}, {event!r}, ({choice},))"
                )

            write_function(
                module,
                name,
                "inst, args, kw, ev" if dynamic is not None else "inst, args, kw",
                body,
                event_expr,
                None if dynamic is not None else event,
                positional_variant=True,
                catch=self.catch,
                handling_error=handling_error,
                prepare=self.prepare,
            )
            namespace = module.build()
            del runtime
            self.source += module.source
            return namespace[name]  # type: ignore[no-any-return]

    def _phase(
        self,
        writer: FunctionWriter,
        module: Module,
        transition: DeclaredTransition,
        state: DeclaredState | None,
        source: DeclaredState | None = None,
        target: DeclaredState | str | None = "transition",
        configurations: tuple[str, str] | None = None,
    ) -> Phase:
        transition_name = module.const(transition, self._transition_name(transition))
        # python-statemachine's arguments for (transition, target entered, source exited)
        key_target = None if target == "transition" else target
        key_source = source if key_target is None else None
        source = transition.source if source is None else source
        if target == "transition":
            target = transition.target
        key = "None"
        if self.prepare:
            ids = (id(transition), id(key_target), id(key_source))
            key = module.const(self._keys.setdefault(ids, ids), "PREPARED")
        return writer.phase(
            transition_name,
            self._state_const(module, state),
            self._state_const(module, source),
            self._state_const(module, target),  # type: ignore[arg-type]
            configurations=configurations,
            key=key,
        )

    def _state_const(self, module: Module, state: DeclaredState | None) -> str:
        if state is None:
            return "None"
        name = state.id if state.id else "none"
        return module.const(state, f"STATE_{name}")

    def _transition_name(self, transition: DeclaredTransition) -> str:
        definition = self._definitions.get(id(transition))
        return f"TRANSITION_{definition.id if definition else 'initial'}"

    # -- microsteps --------------------------------------------------------------------------

    def plan(self, node: HNode, event: str | None, key: tuple[int, ...]) -> Callable[..., Any]:
        """The microstep of a selection, generated on first use."""
        found = node.plans.get((event, key))
        if found is not None:
            return found
        with self._lock:
            found = node.plans.get((event, key))
            if found is None:
                candidates = self._candidates(node, event)
                chosen = [
                    candidates[index][number] for index, number in enumerate(key) if number >= 0
                ]
                if chosen:
                    found = self._write_microstep(node, event, chosen, initial=False)
                else:
                    found = self._rejected(node, event)
                node.plans[(event, key)] = found
        return found

    def plan_any(self, node: HNode, dynamic: Any, key: tuple[int, ...], ev: str) -> Any:
        """The microstep of a selection for any undeclared name with the candidates
        ``dynamic`` stands for (the name passed as ``ev``), generated on first use."""
        found = node.plans.get((dynamic, key))
        if found is not None:
            return found
        with self._lock:
            found = node.plans.get((dynamic, key))
            if found is None:
                candidates = self._candidates(node, ev)
                chosen = [
                    candidates[index][number] for index, number in enumerate(key) if number >= 0
                ]
                if chosen:
                    found = self._write_microstep(node, ev, chosen, initial=False, dynamic=True)
                else:
                    found = self._rejected_any(node)
                node.plans[(dynamic, key)] = found
        return found

    def _rejected_any(self, node: HNode) -> Callable[..., Any]:
        _reject = self.support.reject
        Outcome = self.Outcome

        def rejected(inst: Any, args: Any, kw: Any, ev: str) -> Any:
            outcome = Outcome(False, ev, node.state, None, None, "guards_rejected")
            if not self.strict:
                return outcome
            return _reject(inst, self.runtime.event_object(ev), node, outcome)

        return rejected

    def _rejected(self, node: HNode, event: str | None) -> Callable[..., Any]:
        _reject = self.support.reject
        name = event or ""
        outcome = self.Outcome(False, name, node.state, None, None, "guards_rejected")
        if event is None or not self.strict:
            return lambda inst, args, kw: outcome
        event_object = self.runtime.event_object(event)
        return lambda inst, args, kw: _reject(inst, event_object, node, outcome)

    def _initial_plan(self) -> Callable[..., Any]:
        start_ids = self.chart.start_configuration or (self.chart.initial.id,)
        start = [self.runtime.declared_states[state_id] for state_id in start_ids]
        empty = self.runtime.initial_source
        transitions = []
        for state in start:
            transition = DeclaredTransition(empty, state, event="__initial__")
            transition._specs.clear()  # type: ignore[no-untyped-call]
            transitions.append(transition)
        self._initial_transitions = transitions
        return self._write_microstep(self.initial_node, "__initial__", transitions, initial=True)

    def generate_all(self) -> None:
        """Generate code showing every transition of the chart, for ``Chart.source``: walking
        the configurations reachable by the declared events and eventless transitions breadth
        first (events as declared), each (configuration, event) whose candidates include a
        transition not shown yet gets its selection function, and each choice the guards can
        make that takes such a transition its microstep. One function per transition, not
        per configuration: a chart of parallel regions would have thousands. At run time the
        code of each (configuration, event) is generated lazily, on first reach, the same way.
        """
        events: list[str | None] = [None, *(event.id for event in self.chart.events)]
        unshown = set(self._definitions)  # ids of the declared transitions
        with self._lock:
            start = self._plan_microstep(self.initial_node, self._initial_transitions, True)
            queue = [start.new_node]
            seen = {start.new_node.key}
            while queue and unshown:
                node = queue.pop(0)
                if node.terminated:
                    continue
                for event in events:
                    candidates = self._candidates(node, event)
                    if not any(candidates):
                        continue
                    new = any(id(t) in unshown for ts in candidates for t in ts)
                    if new:
                        if event is None:
                            self.eventless(node)
                        elif event not in node.table:
                            self.unmatched(node, event, strict=False)
                    for key in _choices(self, candidates):
                        chosen = [candidates[i][n] for i, n in enumerate(key) if n >= 0]
                        if any(id(t) in unshown for t in chosen):
                            self.plan(node, event, key)
                            unshown.difference_update(id(t) for t in chosen)
                        reached = self._plan_microstep(node, chosen, False).new_node
                        if reached.key not in seen:
                            seen.add(reached.key)
                            queue.append(reached)

    def _write_microstep(
        self,
        node: HNode,
        event: str | None,
        chosen: list[DeclaredTransition],
        initial: bool,
        dynamic: bool = False,
    ) -> Callable[..., Any]:
        """Plan a microstep with python-statemachine's algorithm, then generate its code
        (``dynamic``: for any undeclared event name, passed as ``ev``)."""
        plan = self._plan_microstep(node, chosen, initial)
        module = self._module()
        event_expr = (
            self._event_const(module, event)
            if not initial
            else module.const(self.runtime.initial_event, "EVENT___initial__")
        )
        if dynamic:
            event_expr = "_event_object(ev)"
        new_node = plan.new_node
        label = "any_event" if dynamic else (event or "eventless")
        name = module.unique(
            f"{node.label}__{label}__to__{new_node.label}"
            if not initial
            else f"enter_{new_node.label}"
        )
        definitions = [self._definitions.get(id(t)) for t in plan.transitions]
        chosen_taken = tuple(d for d in definitions if d is not None)
        entered_by = (self._definitions.get(id(t)) for t in plan.entry_transitions)
        taken = chosen_taken + tuple(d for d in entered_by if d is not None)
        outcome_event = "__initial__" if initial else (event or "")
        first = chosen_taken[0] if chosen_taken else None
        # no state at all after a history state with no default and nothing recorded, as
        # python-statemachine leaves it: the outcome names no target
        target = new_node.state if new_node.configuration else None
        outcome = self.Outcome(True, outcome_event, node.state, target, first, None, taken)
        failed = self.Outcome(False, outcome_event, node.state, None, None, "failed")
        names = _MicroNames(
            configurations=(
                module.const(plan.previous, "CONFIGURATION_before"),
                module.const(plan.new_configuration, "CONFIGURATION_after"),
            ),
            new_node=module.const(new_node, f"NODE_{new_node.label}"),
            restore=module.const(plan.restore_node, f"NODE_{node.label}_restored"),
            outcome=module.const(outcome, f"TOOK_{node.label}_{new_node.label}"),
            failed=module.const(failed, f"FAILED_{node.label}"),
            handling_error=event == "error.execution",
            initial=initial,
        )
        if dynamic:  # the outcomes name the event sent
            source = module.const(node.state, "DEF_source")
            target_name = module.const(target, "DEF_target")
            first_name = module.const(first, "DEF_first") if first is not None else "None"
            taken_name = module.const(taken, "DEF_taken")
            took = f"{source}, {target_name}, {first_name}, None, {taken_name}"
            names = replace(
                names,
                outcome=f"_Outcome(True, ev, {took})",
                failed=f"_Outcome(False, ev, {source}, None, None, 'failed')",
            )

        def body(writer: FunctionWriter) -> None:
            for definition in taken:
                writer.emit(0, f"# {_describe(definition)}")
            self._emit_microstep(writer, module, plan, names)

        write_function(
            module,
            name,
            "inst, args, kw, ev" if dynamic else "inst, args, kw",
            body,
            event_expr,
            None if dynamic else (event if not initial else "__initial__"),
            positional_variant=True,
            catch=self.catch,
            handling_error=names.handling_error,
            prepare=self.prepare,
        )
        namespace = module.build()
        self.source += module.source
        return namespace[name]  # type: ignore[no-any-return]

    def _plan_microstep(
        self, node: HNode, chosen: list[DeclaredTransition], initial: bool
    ) -> _MicroPlan:
        previous = OrderedSet(node.declared_configuration)
        history = {name: list(states) for name, states in node.history}
        planner = _Planner(
            OrderedSet(previous), history, self.flags.enable_self_transition_entries
        )
        engine = _planning_engine(planner)
        if initial:
            transitions = list(chosen)
            ordered_exit: list[Any] = []
            states_to_exit: OrderedSet[DeclaredState] = OrderedSet()
        else:
            transitions = list(engine._filter_conflicting_transitions(OrderedSet(chosen)))
            ordered_exit, states_to_exit = engine._prepare_exit_states(transitions)
        new_history = dict(planner.history_values)
        ordered_enter, default_entry, default_history, new_configuration = (
            engine._prepare_entry_states(transitions, states_to_exit, previous)
        )
        # which done.state events each final state entered raises (a StateChart's
        # configuration grows state by state while entering, as python-statemachine's does; a
        # StateMachine's is the new one already)
        growing = OrderedSet(state for state in previous if state not in states_to_exit)
        atomic = self.flags.atomic_configuration_update
        done_events: dict[int, list[str]] = {}
        completes: int | None = None  # the entry completing a top-level parallel state
        for position, info in enumerate(ordered_enter):
            target = info.state
            growing.add(target)
            if not target.final or target.parent is None:
                continue
            events = [f"done.state.{target.parent.id}"]
            grandparent = target.parent.parent
            if grandparent is not None and grandparent.parallel:
                planner.configuration = OrderedSet(new_configuration) if atomic else growing
                if all(engine.is_in_final_state(child) for child in grandparent.states):
                    events.append(f"done.state.{grandparent.id}")
                    if grandparent.parent is None and completes is None:
                        completes = position
            done_events[position] = events
        # a top-level parallel state completed (now, or earlier in the macrostep) stops the
        # machine at the end of the macrostep, if it still is complete then
        mode = PENDING if node.pending or completes is not None else RUNNING
        return _MicroPlan(
            transitions=transitions,
            entry_transitions=_entry_transitions(
                transitions, ordered_enter, default_history, new_history
            ),
            ordered_exit=ordered_exit,
            ordered_enter=ordered_enter,
            default_ids={info.state.id for info in default_entry if info.state},
            default_history=default_history,
            done_events=done_events,
            previous=tuple(previous),
            new_configuration=tuple(new_configuration),
            new_node=self.node(new_configuration, new_history, mode),
            restore_node=self.node(previous, new_history, PENDING if node.pending else RUNNING),
            new_history=new_history,
            completes=completes,
        )

    def _emit_microstep(
        self, writer: FunctionWriter, module: Module, plan: _MicroPlan, names: _MicroNames
    ) -> None:
        restore = names.restore
        if plan.completes is not None and not names.initial:
            # a failure once the entry completing a top-level parallel state ran puts the
            # configuration back with the machine still to stop, as python-statemachine's
            # pending stop outlives the failed microstep
            writer.emit(0, f"restore = {restore}")
            restore = "restore"
        fail = [
            f"_failed(inst, error, {names.handling_error})",
            f"inst._node = {restore}",
            f"return {names.failed}",
        ]
        before: list[str] = []
        for transition in plan.transitions:
            phase = self._phase(writer, module, transition, transition.source)
            before += self._prepared(writer, phase)
            group = self._transition_group(transition, Group.BEFORE)
            lines = writer.checked_calls(group, phase)
            before += writer.gathered(lines)
        # entering the initial configuration is no microstep: python-statemachine lets a
        # failing ``prepare_event`` reach the caller of create()
        writer.block(0, before, fail[::2] if self.catch and not names.initial else None)
        risky: list[tuple[str, list[str]]] = []
        # a StateChart updates its configuration state by state (each state leaves after its
        # exit callbacks and arrives before its enter callbacks), so callbacks reading it see
        # the configuration of the moment; a StateMachine switches it at once after ``on``
        stepwise = not self.flags.atomic_configuration_update
        current = list(plan.previous)
        shown = [tuple(current)]
        last_shown = [""]  # the name of the node the last move set, if any
        # whether the machine is to stop at the end of the macrostep (a top-level parallel
        # state completed before this microstep, or in it once the completing entry ran)
        pending = [plan.restore_node.pending]

        def show(states: list[DeclaredState]) -> list[tuple[str, list[str]]]:
            if not stepwise or tuple(states) == shown[0]:
                return []
            shown[0] = tuple(states)
            return self._moved(module, states, plan, pending[0], last_shown)

        for info in plan.ordered_exit:
            state = info.state
            phase = self._phase(writer, module, info.transition, state, source=state)
            lines = writer.handled(writer.call_lines(self._state_group(state, Group.EXIT), phase))
            if self.prepare:  # a BaseException preparing the exit leaves the states exited
                risky += show(current)
            risky += [("prepared", self._prepared(writer, phase))]
            if lines:
                risky += show(current)
                risky += [("plain", [f"# exit {state.id}"]), ("isolated", lines)]
            current.remove(state)
        on = self._on_lines(writer, module, plan, names)
        if on:
            risky += show(current)
            risky.append(("on", on))
        if not stepwise:
            risky += self._moved(module, plan.new_configuration, plan, pending[0], last_shown)
        entries, ending = self._entries(
            writer, module, plan, names, current, show, shown, pending, last_shown
        )
        risky += entries
        # (the last state's arrival may have set the new node already)
        if ending or (stepwise and last_shown[0] != names.new_node):
            risky.append(("plain", [f"inst._node = {names.new_node}"]))
        self._emit_risky(writer, risky, fail, restore, names.handling_error, names.initial)
        after = self._after_lines(writer, module, plan, names)
        writer.block(0, after, fail[:1] if self.catch else None)
        writer.emit(0, f"return {names.outcome}")

    def _entries(
        self,
        writer: FunctionWriter,
        module: Module,
        plan: _MicroPlan,
        names: _MicroNames,
        current: list[DeclaredState],
        show: Callable[[list[DeclaredState]], list[tuple[str, list[str]]]],
        shown: list[tuple[DeclaredState, ...]],
        pending: list[bool],
        last_shown: list[str],
    ) -> tuple[list[tuple[str, list[str]]], bool]:
        """The microstep's entries, each state arriving (``show``) where python-statemachine
        adds it to the configuration; and whether it ends in a top-level final state, where
        the instance is not terminated until the enter callbacks ran."""
        risky: list[tuple[str, list[str]]] = []
        ending = False
        for position, info in enumerate(plan.ordered_enter):
            prepared, *entry = self._entry(writer, module, plan, names, position, info)
            if self.prepare:  # the arguments are prepared before the state arrives, so a
                # BaseException preparing them leaves the states entered so far
                risky += show(current)
                risky.append(prepared)
            _add_once(current, info.state)
            if info.state.final and info.state.parent is None:
                # python-statemachine stops its engine (is_terminated) once the enter
                # callbacks of a top-level final state ran, not before
                moment = self._entering(self.node(tuple(current), plan.new_history))
                name = module.const(moment, f"NODE_entering_{info.state.id}")
                shown[0] = tuple(current)
                risky.append(("plain", [f"inst._node = {name}"]))
                ending = True
            else:
                risky += show(current)
            risky += entry
            if position == plan.completes:  # its enter ran: the machine stops at the end
                pending[0] = True  # of the macrostep, if the parallel state is still complete
                stepwise = not self.flags.atomic_configuration_update
                moved = current if stepwise else plan.new_configuration
                risky += self._moved(module, moved, plan, True, last_shown)
                if not names.initial:
                    back = self.node(plan.previous, plan.new_history, PENDING)
                    name = module.const(back, f"NODE_{back.label}_restored_pending")
                    risky.append(("plain", [f"restore = {name}"]))
        return risky, ending

    def _moved(
        self,
        module: Module,
        states: Any,
        plan: _MicroPlan,
        pending: bool,
        last_shown: list[str],
    ) -> list[tuple[str, list[str]]]:
        """The statement setting the node of the configuration ``states`` (``pending``: the
        machine stops at the end of the macrostep), remembering its name in ``last_shown``."""
        moment = self.node(tuple(states), plan.new_history, PENDING if pending else RUNNING)
        suffix = "_pending" if pending else ""
        name = module.const(moment, f"NODE_{moment.label}_{len(moment.configuration)}{suffix}")
        last_shown[0] = name
        return [("plain", [f"inst._node = {name}"])]

    def _after_lines(
        self, writer: FunctionWriter, module: Module, plan: _MicroPlan, names: _MicroNames
    ) -> list[str]:
        """Each transition's ``after`` group, gathered (but a targetless transition's with
        errors caught as events: one by one)."""
        after: list[str] = []
        for transition in plan.transitions:
            target = transition.target
            phase = self._phase(
                writer,
                module,
                transition,
                target if target is not None else transition.source,
                target=target,
                configurations=names.configurations if target is None else None,
            )
            after += self._prepared(writer, phase)
            lines = writer.call_lines(self._transition_group(transition, Group.AFTER), phase)
            if writer.one_by_one_after(target is None, lines):
                after += writer.caught_each(lines)
            else:
                after += writer.gathered(lines)
        return after

    def _prepared(self, writer: FunctionWriter, phase: Phase) -> list[str]:
        """In a chart with a ``prepare_event``: the statement preparing a group's arguments,
        as python-statemachine prepares them for every group, callbacks or none."""
        return [writer.prepared(phase)] if self.prepare else []

    def _on_lines(
        self, writer: FunctionWriter, module: Module, plan: _MicroPlan, names: _MicroNames
    ) -> list[str]:
        on: list[str] = []
        # python-statemachine's async engine gathers each transition's group without an error
        # handler: no errors caught as events, or while handling error.execution
        gathered = not self.catch or names.handling_error
        for transition in plan.transitions:
            phase = self._phase(
                writer, module, transition, transition.source, configurations=names.configurations
            )
            on += self._prepared(writer, phase)
            group = self._transition_group(transition, Group.ON)
            lines = writer.checked_calls(group, phase)
            on += writer.gathered(lines) if gathered else lines
        return on

    def _entry(
        self,
        writer: FunctionWriter,
        module: Module,
        plan: _MicroPlan,
        names: _MicroNames,
        position: int,
        info: Any,
    ) -> list[tuple[str, list[str]]]:
        """Entering one state: its ``enter`` callbacks, the done.state events a final state
        raises, a compound's initial transition content and default history content."""
        state = info.state
        phase = self._phase(
            writer, module, info.transition, state, source=info.transition.source, target=state
        )
        lines = writer.call_lines(self._state_group(state, Group.ENTER), phase)
        events = plan.done_events.get(position)
        risky: list[tuple[str, list[str]]] = [("prepared", self._prepared(writer, phase))]
        if lines or events:
            risky.append(("plain", [f"# enter {state.id}"]))
        if events:
            if module.gather and not self.catch and lines:  # gathered, results in order
                risky.append(("plain", [f"results = {writer.gather_call(lines)}"]))
            else:
                risky.append(("results", lines))
            # reading the done data (the truth of what ``enter`` returned) can raise: with
            # errors caught as events that is an error.execution, as in python-statemachine
            risky += [("isolated", [f"_done(inst, {done!r}, results)"]) for done in events]
        elif lines:
            risky.append(("isolated", writer.handled(lines)))
        if state.id in plan.default_ids:
            initial_transitions = [t for t in state.transitions if t.initial]
            if len(initial_transitions) == 1:
                group = self._transition_group(initial_transitions[0], Group.ON)
                lines = writer.checked_calls(group, phase)
                risky.append(("step", writer.gathered(lines)))
        for history_info in plan.default_history.get(state.id, []):
            # python-statemachine runs the ``on`` content of the transition that led here
            # through the history state again (with recorded history, the transition taken)
            history_transition = history_info.transition
            history_phase = self._phase(
                writer,
                module,
                history_transition,
                history_transition.source,
                configurations=names.configurations,
            )
            group = self._transition_group(history_transition, Group.ON)
            # The microstep's own transition (a history state without a default) runs with
            # the arguments python-statemachine cached for its first ``on`` run, error
            # handler included: each callback isolated, as that run is. A default
            # transition's content gets fresh arguments, without one: a failure cancels the
            # microstep.
            own = any(history_transition is taken for taken in plan.transitions)
            kind = "on" if own and not names.initial else "step"
            lines = writer.checked_calls(group, history_phase)
            if kind == "step" or not self.catch or names.handling_error:
                # gathered, as python-statemachine's async engine runs a group without an
                # error handler
                lines = writer.gathered(lines)
            if kind == "step":  # the fresh arguments are prepared first, callbacks or none
                lines = [*self._prepared(writer, history_phase), *lines]
            risky.append((kind, lines))
        return risky

    def _emit_risky(
        self,
        writer: FunctionWriter,
        risky: list[tuple[str, list[str]]],
        fail: list[str],
        restore_name: str,
        handling_error: bool,
        initial: bool = False,
    ) -> None:
        """Emit exits, ``on``, the move and entries: each callback isolated when errors are
        caught as events; otherwise all inside one ``try`` restoring the configuration."""
        indent = 0
        if not self.catch:
            writer.emit(0, "try:")
            indent = 1
        for kind, lines in risky:
            if kind == "plain":
                for line in lines:
                    writer.emit(indent, line)
            elif kind == "results":
                writer.emit(indent, "results = []")
                writer.isolated(indent, [f"results.append({line})" for line in lines])
            elif kind in ("step", "prepared") and initial:
                # entering the initial configuration, python-statemachine runs this content
                # outside any microstep: a failure reaches the caller of create()
                writer.block(indent, lines, None)
            elif kind in ("step", "prepared") or (kind == "on" and handling_error):
                # a compound's initial transition content, default history content and the
                # arguments ``prepare_event`` makes for an exit or an entry are no callback
                # python-statemachine isolates: a failure cancels the microstep
                writer.block(indent, lines, fail if self.catch else None)
            else:
                writer.isolated(indent, lines)
        if not self.catch:  # a BaseException leaves it where it got, as python-statemachine
            writer.emit(0, "except Exception:")
            if not initial:
                # (entering the initial configuration is no microstep: python-statemachine
                # leaves the states entered before the failure active)
                writer.emit(1, f"inst._node = {restore_name}")
            writer.emit(1, "raise")


def _entry_transitions(
    transitions: list[DeclaredTransition],
    ordered_enter: list[Any],
    default_history: dict[str, Any],
    history: dict[str, list[DeclaredState]],
) -> list[DeclaredTransition]:
    """The transitions a microstep takes while entering states, besides the chosen ones: the
    initial transition of each compound or parallel state entered into a child entered by
    default (not a target of the microstep, a state a history restores, or on the way to one),
    and the default transition of a history state that had recorded nothing. Coverage and the
    path search count them as taken, as SCXML runs them; a transition straight into a deeper
    child takes none of the initial transitions it passes."""
    explicit = _entered_explicitly(transitions, history)
    entered = [info.state for info in ordered_enter if info.state is not None]
    entered_set = set(entered)
    taken = [
        info.transition
        for infos in default_history.values()
        for info in infos
        if info.transition.source.is_history
    ]
    for state in entered:
        if state.is_atomic:
            continue
        for transition in state.transitions:
            if transition.initial and any(
                target in entered_set and target not in explicit for target in transition.targets
            ):
                taken.append(transition)
    return taken


def _entered_explicitly(
    transitions: list[DeclaredTransition], history: dict[str, list[DeclaredState]]
) -> set[DeclaredState]:
    """The states a microstep enters not by default: its transitions' targets (for a history
    state, the states it restores, or its default transition's targets) and their
    ancestors."""
    targets: list[DeclaredState] = []
    for transition in transitions:
        for target in transition.targets:
            if not target.is_history:
                targets.append(target)
            elif history.get(target.id):
                targets += history[target.id]
            else:
                targets += [state for default in target.transitions for state in default.targets]
    explicit: set[DeclaredState] = set()
    for state in targets:
        explicit.add(state)
        explicit.update(state.ancestors())
    return explicit


def _add_once(states: list[DeclaredState], state: DeclaredState) -> None:
    """Add an entered state to the configuration of the moment (an internal self-transition
    re-enters a state still in it: python-statemachine's configuration is a set)."""
    if state not in states:
        states.append(state)


def _choices(
    binding: HBinding, candidates: list[list[DeclaredTransition]]
) -> list[tuple[int, ...]]:
    """Every selection the guards can make: for each active atomic state, the index of the
    transition taken (``-1``: none), up to the first one without a guard; none taken at all
    is left out (it runs no code)."""
    import itertools

    per_state: list[list[int]] = []
    for transitions in candidates:
        options = [-1]
        for number, transition in enumerate(transitions):
            options.append(number)
            guarded = binding._transition_group(transition, Group.COND) or (
                binding._transition_group(transition, Group.VALIDATORS)
            )
            if not guarded:
                options.remove(-1)
                break
        per_state.append(options)
    return [key for key in itertools.product(*per_state) if any(n >= 0 for n in key)]


def describe_transition(transition: TransitionDef) -> str:
    """A transition in one line, as the generated code comments it:
    ``parsing --(eventless) [arguments_parsed]--> running``."""
    events = " ".join(transition.events) or "(eventless)"
    guards = " and ".join(c.label for c in transition.guards if not c.convention)
    arrow = f"--{events} [{guards}]-->" if guards else f"--{events}-->"
    target = transition.target or "(stays)"
    if transition.internal:
        target += " (internal)"
    actions = ", ".join(c.ref for c in transition.actions if not c.convention)
    line = f"{transition.source} {arrow} {target}"
    return f"{line} / {actions}" if actions else line


_describe = describe_transition


def _plan(
    inst: Any,
    args: tuple[Any, ...],
    kw: dict[str, Any],
    node: HNode,
    event: str | None,
    key: tuple[int, ...],
) -> Any:
    plan = node.plans.get((event, key))
    if plan is None:
        plan = node.binding.plan(node, event, key)
    return plan(inst, args, kw)


def _plan_any(
    inst: Any,
    args: tuple[Any, ...],
    kw: dict[str, Any],
    node: HNode,
    dynamic: Any,
    key: tuple[int, ...],
    ev: str,
) -> Any:
    plan = node.plans.get((dynamic, key))
    if plan is None:
        plan = node.binding.plan_any(node, dynamic, key, ev)
    return plan(inst, args, kw, ev)


def _done(inst: Any, event: str, results: list[Any]) -> None:
    """Queue ``done.state.<id>`` with the done data the final state's ``enter`` returned."""
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {}
    for item in results:
        if not item:
            continue
        if isinstance(item, dict):
            kwargs.update(item)
        else:
            args = (item,)
    inst._queues().internal.append((event, args, kwargs))
