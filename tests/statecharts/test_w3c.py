"""The W3C SCXML conformance suite (mandatory tests), loaded through python-statemachine's own
SCXML reader, on both engines.

The suite is not part of this repository: ``scripts/fetch-w3c-suite`` (run by ``make w3c`` and
by ``.ci/run``) unpacks it from python-statemachine's source distribution into ``.cache/``.
Without it these tests skip locally, saying how to fetch it, and fail in CI.

Each test is run on python-statemachine first; what it passes or fails is computed here, never
typed in. The compiled runtime must then either refuse the chart at compile time
(``UnsupportedChart``, naming the construct) or reach the same verdict: it may never give a
different answer. ``test_w3c_summary`` prints the counts.
"""

# Rules checked here (docs/spec.md): C3, C6, C15, C17, C18.

from __future__ import annotations

import collections
import functools
import os
import time
from importlib.metadata import version
from pathlib import Path

import pytest

from statecharts import UnsupportedChart, VirtualClock, compile_chart

ROOT = Path(__file__).resolve().parents[2]
SUITE = (
    ROOT
    / ".cache"
    / "w3c-scxml"
    / f"python-statemachine-{version('python-statemachine')}"
    / "w3c"
    / "mandatory"
)
FETCH = "scripts/fetch-w3c-suite (or `make w3c`)"
#: How long (seconds) a run may wait for delayed events: real time for python-statemachine,
#: virtual time for the compiled runtime.
_DEADLINE = 3.0


def _cases() -> list[Path]:
    if not SUITE.is_dir():
        return []
    return sorted(path for path in SUITE.glob("*.scxml") if "sub" not in path.name)


def _require_suite() -> None:
    if SUITE.is_dir():
        return
    message = f"the W3C SCXML suite is not fetched: run {FETCH}"
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(message)
    pytest.skip(message)


def _reference_passes(path: Path) -> bool:
    """Whether python-statemachine's engine reaches ``pass`` (waiting for delayed events up
    to a few seconds, as its own harness does)."""
    from statemachine.io import load

    try:
        machine = load(path, trusted=True)()
        deadline = time.monotonic() + _DEADLINE
        while not machine.is_terminated and time.monotonic() < deadline:
            time.sleep(0.01)
            machine._engine.processing_loop()
        return "pass" in {state.id for state in machine.configuration}
    except Exception:
        return False


@functools.cache
def run_case(name: str) -> tuple[bool, str]:
    """(python-statemachine passes, what the compiled runtime did: "passed", "failed",
    "differs: ..." or "refused: <construct>")."""
    from statemachine.io import load

    path = SUITE / f"{name}.scxml"
    reference = _reference_passes(path)
    try:
        chart = compile_chart(load(path, trusted=True))
    except UnsupportedChart as refusal:
        return reference, f"refused: {refusal.construct}"
    try:
        # on a virtual clock, the delayed events python-statemachine's run waits for (up to
        # the same 3 seconds) run in order, at once
        clock = VirtualClock()
        instance = chart.create(clock=clock)
        clock.advance(_DEADLINE)
        compiled = "pass" in {state.id for state in instance.configuration}
    except Exception as error:  # a crash is a different answer too
        return reference, f"differs: raised {type(error).__name__}: {error}"
    if compiled != reference:
        return reference, f"differs: compiled {'pass' if compiled else 'fail'}"
    return reference, "passed" if compiled else "failed"


@pytest.mark.parametrize("name", [path.stem for path in _cases()] or ["suite"])
def test_w3c_case_is_refused_or_answered_as_python_statemachine_answers(name: str) -> None:
    _require_suite()
    _, result = run_case(name)
    assert not result.startswith("differs"), f"{name}: {result}"


def test_w3c_summary(capsys: pytest.CaptureFixture[str]) -> None:
    _require_suite()
    counts: collections.Counter[str] = collections.Counter()
    reference_passes = 0
    for path in _cases():
        passes, result = run_case(path.stem)
        reference_passes += passes
        counts[result] += 1
    with capsys.disabled():
        print(
            f"\nW3C SCXML mandatory: {len(_cases())} tests; python-statemachine passes "
            f"{reference_passes}; compiled runtime: {dict(sorted(counts.items()))}"
        )
    assert not any(result.startswith("differs") for result in counts)
    assert sum(counts.values()) == len(_cases())
    # a floor, so a change that refuses (or fails) more of the suite is noticed
    assert counts["passed"] >= 120, counts
