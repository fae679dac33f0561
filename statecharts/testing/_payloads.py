"""Payloads of chart events: which keyword arguments an event's callbacks ask for, and a
default Hypothesis strategy that fills them: values of the parameter's annotation when it has
one Hypothesis can build, else small JSON-like values."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from .._ir import CallbackDef
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


def payload_parameters(chart: Chart, event: str) -> list[str]:
    """The keyword arguments the callbacks of ``event``'s transitions ask for, in first-seen
    order (reserved names such as ``event`` or ``source`` left out)."""
    return list(_annotated_parameters(chart, event))


def _annotated_parameters(chart: Chart, event: str) -> dict[str, Any]:
    """Each payload parameter of ``event`` with the first annotation a callback gives it
    (``inspect.Parameter.empty`` when none does)."""
    found: dict[str, Any] = {}
    declared = chart.declared
    for transition in chart.transitions:
        if event not in transition.events:
            continue
        callbacks: tuple[CallbackDef, ...] = transition.guards + transition.actions
        for state_id in _touched(chart, transition.source, transition.targets):
            state = chart.state(state_id)
            callbacks += state.enter + state.exit
        for callback in callbacks:
            for name, annotation in _parameters(_callable(declared, callback)).items():
                if found.get(name, inspect.Parameter.empty) is inspect.Parameter.empty:
                    found[name] = annotation
    return found


def _touched(chart: Chart, source: str, targets: tuple[str, ...]) -> list[str]:
    """The states whose enter or exit callbacks a transition may run: its source, the
    parents of its targets, its targets, and what entering them enters by default (a compound
    state's initial children, a parallel state's regions), in that order."""
    found = [source]
    for target in targets:
        parent = chart.state(target).parent
        while parent is not None:
            if parent not in found:
                found.append(parent)
            parent = chart.state(parent).parent
    initial = {t.source: t.targets for t in chart.transitions if t.initial}
    entering = list(targets)
    while entering:
        state = chart.state(entering.pop(0))
        if state.id in found and state.id not in targets:
            continue
        if state.id not in found:
            found.append(state.id)
        if state.kind == "parallel":
            entering += [child.id for child in chart.children(state.id)]
        elif state.kind == "compound":
            entering += list(initial.get(state.id, ()))
    return found


def _callable(declared: Any, callback: CallbackDef) -> Any:
    if callback.func is not None:
        return callback.func
    return getattr(declared, callback.lookup_name or callback.ref, None)


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


def default_payloads(chart: Chart, event: str) -> PayloadStrategy:
    """A payload for ``event``: each argument its callbacks ask for, drawn from its
    annotation's type (``int``, ``str``, a dataclass...) or, unannotated, from
    ``default_values``; an empty payload when they ask for none."""
    return st.fixed_dictionaries(
        {
            name: values_for(annotation)
            for name, annotation in _annotated_parameters(chart, event).items()
        }
    )
