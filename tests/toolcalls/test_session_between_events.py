"""Where ``run()`` applies each event it reads: always to the session's tracker of that moment.

``run()`` reads an async source concurrently with your other tasks. A source that awaits lets
them run between two events; one of them may reset, finish or close the session. The next event
must then go to the new tracker, or be refused, exactly as ``apply`` would do at that moment.
"""

# Rules checked here (docs/spec.md): S4, S7.

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from toolcalls import AbortSignal, SessionClosed, ToolCallSession

from .executor_support import run_async
from .test_tracker import delta, ready, start


async def echo(args: dict[str, Any], signal: AbortSignal) -> Any:
    return args


def _source(
    events: list[dict[str, Any]], between: dict[int, Callable[[], object]]
) -> AsyncIterator[dict[str, Any]]:
    """The events, awaiting before each; ``between[n]`` runs in another task before event n."""

    async def generate() -> AsyncIterator[dict[str, Any]]:
        for index, event in enumerate(events):
            action = between.get(index)
            if action is not None:
                done = asyncio.Event()

                def act(action: Callable[[], object] = action, done: asyncio.Event = done) -> None:
                    action()
                    done.set()

                asyncio.get_running_loop().call_soon(act)
                await done.wait()
            else:
                await asyncio.sleep(0)
            yield event

    return generate()


@run_async
async def test_an_event_read_after_another_task_resets_the_session_goes_to_the_new_tracker() -> (
    None
):
    async with ToolCallSession({"echo": echo}) as session:
        events = [start("a", "echo"), delta("a", '{"x": 1}'), start("b", "echo")]
        events += [delta("b", '{"y": 2}'), ready("b")]
        settled = [s async for s in session.run(_source(events, {2: session.reset}))]
        assert [s.tool_call_id for s in settled] == ["b"]
        assert settled[0].result == {"y": 2}
        assert [call.id for call in session.tracker.list()] == ["b"]


@run_async
async def test_a_fragment_read_after_a_reset_is_ignored_by_the_new_tracker() -> None:
    """The reset forgot ``a``: its next fragment finds no call, as ``apply`` would say."""
    async with ToolCallSession({"echo": echo}) as session:
        events = [start("a", "echo"), delta("a", '{"x"'), delta("a", ": 1}"), ready("a")]
        settled = [s async for s in session.run(_source(events, {2: session.reset}))]
        assert settled == []
        assert len(session.tracker) == 0


@run_async
async def test_an_event_read_after_another_task_finishes_the_session_is_not_applied() -> None:
    """finish() says no more events: with nothing running, ``run()`` ends and the event the
    source yields after it is never applied."""
    async with ToolCallSession({"echo": echo}) as session:
        events = [start("a", "echo"), delta("a", '{"x": 1}'), ready("a"), start("b", "echo")]
        settled = [s async for s in session.run(_source(events, {3: session.finish}))]
        assert [s.tool_call_id for s in settled] == ["a"]
        assert session.tracker.get("b") is None
        with pytest.raises(SessionClosed):
            session.apply(start("c", "echo"))


@run_async
async def test_an_event_read_after_another_task_closes_the_session_ends_the_run_quietly() -> None:
    session = ToolCallSession({"echo": echo})
    closing: list[asyncio.Task[None]] = []
    events = [start("a", "echo"), delta("a", '{"x": 1}'), start("b", "echo")]
    between = {2: lambda: closing.append(asyncio.ensure_future(session.aclose()))}
    settled = [s async for s in session.run(_source(events, between))]
    await asyncio.gather(*closing)
    assert settled == []
    assert session.tracker.get("b") is None
    with pytest.raises(SessionClosed):
        session.apply(start("c", "echo"))


@run_async
async def test_a_session_finished_before_run_applies_none_of_its_events() -> None:
    async with ToolCallSession({"echo": echo}) as session:
        session.finish()
        settled = [s async for s in session.run([start("a", "echo"), ready("a")])]
        assert settled == []
        assert len(session.tracker) == 0


@run_async
async def test_apply_after_a_reset_goes_to_the_new_tracker() -> None:
    async with ToolCallSession({"echo": echo}) as session:
        session.apply(start("a", "echo"))
        old = session.tracker
        session.reset()
        session.apply(start("b", "echo"))
        assert session.tracker is not old
        assert [call.id for call in session.tracker.list()] == ["b"]
        assert [call.id for call in old.list()] == ["a"]


@run_async
async def test_a_ready_applied_to_a_finished_sessions_tracker_is_refused_and_changes_nothing() -> (
    None
):
    """The session's tracker is public: a ``ready`` reaching it after ``finish()`` must not
    start a tool the session will never report. It raises before anything changes."""
    async with ToolCallSession({"echo": echo}) as session:
        tracker = session.tracker
        session.finish()
        tracker.apply(start("a", "echo"))
        tracker.apply(delta("a", "{}"))
        with pytest.raises(SessionClosed) as refused:
            tracker.apply(ready("a"))
        assert str(refused.value) == (
            "the session takes no more events (finish() or aclose() ran)"
        )
        assert tracker.get("a").status == "pending"  # type: ignore[union-attr]
        assert session.executor.get_call("a") is None
