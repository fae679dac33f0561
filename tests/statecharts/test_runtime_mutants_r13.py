"""Details the mutation samples of ``statecharts/_runtime.py`` (seeds 2703, 3101) found
untested: the outcomes of failed, queued and dropped events, a chart's descriptors refusing
what they lack, event methods named like python-statemachine's machine API, the names
generated code gives the states it reports, the configuration a final state's ``enter``
callbacks see, and two errors' messages.

Rules checked here (docs/spec.md): C5, C7, C10, C11, C15, C16, C19, C20, C21.
"""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

import pytest
from statemachine import State, StateChart, StateMachine
from statemachine.exceptions import TransitionNotAllowed

from statecharts import InstanceSnapshotError, Outcome, compile_chart, observe_outcomes


def ids(instance: Any) -> list[str]:
    return sorted(state.id for state in instance.configuration)


# -- a chart's descriptors, as its class declares them ----------------------------------------


class SetOnly:
    """A data descriptor with ``__set__`` and no ``__delete__``."""

    def __get__(self, instance: Any, owner: Any = None) -> int:
        return 1

    def __set__(self, instance: Any, value: Any) -> None:
        pass


class DeleteOnly:
    """A data descriptor with ``__delete__`` and no ``__set__``."""

    def __get__(self, instance: Any, owner: Any = None) -> int:
        return 2

    def __delete__(self, instance: Any) -> None:
        pass


class Described(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    settable = SetOnly()
    deletable = DeleteOnly()


def _error(action: str, machine: Any) -> tuple[str, str]:
    try:
        if action == "delete":
            del machine.settable
        else:
            machine.deletable = 5
    except Exception as error:
        return type(error).__name__, str(error)
    return "no error", ""


@pytest.mark.parametrize("action", ["delete", "set"])
def test_c20_a_chart_descriptor_refuses_what_it_lacks_as_in_psm(action: str) -> None:
    """Deleting through a descriptor without ``__delete__`` (setting through one without
    ``__set__``) raises the error Python raises for the chart's own instance."""
    reference = _error(action, Described())
    assert reference[0] == "AttributeError"
    assert _error(action, compile_chart(Described).create()) == reference


# -- event methods ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["id", "name", "current_state", "add_listener"])
def test_c5_an_event_named_like_the_machine_api_has_its_event_method_as_in_psm(name: str) -> None:
    """python-statemachine's class holds the event under its name: ``machine.<name>()``
    sends it; the compiled instance, which lacks that part of the machine API, has the event
    method there too."""
    namespace: dict[str, Any] = {"a": State(initial=True), "b": State()}
    namespace[name] = namespace["a"].to(namespace["b"])
    namespace["back"] = namespace["b"].to(namespace["a"])
    chart = type(StateChart)("Named", (StateChart,), namespace)
    reference = chart()
    getattr(reference, name)()
    instance = compile_chart(chart).create()
    outcome = getattr(instance, name)()
    assert isinstance(outcome, Outcome)
    assert outcome.applied
    assert ids(instance) == ids(reference) == ["b"]


# -- outcomes ---------------------------------------------------------------------------------


class Failing(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, before="boom") | b.to(a)

    def boom(self) -> None:
        raise ValueError("boom")


def test_c7_a_transition_whose_before_raised_reports_its_source_state() -> None:
    outcome = compile_chart(Failing).create().send("go")
    assert (outcome.applied, outcome.reason) == (False, "failed")
    assert outcome.source.id == "a"


class Raising(StateChart[Any]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="later")
    nxt = b.to(c) | c.to(a)


class RaisesLater:
    def __init__(self) -> None:
        self.raised: Any = None

    def later(self, machine: Any) -> None:
        self.raised = machine.raise_("nxt")


def test_c11_raise_from_a_callback_reports_the_event_queued() -> None:
    model = RaisesLater()
    instance = compile_chart(Raising).create(model)
    instance.send("go")
    assert ids(instance) == ["c"]
    assert isinstance(model.raised, Outcome)
    assert (model.raised.applied, model.raised.event, model.raised.reason) == (
        False,
        "nxt",
        "queued",
    )


class StrictRaising(StateMachine):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="later")
    nxt = b.to(c, cond="never") | c.to(a)

    def later(self) -> None:
        self.raise_("nxt")

    def never(self) -> bool:
        return False


def test_c5_a_strict_charts_internal_event_no_transition_takes_is_reported_where_it_was() -> None:
    """A strict chart drops an internal event whose guards all fail, as python-statemachine
    drops it; observers see its outcome, from the state it was tried in."""
    reference = StrictRaising()
    reference.send("go")
    seen: list[Outcome] = []
    with observe_outcomes(lambda instance, outcome: seen.append(outcome)):
        instance = compile_chart(StrictRaising).create()
        instance.send("go")
    assert ids(instance) == ids(reference) == ["b"]
    dropped = [outcome for outcome in seen if outcome.event == "nxt"]
    assert [(o.applied, o.reason, o.source.id) for o in dropped] == [
        (False, "guards_rejected", "b")
    ]


class Prefixed(StateMachine):
    a = State(initial=True)
    b = State()
    error = a.to(b, cond="never") | b.to(a)

    def never(self) -> bool:
        return False


def test_c16_a_rejected_undeclared_event_reads_in_the_traceback_with_the_states_name() -> None:
    """The generated function for any name the prefix ``error`` matches names the state it
    reports (``DEF_a``) in the line the traceback shows."""
    with pytest.raises(TransitionNotAllowed) as raised:
        compile_chart(Prefixed).create().send("error.unexpected")
    lines = traceback.format_exception(raised.value)
    (generated,) = [line for line in lines if "a__any_event" in line]
    assert "_Outcome(False, ev, DEF_a, None, None, 'guards_rejected')" in generated


class Ends(StateChart[Any]):
    a = State(initial=True)
    done = State(final=True)
    finish = a.to(done)
    go = a.to.itself()

    async def on_enter_a(self) -> None:
        pass


def test_c21_an_event_sent_before_an_async_instance_ran_answers_terminated_once_dropped() -> None:
    """Two sends before an async instance first ran: awaiting the second runs both; the
    first ends the machine, so the second is dropped and answered ``terminated``."""

    async def run() -> tuple[Any, Any, list[str]]:
        instance = compile_chart(Ends).create()
        first, second = instance.send("finish"), instance.send("go")
        dropped = await second
        return dropped, await first, ids(instance)

    dropped, first, configuration = asyncio.run(run())
    assert configuration == ["done"]
    assert (dropped.applied, dropped.event, dropped.reason) == (False, "go", "terminated")
    assert (first.applied, first.event) == (False, "finish")


# -- the sample of seed 3101 ------------------------------------------------------------------


def test_c10_create_refuses_a_start_value_pointing_to_resume() -> None:
    with pytest.raises(TypeError, match=r"'start_value' option \(use resume\(\) to start in"):
        compile_chart(Failing).create(start_value="b")


def test_c19_an_unstarted_async_instance_cannot_be_snapshotted_saying_why() -> None:
    instance = compile_chart(Ends).create()
    with pytest.raises(InstanceSnapshotError) as raised:
        instance.snapshot()
    assert str(raised.value) == (
        "invalid snapshot: instance: its initial state is not entered yet: send an event or "
        "await activate_initial_state() first"
    )


class TwoEnds(StateChart[Any]):
    """Two top-level final states, each recording what its ``enter`` callback sees."""

    a = State(initial=True)
    left = State(final=True)
    right = State(final=True)
    go_left = a.to(left)
    go_right = a.to(right)


class Sees:
    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str], bool]] = []

    def on_enter_left(self, machine: Any) -> None:
        self.seen.append(("left", ids(machine), machine.is_terminated))

    def on_enter_right(self, machine: Any) -> None:
        self.seen.append(("right", ids(machine), machine.is_terminated))


def test_c15_each_final_state_is_the_configuration_while_its_enter_callbacks_run() -> None:
    """python-statemachine's engine stops after a top-level final state's ``enter``
    callbacks, so they see that state, the machine not yet terminated; each final state its
    own, whichever was entered first."""
    chart = compile_chart(TwoEnds)
    seen: list[Any] = []
    for event in ("go_left", "go_right", "go_left"):
        reference, model = Sees(), Sees()
        getattr(TwoEnds(reference), event)()
        chart.create(model).send(event)
        assert model.seen == reference.seen
        seen.extend(model.seen)
    assert seen == [
        ("left", ["left"], False),
        ("right", ["right"], False),
        ("left", ["left"], False),
    ]
