"""Diagrams of compiled charts: DOT and Mermaid text, SVG and PNG through Graphviz's ``dot``.

Extract, then render: ``diagram_of`` reads a ``ChartDef`` (the IR, never the declared class, D1)
into a small render model (what a reader sees: names, roles, guard and action labels), and each
renderer turns that model, with an
optional ``Overlay`` (coverage or a trace, see ``_overlay``), into text. The text is
deterministic: states and transitions in declaration order, no object ids, the same escaping on
every run, so committed diagrams diff cleanly and a test can tell when they are stale.

How a chart is drawn:

- a state is a rounded box with its name and ``entry / ...``, ``exit / ...`` lines; the initial
  state has an arrow from a dot, a final state has a double border (``--> [*]`` in Mermaid);
- a transition is an arrow labelled ``events [guards]`` over ``/ actions``; a ``cond`` guard
  shows as its expression, an ``unless`` guard as ``not ...``, validators first (they run first);
- a transition that neither exits nor enters a state (internal, or targetless) is a dashed
  self-loop in DOT, and a line inside the state marked ``(internal)`` in Mermaid;
- an event that fires after a delay (``Event(delay=500)``, or sent by the chart's own
  ``<send delay="5s">``) reads ``remind after 500 ms`` (``timeout after 5 s``); an eventless
  transition shows its guards alone, or nothing.

Naming-convention callbacks (``on_enter_<state>``, ``before_<event>``, ``after_transition`` ...)
are shown only when the chart class defines them (``ChartDef.attributes``); other callbacks
always are. The ``graphviz`` package is imported only when DOT is drawn (D2).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from ._errors import GraphvizNotFound
from ._ir import CallbackDef, ChartDef, TransitionDef, run_order

Format = Literal["dot", "mermaid", "svg", "png"]

#: Output formats by file suffix.
SUFFIXES: Mapping[str, Format] = {
    ".dot": "dot",
    ".gv": "dot",
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".svg": "svg",
    ".png": "png",
}

#: The formats that need Graphviz's ``dot`` program.
BINARY_FORMATS: frozenset[Format] = frozenset({"svg", "png"})

INITIAL_NODE = "[*]"
#: The label of an eventless transition without guards (it is taken as soon as it can be).
EVENTLESS = "(eventless)"
FONT = "Helvetica"
GENERATED = "drawn by statecharts from the compiled chart; do not edit"
SVG_STAMP = "statecharts-dot-sha256"


# -- the render model ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StateView:
    """A state as drawn: id, display name, role and the entry/exit actions that exist."""

    id: str
    name: str
    initial: bool = False
    final: bool = False
    entry: tuple[str, ...] = ()
    exit: tuple[str, ...] = ()
    parent: str | None = None
    kind: str = "atomic"

    def lines(self) -> tuple[str, ...]:
        """The state's text: its name, then ``entry / ...`` and ``exit / ...`` when present."""
        lines = [self.name]
        if self.entry:
            lines.append(f"entry / {', '.join(self.entry)}")
        if self.exit:
            lines.append(f"exit / {', '.join(self.exit)}")
        return tuple(lines)


@dataclass(frozen=True, slots=True)
class TransitionView:
    """A transition as drawn. ``stays`` is true when it neither exits nor enters a state
    (internal, or targetless); then ``target`` is the source."""

    id: str
    source: str
    target: str
    events: tuple[str, ...]
    guards: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    stays: bool = False

    @property
    def trigger(self) -> str:
        """``events [guards]``: what makes the transition fire (``[guards]`` alone for an
        eventless transition, ``(eventless)`` for one without guards)."""
        text = ", ".join(self.events)
        if not self.guards:
            return text or EVENTLESS
        guards = f"[{', '.join(self.guards)}]"
        return f"{text} {guards}" if text else guards

    @property
    def effect(self) -> str:
        """``/ actions``, or ``""`` when the transition runs none."""
        return f"/ {', '.join(self.actions)}" if self.actions else ""

    def lines(self) -> tuple[str, ...]:
        """The label's lines: the trigger, then the effect when there is one."""
        return (self.trigger, self.effect) if self.actions else (self.trigger,)


@dataclass(frozen=True, slots=True)
class Diagram:
    """Everything a renderer draws, in declaration order."""

    name: str
    qualname: str
    states: tuple[StateView, ...]
    transitions: tuple[TransitionView, ...]
    #: The id of each compound state's initial transition, by the compound state's id: its
    #: initial arrow (``initial:<child>``) shows the transition's coverage.
    initial_transitions: Mapping[str, str] = field(default_factory=dict)

    @property
    def nested(self) -> bool:
        """Whether the chart has compound, parallel or history states (drawn nested)."""
        return any(state.parent is not None or state.kind != "atomic" for state in self.states)

    def children(self, parent: str | None) -> tuple[StateView, ...]:
        """The states directly inside ``parent`` (``None``: the top level)."""
        return tuple(state for state in self.states if state.parent == parent)


def diagram_of(chart: ChartDef, defined: Collection[str] | None = None) -> Diagram:
    """The render model of ``chart``.

    ``defined`` names the convention callbacks that exist; by default the attributes the
    chart's class defines (``ChartDef.attributes``). Reads the IR only, never a class.
    """
    names = chart.attributes if defined is None else frozenset(defined)
    states = tuple(
        StateView(
            id=state.id,
            name=state.name,
            initial=state.initial,
            final=state.final,
            entry=_labels(run_order(state.enter), names),
            exit=_labels(run_order(state.exit), names),
            parent=state.parent,
            kind=state.kind,
        )
        for state in chart.states
    )
    delays = {event.id: event.delays for event in chart.events if event.delays}
    # a compound state's initial transition is drawn as its initial marker, not as an edge
    transitions = tuple(
        _transition_view(transition, names, delays)
        for transition in chart.transitions
        if not transition.initial
    )
    initial = {
        transition.source: transition.id
        for transition in chart.transitions
        if transition.initial and chart.state(transition.source).kind == "compound"
    }
    return Diagram(chart.name, chart.qualname, states, transitions, initial)


def _transition_view(
    transition: TransitionDef,
    names: frozenset[str],
    delays: Mapping[str, tuple[float, ...]],
) -> TransitionView:
    stays = transition.target is None or (
        transition.internal and transition.target == transition.source
    )
    return TransitionView(
        id=transition.id,
        source=transition.source,
        target=transition.target or transition.source,
        events=tuple(_event_label(event, delays.get(event, ())) for event in transition.events),
        guards=_labels(transition.guards, names),
        actions=_labels(transition.actions, names),
        stays=stays,
    )


def _event_label(event: str, delays: tuple[float, ...]) -> str:
    """``event``, or ``event after 500 ms`` (``after 1 s or 2 s``) for one that fires after a
    delay."""
    if not delays:
        return event
    return f"{event} after {' or '.join(delay_text(delay) for delay in delays)}"


def delay_text(milliseconds: float) -> str:
    """A delay as a reader says it: ``500 ms``, ``5 s``, ``1.5 s``."""
    if milliseconds >= 1000:
        return f"{milliseconds / 1000:g} s"
    return f"{milliseconds:g} ms"


def _labels(callbacks: tuple[CallbackDef, ...], defined: frozenset[str]) -> tuple[str, ...]:
    return tuple(c.label for c in callbacks if not c.convention or c.ref in defined)


# -- overlays ------------------------------------------------------------------------------


class Emphasis(StrEnum):
    """How an overlay marks a state or transition."""

    HIT = "hit"  # taken / entered, or on the traced path
    MISSED = "missed"  # never taken / never entered
    DIM = "dim"  # not on the traced path


@dataclass(frozen=True, slots=True)
class Mark:
    """An overlay's mark on one state or transition: an emphasis and lines of notes."""

    emphasis: Emphasis
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Overlay:
    """Marks drawn over a diagram, by state id and by transition id, and a caption."""

    caption: str
    states: Mapping[str, Mark] = field(default_factory=dict)
    transitions: Mapping[str, Mark] = field(default_factory=dict)


# -- DOT -----------------------------------------------------------------------------------

_DOT_COLORS = {Emphasis.HIT: "#1565c0", Emphasis.MISSED: "#c62828", Emphasis.DIM: "#9e9e9e"}


def dot_source(diagram: Diagram, overlay: Overlay | None = None) -> str:
    """The diagram as Graphviz DOT text (with a trailing newline)."""
    import graphviz  # only when drawing: importing statecharts or toolcalls never loads it

    title = [diagram.name] if overlay is None else [diagram.name, overlay.caption]
    comment = " ".join(f"{diagram.qualname}: {GENERATED}".splitlines())  # one // line
    graph = graphviz.Digraph(_dot_text(diagram.name), comment=comment)
    graph.attr("graph", label=_dot_label(title), labelloc="t", rankdir="LR", fontname=FONT)
    graph.attr("node", shape="box", style="rounded", fontname=FONT, fontsize="11")
    graph.attr("edge", fontname=FONT, fontsize="9")
    markers = _dot_markers(diagram)
    start = markers[None]
    graph.node(_dot_text(start), label="", shape="point", width="0.15", id="initial")
    if diagram.nested:
        graph.attr("graph", compound="true")
        _dot_nested(graph, diagram, None, overlay, markers)
    for state in diagram.states if not diagram.nested else ():
        mark = overlay.states.get(state.id) if overlay else None
        graph.node(_dot_text(state.id), **_dot_state(state, mark))
    top = diagram.children(None)
    initial = next((state for state in top if state.initial), None)
    if initial is not None:
        _dot_edge(graph, start, initial.id, {"id": _dot_text(f"initial:{initial.id}")})
    for transition in diagram.transitions:
        mark = overlay.transitions.get(transition.id) if overlay else None
        _dot_edge(graph, transition.source, transition.target, _dot_transition(transition, mark))
    source: str = graph.source
    return source


_HISTORY_LABELS = {"shallow_history": "H", "deep_history": "H*"}


def _dot_markers(diagram: Diagram) -> dict[str | None, str]:
    """The node names of the initial dots: ``[*]`` for the chart's, ``<id>:initial`` for a
    compound state's, each made unique against the state ids (a JSON chart may name a state
    ``[*]`` or ``job:initial``) by a trailing ``'``."""
    taken = {state.id for state in diagram.states}
    markers: dict[str | None, str] = {}
    for parent, name in [(None, INITIAL_NODE)] + [
        (state.id, f"{state.id}:initial") for state in diagram.states if state.kind == "compound"
    ]:
        while name in taken:
            name += "'"
        taken.add(name)
        markers[parent] = name
    return markers


def _dot_nested(
    graph: Any,
    diagram: Diagram,
    parent: StateView | None,
    overlay: Overlay | None,
    markers: Mapping[str | None, str],
) -> None:
    """Draw the states inside ``parent``: compound and parallel states as clusters (a parallel
    state's regions dashed), each with a small anchor node edges attach to and a dot marking
    its initial child; history pseudo-states as ``H`` / ``H*`` circles."""
    children = diagram.children(parent.id if parent else None)
    if parent is not None and parent.kind == "compound":
        initial = next((state for state in children if state.initial), None)
        if initial is not None:
            marker = markers[parent.id]
            graph.node(
                _dot_text(marker),
                label="",
                shape="point",
                width="0.1",
                id=_dot_text(f"initial-point:{parent.id}"),
            )
            attrs = {"id": _dot_text(f"initial:{initial.id}")}
            transition_id = diagram.initial_transitions.get(parent.id)
            mark = overlay.transitions.get(transition_id) if overlay and transition_id else None
            if mark is not None:  # coverage marks the initial transition's arrow
                attrs.update(_dot_emphasis(mark.emphasis))
            _dot_edge(graph, marker, initial.id, attrs)
    for state in children:
        mark = overlay.states.get(state.id) if overlay else None
        if state.kind in _HISTORY_LABELS:
            graph.node(
                _dot_text(state.id),
                label=_HISTORY_LABELS[state.kind],
                shape="circle",
                id=_dot_text(f"state:{state.id}"),
            )
        elif state.kind in ("compound", "parallel"):
            dashed = parent is not None and parent.kind == "parallel"
            with graph.subgraph(name=_dot_text(f"cluster_{state.id}")) as cluster:
                cluster.attr(
                    label=_dot_label(state.lines() + _notes(mark)),
                    style="rounded,dashed" if dashed else "rounded",
                    id=_dot_text(f"cluster:{state.id}"),
                )
                cluster.node(
                    _dot_text(state.id),
                    label="",
                    shape="point",
                    width="0.05",
                    id=_dot_text(f"state:{state.id}"),
                )
                _dot_nested(cluster, diagram, state, overlay, markers)
        else:
            graph.node(_dot_text(state.id), **_dot_state(state, mark))


def _dot_edge(graph: Any, tail: str, head: str, attrs: dict[str, str]) -> None:
    """An edge between two nodes by name, written by hand: graphviz's ``edge()`` reads a
    colon in a name as a port (``a:b`` is node ``a``, port ``b``), which a state id (from
    JSON or SCXML) or an anchor may hold."""
    from graphviz import quoting

    rest = dict(attrs)
    label = rest.pop("label", None)  # first, then the others sorted, as edge() writes them
    attributes = quoting.attr_list(label, kwargs=rest)
    graph.body.append(
        f"\t{quoting.quote(_dot_text(tail))} -> {quoting.quote(_dot_text(head))}{attributes}\n"
    )


def _dot_state(state: StateView, mark: Mark | None) -> dict[str, str]:
    attrs = {
        "label": _dot_label(state.lines() + _notes(mark)),
        "id": _dot_text(f"state:{state.id}"),
    }
    if state.final:
        attrs["peripheries"] = "2"
    if mark is not None:
        attrs.update(_dot_emphasis(mark.emphasis))
        if mark.emphasis is Emphasis.HIT:
            attrs.update(style="rounded,filled", fillcolor="#e3f2fd")
    return attrs


def _dot_transition(transition: TransitionView, mark: Mark | None) -> dict[str, str]:
    lines = transition.lines() + _notes(mark)
    if transition.source == transition.target:
        # Graphviz stacks the labels of a state's self-loops one line apart: keep them on one.
        lines = (" ".join(lines),)
    attrs = {"label": _dot_label(lines), "id": _dot_text(f"transition:{transition.id}")}
    if transition.stays:
        attrs["style"] = "dashed"
    if mark is not None:
        attrs.update(_dot_emphasis(mark.emphasis))
    return attrs


def _dot_emphasis(emphasis: Emphasis) -> dict[str, str]:
    color = _DOT_COLORS[emphasis]
    attrs = {"color": color, "fontcolor": color}
    if emphasis is not Emphasis.DIM:
        attrs["penwidth"] = "2"
    return attrs


def _notes(mark: Mark | None) -> tuple[str, ...]:
    return mark.notes if mark is not None else ()


def _dot_text(text: str) -> str:
    """A name or id as DOT text: graphviz quotes it, its backslashes kept literal (one ending
    the text would escape the closing quote, one before a quote would merge ``a\\"b`` with
    ``a"b``) and never read as HTML (``<b>`` would be the HTML string ``b``)."""
    import graphviz

    # a newline as \n: DOT reads a backslash before a line break as a line continuation
    return graphviz.nohtml(graphviz.escape(text).replace("\n", "\\n"))  # type: ignore[no-any-return]


def _dot_label(lines: tuple[str, ...] | list[str]) -> str:
    """Lines as one DOT label: backslashes kept literal, lines centred, never read as HTML."""
    import graphviz

    escaped = (line.replace("\\", "\\\\").replace("\n", " ") for line in lines)
    return graphviz.nohtml("\\n".join(escaped))  # type: ignore[no-any-return]


# -- Mermaid -------------------------------------------------------------------------------

_MERMAID_STYLES = {
    Emphasis.HIT: "fill:#e3f2fd,stroke:#1565c0,stroke-width:2px",
    Emphasis.MISSED: "stroke:#c62828,stroke-width:2px,color:#c62828",
    Emphasis.DIM: "stroke:#9e9e9e,color:#9e9e9e",
}
_MERMAID_UNSAFE = re.compile(r'[#;:"<>&{}%`\\]')
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def mermaid_source(diagram: Diagram, overlay: Overlay | None = None) -> str:
    """The diagram as Mermaid ``stateDiagram-v2`` text (with a trailing newline)."""
    title = diagram.name if overlay is None else f"{diagram.name}: {overlay.caption}"
    lines = ["---", f"title: {json.dumps(title, ensure_ascii=False)}", "---"]
    lines += ["stateDiagram-v2", "    direction LR"]
    if diagram.nested:
        lines += _mermaid_nested(diagram, None, overlay, "    ")
    lines += _mermaid_states(diagram, overlay)
    lines += _mermaid_transitions(diagram, overlay)
    lines += _mermaid_classes(diagram, overlay)
    return "\n".join(lines) + "\n"


def _mermaid_nested(
    diagram: Diagram, parent: StateView | None, overlay: Overlay | None, indent: str
) -> Iterator[str]:
    """Composite states as nested blocks: a compound state with its ``[*] -->`` initial child,
    a parallel state's regions separated by ``--``."""
    children = diagram.children(parent.id if parent else None)
    if parent is not None and parent.kind == "compound":
        initial = next((state for state in children if state.initial), None)
        if initial is not None:
            yield f"{indent}[*] --> {_mid(initial.id)}"
    regions = 0
    for state in children:
        if parent is not None and parent.kind == "parallel" and state.kind not in _HISTORY_LABELS:
            if regions:  # a history pseudo-state beside the regions is no region of its own
                yield f"{indent}--"
            regions += 1
        if state.kind in ("compound", "parallel"):
            yield f'{indent}state "{_mermaid_text(state.name)}" as {_mid(state.id)}'
            yield f"{indent}state {_mid(state.id)} {{"
            yield from _mermaid_nested(diagram, state, overlay, indent + "    ")
            yield f"{indent}}}"
            yield from _mermaid_notes(diagram, state, overlay, indent)
        elif parent is not None:
            yield f'{indent}state "{_mermaid_text(state.name)}" as {_mid(state.id)}'
            yield from _mermaid_notes(diagram, state, overlay, indent)
            if state.final:
                yield f"{indent}{_mid(state.id)} --> [*]"


def _mermaid_notes(
    diagram: Diagram, state: StateView, overlay: Overlay | None, indent: str
) -> Iterator[str]:
    """A state's description lines: ``entry / ...``, ``exit / ...``, the overlay's notes and
    the transitions that stay in it, marked ``(internal)``."""
    mark = overlay.states.get(state.id) if overlay else None
    for line in state.lines()[1:] + _notes(mark):
        yield f"{indent}{_mid(state.id)} : {_mermaid_text(line)}"
    for transition in diagram.transitions:
        if transition.stays and transition.source == state.id:
            label = _mermaid_edge_label(transition, overlay, "(internal)")
            yield f"{indent}{_mid(state.id)} : {label}"


def _mermaid_states(diagram: Diagram, overlay: Overlay | None) -> Iterator[str]:
    for state in diagram.states:
        if diagram.nested and (state.parent is not None or state.kind in ("compound", "parallel")):
            continue
        yield f'    state "{_mermaid_text(state.name)}" as {_mid(state.id)}'
        yield from _mermaid_notes(diagram, state, overlay, "    ")


def _mermaid_transitions(diagram: Diagram, overlay: Overlay | None) -> Iterator[str]:
    for state in diagram.states:
        if state.initial and state.parent is None:
            yield f"    [*] --> {_mid(state.id)}"
    for transition in diagram.transitions:
        if not transition.stays:
            label = _mermaid_edge_label(transition, overlay)
            yield f"    {_mid(transition.source)} --> {_mid(transition.target)} : {label}"
    for state in diagram.states:
        if state.final and state.parent is None:
            yield f"    {_mid(state.id)} --> [*]"


def _mermaid_edge_label(
    transition: TransitionView, overlay: Overlay | None, suffix: str = ""
) -> str:
    mark = overlay.transitions.get(transition.id) if overlay else None
    words = [*transition.lines(), suffix] if suffix else list(transition.lines())
    if mark is not None and mark.notes:
        words.append(f"({'; '.join(mark.notes)})")
    return _mermaid_text(" ".join(words))


def _mermaid_classes(diagram: Diagram, overlay: Overlay | None) -> Iterator[str]:
    if overlay is None:
        return
    for emphasis in Emphasis:
        ids = [
            _mid(state.id)
            for state in diagram.states
            if (mark := overlay.states.get(state.id)) is not None and mark.emphasis is emphasis
        ]
        if ids:
            yield f"    classDef {emphasis.value} {_MERMAID_STYLES[emphasis]}"
            yield f"    class {','.join(ids)} {emphasis.value}"


_MERMAID_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Words Mermaid's state diagram reads as the start of a statement where it expects an id
#: (any case): a state named so gets a mangled id like any other unsafe id.
_MERMAID_KEYWORDS = frozenset(
    {
        "note",
        "scale",
        "state",
        "class",
        "classdef",
        "direction",
        "style",
        "end",
        "as",
        "acctitle",
        "accdescr",
        "click",
        "href",
        "hide",
    }
)


def _mid(state_id: str) -> str:
    """A state id as one Mermaid token: itself when it is a plain name (not a word Mermaid
    reads as a keyword, ``note``, ``state`` ...), else its name with
    each other character as ``_`` and a short digest of the id (ids from JSON or SCXML may
    hold spaces, colons, dashes ...), the same on every run."""
    if _MERMAID_ID.fullmatch(state_id) and state_id.lower() not in _MERMAID_KEYWORDS:
        return state_id
    digest = hashlib.sha256(state_id.encode()).hexdigest()[:6]
    return f"{re.sub(r'[^A-Za-z0-9_]', '_', state_id)}_{digest}"


def _mermaid_text(text: str) -> str:
    """Text safe on one Mermaid line: characters Mermaid gives a meaning become ``#code;``,
    line breaks and other control characters a space."""
    flat = _CONTROL.sub(" ", text)
    return _MERMAID_UNSAFE.sub(lambda match: f"#{ord(match.group())};", flat)


# -- output --------------------------------------------------------------------------------


def to_dot(
    chart: ChartDef, *, defined: Collection[str] | None = None, overlay: Overlay | None = None
) -> str:
    """``chart`` as DOT text; see ``diagram_of`` for ``defined``. Needs no Graphviz program."""
    return dot_source(diagram_of(chart, defined), overlay)


def to_mermaid(
    chart: ChartDef, *, defined: Collection[str] | None = None, overlay: Overlay | None = None
) -> str:
    """``chart`` as Mermaid ``stateDiagram-v2`` text, for Markdown pages that render it."""
    return mermaid_source(diagram_of(chart, defined), overlay)


def render(
    chart: ChartDef,
    format: Format,
    *,
    defined: Collection[str] | None = None,
    overlay: Overlay | None = None,
) -> bytes:
    """``chart`` drawn in ``format`` (``"dot"``, ``"mermaid"``, ``"svg"`` or ``"png"``).

    SVG and PNG are rendered from the DOT text by Graphviz's ``dot``; raises
    ``GraphvizNotFound`` when it is not installed. An SVG carries the SHA-256 of the DOT it
    was rendered from (see ``svg_dot_digest``).
    """
    if format == "mermaid":
        return to_mermaid(chart, defined=defined, overlay=overlay).encode()
    dot = to_dot(chart, defined=defined, overlay=overlay)
    if format == "dot":
        return dot.encode()
    return render_dot(dot, format)


def render_dot(dot: str, format: Format) -> bytes:
    """DOT text rendered by Graphviz's ``dot`` as ``"svg"`` or ``"png"``.

    Raises ``GraphvizNotFound`` when the program is missing, ``ValueError`` for a text format.
    """
    if format not in BINARY_FORMATS:
        raise ValueError(f"render_dot() renders svg or png, not {format!r}")
    import graphviz

    try:
        output: bytes = graphviz.pipe("dot", format, dot.encode(), quiet=True)
    except graphviz.ExecutableNotFound:
        raise GraphvizNotFound(format) from None
    return _stamp_svg(output, dot) if format == "svg" else output


def dot_digest(dot: str) -> str:
    """The SHA-256 (hex) of DOT text, as stamped into the SVG rendered from it."""
    return hashlib.sha256(dot.encode()).hexdigest()


_STAMP_PATTERN = re.compile(rb"<!-- " + SVG_STAMP.encode() + rb" ([0-9a-f]{64}) -->")


def _stamp_svg(svg: bytes, dot: str) -> bytes:
    stamp = f"<!-- {SVG_STAMP} {dot_digest(dot)} -->\n".encode()
    at = svg.find(b"<svg")
    return svg[:at] + stamp + svg[at:] if at >= 0 else stamp + svg


def svg_dot_digest(svg: bytes) -> str | None:
    """The DOT digest stamped into an SVG by ``render``, or ``None`` if it has none."""
    found = _STAMP_PATTERN.search(svg)
    return found.group(1).decode() if found else None
