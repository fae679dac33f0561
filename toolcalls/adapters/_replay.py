"""``toolcalls replay --format FORMAT [--tools MODULE:REGISTRY]``: a recorded provider stream,
replayed through its adapter into a tracker, or into a session that runs the tools.

A recording holds one JSON payload per line (what each SSE ``data:`` frame carried); blank lines
and lines whose only key starts with ``_`` (``{"_comment": ...}``, ``{"_sse_data": "[DONE]"}``)
are skipped. The command line keeps only the wiring; everything else is here.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .._errors import InvalidChunk, InvalidEvent, InvalidTool
from .._record import ToolCallView, parse_json
from .._session import ToolCallSession
from .._tools import Tool, ToolFunction
from .._tracker import ToolCallTracker
from . import ADAPTERS
from ._base import Event

#: Every ``--format``: ``native`` (our own events) and one per adapter.
FORMATS: tuple[str, ...] = ("native", *ADAPTERS)


class ReplayInputError(Exception):
    """A line of the recording, or the ``--tools`` registry, cannot be used (the command line
    turns it into exit status 2)."""

    def __init__(self, line: int | None, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(problem if line is None else f"line {line}: {problem}")


@dataclass
class ProviderReplay:
    """What replaying a recording produced: the calls, each call's lifecycle (the statuses it
    went through), and a note per event the tracker ignored."""

    calls: list[ToolCallView]
    lifecycles: dict[str, list[str]]
    ignored: list[str] = field(default_factory=list)


def payloads(lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """(line number, JSON payload) of every line that is not blank or a ``_`` note."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:  # the rules arguments are parsed with: JSON.parse, numbers a double holds,
            # nesting within reach (so a result of 1e999 or 100,000 brackets is a bad line)
            payload = parse_json(line, "the line nests")
        except ValueError as error:
            raise ReplayInputError(number, f"not valid JSON: {error}") from None
        if isinstance(payload, dict) and len(payload) == 1 and next(iter(payload)).startswith("_"):
            continue
        yield number, payload


def native_events(lines: Iterable[str], fmt: str) -> list[tuple[int, Event]]:
    """The native events of a recording in ``fmt``, each with the line that made it (the
    events ``finish()`` adds carry the last line's number)."""
    if fmt == "native":
        return list(payloads(lines))
    adapter = ADAPTERS[fmt]()
    events: list[tuple[int, Event]] = []
    number = 0
    for number, payload in payloads(lines):
        if not isinstance(payload, dict):
            raise ReplayInputError(number, f"expected a JSON object, got {type(payload).__name__}")
        try:
            events.extend((number, event) for event in adapter.feed(payload))
        except InvalidChunk as error:
            raise ReplayInputError(number, str(error)) from None
    events.extend((number, event) for event in adapter.finish())
    return events


def load_tools(spec: str) -> Mapping[str, ToolFunction | Tool]:
    """The registry named ``MODULE:NAME`` (a module path, or a ``.py`` file): a mapping of tool
    names to functions or ``Tool``s."""
    module_name, _, attribute = spec.rpartition(":")
    if not module_name or not attribute:
        raise ReplayInputError(None, f"--tools {spec!r}: expected MODULE:REGISTRY")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name)
            loader = importlib.util.spec_from_file_location(path.stem, path)
            if loader is None or loader.loader is None or not path.is_file():
                raise ReplayInputError(None, f"--tools {spec!r}: no file {module_name}")
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            if "" not in sys.path:
                sys.path.insert(0, "")  # a module of the current directory, as python -m would
            module = importlib.import_module(module_name)
    except ReplayInputError:
        raise
    except Exception as error:
        raise ReplayInputError(
            None, f"--tools {spec!r}: cannot load {module_name}: {error}"
        ) from None
    registry = getattr(module, attribute, None)
    if not isinstance(registry, Mapping) or not all(isinstance(k, str) for k in registry):
        raise ReplayInputError(
            None, f"--tools {spec!r}: {attribute} must be a mapping of tool names to tools"
        )
    return registry


def replay_events(
    events: list[tuple[int, Event]],
    tools: Mapping[str, ToolFunction | Tool] | None = None,
    max_history: int | None = None,
) -> ProviderReplay:
    """Apply the events to a tracker, or, with ``tools``, to a session that runs them."""
    if tools is None:
        tracker = ToolCallTracker(max_history=max_history)
        lifecycles, ignored = _apply_all(tracker.apply, events)
        return ProviderReplay(tracker.list(), lifecycles, ignored)
    return asyncio.run(_run_session(events, tools, max_history))


async def _run_session(
    events: list[tuple[int, Event]],
    tools: Mapping[str, ToolFunction | Tool],
    max_history: int | None,
) -> ProviderReplay:
    history = max_history if max_history is not None else max(50, len(events))
    async with ToolCallSession(tools, max_history=history) as session:
        lifecycles, ignored = _apply_all(session.apply, events)
        session.finish()
        async for _ in session.settled():
            pass
        calls = session.tracker.list()
    for call in calls:  # the tools' outcomes, which the session applied itself
        steps = lifecycles.setdefault(call.id, [call.status])
        if steps[-1] != call.status:
            steps.append(call.status)
    return ProviderReplay(calls, lifecycles, ignored)


def _apply_all(
    apply: Any, events: list[tuple[int, Event]]
) -> tuple[dict[str, list[str]], list[str]]:
    lifecycles: dict[str, list[str]] = {}
    ignored: list[str] = []
    for number, event in events:
        try:
            outcome = apply(event)
        except InvalidEvent as error:
            raise ReplayInputError(number, str(error)) from None
        call_id = str(event["id"])
        if not outcome.applied:
            ignored.append(f"line {number}: {call_id}: {outcome.message}")
            continue
        steps = lifecycles.setdefault(call_id, [])
        if not steps or steps[-1] != outcome.status:
            steps.append(outcome.status)
    return lifecycles, ignored


def _cell(value: Any, width: int) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):  # a tool's result JSON cannot hold: shown as Python
            text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _json_line(call: ToolCallView, ascii_only: bool = False) -> str:
    """The call as one JSON line (JSON's own escapes for every non-ASCII character when
    ``ascii_only``); ``ReplayInputError`` when a tool's result is not JSON."""
    try:
        return json.dumps(call.to_dict(), ensure_ascii=ascii_only, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ReplayInputError(
            None, f"call {call.id!r}: its result cannot be written as JSON ({error})"
        ) from None


def _outcome(call: ToolCallView) -> str:
    if call.has_error:
        error = call.error
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            error = error["message"]
        return "error: " + _cell(error, 90)
    return _cell(call.result, 60) if call.has_result else ""


def table(done: ProviderReplay) -> str:
    """The calls in start order: id, tool, the statuses each went through, its arguments (or
    their text, when they never parsed) and its result or error."""
    rows = [("ID", "NAME", "LIFECYCLE", "ARGS", "RESULT / ERROR")]
    for call in done.calls:
        args = _cell(call.args, 40) if call.has_args else _cell(call.args_text, 40)
        lifecycle = " -> ".join(done.lifecycles.get(call.id, [call.status]))
        rows.append((call.id, call.name, lifecycle, args, _outcome(call)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = (
        "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[4]])
        for row in rows
    )
    return "\n".join(line.rstrip() for line in lines)


def summary(calls: list[ToolCallView]) -> str:
    """``3 calls: 2 done, 1 error``."""
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.status] = counts.get(call.status, 0) + 1
    order = ("pending", "running", "done", "error")
    parts = ", ".join(f"{counts[status]} {status}" for status in order if status in counts)
    return f"{len(calls)} call{'s' if len(calls) != 1 else ''}" + (f": {parts}" if parts else "")


def run_replay(
    source: Iterable[str],
    fmt: str,
    tools_spec: str | None,
    max_history: int | None,
    as_json: bool,
    ascii_only: bool = False,
) -> tuple[ProviderReplay, list[str]]:
    """Replay a recording; return what it produced and the lines to print. Raises
    ``ReplayInputError`` for a bad line or registry, ``UnicodeDecodeError`` for a non-UTF-8
    file."""
    tools = None if tools_spec is None else load_tools(tools_spec)
    try:
        done = replay_events(native_events(source, fmt), tools, max_history)
    except InvalidTool as error:  # the registry holds something the executor cannot call
        raise ReplayInputError(None, f"--tools {tools_spec!r}: {error}") from None
    if as_json:
        return done, [_json_line(call, ascii_only) for call in done.calls]
    lines = [table(done), "", summary(done.calls)]
    if done.ignored:
        count = len(done.ignored)
        lines.append(f"{count} ignored event{'s' if count != 1 else ''}:")
        lines.extend(f"  {note}" for note in done.ignored)
    return done, lines


def run_cli(args: Any, out: IO[str], err: IO[str]) -> int:
    """``toolcalls replay FILE`` with ``--format`` other than ``native`` or with ``--tools``:
    print what the replay produced; a bad line, registry or file is one line on ``err`` and
    exit status 2 (L5)."""
    if args.trace is not None:
        print("toolcalls replay: --trace reads native streams, without --tools", file=err)
        return 2
    try:
        source = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115
    except OSError as error:
        print(f"toolcalls replay: cannot read {args.file}: {error.strerror}", file=err)
        return 2
    try:
        with source:
            # Characters the output's encoding cannot hold would be written as Python
            # escapes, which are not JSON: write JSON's own escapes then.
            encoding = (getattr(out, "encoding", None) or "").lower().replace("-", "")
            _, lines = run_replay(
                source, args.format, args.tools, args.max_history, args.json, encoding != "utf8"
            )
    except ReplayInputError as error:
        where = "" if error.line is None else f"{args.file}: "
        print(f"toolcalls replay: {where}{error}", file=err)
        return 2
    except UnicodeDecodeError as error:
        print(f"toolcalls replay: {args.file}: not UTF-8 text ({error.reason})", file=err)
        return 2
    for line in lines:
        print(line, file=out)
    return 0


def add_arguments(replay_parser: argparse.ArgumentParser) -> None:
    """``--format`` and ``--tools`` of ``toolcalls replay``."""
    replay_parser.add_argument(
        "--format",
        choices=FORMATS,
        default="native",
        help="what the file records: our events (native, the default) or a provider's stream",
    )
    replay_parser.add_argument(
        "--tools",
        metavar="MODULE:REGISTRY",
        help="run the calls with the tools in this mapping (a module path or a .py file)",
    )


def wants(args: argparse.Namespace) -> bool:
    """Whether ``toolcalls replay`` was asked for a provider format or for tools."""
    return bool(args.format != "native" or args.tools is not None)
