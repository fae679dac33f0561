"""A process holding a session, for the resume test: ``first`` runs a stream until a call is
executing, checkpoints it to Redis and waits to be killed; ``second`` resumes the stream from
Redis, feeds it the rest and prints what settled as JSON.

    python -m tests.ray.resume_worker first|second REDIS_URL KEY DIRECTORY
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from toolcalls import AbortSignal, ToolCallSession
from toolcalls.checkpoint import Checkpoints, RedisStore

STREAM: list[dict[str, Any]] = [
    {"type": "start", "id": "c1", "name": "fast"},
    {"type": "delta", "id": "c1", "argsTextDelta": '{"n": 21}'},
    {"type": "ready", "id": "c1"},
    {"type": "start", "id": "c2", "name": "slow"},
    {"type": "delta", "id": "c2", "argsTextDelta": '{"key": "c2"}'},
    {"type": "ready", "id": "c2"},
    {"type": "start", "id": "c3", "name": "idem"},
    {"type": "delta", "id": "c3", "argsTextDelta": '{"key": "c3"}'},
    {"type": "ready", "id": "c3"},
    {"type": "start", "id": "c4", "name": "fast"},
    {"type": "delta", "id": "c4", "argsTextDelta": '{"n":'},
    # the first process is killed here; the second resumes from this position
    {"type": "delta", "id": "c4", "argsTextDelta": " 2}"},
    {"type": "ready", "id": "c4"},
]
KILLED_AT = 11


def tools(directory: Path, process: str) -> dict[str, Any]:
    def fast(n: int) -> int:
        return n * 2

    def slow(key: str, signal: AbortSignal) -> str:
        (directory / f"{key}-started-in-{process}").touch()
        signal.wait_sync(60)
        return "slow"

    async def idem(key: str) -> str:
        (directory / f"{key}-started-in-{process}").touch()
        if process == "first":
            await asyncio.Event().wait()  # still executing when the process is killed
        return f"{key} again"

    return {"fast": fast, "slow": slow, "idem": idem}


async def first(url: str, key: str, directory: Path) -> None:
    store = RedisStore(url)
    checkpoints = Checkpoints(store, key)
    async with ToolCallSession(tools(directory, "first")) as session:
        settled = session.settled()
        for event in STREAM[:KILLED_AT]:
            session.apply(event)
            if event == STREAM[2]:
                assert (await anext(settled)).result == 42  # c1 reported to the model
        deadline = time.monotonic() + 30
        while not all((directory / f"c{n}-started-in-first").exists() for n in (2, 3)):
            assert time.monotonic() < deadline, "the tools never started"
            await asyncio.sleep(0.01)
        await checkpoints.save(session, position=KILLED_AT)
        (directory / "saved").write_text(str(checkpoints.version))
        await asyncio.sleep(120)  # killed with SIGKILL before this ends


async def second(url: str, key: str, directory: Path) -> None:
    store = RedisStore(url)
    checkpoints = Checkpoints(store, key)
    session = await checkpoints.resume(tools(directory, "second"), rerun={"idem"})
    assert session is not None
    async with session:
        for event in STREAM[session.position :]:
            session.apply(event)
        session.finish()
        settled = [state.to_dict() async for state in session.settled()]
        tracker = [call.to_dict() for call in session.tracker.list()]
    await store.aclose()
    print(json.dumps({"settled": settled, "tracker": tracker, "version": checkpoints.version}))


if __name__ == "__main__":
    mode, url, key, folder = sys.argv[1:]
    main = first if mode == "first" else second
    asyncio.run(asyncio.wait_for(main(url, key, Path(folder)), 150))
