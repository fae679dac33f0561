"""Shared test settings: Hypothesis profiles, and tests that need Graphviz's ``dot``.

``default`` is quick enough to run on every change; ``ci`` (selected by ``.ci/run`` through
``HYPOTHESIS_PROFILE=ci``) explores more. Stateful tests never have a deadline: they run many
steps per example and these machines are noisy.

Tests marked ``graphviz`` render SVG or PNG with Graphviz's ``dot``. Where it is missing they
are left out and reported on one line at the end of the run; in CI (``CI`` set, as
``.ci/run`` does, which installs Graphviz) they run, and fail rather than pass unseen.
"""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")
NO_DOT = (
    "SVG/PNG diagram tests skipped: Graphviz's 'dot' is not installed (install the "
    "'graphviz' system package to run them; CI installs it and runs them)"
)


_DESELECTED = pytest.StashKey[int]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if IN_CI or shutil.which("dot") is not None:
        return
    needs_dot = [item for item in items if item.get_closest_marker("graphviz") is not None]
    if needs_dot:
        config.hook.pytest_deselected(items=needs_dot)
        items[:] = [item for item in items if item.get_closest_marker("graphviz") is None]
        config.stash[_DESELECTED] = len(needs_dot)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = terminalreporter.config.stash.get(_DESELECTED, 0)
    if skipped:
        terminalreporter.write_line(f"{skipped} {NO_DOT}", yellow=True)
