"""Breaks found by an independent review of issue 10 (round 5, more). Each test reproduces one;
fix the code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C6, D2.

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import types
from collections.abc import Callable
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.io import load

from statecharts import compile_chart, to_dot


class Order:
    """A model with the count a guard compares against."""

    def __init__(self) -> None:
        self.count = 2


#: A helper module of the application (``import guards``), its function reading only the model.
guards = types.ModuleType("guards")
exec(  # a real module of its own: its function's globals are the module's
    "def over_limit(machine, limit):\n    return machine.model.count > limit\n",
    guards.__dict__,
)


def logged(function: Callable[..., Any]) -> Callable[..., Any]:
    """A plain decorator of the application, keeping the function's name (functools.wraps)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return wrapper


@logged
def over_one(machine: StateChart[Order]) -> bool:
    """A module helper reading only the model, decorated."""
    return bool(machine.model.count > 1)


class ModuleHelper(StateChart[Order]):
    open = State(initial=True)
    big = State(final=True)
    small = State(final=True)
    check = open.to(big, cond="too_big") | open.to(small)

    def too_big(self) -> bool:
        return bool(guards.over_limit(self, 1))


class DecoratedHelper(StateChart[Order]):
    open = State(initial=True)
    big = State(final=True)
    small = State(final=True)
    check = open.to(big, cond="too_big") | open.to(small)

    def too_big(self) -> bool:
        return bool(over_one(self))


def _ids(states: object) -> list[str]:
    return [state.id for state in states]  # type: ignore[attr-defined]


def test_C6_a_helper_of_an_imported_module_given_self_is_followed_not_refused() -> None:
    """A guard calls `guards.over_limit(self, 1)`, a plain function of the application's
    `guards` module that reads only `machine.model`: python-statemachine runs it, the compiler
    refuses the chart (it follows `over_limit(self, 1)` imported by name, not the same
    function reached as a module attribute)."""
    reference = ModuleHelper(Order())
    reference.send("check")
    instance = compile_chart(ModuleHelper).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


def test_C6_a_decorated_helper_given_self_is_followed_not_refused() -> None:
    """A guard calls `over_one(self)`, a module helper reading only the model but decorated
    with a `functools.wraps` decorator: python-statemachine runs it, the compiler refuses the
    chart (it reads a decorated chart method through its wrapper, not a decorated helper)."""
    reference = DecoratedHelper(Order())
    reference.send("check")
    instance = compile_chart(DecoratedHelper).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


#: A chart loaded from JSON (C18) whose first state's id ends with a backslash.
BACKSLASH_ID = json.dumps(
    {
        "name": "Paths",
        "states": {
            "C:\\": {"initial": True, "transitions": [{"event": "go", "target": "done"}]},
            "done": {"final": True},
        },
    }
)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is missing")
def test_D2_dot_of_a_loaded_chart_with_a_backslash_ending_an_id_renders() -> None:
    """A user draws a JSON-loaded chart with a state `C:\\`: the id is written inside quotes
    as is, its backslash escapes the closing quote: graphviz warns "expect syntax error" while
    it is written and `dot -Tsvg` fails with "syntax error" instead of drawing the chart."""
    chart = compile_chart(load(BACKSLASH_ID, format="json"))
    assert next(state.id for state in chart.states) == "C:\\"
    done = subprocess.run(
        ["dot", "-Tsvg"], input=to_dot(chart).encode(), capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
