"""Checkpoints in Redis: the fenced store, and a stream resumed in a second process after the
first was killed with SIGKILL mid-tool."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolcalls import CheckpointConflict
from toolcalls.checkpoint import CheckpointStore, RedisStore

ROOT = Path(__file__).resolve().parents[2]


def test_the_redis_store_saves_by_version_and_refuses_a_stale_writer(redis_url: str) -> None:
    async def main() -> None:
        store = RedisStore(redis_url, prefix="test-cas:")
        assert isinstance(store, CheckpointStore)
        try:
            assert await store.load("k") is None
            assert await store.save("k", "one", 0) == 1
            assert await store.save("k", "two", 1) == 2
            with pytest.raises(CheckpointConflict) as stale:
                await store.save("k", "late", 1)
            assert (stale.value.expected, stale.value.found) == (1, 2)
            assert await store.load("k") == (2, "two")
        finally:
            await store.aclose()

    asyncio.run(main())


def test_a_stream_resumes_in_a_second_process_from_redis_after_the_first_is_killed(
    redis_url: str, tmp_path: Path
) -> None:
    worker = [sys.executable, "-m", "tests.ray.resume_worker"]
    args = [redis_url, "stream-after-sigkill", str(tmp_path)]
    first = subprocess.Popen([*worker, "first", *args], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "saved").exists():
            assert first.poll() is None, "the first process ended before its checkpoint"
            assert time.monotonic() < deadline, "the first process never saved a checkpoint"
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
        assert first.wait(10) == -signal.SIGKILL
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    second = subprocess.run(
        [*worker, "second", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    settled = {s["toolCallId"]: s for s in report["settled"]}
    # c1 was reported before the kill: not again. c2 (not safe to re-run) was executing: it is
    # reported interrupted, and never started in the second process. c3 (rerun) ran again.
    assert sorted(settled) == ["c2", "c3", "c4"]
    assert settled["c2"]["error"]["kind"] == "interrupted"
    assert not (tmp_path / "c2-started-in-second").exists()
    assert settled["c3"]["result"] == "c3 again"
    assert settled["c4"]["result"] == 4  # its arguments were completed by the resumed stream
    tracker = {call["id"]: call for call in report["tracker"]}
    assert tracker["c1"]["result"] == 42
    assert [tracker[c]["status"] for c in ("c2", "c3", "c4")] == ["error", "done", "done"]
    assert report["version"] > int((tmp_path / "saved").read_text())
