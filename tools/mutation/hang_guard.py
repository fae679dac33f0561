"""A pytest plugin for mutation runs: a test that hangs ends the run at once, as a kill.

A mutant that breaks a wake-up (a future never resolved, a loop that never ends) makes an
``async`` test wait forever; mutmut only stops it after its timeout, fifteen times the tests'
usual duration, minutes per mutant. Here a test still running after ``LIMIT`` seconds (far
beyond any test's duration, even on a loaded machine) ends the process with exit status 1, a
failed test: the mutant is killed either way, only sooner. Not used outside mutation runs.
"""

from __future__ import annotations

import faulthandler
import os
from collections.abc import Generator

import pytest

#: Seconds a test may run before it counts as hanging (``MUTATION_TEST_LIMIT`` overrides).
LIMIT = float(os.environ.get("MUTATION_TEST_LIMIT", "20"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    # To file descriptor 2: mutmut replaces sys.stderr with an object that has no file.
    faulthandler.dump_traceback_later(LIMIT, exit=True, file=2)
    try:
        return (yield)
    finally:
        faulthandler.cancel_dump_traceback_later()
