"""The ``statecharts`` command line: draw a chart, regenerate the committed diagrams, or print
the Python source a chart compiles to.

::

    statecharts diagram MODULE:CLASS -o FILE [--format F] [--coverage FILE | --trace FILE]
    statecharts regenerate [DIRECTORY] [--check]
    statecharts source MODULE:CLASS
    statecharts --version

``MODULE`` is imported with the current directory on ``sys.path``, as ``python -m`` does.
Exit status: 0 on success, 1 when ``regenerate --check`` finds stale files, 2 for usage errors
and for what the user must fix first (an unimportable chart, a bad coverage or trace file, a
missing Graphviz ``dot``), reported on one line.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from ._coverage import Coverage
from ._diagram import SUFFIXES, Format, Overlay, render
from ._errors import CoverageError, GraphvizNotFound, ManifestError, TraceError
from ._ir import ChartDef
from ._manifest import describe_stale, load_chart, regenerate, stale_files
from ._overlay import coverage_overlay, read_trace, trace_overlay

#: Errors the user fixes (exit status 2), as opposed to bugs (a traceback).
USER_ERRORS = (
    GraphvizNotFound,
    ManifestError,
    CoverageError,
    TraceError,
    OSError,
    UnicodeDecodeError,
)
FORMATS: tuple[Format, ...] = ("dot", "mermaid", "svg", "png")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``statecharts`` command."""
    parser = argparse.ArgumentParser(
        prog="statecharts", description="Diagrams of compiled python-statemachine charts."
    )
    parser.add_argument("--version", action="version", version=f"statecharts {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    diagram = commands.add_parser("diagram", help="draw one chart")
    diagram.add_argument("chart", metavar="MODULE:CLASS", help="the StateChart class to draw")
    diagram.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="where to write ('-': stdout)"
    )
    diagram.add_argument(
        "--format", choices=FORMATS, help="output format (default: from the FILE suffix)"
    )
    overlay = diagram.add_mutually_exclusive_group()
    overlay.add_argument("--coverage", metavar="FILE", help="overlay a coverage file")
    overlay.add_argument("--trace", metavar="FILE", help="overlay one call's JSON-lines trace")
    diagram.add_argument("--trace-id", metavar="ID", help="the call of the trace to draw")
    diagram.set_defaults(usage=diagram)

    again = commands.add_parser(
        "regenerate", help="rewrite the diagrams listed in DIRECTORY/charts.json"
    )
    again.add_argument("directory", nargs="?", default="diagrams", metavar="DIRECTORY")
    again.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file is stale"
    )

    source = commands.add_parser("source", help="print the Python code a chart compiles to")
    source.add_argument("chart", metavar="MODULE:CLASS", help="the StateChart class to compile")
    return parser


def _version() -> str:
    """The installed distribution's version (``statecharts`` ships in ``toolcalls``)."""
    try:
        return metadata.version("toolcalls")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # charts in the current directory import, as with -m
    if args.command == "diagram" and args.trace_id is not None and args.trace is None:
        args.usage.error("--trace-id needs --trace")
    try:
        if args.command == "diagram":
            return _diagram(args.usage, args)
        if args.command == "source":
            print(load_chart(args.chart).source(), end="")
            return 0
        return _regenerate(Path(args.directory), check=args.check)
    except USER_ERRORS as error:
        print(f"statecharts: error: {error}", file=sys.stderr)
        return 2


def _diagram(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    format = args.format or SUFFIXES.get(Path(args.output).suffix.lower())
    if format is None:
        parser.error(f"cannot tell the format of {args.output!r}; use --format")
    chart = load_chart(args.chart)
    data = render(chart, format, overlay=_overlay(chart, args))
    if args.output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        Path(args.output).write_bytes(data)
    return 0


def _overlay(chart: ChartDef, args: argparse.Namespace) -> Overlay | None:
    if args.coverage is not None:
        return coverage_overlay(chart, Coverage.load(args.coverage))
    if args.trace is not None:
        with open(args.trace, encoding="utf-8") as lines:
            steps = read_trace(lines, call_id=args.trace_id, source=args.trace)
        return trace_overlay(chart, steps)
    return None


def _regenerate(directory: Path, *, check: bool) -> int:
    if not check:
        written = regenerate(directory)
        for path in written:
            print(f"wrote {path}")
        if not written:
            print(f"{directory}: up to date")
        return 0
    stale = stale_files(directory)
    if stale:
        print(describe_stale(stale, directory))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
