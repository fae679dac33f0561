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
from toolcalls import ToolCallChart, ToolCallTracker
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
    """The chart's code is generated when events first reach a configuration; ``source()``
    generates all of it, in a fixed order, whatever instances have run before."""
    chart = compile_chart(ToolCallChart)
    before = chart.source(ToolCallModel)
    tracker = ToolCallTracker()
    tracker.apply({"type": "start", "id": "a", "name": "f"})
    tracker.apply({"type": "ready", "id": "a"})
    source = chart.source(ToolCallModel)
    assert source == before
    if os.environ.get("STATECHARTS_UPDATE_GOLDEN"):
        GOLDEN.write_text(source, encoding="utf-8")
    assert source == GOLDEN.read_text(encoding="utf-8"), (
        "the generated source changed; if intended, regenerate with "
        "STATECHARTS_UPDATE_GOLDEN=1 pytest tests/statecharts/test_codegen.py"
    )


def test_generated_functions_are_named_after_state_and_event() -> None:
    source = compile_chart(ToolCallChart).source(ToolCallModel)
    functions = re.findall(r"^def (\w+)\(", source, flags=re.MULTILINE)
    # a flat chart (eventless transitions aside): one function per (state, event) tries its
    # transitions and runs the one taken; one per state tries its eventless transitions
    assert "pending__ready" in functions
    assert "running__result" in functions
    assert "parsing__eventless" in functions
    assert not [name for name in functions if "__to__" in name]


def test_every_candidate_transition_gets_a_comment_line() -> None:
    source = compile_chart(ToolCallChart).source(ToolCallModel)
    assert "    # pending --ready--> parsing\n" in source
    assert "    # parsing --(eventless) [arguments_parsed]--> running\n" in source
    assert "    # parsing --(eventless) [not arguments_parsed]--> error\n" in source
    assert "    # pending --delta--> pending (internal) / append_arguments\n" in source


def test_constants_are_named_after_what_they_hold() -> None:
    source = compile_chart(ToolCallChart).source(ToolCallModel)
    assert "enabled = arguments_parsed(inst)" in source
    assert "parse_arguments(m)" in source
    assert "inst._node = NODE_running" in source
    assert "return TOOK_parsing_running" in source
    assert not re.search(r"\b_[a-zA-Z]+\d+\b", source), "no numbered constants like _f7"


def test_a_traceback_through_a_compiled_chart_names_chart_state_and_event() -> None:
    order = compile_chart(Order).create()
    with pytest.raises(RuntimeError) as raised:
        order.send("pay", amount=5)
    frames = traceback.extract_tb(raised.value.__traceback__)
    generated = next(frame for frame in frames if frame.name == "open__pay")
    assert Path(generated.filename).name.startswith("Order, model Model ")
    assert generated.name == "open__pay"
    assert generated.line is not None
    assert generated.line.startswith("charge(inst, amount=")


SCRIPT = """
from statemachine import State, StateChart
from statecharts import compile_chart

class Order(StateChart):
    catch_errors_as_events = False
    open = State(initial=True)
    paid = State(final=True)
    pay = open.to(paid, on="charge")

    def charge(self, amount):
        raise RuntimeError("card declined")

compile_chart(Order).create().send("pay", amount=5)
"""


@pytest.mark.parametrize("where", ["default", "configured"])
def test_python_s_own_traceback_of_an_uncaught_error_shows_the_generated_line(
    where: str, tmp_path: Path
) -> None:
    """C16: CPython's default ``sys.excepthook`` (which reads lines from files, not from
    ``linecache``, before 3.13) prints the chart in the file name, the state and event in the
    function name, and the generated line that called the callback."""
    env = dict(os.environ)
    env.pop("STATECHARTS_SOURCE_DIR", None)
    if where == "configured":
        env["STATECHARTS_SOURCE_DIR"] = str(tmp_path / "sources")
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    [at] = [n for n, line in enumerate(lines) if line.endswith(", in open__pay")]
    assert "Order, model Model " in lines[at]
    assert lines[at + 1].strip().startswith("charge(inst, amount=")
    if where == "configured":
        assert str(tmp_path / "sources") in lines[at]


def test_the_line_survives_a_cleared_linecache() -> None:
    import linecache

    order = compile_chart(Order).create()
    with pytest.raises(RuntimeError) as raised:
        order.send("pay", amount=5)
    linecache.clearcache()
    text = "".join(traceback.format_exception(raised.value))
    assert ", in open__pay\n    charge(inst, amount=" in text


def test_without_a_source_directory_lines_stay_in_linecache_and_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With ``STATECHARTS_SOURCE_DIR=""`` nothing is written: the code is named
    ``<statecharts LABEL #n>``, its lines kept in ``linecache``, the newest few hundred."""
    import linecache

    from statecharts import _codegen

    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", "")
    monkeypatch.setattr(_codegen, "MAX_KEPT_SOURCES", 3)
    names = [_codegen.source_file("Bounded", f"x = {n}\n") for n in range(5)]
    assert all(name.startswith("<statecharts Bounded") for name in names)
    assert len(set(names)) == 5
    assert linecache.getline(names[-1], 1) == "x = 4\n"
    assert names[0] not in linecache.cache
    assert sum(name in linecache.cache for name in names) == 3


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
        "<Chart toolcalls._chart.ToolCallChart: 5 states, 4 events, 7 transitions>"
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
