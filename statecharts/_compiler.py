"""Read a declared python-statemachine chart into the IR, refusing what cannot run faithfully.

The reader walks the declaration objects python-statemachine builds when the class is created
(states, transitions and their callback specs, already de-duplicated and checked by its
metaclass); it never instantiates the chart, so no callback runs at compile time.
"""

from __future__ import annotations

import ast
import dis
import inspect
import textwrap
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from statemachine import StateChart
from statemachine.callbacks import CallbackSpec, SpecReference
from statemachine.exceptions import InvalidDefinition
from statemachine.state import State as DeclaredState
from statemachine.transition import Transition as DeclaredTransition

from ._errors import UnsupportedChart
from ._ir import CallbackDef, ChartDef, EventDef, Flags, Group, RefKind, StateDef, TransitionDef

#: Attributes of the compiled runtime's instances that a chart attribute must not shadow
#: (a test keeps this in step with ``Instance``).
RUNTIME_NAMES = frozenset(
    {
        "send",
        "model",
        "state",
        "chart",
        "is_terminated",
        "_node",
        "_pending",
        "raise_",
        "cancel_event",
        "_send_with_options",
        "_queues",
        "_send_busy",
        "_send_after_leftovers",
        "_run_queues",
        "_take",
        "_run_external",
        "_run_internal",
        "_settle_failure",
        "_enqueue",
        "_drain",
        "_settle",
        "_next_item",
        "_eventless",
        "_loop",
        "_chain",
        "_continue",
        "_macrostep",
        "_processing_loop",
        "_terminated",
        "_send_plain",
        "_put_nonblocking",
        "_prepared",
        "_engine",
        "configuration",
        "snapshot",
        "activate_initial_state",
        "clock",
        "next_due",
        "run_due",
        "run_until_idle",
    }
)


#: What a chart method may read on ``self`` besides the chart's own attributes (the compiled
#: instance's public API).
_INSTANCE_API = frozenset(
    {
        "send",
        "raise_",
        "cancel_event",
        "configuration",
        "state",
        "model",
        "is_terminated",
        "chart",
        "snapshot",
        "clock",
        "next_due",
    }
)


def chart_attributes(cls: type[StateChart[Any]]) -> dict[str, Any]:
    """The attributes a chart class declares itself (methods, properties, constants).

    python-statemachine's own base classes, states, events and dunder names are left out; what
    remains is what callbacks may reach through ``self``.
    """
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if not _is_user_chart_class(klass):
            continue
        for name, value in vars(klass).items():
            if name.startswith("__") and name.endswith("__"):
                continue
            found[name] = value
    events = {str(event) for event in cls._events}
    return {
        name: value
        for name, value in found.items()
        if not isinstance(value, DeclaredState)
        and name not in events
        and name not in cls.states_map
    }


_LIBRARY_MODULES = frozenset({"statemachine", "typing", "builtins", "abc"})


def _is_user_chart_class(klass: type) -> bool:
    """Whether ``klass`` is part of the user's chart (the chart, its bases and mixins), as
    opposed to python-statemachine's own classes and ``object``."""
    return klass.__module__.split(".")[0] not in _LIBRARY_MODULES


def read_chart(cls: type[StateChart[Any]]) -> ChartDef:
    """Build the IR of ``cls``; raises ``UnsupportedChart`` or ``InvalidDefinition``."""
    if not (isinstance(cls, type) and issubclass(cls, StateChart)):
        raise TypeError(f"compile_chart() needs a python-statemachine StateChart class: {cls!r}")
    if cls._abstract or not cls.states:
        raise InvalidDefinition("There are no states or transitions.")
    reader = _Reader(cls)
    return reader.read()


class _Reader:
    def __init__(self, cls: type[StateChart[Any]]) -> None:
        self.cls = cls
        self.name = cls.__name__
        self.attributes = chart_attributes(cls)

    def refuse(self, construct: str, where: str, hint: str = "") -> UnsupportedChart:
        return UnsupportedChart(self.name, construct, where, hint)

    def read(self) -> ChartDef:
        self._check_class()
        states = tuple(
            self._state(state, order) for order, state in enumerate(declared_states(self.cls))
        )
        seen: set[str] = set()
        pending = [s for s in declared_states(self.cls) if s.parent is None]
        while pending:  # every declared state, nested ones included, before ids merge them
            state = pending.pop(0)
            if state.id in seen:  # the runtime keys states by id: two would be one
                raise self.refuse(
                    "two states with one id",
                    f"state {state.id!r}",
                    "give the states of each region their own names",
                )
            seen.add(state.id)
            pending.extend(getattr(state, "states", ()))
        transitions = self._transitions()
        sent_after = _delayed_sends(states, transitions)
        events = tuple(
            EventDef(
                id=str(e.id),
                name=str(e.name),
                delay=float(e.delay or 0),
                sent_after=tuple(sorted(sent_after.get(str(e.id), ()))),
            )
            for e in self.cls._events
        )
        flags = Flags(
            allow_event_without_transition=bool(self.cls.allow_event_without_transition),
            enable_self_transition_entries=bool(self.cls.enable_self_transition_entries),
            catch_errors_as_events=bool(self.cls.catch_errors_as_events),
            atomic_configuration_update=bool(self.cls.atomic_configuration_update),
        )
        return ChartDef(
            name=self.name,
            qualname=f"{self.cls.__module__}.{self.cls.__qualname__}",
            states=states,
            events=events,
            transitions=transitions,
            flags=flags,
            start_configuration=tuple(
                self.cls.states_map[value].id for value in self.cls.start_configuration_values
            ),
            attributes=frozenset(self.attributes),
        )

    def _check_class(self) -> None:
        cls = self.cls
        if cls._class_listeners:
            hint = "resolve callbacks on the chart or the model"
            raise self.refuse("a class-level listener", "listeners", hint)
        self._check_init()
        for name, value in self.attributes.items():
            self._check_attribute(name, value)

    def _check_init(self) -> None:
        """A custom ``__init__`` runs, keeping its fields on the instance, when it is the only
        one and hands over to python-statemachine's with ``super().__init__(...)``."""
        found = custom_init(self.cls)
        if found is None:
            return
        owner, function = found
        where = f"{owner.__name__}.__init__"
        if (
            len([k for k in self.cls.__mro__ if _is_user_chart_class(k) and "__init__" in vars(k)])
            > 1
        ):
            raise self.refuse(
                "several custom __init__ methods", where, "keep one, on the chart or one base"
            )
        if inspect.iscoroutinefunction(function) or not inspect.isfunction(function):
            raise self.refuse("a custom __init__ that is not a plain function", where)
        if super_with_arguments(function):
            raise self.refuse(
                "a custom __init__ handing over with super(Class, self)",
                where,
                "write super().__init__(...): the compiled instance is not an instance of the "
                "chart class, so only the zero-argument form can reach its hand-over",
            )
        if "__class__" not in function.__code__.co_freevars:
            raise self.refuse(
                "a custom __init__ that does not call super().__init__(...)",
                where,
                "python-statemachine's own __init__ must run to enter the initial state",
            )
        for field in sorted(init_fields(function)):
            if field in RUNTIME_NAMES or field in _INSTANCE_API or field in self.attributes:
                raise self.refuse(
                    "an __init__ field named like the runtime's or the chart's own attribute",
                    f"{where} sets self.{field}",
                )
        unsupported = sorted(self._machine_api_used(function))
        if unsupported:
            raise self.refuse(
                "a chart method using python-statemachine's machine API",
                f"{where} reads self.{unsupported[0]}",
            )

    def _check_attribute(self, name: str, value: Any) -> None:
        if name in RUNTIME_NAMES:
            raise self.refuse(
                "an attribute named like the runtime's own API", f"attribute {name!r}"
            )
        function = _function_of(value)
        if function is None:
            return
        if inspect.isasyncgenfunction(function):
            raise self.refuse("an async generator as a callback", f"{self.name}.{name}")
        unsupported = sorted(self._machine_api_used(function))
        if unsupported:
            raise self.refuse(
                "a chart method using python-statemachine's machine API",
                f"{self.name}.{name} reads self.{unsupported[0]}",
                "the compiled instance offers send, raise_, configuration, state, model, "
                "is_terminated and the event methods",
            )
        if "__class__" in function.__code__.co_freevars:
            raise self.refuse(
                "a method using zero-argument super()",
                f"{self.name}.{name}",
                "call the base class explicitly",
            )

    def _machine_api_used(self, function: Any) -> set[str]:
        """Attributes a chart method reads on the machine that only python-statemachine's
        machine has (``current_state_value``, a state such as ``self.b`` ...): read on
        ``self``, on a ``machine`` parameter or ``event_data.machine``, in a nested function,
        or by ``getattr(self, name)`` with a name not known here. The compiled instance would
        raise ``AttributeError`` there, which errors-as-events would swallow."""
        code = function.__code__
        owners = {"machine"}
        if code.co_varnames and code.co_argcount:
            owners.add(code.co_varnames[0])
        provided = set(RUNTIME_NAMES) | set(self.attributes) | _INSTANCE_API
        init = custom_init(self.cls)
        if init is not None:
            provided |= init_fields(init[1])
        provided |= {
            name
            for klass in self.cls.__mro__
            for name, value in vars(klass).items()
            if type(value).__name__ == "Event"
        }
        found: set[str] = set()
        _scan_machine_reads(code, owners, provided, found)
        return found

    def _state(self, state: DeclaredState, order: int) -> StateDef:
        where = f"state {state.id!r}"
        invoke = [spec for spec in state.invoke if not spec.is_convention]
        conventional_invoke = [
            spec for spec in state.invoke if spec.is_convention and spec.func in self.attributes
        ]
        if invoke or conventional_invoke:
            raise self.refuse(
                "invoke", where, "the compiled runtime runs no child sessions (SCXML <invoke>)"
            )
        return StateDef(
            id=state.id,
            name=str(state.name),
            value=state.value,
            initial=bool(state.initial),
            final=bool(state.final),
            enter=self._callbacks(state.enter, Group.ENTER),
            exit=self._callbacks(state.exit, Group.EXIT),
            order=order,
            parent=state.parent.id if state.parent is not None else None,
            kind=state_kind(state),
        )

    def _transitions(self) -> tuple[TransitionDef, ...]:
        result: list[TransitionDef] = []
        seen: dict[str, int] = {}
        for transition in declared_transitions(self.cls):
            definition = self._transition(transition, len(result))
            count = seen.get(definition.id, 0) + 1
            seen[definition.id] = count
            if count > 1:
                definition = replace(definition, id=f"{definition.id}#{count}")
            result.append(definition)
        return tuple(result)

    def _transition(self, transition: DeclaredTransition, order: int) -> TransitionDef:
        source = transition.source.id
        target = transition.target.id if transition.target is not None else None
        events = tuple(str(event) for event in transition.events)
        extra = tuple(state.id for state in transition.targets[1:])
        return TransitionDef(
            id=f"{source}:{'|'.join(events)}:{target or ''}",
            source=source,
            target=target,
            events=events,
            internal=bool(transition.internal),
            validators=self._callbacks(transition.validators, Group.VALIDATORS),
            cond=self._callbacks(transition.cond, Group.COND),
            before=self._callbacks(transition.before, Group.BEFORE),
            on=self._callbacks(transition.on, Group.ON),
            after=self._callbacks(transition.after, Group.AFTER),
            order=order,
            initial=bool(transition.initial),
            extra_targets=extra,
        )

    def _callbacks(self, specs: Iterable[CallbackSpec], group: Group) -> tuple[CallbackDef, ...]:
        # Kept in declaration order: the reference engine de-duplicates callbacks in that order
        # and only then sorts them by priority, so the binding does both.
        return tuple(self._callback(spec, group) for spec in specs)

    def _callback(self, spec: CallbackSpec, group: Group) -> CallbackDef:
        only_event = None
        if spec.cond is not None:
            only_event = str(getattr(spec.cond, "__self__", ""))
        if spec.reference is SpecReference.NAME:
            ref = str(spec.attr_name)
            kind = RefKind.NAME
            if spec.may_contain_boolean_expression and not ref.isidentifier():
                kind = RefKind.EXPRESSION
            return CallbackDef(
                group=group,
                kind=kind,
                ref=ref,
                priority=int(spec.priority),
                expected=spec.expected_value,
                convention=bool(spec.is_convention),
                only_event=only_event,
                lookup_name=ref,
            )
        function = spec.func
        kind = RefKind.PROPERTY if spec.reference is SpecReference.PROPERTY else RefKind.CALLABLE
        return CallbackDef(
            group=group,
            kind=kind,
            ref=str(spec.attr_name),
            priority=int(spec.priority),
            expected=spec.expected_value,
            convention=False,
            only_event=only_event,
            func=function,
            lookup_name=str(spec.lookup_name),
        )


def custom_init(cls: type[StateChart[Any]]) -> tuple[type, Any] | None:
    """The chart's own ``__init__`` (the class defining it, and the function), if any."""
    for klass in cls.__mro__:
        if _is_user_chart_class(klass) and "__init__" in vars(klass):
            return klass, vars(klass)["__init__"]
    return None


def super_with_arguments(function: Any) -> bool:
    """Whether ``function`` calls ``super(...)`` with arguments (``super(Chart, self)``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return False  # without its source: a wrong hand-over fails at create() instead
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and bool(node.args or node.keywords)
        for node in ast.walk(tree)
    )


def init_fields(function: Any, before_super: bool = False) -> frozenset[str]:
    """The attributes a custom ``__init__`` sets on ``self`` (its per-instance fields): read
    from its source (``self.x = ...``, ``self.x += ...``), or its bytecode without one. With
    ``before_super``, only those set on lines before ``super().__init__(...)``: the ones
    python-statemachine can resolve callback names to, as it resolves them in its own
    ``__init__``."""
    code = function.__code__
    if not code.co_varnames or code.co_argcount == 0:
        return frozenset()
    owner = code.co_varnames[0]
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return frozenset(
            str(instruction.argval)
            for instruction in dis.get_instructions(code)
            if instruction.opname == "STORE_ATTR"
        )
    handover = min(
        (
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__init__"
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super"
        ),
        default=0,
    )
    return frozenset(
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == owner
        and (not before_super or node.lineno < handover)
    )


_LOADS = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE"})
_READS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR"})


def _scan_machine_reads(code: Any, owners: set[str], provided: set[str], found: set[str]) -> None:
    """Collect into ``found`` the attributes ``code`` (and the functions nested in it) reads
    on one of ``owners`` (or ``event_data.machine``) that are not ``provided``; a
    ``getattr(owner, name)`` whose name is not a provided constant counts as ``getattr``."""
    instructions = list(dis.get_instructions(code))
    for index, instruction in enumerate(instructions[:-1]):
        following = instructions[index + 1]
        is_owner = instruction.opname in _LOADS and instruction.argval in owners
        if instruction.opname in _READS and instruction.argval == "machine" and index:
            before = instructions[index - 1]
            is_owner = before.opname in _LOADS and before.argval == "event_data"
        if not is_owner:
            continue
        if following.opname in _READS:
            name = str(following.argval)
            if name not in provided and not name.startswith("__"):
                found.add(name)
        elif (
            index
            and _is_getattr_call(instructions[index - 1])
            and not (following.opname == "LOAD_CONST" and following.argval in provided)
        ):
            found.add("getattr")
    for constant in code.co_consts:
        if hasattr(constant, "co_code"):
            _scan_machine_reads(constant, owners, provided, found)


def _is_getattr_call(instruction: Any) -> bool:
    return instruction.opname in {"LOAD_GLOBAL", "LOAD_NAME"} and instruction.argval in {
        "getattr",
        "NULL + getattr",
    }


def declared_states(cls: type[StateChart[Any]]) -> list[DeclaredState]:
    """Every state of a declared chart, parents first in declaration order, then the history
    pseudo-states (python-statemachine keeps those out of ``states_map``)."""
    states = list(cls.states_map.values())
    histories = [history for state in states for history in state.history]
    return states + histories


def declared_transitions(cls: type[StateChart[Any]]) -> list[DeclaredTransition]:
    """Every transition of a declared chart, by source state in ``declared_states`` order."""
    return [t for state in declared_states(cls) for t in state.transitions]


def state_kind(state: DeclaredState) -> Any:
    """The ``StateDef.kind`` of a declared state."""
    if state.is_history:
        return "deep_history" if getattr(state, "type").is_deep else "shallow_history"  # noqa: B009
    if state.parallel:
        return "parallel"
    return "compound" if state.states else "atomic"


def _function_of(value: Any) -> Any:
    if isinstance(value, staticmethod | classmethod):
        value = value.__func__
    elif isinstance(value, property):
        value = value.fget
    return value if inspect.isfunction(value) else None


def descriptor_matches(descriptor: str, event: str) -> bool:
    """python-statemachine's event matching: ``*``, or the descriptor's dotted tokens a prefix."""
    if descriptor == "*":
        return True
    if descriptor.endswith(".*"):
        descriptor = descriptor[:-2]
    elif descriptor.endswith("."):
        descriptor = descriptor[:-1]
    wanted = descriptor.split(".") if descriptor else []
    given = event.split(".") if event else []
    return len(wanted) <= len(given) and given[: len(wanted)] == wanted


def _delayed_sends(
    states: Iterable[StateDef], transitions: Iterable[TransitionDef]
) -> dict[str, set[float]]:
    """The delays (milliseconds) each event is sent with by the chart's own executable
    content: SCXML ``<send event="..." delay="..."/>`` with a literal event and delay, at any
    depth (inside ``<if>`` and ``<foreach>`` too). Delays given by expressions are not known
    before a run and are left out."""
    found: dict[str, set[float]] = {}
    callbacks = [c for state in states for c in (*state.enter, *state.exit)]
    callbacks += [c for transition in transitions for c in transition.actions]
    pending = [getattr(c.func, "action", None) for c in callbacks if c.func is not None]
    while pending:
        action = pending.pop()
        if action is None:
            continue
        if type(action).__name__ == "SendAction":
            event, delay = getattr(action, "event", None), getattr(action, "delay", None)
            if isinstance(event, str) and isinstance(delay, str) and delay:
                from statemachine.io.actions import ParseTime  # loaded: the chart uses it

                try:
                    milliseconds = ParseTime.time_in_ms(delay)
                except ValueError:
                    continue  # python-statemachine raises it as error.execution when run
                if milliseconds > 0:
                    found.setdefault(event, set()).add(milliseconds)
        for name in ("actions", "branches"):
            inner = getattr(action, name, None)
            if isinstance(inner, list):
                pending.extend(inner)
    return found
