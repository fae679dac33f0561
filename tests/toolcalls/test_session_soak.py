"""Soak: 100,000 calls through one session, with re-delivery and resets, in bounded memory.

Tools succeed, raise, time out, hang until the stream ends their call, or call ``sys.exit``
in a worker thread. The stream re-delivers whole calls at random (some the session still
tracks, some it forgot) and the session is reset at random moments, calls in flight or not.
The test keeps, per id, how often it was delivered fresh (neither tracker nor executor knew
it), how often its tool started, how often it was reported and how often a started tool's
call was silenced (ended by the stream, or dropped by a reset). It asserts:

- every call is reported at most once (never more reports than fresh deliveries);
- every call whose tool ran is reported exactly once, unless the stream or a reset ended it;
- no tool runs twice for one id while the id is tracked (never two runs at once, never more
  runs than fresh deliveries);
- memory stays flat: traced memory after all calls grows at most 5% over the figure at a
  fifth of them (taken after warm-up).

Marked ``soak``: the default test run leaves it out; ``.ci/run`` runs it with
``TOOLCALLS_SOAK_CALLS`` calls (100,000 unless set).
"""

# Rules checked here (docs/spec.md): S2, S10.

from __future__ import annotations

import asyncio
import gc
import os
import random
import sys
import threading
import tracemalloc
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from toolcalls import AbortSignal, ExecutionView, Tool, ToolCallSession

pytestmark = pytest.mark.soak

CALLS = int(os.environ.get("TOOLCALLS_SOAK_CALLS", "100000"))
BATCH = 100  # calls streamed between two looks at the session
WINDOW = 400  # re-delivery picks among the last WINDOW ids
KINDS = ["succeed"] * 70 + ["raise"] * 12 + ["timeout"] * 6 + ["hang"] * 8 + ["exit"] * 4
GROWTH_ALLOWED = 0.05


@dataclass
class Ledger:
    """What happened to each id, kept only while the id can still change (then checked and
    dropped, so the test's own memory stays flat too)."""

    fresh: Counter[str] = field(default_factory=Counter)
    runs: Counter[str] = field(default_factory=Counter)
    reports: Counter[str] = field(default_factory=Counter)
    silenced: Counter[str] = field(default_factory=Counter)
    started: set[str] = field(default_factory=set)  # tool started, call not yet ended
    kinds: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    checked: int = 0

    def tool_started(self, call_id: str, signal: AbortSignal) -> None:
        with self.lock:
            assert call_id not in self.started, f"{call_id} runs twice at once"
            self.runs[call_id] += 1
            if signal.aborted:  # a worker thread starting after its call was dropped
                self.silenced[call_id] += 1
            else:
                self.started.add(call_id)

    def ended_unreported(self, call_id: str) -> None:
        """The session will not report the call (stream ended it, or a reset dropped it)."""
        with self.lock:
            if call_id in self.started:
                self.started.discard(call_id)
                self.silenced[call_id] += 1

    def reported(self, state: ExecutionView) -> None:
        with self.lock:
            self.reports[state.tool_call_id] += 1
            self.started.discard(state.tool_call_id)

    def check(self, call_id: str) -> None:
        fresh, runs = self.fresh[call_id], self.runs[call_id]
        reports, silenced = self.reports[call_id], self.silenced[call_id]
        assert reports <= fresh, f"{call_id} reported {reports}x for {fresh} fresh deliveries"
        assert runs <= fresh, f"{call_id} ran {runs}x for {fresh} fresh deliveries"
        assert runs == reports + silenced, (
            f"{call_id} ({self.kinds[call_id]}): ran {runs}x, reported {reports}x, "
            f"silenced {silenced}x"
        )
        self.checked += 1

    def forget(self, call_id: str) -> None:
        for counter in (self.fresh, self.runs, self.reports, self.silenced):
            counter.pop(call_id, None)
        self.kinds.pop(call_id, None)


class Soak:
    def __init__(self, calls: int, seed: int) -> None:
        self.calls = calls
        self.random = random.Random(seed)
        self.ledger = Ledger()
        self.session = ToolCallSession(
            {
                "succeed": self.succeed,
                "raise": self.raises,
                "timeout": Tool(self.too_slow, timeout=0.002),
                "hang": self.hang,
                "exit": self.exits,
            },
            max_history=50,
        )
        self.resets = 0
        self.redelivered = 0
        self.memory: dict[int, int] = {}

    # -- the tools ----------------------------------------------------------------------------

    async def succeed(self, args: dict[str, Any], signal: AbortSignal) -> Any:
        self.ledger.tool_started(args["id"], signal)
        return {"echo": args["n"]}

    async def raises(self, args: dict[str, Any], signal: AbortSignal) -> None:
        self.ledger.tool_started(args["id"], signal)
        raise RuntimeError(f"tool failed for {args['n']}")

    async def too_slow(self, args: dict[str, Any], signal: AbortSignal) -> None:
        self.ledger.tool_started(args["id"], signal)
        await asyncio.sleep(10)

    async def hang(self, args: dict[str, Any], signal: AbortSignal) -> None:
        self.ledger.tool_started(args["id"], signal)
        await signal.wait()

    def exits(self, args: dict[str, Any], signal: AbortSignal) -> None:
        self.ledger.tool_started(args["id"], signal)
        sys.exit(f"tool {args['n']} called sys.exit")

    # -- the stream ---------------------------------------------------------------------------

    def call_events(self, n: int) -> list[dict[str, Any]]:
        call_id = f"c{n}"
        kind = KINDS[n % len(KINDS)]
        text = f'{{"id": "{call_id}", "n": {n}}}'
        middle = len(text) // 2
        return [
            {"type": "start", "id": call_id, "name": kind},
            {"type": "delta", "id": call_id, "argsTextDelta": text[:middle]},
            {"type": "delta", "id": call_id, "argsTextDelta": text[middle:]},
            {"type": "ready", "id": call_id},
        ]

    def deliver(self, n: int) -> list[dict[str, Any]]:
        """The call's events, counted as a fresh delivery if the session knows nothing of
        its id (called right before the start event is applied)."""
        call_id = f"c{n}"
        session = self.session
        if call_id not in session.tracker and session.executor.get_call(call_id) is None:
            self.ledger.fresh[call_id] += 1
        self.ledger.kinds[call_id] = KINDS[n % len(KINDS)]
        return self.call_events(n)

    async def stream(self) -> AsyncIterator[dict[str, Any]]:
        rng = self.random
        for first in range(0, self.calls, BATCH):
            for n in range(first, min(first + BATCH, self.calls)):
                picks = [n]
                if n > WINDOW and rng.random() < 0.05:  # a whole call sent again
                    self.redelivered += 1
                    picks.append(rng.randrange(n - WINDOW, n))
                for pick in picks:
                    for event in self.deliver(pick):  # the feeder applies each as it comes
                        yield event
            await asyncio.sleep(0)
            self.end_hanging_calls()
            if rng.random() < 0.05:
                self.reset()
            await asyncio.sleep(0)
            self.settle_ledger(first - 2 * WINDOW)
            done = first + BATCH
            if done in (self.calls // 5, self.calls):
                await self.quiesce()
                self.memory[done] = measure_memory()
        await self.quiesce()

    def end_hanging_calls(self) -> None:
        """The provider cancels the calls whose tools hang: an error event for each."""
        for call in self.session.tracker.list():
            if call.status == "running" and call.name == "hang":
                self.ledger.ended_unreported(call.id)
                self.session.apply({"type": "error", "id": call.id, "error": "cancelled"})

    def reset(self) -> None:
        """Reset the session: calls in flight are dropped, and so are settled calls the
        consumer has not received yet (nothing from before a reset is reported after it)."""
        self.resets += 1
        ledger = self.ledger
        with ledger.lock:  # a worker thread starting its tool now waits, then sees the abort
            ledger.silenced.update(ledger.started)
            ledger.started.clear()
            self.session.reset()

    async def quiesce(self) -> None:
        """Wait until nothing but hanging tools runs, and end those."""
        for _ in range(2000):
            self.end_hanging_calls()
            if not self.session.in_flight:
                break
            await asyncio.sleep(0.001)
        assert not self.session.in_flight
        for _ in range(5):  # let threads that were dropped finish their bookkeeping
            await asyncio.sleep(0.002)

    def settle_ledger(self, below: int) -> None:
        """Check and forget every id too old to change again."""
        for n in range(max(below - BATCH, 0), max(below, 0)):
            call_id = f"c{n}"
            if call_id in self.ledger.started:
                continue
            if call_id in self.ledger.kinds:
                self.ledger.check(call_id)
                self.ledger.forget(call_id)

    async def run(self) -> None:
        session = self.session
        async with session:
            async for state in session.run(self.stream()):
                self.ledger.reported(state)
        assert not self.ledger.started, f"tools never settled: {sorted(self.ledger.started)}"
        for call_id in list(self.ledger.kinds):
            self.ledger.check(call_id)


def measure_memory() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_100k_calls_with_redelivery_and_resets_are_each_reported_once_in_flat_memory() -> None:
    assert CALLS >= 5 * BATCH
    soak = Soak(CALLS, seed=20261130)
    tracemalloc.start()
    try:
        asyncio.run(soak.run())
    finally:
        tracemalloc.stop()
    ledger = soak.ledger
    assert ledger.checked >= CALLS
    assert soak.resets > 0
    assert soak.redelivered > CALLS // 50
    early, late = soak.memory[CALLS // 5], soak.memory[CALLS]
    growth = (late - early) / early
    print(
        f"\nsoak: {CALLS:,} calls, {soak.redelivered:,} re-delivered, {soak.resets} resets; "
        f"traced memory {early / 1e6:.2f} MB at {CALLS // 5:,} calls, "
        f"{late / 1e6:.2f} MB at {CALLS:,} ({growth:+.1%})"
    )
    # Smaller smoke runs measure their early figure before the caches settle: a few tens of
    # kilobytes of slack there; the full run is held to 5% exactly.
    slack = 0 if CALLS >= 100_000 else 64_000
    assert late - early <= early * GROWTH_ALLOWED + slack
