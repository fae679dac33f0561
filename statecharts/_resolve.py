"""Resolve a compiled chart's callbacks against the chart class and a model type.

This runs once per (chart, model type), never per event. It reproduces python-statemachine's
lookup rules: a name is looked up on the chart, then on the model, and every owner that has it
contributes a callback (for a guard, the owners' values are and-ed); a callable given directly
is called as a method when the chart or model holds it under its name, else as it is; callbacks
that resolve to the same owner and name run once, at the priority of their first declaration.

One difference, for speed: python-statemachine looks names up on each model *instance*; here
they are looked up on the model's class, once. A declared name the class lacks is read from the
instance when it is created (so flags set in ``__init__`` work, and a missing one is reported
then). Callbacks a model instance holds itself (naming-convention ones its class lacks, and
callable attributes shadowing what its class defines: ``instance_callbacks``) are found by
``Runtime.for_instance``, which resolves them again for that set of names; a non-callable
attribute shadowing a method is seen only when the instance's names are read anyway (spec C9:
looking for it always would cost every model its ``__dict__``). A model class with its own
``__getattribute__`` is the exception: python-statemachine's ``getattr(model, name)`` goes
through it, so each name its class provides is read on the instance, through it, when the
instance is created.

A model provides a name when ``dir(model)`` lists it, as python-statemachine finds names: one
only ``__getattr__`` answers (a proxy's) is not found, with python-statemachine's error, when
the instance is created, and each listed name the class lacks is read then, as
python-statemachine reads it. A model class with its own ``__dir__`` may leave out a name the
class defines: it is checked for each instance too, and one left out is not found (nothing
else provides it) or refused (the chart provides it too, or it is a naming-convention
callback: python-statemachine would run the chart's only, or nothing).
"""

from __future__ import annotations

import ast
import inspect
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Any

from statemachine import StateChart
from statemachine.exceptions import AttrNotFound, InvalidDefinition
from statemachine.signature import SignatureAdapter
from statemachine.spec_parser import replace_operators

from . import _async
from ._errors import UnsupportedChart
from ._ir import CallbackDef, Group, RefKind

_MISSING: Any = object()
_OBJECT_DIR = vars(object)["__dir__"]
_OBJECT_CLASS = vars(object)["__class__"]

#: How a model is checked for a name when an instance is created (``check_model``):
#: ``READ``: the model's class lacks it; the instance must list it and it is read.
#: ``LISTED``: the class defines it, its ``__dir__`` must list it, else it is not found.
#: ``REFUSED``: the class defines it, its ``__dir__`` must list it, else the instance is
#: refused (the chart provides it too, or it is a naming-convention callback).
#: ``FAILS``: a callable of the chart or the model's class python-statemachine cannot adapt
#: (``adapted``): each instance fails, where the entry's ``where`` is the error's message.
READ, LISTED, REFUSED, FAILS = "read", "listed", "refused", "fails"
#: The signature given a callable that fails as python-statemachine adapts it (never called).
_ANY_ARGUMENTS = inspect.Signature(
    [
        inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
        inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
    ]
)

#: Names python-statemachine never resolves on the machine itself (its "protected" attributes).
_PROTECTED = frozenset(
    {
        "_abstract",
        "model",
        "state_field",
        "start_value",
        "initial_state",
        "final_states",
        "states",
        "_events",
        "states_map",
        "send",
    }
)
_STATECHART_API = frozenset(dir(StateChart)) - _PROTECTED


class Mode(Enum):
    """How a resolved callback is invoked."""

    METHOD = "method"  # a function called with the owner (runtime instance or model) as self
    CALL = "call"  # a callable called as it is
    ATTR = "attr"  # an attribute read at call time (its value is the result)
    DYNAMIC = "dynamic"  # read at call time; called if the value read is callable


@dataclass(frozen=True, slots=True, eq=False)
class Leaf:
    """One resolved callable or attribute, with the signature used to bind its arguments."""

    key: str
    owner: str  # "chart", "model" or "free"
    mode: Mode
    target: Any
    name: str
    signature: inspect.Signature | None = None


@dataclass(frozen=True, slots=True, eq=False)
class And:
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Or:
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Not:
    operand: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Compare:
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Const:
    value: Any


@dataclass(frozen=True, slots=True, eq=False)
class InStates:
    state_ids: frozenset[str]


Expr = Leaf | And | Or | Not | Compare | Const | InStates


@dataclass(frozen=True, slots=True, eq=False)
class Resolved:
    """A callback ready for code generation."""

    expr: Expr
    expected: bool | None
    only_event: str | None
    priority: int
    key: str


_COMPARE_OPS: Mapping[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Lt: "<",
    ast.LtE: "<=",
}


def format_expr(
    expr: Expr,
    leaf: Callable[[Leaf], str],
    const: Callable[[Any], str],
    in_states: Callable[[frozenset[str]], str],
) -> str:
    """An expression as Python source, with leaves, constants and ``In(...)`` written by the
    given functions (the generated code and the de-duplication key both use it)."""

    def walk(node: Expr) -> str:
        if isinstance(node, Leaf):
            return leaf(node)
        if isinstance(node, And):
            return f"({walk(node.left)} and {walk(node.right)})"
        if isinstance(node, Or):
            return f"({walk(node.left)} or {walk(node.right)})"
        if isinstance(node, Not):
            return f"(not {walk(node.operand)})"
        if isinstance(node, Compare):
            return f"({walk(node.left)} {node.op} {walk(node.right)})"
        if isinstance(node, Const):
            return const(node.value)
        return in_states(node.state_ids)

    return walk(expr)


def expression_key(expr: Expr) -> str:
    """A key identifying what an expression calls, for de-duplication within a group."""
    return format_expr(expr, lambda leaf: leaf.key, repr, lambda ids: f"in({sorted(ids)})")


def parse_guard(text: str, name_hook: Callable[[str], Expr]) -> Expr:
    """Parse a boolean guard expression in python-statemachine's syntax.

    ``name_hook`` turns each name into an expression; a malformed expression raises
    ``InvalidDefinition`` with python-statemachine's message.
    """
    failure = InvalidDefinition(f"Failed to parse boolean expression '{text}'")
    if text.strip() == "":
        raise failure
    if text.isidentifier():
        return name_hook(text)
    try:
        tree = ast.parse(replace_operators(text), mode="eval")
        return _build(tree.body, name_hook)
    except (SyntaxError, ValueError) as error:
        raise failure from error


def _build(node: ast.AST, name_hook: Callable[[str], Expr]) -> Expr:
    if isinstance(node, ast.BoolOp):
        combine = And if isinstance(node.op, ast.And) else Or
        result = _build(node.values[0], name_hook)
        for value in node.values[1:]:
            result = combine(result, _build(value, name_hook))
        return result
    if isinstance(node, ast.Compare):
        pairs: list[Expr] = []
        left = _build(node.left, name_hook)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            symbol = _COMPARE_OPS.get(type(op))
            if symbol is None:
                raise ValueError(f"unsupported comparison {type(op).__name__}")
            right = _build(comparator, name_hook)
            pairs.append(Compare(symbol, left, right))
            left = right
        result = pairs[0]
        for pair in pairs[1:]:
            result = And(result, pair)
        return result
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Not(_build(node.operand, name_hook))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id.lower() != "in":
            raise ValueError(f"Unsupported function: {node.func.id}")
        ids = frozenset(str(arg.value) for arg in node.args if isinstance(arg, ast.Constant))
        return InStates(ids)
    if isinstance(node, ast.Name):
        return name_hook(node.id)
    if isinstance(node, ast.Constant):
        return Const(node.value)
    raise ValueError(f"Unsupported expression structure: {type(node).__name__}")


def signature_of(target: Any, *, bound: bool, where: str, chart: str) -> inspect.Signature:
    """The signature a callback's arguments are bound against (``self`` excluded)."""
    try:
        if bound:
            return inspect.signature(types.MethodType(target, object()))
        return inspect.signature(target)
    except (TypeError, ValueError) as error:
        construct = "a callback without an inspectable signature"
        raise UnsupportedChart(chart, construct, where) from error


def _static_lookup(owner: type, name: str) -> Any:
    for klass in owner.__mro__:
        namespace = vars(klass)
        if name in namespace:
            return namespace[name]
    return _MISSING


class Resolver:
    """Resolves the callbacks of one chart for one kind of model."""

    def __init__(
        self,
        chart_name: str,
        declared: type[StateChart[Any]],
        chart_attributes: Mapping[str, Any],
        event_ids: Iterable[str],
        model_type: type | None,
        fields: frozenset[str] = frozenset(),
        awaited: bool = False,
        vet: Callable[[Any], str | None] | None = None,
        instance_callbacks: frozenset[str] = frozenset(),
    ) -> None:
        self.chart_name = chart_name
        #: Callback names the model instances bound hold themselves: naming-convention
        #: callbacks their class lacks (python-statemachine finds them by ``dir(model)``), and
        #: callbacks of their class an instance attribute shadows (``getattr`` finds it first);
        #: python-statemachine runs what the instance holds.
        self.instance_callbacks = instance_callbacks
        #: The names resolved to the model's class whose value an instance attribute of the
        #: same name would shadow (a function, a static or class method, a plain attribute;
        #: not a property or other data descriptor, which ``getattr`` prefers).
        self.shadowable: dict[str, None] = {}
        #: The declared names resolved to the chart alone, the model's class lacking them: an
        #: instance holding one has its value bound too, as python-statemachine binds both.
        self.chart_only: dict[str, None] = {}
        #: Says what a model's method does with the machine the compiled instance would
        #: answer otherwise (``None``: nothing); such a callback raises ``UnsupportedChart``
        #: when it runs, naming itself, rather than answering silently.
        self.vet = vet
        #: What ``vet`` found in the callbacks a model instance holds or a property hands
        #: out, by their code objects and what their closures hold (``_codegen.verdict``),
        #: with those values: ``None`` when faithful.
        self.vetted: dict[Any, tuple[str | None, tuple[Any, ...]]] = {}
        #: Fields a custom ``__init__`` sets on the instance before python-statemachine's
        #: ``__init__`` runs: names resolve to them, read when the callback runs.
        self.fields = fields
        self.declared = declared
        self.attributes = chart_attributes
        self.event_ids = frozenset(event_ids)
        self.model_type = model_type
        #: What each model instance is checked for when created, in resolution order: name ->
        #: (where declared, ``READ``, ``LISTED`` or ``REFUSED``); see ``check_model``.
        self.instance_names: dict[str, tuple[str, str]] = {}
        #: Whether the model's class has its own ``__dir__``: then the names its class
        #: provides are checked on each instance too (python-statemachine finds names by
        #: ``dir(model)``).
        self.own_dir = (
            model_type is not None and _static_lookup(model_type, "__dir__") is not _OBJECT_DIR
        )
        #: Whether ``dir(model)`` lists no more than the class's names and the instance's
        #: ``__dict__`` (``object.__dir__``, the instance's own ``__class__``): a name the
        #: class lacks is then checked in the ``__dict__``, without building ``dir()``.
        self.plain_dir = not self.own_dir and (
            model_type is None or _static_lookup(model_type, "__class__") is _OBJECT_CLASS
        )
        #: Whether the model's class has its own ``__getattribute__``: then each name its
        #: class provides is read on the instance too, through it (``hold``), as
        #: python-statemachine reads ``getattr(model, name)``.
        #: (A builtin base's slot, ``dict``'s or ``int``'s, reads attributes as ``object``'s.)
        self.own_getattribute = model_type is not None and not isinstance(
            _static_lookup(model_type, "__getattribute__"), types.WrapperDescriptorType
        )
        #: The model's names read when an instance is created and kept on it (``hold``):
        #: descriptors of its class and names only the instance provides.
        self.held: dict[str, None] = {}
        #: Whether a callback resolved so far is async (the chart then runs awaited).
        self.is_async = awaited
        #: Resolving for an awaited run: a plain callback's awaitable result is awaited too.
        self.awaited = awaited
        self._leaves: dict[tuple[str, str], Leaf | None] = {}

    # -- name lookup -------------------------------------------------------------------------

    def chart_leaf(self, name: str) -> Leaf | None:
        """The chart-class attribute called ``name`` as a callback, or ``None``."""
        cached = self._leaves.get(("chart", name), _MISSING)
        if cached is not _MISSING:
            return cached  # type: ignore[no-any-return]
        leaf = self._chart_leaf(name)
        self._leaves["chart", name] = leaf
        return leaf

    def _chart_leaf(self, name: str) -> Leaf | None:
        where = f"{self.chart_name}.{name}"
        if name in self.fields:
            return Leaf(f"chart:{name}", "chart", Mode.DYNAMIC, name, where)
        if name not in self.attributes:
            if name in self.event_ids:
                raise UnsupportedChart(self.chart_name, "a callback naming an event", repr(name))
            if name in _STATECHART_API:
                raise UnsupportedChart(
                    self.chart_name, "a callback naming python-statemachine's own API", repr(name)
                )
            return None
        value = self.attributes[name]
        key = f"chart:{name}"
        if isinstance(value, staticmethod):
            return self._callable_leaf(key, "chart", value.__func__, where)
        if isinstance(value, classmethod):
            return self._callable_leaf(key, "chart", getattr(self.declared, name), where)
        if inspect.isfunction(value):
            signature = signature_of(value, bound=True, where=where, chart=self.chart_name)
            return Leaf(key, "chart", Mode.METHOD, self._awaited(value), where, signature)
        if callable(value) and not isinstance(value, property):
            return self._callable_leaf(key, "chart", value, where)
        return Leaf(key, "chart", Mode.ATTR, name, where)

    def model_leaf(self, name: str) -> Leaf | None:
        """The model attribute called ``name`` as a callback, or ``None``."""
        cached = self._leaves.get(("model", name), _MISSING)
        if cached is not _MISSING:
            return cached  # type: ignore[no-any-return]
        leaf = self._model_leaf(name)
        self._leaves["model", name] = leaf
        return leaf

    def _model_leaf(self, name: str) -> Leaf | None:
        value = self._class_value(name)
        if value is _MISSING:
            return None
        assert self.model_type is not None
        where = f"{self.model_type.__name__}.{name}"
        key = f"model:{name}"
        # a static or class method is read too: it is handed the machine as ``machine``
        function = value.__func__ if isinstance(value, staticmethod | classmethod) else value
        if self.own_getattribute:
            # python-statemachine binds ``getattr(model, name)``, which the class's own
            # ``__getattribute__`` answers: read on the instance when it is created (``hold``)
            if _async.is_async(function):
                self.is_async = True  # what it hands out may be the class's async method
            self.held[name] = None
            return Leaf(key, "model", Mode.DYNAMIC, name, where)
        problem = self.vet(function) if self.vet is not None else None
        if problem is not None:
            return self._callable_leaf(key, "model", self._refusal(where, problem), where)
        if isinstance(value, staticmethod):
            return self._callable_leaf(key, "model", value.__func__, where)
        if isinstance(value, classmethod):
            return self._callable_leaf(key, "model", getattr(self.model_type, name), where)
        if inspect.isfunction(value):
            signature = signature_of(value, bound=True, where=where, chart=self.chart_name)
            return Leaf(key, "model", Mode.METHOD, self._awaited(value), where, signature)
        if hasattr(type(value), "__get__"):
            self.held[name] = None
            return Leaf(key, "model", Mode.DYNAMIC, name, where)
        if callable(value):
            return self._callable_leaf(key, "model", value, where)
        return Leaf(key, "model", Mode.ATTR, name, where)

    def _refusal(self, where: str, problem: str) -> Callable[..., Any]:
        """A stand-in for a model's callback the compiled run cannot answer faithfully: it
        raises ``UnsupportedChart`` naming the callback (never an ``error.execution``)."""
        chart = self.chart_name

        def refused(*args: Any, **kwargs: Any) -> Any:
            raise UnsupportedChart(
                chart,
                "a model's callback using python-statemachine's machine",
                f"{where} {problem} at run time",
                "the compiled instance is not python-statemachine's machine: the callback "
                "may use send, raise_, cancel_event, configuration, configuration_values, "
                "current_state_value, model and the event methods",
            )

        return refused

    def _class_value(self, name: str) -> Any:
        """What the model's class has under ``name`` as a callback (``_MISSING``: nothing, or
        no model, or ``state``, which the instance keeps itself)."""
        if self.model_type is None or name == "state":
            return _MISSING
        return _static_lookup(self.model_type, name)

    def _callable_leaf(self, key: str, owner: str, target: Any, where: str) -> Leaf:
        # python-statemachine adapts each callable when it builds a machine, which fails for
        # a class or a callable object (one it binds through ``__get__`` aside)
        fails = False
        if isinstance(target, type) or not hasattr(type(target), "__get__"):
            try:
                adapted(target)
            except AttributeError as error:
                self.instance_names.setdefault(f"{key} adapted", (str(error), FAILS))
                fails = True
        try:
            signature = signature_of(target, bound=False, where=where, chart=self.chart_name)
        except UnsupportedChart:
            if not fails:
                raise
            # never called: creating an instance raises python-statemachine's error first
            signature = _ANY_ARGUMENTS
        return Leaf(key, owner, Mode.CALL, self._awaited(target), where, signature)

    def _awaited(self, target: Any) -> Any:
        """``target``, or for an async callback its synchronous stand-in (``_async``); a chart
        with one runs on the awaitable send path (``is_async``)."""
        if not _async.is_async(target):
            return _async.awaiting_results(target) if self.awaited else target
        self.is_async = True
        return _async.awaiting(target)

    def _owners(self, name: str, where: str, convention: bool = False) -> list[Leaf]:
        """Who provides ``name``: the chart, the model's class, or else (for a declared name
        and a model) the model instance, read when the instance is created (``hold``)."""
        chart = self.chart_leaf(name)
        model: Leaf | None
        if name in self.instance_callbacks and (
            convention or chart is not None or self._class_value(name) is not _MISSING
        ):
            # held by the instance: python-statemachine binds ``getattr(model, name)``, the
            # instance's, and never adapts what the class has under the name
            assert self.model_type is not None
            label = f"{self.model_type.__name__}.{name}"
            self.instance_names.setdefault(name, (label, READ))
            self.held[name] = None
            model = Leaf(f"model:{name}", "model", Mode.DYNAMIC, name, label)
        else:
            model = self.model_leaf(name)
            if model is not None and model.mode is not Mode.DYNAMIC:
                self.shadowable[name] = None
            elif model is None and chart is not None and not convention:
                self.chart_only[name] = None
        owners = [leaf for leaf in (chart, model) if leaf]
        if model is not None and self.own_dir:
            if convention or chart is not None:
                self.instance_names.setdefault(name, (model.name, REFUSED))
            else:
                self.instance_names.setdefault(name, (where, LISTED))
        if owners or convention or self.model_type is None or name == "state":
            return owners
        self.instance_names.setdefault(name, (where, READ))
        self.held[name] = None
        label = f"{self.model_type.__name__}.{name}"
        return [Leaf(f"model:{name}", "model", Mode.DYNAMIC, name, label)]

    # -- callbacks ---------------------------------------------------------------------------

    def resolve_group(self, callbacks: Iterable[CallbackDef], where: str) -> tuple[Resolved, ...]:
        """Resolve one group's callbacks; de-duplicate in declaration order, then sort."""
        seen: set[str] = set()
        resolved: list[Resolved] = []
        for callback in callbacks:
            for item in self._resolve(callback, where):
                if item.key in seen:
                    continue
                seen.add(item.key)
                resolved.append(item)
        resolved.sort(key=lambda item: item.priority)
        return tuple(resolved)

    def _resolve(self, callback: CallbackDef, where: str) -> Iterator[Resolved]:
        def make(expr: Expr) -> Resolved:
            return Resolved(
                expr=expr,
                expected=callback.expected,
                only_event=callback.only_event,
                priority=callback.priority,
                key=expression_key(expr),
            )

        if callback.kind is RefKind.EXPRESSION or (
            callback.kind is RefKind.NAME
            and callback.group is Group.COND
            and not callback.convention
        ):
            yield make(self._guard_expression(callback.ref, where))
        elif callback.kind is RefKind.NAME:
            owners = self._owners(callback.ref, where, callback.convention)
            if not owners and not callback.convention:
                raise not_found(where, [callback.ref])
            yield from (make(leaf) for leaf in owners)
        elif callback.kind is RefKind.PROPERTY:
            yield make(self._property_leaf(callback, where))
        else:
            yield make(self._function_leaf(callback))

    def _guard_expression(self, text: str, where: str) -> Expr:
        missing: list[str] = []

        def hook(name: str) -> Expr:
            owners = self._owners(name, where)
            if not owners:
                missing.append(name)
                return Const(True)
            result: Expr = owners[0]
            for owner in owners[1:]:
                result = And(result, owner)
            return result

        expr = parse_guard(text, hook)
        if missing:
            raise not_found(where, missing)
        return expr

    def _property_leaf(self, callback: CallbackDef, where: str) -> Leaf:
        name = callback.ref
        if self.attributes.get(name) is callback.func:
            return Leaf(f"chart:{name}", "chart", Mode.ATTR, name, where)
        if self.model_type is not None and _static_lookup(self.model_type, name) is callback.func:
            return Leaf(f"model:{name}", "model", Mode.ATTR, name, where)
        raise not_found(where, [name])

    def _function_leaf(self, callback: CallbackDef) -> Leaf:
        function = callback.func
        where = f"{self.chart_name}.{callback.lookup_name}"
        bound = isinstance(function, partial) or hasattr(function, "__self__")
        if not bound:
            name = callback.lookup_name
            if self.attributes.get(name) is function:
                return self.chart_leaf(name) or self._callable_leaf(
                    f"chart:{name}", "chart", function, where
                )
            if self.model_type is not None and _static_lookup(self.model_type, name) is function:
                leaf = self.model_leaf(name)
                if leaf is not None:
                    return leaf
        key = f"free:{callback.ref}:{id(function)}"
        return self._callable_leaf(key, "free", function, where)


def check_model(
    chart: str, model: Any, checks: Iterable[tuple[str, tuple[str, str]]], plain_dir: bool
) -> dict[str, Any]:
    """Check a new instance's model for the names its callbacks need (``Resolver.
    instance_names``), as python-statemachine finds them when the machine is built: listed by
    ``dir(model)``, and read (so what reading one raises is raised now, as there); the values
    read, by name. ``plain_dir`` (``Resolver.plain_dir``): ``dir(model)`` is
    ``object.__dir__``'s, so the names the class lacks it lists are the instance
    ``__dict__``'s, as it reads them."""
    read: dict[str, Any] = {}
    listed: Any
    if plain_dir:
        try:
            listed = model.__dict__
        except Exception:  # object.__dir__ reads no names from it then
            listed = {}
        if not isinstance(listed, dict):
            listed = {}
    else:
        listed = set(dir(model))
    for name, (where, kind) in checks:
        if kind is FAILS:
            raise AttributeError(where)
        if name in listed:
            if kind is READ:
                read[name] = getattr(model, name)
            continue
        if kind is not REFUSED:
            raise not_found(where, [name])
        raise UnsupportedChart(
            chart,
            "a model whose __dir__ leaves out a callback name its class defines",
            f"{where}, when the instance is created",
            "python-statemachine finds a model's names by dir(model), where it is not listed, "
            "and would run the chart's callback of that name only (or, for a naming-convention "
            "callback, none); the compiled run resolves the model's class once",
        )
    return read


class HeldAsync(Exception):
    """What ``vet`` raises for an async callable a model instance holds (or hands out) while
    the chart runs synchronously: ``hold`` refuses the instance, naming the callback."""

    def __init__(self, chart: str) -> None:
        super().__init__(chart)
        self.chart = chart


def refuse_held_async(chart: str, where: str) -> UnsupportedChart:
    """The refusal of an async callback only a model instance provides, on a chart whose
    own and model class's callbacks are all synchronous."""
    return UnsupportedChart(
        chart,
        "an async callback only the model instance provides, on a synchronous chart",
        where,
        "python-statemachine runs such an instance's whole chart on its async engine; the "
        "compiled chart runs awaited when its class or the model's class declares an async "
        "callback: declare this one on the model's class",
    )


def adapted(value: Any) -> SignatureAdapter:
    """python-statemachine's adapter of a callable it binds as a callback
    (``dispatcher.callable_method``), made as it makes it when it builds the machine: its
    signature, cached by ``__qualname__`` and ``__code__``, and its ``__name__`` copied, which
    raise ``AttributeError`` for a class or a callable object (lacking them)."""
    signature: SignatureAdapter = SignatureAdapter.from_callable(value)
    _ = (value.func if isinstance(value, partial) else value).__name__
    return signature


def hold(model: Any, names: Iterable[str], read: dict[str, Any], vet: Any) -> dict[str, Any]:
    """The model's ``names`` as python-statemachine binds them when it builds the machine,
    each read once (``read``: those ``check_model`` read already): a callable is kept, with
    its signature and what ``vet`` says of it (``None``: faithful), and called from then on;
    anything else is ``None``, read again on each call and taken as it is. An async callable
    on a synchronous chart is refused (``HeldAsync``): python-statemachine would run the
    instance on its async engine."""
    held: dict[str, Any] = {}
    for name in names:
        value = read[name] if name in read else getattr(model, name)
        if callable(value):
            signature = adapted(value)  # raises now for a class or a callable object
            try:
                problem = vet(value)
            except HeldAsync as refused:
                where = f"{type(model).__name__}.{name}, when the instance is created"
                raise refuse_held_async(refused.chart, where) from None
            held[name] = (value, signature, problem)
        else:
            held[name] = None
    return held


def not_found(where: str, names: list[str]) -> InvalidDefinition:
    """The error python-statemachine raises for names no owner provides."""
    error = AttrNotFound(
        "Did not found name '{}' from model or statemachine".format(", ".join(names))
    )
    result = InvalidDefinition(f"Error on {where} when resolving callbacks: {error}")
    result.__cause__ = error
    return result
