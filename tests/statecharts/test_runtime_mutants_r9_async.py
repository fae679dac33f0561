"""Async charts: rules of the statechart runtime a mutation sample of
``statecharts/_runtime.py`` (seed 2501) found untested, compared with python-statemachine's
async engine where it has the same API. (Apart from test_runtime_mutants_r9.py: async charts
cannot run under mutmut's trampolines, so the mutation script runs this file only when it
re-runs a survivor for real.)

Rules checked here (docs/spec.md): C5, C6, C8, C17, C21. Two strict xfails record divergences
from python-statemachine found on the way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from statemachine import Event, State, StateChart
from statemachine.exceptions import InvalidDefinition, StateMachineError, TransitionNotAllowed

from statecharts import UnsupportedChart, compile_chart


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


#: What the gated charts' callbacks saw, in order (module-level: a chart method handing
#: ``self`` to code it cannot read is refused, so the log is not on the machine).
LOG: list[Any] = []
GATES: list[asyncio.Event] = []
#: What a callback's ``send`` returned, kept for the test to await.
KEPT: list[Any] = []
#: How ``Gated.poked`` sends (``send`` or ``raise_``): the last one.
HOW: list[str] = ["send"]


class Gated(StateChart[Any]):
    """Entering ``busy`` waits on a gate the test opens, so a run stays in progress while
    other tasks send; ``note`` records its payload from either state; ``finish`` ends the
    chart; ``poke``'s action sends ``note`` and keeps what that ``send`` returned."""

    idle = State(initial=True)
    busy = State()
    done = State(final=True)
    go = idle.to(busy)
    back = busy.to(idle)
    finish = busy.to(done)
    poke = idle.to(idle, internal=True, on="poked")
    note = idle.to(idle, internal=True, on="record") | busy.to(busy, internal=True, on="record")

    async def on_enter_busy(self) -> None:
        LOG.append(("enter busy",))
        await GATES[-1].wait()
        LOG.append(("entered busy",))

    def record(self, *args: Any, x: Any = None) -> None:
        LOG.append(("record", args, x))

    def poked(self) -> None:
        if HOW[-1] == "raise_":
            KEPT.append(self.raise_("note", 1, x=2))
        else:
            KEPT.append(self.send("note", 1, x=2))


class StrictGated(Gated):
    allow_event_without_transition = False


async def gated(machine: Any, scenario: Any) -> list[Any]:
    """Run ``scenario(machine, gate)`` with a fresh log and gate; the log."""
    LOG.clear()
    KEPT.clear()
    GATES.append(asyncio.Event())
    await machine.activate_initial_state()
    await scenario(machine, GATES[-1])
    return list(LOG)


def test_c21_a_raise_from_another_task_during_a_run_joins_it_with_its_payload() -> None:
    """``raise_`` from a task other than the one whose run holds the instance (outside any
    callback: python-statemachine's ``raise_`` is then a ``send``) joins that run, keeps its
    payload and returns once the run took it."""
    answers: list[Any] = []

    async def scenario(machine: Any, gate: asyncio.Event) -> None:
        run = asyncio.create_task(machine.send("go"))
        await asyncio.sleep(0)  # the run waits in busy's enter
        joined = asyncio.create_task(machine.raise_("note", 1, x=2))
        await asyncio.sleep(0)
        answers.append(joined.done())  # waiting for the run, not answered at once
        gate.set()
        await run
        answers.append(await joined)
        LOG.append(("joined answered", ids(machine)))

    reference = asyncio.run(gated(Gated(), scenario))
    assert answers == [False, None]  # python-statemachine's answer
    answers.clear()
    assert asyncio.run(gated(compile_chart(Gated).create(), scenario)) == reference
    assert ("record", (1,), 2) in reference
    assert reference[-1] == ("joined answered", ["busy"])
    waited, outcome = answers
    assert not waited
    assert (outcome.applied, outcome.event, outcome.reason) == (False, "note", "queued")


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_c5_an_event_joining_a_run_that_ends_the_instance_is_answered_as_dropped(
    strict: bool,
) -> None:
    """Another task's event waiting on a run that ends in a final state is dropped; its
    caller is answered as python-statemachine answers it: quietly (``terminated``), or
    ``TransitionNotAllowed`` on a strict chart."""
    declared = StrictGated if strict else Gated
    answers: list[Any] = []

    async def scenario(machine: Any, gate: asyncio.Event) -> None:
        run = asyncio.create_task(machine.send("go"))
        await asyncio.sleep(0)
        finish = asyncio.create_task(machine.send("finish"))
        note = asyncio.create_task(machine.send("note", 5))
        await asyncio.sleep(0)
        gate.set()
        await run
        await finish
        try:
            answers.append(await note)
        except TransitionNotAllowed as error:
            answers.append(f"refused: {error}")
        LOG.append(("after", ids(machine), machine.is_terminated))

    reference = asyncio.run(gated(declared(), scenario))
    expected = "refused: Can't Note when in Done." if strict else None
    assert answers == [expected]
    answers.clear()
    assert asyncio.run(gated(compile_chart(declared).create(), scenario)) == reference
    assert reference[-1] == ("after", ["done"], True)
    assert ("record", (5,), None) not in reference
    (answer,) = answers
    if strict:
        assert answer == expected
    else:
        assert (answer.applied, answer.event, answer.reason) == (False, "note", "terminated")
        assert answer.source.id == "done"


@pytest.mark.parametrize("how", ["send", "raise_"])
def test_c21_a_send_made_while_the_instance_runs_outside_a_task_joins_the_run_awaited_later(
    how: str,
) -> None:
    """``run_until_idle()`` from a task runs the events waiting outside any task's run; a
    ``send`` (or ``raise_``) from its callback is the coroutine to await. Awaited once another
    task's run holds the instance, it joins that run: its event runs there, with its payload,
    and it returns (``queued``) once the run took it."""
    answers: list[Any] = []
    HOW.append(how)

    async def scenario(machine: Any, gate: asyncio.Event) -> None:
        machine.send("poke").close()  # queued when called, never awaited: it waits
        machine.run_until_idle()  # poke runs, its send kept
        (kept,) = KEPT
        run = asyncio.create_task(machine.send("go"))
        await asyncio.sleep(0)
        joined = asyncio.create_task(kept)
        await asyncio.sleep(0)
        answers.append(joined.done())
        gate.set()
        await run
        answers.append(await joined)

    log = asyncio.run(gated(compile_chart(Gated).create(), scenario))
    # note re-enters busy: a StateChart's internal self-transition runs its state's entries
    assert log == [
        ("enter busy",),
        ("entered busy",),
        ("record", (1,), 2),
        ("enter busy",),
        ("entered busy",),
    ]
    waited, outcome = answers
    assert not waited
    assert (outcome.applied, outcome.event, outcome.reason) == (False, "note", "queued")


class Refusing(StateChart[Any]):
    """``poke``'s action tries ``send``, ``raise_`` and ``activate_initial_state()``, noting
    what each raises; ``back``'s action is async."""

    a = State(initial=True)
    b = State()
    poke = a.to(b, on="poked")
    back = b.to(a)

    async def on_back(self) -> None:
        LOG.append(("back",))

    def poked(self) -> None:
        attempts: tuple[Callable[[], Any], ...] = (
            lambda: self.send("note"),
            lambda: self.raise_("note"),
            self.activate_initial_state,
        )
        for attempt in attempts:
            try:
                attempt()
            except RuntimeError as error:
                LOG.append(("refused", str(error)))


def test_c21_an_async_instance_running_outside_any_task_refuses_what_its_callbacks_send() -> None:
    """An async instance whose waiting events ``run_until_idle()`` runs outside any event
    loop: what its callback sends, raises or activates meanwhile is refused, naming the
    event, the chart and why."""

    async def leave_poke(machine: Any) -> None:
        await machine.activate_initial_state()
        machine.send("poke").close()  # queued when called, never awaited: it waits

    LOG.clear()
    machine: Any = compile_chart(Refusing).create()
    asyncio.run(leave_poke(machine))
    machine.run_until_idle()
    why = (
        "was sent to an async instance of Refusing while it runs an event outside any event "
        "loop task"
    )
    refused = [
        ("refused", f"'note' {why}"),
        ("refused", f"'note' {why}"),
        ("refused", f"'' {why}"),
    ]
    assert refused == LOG
    assert ids(machine) == ["b"]


class Entering(StateChart[Any]):
    """An async chart whose initial state has an ``enter`` callback; ``poke``'s action takes
    any keyword arguments."""

    a = State(initial=True)
    b = State()
    poke = a.to(b, on="poked")
    back = b.to(a)

    def on_enter_a(self) -> None:
        LOG.append(("enter a",))

    async def on_enter_b(self) -> None:
        LOG.append(("enter b",))

    def poked(self, *args: Any, **kwargs: Any) -> None:
        options = {"delay", "send_id", "internal", "x"}
        LOG.append(("poked", args, sorted(item for item in kwargs.items() if item[0] in options)))


@pytest.mark.parametrize(
    "options",
    [{"send_id": "s1"}, {"delay": 0, "x": 2}, {"internal": False}, {"delay": 1, "send_id": "s"}],
    ids=repr,
)
def test_c21_a_first_send_with_options_outside_any_loop_passes_none_of_them_as_payload(
    options: dict[str, Any],
) -> None:
    """The first event of an async instance, sent with options outside any event loop, runs
    after the initial state's ``enter`` callbacks; ``delay``, ``send_id`` and ``internal``
    are options, not keyword arguments its callbacks receive, as in python-statemachine."""

    def run(machine: Any) -> list[Any]:
        LOG.clear()
        machine.send("poke", 7, **options)
        return [*LOG, ids(machine)]

    reference = run(Entering())
    assert run(compile_chart(Entering).create()) == reference
    assert reference == [
        ("enter a",),
        ("poked", (7,), sorted(item for item in options.items() if item[0] == "x")),
        ("enter b",),
        ["b"],
    ]


@pytest.mark.parametrize(
    "options", [{"send_id": "s1"}, {"delay": 0, "x": 2}, {"internal": True}], ids=repr
)
def test_c21_later_sends_with_options_outside_any_loop_run_as_in_python_statemachine(
    options: dict[str, Any],
) -> None:
    """Once the initial state is entered, an async instance's events sent with options
    outside any event loop each run to completion, their options not payload."""

    def run(machine: Any) -> list[Any]:
        LOG.clear()
        machine.send("poke", 7, **options)
        machine.send("back", **options)
        machine.send("poke", 8, **options)
        return [*LOG, ids(machine)]

    reference = run(Entering())
    assert run(compile_chart(Entering).create()) == reference
    payload = sorted(item for item in options.items() if item[0] == "x")
    assert reference[-3:] == [("poked", (8,), payload), ("enter b",), ["b"]]


class StrictEntering(Entering):
    allow_event_without_transition = False


def test_c21_the_refusal_of_an_event_due_before_the_initial_entry_explains_itself() -> None:
    """On a strict chart, an event sent before activation with a delay that makes it due
    before the instance was made is refused, naming why and what to do instead."""
    instance: Any = compile_chart(StrictEntering).create()
    with pytest.raises(UnsupportedChart) as raised:
        instance.send("poke", delay=-1000)
    assert str(raised.value) == (
        "StrictEntering: an event due before the initial state is entered, on a chart without "
        "events without transitions is not supported by the compiled runtime "
        "(send('poke', delay=-1000) before activate_initial_state()); send it after the "
        "initial state is entered, or with a delay of 0 or more"
    )


class AsyncPreparing:
    """A model whose ``prepare_event`` is a coroutine function."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    async def prepare_event(self, event: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"owner": "model", "by_model": str(event)}


class Prepared(StateChart[Any]):
    """A chart with a synchronous ``prepare_event`` and no async callback of its own."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    def prepare_event(self, event: Any) -> dict[str, Any]:
        return {"owner": "chart", "by_chart": str(event)}

    def record(self, owner: str, by_chart: str = "-", by_model: str = "-") -> None:
        self.model.log.append((owner, by_chart, by_model))


def test_c8_a_model_s_async_prepare_event_makes_the_chart_run_awaited() -> None:
    """A model whose ``prepare_event`` is async makes python-statemachine run the chart with
    its async engine: its result is awaited and merged after the chart's, and ``send`` is
    awaited."""

    async def run(machine: Any) -> tuple[list[Any], list[str]]:
        await machine.activate_initial_state()
        await machine.send("go")
        return machine.model.log, ids(machine)

    reference = asyncio.run(run(Prepared(AsyncPreparing())))
    assert asyncio.run(run(compile_chart(Prepared).create(AsyncPreparing()))) == reference
    assert reference == ([("model", "go", "go")], ["b"])


class Loops(StateChart[Any]):
    """An async chart: ``later`` (declared with a delay) and ``now`` loop on ``a``; ``poke``
    goes to ``b``."""

    a = State(initial=True)
    b = State()
    later = Event(a.to(a, on="noted"), delay=5)
    now = a.to(a, on="noted")
    poke = a.to(b, on="noted")
    back = b.to(a, on="noted")

    async def on_enter_b(self) -> None:
        LOG.append(("enter b",))

    def noted(self, event: Any) -> None:
        LOG.append(("noted", str(event)))


def _loops_run(machine: Any, scenario: Any) -> list[Any]:
    LOG.clear()
    asyncio.run(scenario(machine))
    return [*LOG, ids(machine)]


def test_c17_an_event_declared_with_a_delay_sent_before_activation_waits_for_it() -> None:
    """Sent before the initial state is entered, an event declared with ``delay`` still waits
    for it: ``now``, sent after it, runs first, as in python-statemachine."""

    async def scenario(machine: Any) -> None:
        kept = [machine.send("later"), machine.send("now")]
        for sent in kept:
            await sent
        await asyncio.sleep(0.01)  # past the 5 ms delay
        await machine.activate_initial_state()

    reference = _loops_run(Loops(), scenario)
    assert _loops_run(compile_chart(Loops).create(), scenario) == reference
    assert reference == [("noted", "now"), ("noted", "later"), ["a"]]


def test_c17_cancelling_an_empty_send_id_spares_an_event_sent_before_activation_without_one() -> (
    None
):
    """An event sent before the initial state is entered without a ``send_id`` has none:
    ``cancel_event("")`` leaves it queued, and it runs after the initial entry, as in
    python-statemachine."""

    async def scenario(machine: Any) -> None:
        kept = machine.send("poke")
        machine.cancel_event("")
        await kept
        await machine.activate_initial_state()

    reference = _loops_run(Loops(), scenario)
    assert _loops_run(compile_chart(Loops).create(), scenario) == reference
    assert reference == [("noted", "poke"), ("enter b",), ["b"]]


class Handover(StateChart[Any]):
    """``go``'s ``before`` waits until cancelled; ``poke`` and ``prod`` each note the
    configuration they run in."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, before="waiting")
    poke = a.to(c, on="noted") | b.to(c, on="noted")
    prod = c.to(a, on="noted") | a.to(c, on="noted")

    async def waiting(self) -> None:
        LOG.append(("waiting",))
        await asyncio.sleep(10)

    def noted(self, event: Any) -> None:
        LOG.append(("noted", str(event), ids(self)))


def test_c21_the_task_taking_a_cancelled_run_over_is_answered_with_its_own_event() -> None:
    """The sender of ``go`` is cancelled while two tasks wait with ``poke`` and ``prod``; the
    first takes the run over and runs both, as in python-statemachine. Its ``send`` returns
    its own event's outcome (applied); the other's returns ``queued``."""
    answers: list[Any] = []

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        first = asyncio.ensure_future(machine.send("go"))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(machine.send("poke"))
        third = asyncio.ensure_future(machine.send("prod"))
        await asyncio.sleep(0)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        answers.extend([await second, await third])

    reference = _loops_run(Handover(), scenario)
    assert answers == [None, None]  # python-statemachine's answers
    answers.clear()
    assert _loops_run(compile_chart(Handover).create(), scenario) == reference
    # ``on`` callbacks run between the states (a StateChart's configuration is empty there)
    assert reference == [("waiting",), ("noted", "poke", []), ("noted", "prod", []), ["a"]]
    poke, prod = answers
    assert (poke.applied, poke.event, poke.target.id) == (True, "poke", "c")
    assert (prod.applied, prod.event, prod.reason) == (False, "prod", "queued")


class Stuck(StateChart[Any]):
    """``go`` enters ``b``; ``poke``'s ``before`` waits until cancelled; ``prod`` notes that
    it ran."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b)
    poke = b.to(c, before="waiting")
    prod = b.to(a, on="noted") | c.to(a, on="noted")

    async def on_enter_b(self) -> None:
        LOG.append(("enter b",))
        await asyncio.sleep(0)

    async def waiting(self) -> None:
        LOG.append(("waiting",))
        await asyncio.sleep(10)

    def noted(self, event: Any) -> None:
        LOG.append(("noted", str(event)))


async def _answered(task: Any, name: str) -> None:
    """Log that ``task`` was answered: returned, or raised python-statemachine's error for an
    event its run was processing when cancelled (the compiled runtime returns ``queued``
    there: see the xfail below); any other exception is logged as it is."""
    try:
        await task
    except StateMachineError:
        pass
    except Exception as error:  # logged, to compare
        LOG.append((name, repr(error)))
        return
    LOG.append((name, "answered"))


async def _cancelled_while_poking(machine: Any, prod: bool) -> Any:
    """``go`` runs; a task's ``poke`` joins and the run takes it (its ``before`` waits), a
    third task's ``prod`` waits too (if ``prod``); then the sender of ``go`` is cancelled."""
    await machine.activate_initial_state()
    first = asyncio.ensure_future(machine.send("go"))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(machine.send("poke"))
    third = asyncio.ensure_future(machine.send("prod")) if prod else None
    while ("waiting",) not in LOG:
        await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    return second, third


@pytest.mark.parametrize("prod", [False, True], ids=["alone", "with-another-waiting"])
def test_c21_a_run_cancelled_in_a_joined_event_answers_its_sender_then_the_rest_run(
    prod: bool,
) -> None:
    """The sender of ``go`` is cancelled while the run processes another task's ``poke``: that
    task is answered, then the event a third task waits with runs (that task taking the run
    over), as in python-statemachine."""

    async def scenario(machine: Any) -> None:
        second, third = await _cancelled_while_poking(machine, prod)
        await _answered(second, "poke's sender")
        if third is not None:
            await _answered(third, "prod's sender")

    reference = _loops_run(Stuck(), scenario)
    assert _loops_run(compile_chart(Stuck).create(), scenario) == reference
    expected: list[Any] = [("enter b",), ("waiting",), ("poke's sender", "answered")]
    if prod:
        expected += [("noted", "prod"), ("prod's sender", "answered"), ["a"]]
    else:
        expected += [["b"]]
    assert reference == expected


def test_c21_the_sender_of_the_event_a_cancelled_run_processed_gets_its_error() -> None:
    """python-statemachine's caller awaiting the event its cancelled run was processing gets
    ``StateMachineError``; the compiled runtime answers ``queued``."""

    async def scenario(machine: Any) -> None:
        second, _ = await _cancelled_while_poking(machine, False)
        try:
            await second
        except StateMachineError as error:
            LOG.append(("raised", str(error)))

    reference = _loops_run(Stuck(), scenario)
    assert reference[-2] == (
        "raised",
        "The task running the processing loop was cancelled while it processed this event.",
    )
    assert _loops_run(compile_chart(Stuck).create(), scenario) == reference


def test_c21_events_due_before_the_initial_entry_are_answered_as_ignored_in_no_state() -> None:
    """Sent before activation with a delay that makes them due before the instance was made,
    python-statemachine takes them first, in no state, and ignores them; each ``send``
    answers how it was ignored: a declared event ``no_transition``, an undeclared name
    ``unknown_event``, the source the initial state (nothing entered yet)."""
    answers: list[Any] = []

    async def scenario(machine: Any) -> None:
        await asyncio.sleep(0.002)
        sent = [machine.send("poke", 7, delay=-1000), machine.send("nope", delay=-1000)]
        for each in sent:
            answers.append(await each)
        await machine.send("now")

    reference = _loops_run(Loops(), scenario)
    assert answers == [None, None]
    answers.clear()
    assert _loops_run(compile_chart(Loops).create(), scenario) == reference
    assert reference == [("noted", "now"), ["a"]]
    assert [
        (outcome.applied, outcome.event, outcome.source.id, outcome.reason) for outcome in answers
    ] == [(False, "poke", "a", "no_transition"), (False, "nope", "a", "unknown_event")]


def test_c21_activating_from_another_task_during_a_run_returns_at_once() -> None:
    """The initial state is entered; ``activate_initial_state()`` awaited by a task while
    another task's run waits in ``busy``'s entry returns before that run goes on, as
    python-statemachine's returns (its processing loop is taken)."""

    async def scenario(machine: Any, gate: asyncio.Event) -> None:
        run = asyncio.create_task(machine.send("go"))
        await asyncio.sleep(0)
        activating = asyncio.create_task(machine.activate_initial_state())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        LOG.append(("activated before the run went on", activating.done()))
        gate.set()
        await activating
        await run

    reference = asyncio.run(gated(Gated(), scenario))
    assert ("activated before the run went on", True) in reference
    assert asyncio.run(gated(compile_chart(Gated).create(), scenario)) == reference


def test_c21_events_queued_before_activation_run_before_the_first_send_outside_any_loop() -> None:
    """An event sent (never awaited) in an event loop before the initial state is entered
    waits; the first event sent outside any loop then enters the initial state, runs it,
    then itself, as in python-statemachine."""

    def run(machine: Any) -> list[Any]:
        LOG.clear()

        async def leave_poke() -> None:
            machine.send("poke", 1).close()

        asyncio.run(leave_poke())
        machine.send("back")
        return [*LOG, ids(machine)]

    reference = run(Entering())
    assert run(compile_chart(Entering).create()) == reference
    assert reference == [("enter a",), ("poked", (1,), []), ("enter b",), ("enter a",), ["a"]]


def test_c21_activation_runs_the_events_queued_before_it_after_the_initial_entry() -> None:
    """Events sent (never awaited) before the initial state is entered run once
    ``activate_initial_state()`` entered it, in order, with their payload, as in
    python-statemachine."""

    async def scenario(machine: Any) -> None:
        machine.send("poke", 1, x=2).close()
        machine.send("back").close()
        await machine.activate_initial_state()
        LOG.append(("activated", ids(machine)))

    reference = _loops_run(Entering(), scenario)
    assert _loops_run(compile_chart(Entering).create(), scenario) == reference
    assert reference == [
        ("enter a",),
        ("poked", (1,), [("x", 2)]),
        ("enter b",),
        ("enter a",),
        ("activated", ["a"]),
        ["a"],
    ]


class SlowStart(StateChart[Any]):
    """The initial state's async ``enter`` waits on a gate the test opens; ``poke`` notes
    where it runs from."""

    a = State(initial=True)
    b = State()
    poke = a.to(b, on="noted")
    now = a.to(a, internal=True, on="noted") | b.to(b, internal=True, on="noted")

    async def on_enter_a(self) -> None:
        LOG.append(("enter a",))
        await GATES[-1].wait()
        LOG.append(("entered a",))

    def noted(self, event: Any, source: Any) -> None:
        LOG.append(("noted", str(event), source.id))


@pytest.mark.parametrize("queued", [False, True], ids=["nothing-queued", "an-event-queued"])
def test_c21_an_event_another_task_sends_during_activation_waits_for_the_initial_entry(
    queued: bool,
) -> None:
    """While ``activate_initial_state()`` awaits the initial state's ``enter`` (with an
    event sent before it queued, or none), another task's ``send`` joins that run: it runs
    once the initial state is entered (after the queued one), as in python-statemachine."""

    async def scenario(machine: Any) -> None:
        GATES.append(asyncio.Event())
        if queued:
            machine.send("now").close()
        activating = asyncio.create_task(machine.activate_initial_state())
        await asyncio.sleep(0)
        sending = asyncio.create_task(machine.send("poke"))
        await asyncio.sleep(0)
        LOG.append(("joined", sending.done()))
        GATES[-1].set()
        await activating
        await sending

    reference = _loops_run(SlowStart(), scenario)
    assert _loops_run(compile_chart(SlowStart).create(), scenario) == reference
    assert reference == [
        ("enter a",),
        ("joined", False),
        ("entered a",),
        # ``now`` re-enters ``a`` (a StateChart's self-transition runs its entries)
        *([("noted", "now", "a"), ("enter a",), ("entered a",)] if queued else []),
        ("noted", "poke", "a"),
        ["b"],
    ]


class Keyed(StateChart[Any]):
    """The initial state's ``enter`` takes a keyword argument given when the machine is made;
    ``b``'s ``enter`` is async."""

    a = State(initial=True)
    b = State()
    poke = a.to(b)
    back = b.to(a)

    def on_enter_a(self, x: Any = None) -> None:
        LOG.append(("enter a", x))

    async def on_enter_b(self) -> None:
        LOG.append(("enter b",))


def test_c21_activation_after_queued_events_gives_the_initial_entry_the_creation_keywords() -> (
    None
):
    """The keyword arguments the instance was made with reach the initial state's ``enter``
    callbacks when ``activate_initial_state()`` enters it, events sent before it waiting, as
    python-statemachine's constructor hands them over."""

    async def scenario(machine: Any) -> None:
        machine.send("poke").close()
        await machine.activate_initial_state()

    reference = _loops_run(Keyed(x=5), scenario)
    assert _loops_run(compile_chart(Keyed).create(x=5), scenario) == reference
    assert reference == [("enter a", 5), ("enter b",), ["b"]]


def test_c21_activating_a_started_instance_runs_the_events_waiting() -> None:
    """Events sent (never awaited) to a started, idle instance wait; a later
    ``activate_initial_state()`` runs them, in order, as python-statemachine's processing
    loop does."""

    async def scenario(machine: Any) -> None:
        GATES.append(asyncio.Event())
        GATES[-1].set()
        await machine.activate_initial_state()
        machine.send("now").close()
        machine.send("poke").close()
        await machine.activate_initial_state()
        LOG.append(("activated", ids(machine)))

    reference = _loops_run(SlowStart(), scenario)
    assert _loops_run(compile_chart(SlowStart).create(), scenario) == reference
    assert reference[2:] == [
        ("noted", "now", "a"),
        ("enter a",),
        ("entered a",),
        ("noted", "poke", "a"),
        ("activated", ["b"]),
        ["b"],
    ]


def test_c21_an_event_sent_while_activation_runs_the_events_waiting_joins_that_run() -> None:
    """``activate_initial_state()`` on a started instance runs the event waiting (``now``,
    whose re-entry of ``a`` awaits a gate); another task's ``send`` meanwhile joins that run
    and runs after it, as in python-statemachine."""

    async def scenario(machine: Any) -> None:
        GATES.append(asyncio.Event())
        GATES[-1].set()
        await machine.activate_initial_state()
        GATES.append(asyncio.Event())
        machine.send("now").close()
        activating = asyncio.create_task(machine.activate_initial_state())
        await asyncio.sleep(0)
        sending = asyncio.create_task(machine.send("poke"))
        await asyncio.sleep(0)
        LOG.append(("joined", sending.done()))
        GATES[-1].set()
        await activating
        await sending

    reference = _loops_run(SlowStart(), scenario)
    assert _loops_run(compile_chart(SlowStart).create(), scenario) == reference
    assert reference[2:] == [
        ("noted", "now", "a"),
        ("enter a",),
        ("joined", False),
        ("entered a",),
        ("noted", "poke", "a"),
        ["b"],
    ]


class Relaying(StateChart[Any]):
    """``go``'s async action sends ``hop`` and raises ``skip``, each with a positional and a
    keyword payload."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on="relay")
    hop = b.to(b, internal=True, on="hopped")
    skip = b.to(b, internal=True, on="skipped")
    back = b.to(a)

    async def relay(self) -> None:
        await self.send("hop", 1, x=2)
        await self.raise_("skip", 3, x=4)

    async def on_enter_b(self) -> None:
        LOG.append(("enter b",))

    def hopped(self, *args: Any, x: Any = None) -> None:
        LOG.append(("noted", "hop", args, x))

    def skipped(self, *args: Any, x: Any = None) -> None:
        LOG.append(("noted", "skip", args, x))


#: What a run of ``Relaying``'s ``go`` logs, in python-statemachine's order: the raised event
#: within the macrostep, the sent one after it, each re-entering ``b``.
RELAYED = [
    ("enter b",),
    ("noted", "skip", (3,), 4),
    ("enter b",),
    ("noted", "hop", (1,), 2),
    ("enter b",),
    ["b"],
]


def test_c21_events_a_callback_sends_outside_any_loop_run_after_it_with_their_payload() -> None:
    """Run to completion outside any event loop, a callback's ``send`` and ``raise_`` queue
    their events, with positional and keyword payload, as in python-statemachine."""

    def run(machine: Any) -> list[Any]:
        LOG.clear()
        machine.send("go")
        return [*LOG, ids(machine)]

    reference = run(Relaying())
    assert run(compile_chart(Relaying).create()) == reference == RELAYED


def test_c21_events_a_callback_sends_in_a_task_run_after_it_with_their_payload() -> None:
    """Awaited in a task, a callback's ``send`` and ``raise_`` queue their events, with
    positional and keyword payload, as in python-statemachine."""

    async def scenario(machine: Any) -> None:
        await machine.send("go")

    reference = _loops_run(Relaying(), scenario)
    assert _loops_run(compile_chart(Relaying).create(), scenario) == reference == RELAYED


@pytest.mark.parametrize("how", ["send", "raise_"])
def test_c21_events_another_task_sends_during_a_run_queue_in_the_order_send_was_called(
    how: str,
) -> None:
    """Another task calls ``send`` (or ``raise_``) twice while a run waits, awaiting the
    second first: each event joined the run's queue when it was called, so they run in that
    order, as in python-statemachine."""

    async def scenario(machine: Any, gate: asyncio.Event) -> None:
        run = asyncio.create_task(machine.send("go"))
        await asyncio.sleep(0)

        async def sender() -> None:
            call = machine.raise_ if how == "raise_" else machine.send
            first = call("note", 1)
            second = call("note", 2)
            await second
            await first

        sending = asyncio.create_task(sender())
        await asyncio.sleep(0)
        gate.set()
        await run
        await sending

    reference = asyncio.run(gated(Gated(), scenario))
    assert asyncio.run(gated(compile_chart(Gated).create(), scenario)) == reference
    notes = [entry for entry in reference if entry[0] == "record"]
    assert notes == [("record", (1,), None), ("record", (2,), None)]


class Raised(StateChart[Any]):
    """``poke``'s action takes any keyword arguments; ``b``'s ``enter`` is async."""

    a = State(initial=True)
    b = State()
    poke = a.to(b, on="poked")
    back = b.to(a)

    async def on_enter_b(self) -> None:
        LOG.append(("enter b",))

    def poked(self, *args: Any, **kwargs: Any) -> None:
        LOG.append(("poked", args, sorted(kwargs)))


def test_c21_raise_from_outside_a_run_is_a_send_flagged_internal_as_in_python_statemachine() -> (
    None
):
    """In a task, outside any run, ``raise_`` is python-statemachine's ``send(...,
    internal=True)``: the callbacks get its payload and nothing of the flag, and with a
    ``delay`` it is refused as delayed and internal when called."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        await machine.raise_("poke", 7, x=1)
        with pytest.raises(InvalidDefinition, match="cannot be both delayed and internal"):
            machine.raise_("back", delay=5)
        LOG.append(("refused", ids(machine)))

    reference = _loops_run(Raised(), scenario)
    assert _loops_run(compile_chart(Raised).create(), scenario) == reference
    assert reference[0] == (
        "poked",
        (7,),
        [
            "event",
            "event_data",
            "machine",
            "model",
            "new_configuration",
            "previous_configuration",
            "source",
            "state",
            "target",
            "transition",
            "x",
        ],
    )
    assert reference[1:] == [("enter b",), ("refused", ["b"]), ["b"]]


def test_c21_raise_outside_any_loop_runs_the_event_with_its_payload() -> None:
    """Outside any event loop and any run, ``raise_`` runs its event to completion with its
    positional and keyword payload, as python-statemachine's ``send(..., internal=True)``."""

    def run(machine: Any) -> list[Any]:
        LOG.clear()
        machine.raise_("poke", 7, x=1)
        return [*LOG, ids(machine)]

    reference = run(Raised())
    assert run(compile_chart(Raised).create()) == reference
    assert reference[0][:2] == ("poked", (7,))
    assert "x" in reference[0][2]
    assert reference[1:] == [("enter b",), ["b"]]


def test_c6_an_async_chart_s_instance_class_is_named_after_a_local_chart() -> None:
    """The instance class of a chart with async callbacks, declared inside a function, has
    the chart's ``__name__``, ``__qualname__`` (``<locals>`` included), ``__module__`` and
    ``__doc__``, as ``type(machine)`` does with python-statemachine."""

    class Local(StateChart[Any]):
        """A local async chart."""

        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        async def on_go(self) -> None:
            LOG.append(("go",))

    reference, instance = Local(), compile_chart(Local).create()
    for name in ("__name__", "__qualname__", "__module__", "__doc__"):
        assert getattr(type(instance), name) == getattr(type(reference), name), name
    assert "<locals>" in type(instance).__qualname__
    LOG.clear()
    instance.send("go")
    assert LOG == [("go",)]
