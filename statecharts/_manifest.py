"""The committed diagrams: a manifest of charts, regenerated together and checked for staleness.

A diagrams directory holds ``charts.json``, mapping each output base name to the chart it
draws, as ``module:Class``::

    {
      "charts": {
        "toolcall": "toolcalls:ToolCallChart"
      }
    }

``regenerate`` writes ``<name>.dot``, ``<name>.mmd`` and ``<name>.svg`` for each entry;
``stale_files`` says which committed files no longer match. DOT and Mermaid are compared byte
for byte. SVG depends on the Graphviz version that drew it, so it is not compared: instead each
SVG carries the SHA-256 of the DOT it was rendered from, and is stale when that is not the
current DOT's digest. ``regenerate`` leaves an SVG alone when its digest is current, so
regenerating on a machine with another Graphviz does not churn the files, and needs no ``dot``
at all when no DOT changed.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statemachine import StateChart
from statemachine.exceptions import InvalidDefinition

from ._diagram import dot_digest, render_dot, svg_dot_digest, to_dot, to_mermaid
from ._errors import ManifestError
from ._runtime import Chart, compile_chart

MANIFEST = "charts.json"
SUFFIXES = (".dot", ".mmd", ".svg")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def regenerate_command(directory: str | Path) -> str:
    """The command line that regenerates ``directory``."""
    return f"statecharts regenerate {directory}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One manifest entry: the output base ``name`` and the chart ``target`` (module:Class)."""

    name: str
    target: str


@dataclass(frozen=True, slots=True)
class Stale:
    """A file in the diagrams directory that does not match the charts, and why."""

    path: Path
    reason: str


def read_manifest(directory: str | Path) -> tuple[Entry, ...]:
    """The entries of ``directory``'s manifest, sorted by name; raises ``ManifestError``."""
    path = Path(directory) / MANIFEST
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f'{path}: no manifest (a JSON object with "charts")') from None
    except json.JSONDecodeError as error:
        raise ManifestError(f"{path}: not JSON ({error})") from None
    charts = document.get("charts") if isinstance(document, dict) else None
    if not isinstance(charts, dict):
        raise ManifestError(f'{path}: "charts" must map names to "module:Class"')
    for name, target in charts.items():
        if not _NAME.fullmatch(name) or not isinstance(target, str) or ":" not in target:
            raise ManifestError(f'{path}: bad entry {name!r}: {target!r} (want "module:Class")')
    return tuple(Entry(name, charts[name]) for name in sorted(charts))


def load_chart(target: str) -> Chart:
    """Import ``module:Class`` and compile it; raises ``ManifestError`` saying what failed."""
    module_name, _, qualname = target.partition(":")
    if not module_name or not qualname:
        raise ManifestError(f"{target!r}: want MODULE:CLASS, e.g. mypackage.charts:Order")
    try:
        found: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except Exception as error:  # any failure of the user's module is theirs to fix
        kind = type(error).__name__
        raise ManifestError(f"cannot import {target}: {kind}: {error}") from None
    if not (isinstance(found, type) and issubclass(found, StateChart)):
        raise ManifestError(f"{target} is not a python-statemachine StateChart class")
    try:
        return compile_chart(found)
    except InvalidDefinition as error:
        raise ManifestError(f"cannot compile {target}: {error}") from None


def expected_text(directory: str | Path) -> dict[Path, str]:
    """The DOT and Mermaid text each manifest entry should have, by file path."""
    expected: dict[Path, str] = {}
    for entry in read_manifest(directory):
        chart = load_chart(entry.target)
        expected[Path(directory) / f"{entry.name}.dot"] = to_dot(chart)
        expected[Path(directory) / f"{entry.name}.mmd"] = to_mermaid(chart)
    return expected


def regenerate(directory: str | Path) -> list[Path]:
    """Write every file of the manifest that is missing or out of date; return those written.

    DOT and Mermaid files are written first, so they are current even when the SVGs cannot be
    rendered: raises ``GraphvizNotFound`` then, and ``ManifestError`` for a bad manifest.
    """
    written: list[Path] = []
    dots: list[tuple[Path, str]] = []
    for path, text in expected_text(directory).items():
        if _read_text(path) != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
        if path.suffix == ".dot":
            dots.append((path.with_suffix(".svg"), text))
    for svg, dot in dots:
        if _svg_digest(svg) != dot_digest(dot):
            svg.write_bytes(render_dot(dot, "svg"))
            written.append(svg)
    return written


def stale_files(directory: str | Path) -> list[Stale]:
    """The files of ``directory`` that ``regenerate`` would change or that no entry makes."""
    stale: list[Stale] = []
    expected = expected_text(directory)
    for path, text in expected.items():
        found = _read_text(path)
        if found is None:
            stale.append(Stale(path, "missing"))
        elif found != text:
            stale.append(Stale(path, "differs from the chart"))
    for path, text in expected.items():
        if path.suffix == ".dot":
            stale += _stale_svg(path.with_suffix(".svg"), dot_digest(text))
    made = set(expected) | {path.with_suffix(".svg") for path in expected}
    for path in sorted(Path(directory).iterdir()):
        if path.suffix in SUFFIXES and path not in made:
            stale.append(Stale(path, f"no entry of {MANIFEST} makes it; delete it"))
    return stale


def describe_stale(stale: list[Stale], directory: str | Path) -> str:
    """One line per stale file (``path: reason``), then the command that fixes them all."""
    lines = [f"{item.path}: {item.reason}" for item in stale]
    lines.append(f"regenerate with: {regenerate_command(directory)}")
    return "\n".join(lines)


def _stale_svg(path: Path, digest: str) -> list[Stale]:
    found = _svg_digest(path)
    if found == digest:
        return []
    reason = "missing" if not path.exists() else "not rendered from the current DOT"
    return [Stale(path, reason)]


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _svg_digest(path: Path) -> str | None:
    try:
        return svg_dot_digest(path.read_bytes())
    except FileNotFoundError:
        return None
