"""Generate one Python function per (state, event) of a bound chart.

Each generated function tries the transitions an event may take from a state, in declaration
order (validators, then guards), and runs the first enabled one: ``before``, the source's
``exit``, ``on``, then the state changes and the target's ``enter`` runs, then ``after``. Every
callback is called directly with exactly the arguments its signature asks for, worked out here
once; nothing is looked up or inspected per event. The source is written to a file named after
the chart (``source_file``), so every traceback through generated code shows its lines.

Two bodies are generated per function: one for the usual call with keyword payload only, and
one, taken when positional arguments are sent, that binds arguments with python-statemachine's
own ``SignatureAdapter`` so the rare positional form behaves exactly as in the reference engine.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import hashlib
import inspect
import keyword
import linecache
import os
import re
import tempfile
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from statemachine.orderedset import OrderedSet
from statemachine.signature import SignatureAdapter

from . import _async
from ._errors import AsyncReadRefused, UnsupportedChart
from ._resolve import Expr, HeldAsync, Leaf, Mode, Resolved, format_expr, refuse_held_async

#: The names python-statemachine injects into every callback and drops from user keywords.
INJECTED = ("event_data", "machine", "event", "model", "transition", "state", "source", "target")
EVENT_DATA_KWARGS = frozenset(INJECTED)

_NOSELF: Any = object()


class EventData:
    """What python-statemachine passes as ``event_data``: the event and where it is going."""

    # the payload keywords, the model and the send id are private, as python-statemachine's
    # EventData has no ``kwargs``, ``model`` or ``send_id`` (a callback reading them fails
    # there, so it must here); the send id reaches ``trigger_data.send_id``, as there
    __slots__ = (
        "_kwargs",
        "_model",
        "_send_id",
        "args",
        "event",
        "machine",
        "source",
        "state",
        "target",
        "transition",
    )

    def __init__(
        self,
        event: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        machine: Any,
        model: Any,
        transition: Any,
        state: Any,
        source: Any,
        target: Any,
    ) -> None:
        self.event = event
        self.args = args
        self._kwargs = kwargs
        self.machine = machine
        self._model = model
        self.transition = transition
        self.state = state
        self.source = source
        self.target = target
        # the send id of the event being run: a queued event's (``_Queues.trigger``), if any
        trigger = getattr(getattr(machine, "_pending", None), "trigger", None)
        self._send_id: Any = None if trigger is None else trigger[1]

    @property
    def trigger_data(self) -> TriggerData:
        """The event as it was sent (python-statemachine's ``TriggerData``)."""
        trigger = TriggerData(self.machine, self.event, self._model, self.args, self._kwargs)
        trigger.send_id = self._send_id
        return trigger

    @property
    def extended_kwargs(self) -> dict[str, Any]:
        """The payload keywords plus the injected values, as python-statemachine builds them."""
        kwargs = dict(self._kwargs)
        kwargs.update(
            event_data=self,
            machine=self.machine,
            event=self.event,
            model=self._model,
            transition=self.transition,
            state=self.state,
            source=self.source,
            target=self.target,
        )
        return kwargs

    def __repr__(self) -> str:
        return f"EventData(event={self.event!r}, source={self.source!r}, target={self.target!r})"


class TriggerData:
    """What python-statemachine passes as ``event_data.trigger_data``: the event sent, with its
    positional and keyword payload."""

    __slots__ = ("args", "event", "kwargs", "machine", "model", "send_id")

    def __init__(
        self, machine: Any, event: Any, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        self.machine = machine
        self.event = event
        self.model = model
        self.args = args
        self.kwargs = kwargs
        self.send_id = None

    def __repr__(self) -> str:
        return f"TriggerData(event={self.event!r}, args={self.args!r}, kwargs={self.kwargs!r})"


def _user_kwargs(kw: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in kw.items() if key not in EVENT_DATA_KWARGS}


def _kwall(kw: Mapping[str, Any], injected: Mapping[str, Any]) -> dict[str, Any]:
    merged = _user_kwargs(kw)
    merged.update(injected)
    return merged


def _rest(
    kw: Mapping[str, Any], injected: Mapping[str, Any], named: tuple[str, ...]
) -> dict[str, Any]:
    merged = _kwall(kw, injected)
    for name in named:
        merged.pop(name, None)
    return merged


def _bind(
    function: Callable[..., Any],
    owner: Any,
    adapter: SignatureAdapter,
    args: tuple[Any, ...],
    kwall: dict[str, Any],
) -> Any:
    bound = adapter.bind_expected(*args, **kwall)
    if owner is _NOSELF:
        return function(*bound.args, **bound.kwargs)
    return function(owner, *bound.args, **bound.kwargs)


def _dyn(owner: Any, name: str, args: tuple[Any, ...], kwall: dict[str, Any]) -> Any:
    """Read ``name`` on the model when called; call it if it is callable (python-statemachine
    caches the signature, by function, so nothing here holds on to the model)."""
    value = getattr(owner, name)
    if not callable(value):
        return value
    machine = kwall.get("machine")
    if machine is not None:
        if owner is not machine:
            _vet_dynamic(machine, owner, name, value)
        elif getattr(value, "__self__", None) is not machine and not _async.is_async(value):
            # a chart field's callable is read as a model's is (C6); a method of the chart
            # itself is compiled with it, and an async one is refused below
            _vet_dynamic(machine, owner, name, value)
    bound = SignatureAdapter.from_callable(value).bind_expected(*args, **kwall)
    return _call_read(name, value, bound)


def _call_read(name: str, value: Any, bound: Any) -> Any:
    """Call a callback read from the model instance with its bound arguments: awaited inside
    an async chart's run, refused (an async one) in a synchronous chart."""
    if _async.is_async(value):
        if not _async.inside_a_run():
            raise AsyncReadRefused(
                f"{name} is an async callback read from the model instance, and the chart was "
                "compiled for a synchronous run: define it on the model's class"
            )
        return _async.wait(value(*bound.args, **bound.kwargs))
    result = value(*bound.args, **bound.kwargs)
    if inspect.isawaitable(result) and _async.inside_a_run():
        return _async.wait(result)  # an async chart awaits what a callback returns
    return result


#: How many callbacks held by model instances a chart remembers the scan's verdict on.
_VETTED_KEPT = 256


def _vet_dynamic(machine: Any, owner: Any, name: str, value: Any) -> None:
    """A model's callback found on the instance only when called (its ``prepare_event``) is
    read as the bound model type's callbacks are: one misusing the machine raises
    ``UnsupportedChart`` naming it, never a swallowed ``error.execution``."""
    resolver = machine._node.binding.resolver
    try:
        problem = verdict(resolver, value)
    except HeldAsync:
        raise refuse_held_async(resolver.chart_name, f"{type(owner).__name__}.{name}") from None
    if problem is not None:
        resolver._refusal(f"{type(owner).__name__}.{name}", problem)()


def verdict(resolver: Any, value: Any) -> str | None:
    """What the machine scan says of a callable a model holds or hands out (``None``:
    faithful), kept on the chart's resolver by what it depends on: the code it runs and what
    the cells of its closures hold (the scan follows the machine into them; the key pins
    those values, so their ids are not reused while kept). An async callable on a chart
    that runs synchronously raises ``HeldAsync``: python-statemachine would run the chart on
    its async engine."""
    if not resolver.awaited and _async.is_async(value):
        raise HeldAsync(resolver.chart_name)
    code = _code_of(value)
    if code is None:
        return None
    cells = _cells_of(value)
    key = (code, *map(id, cells)) if cells else code
    vetted = resolver.vetted
    if key in vetted:
        return vetted[key][0]  # type: ignore[no-any-return]
    problem = None if resolver.vet is None else resolver.vet(value)
    if len(vetted) < _VETTED_KEPT:
        vetted[key] = (problem, cells)
    return problem


def _unpartial(value: Any) -> Any:
    """The callable a ``functools.partial`` (of partials ...) calls; ``value`` itself else."""
    for _ in range(8):  # partials of partials ...
        if not isinstance(value, functools.partial):
            break
        value = value.func
    return value


def _cells_of(value: Any) -> tuple[Any, ...]:
    """What the closure cells of the functions a callable runs hold (a ``functools.partial``'s
    function's, a bound method's, each of its ``functools.wraps`` wrappers'), in order; an
    empty cell is itself (no value)."""
    value = _unpartial(value)
    value = getattr(value, "__func__", value)
    found: list[Any] = []
    seen: set[int] = set()
    while value is not None and id(value) not in seen:  # wrappers of wrappers, however deep
        seen.add(id(value))
        for cell in getattr(value, "__closure__", None) or ():
            try:
                found.append(cell.cell_contents)
            except ValueError:  # not yet assigned
                found.append(cell)
        value = getattr(value, "__wrapped__", None)
    return tuple(found)


def _held(inst: Any, name: str, args: tuple[Any, ...], kwall: dict[str, Any]) -> Any:
    """A name of the model as python-statemachine bound it when the instance was created
    (``_resolve.hold``): the callable found then, called; a value, read now."""
    found = inst._held[name]
    model = inst.model
    if found is None:
        return getattr(model, name)
    value, signature, problem = found
    if problem is not None:
        inst._node.binding.resolver._refusal(f"{type(model).__name__}.{name}", problem)()
    bound = signature.bind_expected(*args, **kwall)
    return _call_read(name, value, bound)


#: Whether values of a type are awaitable (have ``__await__``), for the types ``_returned``
#: met, at most ``_AWAITS_KEPT`` of them.
_AWAITS: dict[type, bool] = {}
_AWAITS_KEPT = 256


def _returned(inst: Any, value: Any, where: str) -> None:
    """A synchronous chart's only ``before`` or ``on`` callback returned ``value`` (not
    ``None``): an awaitable is refused, never dropped unawaited (python-statemachine's
    ``send`` runs it to completion once the event's run is done). Awaitable as
    ``inspect.isawaitable`` tells it, asked of the type (a value's ``__await__``, a
    generator-based coroutine), kept by type (``_AWAITS``): no ``Awaitable`` check, nor a
    failed attribute look-up, per call."""
    kind = type(value)
    awaits = _AWAITS.get(kind)
    if awaits is None:
        awaits = hasattr(kind, "__await__")
        if len(_AWAITS) < _AWAITS_KEPT and kind is not types.GeneratorType:
            _AWAITS[kind] = awaits  # a generator is awaitable by its code: asked each time
    if not awaits and not (
        kind is types.GeneratorType and value.gi_code.co_flags & inspect.CO_ITERABLE_COROUTINE
    ):
        return
    if isinstance(value, types.CoroutineType | types.GeneratorType):
        value.close()  # refused: never awaited, and no warning that it was not
    raise UnsupportedChart(
        inst._node.binding.resolver.chart_name,
        "a plain callback returning an awaitable as a before or on result (or a compound's "
        "initial transition content) on a synchronous chart",
        f"{where}, when the event runs",
        "python-statemachine's send runs it to completion after the event's run when it is "
        "the event's only result; make the callback async (the chart then runs awaited)",
    )


def _returns_none_only(leaf: Leaf) -> bool:
    """Whether the callable ``leaf`` calls is a plain Python function every ``return`` of
    which returns ``None`` (none returns an awaitable then)."""
    if leaf.mode not in (Mode.METHOD, Mode.CALL) or not inspect.isfunction(leaf.target):
        return False
    code = leaf.target.__code__
    if code.co_flags & (
        inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE
    ):
        return False
    previous = None
    for instruction in dis.get_instructions(code):
        if instruction.opname == "RETURN_CONST" and instruction.argval is not None:
            return False
        if instruction.opname == "RETURN_VALUE" and not (
            previous is not None
            and previous.opname == "LOAD_CONST"
            and previous.argval is None
            and not instruction.is_jump_target  # reached with another value then
        ):
            return False
        previous = instruction
    return True


def _code_of(value: Any) -> Any:
    """The code a callable runs, which the scan's verdict on it depends on: a function's
    (under its ``functools.wraps`` wrappers, a bound method's), a ``functools.partial``'s
    function's, a callable object's ``__call__``'s; ``None`` for a builtin."""
    function = inspect.unwrap(_unpartial(value))
    code = getattr(function, "__code__", None)
    if code is None and not isinstance(function, type):
        call = inspect.getattr_static(type(function), "__call__", None)
        code = getattr(call, "__code__", None)
    return code


def _missing(function: str, name: str, kind: str = "positional") -> Any:
    """Raise what Python raises calling ``function`` without ``name`` (``kind``: positional
    or keyword-only), as python-statemachine calls it."""
    raise TypeError(f"{function}() missing 1 required {kind} argument: {name!r}")


def _in_states(inst: Any, state_ids: frozenset[str]) -> bool:
    return bool(state_ids <= inst._node.active_ids)


def _oset_of(states: tuple[Any, ...]) -> OrderedSet[Any]:
    return OrderedSet(states)


def _oset(state: Any) -> OrderedSet[Any]:
    return OrderedSet([state])


_HELPERS: dict[str, Any] = {
    "_EventData": EventData,
    "_NOSELF": _NOSELF,
    "_bind": _bind,
    "_dyn": _dyn,
    "_held": _held,
    "_filtered": _user_kwargs,
    "_in_states": _in_states,
    "_kwall": _kwall,
    "_missing": _missing,
    "_oset": _oset,
    "_oset_of": _oset_of,
    "_rest": _rest,
    "_returned": _returned,
    "_AWAITS": _AWAITS,
    "_type": type,
}


@dataclass(frozen=True, slots=True)
class Phase:
    """The injected values of one callback group, as Python expressions of the generated code."""

    values: Mapping[str, str]
    #: which of python-statemachine's argument sets the group shares (a chart with a
    #: ``prepare_event`` prepares each once per microstep): the generated constant's name
    key: str = "None"

    def injected_dict(self) -> str:
        items = ", ".join(f"{name!r}: {expr}" for name, expr in self.values.items())
        return "{" + items + "}"


@dataclass(frozen=True, slots=True)
class Step:
    """One transition as the generator needs it: resolved callbacks and what it does."""

    before: tuple[Resolved, ...]
    exit: tuple[Resolved, ...]
    on: tuple[Resolved, ...]
    enter: tuple[Resolved, ...]
    after: tuple[Resolved, ...]
    validators: tuple[Resolved, ...]
    cond: tuple[Resolved, ...]
    changes_node: bool
    values: Mapping[str, str]  # transition, source, target, state_after: generated names
    outcome: str  # expression giving the applied outcome
    failed: str = "None"  # expression giving the outcome of a transition cancelled by an error
    #: the node of the empty configuration ``on`` callbacks see between exit and entry (the
    #: source exited, the target not yet entered), when the chart updates it state by state
    gap: str | None = None
    #: the node the target's ``enter`` callbacks see, when it is not ``node_to``: a top-level
    #: final state, not terminated until they ran (python-statemachine stops its engine after)
    entering_node: str | None = None
    label: str = ""  # the transition as a comment: ``a --go [ok]--> b / act``


_NON_IDENTIFIER = re.compile(r"\W+")
#: Names the generated functions use for their own locals and builtins; constants avoid them.
_RESERVED = frozenset(
    {
        "inst",
        "args",
        "kw",
        "ev",
        "m",
        "event",
        "error",
        "enabled",
        "getattr",
        "BaseException",
        "Exception",
    }
)


def identifier(text: str) -> str:
    """``text`` made into a Python identifier (other characters become ``_``)."""
    name = _NON_IDENTIFIER.sub("_", text).strip("_") or "value"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = f"_{name}"
    return name


def in_name(state_ids: frozenset[str]) -> str:
    """The constant name of the state set an ``In(...)`` guard tests."""
    return "IN_" + "_".join(sorted(state_ids))


class Module:
    """Accumulates generated functions and the constants they refer to.

    Constants and functions are named after what they hold (``keep_result``,
    ``STATE_running``, ``pending__ready``), so the generated source reads as the chart does;
    ``source`` holds it once built.
    """

    def __init__(self, label: str, gather: bool = False) -> None:
        #: For a chart with async callbacks: a group python-statemachine's async engine
        #: gathers runs through ``_gather``, each callback in a task of its own.
        self.gather = gather
        self.namespace: dict[str, Any] = dict(_HELPERS)
        if gather:
            self.namespace["_gather"] = _async.gather
        self.lines: list[str] = []
        self.label = label
        self.source = ""
        self._constants: dict[int, str] = {}
        self._taken: set[str] = set(self.namespace) | _RESERVED

    def const(self, value: Any, name: str) -> str:
        """A name in the generated module bound to ``value``, made from ``name``."""
        if value is None or isinstance(value, bool):
            return repr(value)
        found = self._constants.get(id(value))
        if found is not None:
            return found
        unique = self.unique(name)
        self.namespace[unique] = value
        self._constants[id(value)] = unique
        return unique

    def unique(self, name: str) -> str:
        """``name`` as an identifier no other constant or function of the module uses."""
        base = identifier(name)
        candidate, number = base, 2
        while candidate in self._taken:
            candidate, number = f"{base}_{number}", number + 1
        self._taken.add(candidate)
        return candidate

    def add(self, lines: Iterable[str]) -> None:
        self.lines.extend(lines)
        self.lines.append("")

    def build(self) -> dict[str, Any]:
        """Execute the generated source; return its namespace.

        The code's file name names the chart (see ``source_file``), so a traceback through it
        names the chart, and its function the state and the event; the line shows too.
        """
        source = "\n".join(self.lines) + "\n"
        code = compile(source, source_file(self.label, source), "exec")
        exec(code, self.namespace)
        self.source = source
        return self.namespace


#: Where generated sources are written so tracebacks can show their lines: the environment
#: variable names a directory; set to the empty string, nothing is written.
SOURCE_DIR_VARIABLE = "STATECHARTS_SOURCE_DIR"
#: At most this many pseudo-file sources are kept in ``linecache`` (when none can be written).
MAX_KEPT_SOURCES = 512
_UNSAFE = re.compile(r"[^\w .,()-]+")


def source_file(label: str, source: str) -> str:
    """The file name to compile generated code under, so every traceback shows its lines.

    CPython's default traceback display (``sys.excepthook``, before 3.13) reads a line from
    the file itself and never asks ``linecache``, so the source is written once to a real file,
    named after the chart and a digest of the source (identical code shares one file):
    ``<tempdir>/statecharts-<uid>/<label> <digest>.py``, or under ``$STATECHARTS_SOURCE_DIR``.
    When no file can be written (or the variable is empty) the name is
    ``<statecharts LABEL #n>`` and the lines go to ``linecache`` only (the ``traceback`` module,
    pytest and logging read them there), the newest ``MAX_KEPT_SOURCES`` of them kept.
    """
    directory = _source_directory()
    if directory is not None:
        digest = hashlib.sha1(source.encode("utf-8")).hexdigest()[:12]
        name = _UNSAFE.sub("_", label)[:120]
        path = os.path.join(directory, f"{name} {digest}.py")
        try:
            if not os.path.exists(path):
                _write_atomically(directory, path, source)
            return path
        except OSError:
            pass
    return _pseudo_file(label, source)


def _write_atomically(directory: str, path: str, source: str) -> None:
    """Write ``source`` to ``path`` so no reader ever sees half of it."""
    fd, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(source)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _source_directory() -> str | None:
    """The directory generated sources go to (made on first use), or ``None``."""
    configured = os.environ.get(SOURCE_DIR_VARIABLE)
    if configured == "":
        return None
    directory = configured or os.path.join(
        tempfile.gettempdir(), f"statecharts-{getattr(os, 'getuid', lambda: 'user')()}"
    )
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        status = os.stat(directory)
    except OSError:
        return None
    if hasattr(os, "getuid") and (status.st_uid != os.getuid() or status.st_mode & 0o022):
        return None  # another user could replace a file, and tracebacks would show its lines
    return directory


def _pseudo_file(label: str, source: str) -> str:
    filename = f"<statecharts {label}>"
    with _filenames_lock:
        count = _filenames.get(filename, 0) + 1
        _filenames[filename] = count
        if count > 1:
            filename = f"<statecharts {label} #{count}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        _kept[filename] = None
        while len(_kept) > MAX_KEPT_SOURCES:
            oldest = next(iter(_kept))
            del _kept[oldest]
            linecache.cache.pop(oldest, None)
    return filename


_filenames: dict[str, int] = {}
_kept: dict[str, None] = {}
_filenames_lock = threading.Lock()


class FunctionWriter:
    """Writes the body of one generated function."""

    def __init__(
        self,
        module: Module,
        positional: bool,
        event_expr: str,
        static_event: str | None,
        catch: bool,
        handling_error: bool,
        prepare: bool,
    ) -> None:
        self.module = module
        self.catch = catch
        #: the chart has a ``prepare_event``: every callback gets its keyword arguments
        #: through ``_prep`` and is bound as python-statemachine binds it
        self.prepare = prepare
        self.handling_error = handling_error
        self.positional = positional
        self.args = "args" if positional or prepare else "()"
        #: the event object callbacks receive: the declared one, or one built as the event
        #: was sent (internal, or with another delay) when it was taken from a queue
        self.event_expr = f"_event_now(inst, {event_expr})"
        self.static_event = static_event
        self.lines: list[str] = []

    # -- expressions -------------------------------------------------------------------------

    def phase(
        self,
        transition: str,
        state: str,
        source: str,
        target: str,
        new_state: str | None = None,
        configurations: tuple[str, str] | None = None,
        key: str = "None",
    ) -> Phase:
        """Injected values for a group; ``new_state`` (flat charts) or ``configurations``
        (the constant tuples before and after, in a statechart) mark the ``on`` group."""
        values = {
            "machine": "inst",
            "model": "m",
            "event": self.event_expr,
            "transition": transition,
            "state": state,
            "source": source,
            "target": target,
            "event_data": (
                f"_EventData({self.event_expr}, {self.args}, _filtered(kw), inst, m, "
                f"{transition}, {state}, {source}, {target})"
            ),
        }
        if configurations is not None:
            values["previous_configuration"] = f"_oset_of({configurations[0]})"
            values["new_configuration"] = f"_oset_of({configurations[1]})"
        elif new_state is not None:
            values["previous_configuration"] = f"_oset({source})"
            values["new_configuration"] = f"_oset({new_state})"
        return Phase(values, key)

    def prepared(self, phase: Phase) -> str:
        """The expression of the keyword arguments a callback gets in a chart with a
        ``prepare_event``."""
        return f"_prep(inst, args, kw, {phase.injected_dict()}, {phase.key})"

    def leaf(self, leaf: Leaf, phase: Phase) -> str:
        owner = {"chart": "inst", "model": "m"}.get(leaf.owner, "")
        kwall = f"_kwall(kw, {phase.injected_dict()})"
        args = self.args
        if self.prepare:
            kwall, args = self.prepared(phase), "args"
        if leaf.mode is Mode.ATTR:
            name = str(leaf.target)
            return f"{owner}.{name}" if name.isidentifier() else f"getattr({owner}, {name!r})"
        if leaf.mode is Mode.DYNAMIC and leaf.owner == "model":
            return f"_held(inst, {leaf.target!r}, {args}, {kwall})"
        if leaf.mode is Mode.DYNAMIC:
            return f"_dyn({owner}, {leaf.target!r}, {args}, {kwall})"
        function = self.module.const(leaf.target, leaf.name.rsplit(".", 1)[-1])
        signature = leaf.signature
        assert signature is not None
        self_arg = owner if leaf.mode is Mode.METHOD else ""
        parameters = signature.parameters.values()
        fast = not any(p.kind is p.POSITIONAL_ONLY for p in parameters)
        if self.prepare:
            adapter = SignatureAdapter(  # type: ignore[no-untyped-call]
                list(parameters), return_annotation=signature.return_annotation
            )
            adapter_name = self.module.const(adapter, f"SIGNATURE_{function}")
            return f"_bind({function}, {self_arg or '_NOSELF'}, {adapter_name}, args, {kwall})"
        if self.positional or not fast:
            adapter = SignatureAdapter(  # type: ignore[no-untyped-call]
                list(parameters), return_annotation=signature.return_annotation
            )
            adapter_name = self.module.const(adapter, f"SIGNATURE_{function}")
            owner_arg = self_arg or "_NOSELF"
            return f"_bind({function}, {owner_arg}, {adapter_name}, {self.args}, {kwall})"
        arguments = [self_arg] if self_arg else []
        arguments.extend(self._keyword_arguments(signature, phase, leaf.name))
        return f"{function}({', '.join(arguments)})"

    def _keyword_arguments(
        self, signature: inspect.Signature, phase: Phase, where: str
    ) -> list[str]:
        """Arguments bound as python-statemachine binds them when no positional args are sent."""
        result: list[str] = []
        parameters = signature.parameters.values()
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        named = tuple(p.name for p in parameters if p.kind not in variadic)
        for parameter in parameters:
            name = parameter.name
            if parameter.kind is parameter.VAR_POSITIONAL:
                continue
            if parameter.kind is parameter.VAR_KEYWORD:
                result.append(f"**_rest(kw, {phase.injected_dict()}, {named!r})")
            elif name in phase.values:
                result.append(f"{name}={phase.values[name]}")
            elif parameter.default is not parameter.empty:
                default = self.literal(parameter.default, f"DEFAULT_{name}")
                result.append(f"{name}=kw.get({name!r}, {default})")
            else:
                kind = ", 'keyword-only'" if parameter.kind is parameter.KEYWORD_ONLY else ""
                missing = f"_missing({where!r}, {name!r}{kind})"
                result.append(f"{name}=(kw[{name!r}] if {name!r} in kw else {missing})")
        return result

    def literal(self, value: Any, name: str) -> str:
        """``value`` written as a literal when it reads back the same, else as a constant."""
        if type(value) in (int, str) or value is None or isinstance(value, bool):
            return repr(value)
        return self.module.const(value, name)

    def expr(self, expr: Expr, phase: Phase) -> str:
        """Python code evaluating a resolved callback or guard expression."""
        return format_expr(
            expr,
            lambda leaf: self.leaf(leaf, phase),
            lambda value: self.literal(value, "VALUE"),
            lambda ids: f"_in_states(inst, {self.module.const(ids, in_name(ids))})",
        )

    def applying(self, callbacks: Iterable[Resolved]) -> list[Resolved]:
        """The callbacks that apply to this function's event."""
        return [
            callback
            for callback in callbacks
            if callback.only_event is None or callback.only_event == self.static_event
        ]

    def call_lines(self, callbacks: Iterable[Resolved], phase: Phase) -> list[str]:
        """Statements calling each callback that applies to this function's event."""
        return [self.expr(callback.expr, phase) for callback in self.applying(callbacks)]

    def checked_calls(self, callbacks: Iterable[Resolved], phase: Phase) -> list[str]:
        """``call_lines`` of a ``before`` or ``on`` group (or of the content of a compound's
        initial or a history state's default transition), each result checked:
        python-statemachine's synchronous ``send`` runs an awaitable that is the event's only
        such result to completion (``run_async_from_sync``), which the compiled run cannot,
        so a synchronous chart refuses any awaitable there (``_returned``), never dropping
        it. A function that returns ``None`` only is not checked (no cost); an async chart
        awaits what its callbacks return."""
        if self.module.gather:
            return self.call_lines(callbacks, phase)
        checked: list[str] = []
        for callback in self.applying(callbacks):
            line = self.expr(callback.expr, phase)
            leaf = callback.expr
            if not isinstance(leaf, Leaf) or _returns_none_only(leaf):
                checked.append(line)
                continue
            where = self.literal(leaf.name, "WHERE")
            # a value of a type known not to be awaitable costs no call
            test = f"(_result := {line}) is not None"
            known = "_AWAITS.get(_type(_result)) is not False"
            checked.append(f"if {test} and {known}: _returned(inst, _result, {where})")
        return checked

    def gathered(self, lines: list[str]) -> list[str]:
        """The statements of a callback group python-statemachine's async engine gathers
        (``asyncio.gather``): in an async chart one statement, handing a function per call
        to ``_gather``, which runs each in a task of its own; in a sync chart the calls."""
        if not self.module.gather or not lines:
            return lines
        return [self.gather_call(lines)]

    def handled(self, lines: list[str]) -> list[str]:
        """The statements of an ``exit``, ``enter`` or ``on`` group: python-statemachine's
        async engine runs it one by one with an error handler (errors caught as events), and
        gathers it without one."""
        return lines if self.catch else self.gathered(lines)

    def gather_call(self, lines: list[str]) -> str:
        """The expression running the calls of ``lines`` gathered, giving their results."""
        return f"_gather(inst, ({''.join(f'lambda: {line}, ' for line in lines)[:-1]}))"

    def guard(self, callbacks: tuple[Resolved, ...], phase: Phase) -> str:
        """A condition true when every guard gives its expected truth value, in order."""
        parts = []
        for callback in callbacks:
            code = self.expr(callback.expr, phase)
            parts.append(code if callback.expected is not False else f"not {code}")
        return " and ".join(parts)

    # -- statements --------------------------------------------------------------------------

    def emit(self, indent: int, line: str) -> None:
        if line.startswith("#"):
            line = _one_line(line)
        self.lines.append("    " * indent + line)

    def caught_each(self, lines: list[str]) -> list[str]:
        """Statements running each call of ``lines`` in its own ``try``, a failure queueing
        ``error.execution`` (what ``isolated`` emits with errors caught as events)."""
        result: list[str] = []
        for line in lines:
            result += ["try:", f"    {line}", "except Exception as error:"]
            result.append("    _caught(inst, error)")
        return result

    def isolated(self, indent: int, lines: list[str]) -> None:
        """Emit each callback in its own block: with errors caught as events, one that raises
        queues ``error.execution`` and the next still runs (the SCXML rule for executable
        content); otherwise exceptions propagate."""
        if self.catch:
            lines = self.caught_each(lines)
        for line in lines:
            self.emit(indent, line)

    def step(self, indent: int, step: Step, node_from: str, node_to: str) -> bool:
        """Write one candidate transition; return whether it is always taken.

        As in python-statemachine: validators and guards select the transition (an exception
        there leaves queued events for later); then ``before``, the source's ``exit``, ``on``,
        the state change, the target's ``enter`` and ``after`` run. Without
        ``catch_errors_as_events`` an exception from ``before`` to ``enter`` leaves the source
        state and reaches the caller, one from ``after`` leaves the transition taken. With it,
        a raising guard counts as false, a raising ``exit``/``on``/``enter`` callback is
        skipped, a raising ``before`` cancels the transition, and each queues
        ``error.execution``.
        """
        values = step.values
        if step.label:
            self.emit(indent, f"# {step.label}")
        t, src, tgt = values["transition"], values["source"], values["target"]
        after_state = values["state_after"]
        base = self.phase(t, src, src, tgt)
        always = not step.cond
        indent = self.selection(indent, step, base)
        failed = [f"_failed(inst, error, {self.handling_error})", f"return {step.failed}"]
        before = self.checked_calls(step.before, base)
        on = self.checked_calls(step.on, self.phase(t, src, src, tgt, new_state=after_state))
        before = self.gathered(before)
        self.block(indent, before, failed if self.catch else None)
        self.isolated(indent, self.handled(self.call_lines(step.exit, base)))
        entering = self.call_lines(step.enter, self.phase(t, tgt, src, tgt))
        gap = step.gap if on else None
        moves = gap is not None or (step.changes_node and bool(entering))
        if moves:
            # an exception escaping from here on (any, or with errors caught as events an
            # InvalidDefinition) leaves the instance where it was, as python-statemachine does
            self.emit(indent, "try:")
            indent += 1
        if gap is not None:  # ``on`` sees the source exited and the target not yet entered
            self.emit(indent, f"inst._node = {gap}")
        if self.catch and self.handling_error:
            # while handling error.execution, a failing action cancels the transition and
            # its error is dropped (no error.execution loop)
            restore = [f"inst._node = {node_from}"] if gap is not None else []
            self.block(indent, self.gathered(on), [*restore, *failed])
        else:
            self.isolated(indent, self.handled(on))
        entered = step.entering_node if entering and step.changes_node else None
        if step.changes_node or gap is not None:
            self.emit(indent, f"inst._node = {entered or node_to}")
        self.isolated(indent, self.handled(entering))
        if entered is not None:
            self.emit(indent, f"inst._node = {node_to}")
        if moves:
            indent -= 1
            # only an Exception restores the source: a BaseException (a cancelled task, an
            # interrupt) leaves the instance where it got, as python-statemachine leaves it
            self.emit(indent, "except Exception:")
            self.emit(indent + 1, f"inst._node = {node_from}")
            self.emit(indent + 1, "raise")
        # python-statemachine hands a targetless transition's ``after`` callbacks the same
        # arguments as its ``on`` callbacks, configurations included
        after_phase = self.phase(
            t, after_state, src, tgt, new_state=after_state if tgt == "None" else None
        )
        after = self.call_lines(step.after, after_phase)
        if self.one_by_one_after(tgt == "None", after):
            self.isolated(indent, after)
        else:
            self.block(indent, self.gathered(after), failed[:1] if self.catch else None)
        self.emit(indent, f"return {step.outcome}")
        return always

    def one_by_one_after(self, targetless: bool, lines: list[str]) -> bool:
        """Whether a transition's ``after`` callbacks (``lines``) run one by one, each failure
        queueing ``error.execution``: python-statemachine hands a targetless transition's
        ``after`` the arguments its ``on`` got, error handler included (none while handling
        ``error.execution``). (A sync chart's single callback in a ``try`` queueing its error
        does the same.)"""
        one_by_one = targetless and self.catch and not self.handling_error
        return one_by_one and (self.module.gather or len(lines) > 1)

    def block(
        self,
        indent: int,
        lines: list[str],
        handler: list[str] | None,
        clause: str = "except Exception as error:",
    ) -> None:
        """Emit ``lines``; with a ``handler``, inside ``try`` with it as the except clause."""
        if not lines:
            return
        if handler is None:
            for line in lines:
                self.emit(indent, line)
            return
        self.emit(indent, "try:")
        for line in lines:
            self.emit(indent + 1, line)
        self.emit(indent, clause)
        for line in handler:
            self.emit(indent + 1, line)

    def selection(self, indent: int, step: Step, base: Phase) -> int:
        """Emit the validators and guards of a transition; return the indent of its body.

        An exception there is a selection failure (python-statemachine then keeps queued
        events); with errors caught as events, a raising guard counts as false instead.
        """
        validators = self.gathered(self.call_lines(step.validators, base))
        if not step.cond:
            self.block(
                indent, validators, ["_selection_failed(inst)", "raise"], "except BaseException:"
            )
            return indent
        guard = f"enabled = {self.guard(step.cond, base)}"
        if self.catch:
            self.block(
                indent, validators, ["_selection_failed(inst)", "raise"], "except BaseException:"
            )
            self.block(indent, [guard], ["enabled = _guard_failed(inst, error)"])
        else:
            selection = [*validators, guard]
            self.block(
                indent, selection, ["_selection_failed(inst)", "raise"], "except BaseException:"
            )
        self.emit(indent, "if enabled:")
        return indent + 1


_USES_MODEL = re.compile(r"\bm\b")


def _one_line(comment: str) -> str:
    """A comment naming declared states and events, kept on its line and encodable whatever
    the names hold: a line break (an event ``"go\\nnow"``) or a lone surrogate is written as
    its escape (raw, it would end the comment, or fail to encode as UTF-8)."""
    return "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        for char in comment
    )


def write_function(
    module: Module,
    name: str,
    parameters: str,
    body: Callable[[FunctionWriter], None],
    event_expr: str,
    static_event: str | None,
    positional_variant: bool,
    catch: bool = False,
    handling_error: bool = False,
    prepare: bool = False,
) -> None:
    """Add ``def name(parameters)``; with ``positional_variant`` also ``name__positional``,
    which the first calls when positional arguments were sent (``prepare``: the chart has a
    ``prepare_event``)."""
    variants = [(name, False)]
    positional_name = module.unique(f"{name}__positional") if positional_variant else ""
    if positional_variant:
        variants.append((positional_name, True))
    for function_name, positional in variants:
        writer = FunctionWriter(
            module, positional, event_expr, static_event, catch, handling_error, prepare
        )
        body(writer)
        lines = [f"def {function_name}({parameters}):"]
        if positional_variant and not positional:
            lines.append(f"    if args: return {positional_name}({parameters})")
        if any(_USES_MODEL.search(line) for line in writer.lines):
            lines.append("    m = inst.model")
        body_lines = writer.lines
        sent = writer.event_expr
        if any(sent in line for line in body_lines):
            # the event object, as it was sent, once: every callback gets the same one
            lines.append(f"    event = {sent}")
            body_lines = [line.replace(sent, "event") for line in body_lines]
        lines.extend("    " + line for line in body_lines)
        if len(lines) == 1:
            lines.append("    pass")
        module.add(lines)
