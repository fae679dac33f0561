"""The runner seam: the executor hands each call to its runner and records what comes back."""

# Rules checked here (docs/spec.md): R1, R3.

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from toolcalls import (
    AbortSignal,
    InvalidTool,
    LocalRunner,
    Runner,
    ToolCallSession,
    ToolError,
    ToolExecutor,
    ToolFailure,
)
from toolcalls._tools import PreparedTool

from .executor_support import chunk


class RecordingRunner:
    """Runs nothing: answers each call from ``answers`` and records what it was given."""

    def __init__(self, answers: Mapping[str, Any]) -> None:
        self.answers = answers
        self.checked: list[str] = []
        self.runs: list[tuple[str, dict[str, Any], Any]] = []

    def check(self, tools: Mapping[str, PreparedTool]) -> None:
        self.checked = sorted(tools)
        if "forbidden" in tools:
            raise InvalidTool("forbidden", "this runner cannot run it")

    async def run(
        self, tool: PreparedTool, args: Mapping[str, Any], bound: Any, signal: AbortSignal
    ) -> Any:
        self.runs.append((tool.name, dict(args), bound))
        answer = self.answers[tool.name]
        if isinstance(answer, BaseException):
            raise answer
        return answer


def typed(n: int) -> int:
    raise AssertionError("a runner that is not local never calls the tool here")


def test_the_default_runner_is_local() -> None:
    assert isinstance(ToolExecutor({}).runner, LocalRunner)
    assert isinstance(LocalRunner(), Runner)


def test_a_local_runner_subclass_runs_async_tools_through_its_own_run() -> None:
    # Only the plain LocalRunner's async tools skip run() (awaited directly): a subclass may
    # instrument run(), so it is called.
    class Counting(LocalRunner):
        def __init__(self) -> None:
            self.runs: list[str] = []

        async def run(
            self, tool: PreparedTool, args: Mapping[str, Any], bound: Any, signal: AbortSignal
        ) -> Any:
            self.runs.append(tool.name)
            return await super().run(tool, args, bound, signal)

    async def quick(args: dict[str, Any]) -> int:
        return 1

    runner = Counting()

    async def main() -> Any:
        async with ToolExecutor({"quick": quick}, runner=runner) as executor:
            executor.register_call(chunk("a", "quick"))
            return (await executor.wait("a")).result

    assert asyncio.run(main()) == 1
    assert runner.runs == ["quick"]


def test_each_call_goes_to_the_runner_with_its_arguments_validated_first() -> None:
    runner = RecordingRunner({"typed": 7})

    async def main() -> list[Any]:
        async with ToolExecutor({"typed": typed}, runner=runner) as executor:
            executor.register_call(chunk("ok", "typed", n="3"))
            executor.register_call(chunk("bad", "typed", n="three"))
            await executor.join()
            return [(c.tool_call_id, c.status, c.result) for c in executor.calls]

    assert asyncio.run(main()) == [("ok", "success", 7), ("bad", "error", None)]
    assert [(name, args) for name, args, _ in runner.runs] == [("typed", {"n": "3"})]
    assert runner.checked == ["typed"]


def test_a_tool_failure_from_the_runner_is_recorded_as_its_error() -> None:
    failure = ToolFailure(ToolError.worker_died("typed", "the process ended"))
    runner = RecordingRunner({"typed": failure})
    settled: list[Any] = []

    async def main() -> None:
        async with ToolExecutor(
            {"typed": typed}, runner=runner, on_call_settled=settled.append
        ) as executor:
            executor.register_call(chunk("c", "typed", n=1))
            await executor.join()

    asyncio.run(main())
    assert [(s.status, s.error.kind if s.error else None) for s in settled] == [
        ("error", "worker_died")
    ]
    assert settled[0].error.to_dict()["details"] == {
        "toolName": "typed",
        "detail": "the process ended",
    }


def test_any_other_exception_from_the_runner_is_the_tool_raising() -> None:
    runner = RecordingRunner({"typed": KeyError("x")})

    async def main() -> ToolError | None:
        async with ToolExecutor({"typed": typed}, runner=runner) as executor:
            executor.register_call(chunk("c", "typed", n=1))
            return (await executor.wait("c")).error

    error = asyncio.run(main())
    assert error is not None
    assert error.kind == "tool_raised"


def test_a_runner_refusing_a_tool_fails_the_executor_at_construction() -> None:
    with pytest.raises(InvalidTool, match="this runner cannot run it"):
        ToolExecutor({"forbidden": typed}, runner=RecordingRunner({}))


def test_something_that_is_not_a_runner_is_refused() -> None:
    with pytest.raises(TypeError, match="runner must have check"):
        ToolExecutor({}, runner=object())  # type: ignore[arg-type]


def test_a_session_passes_its_runner_to_its_executor() -> None:
    runner = RecordingRunner({})
    assert ToolCallSession({"typed": typed}, runner=runner).executor.runner is runner
