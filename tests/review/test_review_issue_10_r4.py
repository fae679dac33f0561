"""Breaks found by an independent review of issue 10 (round 4). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C6, C17, C19, D3, D6.

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import (
    InstanceSnapshotError,
    UnsupportedChart,
    VirtualClock,
    compile_chart,
    render,
    to_dot,
    to_mermaid,
)

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is missing")


class Model:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def __repr__(self) -> str:
        return "Model()"


def _ids(states: Any) -> list[str]:
    return [state.id for state in states]


# -- diagrams of nested charts -----------------------------------------------------------------


class Job(StateChart[Model]):
    """Starts in a compound state: its initial child, an internal transition inside it, a
    targetless transition on the compound state itself, a final child."""

    class job(State.Compound, name="Job"):
        waiting = State(initial=True)
        finished = State(final=True)
        poll = waiting.to.itself(internal=True, on="check")  # type: ignore[no-untyped-call]
        finish = waiting.to(finished)

    idle = State()
    pause = job.to(idle)
    start = idle.to(job)
    ping = job.to(None, on="note")  # type: ignore[arg-type]  # targetless

    def check(self) -> None:
        pass

    def note(self) -> None:
        pass

    def on_enter_waiting(self) -> None:
        pass


def _dot_json(dot: str) -> dict[str, Any]:
    done = subprocess.run(
        ["dot", "-Tjson"], input=dot.encode(), capture_output=True, check=True, timeout=60
    )
    loaded: dict[str, Any] = json.loads(done.stdout)
    return loaded


@needs_dot
def test_D3_a_compound_states_initial_arrow_starts_at_its_initial_dot() -> None:
    """A user renders a chart with a compound state: DOT reads the unquoted edge
    `job:initial -> waiting` as node `job`, port `initial` (dot warns "port initial
    unrecognized"), so the arrow starts at the cluster's anchor and the initial dot floats
    alone, unconnected."""
    graph = _dot_json(to_dot(compile_chart(Job)))
    names = {index: node["name"] for index, node in enumerate(graph["objects"])}
    edges = {edge.get("id"): edge for edge in graph["edges"]}
    arrow = edges["initial:waiting"]
    assert names[arrow["tail"]] == "job:initial", names[arrow["tail"]]


@needs_dot
def test_D6_an_svg_of_a_chart_starting_in_a_compound_state_has_unique_ids() -> None:
    """A user renders an SVG (overlays and tests address its elements by id) of a chart
    whose initial state is compound: the compound's initial dot and the top-level initial
    arrow both get `id="initial:job"`, so the SVG has a duplicate XML id."""
    svg = render(compile_chart(Job), "svg").decode()
    ids = re.findall(r'\bid="([^"]*)"', svg)
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert duplicates == []


def test_D3_mermaid_draws_the_internal_transitions_of_nested_states() -> None:
    """A user draws a chart with an internal transition inside a compound state (`poll / check`)
    and a targetless one on the compound state (`ping / note`) as Mermaid: both are missing
    from the text (nested states' own lines are never written), though DOT draws them."""
    text = to_mermaid(compile_chart(Job))
    assert "poll" in text
    assert "ping" in text


def test_D3_mermaid_shows_the_entry_actions_of_nested_states() -> None:
    """A user draws a chart whose nested state `waiting` has an entry action as Mermaid: the
    state shows no `entry / on_enter_waiting` line (DOT shows it; D3: a state shows its
    entry and exit lines)."""
    text = to_mermaid(compile_chart(Job))
    assert "entry / on_enter_waiting" in text


def test_D3_mermaid_marks_a_final_state_inside_a_compound_state() -> None:
    """A user draws a chart whose compound state has a final child as Mermaid: only top-level
    final states get `--> [*]`, so `finished` looks like any other state (DOT draws its
    double border)."""
    text = to_mermaid(compile_chart(Job))
    assert re.search(r"^\s*finished --> \[\*\]\s*$", text, re.MULTILINE), text


# -- machine API reached past the compile-time scan ----------------------------------------


class AliasedSelf(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, cond="ready")

    def ready(self) -> bool:
        chart = self
        return "a" in chart.configuration_values


def _keep(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return wrapper


class DecoratedGuard(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, cond="ready")

    @_keep
    def ready(self) -> bool:
        return "a" in self.configuration_values


class LambdaGuard(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, cond=lambda machine: "a" in machine.configuration_values)


class AskingModel(Model):
    def ready(self, machine: Any) -> bool:
        return "a" in machine.configuration_values


class ModelGuard(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, cond="ready")


class SetattrOnSelf(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, cond="ready")

    def ready(self) -> bool:
        setattr(self, "checked", True)  # noqa: B010
        return True


class DictOfSelf(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, cond="ready")

    def ready(self) -> bool:
        self.__dict__["checked"] = True
        return True


@pytest.mark.parametrize(
    ("chart_class", "model_class"),
    [
        (AliasedSelf, Model),
        (DecoratedGuard, Model),
        (LambdaGuard, Model),
        (ModelGuard, AskingModel),
        (SetattrOnSelf, Model),
        (DictOfSelf, Model),
    ],
    ids=[
        "self-aliased",
        "decorated-method",
        "lambda-guard",
        "model-method",
        "setattr-on-self",
        "dict-of-self",
    ],
)
def test_C6_machine_api_in_a_guard_is_refused_or_run(
    chart_class: type[StateChart[Model]], model_class: type[Model]
) -> None:
    """A guard reads `configuration_values` through `self` under another name, in a method
    wrapped by a `functools.wraps` decorator, in a lambda given `machine`, or in a model
    method given `machine`, or keeps a note on the machine with `setattr(self, ...)` or
    `self.__dict__`: the scan misses all six, the compiled guard raises AttributeError,
    errors-as-events makes it false, and the instance stays in `a` where python-statemachine
    moves to `b`."""
    try:
        chart = compile_chart(chart_class)
    except UnsupportedChart:
        return
    reference = chart_class(model_class())
    instance = chart.create(model_class())
    reference.send("go")
    instance.send("go")
    assert _ids(reference.configuration) == ["b"]
    assert _ids(instance.configuration) == _ids(reference.configuration)


# -- time and snapshots --------------------------------------------------------------------


class Reminder(StateChart[Model]):
    idle = State(initial=True)
    waiting = State()
    late = State(final=True)
    arm = idle.to(waiting, on="schedule")
    timeout = waiting.to(late)

    def schedule(self) -> None:
        self.send("timeout", delay=400)


def test_C17_a_virtual_clock_advanced_in_steps_reaches_a_timer_due_at_their_sum() -> None:
    """A test arms a 400 ms timeout on a `VirtualClock`, then advances 50 ms and 350 ms: the
    clock adds floats (0.05 + 0.35 = 0.39999999999999997 s), so the timer due at 0.4 s never
    fires and the instance is still `waiting` 400 ms after the send."""
    clock = VirtualClock()
    instance = compile_chart(Reminder).create(Model(), clock=clock)
    instance.send("arm")
    clock.advance(0.05)
    clock.advance(0.35)
    assert _ids(instance.configuration) == ["late"]


def test_C19_a_restored_timer_falls_due_when_the_originals_does() -> None:
    """A workflow engine snapshots an instance 50 ms into a 400 ms wait and restores it on the
    same clock: after 350 ms more the restored instance has timed out while the original
    (and so an unsnapshotted run) is still waiting; `due_in_ms` relative to a rounded float
    clock does not continue exactly as the original would."""
    chart = compile_chart(Reminder)
    clock = VirtualClock()
    original = chart.create(Model(), clock=clock)
    original.send("arm")
    clock.advance(0.05)
    restored = chart.restore(json.loads(json.dumps(original.snapshot())), Model(), clock=clock)
    clock.advance(0.35)
    assert _ids(restored.configuration) == _ids(original.configuration)


def test_C19_a_huge_due_time_is_refused_naming_the_field() -> None:
    """A stored snapshot whose timer has `"due_in_ms": 1000...0` (400 digits, a valid JSON
    integer) is restored: `math.isfinite` raises a raw `OverflowError` instead of
    `InstanceSnapshotError` naming `timers[0].due_in_ms`."""
    chart = compile_chart(Reminder)
    clock = VirtualClock()
    instance = chart.create(Model(), clock=clock)
    instance.send("arm")
    picture = instance.snapshot()
    picture["timers"][0]["due_in_ms"] = 10**400
    with pytest.raises(InstanceSnapshotError, match=r"timers\[0\]\.due_in_ms"):
        chart.restore(picture, Model(), clock=VirtualClock())
