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
import gc
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import greenlet
import pytest
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


# --- a send left pending on an event loop closed without cancelling it --------------------


class Abandoned(StateChart[Log]):
    """Its ``go`` gathers ``slow`` (waiting ten seconds) and ``quick`` as ``before``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, before=["slow", "quick"])
    back = b.to(a, on="noted") | a.to(b, on="noted")

    async def slow(self) -> None:
        self.model.log.append("slow")
        await asyncio.sleep(10)

    def quick(self) -> None:
        self.model.log.append("quick")

    def noted(self) -> None:
        self.model.log.append("noted")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_C21_an_instance_whose_send_was_abandoned_with_its_loop_takes_the_next_event() -> None:
    """C21/C6: ``go`` is sent in a task of an event loop that is then closed without
    cancelling it (the task is collected). python-statemachine's processing loop, closed with
    its coroutine, releases the machine: ``back`` sent on a new loop runs (``a`` to ``b``).
    The compiled instance keeps the abandoned run as in progress (its record holds the task,
    so it is never collected): every later ``send`` raises RuntimeError (a future of the
    closed loop) and the instance never takes an event again. It should take ``back``."""
    logs = []
    for machine in (Abandoned(Log()), compile_chart(Abandoned).create(Log())):
        machine.activate_initial_state()
        loop = asyncio.new_event_loop()

        async def start(machine: Any = machine) -> Any:
            sending = asyncio.ensure_future(machine.send("go"))
            await asyncio.sleep(0.01)
            return sending

        sending = loop.run_until_complete(start())
        loop.close()
        del sending
        gc.collect()

        async def again(machine: Any = machine) -> None:
            try:
                await asyncio.wait_for(machine.send("back"), 1)
            except Exception as error:
                machine.model.log.append(("back raised", type(error).__name__))
            machine.model.log.append(("configuration", ids(machine)))

        asyncio.run(again())
        logs.append(machine.model.log)
    assert logs[0] == ["slow", "quick", "noted", ("configuration", ["b"])]
    assert logs[1] == logs[0]


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


# --- is_terminated read while the parallel state's last region completes ------------------


class Completing(StateChart[Log]):
    """A top-level parallel state whose regions both end in final states; its done.state
    event leaves it for ``done``. ``reads`` (entering ``r2``, the last final child) logs
    what the instance says."""

    catch_errors_as_events = False
    idle = State(initial=True)

    class work(State.Parallel):
        class left(State.Compound):
            l1 = State(initial=True)
            l2 = State(final=True)
            go = l1.to(l2)

        class right(State.Compound):
            r1 = State(initial=True)
            r2 = State(final=True, enter=["reads", "quick"])
            go = r1.to(r2)

    done = State(final=True)
    start = idle.to(work)
    done_state_work = work.to(done)

    async def reads(self) -> None:
        self.model.log.append(("reads", ids(self), self.is_terminated))

    def quick(self) -> None:
        self.model.log.append("quick")


def test_C21_is_terminated_read_while_the_last_region_completes_is_false() -> None:
    """C6: a gathered ``enter`` callback of ``r2`` (both regions of the top-level parallel
    state now final, its done.state transition not yet taken) reads ``is_terminated``.
    python-statemachine terminates only once the macrostep ends with the parallel state
    still final (here the done.state event leaves it): it reads False. The compiled instance
    reads True (the configuration's node counts as terminated). It should read False. (A
    sync chart reads True as well.)"""

    async def scenario(machine: Any) -> None:
        await machine.send("start")
        await machine.send("go")
        machine.model.log.append(("end", ids(machine), machine.is_terminated))

    expected, compiled = both(Completing, scenario)
    assert expected == [
        ("reads", ["work", "left", "right", "l2", "r2"], False),
        "quick",
        ("end", ["done"], True),
    ]
    assert compiled == expected


class Finishing(StateChart[Log]):
    """A flat chart: ``go`` enters the top-level final state ``b``; ``reads`` runs as its
    ``on``, as ``b``'s ``enter`` and as its ``after``."""

    a = State(initial=True)
    b = State(final=True, enter="reads")
    go = a.to(b, on="reads", after="reads")

    def reads(self) -> None:
        self.model.log.append((ids(self), self.is_terminated))


def test_C6_is_terminated_read_by_the_final_states_enter_callback_is_false() -> None:
    """C6: python-statemachine stops its engine (``is_terminated``) after the ``enter``
    callbacks of a top-level final state ran: ``enter`` reads False, ``after`` True. The
    compiled instance reads True already in ``enter``. It should read False there."""
    logs = []
    for machine in (Finishing(Log()), compile_chart(Finishing).create(Log())):
        machine.send("go")
        logs.append(machine.model.log)
    assert logs[0] == [([], False), (["b"], False), (["b"], True)]
    assert logs[1] == logs[0]


# --- a send from another thread while the instance runs on the loop -----------------------


class Threaded(StateChart[Log]):
    """Its ``go`` gathers ``waits`` (0.2 s) and ``quick``; ``poke`` goes to ``c``."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on=["waits", "quick"])
    poke = a.to(c, on="poked") | b.to(c, on="poked")
    back = c.to(a)

    async def waits(self) -> None:
        self.model.log.append("waits")
        await asyncio.sleep(0.2)
        self.model.log.append("waited")

    def quick(self) -> None:
        self.model.log.append("quick")

    def poked(self) -> None:
        self.model.log.append("poked")


def test_C21_a_send_from_another_thread_during_a_run_returns() -> None:
    """C21/C6: while ``go`` runs on the event loop (its gathered ``waits`` sleeping), a
    thread sends ``poke``. python-statemachine queues it (no future: no loop runs in that
    thread), finds the machine busy and returns; the run takes ``poke`` afterwards. The
    compiled ``send`` queues it too (the run takes it) but then raises RuntimeError in the
    thread (it waits on a future of the other thread's loop). It should return."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        running = asyncio.ensure_future(machine.send("go"))
        await asyncio.sleep(0.05)
        answers: list[Any] = []

        def poke() -> None:
            try:
                machine.send("poke")
            except Exception as error:
                answers.append(("raised", type(error).__name__))
            else:
                answers.append("returned")

        thread = threading.Thread(target=poke)
        thread.start()
        while thread.is_alive():
            await asyncio.sleep(0.01)
        machine.model.log.append(("thread", *answers))
        await running
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both(Threaded, scenario)
    assert expected == [
        "waits",
        "quick",
        ("thread", "returned"),
        "waited",
        "poked",
        ("configuration", ["c"]),
    ]
    assert compiled == expected


# --- a plain callback raising GreenletExit ------------------------------------------------


def exiting(group: str) -> type[StateChart[Log]]:
    """A chart whose ``go`` runs ``exits`` (a plain callback raising ``GreenletExit``, the
    BaseException gevent's ``kill`` raises) and ``quick`` as ``group``."""

    class Exiting(StateChart[Log]):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State()
        go = a.to(b, **{group: ["exits", "quick"]})
        back = b.to(a, on="slow") | a.to(b)

        def exits(self) -> bool:
            self.model.log.append("exits")
            raise greenlet.GreenletExit("stop")

        def quick(self) -> bool:
            self.model.log.append("quick")
            return True

        async def slow(self) -> None:
            """Never run: makes the chart async."""

    Exiting.__name__ = Exiting.__qualname__ = f"Exiting_{group}"
    return Exiting


async def _go_answer(machine: Any) -> None:
    await machine.activate_initial_state()
    try:
        await machine.send("go")
    except BaseException as error:  # GreenletExit is one
        machine.model.log.append(("raised", type(error).__name__))
    else:
        machine.model.log.append("returned")
    machine.model.log.append(("configuration", ids(machine)))


def test_C21_a_gathered_callback_raising_greenlet_exit_fails_the_group() -> None:
    """C21/C6: a plain gathered ``before`` callback raises ``GreenletExit``. With
    python-statemachine it fails its task, the group and the send: the sender gets it and
    the instance stays in ``a``. The compiled callback runs in a greenlet, which ends
    quietly on ``GreenletExit`` (returning it): the group counts it as a result, ``go`` is
    taken (``b``) and ``send`` returns. It should raise, the instance left in ``a``."""
    expected, compiled = both(exiting("before"), _go_answer)
    assert expected == ["exits", "quick", ("raised", "GreenletExit"), ("configuration", ["a"])]
    assert compiled == expected


def test_C21_a_guard_raising_greenlet_exit_reaches_the_sender() -> None:
    """C21/C6: a guard (run in the run's own greenlet) raises ``GreenletExit``:
    python-statemachine's send raises it. The compiled run's greenlet ends quietly and
    ``send`` returns the exception object as its answer. It should raise."""
    expected, compiled = both(exiting("cond"), _go_answer)
    assert expected == ["exits", ("raised", "GreenletExit"), ("configuration", ["a"])]
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


# --- a waiting sender's event dropped when the run terminates -----------------------------


class Strict(StateChart[Log]):
    """No event without a transition; ``go`` (gathering ``waiting`` and ``quick``) reaches
    the final state ``b``."""

    allow_event_without_transition = False
    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=["waiting", "quick"])
    poke = a.to(a, on="poked")

    async def waiting(self) -> None:
        self.model.log.append("waiting")
        await asyncio.sleep(0.01)

    def quick(self) -> None:
        self.model.log.append("quick")

    def poked(self) -> None:
        self.model.log.append("poked")


def test_C21_the_sender_whose_event_terminated_the_instance_is_not_answered_with_the_next() -> (
    None
):
    """C21/C6: task 1 sends ``go``, which reaches the final state; task 2 sends ``poke``
    while ``go`` runs. python-statemachine answers task 1 with ``go``'s result and rejects
    task 2's dropped ``poke`` with TransitionNotAllowed (no event without a transition). The
    compiled run raises TransitionNotAllowed to task 1 too, whose event was taken. Task 1's
    send should return."""

    async def scenario(machine: Any) -> None:
        await machine.activate_initial_state()
        first = asyncio.ensure_future(machine.send("go"))
        await settle()
        second = asyncio.ensure_future(machine.send("poke"))
        for name, task in (("first", first), ("second", second)):
            try:
                await task
            except Exception as error:
                machine.model.log.append((name, "raised", type(error).__name__))
            else:
                machine.model.log.append((name, "returned"))
        machine.model.log.append(("configuration", ids(machine)))

    expected, compiled = both(Strict, scenario)
    assert expected == [
        "waiting",
        "quick",
        ("first", "returned"),
        ("second", "raised", "TransitionNotAllowed"),
        ("configuration", ["b"]),
    ]
    assert compiled == expected


class StrictQueued(StateChart[Log]):
    """No event without a transition; ``go``'s ``on`` queues ``poke`` and ``go`` reaches the
    final state ``b`` (a sync chart)."""

    allow_event_without_transition = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="sends")
    poke = a.to(a)

    def sends(self) -> None:
        self.send("poke")


class AsyncStrictQueued(StateChart[Log]):
    """The same chart with an async ``sends`` gathered with a plain ``quick``."""

    allow_event_without_transition = False
    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on=["sends", "quick"])
    poke = a.to(a)

    async def sends(self) -> None:
        await self.send("poke")

    def quick(self) -> None:
        self.model.log.append("quick")


def test_C6_an_event_a_callback_queued_dropped_at_termination_raises_nothing() -> None:
    """C6: with ``allow_event_without_transition = False``, ``go``'s callback queues ``poke``
    and ``go`` terminates the instance. python-statemachine drops ``poke`` with the rest of
    the external queue and nobody waits for it: ``send("go")`` returns. The compiled send
    raises TransitionNotAllowed for the dropped ``poke``. It should return."""
    logs = []
    for machine in (StrictQueued(Log()), compile_chart(StrictQueued).create(Log())):
        try:
            machine.send("go")
        except Exception as error:
            machine.model.log.append(("raised", type(error).__name__))
        else:
            machine.model.log.append("returned")
        logs.append(machine.model.log)
    assert logs[0] == ["returned"]
    assert logs[1] == logs[0]


def test_C21_an_event_a_gathered_callback_queued_dropped_at_termination_raises_nothing() -> None:
    """C21/C6: as above, ``poke`` queued by a gathered async callback and awaited in a
    running loop: python-statemachine's send returns, the compiled one raises
    TransitionNotAllowed. It should return."""

    async def scenario(machine: Any) -> None:
        try:
            await machine.send("go")
        except Exception as error:
            machine.model.log.append(("raised", type(error).__name__))
        else:
            machine.model.log.append("returned")

    expected, compiled = both(AsyncStrictQueued, scenario)
    assert expected == ["quick", "returned"]
    assert compiled == expected
