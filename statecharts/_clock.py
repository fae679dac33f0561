"""Clocks for delayed events (``send(..., delay=...)``, ``Event(delay=...)``, ``<send delay>``).

An instance created without a clock waits in real time, as python-statemachine's synchronous
engine does: a ``send`` whose macrostep schedules a delayed event returns once that event has
run. With a clock, a delayed event is a timer: ``send`` returns at once and the timer runs when
the clock says it is due. ``VirtualClock`` is the deterministic clock for tests (time moves only
when told to); ``AsyncioClock`` runs timers on an asyncio event loop, in real time.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from typing import Any, Protocol


class Clock(Protocol):
    """What an instance needs of a clock: the time, and a way to be woken when a timer is due.

    ``now()`` is in seconds, on any monotonic scale. ``wake(instance, due, order)`` is called
    when the instance's earliest timer is due at ``due`` (seconds, on the same scale); the clock
    must then call ``instance.run_due()`` at or after that time, wake-ups due at the same time
    by ``order`` (the order their events were sent, across instances). A wake-up that finds
    nothing due is harmless.
    """

    def now(self) -> float: ...

    def wake(self, instance: Any, due: float, order: int) -> None: ...


_order = itertools.count()

#: How far past the time it is advanced to a ``VirtualClock`` reaches timers (seconds): float
#: sums of steps fall a hair short of the delay they add up to.
REACH = 1e-9


class VirtualClock:
    """A clock that moves only when told to: ``advance(seconds)`` or ``run_until_idle()``.

    Several instances may share one; advancing it runs every instance's timers in the order
    they fall due, the clock reading each timer's due time while it runs. Advancing also
    reaches timers due up to a nanosecond later (``REACH``): steps that add up to a delay
    reach its timer despite float sums.
    """

    __slots__ = ("_now", "_timers")

    def __init__(self, start: float = 0.0) -> None:
        if (
            not isinstance(start, int | float)
            or isinstance(start, bool)
            or not math.isfinite(start)
        ):
            raise ValueError(f"VirtualClock(start=...) needs a finite number, got {start!r}")
        self._now = float(start)
        self._timers: list[tuple[float, int, int, Any]] = []

    def now(self) -> float:
        """The current virtual time, in seconds."""
        return self._now

    def wake(self, instance: Any, due: float, order: int) -> None:
        """Remember to run ``instance``'s timers once the clock reaches ``due``."""
        heapq.heappush(self._timers, (due, order, next(_order), instance))

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward, running the timers that fall due on the way.

        An exception a delayed event raises (in a chart that does not catch errors as events)
        reaches the caller, the clock left at that event's due time; the timers after it stay.
        """
        if (
            not isinstance(seconds, int | float)
            or isinstance(seconds, bool)
            or not math.isfinite(seconds)
            or seconds < 0
        ):
            raise ValueError(f"advance() needs a finite number of seconds >= 0, got {seconds!r}")
        target = self._now + seconds
        timers = self._timers
        # a timer due within a nanosecond of the target is reached: steps that add up to a
        # delay (0.05 + 0.35 is 0.39999999999999997) reach the timer due after it (0.4)
        while timers and timers[0][0] <= target + REACH:
            due, _, _, instance = heapq.heappop(timers)
            self._now = max(self._now, due)
            instance.run_due()
        self._now = max(self._now, target)

    def next_due(self) -> float | None:
        """When the earliest timer an instance asked to be woken for is due (``None``: none)."""
        return self._timers[0][0] if self._timers else None

    def run_until_idle(self) -> None:
        """Advance to each timer in turn until no instance waits for one."""
        while self._timers:
            self.advance(max(0.0, self._timers[0][0] - self._now))

    def __repr__(self) -> str:
        return f"VirtualClock(now={self._now!r}, timers={len(self._timers)})"


class AsyncioClock:
    """Real time on an asyncio event loop: each timer is a ``loop.call_at``.

    The loop is the one running when a timer is scheduled (or the one given), so one clock
    serves successive ``asyncio.run`` calls. An exception a delayed event raises (in a chart
    that does not catch errors as events) goes to the loop's exception handler, as any
    callback's does.
    """

    __slots__ = ("_loop",)

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop

    def _running(self) -> asyncio.AbstractEventLoop:
        if self._loop is not None:
            return self._loop
        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "AsyncioClock needs a running event loop (or one given to it) to schedule "
                "a delayed event"
            ) from None

    def now(self) -> float:
        """The loop's time, in seconds (``time.monotonic()``, the default loops' clock, when
        no loop runs)."""
        try:
            return self._running().time()
        except RuntimeError:
            return time.monotonic()

    def wake(self, instance: Any, due: float, order: int) -> None:
        """Schedule ``instance.run_due()`` on the loop at ``due`` (the loop runs callbacks
        due together in the order they were scheduled)."""
        self._running().call_at(due, instance.run_due)

    async def until_idle(self, *instances: Any) -> None:
        """Wait, without blocking the loop, until none of ``instances`` has a delayed event
        waiting (their timers run meanwhile, each when due)."""
        while True:
            dues = [due for instance in instances if (due := instance.next_due()) is not None]
            if not dues:
                return
            await asyncio.sleep(max(0.0, min(dues) - self.now()))

    def __repr__(self) -> str:
        return f"AsyncioClock(loop={self._loop!r})"
