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
2. re-run survivors *for real*: mutmut switches a mutant on through a trampoline at call
   time, so a mutant in code that runs at import or class-creation time (the chart's
   declaration, tables built at import, covering paths a test module computes at import)
   survives there untested; the script applies each such survivor to the source
   (``mutmut apply``) and runs the same tests normally, and a failure counts as killed. In
   ``derived`` mode only the survivors in functions that run while the tests' modules are
   imported are re-run (found by profiling those imports): every other function runs only
   after the trampoline switched the mutant on, so a real run gives mutmut's verdict again
   (each re-run costs a whole test session; re-running them all took hours);
3. leave out the mutants listed as equivalent in ``tools/equivalent_mutants.txt`` (one name per
   line, ``#`` then the reason no test can tell it from the original);
4. print the score, ``killed / (mutants - equivalent)``, and every mutant that survived with
   its diff, so each can be killed by a test or argued equivalent.
"""

from __future__ import annotations

import argparse
import json
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
    #: The modules the tests import (``()``: re-run every survivor for real, see step 2).
    imports: tuple[str, ...] = ()


DERIVED = Target(
    ("toolcalls/_tracker.py", "toolcalls/_chart.py", "toolcalls/_record.py"),
    ("tools/mutation/test_derived_only.py",),
    ("toolcalls", "toolcalls.conformance", "tests.toolcalls.test_tracker_stateful"),
)
#: The hand-written tests that exercise each module (mutmut runs, per mutant, those of them
#: that reach the mutated function).
MODULES = {
    "toolcalls/_session.py": (
        "tests/toolcalls/test_session.py",
        "tests/toolcalls/test_session_rules.py",
        "tests/toolcalls/test_checkpoint.py",
        "tests/review/test_review_issue_8.py",
        "tests/review/test_review_issue_8_more.py",
        "tests/review/test_review_issue_8_r3.py",
    ),
    "toolcalls/_executor.py": (
        "tests/toolcalls/test_executor.py",
        "tests/toolcalls/test_executor_defects.py",
        "tests/toolcalls/test_executor_errors.py",
        "tests/toolcalls/test_executor_tools.py",
        "tests/toolcalls/test_executor_edges.py",
        "tests/toolcalls/test_session.py",
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


#: Run in the copy: import the tests' modules under a profiler and print, one per line, the
#: mutmut name prefix of each function of the mutated modules that ran meanwhile.
PROBE = """
import json, sys
modules, imports = json.loads(sys.argv[1]), json.loads(sys.argv[2])
files = {__import__("os").path.abspath(module): module for module in modules}
ran = set()

def hook(frame, event, arg):
    if event == "call" and frame.f_code.co_filename in files:
        ran.add((files[frame.f_code.co_filename], frame.f_code.co_qualname))

sys.setprofile(hook)
for name in imports:
    __import__(name)
sys.setprofile(None)
for module, qualname in sorted(ran):
    dotted = module[: -len(".py")].replace("/", ".")
    outer = qualname.split(".<locals>.")[0]
    owner, _, function = outer.rpartition(".")
    print(f"{dotted}.x\u01c1{owner}\u01c1{function}__" if owner else f"{dotted}.x_{function}__")
"""


def import_time_prefixes(work: Path, target: Target) -> set[str] | None:
    """The mutant name prefixes of the functions that run while the tests' modules are
    imported, or ``None`` when the target names no imports (then every survivor is re-run)."""
    if not target.imports:
        return None
    done = run(
        [
            sys.executable,
            "-c",
            PROBE,
            json.dumps(list(target.modules)),
            json.dumps(list(target.imports)),
        ],
        work,
        nice=0,
    )
    if done.returncode != 0:
        raise RuntimeError(f"profiling the imports failed:\n{done.stderr[-2000:]}")
    return set(done.stdout.split())


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
    prefixes = import_time_prefixes(work, target)
    rerun = [
        name
        for name in survivors
        if prefixes is None or any(name.startswith(prefix) for prefix in prefixes)
    ]
    real_kills = []
    for index, name in enumerate(rerun, 1):
        print(f"\rre-running survivors for real: {index}/{len(rerun)}", end="", flush=True)
        if killed_for_real(work, name, target, nice):
            real_kills.append(name)
    print()
    left = [name for name in survivors if name not in real_kills]
    counted = [name for name in verdicts if name not in equivalent]
    killed = len(counted) - len(left)
    print(f"{label}: {len(verdicts)} mutants of {', '.join(target.modules)}")
    for verdict in sorted(set(verdicts.values())):
        print(f"  mutmut {verdict}: {sum(1 for v in verdicts.values() if v == verdict)}")
    print(
        f"  survivors re-run for real: {len(rerun)} (in code run at import), "
        f"killed: {len(real_kills)}"
    )
    print(f"  equivalent (tools/equivalent_mutants.txt): {len(verdicts) - len(counted)}")
    score = killed / max(len(counted), 1)
    print(f"  score: {killed}/{len(counted)} = {score:.1%} of non-equivalent mutants")
    for name in left:
        diff = run([sys.executable, "-m", "mutmut", "show", name], work, nice=0).stdout
        print(f"\nSURVIVED {name}\n{diff}")


def retest_survivors(work: Path, target: Target, children: int, nice: int) -> None:
    """Bring the copy's files but the mutated modules up to date with the working tree, then
    have mutmut run each survivor again, and each mutant an interrupted run left unchecked
    (named mutants are re-run whatever their verdict)."""
    mutated = {ROOT / module for module in target.modules}
    for entry in ROOT.rglob("*"):
        relative = entry.relative_to(ROOT)
        if (
            not entry.is_file()
            or entry in mutated
            or relative.parts[0] in SKIP
            or relative.parts[0].endswith(".egg-info")
            or "__pycache__" in relative.parts
            or relative.name == "setup.cfg"
        ):
            continue
        (work / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(entry, work / relative)
    equivalent = equivalent_names()
    names = [
        name
        for name, verdict in statuses(work).items()
        if verdict not in ("killed", "timeout") and name not in equivalent
    ]
    if names:
        command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(children)]
        run([*command, *names], work, nice=nice, capture=False)


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
        mode.add_argument(
            "--retest-survivors",
            action="store_true",
            help="with --resume: copy the working tree's tests (and every file but the mutated "
            "modules) into the copy and run mutmut again on the survivors and the unchecked, so "
            "tests improved since the run judge them (the killed stay killed)",
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
        if args.retest_survivors:
            retest_survivors(work, target, args.children, args.nice)
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
