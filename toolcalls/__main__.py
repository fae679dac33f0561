"""The ``toolcalls`` command line.

``toolcalls replay FILE`` (or ``-`` for standard input) reads tool call events as JSON lines,
applies them to a tracker and prints the calls as a table (``--json``: one JSON object per call)
followed by every event that was ignored and why. A line that is not a valid event stops the
replay with its line number and the problem, and exit status 2.

Each line is read with the rules arguments are parsed with (``JSON.parse``, numbers within a
double's range, nesting up to 256 levels), so ``--json`` always writes valid JSON. When the
reader of the output goes away (``| head -1``), the command stops quietly with status 0.
``toolcalls --version`` prints the installed version. ``toolcalls conformance`` runs the seed
000 conformance suite against another implementation (``toolcalls.conformance``).
``--format FORMAT`` replays a provider's recorded stream through its adapter and ``--tools
MODULE:REGISTRY`` runs the calls (``toolcalls.adapters``; L6).

``--trace ID`` prints instead the path of one call through ``ToolCallChart``, as the JSON-lines
trace ``statecharts diagram toolcalls:ToolCallChart --trace FILE`` draws: each event of that
call after its start, named as the chart names it, with the state it left the call in (or
``"transition": null`` when it was ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import IO, Any

from ._errors import InvalidEvent
from ._record import ToolCallView, parse_json
from ._tracker import CHART_EVENTS, ToolCallTracker
from .adapters import _replay as provider_replay
from .conformance._cli import add_arguments as add_conformance_arguments
from .conformance._cli import run as run_conformance

EXIT_BAD_INPUT = 2


class ReplayError(Exception):
    """A line of the replayed stream could not be applied."""

    def __init__(self, line: int, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"line {line}: {problem}")


@dataclass
class Replay:
    """What replaying a stream produced: the tracker, a note per ignored event, and the trace
    of the call asked for (empty if none was)."""

    tracker: ToolCallTracker
    ignored: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)


def replay(
    lines: Iterable[str], max_history: int | None = None, trace_id: str | None = None
) -> Replay:
    """Apply every event line, keeping notes on ignored events and the trace of ``trace_id``.

    Blank lines are skipped. Raises ``ReplayError`` for a line that is not a valid event.
    """
    result = Replay(ToolCallTracker(max_history=max_history))
    tracker, ignored = result.tracker, result.ignored
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = parse_json(line, "the event nests")
        except ValueError as error:
            raise ReplayError(number, f"not valid JSON: {error}") from None
        try:
            outcome = tracker.apply(event)
        except InvalidEvent as error:
            raise ReplayError(number, str(error)) from None
        if not outcome.applied:
            ignored.append(f"line {number}: {event['id']}: {outcome.message}")
        if event["id"] == trace_id and event["type"] != "start" and outcome.status is not None:
            step: dict[str, Any] = {"id": trace_id, "event": CHART_EVENTS[event["type"]]}
            if outcome.applied:
                step["state"] = outcome.status
            else:
                step["transition"] = None
            result.trace.append(step)
    return result


def _cell(value: Any, width: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def table(calls: Sequence[ToolCallView]) -> str:
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


def _summary(calls: Sequence[ToolCallView]) -> str:
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.status] = counts.get(call.status, 0) + 1
    order = ("pending", "running", "done", "error")
    parts = ", ".join(f"{counts[status]} {status}" for status in order if status in counts)
    return f"{len(calls)} call{'s' if len(calls) != 1 else ''}" + (f": {parts}" if parts else "")


def _run_replay(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    if provider_replay.wants(args):  # --format FORMAT or --tools: see toolcalls.adapters
        return provider_replay.run_cli(args, out, err)
    try:
        source = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115
    except OSError as error:
        print(f"toolcalls replay: cannot read {args.file}: {error.strerror}", file=err)
        return EXIT_BAD_INPUT
    try:
        with source:
            done = replay(source, args.max_history, args.trace)
    except ReplayError as error:
        print(f"toolcalls replay: {args.file}: {error}", file=err)
        return EXIT_BAD_INPUT
    except UnicodeDecodeError as error:
        print(f"toolcalls replay: {args.file}: not UTF-8 text ({error.reason})", file=err)
        return EXIT_BAD_INPUT
    if args.trace is not None:
        if not done.trace and args.trace not in done.tracker:
            print(f"toolcalls replay: {args.file}: no call {args.trace!r}", file=err)
            return EXIT_BAD_INPUT
        for step in done.trace:
            print(json.dumps(step), file=out)
        return 0
    calls, ignored = done.tracker.list(), done.ignored
    if args.json:
        # Characters the output's encoding cannot hold would be written as Python escapes,
        # which are not JSON: write JSON's own escapes then.
        encoding = (getattr(out, "encoding", None) or "").lower().replace("-", "")
        ascii_only = encoding != "utf8"
        for call in calls:
            print(json.dumps(call.to_dict(), ensure_ascii=ascii_only, allow_nan=False), file=out)
        return 0
    print(table(calls), file=out)
    print(f"\n{_summary(calls)}", file=out)
    if ignored:
        print(f"{len(ignored)} ignored event{'s' if len(ignored) != 1 else ''}:", file=out)
        for note in ignored:
            print(f"  {note}", file=out)
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parser() -> argparse.ArgumentParser:
    """The argument parser of the ``toolcalls`` command."""
    main_parser = argparse.ArgumentParser(
        prog="toolcalls", description="Track streamed tool calls as declared statecharts."
    )
    main_parser.add_argument("--version", action="version", version=f"toolcalls {_version()}")
    commands = main_parser.add_subparsers(dest="command", required=True)
    replay_parser = commands.add_parser(
        "replay", help="apply tool call events from a JSON-lines file and print the calls"
    )
    replay_parser.add_argument("file", help="a JSON-lines file of events, or - for stdin")
    output = replay_parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print calls as JSON lines")
    output.add_argument(
        "--trace", metavar="ID", help="print the path of call ID as a diagram trace (JSON lines)"
    )
    replay_parser.add_argument(
        "--max-history", type=_positive, default=None, help="keep at most N calls (finished first)"
    )
    # ``--format`` (a provider's recorded stream) and ``--tools``: see toolcalls.adapters (L6).
    provider_replay.add_arguments(replay_parser)
    # ``toolcalls conformance``: the seed 000 conformance suite (see toolcalls.conformance).
    add_conformance_arguments(
        commands.add_parser(
            "conformance", help="check an implementation of seed 000 against the tool call chart"
        )
    )
    return main_parser


def _version() -> str:
    try:
        return metadata.version("toolcalls")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = parser().parse_args(argv)
    if args.command == "conformance":
        return run_conformance(args)
    # Text from a stream may hold lone surrogates (a "\ud800" escape); write them escaped.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    try:
        status = _run_replay(args, sys.stdout, sys.stderr)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head -1``): it has what it wanted. Point stdout at
        # devnull so the interpreter's own flush at exit cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
