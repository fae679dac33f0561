"""Mutation scores measured with mutmut, the way the project reports them (not in CI).

    python tools/mutation_score.py derived                     # (or `make mutation`)
    python tools/mutation_score.py module toolcalls/_session.py
    python tools/mutation_score.py module toolcalls/_executor.py

Two modes:

- ``derived``: the derived tests alone (``tools/mutation/test_derived_only.py``: the seed 000
  conformance suite and the tracker's derived machines, both against an independent model)
  against every mutant of the tracker and its chart (``toolcalls/_tracker.py``, ``_chart.py``,
  ``_record.py``). No hand-written test runs.
- ``module MODULE``: one module against the hand-written tests that exercise it.

Needs ``mutmut`` (``pip install -e '.[mutation]'``); it runs the tests once per mutant, so it
takes minutes to an hour: it runs one mutant at a time under ``nice`` unless told otherwise.
Steps:

1. copy the working tree to a temporary directory (nothing here is touched) and run
   ``mutmut run`` there on the mode's modules with the mode's tests;
2. re-run every survivor *for real*: mutmut switches a mutant on through a trampoline at call
   time, so a mutant in code that runs at import or class-creation time (the chart's
   declaration, tables built at import) survives there untested; the script applies each
   survivor to the source (``mutmut apply``) and runs the same tests normally, and a failure
   counts as killed;
3. leave out the mutants listed as equivalent in ``tools/equivalent_mutants.txt`` (one name per
   line, ``#`` then the reason no test can tell it from the original);
4. print the score, ``killed / (mutants - equivalent)``, and every mutant that survived with
   its diff, so each can be killed by a test or argued equivalent.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "tools" / "equivalent_mutants.txt"


@dataclass(frozen=True)
class Target:
    """What one run mutates and which tests judge the mutants."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]


DERIVED = Target(
    ("toolcalls/_tracker.py", "toolcalls/_chart.py", "toolcalls/_record.py"),
    ("tools/mutation/test_derived_only.py",),
)
#: The hand-written tests that exercise each module (mutmut runs, per mutant, those of them
#: that reach the mutated function).
MODULES = {
    "toolcalls/_session.py": (
        "tests/toolcalls/test_session.py",
        "tests/toolcalls/test_session_rules.py",
        "tests/toolcalls/test_session_rules_more.py",
        "tests/toolcalls/test_checkpoint.py",
        "tests/review/test_review_issue_8.py",
        "tests/review/test_review_issue_8_more.py",
        "tests/review/test_review_issue_8_r3.py",
        "tests/review/test_review_issue_8_r3_more.py",
    ),
    "toolcalls/_executor.py": (
        "tests/toolcalls/test_executor.py",
        "tests/toolcalls/test_executor_defects.py",
        "tests/toolcalls/test_executor_errors.py",
        "tests/toolcalls/test_executor_tools.py",
        "tests/toolcalls/test_executor_edges.py",
        "tests/toolcalls/test_executor_chart.py",
        "tests/toolcalls/test_runner.py",
        "tests/toolcalls/test_session.py",
        "tests/toolcalls/test_session_rules_more.py",
        "tests/review/test_review_issue_8_r3_more.py",
    ),
}
SKIP = {".git", ".venv", "mutants", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis"}


def copy_tree(target: Path) -> None:
    for entry in ROOT.iterdir():
        if entry.name in SKIP or entry.name.endswith(".egg-info"):
            continue
        if entry.is_dir():
            shutil.copytree(
                entry, target / entry.name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(entry, target / entry.name)


def configure(work: Path, target: Target) -> None:
    """mutmut reads its settings from setup.cfg; the copy gets its own."""
    lines = [
        "[mutmut]",
        "source_paths=toolcalls",
        "only_mutate=",
        *(f"    {module}" for module in target.modules),
        "also_copy=",
        "    statecharts",
        "    examples",
        "    diagrams",
        "    tests",
        "    tools",
        "    README.md",
        "pytest_add_cli_args_test_selection=",
        *(f"    {test}" for test in target.tests),
        "pytest_add_cli_args=",
        "    -p",
        "    tools.mutation.hang_guard",
        "    -p",
        "    no:cacheprovider",
        "    -p",
        "    no:statecharts",
        "    -q",
    ]
    (work / "setup.cfg").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(
    command: list[str], work: Path, *, nice: int, capture: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(work),
        "HYPOTHESIS_PROFILE": "default",
        "MUTATION_EXAMPLES": os.environ.get("MUTATION_EXAMPLES", "60"),
    }
    if nice:
        command = ["nice", "-n", str(nice), *command]
    return subprocess.run(command, cwd=work, env=env, text=True, capture_output=capture)


def statuses(work: Path) -> dict[str, str]:
    """Every mutant of the run with mutmut's verdict."""
    done = run([sys.executable, "-m", "mutmut", "results", "--all", "true"], work, nice=0)
    found: dict[str, str] = {}
    for line in done.stdout.splitlines():
        match = re.match(r"\s*(\S+__mutmut_\d+): (.+)$", line)
        if match:
            found[match[1]] = match[2].strip()
    return found


def killed_for_real(work: Path, name: str, target: Target, nice: int) -> bool:
    """Apply the mutant to the copy's source, run the tests normally, restore the source."""
    sources = {module: (work / module).read_text(encoding="utf-8") for module in target.modules}
    try:
        applied = run([sys.executable, "-m", "mutmut", "apply", name], work, nice=0)
        if applied.returncode != 0:
            return False
        done = run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *target.tests],
            work,
            nice=nice,
        )
        return done.returncode != 0
    finally:
        for module, text in sources.items():
            (work / module).write_text(text, encoding="utf-8")


def equivalent_names() -> dict[str, str]:
    if not EQUIVALENT.exists():
        return {}
    names = {}
    for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
        name, _, reason = line.partition("#")
        if name.strip():
            names[name.strip()] = reason.strip()
    return names


def report(work: Path, label: str, target: Target, nice: int) -> None:
    verdicts = statuses(work)
    equivalent = equivalent_names()
    survivors = [
        name
        for name, verdict in verdicts.items()
        if verdict not in ("killed", "timeout") and name not in equivalent
    ]
    real_kills = []
    for index, name in enumerate(survivors, 1):
        print(f"\rre-running survivors for real: {index}/{len(survivors)}", end="", flush=True)
        if killed_for_real(work, name, target, nice):
            real_kills.append(name)
    print()
    left = [name for name in survivors if name not in real_kills]
    counted = [name for name in verdicts if name not in equivalent]
    killed = len(counted) - len(left)
    print(f"{label}: {len(verdicts)} mutants of {', '.join(target.modules)}")
    for verdict in sorted(set(verdicts.values())):
        print(f"  mutmut {verdict}: {sum(1 for v in verdicts.values() if v == verdict)}")
    print(f"  survivors killed when re-run for real: {len(real_kills)}")
    print(f"  equivalent (tools/equivalent_mutants.txt): {len(verdicts) - len(counted)}")
    score = killed / max(len(counted), 1)
    print(f"  score: {killed}/{len(counted)} = {score:.1%} of non-equivalent mutants")
    for name in left:
        diff = run([sys.executable, "-m", "mutmut", "show", name], work, nice=0).stdout
        print(f"\nSURVIVED {name}\n{diff}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    modes.add_parser("derived", help="the derived tests alone against the tracker and its chart")
    one = modes.add_parser("module", help="one module against its hand-written tests")
    one.add_argument("module", choices=sorted(MODULES), help="the module to mutate")
    for mode in modes.choices.values():
        mode.add_argument("--children", type=int, default=1, help="mutants run at once")
        mode.add_argument("--nice", type=int, default=10, help="niceness of the runs")
        mode.add_argument("--keep", action="store_true", help="keep the temporary copy")
        mode.add_argument(
            "--resume", type=Path, metavar="DIR", help="go on with a copy kept by --keep"
        )
    args = parser.parse_args(argv)
    if args.mode == "derived":
        target, label = DERIVED, "derived tests alone"
    else:
        target, label = Target((args.module,), MODULES[args.module]), args.module
    if shutil.which("mutmut", path=str(Path(sys.executable).parent)) is None:
        print("mutmut is not installed: pip install -e '.[mutation]'", file=sys.stderr)
        return 2
    if args.resume is not None:
        work, args.keep = args.resume, True
    else:
        work = Path(tempfile.mkdtemp(prefix="mutation-"))
        copy_tree(work)
        configure(work, target)
    try:
        done = run(  # mutmut's own progress display shows; it resumes a kept copy's run
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.children)],
            work,
            nice=args.nice,
            capture=False,
        )
        if done.returncode != 0:
            print(f"mutmut run failed (exit status {done.returncode})", file=sys.stderr)
            return 1
        report(work, label, target, args.nice)
        return 0
    finally:
        if args.keep:
            print(f"(kept {work})")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
