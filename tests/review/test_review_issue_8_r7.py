"""Breaks found by an independent review of issue 8 (round 7). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C5, S1.

from __future__ import annotations

import gc
import tracemalloc
from typing import Any
from unittest import mock

from statemachine import State, StateChart

from statecharts import compile_chart
from tests.toolcalls.executor_support import run_async
from tests.toolcalls.test_tracker import delta, ready, start
from toolcalls import AbortSignal, ToolCallSession, ToolCallTracker

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
