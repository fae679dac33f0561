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
from typing import Any, Protocol, TypeGuard


class Clock(Protocol):
    """What an instance needs of a clock: the time, and a way to be woken when a timer is due.

    ``now()`` is in seconds, on any monotonic scale. ``wake(instance, due, order)`` is called
    when the instance's earliest timer is due at ``due`` (seconds, on the same scale); the clock
    must then call ``instance.run_due(order)`` at or after that time, wake-ups due at the same
    time by ``order`` (the order their events were sent, across instances). A wake-up that
    finds nothing due is harmless, and so is one asked for a timer that has run since: given
    its ``order``, the instance asks again for the timer that waits now, in its turn.

    Instances compare due times in whole nanoseconds of the clock (``now_ns()`` where a clock
    has one, else ``now()`` rounded), so a delay sent after a step of the clock is due exactly
    when the same total delay sent before it is (0.036 s + 364 ms is 400 ms), and the event
    sent first runs first.
    """

    def now(self) -> float: ...

    def wake(self, instance: Any, due: float, order: int) -> None: ...


_order = itertools.count()

#: Nanoseconds in a second.
NS = 1_000_000_000


def seconds_ns(seconds: float) -> int:
    """``seconds`` (finite) in whole nanoseconds, rounded to the nearest; exact for any
    float, however large (``seconds * NS`` would overflow to infinity past 1.8e299)."""
    return _scaled(seconds, NS)


def finite_number(value: Any) -> TypeGuard[float]:
    """Whether ``value`` is an ``int`` or ``float`` (not a bool) that a float holds, finite:
    what a delay must be."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def milliseconds_ns(milliseconds: float) -> int:
    """``milliseconds`` (finite) in whole nanoseconds, rounded to the nearest."""
    return _scaled(milliseconds, 1_000_000)


def _scaled(value: float, scale: int) -> int:
    whole = int(value)
    return whole * scale + round((value - whole) * scale)


class Due(float):
    """A due time handed to ``Clock.wake``: seconds, as the protocol says, carrying the exact
    nanoseconds (``ns``) the instance compares with, so this package's clocks never round."""

    __slots__ = ("ns",)
    ns: int

    def __new__(cls, ns: int) -> Due:
        due = super().__new__(cls, ns / NS)
        due.ns = ns
        return due


def due_ns(due: float) -> int:
    """The nanoseconds of a due time given to ``wake`` (exact for a ``Due``)."""
    return due.ns if isinstance(due, Due) else seconds_ns(due)


def clock_ns(clock: Any) -> int:
    """A clock's time in whole nanoseconds: its ``now_ns()``, or its ``now()`` rounded."""
    now_ns = getattr(clock, "now_ns", None)
    return int(now_ns()) if now_ns is not None else seconds_ns(clock.now())


def _check_seconds(seconds: Any, what: str) -> None:
    if (
        not isinstance(seconds, int | float)
        or isinstance(seconds, bool)
        or not math.isfinite(seconds)
    ):
        raise ValueError(f"{what} needs a finite number of seconds, got {seconds!r}")


class VirtualClock:
    """A clock that moves only when told to: ``advance(seconds)`` or ``run_until_idle()``.

    Several instances may share one; advancing it runs every instance's timers in the order
    they fall due (due at the same nanosecond: in the order their events were sent), the clock
    reading each timer's due time while it runs. Time is kept in whole nanoseconds, so steps
    that add up to a delay reach its timer exactly (0.05 s then 0.35 s reach a 400 ms timer).
    """

    __slots__ = ("_now", "_timers")

    def __init__(self, start: float = 0.0) -> None:
        _check_seconds(start, "VirtualClock(start=...)")
        self._now = seconds_ns(start)
        self._timers: list[tuple[int, int, int, Any]] = []

    def now(self) -> float:
        """The current virtual time, in seconds."""
        return self._now / NS

    def now_ns(self) -> int:
        """The current virtual time, in whole nanoseconds."""
        return self._now

    def wake(self, instance: Any, due: float, order: int) -> None:
        """Remember to run ``instance``'s timers once the clock reaches ``due``."""
        heapq.heappush(self._timers, (due_ns(due), order, next(_order), instance))

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward, running the timers that fall due on the way.

        An exception a delayed event raises (in a chart that does not catch errors as events)
        reaches the caller, the clock left at that event's due time; the timers after it stay.
        """
        _check_seconds(seconds, "advance()")
        if seconds < 0:
            raise ValueError(f"advance() needs a finite number of seconds >= 0, got {seconds!r}")
        self.advance_ns(seconds_ns(seconds))

    def advance_ns(self, nanoseconds: int) -> None:
        """``advance`` by whole nanoseconds."""
        target = self._now + nanoseconds
        timers = self._timers
        while timers and timers[0][0] <= target:
            due, order, _, instance = heapq.heappop(timers)
            self._now = max(self._now, due)
            instance.run_due(order)
        self._now = max(self._now, target)

    def next_due(self) -> float | None:
        """When the earliest timer an instance asked to be woken for is due (``None``: none)."""
        return self._timers[0][0] / NS if self._timers else None

    def run_until_idle(self) -> None:
        """Advance to each timer in turn until no instance waits for one."""
        while self._timers:
            self.advance_ns(max(0, self._timers[0][0] - self._now))

    def __repr__(self) -> str:
        return f"VirtualClock(now={self.now()!r}, timers={len(self._timers)})"


class AsyncioClock:
    """Real time on an asyncio event loop.

    The clock keeps the instances' wake-ups in the order they fall due (due at the same
    nanosecond: in the order their events were sent) and one ``loop.call_at`` for the
    earliest; the loop's own timers would run wake-ups due together in no set order. The loop
    is the one running when a timer is scheduled (or the one given), so one clock serves
    successive ``asyncio.run`` calls. An exception a delayed event raises (in a chart that does
    not catch errors as events) goes to the loop's exception handler, as any callback's does;
    the other wake-ups due still run.
    """

    __slots__ = ("_handle", "_loop", "_timers")

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop
        self._timers: list[tuple[int, int, int, Any]] = []
        self._handle: tuple[asyncio.TimerHandle, asyncio.AbstractEventLoop, int] | None = None

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
        """Run ``instance.run_due(order)`` on the loop once it reaches ``due``."""
        loop = self._running()
        heapq.heappush(self._timers, (due_ns(due), order, next(_order), instance))
        self._schedule(loop)

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        """Have the loop call back at the earliest wake-up (one ``call_at`` at a time)."""
        if not self._timers:
            return
        first = self._timers[0][0]
        if self._handle is not None:
            handle, handle_loop, at = self._handle
            if handle_loop is loop and not handle.cancelled() and at <= first:
                return  # the call back asked for comes first
            handle.cancel()
        self._handle = (loop.call_at(first / NS, self._fire, loop), loop, first)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run the wake-ups due, in order, then ask for the next."""
        self._handle = None
        timers = self._timers
        now = seconds_ns(loop.time())
        try:
            while timers and timers[0][0] <= now:
                _, order, _, instance = heapq.heappop(timers)
                try:
                    instance.run_due(order)
                except Exception as error:  # as the loop reports a failing callback's
                    loop.call_exception_handler(
                        {
                            "message": "Exception in a delayed event run by AsyncioClock",
                            "exception": error,
                        }
                    )
        finally:  # a BaseException leaves the other wake-ups for the next call back
            self._schedule(loop)

    async def until_idle(self, *instances: Any) -> None:
        """Wait, without blocking the loop, until none of ``instances`` has a delayed event
        waiting (their timers run meanwhile, each when due)."""
        loop = asyncio.get_running_loop()
        while True:
            dues = [due for instance in instances if (due := instance.next_due()) is not None]
            if not dues:
                return
            # the call back may have been asked of an earlier loop (one a KeyboardInterrupt
            # stopped): this one is asked for it now
            self._schedule(loop)
            await asyncio.sleep(max(0.0, min(dues) - self.now()))

    def __repr__(self) -> str:
        return f"AsyncioClock(loop={self._loop!r})"
