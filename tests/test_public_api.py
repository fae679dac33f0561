"""The public API is small and explicit: these names, and nothing else, are exported."""

from __future__ import annotations

import importlib

import pytest

EXPORTS = {
    "statecharts": {
        "CallbackDef",
        "Chart",
        "ChartCoverage",
        "ChartDef",
        "Coverage",
        "CoverageError",
        "Emphasis",
        "EventData",
        "EventDef",
        "Flags",
        "GraphvizNotFound",
        "Group",
        "Instance",
        "ManifestError",
        "Mark",
        "Outcome",
        "Overlay",
        "RefKind",
        "StateDef",
        "StatechartsError",
        "TraceError",
        "TraceStep",
        "TransitionDef",
        "UnsupportedChart",
        "compile_chart",
        "coverage_overlay",
        "observe_outcomes",
        "read_trace",
        "render",
        "run_order",
        "to_dot",
        "to_mermaid",
        "trace_overlay",
    },
    "toolcalls": {
        "AbortSignal",
        "CallbackFailure",
        "ExecutionChart",
        "ExecutionStatus",
        "ExecutorClosed",
        "InvalidChunk",
        "InvalidEvent",
        "InvalidTool",
        "InvalidToolCall",
        "Outcome",
        "SessionClosed",
        "SnapshotError",
        "Tool",
        "ToolAborted",
        "ToolCall",
        "ToolCallChart",
        "ToolCallReadyChunk",
        "ToolCallSession",
        "ToolCallState",
        "ToolCallTracker",
        "ToolCallsError",
        "ToolError",
        "ToolErrorKind",
        "ToolExecutor",
        "UNSET",
        "tool_call_streaming_state_machine",
    },
    "toolcalls.events": {
        "DeltaEvent",
        "ErrorEvent",
        "EventType",
        "ReadyEvent",
        "ResultEvent",
        "StartEvent",
        "ToolCallEvent",
        "parse_event",
    },
    "toolcalls.adapters": {
        "ADAPTERS",
        "TRUNCATED",
        "AISDKAdapter",
        "InvalidChunk",
        "AnthropicAdapter",
        "Event",
        "GeminiAdapter",
        "OpenAIChatAdapter",
        "OpenAIResponsesAdapter",
        "StreamAdapter",
        "ai_sdk_tool_output",
        "anthropic_tool_result",
        "gemini_function_response",
        "openai_chat_tool_message",
        "openai_responses_output",
    },
}


@pytest.mark.parametrize("module_name", sorted(EXPORTS))
def test_exported_names_are_exactly_the_public_api(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = set(getattr(module, "__all__", ()))
    assert exported == EXPORTS[module_name]
    for name in exported:
        assert getattr(module, name) is not None


def test_statecharts_never_imports_toolcalls() -> None:
    import subprocess
    import sys

    probe = (
        "import statecharts, statecharts.testing, statecharts.__main__, sys; "
        "print('toolcalls' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
