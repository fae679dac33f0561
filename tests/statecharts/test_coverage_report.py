"""Coverage with teeth: the threshold, the terminal table, and the HTML report as a person
sees it in a real headless browser (Debian's chromium, installed by .ci/run)."""

# Rules checked here (docs/spec.md): M3.

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from statecharts import Coverage, compile_chart
from statecharts._report import ChartSummary, page_name, terminal_table, write_html
from statecharts.testing import record_coverage
from toolcalls import ToolCallChart, ToolCallTracker

ROOT = Path(__file__).parents[2]
ONE_TEST = (
    "tests/statecharts/test_runtime.py::test_applied_outcome_names_source_target_and_transition"
)
TOOL_CALL = compile_chart(ToolCallChart)


def pytest_run(*options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, ONE_TEST],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


def test_chart_coverage_min_fails_the_session_below_the_threshold() -> None:
    done = pytest_run("--chart-coverage-min=90")
    assert done.returncode == 1, done.stdout
    assert "1 passed" in done.stdout
    assert "FAIL: chart coverage" in done.stdout
    assert "is below --chart-coverage-min=90%" in done.stdout


def test_chart_coverage_min_passes_at_or_above_the_threshold() -> None:
    done = pytest_run("--chart-coverage-min=10")
    assert done.returncode == 0, done.stdout
    assert "reaches --chart-coverage-min=10%" in done.stdout


def test_chart_coverage_min_must_be_a_percentage() -> None:
    done = pytest_run("--chart-coverage-min=lots")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "'lots' is not a number" in done.stderr


def test_the_terminal_table_lists_counts_ignored_pairs_and_what_never_ran() -> None:
    done = pytest_run("--chart-coverage-min=0")
    assert "chart coverage: 1 charts" in done.stdout
    assert "tests.statecharts.charts.Triage: 1/7 transitions (14.3%), 2/4 states" in done.stdout
    assert "  inbox:route:large            1" in done.stdout
    assert "never exercised: transition inbox:route:small" in done.stdout


def tool_call_coverage() -> Coverage:
    """Two calls: one done, one whose arguments did not parse; some events ignored."""
    with record_coverage(Coverage()) as coverage:
        tracker = ToolCallTracker()
        for event in [
            {"type": "start", "id": "a", "name": "search"},
            {"type": "delta", "id": "a", "argsTextDelta": "{}"},
            {"type": "ready", "id": "a"},
            {"type": "ready", "id": "a"},
            {"type": "result", "id": "a", "result": 1},
            {"type": "start", "id": "b", "name": "search"},
            {"type": "ready", "id": "b"},
        ]:
            tracker.apply(event)
    return coverage


def test_terminal_table_of_one_chart() -> None:
    summary = ChartSummary.of(TOOL_CALL, tool_call_coverage().chart(TOOL_CALL))
    lines = terminal_table(summary)
    assert lines[0] == (
        "toolcalls._chart.ToolCallChart: 5/7 transitions (71.4%), 5/5 states, 1 events ignored"
    )
    assert "  running <- ready                1" in lines
    assert "  running                  1" in lines  # arrivals: transitions into the state
    assert "  pending (initial)        0" in lines
    assert "  parsing                  2" in lines  # entered by every ready, never a status
    assert lines[-1] == (
        "  never exercised: transition pending:fail:error, transition running:fail:error"
    )


def test_html_report_has_an_index_and_a_page_per_chart(tmp_path: Path) -> None:
    index = write_html(tmp_path, tool_call_coverage())
    text = index.read_text(encoding="utf-8")
    assert page_name(TOOL_CALL) in text
    page = (tmp_path / page_name(TOOL_CALL)).read_text(encoding="utf-8")
    assert 'href="#transition:running:result:done"' in page
    assert "<svg" in page or "Graphviz" in page


# -- in a real browser -------------------------------------------------------------------


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("chromium is missing: .ci/run installs Debian's chromium package")
    pytest.skip("chromium is not installed (.ci/run installs it)")


def browse(url: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--window-size=1200,1000",
            *options,
            url,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


class Page(HTMLParser):
    """What the rendered DOM holds: element ids, links, table rows, body attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, dict[str, str | None]] = {}
        self.links: list[str] = []
        self.rows: list[str] = []
        self.body: dict[str, str | None] = {}
        self.svg = 0
        self.edges = 0
        self._table: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids[found["id"]] = found
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))
        if tag == "table":
            self._table = found.get("id")
        if tag == "tr" and self._table == "transitions" and found.get("class"):
            self.rows.append(str(found["class"]))
        if tag == "body":
            self.body = found
        if tag == "svg":
            self.svg += 1
        if tag == "g" and found.get("class") == "edge":
            self.edges += 1


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("chart-coverage")
    write_html(directory, tool_call_coverage())
    return directory / page_name(TOOL_CALL)


@pytest.mark.graphviz  # the report draws the diagram with dot
def test_browser_shows_the_diagram_and_a_row_per_transition(report: Path) -> None:
    done = browse(report.as_uri(), "--dump-dom")
    assert done.returncode == 0, done.stderr
    page = Page()
    page.feed(done.stdout)
    assert page.svg == 1
    assert page.edges == len(TOOL_CALL.transitions) + 1  # and the arrow into the initial state
    assert page.rows == ["hit", "hit", "missed", "hit", "hit", "hit", "missed"]
    for link in page.links:
        if link.startswith("#"):
            assert unquote(link[1:]) in page.ids, f"{link} points at nothing on the page"


@pytest.mark.graphviz  # the report draws the diagram with dot
def test_a_row_link_selects_its_transition_in_the_diagram(report: Path) -> None:
    done = browse(report.as_uri() + "#transition:running:result:done", "--dump-dom")
    assert done.returncode == 0, done.stderr
    page = Page()
    page.feed(done.stdout)
    assert page.body.get("data-selected") == "transition:running:result:done"
    selected = page.ids["transition:running:result:done"]
    assert "selected" in str(selected.get("class"))


@pytest.mark.graphviz  # the report draws the diagram with dot
def test_the_screenshot_is_a_drawn_page_not_a_blank_one(report: Path, tmp_path: Path) -> None:
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><title>blank</title>", encoding="utf-8")
    shots = {}
    for name, url in [("blank", blank.as_uri()), ("report", report.as_uri())]:
        target = tmp_path / f"{name}.png"
        done = browse(url, f"--screenshot={target}")
        assert done.returncode == 0, done.stderr
        assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        shots[name] = target.stat().st_size
    assert shots["report"] > 10 * shots["blank"]
