"""Read a declared python-statemachine chart into the IR, refusing what cannot run faithfully.

The reader walks the declaration objects python-statemachine builds when the class is created
(states, transitions and their callback specs, already de-duplicated and checked by its
metaclass); it never instantiates the chart, so no callback runs at compile time.
"""

from __future__ import annotations

import ast
import dis
import functools
import importlib.util
import inspect
import os
import sys
import textwrap
import types
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Any, NamedTuple

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
        "_held",
        "_options",
        "_queues",
        "_refuse_when_stopped",
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
        "_refuses_dropped",
        "_dropped",
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


#: The attributes python-statemachine's machine sets on itself when it is made (an event of
#: that name is no method of the machine there, and ``start_configuration_values`` is read as
#: the states to start in).
_MACHINE_FIELDS = frozenset(
    {
        "_callbacks",
        "_config",
        "_engine",
        "_listeners",
        "history_values",
        "model",
        "start_configuration_values",
        "state_field",
    }
)
#: Names no event may take: the compiled instance's own, python-statemachine's machine's
#: fields, and what its machine reads on itself while it is made or runs (its private
#: names, ``prepare``: an event there makes python-statemachine fail to build the machine).
_TAKEN_NAMES = (
    RUNTIME_NAMES
    | _INSTANCE_API
    | _MACHINE_FIELDS
    | {name for name in dir(StateChart) if name.startswith("_")}
    | {"prepare", "prepare_event"}
)
#: Names no event of a chart with a ``prepare_event`` (every chart python-statemachine's
#: loaders build) may take: its executable content reads it on the machine as the chart's
#: name (``_name``, ``_sessionid``).
_TAKEN_WITH_PREPARE = frozenset({"name"})


def _declares_prepare(cls: type[StateChart[Any]]) -> bool:
    """Whether the chart class has a ``prepare_event`` hook (not an event of that name)."""
    hook = getattr(cls, "prepare_event", None)
    return hook is not None and type(hook).__name__ != "Event"


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


def foreign_machine_use(cls: type[StateChart[Any]], value: Any) -> str | None:
    """What a callback of the model (``value``, the model class's attribute, known only when
    an instance is created) does with the ``machine`` it is given that the compiled instance
    would answer otherwise (``reads machine.state``, ``passes machine on to the builtin type
    ...``), or ``None``. ``value`` is read whatever its form (``_callback_functions``): a
    method, a static or class method, a decorated method (its wrapper and the function under
    it), a ``functools.partialmethod`` or ``partial``, a property (the callable its getter
    hands out), a bound method, an object's ``__call__``."""
    functions = _callback_functions(value)
    if not any(_takes_machine(function.__code__) for function in functions):
        return None
    reader = _Reader(cls)
    escapes: list[str] = []
    scan = _MachineScan(reader._provided(), escapes, reader._events())
    for function in functions:
        _scan_callback(scan, function, _machine_position(functions))
    found = sorted(scan.found)
    if found:
        return _what_it_does(found[0], "machine")
    if escapes:
        return f"passes machine on {escapes[0]}"
    return None


def _scan_callback(scan: _MachineScan, function: Any, machine_at: int | None) -> None:
    """Scan a Python function a callback runs, its ``machine`` (and ``kwargs["machine"]``)
    the owner; a wrapper taking ``*args`` alone is followed where it hands them on, the
    machine at ``machine_at`` among them (``None``: not passed by position)."""
    code = function.__code__
    owners = {"machine"} | _kwargs_owner(code)
    scan.scan(code, owners, function.__globals__, closure=_closure_of(function))
    if machine_at is not None and not code.co_argcount and code.co_flags & inspect.CO_VARARGS:
        place = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
        top = _Where(function.__globals__, _closure_of(function), "", place)
        scan._follow(function, machine_at, machine_at + 1, (), top)


def _callback_functions(value: Any, depth: int = 0) -> list[Any]:
    """The Python functions a callback given as ``value`` runs with the machine among its
    arguments (as ``machine``, never as its first, bound, parameter): a function and the
    functions under its ``functools.wraps`` wrappers, a static or class method's, a bound
    method's, a ``functools.partial``'s or ``partialmethod``'s, a property's getter (with the
    callables it hands out, nested in it), setter and deleter, a callable object's
    ``__call__``. Library code (``_is_library``) is left out."""
    if depth > 8:  # partials of partials ...
        return []
    found: list[Any] = []
    if isinstance(value, staticmethod | classmethod):
        found = _callback_functions(value.__func__, depth + 1)
    elif isinstance(value, property):
        for accessor in (value.fget, value.fset, value.fdel):
            found += _callback_functions(accessor, depth + 1) if accessor is not None else []
    elif isinstance(value, functools.partial | functools.partialmethod):
        found = _callback_functions(value.func, depth + 1)
    elif inspect.ismethod(value):
        found = _callback_functions(value.__func__, depth + 1)
    elif inspect.isfunction(value):
        seen: set[int] = set()
        step: Any = value
        while inspect.isfunction(step) and id(step) not in seen:
            seen.add(id(step))
            found.append(step)
            step = getattr(step, "__wrapped__", None)
        if step is not None and not inspect.isfunction(step):
            found += _callback_functions(step, depth + 1)
    elif callable(value) and not isinstance(value, type):
        call = inspect.getattr_static(type(value), "__call__", None)
        if inspect.isfunction(call):
            found = _callback_functions(call, depth + 1)
    return [function for function in found if not _is_library(function)]


#: The closures python-statemachine's trusted evaluator makes of an expression, and the
#: free variable holding its text.
_TRUSTED_CLOSURES = {
    "PythonEvaluator.compile_value.<locals>.value": "expr",
    "PythonEvaluator.compile_bool.<locals>.cond": "normalized",
}
#: How many objects ``_trusted_expressions`` visits at most in one callback.
_EXPRESSION_WALK = 10_000


def _trusted_expressions(value: Any) -> list[str] | None:
    """The expressions a callback of a document python-statemachine loaded with
    ``trusted=True`` evaluates as Python (``eval``), the machine among their names: those
    its executable content compiled (``<assign expr>``, ``<if cond>``, ``<log expr>``,
    ``<foreach array>``, ``<data expr>``, ``<send delayexpr>``, a ``cond`` ...), found in the
    closures and attributes of python-statemachine's own callables (``statemachine.io``),
    and those a ``<send>`` compiles when it runs (``eventexpr``, its params). A restricted
    (untrusted) document's expressions never get the machine, and are left alone. ``None``:
    past ``_EXPRESSION_WALK`` objects, not all were found."""
    found: list[Any] = []
    seen: set[int] = set()
    pending = [value]
    while pending:
        if len(seen) >= _EXPRESSION_WALK:
            return None
        item = pending.pop()
        if id(item) in seen or isinstance(item, type | str):
            continue
        seen.add(id(item))
        if isinstance(item, list | tuple):
            pending.extend(item)
            continue
        if not _of_loaders(item):
            continue
        if inspect.isfunction(item):
            closure = _closure_of(item)
            text = _TRUSTED_CLOSURES.get(item.__qualname__)
            if text is not None:
                found.append(closure.get(text))
            if _is_trusted(closure.get("evaluator")):
                found += _compiled_when_run(closure.get("action"))
            pending.extend(closure.values())
        if hasattr(item, "__dict__"):
            pending.extend(
                attribute for name, attribute in vars(item).items() if name != "processor"
            )
    return [text for text in found if isinstance(text, str)]


def _reads_attribute(code: Any, name: str) -> bool:
    """Whether ``code`` (or code nested in it) reads the attribute ``name`` of anything (the
    ``_machine`` of a system variable: ``_ioprocessors['scxml']._machine``)."""
    if any(
        instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and instruction.argval == name
        for instruction in dis.get_instructions(code)
    ):
        return True
    return any(
        _reads_attribute(constant, name)
        for constant in code.co_consts
        if hasattr(constant, "co_code")
    )


def _of_loaders(item: Any) -> bool:
    """Whether ``item`` is python-statemachine's loaders' own (a function of, or an object of
    a class of, ``statemachine.io``)."""
    module = item.__module__ if inspect.isfunction(item) else type(item).__module__
    return str(module or "").startswith("statemachine.io")


def _is_trusted(evaluator: Any) -> bool:
    """Whether ``evaluator`` is python-statemachine's trusted (Python) evaluator."""
    kind = type(evaluator)
    return kind.__name__ == "PythonEvaluator" and kind.__module__.startswith("statemachine.io")


def _compiled_when_run(action: Any) -> list[Any]:
    """The expressions a ``<send>`` (``action``) compiles each time it runs."""
    if type(action).__name__ != "SendAction":
        return []
    return [getattr(action, "eventexpr", None)] + [
        getattr(param, "expr", None) for param in getattr(action, "params", None) or ()
    ]


def _machine_position(functions: list[Any]) -> int | None:
    """Where the machine is among the positional arguments a callback's wrappers are given:
    the position of the innermost function's ``machine`` parameter."""
    for function in reversed(functions):
        code = function.__code__
        if code.co_argcount or not code.co_flags & inspect.CO_VARARGS:
            names = code.co_varnames[: code.co_argcount]
            return names.index("machine") if "machine" in names else None
    return None


def _takes_machine(code: Any) -> bool:
    """Whether ``code``, or code nested in it (a callable it hands out), is given the
    machine: a ``machine`` or ``event_data`` parameter, or ``**kwargs``."""
    names = set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    if names & {"machine", "event_data"} or _kwargs_owner(code):
        return True
    return any(
        _takes_machine(constant) for constant in code.co_consts if hasattr(constant, "co_code")
    )


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
        event_names = self._events()
        taken = sorted(event_names & _TAKEN_NAMES)
        if not taken and _declares_prepare(self.cls):
            taken = sorted(event_names & _TAKEN_WITH_PREPARE)
        if taken:
            name = taken[0]
            raise self.refuse(
                "an event named like the runtime's own API or a name python-statemachine's "
                "machine uses itself",
                f"event {name!r}",
                "the compiled instance's attribute would answer where python-statemachine's "
                "event does, or python-statemachine reads the name for its own: rename the "
                "event",
            )
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
        cell_use = _class_cell_use(function.__code__)
        if cell_use is not None:
            raise self.refuse(
                "a custom __init__ using its __class__ cell but for super().name",
                f"{where} {cell_use}",
                "the compiled instance runs a copy of the __init__ whose __class__ is the "
                "compiled instance's class (neither the chart's class nor the class the "
                "__init__ was written in): name the class instead",
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
                f"{where} {_what_it_does(unsupported[0])}",
            )
        self._check_escapes(function, where)

    def _check_attribute(self, name: str, value: Any) -> None:
        if name in RUNTIME_NAMES:
            raise self.refuse(
                "an attribute named like the runtime's own API", f"attribute {name!r}"
            )
        if isinstance(value, functools.cached_property):
            raise self.refuse(
                "a functools.cached_property",
                f"{self.name}.{name}",
                "the compiled instance keeps no per-instance cache: use a property or a method",
            )
        functions = _functions_of(value)
        if not functions:
            return
        if inspect.isasyncgenfunction(functions[0]):
            raise self.refuse("an async generator as a callback", f"{self.name}.{name}")
        # a static or class method (or a partial, no descriptor before 3.14) is given the
        # machine as ``machine``, not as its first parameter (``cls`` of a class method is
        # the chart class)
        takes_self = not isinstance(value, staticmethod | classmethod) and not (
            isinstance(value, functools.partial) and sys.version_info < (3, 14)
        )
        for function in functions:
            self._check_function(name, function, takes_self, isinstance(value, classmethod))

    def _check_function(
        self, name: str, function: Any, takes_self: bool, of_class: bool = False
    ) -> None:
        """Check one function of a chart attribute (a method, a property's getter, setter or
        deleter): the machine API it reads, and where it hands the machine on."""
        wrapped = inspect.unwrap(function)  # a decorated method: the wrapper and its function
        where = f"{self.name}.{name}"
        for code_owner in (function, wrapped) if wrapped is not function else (function,):
            if not inspect.isfunction(code_owner) or _is_library(code_owner):
                continue
            if _uses_super(code_owner.__code__):
                raise self.refuse(
                    "a method using zero-argument super()",
                    where,
                    "call the base class explicitly",
                )
            unsupported = sorted(self._machine_api_used(code_owner, takes_self, of_class))
            if unsupported:
                raise self.refuse(
                    "a chart method using python-statemachine's machine API",
                    f"{where} {_what_it_does(unsupported[0])}",
                    "the compiled instance offers what python-statemachine's machine has of send, "
                    "raise_, cancel_event, configuration, configuration_values, "
                    "current_state_value, model, is_terminated and the event methods",
                )
            self._check_escapes(code_owner, where, takes_self)

    def _check_callable(self, function: Any, where: str) -> None:
        """A callback given as a callable (``on=lambda machine, model: ...``, a
        ``functools.partial``, a bound method of another object, a decorated function, an
        object's ``__call__``), not a chart method: its ``machine`` parameter is the machine,
        scanned as a method's ``self``."""
        functions = _callback_functions(function)
        machine_at = _machine_position(functions)
        for each in functions:
            self._check_escapes(
                each, where, takes_self=False, construct="a callback", machine_at=machine_at
            )

    def _check_expression(self, text: str, where: str) -> None:
        """A trusted document's expression (``_trusted_expressions``): python-statemachine
        evaluates it as Python with the machine among its names (``machine``,
        ``event_data.machine``, ``In.machine``), scanned as a callable's ``machine`` is."""
        try:
            code = compile(text, "<expression>", "eval")
        except (SyntaxError, ValueError):
            return  # it fails when it runs, on both engines alike
        here = f"{where}: {text!r}"
        if _reads_attribute(code, "_machine"):
            raise self.refuse(
                "a trusted expression reaching the machine through _machine",
                here,
                "the compiled instance is not python-statemachine's machine",
            )
        escapes: list[str] = []
        scan = _MachineScan(self._provided(), escapes, self._events())
        scan.scan(code, {"machine", ".In"})
        found = sorted(scan.found)
        if found:
            raise self.refuse(
                "a trusted expression using python-statemachine's machine API",
                f"{here} {_what_it_does(found[0], 'machine')}",
                "the compiled instance offers what python-statemachine's machine has of send, "
                "raise_, cancel_event, configuration, configuration_values, "
                "current_state_value, model, is_terminated and the event methods",
            )
        if escapes:
            raise self.refuse(
                "a trusted expression handing the machine to code the compiler cannot check",
                f"{here} passes machine on {escapes[0]}",
                "the compiled instance is not python-statemachine's machine (nor of its "
                "class): read the datamodel, or what the expression needs off the machine",
            )

    def _check_escapes(
        self,
        function: Any,
        where: str,
        takes_self: bool = True,
        construct: str = "a chart method",
        machine_at: int | None = None,
    ) -> None:
        """Refuse a method that hands the machine (``self``, a ``machine`` parameter,
        ``event_data.machine``) to code the scan cannot follow, or to a helper of the module
        that reads python-statemachine's machine API on it: the compiled instance does not
        offer that API, and errors-as-events would swallow the ``AttributeError`` (a silently
        different run)."""
        code = function.__code__
        escapes: list[str] = []
        scan = _MachineScan(self._provided(), escapes, self._events())
        if takes_self and code.co_varnames and code.co_argcount:
            owners = {"machine", code.co_varnames[0]} | _kwargs_owner(code)
            scan.scan(code, owners, function.__globals__, closure=_closure_of(function))
        else:  # a callable's machine, or a wrapper a method's decorator returned (self: args[0])
            _scan_callback(scan, function, 0 if takes_self else machine_at)
        helper_reads = sorted(name for name in scan.found if " (through " in name)
        if not takes_self:
            helper_reads = sorted(scan.found)
        if helper_reads:
            raise self.refuse(
                f"{construct} using python-statemachine's machine API",
                f"{where} {_what_it_does(helper_reads[0])}",
                "the compiled instance offers what python-statemachine's machine has of send, "
                "raise_, cancel_event, configuration, configuration_values, "
                "current_state_value, model, is_terminated and the event methods",
            )
        if escapes:
            raise self.refuse(
                f"{construct} handing the machine to code the compiler cannot check",
                f"{where} passes self on {escapes[0]}",
                "the compiled instance is not python-statemachine's machine: pass self.model, "
                "or the values the code needs, or hand self to a Python function the compiler "
                "can name (a function of a module, or one wrapped with functools.wraps)",
            )

    def _events(self) -> set[str]:
        """The names of the chart's events (attributes of the machine)."""
        return {
            name
            for klass in self.cls.__mro__
            for name, value in vars(klass).items()
            if type(value).__name__ == "Event"
        }

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

    def _machine_api_used(
        self, function: Any, takes_self: bool = True, of_class: bool = False
    ) -> set[str]:
        """Attributes a chart method reads on the machine that only python-statemachine's
        machine has (``current_state_value``, a state such as ``self.b`` ...): read on
        ``self``, on a ``machine`` parameter or ``event_data.machine``, in a nested function,
        or by ``getattr(self, name)`` with a name not known here. The compiled instance would
        raise ``AttributeError`` there, which errors-as-events would swallow. A static method
        (``takes_self`` false) has no ``self``; a class method's ``cls`` (``of_class``) is
        read as ``self`` is, but for its name (``cls.__name__``, ``__qualname__``): the
        chart's class as a callback, it may be the compiled instance's class (named after
        the chart) when called through ``self``."""
        code = function.__code__
        owners = {"machine"} | _kwargs_owner(code)
        if (takes_self or of_class) and code.co_varnames and code.co_argcount:
            owners.add(code.co_varnames[0])
        scan = _MachineScan(self._provided(), events=self._events())
        if of_class and code.co_varnames and code.co_argcount:
            scan.classes.add(code.co_varnames[0])
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
        if kind is RefKind.CALLABLE:
            self._check_callable(function, f"the {group.value} callback {spec.attr_name}")
            expressions = _trusted_expressions(function)
            if expressions is None:
                raise self.refuse(
                    "executable content too large for the compiler to read",
                    f"the {group.value} callback {spec.attr_name}",
                    f"past {_EXPRESSION_WALK} objects its expressions are not checked",
                )
            for text in expressions:
                self._check_expression(text, f"the {group.value} callback {spec.attr_name}")
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


#: What reads, writes or hands on a function's ``__class__`` cell.
_CELL_OPS = frozenset(
    {
        "LOAD_DEREF",
        "LOAD_CLASSDEREF",
        "LOAD_FROM_DICT_OR_DEREF",
        "LOAD_CLOSURE",
        "STORE_DEREF",
        "DELETE_DEREF",
        "MAKE_CELL",
    }
)
#: What a zero-argument ``super()`` answers with a class: in the compiled instance's copy of
#: a custom ``__init__``, the compiled instance's class and not the chart's.
_SUPER_CLASSES = frozenset({"__thisclass__", "__self_class__"})


def _class_cell_use(code: Any) -> str | None:
    """What a custom ``__init__`` (its ``code``) does with its ``__class__`` cell but for
    zero-argument ``super().name`` (``reads __class__ at file:line``), or ``None``.

    The compiled instance runs a copy of the ``__init__`` whose cell is rebound to the
    compiled instance's class, so that ``super()`` reaches its hand-over; anything else
    reading the cell (``__class__ is Chart``, ``__class__.__name__``, a nested function
    given the cell, ``super()`` kept or asked for its ``__thisclass__``) would get that class
    where python-statemachine's machine gets the class the ``__init__`` was written in."""
    instructions = list(dis.get_instructions(code))
    if "locals" in code.co_names:  # locals() holds the cell's value
        at = next(i for i, op in enumerate(instructions) if op.argval == "locals")
        return f"calls locals(), which holds __class__, at {_place(code, instructions, at)}"
    supers: set[int] = set()  # the cell loads of zero-argument super() (3.12)
    for index, instruction in enumerate(instructions):
        if instruction.opname not in ("LOAD_GLOBAL", "LOAD_NAME") or instruction.argval not in (
            "super",
            "NULL + super",
        ):
            continue
        place = _place(code, instructions, index)
        rest = [
            (at, later)
            for at, later in enumerate(instructions[index + 1 :], index + 1)
            if later.opname not in ("PRECALL", "CACHE", "PUSH_NULL", "EXTENDED_ARG")
        ][:3]
        names = [later.opname for _, later in rest]
        if names[:1] == ["CALL"] and rest[0][1].arg == 0 and len(rest) > 1:  # 3.11
            asked = rest[1][1]
            if asked.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                if asked.argval in _SUPER_CLASSES:
                    return f"asks super() for {asked.argval} at {place}"
                continue
        elif (
            names[:1] == ["LOAD_DEREF"]
            and rest[0][1].argval == "__class__"
            and len(rest) == 3
            and rest[1][1].opname in _LOADS
            and names[2] == "LOAD_SUPER_ATTR"
        ):  # 3.12: super's own load of the cell
            if str(rest[2][1].argval) in _SUPER_CLASSES:
                return f"asks super() for {rest[2][1].argval} at {place}"
            supers.add(rest[0][0])
            continue
        return f"uses super() other than as super().name at {place}"
    for index, instruction in enumerate(instructions):
        if (
            instruction.opname in _CELL_OPS
            and instruction.argval == "__class__"
            and index not in supers
        ):
            what = (
                "hands __class__ to a nested function"
                if (instruction.opname == "LOAD_CLOSURE")
                else "uses __class__"
            )
            return f"{what} at {_place(code, instructions, index)}"
    return None


def _uses_super(code: Any) -> bool:
    """Whether ``code`` (or code nested in it) names ``super``: a chart method's
    zero-argument ``super()`` would get the compiled instance as ``self``, not an instance of
    the class the method was written in. (Its ``__class__`` cell alone is that class on both
    engines: a method's copy is not rebound.)"""
    if "super" in code.co_names:
        return True
    return any(
        _uses_super(constant) for constant in code.co_consts if hasattr(constant, "co_code")
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


#: (``LOAD_NAME``: a name of a trusted document's expression, evaluated with the machine.)
_LOADS = frozenset(
    {
        "LOAD_FAST",
        "LOAD_FAST_CHECK",
        "LOAD_FAST_BORROW",
        "LOAD_DEREF",
        "LOAD_CLOSURE",
        "LOAD_NAME",
    }
)
#: Two locals at once (3.13; the borrowing form, 3.14).
_PAIR_LOADS = frozenset({"LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
_READS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR"})
#: What may follow loading the machine besides an attribute read: deleting an attribute, and
#: zero-argument ``super()``'s own load of ``self`` (3.12).
_ATTRIBUTE_USES = frozenset({"DELETE_ATTR", "LOAD_SUPER_ATTR"})
#: Tests an owner may be an operand of (``event_data.machine is self``).
_TESTS = frozenset({"IS_OP", "COMPARE_OP"})
#: Loads a call's plain arguments are made of.
_ARGUMENT_LOADS = frozenset(
    {
        "LOAD_FAST",
        "LOAD_FAST_CHECK",
        "LOAD_FAST_BORROW",
        "LOAD_DEREF",
        "LOAD_CONST",
        "LOAD_NAME",
        "LOAD_SMALL_INT",
    }
    | _PAIR_LOADS
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
    the method: handed as an argument to a call (whatever the other arguments are) of a Python
    function it can name statically (a global of the module, a function of an imported module
    or a plain class, a closure's function, through ``functools.wraps``-style wrappers that
    hand ``*args, **kwargs`` on whole), that function is scanned the same way, its parameter
    taking the owner's place (``found`` names it); used any other way but as the object of an
    attribute access or an operand of an identity or equality test (``attrgetter(...)(self)``,
    a builtin, a variable, a return value, an operand), a description of the place is added to
    ``escapes``: code outside the scan could read the machine API there.
    """

    def __init__(
        self,
        provided: set[str],
        escapes: list[str] | None = None,
        events: AbstractSet[str] = frozenset(),
    ) -> None:
        self.provided = provided
        self.escapes = escapes
        #: the chart's events: ``self.approve`` is python-statemachine's ``BoundEvent`` (with
        #: ``name``, ``id`` ...) but the compiled instance's method
        self.events = events
        self.found: set[str] = set()
        #: owners that are a class (a class method's ``cls``): its name is read alike
        self.classes: set[str] = set()
        self.seen: set[tuple[Any, Any]] = set()

    def scan(
        self,
        code: Any,
        owners: set[str],
        namespace: Mapping[str, Any] | None = None,
        via: str = "",
        closure: Mapping[str, Any] | None = None,
    ) -> None:
        """Scan ``code`` (and the functions nested in it) for uses of ``owners``; ``closure``
        holds the values of ``code``'s free variables, where known."""
        key = (code, frozenset(owners))
        if key in self.seen:
            return
        self.seen.add(key)
        instructions = list(dis.get_instructions(code))
        for index in range(len(instructions)):
            if _loads_owner(instructions, index, owners):
                place = _place(code, instructions, index)
                self._use(
                    code, instructions, index, owners, _Where(namespace, closure, via, place)
                )
            elif (
                self.escapes is not None
                and instructions[index].opname in _LOADS
                and _is_carrier(instructions[index].argval, owners)
                and _attribute_read(instructions, index) is None
            ):
                place = _place(code, instructions, index)
                self._carry(code, instructions, index, _Where(namespace, closure, via, place))
        for constant in code.co_consts:
            if hasattr(constant, "co_code"):
                self.scan(constant, owners, namespace, via)

    def _use(
        self, code: Any, instructions: list[Any], index: int, owners: set[str], where: _Where
    ) -> None:
        instruction = instructions[index]
        if _is_pair(instruction):  # two locals at once (3.13): never an attribute's object
            if not (
                _harmless_use(instructions, index, owners)
                and _safely_tested(instructions, index, owners)
            ):
                for slot, name in enumerate(reversed(instruction.argval)):
                    if name in owners:  # slot 0: the second local, on top
                        self._escape(code, instructions, index, slot, where)
            return
        read = _attribute_read(instructions, index)
        if read is not None:
            self._attribute(read, instructions, index, where)
        elif index and _is_getattr_call(instructions[index - 1]):
            name = instructions[index + 1] if index + 1 < len(instructions) else None
            if not (
                name is not None and name.opname == "LOAD_CONST" and name.argval in self.provided
            ):
                self.found.add(f"getattr{where.via}")
        elif instruction.opname != "LOAD_CLOSURE" and not (
            _harmless_use(instructions, index, owners)
            and _safely_tested(instructions, index, owners)
        ):
            # (a closure's cell: the nested function is scanned on its own)
            self._escape(code, instructions, index, 0, where)

    def _attribute(self, read: str, instructions: list[Any], index: int, where: _Where) -> None:
        """The attribute ``read`` (or set) on the owner loaded at ``index``."""
        if read in _SAME_DUNDERS and _stores(instructions, index):
            self.found.add(f"{_SET}{read}{where.via}")
        elif instructions[index].argval in self.classes and read in _CLASS_NAMING:
            if _stores(instructions, index):
                self.found.add(f"{_SET}{read}{where.via}")
        elif read not in self.provided and not _answered_alike(read, instructions, index):
            self.found.add(f"{read}{where.via}")
        elif read in self.events:
            following = _after_read(instructions, index)
            if following is not None and following.opname == "LOAD_ATTR":
                self.found.add(f"{read}.{following.argval}{where.via}")

    def _escape(
        self, code: Any, instructions: list[Any], index: int, above: int, where: _Where
    ) -> None:
        """The owner loaded at ``index`` (``above`` values above it) leaves the method: follow
        it into the function it is an argument of, or record the escape."""
        if self.escapes is None:
            return
        call = _call_of(code, instructions, index, above)
        if call is None:
            self._record(_AS_VALUE, where)
            return
        consumer, position, count, keywords = call
        callee = _callable(instructions, consumer, count, where.namespace, where.closure)
        if (
            callee is type
            and count == 1
            and not keywords
            and _names_the_class(instructions, consumer)
        ):
            return  # type(machine).__name__: the compiled instance's class answers alike
        self._follow(callee, position, count, keywords, where)

    def _follow(
        self, callee: Any, position: int, count: int, keywords: tuple[str, ...], where: _Where
    ) -> None:
        """Scan the Python function ``callee`` with the parameter the owner (the argument at
        ``position`` of ``count``, the last ``keywords`` by name) binds as its owner."""
        if callee is _UNKNOWN:
            self._record(_UNRESOLVED, where)
            return
        if not inspect.isfunction(callee):
            self._record(
                f"to {_describe(callee)}, not a Python function the compiler can read", where
            )
            return
        if len(self.seen) > _HELPER_DEPTH:
            self._record(f"to {callee.__qualname__} past {_HELPER_DEPTH} helpers", where)
            return
        code = callee.__code__
        bound = _bind(code, position, count, keywords)
        if bound is None:
            self._record(f"to {callee.__qualname__}, which has no parameter it binds", where)
        elif isinstance(bound, str):
            through = f" (through {callee.__qualname__}({bound}), {where.place}){where.via}"
            self.scan(code, {bound}, callee.__globals__, through, _closure_of(callee))
        else:
            self._forward(callee, bound, count - len(keywords), keywords, where)

    def _forward(
        self,
        callee: Any,
        bound: tuple[str, int | str],
        positional: int,
        keywords: tuple[str, ...],
        where: _Where,
    ) -> None:
        """The owner went into ``callee``'s ``*args`` (``("*", index)``) or ``**kwargs``
        (``("**", keyword)``): follow it where they are handed on whole, as a
        ``functools.wraps`` wrapper does (``function(*args, **kwargs)``); any other use of
        them is an escape."""
        code = callee.__code__
        key = (code, bound)
        if key in self.seen:
            return
        self.seen.add(key)
        star, kwargs = _packed_names(code)
        name = star if bound[0] == "*" else kwargs
        inside = f"inside {callee.__qualname__}, which uses {bound[0]}{name}"
        if name is None or name in code.co_cellvars:
            self._record(f"{inside} in a nested function", where)
            return
        instructions = list(dis.get_instructions(code))
        namespace, closure = callee.__globals__, _closure_of(callee)
        # the keywords the wrapper's named parameters do not take go on in **kwargs
        named = set(
            code.co_varnames[code.co_posonlyargcount : code.co_argcount + code.co_kwonlyargcount]
        )
        passed_on = tuple(keyword for keyword in keywords if keyword not in named)
        for index, instruction in enumerate(instructions):
            if not (instruction.opname in _LOADS and instruction.argval == name) and not (
                _is_pair(instruction) and name in instruction.argval
            ):
                continue
            place = _place(code, instructions, index)
            via = f" (through {callee.__qualname__}({bound[0]}{name}), {where.place}){where.via}"
            here = _Where(namespace, closure, via, place)
            handed = _handed_on(code, instructions, index, star, kwargs)
            if handed is None:
                self._record(f"{inside} other than handing it on whole", here)
                continue
            consumer, with_star, with_kwargs = handed
            if bound[0] == "*" and with_star:
                count = positional - code.co_argcount
                new_keywords = passed_on if with_kwargs else ()
                position: int = int(bound[1])
            elif bound[0] == "**" and with_kwargs:
                count = positional - code.co_argcount if with_star else 0
                new_keywords = passed_on
                position = count + new_keywords.index(str(bound[1]))
            else:  # the owner is not in what this call hands on
                continue
            if count < 0:
                self._record(f"{inside} other than handing it on whole", here)
                continue
            # the callable is below the tuple (and the dict)
            below = 2 if with_kwargs else 1
            callee_on = _callable(instructions, consumer, below, namespace, closure, extra=0)
            self._follow(callee_on, position, count + len(new_keywords), new_keywords, here)

    def _carry(self, code: Any, instructions: list[Any], index: int, where: _Where) -> None:
        """``event_data`` (its ``machine`` the owner) handed on whole: scan the Python
        function it is an argument of, its parameter's ``machine`` the owner there. (Handed
        anywhere else, it is left alone: the machine is not reached through it here.)"""
        call = _call_of(code, instructions, index, 0)
        if call is None:
            return
        consumer, position, count, keywords = call
        callee = _callable(instructions, consumer, count, where.namespace, where.closure)
        if not inspect.isfunction(callee) or len(self.seen) > _HELPER_DEPTH:
            return
        bound = _bind(callee.__code__, position, count, keywords)
        if isinstance(bound, str):
            through = f" (through {callee.__qualname__}({bound}), {where.place}){where.via}"
            owners = {"machine", f".{bound}"}
            self.scan(callee.__code__, owners, callee.__globals__, through, _closure_of(callee))

    def _record(self, what: str, where: _Where) -> None:
        assert self.escapes is not None
        self.escapes.append(f"{what} at {where.place}{where.via}")


class _Where(NamedTuple):
    """Where a use of the owner is: the module's names, the closure's values, the helpers
    the owner was followed through (``via``) and the file and line (``place``)."""

    namespace: Mapping[str, Any] | None
    closure: Mapping[str, Any] | None
    via: str
    place: str


_AS_VALUE = (
    "as a value the compiler cannot follow (a variable, a return value, an operand, a "
    "container, a conditional argument)"
)
_UNRESOLVED = (
    "to a callable the compiler cannot name statically (a method of an object, a subscript, "
    "a call's result, getattr(...))"
)
#: Dunder attributes the compiled instance answers as python-statemachine's machine does
#: when read (``__dict__`` ... differ, and ``__class__`` but for its name: the instance is not
#: of the chart's class). Set, they differ: python-statemachine's machine keeps them in its
#: ``__dict__``, the compiled instance's are its class's, read-only.
_SAME_DUNDERS = frozenset({"__doc__", "__module__"})
#: What the compiled instance's class answers as the chart's class does: it is named after
#: the chart (``type(self).__name__``, ``self.__class__.__qualname__``), but it is not that
#: class, so any other use of ``self.__class__`` or ``type(self)`` is refused.
_CLASS_NAMING = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})
#: A callee the scan cannot name.
_UNKNOWN: Any = object()


def _place(code: Any, instructions: list[Any], index: int) -> str:
    """``file:line`` of the instruction at ``index``."""
    line = code.co_firstlineno
    for instruction in instructions[: index + 1]:
        positions = getattr(instruction, "positions", None)
        if positions is not None and positions.lineno:
            line = positions.lineno
    return f"{code.co_filename.rsplit('/', 1)[-1]}:{line}"


def _describe(value: Any) -> str:
    """A callee the scan cannot read, as a message names it."""
    if inspect.isbuiltin(value):
        return f"the builtin {getattr(value, '__qualname__', value)}"
    if isinstance(value, type):
        return f"the class {value.__qualname__}"
    kind = type(value)
    what = f"{kind.__module__}.{kind.__qualname__}"
    name = getattr(value, "__qualname__", None)
    described = f"{name}, a {what}" if isinstance(name, str) else f"a {what} object"
    if hasattr(value, "__wrapped__"):  # functools.lru_cache, a class-based decorator ...
        described += " (a decorator whose wrapper is no Python function)"
    return described


def _closure_of(function: Any) -> dict[str, Any]:
    """The values of ``function``'s free variables (those already set)."""
    values: dict[str, Any] = {}
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or (), strict=False):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    return values


def _packed_names(code: Any) -> tuple[str | None, str | None]:
    """The names of ``code``'s ``*args`` and ``**kwargs`` parameters (``None``: none)."""
    at = code.co_argcount + code.co_kwonlyargcount
    star = kwargs = None
    if code.co_flags & inspect.CO_VARARGS:
        star = code.co_varnames[at]
        at += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        kwargs = code.co_varnames[at]
    return star, kwargs


def _bind(
    code: Any, position: int, count: int, keywords: tuple[str, ...]
) -> str | tuple[str, int | str] | None:
    """What the argument at ``position`` of ``count`` (the last ``len(keywords)`` passed by
    those names) binds in ``code``: a parameter's name, ``("*", index)`` in ``*args``,
    ``("**", keyword)`` in ``**kwargs``, or ``None`` (no parameter takes it)."""
    positional = count - len(keywords)
    if position < positional:
        if position < code.co_argcount:
            return str(code.co_varnames[position])
        if code.co_flags & inspect.CO_VARARGS:
            return ("*", position - code.co_argcount)
        return None
    keyword = keywords[position - positional]
    named = code.co_varnames[code.co_posonlyargcount : code.co_argcount + code.co_kwonlyargcount]
    if keyword in named:
        return keyword
    if code.co_flags & inspect.CO_VARKEYWORDS:
        return ("**", keyword)
    return None


#: Instructions that push one value and pop none.
_PUSH_ONE = frozenset(
    {
        "LOAD_FAST",
        "LOAD_FAST_CHECK",
        "LOAD_FAST_BORROW",
        "LOAD_CONST",
        "LOAD_SMALL_INT",
        "LOAD_DEREF",
        "LOAD_CLOSURE",
        "LOAD_NAME",
        "PUSH_NULL",
    }
)
#: Instructions that leave the stack as it is.
_NEUTRAL = frozenset(
    {"NOP", "RESUME", "CACHE", "EXTENDED_ARG", "PRECALL", "KW_NAMES", "NOT_TAKEN"}
)
_UNARY = frozenset(
    {
        "UNARY_NEGATIVE",
        "UNARY_NOT",
        "UNARY_INVERT",
        "UNARY_POSITIVE",
        "TO_BOOL",
        "FORMAT_SIMPLE",
        "CONVERT_VALUE",
    }
)
_BINARY = frozenset(
    {"BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "FORMAT_WITH_SPEC"}
)
_BUILDS = frozenset({"BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"})
_CALLS = frozenset({"CALL", "CALL_KW"})


_MERGES = frozenset({"DICT_MERGE", "DICT_UPDATE", "LIST_EXTEND", "SET_UPDATE", "LIST_APPEND"})
#: (pops, pushes) of the instructions whose effect does not depend on their argument.
_FIXED_EFFECTS: dict[str, tuple[int, int]] = {
    **dict.fromkeys(_PUSH_ONE, (0, 1)),
    **dict.fromkeys(_NEUTRAL, (0, 0)),
    **dict.fromkeys(_PAIR_LOADS, (0, 2)),
    **dict.fromkeys(_UNARY, (1, 1)),
    **dict.fromkeys(_BINARY, (2, 1)),
    **dict.fromkeys(_MERGES, (1, 0)),  # into a container further down, which stays
    "LOAD_METHOD": (1, 2),
    "COPY": (0, 1),
}
_METHOD_FLAG_ON_LOAD_ATTR = sys.version_info >= (3, 12)
#: (pops, pushes) of the others, from their argument.
_ARGUMENT_EFFECTS: dict[str, Callable[[int], tuple[int, int]]] = {
    "LOAD_GLOBAL": lambda arg: (0, 1 + (arg & 1)),  # and a NULL, for a call
    "LOAD_ATTR": lambda arg: (1, 1 + (arg & 1 if _METHOD_FLAG_ON_LOAD_ATTR else 0)),
    **dict.fromkeys(_BUILDS, lambda arg: (arg, 1)),
    "BUILD_MAP": lambda arg: (2 * arg, 1),
    "BUILD_CONST_KEY_MAP": lambda arg: (arg + 1, 1),
    "FORMAT_VALUE": lambda arg: (2 if arg & 4 else 1, 1),
    "CALL": lambda arg: (arg + 2, 1),
    "CALL_KW": lambda arg: (arg + 3, 1),
    "CALL_FUNCTION_EX": lambda arg: (4 if sys.version_info >= (3, 14) else 3 + (arg & 1), 1),
}


def _stack_effect(instruction: Any) -> tuple[int, int] | None:
    """How many values ``instruction`` pops and pushes, for the straight-line code of a call's
    arguments; ``None`` for any other instruction (a jump, a store, a return ...)."""
    fixed = _FIXED_EFFECTS.get(instruction.opname)
    if fixed is not None:
        return fixed
    by_argument = _ARGUMENT_EFFECTS.get(instruction.opname)
    return None if by_argument is None else by_argument(instruction.arg or 0)


def _joined(instruction: Any) -> bool:
    """Whether a jump lands on ``instruction`` (the stack there may come from elsewhere)."""
    return bool(getattr(instruction, "is_jump_target", False))


def _call_of(
    code: Any, instructions: list[Any], index: int, above: int
) -> tuple[int, int, int, tuple[str, ...]] | None:
    """If the value loaded at ``index`` (``above`` values above it) is an argument of a call
    in the straight-line code after it: the call's index, the argument's position, the number
    of arguments and the keyword names of the last ones. Otherwise ``None``."""
    for at in range(index + 1, len(instructions)):
        instruction = instructions[at]
        effect = _stack_effect(instruction)
        if effect is None or _joined(instruction):
            return None
        if instruction.opname == "COPY" and instruction.arg - 1 == above:
            return None  # the value copied: two references to follow
        pops, pushes = effect
        if pops > above:
            if instruction.opname not in _CALLS:
                return None
            count = instruction.arg
            extra = 1 if instruction.opname == "CALL_KW" else 0  # the names tuple on top
            if above < extra or above - extra >= count:
                return None  # the callable itself, or the object of a method call
            keywords = _keywords(code, instructions, at)
            if keywords is None or len(keywords) > count:
                return None
            return at, count - 1 - (above - extra), count, keywords
        above += pushes - pops
    return None


def _keywords(code: Any, instructions: list[Any], call: int) -> tuple[str, ...] | None:
    """The keyword names of the call at ``call``: ``KW_NAMES`` before it (3.11, 3.12), the
    tuple ``CALL_KW`` takes (3.13), or none."""
    if instructions[call].opname == "CALL_KW":
        found = _producer(instructions, call, 0)
        if found is None or instructions[found[0]].opname != "LOAD_CONST":
            return None
        names = instructions[found[0]].argval
        return tuple(names) if isinstance(names, tuple) else None
    at = call - 1
    while at >= 0 and instructions[at].opname in ("PRECALL", "CACHE", "EXTENDED_ARG"):
        at -= 1
    if at >= 0 and instructions[at].opname == "KW_NAMES":
        return tuple(code.co_consts[instructions[at].arg])
    return ()


def _producer(instructions: list[Any], end: int, depth: int) -> tuple[int, int] | None:
    """The instruction (its index) of the straight-line code before ``end`` that pushed the
    value ``depth`` deep on the stack at ``end``, and which of its pushes it is (0: the
    first, the deepest)."""
    for at in range(end - 1, -1, -1):
        if _joined(instructions[at + 1]):
            return None
        effect = _stack_effect(instructions[at])
        if effect is None:
            return None
        pops, pushes = effect
        if depth < pushes:
            return at, pushes - 1 - depth
        depth += pops - pushes
    return None


def _callable(
    instructions: list[Any],
    call: int,
    count: int,
    namespace: Mapping[str, Any] | None,
    closure: Mapping[str, Any] | None,
    extra: int | None = None,
) -> Any:
    """The function the call at ``call`` calls (``count`` arguments above it, and the names
    tuple of ``CALL_KW``), named statically: below the arguments, a ``NULL`` and the callable
    in either order (3.11-3.12 and 3.13 lay them out differently). ``_UNKNOWN`` otherwise,
    and for a method call on an object (its ``self`` below the arguments)."""
    if extra is None:
        extra = 1 if instructions[call].opname == "CALL_KW" else 0
    upper = _producer(instructions, call, extra + count)
    lower = _producer(instructions, call, extra + count + 1)
    if upper is None or lower is None:
        return _UNKNOWN
    if upper[0] == lower[0]:  # one instruction pushed both: a global or an attribute and NULL
        return _value(instructions, upper[0], namespace, closure, both=True)
    for null, value in ((lower, upper), (upper, lower)):
        if instructions[null[0]].opname == "PUSH_NULL":
            return _value(instructions, value[0], namespace, closure)
    return _UNKNOWN


def _value(
    instructions: list[Any],
    at: int,
    namespace: Mapping[str, Any] | None,
    closure: Mapping[str, Any] | None,
    both: bool = False,
) -> Any:
    """The value the instruction at ``at`` loads, where it is known before the code runs: a
    global or builtin, a closure's value, an attribute of a module or of a plain class (a
    function or a static method); ``_UNKNOWN`` otherwise. ``both``: the instruction pushed
    the value and a ``NULL``, as for a call."""
    instruction = instructions[at]
    opname, name = instruction.opname, instruction.argval
    effect = _stack_effect(instruction)
    if effect is None or effect[1] != (2 if both else 1):
        return _UNKNOWN
    if opname == "LOAD_GLOBAL" and namespace is not None:
        if name in namespace:
            return namespace[name]
        builtins = namespace.get("__builtins__", {})
        builtins = builtins if isinstance(builtins, dict) else vars(builtins)
        return builtins.get(name, _UNKNOWN)
    if opname == "LOAD_DEREF" and closure is not None:
        return closure.get(name, _UNKNOWN)
    if opname in ("LOAD_ATTR", "LOAD_METHOD"):
        below = _producer(instructions, at, 0)
        if below is None:
            return _UNKNOWN
        owner = _value(instructions, below[0], namespace, closure)
        if isinstance(owner, types.ModuleType) and not hasattr(type(owner), name):
            return vars(owner).get(name, _UNKNOWN)  # never a module's __getattr__
        if isinstance(owner, type) and _plain_class(owner) and not hasattr(type(owner), name):
            found = inspect.getattr_static(owner, name, _UNKNOWN)
            if isinstance(found, staticmethod):
                return found.__func__
            return found if inspect.isfunction(found) else _UNKNOWN
    return _UNKNOWN


def _handed_on(
    code: Any, instructions: list[Any], index: int, star: str | None, kwargs: str | None
) -> tuple[int, bool, bool] | None:
    """If the ``*args`` or ``**kwargs`` loaded at ``index`` is handed on whole to a call,
    ``function(*args)``, ``function(*args, **kwargs)`` or ``function(**kwargs)``: the call's
    index and whether it hands on ``*args`` and ``**kwargs``. Otherwise ``None``."""
    names = [instruction.opname for instruction in instructions]
    values = [instruction.argval for instruction in instructions]
    loaded = values[index]
    if loaded == star:
        if (
            names[index + 1 : index + 2] == ["CALL_FUNCTION_EX"]
            and not instructions[index + 1].arg
        ):
            return index + 1, True, False
        if (
            names[index + 1 : index + 5]
            == ["BUILD_MAP", "LOAD_FAST", "DICT_MERGE", "CALL_FUNCTION_EX"]
            and values[index + 2] == kwargs
            and instructions[index + 1].arg == 0
        ):
            return index + 4, True, True
        return None
    if loaded == kwargs and index >= 2 and names[index - 1] == "BUILD_MAP":
        if names[index + 1 : index + 3] != ["DICT_MERGE", "CALL_FUNCTION_EX"]:
            return None
        before = instructions[index - 2]
        if before.opname in _LOADS and before.argval == star:
            return index + 2, True, True
        if before.opname == "LOAD_CONST" and before.argval == ():
            return index + 2, False, True
    return None


def _is_carrier(name: Any, owners: set[str]) -> bool:
    """Whether the local ``name`` holds an ``EventData`` (its ``machine`` an owner):
    ``event_data``, or a helper's parameter it was handed to (``.name`` among the owners)."""
    return name == "event_data" or f".{name}" in owners


def _kwargs_machine(instructions: list[Any], index: int, owners: set[str]) -> bool:
    """Whether the instruction at ``index`` ends ``kwargs["machine"]`` or
    ``kwargs.get("machine")``, ``kwargs`` a callback's ``**kwargs`` (``**kwargs`` among the
    owners): python-statemachine passes the machine among the keyword arguments."""
    instruction = instructions[index]
    at = index - 1
    if instruction.opname == "CALL":
        while at >= 0 and instructions[at].opname in ("PRECALL", "CACHE"):
            at -= 1
        if instruction.arg != 1 or at < 2:
            return False
        getter = instructions[at - 1]
        if getter.opname not in ("LOAD_METHOD", "LOAD_ATTR") or getter.argval != "get":
            return False
        key, holder = instructions[at], instructions[at - 2]
    elif instruction.opname == "BINARY_SUBSCR" and at >= 1:
        key, holder = instructions[at], instructions[at - 1]
    else:
        return False
    return (
        key.opname == "LOAD_CONST"
        and key.argval == "machine"
        and holder.opname in _LOADS
        and f"**{holder.argval}" in owners
    )


def _loads_owner(instructions: list[Any], index: int, owners: set[str]) -> bool:
    """Whether the instruction at ``index`` puts an owner on the stack."""
    instruction = instructions[index]
    if instruction.opname in ("CALL", "BINARY_SUBSCR"):
        return _kwargs_machine(instructions, index, owners)
    argval = instruction.argval
    if _is_pair(instruction):
        return isinstance(argval, tuple) and bool(owners.intersection(argval))
    if instruction.opname in _READS and argval == "machine" and index:
        before = instructions[index - 1]
        return before.opname in _LOADS and _is_carrier(before.argval, owners)
    return instruction.opname in _LOADS and argval in owners


def _plain_class(owner: type) -> bool:
    """Whether the functions of ``owner`` can be read off its ``__dict__``s: a class of
    ``type``, or one of the user's chart classes (python-statemachine's metaclass)."""
    if type(owner) is type:
        return True
    return issubclass(owner, StateChart) and _is_user_chart_class(owner)


def _after_read(instructions: list[Any], index: int) -> Any:
    """The instruction after the attribute read of the owner loaded at ``index``."""
    at = index + 1
    if at < len(instructions) and instructions[at].opname == "COPY":
        at += 1
    return instructions[at + 1] if at + 1 < len(instructions) else None


def _attribute_read(instructions: list[Any], index: int) -> str | None:
    """The attribute read (or written) on the owner loaded at ``index``, if any (``self.x +=
    1`` copies the owner first)."""
    following = instructions[index + 1] if index + 1 < len(instructions) else None
    if following is not None and following.opname == "COPY" and index + 2 < len(instructions):
        following = instructions[index + 2]
    if following is not None and following.opname in _READS:
        return str(following.argval)
    return None


def _stores(instructions: list[Any], index: int) -> bool:
    """Whether the attribute access on the owner loaded at ``index`` sets the attribute
    (``self.x = ...``, or ``self.x += ...``: the owner copied first)."""
    following = instructions[index + 1] if index + 1 < len(instructions) else None
    return following is not None and following.opname in ("STORE_ATTR", "COPY")


#: Marks a ``found`` entry the code sets (``self.__doc__ = ...``) rather than reads.
_SET = "="


def _what_it_does(found: str, owner: str = "self") -> str:
    """A ``found`` entry as a message says it: ``reads self.x`` or ``sets self.__doc__``."""
    if found.startswith(_SET):
        return f"sets {owner}.{found[len(_SET) :]}"
    return f"reads {owner}.{found}"


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


def _safely_tested(instructions: list[Any], index: int, owners: set[str]) -> bool:
    """Whether a use ``_harmless_use`` allows is safe: an ``is`` test, or an ``==``-style
    test against a constant or the machine itself. ``self == other`` hands ``self`` to
    ``other.__eq__``, code the scan does not read (it could ask what ``self`` is)."""
    test = next(
        (at for at in range(index + 1, len(instructions)) if instructions[at].opname in _TESTS),
        None,
    )
    if test is None or instructions[test].opname != "COMPARE_OP":
        return True
    top, below = _producer(instructions, test, 0), _producer(instructions, test, 1)
    if top is None or below is None:
        return False
    if top[0] == below[0]:  # (3.13) two locals loaded at once
        return all(name in owners for name in instructions[top[0]].argval)
    other = below[0] if top[0] == index else top[0]
    if other == index:
        other = below[0]
    return instructions[other].opname == "LOAD_CONST" or _loads_owner(instructions, other, owners)


def _tested_after_attributes(rest: list[Any]) -> bool:
    """Whether ``rest`` reads attributes of the value on top, then tests it against the one
    below."""
    for instruction in rest:
        if instruction.opname != "LOAD_ATTR":
            return instruction.opname in _TESTS
    return False


def _answered_alike(read: str, instructions: list[Any], index: int) -> bool:
    """Whether the dunder ``read`` on the owner loaded at ``index`` gets python-statemachine's
    answer: ``__doc__``, ``__module__``, and ``__class__`` when only its name is read off it
    (``machine.__class__.__name__``)."""
    if read in _SAME_DUNDERS:
        return True
    return read == "__class__" and _names_the_class(instructions, index + 1)


def _names_the_class(instructions: list[Any], at: int) -> bool:
    """Whether the instruction at ``at`` pushes the machine's class (``machine.__class__``,
    ``type(machine)``) and the next one only reads one of ``_CLASS_NAMING`` off it (the
    class neither stored, nor copied, nor used otherwise)."""
    if instructions[at].opname not in ("LOAD_ATTR", "CALL"):
        return False
    following = at + 1
    while following < len(instructions) and instructions[following].opname in (
        "CACHE",
        "EXTENDED_ARG",
    ):
        following += 1
    if following >= len(instructions) or _joined(instructions[following]):
        return False
    name = instructions[following]
    return name.opname == "LOAD_ATTR" and name.argval in _CLASS_NAMING


def _is_pair(instruction: Any) -> bool:
    return instruction.opname in _PAIR_LOADS


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


def _functions_of(value: Any) -> list[Any]:
    """The Python functions of a chart attribute: a method's, a static or class method's,
    a property's getter, setter and deleter, a ``functools.partialmethod``'s or
    ``partial``'s."""
    found: list[Any]
    if isinstance(value, staticmethod | classmethod):
        found = [value.__func__]
    elif isinstance(value, functools.partialmethod | functools.partial):
        found = [value.func]
    elif isinstance(value, property):
        found = [value.fget, value.fset, value.fdel]
    else:
        found = [value]
    return [function for function in found if inspect.isfunction(function)]


def _kwargs_owner(code: Any) -> set[str]:
    """``{"**kwargs"}`` for code taking ``**kwargs`` (its ``"machine"`` is the machine)."""
    kwargs = _packed_names(code)[1]
    return {f"**{kwargs}"} if kwargs is not None else set()


#: Packages whose functions the scan does not read: python-statemachine's own (its loaders'
#: executable content), and mutmut's trampolines, which wrap a chart's methods during mutation
#: runs and hand ``self`` on to the method or one of its mutants (the method itself, reached
#: through the wrapper's ``__wrapped__``, is still read).
_UNREAD_PACKAGES = frozenset({"statemachine", "mutmut"})


def _is_library(function: Any) -> bool:
    """Whether ``function`` is code of a package the scan does not read (``_UNREAD_PACKAGES``),
    by its module or, for a wrapper that took its wrapped function's ``__module__``
    (``functools.wraps``), by the file its code is in."""
    if str(getattr(function, "__module__", "") or "").split(".")[0] in _UNREAD_PACKAGES:
        return True
    code = getattr(function, "__code__", None)
    return code is not None and code.co_filename.startswith(_unread_directories())


@functools.cache
def _unread_directories() -> tuple[str, ...]:
    """The directories of the installed ``_UNREAD_PACKAGES`` (found once, when first asked)."""
    found = []
    for name in sorted(_UNREAD_PACKAGES):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found += [os.path.join(path, "") for path in spec.submodule_search_locations]
    return tuple(found)


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
