"""Derived stateful tests: ``chart_machine`` against correct and broken systems under test."""

# Rules checked here (docs/spec.md): M4.

from __future__ import annotations

import dataclasses
import enum
import math
import time
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test
from statemachine import State, StateChart

from statecharts import VirtualClock, compile_chart
from statecharts.testing import (
    ChartRunner,
    Divergence,
    Step,
    chart_machine,
    configuration_of,
    default_payloads,
    payload_parameters,
    replay,
)
from statecharts.testing._machine import rule_names
from statecharts.testing._runner import minimizer
from tests.statecharts.charts import EngineAdapter, media_player


class Counter:
    def __init__(self) -> None:
        self.total = 0


class Turnstile(StateChart[Counter]):
    """Locked until paid enough; pushing lets one through; breaking it is final."""

    locked = State(initial=True)
    unlocked = State()
    broken = State(final=True)

    coin = locked.to(unlocked, cond="enough", on="keep") | locked.to.itself(on="keep")
    push = unlocked.to(locked)
    smash = locked.to(broken) | unlocked.to(broken)

    def enough(self, amount: int) -> bool:
        return self.model.total + amount >= 2

    def keep(self, amount: int) -> None:
        self.model.total = 0 if self.model.total + amount >= 2 else self.model.total + amount


CHART = compile_chart(Turnstile)
SLOW = settings(
    max_examples=40, stateful_step_count=20, derandomize=True, report_multiple_bugs=False
)


class HandTurnstile:
    """A hand-written turnstile per key; ``bug`` switches on one deliberate mistake."""

    def __init__(self, bug: str | None = None) -> None:
        self.bug = bug
        self.state: dict[str, str] = {}
        self.total: dict[str, int] = {}

    def create(self, key: str) -> None:
        self.state[key], self.total[key] = "locked", 0

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None:
        state = self.state[key]
        if state == "broken" and self.bug != "revives":
            return False
        if event == "coin" and state in ("locked", "broken"):
            total = self.total[key] + payload["amount"]
            threshold = 3 if self.bug == "off_by_one" else 2
            self.state[key] = "unlocked" if total >= threshold else "locked"
            self.total[key] = 0 if total >= threshold else total
            return True
        if event == "push" and state == "unlocked":
            self.state[key] = "locked"
            return True
        if event == "smash":
            self.state[key] = "broken"
            return True
        return False

    def configuration(self, key: str) -> Iterable[str]:
        return {self.state[key]}


def machine(bug: str | None = None) -> Any:
    return chart_machine(
        CHART,
        lambda: HandTurnstile(bug),
        payloads={"coin": st.fixed_dictionaries({"amount": st.integers(0, 2)})},
        model=lambda key: Counter(),
    )


def test_one_rule_per_declared_event_named_after_it() -> None:
    derived = machine()
    rules = {
        name
        for name in dir(derived)
        if hasattr(getattr(derived, name), "hypothesis_stateful_rule")
    }
    assert {"coin", "push", "smash", "undeclared_event", "create"} <= rules
    assert derived.__name__ == "TurnstileMachine"


def test_a_correct_sut_passes() -> None:
    run_state_machine_as_test(machine(), settings=SLOW)


@pytest.mark.parametrize("bug", ["off_by_one", "revives"])
def test_a_broken_sut_fails_with_a_short_pasteable_sequence(bug: str) -> None:
    with pytest.raises(Divergence) as caught:
        run_state_machine_as_test(machine(bug), settings=SLOW)
    failure = caught.value
    assert len(failure.steps) <= 6
    assert "steps = [" in str(failure)
    assert "Step('k0')" in str(failure)
    with pytest.raises(Divergence):  # the printed steps reproduce it
        replay(CHART, HandTurnstile(bug), failure.steps, model=lambda key: Counter())


def test_final_states_absorb_is_checked() -> None:
    steps = [Step("k0"), Step("k0", "smash"), Step("k0", "coin", {"amount": 2})]
    with pytest.raises(Divergence, match="did not absorb"):
        replay(CHART, HandTurnstile("revives"), steps, model=lambda key: Counter())


def test_a_state_the_chart_does_not_declare_is_reported() -> None:
    class Liar(HandTurnstile):
        def configuration(self, key: str) -> Iterable[str]:
            return {"floating"}

    with pytest.raises(Divergence, match="does not declare"):
        replay(CHART, Liar(), [Step("k0")])


def test_applied_versus_ignored_is_compared_when_the_sut_tells() -> None:
    class Boastful(HandTurnstile):
        def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None:
            super().send(key, event, payload)
            return True

    with pytest.raises(Divergence, match="ignored 'push'"):
        replay(CHART, Boastful(), [Step("k0"), Step("k0", "push")], model=lambda key: Counter())


def test_events_routed_to_the_wrong_key_are_caught_by_checking_every_instance() -> None:
    class Mixer(HandTurnstile):
        def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None:
            return super().send(sorted(self.state)[-1], event, payload)

    steps = [Step("k0"), Step("k1"), Step("k0", "smash")]
    with pytest.raises(Divergence):
        replay(CHART, Mixer(), steps, model=lambda key: Counter())


def test_default_payloads_come_from_the_callbacks_parameters() -> None:
    assert payload_parameters(CHART, "coin") == ["amount"]
    assert payload_parameters(CHART, "push") == []
    assert repr(default_payloads(CHART, "push")) == "fixed_dictionaries({})"


def test_configuration_of_prefers_the_runtime_configuration() -> None:
    instance = CHART.create(Counter())
    assert configuration_of(instance) == {"locked"}

    class Nested:
        configuration = ("outer", "inner")
        state = None

    assert configuration_of(Nested()) == {"outer", "inner"}  # type: ignore[arg-type]


def test_runner_refuses_a_key_twice() -> None:
    runner = ChartRunner(CHART, HandTurnstile(), lambda key: Counter())
    runner.create("a")
    with pytest.raises(ValueError, match="already"):
        runner.create("a")


def test_chart_machine_rejects_payloads_for_undeclared_events() -> None:
    with pytest.raises(ValueError, match="does not declare"):
        chart_machine(CHART, HandTurnstile, payloads={"kick": st.just({})})


# -- a history the system under test keeps differently, and minimal steps ---------------------


DEEP_PLAYER, SHALLOW_PLAYER = media_player("deep"), media_player("shallow")


def test_M4_a_shallow_history_where_the_chart_has_a_deep_one_is_found_with_minimal_steps() -> None:
    """The default walks (every node the chart reaches, history values included, then each
    event) find it within the default budget, and the steps shown are the shortest run that
    shows it: the history is recorded when ``on`` is left, so it takes a second ``power``
    to come back and ``pause``, ``resume`` to restore it."""
    machine = chart_machine(compile_chart(DEEP_PLAYER), lambda: EngineAdapter(SHALLOW_PLAYER))
    with pytest.raises(Divergence) as caught:
        run_state_machine_as_test(
            machine,
            settings=settings(max_examples=60, database=None, deadline=None, derandomize=True),
        )
    steps = caught.value.steps
    assert len(steps) == 7, caught.value
    assert [step.event for step in steps[-3:]] == ["power", "pause", "resume"]  # type: ignore[attr-defined]


def test_M4_the_steps_a_divergence_shows_are_minimized_by_replaying_shorter_runs() -> None:
    """A run padded with steps that do not matter (another instance, events it ignores or
    undoes) shows only what does, once read."""
    runner = ChartRunner(compile_chart(DEEP_PLAYER), EngineAdapter(SHALLOW_PLAYER))
    runner.minimize = minimizer(runner.chart, lambda: EngineAdapter(SHALLOW_PLAYER))
    events = ["power", "resume", "hush", "gray", "gray", "power", "hush", "power"]
    runner.create("k0")
    runner.create("k1")
    runner.send("k1", "power")
    for event in [*events, "pause"]:
        runner.send("k0", event)
    with pytest.raises(Divergence) as caught:
        runner.send("k0", "resume")
    assert len(caught.value.steps) == 7, caught.value
    assert all(step.key == "k0" for step in caught.value.steps)  # type: ignore[attr-defined]


# -- rule names, payload parameters -----------------------------------------------------------


class Wizard(StateChart):  # type: ignore[type-arg]
    """Events named like Python keywords, and one like a machine's own method."""

    first = State(initial=True)
    second = State()
    third = State(final=True)

    next_page = first.to(second, event="continue")
    back = second.to(first, event="return")
    finish = second.to(third, event="pass create")


def test_an_event_named_like_a_python_keyword_gets_a_send_rule() -> None:
    names = rule_names(["continue", "return", "pass", "create", "ok"], {"create"})
    assert names == {
        "continue": "send_continue",
        "return": "send_return",
        "pass": "send_pass",
        "create": "send_create",
        "ok": "ok",
    }
    derived = chart_machine(compile_chart(Wizard), HandTurnstile)
    assert {"send_continue", "send_return", "send_pass", "send_create"} <= set(vars(derived))


class Office(StateChart):  # type: ignore[type-arg]
    """``clock_in`` enters ``desk`` inside ``floor`` (whose entry wants a ``badge``) from
    ``lobby``, whose parent ``building``'s exit is not run (the domain holds both);
    ``tidy`` is internal to ``floor`` and exits none of ``floor``'s ancestors. A callback
    missing an argument raises (errors are not caught as events)."""

    catch_errors_as_events = False

    class building(State.Compound):
        lobby = State(initial=True)

        class floor(State.Compound):
            desk = State(initial=True)
            kitchen = State()

            tidy = desk.to(kitchen)

        clock_in = lobby.to(floor.desk)
        leave = floor.to(lobby)
        wave = lobby.to.itself(internal=True)  # type: ignore[no-untyped-call]
        refresh = floor.to.itself(internal=True)  # type: ignore[no-untyped-call]

    gone = State(final=True)
    quit = building.to(gone)

    def on_enter_floor(self, badge: str) -> None:
        self.model.badge = badge

    def on_exit_building(self, farewell: str) -> None:
        self.model.farewell = farewell

    def on_exit_kitchen(self, dishes: int) -> None:
        self.model.dishes = dishes

    def on_exit_lobby(self, coat: str) -> None:
        self.model.coat = coat

    def on_enter_lobby(self, greeting: str) -> None:
        self.model.greeting = greeting


def test_payload_parameters_carry_what_the_states_an_event_enters_and_exits_ask_for() -> None:
    chart = compile_chart(Office)
    assert payload_parameters(chart, "clock_in") == ["coat", "badge"]  # building stays
    assert payload_parameters(chart, "tidy") == []  # floor is neither exited nor entered
    assert payload_parameters(chart, "leave") == ["dishes", "greeting"]  # kitchen may be active
    # building and every state inside it may be exited; nothing entered asks
    assert payload_parameters(chart, "quit") == ["farewell", "coat", "dishes"]
    # internal to itself: an atomic state is entered again, not exited; a compound state is
    # left and entered again, with its active children
    assert payload_parameters(chart, "wave") == ["greeting"]
    assert payload_parameters(chart, "refresh") == ["dishes", "badge"]


def test_payload_parameters_match_the_callbacks_the_runtime_runs() -> None:
    """Every callback each event runs gets what it asks for from the payload parameters (a
    callback missing one raises)."""
    chart = compile_chart(Office)
    with pytest.raises(TypeError, match="greeting"):
        chart.create(greeting="hi").send("wave")
    instance = chart.create(greeting="hi")
    for event in ["wave", "clock_in", "tidy", "refresh", "leave", "wave", "quit"]:
        payload = {name: "x" for name in payload_parameters(chart, event)}
        assert instance.send(event, **payload).applied, event
    assert instance.is_terminated


class Till:
    """A model whose class defines the guard a chart names."""

    def __init__(self) -> None:
        self.balance = 10

    def can_pay(self, amount: int) -> bool:
        return 0 < amount <= self.balance


class Kiosk(StateChart):  # type: ignore[type-arg]
    idle = State(initial=True)
    sold = State(final=True)

    pay = idle.to(sold, cond="can_pay")


def test_default_payloads_read_the_callbacks_a_model_s_class_defines() -> None:
    chart = compile_chart(Kiosk)
    assert payload_parameters(chart, "pay") == []
    assert payload_parameters(chart, "pay", Till) == ["amount"]
    assert payload_parameters(chart, "pay", Till()) == ["amount"]
    assert "amount" in repr(default_payloads(chart, "pay", Till))


# -- printed steps paste as code --------------------------------------------------------------


class Color(enum.Enum):
    RED = 1
    BLUE = 2


class Access(enum.Flag):
    READ = 1
    WRITE = 2


@dataclasses.dataclass(frozen=True)
class Point:
    x: float
    y: float


class Pair(NamedTuple):
    left: float
    right: Color


def test_printed_steps_write_enums_dataclasses_and_named_tuples_as_code_with_their_imports() -> (
    None
):
    payload = {
        "color": Color.RED,
        "access": Access.READ | Access.WRITE,
        "point": Point(math.nan, -math.inf),
        "pair": Pair(math.nan, Color.BLUE),
        "points": [Point(1.0, 2.0)],
    }
    step = Step("k0", "paint", payload)
    namespace = {"Step": Step, "Color": Color, "Access": Access, "Point": Point, "Pair": Pair}
    pasted = eval(repr(step), namespace)
    assert repr(pasted) == repr(step)
    assert pasted.payload["color"] is Color.RED
    assert pasted.payload["access"] == Access.READ | Access.WRITE
    assert math.isnan(pasted.payload["point"].x)
    assert "Color.RED" in repr(step)
    assert 'Point(x=float("nan"), y=-float("inf"))' in repr(step)
    names = ["Access", "Color", "Pair", "Point"]
    assert step.imports() == {f"from {__name__} import {name}" for name in names}
    message = str(Divergence("differs", [Step("k0"), step]))
    block = message[message.index("from ") : message.index("\n]") + 2]
    found: dict[str, Any] = {"Step": Step}
    exec(block, found)  # the printed imports and steps run as they are
    assert repr(found["steps"]) == repr([Step("k0"), step])


# -- time: delayed events on a virtual clock ------------------------------------------------------


class Heartbeat(StateChart):  # type: ignore[type-arg]
    """Each ``ping`` re-arms a ``timeout`` due 30 s later."""

    alive = State(initial=True)
    dead = State(final=True)

    ping = alive.to.itself(internal=True, on="rearm")  # type: ignore[no-untyped-call]
    timeout = alive.to(dead)

    def rearm(self) -> None:
        self.cancel_event("beat")
        self.send("timeout", delay=30_000, send_id="beat")


class Clocked:
    """A SUT running a chart's compiled instances on its own virtual clock."""

    def __init__(self, cls: Any) -> None:
        self.chart = compile_chart(cls)
        self.clock = VirtualClock()
        self.instances: dict[str, Any] = {}

    def create(self, key: str) -> None:
        self.instances[key] = self.chart.create(clock=self.clock)

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool:
        return bool(self.instances[key].send(event, **payload))

    def configuration(self, key: str) -> set[str]:
        return {state.id for state in self.instances[key].configuration}

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)


class Timeless(Clocked):
    """The same, but it cannot be shown time passing."""

    advance = None  # type: ignore[assignment]


class LateHeartbeat(Heartbeat):
    """A SUT whose timer is a second late."""

    def rearm(self) -> None:
        self.cancel_event("beat")
        self.send("timeout", delay=31_000, send_id="beat")


def test_the_derived_test_lets_time_pass_where_the_adapter_can_advance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(seconds: float) -> None:
        raise AssertionError(f"slept {seconds} s of real time")

    monkeypatch.setattr(time, "sleep", never)
    chart = compile_chart(Heartbeat)
    run_state_machine_as_test(chart_machine(chart, lambda: Clocked(Heartbeat)), settings=SLOW)
    run_state_machine_as_test(chart_machine(chart, lambda: Timeless(Heartbeat)), settings=SLOW)
    late = chart_machine(chart, lambda: Clocked(LateHeartbeat))
    with pytest.raises(Divergence) as caught:
        run_state_machine_as_test(late, settings=SLOW)
    assert list(caught.value.steps) == [Step("k0"), Step("k0", "ping"), Step.wait(30.0)]
    assert "Step.wait(30.0)," in str(caught.value)
    with pytest.raises(Divergence, match="configurations differ"):
        replay(chart, Clocked(LateHeartbeat), caught.value.steps)  # type: ignore[arg-type]
