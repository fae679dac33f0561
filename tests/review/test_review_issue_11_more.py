"""Breaks found by an independent review of issue 11. Each test reproduces one; fix the code, do
not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import re
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from statemachine import State, StateChart

ROOT = Path(__file__).resolve().parents[2]


class _Light(StateChart[Any]):
    green = State(initial=True)
    red = State()
    cycle = green.to(red) | red.to(green)


def test_m3_record_coverage_counts_every_event_sent_from_several_threads() -> None:
    """A suite that drives charts from several threads under `record_coverage` (or
    `pytest --chart-coverage`) gets fewer transitions counted than were taken: the recorder
    increments plain dict counts without a lock, so concurrent increments are lost."""
    from statecharts import Coverage, compile_chart
    from statecharts.testing import record_coverage

    chart = compile_chart(_Light)
    events, threads = 20_000, 4
    coverage = Coverage()

    def work() -> None:
        instance = chart.create()
        for _ in range(events):
            instance.send("cycle")

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(5):  # a lost count shows in nearly every round; five make it certain
            with record_coverage(coverage):
                workers = [threading.Thread(target=work) for _ in range(threads)]
                for worker in workers:
                    worker.start()
                for worker in workers:
                    worker.join()
    finally:
        sys.setswitchinterval(interval)
    (counts,) = coverage.charts.values()
    assert sum(counts.taken.values()) == 5 * events * threads


@pytest.mark.parametrize(
    "chunk",
    [
        pytest.param({"toolCallId": "a", "toolName": "t", "args": {1: 2}}, id="non-str-arg-key"),
        pytest.param({"toolCallId": b"a", "toolName": "t", "args": {}}, id="bytes-id"),
    ],
)
def test_x20_register_call_and_the_published_chunk_model_agree(chunk: dict[Any, Any]) -> None:
    """The issue asks for one definition of a ready chunk (or a test that both agree);
    `ToolCallReadyChunk` rejects `args` with a non-string key that `register_call` runs, and
    accepts a bytes `toolCallId` that `register_call` refuses."""
    from pydantic import ValidationError

    from toolcalls import InvalidToolCall, ToolCallReadyChunk, ToolExecutor

    try:
        ToolCallReadyChunk.model_validate(chunk)
        model_accepts = True
    except ValidationError:
        model_accepts = False

    async def register() -> bool:
        async with ToolExecutor({"t": lambda args, signal: None}) as executor:
            try:
                executor.register_call(chunk)
            except InvalidToolCall:
                return False
            return True

    assert asyncio.run(register()) == model_accepts


def test_t7_reading_the_parsed_arguments_does_not_consume_them() -> None:
    """Issue 11 asks for parsing without a take-once side effect; `ToolCallModel.parsed` still
    clears the value when read, so a second read (a second action, a debugger, a log line)
    gets UNSET instead of the arguments."""
    from toolcalls._record import ToolCallModel

    record = ToolCallModel("a", "search", 0)
    record.parts.append('{"q": 1}')
    assert record.parse_arguments()
    assert record.parsed == {"q": 1}
    assert record.parsed == {"q": 1}


def test_t19_c5_the_two_packages_export_no_two_things_under_one_name() -> None:
    """Issue 11 asks for distinct names for the two `Outcome`s; `from toolcalls import *` and
    `from statecharts import *` still both bind `Outcome`, to different classes, so the second
    import silently shadows the first."""
    import statecharts
    import toolcalls

    clashes = sorted(
        name
        for name in set(toolcalls.__all__) & set(statecharts.__all__)
        if getattr(toolcalls, name) is not getattr(statecharts, name)
    )
    assert not clashes


def _imports(package: str) -> dict[str, set[str]]:
    """``{top-level module: modules of the same package it imports}`` (``_errors`` left out, as
    the drawing leaves it out), from tests/test_architecture.py's module graph."""
    from tests.test_architecture import module_graph

    found: dict[str, set[str]] = {}
    for module, targets in module_graph(package).items():
        if module == package:
            continue
        top = module[len(package) + 1 :].split(".")[0]
        found.setdefault(top, set())
        for target in targets:
            if not target.startswith(f"{package}."):
                continue
            name = target[len(package) + 1 :].split(".")[0]
            if name not in (top, "_errors"):
                found[top].add(name)
    return found


def _drawn(package: str) -> dict[str, set[str]]:
    """``{module: modules it imports}`` as docs/architecture.md's module graph draws it: the
    names after ``──>`` (and on the lines continuing them), for each top-level module; a
    subpackage's own modules are left out of its targets."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## Module graph", 1)[1].split("```", 2)[1]
    drawn: dict[str, dict[str, set[str]]] = {}
    section: dict[str, set[str]] = {}
    current: str | None = None
    in_targets = False
    for line in block.splitlines():
        if re.fullmatch(r"[a-z]+", line):
            section = drawn.setdefault(line, {})
            current, in_targets = None, False
            continue
        head = re.match(r"^  (\S+)\s", line)
        if head:
            current, in_targets = head.group(1).rstrip("/"), False
            section[current] = set()
        if current is None:
            continue
        if "──>" in line:
            in_targets = True
            line = line.split("──>", 1)[1]
        elif not in_targets or not line.startswith(" " * 18):
            continue
        for part in re.split(r"[,;]", line):
            name = re.sub(r"\(.*?\)", "", part).strip()
            if not name or "." in name or name in ("statecharts", "toolcalls", current):
                continue
            if (ROOT / package / current / f"{name}.py").exists():
                continue  # a module of the subpackage itself
            section[current].add(name)
    return drawn[package]


@pytest.mark.parametrize("package", ["statecharts", "toolcalls"])
def test_p3_the_architecture_module_graph_draws_every_import(package: str) -> None:
    """docs/architecture.md says "An arrow is an import (deferred imports included)"; a
    maintainer reading it misses imports the code makes (`checkpoint` imports `_runner` and
    `_tools`, `adapters` imports `_tools`, `_session` imports `_record`) and is shown one it
    does not make (`ray` ──> `_runner`)."""
    drawn, actual = _drawn(package), _imports(package)
    wrong = {
        module: sorted(actual[module] ^ drawn.get(module, set()))
        for module in actual
        if module not in ("__init__",) and actual[module] != drawn.get(module, set())
    }
    assert not wrong, wrong


def test_p3_every_repository_file_the_docs_name_exists() -> None:
    """A maintainer following docs/spec.md's section table to section M looks for
    `statecharts/testing.py`, which does not exist (the code is the `statecharts/testing/`
    package)."""
    named = re.compile(r"`((?:[\w.-]+/)+[\w-]+\.(?:py|md|json|jsonl|toml|svg))`")
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = doc.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            for path in named.findall(line):
                if not (ROOT / path).exists():
                    missing.append(f"{doc.relative_to(ROOT)}:{number}: {path}")
    assert not missing, missing
