"""Diagrams of statecharts: Mermaid nests compound states and separates parallel regions with
``--``, shows nested states' entry and exit actions, history pseudo-states as ``H``/``H*``,
nested final states, eventless and delayed transitions by name; coverage and trace overlays
mark nested states and transitions.

Rules checked here (docs/spec.md): D3, D6.
"""

from __future__ import annotations

from typing import Any

import pytest
from statemachine import Event, State, StateChart

from statecharts import (
    Coverage,
    TraceError,
    TraceStep,
    compile_chart,
    coverage_overlay,
    observe_outcomes,
    to_dot,
    to_mermaid,
    trace_overlay,
)
from statecharts.testing import record_coverage

from .charts import Pipeline, Player, Recorder, Wizard


def block(text: str, state: str) -> list[str]:
    """The lines of ``state``'s nested block in Mermaid text (without the braces)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == f"state {state} {{")
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(
        i
        for i in range(start + 1, len(lines))
        if lines[i].strip() == "}" and len(lines[i]) - len(lines[i].lstrip()) == indent
    )
    return [line.strip() for line in lines[start + 1 : end]]


def test_mermaid_nests_states_with_their_entry_and_exit_actions() -> None:
    text = to_mermaid(compile_chart(Pipeline))
    work = block(text, "work")
    assert work[0] == "[*] --> queued"
    assert 'state "Finished" as finished' in work
    assert "finished : entry / on_enter_state, result" in work
    assert "finished : exit / on_exit_state" in work
    assert "finished --> [*]" in work  # a final state inside the compound
    assert "note right of work : entry / on_enter_state<br/>exit / on_exit_state" in text
    assert "complete --> [*]" in text.splitlines()[-1]


def test_mermaid_draws_history_pseudo_states_without_actions() -> None:
    text = to_mermaid(compile_chart(Wizard))
    steps = block(text, "steps")
    assert 'state "H" as shallow' in steps
    assert 'state "H*" as deep' in steps
    assert not any(line.startswith(("shallow :", "deep :")) for line in steps)
    assert "paused --> deep : restore / before_transition, count, after_transition" in text


def test_mermaid_separates_parallel_regions() -> None:
    playing = block(to_mermaid(compile_chart(Player)), "playing")
    assert playing.count("--") == 1
    separator = playing.index("--")
    assert 'state "Sound" as sound' in playing[:separator]
    assert 'state "Speed" as speed' in playing[separator:]


class Timed(StateChart):
    waiting = State(initial=True)
    checking = State()
    done = State(final=True)
    timeout = Event(waiting.to(checking), delay=500)
    checking.to(done, cond="ready")
    retry = checking.to(waiting)

    def ready(self) -> bool:
        return True


def test_eventless_and_delayed_transitions_are_labelled_in_dot_and_mermaid() -> None:
    chart = compile_chart(Timed)
    mermaid, dot = to_mermaid(chart), to_dot(chart)
    assert "waiting --> checking : timeout (after 500 ms)" in mermaid
    assert "checking --> done : (eventless) [ready]" in mermaid
    assert "checking --> waiting : retry" in mermaid
    assert 'label="timeout (after 500 ms)"' in dot
    assert 'label="(eventless) [ready]"' in dot


def run_pipeline(events: list[str]) -> tuple[Any, Coverage]:
    chart = compile_chart(Pipeline)
    coverage = Coverage()
    model = Recorder()
    with record_coverage(coverage):
        instance = chart.create(model)
        for event in events:
            if event == "lock":
                model.locked = True
            else:
                instance.send(event)
    return chart, coverage


def test_a_coverage_overlay_marks_nested_states_and_eventless_transitions() -> None:
    chart, coverage = run_pipeline(["lock", "kick"])
    overlay = coverage_overlay(chart, coverage)
    taken = {tid for tid, mark in overlay.transitions.items() if mark.emphasis.value == "hit"}
    # before kick is taken, the eventless chain runs to finished and done.state.work ends it
    assert taken == {
        "queued::running",
        "running::checked",
        "checked::finished",
        "work:done_state_work|done.state.work:complete",
    }
    hit = {sid for sid, mark in overlay.states.items() if mark.emphasis.value == "hit"}
    assert {"work", "queued", "running", "checked", "finished", "complete"} <= hit
    assert "failed" not in hit
    mermaid = to_mermaid(chart, overlay=overlay)
    hit_class = next(line for line in mermaid.splitlines() if line.strip().endswith(" hit"))
    assert "finished" in hit_class.split()[1].split(",")
    assert "queued --> running : (eventless) [locked]" in mermaid
    dot = to_dot(chart, overlay=overlay)
    assert "×1" in dot


def test_a_trace_overlay_follows_a_statechart_through_parent_transitions() -> None:
    chart = compile_chart(Wizard)
    instance = chart.create(Recorder())
    steps: list[TraceStep] = []
    with observe_outcomes(lambda _, outcome: steps.append(TraceStep.of(outcome))):
        for event in ("start", "next_field", "forward", "pause", "start"):
            instance.send(event)
    overlay = trace_overlay(chart, steps)
    hit = {sid for sid, mark in overlay.states.items() if mark.emphasis.value == "hit"}
    assert hit == {"paused", "steps", "basics", "name", "email", "extras"}
    assert overlay.transitions["steps:pause:paused"].notes == ("step 4",)
    assert overlay.transitions["paused:start:steps"].notes == ("steps 1, 5",)
    assert "paused → name → email → extras → paused → name" in overlay.caption


def test_a_trace_through_a_history_state_must_say_where_it_went() -> None:
    chart = compile_chart(Wizard)
    steps = [TraceStep("start"), TraceStep("pause"), TraceStep("restore")]
    with pytest.raises(TraceError, match=r"step 3 .*cannot tell .*'deep'.*give the step a"):
        trace_overlay(chart, steps)
    overlay = trace_overlay(chart, [*steps[:2], TraceStep("restore", state="email")])
    assert overlay.states["email"].emphasis.value == "hit"
