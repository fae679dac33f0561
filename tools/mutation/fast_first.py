"""A pytest plugin for mutmut's pass of ``tools/mutation_score.py`` (loaded with ``-p``).

mutmut runs a mutant's tests with ``-x`` in the order it happens to hold them (a set), so a
killed mutant costs whatever ran before the first failing test. This plugin runs the test files
in the order the script lists them (the quick, focused ones first, the differential test
last), which changes which test fails first, never whether one does.

It also registers the Hypothesis profile ``mutation``: the profile tests run under when they
set no example count of their own, with ``MUTATION_EXAMPLES`` examples. The script uses it for
mutmut's pass only; every survivor is then re-run for real under the full ``default`` profile,
so fewer examples here can only move a verdict from mutmut's pass to the re-run.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "mutation",
    max_examples=int(os.environ.get("MUTATION_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

#: The test files in the order to run them (``os.pathsep``-separated), set by the script.
ORDER = "MUTATION_TEST_ORDER"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    order = [path for path in os.environ.get(ORDER, "").split(os.pathsep) if path]
    if not order:
        return
    rank = {path: index for index, path in enumerate(order)}
    # a stable sort: within a file, the file's own order
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
