"""The generated code reads as the chart does: functions named ``state__event``, a comment per
candidate transition, constants named after what they hold, and tracebacks that name the chart,
the state and the event. A golden file pins the tool call chart's generated source.

Regenerate the golden file after an intended change with
``STATECHARTS_UPDATE_GOLDEN=1 pytest tests/statecharts/test_codegen.py``.
"""

# Rules checked here (docs/spec.md): C16, L8.

from __future__ import annotations

import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from statemachine import State, StateChart

from statecharts import compile_chart
from toolcalls import ToolCallChart
from toolcalls._tracker import ToolCallModel

GOLDEN = Path(__file__).parent / "golden" / "toolcall_chart.py.txt"


class Order(StateChart):
    catch_errors_as_events = False

    open = State(initial=True)
    paid = State(final=True)

    pay = open.to(paid, cond="has_funds", on="charge")

    def has_funds(self, amount: int = 0) -> bool:
        return amount > 0

    def charge(self, amount: int) -> None:
        raise RuntimeError(f"card declined for {amount}")


def test_tool_call_chart_generates_the_golden_source() -> None:
    source = compile_chart(ToolCallChart).source(ToolCallModel)
    if os.environ.get("STATECHARTS_UPDATE_GOLDEN"):
        GOLDEN.write_text(source, encoding="utf-8")
    assert source == GOLDEN.read_text(encoding="utf-8"), (
        "the generated source changed; if intended, regenerate with "
        "STATECHARTS_UPDATE_GOLDEN=1 pytest tests/statecharts/test_codegen.py"
    )


def test_generated_functions_are_named_after_state_and_event() -> None:
    source = compile_chart(ToolCallChart).source(ToolCallModel)
    functions = re.findall(r"^def (\w+)\(", source, flags=re.MULTILINE)
    assert "pending__ready" in functions
    assert "running__result" in functions
    assert "pending__ready__positional" in functions


def test_every_candidate_transition_gets_a_comment_line() -> None:
    source = compile_chart(ToolCallChart).source(ToolCallModel)
    assert "    # pending --ready [arguments_parse]--> running / keep_arguments\n" in source
    assert "    # pending --ready--> error / reject_arguments\n" in source
    assert "    # pending --delta--> pending (internal) / append_arguments\n" in source


def test_constants_are_named_after_what_they_hold() -> None:
    source = compile_chart(ToolCallChart).source(ToolCallModel)
    assert "enabled = arguments_parse(inst)" in source
    assert "inst._node = NODE_running" in source
    assert "return TOOK_pending_ready_running" in source
    assert not re.search(r"\b_[a-zA-Z]+\d+\b", source), "no numbered constants like _f7"


def test_a_traceback_through_a_compiled_chart_names_chart_state_and_event() -> None:
    order = compile_chart(Order).create()
    with pytest.raises(RuntimeError) as raised:
        order.send("pay", amount=5)
    frames = traceback.extract_tb(raised.value.__traceback__)
    generated = next(frame for frame in frames if frame.filename.startswith("<statecharts"))
    assert generated.filename == "<statecharts Order, model Model>"
    assert generated.name == "open__pay"
    assert generated.line is not None
    assert generated.line.startswith("charge(inst, amount=")


def test_state_and_event_names_that_are_not_identifiers_still_name_the_function() -> None:
    class Dotted(StateChart):
        idle = State(initial=True)
        busy = State()
        go = idle.to(busy, event="job.start") | busy.to(idle, event="job.stop")

    source = compile_chart(Dotted).source()
    assert "def idle__job_start(" in source
    assert "def busy__job_stop(" in source


def test_chart_repr_is_one_short_line() -> None:
    chart = compile_chart(ToolCallChart)
    assert repr(chart) == (
        "<Chart toolcalls._chart.ToolCallChart: 4 states, 4 events, 6 transitions>"
    )


def test_source_subcommand_prints_the_generated_code() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "statecharts", "source", "tests.statecharts.test_codegen:Order"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == compile_chart(Order).source()
    assert "def open__pay(inst, args, kw):" in done.stdout


def test_source_subcommand_reports_an_unknown_chart_on_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "statecharts", "source", "tests.statecharts.test_codegen:Nope"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("statecharts: error: cannot import")
    assert len(done.stderr.splitlines()) == 1
