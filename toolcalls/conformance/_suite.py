"""The conformance suite of seed 000: the tool call chart's derived stateful test and its
transition-covering paths, run against any implementation beside this package's tracker.

Every event goes to both; after every event the implementation's ``list()`` must equal the
tracker's, in start order. Two calls are equal when their keys and values are (numbers by
value, ``true`` never equal to ``1``), except that for a call whose arguments failed to parse
only the presence of ``error`` counts, not its content: implementations word it differently.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule, run_state_machine_as_test

from statecharts import Coverage, compile_chart
from statecharts.testing import (
    ChartRunner,
    Divergence,
    Path,
    PathStep,
    chart_machine,
    record_coverage,
    shortest_paths,
    transition_cover,
)

from .._chart import ToolCallChart
from .._errors import ImplementationFailed, InvalidEvent, ProtocolError
from .._record import ToolCallModel
from .._tracker import CHART_EVENTS, ToolCallTracker
from ._protocol import Implementation

CHART = compile_chart(ToolCallChart)
#: The wire type of each chart event (the chart calls the wire's ``error`` ``fail``, T24).
WIRE_TYPES = {chart: wire for wire, chart in CHART_EVENTS.items()}
#: What replaces the content of a parse failure's ``error`` on both sides of a comparison.
ANY_ERROR = "<any error: the arguments did not parse>"
TOOL_NAME = "search"

# Values both JSON.parse and Python read alike: no floats (their text can overflow when
# fragments concatenate), integers within a double's exact range, text without surrogates.
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.text(max_size=6)
)
json_values: st.SearchStrategy[Any] = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
#: Fragments that keep the text around one whole value valid, and ones that break it.
HARMLESS = [" ", "\n", "", "\t"]
BREAKING = ['{"q": ', "}", "[", ",", "NaN", "Infinity", "'x'", '"']
#: Results and errors also hold floats (nothing concatenates them) and null.
result_values: st.SearchStrategy[Any] = st.recursive(
    _scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_whole = json_values.map(lambda value: json.dumps(value, ensure_ascii=False))
fragments = st.one_of(_whole, _whole, st.sampled_from(HARMLESS + BREAKING))
PAYLOADS: dict[str, st.SearchStrategy[Mapping[str, Any]]] = {
    "delta": st.fixed_dictionaries({"text": fragments}),
    "result": st.fixed_dictionaries({"value": result_values}),
    "fail": st.fixed_dictionaries({"value": result_values}),
}
#: Payloads the paths try: arguments that parse and that do not, a null and a nested result.
CANDIDATES: dict[str, list[dict[str, Any]]] = {
    "delta": [
        {"text": '{"q": "hi", "n": [1, -2.5, true, null]}'},
        {"text": "NaN"},
        {"text": '{"a": 1, "a": 2}'},
    ],
    "result": [{"value": None}, {"value": {"n": [1, "x"]}}, {"value": 0.5}],
    "fail": [{"value": "boom"}, {"value": None}],
}


CANDIDATES_FOR_ALL: dict[str, list[dict[str, Any]]] = {"ready": [{}], **CANDIDATES}


#: The wire id of each key: ids that differ only in case, so routing must respect it.
WIRE_IDS = ("call_a", "call_A", "call_b", "call_B", "call_c")


def wire_id(key: str) -> str:
    """The id the implementation sees for the runner's key ``k0``, ``k1``..."""
    index = int(key[1:]) if key[1:].isdigit() else -1
    return WIRE_IDS[index] if 0 <= index < len(WIRE_IDS) else key


def _record(key: str) -> ToolCallModel:
    return ToolCallModel(key, TOOL_NAME, 0)


def _paths() -> list[Path]:
    """The transition cover, and each of its paths again with every other candidate payload
    in one step (so text that must not parse and a non-null result are tried
    deterministically too)."""
    paths = transition_cover(CHART, CANDIDATES, model=_record)
    seen = [path.steps for path in paths]
    for path in list(paths):
        for index, step in enumerate(path.steps):
            for payload in CANDIDATES.get(step.event, []):
                steps = (
                    *path.steps[:index],
                    PathStep(step.event, payload),
                    *path.steps[index + 1 :],
                )
                if steps not in seen:
                    seen.append(steps)
                    name = "-".join(item.label(bool(item.payload)) for item in steps)
                    paths.append(Path(steps, (), frozenset(), name))
    return paths


PATHS: list[Path] = _paths()


def same(expected: Any, actual: Any) -> bool:
    """JSON equality: objects by keys, arrays in order, numbers by value, booleans strictly."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        if isinstance(expected, float) or isinstance(actual, float):
            return float(expected) == float(actual)
        return expected == actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            same(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            same(a, b) for a, b in zip(expected, actual, strict=True)
        )
    return type(expected) is type(actual) and expected == actual


def _mask(call: Any, parse_failed: set[str]) -> Any:
    if isinstance(call, dict) and call.get("id") in parse_failed and "error" in call:
        return {**call, "error": ANY_ERROR}
    return call


@dataclass
class Counts:
    """What a run did, for the summary."""

    sequences: int = 0
    events: int = 0
    paths: int = 0
    #: The first protocol error met, kept so it is reported even if Hypothesis wraps it.
    protocol_error: ProtocolError | None = None
    coverage: Coverage = field(default_factory=Coverage)


class SeedAdapter:
    """The implementation as the SUT of ``ToolCallChart`` (one call per key), with this
    package's ``ToolCallTracker`` fed the same events as the oracle for values."""

    def __init__(self, implementation: Implementation, counts: Counts) -> None:
        self.implementation = implementation
        self.counts = counts
        self.reference = ToolCallTracker()
        self.events: list[dict[str, Any]] = []
        self.parse_failed: set[str] = set()
        self.listing: list[dict[str, Any]] = []
        self.runner: ChartRunner | None = None
        counts.sequences += 1
        self.call(implementation.reset)

    def call(self, operation: Callable[..., Any], *args: Any) -> Any:
        """Call the implementation, remembering a protocol error for ``check`` to report."""
        try:
            return operation(*args)
        except ProtocolError as error:
            if self.counts.protocol_error is None:
                self.counts.protocol_error = error
            raise

    def fail(self, problem: str, expected: Any, actual: Any) -> None:
        assert self.runner is not None
        self.runner.fail(problem, expected, actual)

    def apply(self, event: dict[str, Any]) -> None:
        """Send one wire event to both sides and read the implementation's list back."""
        self.events.append(event)
        self.counts.events += 1
        try:
            outcome = self.reference.apply(event)
        except InvalidEvent:  # a type the seed does not have: nothing changes
            outcome = None
        if (
            event["type"] == "ready"
            and outcome is not None
            and outcome.applied
            and outcome.status == "error"
        ):
            self.parse_failed.add(event["id"])
        try:
            self.call(self.implementation.apply, event)
        except ImplementationFailed as error:
            # Refusing a type the seed does not have is fine; changing anything is not.
            if outcome is not None:
                self.fail("the implementation failed", "success", str(error))
        try:
            self.listing = self.call(self.implementation.list)
        except ImplementationFailed as error:
            self.fail("the implementation failed", "success", str(error))

    def create(self, key: str) -> None:
        self.apply({"type": "start", "id": wire_id(key), "name": TOOL_NAME})

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None:
        # An event the chart does not declare goes out as a type the seed does not have: an
        # implementation must ignore it, as the oracle does.
        wire: dict[str, Any] = {"type": WIRE_TYPES.get(event, event), "id": wire_id(key)}
        if event == "delta":
            wire["argsTextDelta"] = payload["text"]
        elif event == "result":
            wire["result"] = payload["value"]
        elif event == "fail":
            wire["error"] = payload["value"]
        self.apply(wire)
        return None  # the seed's apply returns nothing

    def configuration(self, key: str) -> set[str]:
        for call in self.listing:
            if call.get("id") == wire_id(key):
                status = call.get("status")
                return {status if isinstance(status, str) else repr(status)}
        return set()

    def expected_list(self) -> list[Any]:
        return [_mask(call.to_dict(), self.parse_failed) for call in self.reference.list()]

    def check_list(self) -> None:
        expected = self.expected_list()
        actual = [_mask(call, self.parse_failed) for call in self.listing]
        if not same(expected, actual):
            self.fail("list() differs", expected, actual)

    def check_get(self, call_id: str) -> None:
        found = self.reference.get(call_id)
        expected = None if found is None else _mask(found.to_dict(), self.parse_failed)
        try:
            actual = _mask(self.call(self.implementation.get, call_id), self.parse_failed)
        except ImplementationFailed as error:
            self.fail(f"get({call_id!r}) failed", expected, str(error))
        if not same(expected, actual):
            self.fail(f"get({call_id!r}) differs", expected, actual)

    def transcript(self) -> list[dict[str, Any]]:
        return list(self.events)

    def close(self) -> None:
        pass


def machine_for(implementation: Implementation, counts: Counts) -> Any:
    """The derived machine of ``ToolCallChart`` against ``implementation``, plus rules for
    what the chart does not say: duplicate starts, unknown ids, ``get``."""

    def adapter() -> SeedAdapter:
        return SeedAdapter(implementation, counts)

    derived = chart_machine(
        CHART,
        adapter,
        payloads=PAYLOADS,
        model=_record,
        max_instances=len(WIRE_IDS),
        paths=PATHS,
        name="SeedConformance",
    )

    class SeedConformance(derived):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.adapter: SeedAdapter = self.runner.adapter
            self.adapter.runner = self.runner

        @rule(key=derived.keys)
        def duplicate_start(self, key: str) -> None:
            self.adapter.apply({"type": "start", "id": wire_id(key), "name": "again"})

        @rule(kind=st.sampled_from(["delta", "ready", "result", "error"]))
        def unknown_id(self, kind: str) -> None:
            event: dict[str, Any] = {"type": kind, "id": "ghost"}
            if kind == "delta":
                event["argsTextDelta"] = "{}"
            elif kind == "result":
                event["result"] = 1
            elif kind == "error":
                event["error"] = "boom"
            self.adapter.apply(event)

        @rule(key=derived.keys | st.just("ghost"))
        def get(self, key: str) -> None:
            self.adapter.check_get(wire_id(key))

        @invariant()
        def list_equals_the_reference(self) -> None:
            self.adapter.check_list()

    return SeedConformance


@dataclass
class Report:
    """The outcome of a conformance run."""

    counts: Counts
    seconds: float
    divergence: Divergence | None = None

    @property
    def transitions_taken(self) -> tuple[int, int]:
        taken = self.counts.coverage.chart(CHART).taken
        return sum(1 for t in CHART.transitions if taken.get(t.id)), len(CHART.transitions)


def path_runs() -> list[tuple[PathStep, ...]]:
    """Each path, then the shortest path to each state followed by each candidate event: every
    (state, event) pair once, ignored ones included (a final state absorbs, a result while
    pending is too early...)."""
    runs: list[tuple[PathStep, ...]] = [path.steps for path in PATHS]
    for path in shortest_paths(CHART, CANDIDATES, model=_record).values():
        for event, payloads in CANDIDATES_FOR_ALL.items():
            for payload in payloads:
                steps = (*path.steps, PathStep(event, payload))
                if steps not in runs:
                    runs.append(steps)
    return runs


def run_paths(implementation: Implementation, counts: Counts) -> Iterator[tuple[PathStep, ...]]:
    """Run each of ``path_runs`` on a fresh implementation, checking after every event; yields
    each run that passed (a divergence raises)."""
    for steps in path_runs():
        adapter = SeedAdapter(implementation, counts)
        runner = ChartRunner(CHART, adapter, _record)
        adapter.runner = runner
        key = runner.create()
        for step in steps:
            runner.send(key, step.event, step.payload)
            adapter.check_list()
        counts.paths += 1
        yield steps


def check(
    implementation: Implementation,
    *,
    examples: int = 1000,
    steps: int = 20,
    randomize: bool = False,
    shrink: bool = True,
    progress: Callable[[Counts], None] | None = None,
) -> Report:
    """Run the paths, then ``examples`` generated sequences of up to ``steps`` rules, against
    ``implementation`` (the same sequences every run unless ``randomize``). Returns a report
    whose ``divergence`` holds the counterexample, if any, shrunk unless ``shrink`` is false
    (when only whether matters: mutation testing). ``ProtocolError`` (a broken
    protocol) propagates."""
    counts = Counts()
    started = time.perf_counter()
    with record_coverage(counts.coverage):
        try:
            for _ in run_paths(implementation, counts):
                if progress is not None:
                    progress(counts)
            machine = machine_for(implementation, counts)
            if progress is not None:
                original = machine.__init__

                def init(self: Any) -> None:
                    original(self)
                    progress(counts)

                machine.__init__ = init
            options = settings(
                max_examples=examples,
                stateful_step_count=steps,
                deadline=None,
                database=None,
                derandomize=not randomize,
                report_multiple_bugs=False,
                verbosity=Verbosity.quiet,
                suppress_health_check=list(HealthCheck),
                phases=[phase for phase in Phase if shrink or phase is not Phase.shrink],
            )
            run_state_machine_as_test(machine, settings=options)
        except Divergence as divergence:
            if counts.protocol_error is not None:
                raise counts.protocol_error from None
            return Report(counts, time.perf_counter() - started, divergence)
        except Exception:
            if counts.protocol_error is not None:
                raise counts.protocol_error from None
            raise
    return Report(counts, time.perf_counter() - started)
