"""Test support: record which transitions tests take, for coverage files and diagrams.

``record_coverage(coverage)`` counts, while it is active, the outcome of every event sent to any
instance of any compiled chart (queued events included) into a ``Coverage``. The pytest plugin
(``statecharts.pytest_plugin``, registered when the package is installed) does it for a whole
run: ``pytest --chart-coverage=FILE`` writes the counts to ``FILE``, which
``statecharts diagram MODULE:CLASS --coverage FILE -o chart.svg`` draws. Nothing is patched
unless recording is active: it registers with the runtime's ``observe_outcomes`` hook.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .._coverage import Coverage
from .._runtime import Instance, Outcome, observe_outcomes


@contextmanager
def record_coverage(coverage: Coverage) -> Iterator[Coverage]:
    """Count every outcome of every chart instance into ``coverage`` until the block ends."""

    def record(instance: Instance, outcome: Outcome) -> None:
        if getattr(_hidden, "depth", 0):  # this thread is searching paths
            return
        if outcome.transitions:
            coverage.record(instance.chart, outcome)
        else:  # an ignored event: every active atomic state (each region's) ignored it
            states = [s.id for s in instance._node.configuration if s.kind == "atomic"]
            coverage.record(instance.chart, outcome, states)

    with observe_outcomes(record):
        yield coverage


#: Per thread: how many ``unrecorded`` blocks are open.
_hidden = threading.local()


@contextmanager
def unrecorded() -> Iterator[None]:
    """Hide the events this thread sends inside the block from every coverage recorder: the
    path search runs the chart to *find* paths, which is not a test taking them. Other
    threads' events are still recorded."""
    _hidden.depth = getattr(_hidden, "depth", 0) + 1
    try:
        yield
    finally:
        _hidden.depth -= 1
