"""Overlays drawn over a chart's diagram: coverage of a test run, and the path of one call.

Both produce an ``Overlay`` (marks by state and transition id, and a caption); the renderers
draw marks without knowing where they came from.

A trace is a sequence of steps, each an event and, optionally, what it did. The path is worked
out from the chart: from the current state, the transitions matching the event are tried in
order; the first without guards always wins, and guarded ones may or may not fire. When the
chart alone cannot tell (guards, or several candidates), the step must say what happened, by
the state it left the call in (``"state"``) or the transition it took (``"transition"``, a
``TransitionDef.id``, or ``null`` for "ignored"). A statechart's step (regions of a parallel
state, eventless transitions after the event) says every transition its macrostep took
(``"transitions"``, a list of ids, its own first); the path then follows them as said.
``TraceStep.of(outcome)`` records exactly that from the compiled runtime. A trace file is
JSON lines, one event per line::

    {"id": "call_1", "event": "start", "name": "search"}
    {"id": "call_1", "event": "ready", "state": "running"}
    {"id": "call_1", "event": "result", "transition": "running:result:done"}

A line may be a bare JSON string (the event), or an object whose ``"event"`` (else ``"type"``)
is the event; other keys are ignored. Lines of several calls are told apart by ``"id"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._compiler import descriptor_matches
from ._coverage import ChartCoverage, Coverage, exercised
from ._diagram import Emphasis, Mark, Overlay
from ._errors import CoverageError, TraceError
from ._ir import ChartDef, TransitionDef
from ._runtime import Outcome

# -- coverage ------------------------------------------------------------------------------


def coverage_overlay(chart: ChartDef, coverage: Coverage) -> Overlay:
    """Marks for ``coverage`` of ``chart``: taken transitions with their counts, never-taken
    ones, states never entered, and the events each state ignored.

    Raises ``CoverageError`` when the file names transitions or states the chart lacks (it
    was recorded against another version of the chart).
    """
    found = coverage.charts.get(chart.qualname)
    counts = found if found is not None else ChartCoverage()
    _check_coverage_fits(chart, counts)
    counted, entered = exercised(chart, counts)
    transitions = {t.id: _count_mark(counted[t.id], "taken") for t in chart.transitions}
    states = {
        state.id: Mark(
            Emphasis.HIT if state.id in entered else Emphasis.MISSED,
            tuple(
                f"ignored {event} ×{count}"
                for event, count in sorted(counts.ignored.get(state.id, {}).items())
            ),
        )
        for state in chart.states
    }
    taken = sum(1 for count in counted.values() if count)
    caption = (
        f"coverage: {taken} of {len(chart.transitions)} transitions taken, "
        f"{counts.ignored_total()} events ignored"
    )
    return Overlay(caption, states, transitions)


def _count_mark(count: int, verb: str) -> Mark:
    if count:
        return Mark(Emphasis.HIT, (f"×{count}",))
    return Mark(Emphasis.MISSED, (f"never {verb}",))


def _check_coverage_fits(chart: ChartDef, counts: ChartCoverage) -> None:
    unknown = sorted(set(counts.taken) - {t.id for t in chart.transitions})
    unknown += sorted(set(counts.ignored) - {s.id for s in chart.states})
    if unknown:
        raise CoverageError(
            f"coverage of {chart.qualname} names transitions or states the chart does not "
            f"have: {', '.join(unknown)}; it was recorded against another version of the "
            "chart, so record it again"
        )


# -- traces --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One event of a trace and, optionally, what it did: the ``state`` it left the call in,
    the id of the ``transition`` it took, or that it was ``ignored``."""

    event: str
    state: str | None = None
    transition: str | None = None
    ignored: bool = False
    #: Every transition the step's macrostep took, in order (its own first): what a
    #: statechart's step did, which one state cannot say (regions of a parallel state ...).
    transitions: tuple[str, ...] = ()

    @classmethod
    def of(cls, outcome: Outcome) -> TraceStep:
        """The step an outcome of the compiled runtime describes, exactly."""
        if outcome.transition is None:
            return cls(outcome.event, ignored=True)
        state = None if outcome.target is None else outcome.target.id
        taken = tuple(transition.id for transition in outcome.transitions)
        return cls(outcome.event, state=state, transition=outcome.transition.id, transitions=taken)


@dataclass(frozen=True, slots=True)
class PathStep:
    """A step of a trace, resolved on the chart: the state it happened in, the transition
    taken (``None`` when the event was ignored) and the eventless transitions taken after it
    in the same step (``then``). ``number`` counts from 1."""

    number: int
    event: str
    state: str
    transition: TransitionDef | None
    then: tuple[TransitionDef, ...] = ()

    @property
    def taken(self) -> tuple[TransitionDef, ...]:
        """Every transition of the step, in order."""
        return () if self.transition is None else (self.transition, *self.then)

    @property
    def passed(self) -> tuple[str, ...]:
        """The states the step entered, in order (the last is ``landed``)."""
        return tuple(t.target for t in self.taken if t.target is not None)

    @property
    def landed(self) -> str:
        """The state the call is in after this step."""
        return _landed(self.state, self.taken)


def read_trace(
    lines: Iterable[str], call_id: str | None = None, source: str = "<trace>"
) -> list[TraceStep]:
    """The steps of a JSON-lines trace (see the module docstring), of one call.

    ``call_id`` keeps the lines whose ``"id"`` equals it; without it, the lines must not name
    several ids. Raises ``TraceError`` naming ``source`` and the line.
    """
    steps: list[TraceStep] = []
    ids: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        item = _parse_line(line, where)
        line_id = item.get("id")
        if call_id is not None and (line_id is None or str(line_id) != call_id):
            continue
        if line_id is not None:
            ids.add(str(line_id))
        steps.append(_trace_step(item, where))
    if call_id is None and len(ids) > 1:
        raise TraceError(
            f"{source} holds several calls ({', '.join(sorted(ids))}); choose one by its id"
        )
    if call_id is not None and not steps:
        raise TraceError(f"{source} has no line for call {call_id!r}")
    return steps


def _parse_line(line: str, where: str) -> dict[str, Any]:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as error:
        raise TraceError(f"{where}: not JSON ({error})") from None
    if isinstance(item, str):
        return {"event": item}
    if not isinstance(item, dict):
        raise TraceError(f"{where}: a line must be an event name or an object")
    return item


def _trace_step(item: dict[str, Any], where: str) -> TraceStep:
    event = item.get("event", item.get("type"))
    if not isinstance(event, str):
        raise TraceError(f'{where}: no event (an "event" or "type" string)')
    state = item.get("state")
    if state is not None and not isinstance(state, str):
        raise TraceError(f'{where}: "state" must be a state id')
    transition = item.get("transition")
    if transition is not None and not isinstance(transition, str):
        raise TraceError(f'{where}: "transition" must be a transition id or null')
    ignored = "transition" in item and transition is None
    transitions = item.get("transitions", [])
    if not isinstance(transitions, list) or not all(isinstance(t, str) for t in transitions):
        raise TraceError(f'{where}: "transitions" must be a list of transition ids')
    return TraceStep(
        event, state=state, transition=transition, ignored=ignored, transitions=tuple(transitions)
    )


def resolve_trace(chart: ChartDef, steps: Iterable[TraceStep]) -> list[PathStep]:
    """The path the steps took through ``chart``, from its initial state.

    Raises ``TraceError`` when a step contradicts the chart, or when the chart cannot tell what
    a step did and the step does not say.
    """
    path: list[PathStep] = []
    state = chart.initial.id
    for number, step in enumerate(steps, start=1):
        taken = _resolve_step(chart, state, step, number)
        first, then = (None, ()) if not taken else (taken[0], taken[1:])
        path.append(PathStep(number, step.event, state, first, then))
        state = path[-1].landed
    return path


def _resolve_step(
    chart: ChartDef, state: str, step: TraceStep, number: int
) -> tuple[TransitionDef, ...]:
    """The transitions the step took: the event's, then eventless ones (empty: ignored)."""
    where = f"step {number} ({step.event!r} in state {state!r})"
    if step.state is not None and step.state not in chart.states_by_id:
        raise TraceError(f"{where}: {chart.name} has no state {step.state!r}")
    if step.transitions and not step.ignored:  # what the step took, said in full
        known = {transition.id: transition for transition in chart.transitions}
        for transition_id in step.transitions:
            if transition_id not in known:
                raise TraceError(f"{where}: {chart.name} has no transition {transition_id!r}")
        if step.transition is not None and step.transition != step.transitions[0]:
            raise TraceError(
                f"{where}: the step took {step.transition}, but its transitions start with "
                f"{step.transitions[0]}"
            )
        return tuple(known[transition_id] for transition_id in step.transitions)
    possible = _possible(chart, state, step.event)
    if step.ignored or step.transition is not None:
        wanted = None if step.ignored else step.transition
        possible = [c for c in possible if (c[0].id if c else None) == wanted]
        if not possible:
            said = "was ignored" if step.ignored else f"took {step.transition}"
            raise TraceError(f"{where}: the trace says it {said}, which the chart cannot do")
    if step.state is not None:
        possible = [c for c in possible if _landed(state, c) == step.state]
        if not possible:
            raise TraceError(f"{where}: the chart cannot reach {step.state!r} on this event")
    if len(possible) > 1:
        options = ", ".join(" then ".join(t.id for t in c) if c else "ignored" for c in possible)
        raise TraceError(
            f"{where}: the chart alone cannot tell what happened ({options}); "
            'give the step a "state" (the state after it) or a "transition" (an id, or null)'
        )
    return possible[0]


def _possible(chart: ChartDef, state: str, event: str) -> list[tuple[TransitionDef, ...]]:
    """What the event may do in ``state``: for each matching transition in the order they are
    tried (up to the first one without guards, which always fires), that transition followed
    by each chain of eventless transitions that may follow it; else also "ignored" (``()``)."""
    possible: list[tuple[TransitionDef, ...]] = []
    for transition in chart.transitions_from(state):
        if any(descriptor_matches(descriptor, event) for descriptor in transition.events):
            possible.extend(_then_eventless(chart, (transition,)))
            if not transition.guards:
                return possible
    possible.append(())
    return possible


def _then_eventless(
    chart: ChartDef, chain: tuple[TransitionDef, ...]
) -> list[tuple[TransitionDef, ...]]:
    """``chain`` followed by each run of eventless transitions that may come after it in the
    same step: in the order they are tried, up to one without guards; without such a one the
    chain may also rest where it is. A transition back to a state the chain passed is not
    followed (the runtime would loop there, and a trace cannot tell)."""
    state = chain[-1].target
    if state is None:
        return [chain]
    passed = {t.source for t in chain} | {state}
    chains: list[tuple[TransitionDef, ...]] = []
    for transition in chart.transitions_from(state):
        if transition.events or transition.target is None or transition.target in passed:
            continue
        chains.extend(_then_eventless(chart, (*chain, transition)))
        if not transition.guards:
            return chains
    chains.append(chain)
    return chains


def _landed(state: str, taken: tuple[TransitionDef, ...]) -> str:
    for transition in reversed(taken):
        if transition.target is not None:
            return transition.target
    return state


def trace_overlay(chart: ChartDef, steps: Iterable[TraceStep]) -> Overlay:
    """Marks for the path a trace took: its states and transitions, with step numbers and the
    events each state ignored; everything else dimmed. Raises ``TraceError`` (see
    ``resolve_trace``)."""
    path = resolve_trace(chart, steps)
    numbers: dict[str, list[int]] = {}
    for step in path:
        for transition in step.taken:
            numbers.setdefault(transition.id, []).append(step.number)
    transitions = {t.id: _step_mark(numbers.get(t.id, [])) for t in chart.transitions}
    route = [chart.initial.id]
    for step in path:
        for state in step.passed:
            if state != route[-1]:
                route.append(state)
    caption = f"trace of {len(path)} events: {' → '.join(route)}"
    return Overlay(caption, _trace_state_marks(chart, path), transitions)


def _trace_state_marks(chart: ChartDef, path: list[PathStep]) -> dict[str, Mark]:
    visited = {chart.initial.id} | {state for step in path for state in step.passed}
    ignored: dict[str, dict[str, list[int]]] = {}
    for step in path:
        if step.transition is None:
            ignored.setdefault(step.state, {}).setdefault(step.event, []).append(step.number)
    return {
        state.id: Mark(
            Emphasis.HIT if state.id in visited else Emphasis.DIM,
            tuple(
                f"ignored {event} ({_steps(numbers)})"
                for event, numbers in ignored.get(state.id, {}).items()
            ),
        )
        for state in chart.states
    }


def _step_mark(numbers: list[int]) -> Mark:
    return Mark(Emphasis.HIT, (_steps(numbers),)) if numbers else Mark(Emphasis.DIM)


def _steps(numbers: list[int]) -> str:
    """Ascending step numbers, runs shortened: ``step 3``, ``steps 2-5, 9``."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    parts = [str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs]
    return f"{'step' if len(numbers) == 1 else 'steps'} {', '.join(parts)}"
