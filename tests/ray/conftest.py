"""The Ray tests: one local cluster for the whole run, started and shut down here.

Without the ``ray`` extra these modules are not collected and ``test_ray_is_installed`` skips
with one line saying how to get them; under CI (``CI=true``) that test fails instead, so a CI
run never silently drops them. Every test here carries the ``ray`` marker.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HAVE_RAY = importlib.util.find_spec("ray") is not None
HERE = Path(__file__).parent

if not HAVE_RAY:
    collect_ignore_glob = ["test_ray_*.py", "test_checkpoint_*.py", "resume_worker.py"]


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


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis server of its own on 127.0.0.1 (a free port, nothing saved to disk), stopped
    after the session. Debian's ``redis-server`` must be installed (``.ci/run`` does it)."""
    server = shutil.which("redis-server")
    if server is None:
        message = "redis-server is not installed (apt-get install redis-server)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [
            server,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
                    connection.sendall(b"PING\r\n")
                    if connection.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {port}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
