"""Instance snapshots: taken between events, restored through JSON, an instance continues as
if nothing happened; a damaged or foreign snapshot is refused, naming the field.

Rules checked here (docs/spec.md): C19.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from statemachine import HistoryState, State, StateChart, StateMachine

from statecharts import InstanceSnapshotError, VirtualClock, compile_chart
from statecharts._snapshot import structure

from .charts import DIFFERENTIAL, HIERARCHICAL, VARIANTS, Order, Player, Recorder, Wizard

#: Statecharts with history, the same with other flags, a chart with a custom __init__
#: (fields in the snapshot) and flat charts (strict, raising, relaying events, failing).
CONTINUED = {
    **HIERARCHICAL,
    **VARIANTS,
    **{
        name: DIFFERENTIAL[name]
        for name in ("tally", "strict", "relay-caught", "fallible", "shop-caught", "gate")
    },
}


def ids(states: Any) -> list[str]:
    return [state.id for state in states]


def through_json(snapshot: dict[str, Any]) -> Any:
    return json.loads(json.dumps(snapshot))


def test_a_snapshot_is_plain_json_with_configuration_and_history() -> None:
    chart = compile_chart(Wizard)
    wizard = chart.create(Recorder())
    for event in ("start", "next_field", "pause"):
        wizard.send(event)
    snapshot = wizard.snapshot()
    assert snapshot == through_json(snapshot)
    assert snapshot == {
        "format": "statecharts.instance",
        "version": 2,
        "chart": "tests.statecharts.charts.Wizard",
        "structure": structure(compile_chart(Wizard)),
        "configuration": ["paused"],
        "history": {"deep": ["basics", "email"], "shallow": ["basics"]},
        "queued": {"internal": [], "external": []},
        "timers": [],
        "fields": {},
    }


def test_a_restored_instance_resumes_its_history() -> None:
    chart = compile_chart(Wizard)
    wizard = chart.create(Recorder())
    for event in ("start", "next_field", "pause"):
        wizard.send(event)
    model = Recorder()
    restored = chart.restore(through_json(wizard.snapshot()), model)
    assert ids(restored.configuration) == ["paused"]
    assert model.log == []  # restoring runs no callback
    assert restored.send("restore").applied
    assert ids(restored.configuration) == ["steps", "basics", "email"]
    assert restored.model is model


def test_a_restored_parallel_configuration_keeps_both_regions() -> None:
    chart = compile_chart(Player)
    player = chart.create(Recorder())
    player.send("play")
    player.send("toggle")
    restored = chart.restore(through_json(player.snapshot()), Recorder())
    assert ids(restored.configuration) == ids(player.configuration)
    assert restored.send("fade").transitions == player.send("fade").transitions


def _made(steps: int, guard: str = "ready") -> type[StateChart]:
    """A chart made by a function: every chart it makes is ``_made.<locals>.Local``."""
    if steps == 1:

        class Local(StateChart):
            a = State(initial=True)
            b = State(final=True)
            go = a.to(b)

        return Local

    class Local(StateChart):  # type: ignore[no-redef]
        a = State(initial=True)
        b = State()
        c = State(final=True)
        go = a.to(b, cond=guard)
        finish = b.to(c)

        def ready(self) -> bool:
            return True

        def steady(self) -> bool:
            return True

    return Local


def test_a_snapshot_names_the_structure_of_the_chart_it_pictures() -> None:
    """Two charts of one name (``module.qualname``) and of other states or transitions are
    told apart: a snapshot of one is refused by the other, naming ``structure``."""
    two_steps, one_step = compile_chart(_made(2)), compile_chart(_made(1))
    assert two_steps.qualname == one_step.qualname
    assert structure(two_steps) != structure(one_step)
    instance = two_steps.create()
    instance.send("go")
    snapshot = through_json(instance.snapshot())
    assert snapshot["structure"] == structure(two_steps)
    with pytest.raises(InstanceSnapshotError) as caught:
        one_step.restore(snapshot)
    assert caught.value.field == "structure"
    assert "of another chart named" in caught.value.reason
    assert two_steps.restore(snapshot).send("finish").applied


def test_a_chart_declared_again_alike_restores_the_snapshot() -> None:
    """The structure is the chart's states and transitions, not the class object: a chart
    declared alike (in another process, or by the same factory) restores the snapshot; what
    callbacks are named or do is not part of it."""
    first, again = compile_chart(_made(2)), compile_chart(_made(2, guard="steady"))
    assert first.declared is not again.declared
    assert structure(first) == structure(again)
    instance = first.create()
    instance.send("go")
    restored = again.restore(through_json(instance.snapshot()))
    assert [state.id for state in restored.configuration] == ["b"]
    assert restored.send("finish").applied


def test_a_version_1_snapshot_restores_checked_by_the_charts_name_only() -> None:
    """Snapshots taken before the structure was kept (version 1, no ``structure``) restore
    as they did: checked against the chart's ``module.qualname``, not its structure."""
    chart = compile_chart(Wizard)
    old = _wizard_snapshot()
    del old["structure"]
    old["version"] = 1
    restored = chart.restore(through_json(old), Recorder())
    assert [state.id for state in restored.configuration] == ["paused"]
    assert restored.snapshot()["version"] == 2


def test_a_flat_chart_snapshot_restores_its_state() -> None:
    class Light(StateChart):
        green = State(initial=True)
        red = State(final=True)
        stop = green.to(red)

    chart = compile_chart(Light)
    snapshot = chart.create().snapshot()
    assert snapshot["configuration"] == ["green"]
    restored = chart.restore(snapshot)
    assert restored.state.id == "green"
    restored.send("stop")
    assert chart.restore(restored.snapshot()).is_terminated


def test_a_snapshot_cannot_be_taken_from_inside_a_callback() -> None:
    """A callback reaching the instance (here a model method; a chart method reading
    ``self.snapshot`` is refused at compile time, python-statemachine's machine has none)."""

    class Holder:
        instance: Any = None

        def take(self) -> None:
            self.instance.snapshot()

    class Selfie(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="take")

    holder = Holder()
    instance = holder.instance = compile_chart(Selfie).create(holder)
    with pytest.raises(InstanceSnapshotError, match="running an event") as caught:
        instance.send("go")
    assert caught.value.field == "instance"


class Feed(StateChart):
    catch_errors_as_events = False

    a = State(initial=True)
    b = State()
    c = State()

    fan = a.to(b, on="fan_out")
    check = b.to(c, cond="explode")
    step = b.to(c) | c.to(a)

    def fan_out(self, payload: Any = None) -> None:
        self.send("check")
        self.send("step", payload=payload)

    def explode(self) -> bool:
        raise ValueError("guard")


def test_events_left_queued_by_a_failure_are_kept_and_run_after_restore() -> None:
    chart = compile_chart(Feed)
    instance = chart.create()
    with pytest.raises(ValueError, match="guard"):
        instance.send("fan", payload=[1, {"x": None}])
    snapshot = instance.snapshot()
    assert snapshot["queued"]["external"] == [
        {"event": "step", "args": [], "kwargs": {"payload": [1, {"x": None}]}}
    ]
    restored = chart.restore(through_json(snapshot))
    assert restored.send("step") == instance.send("step")
    assert restored.state.id == instance.state.id == "a"


def test_a_payload_json_cannot_keep_is_refused_when_the_snapshot_is_taken() -> None:
    instance = compile_chart(Feed).create()
    with pytest.raises(ValueError, match="guard"):
        instance.send("fan", payload=(1, 2))
    with pytest.raises(InstanceSnapshotError) as caught:
        instance.snapshot()
    assert caught.value.field == "queued.external[0].kwargs"
    assert "tuple" in caught.value.reason
    with pytest.raises(ValueError, match="guard"):
        compile_chart(Feed).create().send("fan", payload=object())
    instance = compile_chart(Feed).create()
    with pytest.raises(ValueError, match="guard"):
        instance.send("fan", payload={1: "one"})
    with pytest.raises(InstanceSnapshotError, match="non-string key"):
        instance.snapshot()


def _wizard_snapshot() -> dict[str, Any]:
    wizard = compile_chart(Wizard).create(Recorder())
    for event in ("start", "next_field", "pause"):
        wizard.send(event)
    return wizard.snapshot()


def _damaged(change: Any) -> Any:
    snapshot = _wizard_snapshot()
    if callable(change):
        change(snapshot)  # changes it in place
        return snapshot
    return change


def _queued(**extra: Any) -> dict[str, Any]:
    """A queued event's picture (with ``extra`` keys)."""
    return {"event": "next_field", "args": [], "kwargs": {}, **extra}


def _sent(**changes: Any) -> dict[str, Any]:
    """A ``sent`` picture: how an event was sent (with ``changes``)."""
    return {"send_id": None, "delay": None, "internal": False, **changes}


def _timer(**changes: Any) -> dict[str, Any]:
    """A well-formed pictured timer, with ``changes``."""
    timer = {"event": "next_field", "args": [], "kwargs": {}, "send_id": None, "due_in_ms": 5}
    return timer | changes


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ([], "snapshot", "must be a JSON object, got list"),
        (lambda s: s.pop("history"), "history", "missing"),
        (lambda s: s.update(extra=1), "extra", "unknown field"),
        (lambda s: s.update(format="toolcalls.tracker"), "format", "is not"),
        (lambda s: s.update(version=3), "version", "3 is not a version"),
        (lambda s: s.pop("structure"), "structure", "missing"),
        (lambda s: s.update(structure=7), "structure", "of another chart"),
        (lambda s: s.update(structure="0" * 16), "structure", "of another chart"),
        (lambda s: s.update(version=1), "structure", "unknown field (a version 1 snapshot"),
        (lambda s: s.update(version="1"), "version", "positive integer"),
        (lambda s: s.update(chart="shop.Order"), "chart", "of 'shop.Order', not of"),
        (lambda s: s.update(configuration="paused"), "configuration", "list of state ids"),
        (lambda s: s.update(configuration=["nowhere"]), "configuration[0]", "not a state"),
        (lambda s: s.update(configuration=[3]), "configuration[0]", "must be a state id"),
        (
            lambda s: s.update(configuration=["paused", "paused"]),
            "configuration[1]",
            "listed twice",
        ),
        (
            lambda s: s.update(configuration=["paused", "steps", "extras"]),
            "configuration",
            "both active",
        ),
        (
            lambda s: s.update(configuration=["paused", "email"]),
            "configuration",
            "'steps' and 'paused' are both active (or hold active states)",
        ),
        (
            lambda s: s.update(configuration=["steps", "deep"]),
            "configuration[1]",
            "history pseudo-state",
        ),
        (lambda s: s.update(history=[]), "history", "must be an object"),
        (lambda s: s["history"].update(nope=["basics"]), "history.nope", "not a history state"),
        (lambda s: s["history"].update(paused=["paused"]), "history.paused", "not a history"),
        (
            lambda s: s["history"].update(shallow=["email"]),
            "history.shallow[0]",
            "not a child of 'steps'",
        ),
        (
            lambda s: s["history"].update(shallow=["basics", "extras"]),
            "history.shallow",
            "both active",
        ),
        (
            lambda s: s["history"].update(deep=["name", "email"]),
            "history.deep",
            "'name' and 'email' are both active",
        ),
        (
            lambda s: s["history"].update(deep=["paused"]),
            "history.deep[0]",
            "'paused' is not inside 'steps'",
        ),
        (lambda s: s.update(queued=[]), "queued", "'internal' and 'external'"),
        (lambda s: s["queued"].update(external=[1]), "queued.external[0]", "'event', 'args'"),
        (
            lambda s: s["queued"].update(internal=[{"event": "", "args": [], "kwargs": {}}]),
            "queued.internal[0].event",
            "non-empty string",
        ),
        (
            lambda s: s["queued"].update(internal=[{"event": "x", "args": {}, "kwargs": {}}]),
            "queued.internal[0].args",
            "must be a list",
        ),
        (
            lambda s: s["queued"].update(internal=[{"event": "x", "args": [], "kwargs": []}]),
            "queued.internal[0].kwargs",
            "must be an object",
        ),
        (lambda s: s["queued"].update(external={}), "queued.external", "must be a list"),
        (lambda s: s.update(timers={}), "timers", "must be a list"),
        (lambda s: s.update(timers=[{"event": "x"}]), "timers[0]", "must be an object with"),
        (lambda s: s.update(timers=[_timer(event=3)]), "timers[0].event", "non-empty string"),
        (lambda s: s.update(timers=[_timer(args={})]), "timers[0].args", "must be a list"),
        (lambda s: s.update(timers=[_timer(kwargs=[])]), "timers[0].kwargs", "must be an object"),
        (
            lambda s: s.update(timers=[_timer(send_id={"a": (1,)})]),
            "timers[0].send_id",
            "does not come back equal",
        ),
        (lambda s: s.update(timers=[_timer(due_in_ms="5")]), "timers[0].due_in_ms", "finite"),
        (lambda s: s.update(timers=[_timer(due_in_ms=True)]), "timers[0].due_in_ms", "finite"),
        (
            lambda s: s.update(timers=[_timer(due_in_ms=float("inf"))]),
            "timers[0].due_in_ms",
            "finite",
        ),
        (
            lambda s: s.update(timers=[_timer(due_in_ms=20), _timer(due_in_ms=10)]),
            "timers[1].due_in_ms",
            "listed in the order they run",
        ),
        (lambda s: s.update(timers=[_timer()]), "timers", "takes the clock they wait on"),
        (
            lambda s: s["queued"].update(internal=[_queued(sent={"send_id": "a"})]),
            "queued.internal[0].sent",
            "'send_id', 'delay', 'internal'",
        ),
        (
            lambda s: s["queued"].update(internal=[_queued(sent=_sent(delay="5"))]),
            "queued.internal[0].sent.delay",
            "null or a finite number",
        ),
        (
            lambda s: s["queued"].update(external=[_queued(sent=_sent(delay=True))]),
            "queued.external[0].sent.delay",
            "null or a finite number",
        ),
        (
            lambda s: s["queued"].update(internal=[_queued(sent=_sent(internal=1))]),
            "queued.internal[0].sent.internal",
            "true or false",
        ),
        (
            lambda s: s["queued"].update(internal=[_queued(sent=_sent(send_id=(1,)))]),
            "queued.internal[0].sent.send_id",
            "does not come back equal",
        ),
        (
            lambda s: s.update(timers=[{**_timer(), "sent": _sent(delay=float("nan"))}]),
            "timers[0].sent.delay",
            "null or a finite number",
        ),
        (
            lambda s: s["queued"].update(internal=[_queued(extra=1)]),
            "queued.internal[0]",
            "'event', 'args' and 'kwargs' (and 'sent')",
        ),
        (lambda s: s.update(fields=[]), "fields", "must be an object"),
        (lambda s: s["fields"].update(x=1), "fields.x", "keeps no field"),
    ],
)
def test_a_damaged_or_foreign_snapshot_is_refused_naming_the_field(
    change: Any, field: str, reason: str
) -> None:
    chart = compile_chart(Wizard)
    model = Recorder()
    with pytest.raises(InstanceSnapshotError) as caught:
        chart.restore(_damaged(change), model)
    assert caught.value.field == field
    assert reason in caught.value.reason
    assert str(caught.value) == f"invalid snapshot: {field}: {caught.value.reason}"
    assert model.log == []


def test_part_of_a_configuration_python_statemachine_can_reach_is_restored() -> None:
    class Split(StateMachine):
        class p(State.Parallel):
            class r1(State.Compound):
                a = State(initial=True)
                b = State()
                go = a.to(b)

            class r2(State.Compound):
                x = State(initial=True)
                y = State()
                go2 = x.to(y)

        stay = p.to.itself(internal=True)

    # python-statemachine (a StateMachine) leaves the parallel state and its regions here
    chart = compile_chart(Split)
    reference, instance = Split(), chart.create()
    for machine in (reference, instance):
        machine.send("stay")
    assert ids(instance.configuration) == ids(reference.configuration) == ["a", "x"]
    restored = chart.restore(through_json(instance.snapshot()))
    for machine in (reference, instance, restored):
        machine.send("go")
    assert ids(restored.configuration) == ids(instance.configuration)
    assert ids(instance.configuration) == ids(reference.configuration)


def test_an_empty_configuration_python_statemachine_can_reach_is_restored() -> None:
    # entering a history state with neither a record nor a default leaves no state active
    chart = compile_chart(Wizard)
    wizard = chart.create(Recorder())
    wizard.send("resume")
    assert wizard.snapshot()["configuration"] == []
    restored = chart.restore(through_json(wizard.snapshot()))
    assert ids(restored.configuration) == []
    assert restored.send("start").reason == wizard.send("start").reason


def test_a_flat_chart_is_always_in_one_state() -> None:
    class Light(StateChart):
        green = State(initial=True)
        red = State(final=True)
        stop = green.to(red)

    snapshot = compile_chart(Light).create().snapshot()
    for configuration, reason in (([], "no state of the chart"), (["green", "red"], "both")):
        snapshot["configuration"] = configuration
        with pytest.raises(InstanceSnapshotError, match=reason):
            compile_chart(Light).restore(snapshot)


def test_restoring_never_changes_the_snapshot() -> None:
    snapshot = _wizard_snapshot()
    kept = copy.deepcopy(snapshot)
    compile_chart(Wizard).restore(snapshot)
    assert snapshot == kept


def test_a_deep_history_of_a_parallel_state_restores_every_region() -> None:
    class Deck(StateChart):
        class play(State.Parallel):
            class left(State.Compound):
                l1 = State(initial=True)
                l2 = State()
                go = l1.to(l2)

            class right(State.Compound):
                r1 = State(initial=True)

            memory = HistoryState(type="deep")

        off = State(initial=True)
        on = off.to(play)
        stop = play.to(off)
        back = off.to(play.memory)

    chart = compile_chart(Deck)
    deck = chart.create()
    reference = Deck()
    for event in ("on", "go", "stop"):
        deck.send(event)
        reference.send(event)
    snapshot = deck.snapshot()
    # the states as python-statemachine records them (in the order the configuration grew)
    recorded = {name: ids(states) for name, states in reference.history_values.items()}
    assert snapshot["history"] == recorded == {"memory": ["left", "right", "r1", "l2"]}
    restored = chart.restore(through_json(snapshot))
    restored.send("back")
    reference.send("back")
    assert ids(restored.configuration) == ids(reference.configuration)
    assert set(ids(restored.configuration)) == {"play", "left", "l2", "right", "r1"}
    snapshot["history"]["memory"] = ["left", "l1", "l2"]
    with pytest.raises(InstanceSnapshotError, match="'l1' and 'l2' are both active"):
        chart.restore(snapshot)


# -- continuing from a snapshot is continuing -------------------------------------------------

CALLBACKS = ["count", "ready", "run", "again", "result", "on_enter_state", "before_transition"]


class SnapshotContinues(RuleBasedStateMachine):
    """Two instances of one statechart get the same events; one is snapshotted and restored
    (through JSON, onto its own model) whenever Hypothesis likes. After every step both have
    the same configuration, history, outcome, exception and callback log.

    With ``timed``, each instance runs on its own ``VirtualClock``: events are also sent with
    a delay and a ``send_id``, cancelled, and both clocks advanced alike, so snapshots hold
    pending timers; the copy is restored onto a fresh clock that reads another time (the
    timers are due as long after the restore as they were after the snapshot). Delays and
    clock readings are binary fractions of a second, so due times compare exactly."""

    @initialize(name=st.sampled_from(sorted(CONTINUED)), timed=st.booleans())
    def start(self, name: str, timed: bool) -> None:
        declared, model_type, events = CONTINUED[name]
        self.chart = compile_chart(declared)
        self.events = [*events, "nope", "done.state.work"]
        self.timed = timed
        self.clocks = [VirtualClock(), VirtualClock(start=3.5)] if timed else [None, None]
        self.original = self.chart.create(model_type(), clock=self.clocks[0])
        self.copy = self.chart.create(model_type(), clock=self.clocks[1])

    def _both(self, action: Any) -> None:
        results = []
        for instance in (self.original, self.copy):
            try:
                outcome = action(instance)
                results.append(("ok", outcome.applied, outcome.reason, outcome.transitions))
            except Exception as error:  # compared across the two instances
                results.append(("raised", type(error).__name__, str(error)))
        assert results[0] == results[1]

    @rule(data=st.data(), boom=st.sampled_from([None, *CALLBACKS]))
    def send(self, data: st.DataObject, boom: str | None) -> None:
        event = data.draw(st.sampled_from(self.events))
        kwargs = {} if boom is None else {"boom": boom}
        self._both(lambda instance: instance.send(event, **kwargs))

    @precondition(lambda self: getattr(self, "timed", False))
    @rule(
        data=st.data(),
        boom=st.sampled_from([None, *CALLBACKS]),
        delay=st.sampled_from([125, 250, 500, 1000]),
        send_id=st.sampled_from([None, "a", "b"]),
    )
    def send_later(self, data: st.DataObject, boom: str | None, delay: int, send_id: Any) -> None:
        event = data.draw(st.sampled_from(self.events))
        kwargs: dict[str, Any] = {} if boom is None else {"boom": boom}
        options = {"delay": delay, "send_id": send_id}
        self._both(lambda instance: instance.send(event, **kwargs, **options))

    @precondition(lambda self: getattr(self, "timed", False))
    @rule(send_id=st.sampled_from(["a", "b"]))
    def cancel(self, send_id: str) -> None:
        for instance in (self.original, self.copy):
            instance.cancel_event(send_id)

    @precondition(lambda self: getattr(self, "timed", False))
    @rule(seconds=st.sampled_from([0.125, 0.25, 0.5, 1.0]))
    def advance(self, seconds: float) -> None:
        results = []
        for clock in self.clocks:
            assert isinstance(clock, VirtualClock)
            try:
                clock.advance(seconds)
                results.append(("ok",))
            except Exception as error:  # compared across the two instances
                results.append(("raised", type(error).__name__, str(error)))
        assert results[0] == results[1]

    @rule(flag=st.sampled_from(["locked", "ready"]))
    def flip(self, flag: str) -> None:
        for instance in (self.original, self.copy):
            setattr(instance.model, flag, not getattr(instance.model, flag))

    @rule(start=st.sampled_from([0.0, 7.5, 1000.125]))
    def snapshot_and_restore(self, start: float) -> None:
        snapshot = through_json(self.copy.snapshot())
        if self.timed:
            self.clocks[1] = VirtualClock(start=start)
        self.copy = self.chart.restore(snapshot, self.copy.model, clock=self.clocks[1])

    @invariant()
    def the_same(self) -> None:
        if not hasattr(self, "original"):
            return
        assert ids(self.original.configuration) == ids(self.copy.configuration)
        assert self.original.is_terminated == self.copy.is_terminated
        assert self.original.snapshot() == self.copy.snapshot()
        assert self.original.model.log == self.copy.model.log


TestSnapshotContinues = SnapshotContinues.TestCase


def test_order_snapshot_survives_a_nested_compound_and_its_final_state() -> None:
    chart = compile_chart(Order)
    order = chart.create(Recorder())
    for event in ("add", "proceed"):
        order.send(event)
    restored = chart.restore(through_json(order.snapshot()), Recorder())
    assert ids(restored.configuration) == ["open", "checkout"]
    restored.send("pay")
    assert restored.is_terminated


class Reminder(StateChart):
    idle = State(initial=True)
    waiting = State()
    done = State(final=True)
    arm = idle.to(waiting, on="schedule")
    ring = waiting.to(done)

    def schedule(self) -> None:
        self.send("ring", delay=1000)


def test_c19_pending_timers_are_kept_relative_to_the_clock_and_fire_after_restore() -> None:
    chart = compile_chart(Reminder)
    clock = VirtualClock(start=10.0)
    instance = chart.create(clock=clock)
    instance.send("arm")
    clock.advance(0.25)
    snapshot = instance.snapshot()
    assert snapshot["timers"] == [
        {
            "event": "ring",
            "args": [],
            "kwargs": {},
            # how it was sent: its event object reads delay 1000 (declared: none)
            "sent": {"send_id": None, "delay": 1000, "internal": False},
            "send_id": None,
            "due_in_ms": 750.0,
        }
    ]
    later = VirtualClock(start=500.0)
    restored = chart.restore(through_json(snapshot), clock=later)
    assert restored.clock is later
    assert restored.next_due() == 500.75
    assert through_json(restored.snapshot()) == snapshot
    later.advance(0.5)
    assert ids(restored.configuration) == ["waiting"]
    later.advance(0.25)
    assert restored.is_terminated
    instance.run_until_idle()
    assert instance.is_terminated


class Heartbeat(StateChart):
    """A workflow with a heartbeat: each ``ping`` re-arms a ``timeout`` 30 s later."""

    alive = State(initial=True)
    dead = State(final=True)
    ping = alive.to.itself(internal=True, on="rearm")
    timeout = alive.to(dead, on="record")

    def rearm(self, model: Any) -> None:
        self.cancel_event("heartbeat")
        self.send("timeout", "missed", delay=30_000, send_id="heartbeat", beats=model.beats)
        model.beats += 1

    def record(self, reason: str, beats: int, model: Any) -> None:
        model.log.append(("timeout", reason, beats))


class Beats:
    def __init__(self) -> None:
        self.beats = 0
        self.log: list[Any] = []


def test_c19_a_heartbeat_workflow_is_persisted_with_its_timer_and_payload() -> None:
    chart = compile_chart(Heartbeat)
    clock = VirtualClock()
    instance = chart.create(Beats(), clock=clock)
    instance.send("ping")
    clock.advance(10)
    instance.send("ping")
    clock.advance(5)
    snapshot = through_json(instance.snapshot())
    assert snapshot["timers"] == [
        {
            "event": "timeout",
            "args": ["missed"],
            "kwargs": {"beats": 1},
            "sent": {"send_id": None, "delay": 30_000, "internal": False},
            "send_id": "heartbeat",
            "due_in_ms": 25_000.0,
        }
    ]
    model = Beats()
    model.beats = 2
    restored = chart.restore(snapshot, model, clock=VirtualClock())
    restored.run_until_idle()
    assert model.log == [("timeout", "missed", 1)]
    assert restored.is_terminated


def test_c19_cancel_by_send_id_reaches_a_restored_timer() -> None:
    chart = compile_chart(Heartbeat)
    clock = VirtualClock()
    instance = chart.create(Beats(), clock=clock)
    instance.send("ping")
    model = Beats()
    later = VirtualClock()
    restored = chart.restore(through_json(instance.snapshot()), model, clock=later)
    restored.cancel_event("heartbeat")
    assert restored.next_due() is None
    assert restored.snapshot()["timers"] == []
    later.advance(60)
    assert ids(restored.configuration) == ["alive"]
    assert model.log == []
    restored.send("ping")  # re-armed on the restored instance: cancelled and sent again
    restored.send("ping")
    assert [timer["kwargs"] for timer in restored.snapshot()["timers"]] == [{"beats": 1}]


def test_c19_timers_keep_their_order_and_an_overdue_one_runs_first() -> None:
    class Several(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        arm = a.to.itself(internal=True, on="schedule")
        note = a.to.itself(internal=True, on="write")

        def schedule(self) -> None:
            for tag, delay in (("late", 300), ("first", 100), ("tie-1", 200), ("tie-2", 200)):
                self.send("note", tag, delay=delay)

        def write(self, tag: str, model: Any) -> None:
            model.log.append(tag)

    chart = compile_chart(Several)
    clock = VirtualClock()
    instance = chart.create(Recorder(), clock=clock)
    instance.send("arm")
    snapshot = instance.snapshot()
    assert [(t["args"], t["due_in_ms"]) for t in snapshot["timers"]] == [
        (["first"], 100.0),
        (["tie-1"], 200.0),
        (["tie-2"], 200.0),
        (["late"], 300.0),
    ]
    snapshot["timers"][0]["due_in_ms"] = -50  # overdue when taken (a clock that woke late)
    model = Recorder()
    restored = chart.restore(snapshot, model, clock=VirtualClock())
    restored.send("arm")  # runs the overdue one first, then schedules four more
    assert model.log == ["first"]
    restored.run_until_idle()
    assert model.log == ["first", "first", "tie-1", "tie-2", "tie-1", "tie-2", "late", "late"]


def test_c19_restore_needs_a_clock_for_timers_and_builds_nothing_without_one() -> None:
    chart = compile_chart(Reminder)
    instance = chart.create(clock=VirtualClock())
    instance.send("arm")
    model = Recorder()
    with pytest.raises(InstanceSnapshotError) as caught:
        chart.restore(instance.snapshot(), model)
    assert caught.value.field == "timers"
    assert "clock=" in caught.value.reason
    with pytest.raises(TypeError, match="clock must be"):
        chart.restore(instance.snapshot(), model, clock=object())  # type: ignore[arg-type]
    idle = chart.create(clock=VirtualClock())
    restored = chart.restore(through_json(idle.snapshot()))
    restored.send("arm")  # without a clock, the delayed event is waited for, in real time
    assert restored.is_terminated


def test_c19_a_timer_payload_json_cannot_keep_is_refused_when_the_snapshot_is_taken() -> None:
    chart = compile_chart(Reminder)
    instance = chart.create(clock=VirtualClock())
    instance.send("arm")
    instance.send("ring", delay=10, send_id=("a", 1))
    with pytest.raises(InstanceSnapshotError) as caught:
        instance.snapshot()
    assert caught.value.field == "timers[0].send_id"  # listed in the order they run
