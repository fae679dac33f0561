"""Recording transition coverage from tests: the context manager and the pytest option."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from statecharts import Coverage, Instance, compile_chart
from statecharts.testing import record_coverage
from toolcalls import ToolCallChart

from .charts import Recorder, Relay, Triage


def test_record_coverage_counts_taken_transitions_and_ignored_events() -> None:
    chart = compile_chart(Triage)
    with record_coverage(Coverage()) as coverage:
        instance = chart.create(Recorder())
        instance.send("route", amount=3)
        instance.send("route", amount=3)
        instance.send("reset")
        instance.send("route", amount=50)
    counts = coverage.chart(chart)
    assert counts.taken == {"inbox:route:small": 1, "small:reset:inbox": 1, "inbox:route:large": 1}
    assert counts.ignored == {"small": {"route": 1}}


def test_record_coverage_counts_events_queued_by_callbacks() -> None:
    chart = compile_chart(Relay)
    with record_coverage(Coverage()) as coverage:
        chart.create(Recorder()).send("go")
    assert coverage.chart(chart).taken == {"a:go:b": 1, "b:go:c": 1}


def test_record_coverage_stops_at_the_end_of_its_block_and_patches_nothing() -> None:
    send = Instance.send
    chart = compile_chart(Relay)
    with record_coverage(Coverage()) as coverage:
        assert Instance.send is send
        chart.create(Recorder()).send("go")
    chart.create(Recorder()).send("go")
    assert coverage.chart(chart).taken == {"a:go:b": 1, "b:go:c": 1}


def test_tracker_stateful_test_takes_every_transition_of_the_tool_call_chart() -> None:
    from tests.toolcalls.test_tracker_stateful import TrackerMachine

    chart = compile_chart(ToolCallChart)
    with record_coverage(Coverage()) as coverage:
        run_state_machine_as_test(
            TrackerMachine,
            settings=settings(max_examples=100, stateful_step_count=40, derandomize=True),
        )
    assert set(coverage.chart(chart).taken) == {t.id for t in chart.transitions}


def test_pytest_option_writes_a_coverage_file(tmp_path: Path) -> None:
    target = tmp_path / "coverage" / "charts.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--chart-coverage={target}",
            "tests/statecharts/test_runtime.py::test_applied_outcome_names_source_target_and_transition",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    coverage = Coverage.load(target)
    assert coverage.chart(compile_chart(Triage)).taken == {"inbox:route:large": 1}


def test_executor_derived_test_takes_every_transition_of_the_execution_chart() -> None:
    from tests.toolcalls.test_executor_stateful import DerivedExecutorMachine
    from toolcalls import ExecutionChart

    chart = compile_chart(ExecutionChart)
    with record_coverage(Coverage()) as coverage:
        run_state_machine_as_test(
            DerivedExecutorMachine,
            settings=settings(max_examples=40, stateful_step_count=20, derandomize=True),
        )
    assert set(coverage.chart(chart).taken) == {t.id for t in chart.transitions}
