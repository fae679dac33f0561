"""Run seed 000 event sequences through the AI SDK (``peer.mjs``) and through this package's
tracker, and print where they differ as a Markdown table (findings, not failures).

    python examples/ai-sdk/compare.py            # after `npm ci` in examples/ai-sdk

Each scenario is a short sequence the seed has a rule for; the table shows the calls each side
ends with (status, and result or error), or the AI SDK's exception. Then the conformance suite
runs against the peer and prints its shrunk first divergence.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolcalls.conformance import (
    ImplementationFailed,
    ObjectImplementation,
    SubprocessImplementation,
    check,
)
from toolcalls.conformance._suite import same

HERE = Path(__file__).parent
PEER = f"node {HERE / 'peer.mjs'}"


def start(call_id: str = "a", name: str = "search") -> dict[str, Any]:
    return {"type": "start", "id": call_id, "name": name}


def delta(text: str, call_id: str = "a") -> dict[str, Any]:
    return {"type": "delta", "id": call_id, "argsTextDelta": text}


def ready(call_id: str = "a") -> dict[str, Any]:
    return {"type": "ready", "id": call_id}


def result(value: Any, call_id: str = "a") -> dict[str, Any]:
    return {"type": "result", "id": call_id, "result": value}


def error(value: Any, call_id: str = "a") -> dict[str, Any]:
    return {"type": "error", "id": call_id, "error": value}


PARSED = [start(), delta('{"q":'), delta('"hi"}'), ready()]
#: (scenario, the seed's rule, events)
SCENARIOS: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("a whole call", "pending -> running -> done", [*PARSED, result(["r"])]),
    ("a null result", "null is a result", [*PARSED, result(None)]),
    (
        "two calls interleaved",
        "route by id",
        [start(), start("b"), delta("[1]", "b"), delta("{}"), ready("b"), ready(), result(2, "b")],
    ),
    ("delta with no start", "ignored (unknown id)", [delta("{}")]),
    ("result for an unknown id", "ignored (unknown id)", [result(1, "ghost")]),
    ("error for an unknown id", "ignored (unknown id)", [error("boom", "ghost")]),
    ("result while pending", "ignored (too early)", [start(), result(42)]),
    ("error while pending", "pending -> error", [start(), error("boom")]),
    ("delta after ready", "ignored", [*PARSED, delta("x")]),
    ("ready twice", "ignored the second time", [*PARSED, ready()]),
    ("error after done", "ignored (done is final)", [*PARSED, result(1), error("late")]),
    ("result after error", "ignored (error is final)", [*PARSED, error("boom"), result(1)]),
    ("ready after error", "ignored (error is final)", [start(), error("boom"), ready()]),
    (
        "result after a parse failure",
        "ignored (error is final)",
        [start(), delta("{"), ready(), result(1)],
    ),
    ("duplicate start", "ignored (first start wins)", [start(), delta("{}"), start("a", "other")]),
    ("empty arguments", "parse failure -> error", [start(), ready()]),
]


def outcome(implementation: Any, events: list[dict[str, Any]]) -> tuple[Any, str | None]:
    implementation.reset()
    try:
        for event in events:
            implementation.apply(event)
    except ImplementationFailed as failure:
        return None, str(failure)
    return implementation.list(), None


def describe(calls: Any, failure: str | None) -> str:
    if failure is not None:
        message = failure.removeprefix("apply failed: ")
        return f"throws: {message.split('. ')[0].rstrip('.')}."
    if not calls:
        return "no calls"
    parts = []
    for call in calls:
        text = f"{call['id']} {call['name']} {call['status']}"
        if "result" in call:
            text += f", result {json.dumps(call['result'])}"
        if "error" in call:
            error = call["error"]
            text += ", parse error" if isinstance(error, dict) else f", error {json.dumps(error)}"
        parts.append(text)
    return "; ".join(parts)


def comparable(calls: Any, parse_failed: set[str]) -> Any:
    """Calls without ``argsText`` (the SDK keeps parsed input, not the raw text) and with the
    error of a parse failure compared by presence only (each side words its own)."""
    if calls is None:
        return None
    return [
        {
            key: ("<parse error>" if key == "error" and call["id"] in parse_failed else value)
            for key, value in call.items()
            if key != "argsText"
        }
        for call in calls
    ]


def parse_failures(calls: Any) -> set[str]:
    return {
        call["id"]
        for call in calls or []
        if isinstance(call.get("error"), dict) and call["error"].get("type") == "invalid_arguments"
    }


def table(ours: Any, peer: Any) -> list[str]:
    """The Markdown table of the scenarios where the peer differs, and a closing count."""
    lines = [
        "| scenario | seed 000 rule | toolcalls (seed 000) | AI SDK |",
        "| --- | --- | --- | --- |",
    ]
    differences = 0
    for name, rule, events in SCENARIOS:
        expected, _ = outcome(ours, events)
        actual, failure = outcome(peer, events)
        failed = parse_failures(expected)
        if failure is None and same(comparable(expected, failed), comparable(actual, failed)):
            continue
        differences += 1
        lines.append(
            f"| {name} | {rule} | {describe(expected, None)} | {describe(actual, failure)} |"
        )
    agreed = len(SCENARIOS) - differences
    lines.append(f"{differences} of {len(SCENARIOS)} scenarios differ; {agreed} agree.")
    return lines


def main() -> int:
    ours = ObjectImplementation.from_spec("toolcalls:tool_call_streaming_state_machine")
    peer = SubprocessImplementation(PEER)
    try:
        print("\n".join(table(ours, peer)))
        report = check(peer, examples=200)
        if report.divergence is not None:
            print(f"\nconformance suite, shrunk first divergence: {report.divergence.problem}")
            for event in report.divergence.transcript:
                print(f"    {json.dumps(event)}")
            print(f"    expected: {json.dumps(report.divergence.expected)}")
            print(f"    actual:   {json.dumps(report.divergence.actual)}")
    finally:
        peer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
