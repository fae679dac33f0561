"""The seed 000 conformance suite: it passes correct implementations (ours, a plain one, the
JavaScript example) and catches each deliberately broken one with a short counterexample."""

# Rules checked here (docs/spec.md): M6, L7.

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from statecharts.testing import Divergence
from toolcalls.conformance import (
    ImplementationFailed,
    ObjectImplementation,
    ProtocolError,
    SubprocessImplementation,
    check,
)
from toolcalls.conformance._suite import fewest_events, same

from .seed000_impls import BUGS, Seed000

ROOT = Path(__file__).parents[2]
IMPLS = Path(__file__).with_name("seed000_impls.py")
#: The default Hypothesis profile's example budget.
EXAMPLES = 60


def conformance(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolcalls.conformance", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=timeout,
    )


def test_a_plain_implementation_of_the_seed_conforms() -> None:
    report = check(ObjectImplementation(Seed000), examples=EXAMPLES)
    assert report.divergence is None
    assert report.transitions_taken == (7, 7)
    assert report.counts.sequences > EXAMPLES


def test_a_divergence_is_cut_to_the_fewest_events_that_still_show_it() -> None:
    """The events printed are a minimal run: those the divergence does not need (duplicate
    starts, events for unknown ids) go, the first start of an id stays, and expected/actual
    are what the cut run shows."""
    padded = [
        {"type": "start", "id": "call_a", "name": "search"},
        {"type": "start", "id": "call_a", "name": "again"},
        {"type": "delta", "id": "ghost", "argsTextDelta": "]"},
        {"type": "start", "id": "call_a", "name": "again"},
        {"type": "start", "id": "call_A", "name": "Search"},
        {"type": "ready", "id": "call_A"},
    ]
    found = Divergence("list() differs", (), None, None, padded)
    cut = fewest_events(ObjectImplementation(lambda: Seed000("newest_first")), found)
    assert list(cut.transcript) == [padded[0], padded[4]]
    assert [call["id"] for call in cut.actual] == ["call_A", "call_a"]
    assert [call["id"] for call in cut.expected] == ["call_a", "call_A"]


def test_a_divergence_the_events_alone_do_not_show_is_kept_as_found() -> None:
    """A divergence a ``get`` found (or one that does not happen again) is reported as it
    was, never replaced by another problem the events happen to show."""
    events = [{"type": "start", "id": "call_a", "name": "search"}]
    found = Divergence("get('call_a') differs", (), "x", "y", events)
    kept = fewest_events(ObjectImplementation(lambda: Seed000("newest_first")), found)
    assert kept is found


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_seeded_bug_is_caught_with_a_short_counterexample(bug: str) -> None:
    report = check(ObjectImplementation(lambda: Seed000(bug)), examples=EXAMPLES)
    divergence = report.divergence
    assert divergence is not None, f"{bug} ({BUGS[bug]}) was not caught"
    assert len(divergence.transcript) <= 6, str(divergence)
    assert divergence.expected != divergence.actual


def test_this_packages_tracker_conforms_through_the_command_line() -> None:
    done = conformance(
        "--object", "toolcalls:tool_call_streaming_state_machine", "--examples", "50"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conforms to seed 000" in done.stdout
    assert "7/7 transitions of ToolCallChart taken" in done.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is installed by .ci/run")
def test_the_javascript_example_conforms_over_the_json_lines_protocol(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = ROOT / "examples" / "seed000" / "conformance-server.mjs"
    done = conformance(
        "--cmd", f"node {server}", "--examples", "1000", "--timeout", "30", timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = [line for line in done.stdout.splitlines() if "conforms to seed 000" in line]
    assert summary, done.stdout
    with capsys.disabled():  # the run's time shows in CI's log (its target: 30 s)
        print(f"\nJavaScript example: {summary[-1]}")


def test_the_toolcalls_command_has_a_conformance_subcommand() -> None:
    command = ["conformance", "--object", "tests.toolcalls.seed000_impls:Seed000"]
    done = subprocess.run(
        [sys.executable, "-m", "toolcalls", *command, "--examples", "100"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conforms to seed 000" in done.stdout


def test_a_divergence_prints_the_minimal_events_as_json_lines_and_exits_1() -> None:
    done = conformance("--cmd", f"{sys.executable} {IMPLS} newest_first", "--examples", "60")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("DIVERGENCE in ")
    assert "list() differs" in lines[0]
    events = [json.loads(line) for line in lines if line.startswith("{")]
    assert events == [
        {"type": "start", "id": "call_a", "name": "search"},
        {"type": "start", "id": "call_A", "name": "Search"},
    ]
    expected = next(line for line in lines if line.startswith("expected: "))
    actual = next(line for line in lines if line.startswith("actual: "))
    assert [c["id"] for c in json.loads(expected.removeprefix("expected: "))] == [
        "call_a",
        "call_A",
    ]
    assert [c["id"] for c in json.loads(actual.removeprefix("actual: "))] == ["call_A", "call_a"]


@pytest.mark.parametrize(
    ("program", "message"),
    [
        pytest.param(
            "import sys; sys.stdin.readline(); print('hello')", "not JSON", id="not-json"
        ),
        pytest.param("import sys; sys.stdin.readline()", "exited", id="dies"),
        pytest.param(
            "import sys; sys.stdin.readline(); print('{\"value\": 1}', flush=True)",
            'no boolean "ok"',
            id="no-ok",
        ),
    ],
)
def test_a_broken_protocol_exits_2(program: str, message: str) -> None:
    command = f"{sys.executable} -c {json.dumps(program)}"
    done = conformance("--cmd", command, "--examples", "5")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "protocol error" in done.stderr
    assert message in done.stderr


def test_a_bad_object_spec_exits_2() -> None:
    done = conformance("--object", "no_such_module:factory")
    assert done.returncode == 2
    assert "cannot import 'no_such_module'" in done.stderr


def test_the_protocol_answers_each_request_with_one_line() -> None:
    implementation = SubprocessImplementation(f"{sys.executable} {IMPLS}")
    try:
        implementation.reset()
        implementation.apply({"type": "start", "id": "a", "name": "search"})
        implementation.apply({"type": "delta", "id": "a", "argsTextDelta": "[1]"})
        implementation.apply({"type": "ready", "id": "a"})
        call = {"id": "a", "name": "search", "argsText": "[1]", "args": [1], "status": "running"}
        assert implementation.get("a") == call
        assert implementation.get("zz") is None
        assert implementation.list() == [call]
        with pytest.raises(ImplementationFailed, match="unknown op"):
            implementation.request({"op": "frobnicate"})
    finally:
        implementation.close()
    assert implementation.process.returncode == 0


PIECES = """
import sys
# Answers in awkward pieces: a long line in 7-byte pieces (its newline in a piece of its own),
# then two answers in one write, the second one ahead of its request.
long = ('{"ok": true, "value": [{"id": "' + "é" * 300000 + '"}]}').encode()
sys.stdin.readline()
for start in range(0, len(long), 7):
    sys.stdout.buffer.write(long[start : start + 7])
    sys.stdout.buffer.flush()
sys.stdout.buffer.write(b"\\n")
sys.stdout.buffer.flush()
sys.stdin.readline()
sys.stdout.buffer.write(b'{"ok": true}\\n{"ok": true}\\n')
sys.stdout.buffer.flush()
sys.stdin.readline()
"""


def test_an_answer_in_many_pieces_is_one_line_and_a_second_answer_is_refused(
    tmp_path: Path,
) -> None:
    """M6's protocol is one line per answer, however the pipe delivers it: a long line (a
    multi-byte character split between reads) is read whole, and a second line answering one
    request is a protocol error naming that request (L7)."""
    server = tmp_path / "pieces.py"
    server.write_text(PIECES, encoding="utf-8")
    implementation = SubprocessImplementation(f"{sys.executable} {server}")
    try:
        assert implementation.list() == [{"id": "é" * 300000}]
        implementation.reset()
        with pytest.raises(
            ProtocolError, match=r"answered {\"op\": \"reset\"} with more than one line"
        ):
            implementation.get("a")
    finally:
        implementation.close()


def test_an_implementation_that_raises_is_a_divergence() -> None:
    class Raises(Seed000):
        def apply(self, event: dict[str, Any]) -> None:
            if event["type"] == "ready":
                raise RuntimeError("boom")
            super().apply(event)

    report = check(ObjectImplementation(Raises), examples=EXAMPLES)
    assert report.divergence is not None
    assert "RuntimeError: boom" in str(report.divergence.actual)


def test_a_value_json_cannot_hold_is_a_protocol_error() -> None:
    class Odd(Seed000):
        def list(self) -> list[dict[str, Any]]:
            return [{"id": object()}]

    with pytest.raises(ProtocolError, match="JSON cannot hold"):
        check(ObjectImplementation(Odd), examples=1)


@pytest.mark.parametrize(
    ("expected", "actual", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        ({"a": 1, "b": [2]}, {"b": [2], "a": 1}, True),
        ([1, 2], [2, 1], False),
        (None, None, True),
        ("1", 1, False),
        (2**60, float(2**60), True),
    ],
)
def test_same_compares_as_json_does(expected: Any, actual: Any, equal: bool) -> None:
    assert same(expected, actual) is equal


def test_without_shrinking_a_divergence_is_still_reported() -> None:
    report = check(ObjectImplementation(lambda: Seed000("loses_a_delta")), shrink=False)
    assert report.divergence is not None
    assert report.divergence.transcript[0] == {"type": "start", "id": "call_a", "name": "search"}
