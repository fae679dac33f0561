"""Charts python-statemachine's loaders build from SCXML and JSON (a ``prepare_event`` adding
the system variables, executable content queueing events on the machine) and charts with a
``prepare_event`` of their own compile and run as python-statemachine runs them."""

# Rules checked here (docs/spec.md): C3, C6, C15, C18.

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest
from statemachine import HistoryState, State, StateChart
from statemachine.io import load

from statecharts import UnsupportedChart, VirtualClock, compile_chart

SCXML = """<?xml version="1.0" encoding="UTF-8"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s0" version="1.0" datamodel="python">
  <datamodel>
    <data id="count" expr="0" />
    <data id="seen" expr="[]" />
  </datamodel>
  <state id="s0">
    <onentry>
      <send event="late" delay="2s" id="late-one" />
      <send event="soon" delay="500ms" />
      <send event="data.in"><param name="n" expr="41" /></send>
      <raise event="inner" />
    </onentry>
    <transition event="inner" cond="count &lt; 1" target="s0">
      <assign location="count" expr="count + 1" />
      <assign location="seen" expr="seen + [_event.type]" />
    </transition>
    <transition event="data.in" cond="_event.data.n == 41" target="split">
      <cancel sendid="late-one" />
      <assign location="seen" expr="seen + [_event.type]" />
    </transition>
  </state>
  <parallel id="split">
    <state id="left"><state id="l1"/><state id="l2"/></state>
    <state id="right"><state id="r1"/><state id="r2"/></state>
    <transition event="soon" target="l2 r2">
      <assign location="seen" expr="seen + [_event.name]" />
    </transition>
    <transition event="late" target="fail" />
    <transition event="done.state.split" target="fail" />
  </parallel>
  <final id="fail" />
</scxml>
"""


def _quiet(action: Any) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return action()


def test_c18_an_scxml_chart_runs_on_the_virtual_clock_as_python_statemachine_runs_it() -> None:
    reference = _quiet(lambda: load(SCXML, format="scxml", trusted=True)())
    chart = compile_chart(load(SCXML, format="scxml", trusted=True))
    clock = VirtualClock()
    instance = _quiet(lambda: chart.create(clock=clock))
    _quiet(lambda: clock.advance(3))
    expected = [state.id for state in reference.configuration]
    assert [state.id for state in instance.configuration] == expected
    assert expected == ["split", "left", "right", "l2", "r2"]  # several targets, no "late"
    assert instance.model.count == reference.model.count == 1  # the raise looped once
    assert instance.model.seen == reference.model.seen
    assert reference.model.seen == ["internal", "external", "soon", "soon"]


def test_c18_a_json_chart_with_actions_compiles_as_its_scxml_twin_does() -> None:
    document = {
        "name": "Counter",
        "datamodel": {"count": "0"},
        "states": {
            "idle": {
                "initial": True,
                "transitions": [
                    {
                        "event": "bump",
                        "target": "idle",
                        "on": {"assign": {"location": "count", "expr": "count + 1"}},
                    },
                    {"event": "stop", "target": "done", "cond": "count >= 2"},
                ],
            },
            "done": {"final": True},
        },
    }
    text = json.dumps(document)
    reference = load(text, format="json")()
    instance = compile_chart(load(text, format="json")).create()
    for event in ["stop", "bump", "stop", "bump", "stop"]:
        reference.send(event)
        instance.send(event)
        assert [s.id for s in instance.configuration] == [s.id for s in reference.configuration]
        assert instance.model.count == reference.model.count
    assert instance.is_terminated
    assert reference.is_terminated


def test_c18_a_prepare_event_adds_keyword_arguments_to_every_callback() -> None:
    calls: list[tuple[str, Any, Any]] = []

    class Prepared(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, cond="allowed")

        def prepare_event(self, event: Any) -> dict[str, Any]:
            return {"stamp": f"at-{event}"}

        def allowed(self, stamp: str) -> bool:
            calls.append(("cond", stamp, None))
            return True

        def on_go(self, stamp: str, n: int = 0) -> None:
            calls.append(("on", stamp, n))

        def on_enter_b(self, stamp: str) -> None:
            calls.append(("enter", stamp, None))

    Prepared().send("go", n=3)
    reference = list(calls)
    calls.clear()
    outcome = compile_chart(Prepared).create().send("go", n=3)
    assert outcome.applied
    assert calls == reference
    assert ("on", "at-go", 3) in calls


class PreparedTwice(StateChart[Any]):
    """The chart's and the model's ``prepare_event``: the model's reads what the chart's
    adds."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="act")

    def prepare_event(self, more: Any = None) -> dict[str, Any]:
        self.model.log.append(("chart", more))
        return {"extra": 1}

    def act(self, extra: Any = None, more: Any = None) -> None:
        self.model.log.append(("act", extra, more))


class PreparingModel:
    def __init__(self) -> None:
        self.log: list[Any] = []

    def prepare_event(self, extra: Any = None) -> dict[str, Any]:
        self.log.append(("model", extra))
        return {"more": 2}


def test_c18_each_prepare_event_gets_the_arguments_before_any_adds_to_them() -> None:
    """python-statemachine calls every ``prepare_event`` of a group, then adds what each
    returned: the model's does not see the chart's additions (the callbacks see both)."""
    logs = []
    for machine in (
        PreparedTwice(PreparingModel()),
        compile_chart(PreparedTwice).create(PreparingModel()),
    ):
        machine.send("go")
        logs.append(machine.model.log)
    assert logs[1] == logs[0]
    assert ("model", None) in logs[0]
    assert ("model", 1) not in logs[0]
    assert ("act", 1, 2) in logs[0]


class PreparedHistory(StateChart[Any]):
    class p(State.Compound):
        x = State(initial=True)
        y = State()
        h = HistoryState()
        h.to(y)
        step = x.to(y)

    a = State(initial=True)
    hist = a.to(p.h)
    back = p.to(a)

    def prepare_event(self, event: Any, transition: Any) -> dict[str, Any]:
        self.model.log.append((str(event), transition.source.id, transition.target.id))
        return {}


class Logged:
    def __init__(self) -> None:
        self.log: list[Any] = []


def test_c18_a_default_history_transition_gets_its_arguments_prepared_without_callbacks() -> None:
    """python-statemachine prepares the arguments of each group it runs, callbacks or none:
    the default transition of a history state included."""
    logs = []
    for machine in (PreparedHistory(Logged()), compile_chart(PreparedHistory).create(Logged())):
        machine.send("hist")
        logs.append(machine.model.log)
    assert logs[1] == logs[0]
    assert ("hist", "h", "y") in logs[0]


def test_c6_invoke_in_a_loaded_chart_is_refused_naming_the_state() -> None:
    document = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s0" version="1.0"
      datamodel="python">
      <state id="s0">
        <invoke type="http://www.w3.org/TR/scxml/">
          <content><scxml initial="c" version="1.0"><final id="c"/></scxml></content>
        </invoke>
        <transition event="done.invoke" target="end"/>
      </state>
      <final id="end"/>
    </scxml>"""
    with pytest.raises(UnsupportedChart, match=r"invoke.*state 's0'"):
        compile_chart(load(document, format="scxml", trusted=True))


def _trusted(content: str, datamodel: str = "") -> str:
    """A trusted document whose ``go`` transition runs ``content`` (a cond, actions)."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s0" version="1.0" datamodel="python"
    name="Expressive">
  <datamodel><data id="seen" expr="None" />{datamodel}</datamodel>
  <state id="s0">
    <transition event="go" target="s1" {content}
  </state>
  <final id="s1" />
</scxml>"""


def _load(document: str, trusted: bool = True) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return load(document, format="scxml", trusted=trusted)


@pytest.mark.parametrize(
    ("content", "datamodel", "what"),
    [
        ('cond="isinstance(machine, object)" />', "", "passes machine on to a callable"),
        ('cond="event_data.machine.allowed_events" />', "", "reads machine.allowed_events"),
        ('><log expr="In.machine.__class__.__bases__" /></transition>', "", "__class__"),
        (
            '><if cond="True"><assign location="seen" expr="type(machine)" /></if></transition>',
            "",
            "passes machine on",
        ),
        ('><send eventexpr="machine.__class__.states[0].id" /></transition>', "", "__class__"),
        (
            '><send event="e"><param name="p" expr="vars(machine)" /></send></transition>',
            "",
            "passes machine on",
        ),
        ("/>", '<data id="kind" expr="machine.__class__.__mro__" />', "__class__"),
        (
            "><log expr=\"type(_ioprocessors['scxml']._machine)\" /></transition>",
            "",
            "_ioprocessors",
        ),
    ],
)
def test_c18_a_trusted_expression_misusing_the_machine_is_refused_naming_it(
    content: str, datamodel: str, what: str
) -> None:
    """C6/C18: a trusted document's expressions are evaluated as Python with the machine
    among their names (``machine``, ``event_data.machine``, ``In.machine``): one using what
    the compiled instance answers otherwise (its class, python-statemachine's API, handed to
    code the compiler cannot read) is refused at compile time, in a cond, an action nested in
    ``<if>``, a ``<send>``'s ``eventexpr`` and params (compiled when it runs) and the
    datamodel, naming the chart and the expression."""
    with pytest.raises(UnsupportedChart) as caught:
        compile_chart(_load(_trusted(content, datamodel)))
    assert caught.value.chart == "Expressive"
    assert what in caught.value.where, caught.value.where


def test_c18_trusted_expressions_reading_the_model_and_untrusted_ones_compile() -> None:
    """C18: a trusted expression reading what the compiled instance offers
    (``machine.model``, ``machine.configuration``, ``In(...)``) compiles and answers alike; an
    untrusted document's expressions never get the machine and are not scanned."""
    content = (
        "cond=\"In('s0') and machine.model is not None\">"
        '<assign location="seen" expr="[s.id for s in machine.configuration]" /></transition>'
    )
    for trusted in (True, False):
        if not trusted:
            content = '><assign location="seen" expr="machine" /></transition>'
        document = _trusted(content)
        reference = _load(document, trusted)()
        reference.send("go")
        instance = compile_chart(_load(document, trusted)).create()
        instance.send("go")
        assert instance.model.seen == reference.model.seen
        assert [s.id for s in instance.configuration] == ["s1"]


def test_c18_executable_content_too_large_to_read_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """C6/C18: the scan finds a trusted document's expressions by walking its executable
    content's objects, up to a bound; past it, the chart is refused rather than compiled with
    expressions it has not read."""
    from statecharts import _compiler

    monkeypatch.setattr(_compiler, "_EXPRESSION_WALK", 3)
    document = _trusted('><assign location="seen" expr="1" /></transition>')
    with pytest.raises(UnsupportedChart, match="too large for the compiler to read"):
        compile_chart(_load(document))
