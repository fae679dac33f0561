"""Timers due at the same time run in the order their events were sent (C17).

Due times are whole nanoseconds of the clock: a delay sent after a step of the clock is due
exactly when the same total delay sent before the step is (36 ms, then 364 ms, is 400 ms), on
a ``VirtualClock`` at any start, on a clock of one's own, across a snapshot and its restore,
and on an ``AsyncioClock``; float sums (0.036 + 0.364 is 0.39999999999999997) would put the
event sent later first.
"""

# Rules checked here (docs/spec.md): C17, C19.

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import AsyncioClock, VirtualClock, compile_chart
from statecharts._clock import Due


class Log:
    """A model the chart logs its events in (with the instance's name)."""

    def __init__(self, name: str = "", log: list[str] | None = None) -> None:
        self.name = name
        self.log: list[str] = [] if log is None else log


class Beeper(StateChart[Log]):
    """``ping`` and ``pong`` are sent delayed from callbacks; both are logged when they run."""

    idle = State(initial=True)
    arm = idle.to(idle, internal=True, on="schedule")
    ping = idle.to(idle, internal=True, on="log_ping")
    pong = idle.to(idle, internal=True, on="log_pong")

    def schedule(self, what: str, wait: float) -> None:
        self.send(what, delay=wait)

    def log_ping(self, model: Log) -> None:
        model.log.append(f"{model.name}ping")

    def log_pong(self, model: Log) -> None:
        model.log.append(f"{model.name}pong")


CHART = compile_chart(Beeper)


@pytest.mark.parametrize("start", [0.0, 1000.0, 1_700_000_000.123])
def test_c17_timers_due_at_the_same_time_run_in_sending_order_at_every_split(
    start: float,
) -> None:
    """C17: ``ping`` sent for 400 ms, the clock advanced ``step`` ms, ``pong`` sent for
    ``400 - step`` ms: both are due at 400 ms, and ``ping`` (sent first) runs first, for every
    split of the 400 ms (on floats 76 of them flip), at a clock start near 0 or a Unix time."""
    for step in range(400):
        clock = VirtualClock(start)
        origin = clock.now_ns()
        model = Log()
        instance = CHART.create(model, clock=clock)
        instance.send("arm", what="ping", wait=400)
        clock.advance(step / 1000)
        instance.send("arm", what="pong", wait=400 - step)
        assert instance.next_due() == (origin + 400_000_000) / 1_000_000_000
        clock.advance(0.4)
        assert model.log == ["ping", "pong"], step


def test_c17_timers_due_together_on_two_instances_run_in_sending_order() -> None:
    """C17: two instances on one ``VirtualClock``: the event sent first runs first when both
    are due at the same time, whichever instance sent it."""
    for first, second in (("a", "b"), ("b", "a")):
        clock = VirtualClock()
        log: list[str] = []
        instances = {name: CHART.create(Log(name, log), clock=clock) for name in "ab"}
        instances[first].send("arm", what="ping", wait=400)
        clock.advance(0.036)
        instances[second].send("arm", what="ping", wait=364)
        clock.run_until_idle()
        assert log == [f"{first}ping", f"{second}ping"]
        assert clock.now() == 0.4


def test_c17_steps_adding_up_to_a_delay_reach_its_timer_exactly() -> None:
    """C17: steps of 0.1 s reach a 300 ms timer on the third (0.1 + 0.1 + 0.1 is
    0.30000000000000004 in floats), and ``now()`` reads 0.3."""
    clock = VirtualClock()
    model = Log()
    instance = CHART.create(model, clock=clock)
    instance.send("arm", what="ping", wait=300)
    clock.advance(0.1)
    clock.advance(0.1)
    assert model.log == []
    clock.advance(0.1)
    assert model.log == ["ping"]
    assert clock.now() == 0.3
    assert clock.now_ns() == 300_000_000


def test_c17_a_clock_of_ones_own_compares_due_times_in_nanoseconds() -> None:
    """C17: a clock with only ``now()`` and ``wake()`` (seconds as floats) has its time
    rounded to the nanosecond, so its timers due together run in sending order too."""

    class Manual:
        def __init__(self) -> None:
            self.time = 0.0
            self.woken: list[Any] = []

        def now(self) -> float:
            return self.time

        def wake(self, instance: Any, due: float, order: int) -> None:
            self.woken.append((due, order))

    clock = Manual()
    model = Log()
    instance = CHART.create(model, clock=clock)
    instance.send("arm", what="ping", wait=400)
    clock.time += 0.036
    instance.send("arm", what="pong", wait=364)
    assert clock.woken == [(0.4, clock.woken[0][1])]  # one wake-up, for both
    assert isinstance(clock.woken[0][0], float)
    clock.time = 0.4
    instance.run_due()  # a wake-up runs one delayed event, then asks for the next
    assert model.log == ["ping"]
    assert len(clock.woken) == 2
    instance.run_due()
    assert model.log == ["ping", "pong"]


def test_c19_timers_due_together_stay_together_across_snapshot_and_restore() -> None:
    """C19: the snapshot lists the two timers due together with the same ``due_in_ms`` (in
    sending order); restored on another clock, they still run in that order."""
    clock = VirtualClock()
    instance = CHART.create(Log(), clock=clock)
    instance.send("arm", what="ping", wait=400)
    clock.advance(0.036)
    instance.send("arm", what="pong", wait=364)
    clock.advance(0.1)
    snapshot = json.loads(json.dumps(instance.snapshot()))
    assert [(t["event"], t["due_in_ms"]) for t in snapshot["timers"]] == [
        ("ping", 264.0),
        ("pong", 264.0),
    ]
    later = VirtualClock(start=123.456)
    model = Log()
    restored = CHART.restore(snapshot, model, clock=later)
    assert restored.next_due() == (123_456_000_000 + 264_000_000) / 1e9
    assert restored.snapshot() == snapshot
    later.advance(0.264)
    assert model.log == ["ping", "pong"]


def test_c19_a_timer_due_a_nanosecond_apart_keeps_its_place_across_a_restore() -> None:
    """C19: due times a nanosecond apart survive the picture: ``due_in_ms`` holds whole
    nanoseconds, and the restored timers run in due order, not listing order alone."""
    clock = VirtualClock()
    instance = CHART.create(Log(), clock=clock)
    instance.send("arm", what="pong", wait=0.000002)
    instance.send("arm", what="ping", wait=0.000001)
    snapshot = instance.snapshot()
    assert [(t["event"], t["due_in_ms"]) for t in snapshot["timers"]] == [
        ("ping", 0.000001),
        ("pong", 0.000002),
    ]
    model = Log()
    restored = CHART.restore(snapshot, model, clock=VirtualClock())
    restored.run_until_idle()
    assert model.log == ["ping", "pong"]


class _ManualLoop(asyncio.SelectorEventLoop):
    """An event loop whose ``time()`` moves only when a test sets it."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 1000.0

    def time(self) -> float:
        return self.now


def test_c17_the_asyncio_clock_runs_timers_due_together_in_sending_order() -> None:
    """C17: on an ``AsyncioClock``, two instances' timers due at the same nanosecond run in
    the order their events were sent (the loop's own timers would run them in no set
    order), and a timer of one instance after them."""
    loop = _ManualLoop()
    try:
        clock = AsyncioClock(loop)
        log: list[str] = []
        a, b = (CHART.create(Log(name, log), clock=clock) for name in "ab")
        b.send("arm", what="pong", wait=500)
        a.send("arm", what="ping", wait=400)
        loop.now += 0.036
        b.send("arm", what="ping", wait=364)
        loop.now += 0.364
        loop.run_until_complete(asyncio.sleep(0))
        assert log == ["aping", "bping"]
        loop.now += 0.1
        loop.run_until_complete(asyncio.sleep(0))
        assert log == ["aping", "bping", "bpong"]
    finally:
        loop.close()


def test_c17_the_asyncio_clock_orders_wake_ups_due_together_by_sending_order() -> None:
    """C17: wake-ups asked for in any order run by due time, then by ``order``; a failing
    one goes to the loop's exception handler and the others still run."""
    loop = _ManualLoop()
    ran: list[str] = []
    errors: list[Any] = []
    loop.set_exception_handler(lambda _, context: errors.append(context["exception"]))

    class Woken:
        def __init__(self, name: str) -> None:
            self.name = name

        def run_due(self, order: int | None = None) -> None:
            ran.append(self.name)
            if self.name == "boom":
                raise ValueError("boom")

    try:
        clock = AsyncioClock(loop)
        due = 1_000_400_000_000
        clock.wake(Woken("third"), Due(due), 9)
        clock.wake(Woken("later"), Due(due + 1), 1)
        clock.wake(Woken("first"), Due(due), 2)
        clock.wake(Woken("boom"), Due(due), 5)
        loop.now = 1000.4
        loop.run_until_complete(asyncio.sleep(0))
        assert ran == ["first", "boom", "third"]
        assert [str(error) for error in errors] == ["boom"]
        loop.now = 1000.4 + 1e-9
        loop.run_until_complete(asyncio.sleep(0))
        assert ran == ["first", "boom", "third", "later"]
    finally:
        loop.close()


@pytest.mark.parametrize("delay", [1e300, 1.7e308, -1e300])
def test_c17_a_huge_finite_delay_is_due_in_whole_nanoseconds_without_overflow(
    delay: float,
) -> None:
    """C17: a finite delay however large is a due time (nanoseconds are integers, never an
    infinite float): it waits (or, negative, runs at once), and survives a snapshot."""
    clock = VirtualClock()
    model = Log()
    instance = CHART.create(model, clock=clock)
    instance.send("arm", what="ping", wait=delay)
    if delay < 0:
        assert model.log == ["ping"]
        return
    assert model.log == []
    assert instance.next_due() == pytest.approx(delay / 1000)
    snapshot = json.loads(json.dumps(instance.snapshot()))
    assert snapshot["timers"][0]["due_in_ms"] == delay
    restored = CHART.restore(snapshot, Log(), clock=VirtualClock(start=1e300))
    assert restored.next_due() == pytest.approx(1e300 + delay / 1000)
    clock.advance(delay / 1000 / 2)
    assert model.log == []
    clock.advance(delay / 1000)
    assert model.log == ["ping"]


def test_c17_a_wake_up_asked_for_a_timer_that_ran_since_runs_no_later_timer_out_of_turn() -> None:
    """C17: an instance asked to be woken at 120 ms (``l1``), then earlier (``l3``, 59 ms),
    holds two wake-ups; the later one, once ``l1`` ran, must not run its next timer (``l4``,
    sent after another instance's ``l2``, due at the same time) before ``l2``."""
    fired: list[str] = []

    class Alarm(StateChart):
        waiting = State(initial=True)
        ring = waiting.to.itself(internal=True)
        chain = waiting.to.itself(internal=True)

        def on_ring(self, label: str) -> None:
            fired.append(label)

        def on_chain(self, label: str, after: int) -> None:
            self.send("ring", label=label, delay=after)

    clock = VirtualClock()
    chart = compile_chart(Alarm)
    first, second = chart.create(clock=clock), chart.create(clock=clock)
    second.send("chain", label="l1", after=120)
    first.send("ring", label="l2", delay=120)
    second.send("chain", label="l3", after=59)
    second.send("chain", label="l4", after=120)
    clock.advance(1)
    assert fired == ["l3", "l1", "l2", "l4"]
