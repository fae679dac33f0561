"""Breaks found by an independent review of issue 9 (round 3). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): M3, M4, M5, M6, L7.

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from statemachine import State, StateChart

from statecharts import Coverage, compile_chart
from statecharts._report import ChartSummary, write_html
from statecharts.testing import chart_machine, explore, record_coverage
from tests.statecharts.charts import EngineAdapter, media_player
from tests.toolcalls.seed000_impls import Seed000, _finite, _in_range, _reject, parse
from toolcalls.conformance import ObjectImplementation, check

ROOT = Path(__file__).parents[2]
#: The default Hypothesis profile's example budget, as the seeded-bug test uses.
EXAMPLES = 60


def env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }


# -- charts a user brings ---------------------------------------------------------------------


class Oven(StateChart):  # type: ignore[type-arg]
    off = State(initial=True)

    class heating(State.Compound):
        warm = State(initial=True)
        hot = State()

        up = warm.to(hot)

    blast = off.to(heating.hot)  # straight into a deep child: warm is never entered
    stop = heating.to(off)


OVEN = compile_chart(Oven)


Player = media_player("deep")


PLAYER = compile_chart(Player)


class Job(StateChart):  # type: ignore[type-arg]
    """A job with a final child: ``done_state_work`` is python-statemachine's spelling of the
    SCXML event ``done.state.work``, and ``tool.start`` is an event id with a dot."""

    idle = State(initial=True)

    class work(State.Compound):
        busy = State(initial=True)
        finished = State(final=True)

        finish = busy.to(finished)

    begin = idle.to(work)
    done_state_work = work.to(idle)
    ping = idle.to.itself(event="tool.start")


# -- M5: paths by construction ----------------------------------------------------------------


def test_M5_transition_cover_of_a_compound_chart_terminates() -> None:
    """``transition_cover`` of any chart with a compound state never returns: ``explore``
    maps each initial transition to a path whose ``transitions`` lack it, so the greedy cover
    loops forever waiting for it to be taken."""
    program = textwrap.dedent(
        """
        from tests.review.test_review_issue_9_r3 import PLAYER
        from statecharts.testing import transition_cover
        paths = transition_cover(PLAYER)
        taken = set().union(*(path.transitions for path in paths))
        print(sorted(t.id for t in PLAYER.transitions if t.id not in taken))
        """
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
            env=env(),
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("transition_cover(PLAYER) did not return within 60 s")
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.strip() == "[]", done.stdout


def test_M5_explore_does_not_report_a_history_state_unreached() -> None:
    """A chart with a history state, explored completely (every transition taken, the one
    into the history state too): ``unreached_states`` still lists the history state, telling
    the user part of their chart cannot be reached."""
    found = explore(PLAYER)
    assert "paused:resume:h" in found.to_transition
    assert found.unreached_states == (), found.unreached_states


# -- M4: derived stateful tests ---------------------------------------------------------------


def test_M4_events_whose_names_are_not_identifiers_get_rules() -> None:
    """A chart with ``done_state_work`` (python-statemachine declares the event
    ``done.state.work`` for it) or an event ``tool.start``: ``chart_machine`` raises
    ``ValueError: 'send_tool.start' is not a valid python identifier`` instead of a machine."""
    machine = chart_machine(compile_chart(Job), lambda: EngineAdapter(Job))
    run_state_machine_as_test(machine, settings=settings(max_examples=20, database=None))


# -- M3: coverage -----------------------------------------------------------------------------


def test_M3_coverage_does_not_count_an_initial_child_that_was_never_entered() -> None:
    """A run sends ``blast`` (straight into ``heating.hot``) and ``stop``: the report says the
    initial child ``warm`` was entered and ``heating::warm`` taken, so 3 of 4 transitions
    (75%) pass a threshold the run (2 of 4) does not reach."""
    coverage = Coverage()
    with record_coverage(coverage):
        oven = OVEN.create()
        oven.send("blast")
        assert {state.id for state in oven.configuration} == {"heating", "hot"}
        oven.send("stop")
    summary = ChartSummary.of(OVEN, coverage.charts[OVEN.qualname])
    assert summary.entered["warm"] is False
    assert summary.taken["heating::warm"] == 0
    assert summary.percent == 50.0


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is missing")
def test_M3_every_link_of_the_html_report_points_into_the_page(tmp_path: Path) -> None:
    """The HTML report of a compound chart: the rows of its initial transitions (``heating::
    warm``) link to ``#transition:heating::warm``, which nothing in the page (the diagram
    included) carries, so the link goes nowhere."""
    coverage = Coverage()
    with record_coverage(coverage):
        oven = OVEN.create()
        oven.send("blast")
        oven.send("stop")
    write_html(tmp_path, coverage)
    (page,) = [path for path in tmp_path.glob("*.html") if path.name != "index.html"]
    text = page.read_text(encoding="utf-8")
    ids = {html.unescape(found) for found in re.findall(r'\bid="([^"]+)"', text)}
    anchors = [html.unescape(href) for href in re.findall(r'href="(#[^"]+)"', text)]
    broken = [anchor for anchor in anchors if unquote(anchor[1:]) not in ids]
    assert anchors
    assert broken == []


# -- M6: conformance catches real divergences -------------------------------------------------


def _as_t13(text: str, *, strict: bool = True) -> Any:
    """JSON as T13 reads it (no NaN, numbers within a double's range), but with ``strict``."""
    try:
        return json.loads(
            text, strict=strict, parse_constant=_reject, parse_float=_finite, parse_int=_in_range
        )
    except OverflowError as error:
        raise ValueError(str(error)) from None


class LenientParser(Seed000):
    """Seed 000 with a forgiving ``ready``: text JSON.parse rejects parses if ``forgive``
    accepts it."""

    def forgive(self, text: str) -> Any:
        raise NotImplementedError

    def apply(self, event: dict[str, Any]) -> None:
        call = self.calls.get(event.get("id"))  # type: ignore[arg-type]
        if event.get("type") == "ready" and call is not None and call["status"] == "pending":
            try:
                parse(call["argsText"])
            except ValueError:
                try:
                    call["args"] = self.forgive(call["argsText"])
                except ValueError:
                    pass
                else:
                    call["status"] = "running"
                    return
        super().apply(event)


class TrailingCommas(LenientParser):
    """A trailing comma before ``]`` or ``}`` is fine (``[1,]``), as JSON5 and many
    hand-written parsers allow."""

    def forgive(self, text: str) -> Any:
        return _as_t13(re.sub(r",\s*([}\]])", r"\1", text))


class ControlCharacters(LenientParser):
    """Raw control characters inside strings are fine (Python's ``json.loads(strict=False)``):
    ``"<newline>"`` or ``"<tab>"`` parse."""

    def forgive(self, text: str) -> Any:
        return _as_t13(text, strict=False)


class NormalisesNames(Seed000):
    """Seed 000 that stores the tool name lowercased (``Search`` becomes ``search``)."""

    def apply(self, event: dict[str, Any]) -> None:
        if event.get("type") == "start" and isinstance(event.get("name"), str):
            event = {**event, "name": event["name"].lower()}
        super().apply(event)


@pytest.mark.parametrize(
    "implementation",
    [TrailingCommas, ControlCharacters, NormalisesNames],
    ids=["trailing-comma", "raw-control-character", "lowercased-names"],
)
def test_M6_a_new_kind_of_bug_is_caught_within_the_default_budget(
    implementation: type[Seed000],
) -> None:
    """Bugs a real implementation has, each shown by 3 to 5 events: a forgiving JSON parser
    (``[1,]`` or a string holding a raw newline parse) and tool names normalised to lower case.
    The suite misses each, even with its CLI default of 1000 sequences: it sends no such
    argument text and names every call ``search``."""
    report = check(ObjectImplementation(implementation), examples=EXAMPLES)
    divergence = report.divergence
    assert divergence is not None, f"{implementation.__name__} conforms"
    assert len(divergence.transcript) <= 6, str(divergence)


@pytest.mark.parametrize(
    ("implementation", "text"),
    [(TrailingCommas, "[1,]"), (TrailingCommas, '{"q": 1,}'), (ControlCharacters, '"\n"')],
)
def test_M6_the_lenient_parsers_really_differ_from_the_seed(
    implementation: type[LenientParser], text: str
) -> None:
    """The premise of the test above: JSON.parse (T13) rejects each of these texts, and the
    lenient implementation moves the call to running instead of error."""
    with pytest.raises(ValueError, match=r"."):
        parse(text)
    machine = implementation()
    machine.apply({"type": "start", "id": "a", "name": "search"})
    for fragment in text:  # as the suite would send it: fragments it already generates
        machine.apply({"type": "delta", "id": "a", "argsTextDelta": fragment})
    machine.apply({"type": "ready", "id": "a"})
    assert machine.list()[0]["status"] == "running", text


# -- L7: the command line with a misbehaving program ------------------------------------------

TRICKLE = """
import sys, time
sys.stdin.readline()
while True:  # an answer that never ends: a progress dot every 0.2 s, never a newline
    sys.stdout.write(".")
    sys.stdout.flush()
    time.sleep(0.2)
"""

HANG = """
import os, sys, time
with open(sys.argv[1], "w") as handle:
    handle.write(str(os.getpid()))
sys.stdin.readline()
time.sleep(600)
"""


def test_L7_an_answer_that_never_ends_hits_the_timeout(tmp_path: Path) -> None:
    """An implementation that prints a progress dot every 0.2 s and never a newline: with
    ``--timeout 1`` the CLI waits forever (each dot restarts the wait) instead of exiting 2."""
    server = tmp_path / "trickle.py"
    server.write_text(TRICKLE, encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "toolcalls.conformance",
        "--quiet",
        "--timeout",
        "1",
        "--cmd",
        f"{sys.executable} {server}",
    ]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, check=False, cwd=ROOT, env=env(), timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("toolcalls conformance --timeout 1 still waited after 60 s")
    assert done.returncode == 2, done.stderr[-1500:]
    assert "protocol error" in done.stderr
    assert time.monotonic() - started < 30


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def test_L7_an_implementation_started_through_a_wrapper_is_not_left_running(
    tmp_path: Path,
) -> None:
    """``--cmd "sh -c '...'"`` (or ``npm start``, ``npx ...``) whose program hangs: the CLI
    reports the protocol error and exits 2, but kills only the wrapper, so the hung program
    keeps running (and holding the CLI's stderr) after the CLI has gone."""
    server, pidfile = tmp_path / "hang.py", tmp_path / "pid"
    server.write_text(HANG, encoding="utf-8")
    wrapped = f"sh -c '{sys.executable} {server} {pidfile}; true'"
    command = [sys.executable, "-m", "toolcalls.conformance", "--quiet", "--timeout", "1"]
    output = tmp_path / "output"
    try:
        with output.open("w", encoding="utf-8") as sink:
            code = subprocess.run(
                [*command, "--cmd", wrapped],
                stdout=sink,
                stderr=sink,
                check=False,
                cwd=ROOT,
                env=env(),
                timeout=120,
            ).returncode
        assert code == 2, output.read_text(encoding="utf-8")[-1500:]
        time.sleep(0.5)
        assert not _alive(int(pidfile.read_text())), "the implementation was left running"
    finally:
        if pidfile.exists() and _alive(int(pidfile.read_text())):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
