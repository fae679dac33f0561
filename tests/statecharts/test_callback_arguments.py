"""What callbacks receive, checked value by value against python-statemachine: the
``transition``, ``event_data`` (its event, machine, state, source, target, transition, args and
kwargs), guards that are attributes or properties of the chart or the model, positional-only
and dynamic callables, wildcard and prefix events' outcomes, and queued events that find no
transition.

Rules checked here (docs/spec.md): C4, C5, C8, C11.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import Outcome, compile_chart, observe_outcomes


def seen_by(event_data: Any, transition: Any, state: Any, machine: Any) -> tuple[Any, ...]:
    """What a callback received, as plain values comparable across the engines."""

    def sid(value: Any) -> Any:
        return None if value is None else value.id

    return (
        str(event_data.event),
        sid(event_data.state),
        sid(event_data.source),
        sid(event_data.target),
        (sid(event_data.transition.source), sid(event_data.transition.target)),
        (sid(transition.source), sid(transition.target), str(transition.event)),
        sid(state),
        event_data.args,
        dict(event_data.trigger_data.kwargs),
        event_data.extended_kwargs["model"] is machine.model,
        event_data.machine is machine,
        event_data.trigger_data.model is machine.model,
    )


class Seen:
    def __init__(self) -> None:
        self.log: list[Any] = []


class Flat(StateChart[Seen]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="check", before="get_ready", on="act", after="finish")
    back = b.to(a)

    def check(self, event_data: Any, transition: Any, state: Any) -> bool:
        self.model.log.append(("check", seen_by(event_data, transition, state, self)))
        return True

    def get_ready(self, event_data: Any, transition: Any, state: Any) -> None:
        self.model.log.append(("before", seen_by(event_data, transition, state, self)))

    def act(self, event_data: Any, transition: Any, state: Any) -> None:
        self.model.log.append(("on", seen_by(event_data, transition, state, self)))

    def finish(self, event_data: Any, transition: Any, state: Any) -> None:
        self.model.log.append(("after", seen_by(event_data, transition, state, self)))

    def on_exit_a(self, event_data: Any, transition: Any, state: Any) -> None:
        self.model.log.append(("exit a", seen_by(event_data, transition, state, self)))

    def on_enter_b(self, event_data: Any, transition: Any, state: Any) -> None:
        self.model.log.append(("enter b", seen_by(event_data, transition, state, self)))


class Nested(StateChart[Seen]):
    class outer(State.Compound):
        inner = State(initial=True)
        other = State()
        hop = inner.to(other, on="act")

    done = State(final=True)
    leave = outer.to(done, on="act")

    def act(self, event_data: Any, transition: Any, state: Any) -> None:
        self.model.log.append(("on", seen_by(event_data, transition, state, self)))

    def on_exit_state(self, event_data: Any, transition: Any, state: Any) -> None:
        self.model.log.append(("exit", seen_by(event_data, transition, state, self)))

    def on_enter_state(self, event_data: Any, transition: Any, state: Any) -> None:
        self.model.log.append(("enter", seen_by(event_data, transition, state, self)))


def test_event_data_has_no_attribute_python_statemachines_lacks() -> None:
    class Reader(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="read")

        def read(self, event_data: Any) -> None:
            event_data.kwargs  # noqa: B018 - python-statemachine's EventData has none

    for machine in (Reader(), compile_chart(Reader).create()):
        with pytest.raises(AttributeError, match="kwargs"):
            machine.send("go", x=1)


@pytest.mark.parametrize(
    ("chart", "events"),
    [(Flat, ["go", "back", "go"]), (Nested, ["hop", "leave"])],
)
def test_transition_and_event_data_are_what_python_statemachine_passes(
    chart: type[StateChart[Seen]], events: list[str]
) -> None:
    reference = chart(Seen())
    instance = compile_chart(chart).create(Seen())
    assert instance.model.log == reference.model.log
    for number, event in enumerate(events):
        reference.send(event, number, extra=event)
        instance.send(event, number, extra=event)
        assert instance.model.log == reference.model.log
    assert len(instance.model.log) > 2 * len(events)


class Flags:
    """A model whose guards are plain attributes and properties."""

    allowed = True

    def __init__(self) -> None:
        self.level = 3

    @property
    def high(self) -> bool:
        return self.level > 2


class Guarded(StateChart[Flags]):
    enabled = False
    a = State(initial=True)
    b = State()
    c = State()
    d = State(final=True)

    up = a.to(b, cond="enabled") | a.to(c, cond="allowed and high")
    down = c.to(a, cond="is_open") | b.to(a)
    end = c.to(d, cond=["open_prop", "high"])

    @property
    def is_open(self) -> bool:
        return self.model.level < 3

    open_prop = property(lambda self: self.model.level >= 0)


@pytest.mark.parametrize("level", [0, 3, 5])
def test_attribute_and_property_guards_read_as_python_statemachine_reads_them(level: int) -> None:
    reference, reference_model = None, Flags()
    compiled_model = Flags()
    reference = Guarded(reference_model)
    instance = compile_chart(Guarded).create(compiled_model)
    for model in (reference_model, compiled_model):
        model.level = level
    for event in ("up", "down", "up", "end"):
        reference.send(event)
        instance.send(event)
        assert [s.id for s in instance.configuration] == [s.id for s in reference.configuration]
    expected = {0: "a", 3: "d", 5: "d"}[level]
    assert instance.state.id == expected


def test_a_class_attribute_guard_is_read_when_the_event_runs() -> None:
    chart = compile_chart(Guarded)
    model = Flags()
    instance = chart.create(model)
    type(model).allowed = False
    try:
        assert instance.send("up").reason == "guards_rejected"
    finally:
        type(model).allowed = True
    assert instance.send("up").target.id == "c"  # type: ignore[union-attr]


def scale(factor: int, value: int, /) -> int:
    return factor * value


class Callables(StateChart[Seen]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=["positional_only", functools.partial(scale, 10), "dynamic"])

    def positional_only(self, value: int, /) -> None:
        self.model.log.append(("positional_only", value))


class DynamicSeen(Seen):
    def __init__(self) -> None:
        super().__init__()
        self.dynamic = lambda value=None, **kw: self.log.append(("dynamic", value))


def test_positional_only_partial_and_dynamic_callables_get_what_python_statemachine_gives() -> (
    None
):
    reference = Callables(DynamicSeen())
    instance = compile_chart(Callables).create(DynamicSeen())
    reference.send("go", 4)
    outcome = instance.send("go", 4)
    assert outcome.applied
    assert (
        instance.model.log
        == reference.model.log
        == [
            ("positional_only", 4),
            ("dynamic", 4),
        ]
    )


class Wild(StateChart):
    idle = State(initial=True)
    alarmed = State()
    logged = State()
    failed = State(final=True)

    alarm = idle.to(alarmed, event="error.*")
    note = alarmed.to(logged, event="*")
    fail = logged.to(failed, event="error.network")


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        (["error.disk"], [("error.disk", "idle:error.*|alarm:alarmed", "alarmed")]),
        (
            ["error.disk", "anything.at.all", "error.network.timeout"],
            [
                ("error.disk", "idle:error.*|alarm:alarmed", "alarmed"),
                ("anything.at.all", "alarmed:*|note:logged", "logged"),
                ("error.network.timeout", "logged:error.network|fail:failed", "failed"),
            ],
        ),
        (["errors"], [("errors", None, None)]),
    ],
)
def test_wildcard_and_prefix_events_report_the_transition_they_took(
    events: list[str], expected: list[tuple[str, str | None, str | None]]
) -> None:
    reference = Wild()
    instance = compile_chart(Wild).create()
    outcomes: list[Outcome] = []
    for event in events:
        reference.send(event)
        outcomes.append(instance.send(event))
        assert instance.state.id == reference.current_state_value
    assert [
        (o.event, o.transition.id if o.transition else None, o.target.id if o.target else None)
        for o in outcomes
    ] == expected
    assert outcomes[-1].applied == (expected[-1][1] is not None)


class Relay(StateChart):
    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="forward")
    finish = b.to(c)

    def forward(self) -> None:
        self.send("jump")  # nothing handles it anywhere
        self.send("go")  # declared, but no transition from b
        self.send("finish")


def test_queued_events_without_a_transition_are_reported_and_skipped() -> None:
    seen: list[tuple[str, bool, str | None]] = []
    reference = Relay()
    instance = compile_chart(Relay).create()
    with observe_outcomes(lambda _, o: seen.append((o.event, o.applied, o.reason))):
        outcome = instance.send("go")
    reference.send("go")
    assert outcome.applied
    assert instance.state.id == reference.current_state_value == "c"
    assert seen == [
        ("jump", False, "queued"),
        ("go", False, "queued"),
        ("finish", False, "queued"),
        ("go", True, None),
        ("jump", False, "unknown_event"),
        ("go", False, "no_transition"),
        ("finish", True, None),
    ]


def test_a_positional_payload_reaches_the_callbacks_of_a_statechart() -> None:
    calls: list[Any] = []

    class Deep(StateChart):
        catch_errors_as_events = False

        class outer(State.Compound):
            inner = State(initial=True)
            other = State()
            hop = inner.to(other, cond="small", on="act")

        def small(self, x: int) -> bool:
            return x < 10

        def act(self, x: int, *rest: Any) -> None:
            calls.append((x, rest))

    for machine in (Deep(), compile_chart(Deep).create()):
        calls.clear()
        machine.send("hop", 50, "x")
        machine.send("hop", 5, "y")
        assert calls == [(5, ("y",))]
        assert [s.id for s in machine.configuration] == ["outer", "other"]


class SendIds(StateChart[Seen]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act")
    back = b.to(a)

    def act(self, event_data: Any) -> None:
        self.model.log.append(("trigger", event_data.trigger_data.send_id))
        self.model.log.append(("has send_id", hasattr(event_data, "send_id")))
        self.model.log.append(("event_data", event_data.send_id))  # fails on both engines


def test_event_data_has_no_send_id_of_its_own_and_its_trigger_data_has_the_events() -> None:
    """python-statemachine's ``EventData`` has no ``send_id`` (its ``TriggerData`` has, the
    one the event was sent with): a callback reading ``event_data.send_id`` fails there, and
    its error becomes ``error.execution``; the compiled run answers alike, where it read
    ``None`` before, and its ``trigger_data.send_id`` was ``None`` too."""
    logs = []
    for machine in (SendIds(Seen()), compile_chart(SendIds).create(Seen())):
        machine.send("go", send_id="first")
        logs.append(machine.model.log)
    assert logs[0] == [("trigger", "first"), ("has send_id", False)]  # the third: never
    assert logs[1] == logs[0]
