"""Breaks found by an independent review of issue 10. Each test reproduces one; fix the code, do
not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from statemachine import State, StateChart

from statecharts import UnsupportedChart, compile_chart


class Model:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def __repr__(self) -> str:
        return "Model()"


def _ids(states: Any) -> list[str]:
    return [state.id for state in states]


def _both(chart_class: type[StateChart[Any]]) -> tuple[Any, Any]:
    """The reference machine and the compiled instance of ``chart_class``, each with a model."""
    reference = chart_class(Model())
    instance = compile_chart(chart_class).create(Model())
    return reference, instance


class FlatPeek(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_exit_state(self, state: Any) -> None:
        self.model.log.append(("exit", state.id, _ids(self.configuration)))

    def on_transition(self) -> None:
        self.model.log.append(("on", _ids(self.configuration)))

    def on_enter_state(self, state: Any) -> None:
        self.model.log.append(("enter", state.id, _ids(self.configuration)))


def test_C3_on_callback_sees_the_reference_configuration() -> None:
    """A chart's `on` action reads `self.configuration`: python-statemachine shows the source
    already exited (`[]`), the compiled runtime still shows `['a']`, so the action decides
    differently without any error."""
    reference, instance = _both(FlatPeek)
    reference.model.log.clear()
    instance.model.log.clear()
    reference.send("go")
    instance.send("go")
    assert instance.model.log == reference.model.log


class NestedPeek(StateChart[Model]):
    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)

    z = State(final=True)
    fin = p.to(z)

    def on_exit_state(self, state: Any) -> None:
        self.model.log.append(("exit", state.id, _ids(self.configuration)))

    def on_transition(self) -> None:
        self.model.log.append(("on", _ids(self.configuration)))


def test_C3_exit_of_a_compound_state_sees_its_children_already_exited() -> None:
    """Leaving compound `p` from child `a`: in python-statemachine `p`'s exit callback sees
    `['p']` and the `on` action sees `[]`; the compiled runtime shows `['p', 'a']` to both."""
    reference, instance = _both(NestedPeek)
    reference.model.log.clear()
    instance.model.log.clear()
    reference.send("fin")
    instance.send("fin")
    assert instance.model.log == reference.model.log


class EventMethod(StateChart[Model]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b)
    hop = b.to(c)
    back = c.to(a)

    def on_enter_b(self) -> None:
        self.hop()


def test_C6_event_method_called_from_a_callback_is_not_silently_dropped() -> None:
    """`on_enter_b` calls `self.hop()`, python-statemachine's usual way to chain an event: the
    reference ends in `c`; the compiled instance has no `hop` method, the AttributeError is
    swallowed as `error.execution`, and it silently stays in `b`. Either run it or refuse it."""
    try:
        chart = compile_chart(EventMethod)
    except UnsupportedChart:
        return
    reference = EventMethod(Model())
    instance = chart.create(Model())
    reference.send("go")
    instance.send("go")
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["c"]


class MachineApi(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_enter_state(self, state: Any) -> None:
        self.model.log.append((state.id, self.current_state_value, self.b.is_active))


def test_C6_machine_api_read_in_a_callback_is_not_silently_swallowed() -> None:
    """A callback reads `self.current_state_value` and `self.b.is_active`, as python-statemachine
    users do: the reference logs them; the compiled instance lacks both attributes and, under
    the default `catch_errors_as_events`, silently skips the callback. Either run it or refuse."""
    try:
        chart = compile_chart(MachineApi)
    except UnsupportedChart:
        return
    reference = MachineApi(Model())
    instance = chart.create(Model())
    reference.send("go")
    instance.send("go")
    assert instance.model.log == reference.model.log


SCXML = """<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="a">
  <state id="a"><transition event="go" target="b"/></state>
  <state id="b"><transition event="go" target="a"/></state>
</scxml>
"""


def test_issue10_a_chart_loaded_from_scxml_compiles(tmp_path: Path) -> None:
    """The issue: charts declared in SCXML (through python-statemachine's loader) compile
    alike. A two-state SCXML chart is refused (`start_configuration_values`), as every W3C
    chart would be."""
    from statemachine.io import load

    path = tmp_path / "toggle.scxml"
    path.write_text(SCXML)
    declared = load(path)
    instance = compile_chart(declared).create()
    reference = declared()
    for event in ["go", "go", "go"]:
        reference.send(event)
        instance.send(event)
        assert _ids(instance.configuration) == _ids(reference.configuration)


class Boom(Exception):
    """Raised by a callback asked to fail."""


class FailingOnModel(Model):
    def on_transition(self, event: Any, boom: bool = False) -> None:
        self.log.append(("on", str(event)))
        if boom:
            raise Boom("on")


class IntoCompound(StateChart[FailingOnModel]):
    out = State(initial=True)

    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)

    err = State(final=True)
    enter = out.to(p)
    error_execution = p.to(err) | out.to(err)


def test_C3_on_action_raising_while_entering_a_compound_state_is_caught() -> None:
    """A default `StateChart` (errors caught as events) enters compound `p` with an `on` action
    that raises: python-statemachine turns it into `error.execution` and ends in `err`; the
    compiled runtime lets `Boom` reach the caller of `send` and stays in `p`."""
    reference = IntoCompound(FailingOnModel())
    instance = compile_chart(IntoCompound).create(FailingOnModel())
    reference.send("enter", boom=True)
    instance.send("enter", boom=True)
    assert _ids(instance.configuration) == _ids(reference.configuration) == ["err"]
    assert instance.model.log == reference.model.log
