"""Breaks found by an independent review of the gathered callback groups of async charts
(round 7: each group python-statemachine's async engine runs with ``asyncio.gather`` runs as a
real ``asyncio.gather``, one task and greenlet per callback). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): C6 ("refuse, never approximate": a run may never give a
# different answer silently) and C21 (async callbacks are awaited). Every scenario runs the
# same coroutine on python-statemachine's async engine and on the compiled instance, inside a
# running event loop, and compares what the callbacks logged.

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

from statemachine import State, StateChart

from statecharts import compile_chart


class Log:
    """A model keeping what callbacks saw; ``other`` is a second instance to call."""

    def __init__(self) -> None:
        self.log: list[Any] = []
        self.other: Any = None


def ids(machine: Any) -> list[str]:
    return [state.id for state in machine.configuration]


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def both(
    chart: type[StateChart[Any]],
    scenario: Callable[[Any], Awaitable[None]],
    seconds: float = 2.0,
) -> tuple[list[Any], list[Any]]:
    """The log of ``scenario`` on python-statemachine's async engine and compiled (a scenario
    still running after ``seconds`` logs ``timed out``)."""
    logs = []
    for machine in (chart(Log()), compile_chart(chart).create(Log())):

        async def bounded(machine: Any = machine) -> None:
            try:
                await asyncio.wait_for(scenario(machine), seconds)
            except TimeoutError:
                machine.model.log.append("timed out")

        asyncio.run(bounded())
        logs.append(machine.model.log)
    return logs[0], logs[1]


# --- a gathered callback awaiting a send to another instance's running run ----------------


class Busy(StateChart[Log]):
    """Its ``go`` holds the run until the model's ``gate`` opens."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="hold")
    poke = b.to(c, on="poked") | a.to(c, on="poked")

    async def hold(self) -> None:
        self.model.log.append("busy holds")
        await self.model.gate.wait()
        self.model.log.append("busy released")

    def poked(self) -> None:
        self.model.log.append("busy poked")


class Caller(StateChart[Log]):
    """Its ``go`` gathers ``calls`` (awaiting ``poke`` sent to ``model.other``) and ``note``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=["calls", "note"])

    async def calls(self) -> None:
        self.model.log.append("caller sends poke")
        await self.model.other.send("poke")
        self.model.log.append("caller's send returned")

    def note(self) -> None:
        self.model.log.append("note")


def test_C21_a_gathered_callback_awaiting_a_busy_instances_send_does_not_wait_for_its_run() -> (
    None
):
    """C21/C6: a gathered ``on`` callback of ``Caller`` awaits ``other.send("poke")`` while
    another task's run holds ``other``. python-statemachine puts the event on ``other``'s
    queue without a future (a callback of any machine's step gets none) and, its lock taken,
    returns at once: the callback goes on, ``Caller``'s run ends, the scenario opens the gate
    and ``other`` takes ``poke``. The compiled send waits for ``other``'s run to end, which
    waits for the gate the scenario opens only after ``Caller``'s send: a deadlock (the
    scenario times out). It should return at once, as python-statemachine's does."""

    async def scenario(caller: Any) -> None:
        log = caller.model.log
        busy_model = Log()
        busy_model.log = log
        busy_model.gate = asyncio.Event()  # type: ignore[attr-defined]
        busy = (
            Busy(busy_model)
            if isinstance(caller, Caller)
            else compile_chart(Busy).create(busy_model)
        )
        caller.model.other = busy
        holding = asyncio.ensure_future(busy.send("go"))
        await settle()
        await caller.send("go")
        log.append(("caller done", ids(caller)))
        busy_model.gate.set()  # type: ignore[attr-defined]
        await holding
        log.append(("busy done", ids(busy)))

    expected, compiled = both(Caller, scenario)
    assert expected == [
        "busy holds",
        "caller sends poke",
        "caller's send returned",
        "note",
        ("caller done", ["b"]),
        "busy released",
        "busy poked",
        ("busy done", ["c"]),
    ]
    assert compiled == expected


# --- activate_initial_state from inside a callback ----------------------------------------


def activating(catch: bool, group: str) -> type[StateChart[Log]]:
    """A chart whose ``go`` runs ``reenter`` (awaiting ``activate_initial_state()`` on its own
    instance) and ``other`` as ``group``."""

    class Activating(StateChart[Log]):
        catch_errors_as_events = catch
        a = State(initial=True)
        b = State()
        c = State(final=True)
        go = a.to(b, **{group: ["reenter", "other"]})
        more = b.to(c)

        async def reenter(self) -> None:
            self.model.log.append("reenter")
            await self.activate_initial_state()
            self.model.log.append("activated")

        def other(self) -> None:
            self.model.log.append("other")

    Activating.__name__ = Activating.__qualname__ = f"Activating_{group}_{catch}"
    return Activating


async def _go(machine: Any) -> None:
    await machine.activate_initial_state()
    await machine.send("go")
    machine.model.log.append(("configuration", ids(machine)))


def test_C21_activate_initial_state_awaited_in_a_gathered_callback_returns_at_once() -> None:
    """C21/C6: a gathered ``on`` callback awaits ``self.activate_initial_state()`` (the
    instance already active, its run in progress). python-statemachine's processing loop finds
    its lock taken and returns None at once; the compiled one waits for the run to end, which
    waits for the callback: the send never ends (the scenario times out). It should return at
    once, as python-statemachine's does."""
    expected, compiled = both(activating(False, "on"), _go)
    assert expected == ["reenter", "activated", "other", ("configuration", ["b"])]
    assert compiled == expected


def test_C21_activate_initial_state_awaited_in_a_one_by_one_callback_returns_at_once() -> None:
    """C21/C6: as above with errors caught as events, ``on`` run callback by callback: the
    compiled send never ends (it should return at once, as python-statemachine's does)."""
    expected, compiled = both(activating(True, "on"), _go)
    assert expected == ["reenter", "activated", "other", ("configuration", ["b"])]
    assert compiled == expected


# --- a plain callback's send to another instance, not awaited -----------------------------


class Poked(StateChart[Log]):
    """Logs ``poke``; ``go`` holds the run a little."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, on="hold")
    poke = a.to(b, on="poked") | b.to(c, on="poked")

    async def hold(self) -> None:
        self.model.log.append("other holds")
        await asyncio.sleep(0.01)
        self.model.log.append("other released")

    def poked(self) -> None:
        self.model.log.append("other poked")


class Poking(StateChart[Log]):
    """Its ``go`` gathers ``pokes`` (a plain callback sending ``poke`` to ``model.other``
    without awaiting what ``send`` returns) and ``slow``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=["pokes", "slow"])

    def pokes(self) -> None:
        self.model.log.append("pokes")
        sent = self.model.other.send("poke")
        if asyncio.iscoroutine(sent):
            sent.close()  # not awaited (closed: no "never awaited" warning)

    async def slow(self) -> None:
        await asyncio.sleep(0)


def test_C21_a_plain_callbacks_unawaited_send_to_another_instance_queues_the_event() -> None:
    """C21/C6: a plain gathered callback calls ``other.send("poke")`` while ``other`` runs
    another task's ``go``, and does not await what it returns. python-statemachine's ``send``
    puts the event on ``other``'s queue when it is called (only the processing loop is the
    coroutine it returns), so ``other``'s run takes ``poke`` once ``go`` ends (``other``
    ends in ``c``). The compiled ``send`` does nothing until the coroutine runs: ``poke`` is
    lost and ``other`` stays in ``b``. It should be queued when ``send`` is called."""

    async def scenario(poking: Any) -> None:
        log = poking.model.log
        other_model = Log()
        other_model.log = log
        compiled = not isinstance(poking, StateChart)
        other = compile_chart(Poked).create(other_model) if compiled else Poked(other_model)
        poking.model.other = other
        await other.activate_initial_state()
        holding = asyncio.ensure_future(other.send("go"))
        await settle()
        await poking.send("go")
        await holding
        await settle()
        log.append(("other", ids(other)))

    expected, compiled = both(Poking, scenario)
    assert expected == [
        "other holds",
        "pokes",
        "other released",
        "other poked",
        ("other", ["c"]),
    ]
    assert compiled == expected


# --- an event a gathered callback sent, its run then cancelled ----------------------------


class Cancelled(StateChart[Log]):
    """Its ``go`` gathers ``queues`` (sending ``more``, then waiting) and ``quick`` as
    ``before``; ``more`` goes to ``c`` and ``back`` from ``c`` to ``a``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, before=["queues", "quick"])
    more = a.to(c, on="noted") | b.to(c, on="noted")
    back = c.to(a, on="noted")

    async def queues(self) -> None:
        self.model.log.append("queues more")
        await self.send("more")
        await asyncio.sleep(10)

    def quick(self) -> None:
        self.model.log.append("quick")

    def noted(self) -> None:
        self.model.log.append("noted")


def test_C21_an_event_sent_by_a_gathered_callback_outlives_the_cancelled_run() -> None:
    """C21 ("a cancelled task leaves the instance where the cancellation found it")/C6: a
    gathered ``before`` callback sends ``more`` (queued: it is inside the run) and waits; the
    sender times out. python-statemachine's cancelled processing loop clears its internal
    queue only: ``more`` stays on the external queue and the next ``send("back")`` runs it
    first (``a`` to ``c``, then ``back`` to ``a``). The compiled run drops it: ``back`` finds
    ``a`` and is ignored, and the instance never reaches ``c``. It should keep ``more``."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        try:
            await asyncio.wait_for(machine.send("go"), 0.02)
        except TimeoutError:
            machine.model.log.append(("timed out", ids(machine)))
        await machine.send("back")
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both(Cancelled, scenario)
    assert expected == [
        "queues more",
        "quick",
        ("timed out", ["a"]),
        "noted",
        "noted",
        ("configuration", ["a"]),
    ]
    assert compiled == expected


# --- a task a one-by-one callback starts sends to the running instance --------------------


def spawning(catch: bool, group: str) -> type[StateChart[Log]]:
    """A chart whose ``go`` runs ``spawns`` (awaiting a task it starts, which sends ``more``
    to the instance) and ``quick`` as ``group``."""

    class Spawning(StateChart[Log]):
        catch_errors_as_events = catch
        a = State(initial=True)
        b = State()
        c = State(final=True)
        go = a.to(b, **{group: ["spawns", "quick"]})
        more = b.to(c, on="noted")

        async def spawns(self) -> bool:
            self.model.log.append("spawns")

            async def later() -> None:
                await self.send("more")
                self.model.log.append("task sent more")

            await asyncio.create_task(later())
            self.model.log.append("task done")
            return True

        def quick(self) -> bool:
            self.model.log.append("quick")
            return True

        def noted(self) -> None:
            self.model.log.append("more taken")

    Spawning.__name__ = Spawning.__qualname__ = f"Spawning_{group}_{catch}"
    return Spawning


ONE_BY_ONE_SPAWN = ["spawns", "task sent more", "task done", "quick", "more taken"]


def test_C21_a_task_a_one_by_one_on_callback_starts_sends_to_the_running_instance() -> None:
    """C21/C6: with errors caught as events ``on`` runs callback by callback; ``spawns``
    starts a task sending ``more`` to the instance and awaits it. In python-statemachine the
    task inherits the running engine (a context variable), so its ``send`` queues ``more``
    and returns at once. The compiled ``send`` recognises a task started by a gathered
    callback as inside the run, but not one started by a callback run one by one: it waits
    for the run to end, which waits for the task (the scenario times out, the instance left
    with no active state). It should queue the event and return, as from a gathered one."""
    expected, compiled = both(spawning(True, "on"), _go)
    assert expected == [*ONE_BY_ONE_SPAWN, ("configuration", ["c"])]
    assert compiled == expected


def test_C21_a_task_a_guard_starts_sends_to_the_running_instance() -> None:
    """C21/C6: as above from a guard (guards always run one by one, in the sender's task):
    python-statemachine queues ``more`` and the guard goes on; the compiled ``send`` waits for
    the run that waits for it (the scenario times out). It should queue the event."""
    expected, compiled = both(spawning(False, "cond"), _go)
    assert expected == [*ONE_BY_ONE_SPAWN, ("configuration", ["c"])]
    assert compiled == expected


# --- a context variable's token reset by a later callback ---------------------------------

SPAN: contextvars.ContextVar[str] = contextvars.ContextVar("SPAN", default="none")


class Spanned(StateChart[Log]):
    """``opens`` (leaving ``a``) sets ``SPAN`` and keeps the token; ``closes`` (entering
    ``b``) resets it with that token, as a tracing span is attached and detached; ``work``,
    awaited between them, suspends once. Errors are caught as events: each group runs one by
    one in the sender's task."""

    a = State(initial=True, exit="opens")
    b = State(enter="closes")
    go = a.to(b, on="work")
    back = b.to(a)

    def opens(self) -> None:
        self.model.token = SPAN.set("span")  # type: ignore[attr-defined]
        self.model.log.append(("opens", SPAN.get()))

    async def work(self) -> None:
        await asyncio.sleep(0)
        self.model.log.append(("work", SPAN.get()))

    def closes(self) -> None:
        try:
            SPAN.reset(self.model.token)  # type: ignore[attr-defined]
        except ValueError:
            self.model.log.append("reset refused")
        else:
            self.model.log.append(("closes", SPAN.get()))


def test_C21_a_token_one_callback_sets_another_resets_after_an_await() -> None:
    """C21 ("callbacks ... run in the sender's task: they see and set its context
    variables")/C6: python-statemachine runs ``exit``, ``on`` and ``enter`` one by one in the
    sender's task, in its context, so ``closes`` resets the token ``opens`` got and the caller
    sees ``SPAN`` unset again. The compiled run gives the run's greenlet a fresh copy of the
    context after each await, so the token belongs to another ``Context``: ``SPAN.reset``
    raises ValueError (``reset refused``) and the caller is left with ``span``. It should
    reset, as there."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        await machine.send("go")
        machine.model.log.append(("caller sees", SPAN.get()))

    expected, compiled = both(Spanned, scenario)
    assert expected == [
        ("opens", "span"),
        ("work", "span"),
        ("closes", "none"),
        ("caller sees", "none"),
    ]
    assert compiled == expected


class ResetsCallers(StateChart[Log]):
    """Its guard resets the token the sender passes."""

    a = State(initial=True)
    b = State()
    go = a.to(b, cond="resets")
    back = b.to(a, on="slow")

    def resets(self, token: contextvars.Token[str]) -> bool:
        try:
            SPAN.reset(token)
        except ValueError:
            self.model.log.append("reset refused")
        else:
            self.model.log.append(("reset", SPAN.get()))
        return True

    async def slow(self) -> None:
        """Never run: makes the chart async."""


def test_C21_a_guard_resets_a_token_the_sender_set() -> None:
    """C21/C6: the sender sets ``SPAN`` and passes the token with ``go``; a guard runs in the
    sender's task with python-statemachine and resets it (the caller sees ``SPAN`` unset).
    The compiled guard runs in a copy of the sender's context: the reset raises ValueError
    and the caller keeps ``request``. It should reset, as there."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        token = SPAN.set("request")
        await machine.send("go", token=token)
        machine.model.log.append(("caller sees", SPAN.get()))

    expected, compiled = both(ResetsCallers, scenario)
    assert expected == [("reset", "none"), ("caller sees", "none")]
    assert compiled == expected


# --- a task waiting on the run when its sender is cancelled -------------------------------


class Handover(StateChart[Log]):
    """Its ``go`` gathers ``waiting`` (ten seconds) and ``quick`` as ``before``; ``poke``
    goes to ``c``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, before=["waiting", "quick"])
    poke = a.to(c, on="poked") | b.to(c, on="poked")
    back = c.to(a)

    async def waiting(self) -> None:
        self.model.log.append("waiting")
        await asyncio.sleep(10)

    def quick(self) -> None:
        self.model.log.append("quick")

    def poked(self) -> None:
        self.model.log.append("poked")


def test_C21_cancelling_the_sender_hands_the_run_to_a_task_waiting_with_its_event() -> None:
    """C21 ("an event another task sends while one runs joins that run's queue")/C6: task 1
    sends ``go`` (its gathered ``before`` waits), task 2 sends ``poke`` meanwhile, then task 1
    is cancelled. python-statemachine's cancelled processing loop releases its lock and wakes
    the callers waiting for it: task 2 takes the loop over, runs ``poke`` (``a`` to ``c``)
    and returns. In the compiled run task 2, which nobody cancelled, raises CancelledError
    and ``poke`` is never run (the instance stays in ``a``). Task 2 should return, ``poke``
    run."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        first = asyncio.ensure_future(machine.send("go"))
        await settle()
        second = asyncio.ensure_future(machine.send("poke"))
        await settle()
        first.cancel()
        for name, task in (("first", first), ("second", second)):
            try:
                await task
            except asyncio.CancelledError:
                machine.model.log.append((name, "cancelled"))
            else:
                machine.model.log.append((name, "returned"))
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both(Handover, scenario)
    assert expected == [
        "waiting",
        "quick",
        ("first", "cancelled"),
        "poked",
        ("second", "returned"),
        ("configuration", ["c"]),
    ]
    assert compiled == expected


# --- an event sent while the first event enters the initial state -------------------------


class SlowStart(StateChart[Log]):
    """The initial state's ``enter`` gathers ``slow_enter`` (10 ms) and ``quick``."""

    catch_errors_as_events = False
    a = State(initial=True, enter=["slow_enter", "quick"])
    b = State()
    go = a.to(b, on="noted")
    back = b.to(a, on="noted")

    async def slow_enter(self) -> None:
        self.model.log.append("enter a")
        await asyncio.sleep(0.01)

    def quick(self) -> None:
        self.model.log.append("quick")

    def noted(self) -> None:
        self.model.log.append(("noted", ids(self)))


def test_C21_an_event_sent_while_the_initial_state_is_entered_runs_after_the_first() -> None:
    """C21 ("an event another task sends while one runs joins that run's queue")/C6: task 1
    sends ``go`` to a fresh instance (the first event enters the initial state, whose
    gathered ``enter`` suspends); task 2 sends ``back`` meanwhile. python-statemachine queues
    ``back`` behind ``go``: ``go`` (``a`` to ``b``), then ``back`` (``b`` to ``a``, entering
    ``a`` again). The compiled ``send`` answers ``queued`` for ``back`` but never runs it
    (the instance ends in ``b``). It should run it after ``go``."""

    async def scenario(machine: Any) -> None:
        first = asyncio.ensure_future(machine.send("go"))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(machine.send("back"))
        await first
        await second
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both(SlowStart, scenario)
    assert expected == [
        "enter a",
        "quick",
        ("noted", []),
        ("noted", []),
        "enter a",
        "quick",
        ("configuration", ["a"]),
    ]
    assert compiled == expected
