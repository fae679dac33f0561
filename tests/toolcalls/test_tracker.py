"""Every rule of section T of docs/spec.md (the tracker), one test each, named after it; each
section below names the rules it checks (T22, checkpoints, is in test_tracker_snapshot.py)."""

from __future__ import annotations

import json
from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import pytest

from toolcalls import (
    UNSET,
    ApplyOutcome,
    InvalidEvent,
    ToolCallChart,
    ToolCallTracker,
    ToolCallView,
    tool_call_streaming_state_machine,
)
from toolcalls.events import DeltaEvent, ErrorEvent, ReadyEvent, ResultEvent, StartEvent


def start(call_id: str, name: str = "search") -> dict[str, Any]:
    return {"type": "start", "id": call_id, "name": name}


def delta(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "delta", "id": call_id, "argsTextDelta": text}


def ready(call_id: str) -> dict[str, Any]:
    return {"type": "ready", "id": call_id}


def result(call_id: str, value: Any) -> dict[str, Any]:
    return {"type": "result", "id": call_id, "result": value}


def error(call_id: str, value: Any) -> dict[str, Any]:
    return {"type": "error", "id": call_id, "error": value}


def feed(tracker: ToolCallTracker, *events: dict[str, Any]) -> list[ApplyOutcome]:
    return [tracker.apply(event) for event in events]


def call_in(status: str, call_id: str = "c") -> ToolCallTracker:
    """A tracker holding one call in ``status``."""
    tracker = ToolCallTracker()
    feed(tracker, start(call_id), delta(call_id, '{"q": 1}'))
    if status in ("running", "done"):
        tracker.apply(ready(call_id))
    if status == "done":
        tracker.apply(result(call_id, "ok"))
    if status == "error":
        tracker.apply(error(call_id, "boom"))
    assert tracker.get(call_id).status == status  # type: ignore[union-attr]
    return tracker


# -- T1, T2, T15: the worked examples -------------------------------------------------------------


def test_worked_example_streams_a_call_to_running_and_round_trips_exactly() -> None:
    m = tool_call_streaming_state_machine()
    m.apply({"type": "start", "id": "t1", "name": "search"})
    m.apply({"type": "delta", "id": "t1", "argsTextDelta": '{"q":'})
    m.apply({"type": "delta", "id": "t1", "argsTextDelta": '"hi"}'})
    m.apply({"type": "ready", "id": "t1"})
    call = m.get("t1")
    assert call is not None
    assert call.to_dict() == {
        "id": "t1",
        "name": "search",
        "argsText": '{"q":"hi"}',
        "args": {"q": "hi"},
        "status": "running",
    }
    assert list(call.to_dict()) == ["id", "name", "argsText", "args", "status"]


def test_worked_example_out_of_order_result_is_ignored_not_fatal() -> None:
    m = tool_call_streaming_state_machine()
    m.apply({"type": "start", "id": "t2", "name": "now"})
    outcome = m.apply({"type": "result", "id": "t2", "result": 42})
    assert m.get("t2").status == "pending"  # type: ignore[union-attr]
    assert outcome == ApplyOutcome(False, "result", "pending", "not_allowed")


# -- T5: route by id ---------------------------------------------------------------------------


def test_route_by_id_keeps_interleaved_calls_apart() -> None:
    tracker = ToolCallTracker()
    feed(
        tracker,
        start("a", "search"),
        start("b", "weather"),
        delta("a", '{"q":'),
        delta("b", '{"city":'),
        delta("a", '"x"}'),
        ready("b"),
        delta("b", '"Oslo"}'),
        ready("a"),
    )
    a, b = tracker.get("a"), tracker.get("b")
    assert a == ToolCallView(
        id="a", name="search", args_text='{"q":"x"}', args={"q": "x"}, status="running"
    )
    assert b is not None
    assert (b.args_text, b.status, b.has_args) == ('{"city":', "error", False)


# -- T6, T7, T20: accumulate, then parse -------------------------------------------------------


def test_accumulate_then_parse_keeps_raw_text_while_pending() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", '{"q": '), delta("c", "[1, 2"))
    call = tracker.get("c")
    assert call is not None
    assert (call.args_text, call.args, call.status) == ('{"q": [1, 2', UNSET, "pending")
    tracker.apply(delta("c", "]}"))
    tracker.apply(ready("c"))
    assert tracker.get("c").args == {"q": [1, 2]}  # type: ignore[union-attr]


def test_accumulation_keeps_fragments_and_joins_them_once() -> None:
    tracker = ToolCallTracker()
    tracker.apply(start("c"))
    for _ in range(1000):
        tracker.apply(delta("c", "ab"))
    record = tracker._calls["c"].model
    assert len(record.parts) == 1000
    assert tracker.get("c").args_text == "ab" * 1000  # type: ignore[union-attr]
    assert record.parts == ["ab" * 1000]


def test_ready_with_no_deltas_parses_the_empty_text_and_fails() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), ready("c"))
    call = tracker.get("c")
    assert call is not None
    assert call.status == "error"
    assert call.error["message"] == "arguments are not valid JSON: Expecting value"


# -- T3, T4, T9, T10: guard every transition ---------------------------------------------------

#: (status, event) -> status after, for every event T3 and T4 allow; all others are ignored.
ALLOWED = {
    ("pending", "delta"): "pending",
    ("pending", "ready"): "running",
    ("pending", "error"): "error",
    ("running", "result"): "done",
    ("running", "error"): "error",
}
EVENTS = {
    "delta": delta("c", "{}"),
    "ready": ready("c"),
    "result": result("c", 1),
    "error": error("c", "x"),
}


@pytest.mark.parametrize("status", ["pending", "running", "done", "error"])
@pytest.mark.parametrize("kind", ["delta", "ready", "result", "error"])
def test_guard_every_transition_in_every_status(status: str, kind: str) -> None:
    tracker = call_in(status)
    before = tracker.get("c")
    outcome = tracker.apply(EVENTS[kind])
    expected = ALLOWED.get((status, kind))
    if expected is None:
        assert outcome == ApplyOutcome(False, kind, status, "not_allowed")  # type: ignore[arg-type]
        assert tracker.get("c") == before
    else:
        assert outcome.applied
        assert tracker.get("c").status == expected  # type: ignore[union-attr]


def test_delta_after_ready_is_ignored() -> None:
    tracker = call_in("running")
    assert tracker.apply(delta("c", "more")).reason == "not_allowed"
    assert tracker.get("c").args_text == '{"q": 1}'  # type: ignore[union-attr]


def test_result_while_pending_is_ignored() -> None:
    tracker = call_in("pending")
    assert tracker.apply(result("c", 1)).reason == "not_allowed"
    assert tracker.get("c").has_result is False  # type: ignore[union-attr]


def test_error_after_done_is_ignored() -> None:
    tracker = call_in("done")
    assert tracker.apply(error("c", "late")).reason == "not_allowed"
    call = tracker.get("c")
    assert call is not None
    assert (call.status, call.result, call.error) == ("done", "ok", UNSET)


def test_ready_twice_is_ignored_the_second_time() -> None:
    tracker = call_in("running")
    assert tracker.apply(ready("c")) == ApplyOutcome(False, "ready", "running", "not_allowed")


def test_error_while_running_records_the_error_and_keeps_the_args() -> None:
    tracker = call_in("running")
    tracker.apply(error("c", {"code": 503}))
    call = tracker.get("c")
    assert call is not None
    assert call.to_dict() == {
        "id": "c",
        "name": "search",
        "argsText": '{"q": 1}',
        "args": {"q": 1},
        "status": "error",
        "error": {"code": 503},
    }


# -- T8, T13: parse failure is an error (JSON.parse semantics) ---------------------------------


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("", "Expecting value", 0),
        ("NaN", "NaN is not a JSON value", 0),
        ('{"x": Infinity}', "Infinity is not a JSON value", 6),
        ("[-Infinity]", "-Infinity is not a JSON value", 1),
        ('{"q": 1', "Expecting ',' delimiter", 7),
        ("{'q': 1}", "Expecting property name enclosed in double quotes", 1),
        ("[1,]", "Expecting value", 3),
        ("01", "Extra data", 1),
        ("\ufeff{}", "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0),
        ('{"big": 1e400}', "number 1e400 is out of range", 8),
        ("[" * 257 + "]" * 257, "arguments nest deeper than 256 levels", 256),
    ],
)
def test_parse_failure_is_an_error_with_message_and_position(
    text: str, message: str, position: int
) -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", text))
    outcome = tracker.apply(ready("c"))
    assert outcome == ApplyOutcome(True, "ready", "error")
    call = tracker.get("c")
    assert call is not None
    assert call.has_args is False
    assert call.error["type"] == "invalid_arguments"
    assert call.error["message"] == f"arguments are not valid JSON: {message}"
    assert call.error["position"] == position


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ('  {"q": "hi"}\n\t', {"q": "hi"}),
        ("null", None),
        ('"just a string"', "just a string"),
        ('{"s": "NaN inside a string"}', {"s": "NaN inside a string"}),
        ('{"a": 1, "a": 2}', {"a": 2}),
        ('"\\ud83d\\ude00"', "\U0001f600"),
        ("[1.5e300, -2, 12345678901234567890]", [1.5e300, -2, 12345678901234567890]),
    ],
)
def test_arguments_parse_as_json_parse_accepts(text: str, args: Any) -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", text), ready("c"))
    call = tracker.get("c")
    assert call is not None
    assert (call.status, call.args) == ("running", args)


# -- T13: numbers: integers kept exact, every number within a double's range -------------------

#: The largest double; an integer literal at it is in range, the next digits past it are not.
MAX_DOUBLE_INT = int(1.7976931348623157e308)


@pytest.mark.parametrize(
    "text",
    [
        "1e400",
        "-1e400",
        "1" + "0" * 400,
        "-1" + "0" * 400,
        "1" + "0" * 309,
        str(MAX_DOUBLE_INT * 2),
        "1" * 5000,
    ],
)
def test_numbers_outside_a_doubles_range_fail_to_parse_integer_or_not(text: str) -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", f"[{text}]"), ready("c"))
    call = tracker.get("c")
    assert call is not None
    assert call.status == "error"
    assert call.error["message"].startswith("arguments are not valid JSON: number ")
    assert call.error["message"].endswith(" is out of range")
    assert call.error["position"] == 1


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (str(2**53 + 1), 2**53 + 1),
        (str(-(2**63) - 1), -(2**63) - 1),
        (str(MAX_DOUBLE_INT), MAX_DOUBLE_INT),
        ("1e308", 1e308),
        ("-0", 0),
    ],
)
def test_integers_are_kept_exact_within_a_doubles_range(text: str, value: int | float) -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", f"[{text}]"), ready("c"))
    call = tracker.get("c")
    assert call is not None
    assert call.args == [value]
    assert type(call.args[0]) is type(value)
    assert ToolCallTracker.restore(tracker.snapshot()).get("c") == call


# -- T27, T13, T18: text as JavaScript holds it; nesting; string subclasses --------------------


def test_a_surrogate_pair_split_across_deltas_is_one_character() -> None:
    tracker = ToolCallTracker()
    feed(
        tracker,
        start("c"),
        delta("c", '{"face": "\ud83d'),
        delta("c", '\ude00!"}'),
        ready("c"),
    )
    call = tracker.get("c")
    assert call is not None
    assert call.args == {"face": "\U0001f600!"}
    assert call.args_text == '{"face": "\U0001f600!"}'
    assert call.args_text.encode("utf-8")  # encodable: no lone surrogate left
    assert ToolCallTracker.restore(tracker.snapshot()).get("c") == call


def test_a_lone_surrogate_stays_and_the_snapshot_restores() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", '["a\ud800"]'))
    tracker.apply(ready("c"))
    call = tracker.get("c")
    assert call is not None
    assert call.args == ["a\ud800"]
    restored = ToolCallTracker.restore(json.loads(json.dumps(tracker.snapshot())))
    assert restored.get("c") == call


def test_a_pair_in_one_fragment_and_an_escaped_pair_are_the_same_character() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("a"), delta("a", '"\ud83d\ude00"'))
    feed(tracker, start("b"), delta("b", '"\\ud83d\\ude00"'))
    feed(tracker, ready("a"), ready("b"))
    assert tracker.get("a").args == tracker.get("b").args == "\U0001f600"  # type: ignore[union-attr]


def test_deeply_nested_arguments_fail_cleanly() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", "[" * 100_000 + "]" * 100_000), ready("c"))
    call = tracker.get("c")
    assert call is not None
    assert call.status == "error"
    assert (
        call.error["message"]
        == "arguments are not valid JSON: arguments nest deeper than 256 levels"
    )


def test_arguments_nested_to_the_limit_stay_readable_and_snapshot() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", "[" * 256 + "]" * 256), ready("c"))
    assert tracker.get("c").status == "running"  # type: ignore[union-attr]
    assert len(tracker.list()) == 1
    assert ToolCallTracker.restore(tracker.snapshot()).snapshot() == tracker.snapshot()


def test_string_subclasses_are_accepted_as_strings() -> None:
    from enum import StrEnum

    class Kind(StrEnum):
        START = "start"
        DELTA = "delta"

    tracker = ToolCallTracker()
    assert tracker.apply({"type": Kind.START, "id": Kind.DELTA, "name": Kind.START}).applied
    assert tracker.apply({"type": Kind.DELTA, "id": "delta", "argsTextDelta": Kind.DELTA}).applied
    call = tracker.get("delta")
    assert call is not None
    assert (type(call.id), call.name, type(call.name), call.args_text) == (
        str,
        "start",
        str,
        "delta",
    )


# -- T11, T12: duplicate start, unknown ids ----------------------------------------------------


def test_second_start_for_a_tracked_id_is_ignored_and_the_first_wins() -> None:
    tracker = call_in("running")
    outcome = tracker.apply(start("c", "other"))
    assert outcome == ApplyOutcome(False, "start", "running", "duplicate_start")
    assert tracker.get("c").name == "search"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "event", [delta("ghost", "x"), ready("ghost"), result("ghost", 1), error("ghost", "x")]
)
def test_events_for_unknown_ids_are_ignored(event: dict[str, Any]) -> None:
    tracker = call_in("pending")
    outcome = tracker.apply(event)
    assert outcome == ApplyOutcome(False, event["type"], None, "unknown_id")
    assert tracker.get("ghost") is None
    assert len(tracker) == 1


# -- T14, T26: unset keys are absent; None is a result -----------------------------------------


def test_none_result_is_a_result() -> None:
    tracker = call_in("running")
    assert tracker.apply(result("c", None)).applied
    call = tracker.get("c")
    assert call is not None
    assert (call.status, call.result, call.has_result) == ("done", None, True)
    assert call.to_dict()["result"] is None


@pytest.mark.parametrize("model", [False, True])
def test_a_result_event_without_a_result_ends_the_call_done_with_no_result(model: bool) -> None:
    tracker = call_in("running")
    event = ResultEvent(id="c") if model else {"type": "result", "id": "c"}
    assert tracker.apply(event) == ApplyOutcome(True, "result", "done")
    call = tracker.get("c")
    assert call is not None
    assert (call.status, call.has_result, call.result) == ("done", False, UNSET)
    assert "result" not in call.to_dict()
    assert ToolCallTracker.restore(tracker.snapshot()).get("c") == call


@pytest.mark.parametrize("status", ["pending", "running"])
def test_an_error_event_without_an_error_ends_the_call_in_error_with_no_error(
    status: str,
) -> None:
    tracker = call_in(status)
    assert tracker.apply({"type": "error", "id": "c"}) == ApplyOutcome(True, "error", "error")
    call = tracker.get("c")
    assert call is not None
    assert (call.status, call.has_error) == ("error", False)
    assert "error" not in call.to_dict()
    assert ToolCallTracker.restore(tracker.snapshot()).get("c") == call


def test_an_error_event_with_a_null_error_keeps_null_as_the_error() -> None:
    tracker = call_in("running")
    assert tracker.apply(ErrorEvent(id="c", error=None)).applied
    call = tracker.get("c")
    assert call is not None
    assert (call.status, call.has_error, call.error) == ("error", True, None)
    assert call.to_dict()["error"] is None
    assert ToolCallTracker.restore(tracker.snapshot()).get("c") == call


def test_keys_not_set_are_absent_from_the_wire_shape() -> None:
    assert call_in("pending").get("c").to_dict() == {  # type: ignore[union-attr]
        "id": "c",
        "name": "search",
        "argsText": '{"q": 1}',
        "status": "pending",
    }
    assert set(call_in("done").get("c").to_dict()) == {  # type: ignore[union-attr]
        "id",
        "name",
        "argsText",
        "args",
        "status",
        "result",
    }
    assert set(call_in("error").get("c").to_dict()) == {  # type: ignore[union-attr]
        "id",
        "name",
        "argsText",
        "status",
        "error",
    }


def test_null_arguments_are_arguments() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", "null"), ready("c"))
    assert tracker.get("c").to_dict()["args"] is None  # type: ignore[union-attr]


def test_unset_is_a_falsy_singleton_distinct_from_none() -> None:
    import copy
    import pickle

    assert not UNSET
    assert UNSET is not None
    assert repr(UNSET) == "UNSET"
    assert copy.deepcopy(UNSET) is UNSET
    assert pickle.loads(pickle.dumps(UNSET)) is UNSET


# -- T16: immutable views, start order ---------------------------------------------------------


def test_get_returns_an_immutable_view_or_none() -> None:
    tracker = call_in("running")
    call = tracker.get("c")
    assert call is not None
    with pytest.raises(AttributeError):
        call.status = "done"  # type: ignore[misc]
    assert tracker.get("nope") is None


def test_changing_a_view_never_changes_the_tracker() -> None:
    tracker = call_in("running")
    call = tracker.get("c")
    assert call is not None
    call.args["q"] = "tampered"
    call.to_dict()["args"]["q"] = "tampered again"
    assert tracker.get("c").args == {"q": 1}  # type: ignore[union-attr]


def test_changing_an_applied_payload_never_changes_the_tracker() -> None:
    tracker = call_in("running")
    payload = {"hits": [1, 2]}
    tracker.apply(result("c", payload))
    payload["hits"].append(3)
    assert tracker.get("c").result == {"hits": [1, 2]}  # type: ignore[union-attr]


def test_list_returns_views_in_start_order() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("z"), start("a"), start("m"), delta("a", "{}"), ready("a"))
    assert [call.id for call in tracker.list()] == ["z", "a", "m"]
    assert list(tracker) == ["z", "a", "m"]
    assert "a" in tracker
    assert "q" not in tracker


# -- T19: outcomes with reasons ----------------------------------------------------------------


def test_outcome_says_why_an_event_was_ignored() -> None:
    tracker = call_in("done")
    assert (
        tracker.apply(delta("c", "x")).message
        == "delta ignored: not allowed while the call is done"
    )
    assert tracker.apply(ready("x")).message == "ready ignored: no call with that id"
    assert tracker.apply(start("c")).message == (
        "start ignored: the id is already tracked (call is done)"
    )
    applied = tracker.apply(start("d"))
    assert applied.message == "start applied; call is pending"
    assert bool(applied) is True
    assert bool(tracker.apply(ready("x"))) is False


# -- T17, T18: malformed events ----------------------------------------------------------------

MALFORMED = [
    (["start", "c"], "event", "expected a JSON object or an event model, got list"),
    ({"id": "c"}, "type", "missing (expected one of start, delta, ready, result, error)"),
    ({"type": "begin", "id": "c"}, "type", "unknown event type 'begin'"),
    ({"type": ["start"], "id": "c"}, "type", "unknown event type ['start']"),
    ({"type": "ready"}, "id", "missing (every event names its call)"),
    ({"type": "ready", "id": ""}, "id", "must not be empty"),
    ({"type": "ready", "id": 7}, "id", "must be a string, got int"),
    ({"type": "start", "id": "n"}, "name", "missing (the tool's name)"),
    ({"type": "start", "id": "n", "name": ""}, "name", "must not be empty"),
    (
        {"type": "start", "id": "n", "name": 3},
        "name",
        "must be a string (the tool's name), got int",
    ),
    ({"type": "delta", "id": "c"}, "argsTextDelta", "missing (a text fragment)"),
    ({"type": "delta", "id": "c", "argsTextDelta": 5}, "argsTextDelta", "must be a string"),
    ({"type": "delta", "id": "c", "argsTextDelta": None}, "argsTextDelta", "missing"),
]


@pytest.mark.parametrize(("event", "field", "reason"), MALFORMED)
def test_malformed_event_raises_invalid_event_naming_the_field_and_changes_nothing(
    event: Any, field: str, reason: str
) -> None:
    tracker = call_in("running")
    tracker.apply(start("n2"))
    before = tracker.snapshot()
    with pytest.raises(InvalidEvent) as caught:
        tracker.apply(event)
    assert isinstance(caught.value, ValueError)
    assert caught.value.field == field
    assert caught.value.reason.startswith(reason)
    assert str(caught.value).startswith(f"invalid event: {field}: ")
    assert tracker.snapshot() == before


def test_payload_that_cannot_be_copied_is_invalid_and_changes_nothing() -> None:
    import threading

    tracker = call_in("running")
    with pytest.raises(InvalidEvent, match="result: value cannot be copied"):
        tracker.apply(result("c", {"lock": threading.Lock()}))
    assert tracker.get("c").status == "running"  # type: ignore[union-attr]


def test_snake_case_keys_are_accepted() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), {"type": "delta", "id": "c", "args_text_delta": "[1]"}, ready("c"))
    assert tracker.get("c").args == [1]  # type: ignore[union-attr]


def test_event_models_and_other_mappings_are_accepted() -> None:
    tracker = ToolCallTracker()
    tracker.apply(StartEvent(id="c", name="search"))
    tracker.apply(DeltaEvent(id="c", args_text_delta='{"q":'))
    tracker.apply(MappingProxyType(delta("c", '"x"}')))
    tracker.apply(ReadyEvent(id="c"))
    tracker.apply(OrderedDict(result("c", [1])))
    call = tracker.get("c")
    assert call is not None
    assert (call.args, call.result) == ({"q": "x"}, [1])
    other = ToolCallTracker()
    other.apply(StartEvent(id="d", name="x"))
    other.apply(ErrorEvent(id="d", error="nope"))
    assert other.get("d").error == "nope"  # type: ignore[union-attr]
    assert ResultEvent(id="d", result=None).to_wire() == {
        "type": "result",
        "id": "d",
        "result": None,
    }
    assert ResultEvent(id="d").to_wire() == {"type": "result", "id": "d"}
    assert ErrorEvent(id="d").to_wire() == {"type": "error", "id": "d"}


def test_unknown_extra_keys_are_ignored() -> None:
    tracker = ToolCallTracker()
    tracker.apply({**start("c"), "index": 0, "providerMetadata": {}})
    assert tracker.get("c") is not None


# -- T21: long sessions: max_history -----------------------------------------------------------


def test_max_history_evicts_the_oldest_finished_calls_first() -> None:
    tracker = ToolCallTracker(max_history=3)
    for call_id in "abc":
        feed(tracker, start(call_id), delta(call_id, "{}"), ready(call_id))
    tracker.apply(result("b", 1))
    tracker.apply(result("a", 1))
    tracker.apply(start("d"))
    assert list(tracker) == ["b", "c", "d"]
    tracker.apply(error("c", "x"))
    tracker.apply(start("e"))
    assert list(tracker) == ["c", "d", "e"]


def test_max_history_never_evicts_a_pending_or_running_call() -> None:
    tracker = ToolCallTracker(max_history=2)
    for call_id in "abcd":
        tracker.apply(start(call_id))
    feed(tracker, delta("b", "{}"), ready("b"))
    assert list(tracker) == ["a", "b", "c", "d"]
    tracker.apply(error("c", "x"))
    assert list(tracker) == ["a", "b", "d"]
    tracker.apply(result("b", 1))
    assert list(tracker) == ["a", "d"]


def test_evicted_id_is_unknown_and_may_start_again() -> None:
    tracker = ToolCallTracker(max_history=1)
    feed(tracker, start("a"), error("a", "x"), start("b"))
    assert tracker.get("a") is None
    assert tracker.apply(ready("a")).reason == "unknown_id"
    assert tracker.apply(start("a")).applied


def test_max_history_is_unbounded_by_default() -> None:
    tracker = ToolCallTracker()
    for index in range(500):
        feed(tracker, start(str(index)), error(str(index), "x"))
    assert len(tracker) == 500
    assert tracker.max_history is None


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_max_history_must_be_a_positive_int(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_history must be a positive int or None"):
        ToolCallTracker(max_history=bad)


def test_tracker_declares_its_chart_once() -> None:
    """T7, T9, T24: the rules live in the chart (the wire's error is its fail); the tracker
    routes. Parsing is a step the chart declares: ``ready`` enters ``parsing``, whose entry
    action parses, and two eventless transitions leave it by what the parse produced."""
    from statecharts import compile_chart

    chart = compile_chart(ToolCallChart)
    assert [s.id for s in chart.states] == ["pending", "parsing", "running", "done", "error"]
    assert [e.id for e in chart.events] == ["delta", "ready", "result", "fail"]
    assert json.dumps([t.id for t in chart.transitions]) == json.dumps(
        [
            "pending:delta:pending",
            "pending:ready:parsing",
            "pending:fail:error",
            "parsing::running",
            "parsing::error",
            "running:result:done",
            "running:fail:error",
        ]
    )
    [parsing] = [s for s in chart.states if s.id == "parsing"]
    assert [callback.ref for callback in parsing.enter if not callback.convention] == [
        "parse_arguments"
    ]


def test_parsing_is_never_a_calls_status() -> None:
    """T3, T7: ``parsing`` is left in the step that entered it, so no call ever rests there:
    not after a valid ready, not after an invalid one, not in a snapshot."""
    tracker = ToolCallTracker()
    for call_id, text in (("ok", '{"q": 1}'), ("bad", "{")):
        tracker.apply({"type": "start", "id": call_id, "name": "f"})
        tracker.apply({"type": "delta", "id": call_id, "argsTextDelta": text})
        outcome = tracker.apply({"type": "ready", "id": call_id})
        assert outcome.applied
        assert outcome.status in ("running", "error")
    assert [call.status for call in tracker.list()] == ["running", "error"]
    assert tracker.get("ok").args == {"q": 1}  # type: ignore[union-attr]
    assert tracker.get("bad").error["type"] == "invalid_arguments"  # type: ignore[union-attr]
    assert "parsing" not in json.dumps(tracker.snapshot())


def test_tracker_is_sans_io_no_event_loop_no_threads() -> None:
    """T23: events in, outcomes out; nothing is started and no loop is needed."""
    import asyncio
    import threading

    threads = threading.active_count()
    tracker = ToolCallTracker()
    for event in (
        {"type": "start", "id": "a", "name": "search"},
        {"type": "delta", "id": "a", "argsTextDelta": "{}"},
        {"type": "ready", "id": "a"},
        {"type": "result", "id": "a", "result": 1},
    ):
        assert tracker.apply(event).applied
    assert threading.active_count() == threads
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()


def test_chart_coverage_records_every_delta_the_tracker_applies() -> None:
    from statecharts import Coverage, compile_chart
    from statecharts.testing import record_coverage

    with record_coverage(Coverage()) as coverage:
        tracker = ToolCallTracker()
        feed(tracker, start("c"), delta("c", '{"q": '), delta("c", "1}"), ready("c"))
        tracker.apply(delta("c", "late"))
    counts = coverage.chart(compile_chart(ToolCallChart))
    assert counts.taken["pending:delta:pending"] == 2
    assert counts.ignored == {"running": {"delta": 1}}


def test_the_fast_delta_path_does_what_the_charts_delta_transition_does() -> None:
    """The tracker appends a fragment itself only while the chart's delta is nothing but its
    action: what sending ``delta`` through the chart leaves on a record is what it leaves."""
    from toolcalls import _tracker
    from toolcalls._record import ToolCallModel

    assert _tracker._DELTA_ONLY_APPENDS
    through_chart = _tracker._CHART.create(ToolCallModel("c", "t", 0))
    assert through_chart.send("delta", text='{"q": ').applied
    assert through_chart.send("delta", text="1}").applied
    tracker = ToolCallTracker()
    feed(tracker, start("c", "t"), delta("c", '{"q": '), delta("c", "1}"))
    fast = tracker._record("c")
    assert fast is not None
    chart_record = through_chart.model
    for field in ToolCallModel.__slots__:
        assert getattr(fast, field) == getattr(chart_record, field), field
    assert fast.args_text == chart_record.args_text == '{"q": 1}'


def test_the_fast_delta_path_is_off_when_a_conventional_callback_would_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolcalls import _tracker
    from toolcalls._record import ToolCallModel

    monkeypatch.setattr(ToolCallModel, "on_delta", lambda self: None, raising=False)
    assert not _tracker._delta_only_appends()
    monkeypatch.undo()
    monkeypatch.setattr(ToolCallChart, "before_transition", lambda self: None, raising=False)
    assert not _tracker._delta_only_appends()
    monkeypatch.undo()
    assert _tracker._delta_only_appends()


@pytest.mark.parametrize("event", ["result", "fail"])
def test_T26_the_chart_ends_a_call_sent_no_value(event: str) -> None:
    """T26: ``result`` and ``fail`` may come without their value. Sent so to the chart itself
    (as the derived tests and coverage do), the call ends with no value, not with a TypeError
    turned into an ignored ``error.execution``."""
    from statecharts import Coverage, compile_chart
    from statecharts.testing import record_coverage
    from toolcalls._record import UNSET, ToolCallModel

    chart = compile_chart(ToolCallChart)
    model = ToolCallModel("c", "t", 0)
    with record_coverage(Coverage()) as coverage:
        instance = chart.create(model)
        if event == "result":
            instance.send("delta", text="{}")
            instance.send("ready")
        outcome = instance.send(event)
    assert outcome.applied, outcome
    assert coverage.chart(chart).ignored == {}
    assert [s.id for s in instance.configuration] == ["done" if event == "result" else "error"]
    assert model.result is UNSET
    assert model.error is UNSET
