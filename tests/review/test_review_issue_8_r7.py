"""Breaks found by an independent review of issue 8 (round 7). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C5, S1.

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from typing import Any
from unittest import mock

import pytest
from statemachine import State, StateChart

from statecharts import compile_chart
from tests.toolcalls.executor_support import run_async
from tests.toolcalls.test_tracker import delta, ready, start
from toolcalls import AbortSignal, SessionClosed, ToolCallSession, ToolCallTracker

# -- C5: an outcome is the caller's; the runtime keeps no copy of long chains -----------------


class Countdown(StateChart):  # type: ignore[type-arg]
    """A flat chart whose ``go`` ends in an eventless loop: one self-transition per item the
    model holds, then back to ``idle``. Each send's chain is as long as the model says."""

    idle = State(initial=True)
    working = State()

    go = idle.to(working)
    working.to.itself(cond="more", on="tick", internal=True)
    working.to(idle, unless="more")

    def more(self) -> bool:
        return bool(self.model.left > 0)

    def tick(self) -> None:
        self.model.left -= 1


class Items:
    def __init__(self, left: int) -> None:
        self.left = left


def test_C5_the_outcomes_of_long_eventless_chains_are_freed_once_the_caller_drops_them() -> None:
    """``send`` returns an ``Outcome`` listing every transition its macrostep took; a flat chart
    now remembers the outcome of each eventless chain on its binding (up to 256 chains), keyed
    by the ids of every transition taken. A chart whose eventless loop runs as often as the
    model says meets a new chain per length: 256 sends of about 1,000 steps each leave some
    14 MB (a tuple of ids and a tuple of transitions per chain, for the binding's lifetime)
    after every instance and outcome is gone, and a chain of a million steps would keep tens of
    MB. Before the change nothing stayed: an outcome lived as long as its caller kept it."""
    chart = compile_chart(Countdown)
    for warm in (0, 1):  # the binding and its generated code exist before measuring
        chart.create(Items(warm)).send("go")
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for length in range(1000, 1256):
            instance = chart.create(Items(length))
            outcome = instance.send("go")
            assert len(outcome.transitions) == length + 2
            assert instance.configuration[0].id == "idle"
        del instance, outcome
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1_000_000, f"{kept / 1e6:.1f} MB kept after every outcome was dropped"


# -- S1: events go to the session's tracker, through ToolCallTracker.apply ---------------------


async def echo(args: dict[str, Any], signal: AbortSignal) -> Any:
    return args


@run_async
async def test_S1_events_reach_the_trackers_apply_as_it_is_when_they_arrive() -> None:
    """The session applies each event with the tracker's ``apply``. Before this round,
    ``apply()`` and ``run()`` looked it up per event (``self._tracker.apply(event)``), so a
    spy or a fault injected with ``mock.patch.object(ToolCallTracker, "apply", ...)`` saw every
    event of a session made earlier (a fixture's, say). Now the session keeps the bound method
    it took when the tracker was made (``_intake``): a patch applied after that is never called,
    neither by ``apply()`` nor by ``run()``, and the events bypass it silently."""
    async with ToolCallSession({"echo": echo}) as session:
        seen: list[str] = []
        original = ToolCallTracker.apply

        def spy(tracker: ToolCallTracker, event: Any) -> Any:
            seen.append(event["type"])
            return original(tracker, event)

        with mock.patch.object(ToolCallTracker, "apply", spy):
            session.apply(start("a", "echo"))
            settled = [s async for s in session.run([delta("a", "{}"), ready("a")])]
        assert [s.tool_call_id for s in settled] == ["a"]
        assert seen == ["start", "delta", "ready"]


# -- X14, S5, S7: the session's trackers after close and reset ---------------------------------


@run_async
async def test_X14_a_closed_session_never_starts_a_tool_for_an_event_its_tracker_takes() -> None:
    """``session.tracker`` is public and keeps the session as its listener for good. Once
    ``aclose()`` returned (the executor closed: X14, it refuses new calls), a ``ready`` applied
    to that tracker still hands the call to the closed executor (``_arguments_ended`` admits it
    without the closed check), its tool runs after the close and the call is queued as settled.
    The intake refuses events only through ``session.apply``; a closed session's tracker should
    not start a tool (refuse the event, or end the call without running it)."""
    ran: list[Any] = []

    async def tool(args: dict[str, Any], signal: AbortSignal) -> Any:
        ran.append(args)
        return args

    session = ToolCallSession({"echo": tool})
    tracker = session.tracker
    await session.aclose()
    try:
        for event in (start("a", "echo"), delta("a", "{}"), ready("a")):
            tracker.apply(event)
    except Exception:  # refusing the event is fine
        pass
    for _ in range(5):
        await asyncio.sleep(0)
    assert ran == [], "a tool ran after aclose() returned"
    state = session.executor.get_call("a")
    assert state is None or state.status == "error"


@run_async
async def test_S7_a_call_started_on_the_tracker_a_reset_dropped_is_not_run_or_reported() -> None:
    """``reset()`` gives the session a new tracker, but the old one (what ``session.tracker``
    returned before) still calls back the session. A call applied to it after the reset is run
    and reported by the session, though ``session.tracker`` has never heard of it, and the old
    tracker keeps it ``running`` for ever (the result goes to the new tracker, which ignores
    it): a reported call that no tracker records as settled (S1). A dropped tracker should no
    longer feed the session."""
    session = ToolCallSession({"echo": echo})
    dropped = session.tracker
    session.reset()
    dropped.apply(start("b", "echo"))
    dropped.apply(delta("b", "{}"))
    # the fix refuses the ready loudly (before anything changes), as X14's closed session does
    with pytest.raises(SessionClosed, match="dropped by reset"):
        dropped.apply(ready("b"))
    session.finish()
    reported = [s.tool_call_id async for s in session.settled()]
    await session.aclose()
    view = dropped.get("b")
    assert view is None or view.status != "running", "the old tracker keeps b running for ever"
    assert reported == [] or session.tracker.get("b") is not None
