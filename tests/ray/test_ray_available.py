"""Whether the Ray tests can run here (this module imports nothing from Ray)."""

import os

import pytest

from .conftest import HAVE_RAY


def test_ray_is_installed() -> None:
    if not HAVE_RAY:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run the Ray tests: install the extra (pip install -e '.[ray]')")
        pytest.skip("Ray tests not run: install the extra with pip install -e '.[ray]'")
