"""Overlays drawn over a chart's diagram: coverage of a test run, and the path of one call.

Both produce an ``Overlay`` (marks by state and transition id, and a caption); the renderers
draw marks without knowing where they came from.

A trace is a sequence of steps, each an event and, optionally, what it did. The path is worked
out from the chart: from the current state, the transitions matching the event are tried in
order; the first without guards always wins, and guarded ones may or may not fire. When the
chart alone cannot tell (guards, or several candidates), the step must say what happened, by
the state it left the call in (``"state"``) or the transition it took (``"transition"``, a
``TransitionDef.id``, or ``null`` for "ignored"). ``TraceStep.of(outcome)`` records exactly
that from the compiled runtime. A trace file is JSON lines, one event per line::

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
from ._coverage import ChartCoverage, Coverage
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
    transitions = {
        t.id: _count_mark(counts.taken.get(t.id, 0), "taken") for t in chart.transitions
    }
    targets = {t.target for t in chart.transitions if t.target and counts.taken.get(t.id)}
    if found is not None:
        targets.add(chart.initial.id)
    entered = {reached for target in targets for reached in _reached(chart, target)}
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
    taken = sum(1 for t in chart.transitions if counts.taken.get(t.id))
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

    @classmethod
    def of(cls, outcome: Outcome) -> TraceStep:
        """The step an outcome of the compiled runtime describes, exactly."""
        if outcome.transition is None:
            return cls(outcome.event, ignored=True)
        return cls(outcome.event, transition=outcome.transition.id)


@dataclass(frozen=True, slots=True)
class PathStep:
    """A step of a trace, resolved on the chart: the state it happened in and the transition
    taken (``None`` when the event was ignored). ``number`` counts from 1."""

    number: int
    event: str
    state: str
    transition: TransitionDef | None
    lands: str | None = None

    @property
    def landed(self) -> str:
        """The (atomic) state the call is in after this step."""
        if self.lands is not None:
            return self.lands
        if self.transition is None or self.transition.target is None:
            return self.state
        return self.transition.target


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
    return TraceStep(event, state=state, transition=transition, ignored=ignored)


def resolve_trace(chart: ChartDef, steps: Iterable[TraceStep]) -> list[PathStep]:
    """The path the steps took through ``chart``, from its initial state.

    Raises ``TraceError`` when a step contradicts the chart, or when the chart cannot tell what
    a step did and the step does not say.
    """
    path: list[PathStep] = []
    state = _entered(chart, chart.initial.id)
    if state is None:
        raise TraceError(f"{chart.name}: the initial state is entered in several regions")
    for number, step in enumerate(steps, start=1):
        taken = _resolve_step(chart, state, step, number)
        lands = _lands(chart, taken, state, step, number)
        path.append(PathStep(number, step.event, state, taken, lands))
        state = lands
    return path


def _reached(chart: ChartDef, state_id: str) -> set[str]:
    """The states active once ``state_id`` is entered, as far as the chart alone says: its
    ancestors, and its initial descendants (a compound's initial child, every region of a
    parallel state; what a history state restores is not known)."""
    reached = set(_chain(chart, state_id))
    todo = [chart.state(state_id)]
    while todo:
        state = todo.pop()
        children = [child for child in chart.states if child.parent == state.id]
        if state.kind == "compound":
            children = [child for child in children if child.initial]
        elif state.kind != "parallel":
            continue
        reached.update(child.id for child in children)
        todo += children
    return reached


def _entered(chart: ChartDef, state_id: str) -> str | None:
    """The atomic state entering ``state_id`` ends in: a compound state's initial child, all
    the way down; ``None`` where the chart alone cannot tell (a parallel or history state)."""
    state = chart.state(state_id)
    while state.kind == "compound":
        initial = [child for child in chart.states if child.parent == state.id and child.initial]
        if len(initial) != 1:
            return None
        state = initial[0]
    return state.id if state.kind == "atomic" else None


def _chain(chart: ChartDef, state_id: str) -> list[str]:
    """``state_id`` and its ancestors, innermost first (the order transitions are tried)."""
    chain = [state_id]
    while (parent := chart.state(chain[-1]).parent) is not None:
        chain.append(parent)
    return chain


def _resolve_step(
    chart: ChartDef, state: str, step: TraceStep, number: int
) -> TransitionDef | None:
    where = f"step {number} ({step.event!r} in state {state!r})"
    if step.state is not None and step.state not in chart.states_by_id:
        raise TraceError(f"{where}: {chart.name} has no state {step.state!r}")
    possible = _possible(chart, state, step.event)
    if step.ignored or step.transition is not None:
        wanted = None if step.ignored else step.transition
        possible = [t for t in possible if (t.id if t else None) == wanted]
        if not possible:
            said = "was ignored" if step.ignored else f"took {step.transition}"
            raise TraceError(f"{where}: the trace says it {said}, which the chart cannot do")
    if step.state is not None:
        possible = [t for t in possible if _may_land(chart, t, state, step.state)]
        if not possible:
            raise TraceError(f"{where}: the chart cannot reach {step.state!r} on this event")
    if len(possible) > 1:
        options = ", ".join(t.id if t else "ignored" for t in possible)
        raise TraceError(
            f"{where}: the chart alone cannot tell what happened ({options}); "
            'give the step a "state" (the state after it) or a "transition" (an id, or null)'
        )
    return possible[0]


def _possible(chart: ChartDef, state: str, event: str) -> list[TransitionDef | None]:
    """What the event may do in ``state``: matching transitions in the order they are tried,
    up to the first one without guards (which always fires), else also "ignored" (None)."""
    possible: list[TransitionDef | None] = []
    for owner in _chain(chart, state):
        for transition in chart.transitions_from(owner):
            if any(descriptor_matches(descriptor, event) for descriptor in transition.events):
                possible.append(transition)
                if not transition.guards:
                    return possible
    possible.append(None)
    return possible


def _may_land(chart: ChartDef, transition: TransitionDef | None, state: str, wanted: str) -> bool:
    """Whether taking ``transition`` from ``state`` may leave the call in ``wanted``."""
    if transition is None or transition.target is None:
        return wanted == state
    target = chart.state(transition.target)
    if target.kind in ("shallow_history", "deep_history") and target.parent is not None:
        target = chart.state(target.parent)  # it restores some state inside its parent
    return target.id in _chain(chart, wanted)


def _lands(
    chart: ChartDef, transition: TransitionDef | None, state: str, step: TraceStep, number: int
) -> str:
    """The atomic state a step leaves the call in: the one the step names, else the one the
    transition's target enters (``TraceError`` when only running the chart could tell)."""
    if step.state is not None:
        if chart.state(step.state).kind != "atomic":
            raise TraceError(
                f'step {number} ({step.event!r} in state {state!r}): "state" must name an '
                f"atomic state, not {step.state!r}"
            )
        return step.state
    if transition is None or transition.target is None:
        return state
    entered = _entered(chart, transition.target)
    if entered is None:
        raise TraceError(
            f"step {number} ({step.event!r} in state {state!r}): the chart alone cannot tell "
            f'which state entering {transition.target!r} ends in; give the step a "state"'
        )
    return entered


def trace_overlay(chart: ChartDef, steps: Iterable[TraceStep]) -> Overlay:
    """Marks for the path a trace took: its states and transitions, with step numbers and the
    events each state ignored; everything else dimmed. Raises ``TraceError`` (see
    ``resolve_trace``)."""
    path = resolve_trace(chart, steps)
    numbers: dict[str, list[int]] = {}
    for step in path:
        if step.transition is not None:
            numbers.setdefault(step.transition.id, []).append(step.number)
    transitions = {t.id: _step_mark(numbers.get(t.id, [])) for t in chart.transitions}
    route = [chart.initial.id]
    for step in path:
        if step.landed != route[-1]:
            route.append(step.landed)
    caption = f"trace of {len(path)} events: {' → '.join(route)}"
    return Overlay(caption, _trace_state_marks(chart, path), transitions)


def _trace_state_marks(chart: ChartDef, path: list[PathStep]) -> dict[str, Mark]:
    leaves = {step.landed for step in path} | {step.state for step in path}
    visited = {chart.initial.id} | {owner for leaf in leaves for owner in _chain(chart, leaf)}
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
