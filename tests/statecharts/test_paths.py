"""Paths by construction: shortest paths to states, a transition-covering set, pytest cases."""

# Rules checked here (docs/spec.md): M5.

from __future__ import annotations

import math
import time
from types import SimpleNamespace
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import Coverage, compile_chart
from statecharts._coverage import exercised
from statecharts.testing import (
    Divergence,
    PathStep,
    explore,
    path_cases,
    record_coverage,
    run_path,
    shortest_paths,
    transition_cover,
)
from statecharts.testing._paths import fingerprint_of
from toolcalls import ExecutionChart, ToolCallChart
from toolcalls._record import ToolCallModel

from .test_derived import CHART as TURNSTILE
from .test_derived import Clocked, Counter, HandTurnstile, Heartbeat, Timeless

TOOL_CALL = compile_chart(ToolCallChart)
EXECUTION = compile_chart(ExecutionChart)
TOOL_CALL_CANDIDATES = {
    "delta": [{"text": '{"q": 1}'}, {"text": "NaN"}],
    "result": [{"value": None}],
    "fail": [{"value": "boom"}],
}


def call_record(key: str) -> ToolCallModel:
    return ToolCallModel(key, "search", 0)


def test_shortest_path_to_every_state_of_the_tool_call_chart() -> None:
    paths = shortest_paths(TOOL_CALL, TOOL_CALL_CANDIDATES, model=call_record)
    assert {state: path.id for state, path in paths.items()} == {
        "pending": "",
        "parsing": "ready",  # ready passes through parsing in its macrostep (T7)
        "running": 'delta(text="{\\"q\\": 1}")-ready',
        "done": 'delta(text="{\\"q\\": 1}")-ready-result',
        "error": "ready",
    }


def test_guards_are_evaluated_for_real_so_running_needs_arguments_that_parse() -> None:
    paths = shortest_paths(TOOL_CALL, {"delta": [{"text": "NaN"}]}, model=call_record)
    assert "running" not in paths
    exploration = explore(TOOL_CALL, {"delta": [{"text": "NaN"}]}, model=call_record)
    assert "parsing::running" in exploration.untaken_transitions


@pytest.mark.parametrize(
    ("chart", "candidates", "model"),
    [
        pytest.param(TOOL_CALL, TOOL_CALL_CANDIDATES, call_record, id="tool-call-chart"),
        pytest.param(EXECUTION, None, lambda key: SimpleNamespace(), id="execution-chart"),
    ],
)
def test_transition_cover_takes_every_transition(chart: Any, candidates: Any, model: Any) -> None:
    paths = transition_cover(chart, candidates, model=model)
    taken = {t for path in paths for t in path.transitions}
    assert taken == {t.id for t in chart.transitions}
    assert len(paths) <= len(chart.transitions)


def test_transition_cover_of_the_execution_chart_reads_as_event_sequences() -> None:
    paths = transition_cover(EXECUTION, model=lambda key: SimpleNamespace())
    assert [path.id for path in paths] == ["fail", "start-fail", "start-succeed"]


TURNSTILE_PATHS = transition_cover(
    TURNSTILE, {"coin": [{"amount": 1}, {"amount": 2}]}, model=lambda key: Counter()
)


def test_path_cases_have_readable_ids() -> None:
    ids = [case.id for case in path_cases(TURNSTILE_PATHS)]
    assert "coin(amount=2)-push" in ids


@pytest.mark.parametrize("path", path_cases(TURNSTILE_PATHS))
def test_each_turnstile_path_passes_on_a_correct_sut(path: Any) -> None:
    run_path(TURNSTILE, HandTurnstile(), path, model=lambda key: Counter())


def test_a_path_finds_a_bug_on_its_way() -> None:
    [unlock] = [p for p in TURNSTILE_PATHS if p.id == "coin(amount=2)-push"]
    with pytest.raises(Divergence, match="configurations differ"):
        run_path(TURNSTILE, HandTurnstile("off_by_one"), unlock, model=lambda key: Counter())


# -- what a run reaches: the macrostep creating an instance, states passed through ------------


class Boot(StateChart):  # type: ignore[type-arg]
    """Creating an instance passes through ``boot`` (eventless, to ``ready``)."""

    boot = State(initial=True)
    ready = State()
    done = State(final=True)

    boot.to(ready)
    go = ready.to(done)


class Deep(StateChart):  # type: ignore[type-arg]
    """``go`` enters ``outer`` and ``inner`` on its way to ``leaf``, which it leaves at once."""

    idle = State(initial=True)

    class outer(State.Compound):
        class inner(State.Compound):
            leaf = State(initial=True)
            other = State()

            hop = leaf.to(other)

    done = State(final=True)

    go = idle.to(outer.inner.leaf)
    outer.inner.leaf.to(done)


@pytest.mark.parametrize("cls", [Boot, Deep], ids=["creation-leaves-the-start", "pass-through"])
def test_explore_reaches_what_coverage_counts_for_the_same_runs(cls: Any) -> None:
    """The states and transitions ``explore`` reaches are those the coverage recorder
    counts when the covering paths run: what creating an instance takes, and every state a
    macrostep passes through."""
    chart = compile_chart(cls)
    found = explore(chart)
    with record_coverage(Coverage()) as coverage:
        for path in transition_cover(chart):
            instance = chart.create()
            for step in path.steps:
                instance.send(step.event, **step.payload)
    taken, entered = exercised(chart, coverage.chart(chart))
    assert {t for t, count in taken.items() if count} == set(found.to_transition)
    assert entered == set(found.to_state)
    passed_through = {"boot", "boot::ready", "outer", "inner", "leaf::done"}
    assert passed_through & {*chart.states_by_id, *(t.id for t in chart.transitions)} <= {
        *found.to_state,
        *found.to_transition,
    }


# -- nodes compare by value ---------------------------------------------------------------------


class Cart:
    def __init__(self, *items: int) -> None:
        self.items = list(items)


class Slotted:
    __slots__ = ("cart", "count")

    def __init__(self, cart: Cart, count: float) -> None:
        self.cart, self.count = cart, count


def test_fingerprints_compare_data_by_value_never_by_address() -> None:
    assert fingerprint_of(Cart(1, 2)) == fingerprint_of(Cart(1, 2))
    assert fingerprint_of(Cart(1, 2)) != fingerprint_of(Cart(1, 2, 3))
    assert fingerprint_of(Slotted(Cart(1), math.nan)) == fingerprint_of(Slotted(Cart(1), math.nan))
    assert fingerprint_of(Slotted(Cart(1), 1)) != fingerprint_of(Slotted(Cart(1), True))
    assert fingerprint_of({"a": 1, "b": [Cart()]}) == fingerprint_of({"b": [Cart()], "a": 1})
    assert fingerprint_of({1, 2}) == fingerprint_of({2, 1})
    assert fingerprint_of(object()) == fingerprint_of(object())  # nothing to tell them apart
    looped, other = Cart(), Cart()
    looped.items.append(looped)  # type: ignore[arg-type]
    other.items.append(other)  # type: ignore[arg-type]
    assert fingerprint_of(looped) == fingerprint_of(other)
    hash(fingerprint_of(looped))


# -- time: delayed events wait on a virtual clock ------------------------------------------------


def test_a_delayed_event_is_a_step_the_search_takes_on_a_virtual_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(seconds: float) -> None:
        raise AssertionError(f"slept {seconds} s of real time")

    monkeypatch.setattr(time, "sleep", never)
    chart = compile_chart(Heartbeat)
    paths = shortest_paths(chart, {"timeout": []})  # never sent: only time passing leaves
    assert paths["dead"].id == "ping-wait(30s)"
    assert paths["dead"].steps[-1] == PathStep.wait(30.0)
    assert paths["dead"].events == ("ping",)
    run_path(chart, Clocked(Heartbeat), paths["dead"])
    with pytest.raises(TypeError, match="advance"):
        run_path(chart, Timeless(Heartbeat), paths["dead"])
