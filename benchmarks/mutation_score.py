"""Mutation score of the derived tests alone, against the tracker and its chart (not in CI).

    pip install 'mutmut>=3.2' && python benchmarks/mutation_score.py   (or `make mutation`)

mutmut mutates ``toolcalls/_tracker.py``, ``toolcalls/_chart.py`` and ``toolcalls/_record.py``
in a scratch copy of the repository and runs the two tests of ``mutation/test_derived_only.py``
against each mutant: the seed 000 conformance suite (the tool call chart's derived stateful
test and its transition-covering paths, through the seed's API) and the chart's derived
stateful test through the tracker's own API (which also compares applied or ignored). The
tests, the reference chart and the oracle tracker come from an unmutated copy of the package
(``oracle_toolcalls``), or a mutant would change the test along with the code. No
hand-written test runs. Prints mutmut's summary, the score and every surviving mutant's diff.
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MUTATE = ["toolcalls/_tracker.py", "toolcalls/_chart.py", "toolcalls/_record.py"]


def prepare(scratch: Path) -> None:
    for package in ("statecharts", "toolcalls"):
        shutil.copytree(
            ROOT / package, scratch / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copytree(
        ROOT / "toolcalls",
        scratch / "oracle_toolcalls",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject = re.sub(
        r"testpaths = \[[^\]]*\]", 'testpaths = ["mutation_tests"]\npythonpath = ["."]', pyproject
    )
    pyproject = pyproject.replace('"--doctest-glob=README.md"', "")
    pyproject += (
        "\n[tool.mutmut]\n"
        'source_paths = ["toolcalls"]\n'
        f"only_mutate = {MUTATE!r}\n"
        'also_copy = ["statecharts/", "oracle_toolcalls/", "mutation_tests/"]\n'
        'pytest_add_cli_args_test_selection = ["mutation_tests"]\n'
        'pytest_add_cli_args = ["-x", "-p", "no:statecharts", "-p", "no:cacheprovider"]\n'
    ).replace("'", '"')
    (scratch / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    (scratch / "mutation_tests").mkdir()
    shutil.copy(HERE / "mutation" / "test_derived_only.py", scratch / "mutation_tests")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=60, help="generated sequences per mutant")
    parser.add_argument("--max-children", type=int, default=2, help="mutants run at once")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args()
    mutmut = shutil.which("mutmut", path=str(Path(sys.executable).parent)) or shutil.which(
        "mutmut"
    )
    if mutmut is None:
        print("mutmut is not installed: pip install 'mutmut>=3.2'", file=sys.stderr)
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="toolcalls-mutation-"))
    try:
        prepare(scratch)
        env = {**os.environ, "MUTATION_EXAMPLES": str(args.examples)}
        subprocess.run(
            [mutmut, "run", "--max-children", str(args.max_children)],
            cwd=scratch,
            env=env,
            check=False,
        )
        results = subprocess.run(
            [mutmut, "results", "--all", "true"],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
        ).stdout
        statuses: dict[str, list[str]] = {}
        for line in results.splitlines():
            name, _, status = line.strip().rpartition(": ")
            if name:
                statuses.setdefault(status, []).append(name)
        killed = len(statuses.get("killed", []))
        survived = statuses.get("survived", [])
        counted = killed + len(survived)
        print(
            "\nmutants by status: "
            + ", ".join(f"{k} {len(v)}" for k, v in sorted(statuses.items()))
        )
        if counted:
            print(f"score: {killed}/{counted} killed = {100 * killed / counted:.1f}%")
        for name in survived:
            diff = subprocess.run(
                [mutmut, "show", name], cwd=scratch, env=env, capture_output=True, text=True
            ).stdout
            print(f"\n--- survived: {name}\n{diff.strip()}")
    finally:
        if args.keep:
            print(f"scratch directory kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
