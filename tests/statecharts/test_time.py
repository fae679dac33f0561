"""Delayed events on a clock: a virtual clock for tests, real time as python-statemachine's
synchronous engine waits, and an asyncio driver; cancelling; typed errors for bad input."""

# Rules checked here (docs/spec.md): C11, C17.

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from statemachine import Event, State, StateChart
from statemachine.exceptions import InvalidDefinition

from statecharts import AsyncioClock, VirtualClock, compile_chart


class Kettle(StateChart):
    """Heating schedules a delayed ``boiled`` (cancellable by its send_id) and a delayed
    ``whistle``; ``off`` cancels the boil."""

    idle = State(initial=True)
    heating = State()
    boiling = State()
    done = State(final=True)

    heat = idle.to(heating)
    boiled = heating.to(boiling)
    off = heating.to(idle)
    whistle = boiling.to(done)

    def on_enter_heating(self) -> None:
        self.model.log.append("heating")
        self.send("boiled", delay=500, send_id="boil")
        self.send("whistle", delay=800)

    def on_enter_boiling(self) -> None:
        self.model.log.append("boiling")

    def on_off(self) -> None:
        self.cancel_event("boil")

    def on_whistle(self) -> None:
        self.model.log.append("whistle")


class Log:
    def __init__(self) -> None:
        self.log: list[str] = []


def kettle(clock: Any = None) -> Any:
    return compile_chart(Kettle).create(Log(), clock=clock)


# -- the virtual clock ----------------------------------------------------------------------


def test_c17_a_delayed_event_waits_on_the_virtual_clock_until_it_is_due() -> None:
    clock = VirtualClock()
    instance = kettle(clock)
    outcome = instance.send("heat")
    assert outcome.applied
    assert instance.state.id == "heating"
    assert instance.next_due() == 0.5
    clock.advance(0.499)
    assert instance.state.id == "heating"
    clock.advance(0.001)
    assert instance.state.id == "boiling"
    assert clock.now() == 0.5
    assert instance.next_due() == 0.8


def test_c17_run_until_idle_advances_the_clock_to_each_timer_in_turn() -> None:
    clock = VirtualClock()
    instance = kettle(clock)
    instance.send("heat")
    instance.run_until_idle()
    assert instance.model.log == ["heating", "boiling", "whistle"]
    assert instance.is_terminated
    assert clock.now() == 0.8
    assert instance.next_due() is None


def test_c17_cancel_event_drops_the_delayed_event_with_that_send_id() -> None:
    clock = VirtualClock()
    instance = kettle(clock)
    instance.send("heat")
    instance.send("off")  # on_off cancels "boil"
    instance.run_until_idle()
    assert instance.state.id == "idle"
    assert instance.model.log == ["heating"]  # the whistle came in idle: ignored
    instance.cancel_event("never-sent")  # an unknown send_id is not an error


def test_c17_an_idle_instance_cancels_its_timer_from_outside() -> None:
    clock = VirtualClock()
    instance = kettle(clock)
    instance.send("heat")
    instance.cancel_event("boil")
    clock.advance(10)
    assert instance.state.id == "heating"
    assert instance.model.log == ["heating"]


def test_c17_send_with_a_delay_from_outside_is_queued_and_runs_when_due() -> None:
    clock = VirtualClock()
    instance = kettle(clock)
    outcome = instance.send("heat", delay=1000)
    assert not outcome.applied
    assert outcome.reason == "queued"
    assert instance.state.id == "idle"
    clock.advance(1)
    assert instance.state.id == "heating"


def test_c17_timers_of_instances_sharing_a_clock_run_in_due_order() -> None:
    clock = VirtualClock()
    seen: list[str] = []

    class Echo(StateChart):
        a = State(initial=True)
        b = State(final=True)
        ping = a.to(b)

        def on_ping(self, label: str) -> None:
            seen.append(label)

    chart = compile_chart(Echo)
    late, early = chart.create(clock=clock), chart.create(clock=clock)
    late.send("ping", label="late", delay=300)
    early.send("ping", label="early", delay=100)
    clock.run_until_idle()
    assert seen == ["early", "late"]


def test_c17_a_due_timer_runs_before_an_event_sent_after_it_fell_due() -> None:
    """python-statemachine orders its external queue by due time: an event sent once a timer
    is due runs after it."""
    seen: list[str] = []

    class Order(StateChart):
        a = State(initial=True)
        note = a.to.itself(internal=True)

        def on_note(self, label: str) -> None:
            seen.append(label)

    class Clock:
        """A clock that never wakes anyone: time moves, timers wait for the next send."""

        def __init__(self) -> None:
            self.time = 0.0

        def now(self) -> float:
            return self.time

        def wake(self, instance: Any, due: float, order: int) -> None:
            pass

    clock = Clock()
    instance = compile_chart(Order).create(clock=clock)
    instance.send("note", label="timer", delay=100)
    clock.time = 1.0
    outcome = instance.send("note", label="sent")
    assert seen == ["timer", "sent"]
    assert outcome.applied
    assert outcome.event == "note"


def test_c17_a_declared_event_delay_applies_unless_send_overrides_it() -> None:
    class Timer(StateChart):
        a = State(initial=True)
        b = State(final=True)
        ring = Event(a.to(b), delay=250)

    chart = compile_chart(Timer)
    clock = VirtualClock()
    instance = chart.create(clock=clock)
    assert instance.send("ring").reason == "queued"
    clock.advance(0.25)
    assert instance.is_terminated

    now = chart.create(clock=VirtualClock())
    assert now.send("ring", delay=0).applied


def test_c17_a_declared_internal_event_sent_from_a_callback_runs_in_the_macrostep() -> None:
    order: list[str] = []

    class Chain(StateChart):
        a = State(initial=True)
        b = State()
        c = State(final=True)
        go = a.to(b)
        step = Event(b.to(c), internal=True)
        later = b.to.itself(internal=True)

        def on_go(self) -> None:
            self.send("later")
            self.send("step")  # declared internal: runs before "later"

        def on_step(self) -> None:
            order.append("step")

        def on_later(self) -> None:
            order.append("later")

    instance = compile_chart(Chain).create()
    outcome = instance.send("go")
    assert [t.id for t in outcome.transitions] == ["a:go:b", "b:step:c"]
    assert order == ["step"]  # "later" was dropped: the chart terminated in c


def test_c17_termination_drops_the_timers_left() -> None:
    class Stop(StateChart):
        a = State(initial=True)
        b = State(final=True)
        stop = a.to(b)
        tick = a.to.itself(internal=True)

        def on_enter_a(self) -> None:
            self.send("tick", delay=100)

    clock = VirtualClock()
    instance = compile_chart(Stop).create(clock=clock)
    assert instance.next_due() == 0.1
    instance.send("stop")
    assert instance.next_due() is None


# -- real time --------------------------------------------------------------------------------


def test_c17_without_a_clock_send_waits_for_the_delayed_events_as_python_statemachine_does() -> (
    None
):
    reference_model, compiled_model = Log(), Log()
    reference = Kettle(reference_model)
    start = time.monotonic()
    reference.send("heat")
    reference_elapsed = time.monotonic() - start
    instance = compile_chart(Kettle).create(compiled_model)
    start = time.monotonic()
    instance.send("heat")
    elapsed = time.monotonic() - start
    assert compiled_model.log == reference_model.log == ["heating", "boiling", "whistle"]
    assert instance.is_terminated
    assert reference.is_terminated
    assert elapsed >= 0.8
    assert reference_elapsed >= 0.8


def test_c17_the_asyncio_clock_runs_timers_on_the_event_loop() -> None:
    async def main() -> list[str]:
        clock = AsyncioClock()
        instance = kettle(clock)
        start = time.monotonic()
        instance.send("heat")
        assert instance.state.id == "heating"  # send did not wait
        await clock.until_idle(instance)
        assert instance.is_terminated
        assert time.monotonic() - start >= 0.8
        return list(instance.model.log)

    assert asyncio.run(asyncio.wait_for(main(), 5)) == ["heating", "boiling", "whistle"]


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("delay", [float("nan"), float("inf"), "1s", True, [1]])
def test_c17_a_bad_delay_is_a_value_error_naming_the_event(delay: Any) -> None:
    instance = kettle(VirtualClock())
    with pytest.raises(ValueError, match=r"delay of event 'heat' must be a finite number"):
        instance.send("heat", delay=delay)
    assert instance.state.id == "idle"


def test_c17_a_delayed_internal_event_is_python_statemachines_error() -> None:
    instance = kettle(VirtualClock())
    with pytest.raises(InvalidDefinition, match=r"cannot be both delayed and internal"):
        instance.send("heat", delay=10, internal=True)


def test_c17_a_clock_without_now_and_wake_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"clock must be a VirtualClock"):
        compile_chart(Kettle).create(Log(), clock=time)


@pytest.mark.parametrize("seconds", [-0.1, float("nan"), "1"])
def test_c17_advancing_a_virtual_clock_takes_seconds_at_least_zero(seconds: Any) -> None:
    with pytest.raises(ValueError, match=r"advance\(\) needs a finite number of seconds"):
        VirtualClock().advance(seconds)


def test_c17_run_until_idle_refuses_to_run_from_a_callback() -> None:
    errors: list[Exception] = []

    class Holder:  # a model method reaching the instance (a chart method may not: C6)
        instance: Any = None

        def on_go(self) -> None:
            try:
                self.instance.run_until_idle()
            except RuntimeError as error:
                errors.append(error)

    class Nested(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

    holder = Holder()
    holder.instance = compile_chart(Nested).create(holder, clock=VirtualClock())
    holder.instance.send("go")
    assert "from inside a callback" in str(errors[0])


def test_c17_run_until_idle_does_not_advance_an_asyncio_clock() -> None:
    async def main() -> None:
        instance = kettle(AsyncioClock())
        instance.send("heat")
        with pytest.raises(TypeError, match=r"advances a VirtualClock, not AsyncioClock"):
            instance.run_until_idle()

    asyncio.run(main())


# -- outcomes of queued events ---------------------------------------------------------------


def test_c11_an_event_run_behind_waiting_events_reports_its_internal_events_transitions() -> None:
    """The outcome of an event that ran behind others (here: on an instance with a clock, whose
    queue is always there) lists the transitions its internal events took, as when it runs
    alone."""

    class Relay(StateChart):
        a = State(initial=True)
        b = State()
        c = State(final=True)
        go = a.to(b)
        hop = b.to(c)

        def on_go(self) -> None:
            self.raise_("hop")

    alone = compile_chart(Relay).create().send("go")
    behind = compile_chart(Relay).create(clock=VirtualClock()).send("go")
    assert [t.id for t in alone.transitions] == ["a:go:b", "b:hop:c"]
    assert behind.transitions == alone.transitions
    assert behind.target is not None
    assert behind.target.id == "c"


def test_c11_an_event_run_behind_leftovers_of_a_failed_guard_reports_every_transition() -> None:
    """A validator that raises leaves the events queued behind it, to run before the next
    ``send``; that event's outcome still lists what its internal events took."""

    class Leftover(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State()
        c = State()
        d = State(final=True)
        first = a.to(b, on="queue_two")
        check = b.to(c, validators="explode")
        later = b.to.itself(internal=True)
        go = b.to(c, on="hop_next")
        hop = c.to(d)

        def queue_two(self) -> None:
            self.send("check")
            self.send("later")

        def explode(self) -> None:
            raise ValueError("no")

        def hop_next(self) -> None:
            self.raise_("hop")

    instance = compile_chart(Leftover).create()
    with pytest.raises(ValueError, match="no"):
        instance.send("first")
    assert instance.state.id == "b"
    outcome = instance.send("go")  # "later" runs first, then "go" and its internal "hop"
    assert [t.id for t in outcome.transitions] == ["b:go:c", "c:hop:d"]
    assert outcome.target is not None
    assert outcome.target.id == "d"


def test_c17_a_send_id_without_a_delay_runs_at_once_and_reports_its_outcome() -> None:
    instance = kettle(VirtualClock())
    assert instance.send("whistle", send_id="w").reason == "no_transition"
    assert instance.send("heat", send_id="h").applied


def test_c17_an_exception_from_a_delayed_event_reaches_whoever_advanced_the_clock() -> None:
    class Fragile(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State(final=True)
        snap = a.to(b, on="crack")

        def crack(self) -> None:
            raise RuntimeError("cracked")

    clock = VirtualClock()
    instance = compile_chart(Fragile).create(clock=clock)
    instance.send("snap", delay=100)
    with pytest.raises(RuntimeError, match="cracked"):
        clock.advance(1)
    assert instance.state.id == "a"
    assert clock.now() == 0.1
    assert instance.next_due() is None
    instance.send("snap", delay=100)  # the instance still works, on the same clock
    assert instance.next_due() == pytest.approx(0.2)


def test_c17_a_timer_that_falls_due_during_a_callback_runs_once_the_macrostep_is_done() -> None:
    clock = VirtualClock()

    class Impatient(StateChart):
        a = State(initial=True)
        b = State()
        c = State(final=True)
        go = a.to(b)
        tick = b.to(c)

        def on_go(self) -> None:
            self.send("tick", delay=100)
            clock.advance(1)  # the instance is busy: the tick waits for the macrostep

        def on_tick(self) -> None:
            assert self.configuration[0].id == "b"

    instance = compile_chart(Impatient).create(clock=clock)
    outcome = instance.send("go")
    assert [t.id for t in outcome.transitions] == ["a:go:b"]
    assert instance.is_terminated


def test_c17_raising_an_event_declared_with_a_delay_is_python_statemachines_error() -> None:
    class Late(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State(final=True)
        go = a.to.itself(internal=True, on="hurry")
        ring = Event(a.to(b), delay=100)

        def hurry(self) -> None:
            self.raise_("ring")

    with pytest.raises(InvalidDefinition, match=r"cannot be both delayed and internal"):
        Late().send("go")
    with pytest.raises(InvalidDefinition, match=r"cannot be both delayed and internal"):
        compile_chart(Late).create(clock=VirtualClock()).send("go")


class _Later(StateChart):
    idle = State(initial=True)
    waiting = State()
    late = State(final=True)
    arm = idle.to(waiting, on="schedule") | waiting.to.itself(internal=True, on="schedule")
    timeout = waiting.to(late)

    def schedule(self, after: int = 300) -> None:
        self.send("timeout", delay=after)


@pytest.mark.parametrize(
    ("start", "steps", "delay", "sent_at"),
    [
        (0.0, [0.1, 0.1, 0.1], 300, 0.0),  # 0.1 + 0.1 + 0.1 is 0.30000000000000004
        (0.0, [0.05, 0.35], 400, 0.0),  # 0.05 + 0.35 is 0.39999999999999997
        (0.0, [0.1, 0.1], 200, 0.1),  # due at 0.1 + 0.2, also 0.30000000000000004
        (1e6 + 0.1, [0.7, 0.2], 900, 0.0),
    ],
)
def test_c17_a_timer_falls_due_when_the_steps_advanced_add_up_to_its_delay(
    start: float, steps: list[float], delay: int, sent_at: float
) -> None:
    """C17: due times and a virtual clock's time are on a nanosecond grid, so a timer due
    after ``delay`` ms runs when the steps the clock is advanced by add up to it (float sums
    that fall a hair short or long of it included), and not a step before."""
    clock = VirtualClock(start=start)
    instance = compile_chart(_Later).create(clock=clock)
    clock.advance(sent_at)
    instance.send("arm", after=delay)
    elapsed = sent_at
    for step in steps:
        assert instance.state.id == "waiting", elapsed
        clock.advance(step)
        elapsed += step
    assert instance.state.id == "late"


def test_c17_a_wake_up_for_a_timer_a_failure_dropped_runs_nothing() -> None:
    """A callback fails while a delayed event waits: the failure drops the queues, delayed
    events too (as python-statemachine clears its queues). When the clock later reaches the
    dropped timer's time, nothing runs: no eventless transition is retried, nothing raises."""
    from .charts import Assembly, Boom, Recorder

    clock = VirtualClock()
    instance = compile_chart(Assembly).create(Recorder(), clock=clock)
    instance.send("load", delay=250)
    instance.send("load", delay=125)
    with pytest.raises(Boom):
        clock.advance(0.125)  # the first load's eventless chain fails in ``wrap``
    assert instance.next_due() is None
    logged = len(instance.model.log)
    clock.advance(0.125)  # the dropped timer's time
    assert len(instance.model.log) == logged


def test_c17_a_timer_sent_after_a_failure_still_runs_past_a_stale_wake_up() -> None:
    """A failure drops a timer due at 125 ms (the clock's wake-up for it stays); a timer sent
    afterwards for 250 ms still runs: the stale wake-up asks for the next one."""

    class Fragile(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State(final=True)
        fail = a.to.itself(internal=True, on="explode")
        go = a.to(b)

        def explode(self) -> None:
            raise RuntimeError("boom")

    clock = VirtualClock()
    instance = compile_chart(Fragile).create(clock=clock)
    instance.send("go", delay=125)
    with pytest.raises(RuntimeError, match="boom"):
        instance.send("fail")  # drops the delayed go
    assert instance.next_due() is None
    instance.send("go", delay=250)
    clock.advance(0.125)  # the dropped timer's wake-up
    assert [state.id for state in instance.configuration] == ["a"]
    clock.advance(0.125)
    assert [state.id for state in instance.configuration] == ["b"]
