"""Payloads of chart events: which keyword arguments an event's callbacks ask for, and a
default Hypothesis strategy that fills them with small JSON-like values."""

from __future__ import annotations

import inspect
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
    names: list[str] = []
    declared = chart.declared
    for transition in chart.transitions:
        if event not in transition.events:
            continue
        callbacks: tuple[CallbackDef, ...] = transition.guards + transition.actions
        for state_id in {transition.source, transition.target or transition.source}:
            state = chart.state(state_id)
            callbacks += state.enter + state.exit
        for callback in callbacks:
            for name in _parameters(_callable(declared, callback)):
                if name not in names:
                    names.append(name)
    return names


def _callable(declared: Any, callback: CallbackDef) -> Any:
    if callback.func is not None:
        return callback.func
    return getattr(declared, callback.lookup_name or callback.ref, None)


def _parameters(func: Any) -> list[str]:
    if not callable(func):
        return []
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    keep = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [
        p.name for p in signature.parameters.values() if p.kind in keep and p.name not in RESERVED
    ]


def default_payloads(chart: Chart, event: str) -> PayloadStrategy:
    """A payload for ``event``: each argument its callbacks ask for, drawn from
    ``default_values``; an empty payload when they ask for none."""
    return st.fixed_dictionaries(
        {name: default_values for name in payload_parameters(chart, event)}
    )
