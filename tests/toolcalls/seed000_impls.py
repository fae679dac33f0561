"""A plain Python implementation of seed 000, and the same with one deliberate bug each.

``Seed000(bug)`` follows the seed as written; each name in ``BUGS`` switches on one mistake a
real implementation could make. Run as a script it speaks the conformance protocol on stdio
(``python tests/toolcalls/seed000_impls.py [BUG]``), so the subprocess path is tested too.
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

BUGS = {
    "mixes_ids": "a delta goes to the call started last, not the one its id names",
    "parses_every_delta": "arguments are parsed (and kept) after every delta",
    "result_while_pending": "a result is accepted while the call is still pending",
    "error_overwrites_done": "an error after done replaces the result",
    "loses_a_delta": "a delta replaces the text instead of appending to it",
    "accepts_nan": "NaN and Infinity parse, as Python's json module allows",
    "newest_first": "list() returns the newest call first",
    "drops_null_result": "a null result is left out of the call",
    "restart_resets": "a second start with the same id starts the call afresh",
    "delta_after_ready": "deltas after ready still append to the text",
}


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    """A float literal; one beyond a double's range fails, as T13 says."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} is out of range")
    return value


def _in_range(text: str) -> int:
    """An integer literal, kept exact; one beyond a double's range fails."""
    value = int(text)
    float(value)  # raises OverflowError when the integer is beyond a double
    return value


def parse(text: str, constant: Any = _reject) -> Any:
    """JSON as T13 reads it (``constant=None`` lets NaN and Infinity through)."""
    try:
        return json.loads(text, parse_constant=constant, parse_float=_finite, parse_int=_in_range)
    except OverflowError as error:
        raise ValueError(str(error)) from None


class Seed000:
    """toolCallStreamingStateMachine() of seed 000, with an optional bug."""

    def __init__(self, bug: str | None = None) -> None:
        if bug is not None and bug not in BUGS:
            raise ValueError(f"unknown bug {bug!r}")
        self.bug = bug
        self.calls: dict[str, dict[str, Any]] = {}

    def apply(self, event: dict[str, Any]) -> None:  # noqa: C901 - one switch per bug
        kind, call_id = event["type"], event["id"]
        call = self.calls.get(call_id)
        if kind == "start":
            if call is None or self.bug == "restart_resets":
                self.calls.pop(call_id, None)
                fresh = {"id": call_id, "name": event["name"], "argsText": "", "status": "pending"}
                self.calls[call_id] = fresh
            return
        if kind == "delta" and self.bug == "mixes_ids" and self.calls:
            call = list(self.calls.values())[-1]
        if call is None:
            return
        status = call["status"]
        if kind == "delta" and (status == "pending" or self.bug == "delta_after_ready"):
            if self.bug == "loses_a_delta":
                call["argsText"] = event["argsTextDelta"]
            else:
                call["argsText"] += event["argsTextDelta"]
            if self.bug == "parses_every_delta":
                try:
                    call["args"] = parse(call["argsText"])
                except ValueError:
                    call.pop("args", None)
        elif kind == "ready" and status == "pending":
            constant = None if self.bug == "accepts_nan" else _reject
            try:
                call["args"] = parse(call["argsText"], constant)
                call["status"] = "running"
            except ValueError as failure:
                call.pop("args", None)
                call["status"], call["error"] = "error", f"bad JSON: {failure}"
        elif kind == "result" and (
            status == "running" or (status == "pending" and self.bug == "result_while_pending")
        ):
            call["status"] = "done"
            if "result" in event and (
                event["result"] is not None or self.bug != "drops_null_result"
            ):
                call["result"] = copy.deepcopy(event["result"])
        elif kind == "error" and (
            status in ("pending", "running")
            or (status == "done" and self.bug == "error_overwrites_done")
        ):
            call.pop("result", None)
            call["status"] = "error"
            if "error" in event:
                call["error"] = copy.deepcopy(event["error"])

    def get(self, call_id: str) -> dict[str, Any] | None:
        call = self.calls.get(call_id)
        return _as_javascript(call) if call is not None else None

    def list(self) -> list[dict[str, Any]]:
        calls = [_as_javascript(call) for call in self.calls.values()]
        return calls[::-1] if self.bug == "newest_first" else calls


def _as_javascript(call: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``call`` whose strings hold what JavaScript's would (T27): two surrogate
    halves that make a pair (split between deltas, or one raw and one escaped in the argument
    text) are the one character they encode. Escaping them and reading them back joins them."""
    copied: dict[str, Any] = json.loads(json.dumps(call))
    return copied


def correct() -> Seed000:
    """The factory ``--object tests.toolcalls.seed000_impls:correct`` names."""
    return Seed000()


def serve(bug: str | None) -> None:
    """Answer the conformance protocol on stdin/stdout."""
    machine = Seed000(bug)
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "reset":
            machine = Seed000(bug)
            response: dict[str, Any] = {"ok": True}
        elif op == "apply":
            machine.apply(request["event"])
            response = {"ok": True}
        elif op == "get":
            response = {"ok": True, "value": machine.get(request["id"])}
        elif op == "list":
            response = {"ok": True, "value": machine.list()}
        else:
            response = {"ok": False, "error": f"unknown op {op!r}"}
        print(json.dumps(response), flush=True)


if __name__ == "__main__":
    serve(sys.argv[1] if len(sys.argv) > 1 else None)
