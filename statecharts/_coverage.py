"""Transition coverage: how often each transition was taken and each (state, event) ignored.

Test tooling records the ``Outcome`` of every event it sends; the diagram overlay reads the file
it saves. The file is JSON, with sorted keys and one count per line, so it diffs cleanly::

    {
      "charts": {
        "tests.statecharts.charts.Shop": {        <- ChartDef.qualname
          "ignored": {                            <- state id -> event -> times ignored
            "cart": {"pay": 2}
          },
          "taken": {                              <- TransitionDef.id -> times taken
            "browsing:add:cart": 3
          }
        }
      },
      "format": "statecharts-coverage",
      "version": 1
    }

Transition ids are stable across runs and machines (``source:events:target``, ``#n`` for
duplicates), so files from different runs merge by adding counts. A transition or pair that was
never seen is simply absent; counts are positive integers. ``"queued"`` outcomes (events sent
from inside a callback) are not recorded: they are decided later, when the queue runs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import CoverageError
from ._ir import ChartDef
from ._runtime import Outcome

FORMAT = "statecharts-coverage"
VERSION = 1


@dataclass(slots=True)
class ChartCoverage:
    """The counts for one chart: ``taken[transition_id]`` and ``ignored[state][event]``."""

    taken: dict[str, int] = field(default_factory=dict)
    ignored: dict[str, dict[str, int]] = field(default_factory=dict)

    def record(self, outcome: Outcome, states: Iterable[str] | None = None) -> None:
        """Count the transitions an applied outcome took (every one of its macrostep), or the
        (state, event) pairs it ignored: one for each of ``states``, the active atomic states
        (every region of a parallel configuration ignored the event), or ``outcome.source``'s
        when they are not given."""
        transitions = outcome.transitions
        if transitions:
            for transition in transitions:
                key = transition.id
                self.taken[key] = self.taken.get(key, 0) + 1
        elif outcome.reason != "queued":
            event = outcome.event
            for state in (outcome.source.id,) if states is None else states:
                events = self.ignored.setdefault(state, {})
                events[event] = events.get(event, 0) + 1

    def add(self, other: ChartCoverage) -> None:
        """Add ``other``'s counts to these."""
        for key, count in other.taken.items():
            self.taken[key] = self.taken.get(key, 0) + count
        for state, events in other.ignored.items():
            mine = self.ignored.setdefault(state, {})
            for event, count in events.items():
                mine[event] = mine.get(event, 0) + count

    def ignored_total(self) -> int:
        """How many (state, event) pairs were ignored, over all states: an event ignored in a
        parallel configuration counts once for each region's active state."""
        return sum(sum(events.values()) for events in self.ignored.values())


class Coverage:
    """Coverage of several charts, keyed by ``ChartDef.qualname``; see the module docstring
    for the file format."""

    def __init__(self) -> None:
        # Counting is read-modify-write: tests driving charts from several threads must not
        # lose counts, so recording holds this lock (M3).
        self._lock = threading.Lock()
        self.charts: dict[str, ChartCoverage] = {}
        #: The charts recorded in this process, by qualname (not saved: reports draw them).
        self.definitions: dict[str, ChartDef] = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Coverage) and self.charts == other.charts

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Coverage({self.charts!r})"

    def chart(self, chart: ChartDef | str) -> ChartCoverage:
        """The counts for ``chart`` (a chart or its qualname), created empty if absent."""
        if isinstance(chart, str):
            return self.charts.setdefault(chart, ChartCoverage())
        counts = self.charts.get(chart.qualname)
        if counts is None:
            counts = self.charts[chart.qualname] = ChartCoverage()
            self.definitions[chart.qualname] = chart
        return counts

    def record(
        self, chart: ChartDef, outcome: Outcome, states: Iterable[str] | None = None
    ) -> None:
        """Count what sending one event to an instance of ``chart`` did (thread-safe);
        ``states``: the instance's active atomic states (see ``ChartCoverage.record``)."""
        with self._lock:
            self.chart(chart).record(outcome, states)

    def merge(self, other: Coverage) -> Coverage:
        """A new ``Coverage`` with the counts of both (neither is changed)."""
        merged = Coverage()
        merged.definitions = {**self.definitions, **other.definitions}
        for source in (self, other):
            for key, counts in source.charts.items():
                merged.chart(key).add(counts)
        return merged

    def to_json(self) -> str:
        """The file text: versioned JSON with sorted keys and a trailing newline."""
        charts = {
            key: {"ignored": counts.ignored, "taken": counts.taken}
            for key, counts in self.charts.items()
        }
        document = {"charts": charts, "format": FORMAT, "version": VERSION}
        return json.dumps(document, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "<coverage>") -> Coverage:
        """Read file text; raises ``CoverageError`` naming ``source`` if it is not valid."""
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise CoverageError(f"{source}: not JSON ({error})") from None
        return _read_document(document, source)

    def save(self, path: str | Path) -> None:
        """Write the file (replacing it)."""
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Coverage:
        """Read a file; raises ``OSError`` if unreadable and ``CoverageError`` if invalid."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"), str(path))


def _read_document(document: Any, source: str) -> Coverage:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise CoverageError(f'{source}: not a coverage file (no "format": {FORMAT!r})')
    if document.get("version") != VERSION:
        raise CoverageError(
            f"{source}: coverage format version {document.get('version')!r} is not supported "
            f"(this statecharts reads version {VERSION})"
        )
    charts = document.get("charts")
    if not isinstance(charts, dict):
        raise CoverageError(f'{source}: "charts" must be an object')
    coverage = Coverage()
    for key, entry in charts.items():
        where = f"{source}: charts.{key}"
        if not isinstance(entry, dict):
            raise CoverageError(f"{where} must be an object")
        counts = coverage.chart(key)
        counts.taken = _counts(entry.get("taken", {}), f"{where}.taken")
        ignored = entry.get("ignored", {})
        if not isinstance(ignored, dict):
            raise CoverageError(f"{where}.ignored must be an object")
        counts.ignored = {
            state: _counts(events, f"{where}.ignored.{state}") for state, events in ignored.items()
        }
    return coverage


def _counts(value: Any, where: str) -> dict[str, int]:
    if not isinstance(value, dict):
        raise CoverageError(f"{where} must be an object of counts")
    for key, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise CoverageError(f"{where}.{key}: a count must be a non-negative integer")
    return dict(value)


def exercised(chart: ChartDef, counts: ChartCoverage) -> tuple[dict[str, int], set[str]]:
    """What ``counts`` says of ``chart``: how often each of its transitions was taken, and the
    ids of the states entered (the targets of the transitions taken, the states that ignored
    an event, and their ancestors).

    Creating an instance is no event, so the initial transitions of the start configuration
    (``ChartDef.start_transitions``) count once when anything was recorded. Every other
    initial transition counts only as the runtime recorded it: a transition straight into a
    deeper child takes none of the initial transitions on its way.
    """
    taken = {t.id: counts.taken.get(t.id, 0) for t in chart.transitions}
    reached = {target for t in chart.transitions if taken[t.id] for target in t.targets}
    if counts.taken or counts.ignored:  # an instance was created: its start was entered
        reached.update(chart.start_configuration or (chart.initial.id,))
        for transition in chart.start_transitions():
            taken[transition.id] = max(1, taken[transition.id])
            reached.update(transition.targets)
    reached.update(state for state in counts.ignored if state in chart.states_by_id)
    for state_id in list(reached):
        parent = chart.states_by_id[state_id].parent if state_id in chart.states_by_id else None
        while parent is not None and parent not in reached:
            reached.add(parent)
            parent = chart.states_by_id[parent].parent
    return taken, reached
