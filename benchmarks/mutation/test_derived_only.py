"""The derived tests alone, as ``benchmarks/mutation_score.py`` runs them against each mutant.

``toolcalls`` is the mutated package; ``oracle_toolcalls`` an unmutated copy that provides the
tests themselves, the reference chart and the oracle tracker. Not collected by the test suite.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from oracle_toolcalls.conformance import ObjectImplementation, check
from oracle_toolcalls.conformance._suite import CHART, PATHS, PAYLOADS, WIRE_TYPES, _record

import toolcalls
from statecharts.testing import chart_machine

EXAMPLES = int(os.environ.get("MUTATION_EXAMPLES", "60"))


def test_the_tracker_passes_the_derived_conformance_suite() -> None:
    implementation = ObjectImplementation.from_spec("toolcalls:tool_call_streaming_state_machine")
    report = check(implementation, examples=EXAMPLES, shrink=False)
    assert report.divergence is None, str(report.divergence)


class TrackerAdapter:
    """The (mutated) tracker through its own API: ``apply`` says whether an event applied."""

    def __init__(self) -> None:
        self.tracker = toolcalls.ToolCallTracker()

    def create(self, key: str) -> None:
        assert self.tracker.apply({"type": "start", "id": key, "name": "search"}).applied

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None:
        if event not in WIRE_TYPES:
            return None
        wire: dict[str, Any] = {"type": WIRE_TYPES[event], "id": key}
        if event == "delta":
            wire["argsTextDelta"] = payload["text"]
        elif event == "result":
            wire["result"] = payload["value"]
        elif event == "fail":
            wire["error"] = payload["value"]
        return self.tracker.apply(wire).applied

    def configuration(self, key: str) -> set[str]:
        call = self.tracker.get(key)
        return set() if call is None else {call.status}


def test_the_tracker_passes_the_charts_derived_stateful_test() -> None:
    machine = chart_machine(CHART, TrackerAdapter, payloads=PAYLOADS, model=_record, paths=PATHS)
    options = settings(
        max_examples=EXAMPLES,
        stateful_step_count=20,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],  # whether, not how small
    )
    run_state_machine_as_test(machine, settings=options)
