"""Breaks found by an independent review of issue 13. Each test reproduces one; fix the code,
do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from toolcalls import CheckpointConflict, SnapshotError, ToolCallSession, ToolExecutor
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


async def settle_for(seconds: float = 0.1) -> None:
    await asyncio.sleep(seconds)


async def one_executing_one_pending() -> dict[str, Any]:
    """A checkpoint with call a executing and call b pending (max_concurrency=1)."""
    session = ToolCallSession({"gate": gate, "safe": gate}, max_concurrency=1)
    async with session:
        for event in stream_call("a", "gate", {"key": "a"}) + stream_call(
            "b", "gate", {"key": "b"}
        ):
            session.apply(event)
        checkpoint = json.loads(json.dumps(session.checkpoint()))
    assert [c["state"] for c in checkpoint["inFlight"]] == ["executing", "pending"]
    return checkpoint


# -- R7: one owner per stream ------------------------------------------------------------------


class _RacingStore(MemoryStore):
    """A store where a second process (C) resumes right after the first (B) claimed."""

    def __init__(self) -> None:
        super().__init__()
        self.saves = 0
        self.other: ToolCallSession | None = None

    async def save(self, key: str, data: str, expected: int) -> int:
        version = await super().save(key, data, expected)
        self.saves += 1
        if self.saves == 2:  # B's claim just landed: C loads it and resumes it
            plain = MemoryStore()
            plain._items, plain._lock = self._items, self._lock
            self.other = await Checkpoints(plain, key).resume({"gate": gate, "safe": gate})
        return version


def test_R7_two_processes_resuming_one_checkpoint_never_both_run_its_pending_call() -> None:
    """B claims the checkpoint; C loads B's claim and resumes it before B saved its own
    checkpoint. B then gets CheckpointConflict, but it had already started the pending call,
    so the pending call runs in both B and C."""

    async def main() -> None:
        checkpoint = await one_executing_one_pending()
        store = _RacingStore()
        await store.save("k", json.dumps(checkpoint), 0)
        RUNS.clear()
        with contextlib.suppress(CheckpointConflict):  # B may learn it lost: fine
            await Checkpoints(store, "k").resume({"gate": gate, "safe": gate})
        await settle_for(0.2)
        assert store.other is not None  # C won
        assert RUNS.count("b") == 1, f"the pending call ran {RUNS.count('b')} times"
        await store.other.aclose()

    asyncio.run(main())


# -- R6: a damaged checkpoint is refused before anything starts -------------------------------


def test_R6_a_checkpoint_listing_a_call_twice_in_flight_is_refused_before_any_call_runs() -> None:
    """A damaged checkpoint names the pending call twice in ``inFlight``: resume starts the
    call, then fails with an AssertionError (not SnapshotError), and the tool ran anyway."""

    async def main() -> None:
        checkpoint = await one_executing_one_pending()
        checkpoint["inFlight"].append(dict(checkpoint["inFlight"][1]))
        RUNS.clear()
        with pytest.raises(SnapshotError):
            ToolCallSession.resume(checkpoint, {"gate": gate, "safe": gate})
        await settle_for()
        assert RUNS == []

    asyncio.run(main())


def test_R6_an_in_flight_name_that_differs_from_the_tracked_call_never_reruns_it() -> None:
    """A damaged checkpoint says executing call a is tool "safe" while the tracker says
    "gate": with ``rerun={"safe"}`` resume re-runs the "gate" tool, which was not opted in."""

    async def main() -> None:
        checkpoint = await one_executing_one_pending()
        checkpoint["inFlight"] = checkpoint["inFlight"][:1]
        checkpoint["inFlight"][0]["name"] = "safe"
        checkpoint["tracker"]["calls"] = checkpoint["tracker"]["calls"][:1]
        RUNS.clear()
        try:
            tools = {"gate": gate, "safe": gate}
            session = ToolCallSession.resume(checkpoint, tools, rerun={"safe"})
        except SnapshotError:
            return  # refused: fine
        async with session:
            await settle_for()
        assert RUNS == [], "tool 'gate' ran again though only 'safe' may be re-run"

    asyncio.run(main())


# -- re-delivery after resume (S: re-delivery is harmless) -------------------------------------


def test_S_redelivery_after_resume_does_not_rerun_a_call_the_old_executor_remembered() -> None:
    """With max_history=1 the tracker forgets call a once b starts, but the executor still
    remembers a, so a re-delivered a is not run again. After checkpoint and resume (same
    events, same max_history) the executor's memory is lost and a re-delivered a runs twice."""

    async def main() -> None:
        RUNS.clear()
        session = ToolCallSession({"gate": gate}, max_history=1)
        await session.__aenter__()
        for event in stream_call("a", "gate", {"key": "a"}):
            session.apply(event)
        settled = session.settled()
        assert (await anext(settled)).tool_call_id == "a"
        session.apply({"type": "start", "id": "b", "name": "gate"})
        checkpoint = json.loads(json.dumps(session.checkpoint()))
        await settled.aclose()
        await session.aclose()
        resumed = ToolCallSession.resume(checkpoint, {"gate": gate})
        async with resumed:
            for event in stream_call("a", "gate", {"key": "a"}):
                resumed.apply(event)
            await settle_for()
        assert RUNS == ["a"], f"call a ran {RUNS.count('a')} times"

    asyncio.run(main())


# -- X10: settled exactly once, whatever the tool raises ---------------------------------------


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("this exception cannot be turned into text")


def raise_bad_str() -> str:
    raise BadStr()


def test_X10_a_tool_raising_an_exception_whose_str_fails_still_settles_locally() -> None:
    """A tool raises an exception whose ``__str__`` raises: building the ``tool_raised`` error
    fails inside the executor's task and the call stays ``executing`` forever."""

    async def main() -> None:
        executor = ToolExecutor({"bad": raise_bad_str})
        async with executor:
            executor.register_call({"toolCallId": "x", "toolName": "bad", "args": {}})
            state = await asyncio.wait_for(executor.wait("x"), 5)
        assert state.status == "error"
        assert state.error is not None
        assert state.error.kind == "tool_raised"

    asyncio.run(main())


# -- on a local Ray cluster (one per module) ---------------------------------------------------


async def exit_async() -> str:
    raise SystemExit(3)


def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


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


def run_one(ray: Any, name: str, function: Any, args: dict[str, Any]) -> Any:
    from toolcalls.ray import RayRunner

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)

    async def main() -> Any:
        async with ToolExecutor({name: function}, runner=RayRunner()) as executor:
            executor.register_call({"toolCallId": "x", "toolName": name, "args": args})
            return await asyncio.wait_for(executor.wait("x"), 60)

    return asyncio.run(main())


@pytest.mark.ray
def test_R5_an_async_tool_raising_SystemExit_on_ray_is_tool_raised_as_locally(
    ray_up: Any,
) -> None:
    """An ``async def`` tool raises ``SystemExit`` in a Ray task: the exception escapes the
    worker's event loop, kills the worker process, and the call is ``worker_died`` (a plain
    ``def`` tool, an actor pool and the local runner all give ``tool_raised``)."""
    state = run_one(ray_up, "exit_async", exit_async, {})
    assert state.error is not None
    assert state.error.kind == "tool_raised", state.error.details
    assert state.error.details["exception_type"] == "SystemExit"


@pytest.mark.ray
def test_R5_an_exception_whose_str_fails_on_ray_is_tool_raised_not_result_unserializable(
    ray_up: Any,
) -> None:
    """A tool raises an exception whose ``__str__`` fails: the worker cannot describe it and
    the call is reported as ``result_unserializable``, though the tool raised and returned
    nothing."""
    state = run_one(ray_up, "bad", raise_bad_str, {})
    assert state.error is not None
    assert state.error.kind == "tool_raised", state.error.details


@pytest.mark.ray
def test_R5_zz_a_call_settles_when_the_cluster_goes_away_mid_call(ray_up: Any) -> None:
    """A call is running on the cluster when the Ray connection goes away (``ray.shutdown()``,
    e.g. by the runner that owns it): the awaited ObjectRef never resolves and the call stays
    ``executing`` forever instead of settling as ``cluster_unreachable``. (Runs last: it ends
    the module's cluster.)"""
    from toolcalls.ray import RayRunner

    ray = ray_up
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)

    async def main() -> Any:
        async with ToolExecutor({"slow": slow}, runner=RayRunner()) as executor:
            call = {"toolCallId": "s", "toolName": "slow", "args": {"seconds": 30}}
            executor.register_call(call)
            await asyncio.sleep(3)
            ray.shutdown()
            try:
                return await asyncio.wait_for(executor.wait("s"), 20)
            except TimeoutError:
                return executor.get_call("s")

    state = asyncio.run(main())
    assert state.status == "error", f"the call is still {state.status} 20 s after the cluster went"
