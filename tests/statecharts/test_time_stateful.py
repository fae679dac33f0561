"""Timers on a shared virtual clock against a simple model: a list of (due, order, send_id,
label) per instance, fired in due order across instances when the clock passes them. Due times
are whole nanoseconds (delays and steps are whole milliseconds), so many timers fall due at
the same time: those fire in the order they were sent."""

# Rules checked here (docs/spec.md): C17.

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from statemachine import State, StateChart

from statecharts import VirtualClock, compile_chart

FIRED: list[tuple[int, str]] = []


class Alarm(StateChart):
    """One state; ``ring`` records its label (sent delayed from outside or from a callback)."""

    waiting = State(initial=True)
    ring = waiting.to.itself(internal=True)
    chain = waiting.to.itself(internal=True)

    def on_ring(self, label: str) -> None:
        FIRED.append((self.model.number, label))

    def on_chain(self, label: str, after: int) -> None:
        self.send("ring", label=label, delay=after)


class Owner:
    def __init__(self, number: int) -> None:
        self.number = number


SEND_IDS = st.sampled_from([None, "x", "y"])
DELAYS = st.integers(min_value=0, max_value=2000)


class Timers(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        FIRED.clear()
        self.clock = VirtualClock()
        chart = compile_chart(Alarm)
        self.instances = [chart.create(Owner(n), clock=self.clock) for n in range(2)]
        #: the model: pending (due ns, order, instance, send_id, label), and what fired
        self.pending: list[tuple[int, int, int, Any, str]] = []
        self.fired: list[tuple[int, str]] = []
        self.order = 0
        self.labels = 0

    def _label(self) -> str:
        self.labels += 1
        return f"l{self.labels}"

    def _fire_until(self, time: int) -> None:
        due = sorted(entry for entry in self.pending if entry[0] <= time)
        for entry in due:
            self.pending.remove(entry)
            self.fired.append((entry[2], entry[4]))

    def _schedule(self, which: int, delay: int, send_id: Any, label: str) -> None:
        self.order += 1
        due = self.clock.now_ns() + delay * 1_000_000
        self.pending.append((due, self.order, which, send_id, label))

    @rule(which=st.integers(0, 1), delay=DELAYS, send_id=SEND_IDS)
    def send_delayed(self, which: int, delay: int, send_id: Any) -> None:
        label = self._label()
        self._schedule(which, delay, send_id, label)
        self._fire_until(self.clock.now_ns())
        self.instances[which].send("ring", label=label, delay=delay, send_id=send_id)

    @rule(which=st.integers(0, 1), delay=DELAYS)
    def send_from_a_callback(self, which: int, delay: int) -> None:
        label = self._label()
        self._fire_until(self.clock.now_ns())
        self._schedule(which, delay, None, label)
        self._fire_until(self.clock.now_ns())
        self.instances[which].send("chain", label=label, after=delay)

    @rule(which=st.integers(0, 1), send_id=SEND_IDS.filter(lambda value: value is not None))
    def cancel(self, which: int, send_id: str) -> None:
        self.pending = [
            entry for entry in self.pending if not (entry[2] == which and entry[3] == send_id)
        ]
        self.instances[which].cancel_event(send_id)

    @rule(milliseconds=st.integers(min_value=0, max_value=1500))
    def advance(self, milliseconds: int) -> None:
        self._fire_until(self.clock.now_ns() + milliseconds * 1_000_000)
        self.clock.advance(milliseconds / 1000)

    @precondition(lambda self: bool(self.pending))
    @rule(which=st.integers(0, 1))
    def run_until_idle(self, which: int) -> None:
        mine = [entry for entry in self.pending if entry[2] == which]
        if mine:
            self._fire_until(max(mine)[0])
        self.instances[which].run_until_idle()

    @invariant()
    def fired_in_due_order(self) -> None:
        assert self.fired == FIRED

    @invariant()
    def next_due_is_the_earliest_pending(self) -> None:
        for which, instance in enumerate(self.instances):
            dues = [entry[0] for entry in self.pending if entry[2] == which]
            assert instance.next_due() == (min(dues) / 1e9 if dues else None)


Timers.TestCase.settings = settings(max_examples=100, stateful_step_count=30, deadline=None)
test_c17_timers_fire_in_due_order_as_a_simple_model_says = Timers.TestCase
