"""Breaks found by an independent review of issue 10 (round 3). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C6, C7, C8, C10, C15, C16, C17, C18, D3.

from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Any

import pytest
from statemachine import Event, HistoryState, State, StateChart

from statecharts import (
    AsyncioClock,
    UnsupportedChart,
    VirtualClock,
    compile_chart,
    to_dot,
    to_mermaid,
)


class Model:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []
        self.calls = 0

    def __repr__(self) -> str:
        return "Model()"


def _ids(states: Any) -> list[str]:
    return [state.id for state in states]


class TwoRegions(StateChart[Model]):
    class p(State.Parallel):
        class r1(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b) | b.to(a)

        class r2(State.Compound):
            x = State(initial=True)
            y = State()
            go2 = x.to(y, event="go") | y.to(x, event="go")


def test_C10_resume_in_a_region_of_a_parallel_state_activates_every_region() -> None:
    """`Chart.resume("b", model)` restores a checkpoint taken in region `r1` of a parallel
    state: the instance is `['p', 'r1', 'b']`, region `r2` missing (python-statemachine's
    `start_value="b"` gives `p, r1, r2, b, x`), and `go` then moves only `r1`, silently."""
    reference = TwoRegions(Model(), start_value="b")
    instance = compile_chart(TwoRegions).resume("b", Model())
    assert sorted(_ids(instance.configuration)) == sorted(_ids(reference.configuration))
    reference.send("go")
    instance.send("go")
    assert sorted(_ids(instance.configuration)) == sorted(_ids(reference.configuration))


class PositionalPayload(StateChart[Model]):
    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="add") | b.to(a, on="add")

    def add(self, item: str, quantity: int = 1) -> None:
        self.model.log.append((item, quantity))


def test_C8_a_statechart_passes_the_positional_payload_to_callbacks() -> None:
    """`send("go", "apple", 3)` to a chart with a compound state: python-statemachine calls
    `add("apple", 3)`; the statechart runtime passes no positional payload (a flat chart does),
    the TypeError is swallowed as `error.execution`, and nothing is added. The same loses the
    done data a final state's `enter` returns unless it is a dict (`done.state.*` gets `()`)."""
    reference = PositionalPayload(Model())
    instance = compile_chart(PositionalPayload).create(Model())
    reference.send("go", "apple", 3)
    instance.send("go", "apple", 3)
    assert reference.model.log == [("apple", 3)]
    assert instance.model.log == reference.model.log


class RetryOnEntry(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    a.to(a, cond="again", before="flaky")
    error_execution = a.to.itself(internal=True, on="handled")
    go = a.to(b)

    def again(self) -> bool:
        self.model.calls += 1
        self.model.log.append(("again", self.model.calls))
        return self.model.calls <= 3

    def flaky(self) -> None:
        raise ValueError("flaky")

    def handled(self, error: Exception) -> None:
        self.model.log.append(("handled", str(error)))


def test_C15_eventless_transitions_run_before_the_errors_they_raised_are_handled() -> None:
    """An eventless transition whose `before` raises: python-statemachine keeps selecting the
    enabled eventless transition (guard calls 1-4) and handles the queued `error.execution`
    events only then, as the SCXML algorithm does; the compiled runtime counts the failed
    microstep as 'nothing taken' and handles each error in between (again 1, handled, again 2,
    ...), so guards and handlers run in another order and another number of times."""
    reference = RetryOnEntry(Model())
    instance = compile_chart(RetryOnEntry).create(Model())
    assert reference.model.log[:5] == [
        ("again", 1),
        ("again", 2),
        ("again", 3),
        ("again", 4),
        ("handled", "flaky"),
    ]
    assert instance.model.log == reference.model.log


class Toggle(StateChart[Model]):
    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b) | b.to(a)


def test_C16_source_of_a_statechart_shows_its_state_event_functions() -> None:
    """`statecharts source MODULE:CLASS` (`Chart.source()`) on a fresh process prints, for a
    chart with a compound state, only `enter_a`: the `a__go` functions C16 promises appear only
    after some instance happened to send `go`, so what it prints depends on what ran before."""
    chart = compile_chart(Toggle)
    source = chart.source()
    assert "def a__go" in source
    assert "def b__go" in source


class Reminder(StateChart[Model]):
    waiting = State(initial=True)
    reminded = State(final=True)
    remind = Event(waiting.to(reminded), delay=500)


def test_D3_a_delayed_transition_is_labelled_with_its_delay() -> None:
    """Issue 10 asks for delayed transitions labelled in the diagrams: `remind` fires 500 ms
    after it is sent, yet DOT and Mermaid draw it as a plain `remind` edge (the IR keeps no
    delay), indistinguishable from an immediate event."""
    chart = compile_chart(Reminder)
    edge = [line for line in to_mermaid(chart).splitlines() if "waiting --> reminded" in line]
    assert edge
    assert "500" in edge[0]
    assert any("500" in line for line in to_dot(chart).splitlines() if "-> reminded" in line)


class JumpThroughHistory(StateChart[Model]):
    class p1(State.Parallel):
        class c3(State.Compound):
            s5 = State(initial=True)
            s6 = State()
            m56 = s5.to(s6)

        class c4(State.Compound):
            s9 = State(initial=True)
            s10 = State()
            h18 = HistoryState()
            m910 = s9.to(s10)

    jump = p1.c3.to(p1.c4.h18, on="notify", after="done")

    def notify(self) -> None:
        self.model.calls += 1
        self.model.log.append(("notify", self.model.calls))
        if self.model.calls == 2:
            raise ValueError("notification failed")

    def done(self) -> None:
        self.model.log.append("done")


def test_C7_an_action_failing_when_rerun_through_a_history_state_is_caught() -> None:
    """`jump` enters the region `c4` through its (unrecorded) history state, so its `on` action
    runs twice; the second run raises. python-statemachine catches it as `error.execution` and
    completes the transition (`after` runs); the compiled runtime cancels the whole microstep:
    `after` never runs and the configuration is put back, silently."""
    reference = JumpThroughHistory(Model())
    instance = compile_chart(JumpThroughHistory).create(Model())
    reference.send("jump")
    instance.send("jump")
    assert reference.model.log == [("notify", 1), ("notify", 2), "done"]
    assert instance.model.log == reference.model.log
    assert _ids(instance.configuration) == _ids(reference.configuration)


UNREACHABLE_TARGET = """<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0"
    datamodel="python" initial="a">
  <state id="a">
    <onentry><send target="#_worker" event="job"/></onentry>
    <transition event="error.communication" target="unreachable"/>
    <transition event="error.execution" target="crashed"/>
  </state>
  <final id="unreachable"/>
  <final id="crashed"/>
</scxml>"""


def test_C18_a_send_to_an_unreachable_session_raises_error_communication(tmp_path: Path) -> None:
    """An SCXML chart sends to `#_worker`, a session that does not exist: python-statemachine
    raises `error.communication` (the SCXML rule) and ends in `unreachable`; on the compiled
    instance the send action reaches for `machine._engine`, the AttributeError becomes
    `error.execution`, and the chart silently ends in `crashed`."""
    from statemachine.io import load

    path = tmp_path / "unreachable.scxml"
    path.write_text(UNREACHABLE_TARGET)
    reference = load(path, trusted=True)()
    instance = compile_chart(load(path, trusted=True)).create()
    assert _ids(reference.configuration) == ["unreachable"]
    assert _ids(instance.configuration) == _ids(reference.configuration)


class Heartbeat(StateChart[Model]):
    alive = State(initial=True)
    dead = State(final=True)
    ping = alive.to.itself(internal=True, on="rearm")
    timeout = alive.to(dead)

    def rearm(self) -> None:
        self.cancel_event("heartbeat")
        self.send("timeout", delay=30_000, send_id="heartbeat")


class CountingClock(VirtualClock):
    """A virtual clock that counts the wake-ups it is asked for."""

    __slots__ = ("wakes",)

    def __init__(self) -> None:
        super().__init__()
        self.wakes = 0

    def wake(self, instance: Any, due: float, *order: Any) -> None:
        self.wakes += 1
        super().wake(instance, due, *order)


def test_C17_rearming_a_timeout_does_not_pile_up_clock_timers() -> None:
    """The inactivity-timeout pattern: every `ping` cancels the pending `timeout` and sends a
    new one 30 s later. One timer is pending, yet the instance asks its clock for a new wake-up
    on every ping (each later than the last), so after 1000 pings the clock holds 1000 timers
    (on an `AsyncioClock`, 1000 `loop.call_at` handles, each keeping the instance alive)."""
    clock = CountingClock()
    instance = compile_chart(Heartbeat).create(Model(), clock=clock)
    for _ in range(1000):
        instance.send("ping")
        clock.advance(0.001)
    assert _ids(instance.configuration) == ["alive"]
    assert clock.wakes < 10, f"{clock.wakes} wake-ups asked for one pending timer"


class Reminded(StateChart[Model]):
    waiting = State(initial=True)
    armed = State()
    reminded = State(final=True)
    arm = waiting.to(armed, on="schedule")
    remind = armed.to(reminded)

    def schedule(self) -> None:
        self.send("remind", delay=20)


async def _arm_and_wait(clock: AsyncioClock) -> list[str]:
    instance = compile_chart(Reminded).create(Model(), clock=clock)
    instance.send("arm")
    await asyncio.sleep(0.1)
    return _ids(instance.configuration)


def test_C17_an_asyncio_clock_serves_the_loop_that_is_running() -> None:
    """A service keeps one `AsyncioClock()` (made without a loop) and runs `asyncio.run(...)`
    twice (a restart; pytest's loop per test): in the second run `send("arm")` takes the
    transition and then raises `RuntimeError: Event loop is closed` (the clock kept the first,
    closed loop), so the caller sees a failure for an applied event and the reminder is lost."""
    clock = AsyncioClock()
    assert asyncio.run(_arm_and_wait(clock)) == ["reminded"]
    assert asyncio.run(_arm_and_wait(clock)) == ["reminded"]


def _audit(machine: Any) -> None:
    """A module-level helper a chart hands itself to, as codebases share such helpers."""
    machine.model.log.append(machine.current_state_value)


class HelperGivenSelf(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_enter_b(self) -> None:
        _audit(self)


class AttrgetterOnSelf(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_enter_b(self) -> None:
        self.model.log.append(operator.attrgetter("current_state_value")(self))


@pytest.mark.parametrize("chart_class", [HelperGivenSelf, AttrgetterOnSelf])
def test_C6_machine_api_reached_past_the_bytecode_check_is_refused_or_run(
    chart_class: type[StateChart[Model]],
) -> None:
    """The compile-time scan now refuses `self.current_state_value`, `machine`, `getattr` and
    nested functions, but a helper given `self` or `attrgetter(...)(self)` still pass it; the
    AttributeError is swallowed as `error.execution` and the callback silently does nothing
    (python-statemachine logs `'b'`). A scan cannot see every route: the run itself must not
    swallow the missing API."""
    try:
        chart = compile_chart(chart_class)
    except UnsupportedChart:
        return
    reference = chart_class(Model())
    instance = chart.create(Model())
    reference.send("go")
    instance.send("go")
    assert reference.model.log == ["b"]
    assert instance.model.log == reference.model.log
