"""Breaks found by an independent review of issue 10 (round 5). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C6, C17.

from __future__ import annotations

from statemachine import State, StateChart

from statecharts import UnsupportedChart, VirtualClock, compile_chart


class Order:
    """A model with the count a guard compares against."""

    def __init__(self) -> None:
        self.count = 2
        self.log: list[str] = []


def over_limit(machine: StateChart[Order], limit: int) -> bool:
    """A module helper given the machine: it reads only the model, as python-statemachine
    users write shared guards."""
    return bool(machine.model.count > limit)


class ComputedLimit(StateChart[Order]):
    open = State(initial=True)
    big = State(final=True)
    small = State(final=True)
    check = open.to(big, cond="too_big") | open.to(small)
    margin = 1

    def too_big(self) -> bool:
        return over_limit(self, self.margin + 0)


class CalledLimit(StateChart[Order]):
    open = State(initial=True)
    big = State(final=True)
    small = State(final=True)
    check = open.to(big, cond="too_big") | open.to(small)

    def too_big(self) -> bool:
        return over_limit(self, len("a"))


def _ids(states: object) -> list[str]:
    return [state.id for state in states]  # type: ignore[attr-defined]


def test_C6_a_helper_given_self_and_a_computed_argument_is_followed_not_refused() -> None:
    """A guard calls a plain module helper `over_limit(self, self.margin + 0)` that reads only
    `machine.model`: python-statemachine runs it, but the compiler refuses the chart, claiming
    `over_limit` is "not a plain function of its module" (an argument that is an expression
    stops the scan from following self)."""
    reference = ComputedLimit(Order())
    reference.send("check")
    instance = compile_chart(ComputedLimit).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


def test_C6_a_helper_given_self_and_a_call_result_is_followed_not_refused() -> None:
    """A guard calls `over_limit(self, len("a"))` (a helper reading only the model, its other
    argument a call's result): python-statemachine runs it, the compiler refuses the chart as
    handing self to code it cannot check."""
    reference = CalledLimit(Order())
    reference.send("check")
    instance = compile_chart(CalledLimit).create(Order())
    instance.send("check")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["big"]


class Beeper(StateChart[Order]):
    """Two delayed events on one state; the model logs the order they run in."""

    idle = State(initial=True)
    arm = idle.to(idle, internal=True, on="schedule")
    arm_later = idle.to(idle, internal=True, on="schedule_later")
    ping = idle.to(idle, internal=True, on="log_ping")
    pong = idle.to(idle, internal=True, on="log_pong")

    def schedule(self) -> None:
        self.send("ping", delay=400)

    def schedule_later(self, wait: float) -> None:
        self.send("pong", delay=wait)

    def log_ping(self, model: Order) -> None:
        model.log.append("ping")

    def log_pong(self, model: Order) -> None:
        model.log.append("pong")


def test_C17_two_timers_due_at_the_same_millisecond_run_in_sending_order() -> None:
    """A test sends `ping` for 400 ms, advances the `VirtualClock` 36 ms, then sends `pong` for
    364 ms: both are due at 400 ms, so C17 runs `ping` (sent first) first, but the float sum
    0.036 + 0.364 (0.39999999999999997) puts `pong` ahead (76 of 400 such splits flip)."""
    clock = VirtualClock()
    model = Order()
    instance = compile_chart(Beeper).create(model, clock=clock)
    instance.send("arm")
    clock.advance(0.036)
    instance.send("arm_later", wait=364)
    clock.advance(1)
    assert model.log == ["ping", "pong"]


class Guarded(StateChart[Order]):
    open = State(initial=True)
    known = State(final=True)
    unknown = State(final=True)
    check = open.to(known, cond="has_state") | open.to(unknown)

    def has_state(self) -> bool:
        return self.state is not None  # type: ignore[attr-defined]


def test_C6_a_guard_reading_a_name_python_statemachine_lacks_is_not_answered_silently() -> None:
    """A guard reads `self.state`, which a python-statemachine machine does not have: there
    the AttributeError becomes error.execution and the guard is false (`unknown`); compiled,
    the runtime's own `state` answers, the chart is neither refused nor raises, and it ends in
    `known`. (`self.chart`, `self.snapshot`, `self.run_until_idle`, `getattr(self, "chart",
    None)` differ the same way.)"""
    reference = Guarded(Order())
    reference.send("check")
    assert _ids(reference.configuration) == ["unknown"]
    try:
        chart = compile_chart(Guarded)
    except UnsupportedChart:
        return
    instance = chart.create(Order())
    try:
        instance.send("check")
    except UnsupportedChart:
        return
    assert _ids(instance.configuration) == ["unknown"]
