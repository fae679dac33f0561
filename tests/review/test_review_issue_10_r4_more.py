"""Breaks found by an independent review of issue 10 (round 4). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C6, C18, C21, D2, D3, D6.

from __future__ import annotations

import asyncio
import functools
import json
import re
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from statemachine import HistoryState, State, StateChart
from statemachine.io import load

from statecharts import (
    Coverage,
    Emphasis,
    TraceStep,
    UnsupportedChart,
    compile_chart,
    coverage_overlay,
    to_dot,
    to_mermaid,
    trace_overlay,
)

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is missing")

#: A chart loaded from JSON (C18) whose state ids are plain JSON keys: a colon, a space, a dash.
ODD_IDS = json.dumps(
    {
        "name": "Odd ids",
        "states": {
            "wait here": {"initial": True, "transitions": [{"event": "go", "target": "a-b"}]},
            "a-b": {"transitions": [{"event": "x", "target": "end"}]},
            "end": {"transitions": [{"event": "y", "target": "a:b"}]},
            "a:b": {"transitions": [{"event": "z", "target": "done"}]},
            "done": {"final": True},
        },
    }
)


@needs_dot
def test_D2_dot_edges_of_a_loaded_chart_reach_a_state_whose_id_has_a_colon() -> None:
    """A user draws a JSON-loaded chart with a state `a:b`: the edges are written unquoted
    (`end -> a:b`), which DOT reads as node `a`, port `b`, so `dot` draws both edges to a
    phantom state `a` (warning "port b unrecognized") and `a:b` stands unconnected."""
    chart = compile_chart(load(ODD_IDS, format="json"))
    done = subprocess.run(
        ["dot", "-Tjson"],
        input=to_dot(chart).encode(),
        capture_output=True,
        check=True,
        timeout=60,
    )
    graph: dict[str, Any] = json.loads(done.stdout)
    names = {index: node["name"] for index, node in enumerate(graph["objects"])}
    drawn = {
        (names[edge["tail"]], names[edge["head"]]) for edge in graph["edges"] if edge.get("label")
    }
    assert ("end", "a:b") in drawn, sorted(drawn)
    assert ("a:b", "done") in drawn, sorted(drawn)
    assert set(names.values()) <= {"[*]", *(state.id for state in chart.states)}


def test_D2_mermaid_of_a_loaded_chart_names_each_state_with_one_token() -> None:
    """A user draws a JSON-loaded chart with a state `wait here` as Mermaid: the id is written
    raw (`[*] --> wait here`, `state "Wait here" as wait here`), which Mermaid reads as two
    tokens, so the text does not parse as the chart (DOT quotes the same id)."""
    text = to_mermaid(compile_chart(load(ODD_IDS, format="json")))
    for line in text.splitlines():
        if "-->" in line:
            assert re.fullmatch(r"\s*\S+ --> \S+( : .*)?", line), line
        declared = re.fullmatch(r'\s*state ".*" as (.*)', line)
        if declared:
            assert re.fullmatch(r"\S+", declared.group(1)), line


class ResumableSplit(StateChart[Any]):
    """A parallel state with a deep history pseudo-state beside its two regions."""

    class split(State.Parallel, name="Split"):
        class left(State.Compound):
            l1 = State(initial=True)
            l2 = State()
            step = l1.to(l2) | l2.to(l1)

        class right(State.Compound):
            r1 = State(initial=True)
            r2 = State()
            step = r1.to(r2) | r2.to(r1)

        memory = HistoryState(type="deep")

    out = State()
    leave = split.to(out)
    back = out.to(split.memory)


def test_D3_mermaid_draws_a_parallel_states_history_inside_a_region_not_as_one() -> None:
    """A user draws a parallel state with two regions and a deep history pseudo-state as
    Mermaid: a `--` separator is written before the history state too, so the diagram shows
    a parallel state with three regions, the third holding only `H`."""
    text = to_mermaid(compile_chart(ResumableSplit))
    block = text[text.index("state split {") :]
    depth, separators = 0, 0
    for line in block.splitlines():
        if line.rstrip().endswith("{"):
            depth += 1
        elif line.strip() == "}":
            depth -= 1
            if depth == 0:
                break
        elif line.strip() == "--" and depth == 1:
            separators += 1
    assert separators == 1, text


class Job(StateChart[Any]):
    """Starts in a compound state whose initial child is `waiting`."""

    class job(State.Compound, name="Job"):
        waiting = State(initial=True)
        finished = State(final=True)
        finish = waiting.to(finished)

    idle = State()
    pause = job.to(idle)
    start = idle.to(job)


def test_D6_coverage_overlay_marks_the_initial_child_of_a_compound_state_entered() -> None:
    """A user records coverage of an instance that was in `job`'s initial child `waiting`
    from creation on, and again after `pause`, `start`: the diagram's coverage overlay marks
    `waiting` "missed" (never entered), contradicting the coverage report, which counts it."""
    chart = compile_chart(Job)
    coverage = Coverage()
    instance = chart.create()
    for event in ["pause", "start"]:
        coverage.record(chart, instance.send(event))
    assert [state.id for state in instance.configuration] == ["job", "waiting"]
    overlay = coverage_overlay(chart, coverage)
    assert overlay.states["waiting"].emphasis is Emphasis.HIT


class Split(StateChart[Any]):
    """A parallel state whose two regions both take `go`."""

    out = State(initial=True)

    class split(State.Parallel):
        class left(State.Compound):
            l1 = State(initial=True)
            l2 = State()
            go = l1.to(l2)

        class right(State.Compound):
            r1 = State(initial=True)
            r2 = State()
            go = r1.to(r2)

    start = out.to(split)
    leave = split.right.r2.to(out)


def test_D6_a_trace_the_runtime_recorded_in_a_parallel_state_can_be_drawn() -> None:
    """A user records a call's path with `TraceStep.of(outcome)` on a chart with a parallel
    state (`start`, `go` in both regions, `leave` from the right region) and draws it:
    `trace_overlay` follows one state only and raises TraceError ("took r2:leave:out, which
    the chart cannot do") on the runtime's own trace."""
    chart = compile_chart(Split)
    instance = chart.create()
    steps = [TraceStep.of(instance.send(event)) for event in ["start", "go", "leave"]]
    assert [state.id for state in instance.configuration] == ["out"]
    overlay = trace_overlay(chart, steps)
    assert overlay.transitions["l1:go:l2"].emphasis is Emphasis.HIT
    assert overlay.transitions["r1:go:r2"].emphasis is Emphasis.HIT


class FirstEntryFails(StateChart[Any]):
    """Async, errors not caught: the initial child's entry fails the first time only."""

    catch_errors_as_events = False

    class top(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)

    async def on_enter_a(self) -> None:
        self.model.log.append("enter a")
        if self.model.fail:
            self.model.fail = False
            raise ValueError("not yet")

    async def on_enter_b(self) -> None:
        self.model.log.append("enter b")


class Flaky:
    def __init__(self) -> None:
        self.log: list[str] = []
        self.fail = True


async def _attempt(action: Callable[[], Awaitable[Any]]) -> Any:
    try:
        return await action()
    except ValueError as error:
        return repr(error)


async def _activate_then_go(machine: Any) -> tuple[Any, list[str], list[str]]:
    first = await _attempt(machine.activate_initial_state)
    after_failure = [state.id for state in machine.configuration]
    await _attempt(lambda: machine.send("go"))
    return first, after_failure, [state.id for state in machine.configuration]


def test_C21_an_async_statechart_after_a_failed_initial_entry_runs_as_the_reference() -> None:
    """An async chart (errors not caught) whose initial child's `enter` fails once: the
    caller sees the ValueError, then sends `go`. python-statemachine is in `top, a` after the
    failure and `go` takes it to `b`; the compiled instance is in no state at all and ignores
    `go` (`no_transition`), a silently different run."""
    reference_model, compiled_model = Flaky(), Flaky()
    reference = asyncio.run(_activate_then_go(FirstEntryFails(reference_model)))
    compiled = asyncio.run(
        _activate_then_go(compile_chart(FirstEntryFails).create(compiled_model))
    )
    assert reference == ("ValueError('not yet')", ["top", "a"], ["top", "b"])
    assert compiled == reference
    assert compiled_model.log == reference_model.log


class Pipeline(StateChart[Any]):
    """`parsed` moves on by itself: an unguarded eventless transition."""

    idle = State(initial=True)
    parsed = State()
    done = State(final=True)
    feed = idle.to(parsed)
    parsed.to(done)


def test_D3_an_eventless_transition_without_guards_is_labelled() -> None:
    """A user draws a chart whose `parsed` state moves on by itself (an unguarded eventless
    transition): DOT draws it with `label=""` and Mermaid as `parsed --> done : ` (nothing
    after the colon), indistinguishable from a missing label, where issue 10 asks for
    eventless transitions to be labelled (the generated source already says `(eventless)`)."""
    chart = compile_chart(Pipeline)
    dot = to_dot(chart)
    edge = next(line for line in dot.splitlines() if "parsed -> done" in line)
    assert 'label=""' not in edge, edge
    mermaid = to_mermaid(chart)
    line = next(line for line in mermaid.splitlines() if "parsed --> done" in line)
    assert line.split(" : ", 1)[-1].strip() not in ("", line.strip()), line


def _in_state(machine: Any, wanted: str) -> bool:
    """A module helper a chart binds with functools.partial, as codebases share guards."""
    return wanted in machine.configuration_values


class PartialGuard(StateChart[Any]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, cond=functools.partial(_in_state, wanted="a"))


def test_C6_machine_api_in_a_partial_guard_is_refused_or_run() -> None:
    """A chart's guard is `functools.partial(_in_state, wanted="a")`, a shared helper that
    reads `machine.configuration_values`: the scan never looks into it, the compiled guard
    raises AttributeError, errors-as-events makes it false, and the instance stays in `a`
    where python-statemachine moves to `b`."""
    try:
        chart = compile_chart(PartialGuard)
    except UnsupportedChart:
        return
    reference = PartialGuard()
    instance = chart.create()
    reference.send("go")
    instance.send("go")
    assert [state.id for state in reference.configuration] == ["b"]
    assert [state.id for state in instance.configuration] == ["b"]
