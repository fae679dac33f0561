"""Review round 18c of issue 10 (rules C5, C8, C15, C17, C18, C19, C21): a hostile review of
6b77f24 and 5130550, which compute the event object callbacks receive once per generated
function (``event = _event_now(inst, EVENT_x)``, flagged copies built by ``_flagged`` from
``_Queues.trigger``), send ``raise_`` from outside a run through ``_send_with_options``,
read delays as given (``_delay_ms``), have a strict chart's terminated instance refuse events
(``_refuse_when_stopped``) and keep how queued events and timers were sent in snapshots
(``"sent": {"send_id", "delay", "internal"}``).

python-statemachine 3.2 (the reference) is the oracle: each test runs a chart on it and on
the compiled runtime and asserts the compiled answer is the reference's (python-statemachine
has no snapshots: there the rule is C19's own, a damaged snapshot gives
``InstanceSnapshotError`` naming the field). The first part holds the breaks found (each fails
on 5130550):

1. C8 -- a callback or guard named ``event`` (``on="event"``, ``cond="event"``) is shadowed by
   the local ``event = _event_now(...)`` that 5130550 writes at the top of a generated
   function (``_RESERVED`` in ``_codegen.py`` lacks ``event``): the generated code calls the
   event object instead of the callback (``Event.__call__`` -> ``AssertionError`` in
   python-statemachine's ``Event.put``), so the callback never runs; swallowed as
   ``error.execution`` by default, an ``AssertionError`` from inside the library otherwise.
2. C19 -- a snapshot whose ``sent.delay`` is an integer too large for a float (valid JSON)
   makes ``restore`` raise ``OverflowError`` (``math.isfinite`` in ``_snapshot._sent``) rather
   than ``InstanceSnapshotError`` naming the field (``_milliseconds`` handles it for
   ``due_in_ms``).
3. C8/C17 -- a delay equal in value to the declared one but of another type (``5.0`` sent to
   ``Event(delay=5)``, ``5`` to ``Event(delay=5.0)``, ``0.0`` to an event declared with none)
   reads the declared number in callbacks (``_sent_delay`` and ``_flagged`` compare with
   ``==``); and ``_flagged_events`` is keyed by the delay, where ``3 == 3.0``: an event sent
   with ``delay=3.0`` after one sent with ``delay=3`` reads ``3``. python-statemachine builds
   each send's event object with the delay as given.

The second part pins behaviours checked that hold.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from typing import Any

import pytest
from statemachine import Event, State, StateChart
from statemachine.exceptions import TransitionNotAllowed
from statemachine.io import load

from statecharts import InstanceSnapshotError, VirtualClock, compile_chart


class Log:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []


def _ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


# ============================================================================================
# Breaks (each fails on 5130550)
# ============================================================================================


class _NamedEvent(StateChart[Log]):
    """An ``on`` callback named ``event`` next to one asking for the ``event`` object."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on=["event", "other"]) | b.to(a)

    def event(self, x: Any = None) -> None:
        self.model.log.append(("event callback", x))

    def other(self, event: Any) -> None:
        self.model.log.append(("other", str(event)))


class _GuardNamedEvent(StateChart[Log]):
    """A guard named ``event`` (it says no) next to a callback asking for ``event``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="event", on="other") | b.to(a)

    def event(self) -> bool:
        self.model.log.append("guard")
        return False

    def other(self, event: Any) -> None:
        self.model.log.append(("other", str(event)))


def _named_run(chart: type[StateChart[Log]], compiled: bool, sends: list[Any]) -> Any:
    model = Log()
    machine: Any = compile_chart(chart).create(model) if compiled else chart(model)
    for args, kwargs in sends:
        try:
            machine.send("go", *args, **kwargs)
        except Exception as error:
            model.log.append(type(error).__name__)
    return model.log, _ids(machine)


# break 1 (C8): the generated ``a__go`` reads ``event = _event_now(inst, EVENT_go)`` then
# ``event(inst, x=...)``: the callback's global name is shadowed by the local (``_RESERVED``
# reserves ``inst``, ``m``, ``ev`` ... but not ``event``).
def test_c8_a_callback_named_event_runs_as_in_psm() -> None:
    sends: list[Any] = [((1,), {}), ((), {}), ((), {"x": 2})]
    reference = _named_run(_NamedEvent, False, sends)
    assert reference == (
        [("event callback", 1), ("other", "go"), ("event callback", 2), ("other", "go")],
        ["b"],
    )
    assert _named_run(_NamedEvent, True, sends) == reference


def test_c8_a_guard_named_event_runs_as_in_psm() -> None:
    reference = _named_run(_GuardNamedEvent, False, [((), {})])
    assert reference == (["guard"], ["a"])
    assert _named_run(_GuardNamedEvent, True, [((), {})]) == reference


class _Ticks(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)
    tick = Event(a.to.itself(internal=True) | b.to.itself(internal=True), delay=5)
    tock = Event(a.to.itself(internal=True) | b.to.itself(internal=True), delay=5.0)

    def on_transition(self, event: Any, event_data: Any) -> None:
        assert event is event_data.event
        self.model.log.append(
            (str(event), event.internal, repr(event.delay), event_data.trigger_data.send_id)
        )


def _timer_snapshot() -> dict[str, Any]:
    machine: Any = compile_chart(_Ticks).create(Log(), clock=VirtualClock())
    machine.send("tick", delay=7, send_id="t1")
    snapshot = machine.snapshot()
    assert snapshot["timers"][0]["sent"] == {"send_id": None, "delay": 7, "internal": False}
    return json.loads(json.dumps(snapshot))


# break 2 (C19): ``_sent`` checks ``math.isfinite(delay)``, which raises ``OverflowError`` for
# an integer too large for a float; JSON reads such integers.
@pytest.mark.parametrize("where", ["timers[0].sent.delay", "queued.external[0].sent.delay"])
def test_c19_a_sent_delay_too_large_for_a_float_is_an_instance_snapshot_error(
    where: str,
) -> None:
    snapshot = _timer_snapshot()
    huge = json.loads("1" + "0" * 400)
    if where.startswith("timers"):
        snapshot["timers"][0]["sent"]["delay"] = huge
    else:
        sent = {"send_id": None, "delay": huge, "internal": False}
        snapshot["queued"]["external"].append(
            {"event": "go", "args": [], "kwargs": {}, "sent": sent}
        )
    with pytest.raises(InstanceSnapshotError, match=re.escape(where)):
        compile_chart(_Ticks).restore(snapshot, Log(), clock=VirtualClock())


def _delay_run(compiled: bool, sends: list[tuple[str, float]]) -> list[Any]:
    model = Log()
    if compiled:
        machine: Any = compile_chart(_Ticks).create(model, clock=VirtualClock())
    else:
        machine = _Ticks(model)
    for name, delay in sends:
        machine.send(name, delay=delay)
    if compiled:
        machine.clock.advance(100)
        machine.run_until_idle()
    return model.log


# break 3 (C8, C17): python-statemachine's ``send`` builds ``BoundEvent(delay=delay)`` with the
# number given; compiled, ``_sent_delay`` drops a delay ``==`` the declared one and
# ``_flagged`` returns the declared event for it, and ``_flagged_events`` (keyed by the delay)
# hands a later ``3.0`` the copy first built for ``3``.
@pytest.mark.parametrize(
    "sends",
    [
        [("tick", 5.0)],
        [("tock", 5)],
        [("go", 0.0)],
        [("go", 3), ("go", 3.0)],
        [("tick", 2), ("tick", 2.0)],
    ],
)
def test_c8_a_delay_equal_to_the_declared_one_in_another_type_reads_as_sent(
    sends: list[tuple[str, float]],
) -> None:
    reference = _delay_run(False, sends)
    assert [entry[2] for entry in reference] == [repr(delay) for _, delay in sends]
    assert _delay_run(True, sends) == reference


# ============================================================================================
# Pins (behaviours checked that hold)
# ============================================================================================


def test_c19_a_malformed_sent_is_refused_naming_the_field() -> None:
    chart = compile_chart(_Ticks)
    cases: list[tuple[str, Any]] = [
        ("delay", float("nan")),
        ("delay", "5"),
        ("delay", True),
        ("internal", 1),
        ("send_id", {1, 2}),
    ]
    for key, value in cases:
        snapshot = _timer_snapshot()
        snapshot["timers"][0]["sent"][key] = value
        with pytest.raises(InstanceSnapshotError, match=rf"timers\[0\]\.sent\.{key}"):
            chart.restore(snapshot, Log(), clock=VirtualClock())
    for sent in (None, [], {"send_id": None, "delay": 7, "internal": False, "x": 1}):
        snapshot = _timer_snapshot()
        snapshot["timers"][0]["sent"] = sent
        with pytest.raises(InstanceSnapshotError, match=r"timers\[0\]\.sent"):
            chart.restore(snapshot, Log(), clock=VirtualClock())


def test_c19_sent_survives_json_restore_and_cancel_event() -> None:
    chart = compile_chart(_Ticks)
    machine: Any = chart.create(Log(), clock=VirtualClock())
    machine.send("tick", delay=7, send_id="t1")
    machine.send("tick", delay=3.5, send_id="t2")
    machine.send("tick", send_id="t3")
    snapshot = machine.snapshot()
    model = Log()
    restored: Any = chart.restore(json.loads(json.dumps(snapshot)), model, clock=VirtualClock())
    assert restored.snapshot() == snapshot
    restored.cancel_event("t2")
    after = restored.snapshot()
    assert [timer["send_id"] for timer in after["timers"]] == ["t3", "t1"]
    assert "sent" not in after["timers"][0]
    restored.clock.advance(10)
    restored.run_until_idle()
    assert model.log == [("tick", False, "5", "t3"), ("tick", False, "7", "t1")]
    again: Any = chart.restore(copy.deepcopy(snapshot), Log(), clock=VirtualClock())
    assert again.snapshot() == snapshot


def _raise_run(compiled: bool, call: Any) -> Any:
    model = Log()
    machine: Any = compile_chart(_Ticks).create(model) if compiled else _Ticks(model)
    try:
        call(machine)
    except Exception as error:
        return type(error).__name__, str(error), model.log
    return "ok", model.log


@pytest.mark.parametrize(
    "call",
    [
        lambda machine: machine.raise_("go", delay=5),
        lambda machine: machine.raise_("tick"),
        lambda machine: machine.raise_("tick", delay=0),
        lambda machine: machine.raise_("nope", delay=3),
        lambda machine: machine.raise_("go", delay=-1),
        lambda machine: machine.send("go", internal=True, delay=2),
        lambda machine: machine.send("tick", internal=False, delay=0),
    ],
)
def test_c17_raise_from_outside_with_a_delay_runs_as_in_psm(call: Any) -> None:
    reference = _raise_run(False, call)
    assert _raise_run(True, call) == reference


class _Strict(StateChart[Log]):
    allow_event_without_transition = False
    a = State(initial=True)
    end = State(final=True)
    go = a.to(end)
    tick = Event(a.to.itself(internal=True), delay=5)


class _Lenient(_Strict):
    allow_event_without_transition = True


@pytest.mark.parametrize("chart", [_Strict, _Lenient])
@pytest.mark.parametrize(
    ("call", "refused"),
    [
        (lambda machine: machine.raise_("go"), True),
        (lambda machine: machine.raise_("go", send_id="x"), True),
        (lambda machine: machine.raise_("nope"), True),
        (lambda machine: machine.send("tick"), True),
        (lambda machine: machine.send("tick", delay=0), True),
        (lambda machine: machine.go(delay=3), True),
        (lambda machine: machine.send("go", internal=True), True),
        (lambda machine: machine.cancel_event("x"), False),
    ],
)
def test_c15_a_terminated_instance_takes_events_from_outside_as_in_psm(
    chart: type[StateChart[Log]], call: Any, refused: bool
) -> None:
    def run(compiled: bool, clock: bool) -> str:
        options: dict[str, Any] = {"clock": VirtualClock()} if clock else {}
        machine: Any = compile_chart(chart).create(Log(), **options) if compiled else chart()
        machine.send("go")
        try:
            call(machine)
        except TransitionNotAllowed:
            return "refused"
        return "ok"

    reference = run(False, False)
    assert reference == ("refused" if chart is _Strict and refused else "ok")
    assert run(True, False) == reference
    assert run(True, True) == reference


class _StrictParallel(StateChart[Log]):
    """A strict chart ended by ``done.state.p``; ``where`` says which callback sends."""

    allow_event_without_transition = False

    class p(State.Parallel):
        class r1(State.Compound):
            x = State(initial=True)
            xf = State(final=True)
            fin = x.to(xf)

        class r2(State.Compound):
            y = State(initial=True)
            yf = State(final=True)
            fin = y.to(yf)

    end = State(final=True)
    done_state_p = p.to(end, after="act_after", on="act_on")
    ping = p.to.itself(internal=True)

    def _act(self, where: str) -> None:
        model: Any = self.model
        if model.where != where:
            return
        try:
            if model.how == "send":
                self.send("ping")
            elif model.how == "raise_":
                self.raise_("ping")
            elif model.how == "delay":
                self.send("ping", delay=1)
            else:
                self.ping()
            model.log.append((where, "ok"))
        except Exception as error:
            model.log.append((where, type(error).__name__))

    def act_after(self) -> None:
        self._act("after")

    def act_on(self) -> None:
        self._act("on")

    def on_enter_end(self) -> None:
        self._act("enter end")

    def on_exit_p(self) -> None:
        self._act("exit p")

    def on_enter_yf(self) -> None:
        self._act("enter yf")


@pytest.mark.parametrize("where", ["after", "on", "enter end", "exit p", "enter yf"])
@pytest.mark.parametrize("how", ["send", "raise_", "delay", "method"])
def test_c15_a_strict_parallel_chart_ending_while_a_callback_sends_runs_as_in_psm(
    where: str, how: str
) -> None:
    def run(compiled: bool) -> Any:
        model: Any = Log()
        model.where, model.how = where, how
        if compiled:
            machine: Any = compile_chart(_StrictParallel).create(model)
        else:
            machine = _StrictParallel(model)
        machine.send("fin")
        try:
            machine.send("ping")
        except TransitionNotAllowed:
            model.log.append("refused after")
        return model.log, _ids(machine)

    reference = run(False)
    assert reference[1] == ["end"]
    assert run(True) == reference


class _AsyncTicks(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)
    tick = Event(a.to.itself(internal=True) | b.to.itself(internal=True), delay=5)

    async def on_enter_a(self, event: Any) -> None:
        self.model.log.append(("enter a", str(event), event.internal))

    async def on_transition(self, event: Any, event_data: Any) -> None:
        trigger = event_data.trigger_data
        self.model.log.append((str(event), event.internal, repr(event.delay), trigger.send_id))


def test_c21_internal_events_sent_before_an_async_start_run_as_in_psm() -> None:
    async def run(compiled: bool) -> Any:
        model = Log()
        machine: Any = compile_chart(_AsyncTicks).create(model) if compiled else _AsyncTicks(model)
        sent = [
            machine.raise_("go"),
            machine.send("go", internal=True, send_id="k"),
            machine.send("tick", delay=0),
        ]
        await machine.activate_initial_state()
        for result in sent:
            if hasattr(result, "__await__"):
                await result
        task = asyncio.create_task(machine.send("go"))
        await asyncio.sleep(0)
        await machine.raise_("go", send_id="r")
        await task
        return model.log, _ids(machine)

    reference = asyncio.run(run(False))
    assert reference[1] == ["a"]
    assert asyncio.run(run(True)) == reference


class _StrictAsync(StateChart[Log]):
    allow_event_without_transition = False
    a = State(initial=True)
    b = State()
    end = State(final=True)
    go = a.to(b) | b.to(a)
    stop = b.to(end) | a.to(end)

    async def on_go(self, event: Any) -> None:
        self.model.log.append((str(event), event.internal, repr(event.delay)))


@pytest.mark.parametrize("how", ["raise_", "delay", "internal", "method"])
def test_c21_a_strict_async_instance_not_started_takes_events_then_refuses_once_ended(
    how: str,
) -> None:
    async def run(compiled: bool) -> Any:
        model = Log()
        machine: Any = (
            compile_chart(_StrictAsync).create(model) if compiled else _StrictAsync(model)
        )
        assert not machine.is_terminated
        if how == "raise_":
            result = machine.raise_("go")
        elif how == "delay":
            result = machine.send("go", delay=1)
        elif how == "internal":
            result = machine.send("go", internal=True)
        else:
            result = machine.go(delay=9)
        if hasattr(result, "__await__"):
            await result
        await machine.activate_initial_state()
        await asyncio.sleep(0.01)
        await machine.send("stop")
        try:
            result = machine.raise_("go")
            if hasattr(result, "__await__"):
                await result
        except TransitionNotAllowed:
            model.log.append("refused")
        return model.log, _ids(machine)

    reference = asyncio.run(run(False))
    assert reference[0][-1] == "refused"
    assert asyncio.run(run(True)) == reference


class _Hierarchy(StateChart[Log]):
    idle = State(initial=True)

    class work(State.Compound):
        a = State(initial=True)
        fin = State(final=True)
        a.to(fin, cond="ready")

    out = State()
    kick = idle.to(idle, internal=True, on="raise_go")
    go = idle.to(work)
    done_state_work = work.to(out)
    back = out.to(idle)

    def ready(self) -> bool:
        return True

    def raise_go(self) -> None:
        self.raise_("go", send_id="g")

    def on_transition(self, event: Any, event_data: Any, source: Any, target: Any) -> None:
        seen = None if event is None else (str(event), event.internal)
        trigger = event_data.trigger_data
        self.model.log.append(("t", seen, source.id, target.id, trigger.send_id))

    def on_enter_state(self, event: Any, state: Any) -> None:
        seen = None if event is None else (str(event), event.internal)
        self.model.log.append(("enter", seen, state.id))


@pytest.mark.parametrize("clock", [False, True])
def test_c15_one_generated_function_over_several_microsteps_hands_each_its_event(
    clock: bool,
) -> None:
    def run(compiled: bool) -> Any:
        model = Log()
        options: dict[str, Any] = {"clock": VirtualClock()} if clock else {}
        chart = compile_chart(_Hierarchy)
        machine: Any = chart.create(model, **options) if compiled else _Hierarchy(model)
        machine.send("kick")
        machine.send("back")
        machine.send("go", delay=0)
        machine.send("back")
        machine.raise_("go")
        if compiled and clock:
            machine.run_until_idle()
        return model.log, _ids(machine)

    reference = run(False)
    assert reference[1] == ["out"]
    assert run(True) == reference


_EVENT_FIELDS_DOC = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s0"
  version="1.0" datamodel="python" name="EventFields">
  <datamodel><data id="seen" expr="[]"/></datamodel>
  <state id="s0">
    <transition event="go">
      <assign location="seen"
        expr="seen + [(str(_event.name), _event.type, _event.sendid, _event.origintype)]"/>
      <raise event="inner"/>
    </transition>
    <transition event="inner">
      <assign location="seen"
        expr="seen + [(str(_event.name), _event.type, _event.sendid, _event.origintype)]"/>
    </transition>
  </state>
</scxml>"""


def test_c18_event_fields_of_events_sent_from_outside_read_as_in_psm() -> None:
    def run(compiled: bool) -> Any:
        chart = load(_EVENT_FIELDS_DOC, format="scxml", trusted=True)
        machine: Any = compile_chart(chart).create() if compiled else chart()
        machine.send("go")
        machine.raise_("go")
        machine.send("go", internal=True)
        machine.send("go", send_id="S")
        machine.raise_("go", send_id="R")
        return machine.model.seen

    reference = run(False)
    assert reference[0] == ("go", "external", None, "scxml")
    assert reference[2] == ("go", "internal", None, "")
    assert reference[8] == ("go", "internal", "R", "")
    assert run(True) == reference
