"""Session rules the end-to-end tests do not single out: limits shared with the executor (S8)
and a result the tracker cannot record (S9)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from toolcalls import ToolCallSession

from .executor_support import run_async
from .test_session import drain, stream_call


class Uncopyable:
    """A tool result ``copy.deepcopy`` refuses, as a lock or an open socket would be."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


@run_async
async def test_a_result_the_tracker_cannot_record_ends_the_call_in_error() -> None:
    """S9: the tool succeeded, but its result cannot be copied into the tracker."""

    async def make(args: dict[str, Any]) -> Uncopyable:
        return Uncopyable()

    async with ToolCallSession({"make": make}) as session:
        for event in stream_call("c1", "{}", name="make"):
            session.apply(event)
        settled = await drain(session)
        assert [state.status for state in settled] == ["success"]
        call = session.tracker.get("c1")
        assert call is not None
        assert call.status == "error"
        assert call.error["kind"] == "unrecordable_result"
        assert "cannot be copied" in call.error["message"]


@run_async
async def test_max_concurrency_bounds_the_tools_a_session_runs_at_once() -> None:
    """S8: beyond ``max_concurrency`` running tools, calls wait, then start in order."""
    running: list[str] = []
    peak = 0
    gate = asyncio.Event()

    async def work(args: dict[str, Any]) -> str:
        nonlocal peak
        running.append(args["key"])
        peak = max(peak, len(running))
        await gate.wait()
        running.remove(args["key"])
        return str(args["key"])

    async with ToolCallSession({"work": work}, max_concurrency=2) as session:
        for key in ("a", "b", "c", "d"):
            for event in stream_call(key, f'{{"key": "{key}"}}', name="work"):
                session.apply(event)
        for _ in range(5):
            await asyncio.sleep(0)
        assert running == ["a", "b"]
        assert session.executor.in_flight == 4
        gate.set()
        settled = await drain(session)
    assert peak == 2
    assert sorted(state.result for state in settled) == ["a", "b", "c", "d"]


def test_max_history_is_shared_by_the_tracker_and_the_executor() -> None:
    """S8: one bound for both halves of a session."""
    session = ToolCallSession({}, max_history=7)
    assert session.tracker.max_history == 7
    assert session.executor._book.max_history == 7
