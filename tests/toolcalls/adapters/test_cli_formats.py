"""``toolcalls replay FILE --format FORMAT [--tools MODULE:REGISTRY] [--json]`` (L6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolcalls.__main__ import main

EXAMPLES = Path(__file__).parents[3] / "examples"
TOOLS = f"{EXAMPLES / 'tools.py'}:TOOLS"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["replay", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(
    "fmt", ["openai-chat", "openai-responses", "anthropic", "gemini", "ai-sdk"]
)
def test_each_shipped_example_replays_with_its_tools(
    capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    status, out, err = cli(capsys, str(EXAMPLES / f"{fmt}.jsonl"), "--format", fmt,
                           "--tools", TOOLS)  # fmt: skip
    assert (status, err) == (0, "")
    assert out.splitlines()[0].split()[:3] == ["ID", "NAME", "LIFECYCLE"]
    assert "pending -> running -> done" in out


def test_the_lifecycle_of_each_call_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, str(EXAMPLES / "openai-responses.jsonl"), "--format",
                         "openai-responses", "--tools", TOOLS)  # fmt: skip
    assert status == 0
    rows = {line.split()[0]: line for line in out.splitlines()[1:3]}
    assert "pending -> running -> done" in rows["call_weather"]
    assert "pending -> error" in rows["call_write"]
    assert "arguments truncated" in rows["call_write"]
    assert "2 calls: 1 done, 1 error" in out


def test_json_prints_each_call_in_the_wire_shape(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, str(EXAMPLES / "anthropic.jsonl"), "--format", "anthropic",
                         "--tools", TOOLS, "--json")  # fmt: skip
    assert status == 0
    calls = [json.loads(line) for line in out.splitlines()]
    assert [(c["id"], c["status"]) for c in calls] == [
        ("toolu_weather", "done"), ("toolu_time", "done"), ("toolu_search", "done")
    ]  # fmt: skip
    assert calls[1] == {"id": "toolu_time", "name": "get_time", "argsText": "{}", "args": {},
                        "status": "done", "result": "12:00 UTC"}  # fmt: skip


def test_without_tools_the_calls_stop_at_running(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, str(EXAMPLES / "gemini.jsonl"), "--format", "gemini")
    assert status == 0
    assert "3 calls: 3 running" in out


def test_native_streams_can_run_tools_too(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, str(EXAMPLES / "interleaved-calls.jsonl"), "--tools", TOOLS)
    assert status == 0
    assert "LIFECYCLE" in out.splitlines()[0]


def test_a_chunk_the_adapter_refuses_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recording = tmp_path / "bad.jsonl"
    recording.write_text('{"_comment": "x"}\n{"type": "tool-input-start", "toolName": "f"}\n')
    status, out, err = cli(capsys, str(recording), "--format", "ai-sdk")
    assert (status, out) == (2, "")
    assert err == (
        f"toolcalls replay: {recording}: line 2: invalid provider chunk: "
        "tool-input-start.toolCallId: missing or not a string\n"
    )


def test_a_bad_registry_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, str(EXAMPLES / "gemini.jsonl"), "--format", "gemini",
                         "--tools", "no_such_module_here:TOOLS")  # fmt: skip
    assert status == 2
    assert err.startswith("toolcalls replay: --tools 'no_such_module_here:TOOLS': cannot load")
    assert err.count("\n") == 1


def test_trace_is_for_native_streams(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, str(EXAMPLES / "gemini.jsonl"), "--format", "gemini",
                         "--trace", "call_0")  # fmt: skip
    assert status == 2
    assert "--trace" in err


def test_an_unknown_format_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["replay", "x.jsonl", "--format", "cohere"])
    assert exited.value.code == 2
    assert "invalid choice: 'cohere'" in capsys.readouterr().err
