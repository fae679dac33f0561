"""Review round 18 of issue 10 (rules C3, C4, C5, C7, C8, C9, C11, C15, C17, C18, C19, C21):
the event object callbacks receive, the event methods' keyword arguments, a strict chart's
terminated instance on a clock, and less-trodden ground around them (SCXML ``<initial>``
content, history defaults with content, ``<donedata>``, ``<foreach>``, ``In()`` on a sibling
region, ``enable_self_transition_entries``, unusual callback signatures, errors while handling
``error.execution``, raising exit callbacks of parallel regions, timers and their snapshots,
another instance sent to from a callback, a second thread sending to a busy instance, slotted
models on ``create``'s direct path).

python-statemachine 3.2 (the reference) is the oracle: each test runs a chart on it and on
the compiled runtime and asserts the compiled answer is the reference's. The first part holds
the breaks found (each fails on 2cef0fc):

1. C8/C15 -- ``event.internal`` is False in callbacks of internal events (``done.state``,
   ``error.execution``, ``raise_``, ``send(internal=True)``); python-statemachine says True.
2. C8/C17 -- ``event.delay`` is the declared delay, not the one the event was sent with.
3. C5/C8/C21 -- an event method (``machine.go(delay=..., internal=...)``) takes ``delay`` and
   ``internal`` as send options; python-statemachine's passes them to callbacks as payload
   and runs the event at once (sync and async; from a callback, the queue and ``send_id``).
4. C8/C18 -- an internal event sent with a ``send_id`` loses it (``trigger_data.send_id``,
   SCXML ``_event.sendid`` of ``<send target="#_internal" id=...>``).
5. C15 -- a strict chart's terminated instance created with a clock answers ``terminated``
   where python-statemachine (and the clockless instance) raise ``TransitionNotAllowed``.
6. C17 -- a delayed event sent to a strict chart's terminated instance is quietly dropped
   (``queued``) where python-statemachine raises ``TransitionNotAllowed``.

The second part pins behaviours checked that hold.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest
from statemachine import Event, HistoryState, State, StateChart, StateMachine
from statemachine.exceptions import TransitionNotAllowed
from statemachine.io import load

from statecharts import VirtualClock, compile_chart


class Log:
    """A model whose ``log`` the charts' callbacks append to."""

    def __init__(self) -> None:
        self.log: list[Any] = []


def _ids(machine: Any) -> list[str]:
    return [state.id for state in machine.configuration]


# ============================================================================================
# Breaks (each fails on 2cef0fc)
# ============================================================================================


class _EventFlags(StateChart[Log]):
    """Records, for every transition, the event's ``internal`` and ``delay`` as a callback
    reads them off the event object (``event`` and ``event_data.event`` are one object)."""

    class c(State.Compound):
        a = State(initial=True)
        f = State(final=True)
        go = a.to(f)

    z = State()
    e = State()
    done_state_c = c.to(z)
    boom = z.to(z, on="bad")
    error_execution = z.to(e)
    ext = e.to(e, internal=True, on="send_more")
    hop = e.to(e, internal=True)
    tick = Event(e.to(e, internal=True), delay=5)

    def bad(self) -> None:
        raise ValueError("boom")

    def send_more(self) -> None:
        self.raise_("hop")
        self.send("hop", internal=True)

    def on_transition(self, event: Any, event_data: Any) -> None:
        assert event is event_data.event
        self.model.log.append((str(event), event.internal, event.delay))


def _flags(compiled: bool, sends: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    model = Log()
    if compiled:
        clock = VirtualClock()
        machine: Any = compile_chart(_EventFlags).create(model, clock=clock)
    else:
        machine = _EventFlags(model)
    for name, options in sends:
        machine.send(name, **options)
    if compiled:
        machine.run_until_idle()
    return model.log


# break 1 (C8, C15): python-statemachine's event object is built for each event as it was
# queued: ``done.state.<id>`` and ``error.execution`` (the engine's internal events) and an
# event sent with ``raise_`` or ``send(..., internal=True)`` read ``event.internal`` True.
# The compiled runtime hands callbacks the declared ``Event`` (or an undeclared name's plain
# ``Event``), whose ``internal`` is False: a callback asking whether it runs on an internal
# event is answered otherwise, silently. (Only a chart with a ``prepare_event`` flags it:
# ``_prep`` in _runtime.py.)
def test_c8_an_internal_event_reads_internal_true_in_callbacks() -> None:
    sends: list[tuple[str, dict[str, Any]]] = [("go", {}), ("boom", {}), ("ext", {})]
    reference = _flags(False, sends)
    assert reference == [
        ("__initial__", False, 0),
        ("go", False, 0),
        ("done.state.c", True, 0),
        ("boom", False, 0),
        ("error.execution", True, 0),
        ("ext", False, 0),
        ("hop", True, 0),
        ("hop", True, 0),
    ]
    assert _flags(True, sends) == reference


# break 2 (C8, C17): python-statemachine's event object carries the delay the event was sent
# with: ``send("tick", delay=0)`` reads ``event.delay`` 0 though ``tick`` is declared with
# ``delay=5``, and ``send("hop", delay=3)`` reads 3. The compiled runtime hands callbacks the
# declared event, so they read 5 and 0.
def test_c8_a_delayed_event_reads_the_delay_it_was_sent_with() -> None:
    sends: list[tuple[str, dict[str, Any]]] = [
        ("go", {}),
        ("boom", {}),
        ("tick", {"delay": 0}),
        ("hop", {"delay": 3}),
        ("tick", {}),
    ]
    reference = _flags(False, sends)
    assert reference[-3:] == [("tick", False, 0), ("hop", False, 3), ("tick", False, 5)]
    assert _flags(True, sends)[-3:] == reference[-3:]


class _Toggle(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def on_go(self, delay: Any = None, internal: Any = None, send_id: Any = None) -> None:
        self.model.log.append(("go", delay, internal, send_id))


# break 3 (C5, C8, C17): python-statemachine's event method (``BoundEvent.__call__``) takes
# only ``send_id`` as an option: ``delay=`` and ``internal=`` given to it are payload keywords
# the callbacks receive, and the event runs at once, with the declared delay (none here).
# The compiled event method (``_event_method`` in _runtime.py) hands every keyword to
# ``Instance.send``, which takes them as options: ``machine.go(delay=1000)`` is queued for a
# second instead of running, and the callbacks never see ``delay`` or ``internal``.
def test_c5_an_event_method_passes_delay_and_internal_as_payload() -> None:
    def run(compiled: bool) -> tuple[list[Any], list[str]]:
        model = Log()
        machine: Any = (
            compile_chart(_Toggle).create(model, clock=VirtualClock())
            if compiled
            else _Toggle(model)
        )
        machine.go(delay=1000)
        machine.go(internal=True)
        return model.log, _ids(machine)

    reference = run(False)
    assert reference == ([("go", 1000, None, None), ("go", None, True, None)], ["a"])
    assert run(True) == reference


class _AsyncToggle(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    async def on_go(self, delay: Any = None, internal: Any = None) -> None:
        self.model.log.append(("go", delay, internal))


# break 3 (async): the same on python-statemachine's awaitable send path (the chart has an
# async callback): ``await machine.go(delay=7)`` runs at once there, its callback given
# ``delay=7``; compiled, the event waits 7 ms and the callback gets no ``delay``.
def test_c21_an_async_event_method_passes_delay_and_internal_as_payload() -> None:
    async def run(compiled: bool) -> tuple[list[Any], list[str]]:
        model = Log()
        machine: Any = (
            compile_chart(_AsyncToggle).create(model) if compiled else _AsyncToggle(model)
        )
        await machine.go(delay=7)
        await machine.go(internal=True)
        return model.log, _ids(machine)

    reference = asyncio.run(run(False))
    assert reference == ([("go", 7, None), ("go", None, True)], ["a"])
    assert asyncio.run(run(True)) == reference


# break 3b: the same, sent from inside a callback (``self.go(..., internal=True)``): there the
# event joins python-statemachine's external queue (the event method ignores ``internal``) with
# its ``send_id``; the compiled one takes ``internal`` as the queue, runs it before events
# sent earlier, and drops the ``send_id`` from ``trigger_data``.
class _Relay(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)
    note = a.to(a, internal=True) | b.to(b, internal=True)

    def on_go(self, source: State) -> None:
        if source.id != "a":
            return
        self.send("note", "first")
        self.go("second", internal=True, send_id="q")

    def on_transition(self, event: Any, event_data: Any, *args: Any, **kwargs: Any) -> None:
        trigger = event_data.trigger_data
        self.model.log.append((str(event), trigger.args, trigger.kwargs, trigger.send_id))


def test_c11_an_event_method_given_internal_from_a_callback_joins_the_external_queue() -> None:
    def run(compiled: bool) -> tuple[list[Any], list[str]]:
        model = Log()
        machine: Any = compile_chart(_Relay).create(model) if compiled else _Relay(model)
        machine.send("go")
        return model.log, _ids(machine)

    reference = run(False)
    assert reference == (
        [
            ("go", (), {}, None),
            ("note", ("first",), {}, None),
            ("go", ("second",), {"internal": True}, "q"),
        ],
        ["a"],
    )
    assert run(True) == reference


class _InternalSendId(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)
    rec = a.to(a, internal=True, on="record") | b.to(b, internal=True, on="record")

    def record(self, value: str, event_data: Any) -> None:
        self.model.log.append((value, event_data.trigger_data.send_id))

    def on_go(self, source: State) -> None:
        if source.id == "a":
            self.raise_("rec", "raised", send_id="s2")
            self.send("rec", "internal", internal=True, send_id="s3")
            self.send("rec", "external", send_id="s1")


# break 4 (C8, C11): an internal event sent with a ``send_id`` (``raise_(..., send_id=)``,
# ``send(..., internal=True, send_id=)``) keeps it in python-statemachine's
# ``event_data.trigger_data.send_id``; the compiled runtime's internal queue drops it
# (``None``), while an external event keeps its own.
def test_c8_an_internal_event_keeps_its_send_id_in_trigger_data() -> None:
    def run(compiled: bool) -> list[Any]:
        model = Log()
        machine: Any = (
            compile_chart(_InternalSendId).create(model) if compiled else _InternalSendId(model)
        )
        machine.send("go")
        return model.log

    reference = run(False)
    assert reference == [("raised", "s2"), ("internal", "s3"), ("external", "s1")]
    assert run(True) == reference


_INTERNAL_SEND_DOC = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="c" version="1.0"
  datamodel="python" name="SendIds">
  <datamodel><data id="seen" expr="[]"/></datamodel>
  <state id="c">
    <onentry><send event="e" target="#_internal" id="foo"/><send event="f" id="bar"/></onentry>
    <transition event="e">
      <assign location="seen" expr="seen + [(str(_event.name), _event.sendid, _event.type)]"/>
    </transition>
    <transition event="f" target="d">
      <assign location="seen" expr="seen + [(str(_event.name), _event.sendid, _event.type)]"/>
    </transition>
  </state>
  <state id="d"/>
</scxml>"""


# break 4b (C18): the same in a loaded document: ``<send target="#_internal" id="foo">``
# gives python-statemachine's ``_event.sendid`` "foo" (C18: ``_event`` reflects the queue an
# event came from and its ``send_id``); compiled, ``_event.sendid`` is None for it, while the
# external ``<send id="bar">`` reads "bar" on both.
def test_c18_an_scxml_internal_send_with_an_id_reads_it_as_event_sendid() -> None:
    def run(compiled: bool) -> tuple[list[str], list[Any]]:
        chart = load(_INTERNAL_SEND_DOC, format="scxml", trusted=True)
        machine = compile_chart(chart).create() if compiled else chart()
        return _ids(machine), machine.model.seen

    reference = run(False)
    assert reference == (["d"], [("e", "foo", "internal"), ("f", "bar", "external")])
    assert run(True) == reference


class _Strict(StateChart[Any]):
    allow_event_without_transition = False
    a = State(initial=True)
    f = State(final=True)
    go = a.to(f)
    t = a.to.itself()


def _strict_answers(machine: Any, sends: list[dict[str, Any]]) -> list[str]:
    machine.send("go")
    assert machine.is_terminated
    answers = []
    for options in sends:
        try:
            machine.send("t", **options)
        except TransitionNotAllowed as error:
            answers.append(str(error))
        else:
            answers.append("not raised")
    return answers


# break 5 (C5, C15, C17): a strict chart (``allow_event_without_transition = False``) whose
# instance terminated raises python-statemachine's ``TransitionNotAllowed`` for every event
# sent after, and the compiled instance does so without a clock; created with a clock
# (``create(clock=VirtualClock())``, a clock changes nothing but when delayed events run) it
# answers ``Outcome(ignored, terminated)`` and raises nothing. The clock keeps the instance's
# ``_pending`` a ``_Queues``, so ``Instance.send`` goes ``_send_busy`` ->
# ``_send_after_leftovers``, whose "dropped" outcome for a terminated instance skips the
# strict check (``_dropped``/``Binding.terminated``) the idle path makes.
def test_c15_a_terminated_strict_instance_on_a_clock_refuses_the_next_event() -> None:
    reference = _strict_answers(_Strict(), [{}, {}])
    assert reference == ["Can't T when in F."] * 2
    clockless = _strict_answers(compile_chart(_Strict).create(), [{}, {}])
    assert clockless == reference
    on_a_clock = _strict_answers(compile_chart(_Strict).create(clock=VirtualClock()), [{}, {}])
    assert on_a_clock == reference


# break 6 (C15, C17): the same strict chart's terminated instance given a delayed event
# (``send("t", delay=5)``, or a negative delay, due at once): python-statemachine raises
# ``TransitionNotAllowed`` from that ``send``; the compiled instance answers
# ``Outcome(ignored, queued)`` and drops the event (``next_due()`` is None), with or without a
# clock.
@pytest.mark.parametrize("clocked", [False, True])
def test_c17_a_delayed_event_sent_to_a_terminated_strict_instance_is_refused(
    clocked: bool,
) -> None:
    sends: list[dict[str, Any]] = [{"delay": 5}, {"delay": -1}]
    reference = _strict_answers(_Strict(), sends)
    assert reference == ["Can't T when in F."] * 2
    chart = compile_chart(_Strict)
    machine = chart.create(clock=VirtualClock()) if clocked else chart.create()
    assert _strict_answers(machine, sends) == reference


# ============================================================================================
# Pins (hold on 2cef0fc)
# ============================================================================================


def _trace(machine: Any, sends: list[Any]) -> list[Any]:
    """The configuration and ``is_terminated`` after each send (or the exception's type)."""
    steps: list[Any] = [_ids(machine)]
    for send in sends:
        name, args, kwargs = send if isinstance(send, tuple) else (send, (), {})
        try:
            machine.send(name, *args, **kwargs)
        except Exception as error:
            steps.append((name, type(error).__name__, _ids(machine)))
        else:
            steps.append((name, _ids(machine), machine.is_terminated))
    return steps


def _both(chart: type[StateChart[Any]], sends: list[Any]) -> tuple[Any, Any]:
    """(trace, model log) on python-statemachine, then on the compiled runtime."""
    results = []
    for compiled in (False, True):
        model = Log()
        machine: Any = compile_chart(chart).create(model) if compiled else chart(model)
        results.append((_trace(machine, sends), model.log))
    return results[0], results[1]


def _doc_both(doc: str, sends: list[str]) -> tuple[Any, Any]:
    results = []
    for compiled in (False, True):
        chart = load(doc, format="scxml", trusted=True)
        machine = compile_chart(chart).create() if compiled else chart()
        results.append((_trace(machine, sends), machine.model.log))
    return results[0], results[1]


_INITIAL_CONTENT_DOC = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="p" version="1.0"
  datamodel="python" name="InitialContent">
  <datamodel><data id="log" expr="[]"/></datamodel>
  <state id="p">
    <initial><transition target="p2"><assign location="log" expr="log + ['init']"/></transition>
    </initial>
    <state id="p1"/>
    <state id="p2"><onentry><assign location="log" expr="log + ['p2']"/></onentry></state>
    <transition event="in" target="p1" type="internal">
      <assign location="log" expr="log + ['int']"/></transition>
    <transition event="ext" target="p1"><assign location="log" expr="log + ['ext']"/></transition>
    <transition event="self" target="p" type="internal">
      <assign location="log" expr="log + ['self']"/></transition>
    <transition event="tl"><assign location="log" expr="log + ['tl']"/><raise event="r"/>
    </transition>
    <transition event="r" target="p2"><assign location="log" expr="log + ['r']"/></transition>
    <onexit><assign location="log" expr="log + ['xp']"/></onexit>
    <onentry><assign location="log" expr="log + ['ep']"/></onentry>
  </state>
</scxml>"""


def test_c18_initial_content_and_internal_transitions_of_a_compound_run_as_in_psm() -> None:
    reference, compiled = _doc_both(_INITIAL_CONTENT_DOC, ["in", "ext", "self", "tl", "in"])
    assert reference[1] == [
        "ep", "init", "p2", "int", "xp", "ext", "ep", "xp", "self", "ep", "init", "p2",
        "tl", "xp", "r", "ep", "p2", "int",
    ]  # fmt: skip
    assert compiled == reference


_HISTORY_DEFAULT_DOC = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="o" version="1.0"
  datamodel="python" name="HistoryDefault">
  <datamodel><data id="log" expr="[]"/></datamodel>
  <state id="c">
    <history id="h" type="deep">
      <transition target="c2b"><assign location="log" expr="log + ['hdef']"/></transition>
    </history>
    <state id="c1"><transition event="n" target="c2"/></state>
    <state id="c2"><state id="c2a"/><state id="c2b"/><transition event="n" target="c2a"/>
    </state>
    <transition event="out" target="o"/>
  </state>
  <state id="o"><transition event="back" target="h"/></state>
</scxml>"""


def test_c18_a_deep_history_default_with_content_runs_once_as_in_psm() -> None:
    reference, compiled = _doc_both(_HISTORY_DEFAULT_DOC, ["back", "n", "out", "back"])
    assert reference == (
        [
            ["o"],
            ("back", ["c", "c2", "c2b"], False),
            ("n", ["c", "c2", "c2a"], False),
            ("out", ["o"], False),
            ("back", ["c", "c2", "c2a"], False),
        ],
        ["hdef"],
    )
    assert compiled == reference


_REGIONS_DOC = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s" version="1.0"
  datamodel="python" name="Regions">
  <datamodel><data id="log" expr="[]"/><data id="items" expr="[1, 2, 3]"/></datamodel>
  <state id="s"><transition event="go" target="p"/></state>
  <parallel id="p">
    <state id="r1">
      <state id="a1"><transition event="x" cond="In('b2')" target="a2">
        <assign location="log" expr="log + ['a']"/></transition></state>
      <state id="a2"/>
    </state>
    <state id="r2">
      <state id="b1"><transition event="x" target="b2">
        <assign location="log" expr="log + ['b']"/></transition></state>
      <state id="b2"/>
    </state>
    <transition event="both" target="a2 b2"/>
    <onentry>
      <foreach array="items" item="i" index="j"><assign location="log" expr="log + [(i, j)]"/>
      </foreach>
    </onentry>
  </parallel>
</scxml>"""


@pytest.mark.parametrize("sends", [["go", "x", "x"], ["go", "both"]])
def test_c18_in_on_a_sibling_region_foreach_and_targets_in_two_regions_run_as_in_psm(
    sends: list[str],
) -> None:
    reference, compiled = _doc_both(_REGIONS_DOC, sends)
    assert reference[1][:3] == [(1, 0), (2, 1), (3, 2)]
    assert compiled == reference


_DONEDATA_DOC = """<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="c" version="1.0"
  datamodel="python" name="DoneData">
  <datamodel><data id="log" expr="[]"/></datamodel>
  <state id="c">
    <state id="c1"><transition event="n" target="cf"/></state>
    <final id="cf"><donedata>PARAMS</donedata></final>
    <transition event="done.state.c" target="o">
      <assign location="log" expr="log + [str(_event.name)]"/></transition>
    <transition event="error.execution" target="e">
      <assign location="log" expr="log + [str(_event.name)]"/></transition>
  </state>
  <state id="o"/>
  <state id="e"/>
</scxml>"""


@pytest.mark.parametrize(
    ("params", "seen"),
    [
        ('<param name="v" expr="1/0"/><param name="w" expr="5"/>', "error.execution"),
        ('<param name="v" location="nosuch"/>', "error.execution"),
        ('<content expr="log"/>', "done.state.c"),
    ],
)
def test_c18_a_failing_donedata_raises_error_execution_as_in_psm(params: str, seen: str) -> None:
    reference, compiled = _doc_both(_DONEDATA_DOC.replace("PARAMS", params), ["n"])
    assert reference[1] == [seen]
    assert compiled == reference


def _self_entries(flag: bool) -> type[StateChart[Any]]:
    class SelfEntries(StateChart[Log]):
        enable_self_transition_entries = flag

        class c(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b)
            loop = a.to.itself(on="mark") | b.to.itself(internal=True, on="mark")

        y = State(final=True)
        fin = c.to(y)
        outer = c.to.itself(on="mark")
        inner = c.to.itself(internal=True, on="mark")

        def mark(self) -> None:
            self.model.log.append("on")

        def on_enter_state(self, state: State) -> None:
            self.model.log.append(("en", state.id))

        def on_exit_state(self, state: State) -> None:
            self.model.log.append(("ex", state.id))

    return SelfEntries


@pytest.mark.parametrize("flag", [True, False])
def test_c15_self_transitions_with_and_without_self_transition_entries_run_as_in_psm(
    flag: bool,
) -> None:
    reference, compiled = _both(
        _self_entries(flag), ["loop", "outer", "inner", "go", "loop", "inner", "outer"]
    )
    assert compiled == reference


class _Signatures(StateChart[Log]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on=["p1", "p2", "p3", "p4", "p5", "p6"]) | b.to(a, on="p7")

    def p1(self, x: Any, /, y: Any = 2) -> None:
        self.model.log.append(("p1", x, y))

    def p2(self, *args: Any) -> None:
        self.model.log.append(("p2", args))

    def p3(self, *, k: Any = 5, event_data: Any = None) -> None:
        self.model.log.append(("p3", k, str(event_data.event)))

    def p4(self, event: Any, *args: Any, k: Any = 9, **kw: Any) -> None:
        self.model.log.append(("p4", str(event), args, k, sorted(kw)))

    def p5(self, source: State, target: State, /) -> None:
        self.model.log.append(("p5", source.id, target.id))

    def p6(self, x: Any = 0, *a: Any, y: Any, **kw: Any) -> None:
        self.model.log.append(("p6", x, a, y))

    def p7(self, state: State, model: Any, transition: Any) -> None:
        self.model.log.append(("p7", state.id, str(transition.event)))


def test_c8_positional_only_star_args_and_keyword_only_callbacks_run_as_in_psm() -> None:
    reference, compiled = _both(
        _Signatures, [("go", (1, 2), {"k": 3, "y": 4}), "go", ("go", (7,), {"y": 1})]
    )
    assert ("p1", 1, 4) in reference[1]
    assert compiled == reference


class _ErrorInErrorHandler(StateChart[Log]):
    a = State(initial=True)
    b = State()
    e = State()
    go = a.to(b, on="boom")
    error_execution = a.to(e, on="boom2") | b.to(e, on="boom2") | e.to(a)
    back = e.to(a)

    def boom(self) -> None:
        self.model.log.append("boom")
        raise ValueError("x")

    def boom2(self, error: Exception) -> None:
        self.model.log.append(("boom2", str(error)))
        raise KeyError("y")

    def on_enter_state(self, state: State, event: Any) -> None:
        self.model.log.append(("en", state.id, str(event)))


def test_c7_an_error_raised_while_handling_error_execution_is_dropped_as_in_psm() -> None:
    reference, compiled = _both(_ErrorInErrorHandler, ["go", "back", "go"])
    assert reference[1][-1] == ("boom2", "x")
    assert compiled == reference


def _parallel_exits(base: type[StateChart[Any]], catch: bool) -> type[StateChart[Any]]:
    class Regions(base):  # type: ignore[valid-type,misc]
        catch_errors_as_events = catch

        class p(State.Parallel):
            class r1(State.Compound):
                a = State(initial=True)
                a2 = State()
                go = a.to(a2)

            class r2(State.Compound):
                b = State(initial=True)
                b2 = State()
                go2 = b.to(b2)

        z = State()
        leave = p.to(z)
        back = z.to(p)

        def on_exit_state(self, state: State) -> None:
            self.model.log.append(("x", state.id))
            if state.id == getattr(self.model, "fail", None):
                raise ValueError(state.id)

        def on_enter_state(self, state: State) -> None:
            self.model.log.append(("e", state.id))

    return Regions


@pytest.mark.parametrize("base", [StateChart, StateMachine])
@pytest.mark.parametrize("catch", [True, False])
@pytest.mark.parametrize("fail", ["a2", "b", "r1", "p"])
def test_c7_a_raising_exit_of_a_parallel_region_leaves_the_configuration_as_in_psm(
    base: type[StateChart[Any]], catch: bool, fail: str
) -> None:
    chart = _parallel_exits(base, catch)
    results = []
    for compiled in (False, True):
        model = Log()
        machine: Any = compile_chart(chart).create(model) if compiled else chart(model)
        model.fail = fail  # type: ignore[attr-defined]
        results.append((_trace(machine, ["go", "leave", "back", "leave"]), model.log))
    assert results[1] == results[0]


class _EventlessGuards(StateChart[Log]):
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b)
    b.to(c, cond="more")
    c.to(b, cond="bad")
    c.to(a)
    error_execution = a.to(a, on="err") | b.to(b, on="err") | c.to(c, on="err")

    def __init__(self, model: Log) -> None:
        self.n = 0
        super().__init__(model)

    def more(self) -> bool:
        self.n += 1
        self.model.log.append(("more", self.n))
        return self.n < 6

    def bad(self) -> bool:
        self.model.log.append("bad")
        if self.n >= 3:
            raise ValueError("bad")
        return True

    def err(self, error: Exception) -> None:
        self.model.log.append(("err", str(error)))


def test_c7_a_raising_guard_inside_an_eventless_loop_runs_as_in_psm() -> None:
    reference, compiled = _both(_EventlessGuards, ["go", "go"])
    assert ("err", "bad") in reference[1]
    assert compiled == reference


class _Ping(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)
    ping = a.to(a, on="relay") | b.to(b, on="relay")

    def relay(self, n: int = 0) -> None:
        self.model.log.append(("relay", n))
        other = self.model.other
        if n < 3:
            other.send("ping", n + 1)
            other.send("go")
            self.model.log.append(("after", n, _ids(other)))
            self.send("go")

    def on_enter_b(self) -> None:
        self.model.log.append("eb")


def test_c11_a_callback_sending_to_another_instance_of_the_chart_runs_as_in_psm() -> None:
    results = []
    for compiled in (False, True):
        shared: list[Any] = []
        first, second = Log(), Log()
        first.log = second.log = shared
        if compiled:
            chart = compile_chart(_Ping)
            x, y = chart.create(first), chart.create(second)
        else:
            x, y = _Ping(first), _Ping(second)
        first.other, second.other = y, x  # type: ignore[attr-defined]
        x.send("ping")
        results.append((_ids(x), _ids(y), shared))
    assert results[0][2][:3] == [("relay", 0), ("relay", 1), ("after", 1, [])]
    assert results[1] == results[0]


class _Timers(StateChart[Log]):
    a = State(initial=True)
    b = State()
    f = State(final=True)
    kick = a.to(b)
    t = a.to.itself(on="rec") | b.to.itself(on="rec")
    end = b.to(f)

    def on_enter_b(self, event: Any) -> None:
        if str(event) != "kick":
            return
        self.send("t", "x1", delay=30, send_id="s")
        self.send("t", "x2", delay=20, send_id="s")
        self.send("t", "x3", delay=20)
        self.send("t", "x4", delay=10, send_id="q")
        self.cancel_event("q")
        self.send("t", "x5", delay=10, send_id="q")
        self.send("end", delay=25)

    def rec(self, v: str) -> None:
        self.model.log.append(v)


def test_c17_same_time_timers_a_reused_send_id_and_a_cancel_run_as_in_psm() -> None:
    reference = Log()
    _Timers(reference).send("kick")
    assert reference.log == ["x5", "x2", "x3"]
    model = Log()
    instance = compile_chart(_Timers).create(model, clock=VirtualClock())
    instance.send("kick")
    instance.run_until_idle()
    assert model.log == reference.log
    assert _ids(instance) == ["f"]


class _Later(StateChart[Any]):
    a = State(initial=True)
    rec = a.to.itself(internal=True, on="record")
    kick = a.to.itself(internal=True, on="schedule")

    def __init__(self) -> None:
        self.log: list[str] = []
        super().__init__()

    def record(self, v: str) -> None:
        self.log.append(v)

    def schedule(self) -> None:
        self.send("rec", "late", delay=100, send_id="s")
        self.send("rec", "same", delay=100, send_id="s")
        self.send("rec", "early", delay=40)
        self.send("rec", "neg", delay=-5)


def test_c19_timers_restored_on_an_advanced_clock_keep_their_order_and_send_ids() -> None:
    reference = _Later()
    reference.send("kick")
    assert reference.log == ["neg", "early", "late", "same"]
    chart = compile_chart(_Later)
    clock = VirtualClock()
    clock.advance(3.7)
    instance = chart.create(clock=clock)
    instance.send("kick")
    clock.advance(0.02)
    snapshot = json.loads(json.dumps(instance.snapshot()))
    assert [timer["due_in_ms"] for timer in snapshot["timers"]] == [20.0, 80.0, 80.0]
    later = VirtualClock()
    later.advance(1000.123)
    restored = chart.restore(snapshot, clock=later)
    assert restored.next_due() == pytest.approx(1000.143)
    instance.run_until_idle()
    assert instance.log == reference.log
    restored.run_until_idle()
    assert restored.log == reference.log
    again = chart.restore(snapshot, clock=VirtualClock())
    again.cancel_event("s")
    again.run_until_idle()
    assert again.log == ["neg", "early"]


class _DoneData(StateChart[Log]):
    class c(State.Compound):
        a = State(initial=True)
        f = State(final=True, donedata="data")
        go = a.to(f)

    z = State()
    e = State()
    done_state_c = c.to(z, on="got")
    error_execution = c.to(e, on="err") | z.to(e, on="err")
    back = z.to(c) | e.to(c)

    def data(self, x: int = 0) -> Any:
        self.model.log.append(("data", x))
        mode = getattr(self.model, "mode", "ok")
        if mode == "raise":
            raise ValueError("data")
        if mode == "list":
            return [1, 2]
        return {"v": x, "w": 2}

    def got(self, *args: Any, **kwargs: Any) -> None:
        self.model.log.append(("got", args, kwargs.get("v"), kwargs.get("w")))

    def err(self, error: Exception) -> None:
        self.model.log.append(("err", repr(error)))


@pytest.mark.parametrize("mode", ["ok", "raise", "list"])
def test_c15_a_declared_donedata_callback_runs_as_in_psm(mode: str) -> None:
    results = []
    for compiled in (False, True):
        model = Log()
        model.mode = mode  # type: ignore[attr-defined]
        machine: Any = compile_chart(_DoneData).create(model) if compiled else _DoneData(model)
        results.append((_trace(machine, [("go", (5,), {"y": 1}), "back", "go"]), model.log))
    assert results[0][1][0] == ("data", 5)
    assert results[1] == results[0]


class _Busy(StateChart[Any]):
    a = State(initial=True)
    b = State()
    c = State(final=True)
    slow = a.to(b, on="wait")
    fast = b.to(c) | a.to(c, on="mark")

    def wait(self) -> None:
        self.model.started.set()
        self.model.release.wait(5)
        self.model.log.append("slow-done")

    def mark(self) -> None:
        self.model.log.append("fast-from-a")

    def on_enter_state(self, state: State) -> None:
        self.model.log.append(("en", state.id, threading.current_thread().name))


def test_c11_an_event_another_thread_sends_to_a_busy_instance_runs_after_as_in_psm() -> None:
    results = []
    for compiled in (False, True):
        model = Log()
        model.started = threading.Event()  # type: ignore[attr-defined]
        model.release = threading.Event()  # type: ignore[attr-defined]
        machine: Any = compile_chart(_Busy).create(model) if compiled else _Busy(model)
        first = threading.Thread(target=machine.send, args=("slow",), name="A")
        first.start()
        assert model.started.wait(5)  # type: ignore[attr-defined]

        def second(machine: Any = machine, model: Log = model) -> None:
            machine.send("fast")
            model.log.append(("returned", _ids(machine)))

        other = threading.Thread(target=second, name="B")
        other.start()
        other.join(5)
        time.sleep(0.05)
        model.release.set()  # type: ignore[attr-defined]
        first.join(5)
        results.append((_ids(machine), model.log))
    assert results[0][1][-2:] == [("en", "b", "A"), ("en", "c", "A")]
    assert results[1] == results[0]


class _Slotted:
    __slots__ = ("log", "on_enter_b", "state")

    def __init__(self) -> None:
        self.log: list[str] = []


class _SlottedSub(_Slotted):
    __slots__ = ()

    def on_enter_b(self) -> None:  # type: ignore[override]
        self.log.append("sub")


class _SlottedToggle(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)


def _slotted(kind: str) -> Any:
    if kind == "sub":
        return _SlottedSub()
    model = _Slotted()
    if kind == "held":
        model.on_enter_b = lambda: model.log.append("held")
    return model


@pytest.mark.parametrize(
    "kinds", [("plain", "held", "sub"), ("held", "plain", "sub"), ("sub", "plain", "held")]
)
def test_c9_slotted_models_of_one_class_and_a_subclass_bind_as_in_psm(
    kinds: tuple[str, ...],
) -> None:
    chart = compile_chart(_SlottedToggle)
    for kind in kinds:
        answers = []
        for compiled in (False, True):
            model = _slotted(kind)
            try:
                machine = chart.create(model) if compiled else _SlottedToggle(model)
                machine.send("go")
            except AttributeError as error:  # an unset slot ``dir`` lists, read as there
                answers.append(str(error))
            else:
                answers.append(model.log)
        assert answers[1] == answers[0], kind


class _Wildcards(StateChart[Log]):
    a = State(initial=True)
    b = State()
    anything = Event(a.to(b, event="*") | b.to(a, event="error.*"), name="Anything")

    def on_transition(self, event: Any, event_data: Any) -> None:
        transition = event_data.transition
        self.model.log.append((str(event), event.name, event.id, str(transition.event)))


def test_c4_wildcard_and_prefix_events_give_callbacks_psm_s_event_names() -> None:
    reference, compiled = _both(_Wildcards, ["x.y", "error.z", "anything", "error"])
    assert reference[1][2] == ("anything", "Anything", "anything", "* anything")
    assert compiled == reference


class _History(StateChart[Any]):
    class c(State.Compound):
        class r(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b)

        x = State()
        h = HistoryState(type="deep")
        swap = r.to(x)

    o = State()
    leave = c.to(o)
    back = o.to(c.h)

    def __init__(self) -> None:
        self.log: list[str] = []
        super().__init__()

    def on_enter_b(self) -> None:
        self.log.append("b")
        self.raise_("leave")


def test_c19_a_restored_deep_history_reenters_the_remembered_leaf() -> None:
    reference = _History()
    reference.send("go")
    assert _ids(reference) == ["o"]
    reference.send("back")
    chart = compile_chart(_History)
    instance = chart.create()
    instance.send("go")
    snapshot = json.loads(json.dumps(instance.snapshot()))
    assert snapshot["history"] == {"h": ["r", "b"]}
    restored = chart.restore(snapshot)
    restored.send("back")
    instance.send("back")
    assert _ids(restored) == _ids(instance) == _ids(reference) == ["o"]
    assert restored.log == instance.log == reference.log == ["b", "b"]
