"""Payloads of chart events: which keyword arguments an event's callbacks ask for, and a
default Hypothesis strategy that fills them: values of the parameter's annotation when it has
one Hypothesis can build, else small JSON-like values."""

from __future__ import annotations

import inspect
import keyword
import re
import typing
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from .._ir import CallbackDef, RefKind, TransitionDef
from .._runtime import Chart

PayloadStrategy = st.SearchStrategy[Mapping[str, Any]]

#: Parameter names python-statemachine fills itself; they are never part of a payload.
RESERVED = frozenset(
    {
        "self",
        "event",
        "event_data",
        "machine",
        "model",
        "source",
        "target",
        "state",
        "transition",
        "previous_configuration",
        "new_configuration",
    }
)

#: What a payload argument holds when the user gives no strategy: small JSON-like values.
default_values: st.SearchStrategy[Any] = (
    st.none() | st.booleans() | st.integers() | st.text(max_size=8)
)


def payload_parameters(chart: Chart, event: str, model: Any = None) -> list[str]:
    """The keyword arguments the callbacks ``event`` may run ask for, in first-seen order
    (reserved names such as ``event`` or ``source`` left out): its transitions' guards and
    actions, and the exit and enter callbacks of every state they may exit or enter. Callback
    names are looked up on the chart class and, given a ``model`` (an instance or a class),
    on the model's class too, as the runtime looks them up."""
    return list(_annotated_parameters(chart, event, model))


def _annotated_parameters(chart: Chart, event: str, model: Any = None) -> dict[str, Any]:
    """Each payload parameter of ``event`` with the first annotation a callback gives it
    (``inspect.Parameter.empty`` when none does)."""
    found: dict[str, Any] = {}
    owners = [chart.declared]
    if model is not None:
        owners.append(model if isinstance(model, type) else type(model))
    for transition in chart.transitions:
        if event not in transition.events:
            continue
        callbacks: tuple[CallbackDef, ...] = transition.guards + transition.actions
        exited, entered = _touched(chart, transition)
        for state_id in exited:
            callbacks += chart.state(state_id).exit
        for state_id in entered:
            callbacks += chart.state(state_id).enter
        for callback in callbacks:
            for func in _callables(owners, callback):
                for name, annotation in _parameters(func).items():
                    if found.get(name, inspect.Parameter.empty) is inspect.Parameter.empty:
                        found[name] = annotation
    return found


def _ancestors(chart: Chart, state_id: str) -> list[str]:
    """The proper ancestors of a state, innermost first."""
    found: list[str] = []
    parent = chart.state(state_id).parent
    while parent is not None:
        found.append(parent)
        parent = chart.state(parent).parent
    return found


def _descendants(chart: Chart, state_id: str) -> list[str]:
    """Every descendant of a state, parents before their children."""
    found: list[str] = []
    waiting = [child.id for child in chart.children(state_id)]
    while waiting:
        state = waiting.pop(0)
        found.append(state)
        waiting += [child.id for child in chart.children(state)]
    return found


def _touched(chart: Chart, transition: TransitionDef) -> tuple[list[str], list[str]]:
    """The states whose exit callbacks, and those whose enter callbacks, a transition may
    run. It exits the states below its domain that may be active: its source, any of the
    source's descendants, and the source's ancestors below the domain. It enters its targets
    with their ancestors below the domain and what entering them enters by default (a
    compound state's initial children, a parallel state's regions, any state a history state
    may restore). A targetless transition exits and enters nothing; an internal transition
    from an atomic state to itself exits nothing and enters it again (as python-statemachine
    runs it)."""
    source, targets = transition.source, transition.targets
    if not targets:
        return [], []
    if transition.internal and targets == (source,) and chart.state(source).kind == "atomic":
        return [], [source]
    domain = _domain(chart, transition)
    if domain == source:
        exited = _descendants(chart, source)
    else:
        exited = [source, *_descendants(chart, source), *_below(chart, source, domain)]
    entering: list[str] = []
    for target in targets:
        entering += [*reversed(_below(chart, target, domain)), target]
    initial = {t.source: t.targets for t in chart.transitions if t.initial}
    entered: list[str] = []
    while entering:
        state_id = entering.pop(0)
        if state_id in entered:
            continue
        entered.append(state_id)
        state = chart.state(state_id)
        if state.kind == "parallel":
            entering += [child.id for child in chart.children(state_id)]
        elif state.kind == "compound":
            entering += list(initial.get(state_id, ()))
        elif state.kind in ("shallow_history", "deep_history") and state.parent is not None:
            entering += _descendants(chart, state.parent)
    return exited, entered


def _domain(chart: Chart, transition: TransitionDef) -> str | None:
    """The state a transition exits and enters states inside of (``None``: the chart): the
    source itself for an internal transition from a compound or parallel state to states
    inside it, else the nearest proper ancestor of the source holding every target."""
    source, targets = transition.source, transition.targets
    if (
        transition.internal
        and chart.state(source).kind != "atomic"
        and all(source in _ancestors(chart, t) for t in targets)
    ):
        return source
    for ancestor in _ancestors(chart, source):
        if all(ancestor in _ancestors(chart, t) for t in targets):
            return ancestor
    return None


def _below(chart: Chart, state_id: str, domain: str | None) -> list[str]:
    """The proper ancestors of a state below ``domain``, innermost first."""
    found: list[str] = []
    for ancestor in _ancestors(chart, state_id):
        if ancestor == domain:
            break
        found.append(ancestor)
    return found


def _callables(owners: list[Any], callback: CallbackDef) -> list[Any]:
    """What a callback may call: the function given, or what its name (each name of a guard
    expression) is on each owner that has it."""
    if callback.func is not None:
        return [callback.func]
    if callback.kind is RefKind.EXPRESSION:
        names = [n for n in re.findall(r"[A-Za-z_]\w*", callback.ref) if not keyword.iskeyword(n)]
    else:
        names = [callback.lookup_name or callback.ref]
    return [
        found
        for name in names
        for owner in owners
        if owner is not None and (found := getattr(owner, name, None)) is not None
    ]


def _parameters(func: Any) -> dict[str, Any]:
    """The payload parameters of ``func`` with their annotations (resolved where possible)."""
    if not callable(func):
        return {}
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return {}
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # an annotation that does not resolve: fall back to none
        hints = {}
    keep = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {
        p.name: hints.get(p.name, inspect.Parameter.empty)
        for p in signature.parameters.values()
        if p.kind in keep and p.name not in RESERVED
    }


def values_for(annotation: Any) -> st.SearchStrategy[Any]:
    """Values for a parameter annotated ``annotation``: ``st.from_type`` when Hypothesis can
    build the type, else ``default_values`` (no annotation, ``Any``, or an unbuildable type)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return default_values
    try:
        strategy = st.from_type(annotation)
        strategy.validate()  # resolves the type now, not at the first draw
    except Exception:
        return default_values
    return strategy


def default_payloads(chart: Chart, event: str, model: Any = None) -> PayloadStrategy:
    """A payload for ``event``: each argument its callbacks ask for (``payload_parameters``,
    ``model`` as there), drawn from its annotation's type (``int``, ``str``, a dataclass...)
    or, unannotated, from ``default_values``; an empty payload when they ask for none."""
    return st.fixed_dictionaries(
        {
            name: values_for(annotation)
            for name, annotation in _annotated_parameters(chart, event, model).items()
        }
    )
