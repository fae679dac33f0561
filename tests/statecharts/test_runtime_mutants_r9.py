"""Rules of the statechart runtime that a mutation sample of ``statecharts/_runtime.py``
(seed 2501) found untested; each test is named after what a chart author observes and, where
the rule is a semantic one, compares with python-statemachine. (Async charts:
test_runtime_mutants_r9_async.py.)

Rules checked here (docs/spec.md): C5 (eventless chains), C9 (callbacks a model instance
holds), C11 (observers), C16 (the generated source), C17 (delayed events on a shared clock),
C20 (a model type's code is generated once).
"""

from __future__ import annotations

import re
import sys
import threading
from typing import Any

import pytest
from statemachine import State, StateChart, StateMachine

from statecharts import UnsupportedChart, VirtualClock, compile_chart, observe_outcomes


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


# -- an eventless chain longer than the chains a binding remembers ----------------------------


class Countdown(StateChart[Any]):
    """A flat chart: ``go`` leads to ``a``, whose eventless transitions loop through ``b``
    while the model's count lasts (each loop counts one down), then end in ``done``."""

    idle = State(initial=True)
    a = State()
    b = State()
    done = State(final=True)
    go = idle.to(a)
    a.to(b, cond="more", on="tick")
    b.to(a)
    a.to(done, unless="more")

    def more(self) -> bool:
        return bool(self.model.count > 0)

    def tick(self) -> None:
        self.model.count -= 1
        self.model.log.append(self.model.count)


class Counter:
    def __init__(self, count: int) -> None:
        self.count = count
        self.log: list[int] = []


@pytest.mark.parametrize("count", [3, 4, 5, 9])
def test_c5_a_long_eventless_chain_reports_the_event_and_every_transition_it_took(
    count: int,
) -> None:
    """The outcome of an event whose eventless chain runs past the length a binding
    remembers (8 transitions) names the event, the transition it fired, where the chain
    ended and every transition taken, in order, as a short chain's does; the instance ends
    where python-statemachine's does, having made the same calls."""
    reference_model, model = Counter(count), Counter(count)
    reference = Countdown(reference_model)
    instance = compile_chart(Countdown).create(model)
    reference.send("go")
    outcome = instance.send("go")
    assert ids(instance) == ids(reference) == ["done"]
    assert model.log == reference_model.log == list(range(count - 1, -1, -1))
    assert outcome.applied
    assert outcome.event == "go"
    assert outcome.source.id == "idle"
    assert outcome.transition is not None
    assert outcome.transition.id == "idle:go:a"
    assert outcome.target is not None
    assert outcome.target.id == "done"
    assert [t.id for t in outcome.transitions] == [
        "idle:go:a",
        *["a::b", "b::a"] * count,
        "a::done",
    ]


def test_c5_a_long_eventless_chain_met_again_is_reported_alike() -> None:
    """Each instance's chain of the same length reports the same transitions, whether the
    binding remembered it (short) or not (long)."""
    chart = compile_chart(Countdown)
    for count in (1, 4, 1, 4):
        outcome = chart.create(Counter(count)).send("go")
        assert len(outcome.transitions) == 2 + 2 * count
        assert outcome.target is not None
        assert outcome.target.id == "done"


def test_c5_a_chain_of_up_to_eight_transitions_met_again_is_the_same_remembered_outcome() -> None:
    """A binding remembers the outcome of each eventless chain of up to 8 transitions (a
    chart has few): met again, the chain reports that same outcome; a longer one (an
    eventless loop the model drives) is made anew for its caller alone."""
    chart = compile_chart(Countdown)
    short = [chart.create(Counter(3)).send("go") for _ in range(2)]  # 8 transitions
    long = [chart.create(Counter(4)).send("go") for _ in range(2)]  # 10 transitions
    assert len(short[0].transitions) == 8
    assert short[1] is short[0]
    assert long[1] == long[0]
    assert long[1] is not long[0]


def test_c5_each_event_of_a_transition_taken_into_a_chain_is_remembered_apart() -> None:
    """One transition taken by either of two events, into the same eventless chain: each
    event's outcome names it, and each chain met again is that event's remembered outcome,
    whichever ran in between."""

    class Either(StateChart[Any]):
        a = State(initial=True)
        m = State()
        z = State()
        a.to(m, event="go start")
        m.to(z)
        back = z.to(a)

    instance = compile_chart(Either).create()
    outcomes: list[Any] = []
    for event in ("go", "start", "go", "start"):
        outcomes.append(instance.send(event))
        assert instance.send("back").applied
    assert [outcome.event for outcome in outcomes] == ["go", "start", "go", "start"]
    assert [[t.target for t in outcome.transitions] for outcome in outcomes] == [["m", "z"]] * 4
    assert outcomes[2] is outcomes[0]
    assert outcomes[3] is outcomes[1]
    assert outcomes[1] is not outcomes[0]


#: One more event than the chains a binding remembers (256).
MANY_EVENTS = [f"e{number}" for number in range(257)]


class Many(StateChart[Any]):
    """One transition any of 257 events takes, into an eventless chain."""

    a = State(initial=True)
    m = State()
    z = State()
    a.to(m, event=" ".join(MANY_EVENTS))
    m.to(z)
    back = z.to(a)


def test_c5_past_the_chains_a_binding_remembers_each_chain_is_made_anew() -> None:
    """A binding remembers 256 chains (a chart has few): past them, a chain met again is made
    anew each time, so memory stays bounded."""
    instance = compile_chart(Many).create()
    for event in MANY_EVENTS[:-1]:
        assert instance.send(event).event == event
        instance.send("back")
    last = MANY_EVENTS[-1]
    first = instance.send(last)
    instance.send("back")
    second = instance.send(last)
    assert [t.target for t in first.transitions] == ["m", "z"]
    assert first.event == last
    assert second == first
    assert second is not first


# -- observers of internal events the current state ignores -----------------------------------


class Nudging(StateChart[Any]):
    """A flat chart with an eventless transition: ``go``'s action raises ``nudge``, which
    ``b`` has no transition for, and an undeclared ``ping``."""

    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="push")
    nudge = a.to(a)
    b.to(c, cond="ready")

    def push(self) -> None:
        self.raise_("nudge")
        self.raise_("ping")

    def ready(self) -> bool:
        return bool(getattr(self.model, "ready", False))


def test_c11_observers_see_an_ignored_internal_event_with_the_instance_it_was_raised_on() -> None:
    """An internal event the state reached has no transition for is ignored; observers get
    it with the instance, as they get every other outcome (``observe_outcomes``)."""
    instance = compile_chart(Nudging).create()
    seen: list[tuple[Any, str, str | None]] = []
    with observe_outcomes(lambda who, outcome: seen.append((who, outcome.event, outcome.reason))):
        instance.send("go")
    assert ids(instance) == ["b"]
    ignored = [(who, event, reason) for who, event, reason in seen if event in ("nudge", "ping")]
    assert ignored == [
        (instance, "nudge", "no_transition"),
        (instance, "ping", "unknown_event"),
    ]
    assert all(who is instance for who, _, _ in seen)


# -- the generated source of transitions into one final state ---------------------------------


class TwoWaysOut(StateMachine):
    """Two events from two states, each into the final state ``done``, whose ``enter``
    callback notes whether the machine reads terminated there."""

    a = State(initial=True)
    b = State()
    done = State(final=True)
    go = a.to(b)
    quit = a.to(done)
    finish = b.to(done)

    def on_enter_done(self) -> None:
        self.model.seen.append(self.is_terminated)


class Seen:
    def __init__(self) -> None:
        self.seen: list[bool] = []


def test_c16_transitions_into_one_final_state_share_its_entering_node_in_the_source() -> None:
    """While a top-level final state's ``enter`` callbacks run the instance is not yet
    terminated; the generated code names that moment's node once per final state, however
    many transitions enter it (``chart.source()``)."""
    source = compile_chart(TwoWaysOut).source(Seen)
    functions = {
        block.split("(", 1)[0]: block for block in source.split("def ")[1:] if "(inst" in block
    }
    entering = {
        name: set(re.findall(r"NODE_entering_\w+", body)) for name, body in functions.items()
    }
    assert entering["a__quit"] == entering["b__finish"] == {"NODE_entering_done"}
    assert set().union(*entering.values()) == {"NODE_entering_done"}
    for events in (["quit"], ["go", "finish"]):
        reference_model, model = Seen(), Seen()
        reference, instance = TwoWaysOut(reference_model), compile_chart(TwoWaysOut).create(model)
        for event in events:
            reference.send(event)
            instance.send(event)
        assert model.seen == reference_model.seen == [False]
        assert instance.is_terminated
        assert reference.is_terminated


# -- events a delayed event's callback sends, on a clock shared with another instance ---------

CLOCK_LOG: list[tuple[str, str]] = []


class Ticking(StateMachine):
    """``tick`` (sent with a delay) sends ``after`` and ``later`` (the latter with a
    ``send_id``); each callback logs the instance's label."""

    idle = State(initial=True)
    tick = idle.to(idle, on="ticked")
    after = idle.to(idle, on="logged")
    later = idle.to(idle, on="logged")

    def ticked(self, event: str) -> None:
        CLOCK_LOG.append((self.model.label, event))
        if self.model.sends:
            self.send("after")
            self.send("later", send_id="s")

    def logged(self, event: str) -> None:
        CLOCK_LOG.append((self.model.label, event))


class Labelled:
    def __init__(self, label: str, sends: bool) -> None:
        self.label = label
        self.sends = sends


def test_c17_an_event_a_timer_sends_runs_in_its_wake_up_before_another_instance_s_timer() -> None:
    """Each wake-up of a clock takes one delayed event of an instance, then the events its
    macrostep sent without a delay (before one sent with a ``send_id``, which waits like a
    delayed one): another instance's timer due at the same time runs after them, and the
    event with the ``send_id`` after that timer (the order they were sent)."""
    CLOCK_LOG.clear()
    clock = VirtualClock()
    chart = compile_chart(Ticking)
    first = chart.create(Labelled("first", True), clock=clock)
    second = chart.create(Labelled("second", False), clock=clock)
    first.send("tick", delay=10)
    second.send("tick", delay=10)
    clock.advance(0.01)
    assert CLOCK_LOG == [
        ("first", "tick"),
        ("first", "after"),
        ("second", "tick"),
        ("first", "later"),
    ]


# -- a model type's code, generated once for threads creating instances at once ---------------

#: How many times a model class was asked for its ``prepare_event`` (python-statemachine's
#: hook; the chart compiler asks once when it generates the code for the class).
ASKED: list[str] = []
#: Set by the test while the first thread's generation waits; the second thread then starts.
RELEASE = threading.Event()
ASKING = threading.Event()


class Watched(type):
    """A metaclass reporting the lookups of names its classes lack; the first lookup of
    ``prepare_event`` waits for the test."""

    def __getattr__(cls, name: str) -> Any:
        if name == "prepare_event":
            ASKED.append(threading.current_thread().name)
            if len(ASKED) == 1:
                ASKING.set()
                RELEASE.wait(5)
        raise AttributeError(name)


class Switch(StateMachine):
    off = State(initial=True)
    on = State()
    flip = off.to(on) | on.to(off)


def _inside(thread: threading.Thread, name: str) -> bool:
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if name in frame.f_code.co_name:
            return True
        frame = frame.f_back
    return False


def test_c20_a_model_class_s_code_is_generated_once_for_threads_creating_its_first_instances() -> (
    None
):
    """Two threads create the first instances of a new model class at once: the code for the
    class is generated once (the class is asked for its callbacks once), and both
    instances run."""

    class Model(metaclass=Watched):
        pass

    ASKED.clear()
    RELEASE.clear()
    ASKING.clear()
    chart = compile_chart(Switch)
    made: dict[str, Any] = {}

    def create(label: str) -> None:
        made[label] = chart.create(Model())

    one = threading.Thread(target=create, args=("one",), name="one")
    two = threading.Thread(target=create, args=("two",), name="two")
    one.start()
    try:
        assert ASKING.wait(5)  # the first thread generates the code, and waits
        two.start()
        for _ in range(500):  # until the second one waits for the first one's code
            if _inside(two, "binding_for_type"):
                break
            threading.Event().wait(0.002)
    finally:
        RELEASE.set()
        one.join(5)
    two.join(5)
    assert ASKED == ["one"]
    for label in ("one", "two"):
        instance = made[label]
        assert instance.send("flip").applied
        assert ids(instance) == ["on"]


# -- a model instance holding a callback the compiled runtime cannot run from there ---------


class Plain:
    """A model whose instances may be given callbacks of their own."""


@pytest.mark.parametrize("name", ["prepare_event", "on_invoke_state", "on_invoke_on"])
def test_c9_a_refused_callback_set_on_the_model_instance_is_refused_naming_it(name: str) -> None:
    """``prepare_event`` or an ``on_invoke_*`` callback the model instance holds itself
    (python-statemachine would run it) is refused when the instance is created, the message
    naming the construct, where it is and what to do instead."""
    model = Plain()
    setattr(model, name, lambda *args, **kwargs: {})
    with pytest.raises(UnsupportedChart) as raised:
        compile_chart(Switch).create(model)
    assert str(raised.value) == (
        "Switch: a callback the model instance holds itself is not supported by the compiled "
        f"runtime (Plain.{name}, set on the instance, when it is created); define it on the "
        "model's class"
    )
    assert compile_chart(Switch).create(Plain()).send("flip").applied
