"""State ids, event names and chart names holding characters DOT and Mermaid give a meaning.

Charts loaded from JSON (or SCXML) may name states anything: ``C:\\``, ``a"b``, ``<b>``,
``x|y``, ``{a}``, a line break. The DOT drawn from them must be read by Graphviz's ``dot`` as
one node per state (no two ids merged, none read as HTML), and the Mermaid must keep every
such character out of its tokens.
"""

# Rules checked here (docs/spec.md): D2.

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from statemachine.exceptions import InvalidDefinition
from statemachine.io import load

from statecharts import ChartDef, compile_chart, to_dot, to_mermaid

#: Ids with a character special to DOT quoted strings, escStrings or HTML-like labels, or
#: to Mermaid; two of them differ only in a backslash before a quote.
SPECIAL_IDS = (
    "C:\\",
    'a"b',
    'a\\"b',
    "<b>",
    "x|y",
    "{a}",
    "a\nb",
    "node",
    "a:b",
    "tab\there",
    "\\\\",
    "end\\\n",
    "end\\",
    "ends\\n",
    "ends\n",
    "p:initial",
    "[*]",
)


def _flat_chart(ids: tuple[str, ...], name: str = "Paths", plain: bool = False) -> ChartDef:
    """A JSON-loaded chart through ``ids`` in turn, each event named after its state (or
    ``go<n>``: python-statemachine reads some characters in event names, ``;`` ...)."""
    states: dict[str, Any] = {}
    for index, state in enumerate(ids):
        following = ids[index + 1] if index + 1 < len(ids) else "done"
        event = f"go{index}" if plain else f"go{state}"
        states[state] = {"transitions": [{"event": event, "target": following}]}
    states[ids[0]]["initial"] = True
    states["done"] = {"final": True}
    return compile_chart(load(json.dumps({"name": name, "states": states}), format="json"))


def _nested_chart(ids: tuple[str, str, str, str]) -> ChartDef:
    """A compound state with a history state and a parallel state of two regions, all named
    by ``ids``."""
    outer, inner, left, right = ids
    document = {
        "name": "Nested",
        "states": {
            outer: {
                "initial": True,
                "states": {
                    inner: {
                        "initial": True,
                        "parallel": True,
                        "states": {
                            left: {"states": {f"{left}1": {"initial": True}}},
                            right: {"states": {f"{right}1": {"initial": True}}},
                        },
                        "transitions": [{"event": f"go{inner}", "target": "done"}],
                    },
                    "done": {"final": True},
                },
                "history": {f"{outer}H": {"type": "deep"}},
            },
        },
    }
    return compile_chart(load(json.dumps(document), format="json"))


def _svg(dot: str) -> str:
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert not done.stderr, done.stderr.decode()
    return done.stdout.decode()


def _node_count(svg: str) -> int:
    return svg.count('class="node"')


def _edge_count(svg: str) -> int:
    return svg.count('class="edge"')


@pytest.mark.graphviz
def test_D2_dot_of_ids_special_to_dot_renders_one_node_per_state() -> None:
    """D2: every state id, special characters and all, is one node of its own (``a"b`` and
    ``a\\"b`` stay two, ``<b>`` is no HTML string), and every transition one edge."""
    chart = _flat_chart(SPECIAL_IDS)
    svg = _svg(to_dot(chart))
    assert _node_count(svg) == len(chart.states) + 1  # and the initial dot
    assert _edge_count(svg) == len(chart.transitions) + 1  # and the initial arrow


@pytest.mark.graphviz
def test_D2_a_backslash_ending_an_id_keeps_its_svg_id() -> None:
    """D2: the SVG element of state ``C:\\`` has the id ``state:C:\\`` (a report finds the
    state by it)."""
    svg = _svg(to_dot(_flat_chart(("C:\\", 'a"b'))))
    assert 'id="state:C:\\"' in svg
    assert 'id="state:a&quot;b"' in svg


@pytest.mark.graphviz
def test_D2_dot_of_a_chart_named_with_special_characters_renders() -> None:
    """D2: the chart's name (from the JSON ``name``) is the graph's name, title and comment;
    a backslash, a quote, ``<...>`` or a line break in it draw."""
    chart = _flat_chart(("a",), name='We\\ird"<Name>\nx\\')
    dot = to_dot(chart)
    assert dot.splitlines()[0].startswith("// ")
    assert dot.splitlines()[1].startswith("digraph ")
    _svg(dot)


@pytest.mark.graphviz
@pytest.mark.parametrize(
    "ids",
    [("C:\\", "<b>", "x|y", "{a}"), ('a"b', 'a\\"b', "a\nb", "c\\"), ("p", "p:initial", "q", "r")],
)
def test_D2_nested_states_with_special_ids_draw_as_clusters(
    ids: tuple[str, str, str, str],
) -> None:
    """D2: compound and parallel states named with special characters are clusters of their
    own, each with its anchor, history and initial markers."""
    chart = _nested_chart(ids)
    svg = _svg(to_dot(chart))
    assert svg.count('class="cluster"') == 4  # outer, the parallel state, its two regions
    # every state a node (compound ones as their anchor) and the markers of the three
    # compound states with an initial child, and the top initial dot
    assert _node_count(svg) == len(chart.states) + 3 + 1


_MERMAID_TOKEN = r"(?:\[\*\]|[A-Za-z_][A-Za-z0-9_]*)"
_MERMAID_TEXT = r"[^\"\n:;#<>&{}%`\\]*(?:\#\d+;[^\"\n:;#<>&{}%`\\]*)*"
_MERMAID_LINE = re.compile(
    rf"""\s*(?:
        stateDiagram-v2
        | direction\ LR
        | state\ "{_MERMAID_TEXT}"\ as\ {_MERMAID_TOKEN}
        | state\ {_MERMAID_TOKEN}\ \{{
        | \}}
        | --
        | {_MERMAID_TOKEN}\ -->\ {_MERMAID_TOKEN}(?:\ :\ {_MERMAID_TEXT})?
        | {_MERMAID_TOKEN}\ :\ {_MERMAID_TEXT}
    )""",
    re.VERBOSE,
)


def _check_mermaid(text: str) -> None:
    lines = text.splitlines()
    assert lines[0] == "---"
    assert lines[1].startswith("title: ")
    json.loads(lines[1].removeprefix("title: "))  # a JSON string is a YAML scalar
    assert lines[2] == "---"
    for line in lines[3:]:
        assert _MERMAID_LINE.fullmatch(line), line


def test_D2_mermaid_of_ids_special_to_dot_keeps_them_out_of_its_tokens() -> None:
    """D2: in Mermaid, each special id is a plain token of its own (its characters as ``_``
    and a digest) and each text line holds no character Mermaid reads, line breaks
    included."""
    chart = _flat_chart(SPECIAL_IDS, name='We\\ird"<Name>\nx')
    text = to_mermaid(chart)
    _check_mermaid(text)
    declared = re.findall(r'^    state ".*" as (\S+)$', text, re.MULTILINE)
    assert len(declared) == len(set(declared)) == len(chart.states)
    _check_mermaid(to_mermaid(_nested_chart(("C:\\", "<b>", "x|y", "{a}"))))


_SPECIAL = st.text(alphabet='ab\\"<>{}|:;#\n\t\r -*[]', min_size=1, max_size=6)


@pytest.mark.graphviz
@settings(max_examples=25)
@given(ids=st.lists(_SPECIAL, min_size=1, max_size=4, unique=True))
def test_D2_dot_of_any_ids_renders_one_node_per_state(ids: list[str]) -> None:
    """D2 (property): whatever characters distinct state ids hold, ``dot`` reads the DOT as
    one node per state and one edge per transition, and the Mermaid is well formed."""
    assume("done" not in ids)
    try:
        chart = _flat_chart(tuple(ids), plain=True)
    except InvalidDefinition:  # python-statemachine's reader refuses some ids (``;`` ...)
        assume(False)
        raise
    svg = _svg(to_dot(chart))
    assert _node_count(svg) == len(chart.states) + 1
    assert _edge_count(svg) == len(chart.transitions) + 1
    _check_mermaid(to_mermaid(chart))


@pytest.mark.parametrize("word", ["note", "Scale", "state", "class", "classDef", "end", "style"])
def test_D2_mermaid_mangles_a_state_named_like_a_mermaid_keyword(word: str) -> None:
    """D2: a state named ``note`` (``scale``, ``state``, ``end`` ..., any case) would open a
    statement where Mermaid expects an id: it gets a mangled token like other unsafe ids."""
    chart = _flat_chart((word, "other"))
    text = to_mermaid(chart)
    _check_mermaid(text)
    tokens = re.findall(r"^\s*(\S+) --> (\S+)", text, re.MULTILINE)
    names = {token for pair in tokens for token in pair}
    assert word not in names
    assert any(name.startswith(f"{word}_") for name in names)
