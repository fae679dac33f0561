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
from collections.abc import Iterable, Mapping
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
        "configuration_values",
        "current_state_value",
        "_run_loop",
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
        "configuration_values",
        "current_state_value",
        "state",
        "model",
        "is_terminated",
        "chart",
        "snapshot",
        "clock",
        "next_due",
    }
)


#: Names the compiled instance has that python-statemachine's machine lacks (``model`` aside,
#: set on every machine): a chart method reading one would get an answer compiled where
#: python-statemachine raises ``AttributeError`` (an ``error.execution``), so it is refused.
_ONLY_COMPILED = frozenset(
    name for name in RUNTIME_NAMES | _INSTANCE_API if not hasattr(StateChart, name)
) - {"model"}


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
        self._check_escapes(function, where)

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
        wrapped = inspect.unwrap(function)  # a decorated method: the wrapper and its function
        for code_owner in (function, wrapped) if wrapped is not function else (function,):
            if not inspect.isfunction(code_owner):
                continue
            unsupported = sorted(self._machine_api_used(code_owner))
            if unsupported:
                raise self.refuse(
                    "a chart method using python-statemachine's machine API",
                    f"{self.name}.{name} reads self.{unsupported[0]}",
                    "the compiled instance offers what python-statemachine's machine has of send, "
                    "raise_, cancel_event, configuration, configuration_values, "
                    "current_state_value, model, is_terminated and the event methods",
                )
            if not isinstance(value, staticmethod | classmethod):
                self._check_escapes(code_owner, f"{self.name}.{name}")
        if "__class__" in function.__code__.co_freevars:
            raise self.refuse(
                "a method using zero-argument super()",
                f"{self.name}.{name}",
                "call the base class explicitly",
            )

    def _check_escapes(self, function: Any, where: str) -> None:
        """Refuse a method that hands the machine (``self``, a ``machine`` parameter,
        ``event_data.machine``) to code the scan cannot follow, or to a helper of the module
        that reads python-statemachine's machine API on it: the compiled instance does not
        offer that API, and errors-as-events would swallow the ``AttributeError`` (a silently
        different run)."""
        code = function.__code__
        owners = {"machine"}
        if code.co_varnames and code.co_argcount:
            owners.add(code.co_varnames[0])
        escapes: list[str] = []
        scan = _MachineScan(self._provided(), escapes)
        scan.scan(code, owners, function.__globals__)
        helper_reads = sorted(name for name in scan.found if " (through " in name)
        if helper_reads:
            raise self.refuse(
                "a chart method using python-statemachine's machine API",
                f"{where} reads self.{helper_reads[0]}",
                "the compiled instance offers what python-statemachine's machine has of send, "
                "raise_, cancel_event, configuration, configuration_values, "
                "current_state_value, model, is_terminated and the event methods",
            )
        if escapes:
            raise self.refuse(
                "a chart method handing the machine to code the compiler cannot check",
                f"{where} passes self on (to a callable that is not a plain function of its "
                f"module, such as attrgetter(...)(self), or as a return value or variable) at "
                f"{escapes[0]}",
                "the compiled instance is not python-statemachine's machine: pass self.model, "
                "or the values the code needs",
            )

    def _provided(self) -> set[str]:
        """The attribute names a compiled instance has (its API, the chart's attributes, the
        fields a custom ``__init__`` sets and the declared events)."""
        provided = (set(RUNTIME_NAMES) | _INSTANCE_API) - _ONLY_COMPILED
        provided |= set(self.attributes)
        init = custom_init(self.cls)
        if init is not None:
            provided |= init_fields(init[1])
        provided |= {
            name
            for klass in self.cls.__mro__
            for name, value in vars(klass).items()
            if type(value).__name__ == "Event"
        }
        return provided

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
        scan = _MachineScan(self._provided())
        scan.scan(code, owners)
        return scan.found

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


_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLOSURE"})
_PAIR_LOADS = frozenset({"LOAD_FAST_LOAD_FAST"})
_READS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR"})
#: What may follow loading the machine besides an attribute read: deleting an attribute, and
#: zero-argument ``super()``'s own load of ``self`` (3.12).
_ATTRIBUTE_USES = frozenset({"DELETE_ATTR", "LOAD_SUPER_ATTR"})
#: Tests an owner may be an operand of (``event_data.machine is self``).
_TESTS = frozenset({"IS_OP", "COMPARE_OP"})
#: Loads a call's plain arguments are made of.
_ARGUMENT_LOADS = frozenset(
    {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CONST", "LOAD_FAST_LOAD_FAST"}
)
#: How many code objects (functions, nested ones and helpers) a scan reads before it stops
#: following the machine into helpers (and refuses where it would have followed it).
_HELPER_DEPTH = 64


class _MachineScan:
    """Reads of python-statemachine's machine API in a chart method's bytecode.

    ``found`` collects the attributes a method (and the functions nested in it) reads on one
    of its ``owners`` (``self``, a ``machine`` parameter, ``event_data.machine``) that are not
    ``provided``; a ``getattr(owner, name)`` whose name is not a provided constant counts as
    ``getattr``. With ``escapes`` (a list), the scan also follows the owner where it leaves
    the method: handed as an argument to a plain function of the module, that function is
    scanned the same way, its parameter taking the owner's place (``found`` names it); used
    any other way but as the object of an attribute access or an operand of an identity or
    equality test (``attrgetter(...)(self)``, a builtin, a variable, a return value), the
    place is added to ``escapes``: code outside the scan could read the machine API there.
    """

    def __init__(self, provided: set[str], escapes: list[str] | None = None) -> None:
        self.provided = provided
        self.escapes = escapes
        self.found: set[str] = set()
        self.seen: set[Any] = set()

    def scan(
        self,
        code: Any,
        owners: set[str],
        namespace: Mapping[str, Any] | None = None,
        via: str = "",
    ) -> None:
        """Scan ``code`` (and the functions nested in it) for uses of ``owners``."""
        self.seen.add(code)
        instructions = list(dis.get_instructions(code))
        line = code.co_firstlineno
        for index, instruction in enumerate(instructions):
            positions = getattr(instruction, "positions", None)
            if positions is not None and positions.lineno:
                line = positions.lineno
            if _loads_owner(instructions, index, owners):
                place = f"{code.co_filename.rsplit('/', 1)[-1]}:{line}"
                self._use(code, instructions, index, owners, namespace, via, place)
        for constant in code.co_consts:
            if hasattr(constant, "co_code"):
                self.scan(constant, owners, namespace, via)

    def _use(
        self,
        code: Any,
        instructions: list[Any],
        index: int,
        owners: set[str],
        namespace: Mapping[str, Any] | None,
        via: str,
        place: str,
    ) -> None:
        instruction = instructions[index]
        if _is_pair(instruction):  # two locals at once (3.13): never an attribute's object
            if not _harmless_use(instructions, index, owners):
                self._escape(code, instructions, index, owners, namespace, place)
            return
        read = _attribute_read(instructions, index)
        if read is not None:
            if read not in self.provided and (not read.startswith("__") or read == "__dict__"):
                self.found.add(f"{read}{via}")
        elif index and _is_getattr_call(instructions[index - 1]):
            name = instructions[index + 1] if index + 1 < len(instructions) else None
            if not (
                name is not None and name.opname == "LOAD_CONST" and name.argval in self.provided
            ):
                self.found.add(f"getattr{via}")
        elif instruction.opname != "LOAD_CLOSURE" and not _harmless_use(
            instructions, index, owners
        ):
            # (a closure's cell: the nested function is scanned on its own)
            self._escape(code, instructions, index, owners, namespace, place)

    def _escape(
        self,
        code: Any,
        instructions: list[Any],
        index: int,
        owners: set[str],
        namespace: Mapping[str, Any] | None,
        place: str,
    ) -> None:
        """The owner loaded at ``index`` leaves the method: scan the module function it is an
        argument of, with the parameter it binds as the owner, or record the escape."""
        if self.escapes is None:
            return
        call = _global_call_argument(code, instructions, index, owners)
        callee = namespace.get(call[0]) if call is not None and namespace is not None else None
        parameter = None
        if call is not None and inspect.isfunction(callee) and len(self.seen) <= _HELPER_DEPTH:
            parameter = _parameter(callee.__code__, *call[1:])
        if callee is None or parameter is None:
            self.escapes.append(place)
        elif callee.__code__ not in self.seen:
            through = f" (through {callee.__qualname__}({parameter}), {place})"
            self.scan(callee.__code__, {parameter}, callee.__globals__, through)


def _loads_owner(instructions: list[Any], index: int, owners: set[str]) -> bool:
    """Whether the instruction at ``index`` puts an owner on the stack."""
    instruction = instructions[index]
    argval = instruction.argval
    if _is_pair(instruction):
        return isinstance(argval, tuple) and bool(owners.intersection(argval))
    if instruction.opname in _READS and argval == "machine" and index:
        before = instructions[index - 1]
        return before.opname in _LOADS and before.argval == "event_data"
    return instruction.opname in _LOADS and argval in owners


def _attribute_read(instructions: list[Any], index: int) -> str | None:
    """The attribute read (or written) on the owner loaded at ``index``, if any (``self.x +=
    1`` copies the owner first)."""
    following = instructions[index + 1] if index + 1 < len(instructions) else None
    if following is not None and following.opname == "COPY" and index + 2 < len(instructions):
        following = instructions[index + 2]
    if following is not None and following.opname in _READS:
        return str(following.argval)
    return None


def _harmless_use(instructions: list[Any], index: int, owners: set[str]) -> bool:
    """Whether the owner loaded at ``index`` is the object of an attribute deletion, of
    zero-argument ``super()`` (3.12), or an operand of an ``is`` / ``==``-style test (the
    test right after it, or after exactly one other value: a load and its attributes)."""
    rest = instructions[index + 1 :]
    if not rest:
        return False
    own = instructions[index]
    if _is_pair(own):  # (3.13) the owner on top, or below one other value
        if own.argval[1] in owners:
            return rest[0].opname in _TESTS
        return _tested_after_attributes(rest)
    first = rest[0]
    if first.opname in _TESTS or first.opname in _ATTRIBUTE_USES:
        return True
    if first.opname not in _ARGUMENT_LOADS or _is_pair(first):
        return False
    return _tested_after_attributes(rest[1:])


def _tested_after_attributes(rest: list[Any]) -> bool:
    """Whether ``rest`` reads attributes of the value on top, then tests it against the one
    below."""
    for instruction in rest:
        if instruction.opname != "LOAD_ATTR":
            return instruction.opname in _TESTS
    return False


def _is_pair(instruction: Any) -> bool:
    return instruction.opname in _PAIR_LOADS


def _global_call_argument(
    code: Any, instructions: list[Any], index: int, owners: set[str]
) -> tuple[str, int, int, tuple[str, ...]] | None:
    """If the load at ``index`` is one argument of a call of a global name whose arguments
    are all plain loads (locals, constants, their attributes): the name, the argument's
    position, the number of arguments and the call's keyword names. Otherwise ``None``."""
    before = 0  # arguments loaded before the owner
    start = index - 1
    while start >= 0:
        instruction = instructions[start]
        if instruction.opname == "LOAD_GLOBAL":
            break
        if instruction.opname == "LOAD_ATTR" and start > 0:
            start -= 1  # an attribute of the argument loaded before it
            continue
        if instruction.opname not in _ARGUMENT_LOADS:
            return None
        before += 2 if _is_pair(instruction) else 1
        start -= 1
    else:
        return None
    own = instructions[index]
    if _is_pair(own):  # which of the two locals is the owner (the first, if both)
        offset = 0 if own.argval[0] in owners else 1
        before, after = before + offset, 1 - offset
    else:
        after = 0
    found = _call_after(code, instructions[index + 1 :], before + 1 + after)
    if found is None:
        return None
    count, keywords = found
    return str(instructions[start].argval), before, count, keywords


def _call_after(code: Any, rest: list[Any], loaded: int) -> tuple[int, tuple[str, ...]] | None:
    """The argument count and keyword names of the call ``rest`` makes once its remaining
    plain arguments are loaded (``loaded``: the arguments loaded so far), if it is one."""
    keywords: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # the last tuple constant loaded: CALL_KW's names (3.13)
    for instruction in rest:
        opname = instruction.opname
        if opname in ("PRECALL", "PUSH_NULL", "LOAD_ATTR"):
            continue  # (an attribute of the argument loaded before it)
        if opname == "KW_NAMES":  # 3.11's argval is not the names: read them off the code
            keywords = tuple(code.co_consts[instruction.arg])
        elif opname in _ARGUMENT_LOADS:
            loaded += 2 if _is_pair(instruction) else 1
            constant = instruction.argval if opname == "LOAD_CONST" else None
            names = tuple(constant) if isinstance(constant, tuple) else ()
        elif opname == "CALL_KW" and names:
            loaded, keywords = loaded - 1, names
            break
        elif opname == "CALL":
            break
        else:
            return None
    else:
        return None
    if instruction.arg != loaded or len(keywords) > loaded:
        return None
    return loaded, keywords


def _parameter(code: Any, position: int, count: int, keywords: tuple[str, ...]) -> str | None:
    """The parameter of ``code`` the argument at ``position`` of ``count`` binds (the last
    ``len(keywords)`` passed by those names); ``None`` for ``*args`` or ``**kwargs``, where the
    owner would go on unseen."""
    positional = count - len(keywords)
    if position < positional:
        return str(code.co_varnames[position]) if position < code.co_argcount else None
    keyword = keywords[position - positional]
    named = code.co_varnames[code.co_posonlyargcount : code.co_argcount + code.co_kwonlyargcount]
    return keyword if keyword in named else None


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
