"""Breaks found by an independent review of issue 10 (round 3). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C3, C6, C7, C8, C11, C13, C15, C17, C18.

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import pytest
from statemachine import State, StateChart, StateMachine

from statecharts import UnsupportedChart, compile_chart


class Model:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []
        self.calls = 0

    def __repr__(self) -> str:
        return "Model()"


def _ids(states: Any) -> list[str]:
    return [state.id for state in states]


def _run_both(chart_class: type[StateChart[Any]], events: list[str]) -> tuple[Any, Any]:
    """Send ``events`` to the reference machine and to the compiled instance; return both."""
    reference = chart_class(Model())
    instance = compile_chart(chart_class).create(Model())
    for event in events:
        reference.send(event)
        instance.send(event)
    return reference, instance


# -- C15: an internal self-transition does not list its state twice ----------------------------


class InternalLoop(StateChart[Model]):
    a = State(initial=True)
    b = State(final=True)
    a.to.itself(internal=True, cond="second_time")
    finish = a.to(b)

    def second_time(self) -> bool:
        self.model.calls += 1
        return self.model.calls == 2

    def on_enter_a(self) -> None:
        self.model.log.append(_ids(self.configuration))


def test_C15_an_internal_self_transition_shows_its_state_once() -> None:
    """An eventless internal self-transition on `a` re-enters `a` (a statechart, so the
    hierarchical runtime runs it): python-statemachine's `enter` sees `['a']`, the compiled
    instance shows `['a', 'a']`, the state twice."""
    reference, instance = _run_both(InternalLoop, ["finish"])
    assert reference.model.log == [["a"], ["a"]]
    assert instance.model.log == reference.model.log


# -- C11 / C3: create() runs the queued events before checking eventless guards again ----------


class PingOnEntry(StateChart[Model]):
    a = State(initial=True)
    b = State()
    a.to(b, cond="ready")
    b.to(a, cond="never")
    ping = b.to.itself(internal=True, on="pinged")

    def on_enter_a(self) -> None:
        self.send("ping")

    def ready(self) -> bool:
        self.model.log.append("ready")
        return True

    def never(self) -> bool:
        self.model.log.append("never")
        return False

    def pinged(self) -> None:
        self.model.log.append("pinged")


def test_C11_create_takes_the_queued_event_before_checking_eventless_guards_again() -> None:
    """The initial state's `enter` sends `ping`; python-statemachine's start runs the macrostep
    and then `ping` (log: ready, never, pinged, never); the compiled `create()` runs one more
    macrostep first, calling the `never` guard a second time before `pinged`."""
    reference = PingOnEntry(Model())
    instance = compile_chart(PingOnEntry).create(Model())
    assert reference.model.log == ["ready", "never", "pinged", "never"]
    assert instance.model.log == reference.model.log


# -- C7: a failing initial transition content of a compound state at create ---------------------


class FailingInitialContent(StateChart[Model]):
    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b) | b.to(a)

    out = State()
    leave = p.to(out)
    back = out.to(p)

    def on_transition(self, event: Any, target: Any) -> None:
        self.model.log.append((str(event), target.id))
        if str(event) == "__initial__":
            raise ValueError("initial content failed")


def test_C7_a_failing_initial_content_at_create_does_not_leave_an_empty_instance() -> None:
    """`on_transition` raises while the compound `p` runs its initial transition on start:
    python-statemachine's constructor raises the ValueError; `create()` returns an instance
    whose configuration is empty (no state at all), silently."""
    with pytest.raises(ValueError, match="initial content failed"):
        FailingInitialContent(Model())
    with pytest.raises(ValueError, match="initial content failed"):
        compile_chart(FailingInitialContent).create(Model())


# -- C15: Instance.configuration holds states as python-statemachine's does ---------------------


class ReadsConfiguration(StateChart[Model]):
    class p(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b) | b.to(a)

    def on_enter_b(self) -> None:
        self.model.log.append(
            [(s.id, s.parent.id if s.parent else None, s.is_atomic) for s in self.configuration]
        )


def test_C15_configuration_members_have_the_reference_states_attributes() -> None:
    """An `enter` callback walks `self.configuration` reading `state.parent.id` and
    `state.is_atomic`, as python-statemachine's states offer: the compiled configuration holds
    `StateDef`s (`parent` a string, no `is_atomic`), the AttributeError becomes an
    `error.execution` nobody handles, and the callback silently does nothing."""
    reference, instance = _run_both(ReadsConfiguration, ["go"])
    assert reference.model.log == [[("p", None, False), ("b", "p", True)]]
    assert instance.model.log == reference.model.log


# -- C6: python-statemachine's machine API reached other than through `self.<name>` -------------


class MachineArgument(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_enter_b(self, machine: Any) -> None:
        self.model.log.append((list(machine.configuration_values), machine.current_state_value))


def test_C6_machine_api_read_through_the_machine_argument_is_refused_or_run() -> None:
    """A callback asks for `machine` (or `event_data.machine`) and reads
    `configuration_values`/`current_state_value`, as python-statemachine users do: the
    compiled chart accepts it, passes its instance, and the AttributeError is swallowed as an
    unhandled `error.execution`: the callback silently does nothing."""
    try:
        compile_chart(MachineArgument)
    except UnsupportedChart:
        return
    reference, instance = _run_both(MachineArgument, ["go"])
    assert reference.model.log == [(["b"], "b")]
    assert instance.model.log == reference.model.log


class MachineGetattr(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_enter_state(self, state: Any) -> None:
        self.model.log.append((state.id, getattr(self, state.id).is_active))


def test_C6_machine_api_read_through_getattr_is_refused_or_run() -> None:
    """The compiler's check for machine API reads only sees `self.<name>` in the bytecode;
    `getattr(self, state.id).is_active` passes it, and on the compiled instance the
    AttributeError is swallowed as `error.execution`: python-statemachine logs each state
    entered, the compiled instance logs nothing."""
    try:
        compile_chart(MachineGetattr)
    except UnsupportedChart:
        return
    reference, instance = _run_both(MachineGetattr, ["go"])
    assert reference.model.log == [("a", True), ("b", True)]
    assert instance.model.log == reference.model.log


class MachineInClosure(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_enter_b(self) -> None:
        def read() -> Any:
            return self.current_state_value

        self.model.log.append(read())


def test_C6_machine_api_read_in_a_nested_function_is_refused_or_run() -> None:
    """`self.current_state_value` read inside a nested function (its own code object, `self`
    a free variable there) escapes the compiler's check: python-statemachine logs `'b'`, the
    compiled instance swallows the AttributeError and logs nothing."""
    try:
        compile_chart(MachineInClosure)
    except UnsupportedChart:
        return
    reference, instance = _run_both(MachineInClosure, ["go"])
    assert reference.model.log == ["b"]
    assert instance.model.log == reference.model.log


# -- C7: an interrupt (a BaseException) leaves the instance where python-statemachine leaves it --


class Interrupted(BaseException):
    """What a callback sees when its run is interrupted: as KeyboardInterrupt, or
    asyncio.CancelledError when a task awaiting the event is cancelled."""


class _Interruptible:
    def on_enter_b(self, interrupt: bool = False) -> None:
        self.model.log.append("enter b")  # type: ignore[attr-defined]
        if interrupt:
            raise Interrupted

    def on_enter_c(self) -> None:
        self.model.log.append("enter c")  # type: ignore[attr-defined]


class FlatInterruptible(_Interruptible, StateChart[Model]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b) | b.to(c) | c.to(a)


class FlatStrictInterruptible(_Interruptible, StateMachine):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b) | b.to(c) | c.to(a)


class NestedStrictInterruptible(_Interruptible, StateMachine):
    class p(State.Compound):
        a = State(initial=True)
        b = State()
        c = State()
        go = a.to(b) | b.to(c) | c.to(a)


@pytest.mark.parametrize(
    "chart_class", [FlatInterruptible, FlatStrictInterruptible, NestedStrictInterruptible]
)
def test_C7_an_interrupted_enter_leaves_the_instance_where_the_reference_does(
    chart_class: type[StateChart[Any]],
) -> None:
    """`enter b` is interrupted by a BaseException (Ctrl-C, a cancelled task): python-statemachine
    only rolls back for an `Exception`, so it is in `b` and the next `go` enters `c`; the
    compiled instance rolls back to `a`, and the next `go` runs `a -> b` and its `enter` again."""
    reference = chart_class(Model())
    instance = compile_chart(chart_class).create(Model())
    for machine in (reference, instance):
        with pytest.raises(Interrupted):
            machine.send("go", interrupt=True)
        machine.send("go")
    assert reference.model.log == ["enter b", "enter c"]
    assert instance.model.log == reference.model.log
    assert _ids(instance.configuration) == _ids(reference.configuration)


# -- C3 / C17: a deadline already passed ------------------------------------------------------


class Deadline(StateChart[Model]):
    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="arm")
    timeout = b.to(c)

    def arm(self, remaining_ms: float = -5.0) -> None:
        self.send("timeout", delay=remaining_ms)  # the deadline has already passed

    def on_enter_c(self) -> None:
        self.model.log.append("timed out")


def test_C3_a_delay_computed_from_a_passed_deadline_is_not_silently_lost() -> None:
    """A callback arms a timeout as `delay=deadline - now`, already negative: python-statemachine
    runs it at once (due in the past) and ends in `c`; the compiled runtime raises ValueError
    inside the callback, errors-as-events swallows it, and the instance silently stays in `b`
    with its timeout lost. C17 may make a negative delay a typed error, but not a silent one."""
    reference = Deadline(Model())
    instance = compile_chart(Deadline).create(Model())
    reference.send("go")
    instance.send("go")
    assert reference.model.log == ["timed out"]
    assert (_ids(instance.configuration), instance.model.log) == (["c"], ["timed out"])


# -- C8 / C18: what a chart's own prepare_event adds reaches callbacks as the reference passes it


class RequestIds(StateChart[Model]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", before="stamp_before", on="stamp_on") | b.to(a)

    def prepare_event(self) -> dict[str, Any]:
        self.model.calls += 1  # a fresh request id (or timestamp) per call
        return {"request_id": self.model.calls}

    def allowed(self, request_id: int) -> bool:
        self.model.log.append(("cond", request_id))
        return True

    def stamp_before(self, request_id: int) -> None:
        self.model.log.append(("before", request_id))

    def stamp_on(self, request_id: int) -> None:
        self.model.log.append(("on", request_id))

    def on_exit_a(self, request_id: int) -> None:
        self.model.log.append(("exit a", request_id))

    def on_enter_b(self, request_id: int) -> None:
        self.model.log.append(("enter b", request_id))


def test_C8_a_prepare_event_runs_as_often_as_in_the_reference() -> None:
    """A chart's own `prepare_event` hands each event a request id (a counter, a uuid, a
    timestamp): python-statemachine calls it once per group of callbacks, so `cond`, `before` and
    `on` share an id; the compiled runtime calls it before every callback, and the guard, the
    `on` action and `enter b` each see a different id than python-statemachine passes them."""
    reference, instance = _run_both(RequestIds, ["go"])
    assert reference.model.log[0] == ("cond", reference.model.log[1][1])
    assert instance.model.log == reference.model.log


# -- C13: events matched by a wildcard or prefix do not generate code forever --------------------


class ToolCalls(StateChart[Model]):
    class p(State.Compound):
        idle = State(initial=True)
        busy = State()
        call = idle.to(busy, event="tool.*") | busy.to(idle, event="tool.*")


def test_C13_distinct_events_matched_by_a_prefix_keep_memory_flat() -> None:
    """An agent runtime sends `tool.<call id>` events, one name per call, to a statechart with a
    `tool.*` transition: the compiled runtime generates and keeps a new selection function and
    microstep (and their source text) for every name, about 5 KB and 13 ms per event, without
    bound (python-statemachine: 3 ms, nothing kept); a long-running instance leaks."""
    instance = compile_chart(ToolCalls).create(Model())
    for number in range(50):
        instance.send(f"tool.warmup{number}")
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for number in range(300):
            instance.send(f"tool.call{number}")
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert _ids(instance.configuration) == ["p", "idle"]
    assert grown < 300 * 500, f"{grown / 300:.0f} bytes kept per distinct event"
