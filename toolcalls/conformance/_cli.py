"""``toolcalls conformance``: run the seed 000 conformance suite against an implementation.

Exit status 0 when it conforms, 1 on a divergence (the shrunk event sequence is printed as
JSON lines, then what was expected and what came back), 2 on a protocol error or bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import IO, Any

from .._errors import ImplementationFailed, ProtocolError
from ._protocol import Implementation, ObjectImplementation, SubprocessImplementation, _text

EXIT_DIVERGENCE = 1
EXIT_PROTOCOL = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the ``conformance`` subcommand."""
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--cmd", metavar="COMMAND", help="a program speaking the JSON-lines protocol on stdio"
    )
    target.add_argument(
        "--object", metavar="MODULE:FACTORY", help="a Python factory of apply/get/list objects"
    )
    parser.add_argument(
        "--examples", type=int, default=1000, help="generated sequences (default 1000)"
    )
    parser.add_argument("--steps", type=int, default=20, help="rules per sequence (default 20)")
    parser.add_argument(
        "--random", action="store_true", help="new sequences each run (default: the same ones)"
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per answer")
    parser.add_argument("--quiet", action="store_true", help="no progress display")


def parser() -> argparse.ArgumentParser:
    """The parser of ``python -m toolcalls.conformance``."""
    main = argparse.ArgumentParser(
        prog="toolcalls conformance",
        description="Check an implementation of seed 000 (tool call streaming) against the "
        "tool call chart: generated interleaved sequences plus transition-covering paths.",
    )
    add_arguments(main)
    return main


def _dump(value: Any) -> str:
    return _text(value)


def _usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, or ``None``."""
    for option, value in (("--examples", args.examples), ("--steps", args.steps)):
        if value < 1:
            return f"{option} must be at least 1, got {value}"
    if not (args.timeout > 0 and args.timeout != float("inf")):
        return f"--timeout must be a positive number of seconds, got {args.timeout}"
    return None


def run(args: argparse.Namespace, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run the suite as the parsed ``args`` say; return the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        from ._suite import CHART, Counts, check, path_runs
    except ImportError as error:  # pragma: no cover - depends on the installation
        print(
            f"toolcalls conformance needs Hypothesis ({error}): pip install hypothesis", file=err
        )
        return EXIT_PROTOCOL
    usage = _usage_error(args)
    if usage is not None:
        print(f"toolcalls conformance: {usage}", file=err)
        return EXIT_PROTOCOL
    implementation: Implementation
    try:
        if args.cmd is not None:
            implementation = SubprocessImplementation(args.cmd, timeout=args.timeout)
        else:
            implementation = ObjectImplementation.from_spec(args.object)
    except ProtocolError as error:
        print(f"toolcalls conformance: {error}", file=err)
        return EXIT_PROTOCOL
    total = len(path_runs()) + args.examples
    show = not args.quiet and err.isatty()

    def progress(counts: Counts) -> None:
        if show:
            done = counts.paths + max(0, counts.sequences - counts.paths)
            print(f"\rconformance: {min(done, total)}/{total} sequences", end="", file=err)

    try:
        report = check(
            implementation,
            examples=args.examples,
            steps=args.steps,
            randomize=args.random,
            progress=progress,
        )
    except (ProtocolError, ImplementationFailed) as error:
        if show:
            print(file=err)
        print(f"toolcalls conformance: protocol error: {error}", file=err)
        return EXIT_PROTOCOL
    finally:
        implementation.close()
    if show:
        print(file=err)
    counts = report.counts
    taken, transitions = report.transitions_taken
    name = getattr(implementation, "name", "implementation")
    if report.divergence is not None:
        divergence = report.divergence
        print(f"DIVERGENCE in {name}: {divergence.problem}", file=out)
        print(f"minimal sequence ({len(divergence.transcript)} events, JSON lines):", file=out)
        for event in divergence.transcript:
            print(_dump(event), file=out)
        print(f"expected: {_dump(divergence.expected)}", file=out)
        print(f"actual:   {_dump(divergence.actual)}", file=out)
        return EXIT_DIVERGENCE
    print(
        f"{name} conforms to seed 000: {counts.paths} paths and "
        f"{counts.sequences - counts.paths} generated sequences, {counts.events} events, "
        f"{taken}/{transitions} transitions of {CHART.name} taken, {report.seconds:.1f} s",
        file=out,
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m toolcalls.conformance``."""
    return run(parser().parse_args(argv))
