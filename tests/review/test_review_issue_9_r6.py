"""Breaks found by an independent review of issue 9 (round 6). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): M4, M5, M6 (through L7's command line).

from __future__ import annotations

import dataclasses
import enum
import io
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from statemachine import State, StateChart

from statecharts import compile_chart
from statecharts.testing import (
    Divergence,
    Step,
    chart_machine,
    explore,
    shortest_paths,
    transition_cover,
)
from tests.toolcalls.seed000_impls import Seed000, parse
from toolcalls.conformance._cli import parser, run

# -- M5: paths by construction ----------------------------------------------------------------


class Boot(StateChart):  # type: ignore[type-arg]
    """``boot`` settles into ``ready`` by an eventless transition as soon as an instance is
    created: creating one passes through ``boot`` and takes ``boot::ready``."""

    boot = State(initial=True)
    ready = State()
    done = State(final=True)

    boot.to(ready)
    go = ready.to(done)


def test_M5_explore_counts_the_macrostep_that_creates_an_instance() -> None:
    """A chart whose initial state leaves by an eventless transition: every instance passes
    through ``boot`` and takes ``boot::ready`` when created (the coverage recorder counts it),
    but ``explore`` starts from the start transitions only and reports ``boot`` unreached and
    ``boot::ready`` untaken, so the transition cover leaves it out."""
    chart = compile_chart(Boot)
    found = explore(chart)
    assert found.unreached_states == ()
    assert found.untaken_transitions == ()
    assert "boot" in shortest_paths(chart)
    taken = {t for path in transition_cover(chart) for t in path.transitions}
    assert "boot::ready" in taken


class Deep(StateChart):  # type: ignore[type-arg]
    """``go`` targets ``leaf`` two levels down, entering ``outer`` and ``inner`` on its way;
    ``leaf`` leaves for ``done`` at once (eventless), so the macrostep passes through all
    three."""

    idle = State(initial=True)

    class outer(State.Compound):
        class inner(State.Compound):
            leaf = State(initial=True)
            other = State()

            hop = leaf.to(other)

    done = State(final=True)

    go = idle.to(outer.inner.leaf)
    outer.inner.leaf.to(done)


def test_M5_a_macrostep_passing_through_a_compound_state_reaches_it() -> None:
    """``go`` enters ``outer`` and ``inner`` (the ancestors of its target ``leaf``) before the
    eventless transition leaves them; ``explore`` counts only the targets of the transitions
    taken, so ``shortest_paths`` has no path to ``outer`` or ``inner`` (the coverage report
    counts both as entered by the same run)."""
    chart = compile_chart(Deep)
    instance = chart.create()
    assert [t.id for t in instance.send("go").transitions] == ["idle:go:leaf", "leaf::done"]
    paths = shortest_paths(chart)
    assert "outer" in paths, explore(chart).unreached_states
    assert "inner" in paths


class Cart:
    """A plain object (no ``__repr__``) the model keeps: its items are its data."""

    def __init__(self) -> None:
        self.items: list[int] = []


class Shop:
    """The model of ``Till``: it holds a cart, as models usually hold their parts."""

    def __init__(self) -> None:
        self.cart = Cart()


class Till(StateChart):  # type: ignore[type-arg]
    """``pay`` works once five items are in the cart."""

    shopping = State(initial=True)
    paid = State(final=True)

    add = shopping.to.itself(internal=True, on="put")  # type: ignore[no-untyped-call]
    pay = shopping.to(paid, cond="enough")

    def put(self) -> None:
        self.model.cart.items.append(1)

    def enough(self) -> bool:
        return len(self.model.cart.items) >= 5


def test_M5_explore_tells_apart_models_whose_parts_hold_different_data() -> None:
    """Five ``add`` then ``pay`` reach ``paid`` (six events, within the default depth of 12);
    the model's fingerprint is ``repr`` of its attributes, and a ``Cart``'s repr is its
    address, which a freed cart's successor reuses: runs with different carts merge into one
    node and ``explore`` reports ``paid`` unreachable."""
    chart = compile_chart(Till)
    instance = chart.create(Shop())
    for _ in range(5):
        instance.send("add")
    assert [t.id for t in instance.send("pay").transitions] == ["shopping:pay:paid"]
    for _ in range(3):  # the merge depends on addresses: every attempt must reach it
        found = explore(chart, model=lambda key: Shop())
        assert found.unreached_states == ()


# -- M4: derived stateful tests ---------------------------------------------------------------


class Color(enum.Enum):
    RED = 1
    BLUE = 2


@dataclasses.dataclass(frozen=True)
class Point:
    x: float
    y: float


class Paint(StateChart):  # type: ignore[type-arg]
    """``paint`` works with red only; its guard's annotation gives the default payloads."""

    white = State(initial=True)
    red = State(final=True)

    paint = white.to(red, cond="is_red")

    def is_red(self, color: Color) -> bool:
        return color is Color.RED


class Plot(StateChart):  # type: ignore[type-arg]
    """``mark`` works for a point whose ``x`` is not a number."""

    blank = State(initial=True)
    marked = State(final=True)

    mark = blank.to(marked, cond="odd")

    def odd(self, point: Point) -> bool:
        return point.x != point.x


class NeverMoves:
    """A SUT that stays in the initial state whatever it is sent."""

    def __init__(self, initial: str) -> None:
        self.initial = initial
        self.keys: set[str] = set()

    def create(self, key: str) -> None:
        self.keys.add(key)

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> None:
        return None

    def configuration(self, key: str) -> set[str]:
        return {self.initial}


@pytest.mark.parametrize(
    ("cls", "initial"), [(Paint, "white"), (Plot, "blank")], ids=["enum", "dataclass-nan"]
)
def test_M4_printed_steps_paste_with_payloads_drawn_from_annotations(
    cls: type[StateChart],  # type: ignore[type-arg]
    initial: str,
) -> None:
    """A guard annotated with an enum (or a dataclass holding a float): the default payloads
    draw its members (or points with ``nan``), and a divergence prints
    ``Step('k0', 'paint', {'color': <Color.RED: 1>})`` or ``Point(x=nan, ...)``, which does
    not paste into a test even with ``Color`` and ``Point`` imported."""
    machine = chart_machine(compile_chart(cls), lambda: NeverMoves(initial))
    with pytest.raises(Divergence) as raised:
        run_state_machine_as_test(
            machine, settings=settings(max_examples=200, database=None, deadline=None)
        )
    text = str(raised.value)
    start = text.index("steps = [")
    block = text[start : text.index("\n]", start) + 2]
    namespace: dict[str, Any] = {"Step": Step, "Color": Color, "Point": Point}
    exec(block, namespace)
    steps = namespace["steps"]
    assert repr(steps) == repr(list(raised.value.steps))


# -- M6: conformance, with the command line's defaults ------------------------------------------


class CaseFallbackRouting(Seed000):
    """Routes by id, but an event or ``get`` for an id it does not know goes to a call whose
    id differs only in case (``call_A`` finds ``call_a``): concurrent calls mix (seed 000:
    "route by id")."""

    def _resolve(self, call_id: str) -> str:
        if call_id in self.calls:
            return call_id
        for known in self.calls:
            if known.lower() == call_id.lower():
                return known
        return call_id

    def apply(self, event: dict[str, Any]) -> None:
        if event.get("type") != "start":
            event = {**event, "id": self._resolve(event["id"])}
        super().apply(event)

    def get(self, call_id: str) -> dict[str, Any] | None:
        return super().get(self._resolve(call_id))


class StripsBeforeParsing(Seed000):
    """Parses ``argsText.strip()`` on ready, as Python code often does: text that
    ``JSON.parse`` refuses (a no-break space, a form feed or a line separator around the
    value) parses."""

    def apply(self, event: dict[str, Any]) -> None:
        call = self.calls.get(event.get("id"))  # type: ignore[arg-type]
        if event.get("type") == "ready" and call is not None and call["status"] == "pending":
            try:
                call["args"] = parse(call["argsText"].strip())
                call["status"] = "running"
            except ValueError as failure:
                call["status"], call["error"] = "error", f"bad JSON: {failure}"
            return
        super().apply(event)


class FoldsEventTypes(Seed000):
    """Reads the event type case-insensitively: ``{"type": "DELTA"}`` appends text, though
    the seed has no such type and must not act on it."""

    def apply(self, event: dict[str, Any]) -> None:
        super().apply({**event, "type": str(event.get("type")).lower()})


@pytest.mark.parametrize(
    "factory",
    ["CaseFallbackRouting", "StripsBeforeParsing", "FoldsEventTypes"],
    ids=["case-insensitive-fallback-routing", "strip-before-parse", "case-folded-types"],
)
def test_M6_a_subtly_wrong_implementation_is_caught_by_the_command_line(factory: str) -> None:
    """``toolcalls conformance --object module:factory`` with its defaults (1000 sequences
    plus the paths) says each of these conforms (exit 0): the suite sends events and ``get``
    only to ids it started or to ``ghost``, never argument text with a non-JSON space around
    the value, and undeclared events only as ``undeclared``/``bogus``."""
    out, err = io.StringIO(), io.StringIO()
    status = run(parser().parse_args(["--object", f"{__name__}:{factory}", "--quiet"]), out, err)
    assert status == 1, out.getvalue() + err.getvalue()
