"""Replaying recorded provider streams (the shipped examples), with and without tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcalls.adapters._replay import (
    FORMATS,
    ReplayInputError,
    load_tools,
    native_events,
    run_replay,
)

EXAMPLES = Path(__file__).parents[3] / "examples"
TOOLS = f"{EXAMPLES / 'tools.py'}:TOOLS"

EXPECTED = {
    "openai-chat": [("call_weather", "done"), ("call_time", "done"), ("call_search", "done")],
    "openai-responses": [("call_weather", "done"), ("call_write", "error")],
    "anthropic": [("toolu_weather", "done"), ("toolu_time", "done"), ("toolu_search", "done")],
    "gemini": [("call_0", "done"), ("call_1", "done"), ("call_2", "done")],
    "ai-sdk": [("call_weather", "done"), ("call_time", "done"), ("call_search", "error")],
}


@pytest.mark.parametrize("fmt", sorted(EXPECTED))
def test_every_shipped_example_replays_with_its_tools(fmt: str) -> None:
    with open(EXAMPLES / f"{fmt}.jsonl", encoding="utf-8") as source:
        done, lines = run_replay(source, fmt, TOOLS, None, False)
    assert [(call.id, call.status) for call in done.calls] == EXPECTED[fmt]
    assert lines[0].splitlines()[0].split() == [
        "ID",
        "NAME",
        "LIFECYCLE",
        "ARGS",
        "RESULT",
        "/",
        "ERROR",
    ]
    for call in done.calls:
        expected = ["pending", "running", "done"] if call.status == "done" else None
        if expected:
            assert done.lifecycles[call.id] == expected
        else:
            assert done.lifecycles[call.id] == ["pending", "error"]
            assert call.error["kind"] == "truncated"


@pytest.mark.parametrize("fmt", sorted(EXPECTED))
def test_without_tools_ready_calls_stay_running(fmt: str) -> None:
    with open(EXAMPLES / f"{fmt}.jsonl", encoding="utf-8") as source:
        done, _ = run_replay(source, fmt, None, None, False)
    statuses = [call.status for call in done.calls]
    assert statuses == ["running" if status == "done" else status for _, status in EXPECTED[fmt]]


def test_json_output_is_the_seed_wire_shape() -> None:
    with open(EXAMPLES / "openai-chat.jsonl", encoding="utf-8") as source:
        _, lines = run_replay(source, "openai-chat", None, None, True)
    assert lines[1] == (
        '{"id": "call_time", "name": "get_time", "argsText": "{}", "args": {}, '
        '"status": "running"}'
    )


def test_underscore_note_lines_and_blank_lines_are_skipped() -> None:
    lines = [
        '{"_comment": "x"}',
        "",
        '{"_sse_data": "[DONE]"}',
        '{"type": "start", "id": "a", "name": "f"}',
    ]
    assert native_events(lines, "native") == [(4, {"type": "start", "id": "a", "name": "f"})]


def test_a_line_that_is_not_json_names_its_number() -> None:
    with pytest.raises(ReplayInputError, match="line 2: not valid JSON"):
        native_events(['{"choices": []}', "{oops"], "openai-chat")


def test_a_chunk_the_adapter_refuses_names_its_line() -> None:
    lines = ['{"type": "tool-input-start", "toolName": "f"}']
    with pytest.raises(
        ReplayInputError, match=r"line 1: invalid provider chunk: tool-input-start\.toolCallId"
    ):
        native_events(lines, "ai-sdk")


def test_a_non_object_payload_names_its_line() -> None:
    with pytest.raises(ReplayInputError, match="line 1: expected a JSON object, got list"):
        native_events(["[1]"], "anthropic")


def test_formats_are_native_and_one_per_adapter() -> None:
    assert FORMATS == (
        "native",
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
        "ai-sdk",
    )


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("examples/tools.py", "expected MODULE:REGISTRY"),
        ("no/such/file.py:TOOLS", "no file"),
        ("no_such_module_anywhere:TOOLS", "cannot load no_such_module_anywhere"),
        (f"{EXAMPLES / 'tools.py'}:get_time", "must be a mapping"),
    ],
)
def test_a_bad_tools_registry_is_refused_saying_why(spec: str, problem: str) -> None:
    with pytest.raises(ReplayInputError, match=problem):
        load_tools(spec)


def test_a_registry_can_be_named_by_module_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    monkeypatch.syspath_prepend(str(EXAMPLES.parent))
    tools = load_tools("examples.tools:TOOLS")
    assert sorted(tools) == ["get_time", "get_weather", "web_search", "write_file"]
