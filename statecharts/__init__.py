"""Compile declared python-statemachine charts into a fast, verified runtime.

A chart is declared once, as a python-statemachine ``StateChart``. ``compile_chart`` reads that
declaration into an immutable ``Chart`` (states, events and transitions in declaration order,
with their guards and actions), refusing constructs it cannot run faithfully. ``Chart.create``
makes small instances that run on it, with python-statemachine's semantics::

    chart = compile_chart(TrafficLight)
    light = chart.create()
    outcome = light.send("cycle")      # Outcome: applied, or ignored with a reason
    light.state.id                     # "yellow"

The same compiled chart draws its own diagrams (``to_dot``, ``to_mermaid``, ``render`` for SVG
and PNG), optionally overlaid with test coverage (``Coverage``, ``coverage_overlay``) or the
path of one call (``trace_overlay``); ``python -m statecharts`` does both from the command line.
"""

from ._clock import AsyncioClock, Clock, VirtualClock
from ._codegen import EventData
from ._coverage import ChartCoverage, Coverage
from ._diagram import Emphasis, Mark, Overlay, render, to_dot, to_mermaid
from ._errors import (
    AsyncReadRefused,
    CoverageError,
    Divergence,
    GraphvizNotFound,
    InstanceSnapshotError,
    ManifestError,
    StatechartsError,
    TraceError,
    UnsupportedChart,
)
from ._ir import (
    CallbackDef,
    ChartDef,
    EventDef,
    Flags,
    Group,
    RefKind,
    StateDef,
    TransitionDef,
    run_order,
)
from ._overlay import TraceStep, coverage_overlay, read_trace, trace_overlay
from ._runtime import Chart, Instance, Outcome, compile_chart, observe_outcomes

__all__ = [
    "AsyncReadRefused",
    "AsyncioClock",
    "CallbackDef",
    "Chart",
    "ChartCoverage",
    "ChartDef",
    "Clock",
    "Coverage",
    "CoverageError",
    "Divergence",
    "Emphasis",
    "EventData",
    "EventDef",
    "Flags",
    "GraphvizNotFound",
    "Group",
    "Instance",
    "InstanceSnapshotError",
    "ManifestError",
    "Mark",
    "Outcome",
    "Overlay",
    "RefKind",
    "StateDef",
    "StatechartsError",
    "TraceError",
    "TraceStep",
    "TransitionDef",
    "UnsupportedChart",
    "VirtualClock",
    "compile_chart",
    "coverage_overlay",
    "observe_outcomes",
    "read_trace",
    "render",
    "run_order",
    "to_dot",
    "to_mermaid",
    "trace_overlay",
]
