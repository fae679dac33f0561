"""Checkpoints: ``snapshot()`` is versioned JSON and ``restore`` rebuilds the tracker exactly."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from toolcalls import SnapshotError, ToolCallTracker

from .test_tracker import delta, error, feed, ready, result, start


def mid_stream() -> ToolCallTracker:
    """A tracker with a call in every status, and one still streaming."""
    tracker = ToolCallTracker(max_history=10)
    feed(
        tracker,
        start("pending", "search"),
        delta("pending", '{"q": "par'),
        start("running", "weather"),
        delta("running", '{"city": "Oslo"}'),
        ready("running"),
        start("done", "now"),
        delta("done", "{}"),
        ready("done"),
        result("done", {"time": "12:00", "tz": None}),
        start("failed", "fetch"),
        delta("failed", "{bad"),
        ready("failed"),
        start("null", "noop"),
        delta("null", "null"),
        ready("null"),
        result("null", None),
    )
    return tracker


def test_snapshot_is_a_versioned_json_picture_of_every_call() -> None:
    picture = mid_stream().snapshot()
    assert json.loads(json.dumps(picture)) == picture
    assert (picture["format"], picture["version"], picture["maxHistory"]) == (
        "toolcalls.tracker",
        1,
        10,
    )
    assert [(c["id"], c["status"]) for c in picture["calls"]] == [
        ("pending", "pending"),
        ("running", "running"),
        ("done", "done"),
        ("failed", "error"),
        ("null", "done"),
    ]
    assert picture["calls"][0] == {
        "id": "pending",
        "name": "search",
        "argsText": '{"q": "par',
        "status": "pending",
    }


def test_restore_rebuilds_the_tracker_exactly_and_it_keeps_streaming() -> None:
    original = mid_stream()
    restored = ToolCallTracker.restore(json.loads(json.dumps(original.snapshot())))
    assert restored.snapshot() == original.snapshot()
    assert restored.list() == original.list()
    assert restored.max_history == 10
    for tracker in (original, restored):
        feed(
            tracker,
            delta("pending", 'is"}'),
            ready("pending"),
            result("running", 7),
            start("done", "again"),
            start("new", "x"),
        )
    assert restored.snapshot() == original.snapshot()
    assert restored.get("pending").args == {"q": "paris"}  # type: ignore[union-attr]


def test_restore_keeps_eviction_order() -> None:
    tracker = ToolCallTracker(max_history=3)
    feed(tracker, start("a"), start("b"), start("c"), error("b", "x"), error("a", "x"))
    restored = ToolCallTracker.restore(tracker.snapshot())
    for each in (tracker, restored):
        each.apply(start("d"))
    assert list(restored) == list(tracker) == ["b", "c", "d"]


def test_snapshot_of_a_result_json_cannot_hold_names_the_call() -> None:
    tracker = mid_stream()
    tracker.apply(result("running", {"when": {1, 2}}))
    with pytest.raises(SnapshotError) as caught:
        tracker.snapshot()
    assert caught.value.field == "calls.1.result"
    assert "not representable as JSON" in caught.value.reason


def test_restore_rejects_an_unknown_version() -> None:
    picture = mid_stream().snapshot()
    picture["version"] = 2
    with pytest.raises(
        SnapshotError, match=r"version: unsupported version 2 \(this library reads 1\)"
    ):
        ToolCallTracker.restore(picture)


def damage(
    path: list[Any], value: Any = None, delete: bool = False, text: str | None = None
) -> dict[str, Any]:
    """The picture of ``mid_stream()`` with one value changed (or deleted); ``text`` replaces
    the argsText of the call the path goes into."""
    picture = copy.deepcopy(mid_stream().snapshot())
    if text is not None:
        picture["calls"][path[1]]["argsText"] = text
    target: Any = picture
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return picture


DAMAGED = [
    ("not a mapping", ["x"], "snapshot", "expected a JSON object"),
    ("wrong format", damage(["format"], "other"), "format", "expected 'toolcalls.tracker'"),
    ("no calls", damage(["calls"], delete=True), "calls", "Field required"),
    ("calls not a list", damage(["calls"], {}), "calls", "Input should be a valid list"),
    ("bad maxHistory", damage(["maxHistory"], 0), "maxHistory", "Input should be greater"),
    ("unknown key", damage(["extra"], 1), "extra", "Extra inputs are not permitted"),
    ("call without id", damage(["calls", 0, "id"], delete=True), "calls.0.id", "Field required"),
    ("empty name", damage(["calls", 1, "name"], ""), "calls.1.name", "String should have"),
    ("bad status", damage(["calls", 1, "status"], "paused"), "calls.1.status", "Input should be"),
    ("argsText not text", damage(["calls", 0, "argsText"], 3), "calls.0.argsText", "Input should"),
    ("pending with args", damage(["calls", 0, "args"], {}), "calls.0.args", "must be absent"),
    (
        "running without args",
        damage(["calls", 1, "args"], delete=True),
        "calls.1.args",
        "is missing",
    ),
    ("error on done", damage(["calls", 2, "error"], "x"), "calls.2.error", "must be absent"),
    ("result on error", damage(["calls", 3, "result"], 1), "calls.3.result", "must be absent"),
    (
        "args mismatch",
        damage(["calls", 1, "args"], {"city": "Rome"}),
        "calls.1.args",
        "does not match",
    ),
    (
        "true for 1 in args",
        damage(
            ["calls", 1, "args"],
            {"city": "Oslo", "days": True},
            text='{"city": "Oslo", "days": 1}',
        ),
        "calls.1.args",
        "does not match",
    ),
    (
        "1.0 for 1 in args",
        damage(
            ["calls", 1, "args"], {"city": "Oslo", "days": 1.0}, text='{"city": "Oslo", "days": 1}'
        ),
        "calls.1.args",
        "does not match",
    ),
    (
        "1 for 1.0 in args",
        damage(
            ["calls", 1, "args"], {"city": "Oslo", "days": 1}, text='{"city": "Oslo", "days": 1.0}'
        ),
        "calls.1.args",
        "does not match",
    ),
    ("version true", damage(["version"], True), "version", "unsupported version True"),
    ("version 1.0", damage(["version"], 1.0), "version", "unsupported version 1.0"),
    ("result not JSON", damage(["calls", 2, "result"], {1, 2}), "calls.2.result", "not repr"),
    (
        "duplicate id",
        damage(["calls", 1, "id"], "pending"),
        "calls.1.id",
        "duplicate id 'pending'",
    ),
    ("over history", damage(["maxHistory"], 2), "calls", "5 calls exceed maxHistory 2"),
]


@pytest.mark.parametrize(
    ("label", "picture", "field", "reason"), DAMAGED, ids=[d[0] for d in DAMAGED]
)
def test_restore_rejects_a_damaged_snapshot_naming_the_field(
    label: str, picture: Any, field: str, reason: str
) -> None:
    with pytest.raises(SnapshotError) as caught:
        ToolCallTracker.restore(picture)
    assert isinstance(caught.value, ValueError)
    assert caught.value.field == field
    assert caught.value.reason.startswith(reason), caught.value.reason


def test_restore_compares_args_with_argstext_by_json_type_and_value() -> None:
    tracker = ToolCallTracker()
    feed(tracker, start("c"), delta("c", '{"n": 1, "f": 1.5, "b": true, "l": [0, false]}'))
    tracker.apply(ready("c"))
    picture = tracker.snapshot()
    assert ToolCallTracker.restore(picture).get("c") == tracker.get("c")
    for args in (
        {"n": True, "f": 1.5, "b": True, "l": [0, False]},
        {"n": 1, "f": 1.5, "b": 1, "l": [0, False]},
        {"n": 1, "f": 1.5, "b": True, "l": [False, False]},
        {"n": 1, "f": 1.5, "b": True, "l": [0]},
        {"n": 1, "f": 1.5, "b": True},
    ):
        picture["calls"][0]["args"] = args
        with pytest.raises(SnapshotError, match=r"calls\.0\.args: does not match"):
            ToolCallTracker.restore(picture)


def test_snapshot_refuses_keys_that_become_the_same_json_key() -> None:
    tracker = mid_stream()
    tracker.apply(result("running", {"outer": {1: "a", "1": "b"}}))
    with pytest.raises(SnapshotError) as caught:
        tracker.snapshot()
    assert caught.value.field == "calls.1.result"
    assert caught.value.reason == "two keys of one mapping both become the JSON key '1'"


def test_snapshot_writes_other_keys_as_json_strings() -> None:
    tracker = mid_stream()
    tracker.apply(result("running", {1: "a", None: "b", 2.5: "c"}))
    picture = tracker.snapshot()
    assert picture["calls"][1]["result"] == {"1": "a", "null": "b", "2.5": "c"}
    assert ToolCallTracker.restore(picture).snapshot() == picture


def test_restore_of_a_result_nested_too_deeply_for_json_names_the_call() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    picture = mid_stream().snapshot()
    picture["calls"][2]["result"] = deep
    with pytest.raises(SnapshotError) as caught:
        ToolCallTracker.restore(picture)
    assert (caught.value.field, caught.value.reason) == (
        "calls.2.result",
        "nests too deeply to write as JSON",
    )


def test_restored_tracker_shares_nothing_with_the_snapshot_it_came_from() -> None:
    picture = mid_stream().snapshot()
    restored = ToolCallTracker.restore(picture)
    picture["calls"][1]["args"]["city"] = "Rome"
    picture["calls"][2]["result"]["tz"] = "UTC"
    assert restored.get("running").args == {"city": "Oslo"}  # type: ignore[union-attr]
    assert restored.get("done").result == {"time": "12:00", "tz": None}  # type: ignore[union-attr]
