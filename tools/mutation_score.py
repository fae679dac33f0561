"""Mutation scores measured with mutmut, the way the project reports them (not in CI).

    python tools/mutation_score.py derived                     # (or `make mutation`)
    python tools/mutation_score.py module toolcalls/_session.py
    python tools/mutation_score.py module toolcalls/_executor.py
    python tools/mutation_score.py module statecharts/_runtime.py --sample 100 --seed 2026
    python tools/mutation_score.py module statecharts/_codegen.py

Two modes:

- ``derived``: the derived tests alone (``tools/mutation/test_derived_only.py``: the seed 000
  conformance suite and the tracker's derived machines, both against an independent model)
  against every mutant of the tracker and its chart (``toolcalls/_tracker.py``, ``_chart.py``,
  ``_record.py``). No hand-written test runs.
- ``module MODULE``: one module against the hand-written tests that exercise it.

``--only GLOB`` (mutmut names, e.g. ``'statecharts._runtime.x_*'``) and ``--sample N --seed S``
(a uniformly random sample of the module's mutants, drawn after mutmut generated them) measure
part of a module when the whole takes too long; the score printed is then the part's, labelled
so, with its 95% Wilson interval. ``--keep`` keeps the temporary copy and ``--resume DIR`` goes
on with it: a resumed sample runs only the mutants it has not judged yet.

Needs ``mutmut`` (``pip install -e '.[mutation]'``); it runs the tests once per mutant, so it
takes minutes to an hour: it runs one mutant at a time under ``nice`` unless told otherwise.
Steps:

1. copy the working tree to a temporary directory (nothing here is touched) and run
   ``mutmut run`` there on the mode's modules with the mode's tests (the quick files first,
   and for the statecharts modules fewer Hypothesis examples: ``tools/mutation/fast_first.py``);
2. re-run survivors *for real*: mutmut switches a mutant on through a trampoline at call
   time, so a mutant in code that runs at import or class-creation time (the chart's
   declaration, tables built at import, covering paths a test module computes at import)
   survives there untested; the script applies each such survivor to the source
   (``mutmut apply``) and runs the same tests normally (with, for the statecharts modules,
   the tests that cannot run under mutmut's trampolines: the async tests, test_compile.py,
   the review tests), and a failure counts as killed. In ``derived`` mode only the survivors
   in functions that run while the tests' modules are imported are re-run (found by
   profiling those imports): every other function runs only after the trampoline switched
   the mutant on, so a real run gives mutmut's verdict again (each re-run costs a whole test
   session; re-running them all took hours);
3. leave out the mutants listed as equivalent in ``tools/equivalent_mutants.txt`` (one name per
   line, ``#`` then the reason no test can tell it from the original);
4. print the score, ``killed / (mutants - equivalent)``, and every mutant that survived with
   its diff, so each can be killed by a test or argued equivalent.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import random
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
    #: Tests that cannot run under mutmut's trampolines but judge a survivor re-run for real.
    real_only: tuple[str, ...] = ()
    #: Hypothesis examples per test (those that set no count of their own) in mutmut's pass;
    #: a survivor's re-run for real always runs the full ``default`` profile (60).
    examples: int = 60
    #: The modules the tests import (``()``: re-run every survivor for real, see step 2).
    imports: tuple[str, ...] = ()


DERIVED = Target(
    ("toolcalls/_tracker.py", "toolcalls/_chart.py", "toolcalls/_record.py"),
    ("tools/mutation/test_derived_only.py",),
    imports=("toolcalls", "toolcalls.conformance", "tests.toolcalls.test_tracker_stateful"),
)
#: The hand-written tests that exercise each module (mutmut runs, per mutant, those of them
#: that reach the mutated function).
MODULES: dict[str, tuple[str, ...]] = {
    "toolcalls/_session.py": (
        "tests/toolcalls/test_session.py",
        "tests/toolcalls/test_session_rules.py",
        "tests/toolcalls/test_session_rules_more.py",
        "tests/toolcalls/test_checkpoint.py",
        "tests/toolcalls/test_executor_threads_waiters.py",
        "tests/review/test_review_issue_8.py",
        "tests/review/test_review_issue_8_more.py",
        "tests/review/test_review_issue_8_r3.py",
        "tests/review/test_review_issue_8_r3_more.py",
        "tests/toolcalls/test_session_between_events.py",
        "tests/review/test_review_issue_8_r7.py",
    ),
    "toolcalls/_executor.py": (
        "tests/toolcalls/test_executor.py",
        "tests/toolcalls/test_executor_defects.py",
        "tests/toolcalls/test_executor_errors.py",
        "tests/toolcalls/test_executor_tools.py",
        "tests/toolcalls/test_executor_edges.py",
        "tests/toolcalls/test_executor_threads_waiters.py",
        "tests/toolcalls/test_executor_chart.py",
        "tests/toolcalls/test_runner.py",
        "tests/toolcalls/test_session.py",
        "tests/toolcalls/test_session_rules_more.py",
        "tests/review/test_review_issue_8_r3_more.py",
        "tests/toolcalls/test_executor_thread_start.py",
    ),
}
#: The statecharts runtime, code generator and hierarchy algorithm: the fast behaviour tests
#: (the differential test against python-statemachine among them); the W3C suite is left out
#: (minutes per mutant).
STATECHARTS_TESTS = (  # the quick ones first: a survivor re-run for real stops at a failure
    "tests/statecharts/test_codegen_mutants.py",
    "tests/statecharts/test_codegen_mutants_r9.py",
    "tests/statecharts/test_codegen_mutants_r10.py",
    "tests/statecharts/test_returned_awaitable.py",
    "tests/statecharts/test_hierarchy_mutants.py",
    "tests/statecharts/test_hierarchy_mutants_r9.py",
    "tests/statecharts/test_hierarchy_mutants_r10.py",
    "tests/statecharts/test_hierarchy_source.py",
    "tests/statecharts/test_runtime_mutants_r7.py",
    "tests/statecharts/test_runtime_mutants_r9.py",
    "tests/statecharts/test_runtime_mutants_r10.py",
    "tests/statecharts/test_hierarchy_mutants_r7.py",
    "tests/statecharts/test_runtime_details.py",
    "tests/statecharts/test_codegen_details.py",
    "tests/statecharts/test_codegen.py",
    "tests/statecharts/test_runtime.py",
    "tests/statecharts/test_hierarchy.py",
    "tests/statecharts/test_callback_arguments.py",
    "tests/statecharts/test_flat_eventless.py",
    "tests/statecharts/test_loaded.py",
    "tests/statecharts/test_custom_init.py",
    "tests/statecharts/test_snapshot.py",
    "tests/statecharts/test_time.py",
    "tests/statecharts/test_time_stateful.py",
    "tests/statecharts/test_differential.py",
    "tests/statecharts/test_runtime_r9.py",
)
#: Run only when a survivor is re-run for real: test_compile.py compares vars(Instance) with
#: the names a chart may not use, and mutmut's trampolines add a name per mutant to the class;
#: the async tests fail under the trampolines of _runtime and _hierarchy (an async chart's
#: synchronous steps run in a greenlet, and a trampoline then resets a context variable's token
#: in another context than the one that set it).
#: The review tests of the statecharts runtime run there too (some run async charts).
STATECHARTS_REAL_ONLY = (
    "tests/statecharts/test_compile.py",
    "tests/statecharts/test_async.py",
    "tests/statecharts/test_codegen_async.py",
    "tests/statecharts/test_runtime_mutants_r7_async.py",
    "tests/statecharts/test_runtime_mutants_r9_async.py",
    "tests/statecharts/test_runtime_mutants_r10_async.py",
    "tests/statecharts/test_async_r7_fixes.py",
    "tests/statecharts/test_instance_class.py",
    "tests/statecharts/test_differential_async.py",
    "tests/statecharts/test_runtime_r8.py",
    "tests/statecharts/test_divergences_r8.py",
    "tests/review/test_review_issue_10_r8.py",
    "tests/review/test_review_issue_10_r9.py",
    "tests/review/test_review_issue_10_r10.py",
    "tests/review/test_review_issue_10_r10b.py",
    "tests/review/test_review_issue_10.py",
    "tests/review/test_review_issue_10_more.py",
    "tests/review/test_review_issue_10_r3.py",
    "tests/review/test_review_issue_10_r3_more.py",
    "tests/review/test_review_issue_10b_r3.py",
    "tests/review/test_review_issue_10b_r3_more.py",
    # the later rounds' focused and review files (cheap: about 50 s together)
    "tests/statecharts/test_runtime_mutants_r13.py",
    "tests/statecharts/test_runtime_mutants_r17.py",
    "tests/statecharts/test_runtime_mutants_r18.py",
    "tests/statecharts/test_codegen_mutants_r18.py",
    "tests/review/test_review_issue_10_r18.py",
    "tests/review/test_review_issue_10_r18b.py",
    "tests/review/test_review_issue_10_r18c.py",
    "tests/statecharts/test_codegen_mutants_r13.py",
    "tests/statecharts/test_hierarchy_mutants_r13.py",
    "tests/statecharts/test_review_fixes_r9.py",
    "tests/statecharts/test_shadowing_values.py",
    "tests/statecharts/test_time_order.py",
    "tests/statecharts/test_chart_descriptors.py",
    "tests/statecharts/test_compile_scan.py",
    "tests/statecharts/test_configuration_set.py",
    "tests/statecharts/test_machine_fields.py",
    "tests/statecharts/test_hierarchy_coverage.py",
    "tests/statecharts/test_paths.py",
    "tests/statecharts/test_testing.py",
    "tests/statecharts/test_derived.py",
    "tests/review/test_review_issue_10_r4.py",
    "tests/review/test_review_issue_10_r4_more.py",
    "tests/review/test_review_issue_10r_r5.py",
    "tests/review/test_review_issue_10r_r5_more.py",
    "tests/review/test_review_issue_10r_r6.py",
    "tests/review/test_review_issue_10r_r6_more.py",
    "tests/review/test_review_issue_10_r7.py",
    "tests/review/test_review_issue_10_r7_more.py",
    "tests/review/test_review_issue_10_r12.py",
    "tests/review/test_review_issue_10_r13.py",
    "tests/review/test_review_issue_10_r14.py",
    "tests/review/test_review_issue_10_r15.py",
    "tests/review/test_review_issue_10_r16.py",
)
MODULES["statecharts/_codegen.py"] = (*STATECHARTS_TESTS, "tests/statecharts/test_async.py")
MODULES["statecharts/_runtime.py"] = STATECHARTS_TESTS
MODULES["statecharts/_hierarchy.py"] = STATECHARTS_TESTS
REAL_ONLY = {
    module: STATECHARTS_REAL_ONLY for module in MODULES if module.startswith("statecharts/")
}
#: The statecharts selection took 20-60 s a mutant; measured (pytest --durations, one run,
#: 333 tests, 22 s), the differential test's 27 Hypothesis tests at 60 examples were 10 s of it
#: and no single test dominated the rest. mutmut's pass runs them with 20 examples (a survivor's
#: re-run for real with 60, so a mutant only they catch is still caught), and with the quick
#: focused files first (``tools/mutation/fast_first.py``), so a killed mutant stops early.
EXAMPLES = {module: 20 for module in MODULES if module.startswith("statecharts/")}
PACKAGES = ("toolcalls", "statecharts")
#: Where a kept copy remembers which mutants a --only or --sample run judges.
SELECTION = "mutation-selection.txt"
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
    """mutmut reads its settings from setup.cfg; the copy gets its own.

    ``source_paths`` is the mutated modules' own package (mutmut names mutants after it); the
    other package is copied alongside unchanged.
    """
    package = target.modules[0].split("/")[0]
    others = [other for other in PACKAGES if other != package]
    lines = [
        "[mutmut]",
        f"source_paths={package}",
        "only_mutate=",
        *(f"    {module}" for module in target.modules),
        "also_copy=",
        *(f"    {other}" for other in others),
        "    examples",
        "    diagrams",
        "    tests",
        "    tools",
        "    README.md",
        # a mutant that loops forever is stopped after 6 times its tests' measured time in CPU
        # seconds (mutmut's default, 30 times, costs an hour a loop on a shared machine)
        "timeout_multiplier=3",
        # each mutant's tests in a process forked before any test ran: mutmut 3.8's default,
        # fork, runs the stats and clean passes in the process it then forks every mutant from,
        # so what those passes left (a chart compiled, a cache filled) is there before a
        # mutant's first test, as in no real run
        "process_isolation=forkserver",
        "pytest_add_cli_args_test_selection=",
        *(f"    {test}" for test in target.tests),
        "pytest_add_cli_args=",
        "    -p",
        "    tools.mutation.hang_guard",
        "    -p",
        "    no:cacheprovider",
        "    -p",
        "    no:statecharts",
        "    -p",
        "    tools.mutation.fast_first",
        "    -q",
    ]
    lines += [f"    --deselect={test}" for test in deselected(work)]
    (work / "setup.cfg").write_text("\n".join(lines) + "\n", encoding="utf-8")


#: In a kept copy: the tests a retest leaves out, one node id a line (see ``retest_survivors``).
DESELECTED = "mutation-deselected.txt"


def deselected(work: Path) -> list[str]:
    path = work / DESELECTED
    if not path.exists():
        return []
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


def failing_unmutated(work: Path, target: Target, nice: int) -> list[str]:
    """The tests that fail on the copy's own, unmutated source: a test written since the
    measurement for a bug fixed since fails there on every mutant, so it judges none."""
    cache = work / ".unmutated-cache"
    shutil.rmtree(cache, ignore_errors=True)
    tests = [*target.real_only, *(test for test in target.tests if test not in target.real_only)]
    run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:statecharts",
            "-o",
            f"cache_dir={cache}",
            *tests,
        ],
        work,
        nice=nice,
    )
    failed = cache / "v" / "cache" / "lastfailed"
    found = sorted(json.loads(failed.read_text(encoding="utf-8"))) if failed.exists() else []
    shutil.rmtree(cache, ignore_errors=True)
    return found


def run(
    command: list[str],
    work: Path,
    *,
    nice: int,
    capture: bool = True,
    target: Target | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command in the copy; with ``target``, as mutmut's pass (see ``fast_first.py``)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(work),
        "HYPOTHESIS_PROFILE": "default",
        "MUTATION_EXAMPLES": os.environ.get("MUTATION_EXAMPLES", "60"),
        # a test of a real re-run (60 Hypothesis examples, a loaded machine) may take longer
        # than one of mutmut's pass before it counts as hanging
        "MUTATION_TEST_LIMIT": os.environ.get("MUTATION_TEST_LIMIT", "120"),
    }
    if target is not None:
        env["HYPOTHESIS_PROFILE"] = "mutation"
        env["MUTATION_EXAMPLES"] = os.environ.get("MUTATION_EXAMPLES", str(target.examples))
        env["MUTATION_TEST_LIMIT"] = os.environ.get("MUTATION_TEST_LIMIT", "20")
        env["MUTATION_TEST_ORDER"] = os.pathsep.join(target.tests)
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
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                # a mutant that makes a test hang (an async run waiting on itself) is killed
                # after MUTATION_TEST_LIMIT seconds instead of stopping the whole measurement
                "-p",
                "tools.mutation.hang_guard",
                *target.real_only,
                *(test for test in target.tests if test not in target.real_only),
                *(f"--deselect={test}" for test in deselected(work)),
            ],
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


def wilson(killed: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a sampled proportion."""
    if total == 0:
        return 0.0, 1.0
    p = killed / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def measured_commit() -> str:
    """The commit the working tree is at, and whether it had changes not committed."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True, capture_output=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=ROOT,
        text=True,
        capture_output=True,
    ).stdout.strip()
    return f"{head or 'unknown'}{' with uncommitted changes' if dirty else ''}"


@dataclass(frozen=True)
class Selection:
    """Which mutants a run judges: all of them, or those a --only/--sample run picked."""

    names: tuple[str, ...] | None
    how: str

    def save(self, work: Path) -> None:
        lines = [f"# {self.how}", *(self.names or ())] if self.names is not None else []
        (work / SELECTION).write_text("\n".join(lines) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, work: Path) -> Selection:
        path = work / SELECTION
        if not path.exists() or not path.read_text(encoding="utf-8").strip():
            return cls(None, "all mutants")
        how, *names = path.read_text(encoding="utf-8").splitlines()
        return cls(tuple(name for name in names if name), how.removeprefix("# "))


NO_MUTANT = "no-such-mutant__mutmut_0"


def generate(work: Path, target: Target, children: int, nice: int) -> dict[str, str] | None:
    """Let mutmut generate the mutants (and time the tests) without judging any.

    ``mutmut run`` with a name no mutant has does every step up to judging, then stops saying
    nothing matches: the mutants are then listed by ``mutmut results`` as not checked.
    """
    done = run(
        [sys.executable, "-m", "mutmut", "run", "--max-children", str(children), NO_MUTANT],
        work,
        nice=nice,
        target=target,
    )
    if "nothing matches" not in done.stdout + done.stderr:
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n", file=sys.stderr)
        return None
    return statuses(work)


def select(
    work: Path, target: Target, args: argparse.Namespace, children: int, nice: int
) -> Selection | None:
    """The mutants --only and --sample pick (all of them without either); None on failure."""
    if not args.only and args.sample is None:
        return Selection(None, "all mutants")
    every = generate(work, target, children, nice)
    if every is None:
        return None
    names = sorted(
        name
        for name in every
        if not args.only or any(fnmatch.fnmatch(name, glob) for glob in args.only)
    )
    how = f"{len(names)} of {len(every)} mutants matching {' '.join(args.only)}"
    if not args.only:
        how = f"all {len(every)} mutants"
    if args.sample is not None and args.sample < len(names):
        names = sorted(random.Random(args.seed).sample(names, args.sample))
        how = f"a uniformly random sample (seed {args.seed}) of {len(names)} of {how}"
    if not names:
        print(f"no mutant matches {args.only}", file=sys.stderr)
        return None
    return Selection(tuple(names), how)


def report(work: Path, label: str, target: Target, selection: Selection, nice: int) -> None:
    verdicts = statuses(work)
    if selection.names is not None:
        verdicts = {name: verdicts.get(name, "not checked") for name in selection.names}
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
    recorded = work / "mutation-commit.txt"
    commit = recorded.read_text(encoding="utf-8").strip() if recorded.exists() else "unknown"
    print(f"{label}: {len(verdicts)} mutants of {', '.join(target.modules)}")
    print(f"  measured: {selection.how}, at commit {commit}")
    for verdict in sorted(set(verdicts.values())):
        print(f"  mutmut {verdict}: {sum(1 for v in verdicts.values() if v == verdict)}")
    print(
        f"  survivors re-run for real: {len(rerun)}"
        f"{' (in code run at import)' if prefixes is not None else ''}, "
        f"killed: {len(real_kills)}"
    )
    print(f"  equivalent (tools/equivalent_mutants.txt): {len(verdicts) - len(counted)}")
    score = killed / max(len(counted), 1)
    print(f"  score: {killed}/{len(counted)} = {score:.1%} of non-equivalent mutants")
    if selection.names is not None and selection.how.startswith("a uniformly random sample"):
        low, high = wilson(killed, len(counted))
        print(f"  (a sample: 95% Wilson interval of the module's score {low:.1%} to {high:.1%})")
    for name in left:
        diff = run([sys.executable, "-m", "mutmut", "show", name], work, nice=0).stdout
        print(f"\nSURVIVED {name}\n{diff}")


def retest_survivors(
    work: Path, target: Target, selection: Selection, children: int, nice: int
) -> None:
    """Bring the copy's files but the mutated modules up to date with the working tree, then
    have mutmut run each survivor again, and each mutant an interrupted run left unchecked
    (named mutants are re-run whatever their verdict); of a sample, only the sample's. Tests
    that fail on the copy's own unmutated source are left out of the retest, named (a failure
    there is no kill)."""
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
    failing = failing_unmutated(work, target, nice)
    (work / DESELECTED).write_text("".join(f"{test}\n" for test in failing), encoding="utf-8")
    for test in failing:
        print(f"left out (fails on the measured source, so it judges no mutant): {test}")
    configure(work, target)
    equivalent = equivalent_names()
    names = [
        name
        for name, verdict in statuses(work).items()
        if verdict not in ("killed", "timeout")
        and name not in equivalent
        and (selection.names is None or name in selection.names)
    ]
    if names:
        command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(children)]
        run([*command, *names], work, nice=nice, capture=False, target=target)


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
        mode.add_argument(
            "--only",
            action="append",
            default=[],
            metavar="GLOB",
            help="judge only the mutants whose mutmut names match (e.g. "
            "'statecharts._runtime.x_*'); the score printed is theirs",
        )
        mode.add_argument(
            "--sample",
            type=int,
            metavar="N",
            help="judge a uniformly random sample of N mutants (of those --only picks); the "
            "score printed is the sample's, with its 95%% Wilson interval",
        )
        mode.add_argument("--seed", type=int, default=0, help="the sample's random seed")
    args = parser.parse_args(argv)
    if args.mode == "derived":
        target, label = DERIVED, "derived tests alone"
    else:
        target = Target(
            (args.module,),
            MODULES[args.module],
            REAL_ONLY.get(args.module, ()),
            EXAMPLES.get(args.module, 60),
        )
        label = args.module
    if shutil.which("mutmut", path=str(Path(sys.executable).parent)) is None:
        print("mutmut is not installed: pip install -e '.[mutation]'", file=sys.stderr)
        return 2
    if args.resume is not None:
        work, args.keep = args.resume, True
        selection = Selection.load(work)
        if args.retest_survivors:
            retest_survivors(work, target, selection, args.children, args.nice)
    else:
        work = Path(tempfile.mkdtemp(prefix="mutation-"))
        copy_tree(work)
        configure(work, target)
        (work / "mutation-commit.txt").write_text(measured_commit() + "\n", encoding="utf-8")
        picked = select(work, target, args, args.children, args.nice)
        if picked is None:
            shutil.rmtree(work, ignore_errors=True)
            return 1
        selection = picked
        selection.save(work)
    try:
        names: list[str] = []
        if selection.names is not None:  # only those not judged yet (a resumed run)
            verdicts = statuses(work)
            names = [name for name in selection.names if verdicts.get(name) == "not checked"]
        if selection.names is None or names:
            done = run(  # mutmut's own progress display shows; it resumes a kept copy's run
                [
                    sys.executable,
                    "-m",
                    "mutmut",
                    "run",
                    "--max-children",
                    str(args.children),
                    *names,
                ],
                work,
                nice=args.nice,
                capture=False,
                target=target,
            )
            if done.returncode != 0:
                print(f"mutmut run failed (exit status {done.returncode})", file=sys.stderr)
                return 1
        report(work, label, target, selection, args.nice)
        return 0
    finally:
        if args.keep:
            print(f"(kept {work})")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
