"""The Ray tests: one local cluster for the whole run, started and shut down here.

Without the ``ray`` extra these modules are not collected and ``test_ray_is_installed`` skips
with one line saying how to get them; under CI (``CI=true``) that test fails instead, so a CI
run never silently drops them. Every test here carries the ``ray`` marker.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HAVE_RAY = importlib.util.find_spec("ray") is not None
HERE = Path(__file__).parent

if not HAVE_RAY:
    collect_ignore_glob = ["test_ray_*.py", "test_checkpoint_*.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.ray)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A local Ray cluster (4 logical CPUs, no dashboard) for the session; shut down after."""
    import ray

    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def ray_runner(ray_cluster: Any) -> Iterator[Any]:
    """One ``RayRunner`` on the session's cluster (it leaves the cluster to the fixture)."""
    from toolcalls.ray import RayRunner

    runner = RayRunner(cancel_grace=1.0)
    runner.connect()
    try:
        yield runner
    finally:
        runner.close()
