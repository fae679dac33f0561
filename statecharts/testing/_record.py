"""Test support: record which transitions tests take, for coverage files and diagrams.

``record_coverage(coverage)`` counts, while it is active, the outcome of every event sent to any
instance of any compiled chart (queued events included) into a ``Coverage``. The pytest plugin
(``statecharts.pytest_plugin``, registered when the package is installed) does it for a whole
run: ``pytest --chart-coverage=FILE`` writes the counts to ``FILE``, which
``statecharts diagram MODULE:CLASS --coverage FILE -o chart.svg`` draws. Nothing is patched
unless recording is active, so the runtime's hot path is untouched otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._coverage import Coverage
from .._runtime import Instance, Outcome


@contextmanager
def record_coverage(coverage: Coverage) -> Iterator[Coverage]:
    """Count every outcome of every chart instance into ``coverage`` until the block ends."""
    send, ran_queued = Instance.send, Instance._ran_queued

    def recording_send(self: Instance, event: str, /, *args: Any, **kwargs: Any) -> Outcome:
        outcome = send(self, event, *args, **kwargs)
        coverage.record(self.chart, outcome)
        return outcome

    def recording_ran_queued(self: Instance, outcome: Outcome) -> None:
        coverage.record(self.chart, outcome)

    Instance.send = recording_send  # type: ignore[method-assign]
    Instance._ran_queued = recording_ran_queued  # type: ignore[method-assign]
    try:
        yield coverage
    finally:
        Instance.send = send  # type: ignore[method-assign]
        Instance._ran_queued = ran_queued  # type: ignore[method-assign]
