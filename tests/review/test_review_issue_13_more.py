"""Breaks found by an independent review of issue 13 (second batch). Each test reproduces one;
fix the code, do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from toolcalls import (
    AbortSignal,
    CheckpointConflict,
    SnapshotError,
    ToolCallSession,
    ToolExecutor,
)
from toolcalls._runner import LocalRunner
from toolcalls._tools import PreparedTool
from toolcalls.checkpoint import Checkpoints, MemoryStore

RUNS: list[str] = []


def stream_call(call_id: str, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "start", "id": call_id, "name": name},
        {"type": "delta", "id": call_id, "argsTextDelta": json.dumps(args)},
        {"type": "ready", "id": call_id},
    ]


async def gate(key: str) -> str:
    RUNS.append(key)
    await asyncio.sleep(0.01)
    return key


# -- R3: the runner seam ------------------------------------------------------------------------


class CountingRunner(LocalRunner):
    """A LocalRunner that counts the calls handed to it (tracing, metrics...)."""

    __slots__ = ("runs",)

    def __init__(self) -> None:
        self.runs = 0

    async def run(
        self, tool: PreparedTool, args: Mapping[str, Any], bound: Any, signal: AbortSignal
    ) -> Any:
        self.runs += 1
        return await super().run(tool, args, bound, signal)


def test_R3_a_LocalRunner_subclass_is_handed_every_call_including_async_tools() -> None:
    """A user subclasses LocalRunner to instrument ``run()``: the executor bypasses ``run()``
    for every ``async def`` tool (it tests ``isinstance(runner, LocalRunner)``), so the
    subclass never sees those calls."""

    async def main() -> None:
        runner = CountingRunner()
        async with ToolExecutor({"gate": gate}, runner=runner) as executor:
            executor.register_call({"toolCallId": "x", "toolName": "gate", "args": {"key": "x"}})
            await executor.wait("x")
        assert runner.runs == 1

    asyncio.run(main())


# -- R7: one owner per stream -------------------------------------------------------------------


def test_R7_a_resume_that_fails_on_a_damaged_checkpoint_does_not_fence_out_the_live_owner() -> (
    None
):
    """A second process tries to resume a checkpoint whose tracker part is damaged: it claims
    the checkpoint first and only then finds the damage (SnapshotError), so the live owner,
    which nobody replaced, gets CheckpointConflict on its next save."""

    async def main() -> None:
        store = MemoryStore()
        session = ToolCallSession({"gate": gate})
        async with session:
            owner = Checkpoints(store, "k")
            await owner.save(session)
            loaded = await store.load("k")
            assert loaded is not None
            version, data = loaded
            damaged = json.loads(data)
            damaged["tracker"]["version"] = 999
            store._items["k"] = (version, json.dumps(damaged))
            with pytest.raises(SnapshotError):
                await Checkpoints(store, "k").resume({"gate": gate})
            try:
                await owner.save(session)
            except CheckpointConflict as conflict:
                pytest.fail(f"a failed resume took the stream from its owner: {conflict}")

    asyncio.run(main())


# -- R6: never silently lost --------------------------------------------------------------------


def test_R6_a_running_call_missing_from_inFlight_is_refused_or_reported_never_lost() -> None:
    """A damaged checkpoint's tracker has call a running but ``inFlight`` does not list it:
    resume accepts it, nothing runs or reports a, ``settled()`` ends, and a stays ``running``
    in the tracker for ever (silently lost)."""

    async def main() -> None:
        session = ToolCallSession({"gate": gate})
        async with session:
            for event in stream_call("a", "gate", {"key": "a"}):
                session.apply(event)
            checkpoint = json.loads(json.dumps(session.checkpoint()))
        checkpoint["inFlight"] = []
        try:
            resumed = ToolCallSession.resume(checkpoint, {"gate": gate})
        except SnapshotError:
            return  # refused: fine
        async with resumed:
            resumed.finish()
            reported = [s.tool_call_id async for s in resumed.settled()]
            assert reported == ["a"], "call a was neither run nor reported"

    asyncio.run(main())


def test_T22_a_truncated_checkpoint_in_the_store_raises_SnapshotError() -> None:
    """The store holds a checkpoint cut short (a partial write, a damaged value):
    ``Checkpoints.resume`` raises ``json.JSONDecodeError`` instead of the ``SnapshotError`` a
    damaged picture raises, so a caller handling damaged checkpoints misses it."""

    async def main() -> None:
        store = MemoryStore()
        session = ToolCallSession({"gate": gate})
        async with session:
            await Checkpoints(store, "k").save(session)
        loaded = await store.load("k")
        assert loaded is not None
        store._items["k"] = (loaded[0], loaded[1][: len(loaded[1]) // 2])
        with pytest.raises(SnapshotError):
            await Checkpoints(store, "k").resume({"gate": gate})

    asyncio.run(main())


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A redis-server of its own on 127.0.0.1 (a free port, nothing saved), killed after."""
    pytest.importorskip("redis")
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [server, "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
    process = subprocess.Popen([*command, "--daemonize", "no"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait()


def test_R7_two_saves_by_the_owner_at_once_do_not_report_another_process(redis_url: str) -> None:
    """The owning process saves from two tasks at once (a periodic save and a save after a
    settled call) through RedisStore: both send the same expected version and the second
    gets CheckpointConflict, "another process saved or resumed it", though nobody else did,
    and a caller following the docs gives the stream up."""
    from toolcalls.checkpoint import RedisStore

    async def main() -> None:
        store = RedisStore(redis_url)
        try:
            session = ToolCallSession({"gate": gate})
            async with session:
                owner = Checkpoints(store, "k")
                await owner.save(session)
                outcomes = await asyncio.gather(
                    owner.save(session), owner.save(session), return_exceptions=True
                )
            conflicts = [o for o in outcomes if isinstance(o, CheckpointConflict)]
            assert conflicts == [], f"the only owner was told it lost the stream: {conflicts}"
        finally:
            await store.aclose()

    asyncio.run(main())


# -- on a local Ray cluster (one per module) ----------------------------------------------------


def _refuse() -> Any:
    raise ValueError("this object cannot be rebuilt in the driver")


class Fragile:
    """Pickles anywhere, unpickles nowhere."""

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return (_refuse, ())


def fragile() -> object:
    return Fragile()


def stubborn(seconds: float) -> str:
    time.sleep(seconds)  # ignores its abort signal
    return "late"


@pytest.fixture(scope="module")
def ray_up() -> Iterator[Any]:
    """A local cluster for this module (reused if the run already has one)."""
    ray = pytest.importorskip("ray")
    owned = not ray.is_initialized()
    if owned:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        if owned and ray.is_initialized():
            ray.shutdown()


@pytest.mark.ray
def test_R5_a_result_that_cannot_be_unpickled_here_is_result_unserializable(
    ray_up: Any,
) -> None:
    """A tool's result pickles in the worker but fails to unpickle in the driver: docs/ray.md
    says ``result_unserializable``, but Ray raises ``RaySystemError`` and the call is reported
    as ``cluster_unreachable``, sending the user to look for a network problem."""
    from toolcalls.ray import RayRunner

    async def main() -> Any:
        async with ToolExecutor({"fragile": fragile}, runner=RayRunner()) as executor:
            executor.register_call({"toolCallId": "f", "toolName": "fragile", "args": {}})
            return await asyncio.wait_for(executor.wait("f"), 60)

    state = asyncio.run(main())
    assert state.error is not None
    assert state.error.kind == "result_unserializable", state.error.details


@pytest.mark.ray
def test_R4_a_call_goes_to_an_idle_actor_not_one_still_held_by_an_aborted_def_tool(
    ray_up: Any,
) -> None:
    """On a pool of two actors a plain ``def`` tool is aborted but keeps its actor busy (as
    documented); the pool counts that actor as free at once, so the next call queues behind
    the stubborn tool for seconds while the other actor is idle."""
    from toolcalls.ray import RayOptions, RayRunner

    runner = RayRunner(options={"stubborn": RayOptions(actors=2, num_cpus=0.5)})

    async def main() -> float:
        async with ToolExecutor({"stubborn": stubborn}, runner=runner) as executor:
            for warm in ("w0", "w1"):  # both actors up
                executor.register_call(
                    {"toolCallId": warm, "toolName": "stubborn", "args": {"seconds": 0}}
                )
            await executor.wait("w0")
            await executor.wait("w1")
            executor.register_call(
                {"toolCallId": "s", "toolName": "stubborn", "args": {"seconds": 10}}
            )
            await asyncio.sleep(1)
            executor.abort("s")
            started = time.monotonic()
            executor.register_call(
                {"toolCallId": "n", "toolName": "stubborn", "args": {"seconds": 0}}
            )
            state = await asyncio.wait_for(executor.wait("n"), 60)
            assert state.status == "success"
            return time.monotonic() - started

    try:
        took = asyncio.run(main())
    finally:
        runner.close()
    assert took < 4, f"the next call waited {took:.1f} s behind the aborted tool's actor"


def stubborn_marker(seconds: float, path: str) -> str:
    time.sleep(seconds)  # ignores its abort signal
    Path(path).write_text("finished")
    return "late"


@pytest.mark.ray
def test_R4_closing_the_runner_after_the_session_still_kills_a_def_task_ignoring_its_abort(
    ray_up: Any, tmp_path: Path
) -> None:
    """docs/ray.md's own pattern: leave the session, then ``runner.close()``. Leaving aborts
    the running ``def`` task, but ``close()`` cancels the timer that would force-cancel it
    after ``cancel_grace``, so a tool ignoring its abort runs on (holding its worker and CPU)
    until it returns, for ever if it never does."""
    from toolcalls.ray import RayRunner

    marker = tmp_path / "finished"
    runner = RayRunner(cancel_grace=1.0)

    async def main() -> None:
        async with ToolExecutor({"stubborn": stubborn_marker}, runner=runner) as executor:
            args = {"seconds": 6, "path": str(marker)}
            executor.register_call({"toolCallId": "x", "toolName": "stubborn", "args": args})
            await asyncio.sleep(2)
        runner.close()
        await asyncio.sleep(8)  # the grace period passed long ago; the tool would be done

    asyncio.run(main())
    assert not marker.exists(), "the aborted tool ran to the end: it was never force-cancelled"


_BLOCKED_LOOP = """
import asyncio, sys, time
from toolcalls import Tool, ToolExecutor
from toolcalls.ray import RayRunner

def quick() -> str:
    return "quick"

async def main() -> None:
    beats = []
    async def heartbeat() -> None:
        while True:
            beats.append(time.monotonic())
            await asyncio.sleep(0.1)
    beating = asyncio.ensure_future(heartbeat())
    await asyncio.sleep(0.3)
    started = time.monotonic()
    runner = RayRunner(address=sys.argv[1])
    async with ToolExecutor({"quick": Tool(quick, timeout=5)}, runner=runner) as executor:
        executor.register_call({"toolCallId": "x", "toolName": "quick", "args": {}})
        state = await executor.wait("x")
    gap = max(b - a for a, b in zip(beats, beats[1:]))
    beating.cancel()
    print(state.error.kind if state.error else state.status, round(gap, 1),
          round(time.monotonic() - started, 1), flush=True)

asyncio.run(main())
"""


@pytest.mark.ray
def test_R5_an_address_where_something_else_listens_neither_blocks_the_loop_nor_the_timeout() -> (
    None
):
    """The user gives an address where a non-Ray server listens (the dashboard's 8265, Redis's
    6379): the port probe passes and ``ray.init`` retries for minutes on the event loop's
    thread, freezing every task of the program, and the call's 5 s timeout never fires."""
    pytest.importorskip("ray")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        address = f"127.0.0.1:{server.getsockname()[1]}"
        try:
            done = subprocess.run(
                [sys.executable, "-c", textwrap.dedent(_BLOCKED_LOOP), address],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.fail("the call did not settle within 60 s (the event loop was blocked)")
    kind, gap, took = done.stdout.split()
    assert kind in {"timeout", "cluster_unreachable"}, done.stdout
    assert float(gap) < 5, f"the event loop was blocked for {gap} s"
    assert float(took) < 30, f"the call took {took} s to settle"
