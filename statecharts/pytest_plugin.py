"""pytest plugin: ``--chart-coverage=FILE`` records which chart transitions the tests took.

Registered through the ``pytest11`` entry point, so any project that installs ``statecharts``
gets the option; without it the plugin does nothing.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from ._coverage import Coverage
from .testing import record_coverage

_STASH = pytest.StashKey[tuple[ExitStack, Coverage, Path]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("statecharts").addoption(
        "--chart-coverage",
        metavar="FILE",
        default=None,
        help="write the transitions of compiled charts the tests took to FILE (JSON)",
    )


def pytest_configure(config: pytest.Config) -> None:
    target = config.getoption("--chart-coverage", default=None)
    if not target:
        return
    stack = ExitStack()
    coverage = stack.enter_context(record_coverage(Coverage()))
    config.stash[_STASH] = (stack, coverage, Path(target))


def pytest_unconfigure(config: pytest.Config) -> None:
    entry = config.stash.get(_STASH, None)
    if entry is None:
        return
    stack, coverage, path = entry
    stack.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    coverage.save(path)
