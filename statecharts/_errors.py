"""Every error ``statecharts`` raises on purpose, in one tree (spec P2)::

    StatechartsError                             base of every error below
    ├── UnsupportedChart (InvalidDefinition)     the chart is declared correctly but uses a
    │                                            construct the compiled runtime refuses (C6)
    ├── GraphvizNotFound (RuntimeError)          SVG or PNG asked for, Graphviz's ``dot``
    │                                            is not installed (D2)
    ├── CoverageError (ValueError)               a coverage file is malformed or does not fit
    │                                            the chart it is drawn over (M3)
    ├── TraceError (ValueError)                  a trace does not fit the chart (D6)
    ├── ManifestError (ValueError)               a diagrams manifest is malformed, or a chart it
    │                                            names cannot be imported or compiled (D5)
    ├── InstanceSnapshotError (ValueError)       an instance snapshot cannot be taken, or is
    │                                            damaged or another chart's (C19)
    ├── AsyncReadRefused (TypeError)             an async callback read when it runs (a chart's
    │                                            field's) in a chart run synchronously; also an
    │                                            ``InvalidDefinition``, never error.execution (C21)
    └── Divergence (AssertionError)              a system under test disagreed with its chart
                                                 in a derived test (statecharts.testing)

Whose fault: ``UnsupportedChart`` and python-statemachine's own ``InvalidDefinition`` (which it
subclasses) are the chart author's; ``GraphvizNotFound`` is the machine's; the next three are
a file's, and their message names the file and what is wrong in it; ``Divergence`` is the
system under test's, and carries the steps that show it.

Raised as python-statemachine raises them, and not wrapped (C12, C7):

- ``statemachine.exceptions.InvalidDefinition``: definition problems python-statemachine
  already detects (no initial state, unreachable states, a name that resolves to nothing), so
  one ``except InvalidDefinition`` covers both them and ``UnsupportedChart``;
- ``InvalidStateValue``: ``Chart.resume`` with a state the chart does not have;
- ``TransitionNotAllowed``: an ignored event on a chart that sets
  ``allow_event_without_transition = False``;
- whatever a chart's own guards and actions raise: it reaches the caller of ``send`` unchanged.

``TypeError`` is raised for API misuse (``compile_chart`` given something that is not a
``StateChart`` class, an event that is not a string).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from statemachine.exceptions import InvalidDefinition


class StatechartsError(Exception):
    """Base class of every error ``statecharts`` raises on purpose."""


class UnsupportedChart(StatechartsError, InvalidDefinition):
    """A chart uses a construct the compiled runtime refuses rather than approximates.

    ``construct`` names the construct (``"compound state"``, ``"eventless transition"`` ...),
    ``where`` names the state, transition or attribute that uses it, and ``chart`` the class.
    """

    def __init__(self, chart: str, construct: str, where: str, hint: str = "") -> None:
        self.chart = chart
        self.construct = construct
        self.where = where
        self.hint = hint
        message = f"{chart}: {construct} is not supported by the compiled runtime ({where})"
        if hint:
            message = f"{message}; {hint}"
        super().__init__(message)


class GraphvizNotFound(StatechartsError, RuntimeError):
    """Graphviz's ``dot`` program, needed for SVG and PNG, is not installed (not on ``PATH``).

    ``format`` is the output that was asked for. Nothing was written; DOT and Mermaid output
    do not need the program.
    """

    def __init__(self, format: str) -> None:
        self.format = format
        super().__init__(
            f"cannot render {format.upper()}: Graphviz's 'dot' program is not on PATH; "
            "install Graphviz (Debian/Ubuntu: apt-get install graphviz, macOS: brew install "
            "graphviz) or write DOT (.dot) or Mermaid (.mmd) instead"
        )


class CoverageError(StatechartsError, ValueError):
    """A coverage file is malformed, of another version, or does not fit the chart it is
    drawn over; the message names the file and what is wrong."""


class TraceError(StatechartsError, ValueError):
    """A trace does not fit the chart, or the chart cannot tell which way it went; the message
    names the step (or line), the state, the event and what to add to the trace."""


class ManifestError(StatechartsError, ValueError):
    """The manifest is malformed, or a chart it names cannot be imported or compiled."""


class InstanceSnapshotError(StatechartsError, ValueError):
    """An instance snapshot that cannot be taken, or cannot be restored: damaged, of another
    format, version or chart, or naming a configuration the chart cannot be in. ``field`` is
    where in the snapshot (``"configuration[2]"``, ``"history.steps.deep"`` ...) and
    ``reason`` what is wrong there; nothing was built or changed."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"invalid snapshot: {field}: {reason}")


class Divergence(StatechartsError, AssertionError):
    """The system under test disagreed with the chart. ``steps`` is the run up to the
    disagreement (paste it into a test and call ``statecharts.testing.replay``),
    ``expected``/``actual`` what each side showed, and ``transcript`` what the adapter sent to
    the SUT in its own terms (if it keeps one).

    A derived test gives it a ``minimize`` function: the first time any of these is read (or
    the divergence printed), it replays shorter runs and keeps the shortest that still
    diverges, so what is shown is minimal even where Hypothesis's shrinking was not. Nothing
    runs while Hypothesis only catches and compares divergences."""

    def __init__(
        self,
        problem: str,
        steps: Sequence[object],
        expected: Any = None,
        actual: Any = None,
        transcript: Sequence[Any] = (),
        minimize: Callable[[Divergence], Divergence | None] | None = None,
    ) -> None:
        self._fields = (problem, tuple(steps), expected, actual, tuple(transcript))
        self._minimize = minimize
        super().__init__(problem)

    def _resolved(self) -> tuple[str, tuple[object, ...], Any, Any, tuple[Any, ...]]:
        minimize, self._minimize = self._minimize, None
        if minimize is not None:
            shorter = minimize(self)
            if shorter is not None and len(shorter.steps) < len(self._fields[1]):
                self._fields = shorter._resolved()
        return self._fields

    @property
    def problem(self) -> str:
        return self._resolved()[0]

    @property
    def steps(self) -> tuple[object, ...]:
        return self._resolved()[1]

    @property
    def expected(self) -> Any:
        return self._resolved()[2]

    @property
    def actual(self) -> Any:
        return self._resolved()[3]

    @property
    def transcript(self) -> tuple[Any, ...]:
        return self._resolved()[4]

    def __str__(self) -> str:
        return self._message()

    def _message(self) -> str:
        lines = [self.problem, f"  expected: {self.expected!r}", f"  actual:   {self.actual!r}"]
        lines.append(
            f"after {len(self.steps)} steps (replay(chart, adapter, steps) repeats them):"
        )
        imports: set[str] = set()
        for step in self.steps:
            needed = getattr(step, "imports", None)
            if callable(needed):
                imports |= needed()
        lines += sorted(imports)
        lines.append("steps = [")
        lines += [f"    {step!r}," for step in self.steps]
        lines.append("]")
        if self.transcript:
            lines.append("sent to the system under test:")
            lines += [f"  {_line(item)}" for item in self.transcript]
        return "\n".join(lines)


def _line(item: Any) -> str:
    try:
        return json.dumps(item)
    except (TypeError, ValueError):
        return repr(item)


class AsyncReadRefused(StatechartsError, InvalidDefinition, TypeError):
    """An async callback read when it runs (one a chart's field holds, C20) in a chart run
    synchronously: python-statemachine would await it on its async engine. A ``TypeError``, as
    calling it there is, and an ``InvalidDefinition``, so it reaches the sender, never
    swallowed as ``error.execution``."""
