"""Diagrams drawn from compiled charts: what the DOT and Mermaid say, that they never change
from run to run, that they agree with python-statemachine's own reading of a chart, and what
happens without Graphviz.

Renderer tests use a hand-built ``ChartDef``; the rest use the charts of ``charts.py``. DOT is
checked by reading it back with ``parse_dot`` (exactly the DOT the ``graphviz`` package writes),
SVG by parsing the XML that Graphviz's ``dot`` renders.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from statemachine import Event, State, StateChart
from statemachine.contrib.diagram.extract import extract
from statemachine.contrib.diagram.model import StateType

from statecharts import (
    CallbackDef,
    ChartDef,
    Emphasis,
    EventDef,
    GraphvizNotFound,
    Group,
    Mark,
    Overlay,
    RefKind,
    StateDef,
    TransitionDef,
    compile_chart,
    render,
    to_dot,
    to_mermaid,
)
from statecharts._diagram import diagram_of, dot_digest, svg_dot_digest

from .charts import DIFFERENTIAL, Door, Shop

ROOT = Path(__file__).resolve().parents[2]


def callback(
    group: Group,
    ref: str,
    expected: bool | None = None,
    convention: bool = False,
    only_event: str | None = None,
) -> CallbackDef:
    """A callback declared by name (or as an expression, for refs that are not names)."""
    kind = RefKind.NAME if ref.isidentifier() else RefKind.EXPRESSION
    return CallbackDef(group, kind, ref, 0, expected, convention, only_event, lookup_name=ref)


def order_chart() -> ChartDef:
    """A hand-built chart with every kind of state, transition and label a diagram draws."""
    states = (
        StateDef(
            "pending",
            "Pending",
            "pending",
            initial=True,
            final=False,
            exit=(callback(Group.EXIT, "stop_timer"),),
        ),
        StateDef(
            "paid",
            "Paid",
            "paid",
            initial=False,
            final=False,
            enter=(
                callback(Group.ENTER, "send_receipt"),
                callback(Group.ENTER, "on_enter_paid", convention=True),
            ),
        ),
        StateDef("shipped", "Shipped", "shipped", initial=False, final=True),
        StateDef("cancelled", "Cancelled", "cancelled", initial=False, final=True),
    )
    transitions = (
        TransitionDef(
            "pending:pay:paid",
            "pending",
            "paid",
            ("pay",),
            internal=False,
            cond=(callback(Group.COND, "has_funds", expected=True),),
            before=(callback(Group.BEFORE, "before_pay", convention=True, only_event="pay"),),
            on=(callback(Group.ON, "charge"),),
        ),
        TransitionDef(
            "pending:cancel:cancelled",
            "pending",
            "cancelled",
            ("cancel",),
            internal=False,
            cond=(callback(Group.COND, "is_locked", expected=False),),
        ),
        TransitionDef(
            "pending:note:pending",
            "pending",
            "pending",
            ("note",),
            internal=True,
            on=(callback(Group.ON, "log_note"),),
        ),
        TransitionDef(
            "paid:ship:shipped",
            "paid",
            "shipped",
            ("ship",),
            internal=False,
            validators=(callback(Group.VALIDATORS, "check_address"),),
            cond=(callback(Group.COND, "in_stock and not held", expected=False),),
            after=(callback(Group.AFTER, "notify"),),
        ),
        TransitionDef("paid:ping:", "paid", None, ("ping",), internal=False),
        TransitionDef("paid:pay|retry:paid", "paid", "paid", ("pay", "retry"), internal=False),
    )
    events = tuple(
        EventDef(name, name.title()) for name in ("pay", "cancel", "note", "ship", "ping", "retry")
    )
    return ChartDef("Order", "shop.Order", states, events, transitions)


_STATEMENT = re.compile(
    r'^\t(?P<left>"(?:\\.|[^"\\])*"|[^\s"\[]+)(?: -> (?P<right>"(?:\\.|[^"\\])*"|[^\s"\[]+))?'
    r"(?: \[(?P<attrs>.*)\])?$"
)
_ATTRIBUTE = re.compile(r'(?P<key>[A-Za-z_]+)=(?P<value>"(?:\\.|[^"\\])*"|[^\s"]+)')


def dot_text(value: str) -> str:
    """A DOT ID or attribute value as text: quotes removed, escapes decoded (``\\n``: newline)."""
    if not value.startswith('"'):
        return value
    body, out, index = value[1:-1], [], 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            following = body[index + 1]
            out.append({"n": "\n", "\\": "\\", '"': '"'}.get(following, "\\" + following))
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


@dataclass
class DotGraph:
    """The nodes and edges of a DOT text, with their attributes decoded."""

    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    defaults: dict[str, dict[str, str]] = field(default_factory=dict)

    def edge(self, edge_id: str) -> tuple[str, str, dict[str, str]]:
        """The edge whose ``id`` attribute is ``edge_id``."""
        return next(edge for edge in self.edges if edge[2].get("id") == edge_id)


def parse_dot(text: str) -> DotGraph:
    """Read the DOT the ``graphviz`` package writes; fails on any line it does not expect."""
    graph = DotGraph()
    lines = text.splitlines()
    assert lines[0].startswith("// ")
    assert lines[1].startswith("digraph ")
    assert lines[1].endswith(" {")
    assert lines[-1] == "}"
    for line in lines[2:-1]:
        found = _STATEMENT.match(line)
        assert found, f"unexpected DOT line: {line!r}"
        attrs = {
            item["key"]: dot_text(item["value"])
            for item in _ATTRIBUTE.finditer(found["attrs"] or "")
        }
        left = dot_text(found["left"])
        if found["right"] is not None:
            graph.edges.append((left, dot_text(found["right"]), attrs))
        elif found["left"] in {"graph", "node", "edge"}:
            graph.defaults[left] = attrs
        else:
            graph.nodes[left] = attrs
    return graph


class Turnstile(StateChart):
    """Several events on one transition, two transitions with the same source, event and
    target, display names that differ from ids, and an internal self-transition."""

    locked = State(initial=True)
    unlocked = State("Open")
    broken = State(final=True)

    coin = (
        locked.to(unlocked, cond="paid_enough")
        | locked.to(unlocked, cond="has_token")
        | unlocked.to.itself(internal=True, on="refund")
    )
    push = unlocked.to(locked)
    smash = locked.to(broken, event="smash crush") | unlocked.to(broken)
    kick = Event(unlocked.to(broken), name="Kick hard")

    def paid_enough(self, amount: int = 0) -> bool:
        return amount >= 1

    def has_token(self, token: bool = False) -> bool:
        return token

    def refund(self) -> None:
        """Give the coin back."""


COMPARED = {**{name: spec[0] for name, spec in DIFFERENTIAL.items()}, "turnstile": Turnstile}


# -- D1, D3: renderers, on a hand-built chart ----------------------------------------------

ORDER_DOT = r"""// shop.Order: drawn by statecharts from the compiled chart; do not edit
digraph Order {
	graph [fontname=Helvetica label=Order labelloc=t rankdir=LR]
	node [fontname=Helvetica fontsize=11 shape=box style=rounded]
	edge [fontname=Helvetica fontsize=9]
	"[*]" [label="" id=initial shape=point width=0.15]
	pending [label="Pending\nexit / stop_timer" id="state:pending"]
	paid [label="Paid\nentry / send_receipt" id="state:paid"]
	shipped [label=Shipped id="state:shipped" peripheries=2]
	cancelled [label=Cancelled id="state:cancelled" peripheries=2]
	"[*]" -> pending [id="initial:pending"]
	pending -> paid [label="pay [has_funds]\n/ charge" id="transition:pending:pay:paid"]
	pending -> cancelled [label="cancel [not is_locked]" id="transition:pending:cancel:cancelled"]
	pending -> pending [label="note / log_note" id="transition:pending:note:pending" style=dashed]
	paid -> shipped [label="ship [check_address, not (in_stock and not held)]\n/ notify" id="transition:paid:ship:shipped"]
	paid -> paid [label=ping id="transition:paid:ping:" style=dashed]
	paid -> paid [label="pay, retry" id="transition:paid:pay|retry:paid"]
}
"""  # noqa: E501

ORDER_MERMAID = """---
title: "Order"
---
stateDiagram-v2
    direction LR
    state "Pending" as pending
    pending : exit / stop_timer
    pending : note / log_note (internal)
    state "Paid" as paid
    paid : entry / send_receipt
    paid : ping (internal)
    state "Shipped" as shipped
    state "Cancelled" as cancelled
    [*] --> pending
    pending --> paid : pay [has_funds] / charge
    pending --> cancelled : cancel [not is_locked]
    paid --> shipped : ship [check_address, not (in_stock and not held)] / notify
    paid --> paid : pay, retry
    shipped --> [*]
    cancelled --> [*]
"""


def test_dot_draws_roles_guards_actions_and_internal_transitions() -> None:
    assert to_dot(order_chart()) == ORDER_DOT


def test_mermaid_draws_roles_guards_actions_and_internal_transitions() -> None:
    assert to_mermaid(order_chart()) == ORDER_MERMAID


def test_convention_callbacks_are_drawn_only_when_defined() -> None:
    hidden = diagram_of(order_chart())
    shown = diagram_of(order_chart(), defined={"on_enter_paid", "before_pay"})
    assert (hidden.states[1].entry, hidden.transitions[0].actions) == (
        ("send_receipt",),
        ("charge",),
    )
    assert (shown.states[1].entry, shown.transitions[0].actions) == (
        ("send_receipt", "on_enter_paid"),
        ("before_pay", "charge"),
    )


def test_convention_callbacks_the_ir_says_the_chart_defines_are_drawn() -> None:
    chart = replace(order_chart(), attributes=frozenset({"on_enter_paid"}))
    paid = diagram_of(chart).states[1]
    assert paid.entry == ("send_receipt", "on_enter_paid")


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_renderers_read_the_ir_only(name: str) -> None:
    """D1: the same description as a plain ``ChartDef`` (no class behind it) draws the same."""
    chart = compile_chart(COMPARED[name])
    plain = ChartDef(
        name=chart.name,
        qualname=chart.qualname,
        states=chart.states,
        events=chart.events,
        transitions=chart.transitions,
        flags=chart.flags,
        attributes=chart.attributes,
    )
    assert to_dot(plain) == to_dot(chart)
    assert to_mermaid(plain) == to_mermaid(chart)


def test_importing_the_packages_never_loads_graphviz() -> None:
    """D2: ``graphviz`` is imported when a DOT diagram is drawn, not before."""
    probe = (
        "import sys, statecharts, toolcalls, statecharts.__main__, toolcalls.__main__; "
        "before = 'graphviz' in sys.modules; "
        "statecharts.to_mermaid(statecharts.compile_chart(toolcalls.ToolCallChart)); "
        "mermaid = 'graphviz' in sys.modules; "
        "statecharts.to_dot(statecharts.compile_chart(toolcalls.ToolCallChart)); "
        "print(before, mermaid, 'graphviz' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "False", "True"]


def test_compiled_chart_shows_the_conventions_its_class_defines() -> None:
    door = diagram_of(compile_chart(Door))
    assert [(s.id, s.entry, s.exit) for s in door.states] == [
        ("closed", ("on_enter_state", "lights_off"), ("on_exit_state", "creak", "on_exit_closed")),
        ("opened", ("on_enter_state", "lights_on"), ("on_exit_state", "slam")),
        ("gone", ("on_enter_state", "on_enter_gone"), ("on_exit_state",)),
    ]
    assert door.transitions[0].actions == ("before_transition", "after_transition")


def test_shop_labels_name_validators_model_guards_and_defined_conventions() -> None:
    shop = {t.id: t for t in diagram_of(compile_chart(Shop)).transitions}
    assert shop["cart:checkout:paying"].lines() == (
        "checkout [check_amount, has_items, can_pay]",
        "/ before_transition, remember, after_transition",
    )
    assert shop["browsing:add:cart"].lines() == (
        "add [not_full]",
        "/ before_transition, audit, on_add, after_transition",
    )
    assert [(t.id, t.stays) for t in shop.values() if t.source == t.target] == [
        ("cart:add:cart", False),
        ("cart:ping:", True),
        ("cart:promo.code:cart", True),
    ]


def _tricky_chart() -> ChartDef:
    """Names that mean something in DOT, HTML-like labels or Mermaid."""
    states = (
        StateDef("node", 'say "hi" <b>\\n', "a", initial=True, final=False),
        StateDef("edge", "a: b; c # d {e}\nf", "b", initial=False, final=True),
    )
    guard = CallbackDef(Group.COND, RefKind.EXPRESSION, "x < 1 & y > 2", 0, expected=True)
    transitions = (TransitionDef("node:go:edge", "node", "edge", ("go",), False, cond=(guard,)),)
    return ChartDef("graph", "odd.graph", states, (EventDef("go", "Go"),), transitions)


def test_dot_quotes_keywords_and_keeps_names_literal() -> None:
    graph = parse_dot(to_dot(_tricky_chart()))
    assert graph.nodes["node"]["label"] == 'say "hi" <b>\\n'
    assert graph.nodes["edge"]["label"] == "a: b; c # d {e} f"
    assert graph.edge("transition:node:go:edge")[:2] == ("node", "edge")
    assert graph.edge("transition:node:go:edge")[2]["label"] == "go [x < 1 & y > 2]"


def test_mermaid_escapes_what_mermaid_would_read() -> None:
    lines = to_mermaid(_tricky_chart()).splitlines()
    assert lines[0:3] == ["---", 'title: "graph"', "---"]
    assert lines[5:8] == [
        '    state "say #34;hi#34; #60;b#62;#92;n" as node',
        '    state "a#58; b#59; c #35; d #123;e#125; f" as edge',
        "    [*] --> node",
    ]
    assert lines[8] == "    node --> edge : go [x #60; 1 #38; y #62; 2]"


def test_overlay_marks_colour_states_and_edges_and_add_notes() -> None:
    overlay = Overlay(
        "coverage: 1 of 6",
        states={
            "pending": Mark(Emphasis.HIT, ("ignored ship ×2",)),
            "paid": Mark(Emphasis.MISSED),
        },
        transitions={
            "pending:pay:paid": Mark(Emphasis.HIT, ("×3",)),
            "pending:note:pending": Mark(Emphasis.DIM, ("never",)),
        },
    )
    graph = parse_dot(to_dot(order_chart(), overlay=overlay))
    assert graph.defaults["graph"]["label"] == "Order\ncoverage: 1 of 6"
    assert graph.nodes["pending"] == {
        "label": "Pending\nexit / stop_timer\nignored ship ×2",
        "id": "state:pending",
        "color": "#1565c0",
        "fontcolor": "#1565c0",
        "penwidth": "2",
        "style": "rounded,filled",
        "fillcolor": "#e3f2fd",
    }
    assert graph.nodes["paid"]["color"] == "#c62828"
    assert "color" not in graph.nodes["shipped"]
    assert graph.edge("transition:pending:pay:paid")[2]["label"] == "pay [has_funds]\n/ charge\n×3"
    assert graph.edge("transition:pending:note:pending")[2] == {
        "label": "note / log_note never",
        "id": "transition:pending:note:pending",
        "style": "dashed",
        "color": "#9e9e9e",
        "fontcolor": "#9e9e9e",
    }
    mermaid = to_mermaid(order_chart(), overlay=overlay).splitlines()
    assert mermaid[1] == 'title: "Order: coverage: 1 of 6"'
    assert "    pending : ignored ship ×2" in mermaid
    assert "    pending : note / log_note (internal) (never)" in mermaid
    assert "    pending --> paid : pay [has_funds] / charge (×3)" in mermaid
    assert mermaid[-4:] == [
        "    classDef hit fill:#e3f2fd,stroke:#1565c0,stroke-width:2px",
        "    class pending hit",
        "    classDef missed stroke:#c62828,stroke-width:2px,color:#c62828",
        "    class paid missed",
    ]


# -- D4: determinism -----------------------------------------------------------------------

_PRINT_ALL = """
import sys
from statecharts import compile_chart, to_dot, to_mermaid
from tests.statecharts.charts import DIFFERENTIAL
for name in sorted(DIFFERENTIAL):
    chart = compile_chart(DIFFERENTIAL[name][0])
    sys.stdout.write(to_dot(chart) + to_mermaid(chart))
"""


def test_dot_and_mermaid_are_byte_identical_across_processes() -> None:
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _PRINT_ALL], cwd=ROOT, env=env, capture_output=True, check=True
        )
        outputs.append(done.stdout)
    here = "".join(
        to_dot(chart) + to_mermaid(chart)
        for chart in (compile_chart(DIFFERENTIAL[name][0]) for name in sorted(DIFFERENTIAL))
    )
    assert outputs[0] == outputs[1] == here.encode()
    assert b" at 0x" not in outputs[0]


# -- D1, C3: agreement with python-statemachine --------------------------------------------


def _our_reading(cls: type[StateChart]) -> dict[str, object]:
    """States, initial, finals and (source, target, event names) as our DOT draws them."""
    graph = parse_dot(to_dot(compile_chart(cls)))
    names = {str(event.id): str(event.name) for event in cls._events}
    transitions = []
    for source, target, attrs in graph.edges:
        if source == "[*]":
            continue
        trigger = re.split(r" \[| /", attrs["label"].split("\n")[0], maxsplit=1)[0]
        events = " ".join(names[event] for event in trigger.split(", "))
        transitions.append((source, target, events))
    return {
        "states": sorted(node for node in graph.nodes if node != "[*]"),
        "initial": [target for source, target, _ in graph.edges if source == "[*]"],
        "finals": sorted(n for n, attrs in graph.nodes.items() if attrs.get("peripheries") == "2"),
        "transitions": sorted(transitions),
    }


def _their_reading(cls: type[StateChart]) -> dict[str, object]:
    """The same, from python-statemachine's own diagram extraction."""
    graph = extract(cls)
    return {
        "states": sorted(state.id for state in graph.states),
        "initial": [state.id for state in graph.states if state.is_initial],
        "finals": sorted(s.id for s in graph.states if s.type is StateType.FINAL),
        "transitions": sorted(
            (t.source, t.targets[0] if t.targets else t.source, t.event) for t in graph.transitions
        ),
    }


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_dot_has_the_states_and_transitions_python_statemachine_extracts(name: str) -> None:
    cls = COMPARED[name]
    assert _our_reading(cls) == _their_reading(cls)


def test_comparison_sees_duplicate_and_multi_event_transitions() -> None:
    transitions = Counter(_our_reading(Turnstile)["transitions"])  # type: ignore[arg-type]
    assert transitions[("locked", "unlocked", "Coin")] == 2
    assert transitions[("locked", "broken", "Smash Crush")] == 1
    assert transitions[("unlocked", "broken", "Kick hard")] == 1


# -- D2: SVG and PNG through Graphviz ------------------------------------------------------

_SVG = "{http://www.w3.org/2000/svg}"


def _svg_texts(svg: bytes) -> dict[str, list[str]]:
    """The text lines of every SVG group that has an id, by id."""
    root = ElementTree.fromstring(svg)
    return {
        group.attrib["id"]: [text.text or "" for text in group.iter(f"{_SVG}text")]
        for group in root.iter(f"{_SVG}g")
        if "id" in group.attrib
    }


@pytest.mark.graphviz
@pytest.mark.parametrize("name", sorted(COMPARED))
def test_svg_shows_every_state_and_transition_label(name: str) -> None:
    chart = compile_chart(COMPARED[name])
    svg = render(chart, "svg")
    texts = _svg_texts(svg)
    diagram = diagram_of(chart)
    for state in diagram.states:
        assert texts[f"state:{state.id}"] == list(state.lines())
    for transition in diagram.transitions:
        expected = list(transition.lines())
        if transition.source == transition.target:
            expected = [" ".join(expected)]
        assert texts[f"transition:{transition.id}"] == expected
    assert svg_dot_digest(svg) == dot_digest(to_dot(chart))


@pytest.mark.graphviz
def test_png_is_rendered_by_graphviz() -> None:
    assert render(order_chart(), "png").startswith(b"\x89PNG\r\n\x1a\n")


def test_svg_and_png_without_dot_fail_naming_the_program(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    for format in ("svg", "png"):
        with pytest.raises(GraphvizNotFound) as raised:
            render(order_chart(), format)  # type: ignore[arg-type]
        message = str(raised.value)
        assert "\n" not in message
        assert message.startswith(f"cannot render {format.upper()}: Graphviz's 'dot' program")
        assert "apt-get install graphviz" in message
    assert render(order_chart(), "dot") == ORDER_DOT.encode()
    assert render(order_chart(), "mermaid") == ORDER_MERMAID.encode()


def test_diagram_api_is_exported() -> None:
    import statecharts

    diagram_api = {
        "ChartCoverage",
        "Coverage",
        "CoverageError",
        "Emphasis",
        "GraphvizNotFound",
        "Mark",
        "Overlay",
        "TraceError",
        "TraceStep",
        "coverage_overlay",
        "read_trace",
        "render",
        "to_dot",
        "to_mermaid",
        "trace_overlay",
    }
    assert diagram_api <= set(statecharts.__all__)
    assert all(hasattr(statecharts, name) for name in diagram_api)


def test_an_eventless_transition_is_labelled_by_its_guards_alone() -> None:
    """D1: an eventless transition has no trigger event; its label is ``[guards]``, with no
    leading blank where the event would be."""
    from toolcalls import ToolCallChart

    chart = compile_chart(ToolCallChart)
    mermaid = to_mermaid(chart)
    assert "    parsing --> running : [arguments_parsed]\n" in mermaid
    assert "    parsing --> error : [not arguments_parsed]\n" in mermaid
    assert 'label="[arguments_parsed]"' in to_dot(chart)


# -- D3: delayed transitions -------------------------------------------------------------------


class Reminder(StateChart):
    """A chart whose ``remind`` event fires 1.5 s after it is sent (``Event(delay=...)``)."""

    waiting = State(initial=True)
    snoozed = State()
    reminded = State(final=True)
    remind = Event(waiting.to(reminded) | snoozed.to(reminded), delay=1500)
    snooze = waiting.to(snoozed)
    wake = Event(snoozed.to(waiting), delay=250)


_DELAYED_SCXML = """<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0"
    datamodel="python" initial="waiting">
  <state id="waiting">
    <onentry>
      <send event="timeout" delay="5s" id="t"/>
      <if cond="True"><send event="nudge" delay="200ms"/></if>
      <send event="poke"/>
    </onentry>
    <transition event="timeout" target="expired"/>
    <transition event="nudge" target="waiting"/>
    <transition event="poke" target="waiting"/>
  </state>
  <final id="expired"/>
</scxml>"""


def test_D3_a_delayed_event_is_labelled_with_its_delay_in_dot_and_mermaid() -> None:
    """D3: a transition on an event declared with a delay reads ``event after <delay>`` (ms
    below a second, seconds above), on every transition of the event; others are unchanged."""
    chart = compile_chart(Reminder)
    assert {event.id: event.delays for event in chart.events} == {
        "remind": (1500.0,),
        "snooze": (),
        "wake": (250.0,),
    }
    mermaid = to_mermaid(chart)
    assert "    waiting --> reminded : remind after 1.5 s\n" in mermaid
    assert "    snoozed --> reminded : remind after 1.5 s\n" in mermaid
    assert "    snoozed --> waiting : wake after 250 ms\n" in mermaid
    assert "    waiting --> snoozed : snooze\n" in mermaid
    graph = parse_dot(to_dot(chart))
    assert graph.edge("transition:waiting:remind:reminded")[2]["label"] == "remind after 1.5 s"
    assert graph.edge("transition:snoozed:wake:waiting")[2]["label"] == "wake after 250 ms"
    assert graph.edge("transition:waiting:snooze:snoozed")[2]["label"] == "snooze"


def test_D3_an_event_the_chart_sends_itself_with_a_delay_is_labelled(tmp_path: Path) -> None:
    """D3: the SCXML idiom for a timed transition (``<send event="timeout" delay="5s"/>`` on
    entry, a transition on ``timeout``) labels the transition ``timeout after 5 s``, sends
    nested in ``<if>`` too; an event sent without a delay stays plain."""
    from statemachine.io import load

    path = tmp_path / "timed.scxml"
    path.write_text(_DELAYED_SCXML)
    chart = compile_chart(load(path, trusted=True))
    assert {event.id: event.sent_after for event in chart.events} == {
        "timeout": (5000.0,),
        "nudge": (200.0,),
        "poke": (),
    }
    mermaid = to_mermaid(chart)
    assert "    waiting --> expired : timeout after 5 s\n" in mermaid
    assert "    waiting : nudge after 200 ms (internal)\n" not in mermaid  # an external loop
    assert "nudge after 200 ms" in mermaid
    assert "    waiting --> waiting : poke\n" in mermaid
    dot = parse_dot(to_dot(chart))
    assert dot.edge("transition:waiting:timeout:expired")[2]["label"] == "timeout after 5 s"


def test_D3_delayed_transitions_keep_their_coverage_and_trace_overlays() -> None:
    """D6 with D3: overlays key on transition ids, so a delayed transition's label carries the
    delay and the overlay's marks and notes alike."""
    from statecharts import Coverage, VirtualClock, coverage_overlay, trace_overlay
    from statecharts._overlay import TraceStep

    chart = compile_chart(Reminder)
    clock = VirtualClock()
    instance = chart.create(clock=clock)
    coverage = Coverage()
    coverage.record(chart, instance.send("snooze"))
    instance.send("wake")
    clock.advance(0.25)
    assert instance.state.id == "waiting"
    overlay = coverage_overlay(chart, coverage)
    mermaid = to_mermaid(chart, overlay=overlay)
    assert "    waiting --> snoozed : snooze (×1)\n" in mermaid
    assert "    snoozed --> waiting : wake after 250 ms (never taken)\n" in mermaid
    edge = parse_dot(to_dot(chart, overlay=overlay)).edge("transition:snoozed:wake:waiting")[2]
    assert edge["label"] == "wake after 250 ms\nnever taken"
    assert edge["color"] == "#c62828"
    trace = trace_overlay(chart, [TraceStep("snooze"), TraceStep("wake")])
    edge = parse_dot(to_dot(chart, overlay=trace)).edge("transition:snoozed:wake:waiting")[2]
    assert edge["label"] == "wake after 250 ms\nstep 2"
    assert edge["color"] == "#1565c0"


_ODD_IDS = """{"name": "Odd", "states": {
    "wait here": {"initial": true, "transitions": [{"event": "go", "target": "a:b"}]},
    "a:b": {"transitions": [{"event": "go", "target": "done"}]},
    "done": {"final": true}}}"""


def test_D3_state_ids_that_are_not_plain_names_stay_one_node() -> None:
    """D3/D4: ids from JSON or SCXML may hold spaces and colons: DOT quotes every edge end (a
    colon is no port), Mermaid names such a state by one stable token."""
    from statemachine.io import load

    chart = compile_chart(load(_ODD_IDS, format="json"))
    graph = parse_dot(to_dot(chart))
    assert graph.edge("transition:wait here:go:a:b")[:2] == ("wait here", "a:b")
    mermaid = to_mermaid(chart)
    assert mermaid == to_mermaid(chart)
    assert "wait here" not in mermaid.replace('"Wait here"', "")
    ids = re.findall(r" as (\S+)$", mermaid, re.MULTILINE)
    assert len(ids) == 3
    assert len(set(ids)) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", token) for token in ids)


def test_D3_an_unguarded_eventless_transition_reads_eventless() -> None:
    class Flow(StateChart):
        parsed = State(initial=True)
        done = State(final=True)
        parsed.to(done)

    chart = compile_chart(Flow)
    assert "    parsed --> done : (eventless)\n" in to_mermaid(chart)
    assert parse_dot(to_dot(chart)).edge("transition:parsed::done")[2]["label"] == "(eventless)"
