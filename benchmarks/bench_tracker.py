"""The streaming tracker against three references, measured in one run.

(a) 1,000 interleaved calls x 50 argument deltas each (plus start, ready and result), as plain
    dict events through ``apply`` with validation, against a hand-written dict-of-dicts tracker
    doing the same checks, one python-statemachine instance per call, and transitions;
(b) one call whose arguments (1 KB to 1 MB) stream in 4-character deltas: cost per delta at each
    size, which must stay flat (accumulation is linear);
(c) memory per finished call (tracemalloc), arguments aside, against the hand-written tracker.

Times are medians of repeated runs; ratios are against references measured in the same run.
Run: ``python benchmarks/bench_tracker.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from typing import Any

from transitions import Machine

from toolcalls import ToolCallChart, ToolCallTracker
from toolcalls._record import ToolCallModel

Event = dict[str, Any]
IMMUTABLE = (str, int, float, bool, type(None))


def interleaved_stream(calls: int, deltas: int) -> list[Event]:
    """Start every call, then their deltas round-robin, then ready and result for each."""
    ids = [f"call_{i}" for i in range(calls)]
    events: list[Event] = [{"type": "start", "id": i, "name": "search"} for i in ids]
    fragments = ['{"q": "', *(["abcd"] * (deltas - 2)), '"}']
    for fragment in fragments:
        events.extend({"type": "delta", "id": i, "argsTextDelta": fragment} for i in ids)
    events.extend({"type": "ready", "id": i} for i in ids)
    events.extend({"type": "result", "id": i, "result": {"hits": 3}} for i in ids)
    return events


# -- the hand-written reference: same semantics, same checks, dicts of dicts ---------------------


def _reject(name: str) -> Any:
    raise ValueError(name)


class HandTracker:
    """Seed 000 by hand: one dict per call, the same validation and copying as the tracker."""

    def __init__(self) -> None:
        self.calls: dict[str, dict[str, Any]] = {}

    def apply(self, event: Event) -> str:
        if type(event) is not dict:
            raise ValueError("event: expected a JSON object")
        kind = event.get("type")
        if type(kind) is not str or kind not in _HAND:
            raise ValueError("type: unknown")
        call_id = event.get("id")
        if type(call_id) is not str or not call_id:
            raise ValueError("id: must be a non-empty string")
        return _HAND[kind](self, call_id, event)

    def start(self, call_id: str, event: Event) -> str:
        name = event.get("name")
        if type(name) is not str or not name:
            raise ValueError("name: must be a non-empty string")
        if call_id in self.calls:
            return "duplicate_start"
        self.calls[call_id] = {"id": call_id, "name": name, "parts": [], "status": "pending"}
        return "applied"

    def delta(self, call_id: str, event: Event) -> str:
        text = event.get("argsTextDelta")
        if type(text) is not str:
            raise ValueError("argsTextDelta: must be a string")
        call = self.calls.get(call_id)
        if call is None:
            return "unknown_id"
        if call["status"] != "pending":
            return "not_allowed"
        call["parts"].append(text)
        return "applied"

    def ready(self, call_id: str, event: Event) -> str:
        call = self.calls.get(call_id)
        if call is None:
            return "unknown_id"
        if call["status"] != "pending":
            return "not_allowed"
        text = "".join(call["parts"])
        call["parts"] = [text]
        try:
            call["args"] = json.loads(text, parse_constant=_reject)
            call["status"] = "running"
        except ValueError as error:
            call["error"], call["status"] = str(error), "error"
        return "applied"

    def result(self, call_id: str, event: Event) -> str:
        if "result" not in event:
            raise ValueError("result: missing")
        value = event["result"]
        call = self.calls.get(call_id)
        if call is None:
            return "unknown_id"
        if call["status"] != "running":
            return "not_allowed"
        call["result"] = value if isinstance(value, IMMUTABLE) else copy.deepcopy(value)
        call["status"] = "done"
        return "applied"

    def error(self, call_id: str, event: Event) -> str:
        value = event.get("error")
        if value is None:
            raise ValueError("error: missing")
        call = self.calls.get(call_id)
        if call is None:
            return "unknown_id"
        if call["status"] not in ("pending", "running"):
            return "not_allowed"
        call["error"] = value if isinstance(value, IMMUTABLE) else copy.deepcopy(value)
        call["status"] = "error"
        return "applied"


_HAND: dict[str, Callable[[HandTracker, str, Event], str]] = {
    "start": HandTracker.start,
    "delta": HandTracker.delta,
    "ready": HandTracker.ready,
    "result": HandTracker.result,
    "error": HandTracker.error,
}


# -- python-statemachine and transitions, one machine per call -----------------------------------


class ReferenceRecord(ToolCallModel):
    """The tracker's record, with the ``state`` attribute both libraries write."""

    __slots__ = ("state",)


class EngineTracker:
    """A dispatcher over one machine per call, for engines driven by ``send(event, **kw)``."""

    def __init__(self, create: Callable[[ReferenceRecord], Any], send: Callable[..., Any]) -> None:
        self.calls: dict[str, Any] = {}
        self.seq = 0
        self.create = create
        self.send = send

    def apply(self, event: Event) -> None:
        kind, call_id = event["type"], event["id"]
        if kind == "start":
            if call_id not in self.calls:
                self.calls[call_id] = self.create(
                    ReferenceRecord(call_id, event["name"], self.seq)
                )
                self.seq += 1
            return
        machine = self.calls.get(call_id)
        if machine is None:
            return
        if kind == "delta":
            self.send(machine, "delta", text=event["argsTextDelta"])
        elif kind == "ready":
            self.send(machine, "ready")
        elif kind == "result":
            self.send(machine, "result", value=event["result"])
        else:
            self.send(machine, "fail", value=event["error"])


def psm_tracker() -> EngineTracker:
    return EngineTracker(ToolCallChart, lambda m, event, **kw: m.send(event, **kw))


class TransitionsModel(ReferenceRecord):
    """A record with the callbacks transitions calls by name (same work as the chart's);
    without ``__slots__``, since transitions adds its trigger methods to every model."""

    def append_arguments(self, text: str) -> None:
        self.parts.append(text)

    def keep_result(self, value: Any) -> None:
        self.result = value

    def keep_error(self, value: Any) -> None:
        self.error = value


def transitions_tracker() -> EngineTracker:
    machine = Machine(
        model=[],
        states=["pending", "running", "done", "error"],
        transitions=[
            {"trigger": "delta", "source": "pending", "dest": None, "after": "append_arguments"},
            # parse_arguments keeps the arguments, or the failure, on the model (the chart's
            # parsing step); transitions has no eventless transitions, so it is the condition.
            {
                "trigger": "ready",
                "source": "pending",
                "dest": "running",
                "conditions": "parse_arguments",
            },
            {"trigger": "ready", "source": "pending", "dest": "error"},
            {"trigger": "result", "source": "running", "dest": "done", "after": "keep_result"},
            {
                "trigger": "fail",
                "source": ["pending", "running"],
                "dest": "error",
                "after": "keep_error",
            },
        ],
        initial="pending",
        auto_transitions=False,
        ignore_invalid_triggers=True,
    )

    def create(record: ReferenceRecord) -> TransitionsModel:
        model = TransitionsModel(record.id, record.name, record.seq)
        machine.add_model(model)
        return model

    return EngineTracker(create, lambda m, event, **kw: m.trigger(event, **kw))


# -- measurements ---------------------------------------------------------------------------------


def median_ns_per_event(make: Callable[[], Any], events: list[Event], repeats: int) -> float:
    """Median over fresh trackers of the time to apply every event, per event."""
    samples = []
    for _ in range(repeats):
        tracker = make()
        apply = tracker.apply
        gc.collect()
        begin = time.perf_counter_ns()
        for event in events:
            apply(event)
        samples.append((time.perf_counter_ns() - begin) / len(events))
    return statistics.median(samples)


def per_delta_ns(size: int, repeats: int) -> float:
    """Median cost of one 4-character delta while streaming ``size`` bytes of arguments."""
    body = "x" * (size - 12)
    text = '{"data": "' + body + '"}'
    events = [
        {"type": "delta", "id": "big", "argsTextDelta": text[i : i + 4]}
        for i in range(0, len(text), 4)
    ]

    def started() -> ToolCallTracker:
        tracker = ToolCallTracker()
        tracker.apply({"type": "start", "id": "big", "name": "upload"})
        return tracker

    check = started()
    for event in events:
        check.apply(event)
    assert check.apply({"type": "ready", "id": "big"}).status == "running"
    return median_ns_per_event(started, events, repeats)


def bytes_per_finished_call(make: Callable[[], Any], calls: int) -> float:
    """Net bytes a tracker holds per finished call (empty arguments, small result)."""
    events: list[Event] = []
    for index in range(calls):
        call_id = f"c{index:06d}"
        events += [
            {"type": "start", "id": call_id, "name": "search"},
            {"type": "delta", "id": call_id, "argsTextDelta": "{}"},
            {"type": "ready", "id": call_id},
            {"type": "result", "id": call_id, "result": 1},
        ]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    tracker = make()
    for event in events:
        tracker.apply(event)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    allocated = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return allocated / calls


def run(quick: bool) -> list[str]:
    calls, deltas, repeats = (100, 50, 3) if quick else (1_000, 50, 5)
    events = interleaved_stream(calls, deltas)
    psm_events = interleaved_stream(max(calls // 10, 10), deltas)
    lines = [f"(a) {calls} interleaved calls x {deltas} deltas: {len(events)} events"]
    hand = median_ns_per_event(HandTracker, events, repeats)
    ours = median_ns_per_event(ToolCallTracker, events, repeats)
    trans = median_ns_per_event(transitions_tracker, events, max(repeats // 2, 1))
    psm = median_ns_per_event(psm_tracker, psm_events, 1)
    lines.append(f"  {'tracker':<34}{'per event':>12}{'ratio':>9}")
    for name, value in [
        ("hand-written dict-of-dicts", hand),
        ("ToolCallTracker (compiled chart)", ours),
        ("transitions, one model per call", trans),
        ("python-statemachine, one per call", psm),
    ]:
        lines.append(f"  {name:<34}{value / 1000:>9.3f} us{value / hand:>8.2f}x")
    lines.append(f"  (python-statemachine replays a {len(psm_events)}-event stream: it is slow)")
    verdict = "met" if ours / hand <= 3 else "MISSED"
    lines.append(f"  target <= 3x hand-written per event: {ours / hand:.2f}x ({verdict})")

    sizes = [1_000, 10_000, 100_000] if quick else [1_000, 10_000, 100_000, 1_000_000]
    lines.append("(b) one call, arguments streamed in 4-character deltas")
    costs = {size: per_delta_ns(size, repeats) for size in sizes}
    for size, cost in costs.items():
        lines.append(
            f"  {size:>9} bytes: {cost:7.0f} ns per delta ({cost / costs[1_000]:.2f}x 1 KB)"
        )
    largest = costs[sizes[-1]] / costs[1_000]
    verdict = "met" if largest <= 1.5 else "MISSED"
    lines.append(f"  target {sizes[-1]} bytes <= 1.5x the 1 KB cost: {largest:.2f}x ({verdict})")

    count = 1_000 if quick else 10_000
    ours_bytes = bytes_per_finished_call(ToolCallTracker, count)
    hand_bytes = bytes_per_finished_call(HandTracker, count)
    lines.append("(c) memory per finished call (arguments '{}', result 1)")
    lines.append(
        f"  hand-written: {hand_bytes:6.0f} bytes   ToolCallTracker: {ours_bytes:6.0f} bytes"
    )
    ratio = ours_bytes / hand_bytes
    lines.append(
        f"  target <= 2x hand-written: {ratio:.2f}x ({'met' if ratio <= 2 else 'MISSED'})"
    )
    return lines


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    print(f"Python {sys.version.split()[0]}; medians of repeated runs")
    print("\n".join(run(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
