"""pytest plugin: chart coverage of a test run.

- ``--chart-coverage=FILE`` writes the transitions of compiled charts the tests took to FILE;
- ``--chart-coverage-html=DIR`` writes a static HTML report (diagrams with the coverage overlay,
  tables linking into them);
- ``--chart-coverage-min=PCT`` fails the session when fewer than PCT percent of the recorded
  charts' transitions were taken.

Any of them records coverage and prints a table per chart at the end of the run. Registered
through the ``pytest11`` entry point, so any project that installs ``statecharts`` gets the
options; without them the plugin does nothing.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from ._coverage import Coverage
from ._report import percent_text, summaries, terminal_table, total_percent, write_html
from .testing import record_coverage


@dataclass
class _Recording:
    stack: ExitStack
    coverage: Coverage
    file: Path | None
    html: Path | None
    minimum: float | None
    below: bool = False
    #: What writing the HTML report gave: its index, or the error that stopped it.
    written: Path | OSError | None = None


_STASH = pytest.StashKey[_Recording]()


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise pytest.UsageError(f"--chart-coverage-min: {text!r} is not a number") from None
    if not 0 <= value <= 100:
        raise pytest.UsageError(f"--chart-coverage-min: {text} is not between 0 and 100")
    return value


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("statecharts")
    group.addoption(
        "--chart-coverage",
        metavar="FILE",
        default=None,
        help="write the transitions of compiled charts the tests took to FILE (JSON)",
    )
    group.addoption(
        "--chart-coverage-html",
        metavar="DIR",
        default=None,
        help="write an HTML chart coverage report (diagrams and tables) into DIR",
    )
    group.addoption(
        "--chart-coverage-min",
        metavar="PCT",
        default=None,
        help="fail when fewer than PCT percent of the charts' transitions were taken",
    )


def pytest_configure(config: pytest.Config) -> None:
    target = config.getoption("--chart-coverage", default=None)
    html = config.getoption("--chart-coverage-html", default=None)
    minimum = config.getoption("--chart-coverage-min", default=None)
    if not (target or html or minimum is not None):
        return
    file = Path(target) if target else None
    directory = Path(html) if html else None
    if file is not None and file.is_dir():
        raise pytest.UsageError(f"--chart-coverage: {file} is a directory, not a file")
    if directory is not None and directory.exists() and not directory.is_dir():
        raise pytest.UsageError(
            f"--chart-coverage-html: {directory} exists and is not a directory"
        )
    percent = _percent(minimum) if minimum is not None else None
    stack = ExitStack()
    coverage = stack.enter_context(record_coverage(Coverage()))
    config.stash[_STASH] = _Recording(stack, coverage, file, directory, percent)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    recording = session.config.stash.get(_STASH, None)
    if recording is None:
        return
    failed = False
    if recording.html is not None:
        try:
            recording.written = write_html(recording.html, recording.coverage)
        except OSError as error:
            recording.written = error
            failed = True
    if recording.minimum is not None:
        found = summaries(recording.coverage)
        if not found or total_percent(found) < recording.minimum:
            recording.below = failed = True
    if failed and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    recording = terminalreporter.config.stash.get(_STASH, None)
    if recording is None:
        return
    found = summaries(recording.coverage)
    total = total_percent(found)
    if found:
        title = f"chart coverage: {len(found)} charts, {percent_text(total)}% of transitions"
    else:
        title = "chart coverage: no compiled chart received an event"
    terminalreporter.write_sep("-", title)
    for summary in found:
        for line in terminal_table(summary):
            terminalreporter.write_line(line)
    if isinstance(recording.written, OSError):
        terminalreporter.write_line(
            f"FAIL: --chart-coverage-html: cannot write the report: {recording.written}",
            red=True,
            bold=True,
        )
    elif recording.written is not None:
        terminalreporter.write_line(f"chart coverage HTML report: {recording.written}")
    if recording.minimum is not None:
        if recording.below and not found:
            terminalreporter.write_line(
                "FAIL: chart coverage: no compiled chart ran an event, below "
                f"--chart-coverage-min={recording.minimum:g}%",
                red=True,
                bold=True,
            )
        elif recording.below:
            terminalreporter.write_line(
                f"FAIL: chart coverage {percent_text(total)}% is below --chart-coverage-min="
                f"{recording.minimum:g}%",
                red=True,
                bold=True,
            )
        else:
            terminalreporter.write_line(
                f"chart coverage {percent_text(total)}% reaches "
                f"--chart-coverage-min={recording.minimum:g}%"
            )


def pytest_unconfigure(config: pytest.Config) -> None:
    recording = config.stash.get(_STASH, None)
    if recording is None:
        return
    recording.stack.close()
    if recording.file is not None:
        try:
            recording.file.parent.mkdir(parents=True, exist_ok=True)
            recording.coverage.save(recording.file)
        except OSError as error:  # too late to fail the run: say so plainly
            print(f"ERROR: --chart-coverage: cannot write {recording.file}: {error}")
