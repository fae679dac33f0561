"""Coverage files and traces, and the overlays they draw over a chart's diagram.

The stateful test at the end drives compiled charts with random events and checks that the
coverage it records always fits the chart. A whole run writes its coverage with
``pytest --chart-coverage=FILE`` (``statecharts.pytest_plugin``), ready for
``statecharts diagram --coverage FILE``.
"""

# Rules checked here (docs/spec.md): D6.

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from statecharts import (
    ChartCoverage,
    Coverage,
    CoverageError,
    Emphasis,
    Mark,
    Outcome,
    TraceError,
    TraceStep,
    compile_chart,
    coverage_overlay,
    read_trace,
    trace_overlay,
)
from statecharts._overlay import resolve_trace
from statecharts.testing import record_coverage

from .charts import DIFFERENTIAL, Door, Recorder, Ticker, Triage
from .test_diagram import order_chart

TRIAGE = compile_chart(Triage)
TRIAGE_RUN = [
    ("route", {"amount": 5}),
    ("reset", {}),
    ("reset", {}),
    ("route", {"amount": 42}),
    ("nope", {}),
    ("reject", {}),
    ("route", {}),
]

TRIAGE_JSON = """{
  "charts": {
    "tests.statecharts.charts.Triage": {
      "ignored": {
        "inbox": {
          "reset": 1
        },
        "large": {
          "nope": 1
        },
        "rejected": {
          "route": 1
        }
      },
      "taken": {
        "inbox:route:large": 1,
        "inbox:route:small": 1,
        "large:reject:rejected": 1,
        "small:reset:inbox": 1
      }
    }
  },
  "format": "statecharts-coverage",
  "version": 1
}
"""


def triage_coverage() -> Coverage:
    """The coverage of one run of ``TRIAGE_RUN``."""
    coverage = Coverage()
    instance = TRIAGE.create(Recorder())
    for event, payload in TRIAGE_RUN:
        coverage.record(TRIAGE, instance.send(event, **payload))
    return coverage


# -- the coverage file ----------------------------------------------------------------------


def test_coverage_counts_taken_transitions_and_ignored_state_event_pairs() -> None:
    counts = triage_coverage().charts
    assert counts == {
        "tests.statecharts.charts.Triage": ChartCoverage(
            taken={
                "inbox:route:small": 1,
                "small:reset:inbox": 1,
                "inbox:route:large": 1,
                "large:reject:rejected": 1,
            },
            ignored={"inbox": {"reset": 1}, "large": {"nope": 1}, "rejected": {"route": 1}},
        )
    }


def test_queued_outcomes_are_not_counted_until_they_run() -> None:
    coverage = Coverage()
    inbox = TRIAGE.state("inbox")
    coverage.record(TRIAGE, Outcome(False, "route", inbox, None, None, "queued"))
    assert coverage.chart(TRIAGE) == ChartCoverage()


def test_coverage_file_is_versioned_json_with_sorted_keys() -> None:
    assert triage_coverage().to_json() == TRIAGE_JSON


def test_coverage_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "coverage.json"
    triage_coverage().save(path)
    assert path.read_text() == TRIAGE_JSON
    assert Coverage.load(path) == triage_coverage()


def test_merge_adds_counts_and_changes_neither_side() -> None:
    first, second = triage_coverage(), triage_coverage()
    second.chart("other.Chart").taken["a:go:b"] = 2
    merged = first.merge(second)
    assert merged.charts["tests.statecharts.charts.Triage"].taken["inbox:route:small"] == 2
    assert merged.charts["tests.statecharts.charts.Triage"].ignored["inbox"] == {"reset": 2}
    assert merged.charts["other.Chart"].taken == {"a:go:b": 2}
    assert first == triage_coverage()
    assert "other.Chart" not in first.charts


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "cov.json: not JSON (Expecting property name"),
        (
            '{"charts": {}}',
            "cov.json: not a coverage file (no \"format\": 'statecharts-coverage')",
        ),
        (
            '{"format": "statecharts-coverage", "version": 2, "charts": {}}',
            "cov.json: coverage format version 2 is not supported (this statecharts reads "
            "version 1)",
        ),
        (
            '{"format": "statecharts-coverage", "version": 1, "charts": {"a.B": '
            '{"taken": {"x:go:y": -1}}}}',
            "cov.json: charts.a.B.taken.x:go:y: a count must be a non-negative integer",
        ),
        (
            '{"format": "statecharts-coverage", "version": 1, "charts": {"a.B": '
            '{"ignored": {"x": {"go": true}}}}}',
            "cov.json: charts.a.B.ignored.x.go: a count must be a non-negative integer",
        ),
        (
            '{"format": "statecharts-coverage", "version": 1, "charts": []}',
            'cov.json: "charts" must be an object',
        ),
    ],
)
def test_invalid_coverage_file_is_refused_naming_file_and_key(text: str, message: str) -> None:
    with pytest.raises(CoverageError) as raised:
        Coverage.from_json(text, "cov.json")
    assert str(raised.value).startswith(message)


# -- the coverage overlay -------------------------------------------------------------------


def test_coverage_overlay_marks_counts_never_taken_and_ignored_events() -> None:
    overlay = coverage_overlay(TRIAGE, triage_coverage())
    assert overlay.caption == "coverage: 4 of 7 transitions taken, 3 events ignored"
    assert overlay.transitions == {
        "inbox:route:small": Mark(Emphasis.HIT, ("×1",)),
        "inbox:route:large": Mark(Emphasis.HIT, ("×1",)),
        "inbox:route:rejected": Mark(Emphasis.MISSED, ("never taken",)),
        "small:reset:inbox": Mark(Emphasis.HIT, ("×1",)),
        "small:reject:rejected": Mark(Emphasis.MISSED, ("never taken",)),
        "large:reset:inbox": Mark(Emphasis.MISSED, ("never taken",)),
        "large:reject:rejected": Mark(Emphasis.HIT, ("×1",)),
    }
    assert overlay.states == {
        "inbox": Mark(Emphasis.HIT, ("ignored reset ×1",)),
        "small": Mark(Emphasis.HIT),
        "large": Mark(Emphasis.HIT, ("ignored nope ×1",)),
        "rejected": Mark(Emphasis.HIT, ("ignored route ×1",)),
    }


def test_states_never_entered_are_marked_missed() -> None:
    coverage = Coverage()
    coverage.chart(TRIAGE).taken["inbox:route:small"] = 3
    states = coverage_overlay(TRIAGE, coverage).states
    assert {state: mark.emphasis for state, mark in states.items()} == {
        "inbox": Emphasis.HIT,
        "small": Emphasis.HIT,
        "large": Emphasis.MISSED,
        "rejected": Emphasis.MISSED,
    }


def test_chart_missing_from_the_file_is_drawn_entirely_untested() -> None:
    overlay = coverage_overlay(TRIAGE, Coverage())
    assert overlay.caption == "coverage: 0 of 7 transitions taken, 0 events ignored"
    assert {mark.emphasis for mark in overlay.states.values()} == {Emphasis.MISSED}
    assert {mark.emphasis for mark in overlay.transitions.values()} == {Emphasis.MISSED}


def test_coverage_of_another_version_of_the_chart_is_refused() -> None:
    coverage = triage_coverage()
    coverage.chart(TRIAGE).taken["inbox:route:elsewhere"] = 1
    coverage.chart(TRIAGE).ignored["limbo"] = {"route": 1}
    with pytest.raises(CoverageError) as raised:
        coverage_overlay(TRIAGE, coverage)
    assert str(raised.value) == (
        "coverage of tests.statecharts.charts.Triage names transitions or states the chart "
        "does not have: inbox:route:elsewhere, limbo; it was recorded against another version "
        "of the chart, so record it again"
    )


# -- reading traces -------------------------------------------------------------------------


def test_trace_lines_may_be_event_names_or_objects_with_event_or_type() -> None:
    lines = ['"start"', "", '{"event": "ready", "state": "running"}', '{"type": "result"}']
    assert read_trace(lines) == [
        TraceStep("start"),
        TraceStep("ready", state="running"),
        TraceStep("result"),
    ]


def test_trace_of_one_call_is_picked_by_id() -> None:
    lines = [
        '{"id": "a", "event": "start"}',
        '{"id": 7, "event": "start"}',
        '{"id": "a", "event": "ready", "transition": null}',
        '{"id": 7, "event": "error", "transition": "pending:error:error"}',
    ]
    assert read_trace(lines, call_id="a") == [
        TraceStep("start"),
        TraceStep("ready", ignored=True),
    ]
    assert read_trace(lines, call_id="7") == [
        TraceStep("start"),
        TraceStep("error", transition="pending:error:error"),
    ]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            ['{"id": "a", "event": "x"}', '{"id": "b", "event": "x"}'],
            "t.jsonl holds several calls (a, b); choose one by its id",
        ),
        (['"x"', "{oops"], "t.jsonl:2: not JSON (Expecting property name"),
        (["[1]"], "t.jsonl:1: a line must be an event name or an object"),
        (['{"name": "x"}'], 't.jsonl:1: no event (an "event" or "type" string)'),
        (['{"event": "x", "state": 3}'], 't.jsonl:1: "state" must be a state id'),
        (['{"event": "x", "transition": 3}'], 't.jsonl:1: "transition" must be a transition id'),
    ],
)
def test_unreadable_trace_names_file_and_line(lines: list[str], message: str) -> None:
    with pytest.raises(TraceError) as raised:
        read_trace(lines, source="t.jsonl")
    assert str(raised.value).startswith(message)


# -- resolving traces on the chart ----------------------------------------------------------


def _path(chart: Any, steps: list[TraceStep]) -> list[tuple[int, str, str, str | None]]:
    return [
        (step.number, step.event, step.state, step.transition.id if step.transition else None)
        for step in resolve_trace(chart, steps)
    ]


def test_unguarded_trace_is_resolved_from_events_alone() -> None:
    door = compile_chart(Door)
    steps = [TraceStep(e) for e in ("open", "open", "close", "demolish", "open")]
    assert _path(door, steps) == [
        (1, "open", "closed", "closed:open:opened"),
        (2, "open", "opened", None),
        (3, "close", "opened", "opened:close:closed"),
        (4, "demolish", "closed", "closed:demolish:gone"),
        (5, "open", "gone", None),
    ]


def test_guarded_step_without_a_hint_is_refused_with_the_options() -> None:
    with pytest.raises(TraceError) as raised:
        resolve_trace(TRIAGE, [TraceStep("route")])
    assert str(raised.value) == (
        "step 1 ('route' in state 'inbox'): the chart alone cannot tell what happened "
        "(inbox:route:small, inbox:route:large, inbox:route:rejected, ignored); give the step "
        'a "state" (the state after it) or a "transition" (an id, or null)'
    )


def test_state_or_transition_hint_picks_the_path() -> None:
    steps = [
        TraceStep("route", state="large"),
        TraceStep("reset", transition="large:reset:inbox"),
        TraceStep("route", ignored=True),
        TraceStep("route", state="rejected"),
    ]
    assert _path(TRIAGE, steps) == [
        (1, "route", "inbox", "inbox:route:large"),
        (2, "reset", "large", "large:reset:inbox"),
        (3, "route", "inbox", None),
        (4, "route", "inbox", "inbox:route:rejected"),
    ]


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (
            TraceStep("route", state="nowhere"),
            "step 1 ('route' in state 'inbox'): Triage has no state 'nowhere'",
        ),
        (
            TraceStep("reset", state="small"),
            "step 1 ('reset' in state 'inbox'): the chart cannot reach 'small' on this event",
        ),
        (
            TraceStep("route", transition="small:reset:inbox"),
            "step 1 ('route' in state 'inbox'): the trace says it took small:reset:inbox, "
            "which the chart cannot do",
        ),
    ],
)
def test_hint_the_chart_contradicts_is_refused(step: TraceStep, message: str) -> None:
    with pytest.raises(TraceError) as raised:
        resolve_trace(TRIAGE, [step])
    assert str(raised.value) == message


def test_ignored_hint_is_refused_where_an_unguarded_transition_always_fires() -> None:
    with pytest.raises(TraceError) as raised:
        resolve_trace(compile_chart(Door), [TraceStep("open", ignored=True)])
    assert "the trace says it was ignored, which the chart cannot do" in str(raised.value)


def test_trace_recorded_from_outcomes_resolves_to_what_the_runtime_did() -> None:
    instance = TRIAGE.create(Recorder())
    outcomes = [instance.send(event, **payload) for event, payload in TRIAGE_RUN]
    path = resolve_trace(TRIAGE, [TraceStep.of(outcome) for outcome in outcomes])
    assert [step.transition for step in path] == [outcome.transition for outcome in outcomes]
    assert path[-1].landed == instance.state.id


# -- the trace overlay ----------------------------------------------------------------------


def test_trace_overlay_highlights_the_path_with_step_numbers() -> None:
    ticker = compile_chart(Ticker)
    events = ["tick", "tick", "tick", "bump", "tick", "nope", "stop", "tick"]
    overlay = trace_overlay(ticker, [TraceStep(event) for event in events])
    assert overlay.caption == "trace of 8 events: idle → stopped"
    assert overlay.transitions == {
        "idle:tick:idle": Mark(Emphasis.HIT, ("steps 1-3, 5",)),
        "idle:bump:idle": Mark(Emphasis.HIT, ("step 4",)),
        "idle:stop:stopped": Mark(Emphasis.HIT, ("step 7",)),
    }
    assert overlay.states == {
        "idle": Mark(Emphasis.HIT, ("ignored nope (step 6)",)),
        "stopped": Mark(Emphasis.HIT, ("ignored tick (step 8)",)),
    }


def test_trace_overlay_dims_what_the_call_did_not_touch() -> None:
    overlay = trace_overlay(order_chart(), [TraceStep("note"), TraceStep("cancel", "cancelled")])
    assert overlay.caption == "trace of 2 events: pending → cancelled"
    assert {k: m.emphasis for k, m in overlay.states.items()} == {
        "pending": Emphasis.HIT,
        "paid": Emphasis.DIM,
        "shipped": Emphasis.DIM,
        "cancelled": Emphasis.HIT,
    }
    assert [k for k, m in overlay.transitions.items() if m.emphasis is Emphasis.HIT] == [
        "pending:cancel:cancelled",
        "pending:note:pending",
    ]


# -- our stateful tests write coverage ------------------------------------------------------

#: Charts whose actions send no further events (a queued event's outcome is never returned
#: to the caller, so neither coverage nor a trace of returned outcomes can see it), and that
#: ignore, rather than refuse, events without a transition.
COVERED = sorted(set(DIFFERENTIAL) - {"relay", "relay-caught", "fallible", "strict"})


def coverage_machine(name: str) -> type[RuleBasedStateMachine]:
    """A Hypothesis state machine sending random events to one chart, recording each outcome
    into its own ``Coverage``, and checking what it recorded."""
    declared, model_type, events = DIFFERENTIAL[name]
    chart = compile_chart(declared)

    class CoverageMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.instance = chart.create(model_type())
            self.coverage = Coverage()
            self.steps: list[TraceStep] = []

        @rule(event=st.sampled_from([*events, "undeclared"]), amount=st.integers(-3, 100))
        def send(self, event: str, amount: int) -> None:
            outcome = self.instance.send(event, amount=amount)
            self.coverage.record(chart, outcome)
            self.steps.append(TraceStep.of(outcome))

        @invariant()
        def every_event_is_counted_once(self) -> None:
            counts = self.coverage.chart(chart)
            assert sum(counts.taken.values()) + counts.ignored_total() == len(self.steps)

        @invariant()
        def recorded_trace_leads_where_the_instance_is(self) -> None:
            path = resolve_trace(chart, self.steps)
            assert (path[-1].landed if path else chart.initial.id) == self.instance.state.id

        @invariant()
        def coverage_fits_the_chart(self) -> None:
            coverage_overlay(chart, self.coverage)

    CoverageMachine.__name__ = f"{declared.__name__}Coverage"
    return CoverageMachine


@pytest.mark.parametrize("name", COVERED)
def test_stateful_runs_record_coverage_that_fits_the_chart(name: str) -> None:
    with record_coverage(Coverage()) as recorded:
        coverage_machine(name).TestCase().runTest()
    assert recorded.charts[compile_chart(DIFFERENTIAL[name][0]).qualname].taken


def test_a_trace_step_follows_the_eventless_transitions_its_event_led_to() -> None:
    """D6: ``ready`` on the tool call chart enters ``parsing`` and leaves it in the same step;
    the step's ``state`` says which way, and both transitions are marked with its number."""
    from toolcalls import ToolCallChart

    chart = compile_chart(ToolCallChart)
    steps = [TraceStep("delta"), TraceStep("ready", state="error")]
    [_, ready] = resolve_trace(chart, steps)
    assert [t.id for t in ready.taken] == ["pending:ready:parsing", "parsing::error"]
    assert ready.landed == "error"
    overlay = trace_overlay(chart, steps)
    assert overlay.transitions["parsing::error"].notes == ("step 2",)
    assert overlay.transitions["parsing::running"].notes == ()
    assert overlay.caption.endswith("pending → parsing → error")
    with pytest.raises(TraceError, match="pending:ready:parsing then parsing::running"):
        resolve_trace(chart, [TraceStep("ready")])


# -- statecharts: entries below a target, and steps of several transitions ----------------------


def test_D6_coverage_marks_what_entering_a_target_enters() -> None:
    """D6: a taken transition into a parallel state enters it, its regions and their initial
    children; states only a later event would enter stay missed."""
    from .charts import Player

    chart = compile_chart(Player)
    coverage = Coverage()
    instance = chart.create(Recorder())
    coverage.record(chart, instance.send("play"))
    overlay = coverage_overlay(chart, coverage)
    active = {state.id for state in instance.configuration}
    hit = {state for state, mark in overlay.states.items() if mark.emphasis is Emphasis.HIT}
    assert active <= hit
    assert any(mark.emphasis is Emphasis.MISSED for mark in overlay.states.values())


def test_D6_a_trace_line_may_list_every_transition_its_step_took() -> None:
    """D6/L3: ``"transitions"`` in a trace line is followed as listed; an id the chart lacks,
    or a first one that is not the step's ``transition``, is refused naming the step."""
    from .charts import Player

    chart = compile_chart(Player)
    instance = chart.create(Recorder())
    steps = [TraceStep.of(instance.send(event)) for event in ["play", "toggle", "fade"]]
    # play enters the parallel state, taking the initial transitions of its regions and of
    # their compound states too (M3); toggle moves both regions; fade both, then done.state
    # leaves the parallel state
    assert [len(step.transitions) for step in steps] == [5, 2, 3]
    lines = [
        json.dumps({"event": s.event, "transition": s.transition, "transitions": s.transitions})
        for s in steps
    ]
    read = read_trace(lines)
    assert [step.transitions for step in read] == [step.transitions for step in steps]
    overlay = trace_overlay(chart, read)
    for step in steps:
        for transition_id in step.transitions:
            assert overlay.transitions[transition_id].emphasis is Emphasis.HIT
    with pytest.raises(TraceError, match="has no transition 'nope'"):
        trace_overlay(chart, [TraceStep("play", transitions=("nope",))])
    first = steps[0].transitions[0]
    with pytest.raises(TraceError, match="start with"):
        trace_overlay(chart, [TraceStep("play", transition="other", transitions=(first,))])
    with pytest.raises(TraceError, match='"transitions" must be a list'):
        read_trace(['{"event": "play", "transitions": "x"}'])
