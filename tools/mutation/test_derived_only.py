"""The derived tests alone, as ``tools/mutation_score.py derived`` runs them against each mutant
of the tracker and its chart (``toolcalls/_tracker.py``, ``_chart.py``, ``_record.py``).

Two tests, both derived from ``ToolCallChart`` by ``statecharts.testing`` and both comparing
against ``SeedModel``, a model of seed 000 that shares no code with the tracker:

- the conformance suite (its derived stateful test and paths) through the seed's API, held
  to T8's exact parse errors, with ``apply``'s outcome compared;
- the tracker's derived machines (``tests/toolcalls/test_tracker_stateful.py``), unbounded and
  with ``max_history``, through the tracker's own API.

Not collected by the test suite (it is outside ``testpaths``); no hand-written test runs.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from toolcalls.conformance import ObjectImplementation, check

EXAMPLES = int(os.environ.get("MUTATION_EXAMPLES", "60"))
#: Whether a mutant is caught, not how small the counterexample is: no shrinking.
OPTIONS = settings(
    max_examples=EXAMPLES,
    stateful_step_count=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


def test_the_tracker_passes_the_conformance_suite() -> None:
    implementation = ObjectImplementation.from_spec("toolcalls:tool_call_streaming_state_machine")
    report = check(implementation, examples=EXAMPLES, shrink=False, errors="T8")
    assert report.divergence is None, str(report.divergence)


# The machines are imported where they run: importing them computes the tracker's covering
# paths, so a mutant the conformance suite (first) already kills costs no more than that.


def test_the_tracker_passes_its_derived_machine() -> None:
    from tests.toolcalls.test_tracker_stateful import TrackerMachine

    run_state_machine_as_test(TrackerMachine, settings=OPTIONS)


def test_the_bounded_tracker_passes_its_derived_machine() -> None:
    from tests.toolcalls.test_tracker_stateful import BoundedTrackerMachine

    run_state_machine_as_test(BoundedTrackerMachine, settings=OPTIONS)
