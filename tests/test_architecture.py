"""The module graph of docs/architecture.md: each package's modules import each other without
a cycle, counting imports deferred into functions (a deferred import hides a cycle, it does not
remove it). Imports under ``if TYPE_CHECKING:`` are left out: they name types for the checker and
never run."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def module_graph(package: str) -> dict[str, set[str]]:
    """``{module: modules of the same package it imports}``, from every import statement."""
    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        here = ".".join(parts[:-1])  # the package a relative import starts from
        imported: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = {
            id(child)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
            for statement in node.body
            for child in ast.walk(statement)
        }
        for node in ast.walk(tree):
            if id(node) in type_only:
                continue
            if isinstance(node, ast.ImportFrom):
                base = here.rsplit(".", node.level - 1)[0] if node.level else ""
                target = ".".join(part for part in (base, node.module or "") if part)
                imported.add(target)
                imported.update(f"{target}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        graph[name] = set()
        for target in imported:
            while target and target not in (name, package) and "." in target:
                if (ROOT / Path(*target.split("."))).with_suffix(".py").exists() or (
                    ROOT / Path(*target.split(".")) / "__init__.py"
                ).exists():
                    graph[name].add(target)
                    break
                target = target.rsplit(".", 1)[0]
    return graph


@pytest.mark.parametrize("package", ["statecharts", "toolcalls"])
def test_modules_import_each_other_without_cycles(package: str) -> None:
    graph = module_graph(package)
    assert len(graph) > 5
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as cycle:
        pytest.fail(f"import cycle: {' -> '.join(cycle.args[1])}")


def test_the_tracker_and_its_checkpoints_import_one_way() -> None:
    graph = module_graph("toolcalls")
    assert "toolcalls._snapshot" in graph["toolcalls._tracker"]
    assert "toolcalls._tracker" not in graph["toolcalls._snapshot"]
