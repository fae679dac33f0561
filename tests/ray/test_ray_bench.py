"""bench_ray.py keeps running (a smoke run; times are never asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "bench_ray.py"


def test_bench_ray_runs_and_reports_every_measurement() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for text in (
        "bare Ray",
        "RayRunner through ToolExecutor",
        "local runner",
        "2 workers",
        "4 workers",
        "2 plain processes",
        "load average",
        "target",
    ):
        assert text in done.stdout
