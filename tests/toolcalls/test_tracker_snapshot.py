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


def damage(path: list[Any], value: Any = None, delete: bool = False) -> dict[str, Any]:
    picture = copy.deepcopy(mid_stream().snapshot())
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
    (
        "done without result",
        damage(["calls", 2, "result"], delete=True),
        "calls.2.result",
        "is missing",
    ),
    (
        "error without error",
        damage(["calls", 3, "error"], delete=True),
        "calls.3.error",
        "is missing",
    ),
    ("null error", damage(["calls", 3, "error"], None), "calls.3.error", "must not be null"),
    ("result on error", damage(["calls", 3, "result"], 1), "calls.3.result", "must be absent"),
    (
        "args mismatch",
        damage(["calls", 1, "args"], {"city": "Rome"}),
        "calls.1.args",
        "does not match",
    ),
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
