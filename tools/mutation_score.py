"""Mutation score of one module, measured with mutmut the way the project reports it.

    python tools/mutation_score.py toolcalls/_session.py
    python tools/mutation_score.py toolcalls/_executor.py --children 2

Not part of CI (it runs the module's tests once per mutant: minutes to tens of minutes).
Needs ``mutmut`` (``pip install -e '.[mutation]'``). Steps:

1. copy the working tree to a temporary directory (so nothing here is touched) and run
   ``mutmut run`` there on that one module, with the tests that exercise it;
2. re-run every survivor *for real*: mutmut switches a mutant on through a trampoline at call
   time, so a mutant in code that runs at import or class-creation time survives there without
   being tested; the script applies each survivor to the source (``mutmut apply``) and runs the
   same tests normally, and a failure counts as killed;
3. leave out the mutants listed as equivalent in ``tools/equivalent_mutants.txt`` (one name per
   line, ``#`` then the reason why no test can tell it from the original);
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "tools" / "equivalent_mutants.txt"
#: The tests that exercise each module (mutmut runs, per mutant, those of them that reach the
#: mutated function).
TESTS = {
    "toolcalls/_session.py": [
        "tests/toolcalls/test_session.py",
        "tests/toolcalls/test_session_rules.py",
        "tests/toolcalls/test_checkpoint.py",
        "tests/review/test_review_issue_8.py",
        "tests/review/test_review_issue_8_more.py",
        "tests/review/test_review_issue_8_r3.py",
    ],
    "toolcalls/_executor.py": [
        "tests/toolcalls/test_executor.py",
        "tests/toolcalls/test_executor_defects.py",
        "tests/toolcalls/test_executor_errors.py",
        "tests/toolcalls/test_executor_tools.py",
        "tests/toolcalls/test_executor_edges.py",
        "tests/toolcalls/test_session.py",
    ],
}
#: The statecharts runtime and code generator: the fast behaviour tests (the differential and
#: W3C suites are left out: minutes per mutant on a shared machine).
_STATECHARTS_TESTS = [
    "tests/statecharts/test_runtime.py",
    "tests/statecharts/test_hierarchy.py",
    "tests/statecharts/test_callback_arguments.py",
    "tests/statecharts/test_codegen.py",
    # test_compile.py is left out: it compares vars(Instance) with the names charts may not
    # use, and mutmut's trampolines add a name per mutant to the class
    "tests/statecharts/test_snapshot.py",
    "tests/statecharts/test_custom_init.py",
    "tests/statecharts/test_async.py",
]
TESTS["statecharts/_runtime.py"] = _STATECHARTS_TESTS
TESTS["statecharts/_codegen.py"] = _STATECHARTS_TESTS
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


def configure(work: Path, module: str, tests: list[str]) -> None:
    """mutmut reads its settings from setup.cfg; the copy gets its own."""
    package = module.split("/")[0]
    other = "statecharts" if package == "toolcalls" else "toolcalls"
    lines = [
        "[mutmut]",
        f"source_paths={package}",
        f"only_mutate={module}",
        "also_copy=",
        f"    {other}",
        "    examples",
        "    diagrams",
        "    README.md",
        "pytest_add_cli_args_test_selection=",
        *(f"    {test}" for test in tests),
        "pytest_add_cli_args=",
        "    -p",
        "    no:cacheprovider",
        "    -q",
    ]
    (work / "setup.cfg").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(command: list[str], work: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(work), "HYPOTHESIS_PROFILE": "default"}
    return subprocess.run(command, cwd=work, env=env, text=True, capture_output=True, **kwargs)  # type: ignore[call-overload, no-any-return]


def statuses(work: Path) -> dict[str, str]:
    """Every mutant of the run with mutmut's verdict."""
    done = run([sys.executable, "-m", "mutmut", "results", "--all", "true"], work, check=True)
    found: dict[str, str] = {}
    for line in done.stdout.splitlines():
        match = re.match(r"\s*(\S+__mutmut_\d+): (.+)$", line)
        if match:
            found[match[1]] = match[2].strip()
    return found


def killed_for_real(work: Path, name: str, module: str, tests: list[str]) -> bool:
    """Apply the mutant to the copy's source, run the tests normally, restore the source."""
    source = work / module
    original = source.read_text(encoding="utf-8")
    try:
        run([sys.executable, "-m", "mutmut", "apply", name], work, check=True)
        done = run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests], work
        )
        return done.returncode != 0
    finally:
        source.write_text(original, encoding="utf-8")


def equivalent_names() -> dict[str, str]:
    if not EQUIVALENT.exists():
        return {}
    names = {}
    for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
        name, _, reason = line.partition("#")
        if name.strip():
            names[name.strip()] = reason.strip()
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", choices=sorted(TESTS), help="the module to mutate")
    parser.add_argument("--children", type=int, default=1, help="mutants run at once")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    parser.add_argument(
        "--resume", type=Path, metavar="DIR", help="go on with a copy kept by --keep"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="GLOB",
        help="mutate only these functions (mutmut names, e.g. 'statecharts._runtime.x_*'): "
        "a sample, when the whole module takes too long; the score is the sample's",
    )
    args = parser.parse_args(argv)
    tests = TESTS[args.module]
    if args.resume is not None:
        work, args.keep = args.resume, True
    else:
        work = Path(tempfile.mkdtemp(prefix="mutation-"))
        copy_tree(work)
        configure(work, args.module, tests)
    try:
        done = run(
            [
                sys.executable,
                "-m",
                "mutmut",
                "run",
                "--max-children",
                str(args.children),
                *args.only,
            ],
            work,
        )
        if done.returncode != 0:
            print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
            return 1
        verdicts = statuses(work)
        equivalent = equivalent_names()
        survivors = [
            name for name, verdict in verdicts.items() if verdict in ("survived", "no tests")
        ]
        real_kills = [
            name for name in survivors if killed_for_real(work, name, args.module, tests)
        ]
        left = [name for name in survivors if name not in real_kills and name not in equivalent]
        counted = [name for name in verdicts if name not in equivalent]
        killed = len(counted) - len(left)
        print(f"{args.module}: {len(verdicts)} mutants")
        for verdict in sorted(set(verdicts.values())):
            print(f"  mutmut {verdict}: {sum(1 for v in verdicts.values() if v == verdict)}")
        print(f"  survivors killed when re-run for real: {len(real_kills)}")
        print(f"  equivalent (tools/equivalent_mutants.txt): {len(verdicts) - len(counted)}")
        score = killed / max(len(counted), 1)
        print(f"  score: {killed}/{len(counted)} = {score:.1%} of non-equivalent mutants")
        for name in left:
            diff = run([sys.executable, "-m", "mutmut", "show", name], work).stdout
            print(f"\nSURVIVED {name}\n{diff}")
        return 0
    finally:
        if args.keep:
            print(f"(kept {work})")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
