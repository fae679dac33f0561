"""Review round 18b of issue 10 (rules C3, C5, C8, C11, C15, C17, C18, C19, C21): a hostile
review of 6b77f24, which hands callbacks the event object as it was sent (``_event_now`` in
the generated code, ``_Queues.trigger`` = ``(internal, send_id, delay)``, notes kept by the
``id`` of queued items in ``_Queues.sent``), keeps internal events' ``send_id``, makes event
methods take ``delay``/``internal`` as payload (``_EVENT_METHOD``) and has a strict chart's
terminated instance refuse events sent with options (``_refuse_when_stopped``).

python-statemachine 3.2 (the reference) is the oracle: each test runs a chart on it and on
the compiled runtime and asserts the compiled answer is the reference's (python-statemachine
has no snapshots: a restored instance is compared with the same instance not snapshotted).
The first part holds the breaks found (each fails on 6b77f24):

1. C8/C15/C21 -- an eventless transition's callbacks asking for ``event`` or ``event_data``
   crash inside the runtime (``_event_now(inst, None)`` -> ``_flagged(None, True, None)`` ->
   ``None.name``: ``AttributeError``) whenever the instance holds ``_Queues``: on a clock,
   after an internal event, on any async chart; swallowed as ``error.execution`` by
   default, so the callbacks silently never run.
2. C18 -- the same in a loaded SCXML document: ``<raise>`` then an eventless transition makes
   ``create()`` raise ``AttributeError``.
3. C8 -- an internal event sent from outside a run (``send(..., internal=True)``, ``raise_``)
   reads ``event.internal`` False; python-statemachine's event object says True.
4. C11/C21 -- an internal event another thread (or another task) sends to a busy instance
   joins the internal queue and runs ahead of events queued before it; python-statemachine
   puts it on the external queue (its engine is not the one running there).
5. C8/C17 -- ``event.delay`` of an event sent with a delay is a ``float`` (``3.0``) where
   python-statemachine keeps the number given (``3``).
6. C19 -- a restored instance forgets how its pending timers were sent (``event.delay``) and
   the ``send_id`` of an internal event an interrupted run left queued.
7. C15 -- a strict chart's instance terminated by a transition whose ``after`` callback sends
   (or raises) a plain event: python-statemachine raises ``TransitionNotAllowed`` into the
   callback; compiled, it is queued and dropped quietly (with options it raises there too).

The second part pins behaviours checked that hold.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from statemachine import Event, State, StateChart
from statemachine.exceptions import TransitionNotAllowed
from statemachine.io import load

from statecharts import VirtualClock, compile_chart


class Log:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []
        self.flag = False


def _ids(machine: Any) -> list[str]:
    return [state.id for state in machine.configuration]


def _ev(event: Any) -> Any:
    """What a callback can tell of an event object."""
    if event is None:
        return None
    return (str(event), event.name, event.internal, repr(event.delay))


# ============================================================================================
# Breaks (each fails on 6b77f24)
# ============================================================================================


class _Eventless(StateChart[Log]):
    """``b`` leaves for ``c`` by an eventless transition whose callbacks ask for ``event``
    and ``event_data``; ``go`` raises ``foo`` (an internal event) when asked to."""

    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="maybe_raise") | c.to(a)
    foo = b.to.itself(internal=True)
    b.to(c, on="mark")

    def maybe_raise(self) -> None:
        if self.model.flag:
            self.raise_("foo")

    def mark(self, event: Any, event_data: Any) -> None:
        self.model.log.append(("eventless", _ev(event), _ev(event_data.event)))

    def on_enter_c(self, event: Any) -> None:
        self.model.log.append(("enter c", _ev(event)))


class _StrictEventless(_Eventless):
    catch_errors_as_events = False


def _eventless_run(chart: type[StateChart[Log]], mode: str, compiled: bool) -> Any:
    model = Log()
    model.flag = mode == "raise_"
    if compiled:
        options: dict[str, Any] = {"clock": VirtualClock()} if mode == "clock" else {}
        machine: Any = compile_chart(chart).create(model, **options)
    else:
        machine = chart(model)
    try:
        machine.send("go")
    except Exception as error:  # the compiled runtime's crash, if any
        return type(error).__name__, model.log, _ids(machine)
    return "ok", model.log, _ids(machine)


# break 1 (C8, C15): an eventless transition has no event: python-statemachine hands its
# callbacks ``event=None`` (``event_data.event`` None). 6b77f24's generated code asks
# ``_event_now(inst, None)``; whenever the instance holds ``_Queues`` (created with a clock,
# or once a callback raised an internal event) the trigger ``_eventless`` sets is
# ``_INTERNAL_TRIGGER`` (internal True), so ``_flagged(None, True, None)`` builds a flagged
# copy of ``None`` and fails on ``event.name``: an ``AttributeError`` from inside the
# library. With ``catch_errors_as_events`` (the default) it becomes ``error.execution``: the
# transition is taken but none of its callbacks runs, silently.
@pytest.mark.parametrize("chart", [_Eventless, _StrictEventless])
@pytest.mark.parametrize("mode", ["clock", "raise_"])
def test_c15_eventless_transition_callbacks_get_no_event_on_a_clock_or_after_raise_(
    chart: type[StateChart[Log]], mode: str
) -> None:
    reference = _eventless_run(chart, mode, compiled=False)
    assert reference == (
        "ok",
        [("eventless", None, None), ("enter c", None)],
        ["c"],
    )
    assert _eventless_run(chart, mode, compiled=True) == reference


class _AsyncEventless(StateChart[Log]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b) | c.to(a)
    b.to(c, on="mark")

    async def mark(self, event: Any) -> None:
        self.model.log.append(("eventless", _ev(event)))


# break 1 (async, C21): an async chart's instance always runs on ``_Queues``, so every
# eventless transition whose callback asks for ``event`` fails the same way there.
def test_c21_an_async_charts_eventless_transition_callback_runs_with_no_event() -> None:
    async def run(compiled: bool) -> Any:
        model = Log()
        machine: Any = (
            compile_chart(_AsyncEventless).create(model) if compiled else _AsyncEventless(model)
        )
        await machine.send("go")
        return model.log, _ids(machine)

    reference = asyncio.run(run(False))
    assert reference == ([("eventless", None)], ["c"])
    assert asyncio.run(run(True)) == reference


_RAISE_EVENTLESS_DOC = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s0"
  version="1.0" datamodel="python" name="RaiseEventless">
  <datamodel><data id="seen" expr="[]"/></datamodel>
  <state id="s0">
    <onentry><raise event="foo"/></onentry>
    <transition event="foo" target="s1"/>
  </state>
  <state id="s1">
    <transition target="s2"><assign location="seen" expr="seen + ['eventless']"/></transition>
  </state>
  <final id="s2"/>
</scxml>"""


# break 2 (C18): in a loaded document (every callback of its chart is given the event through
# the ``prepare_event``), ``<raise>`` followed by an eventless transition: python-statemachine
# runs it; the compiled ``create()`` raises ``AttributeError: 'NoneType' object has no
# attribute 'name'`` (``_event_now`` in the generated ``s1__eventless``; a ``prepare_event``
# failing while transitions are selected reaches the caller, C7).
def test_c18_an_scxml_raise_then_an_eventless_transition_runs_as_in_psm() -> None:
    def run(compiled: bool) -> Any:
        chart = load(_RAISE_EVENTLESS_DOC, format="scxml", trusted=True)
        try:
            machine = compile_chart(chart).create() if compiled else chart()
        except Exception as error:
            return type(error).__name__
        return _ids(machine), machine.model.seen

    reference = run(False)
    assert reference == (["s2"], ["eventless"])
    assert run(True) == reference


class _Flags(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)
    tick = Event(a.to.itself(internal=True) | b.to.itself(internal=True), delay=5)

    def on_transition(self, event: Any, event_data: Any) -> None:
        assert event is event_data.event
        trigger = event_data.trigger_data
        self.model.log.append((*_ev(event), trigger.send_id))


# break 3 (C8): python-statemachine's ``send`` builds the event object with the options it
# was given: ``send("go", internal=True)`` or ``raise_("go")`` called from outside a run go to
# the external queue (no macrostep to join) but their callbacks read ``event.internal`` True.
# Compiled, ``_send_with_options`` queues the item without noting ``internal``
# (``queues.note(item, None, sent)``), so ``_event_now`` hands the declared event (False).
@pytest.mark.parametrize(
    "how",
    [
        ("send", {"internal": True}),
        ("send", {"internal": True, "send_id": "x"}),
        ("raise_", {}),
        ("raise_", {"send_id": "z"}),
    ],
)
def test_c8_an_internal_event_sent_from_outside_reads_internal_true(
    how: tuple[str, dict[str, Any]],
) -> None:
    method, options = how

    def run(compiled: bool) -> list[Any]:
        model = Log()
        machine: Any = compile_chart(_Flags).create(model) if compiled else _Flags(model)
        getattr(machine, method)("go", **options)
        return model.log

    reference = run(False)
    assert reference == [("go", "Go", True, "0", options.get("send_id"))]
    assert run(True) == reference


# break 3 (async, C21): the same, sent from outside any run on an async chart (queued by
# ``_queue_now``, its ``internal`` dropped).
def test_c21_an_async_internal_event_sent_from_outside_reads_internal_true() -> None:
    class Chart(StateChart[Log]):
        a = State(initial=True)
        b = State()
        go = a.to(b) | b.to(a)

        async def on_go(self, event: Any) -> None:
            self.model.log.append(_ev(event))

    async def run(compiled: bool) -> list[Any]:
        model = Log()
        machine: Any = compile_chart(Chart).create(model) if compiled else Chart(model)
        await machine.send("go", internal=True)
        await machine.raise_("go")
        return model.log

    reference = asyncio.run(run(False))
    assert reference == [("go", "Go", True, "0")] * 2
    assert asyncio.run(run(True)) == reference


class _Busy(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="slow")
    e1 = a.to.itself(internal=True, on="rec") | b.to.itself(internal=True, on="rec")
    e2 = a.to.itself(internal=True, on="rec") | b.to.itself(internal=True, on="rec")

    def slow(self) -> None:
        self.send("e1")
        self.model.started.set()  # type: ignore[attr-defined]
        assert self.model.release.wait(5)  # type: ignore[attr-defined]

    def rec(self, event: Any) -> None:
        self.model.log.append((str(event), event.internal))


# break 4 (C11): python-statemachine's engine puts an internal event on its internal queue
# only when that engine is the one running in the sender's context (``_running_engine``):
# another thread's ``send(..., internal=True)`` or ``raise_`` to a busy instance joins the
# external queue, after ``e1`` the running callback sent. Compiled, ``_send_with_options``
# (``busy and internal``) and ``raise_`` put it on the internal queue: it runs first.
@pytest.mark.xfail(
    strict=True,
    reason="open: a synchronous instance does not record which thread runs it (the hot path "
    "keeps no owner), so an internal event another thread sends into its run joins the "
    "internal queue",
)
@pytest.mark.parametrize("method", ["raise_", "send"])
def test_c11_an_internal_event_from_another_thread_joins_the_external_queue(method: str) -> None:
    def run(compiled: bool) -> list[Any]:
        model = Log()
        model.started = threading.Event()  # type: ignore[attr-defined]
        model.release = threading.Event()  # type: ignore[attr-defined]
        machine: Any = compile_chart(_Busy).create(model) if compiled else _Busy(model)
        first = threading.Thread(target=machine.send, args=("go",))
        first.start()
        assert model.started.wait(5)  # type: ignore[attr-defined]
        if method == "raise_":
            second = threading.Thread(target=machine.raise_, args=("e2",))
        else:
            second = threading.Thread(target=machine.send, args=("e2",), kwargs={"internal": True})
        second.start()
        second.join(5)
        time.sleep(0.02)
        model.release.set()  # type: ignore[attr-defined]
        first.join(5)
        return model.log

    reference = run(False)
    assert reference == [("e1", False), ("e2", True)]
    assert run(True) == reference


class _AsyncBusy(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="slow")
    e1 = a.to.itself(internal=True, on="rec") | b.to.itself(internal=True, on="rec")
    e2 = a.to.itself(internal=True, on="rec") | b.to.itself(internal=True, on="rec")

    async def slow(self) -> None:
        await self.send("e1")
        await asyncio.sleep(0.02)

    def rec(self, event: Any) -> None:
        self.model.log.append((str(event), event.internal))


# break 4 (async, C21): another task's ``raise_`` or ``send(..., internal=True)`` while a run
# holds the instance: python-statemachine queues it external (after ``e1``), its event
# flagged internal. Compiled, ``send(internal=True)`` joins the internal queue (runs first)
# and ``raise_`` (``_join(self, base_send, ...)``) loses the flag.
@pytest.mark.parametrize("method", ["raise_", "send"])
def test_c21_an_internal_event_from_another_task_joins_the_external_queue(method: str) -> None:
    async def run(compiled: bool) -> list[Any]:
        model = Log()
        machine: Any = compile_chart(_AsyncBusy).create(model) if compiled else _AsyncBusy(model)
        await machine.activate_initial_state()

        async def other() -> None:
            await asyncio.sleep(0.005)
            if method == "raise_":
                await machine.raise_("e2")
            else:
                await machine.send("e2", internal=True)

        await asyncio.gather(machine.send("go"), other())
        return model.log

    reference = asyncio.run(run(False))
    assert reference == [("e1", False), ("e2", True)]
    assert asyncio.run(run(True)) == reference


# break 5 (C8, C17): python-statemachine's event object keeps the delay as given
# (``BoundEvent(delay=delay)``): ``send("tick", delay=0)`` reads ``event.delay`` ``0``,
# ``send("go", delay=2)`` reads ``2``. Compiled, ``_options`` checks the delay with
# ``_delay_ms``, which returns ``float(delay)``, and ``_flagged`` builds the event with it:
# ``0.0`` and ``2.0`` (a callback formatting ``f"{event.delay} ms"`` prints ``2.0 ms``).
def test_c8_event_delay_is_the_number_it_was_sent_with() -> None:
    def run(compiled: bool) -> list[Any]:
        model = Log()
        machine: Any = compile_chart(_Flags).create(model) if compiled else _Flags(model)
        machine.send("tick", delay=0)
        machine.send("go", delay=2)
        return model.log

    reference = run(False)
    assert reference == [("tick", "Tick", False, "0", None), ("go", "Go", False, "2", None)]
    assert run(True) == reference


class _Timers(StateChart[Log]):
    a = State(initial=True)
    hop = a.to.itself(internal=True)
    tick = Event(a.to.itself(internal=True), delay=5)

    def on_transition(self, event: Any, event_data: Any) -> None:
        self.model.log.append((str(event), event.delay, event_data.trigger_data.send_id))


# break 6 (C19): the delay a pending timer was sent with lives in ``_Queues.sent`` only (by
# the ``id`` of its item), which the snapshot does not keep: restored, ``tick`` (declared 5,
# sent with 2) reads 5 and ``hop`` (declared 0, sent with 3) reads 0, where the same
# instance not snapshotted (and python-statemachine) read 2 and 3.
def test_c19_a_restored_timer_keeps_the_delay_it_was_sent_with() -> None:
    reference_model = Log()
    reference = _Timers(reference_model)
    reference.send("hop", delay=3, send_id="h")
    reference.send("tick", delay=2)
    assert reference_model.log == [("hop", 3, "h"), ("tick", 2, None)]

    def run(snapshot: bool) -> list[Any]:
        model = Log()
        chart = compile_chart(_Timers)
        machine: Any = chart.create(model, clock=VirtualClock())
        machine.send("hop", delay=3, send_id="h")
        machine.send("tick", delay=2)
        if snapshot:
            machine = chart.restore(machine.snapshot(), model, clock=VirtualClock())
        machine.run_until_idle()
        return [(name, delay, send_id) for name, delay, send_id in model.log]

    unsnapshotted = run(False)
    assert unsnapshotted == [("tick", 2, None), ("hop", 3, "h")]  # by due time
    assert run(True) == unsnapshotted


class _Stop(BaseException):
    """An interruption (no ``Exception``): python-statemachine keeps its queues."""


class _Leftover(StateChart[Log]):
    a = State(initial=True)
    go = a.to.itself(internal=True, on="kick")
    x = a.to.itself(internal=True)

    def kick(self) -> None:
        self.raise_("x", send_id="s2")
        raise _Stop

    def on_transition(self, event: Any, event_data: Any) -> None:
        self.model.log.append((str(event), event.internal, event_data.trigger_data.send_id))


# break 6 (C19): an internal event raised with a ``send_id`` by a run a ``BaseException``
# interrupted stays queued (python-statemachine's synchronous engine keeps its queues) and
# runs at the next ``send`` with its ``send_id``; the snapshot keeps the event (``queued``)
# but not its ``send_id`` (a note in ``_Queues.sent``): restored, it runs with ``None``.
def test_c19_a_restored_leftover_internal_event_keeps_its_send_id() -> None:
    def run(compiled: bool, snapshot: bool) -> list[Any]:
        model = Log()
        chart = compile_chart(_Leftover)
        machine: Any = chart.create(model) if compiled else _Leftover(model)
        with pytest.raises(_Stop):
            machine.send("go")
        if snapshot:
            machine = chart.restore(machine.snapshot(), model)
        machine.send("x")
        return model.log

    reference = run(False, False)
    assert reference[-2:] == [("x", True, "s2"), ("x", False, None)]
    assert run(True, False) == reference
    assert run(True, True) == reference


def _strict_after_chart(method: str, options: dict[str, Any]) -> type[StateChart[Log]]:
    class Chart(StateChart[Log]):
        allow_event_without_transition = False
        a = State(initial=True)
        f = State(final=True)
        go = a.to(f, after="sender")
        t = a.to.itself()

        def sender(self) -> None:
            try:
                if method == "send":
                    self.send("t", **options)
                else:
                    self.raise_("t", **options)
            except TransitionNotAllowed:
                self.model.log.append(("refused", self.is_terminated))
            else:
                self.model.log.append(("sent", self.is_terminated))

    return Chart


# break 7 (C15): a strict chart (``allow_event_without_transition = False``): the ``after``
# callback of the transition into its top-level final state runs once python-statemachine's
# engine stopped (``is_terminated`` True), and an event it sends or raises is refused there
# (``TransitionNotAllowed`` from ``put``). 6b77f24's ``_refuse_when_stopped`` refuses it
# when sent with options (pinned below) but not a plain ``send``/``raise_``
# (``_send_busy``/the internal queue): queued, then dropped quietly.
@pytest.mark.parametrize("method", ["send", "raise_"])
@pytest.mark.parametrize("clocked", [False, True])
def test_c15_a_plain_event_sent_from_after_of_a_strict_final_transition_is_refused(
    method: str, clocked: bool
) -> None:
    chart = _strict_after_chart(method, {})
    reference_model = Log()
    reference = chart(reference_model)
    reference.send("go")
    assert reference_model.log == [("refused", True)]
    model = Log()
    machine: Any = compile_chart(chart).create(
        model, **({"clock": VirtualClock()} if clocked else {})
    )
    machine.send("go")
    assert (model.log, _ids(machine)) == (reference_model.log, _ids(reference))


# ============================================================================================
# Pins (hold on 6b77f24)
# ============================================================================================


# C15: the same strict chart refuses, in ``after``, an event sent with options (delay,
# send_id, internal; ``raise_`` with a send_id), with or without a clock, as there.
@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("send", {"delay": 1}),
        ("send", {"send_id": "x"}),
        ("send", {"internal": True}),
        ("raise_", {"send_id": "s"}),
    ],
)
@pytest.mark.parametrize("clocked", [False, True])
def test_c15_an_optioned_event_sent_from_after_of_a_strict_final_transition_is_refused(
    method: str, options: dict[str, Any], clocked: bool
) -> None:
    chart = _strict_after_chart(method, options)
    reference_model = Log()
    chart(reference_model).send("go")
    assert reference_model.log == [("refused", True)]
    model = Log()
    compile_chart(chart).create(model, **({"clock": VirtualClock()} if clocked else {})).send("go")
    assert model.log == reference_model.log


def _strict_enter_chart(options: dict[str, Any]) -> type[StateChart[Log]]:
    class Chart(StateChart[Log]):
        allow_event_without_transition = False
        a = State(initial=True)
        f = State(final=True)
        go = a.to(f)
        t = a.to.itself()

        def on_enter_f(self) -> None:
            self.send("t", **options)
            self.model.log.append(("sent", self.is_terminated))

    return Chart


# C15: from the final state's ``on_enter`` (``is_terminated`` still False) the event is
# queued and dropped quietly, with or without options, on both.
@pytest.mark.parametrize("options", [{}, {"delay": 1}, {"send_id": "x"}, {"internal": True}])
def test_c15_an_event_sent_from_the_strict_final_states_enter_is_dropped_quietly(
    options: dict[str, Any],
) -> None:
    chart = _strict_enter_chart(options)
    reference_model = Log()
    reference = chart(reference_model)
    reference.send("go")
    assert reference_model.log == [("sent", False)]
    for clocked in (False, True):
        model = Log()
        machine: Any = compile_chart(chart).create(
            model, **({"clock": VirtualClock()} if clocked else {})
        )
        machine.send("go")
        assert (model.log, _ids(machine)) == (reference_model.log, ["f"])


class _Names(StateChart[Log]):
    """Events of every kind: ``done.state``, ``error.execution``, a declared ``name=``, an
    internal one raised with a send_id, delayed ones sent with another delay."""

    class c(State.Compound):
        a = State(initial=True)
        f = State(final=True)
        go = a.to(f)

    z = State()
    done_state_c = c.to(z)
    boom = z.to(z, on="bad")
    error_execution = z.to.itself(internal=True)
    named = Event(z.to.itself(internal=True), name="A Name")
    tick = Event(z.to.itself(internal=True), delay=5)
    kick = z.to.itself(internal=True, on="kicker")

    def bad(self) -> None:
        raise ValueError("boom")

    def kicker(self) -> None:
        self.raise_("named", send_id="n1")
        self.send("named", send_id="n2")

    def on_transition(self, event: Any, event_data: Any) -> None:
        assert event is event_data.event
        self.model.log.append(
            (
                str(event),
                event.id,
                event.name,
                event.internal,
                event == str(event),
                hash(event) == hash(str(event)),
                event_data.trigger_data.send_id,
            )
        )


# C8: the flagged event objects read as python-statemachine's: ``id``, ``name`` (a
# declared ``name=``, the humanized id of ``done.state``/``error.execution``), ``internal``,
# equal to and hashing as their id, ``event is event_data.event``, the ``send_id``.
def test_c8_flagged_events_read_id_name_equality_and_send_id_as_in_psm() -> None:
    def run(compiled: bool) -> list[Any]:
        model = Log()
        machine: Any = compile_chart(_Names).create(model) if compiled else _Names(model)
        for name in ("go", "boom", "kick"):
            machine.send(name)
        machine.send("named", send_id="q")
        return model.log

    reference = run(False)
    assert ("named", "named", "A Name", True, True, True, "n1") in reference
    assert ("done.state.c", "done.state.c", "Done state c", True, True, True, None) in reference
    assert run(True) == reference


class _SameName(StateChart[Log]):
    a = State(initial=True)
    kick = a.to.itself(internal=True, on="schedule")
    tick = Event(a.to.itself(internal=True, on="record"), delay=5)

    def schedule(self) -> None:
        self.send("tick", delay=3, send_id="a")
        self.send("tick", delay=1, send_id="b")
        self.send("tick", send_id="c")
        self.send("tick", delay=2, send_id="d")
        self.cancel_event("d")

    def record(self, event: Any, event_data: Any) -> None:
        self.model.log.append((event.delay, event_data.trigger_data.send_id))


# C8/C17: same-name events with different delays queued together from a callback, one
# cancelled, each read the delay it was sent with, in due order, as python-statemachine runs
# them (compared by value: break 5 is the type).
def test_c17_same_name_timers_with_different_delays_and_a_cancel_read_their_delays() -> None:
    def run(compiled: bool) -> list[Any]:
        model = Log()
        machine: Any = (
            compile_chart(_SameName).create(model, clock=VirtualClock())
            if compiled
            else _SameName(model)
        )
        machine.send("kick")
        if compiled:
            machine.run_until_idle()
        return model.log

    reference = run(False)
    assert reference == [(1, "b"), (3, "a"), (5, "c")]
    assert run(True) == reference


# C5/C8: an event method given ``delay``, ``internal`` and ``send_id`` takes ``send_id`` as
# its option and the others as payload (``trigger_data.kwargs``), the marker key never
# reaching a callback; ``delay=None`` is payload too; a declared delay still applies.
def test_c5_an_event_method_with_option_named_payload_and_a_send_id_runs_as_in_psm() -> None:
    class Chart(StateChart[Log]):
        a = State(initial=True)
        b = State()
        go = a.to(b) | b.to(a)
        tick = Event(a.to.itself(internal=True) | b.to.itself(internal=True), delay=5)

        def on_transition(self, event: Any, event_data: Any, **kwargs: Any) -> None:
            trigger = event_data.trigger_data
            self.model.log.append(
                (
                    str(event),
                    repr(event.delay),
                    sorted(k for k in kwargs if not k.isidentifier()),
                    sorted(trigger.kwargs.items()),
                    trigger.send_id,
                )
            )

    def run(compiled: bool) -> Any:
        model = Log()
        machine: Any = (
            compile_chart(Chart).create(model, clock=VirtualClock()) if compiled else Chart(model)
        )
        machine.go(delay=5, internal=True, send_id="x")
        machine.go(delay=None)
        machine.tick(delay=0, send_id="t")
        if compiled:
            machine.run_until_idle()
        return model.log, _ids(machine)

    reference = run(False)
    assert reference == (
        [
            ("go", "0", [], [("delay", 5), ("internal", True)], "x"),
            ("go", "0", [], [("delay", None)], None),
            ("tick", "5", [], [("delay", 0)], "t"),
        ],
        ["a"],
    )
    assert run(True) == reference


class _AsyncMethods(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on="kick") | b.to(a)
    rec = a.to.itself(internal=True) | b.to.itself(internal=True)
    tick = Event(a.to.itself(internal=True) | b.to.itself(internal=True), delay=4)

    async def kick(self) -> None:
        await self.rec("r1", delay=3, send_id="s")
        await self.tick("t1", internal=True)
        await self.rec("r2", internal=True)
        await self.send("rec", "r3", internal=True, send_id="q")

    async def on_transition(self, event: Any, event_data: Any) -> None:
        trigger = event_data.trigger_data
        self.model.log.append(
            (
                str(event),
                event.internal,
                repr(event.delay),
                trigger.args,
                sorted(trigger.kwargs.items()),
                trigger.send_id,
            )
        )


# C21/C8: an async chart's event methods called from inside a callback (payload ``delay``
# and ``internal``, option ``send_id``) and ``send(internal=True, send_id=)`` there run in
# python-statemachine's order with its event objects and trigger data.
def test_c21_async_event_methods_from_a_callback_run_as_in_psm() -> None:
    async def run(compiled: bool) -> list[Any]:
        model = Log()
        machine: Any = (
            compile_chart(_AsyncMethods).create(model) if compiled else _AsyncMethods(model)
        )
        await machine.go(delay=9, send_id="g")
        await asyncio.sleep(0.02)
        return model.log

    reference = asyncio.run(run(False))
    assert reference[0] == ("go", False, "0", (), [("delay", 9)], "g")
    assert ("rec", True, "0", ("r3",), [], "q") in reference
    assert asyncio.run(run(True)) == reference


class _ErrorAfterInternal(StateChart[Log]):
    a = State(initial=True)
    go = a.to.itself(internal=True, on="kick")
    x = a.to.itself(internal=True, on="bad")
    error_execution = a.to.itself(internal=True)

    def kick(self) -> None:
        self.raise_("x", send_id="s")

    def bad(self) -> None:
        raise ValueError("bad")

    def on_transition(self, event: Any, event_data: Any) -> None:
        self.model.log.append((str(event), event.internal, event_data.trigger_data.send_id))


# C7/C8: ``error.execution`` raised while an internal event with a ``send_id`` runs does not
# inherit that ``send_id`` (its trigger_data's is None), as in python-statemachine.
def test_c7_error_execution_of_an_internal_event_with_a_send_id_has_none() -> None:
    def run(compiled: bool) -> list[Any]:
        model = Log()
        machine: Any = (
            compile_chart(_ErrorAfterInternal).create(model)
            if compiled
            else _ErrorAfterInternal(model)
        )
        machine.send("go")
        return model.log

    reference = run(False)
    assert reference == [
        ("go", False, None),
        ("x", True, "s"),
        ("error.execution", True, None),
    ]
    assert run(True) == reference


_SEND_IDS_DOC = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="c" version="1.0"
  datamodel="python" name="SendKinds">
  <datamodel><data id="seen" expr="[]"/></datamodel>
  <state id="c">
    <onentry><send event="e" target="#_internal" id="i1"/><send event="f" id="x1"
      delay="1ms"/><raise event="g"/></onentry>
    <transition event="e g">
      <assign location="seen"
        expr="seen + [(_event.name, _event.sendid, _event.type, _event.origintype)]"/>
    </transition>
    <transition event="f" target="d">
      <assign location="seen"
        expr="seen + [(_event.name, _event.sendid, _event.type, _event.origintype)]"/>
    </transition>
  </state>
  <state id="d">
    <transition event="h" target="c">
      <assign location="seen"
        expr="seen + [(_event.name, _event.sendid, _event.type, _event.origintype)]"/>
    </transition>
  </state>
</scxml>"""


# C18: a loaded document's ``_event`` (name, sendid, type, origintype) for an internal
# ``<send id>``, a delayed external ``<send id delay>``, a ``<raise>`` and an event sent from
# outside with a ``send_id``.
def test_c18_event_fields_of_internal_delayed_and_raised_events_read_as_in_psm() -> None:
    def run(compiled: bool) -> Any:
        chart = load(_SEND_IDS_DOC, format="scxml", trusted=True)
        if compiled:
            machine: Any = compile_chart(chart).create(clock=VirtualClock())
            machine.run_until_idle()
        else:
            machine = chart()
            time.sleep(0.01)
            machine.send("nothing")  # takes the delayed event, now due
        machine.send("h", send_id="o1")
        if compiled:
            machine.run_until_idle()
        else:
            time.sleep(0.01)
            machine.send("nothing")
        return _ids(machine), [tuple(str(v) for v in row) for row in machine.model.seen]

    reference = run(False)
    assert ("e", "i1", "internal", "") in reference[1]
    assert ("f", "x1", "external", "scxml") in reference[1]
    assert ("g", "None", "internal", "") in reference[1]
    assert run(True) == reference
