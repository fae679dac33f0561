"""docs/spec.md is the specification (P3, P4): its rules are numbered, each number is used once,
and the tests cite the rules they check, so a rule without a test shows up here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = (ROOT / "docs" / "spec.md").read_text(encoding="utf-8")
RULE = re.compile(r"^\*\*(?P<id>[A-Z]\d+)\.", re.MULTILINE)

#: Sections whose rules must each be cited by a test. P holds project-wide principles, checked by
#: the tooling (ruff, mypy, the layout tests) rather than by one test each.
TESTED_SECTIONS = "TXSCDMLAR"

#: Rules no test cites yet, each with the reason. Keep it short; it only ever shrinks.
NOT_CITED: dict[str, str] = {
    "T25": "it says what is out of scope; there is nothing to run",
    "S11": "a performance design (arguments parsed once, copied at most once), measured by "
    "benchmarks/bench_session.py rather than asserted",
}


def rule_ids() -> list[str]:
    return [match["id"] for match in RULE.finditer(SPEC)]


def test_rules_are_numbered_once_each_and_in_order() -> None:
    ids = rule_ids()
    assert len(ids) == len(set(ids))
    for section in sorted({rule[0] for rule in ids}):
        numbers = [int(rule[1:]) for rule in ids if rule[0] == section]
        assert numbers == list(range(1, len(numbers) + 1)), section


def test_every_rule_is_cited_by_a_test() -> None:
    tests = "\n".join(
        path.read_text(encoding="utf-8")
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name != Path(__file__).name
    )
    uncited = {
        rule
        for rule in rule_ids()
        if rule[0] in TESTED_SECTIONS and not re.search(rf"\b{rule}\b", tests)
    }
    assert uncited == set(NOT_CITED), (
        f"rules no test cites: {sorted(uncited - set(NOT_CITED))}; cite each in the test that "
        "checks it (in a docstring, or a '# Rules checked here (docs/spec.md): ...' line), or "
        f"list it in NOT_CITED with the reason. Cited now, drop from NOT_CITED: "
        f"{sorted(set(NOT_CITED) - uncited)}"
    )


def test_the_repository_points_to_no_document_outside_it() -> None:
    """P3: code, tests and docs cite docs/spec.md, never the documents it was written from."""
    outside = re.compile("|".join(("DESI" + "GN", r"\.\./" + "shared", "/work/" + "shared")))
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("statecharts", "toolcalls", "tests", "docs")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".md", ".txt", ".json")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line)
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not outside.search(readme)
    assert found == []
