"""What chart methods find on ``self`` besides callbacks, as python-statemachine's machine gives
it: ``configuration`` is an ``OrderedSet`` of the declared states (set questions answer as
there), and class-level data (``attempts = 0``) is a default a callback may set on the
instance. Each rule is checked against python-statemachine's own engine.

Rules checked here (docs/spec.md): C6 (a run never answers differently, silently), C15
(``configuration`` as python-statemachine's), C19 (snapshots keep what an instance holds).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from statemachine import State, StateChart
from statemachine.orderedset import OrderedSet

from statecharts import InstanceSnapshotError, UnsupportedChart, compile_chart


class Log:
    """A model keeping what callbacks saw."""

    def __init__(self) -> None:
        self.log: list[Any] = []


def ids(states: Any) -> list[str]:
    return [state.id for state in states]


# -- C15: configuration is python-statemachine's OrderedSet of states --------------------------


class Shop(StateChart[Log]):
    """Two regions; ``close`` is guarded by a set comparison, and every event's action and
    ``after`` record what set questions about the configuration answer."""

    class work(State.Parallel, initial=True):
        class pay(State.Compound):
            unpaid = State(initial=True)
            paid = State()
            settle = unpaid.to(paid, on="ask")

        class ship(State.Compound):
            packing = State(initial=True)
            shipped = State()
            dispatch = packing.to(shipped, on="ask_moving")

    done = State(final=True)
    close = work.to(done, cond="all_done")

    def all_done(self) -> bool:
        return bool(self.configuration >= {Shop.work.pay.paid, Shop.work.ship.shipped})

    def ask(self) -> None:
        configuration = self.configuration
        paid, shipped = Shop.work.pay.paid, Shop.work.ship.shipped
        self.model.log.append(
            [
                type(configuration).__name__,
                ids(configuration),
                len(configuration),
                configuration[0].id,
                configuration[-1].id,
                paid in configuration,
                Shop.work in configuration,
                configuration >= {Shop.work},
                configuration <= {Shop.work},
                configuration.isdisjoint({paid, shipped}),
                ids(configuration & {Shop.work, Shop.work.pay}),
                ids(configuration - {Shop.work}),
                sorted(ids(configuration | {Shop.done})),
                sorted(ids(configuration ^ {Shop.work, Shop.done})),
                configuration == set(configuration),
                configuration == tuple(configuration),  # a set is never equal to a tuple
                configuration == list(configuration),
                configuration != {Shop.work},
                str(configuration),
            ]
        )

    def ask_moving(self, previous_configuration: Any, new_configuration: Any) -> None:
        self.model.log.append(
            [
                type(previous_configuration).__name__,
                type(new_configuration).__name__,
                ids(new_configuration - previous_configuration),
                ids(previous_configuration - new_configuration),
                new_configuration >= {Shop.work.ship.shipped},
                new_configuration == self.configuration,
            ]
        )


def _run_both(events: tuple[str, ...]) -> tuple[tuple[list[str], list[Any]], ...]:
    model = Log()
    reference = Shop(model)
    instance = compile_chart(Shop).create(Log())
    for event in events:
        reference.send(event)
        instance.send(event)
    return (ids(reference.configuration), model.log), (
        ids(instance.configuration),
        instance.model.log,
    )


def test_C15_configuration_answers_set_questions_as_python_statemachines() -> None:
    expected, compiled = _run_both(("settle", "dispatch"))
    assert compiled == expected
    asked, after = expected[1]
    assert asked[0] == "OrderedSet"
    assert asked[15:17] == [False, False]  # == tuple, == list: False there, False here
    assert after[:3] == ["OrderedSet", "OrderedSet", ["shipped"]]


def test_C15_a_guard_comparing_the_configuration_with_a_set_of_states_is_taken() -> None:
    expected, compiled = _run_both(("close", "settle", "close", "dispatch", "close"))
    assert compiled == expected
    assert expected[0] == ["done"]


def test_C15_configuration_is_an_ordered_set_of_the_declared_states_in_document_order() -> None:
    instance = compile_chart(Shop).create(Log())
    configuration = instance.configuration
    assert type(configuration) is OrderedSet
    assert ids(configuration) == ["work", "pay", "unpaid", "ship", "packing"]
    assert configuration == {
        Shop.work,
        Shop.work.pay,
        Shop.work.pay.unpaid,
        Shop.work.ship,
        Shop.work.ship.packing,
    }
    assert instance.configuration == Shop(Log()).configuration


def test_C15_changing_a_configuration_read_leaves_the_instance_as_it_was() -> None:
    chart = compile_chart(Shop)
    instance, other = chart.create(Log()), chart.create(Log())
    read = instance.configuration
    read.add(Shop.done)
    read.discard(Shop.work)
    assert instance.configuration is not read
    assert ids(instance.configuration) == ids(other.configuration)
    assert Shop.done not in instance.configuration
    instance.send("settle")
    assert Shop.work.pay.paid in instance.configuration


# -- C6: class-level data set by callbacks lives on the instance -------------------------------


class Retry(StateChart[None]):
    """A retry budget kept as python-statemachine users keep one: a class-level default the
    callbacks update on the machine, read by a method guard and an attribute guard."""

    attempts = 0
    gave_up = False
    trying = State(initial=True)
    failed = State()
    fail = trying.to(failed, cond="exhausted") | trying.to(trying, on="count")
    reset = trying.to(trying, on="start_over") | failed.to(trying, cond="gave_up", on="start_over")

    def count(self) -> None:
        self.attempts += 1
        self.gave_up = self.attempts >= 2

    def exhausted(self) -> bool:
        return self.attempts >= 2

    def start_over(self) -> None:
        self.attempts = 0
        self.gave_up = False


def test_C6_a_class_level_default_a_callback_sets_is_kept_on_the_instance() -> None:
    reference, instance = Retry(), compile_chart(Retry).create()
    for event in ("fail", "fail", "fail", "reset", "fail"):
        reference.send(event)
        instance.send(event)
        assert ids(instance.configuration) == ids(reference.configuration), event
        assert (instance.attempts, instance.gave_up) == (reference.attempts, reference.gave_up)
    assert ids(instance.configuration) == ["trying"]
    assert (Retry.attempts, Retry.gave_up) == (0, False)  # the class default is untouched


def test_C6_instances_do_not_share_a_field_once_a_callback_set_it() -> None:
    chart = compile_chart(Retry)
    first, second = chart.create(), chart.create()
    first.send("fail")
    assert (first.attempts, second.attempts) == (1, 0)


class Notes(StateChart[None]):
    """A mutable class-level default: python-statemachine's machines all share the one list
    (a callback appending to it changes the class's), and so do compiled instances."""

    seen: ClassVar[list[str]] = []
    tags: ClassVar[object] = ("initial",)
    open = State(initial=True)
    note = open.to.itself(on="remember")
    tag = open.to.itself(on="retag")

    def remember(self) -> None:
        self.seen.append("note")

    def retag(self) -> None:
        self.tags = {"a set"}


def test_C6_a_mutable_class_level_default_is_shared_as_on_python_statemachine() -> None:
    Notes.seen.clear()
    reference, instance = Notes(), compile_chart(Notes).create()
    reference.send("note")
    instance.send("note")
    assert reference.seen is instance.seen is Notes.seen
    assert Notes.seen == ["note", "note"]
    Notes.seen.clear()


class Nested(StateChart[None]):
    """A statechart whose regions count hops in a class-level field, read by a guard."""

    hops = 0

    class box(State.Compound, initial=True):
        x = State(initial=True)
        y = State()
        hop = x.to(y, on="bump") | y.to(x, on="bump")

    out = State(final=True)
    leave = box.to(out, cond="enough")

    def bump(self) -> None:
        self.hops += 1

    def enough(self) -> bool:
        return self.hops >= 2


def test_C6_a_statechart_keeps_class_level_fields_on_the_instance() -> None:
    reference, instance = Nested(), compile_chart(Nested).create()
    for event in ("leave", "hop", "leave", "hop", "leave"):
        reference.send(event)
        instance.send(event)
        assert ids(instance.configuration) == ids(reference.configuration), event
    assert instance.hops == reference.hops == 2
    assert ids(instance.configuration) == ["out"]


def test_C6_an_attribute_a_callback_sets_with_no_class_default_is_refused() -> None:
    class Fresh(StateChart[None]):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, on="mark")

        def mark(self) -> None:
            self.marked = True

    Fresh().send("go")  # python-statemachine sets it on the machine
    with pytest.raises(UnsupportedChart, match=r"Fresh.*self\.marked"):
        compile_chart(Fresh)


def test_a_chart_without_class_level_data_keeps_slotted_instances() -> None:
    class Plain(StateChart[None]):
        catch_errors_as_events = False  # python-statemachine's settings are no fields
        allow_event_without_transition = True
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

    assert not hasattr(compile_chart(Plain).create(), "__dict__")
    assert hasattr(compile_chart(Retry).create(), "__dict__")


# -- C19: a snapshot keeps the fields an instance set ------------------------------------------


def test_C19_a_snapshot_keeps_a_class_level_field_a_callback_set() -> None:
    chart = compile_chart(Retry)
    instance = chart.create()
    assert instance.snapshot()["fields"] == {}  # the class defaults are not the instance's
    instance.send("fail")
    snapshot = json.loads(json.dumps(instance.snapshot()))
    assert snapshot["fields"] == {"attempts": 1, "gave_up": False}
    restored = chart.restore(snapshot)
    assert (restored.attempts, restored.gave_up) == (1, False)
    reference = Retry()
    reference.send("fail")
    for event in ("fail", "fail"):
        reference.send(event)
        restored.send(event)
        assert ids(restored.configuration) == ids(reference.configuration)
    assert ids(restored.configuration) == ["failed"]


def test_C19_a_snapshot_refuses_a_field_json_cannot_keep_naming_it() -> None:
    instance = compile_chart(Notes).create()
    instance.send("tag")
    with pytest.raises(InstanceSnapshotError, match="not plain JSON data") as caught:
        instance.snapshot()
    assert caught.value.field == "fields.tags"


def test_C19_a_snapshot_refuses_an_attribute_set_from_outside_that_the_chart_does_not_keep() -> (
    None
):
    instance = compile_chart(Retry).create()
    instance.budget = 3  # type: ignore[attr-defined]
    with pytest.raises(InstanceSnapshotError, match="not a field of Retry") as caught:
        instance.snapshot()
    assert caught.value.field == "fields.budget"


def test_C19_restore_refuses_a_field_the_chart_does_not_keep_naming_the_ones_it_does() -> None:
    chart = compile_chart(Retry)
    snapshot = chart.create().snapshot()
    snapshot["fields"]["budget"] = 3
    with pytest.raises(
        InstanceSnapshotError, match=r"keeps no field.*attempts, gave_up"
    ) as caught:
        chart.restore(snapshot)
    assert caught.value.field == "fields.budget"


class RetryAgainstReference(RuleBasedStateMachine):
    """Random events on python-statemachine's engine and on a compiled instance, snapshotted
    and restored through JSON now and then: the configuration and the fields stay the same."""

    @initialize()
    def start(self) -> None:
        self.chart = compile_chart(Retry)
        self.reference = Retry()
        self.instance = self.chart.create()

    @rule(event=st.sampled_from(["fail", "reset"]))
    def send(self, event: str) -> None:
        self.reference.send(event)
        self.instance.send(event)

    @rule()
    def snapshot_and_restore(self) -> None:
        snapshot = json.loads(json.dumps(self.instance.snapshot()))
        self.instance = self.chart.restore(snapshot)

    @invariant()
    def the_same(self) -> None:
        assert ids(self.instance.configuration) == ids(self.reference.configuration)
        assert self.instance.attempts == self.reference.attempts
        assert self.instance.gave_up == self.reference.gave_up


TestRetryAgainstReference = RetryAgainstReference.TestCase
