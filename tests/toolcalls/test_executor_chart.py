"""X2, C3: the execution chart: declared with python-statemachine, compiled by ``statecharts``, and
run by the compiled runtime exactly as python-statemachine's own engine runs it."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from statecharts import compile_chart
from toolcalls import ExecutionChart, ToolError

EVENTS = ["start", "succeed", "fail", "undeclared"]
PAYLOADS: dict[str, dict[str, Any]] = {
    "start": {},
    "succeed": {"result": {"hits": 3}},
    "fail": {"error": ToolError.timeout("t", 1.0)},
    "undeclared": {},
}


class Model:
    """What the chart's actions write to (python-statemachine also writes ``state`` here)."""

    def __init__(self) -> None:
        self.result: Any = None
        self.error: ToolError | None = None


def test_execution_chart_compiles_to_the_declared_lifecycle() -> None:
    """X2."""
    chart = compile_chart(ExecutionChart)
    assert [(s.id, s.initial, s.final) for s in chart.states] == [
        ("pending", True, False),
        ("executing", False, False),
        ("success", False, True),
        ("error", False, True),
    ]
    assert [t.id for t in chart.transitions] == [
        "pending:start:executing",
        "pending:fail:error",
        "executing:succeed:success",
        "executing:fail:error",
    ]
    assert [e.id for e in chart.events] == ["start", "succeed", "fail"]


@pytest.mark.parametrize("length", [1, 2, 3, 4])
def test_compiled_execution_chart_matches_python_statemachine(length: int) -> None:
    chart = compile_chart(ExecutionChart)
    for sequence in itertools.product(EVENTS, repeat=length):
        reference_model, compiled_model = Model(), Model()
        reference = ExecutionChart(reference_model)  # type: ignore[arg-type]
        compiled = chart.create(compiled_model)
        for event in sequence:
            before = [s.id for s in reference.configuration]
            reference.send(event, **PAYLOADS[event])
            outcome = compiled.send(event, **PAYLOADS[event])
            after = [s.id for s in reference.configuration]
            assert [compiled.state.id] == after, sequence
            # no transition of this chart is a self-transition: applied exactly when moved
            assert outcome.applied == (before != after), sequence
            assert (compiled_model.result, compiled_model.error) == (
                reference_model.result,
                reference_model.error,
            ), sequence


def test_chart_coverage_records_every_transition_the_executor_takes() -> None:
    import asyncio

    from statecharts import Coverage
    from statecharts.testing import record_coverage
    from toolcalls import ToolExecutor

    async def ok(args: dict[str, Any]) -> str:
        return "ok"

    async def main() -> None:
        async with ToolExecutor({"ok": ok}) as executor:
            executor.register_call({"toolCallId": "a", "toolName": "ok", "args": {}})
            executor.register_call({"toolCallId": "b", "toolName": "nope", "args": {}})
            await executor.join()

    with record_coverage(Coverage()) as coverage:
        asyncio.run(main())
    taken = coverage.chart(compile_chart(ExecutionChart)).taken
    assert taken == {
        "pending:start:executing": 1,
        "executing:succeed:success": 1,
        "pending:fail:error": 1,
    }
