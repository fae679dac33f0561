"""Breaks found by an independent review of issue 10 (round 6). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C6 (refuse, never approximate; a refusal names the chart,
# the callback and the construct), C17 (timers in due order, then sending order), D2 (Mermaid
# text that renders).

from __future__ import annotations

import asyncio
import functools
import re
import time
from typing import Any

from statemachine import State, StateChart

from statecharts import AsyncioClock, UnsupportedChart, VirtualClock, compile_chart, to_mermaid


class Retry(StateChart[None]):
    """A retry budget kept as python-statemachine users keep one: a class-level default the
    callbacks update on the machine."""

    attempts = 0
    trying = State(initial=True)
    failed = State(final=True)
    fail = trying.to(failed, cond="exhausted") | trying.to(trying, on="count")

    def count(self) -> None:
        self.attempts += 1

    def exhausted(self) -> bool:
        return self.attempts >= 2


def test_C6_a_callback_setting_a_class_level_default_on_self_is_not_dropped_silently() -> None:
    """A chart declares `attempts = 0` and an action does `self.attempts += 1`: python-
    statemachine sets it on the machine and the third `fail` reaches `failed`; compiled, the
    store raises `AttributeError`, `error.execution` swallows it, `attempts` stays 0 and the
    chart stays in `trying` forever, with no refusal."""
    reference = Retry()
    for _ in range(3):
        reference.send("fail")
    assert [state.id for state in reference.configuration] == ["failed"]
    try:
        chart = compile_chart(Retry)
    except UnsupportedChart as refusal:
        message = str(refusal)
        assert "Retry" in message
        assert "attempts" in message
        return
    instance = chart.create()
    for _ in range(3):
        instance.send("fail")
    assert [state.id for state in instance.configuration] == ["failed"]


class Log:
    def __init__(self) -> None:
        self.log: list[str] = []


class FanOut(StateChart[Log]):
    """An action sends `x`, then `y` with a negative delay (due in the past)."""

    idle = State(initial=True)
    start = idle.to(idle, internal=True, on="fan_out")
    x = idle.to(idle, internal=True, on="log_x")
    y = idle.to(idle, internal=True, on="log_y")

    def fan_out(self) -> None:
        self.send("x")
        self.send("y", delay=-100)

    def log_x(self) -> None:
        self.model.log.append("x")

    def log_y(self) -> None:
        self.model.log.append("y")


def test_C17_a_negative_delay_runs_ahead_of_an_event_sent_before_it() -> None:
    """An action sends `x`, then `y` with `delay=-100`: C17 says a negative delay is due in the
    past and runs ahead of events due later, and python-statemachine runs `y` then `x`; the
    compiled instance runs `x` first (an event sent while no timer waits jumps the queue), on a
    VirtualClock and without a clock alike."""
    model = Log()
    FanOut(model).send("start")
    assert model.log == ["y", "x"]
    chart = compile_chart(FanOut)
    plain = Log()
    chart.create(plain).send("start")
    clock = VirtualClock()
    virtual = Log()
    chart.create(virtual, clock=clock).send("start")
    clock.run_until_idle()
    assert (plain.log, virtual.log) == (["y", "x"], ["y", "x"])


class Memo(StateChart[None]):
    draft = State(initial=True)
    note = State()
    scale = State()
    done = State(final=True)
    annotate = draft.to(note)
    resize = note.to(scale)
    finish = scale.to(done)


#: Words Mermaid's stateDiagram lexer (stateDiagram.jison) reads as keywords before it reads
#: an ID, case-insensitively, when followed by whitespace: `"note"\s+` opens a note,
#: `"scale"\s+`, `"state"\s+`, `"class"\s+`, `"classDef"\s+` their statements.
MERMAID_KEYWORDS = {"note", "scale", "state", "class", "classdef"}


def test_D2_mermaid_never_writes_a_state_id_mermaid_reads_as_a_keyword() -> None:
    """A chart with ordinary states `note` and `scale` is drawn as Mermaid: `_mid` keeps a plain
    name as is, so `draft --> note : annotate` is written, where Mermaid's lexer reads `note `
    as the start of a note (`"note"\\s+` comes before its ID rule) and the diagram fails to
    parse; the id needs the same mangling other unsafe ids get."""
    text = to_mermaid(compile_chart(Memo))
    tokens = []
    for line in text.splitlines():
        edge = re.match(r"\s*(\S+) --> (\S+)", line)
        if edge:
            tokens += [edge.group(1), edge.group(2)]
    assert "[*]" in tokens
    assert [token for token in tokens if token.lower() in MERMAID_KEYWORDS] == []


class Base(StateChart[Log]):
    """A base chart of shared behaviour (no states of its own)."""

    def on_enter_b(self) -> None:
        self.model.log.append("base")


class Child(Base):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b)

    def on_enter_b(self) -> None:
        Base.on_enter_b(self)
        self.model.log.append("child")


def test_C6_calling_the_base_chart_explicitly_as_the_super_refusal_advises_compiles() -> None:
    """Zero-argument `super()` is refused with the advice "call the base class explicitly";
    doing exactly that, `Base.on_enter_b(self)` with `Base` the user's base chart, is refused
    too ("a callable the compiler cannot name statically"), though the scan reads a plain
    class's functions the same way and python-statemachine runs it."""
    model = Log()
    Child(model).send("go")
    assert model.log == ["base", "child"]
    compiled = Log()
    compile_chart(Child).create(compiled).send("go")
    assert compiled.log == ["base", "child"]


class Pinger(StateChart[Log]):
    idle = State(initial=True)
    ping = idle.to(idle, internal=True, on="record")

    def record(self, tag: str) -> None:
        self.model.log.append(tag)


def test_C17_timers_of_two_instances_due_together_run_in_sending_order() -> None:
    """Two instances share a `VirtualClock`; `p1` (instance a), `q` (b) and `p3` (a) are sent in
    that order, each for 400 ms. The clock promises timers due at the same nanosecond run in
    the order they were sent, across instances: `p1, q, p3`; it wakes `a` once, which runs both
    its timers, and gives `p1, p3, q`."""
    log = Log()
    clock = VirtualClock()
    chart = compile_chart(Pinger)
    first, second = chart.create(log, clock=clock), chart.create(log, clock=clock)
    first.send("ping", tag="p1", delay=400)
    second.send("ping", tag="q", delay=400)
    first.send("ping", tag="p3", delay=400)
    clock.advance(1)
    assert log.log == ["p1", "q", "p3"]


def test_C17_a_late_asyncio_loop_runs_the_timers_of_two_instances_in_due_order() -> None:
    """On an `AsyncioClock`, instance a sends `p1` (20 ms) and `p3` (60 ms), instance b `q`
    (40 ms); the loop is busy for 100 ms, then runs the timers. The clock says it keeps the
    wake-ups in the order they fall due (`p1, q, p3`); `a`'s wake-up runs all of `a`'s due
    timers first, and `q`, due 20 ms before `p3`, runs after it."""
    log = Log()
    chart = compile_chart(Pinger)

    async def scenario() -> None:
        clock = AsyncioClock()
        first, second = chart.create(log, clock=clock), chart.create(log, clock=clock)
        first.send("ping", tag="p1", delay=20)
        second.send("ping", tag="q", delay=40)
        first.send("ping", tag="p3", delay=60)
        time.sleep(0.1)  # the loop is busy with other work
        await clock.until_idle(first, second)

    asyncio.run(scenario())
    assert log.log == ["p1", "q", "p3"]


class Ready:
    ready = True


class CachedReady(StateChart[Ready]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="ready") | a.to(c)

    @functools.cached_property
    def ready(self) -> bool:
        return bool(self.model.ready)


def test_C6_a_cached_property_guard_is_run_or_refused_not_counted_false() -> None:
    """A guard is a `functools.cached_property` reading only the model: python-statemachine
    goes to `b`; the compiled instance has no `__dict__` to cache it in, the read raises
    `TypeError`, the guard counts as false and the run silently ends in `c` (a chart without
    errors-as-events raises it instead); the compiler neither refuses nor supports it."""
    reference = CachedReady(Ready())
    reference.send("go")
    assert [state.id for state in reference.configuration] == ["b"]
    try:
        chart = compile_chart(CachedReady)
    except UnsupportedChart as refusal:
        message = str(refusal)
        assert "CachedReady" in message
        assert "ready" in message
        return
    instance = chart.create(Ready())
    instance.send("go")
    assert [state.id for state in instance.configuration] == ["b"]


class Level:
    def __init__(self) -> None:
        self.level = 0
        self.log: list[str] = []


class Leveled(StateChart[Level]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="bump")

    @property
    def level(self) -> int:
        return int(self.model.level)

    @level.setter
    def level(self, value: int) -> None:
        self.model.log.append(type(self).__name__)
        self.model.level = value

    def bump(self) -> None:
        self.level = 5


def test_C6_a_property_setter_is_scanned_like_its_getter() -> None:
    """A chart property's setter logs `type(self).__name__` (the getter is scanned, the setter
    and deleter never are): python-statemachine logs `Leveled`, the compiled chart is not
    refused and logs another class's name."""
    model = Level()
    Leveled(model).send("go")
    assert model.log == ["Leveled"]
    try:
        chart = compile_chart(Leveled)
    except UnsupportedChart as refusal:
        message = str(refusal)
        assert "Leveled" in message
        return
    compiled = Level()
    chart.create(compiled).send("go")
    assert compiled.log == ["Leveled"]


class Inspector:
    """A model whose guard reads python-statemachine's machine API."""

    def in_a(self, machine: Any) -> bool:
        return bool(machine.current_state.id == "a")


class ModelGuarded(StateChart[Inspector]):
    a = State(initial=True)
    b = State(final=True)
    c = State(final=True)
    go = a.to(b, cond="in_a") | a.to(c)


def test_C6_a_run_time_refusal_names_the_callback_that_reached_the_machine_api() -> None:
    """The model's guard `in_a(machine)` reads `machine.current_state`: the run raises
    `UnsupportedChart` "a callback reads machine.current_state at run time", naming neither
    the callback (`in_a`) nor the event or state, so a user with many model methods cannot
    tell which one to fix (C6: a refusal names the construct and where it is used)."""
    instance = compile_chart(ModelGuarded).create(Inspector())
    try:
        instance.send("go")
    except UnsupportedChart as refusal:
        message = str(refusal)
    else:
        message = ""
    assert "current_state" in message
    assert "in_a" in message


class FlatHabit:
    """A model guard written against the compiled instance's `state`."""

    def is_open(self, machine: Any) -> bool:
        return bool(machine.state.id == "open")


class Door(StateChart[FlatHabit]):
    open = State(initial=True)
    closed = State(final=True)
    ajar = State(final=True)
    close = open.to(closed, cond="is_open") | open.to(ajar)


def test_C6_a_model_guard_reading_a_name_only_the_compiled_instance_has_is_not_answered() -> None:
    """The model's guard reads `machine.state`: python-statemachine's machine has no `state`,
    the `AttributeError` becomes error.execution and the guard is false (`ajar`); compiled,
    the instance's own `state` answers and the run silently ends in `closed` (C6 refuses this
    read in a chart method, and the run-time check covers only python-statemachine's names)."""
    reference = Door(FlatHabit())
    reference.send("close")
    assert [state.id for state in reference.configuration] == ["ajar"]
    instance = compile_chart(Door).create(FlatHabit())
    try:
        instance.send("close")
    except UnsupportedChart:
        return
    assert [state.id for state in instance.configuration] == ["ajar"]
