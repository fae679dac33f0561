"""Rules of the statechart runtime that a mutation sample of ``statecharts/_hierarchy.py``
found untested: what an outcome reports, what callbacks of a targetless transition get, and how
the generated source names an initial transition.

Rules checked here (docs/spec.md): C8, C16, M1.
"""

from __future__ import annotations

from typing import Any

from statemachine import State, StateChart

from statecharts import compile_chart


def ids(states: Any) -> list[str]:
    return [state.id for state in states]


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []
        self.ready = False


class Shop(StateChart[Log]):
    """A compound state with a guarded transition, a targetless one whose ``on`` callback
    asks for the configurations, a ``before`` that can raise, and a final state."""

    class open(State.Compound):
        browsing = State(initial=True)
        cart = State()
        add = browsing.to(cart) | cart.to.itself()
        pay = cart.to(browsing, cond="is_ready", before="charge")
        look = browsing.to(None, on="seen")

    closed = State(final=True)
    close = open.to(closed)

    def is_ready(self) -> bool:
        return bool(self.model.ready)

    def charge(self, boom: bool = False) -> None:
        if boom:
            raise ValueError("card declined")

    def seen(self, previous_configuration: Any, new_configuration: Any, source: Any) -> None:
        self.model.log.append((ids(previous_configuration), ids(new_configuration), source.id))


def test_m1_an_applied_statechart_event_reports_where_it_went_and_what_it_took() -> None:
    instance = compile_chart(Shop).create(Log())
    outcome = instance.send("add")
    assert outcome.applied
    assert bool(outcome)
    assert outcome.reason is None
    assert outcome.source.id == "browsing"
    assert outcome.target is not None
    assert outcome.target.id == "cart"
    assert outcome.transition is not None
    assert outcome.transition.id == "browsing:add:cart"
    assert [t.id for t in outcome.transitions] == ["browsing:add:cart"]


def test_m1_an_event_every_guard_rejects_is_ignored_as_guards_rejected() -> None:
    instance = compile_chart(Shop).create(Log())
    instance.send("add")
    outcome = instance.send("pay")
    assert not outcome.applied
    assert not outcome
    assert outcome.reason == "guards_rejected"
    assert outcome.target is None
    assert outcome.transition is None
    assert ids(instance.configuration) == ["open", "cart"]


def test_m1_a_transition_a_raising_before_cancels_is_reported_failed() -> None:
    """With errors caught as events (the StateChart default), a ``before`` that raises
    cancels the transition: the outcome says ``failed`` and the instance stays."""
    model = Log()
    model.ready = True
    instance = compile_chart(Shop).create(model)
    instance.send("add")
    outcome = instance.send("pay", boom=True)
    assert not outcome.applied
    assert outcome.reason == "failed"
    assert outcome.source.id == "cart"
    assert ids(instance.configuration) == ["open", "cart"]


def test_m1_an_event_after_termination_is_ignored_as_terminated() -> None:
    instance = compile_chart(Shop).create(Log())
    assert instance.send("close").applied
    assert instance.is_terminated
    for event in ("add", "close", "nope"):
        outcome = instance.send(event)
        assert not outcome.applied
        assert outcome.reason == "terminated"


def test_c8_a_targetless_statechart_transition_s_on_callback_gets_the_configurations() -> None:
    logs = []
    for machine in (Shop(Log()), compile_chart(Shop).create(Log())):
        machine.send("look")
        logs.append(machine.model.log)
    assert logs[0] == logs[1] == [(["open", "browsing"], ["open", "browsing"], "browsing")]


class Entered(StateChart[Log]):
    class open(State.Compound):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

    def on_enter_open(self, transition: Any) -> None:
        self.model.log.append(("enter open", transition.event, transition.target.id))


def test_c16_the_generated_source_names_the_start_transition_transition_initial() -> None:
    """The transition python-statemachine makes to enter the initial state has no declaration
    of its own: its constant in the generated source is ``TRANSITION_initial``."""
    logs = []
    for machine in (Entered(Log()), compile_chart(Entered).create(Log())):
        logs.append(machine.model.log)
    assert logs[0] == logs[1]
    assert "transition=TRANSITION_initial" in compile_chart(Entered).source()


class Tools(StateChart[Log]):
    """Undeclared names a prefix matches (``tool.<id>``), one transition whose ``before``
    raises when asked to; a targetless one whose ``after`` asks for the configurations."""

    class p(State.Compound):
        idle = State(initial=True)
        busy = State()
        call = idle.to(busy, event="tool.*", before="check") | busy.to(idle, event="tool.*")
        tick = idle.to(None, after="ticked")

    def check(self, boom: bool = False) -> None:
        if boom:
            raise ValueError("refused")

    def ticked(self, previous_configuration: Any, new_configuration: Any) -> None:
        self.model.log.append((ids(previous_configuration), ids(new_configuration)))


def test_m1_an_undeclared_name_whose_transition_a_raising_before_cancels_is_reported_failed() -> (
    None
):
    """The outcome names the event sent, not the first name the code was generated for."""
    instance = compile_chart(Tools).create(Log())
    assert instance.send("tool.a1").applied
    assert instance.send("tool.x").applied
    outcome = instance.send("tool.b2", boom=True)
    assert not outcome.applied
    assert (outcome.event, outcome.reason, outcome.source.id) == ("tool.b2", "failed", "idle")
    assert ids(instance.configuration) == ["p", "idle"]


def test_c8_a_targetless_statechart_transition_s_after_callback_gets_the_configurations() -> None:
    logs = []
    for machine in (Tools(Log()), compile_chart(Tools).create(Log())):
        machine.send("tick")
        logs.append(machine.model.log)
    assert logs[0] == logs[1] == [(["p", "idle"], ["p", "idle"])]


class Switches(StateChart[Log]):
    """python-statemachine's StateMachine way: the configuration switches at once after the
    ``on`` callbacks (``atomic_configuration_update``), so exit and ``on`` callbacks see the
    whole old configuration."""

    atomic_configuration_update = True

    class p(State.Compound):
        class q(State.Compound):
            a = State(initial=True)

        b = State()
        go = q.to(b, on="moving")

    def on_exit_a(self) -> None:
        self.model.log.append(("exit a", ids(self.configuration)))

    def on_exit_q(self) -> None:
        self.model.log.append(("exit q", ids(self.configuration)))

    def moving(self) -> None:
        self.model.log.append(("on", ids(self.configuration)))

    def on_enter_b(self) -> None:
        self.model.log.append(("enter b", ids(self.configuration)))


def test_c8_with_an_atomic_configuration_update_callbacks_see_the_old_configuration_until_on() -> (
    None
):
    logs = []
    for machine in (Switches(Log()), compile_chart(Switches).create(Log())):
        machine.send("go")
        logs.append(machine.model.log)
    assert logs[0] == logs[1]


class PreparedSteps(StateChart[Log]):
    """A chart with a ``prepare_event``: each group of a microstep gets the arguments
    python-statemachine prepares for it, the state it concerns among them."""

    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b)

    def prepare_event(self, event: Any) -> dict[str, Any]:
        return {"extra": str(event)}

    def on_exit_a(self, state: Any, extra: str) -> None:
        self.model.log.append(("exit", state.id, extra))

    def on_enter_b(self, state: Any, extra: str) -> None:
        self.model.log.append(("enter", state.id, extra))


def test_c8_with_prepare_event_each_state_callback_gets_its_own_state() -> None:
    logs = []
    for machine in (PreparedSteps(Log()), compile_chart(PreparedSteps).create(Log())):
        machine.send("go")
        logs.append(machine.model.log)
    assert logs[0] == logs[1] == [("exit", "a", "go"), ("enter", "b", "go")]
