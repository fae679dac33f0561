"""D5, L3-L5: the committed diagrams and the ``statecharts`` command line.

``test_committed_diagrams_are_current`` fails when a file in ``diagrams/`` no longer matches
the charts its manifest lists, naming the file and the command that regenerates it. The other
tests run the same machinery on a scratch directory, and the command line in and out of process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from statecharts import (
    Coverage,
    GraphvizNotFound,
    ManifestError,
    compile_chart,
    to_dot,
    to_mermaid,
)
from statecharts.__main__ import main
from statecharts._diagram import dot_digest, svg_dot_digest
from statecharts._manifest import (
    Stale,
    describe_stale,
    read_manifest,
    regenerate,
    stale_files,
)

from .charts import Door, Recorder, Ticker
from .test_diagram import ROOT


def test_committed_diagrams_are_current(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    stale = stale_files("diagrams")
    assert not stale, describe_stale(stale, "diagrams")


# -- D5: a scratch diagrams directory ------------------------------------------------------

CHARTS = {"door": "tests.statecharts.charts:Door", "ticker": "tests.statecharts.charts:Ticker"}


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty diagrams directory whose manifest lists two test charts, as ``diagrams``
    under the current directory (the repository stays importable)."""
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.chdir(tmp_path)
    directory = Path("diagrams")
    directory.mkdir()
    (directory / "charts.json").write_text(json.dumps({"charts": CHARTS}))
    return directory


def _fake_svg(directory: Path, name: str, dot: str) -> None:
    """An SVG stamped as rendered from ``dot``, without running Graphviz."""
    stamp = f"<!-- statecharts-dot-sha256 {dot_digest(dot)} -->\n<svg/>\n"
    (directory / f"{name}.svg").write_text(stamp)


def test_manifest_entries_are_read_in_name_order(scratch: Path) -> None:
    entries = read_manifest(scratch)
    assert [(e.name, e.target) for e in entries] == sorted(CHARTS.items())


@pytest.mark.graphviz
def test_regenerate_writes_dot_mermaid_and_svg_for_every_entry(scratch: Path) -> None:
    written = regenerate(scratch)
    assert sorted(map(str, written)) == [
        f"diagrams/{name}.{suffix}"
        for name in ("door", "ticker")
        for suffix in ("dot", "mmd", "svg")
    ]
    door = compile_chart(Door)
    assert (scratch / "door.dot").read_text() == to_dot(door)
    assert (scratch / "door.mmd").read_text() == to_mermaid(door)
    assert svg_dot_digest((scratch / "door.svg").read_bytes()) == dot_digest(to_dot(door))
    assert stale_files(scratch) == []
    assert regenerate(scratch) == []


def test_current_svg_is_left_alone_so_regenerating_needs_no_graphviz(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, cls in (("door", Door), ("ticker", Ticker)):
        _fake_svg(scratch, name, to_dot(compile_chart(cls)))
    monkeypatch.setenv("PATH", str(scratch.resolve()))
    assert sorted(map(str, regenerate(scratch))) == [
        "diagrams/door.dot",
        "diagrams/door.mmd",
        "diagrams/ticker.dot",
        "diagrams/ticker.mmd",
    ]
    assert stale_files(scratch) == []


def test_without_graphviz_text_diagrams_are_still_written(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(scratch.resolve()))
    with pytest.raises(GraphvizNotFound):
        regenerate(scratch)
    assert (scratch / "door.dot").read_text() == to_dot(compile_chart(Door))
    assert (scratch / "ticker.mmd").read_text() == to_mermaid(compile_chart(Ticker))


def test_stale_files_name_each_file_and_why(scratch: Path) -> None:
    door, ticker = to_dot(compile_chart(Door)), to_dot(compile_chart(Ticker))
    (scratch / "door.dot").write_text(door.replace("Closed", "Shut"))
    (scratch / "door.mmd").write_text(to_mermaid(compile_chart(Door)))
    _fake_svg(scratch, "door", door)
    (scratch / "ticker.dot").write_text(ticker)
    _fake_svg(scratch, "ticker", "an older DOT")
    (scratch / "old.svg").write_text("<svg/>")
    (scratch / "notes.md").write_text("not a diagram")
    assert stale_files(scratch) == [
        Stale(Path("diagrams/door.dot"), "differs from the chart"),
        Stale(Path("diagrams/ticker.mmd"), "missing"),
        Stale(Path("diagrams/ticker.svg"), "not rendered from the current DOT"),
        Stale(Path("diagrams/old.svg"), "no entry of charts.json makes it; delete it"),
    ]


def test_stale_report_says_the_command_that_regenerates(scratch: Path) -> None:
    assert describe_stale(stale_files(scratch)[:2], scratch) == (
        "diagrams/door.dot: missing\n"
        "diagrams/door.mmd: missing\n"
        "regenerate with: statecharts regenerate diagrams"
    )


def test_empty_manifest_has_nothing_stale(tmp_path: Path) -> None:
    (tmp_path / "charts.json").write_text('{"charts": {}}')
    assert stale_files(tmp_path) == []
    assert regenerate(tmp_path) == []


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (None, "diagrams/charts.json: no manifest"),
        ("[", "diagrams/charts.json: not JSON"),
        ('{"charts": ["door"]}', 'diagrams/charts.json: "charts" must map names to'),
        ('{"charts": {"../up": "a:B"}}', "diagrams/charts.json: bad entry '../up': 'a:B'"),
        (
            '{"charts": {"x": "nowhere.at.all:B"}}',
            "cannot import nowhere.at.all:B: ModuleNotFoundError: No module",
        ),
        ('{"charts": {"x": "tests.statecharts.charts:Nope"}}', "cannot import tests.statecharts"),
        (
            '{"charts": {"x": "tests.statecharts.charts:Recorder"}}',
            "tests.statecharts.charts:Recorder is not a python-statemachine StateChart class",
        ),
    ],
)
def test_bad_manifest_is_reported_with_what_to_fix(
    scratch: Path, manifest: str | None, message: str
) -> None:
    if manifest is None:
        (scratch / "charts.json").unlink()
    else:
        (scratch / "charts.json").write_text(manifest)
    with pytest.raises(ManifestError) as raised:
        stale_files(scratch)
    assert str(raised.value).startswith(message)


# -- L3, L4, L5: the command line ----------------------------------------------------------


def test_diagram_command_picks_the_format_from_the_suffix(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diagram", "tests.statecharts.charts:Door", "-o", "door.gv"]) == 0
    assert main(["diagram", "tests.statecharts.charts:Door", "-o", "door.mermaid"]) == 0
    assert (
        main(["diagram", "tests.statecharts.charts:Door", "-o", "door.txt", "--format", "dot"])
        == 0
    )
    assert Path("door.gv").read_text() == to_dot(compile_chart(Door))
    assert Path("door.mermaid").read_text() == to_mermaid(compile_chart(Door))
    assert Path("door.txt").read_text() == to_dot(compile_chart(Door))
    assert capsys.readouterr().err == ""


def test_diagram_command_writes_to_stdout_with_a_format(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["diagram", "tests.statecharts.charts:Door", "-o", "-", "--format", "mermaid"]) == 0
    )
    assert capsys.readouterr().out == to_mermaid(compile_chart(Door))


def test_diagram_command_overlays_coverage_and_traces(scratch: Path) -> None:
    chart = compile_chart(Door)
    coverage = Coverage()
    instance = chart.create(Recorder())
    coverage.record(chart, instance.send("open"))
    coverage.save("coverage.json")
    Path("trace.jsonl").write_text(
        '{"id": 1, "event": "open"}\n{"id": 2, "event": "demolish"}\n{"id": 1, "event": "close"}\n'
    )
    target = "tests.statecharts.charts:Door"
    assert main(["diagram", target, "-o", "cov.dot", "--coverage", "coverage.json"]) == 0
    assert (
        main(["diagram", target, "-o", "trace.dot", "--trace", "trace.jsonl", "--trace-id", "1"])
        == 0
    )
    covered, traced = Path("cov.dot").read_text(), Path("trace.dot").read_text()
    assert "coverage: 1 of 4 transitions taken, 0 events ignored" in covered
    assert "trace of 2 events: closed → opened → closed" in traced


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["diagram", "tests.statecharts.charts:Door", "-o", "door.txt"], "cannot tell the format"),
        (["diagram", "a:B", "-o", "x.dot", "--trace-id", "1"], "--trace-id needs --trace"),
        (
            ["diagram", "a:B", "-o", "x.dot", "--trace", "t", "--coverage", "c"],
            "not allowed with argument",
        ),
        (["diagram", "a:B"], "the following arguments are required: -o/--output"),
        (["draw"], "invalid choice: 'draw'"),
    ],
)
def test_usage_errors_exit_with_status_2(
    scratch: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["diagram", "nowhere:Chart", "-o", "x.dot"], "cannot import nowhere:Chart"),
        (["diagram", "Door", "-o", "x.dot"], "'Door': want MODULE:CLASS"),
        (
            ["diagram", "tests.statecharts.charts:Door", "-o", "x.dot", "--coverage", "none.json"],
            "No such file or directory: 'none.json'",
        ),
        (
            ["diagram", "tests.statecharts.charts:Triage", "-o", "x.dot", "--trace", "t.jsonl"],
            "step 1 ('route' in state 'inbox'): the chart alone cannot tell",
        ),
        (["regenerate", "elsewhere"], "elsewhere/charts.json: no manifest"),
    ],
)
def test_what_the_user_must_fix_is_one_line_with_status_2(
    scratch: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    Path("t.jsonl").write_text('"route"\n')
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith("statecharts: error: ")
    assert message in error
    assert error.count("\n") == 1


def test_regenerate_check_lists_stale_files_and_exits_1(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (scratch / "charts.json").write_text(json.dumps({"charts": {"door": CHARTS["door"]}}))
    assert main(["regenerate", "diagrams", "--check"]) == 1
    assert capsys.readouterr().out == (
        "diagrams/door.dot: missing\n"
        "diagrams/door.mmd: missing\n"
        "diagrams/door.svg: missing\n"
        "regenerate with: statecharts regenerate diagrams\n"
    )


def _run(args: list[str], cwd: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "statecharts", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_missing_dot_fails_with_one_line_and_status_2_but_dot_output_works(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    chart = "tests.statecharts.test_diagram:Turnstile"
    failed = _run(["diagram", chart, "-o", "t.svg"], tmp_path, path=str(empty))
    assert failed.returncode == 2
    assert failed.stderr == (
        "statecharts: error: cannot render SVG: Graphviz's 'dot' program is not on PATH; "
        "install Graphviz (Debian/Ubuntu: apt-get install graphviz, macOS: brew install "
        "graphviz) or write DOT (.dot) or Mermaid (.mmd) instead\n"
    )
    assert not (tmp_path / "t.svg").exists()
    written = _run(["diagram", chart, "-o", "t.dot"], tmp_path, path=str(empty))
    assert (written.returncode, written.stderr) == (0, "")
    assert (
        (tmp_path / "t.dot").read_text().startswith("// tests.statecharts.test_diagram.Turnstile")
    )


@pytest.mark.graphviz
def test_command_line_renders_svg_and_png(tmp_path: Path) -> None:
    for name in ("order.svg", "order.png"):
        done = _run(["diagram", "tests.statecharts.test_diagram:Turnstile", "-o", name], tmp_path)
        assert (done.returncode, done.stderr) == (0, "")
    assert (tmp_path / "order.svg").read_bytes().rstrip().endswith(b"</svg>")
    assert (tmp_path / "order.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("files", "argv", "message"),
    [
        (
            {"broken_chart.py": "def (:\n"},
            ["diagram", "broken_chart:Chart", "-o", "x.dot"],
            "cannot import broken_chart:Chart: SyntaxError",
        ),
        (
            {"t.jsonl": b"\xff\xfe not utf-8\n"},
            ["diagram", "tests.statecharts.charts:Door", "-o", "x.dot", "--trace", "t.jsonl"],
            "can't decode byte 0xff",
        ),
        (
            {"t.jsonl": '{"id": "a", "event": "open"}\n'},
            [
                "diagram",
                "tests.statecharts.charts:Door",
                "-o",
                "x.dot",
                "--trace",
                "t.jsonl",
                "--trace-id",
                "b",
            ],
            "t.jsonl has no line for call 'b'",
        ),
    ],
)
def test_broken_inputs_are_one_line_with_status_2(
    scratch: Path,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str | bytes],
    argv: list[str],
    message: str,
) -> None:
    for name, content in files.items():
        path = Path(name)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith("statecharts: error: ")
    assert message in error
    assert error.count("\n") == 1


def test_version_names_the_command_and_the_installed_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """L5: ``statecharts --version``."""
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"statecharts {version('toolcalls')}\n"
