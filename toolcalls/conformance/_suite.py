"""The conformance suite of seed 000: the tool call chart's derived stateful test and its
transition-covering paths, run against any implementation beside an independent model.

Every event goes to both the implementation and ``SeedModel`` (a plain model of section T that
shares no code with this package's tracker); after every event the implementation's
``list()`` must equal the model's, in start order, each call's status must be the state the
chart's own instance is in, and where the implementation reports what ``apply`` did (an
in-process object whose ``apply`` returns an outcome with ``applied``, ``reason``,
``status``), that must be what the model says too. Two calls are equal when their keys and
values are (numbers by value, ``true`` never equal to ``1``, integers beyond 2**53 as the
doubles ``JSON.parse`` rounds them to), except that for a call whose arguments failed to parse
the content of ``error`` is the implementation's own wording; it must be there, and it must
not change afterwards. ``check(..., errors="T8")`` holds an implementation to T8's exact
``error`` (this package's tracker) and compares integers exactly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

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
from .._errors import ImplementationFailed, ProtocolError
from .._record import ToolCallModel
from ._model import Effect, SeedModel
from ._protocol import Implementation

CHART = compile_chart(ToolCallChart)
#: The wire type of each chart event (the chart calls the wire's ``error`` ``fail``, T24).
WIRE_TYPES = {"delta": "delta", "ready": "ready", "result": "result", "fail": "error"}
#: What replaces the content of a parse failure's ``error`` on both sides of a comparison.
ANY_ERROR = "<any error: the arguments did not parse>"
TOOL_NAME = "search"
#: The tool name each call starts with, by key: names differ in case and hold punctuation and
#: non-ASCII letters, so an implementation must keep a name exactly as sent.
TOOL_NAMES = ("search", "Search", "web.fetch-URL", "SEARCH", "ask_Gémini")
#: Integers beyond this compare as the doubles JSON.parse reads them as (T13).
EXACT_INTEGERS = 2**53
Errors = Literal["any", "T8"]

#: Strings with lone surrogate halves: a JavaScript string may hold them, and a stream split
#: in UTF-16 code units sends a pair's halves in two fragments (T27).
_lone_surrogates = st.sampled_from(["\ud83d", "\ude00", "a\ud800", "\udfff"])
#: Names a JavaScript object already has: as call ids and as keys of arguments, results and
#: errors, they must be kept like any other (``out[key] = ...`` on a plain object loses
#: ``__proto__``).
OBJECT_NAMES = ("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf")
#: Numbers as T13 reads them: integers beyond 2**53 (kept exact here, rounded by JSON.parse),
#: any finite float, tiny ones that round to 0.
_numbers = (
    st.integers(min_value=-(2**53), max_value=2**53)
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.sampled_from([2**53 + 1, -(2**63), 10**308])
    | st.floats(allow_nan=False, allow_infinity=False)
)
#: In argument text also integers beyond a double's range, which fail to parse (T13).
_argument_numbers = _numbers | st.sampled_from([2**1024, -(3 * 2**1023)])


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=4) | _lone_surrogates | st.sampled_from(OBJECT_NAMES), inner, max_size=3
    )


def _values(numbers: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | numbers | st.text(max_size=6) | _lone_surrogates
    return st.recursive(scalars, _containers, max_leaves=6)


#: Values whose JSON text the deltas carry.
json_values: st.SearchStrategy[Any] = _values(_argument_numbers)
#: Results and errors: any JSON value a double can hold (nothing parses them, but a
#: JavaScript implementation reads them with JSON.parse).
result_values: st.SearchStrategy[Any] = _values(_numbers)
#: Fragments that keep the text around one whole value valid, and ones that break it.
#: JSON's four whitespace characters (a carriage return too, raw: an implementation must keep
#: argument text exactly as sent, not read it with universal newlines).
HARMLESS = [" ", "\n", "", "\t", "\r", "\r\n"]
BREAKING = [
    '{"q": ',
    "}",
    "[",
    ",",
    "NaN",
    "Infinity",
    "-Infinity",
    "'x'",
    '"',
    "\ufeff",
    # whitespace to Python's str.strip() and to Unicode, not to JSON.parse (T13): a no-break
    # space, a form feed, a vertical tab, a line separator, an ideographic space, NEL
    "\u00a0",
    "\f",
    "\v",
    "\u2028",
    "\u3000",
    "\x85",
    # a surrogate pair split across two fragments, as a server splitting UTF-16 sends it (T27)
    '"\ud83d',
    '\ude00"',
]
#: Number text as T13 reads it: beyond a double (fails), beyond 2**53 (parses), a float that
#: becomes out of range when the next fragment appends a digit, underflow to 0, minus zero.
NUMBER_TEXT = [
    "1e400",
    "-1e400",
    "1" + "0" * 309,
    "9007199254740993",
    "1e308",
    "0",
    "1e-400",
    "-0",
    "-0.0",
    "1.7976931348623157e308",
]
_whole = json_values.flatmap(
    lambda value: st.sampled_from(
        [json.dumps(value, ensure_ascii=False), json.dumps(value, ensure_ascii=True)]
    )
)
fragments = st.one_of(_whole, _whole, st.sampled_from(HARMLESS + BREAKING + NUMBER_TEXT))
#: ``result`` and ``error`` events sometimes leave their value out (T26).
_value_or_none = st.fixed_dictionaries({}, optional={"value": result_values})
PAYLOADS: dict[str, st.SearchStrategy[Mapping[str, Any]]] = {
    "delta": st.fixed_dictionaries({"text": fragments}),
    "result": _value_or_none,
    "fail": _value_or_none,
}
#: Payloads the paths try: arguments that parse and that do not (numbers too), results and
#: errors that are falsy, nested, or left out.
CANDIDATES: dict[str, list[dict[str, Any]]] = {
    "delta": [
        {"text": '{"q": "hi", "n": [1, -2.5, true, null]}'},
        {"text": "NaN"},
        {"text": '{"a": 1, "a": 2}'},
        {"text": " "},
        # what forgiving parsers accept and JSON does not: trailing commas, raw control
        # characters inside a string
        {"text": "[1,]"},
        {"text": '{"q": 1,}'},
        {"text": '"a\nb"'},
        {"text": '["\t"]'},
        {"text": "\ufeff{}"},
        {"text": '{"n": "NaN", "v": NaN}'},
        {"text": '["\ud83d\\ude00", {"\ud83d\\ude00": 1}]'},
        {"text": "[1e400]"},
        # numbers beyond a double whose text is 20, 21 and 310 characters (T8 shortens it)
        {"text": "[1000000000000000e400]"},
        {"text": "[10000000000000000e400]"},
        {"text": "1" + "0" * 309},
        # long text full of integers (at 308 characters the tracker checks each one)
        {"text": "[" + "12345678, " * 32 + "9007199254740993, " + "9" * 308 + "]"},
        {"text": '{"big": 9007199254740993, "tiny": 1e-400, "s": "\\ud83d\\ude00"}'},
        # keys a JavaScript object already has (a hand-written copy drops __proto__)
        {"text": '{"__proto__": {"x": 1}, "constructor": [2], "toString": "s"}'},
        # raw carriage returns are JSON whitespace and stay in argsText as sent; a no-break
        # space and a line separator are not JSON whitespace (str.strip() would take them)
        {"text": '\r\n{"q": "a\\rb"}\r'},
        {"text": '\u00a0{"q": 1}\u2028'},
        # nested deeper than many parsers allow (serde_json: 128) but within T13's 256 levels
        {"text": "[" * 200 + "]" * 200},
        {"text": '{"a": ' * 180 + "[" * 76 + "0" + "]" * 76 + "}" * 180},
    ],
    "result": [  # the first is what the path search takes: nested, so a copy one level deep
        {"value": {"n": [1, "x"]}},  # shares with the caller (T16)
        {"value": None},
        {"value": 0.5},
        {"value": ""},
        {"value": 0},
        {"value": False},
        {"value": []},
        {"value": {"__proto__": [1], "constructor": {"toString": 0}}},
        {},
    ],
    "fail": [
        {"value": {"reason": ["boom"]}},
        {"value": "boom"},
        {"value": None},
        {"value": ""},
        {"value": {}},
        {"value": {"__proto__": "x"}},
        {},
    ],
}


CANDIDATES_FOR_ALL: dict[str, list[dict[str, Any]]] = {"ready": [{}], **CANDIDATES}
#: The payloads the path search runs the chart with: one argument text that parses and one
#: that does not reach every state and transition; the other candidates are tried on the
#: paths found (searching with all of them costs seconds and finds nothing more).
SEARCH: dict[str, list[dict[str, Any]]] = {
    "delta": CANDIDATES["delta"][:2],
    "result": CANDIDATES["result"][:1],
    "fail": CANDIDATES["fail"][:1],
}


#: The wire id of each key: ids that differ only in case, so routing must respect it.
WIRE_IDS = ("call_a", "call_A", "call_b", "call_B", "call_c")
#: The ids of the crowd run's calls beyond those: names a JavaScript object already has.
CROWD_IDS = OBJECT_NAMES
#: Ids no call ever has, the last three each a started call's id in other letter case: an event
#: or ``get`` for one must not reach that call (ids are compared exactly, never folded).
STRANGERS = ("ghost", "CALL_A", "Call_b", "call_C")
#: Event types the seed does not have that differ from its own only in letter case: an
#: implementation must not act on them (nor on any other type it does not know).
FOLDED_TYPES = ("START", "Delta", "READY", "Result", "ERROR")


def wire_id(key: str) -> str:
    """The id the implementation sees for the runner's key ``k0``, ``k1``..."""
    index = int(key[1:]) if key[1:].isdigit() else -1
    ids = WIRE_IDS + CROWD_IDS
    return ids[index] if 0 <= index < len(ids) else key


def tool_name(key: str) -> str:
    """The tool name the call of the runner's key ``k0``, ``k1``... starts with."""
    index = int(key[1:]) if key[1:].isdigit() else -1
    return TOOL_NAMES[index] if 0 <= index < len(TOOL_NAMES) else TOOL_NAME


def _record(key: str) -> ToolCallModel:
    return ToolCallModel(key, tool_name(key), 0)


def _paths() -> list[Path]:
    """The transition cover, and each of its paths again with every other candidate payload
    in one step (so text that must not parse and a non-null result are tried
    deterministically too)."""
    paths = list(_COVER)
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


_COVER: tuple[Path, ...] = tuple(transition_cover(CHART, SEARCH, model=_record))
_SHORTEST: tuple[Path, ...] = tuple(shortest_paths(CHART, SEARCH, model=_record).values())
PATHS: list[Path] = _paths()


def _as_double(number: int | float) -> float | None:
    try:
        return float(number)
    except OverflowError:
        return None


def same(expected: Any, actual: Any, *, exact: bool = False) -> bool:
    """JSON equality: objects by keys, arrays in order, numbers by value, booleans strictly.
    Unless ``exact``, an integer beyond 2**53 also equals the double JSON.parse rounds it to
    (T13: this package keeps such integers exact, JavaScript cannot)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        if expected == actual:
            return True
        if isinstance(expected, float) or isinstance(actual, float) or not exact:
            big = abs(expected) > EXACT_INTEGERS or abs(actual) > EXACT_INTEGERS
            if isinstance(expected, int) and isinstance(actual, int) and exact:
                return False
            if big or isinstance(expected, float) or isinstance(actual, float):
                double = _as_double(expected)
                return double is not None and double == _as_double(actual)
        return False
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            same(value, actual[key], exact=exact) for key, value in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            same(a, b, exact=exact) for a, b in zip(expected, actual, strict=True)
        )
    return type(expected) is type(actual) and expected == actual


@dataclass
class Counts:
    """What a run did, for the summary."""

    sequences: int = 0
    events: int = 0
    paths: int = 0
    #: The first protocol error met, kept so it is reported even if Hypothesis wraps it.
    protocol_error: ProtocolError | None = None
    #: The first divergence met, kept so it is reported even if it does not replay.
    divergence: Divergence | None = None
    coverage: Coverage = field(default_factory=Coverage)

    def saw(self, divergence: Divergence) -> None:
        if self.divergence is None:
            self.divergence = divergence


class SeedAdapter:
    """The implementation as the SUT of ``ToolCallChart`` (one call per key), with
    ``SeedModel`` fed the same events as the oracle for values."""

    def __init__(
        self, implementation: Implementation, counts: Counts, errors: Errors = "any"
    ) -> None:
        self.implementation = implementation
        self.counts = counts
        self.exact = errors == "T8"
        self.model = SeedModel()
        self.events: list[dict[str, Any]] = []
        #: The error each call whose arguments did not parse showed first (it must keep it).
        self.parse_errors: dict[str, Any] = {}
        self.listing: list[dict[str, Any]] = []
        self.runner: ChartRunner | None = None
        counts.sequences += 1
        self.call(implementation.reset)
        try:
            self.leftover: Any = self.call(implementation.list)
        except ImplementationFailed as error:
            self.leftover = f"list() failed: {error}"

    def attach(self, runner: ChartRunner) -> None:
        self.runner = runner
        runner.on_divergence = self.counts.saw
        if self.leftover != []:  # an earlier sequence's calls would be blamed on this one
            self.fail("list() is not empty after reset (calls survived it)", [], self.leftover)

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

    def apply(self, event: dict[str, Any]) -> bool | None:
        """Send one wire event to both sides and read the implementation's list back; return
        whether the implementation says it applied the event (``None``: it does not say)."""
        self.events.append(event)
        self.counts.events += 1
        effect = self.model.apply(event)
        try:
            reported = self.call(self.implementation.apply, event)
        except ImplementationFailed as error:
            # Refusing a type the seed does not have is fine; changing anything is not.
            if effect is not None:
                self.fail("the implementation failed", "success", str(error))
            reported = None
        try:
            self.listing = self.call(self.implementation.list)
        except ImplementationFailed as error:
            self.fail("the implementation failed", "success", str(error))
        if effect is not None and isinstance(reported, Mapping):
            self.check_effect(event, effect, reported)
        self.check_list()
        return None if not isinstance(reported, Mapping) else bool(reported.get("applied"))

    def check_effect(
        self, event: Mapping[str, Any], effect: Effect, reported: Mapping[str, Any]
    ) -> None:
        """What ``apply`` reported against the model: applied, and the reason and status if
        the implementation gives them."""
        expected = {"applied": effect.applied, "reason": effect.reason, "status": effect.status}
        shown = {key: reported[key] for key in expected if key in reported}
        if shown != {key: expected[key] for key in shown}:
            self.fail(f"apply({event['type']}) reported otherwise", expected, shown)

    def create(self, key: str) -> None:
        self.apply({"type": "start", "id": wire_id(key), "name": tool_name(key)})

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None:
        # An event the chart does not declare goes out as a type the seed does not have: an
        # implementation must ignore it, as the model does.
        wire: dict[str, Any] = {"type": WIRE_TYPES.get(event, event), "id": wire_id(key)}
        if event == "delta":
            wire["argsTextDelta"] = payload["text"]
        elif event == "result" and "value" in payload:
            wire["result"] = payload["value"]
        elif event == "fail" and "value" in payload:
            wire["error"] = payload["value"]
        return self.apply(wire)

    def configuration(self, key: str) -> set[str]:
        for call in self.listing:
            if call.get("id") == wire_id(key):
                status = call.get("status")
                return {status if isinstance(status, str) else repr(status)}
        return set()

    def comparable(self, call: Any) -> Any:
        """An implementation's call as compared: the wording of a parse failure's ``error``
        masked (unless held to T8), after checking it has not changed since first shown."""
        if self.exact or not isinstance(call, dict) or "error" not in call:
            return call
        call_id = call.get("id")
        if not isinstance(call_id, str) or not self.model.parse_failed(call_id):
            return call
        first = self.parse_errors.setdefault(call_id, call["error"])
        if not same(first, call["error"]):
            self.fail(
                f"{call_id}: the error of a call whose arguments did not parse changed (final)",
                first,
                call["error"],
            )
        return {**call, "error": ANY_ERROR}

    def expected(self, call: dict[str, Any] | None) -> Any:
        if call is None or self.exact or not self.model.parse_failed(call["id"]):
            return call
        return {**call, "error": ANY_ERROR} if "error" in call else call

    def check_list(self) -> None:
        expected = [self.expected(call) for call in self.model.list()]
        actual = [self.comparable(call) for call in self.listing]
        if not same(expected, actual, exact=self.exact):
            self.fail("list() differs", expected, actual)

    def check_get(self, call_id: str) -> None:
        expected = self.expected(self.model.get(call_id))
        try:
            actual = self.comparable(self.call(self.implementation.get, call_id))
        except ImplementationFailed as error:
            self.fail(f"get({call_id!r}) failed", expected, str(error))
        if not same(expected, actual, exact=self.exact):
            self.fail(f"get({call_id!r}) differs", expected, actual)

    def transcript(self) -> list[dict[str, Any]]:
        return list(self.events)

    def close(self) -> None:
        pass


def wire_event(kind: str, call_id: str) -> dict[str, Any]:
    """An event of type ``kind`` (the seed's or not) for ``call_id``, with every field any of
    the seed's types carries, so it would act if its type were read as one of them."""
    return {
        "type": kind,
        "id": call_id,
        "name": "again",
        "argsTextDelta": "]",
        "result": 1,
        "error": "boom",
    }


def machine_for(implementation: Implementation, counts: Counts, errors: Errors = "any") -> Any:
    """The derived machine of ``ToolCallChart`` against ``implementation``, plus rules for
    what the chart does not say: duplicate starts, unknown ids, ``get``."""

    def adapter() -> SeedAdapter:
        return SeedAdapter(implementation, counts, errors)

    derived = chart_machine(
        CHART,
        adapter,
        payloads=PAYLOADS,
        model=_record,
        max_instances=len(WIRE_IDS),  # the crowd run (``run_crowd``) starts more
        paths=PATHS,
        name="SeedConformance",
    )

    class SeedConformance(derived):  # type: ignore[misc,valid-type]
        # Replays would each reset the implementation (another process, maybe) and count as
        # sequences; Hypothesis's shrinking and the transcript report the run instead.
        minimize_steps = False

        def __init__(self) -> None:
            super().__init__()
            self.adapter: SeedAdapter = self.runner.adapter
            self.adapter.attach(self.runner)

        @rule(key=derived.keys)
        def duplicate_start(self, key: str) -> None:
            self.adapter.apply({"type": "start", "id": wire_id(key), "name": "again"})

        @rule(
            kind=st.sampled_from(["delta", "ready", "result", "error"]),
            stranger=st.sampled_from(STRANGERS),
        )
        def unknown_id(self, kind: str, stranger: str) -> None:
            self.adapter.apply(wire_event(kind, stranger))

        @rule(key=derived.keys, kind=st.sampled_from(FOLDED_TYPES))
        def case_folded_type(self, key: str, kind: str) -> None:
            self.adapter.apply(wire_event(kind, wire_id(key)))

        @rule(key=derived.keys | st.sampled_from(STRANGERS))
        def get(self, key: str) -> None:
            self.adapter.check_get(wire_id(key))

        @invariant()
        def list_equals_the_model(self) -> None:
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


#: Argument text in several fragments, each list one call's deltas before ``ready``: the second
#: must append to the first, and a surrogate pair split between two fragments (T27) is one
#: character, in a string, a key, a nested string or outside any string; halves that are not
#: a pair stay lone, and a pair escaped in the JSON text is one character in ``args`` too.
FRAGMENTED: tuple[tuple[str, ...], ...] = (
    ('{"q": ', "1}"),
    ('{"q": "' + "x" * 4090, "y" * 2000 + '"}'),  # past 4 KiB: nothing caps argument text
    ('["\ud83d', '\ude00"]'),
    ('{"\ud83d', '\ude00": ["x\ud83d', '\ude00"]}'),
    ('[{"k\ud83d', '\ude00": "\ud83d', '\ude00"}]'),
    ('["\ud83d"', ', "\ude00"]'),
    ('["\ude00', '\ud83d"]'),
    ('"\ud83d\ude00"',),
    ("\ud83d", "\ude00"),
    ('[{"\\ud83d\\ude00": ["\\ud83d\\ude00", {"\\ud83d": "\\ude00"}]}]',),
)
#: Nesting around this package's limit (T13: deeper than 256 levels does not parse), with
#: arrays, objects, both, and brackets inside a string; only ``errors="T8"`` holds an
#: implementation to the limit (JSON.parse has none) and to T8's exact error and position.
NESTED: tuple[str, ...] = (
    "[" * 256 + "]" * 256,
    "[" * 257 + "]" * 257,
    '{"a": ' * 256 + "0" + "}" * 256,
    '{"a": ' * 257 + "0" + "}" * 257,
    '{"a": ' * 200 + "[" * 56 + "0" + "]" * 56 + "}" * 200,
    '{"a": ' * 200 + "[" * 57 + "0" + "]" * 57 + "}" * 200,
    '["' + "[" * 300 + '"]',
    "[" + "[], " * 300 + "[]]",
    "[" * 300,
    # where a string literal ends decides what counts: an escaped quote, an escape right before
    # the closing quote, a backslash outside any string; and an integer too long for a double
    '["\\"' + "[" * 300 + '"]',
    '["\\n", ' + "[" * 256 + "]" * 256 + "]",
    "\\" + "[" * 257 + "]" * 257,
    '["\\"NaN", NaN]',
    "9" * 311,
)


def _attached(
    implementation: Implementation, counts: Counts, errors: Errors
) -> tuple[SeedAdapter, ChartRunner]:
    """A fresh (reset) implementation as the system under test of a runner of the chart; the
    attaching raises ``Divergence`` when calls survived the reset."""
    adapter = SeedAdapter(implementation, counts, errors)
    runner = ChartRunner(CHART, adapter, _record)
    adapter.attach(runner)
    return adapter, runner


def path_runs(errors: Errors = "any") -> list[tuple[PathStep, ...]]:
    """Each path, then the shortest path to each state and each transition-covering path,
    followed by each candidate event: every (state, event) pair, and every event after every
    transition, ignored ones included (a final state absorbs, a result while pending is too
    early, an error after a parse failure changes nothing...). Then arguments in several
    fragments (``FRAGMENTED``) and, held to T8, nested around the limit (``NESTED``)."""
    runs: list[tuple[PathStep, ...]] = [path.steps for path in PATHS]
    ends = [*_SHORTEST, *_COVER]
    for path in ends:
        for event, payloads in CANDIDATES_FOR_ALL.items():
            for payload in payloads:
                steps = (*path.steps, PathStep(event, payload))
                if steps not in runs:
                    runs.append(steps)
    texts = [*FRAGMENTED, *((text,) for text in NESTED)] if errors == "T8" else FRAGMENTED
    for fragments in texts:
        deltas = tuple(PathStep("delta", {"text": fragment}) for fragment in fragments)
        runs.append((*deltas, PathStep("ready", {})))
    return runs


def run_paths(
    implementation: Implementation, counts: Counts, errors: Errors = "any"
) -> Iterator[tuple[PathStep, ...]]:
    """Run each of ``path_runs`` on a fresh implementation, checking after every event (and
    ``get`` of the call at the end); yields each run that passed (a divergence raises)."""
    for steps in path_runs(errors):
        adapter, runner = _attached(implementation, counts, errors)
        key = runner.create()
        for step in steps:
            runner.send(key, step.event, step.payload)
        adapter.check_get(wire_id(key))
        counts.paths += 1
        yield steps


def run_crowd(implementation: Implementation, counts: Counts, errors: Errors = "any") -> None:
    """Ten calls at once, five of them with ids a JavaScript object already has
    (``__proto__``...): each started, given arguments, ended, and read back with ``get``;
    meanwhile every event for ids that differ from theirs only in letter case, and events
    whose types differ from the seed's only in letter case, none of which may act.
    It runs after the generated sequences, whose shrunk counterexample is the better report
    when they find a divergence too."""
    adapter, runner = _attached(implementation, counts, errors)
    keys = [runner.create() for _ in WIRE_IDS + CROWD_IDS]
    for number, key in enumerate(keys):
        runner.send(key, "delta", {"text": f'{{"n": {number}}}'})
    for stranger in STRANGERS:  # ids in other letter case reach no call
        for kind in ("delta", "ready", "result", "error"):
            adapter.apply(wire_event(kind, stranger))
        adapter.check_get(stranger)
    for kind in FOLDED_TYPES:  # nor do types in other letter case act
        adapter.apply(wire_event(kind, wire_id(keys[0])))
    for key in keys:
        runner.send(key, "ready", {})
    for number, key in enumerate(keys):
        runner.send(key, "result" if number % 2 else "fail", {"value": number})
    for key in keys:
        adapter.check_get(wire_id(key))
    counts.paths += 1


def _diverges(
    implementation: Implementation, events: list[dict[str, Any]], errors: Errors
) -> Divergence | None:
    """Send ``events`` alone to a fresh implementation beside a fresh model, checking after
    each as the suite does; the divergence they cause, if any."""
    try:
        adapter, _ = _attached(implementation, Counts(), errors)  # calls left after reset diverge
        for event in events:
            adapter.apply(dict(event))
    except Divergence as divergence:
        return divergence
    return None


def fewest_events(
    implementation: Implementation, divergence: Divergence, errors: Errors = "any"
) -> Divergence:
    """The divergence with its events cut to a minimal sequence that still shows the same
    problem: each event is left out in turn while the rest still diverge (Hypothesis shrinks
    by rules and draws, and can keep events, duplicate starts say, that the divergence does
    not need). A divergence the events alone do not show (one a ``get`` found) is kept."""
    events = [dict(event) for event in divergence.transcript]
    found = _diverges(implementation, events, errors)
    if found is None or found.problem != divergence.problem:
        return divergence
    cut = True
    while cut:  # until no single event can go
        cut = False
        index = len(events) - 1  # the later events first: a run keeps its first start of an id
        while index >= 0:
            fewer = events[:index] + events[index + 1 :]
            shorter = _diverges(implementation, fewer, errors)
            if shorter is not None and shorter.problem == divergence.problem:
                events, found, cut = fewer, shorter, True
            index = min(index, len(events)) - 1
    return found


def check(
    implementation: Implementation,
    *,
    examples: int = 1000,
    steps: int = 20,
    randomize: bool = False,
    shrink: bool = True,
    errors: Errors = "any",
    progress: Callable[[Counts], None] | None = None,
) -> Report:
    """Run the paths, then ``examples`` generated sequences of up to ``steps`` rules, against
    ``implementation`` (the same sequences every run unless ``randomize``). Returns a report
    whose ``divergence`` holds the counterexample, if any, shrunk unless ``shrink`` is false
    (when only whether matters: mutation testing). ``errors="T8"`` holds the implementation
    to T8's exact parse-failure ``error`` and to exact integers (this package's tracker).
    A divergence that does not happen again when Hypothesis replays it (the implementation
    is not deterministic) is still reported: the first one seen, unshrunk.
    ``ProtocolError`` (a broken protocol) propagates."""
    if errors not in ("any", "T8"):
        raise ValueError(f'errors must be "any" or "T8", got {errors!r}')
    counts = Counts()
    started = time.perf_counter()
    with record_coverage(counts.coverage):
        try:
            for _ in run_paths(implementation, counts, errors):
                if progress is not None:
                    progress(counts)
            machine = machine_for(implementation, counts, errors)
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
            run_crowd(implementation, counts, errors)
        except Divergence as divergence:
            if counts.protocol_error is not None:
                raise counts.protocol_error from None
            if shrink:
                divergence = fewest_events(implementation, divergence, errors)
            return Report(counts, time.perf_counter() - started, divergence)
        except Exception:
            if counts.protocol_error is not None:
                raise counts.protocol_error from None
            if counts.divergence is not None:  # seen, but it did not replay (Flaky...)
                seen = counts.divergence
                unsteady = Divergence(
                    f"{seen.problem} (it did not happen again on replay: the implementation "
                    "behaves differently for the same events)",
                    seen.steps,
                    seen.expected,
                    seen.actual,
                    seen.transcript,
                )
                return Report(counts, time.perf_counter() - started, unsteady)
            raise
    return Report(counts, time.perf_counter() - started)
