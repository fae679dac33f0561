"""The tracker against the tool call chart and a plain-Python model of section T.

``TrackerMachine`` is derived from ``ToolCallChart`` by ``statecharts.testing.chart_machine``
(one rule per chart event, calls interleaved by id, the tracker's status checked against the
chart's own instances after every step) and adds what the chart cannot express: the values
against the plain model, duplicate starts, unknown ids, malformed events and checkpoints.
``BoundedTrackerMachine`` stays hand-written: ``max_history`` forgets calls, which no chart
models. Ids interleave, start twice and get events they do not allow; some events name unknown
ids and some are malformed; now and then the tracker is checkpointed and replaced by its
restored copy. After every step the tracker must equal the model, and the
invariants hold: statuses only move forward, ``args`` exists exactly when the call got past a
successful ``ready``, and nothing recorded changes through an ignored or invalid event.
"""

# Rules checked here (docs/spec.md): M2, T3, T5, T9, T11, T12, T21, T22.

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, precondition, rule

from statecharts import compile_chart
from statecharts.testing import chart_machine, transition_cover
from toolcalls import InvalidEvent, ToolCallChart, ToolCallTracker
from toolcalls._record import ToolCallModel
from toolcalls.events import parse_event

IDS = ["a", "b", "c", "d", "e"]
RANK = {"pending": 0, "running": 1, "done": 2, "error": 2}
#: Fragments that keep a call's text valid JSON around one whole value, and some that break it.
HARMLESS = [" ", "\n", "", "\t"]
BREAKING = ['{"q": ', "}", "[", ",", "NaN", "Infinity", "'x'"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


MALFORMED: list[Any] = [
    {"type": "start", "id": "a"},
    {"type": "delta", "id": "b", "argsTextDelta": 1},
    {"type": "nope", "id": "c"},
    {"type": "ready", "id": ""},
    ["not", "an", "event"],
]


def check_args(tracker: ToolCallTracker) -> None:
    """``args`` exists exactly when a call got past a successful ``ready``."""
    for call in tracker.list():
        if call.status in ("running", "done"):
            assert call.has_args
        elif call.status == "pending":
            assert not call.has_args
        else:
            parse_failed = (
                isinstance(call.error, dict) and call.error.get("type") == "invalid_arguments"
            )
            assert not (call.has_args and parse_failed)


def reject_constant(name: str) -> Any:
    raise ValueError(name)


class SeedModel:
    """Section T of docs/spec.md written as plainly as possible, decisions included."""

    def __init__(self, max_history: int | None) -> None:
        self.max_history = max_history
        self.calls: dict[str, dict[str, Any]] = {}

    def apply(self, kind: str, call_id: str, **fields: Any) -> tuple[bool, str | None]:
        call = self.calls.get(call_id)
        if kind == "start":
            if call is not None:
                return False, "duplicate_start"
            self.calls[call_id] = {
                "id": call_id,
                "name": fields["name"],
                "argsText": "",
                "status": "pending",
            }
            self.evict()
            return True, None
        if call is None:
            return False, "unknown_id"
        status = call["status"]
        if kind == "delta" and status == "pending":
            call["argsText"] += fields["text"]
        elif kind == "ready" and status == "pending":
            try:
                call["args"] = json.loads(call["argsText"], parse_constant=reject_constant)
                call["status"] = "running"
            except (ValueError, RecursionError):
                call["status"] = "error"
                call["error"] = "invalid_arguments"
        elif kind == "result" and status == "running":
            call["status"], call["result"] = "done", fields["value"]
        elif kind == "error" and status in ("pending", "running"):
            call["status"], call["error"] = "error", fields["value"]
        else:
            return False, "not_allowed"
        if call["status"] in ("done", "error"):
            self.evict()
        return True, None

    def evict(self) -> None:
        if self.max_history is None:
            return
        for call_id in list(self.calls):
            if len(self.calls) <= self.max_history:
                return
            if self.calls[call_id]["status"] in ("done", "error"):
                del self.calls[call_id]


def comparable(picture: dict[str, Any]) -> dict[str, Any]:
    """A tracker call's wire shape, with parse failures reduced to their type."""
    picture = dict(picture)
    error = picture.get("error")
    if (
        isinstance(error, dict)
        and error.get("type") == "invalid_arguments"
        and "args" not in picture
    ):
        picture["error"] = "invalid_arguments"
    return picture


class BoundedTrackerMachine(RuleBasedStateMachine):
    """What the derived machine cannot express: ``max_history`` forgets finished calls, which
    the chart knows nothing of, so the bounded tracker keeps this hand-written machine."""

    max_history: int | None = 3
    started = Bundle("started")

    def __init__(self) -> None:
        super().__init__()
        self.tracker = ToolCallTracker(max_history=self.max_history)
        self.model = SeedModel(self.max_history)
        self.last_rank: dict[str, int] = {}

    def step(self, event: dict[str, Any], **fields: Any) -> None:
        outcome = self.tracker.apply(event)
        applied, reason = self.model.apply(event["type"], event["id"], **fields)
        assert (outcome.applied, outcome.reason) == (applied, reason), event

    @rule(target=started, call_id=st.sampled_from(IDS), name=st.sampled_from(["search", "run"]))
    def start(self, call_id: str, name: str) -> str:
        self.step({"type": "start", "id": call_id, "name": name}, name=name)
        return call_id

    @rule(call_id=started, text=st.sampled_from(HARMLESS) | st.sampled_from(BREAKING))
    def delta(self, call_id: str, text: str) -> None:
        self.step({"type": "delta", "id": call_id, "argsTextDelta": text}, text=text)

    @rule(call_id=started, value=json_values)
    def whole_arguments(self, call_id: str, value: Any) -> None:
        text = json.dumps(value)
        self.step({"type": "delta", "id": call_id, "argsTextDelta": text}, text=text)

    @rule(call_id=started, value=json_values)
    def complete_arguments(self, call_id: str, value: Any) -> None:
        """A whole JSON value as the last fragment, then ready: the usual end of streaming."""
        self.whole_arguments(call_id, value)
        self.ready(call_id)

    @rule(call_id=started)
    def ready(self, call_id: str) -> None:
        self.step({"type": "ready", "id": call_id})

    @rule(call_id=started, value=json_values)
    def result(self, call_id: str, value: Any) -> None:
        self.step({"type": "result", "id": call_id, "result": value}, value=value)

    @rule(call_id=started, value=json_values.filter(lambda v: v is not None))
    def error(self, call_id: str, value: Any) -> None:
        self.step({"type": "error", "id": call_id, "error": value}, value=value)

    @rule(
        call_id=st.sampled_from(["ghost", "zz"]), kind=st.sampled_from(["delta", "ready", "error"])
    )
    def unknown_id(self, call_id: str, kind: str) -> None:
        event = {"type": kind, "id": call_id, "argsTextDelta": "x", "error": "x"}
        assert self.tracker.apply(event).reason == "unknown_id"

    @rule(event=st.sampled_from(MALFORMED))
    def malformed(self, event: Any) -> None:
        before = self.tracker.snapshot()
        with pytest.raises(InvalidEvent):
            self.tracker.apply(event)
        assert self.tracker.snapshot() == before

    @precondition(lambda self: len(self.tracker) > 0)
    @rule()
    def checkpoint_and_restore(self) -> None:
        picture = json.loads(json.dumps(self.tracker.snapshot()))
        self.tracker = ToolCallTracker.restore(picture)

    @invariant()
    def equals_the_model(self) -> None:
        assert [comparable(c.to_dict()) for c in self.tracker.list()] == list(
            self.model.calls.values()
        )

    @invariant()
    def statuses_only_move_forward(self) -> None:
        for call in self.tracker.list():
            rank = RANK[call.status]
            assert rank >= self.last_rank.get(call.id, 0)
            self.last_rank[call.id] = rank
        for call_id in set(self.last_rank) - set(self.tracker):
            del self.last_rank[call_id]  # forgotten by max_history: a later start is a new call

    @invariant()
    def args_exist_exactly_past_a_successful_ready(self) -> None:
        check_args(self.tracker)

    @invariant()
    def history_stays_bounded_unless_calls_are_in_flight(self) -> None:
        if self.max_history is not None and len(self.tracker) > self.max_history:
            assert all(c.status in ("pending", "running") for c in self.tracker.list())


TestBoundedTrackerMatchesSeedModel = BoundedTrackerMachine.TestCase
TestBoundedTrackerMatchesSeedModel.settings = settings(stateful_step_count=60)


# -- the derived machine: the tool call chart against the tracker -----------------------------

#: The wire type each chart event is sent as (the chart calls the wire's ``error`` ``fail``, T24).
WIRE = {"delta": "delta", "ready": "ready", "result": "result", "fail": "error"}
#: Mostly whole JSON values, so ``ready`` often parses and calls go on to ``running``.
whole_values = json_values.map(json.dumps)
fragments = st.one_of(whole_values, whole_values, st.sampled_from(HARMLESS + BREAKING))
PAYLOADS = {
    "delta": st.fixed_dictionaries({"text": fragments}),
    "result": st.fixed_dictionaries({"value": json_values}),
    "fail": st.fixed_dictionaries({"value": json_values.filter(lambda v: v is not None)}),
}


class TrackerAdapter:
    """The tracker as a system under test of ``ToolCallChart``: one call per key. Every event
    also goes to ``SeedModel``, the plain oracle for the calls' values."""

    def __init__(self) -> None:
        self.tracker = ToolCallTracker()
        self.model = SeedModel(None)

    def create(self, key: str) -> None:
        self.tracker.apply({"type": "start", "id": key, "name": "search"})
        self.model.apply("start", key, name="search")

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None:
        if event not in WIRE:
            with pytest.raises(InvalidEvent):  # the wire has no such event type
                self.tracker.apply({"type": event, "id": key})
            return False
        wire: dict[str, Any] = {"type": WIRE[event], "id": key}
        fields: dict[str, Any] = {}
        if event == "delta":
            wire["argsTextDelta"] = fields["text"] = payload["text"]
        elif event in ("result", "fail"):
            wire[WIRE[event]] = fields["value"] = payload["value"]
        applied = self.tracker.apply(wire).applied
        expected, _ = self.model.apply(WIRE[event], key, **fields)
        assert applied == expected
        return applied

    def configuration(self, key: str) -> set[str]:
        call = self.tracker.get(key)
        return set() if call is None else {call.status}


CHART = compile_chart(ToolCallChart)
#: Payloads the path search tries: arguments that parse and that do not, a null result.
CANDIDATES = {
    "delta": [{"text": '{"q": 1}'}, {"text": "NaN"}],
    "result": [{"value": None}],
    "fail": [{"value": "boom"}],
}
PATHS = transition_cover(CHART, CANDIDATES, model=lambda key: ToolCallModel(key, "search", 0))
DerivedTrackerMachine = chart_machine(
    CHART,
    TrackerAdapter,
    payloads=PAYLOADS,
    model=lambda key: ToolCallModel(key, "search", 0),
    max_instances=3,
    paths=PATHS,
)


class TrackerMachine(DerivedTrackerMachine):  # type: ignore[misc,valid-type]
    """The derived machine plus what the chart cannot say: values equal the plain model,
    duplicate starts and unknown ids are ignored, malformed events change nothing, and a
    checkpoint restored mid-stream goes on as the original."""

    @property
    def adapter(self) -> TrackerAdapter:
        adapter: TrackerAdapter = self.runner.adapter
        return adapter

    @rule(key=DerivedTrackerMachine.keys)
    def duplicate_start(self, key: str) -> None:
        outcome = self.adapter.tracker.apply({"type": "start", "id": key, "name": "other"})
        assert (outcome.applied, outcome.reason) == (False, "duplicate_start")

    @rule(
        call_id=st.sampled_from(["ghost", "zz"]), kind=st.sampled_from(["delta", "ready", "error"])
    )
    def unknown_id(self, call_id: str, kind: str) -> None:
        event = {"type": kind, "id": call_id, "argsTextDelta": "x", "error": "x"}
        assert self.adapter.tracker.apply(event).reason == "unknown_id"

    @rule(event=st.sampled_from(MALFORMED))
    def malformed(self, event: Any) -> None:
        before = self.adapter.tracker.snapshot()
        with pytest.raises(InvalidEvent):
            self.adapter.tracker.apply(event)
        assert self.adapter.tracker.snapshot() == before

    @rule()
    def checkpoint_and_restore(self) -> None:
        picture = json.loads(json.dumps(self.adapter.tracker.snapshot()))
        self.adapter.tracker = ToolCallTracker.restore(picture)

    @invariant()
    def equals_the_model(self) -> None:
        assert [comparable(c.to_dict()) for c in self.adapter.tracker.list()] == list(
            self.adapter.model.calls.values()
        )

    @invariant()
    def args_exist_exactly_past_a_successful_ready(self) -> None:
        check_args(self.adapter.tracker)


TestTrackerMatchesTheChartAndTheSeedModel = TrackerMachine.TestCase
TestTrackerMatchesTheChartAndTheSeedModel.settings = settings(stateful_step_count=60)


event_dicts = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["start", "delta", "ready", "result", "error", "other", 3, None]),
        "id": st.sampled_from(["a", "", 7, None, ["a"]]),
        "name": st.sampled_from(["search", "", 1, None]),
        "argsTextDelta": st.sampled_from(["{", "", 2, None]),
        "args_text_delta": st.sampled_from(["}", 2]),
        "result": st.sampled_from([None, 1, "x", {"k": [1]}]),
        "error": st.sampled_from([None, "boom", {"code": 1}]),
    },
)


@given(event=event_dicts)
@example(event={"type": "delta", "id": "a", "args_text_delta": 2})
def test_fast_validation_of_mappings_agrees_with_the_event_models(event: dict[str, Any]) -> None:
    try:
        parse_event(event)
        model_field = None
    except InvalidEvent as error:
        model_field = error.field
    try:
        ToolCallTracker().apply(event)
        tracker_field = None
    except InvalidEvent as error:
        tracker_field = error.field
    assert tracker_field == model_field, event
