"""Whether the Ray tests can run here (this module imports nothing from Ray)."""

import os

import pytest

from .conftest import HAVE_RAY


def test_ray_is_installed() -> None:
    if not HAVE_RAY:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run the Ray tests: install the extra with make ray")
        pytest.skip("Ray tests not run: `make ray` installs the ray extra and redis-server")
