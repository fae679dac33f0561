"""The benchmark scripts keep running (a smoke run each; times are never asserted here)."""

# Rules checked here (docs/spec.md): C13, P5, M6.

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("bench_engine.py", ["hand-written", "statecharts (compiled)", "python-statemachine"]),
        ("bench_tracker.py", ["(a) 100 interleaved calls", "(b) one call", "(c) memory"]),
        ("bench_executor.py", ["async def tools", "plain def tools"]),
        (
            "bench_session.py",
            ["hand-written loop (list)", "session.apply()", "run(list)", "run(queue)"],
        ),
        ("bench_adapters.py", ["(a) OpenAI Chat Completions", "(b) Anthropic Messages"]),
        ("bench_conformance.py", ["json.loads (s)", "read per MB at 4 MB"]),
    ],
)
def test_benchmark_runs_and_reports_every_measurement(script: str, expected: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for text in expected:
        assert text in done.stdout
    assert "target" in done.stdout
