"""Test support: record which transitions tests take, for coverage files and diagrams.

``record_coverage(coverage)`` counts, while it is active, the outcome of every event sent to any
instance of any compiled chart (queued events included) into a ``Coverage``. The pytest plugin
(``statecharts.pytest_plugin``, registered when the package is installed) does it for a whole
run: ``pytest --chart-coverage=FILE`` writes the counts to ``FILE``, which
``statecharts diagram MODULE:CLASS --coverage FILE -o chart.svg`` draws. Nothing is patched
unless recording is active: it registers with the runtime's ``observe_outcomes`` hook.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .. import _runtime
from .._coverage import Coverage
from .._runtime import Instance, Outcome, observe_outcomes


@contextmanager
def record_coverage(coverage: Coverage) -> Iterator[Coverage]:
    """Count every outcome of every chart instance into ``coverage`` until the block ends."""

    def record(instance: Instance, outcome: Outcome) -> None:
        if outcome.transitions:
            coverage.record(instance.chart, outcome)
        else:  # an ignored event: every active atomic state (each region's) ignored it
            states = [s.id for s in instance._node.configuration if s.kind == "atomic"]
            coverage.record(instance.chart, outcome, states)

    with observe_outcomes(record):
        yield coverage


@contextmanager
def unrecorded() -> Iterator[None]:
    """Hide the events sent inside the block from every coverage recorder: the path search
    runs the chart to *find* paths, which is not a test taking them."""
    with _runtime._observers_lock:
        saved, _runtime._observers = _runtime._observers, ()
    try:
        yield
    finally:
        with _runtime._observers_lock:
            _runtime._observers = saved
