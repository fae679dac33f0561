"""L1, L2: ``toolcalls replay``: events in as JSON lines, calls out as a table or JSON lines,
or the trace of one call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolcalls.__main__ import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "interleaved-calls.jsonl"


def test_replay_prints_the_calls_as_a_table_and_explains_ignored_events(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["ID", "NAME", "STATUS", "ARGS", "RESULT", "/", "ERROR"]
    assert out[1].split()[:3] == ["call_weather", "get_weather", "done"]
    assert out[2].split()[:3] == ["call_search", "web_search", "error"]
    assert out[3].split()[:3] == ["call_time", "current_time", "error"]
    assert out[3].endswith(
        "error: arguments are not valid JSON: Expecting value (line 1, column 8)"
    )
    assert out[5:] == [
        "3 calls: 1 done, 2 error",
        "3 ignored events:",
        "  line 7: call_search: result ignored: not allowed while the call is pending",
        "  line 14: call_weather: delta ignored: not allowed while the call is done",
        "  line 16: call_search: start ignored: the id is already tracked (call is error)",
    ]


def test_replay_json_prints_one_wire_object_per_call(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--json", str(EXAMPLE)]) == 0
    calls = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [c["id"] for c in calls] == ["call_weather", "call_search", "call_time"]
    assert calls[0] == {
        "id": "call_weather",
        "name": "get_weather",
        "argsText": '{"city": "Oslo", "unit": "celsius"}',
        "args": {"city": "Oslo", "unit": "celsius"},
        "status": "done",
        "result": {"temperature": 4, "sky": "overcast"},
    }


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        (
            '{"type": "start", "id": "a", "name": "x"}\n{"type": "start",\n',
            "line 2: not valid JSON",
        ),
        (
            '\n{"type": "start", "id": "a", "name": "x"}\n\n{"type": "delta", "id": "a"}\n',
            "line 4: invalid event: argsTextDelta: missing (a text fragment)",
        ),
        ("[1, 2]\n", "line 1: invalid event: event: expected a JSON object"),
    ],
)
def test_malformed_line_stops_with_its_number_and_exit_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stream: str, message: str
) -> None:
    path = tmp_path / "stream.jsonl"
    path.write_text(stream, encoding="utf-8")
    assert main(["replay", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert str(path) in captured.err


def test_replay_of_a_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "/nonexistent/stream.jsonl"]) == 2
    assert (
        "cannot read /nonexistent/stream.jsonl: No such file or directory"
        in capsys.readouterr().err
    )


def test_replay_keeps_max_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--json", "--max-history", "1", str(EXAMPLE)]) == 0
    ids = [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()]
    assert ids == ["call_search"]


def test_replay_reads_standard_input_through_the_installed_command() -> None:
    stream = EXAMPLE.read_text(encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolcalls", "replay", "--json", "-"],
        input=stream,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3


@pytest.mark.parametrize("call_id", ["call_weather", "call_search", "call_time"])
def test_replay_trace_draws_the_path_the_call_took(
    call_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from statecharts import compile_chart, read_trace, trace_overlay
    from statecharts._overlay import resolve_trace
    from toolcalls import ToolCallChart, ToolCallTracker

    assert main(["replay", "--trace", call_id, str(EXAMPLE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    chart = compile_chart(ToolCallChart)
    steps = read_trace(lines, call_id)
    path = resolve_trace(chart, steps)
    tracker = ToolCallTracker()
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        tracker.apply(json.loads(line))
    assert path[-1].landed == tracker.get(call_id).status  # type: ignore[union-attr]
    assert trace_overlay(chart, steps).caption.startswith(f"trace of {len(lines)} events")


def test_replay_trace_of_the_search_call_names_chart_events_and_ignored_steps(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", "--trace", "call_search", str(EXAMPLE)]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [
        {"id": "call_search", "event": "delta", "state": "pending"},
        {"id": "call_search", "event": "result", "transition": None},
        {"id": "call_search", "event": "delta", "state": "pending"},
        {"id": "call_search", "event": "ready", "state": "running"},
        {"id": "call_search", "event": "fail", "state": "error"},
    ]


def test_replay_trace_of_an_unknown_call_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--trace", "nobody", str(EXAMPLE)]) == 2
    assert "no call 'nobody'" in capsys.readouterr().err


def test_replay_writes_lone_surrogates_escaped_and_json_stays_valid(tmp_path: Path) -> None:
    path = tmp_path / "surrogate.jsonl"
    path.write_text(
        '{"type": "start", "id": "a", "name": "x"}\n'
        '{"type": "delta", "id": "a", "argsTextDelta": "{\\"k\\": \\"\\\\ud800\\"}"}\n'
        '{"type": "ready", "id": "a"}\n',
        encoding="utf-8",
    )
    for extra in ([], ["--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "toolcalls", "replay", *extra, str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["args"] == {"k": "\ud800"}


def test_replay_rejects_nan_which_is_not_json(capsys: pytest.CaptureFixture[str]) -> None:
    import io

    sys_stdin = sys.stdin
    sys.stdin = io.StringIO('{"type": "start", "id": "a", "name": "x", "n": NaN}\n')
    try:
        assert main(["replay", "-"]) == 2
    finally:
        sys.stdin = sys_stdin
    assert "line 1: not valid JSON: NaN is not a JSON value" in capsys.readouterr().err


# -- the command line as a shell user meets it -----------------------------------------------


def test_replay_into_a_reader_that_stops_early_ends_quietly_with_status_0(
    tmp_path: Path,
) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text(
        "".join(f'{{"type": "start", "id": "c{i}", "name": "n"}}\n' for i in range(20_000)),
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "toolcalls", "replay", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()  # as `| head -1` does
    stderr = process.stderr.read()
    process.stderr.close()
    assert process.wait(timeout=60) == 0
    assert first.split() == [b"ID", b"NAME", b"STATUS", b"ARGS", b"RESULT", b"/", b"ERROR"]
    assert stderr == b""


@pytest.mark.parametrize("number", ["1e999", "-1e999", "1" + "0" * 400])
def test_replay_refuses_a_number_json_cannot_write_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], number: str
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(
        '{"type": "start", "id": "a", "name": "x"}\n'
        '{"type": "delta", "id": "a", "argsTextDelta": "{}"}\n'
        '{"type": "ready", "id": "a"}\n'
        f'{{"type": "result", "id": "a", "result": {number}}}\n',
        encoding="utf-8",
    )
    assert main(["replay", "--json", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"line 4: not valid JSON: number {number[:20]}" in captured.err
    assert "is out of range" in captured.err


def test_replay_of_a_line_nested_too_deeply_names_the_line_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(
        '{"type": "start", "id": "a", "name": "x"}\n'
        + '{"type": "result", "id": "a", "result": '
        + "[" * 100_000
        + "]" * 100_000
        + "}\n",
        encoding="utf-8",
    )
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"toolcalls replay: {path}: line 2: not valid JSON: the event nests")
    assert "deeper than 256 levels" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("value", "message"),
    [("abc", "expected a whole number, got 'abc'"), ("0", "must be at least 1, got 0")],
)
def test_max_history_that_is_not_a_positive_number_says_what_is_wrong(
    capsys: pytest.CaptureFixture[str], value: str, message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["replay", "--max-history", value, str(EXAMPLE)])
    assert exited.value.code == 2
    assert f"argument --max-history: {message}" in capsys.readouterr().err


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"toolcalls {version('toolcalls')}\n"
