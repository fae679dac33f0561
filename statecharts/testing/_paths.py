"""Paths by construction: the shortest path to every state, and a small set of paths that
together take every transition.

Paths are found by running the compiled chart itself, breadth first, from candidate events
with payloads: guards are evaluated for real, on a real model, so a guarded transition is
reached only by a sequence that really enables it. Two runs that end in the same
configuration, with the same history values recorded, the same model contents and the same
fields set on the instance by the chart's own ``__init__``, are the same node of the search.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._runtime import Chart, Instance
from ._payloads import payload_parameters
from ._record import unrecorded
from ._runner import Adapter, ChartRunner, ModelFactory, configuration_of

Candidates = Mapping[str, Sequence[Mapping[str, Any]]]


@dataclass(frozen=True, slots=True)
class PathStep:
    """One event of a path, with the payload it is sent with."""

    event: str
    payload: Mapping[str, Any] = field(default_factory=dict)

    def label(self, with_payload: bool) -> str:
        if not with_payload or not self.payload:
            return self.event
        return f"{self.event}({_compact(self.payload)})"


def _compact(payload: Mapping[str, Any]) -> str:
    try:
        parts = [f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in payload.items()]
    except (TypeError, ValueError):
        parts = [f"{k}={v!r}" for k, v in payload.items()]
    return ",".join(parts)


@dataclass(frozen=True, slots=True)
class Path:
    """A sequence of events from the initial state, with the transitions it takes (ids, in
    order) and the configuration it ends in."""

    steps: tuple[PathStep, ...]
    transitions: tuple[str, ...]
    configuration: frozenset[str]
    id: str = ""

    @property
    def events(self) -> tuple[str, ...]:
        return tuple(step.event for step in self.steps)

    def __str__(self) -> str:
        return self.id or "(initial)"


@dataclass(frozen=True, slots=True)
class Exploration:
    """What a search found: the shortest path to each state and to each transition (the path
    ending with it), and what stayed out of reach within the search's bounds."""

    to_state: Mapping[str, Path]
    to_transition: Mapping[str, Path]
    unreached_states: tuple[str, ...]
    untaken_transitions: tuple[str, ...]
    #: The shortest path found to each distinct node (configuration, history values recorded,
    #: data), in the order found: what ``node_paths`` extends by one event.
    to_node: tuple[Path, ...] = ()


def default_candidates(chart: Chart, model: Any = None) -> dict[str, list[dict[str, Any]]]:
    """One payload per declared event: every argument its callbacks ask for (on the chart
    and on ``model``'s class, see ``payload_parameters``) set to ``None``."""
    return {
        event.id: [{name: None for name in payload_parameters(chart, event.id, model)}]
        for event in chart.events
    }


def fingerprint_of(model: Any) -> str:
    """A text that is equal for models holding equal data (their attributes' reprs; a dict's
    items)."""
    if model is None:
        return ""
    if type(model) is dict:
        return repr(sorted(model.items()))
    values: dict[str, Any] = {}
    for klass in type(model).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if hasattr(model, slot):
                values[slot] = getattr(model, slot)
    values.update(getattr(model, "__dict__", {}))
    return repr(sorted(values.items())) if values else repr(model)


def explore(
    chart: Chart,
    candidates: Candidates | None = None,
    *,
    model: ModelFactory | None = None,
    fingerprint: Callable[[Any], Any] = fingerprint_of,
    max_depth: int = 12,
    max_nodes: int = 20_000,
) -> Exploration:
    """Search the chart breadth first from its initial state.

    ``candidates`` maps event ids to the payloads to try (events left out get
    ``default_candidates``); ``model(key)`` builds each run's model. The search stops when
    every state and transition is reached, at ``max_depth`` events, or after ``max_nodes``
    distinct nodes.
    """
    if not isinstance(chart, Chart):
        raise TypeError("explore needs a compiled Chart (compile_chart(cls))")
    tries: dict[str, list[Mapping[str, Any]]] = {
        event: list(payloads)
        for event, payloads in default_candidates(
            chart, None if model is None else model("path")
        ).items()
    }
    tries.update({event: list(payloads) for event, payloads in (candidates or {}).items()})
    moves = [
        PathStep(event, dict(payload)) for event, payloads in tries.items() for payload in payloads
    ]

    start = [transition.id for transition in chart.start_transitions()]

    def run(steps: tuple[PathStep, ...]) -> tuple[Instance, tuple[str, ...]]:
        instance = chart.create(None if model is None else model("path"))
        taken = list(start)
        for step in steps:
            outcome = instance.send(step.event, **step.payload)
            taken.extend(transition.id for transition in outcome.transitions)
        return instance, tuple(taken)

    with unrecorded():
        return _search(chart, moves, run, fingerprint, max_depth, max_nodes, tries)


def _search(
    chart: Chart,
    moves: list[PathStep],
    run: Callable[[tuple[PathStep, ...]], tuple[Instance, tuple[str, ...]]],
    fingerprint: Callable[[Any], Any],
    max_depth: int,
    max_nodes: int,
    tries: Mapping[str, Sequence[Mapping[str, Any]]],
) -> Exploration:
    all_states = [state.id for state in chart.states]
    all_transitions = [t.id for t in chart.transitions]
    start, started = run(())
    origin = Path((), started, configuration_of(start))
    to_state: dict[str, Path] = {state: origin for state in origin.configuration}
    to_transition: dict[str, Path] = {transition: origin for transition in started}

    def node(instance: Instance, configuration: frozenset[str]) -> Any:
        """What the run's future depends on: the configuration with the history values
        recorded (a hierarchical instance's node key), the model's data, and the fields a
        chart's own ``__init__`` set on the instance (C20)."""
        where = getattr(instance._node, "key", configuration)
        fields = getattr(instance, "__dict__", None)
        return (where, fingerprint(instance.model), fingerprint_of(fields) if fields else "")

    # a state a macrostep passes through (and a history pseudo-state, never in a
    # configuration) is reached when a transition into it is taken
    targets = {t.id: t.targets for t in chart.transitions}
    seen = {node(start, origin.configuration)}
    nodes = [origin]
    frontier: deque[Path] = deque([origin])
    while frontier and (
        len(to_state) < len(all_states) or len(to_transition) < len(all_transitions)
    ):
        path = frontier.popleft()
        if len(path.steps) >= max_depth:
            continue
        for move in moves:
            steps = (*path.steps, move)
            try:
                instance, taken = run(steps)
            except Exception:  # the chart refuses the candidate by raising: no move
                continue
            if len(taken) == len(path.transitions):
                continue  # ignored: nothing new can follow from here that the parent lacks
            found = Path(steps, taken, configuration_of(instance))
            for transition_id in taken[len(path.transitions) :]:  # a macrostep may take several
                to_transition.setdefault(transition_id, found)
                for target in targets[transition_id]:
                    to_state.setdefault(target, found)
            for state in found.configuration:
                to_state.setdefault(state, found)
            reached = node(instance, found.configuration)
            if reached not in seen and len(seen) < max_nodes and not instance.is_terminated:
                seen.add(reached)
                frontier.append(found)
                nodes.append(found)
    ids = _ids(tries)
    return Exploration(
        to_state={s: _named(to_state[s], ids) for s in all_states if s in to_state},
        to_transition={
            t: _named(to_transition[t], ids) for t in all_transitions if t in to_transition
        },
        unreached_states=tuple(s for s in all_states if s not in to_state),
        untaken_transitions=tuple(t for t in all_transitions if t not in to_transition),
        to_node=tuple(_named(path, ids) for path in nodes),
    )


def _ids(tries: Mapping[str, Sequence[Mapping[str, Any]]]) -> Callable[[Path], str]:
    several = {event for event, payloads in tries.items() if len(payloads) > 1}

    def name(path: Path) -> str:
        return "-".join(step.label(step.event in several) for step in path.steps)

    return name


def _named(path: Path, ids: Callable[[Path], str]) -> Path:
    return Path(path.steps, path.transitions, path.configuration, ids(path))


def node_paths(exploration: Exploration, events: Sequence[str], limit: int = 400) -> list[Path]:
    """The path to each node an exploration found, followed by each of ``events`` (sent
    without a payload): every (node, event) pair, so a system that remembers a history or
    data differently from the chart is shown it by a short walk. At most ``limit`` paths, the
    shallowest nodes first."""
    found: list[Path] = []
    for path in exploration.to_node:
        for event in events:
            steps = (*path.steps, PathStep(event, {}))
            name = "-".join(step.event for step in steps)
            found.append(Path(steps, (), frozenset(), name))
            if len(found) >= limit:
                return found
    return found


def shortest_paths(
    chart: Chart, candidates: Candidates | None = None, **options: Any
) -> dict[str, Path]:
    """The shortest path found to each reachable state (the initial state's is empty)."""
    return dict(explore(chart, candidates, **options).to_state)


def transition_cover(
    chart: Chart, candidates: Candidates | None = None, **options: Any
) -> list[Path]:
    """A small set of paths that together take every reachable transition: greedily, the
    shortest path to the transition that adds the most untaken ones, until none is left."""
    return cover(explore(chart, candidates, **options))


def cover(exploration: Exploration) -> list[Path]:
    """The greedy transition cover of an exploration (see ``transition_cover``)."""
    pool: list[Path] = []
    for path in exploration.to_transition.values():
        if path not in pool:
            pool.append(path)
    left = set(exploration.to_transition)
    chosen: list[Path] = []
    while left:
        best = max(pool, key=lambda path: (len(left & set(path.transitions)), -len(path.steps)))
        if not left & set(best.transitions):
            raise ValueError(
                f"no path takes {', '.join(sorted(left))}: the exploration is inconsistent"
            )
        chosen.append(best)
        left -= set(best.transitions)
    return sorted(chosen, key=lambda path: (len(path.steps), path.id))


def run_path(
    chart: Chart,
    adapter: Adapter,
    path: Path,
    *,
    model: ModelFactory | None = None,
    key: str = "k0",
) -> ChartRunner:
    """Run ``path`` on one instance of the SUT beside the chart, checking every step;
    raises ``Divergence`` where they disagree."""
    runner = ChartRunner(chart, adapter, model)
    try:
        runner.create(key)
        for step in path.steps:
            runner.send(key, step.event, step.payload)
    finally:
        runner.close()
    return runner


def path_cases(paths: Iterable[Path] | Mapping[str, Path]) -> list[Any]:
    """``pytest.param`` cases for ``@pytest.mark.parametrize``, with the path's events as id."""
    import pytest

    items = paths.values() if isinstance(paths, Mapping) else paths
    cases: list[Any] = []
    seen: list[tuple[PathStep, ...]] = []
    for path in items:  # one path may lead to several states: one case each path
        if path.steps not in seen:
            seen.append(path.steps)
            cases.append(pytest.param(path, id=path.id or "initial"))
    return cases
