"""Session checkpoints: what is saved, the resume rule for in-flight calls, and store fencing."""

# Rules checked here (docs/spec.md): R2, R6, R7.

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolcalls import CheckpointConflict, ExecutionView, SnapshotError, ToolCallSession
from toolcalls.checkpoint import Checkpoints, CheckpointStore, MemoryStore

from .executor_support import Gates, run_async, settle
from .test_tracker import delta, ready, start


def stream_call(call_id: str, key: str, name: str = "gate") -> list[dict[str, Any]]:
    return [start(call_id, name), delta(call_id, json.dumps({"key": key})), ready(call_id)]


def summary(states: list[ExecutionView]) -> list[tuple[str, str, Any]]:
    return [(s.tool_call_id, s.status, s.error.kind if s.error else s.result) for s in states]


async def drain(session: ToolCallSession) -> list[ExecutionView]:
    session.finish()
    return [state async for state in session.settled()]


async def interrupted_session(gates: Gates) -> dict[str, Any]:
    """A session with: c1 done and reported, c2 done but unreported, c3 and c4 executing,
    c5 pending for a concurrency slot, c6 still streaming its arguments."""
    tools = {"gate": gates.tool, "safe": gates.tool}
    session = ToolCallSession(tools, max_concurrency=2, max_history=10)
    async with session:
        for event in stream_call("c1", "k1") + stream_call("c2", "k2"):
            session.apply(event)
        await settle()
        gates.open("k1", "one")
        await settle()
        settled = session.settled()
        assert (await anext(settled)).tool_call_id == "c1"
        gates.open("k2", "two")
        await settle()
        events = stream_call("c3", "k3") + stream_call("c4", "k4", "safe")
        events += [*stream_call("c5", "k5"), start("c6", "gate"), delta("c6", '{"ke')]
        for event in events:
            session.apply(event)
        await settle()
        checkpoint = session.checkpoint(position={"offset": 17})
        await settled.aclose()
    return json.loads(json.dumps(checkpoint))  # it is JSON


@run_async
async def test_a_checkpoint_holds_the_tracker_the_calls_in_flight_and_the_unreported() -> None:
    checkpoint = await interrupted_session(Gates())
    assert checkpoint["format"] == "toolcalls.session"
    assert checkpoint["inFlight"] == [
        {"id": "c3", "name": "gate", "state": "executing"},
        {"id": "c4", "name": "safe", "state": "executing"},
        {"id": "c5", "name": "gate", "state": "pending"},
    ]
    assert [s["toolCallId"] for s in checkpoint["unreported"]] == ["c2"]
    assert [c["status"] for c in checkpoint["tracker"]["calls"]] == [
        "done",
        "done",
        "running",
        "running",
        "running",
        "pending",
    ]
    assert checkpoint["position"] == {"offset": 17}


@run_async
async def test_resume_reruns_pending_calls_and_interrupts_executing_ones_unless_told() -> None:
    checkpoint = await interrupted_session(Gates())
    gates = Gates()
    session = ToolCallSession.resume(
        checkpoint, {"gate": gates.tool, "safe": gates.tool}, rerun={"safe"}
    )
    async with session:
        assert session.position == {"offset": 17}
        await settle()
        assert sorted(gates.started) == ["k4", "k5"]  # c3 was executing: not run again
        for key in ("k4", "k5"):
            gates.open(key, key.upper())
        session.apply(delta("c6", 'y": "k6"}'))
        session.apply(ready("c6"))
        await settle()
        gates.open("k6", "K6")
        settled = await drain(session)
    assert summary(settled) == [
        ("c2", "success", "two"),
        ("c3", "error", "interrupted"),
        ("c4", "success", "K4"),
        ("c5", "success", "K5"),
        ("c6", "success", "K6"),
    ]
    statuses = {c.id: (c.status, c.result) for c in session.tracker.list()}
    assert statuses["c1"] == ("done", "one")
    assert statuses["c3"][0] == "error"


@run_async
async def test_no_call_in_flight_is_lost_by_a_resume() -> None:
    checkpoint = await interrupted_session(Gates())
    gates = Gates()
    async with ToolCallSession.resume(checkpoint, {"gate": gates.tool, "safe": gates.tool}) as s:
        await settle()
        for key in gates.futures:
            gates.open(key, key)
        s.apply(delta("c6", 'y": "k6"}'))
        s.apply(ready("c6"))
        await settle()
        gates.open("k6", "k6")
        settled = await drain(s)
    in_flight = {c["id"] for c in checkpoint["inFlight"]}
    assert in_flight | {"c6"} <= {state.tool_call_id for state in settled}


@pytest.mark.parametrize(
    ("damage", "field"),
    [
        (lambda c: c.update(format="other"), "format"),
        (lambda c: c.update(version=9), "version"),
        (
            lambda c: c["inFlight"].append({"id": "c1", "name": "gate", "state": "executing"}),
            "inFlight.3",
        ),
        (lambda c: c["inFlight"][0].update(state="running"), "inFlight.0.state"),
        (lambda c: c.pop("tracker"), "tracker"),
    ],
)
@run_async
async def test_a_damaged_checkpoint_is_refused_naming_the_field(damage: Any, field: str) -> None:
    checkpoint = await interrupted_session(Gates())
    damage(checkpoint)
    gates = Gates()
    with pytest.raises(SnapshotError) as raised:
        ToolCallSession.resume(checkpoint, {"gate": gates.tool, "safe": gates.tool})
    assert raised.value.field == field
    assert gates.started == []


class InterleavingStore(MemoryStore):
    """Lets other tasks run between reading and writing, as a remote store does."""

    async def load(self, key: str) -> tuple[int, str] | None:
        found = await super().load(key)
        await asyncio.sleep(0)
        return found


@run_async
async def test_the_store_claims_a_checkpoint_so_only_one_process_resumes_it() -> None:
    store = InterleavingStore()
    assert isinstance(store, CheckpointStore)
    gates = Gates()
    tools = {"gate": gates.tool}
    async with ToolCallSession(tools) as session:
        for event in stream_call("c1", "k1"):
            session.apply(event)
        await settle()
        owner = Checkpoints(store, "stream-1")
        assert await owner.save(session) == 1
        racing = [Checkpoints(store, "stream-1") for _ in range(2)]
        outcomes = await asyncio.gather(
            *(r.resume(tools, rerun={"gate"}) for r in racing), return_exceptions=True
        )
        resumed = [o for o in outcomes if isinstance(o, ToolCallSession)]
        assert len(resumed) == 1
        assert [type(o) for o in outcomes if not isinstance(o, ToolCallSession)] == [
            CheckpointConflict
        ]
        await settle()
        assert gates.started == ["k1", "k1"]  # the original run, and one re-run: not two
        with pytest.raises(CheckpointConflict) as superseded:
            await owner.save(session)  # the old owner learns it no longer owns the stream
        assert (superseded.value.expected, superseded.value.found) == (1, 2)  # the claim
        await resumed[0].aclose()


@run_async
async def test_resuming_a_key_never_saved_gives_none() -> None:
    assert await Checkpoints(MemoryStore(), "nothing").resume({}) is None


@run_async
async def test_a_checkpoint_refuses_a_value_json_cannot_hold_naming_where_it_is() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}) as session:
        with pytest.raises(SnapshotError) as raised:
            session.checkpoint(position={1, 2})
        assert raised.value.field == "position"
        for event in stream_call("c1", "k1"):
            session.apply(event)
        await settle()
        gates.open("k1", {"when": object()})
        await settle()
        with pytest.raises(SnapshotError) as raised:
            session.checkpoint()
        assert raised.value.field == "calls.0.result"  # the tracker's snapshot says it first
