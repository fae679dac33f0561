"""Paths by construction: shortest paths to states, a transition-covering set, pytest cases."""

# Rules checked here (docs/spec.md): M5.

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from statecharts import compile_chart
from statecharts.testing import (
    Divergence,
    explore,
    path_cases,
    run_path,
    shortest_paths,
    transition_cover,
)
from toolcalls import ExecutionChart, ToolCallChart
from toolcalls._record import ToolCallModel

from .test_derived import CHART as TURNSTILE
from .test_derived import Counter, HandTurnstile

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
