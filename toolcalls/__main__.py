"""The ``toolcalls`` command line.

``toolcalls replay FILE`` (or ``-`` for standard input) reads tool call events as JSON lines,
applies them to a tracker and prints the calls as a table (``--json``: one JSON object per call)
followed by every event that was ignored and why. A line that is not a valid event stops the
replay with its line number and the problem, and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from typing import IO, Any

from ._errors import InvalidEvent
from ._tracker import ToolCall, ToolCallTracker

EXIT_BAD_INPUT = 2


class ReplayError(Exception):
    """A line of the replayed stream could not be applied."""

    def __init__(self, line: int, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"line {line}: {problem}")


def replay(
    lines: Iterable[str], max_history: int | None = None
) -> tuple[ToolCallTracker, list[str]]:
    """Apply every event line; return the tracker and a note per ignored event.

    Blank lines are skipped. Raises ``ReplayError`` for a line that is not a valid event.
    """
    tracker = ToolCallTracker(max_history=max_history)
    ignored: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as error:
            raise ReplayError(number, f"not valid JSON: {error}") from None
        try:
            outcome = tracker.apply(event)
        except InvalidEvent as error:
            raise ReplayError(number, str(error)) from None
        if not outcome.applied:
            ignored.append(f"line {number}: {event['id']}: {outcome.message}")
    return tracker, ignored


def _cell(value: Any, width: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def table(calls: Sequence[ToolCall]) -> str:
    """The calls as an aligned text table, one row per call, in start order."""
    rows = [("ID", "NAME", "STATUS", "ARGS", "RESULT / ERROR")]
    for call in calls:
        args = _cell(call.args, 40) if call.has_args else _cell(call.args_text, 40)
        if call.has_error:
            error = call.error
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                where = (
                    f" (line {error['line']}, column {error['column']})" if "line" in error else ""
                )
                error = error["message"] + where
            outcome = "error: " + _cell(error, 80)
        elif call.has_result:
            outcome = _cell(call.result, 50)
        else:
            outcome = ""
        rows.append((call.id, call.name, call.status, args, outcome))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        + "  "
        + row[4]
        for row in rows
    ).rstrip()


def _summary(calls: Sequence[ToolCall]) -> str:
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.status] = counts.get(call.status, 0) + 1
    order = ("pending", "running", "done", "error")
    parts = ", ".join(f"{counts[status]} {status}" for status in order if status in counts)
    return f"{len(calls)} call{'s' if len(calls) != 1 else ''}" + (f": {parts}" if parts else "")


def _run_replay(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    try:
        source = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115
    except OSError as error:
        print(f"toolcalls replay: cannot read {args.file}: {error.strerror}", file=err)
        return EXIT_BAD_INPUT
    try:
        with source:
            tracker, ignored = replay(source, args.max_history)
    except ReplayError as error:
        print(f"toolcalls replay: {args.file}: {error}", file=err)
        return EXIT_BAD_INPUT
    except UnicodeDecodeError as error:
        print(f"toolcalls replay: {args.file}: not UTF-8 text ({error.reason})", file=err)
        return EXIT_BAD_INPUT
    calls = tracker.list()
    if args.json:
        for call in calls:
            print(json.dumps(call.to_dict(), ensure_ascii=False), file=out)
        return 0
    print(table(calls), file=out)
    print(f"\n{_summary(calls)}", file=out)
    if ignored:
        print(f"{len(ignored)} ignored event{'s' if len(ignored) != 1 else ''}:", file=out)
        for note in ignored:
            print(f"  {note}", file=out)
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def parser() -> argparse.ArgumentParser:
    """The argument parser of the ``toolcalls`` command."""
    main_parser = argparse.ArgumentParser(
        prog="toolcalls", description="Track streamed tool calls as declared statecharts."
    )
    commands = main_parser.add_subparsers(dest="command", required=True)
    replay_parser = commands.add_parser(
        "replay", help="apply tool call events from a JSON-lines file and print the calls"
    )
    replay_parser.add_argument("file", help="a JSON-lines file of events, or - for stdin")
    replay_parser.add_argument("--json", action="store_true", help="print calls as JSON lines")
    replay_parser.add_argument(
        "--max-history", type=_positive, default=None, help="keep at most N calls (finished first)"
    )
    return main_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = parser().parse_args(argv)
    return _run_replay(args, sys.stdout, sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
