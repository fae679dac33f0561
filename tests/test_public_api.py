"""The public API is small and explicit: these names, and nothing else, are exported."""

from __future__ import annotations

import importlib

import pytest

EXPORTS = {
    "statecharts": {
        "AsyncioClock",
        "CallbackDef",
        "Chart",
        "Clock",
        "ChartCoverage",
        "ChartDef",
        "Coverage",
        "CoverageError",
        "Divergence",
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
        "InstanceSnapshotError",
        "AsyncReadRefused",
        "StateDef",
        "StatechartsError",
        "TraceError",
        "TraceStep",
        "TransitionDef",
        "UnsupportedChart",
        "VirtualClock",
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
        "ApplyOutcome",
        "CallbackFailure",
        "CheckpointConflict",
        "CheckpointError",
        "ExecutionChart",
        "ExecutionStatus",
        "ExecutorClosed",
        "InvalidChunk",
        "ImplementationFailed",
        "InvalidEvent",
        "InvalidTool",
        "InvalidToolCall",
        "LocalRunner",
        "ProtocolError",
        "Runner",
        "SessionClosed",
        "SnapshotError",
        "Tool",
        "ToolAborted",
        "ToolCallView",
        "ToolCallChart",
        "ToolCallReadyChunk",
        "ToolCallSession",
        "ExecutionView",
        "ToolCallTracker",
        "ToolCallsError",
        "ToolError",
        "ToolErrorKind",
        "ToolExecutor",
        "ToolFailure",
        "UNSET",
        "tool_call_streaming_state_machine",
    },
    "statecharts.testing": {
        "Adapter",
        "ChartMachine",
        "ChartRunner",
        "Divergence",
        "Exploration",
        "Path",
        "PathStep",
        "Step",
        "chart_machine",
        "configuration_of",
        "cover",
        "default_payloads",
        "explore",
        "path_cases",
        "payload_parameters",
        "record_coverage",
        "replay",
        "run_path",
        "shortest_paths",
        "transition_cover",
    },
    "toolcalls.conformance": {
        "Implementation",
        "ImplementationFailed",
        "ObjectImplementation",
        "ProtocolError",
        "Report",
        "SubprocessImplementation",
        "check",
    },
    "toolcalls.checkpoint": {"CheckpointStore", "Checkpoints", "MemoryStore", "RedisStore"},
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
        "StreamSuperseded",
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
    """C14."""
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


@pytest.mark.parametrize("name", ["ToolExecutor", "ToolCallSession"])
def test_executor_and_session_take_a_runner_by_keyword(name: str) -> None:
    import inspect

    import toolcalls

    parameter = inspect.signature(getattr(toolcalls, name)).parameters["runner"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Outcome", "ApplyOutcome"),
        ("ToolCall", "ToolCallView"),
        ("ToolCallState", "ExecutionView"),
    ],
)
def test_a_renamed_public_name_warns_and_still_answers_for_one_release(old: str, new: str) -> None:
    """T19, X12: ``toolcalls.Outcome`` became ``ApplyOutcome`` (``statecharts.Outcome`` is
    another class), ``ToolCall`` became ``ToolCallView`` and ``ToolCallState`` became
    ``ExecutionView`` (one call had four types with like names). Each old name answers for one
    release, with a ``DeprecationWarning`` naming the new one, and is not exported."""
    import toolcalls

    with pytest.warns(DeprecationWarning, match=new):
        value = getattr(toolcalls, old)
    assert value is getattr(toolcalls, new)
    assert old not in toolcalls.__all__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import toolcalls

    with pytest.raises(AttributeError, match="no attribute 'Nonesuch'"):
        toolcalls.Nonesuch  # type: ignore[attr-defined]  # noqa: B018
