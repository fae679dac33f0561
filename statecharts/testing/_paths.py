"""Paths by construction: the shortest path to every state, and a small set of paths that
together take every transition.

Paths are found by running the compiled chart itself, breadth first, from candidate events
with payloads: guards are evaluated for real, on a real model, so a guarded transition is
reached only by a sequence that really enables it. Two runs that end in the same
configuration, with the same history values recorded, the same model contents (compared by
value, all the way down), the same fields set on the instance by the chart's own ``__init__``
and the same delayed events waiting, are the same node of the search.

Every run is on its own ``VirtualClock``: nothing waits in real time. Where delayed events
wait, letting time pass until the next is due is one more step the search can take
(``PathStep.wait``).
"""

from __future__ import annotations

import enum
import json
import re
import threading
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .._clock import VirtualClock, clock_ns
from .._runtime import Chart, Instance, Outcome, observe_outcomes
from ._payloads import payload_parameters
from ._record import unrecorded
from ._runner import Adapter, ChartRunner, ModelFactory, configuration_of

Candidates = Mapping[str, Sequence[Mapping[str, Any]]]


@dataclass(frozen=True, slots=True)
class PathStep:
    """One step of a path: an event with the payload it is sent with, or (``seconds`` set,
    see ``PathStep.wait``) time passing until the next delayed event is due."""

    event: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    #: For a wait: how many seconds pass (``None``: the step sends ``event``).
    seconds: float | None = None

    @classmethod
    def wait(cls, seconds: float) -> PathStep:
        """A step that sends nothing and lets ``seconds`` pass (on a virtual clock), so the
        delayed events due by then run."""
        return cls("", {}, seconds)

    def label(self, with_payload: bool) -> str:
        if self.seconds is not None:
            return f"wait({self.seconds:g}s)"
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
        """The events the path sends, in order (its waits left out)."""
        return tuple(step.event for step in self.steps if step.seconds is None)

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


#: ``at 0x7f...`` in a ``repr``: an address, which says nothing about the data.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def fingerprint_of(value: Any) -> Hashable:
    """A hashable value that is equal for values holding equal data, compared by value all the
    way down and never by identity or address: ``None``, numbers, strings and bytes as
    themselves (with their type, so ``1`` is not ``True``; floats by ``repr``, so ``nan``
    equals ``nan``), an enum member by its type and name, lists and tuples item by item,
    dicts and sets whatever their order, and any other object by its type and the
    fingerprints of its attributes (``__dict__`` and ``__slots__``). An object showing no
    attributes (one written in C, a function, a lock) counts by its type and its ``repr``
    with any ``at 0x...`` address left out. A cycle back to an object being fingerprinted
    counts as how many levels up it points."""
    return _fingerprint(value, {})


def _fingerprint(value: Any, open_: dict[int, int]) -> Hashable:
    kind = type(value)
    if value is None or kind in (bool, int, str, bytes):
        return (kind, value)
    if kind in (float, complex):
        return (kind, repr(value))
    if isinstance(value, enum.Enum):
        return (kind, value.name, repr(value.value))
    marker = id(value)
    if marker in open_:  # a cycle: how far up the object it points back to is
        return ("cycle", len(open_) - open_[marker])
    open_[marker] = len(open_)
    try:
        if isinstance(value, list | tuple | deque):
            return (kind, tuple(_fingerprint(item, open_) for item in value))
        if isinstance(value, dict):
            return (
                kind,
                frozenset(
                    (_fingerprint(k, open_), _fingerprint(v, open_)) for k, v in value.items()
                ),
            )
        if isinstance(value, set | frozenset):
            return (kind, frozenset(_fingerprint(item, open_) for item in value))
        fields = _attributes(value)
        if fields is None:
            return (kind, _ADDRESS.sub("", repr(value)))
        return (kind, tuple((name, _fingerprint(v, open_)) for name, v in sorted(fields.items())))
    finally:
        del open_[marker]


def _attributes(value: Any) -> dict[str, Any] | None:
    """An object's attributes: its ``__slots__`` (every class's) and its ``__dict__``;
    ``None`` when it has neither."""
    found: dict[str, Any] = {}
    has = False
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            has = True
            if slot not in ("__dict__", "__weakref__") and hasattr(value, slot):
                found[slot] = getattr(value, slot)
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        has = True
        found.update(attributes)
    return found if has else None


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
    taking = _Taking(chart)

    def run(steps: tuple[PathStep, ...]) -> tuple[Instance, tuple[str, ...]]:
        taken = list(start)
        with taking.into(taken):  # what creating the instance takes (eventless) counts too
            clock = VirtualClock()
            instance = chart.create(None if model is None else model("path"), clock=clock)
            for step in steps:
                if step.seconds is None:
                    instance.send(step.event, **step.payload)
                else:
                    clock.advance(step.seconds)
        return instance, tuple(taken)

    with unrecorded(), observe_outcomes(taking):
        return _search(chart, moves, run, fingerprint, max_depth, max_nodes, tries)


class _Taking:
    """An outcome observer collecting, on the thread that runs a path, the transitions every
    outcome of the chart's instances lists: each event's macrostep, what creating an instance
    takes (eventless transitions leaving the start), and each delayed event the clock runs."""

    def __init__(self, chart: Chart) -> None:
        self.chart = chart
        self.local = threading.local()

    def __call__(self, instance: Instance, outcome: Outcome) -> None:
        taken: list[str] | None = getattr(self.local, "taken", None)
        if taken is not None and outcome.transitions and instance.chart is self.chart:
            taken.extend(transition.id for transition in outcome.transitions)

    @contextmanager
    def into(self, taken: list[str]) -> Iterator[None]:
        self.local.taken = taken
        try:
            yield
        finally:
            self.local.taken = None


def _waiting(instance: Instance) -> Hashable:
    """The events waiting on an instance: delayed ones by how long until due, in order, and
    any left queued by a failure."""
    pending: Any = instance._pending
    timed = getattr(pending, "timed", None)
    if not isinstance(timed, list):
        return ()
    clock = instance.clock
    now = clock_ns(clock) if clock is not None else 0  # due times are whole nanoseconds
    return (
        tuple(
            (due - now, fingerprint_of(send_id), fingerprint_of(item))
            for due, _, send_id, item in sorted(timed, key=lambda entry: entry[:2])
        ),
        fingerprint_of(list(pending.external)),
        fingerprint_of(list(pending.internal)),
    )


def _wait_of(instance: Instance) -> float | None:
    """How long until the instance's next delayed event is due (``None``: none waits)."""
    due, clock = instance.next_due(), instance.clock
    if due is None or clock is None or instance.is_terminated:
        return None
    return max(0.0, due - clock.now())


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
    enters = {t.id: _entered_by(chart, t.targets) for t in chart.transitions}
    start, started = run(())
    origin = Path((), started, configuration_of(start))
    to_state: dict[str, Path] = {}
    to_transition: dict[str, Path] = {}

    def reach(path: Path, transitions: Iterable[str], configuration: Iterable[str]) -> None:
        for transition_id in transitions:  # a macrostep may take several
            to_transition.setdefault(transition_id, path)
            for state in enters[transition_id]:
                to_state.setdefault(state, path)
        for state in configuration:
            to_state.setdefault(state, path)

    # creating an instance enters its start configuration, which it may leave at once
    begun = _entered_by(chart, chart.start_configuration or (chart.initial.id,))
    reach(origin, started, [*begun, *origin.configuration])

    def node(instance: Instance, configuration: frozenset[str]) -> Any:
        """What the run's future depends on: the configuration with the history values
        recorded (a hierarchical instance's node key), the model's data, the fields a
        chart's own ``__init__`` set on the instance (C20) and the events waiting."""
        where = getattr(instance._node, "key", configuration)
        fields = getattr(instance, "__dict__", None)
        return (
            where,
            fingerprint(instance.model),
            fingerprint_of(fields) if fields else (),
            _waiting(instance),
        )

    seen = {node(start, origin.configuration)}
    nodes = [origin]
    frontier: deque[tuple[Path, float | None]] = deque([(origin, _wait_of(start))])
    while frontier and (
        len(to_state) < len(all_states) or len(to_transition) < len(all_transitions)
    ):
        path, wait = frontier.popleft()
        if len(path.steps) >= max_depth:
            continue
        for move in moves if wait is None else [*moves, PathStep.wait(wait)]:
            steps = (*path.steps, move)
            try:
                instance, taken = run(steps)
            except Exception:  # the chart refuses the candidate by raising: no move
                continue
            if len(taken) == len(path.transitions) and move.seconds is None:
                continue  # ignored: nothing new can follow from here that the parent lacks
            found = Path(steps, taken, configuration_of(instance))
            reach(found, taken[len(path.transitions) :], found.configuration)
            reached = node(instance, found.configuration)
            if reached not in seen and len(seen) < max_nodes and not instance.is_terminated:
                seen.add(reached)
                frontier.append((found, _wait_of(instance)))
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


def _entered_by(chart: Chart, targets: Iterable[str]) -> list[str]:
    """The states a transition into ``targets`` reaches: the targets and their ancestors (a
    macrostep passing through a compound state reaches it, though it leaves at once; a
    history pseudo-state, never in a configuration, is reached when a transition into it is
    taken)."""
    entered: list[str] = []
    for target in targets:
        state: str | None = target
        while state is not None and state not in entered:
            entered.append(state)
            state = chart.state(state).parent
    return entered


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
            name = "-".join(step.label(False) for step in steps)
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
    raises ``Divergence`` where they disagree (a path that waits needs an adapter with
    ``advance(seconds)``)."""
    runner = ChartRunner(chart, adapter, model)
    try:
        runner.create(key)
        for step in path.steps:
            if step.seconds is None:
                runner.send(key, step.event, step.payload)
            else:
                runner.advance(step.seconds)
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
