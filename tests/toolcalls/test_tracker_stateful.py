"""The tracker against the tool call chart and an independent plain model of section T.

``TrackerMachine`` is derived from ``ToolCallChart`` by ``statecharts.testing.chart_machine``
(one rule per chart event, calls interleaved by id, the tracker's status checked against the
chart's own instances after every step) and adds what the chart cannot express. Every event
also goes to ``TrackerModel``: the conformance suite's ``SeedModel`` (which shares no code
with the tracker: not its chart, record or parser) plus this project's own decisions, bounded
history (T21) and the validation of malformed events (T17, T18). After every step everything
the tracker shows must equal the model: ``apply``'s outcome (applied, reason, status,
message), every call's wire shape with T8's exact parse error, ``get``, ``len``, ``in``,
iteration; snapshots are copies (T16). Events arrive as camelCase or snake_case dicts, other
mappings, event models and string subclasses; some are malformed; now and then the tracker is
checkpointed and replaced by its restored copy. ``BoundedTrackerMachine`` is the same with
``max_history=2``: finished calls are forgotten, oldest first.
"""

# Rules checked here (docs/spec.md): M2, M4, T3, T5, T8, T9, T11, T12, T14-T19, T21, T22, T26.

from __future__ import annotations

import contextlib
import copy
import enum
import json
import pickle
import threading
import types
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from statecharts import Coverage, compile_chart
from statecharts.testing import chart_machine, record_coverage, transition_cover
from toolcalls import (
    InvalidEvent,
    ToolCallChart,
    ToolCallTracker,
    tool_call_streaming_state_machine,
)
from toolcalls._record import ToolCallModel
from toolcalls.conformance._model import Effect, SeedModel
from toolcalls.conformance._suite import (
    CANDIDATES,
    PAYLOADS,
    json_values,
)
from toolcalls.events import parse_event

TYPES = ("start", "delta", "ready", "result", "error")
#: The wire type each chart event is sent as (the chart calls the wire's ``error`` ``fail``, T24).
WIRE = {"delta": "delta", "ready": "ready", "result": "result", "fail": "error"}
#: How an event reaches ``apply`` (T18): the wire dict, snake_case keys, another mapping, the
#: event model, strings as a ``str`` subclass, both spellings of a key (camelCase wins), and
#: the wire dict while chart coverage is recorded (which must see the call's transition).
FORMS = ("wire", "snake", "mapping", "model", "subclass", "both", "observed")


class Tag(enum.StrEnum):
    """A ``StrEnum``, as an application's own event types may be."""

    start = "start"
    delta = "delta"
    ready = "ready"
    result = "result"
    error = "error"


class Text(str):
    """A plain ``str`` subclass."""


class Count(int):
    """A plain ``int`` subclass."""


def in_form(event: dict[str, Any], form: str) -> Any:
    """``event`` as ``form`` says (every form means the same event, T18)."""
    if form == "snake" and "argsTextDelta" in event:
        event = {**event}
        event["args_text_delta"] = event.pop("argsTextDelta")
        return event
    if form == "mapping":
        return types.MappingProxyType(event)
    if form == "both" and "argsTextDelta" in event:
        return types.MappingProxyType({**event, "args_text_delta": "not this one"})
    if form == "model":
        return parse_event(event)
    if form == "subclass":
        changed = {**event, "type": Tag(event["type"]), "id": Text(event["id"])}
        for key in ("name", "argsTextDelta"):
            if key in changed:
                changed[key] = Text(changed[key])
        return changed
    return event


def message_of(kind: str, effect: Effect) -> str:
    """The outcome's log line (T19)."""
    if effect.applied:
        return f"{kind} applied; call is {effect.status}"
    if effect.reason == "unknown_id":
        return f"{kind} ignored: no call with that id"
    if effect.reason == "duplicate_start":
        return f"start ignored: the id is already tracked (call is {effect.status})"
    return f"{kind} ignored: not allowed while the call is {effect.status}"


class TrackerModel(SeedModel):
    """``SeedModel`` plus bounded history (T21): beyond ``max_history`` calls, the oldest
    finished ones are forgotten (their last status kept in ``forgotten``)."""

    def __init__(self, max_history: int | None = None) -> None:
        super().__init__()
        self.max_history = max_history
        self.forgotten: dict[str, str] = {}

    @staticmethod
    def limit_problem(limit: Any) -> str | None:
        """Why ``limit`` cannot be a ``max_history`` (T21), or ``None`` when it can."""
        if limit is None or (type(limit) is not bool and isinstance(limit, int) and limit > 0):
            return None
        return f"max_history must be a positive int or None, got {limit!r}"

    def apply(self, event: dict[str, Any]) -> Effect | None:
        effect = super().apply(event)
        if effect is not None and effect.applied and self.max_history is not None:
            for call_id in list(self.calls):
                if len(self.calls) <= self.max_history:
                    break
                status = self.calls[call_id]["status"]
                if status in ("done", "error"):
                    del self.calls[call_id]
                    self.parse_failures.discard(call_id)
                    self.forgotten[call_id] = status
        if effect is not None and effect.applied and event["type"] == "start":
            self.forgotten.pop(event["id"], None)
        return effect


def expected_rejection(event: Any) -> tuple[str, str] | None:
    """The ``(field, reason)`` of the ``InvalidEvent`` a malformed event raises (T17), or
    ``None`` for a well-formed one."""
    if not isinstance(event, Mapping):
        return "event", f"expected a JSON object or an event model, got {type(event).__name__}"
    kind = event.get("type")
    if kind not in TYPES or not isinstance(kind, str):
        expected = ", ".join(TYPES)
        if kind is None:
            return "type", f"missing (expected one of {expected})"
        return "type", f"unknown event type {kind!r} (expected one of {expected})"
    call_id = event.get("id")
    if not isinstance(call_id, str) or not call_id:
        return "id", _id_reason(call_id)
    if kind == "start":
        return _name_rejection(event.get("name"))
    if kind == "delta":
        return _text_rejection(event)
    if kind in ("result", "error") and isinstance(event.get(kind), type(threading.Lock())):
        return kind, "value cannot be copied (cannot pickle '_thread.lock' object)"
    return None


def _id_reason(call_id: Any) -> str:
    if call_id is None:
        return "missing (every event names its call)"
    if call_id == "":
        return "must not be empty"
    return f"must be a string, got {type(call_id).__name__}"


def _name_rejection(name: Any) -> tuple[str, str] | None:
    if isinstance(name, str) and name:
        return None
    if name is None:
        return "name", "missing (the tool's name)"
    if name == "":
        return "name", "must not be empty"
    return "name", f"must be a string (the tool's name), got {type(name).__name__}"


def _text_rejection(event: Mapping[str, Any]) -> tuple[str, str] | None:
    key = "argsTextDelta"
    if key not in event and "args_text_delta" in event:
        key = "args_text_delta"
    text = event.get(key)
    if isinstance(text, str):
        return None
    if text is None:
        return key, "missing (a text fragment)"
    return key, f"must be a string (a text fragment), got {type(text).__name__}"


_MISSING: Any = object()
#: A well-formed event of each type, for an id never started.
WELL_FORMED: dict[str, dict[str, Any]] = {
    "start": {"type": "start", "id": "m", "name": "search"},
    "delta": {"type": "delta", "id": "m", "argsTextDelta": "{"},
    "ready": {"type": "ready", "id": "m"},
    "result": {"type": "result", "id": "m", "result": 1},
    "error": {"type": "error", "id": "m", "error": "boom"},
}
#: For each field, values that make an event malformed (``_MISSING``: the key left out).
DEFECTS: dict[str, list[Any]] = {
    "type": [_MISSING, None, "nope", 3, "Start"],
    "id": [_MISSING, None, "", 7, ["m"]],
    "name": [_MISSING, None, "", 1],
    "argsTextDelta": [_MISSING, None, 2, b"{"],
    "result": [threading.Lock()],
    "error": [threading.Lock()],
}


def _with(event: dict[str, Any], field: str, value: Any) -> dict[str, Any]:
    changed = {key: item for key, item in event.items() if key != field}
    if value is not _MISSING:
        changed[field] = value
    return changed


def _malformed() -> list[Any]:
    """Every well-formed event with one field made bad, a snake_case ``args_text_delta`` that
    is not a string, and things that are not events at all."""
    events: list[Any] = [["not", "an", "event"], "start", 7, None]
    for event in WELL_FORMED.values():
        for field, values in DEFECTS.items():
            if field in ("type", "id") or field in event:
                events += [_with(event, field, value) for value in values]
    delta = _with(WELL_FORMED["delta"], "argsTextDelta", _MISSING)
    events += [{**delta, "args_text_delta": 2}, {**delta, "args_text_delta": None}]
    return events


#: Events with one defect each (for an id never started).
MALFORMED = _malformed()
malformed_events = st.sampled_from(MALFORMED)


def strict(value: Any) -> str:
    """``value`` as canonical JSON: equal only when the JSON is (``1`` is not ``1.0`` or
    ``true``, as Python's ``==`` would have it)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)  # a pair is not two halves


def scribble(value: Any) -> None:
    """Change every container inside ``value`` in place (to check nothing aliases it)."""
    if isinstance(value, list):
        for item in value:
            scribble(item)
        value.append("scribbled")
    elif isinstance(value, dict):
        for item in list(value.values()):
            scribble(item)
        value["scribbled"] = True


class Listener:
    """What the tracker tells the session that owns it, written down."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, str | None]] = []

    def _before_ready(self) -> None:
        self.heard.append(("before_ready", None))

    def _arguments_ended(self, record: ToolCallModel) -> None:
        self.heard.append(("arguments_ended", record.id))

    def _ended_by_stream(self, record: ToolCallModel) -> None:
        self.heard.append(("ended_by_stream", record.id))


def told(event: Mapping[str, Any], effect: Effect) -> list[tuple[str, str | None]]:
    """What the listener hears for one event: a ``ready`` that ends a pending call's
    arguments is announced before and after; a ``result`` or ``error`` that ends a call
    after."""
    if not effect.applied:
        return []
    if event["type"] == "ready":
        return [("before_ready", None), ("arguments_ended", event["id"])]
    if event["type"] in ("result", "error"):
        return [("ended_by_stream", event["id"])]
    return []


#: The id of each key's call: later calls sort first, so start order is not the ids' order.
CALL_IDS = ("zeta", "eta", "delta", "beta", "alpha")


def call_id(key: str) -> str:
    index = int(key[1:]) if key[1:].isdigit() else -1
    return CALL_IDS[index] if 0 <= index < len(CALL_IDS) else key


class TrackerAdapter:
    """The tracker as a system under test of ``ToolCallChart``: one call per key (the key is
    the id), every event also applied to the model and the outcome compared, and what the
    tracker tells its listener (the session's hand-off) too."""

    max_history: int | None = None

    def __init__(self) -> None:
        self.tracker = tool_call_streaming_state_machine(max_history=self.max_history)
        self.listener = Listener()
        self.tracker._listener = self.listener
        self.model = TrackerModel(self.max_history)

    def apply(self, event: dict[str, Any], form: str = "wire") -> bool:
        """Apply one well-formed event in ``form`` to both; compare the outcome; return
        whether it applied."""
        sent = copy.deepcopy(event)
        self.listener.heard.clear()
        coverage = Coverage()
        with record_coverage(coverage) if form == "observed" else contextlib.nullcontext():
            outcome = self.tracker.apply(in_form(sent, form))
        effect = self.model.apply(event)
        assert effect is not None
        if form == "observed":  # every transition a call's chart instance took is seen
            taken = sum(coverage.chart(CHART).taken.values())
            steps = 2 if event["type"] == "ready" else 1  # ready: into parsing, then out
            assert taken == (steps if effect.applied and event["type"] != "start" else 0), event
        assert self.listener.heard == told(event, effect), event
        seen = (outcome.applied, outcome.type, outcome.status, outcome.reason, outcome.message)
        expected = (
            effect.applied,
            event["type"],
            effect.status,
            effect.reason,
            message_of(event["type"], effect),
        )
        assert seen == expected, event
        assert bool(outcome) is effect.applied
        scribble(sent.get("result"))  # the caller's payload is not the tracker's (T16)
        scribble(sent.get("error"))
        return outcome.applied

    def create(self, key: str) -> None:
        self.apply({"type": "start", "id": call_id(key), "name": "search"})

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None:
        if event not in WIRE:
            with pytest.raises(InvalidEvent) as raised:  # the wire has no such event type
                self.tracker.apply({"type": event, "id": call_id(key)})
            assert raised.value.field == "type"
            return False
        wire: dict[str, Any] = {"type": WIRE[event], "id": call_id(key)}
        if event == "delta":
            wire["argsTextDelta"] = payload["text"]
        elif event in ("result", "fail") and "value" in payload:
            wire[WIRE[event]] = payload["value"]
        return self.apply(wire, payload.get("form", "wire"))

    def configuration(self, key: str) -> set[str]:
        call = self.tracker.get(call_id(key))
        if call is None and call_id(key) in self.model.forgotten:  # T21: its instance is final
            return {self.model.forgotten[call_id(key)]}
        return set() if call is None else {call.status}


def with_form(strategy: st.SearchStrategy[Mapping[str, Any]]) -> Any:
    return st.tuples(strategy, st.sampled_from(FORMS)).map(
        lambda pair: {**pair[0], "form": pair[1]}
    )


CHART = compile_chart(ToolCallChart)
#: This tracker's own limit (T13): arguments nested deeper than 256 levels do not parse.
DEEP = [
    "[" * 256 + "]" * 256,
    "[" + "1, " * 120 + "9007199254740993]",
    "[" + "1" * 311 + "]",
    "[" + "[], " * 300 + "[]]",  # 602 brackets, two levels deep: parses
    '{"a": ' * 257 + "0" + "}" * 257,  # objects alone nest too deep
    "[" * 257 + "]" * 257,
    '{"a": ' * 200 + "[" * 57 + "0" + "]" * 57 + "}" * 200,
    '"' + "[" * 300 + '"',
    "[" * 200,
    "]" * 200,
]
TRACKER_PAYLOADS = {
    **{event: with_form(strategy) for event, strategy in PAYLOADS.items()},
    "delta": with_form(
        st.one_of(PAYLOADS["delta"], st.sampled_from(DEEP).map(lambda text: {"text": text}))
    ),
    "ready": with_form(st.just({})),
}


#: Candidate ``max_history`` values (T21): the boundary, bools (an ``int`` subclass), an
#: ``int`` subclass, numbers of other types, text.
LIMITS = st.sampled_from(
    [1, None, 0, 2, True, -1, 1.0, False, Count(1), "2", 2.5, Count(0), Tag.start, 10**20]
)


def record(key: str) -> ToolCallModel:
    return ToolCallModel(key, "search", 0)


PATHS = transition_cover(CHART, CANDIDATES, model=record)
DerivedTrackerMachine = chart_machine(
    CHART,
    TrackerAdapter,
    payloads=TRACKER_PAYLOADS,
    model=record,
    max_instances=4,
    paths=PATHS,
)


class TrackerMachine(DerivedTrackerMachine):  # type: ignore[misc,valid-type]
    """The derived machine plus what the chart cannot say: duplicate starts and unknown ids
    are ignored, malformed events raise naming the field and change nothing, reads are copies,
    and a checkpoint restored mid-stream goes on as the original."""

    @property
    def adapter(self) -> TrackerAdapter:
        adapter: TrackerAdapter = self.runner.adapter
        return adapter

    @rule(key=DerivedTrackerMachine.keys, form=st.sampled_from(FORMS))
    def duplicate_start(self, key: str, form: str) -> None:
        if call_id(key) in self.adapter.model.forgotten:
            return  # a new start would begin a new call, which its chart instance cannot follow
        self.adapter.apply({"type": "start", "id": call_id(key), "name": "other"}, form)

    @initialize()
    def every_malformed_event_is_refused(self) -> None:
        """Each malformed event once, before anything else (the rule below draws them too)."""
        for event in MALFORMED:
            self.malformed(event)

    @rule(kind=st.sampled_from(["delta", "ready", "result", "error"]), form=st.sampled_from(FORMS))
    def unknown_id(self, kind: str, form: str) -> None:
        event: dict[str, Any] = {"type": kind, "id": "ghost"}
        if kind == "delta":
            event["argsTextDelta"] = "x"
        elif kind in ("result", "error"):
            event[kind] = "x"
        self.adapter.apply(event, form)

    @rule(event=malformed_events)
    def malformed(self, event: Any) -> None:
        before = self.adapter.tracker.snapshot()
        expected = expected_rejection(event)
        with pytest.raises(InvalidEvent) as raised:
            self.adapter.tracker.apply(event)
        error = raised.value
        assert (error.field, error.reason) == expected, event
        assert str(error) == f"invalid event: {error.field}: {error.reason}"
        assert self.adapter.tracker.snapshot() == before

    @rule()
    def checkpoint_and_restore(self) -> None:
        picture = json.loads(json.dumps(self.adapter.tracker.snapshot()))
        self.adapter.tracker = ToolCallTracker.restore(picture)
        self.adapter.tracker._listener = self.adapter.listener
        assert self.adapter.tracker.snapshot() == picture
        scribble(picture)  # the restored tracker holds its own copies (T16)

    @initialize(limit=LIMITS)
    def a_new_tracker_takes_only_a_valid_limit(self, limit: Any) -> None:
        """T21: ``max_history`` is ``None`` or a positive ``int`` (not a ``bool``); anything
        else raises ``ValueError`` saying so, and a valid limit is the new tracker's. Once
        per run (a rule would take steps from the events)."""
        problem = TrackerModel.limit_problem(limit)
        if problem is not None:
            with pytest.raises(ValueError, match="max_history") as raised:
                tool_call_streaming_state_machine(max_history=limit)
            assert str(raised.value) == problem
            return
        tracker = tool_call_streaming_state_machine(max_history=limit)
        assert tracker.max_history == limit
        assert (len(tracker), tracker.list()) == (0, [])

    @invariant()
    def everything_shown_equals_the_model(self) -> None:
        tracker, model = self.adapter.tracker, self.adapter.model
        calls = model.list()
        assert strict([call.to_dict() for call in tracker.list()]) == strict(calls)
        assert list(tracker) == [call["id"] for call in calls]
        assert len(tracker) == len(calls)
        assert tracker.max_history == model.max_history
        assert repr(tracker) == (
            f"<ToolCallTracker calls={len(calls)} max_history={model.max_history}>"
        )
        for call in calls:
            assert call["id"] in tracker
            shown = tracker.get(call["id"])
            assert shown is not None
            assert strict(shown.to_dict()) == strict(call)
            assert (shown.has_args, shown.has_result, shown.has_error) == (
                "args" in call,
                "result" in call,
                "error" in call,
            )
            for field in ("args", "result", "error"):
                if field not in call:  # UNSET: falsy, and written as such
                    assert not getattr(shown, field)
                    assert f"{field}=UNSET" in repr(shown)
            assert pickle.loads(pickle.dumps(shown)) == shown
            scribble(shown.to_dict())  # the wire shape is the view's copy (T16)
            assert strict(shown.to_dict()) == strict(call)
            scribble(shown.args)  # a snapshot is a copy (T16)
            scribble(shown.result)
            scribble(shown.error)
        assert strict([call.to_dict() for call in tracker.list()]) == strict(calls)
        for call_id in model.forgotten:
            assert tracker.get(call_id) is None
            assert call_id not in tracker
        assert tracker.get("ghost") is None
        # What the session reads: the live records of unfinished calls, and any one record.
        unfinished = [(record.id, status) for record, status in tracker._unfinished()]
        assert unfinished == [
            (call["id"], call["status"])
            for call in calls
            if call["status"] in ("pending", "running")
        ]
        for call in calls:
            live = tracker._record(call["id"])
            assert live is not None
            assert (live.id, live.name, live.args_text) == (
                call["id"],
                call["name"],
                call["argsText"],
            )
        assert tracker._record("ghost") is None


TestTrackerMatchesTheChartAndTheModel = TrackerMachine.TestCase
TestTrackerMatchesTheChartAndTheModel.settings = settings(stateful_step_count=60)


class BoundedAdapter(TrackerAdapter):
    max_history = 2


BoundedTrackerMachine = type(
    "BoundedTrackerMachine",
    (TrackerMachine,),
    {"adapter_factory": staticmethod(BoundedAdapter), "__module__": __name__},
)
TestBoundedTrackerMatchesTheModel = BoundedTrackerMachine.TestCase
TestBoundedTrackerMatchesTheModel.settings = settings(stateful_step_count=60)


def test_max_history_must_be_a_positive_int() -> None:
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="max_history must be a positive int") as raised:
            ToolCallTracker(max_history=bad)  # type: ignore[arg-type]
        assert str(raised.value) == f"max_history must be a positive int or None, got {bad!r}"


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


@given(value=json_values)
def test_the_model_parses_arguments_as_the_tracker_does(value: Any) -> None:
    """The suite's independent parser and the tracker's agree on whole values (the derived
    tests then compare them on fragments too)."""
    tracker = ToolCallTracker()
    model = SeedModel()
    for event in (
        {"type": "start", "id": "a", "name": "search"},
        {"type": "delta", "id": "a", "argsTextDelta": json.dumps(value)},
        {"type": "ready", "id": "a"},
    ):
        tracker.apply(event)
        model.apply(event)
    assert strict([call.to_dict() for call in tracker.list()]) == strict(model.list())
