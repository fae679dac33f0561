"""P6: the mutation score of the statecharts modules is measured against their hand-written tests
(``tools/mutation_score.py``): a new test file must join that selection, or the score
reported understates what the tests catch (a round's review files were once left out, and
mutants they kill counted as survivors)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]

#: Statecharts test files that judge no runtime mutant worth their cost: the W3C suite
#: (minutes per run) and the diagram renderers' tests (no runtime code runs in them).
LEFT_OUT = {
    "tests/statecharts/test_w3c.py",
    "tests/statecharts/test_diagram.py",
    "tests/statecharts/test_diagram_files.py",
    "tests/statecharts/test_diagram_overlay.py",
    "tests/statecharts/test_diagram_quoting.py",
    "tests/statecharts/test_coverage_report.py",
}


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mutation_score", ROOT / "tools" / "mutation_score.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_score"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_statecharts_test_file_judges_the_runtime_mutants() -> None:
    tool = _tool()
    selected = set(tool.MODULES["statecharts/_runtime.py"]) | set(
        tool.REAL_ONLY["statecharts/_runtime.py"]
    )
    files = {
        path.relative_to(ROOT).as_posix()
        for pattern in ("tests/statecharts/test_*.py", "tests/review/test_review_issue_10*.py")
        for path in ROOT.glob(pattern)
    }
    assert sorted(files - selected - LEFT_OUT) == []


def test_the_mutation_selection_names_only_files_that_exist() -> None:
    tool = _tool()
    named = {name for tests in tool.MODULES.values() for name in tests}
    named |= {name for tests in tool.REAL_ONLY.values() for name in tests}
    assert sorted(name for name in named if not (ROOT / name).is_file()) == []
    assert not LEFT_OUT & set(tool.REAL_ONLY["statecharts/_runtime.py"])
