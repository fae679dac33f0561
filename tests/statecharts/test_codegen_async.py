"""Async charts: rules of the code generator a mutation sample of ``statecharts/_codegen.py``
found untested, compared with python-statemachine's async engine. (Apart from
test_codegen_mutants.py: async charts cannot run under mutmut's trampolines, so the mutation
script runs this file only when it re-runs a survivor for real.)

The gathering rules: python-statemachine's async engine runs some callback groups with
``asyncio.gather`` (each callback, sync ones too, in a task of its own, in a copy of the
context, started in declaration order; the first exception to happen is raised while the other
tasks run on) and awaits the others callback by callback: ``prepare_event``, validators,
``before`` and ``after`` are always gathered (but a targetless transition's ``after``, with
errors caught as events, runs callback by callback), guards never; ``exit``, ``on`` and
``enter`` are gathered without an error handler (no ``catch_errors_as_events``; for ``on``,
also while handling ``error.execution``); an initial transition's and a default history
transition's content always.

Rules checked here (docs/spec.md): C21.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statemachine import HistoryState, State, StateChart

from statecharts import compile_chart


def ids(machine: Any) -> list[str]:
    return [state.id for state in machine.configuration]


class Hooks:
    """A model whose callbacks are its instance's own (read when the event runs)."""

    def __init__(self) -> None:
        self.log: list[Any] = []

        async def fetch(*args: Any, amount: int = 0) -> None:
            self.log.append(("fetch", args, amount))

        async def settle(amount: int) -> str:
            self.log.append(("settle", amount))
            return "settled"

        self.fetch = fetch
        # a plain function returning an awaitable: the async engine awaits what it returns
        self.later = lambda amount=0: settle(amount)
        self.allowed = lambda amount=0: amount >= 0


class AsyncDynamic(StateChart[Hooks]):
    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="allowed", on=["fetch", "later"])
    back = b.to(a)

    async def on_enter_b(self) -> None:  # an async callback: the chart runs async
        self.model.log.append("entered b")


async def _run_dynamic(machine: Any) -> list[Any]:
    await machine.send("go", 7, amount=3)
    await machine.send("back")
    await machine.send("go", amount=-1)  # the guard read from the instance says no
    trail = [ids(machine)]
    await machine.send("go", amount=2)
    return [*trail, ids(machine)]


def test_c21_an_async_chart_awaits_the_callbacks_its_model_instance_holds_with_the_payload() -> (
    None
):
    """An async function read from the model instance gets the positional and keyword
    payload and is awaited; a plain function returning an awaitable has it awaited; a plain
    guard's value is used as it is, as python-statemachine's async engine does."""
    runs = []
    for machine in (AsyncDynamic(Hooks()), compile_chart(AsyncDynamic).create(Hooks())):
        trail = asyncio.run(_run_dynamic(machine))
        runs.append((trail, machine.model.log))
    assert runs[0] == runs[1]
    assert runs[1] == (
        [["a"], ["b"]],
        [
            ("fetch", (7,), 3),
            ("settle", 3),
            "entered b",
            ("fetch", (), 2),
            ("settle", 2),
            "entered b",
        ],
    )


class Interleaved(StateChart[Hooks]):
    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, on=["first", "second"])
    back = b.to(a)

    async def first(self) -> None:
        self.model.log.append("first starts")
        await asyncio.sleep(0)
        self.model.log.append("first ends")

    async def second(self) -> None:
        self.model.log.append("second")


def test_c21_a_group_of_async_callbacks_interleaves_as_python_statemachine_gathers_it() -> None:
    async def go(machine: Any) -> None:
        await machine.send("go")

    logs = []
    for machine in (Interleaved(Hooks()), compile_chart(Interleaved).create(Hooks())):
        asyncio.run(go(machine))
        logs.append(machine.model.log)
    assert logs[0] == ["first starts", "second", "first ends"]
    assert logs[1] == logs[0]


# -- gathered groups ---------------------------------------------------------------------------

#: What a callback sets and what the caller of ``send`` sees afterwards.
SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("SEEN", default="unset")


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []


async def settle() -> None:
    """Let the tasks a group left running go on."""
    for _ in range(8):
        await asyncio.sleep(0)


async def _send_all(machine: Any, events: tuple[str, ...]) -> None:
    await machine.activate_initial_state()
    log = machine.model.log
    for event in events:
        SEEN.set(f"caller of {event}")
        try:
            await machine.send(event)
        except Exception as error:  # compared across the engines
            log.append(("raised", type(error).__name__, str(error)))
        log.append(("caller sees", SEEN.get()))
        await settle()
    log.append(("configuration", ids(machine)))


def both(
    chart: type[StateChart[Any]],
    *events: str,
    scenario: Callable[[Any, tuple[str, ...]], Awaitable[None]] = _send_all,
) -> list[Any]:
    """The log of ``scenario`` on python-statemachine's async engine, checked to be the
    compiled run's too."""
    logs = []
    for machine in (chart(Log()), compile_chart(chart).create(Log())):
        asyncio.run(scenario(machine, events))
        logs.append(machine.model.log)
    assert logs[1] == logs[0]
    return logs[0]


class Callbacks:
    """Callbacks for groups: ``slow`` suspends once, ``quick`` is a plain function that sets
    the context variable, ``failing`` raises, ``late_failing`` raises after suspending."""

    model: Log

    async def slow(self) -> bool:
        self.model.log.append(("slow starts", SEEN.get()))
        await asyncio.sleep(0)
        self.model.log.append(("slow ends", SEEN.get()))
        return True

    def quick(self) -> bool:
        self.model.log.append(("quick", SEEN.get()))
        SEEN.set("set by quick")
        return True

    async def late(self) -> bool:
        self.model.log.append(("late starts", SEEN.get()))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        self.model.log.append(("late ends", SEEN.get()))
        return True

    def quick_too(self) -> None:
        self.model.log.append(("quick_too", SEEN.get()))

    def failing(self) -> None:
        self.model.log.append("failing")
        raise ValueError("failing")

    async def late_failing(self) -> None:
        self.model.log.append("late_failing starts")
        await asyncio.sleep(0)
        self.model.log.append("late_failing raises")
        raise KeyError("late_failing")

    def recorded(self, error: Exception) -> None:
        self.model.log.append(("error.execution", repr(error)))


def gathering(group: str, catch: bool, callbacks: tuple[str, ...] = ("slow", "quick")) -> Any:
    """A chart whose ``go`` (``a`` to ``b``) runs ``callbacks`` as ``group``."""
    names = list(callbacks)
    on_state = {group: names} if group in ("enter", "exit") else {}

    class Gathering(Callbacks, StateChart[Log]):
        catch_errors_as_events = catch
        a = State(initial=True, **(on_state if group == "exit" else {}))
        b = State(**(on_state if group == "enter" else {}))
        go = a.to(b, **({group: names} if group not in ("enter", "exit") else {}))
        back = b.to(a, on="slow")  # never sent: makes the chart async
        error_execution = a.to.itself(internal=True, on="recorded") | b.to.itself(
            internal=True, on="recorded"
        )

    Gathering.__name__ = Gathering.__qualname__ = f"Gathering_{group}_{catch}"
    return Gathering


GATHERED = [
    ("slow starts", "caller of go"),
    ("quick", "caller of go"),
    ("slow ends", "caller of go"),
    ("caller sees", "caller of go"),
]
ONE_BY_ONE = [
    ("slow starts", "caller of go"),
    ("slow ends", "caller of go"),
    ("quick", "caller of go"),
    ("caller sees", "set by quick"),
]


@pytest.mark.parametrize("catch", [False, True])
def test_c21_before_callbacks_are_gathered_even_with_errors_caught_as_events(
    catch: bool,
) -> None:
    assert both(gathering("before", catch), "go") == [*GATHERED, ("configuration", ["b"])]


@pytest.mark.parametrize("catch", [False, True])
def test_c21_after_callbacks_are_gathered_even_with_errors_caught_as_events(catch: bool) -> None:
    assert both(gathering("after", catch), "go") == [*GATHERED, ("configuration", ["b"])]


@pytest.mark.parametrize("catch", [False, True])
def test_c21_validators_are_gathered_and_guards_run_one_by_one(catch: bool) -> None:
    assert both(gathering("validators", catch), "go") == [*GATHERED, ("configuration", ["b"])]
    assert both(gathering("cond", catch), "go") == [*ONE_BY_ONE, ("configuration", ["b"])]


@pytest.mark.parametrize("group", ["exit", "on", "enter"])
def test_c21_exit_on_and_enter_callbacks_are_gathered_without_catch_errors_as_events(
    group: str,
) -> None:
    assert both(gathering(group, False), "go") == [*GATHERED, ("configuration", ["b"])]


@pytest.mark.parametrize("group", ["exit", "on", "enter"])
def test_c21_exit_on_and_enter_callbacks_run_one_by_one_with_errors_caught_as_events(
    group: str,
) -> None:
    assert both(gathering(group, True), "go") == [*ONE_BY_ONE, ("configuration", ["b"])]


def test_c21_a_single_callback_group_runs_in_a_task_of_its_own() -> None:
    """Even one plain callback: its context variable stays in its task, and the sender's
    task waits for that task, so another task runs meanwhile."""

    async def with_a_ticker(machine: Any, events: tuple[str, ...]) -> None:
        async def tick() -> None:
            for number in range(6):
                machine.model.log.append(("tick", number))
                await asyncio.sleep(0)

        await machine.activate_initial_state()
        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0)
        await machine.send("go")
        machine.model.log.append(("caller sees", SEEN.get()))
        await ticker

    log = both(gathering("before", False, ("quick",)), scenario=with_a_ticker)
    assert ("caller sees", "unset") in log
    assert log.index(("tick", 1)) < log.index(("quick", "unset"))
    assert both(gathering("before", True, ("quick",)), scenario=with_a_ticker) == log
    assert both(gathering("on", False, ("quick",)), scenario=with_a_ticker) == log
    one_by_one = both(gathering("on", True, ("quick",)), scenario=with_a_ticker)
    assert ("caller sees", "set by quick") in one_by_one


def test_c21_a_group_of_sync_and_async_callbacks_starts_each_in_declaration_order() -> None:
    chart = gathering("on", False, ("slow", "quick", "late", "quick_too"))
    log = both(chart, "go")
    assert log == [
        ("slow starts", "caller of go"),
        ("quick", "caller of go"),
        ("late starts", "caller of go"),
        ("quick_too", "caller of go"),
        ("slow ends", "caller of go"),
        ("late ends", "caller of go"),
        ("caller sees", "caller of go"),
        ("configuration", ["b"]),
    ]


def test_c21_a_context_variable_set_in_a_gathered_callback_is_not_seen_by_the_caller() -> None:
    """Nor by a later group: each task of a gather runs in a copy of the context. A callback
    of a group run one by one sets it for the sender and the callbacks after it."""

    class Context(Callbacks, StateChart[Log]):
        catch_errors_as_events = True
        a = State(initial=True, exit="quick")
        b = State(enter="seeing")
        go = a.to(b, before="quick", on="seeing", after="seeing")
        back = b.to(a, on="slow")

        def seeing(self) -> None:
            self.model.log.append(("seeing", SEEN.get()))

    assert both(Context, "go") == [
        ("quick", "caller of go"),  # before: gathered
        ("quick", "caller of go"),  # exit: one by one, in the sender's context
        ("seeing", "set by quick"),
        ("seeing", "set by quick"),
        ("seeing", "set by quick"),  # after: gathered, in a copy of the sender's context
        ("caller sees", "set by quick"),
        ("configuration", ["b"]),
    ]


def test_c21_an_exception_in_a_gathered_group_is_raised_and_the_other_callbacks_run_on() -> None:
    """The first exception to happen (not the first callback's) reaches the sender, the
    instance stays where it was, and the group's other callbacks go on in their tasks."""
    chart = gathering("on", False, ("slow", "late_failing", "failing", "late"))
    assert both(chart, "go") == [
        ("slow starts", "caller of go"),
        "late_failing starts",
        "failing",
        ("late starts", "caller of go"),
        ("slow ends", "caller of go"),
        "late_failing raises",  # raised later: dropped
        ("raised", "ValueError", "failing"),
        ("caller sees", "caller of go"),
        ("late ends", "caller of go"),  # after the sender got the error
        ("configuration", ["a"]),
    ]


def test_c21_with_errors_caught_as_events_a_failing_gathered_group_queues_its_first_error() -> (
    None
):
    chart = gathering("before", True, ("late_failing", "failing", "slow"))
    assert both(chart, "go") == [
        "late_failing starts",
        "failing",
        ("slow starts", "caller of go"),
        "late_failing raises",
        ("slow ends", "caller of go"),
        ("error.execution", "ValueError('failing')"),  # the transition is cancelled
        ("caller sees", "caller of go"),
        ("configuration", ["a"]),
    ]


class Parallel(Callbacks, StateChart[Log]):
    """Two regions taking ``go`` together: each transition's group is gathered on its own,
    one after the other; the first one failing stops the microstep."""

    catch_errors_as_events = False

    class both(State.Parallel):
        class left(State.Compound):
            l1 = State(initial=True)
            l2 = State()
            go = l1.to(l2, before=["slow", "failing"])

        class right(State.Compound):
            r1 = State(initial=True)
            r2 = State()
            go = r1.to(r2, before=["late", "quick"])


def test_c21_each_transition_of_a_microstep_gathers_its_own_group() -> None:
    assert both(Parallel, "go") == [
        ("slow starts", "caller of go"),
        "failing",
        ("slow ends", "caller of go"),
        ("raised", "ValueError", "failing"),  # the right region's ``before`` never starts
        ("caller sees", "caller of go"),
        ("configuration", ["both", "left", "l1", "right", "r1"]),
    ]


def test_c21_on_callbacks_are_gathered_while_handling_error_execution() -> None:
    class Handling(Callbacks, StateChart[Log]):
        catch_errors_as_events = True
        a = State(initial=True)
        b = State()
        c = State()
        go = a.to(b, on="failing")
        error_execution = b.to(c, on=["slow", "quick"])
        back = c.to(a)

    assert both(Handling, "go") == [
        "failing",
        ("slow starts", "caller of go"),
        ("quick", "caller of go"),
        ("slow ends", "caller of go"),
        ("caller sees", "caller of go"),
        ("configuration", ["c"]),
    ]


@pytest.mark.parametrize("catch", [False, True])
def test_c21_a_targetless_transitions_after_callbacks_run_one_by_one_with_errors_caught(
    catch: bool,
) -> None:
    """python-statemachine hands a targetless transition's ``after`` the arguments of its
    ``on``, error handler included: with errors caught as events, one by one."""

    class Targetless(Callbacks, StateChart[Log]):
        catch_errors_as_events = catch
        a = State(initial=True)
        b = State()
        go = a.to(None, after=["slow", "quick"])
        back = a.to(b) | b.to(a)

    expected = ONE_BY_ONE if catch else GATHERED
    assert both(Targetless, "go") == [*expected, ("configuration", ["a"])]


@pytest.mark.parametrize("catch", [False, True])
def test_c21_a_default_history_transitions_content_is_gathered(catch: bool) -> None:
    class History(Callbacks, StateChart[Log]):
        catch_errors_as_events = catch

        class p(State.Compound):
            x = State(initial=True)
            y = State()
            h = HistoryState()
            h.to(y, on=["slow", "quick"])
            n = x.to(y)

        a = State(initial=True)
        go = a.to(p.h)
        back = p.to(a)

    assert both(History, "go") == [*GATHERED, ("configuration", ["p", "y"])]


@pytest.mark.parametrize("catch", [False, True])
def test_c21_a_transition_to_a_history_state_runs_its_content_again_as_its_on_group(
    catch: bool,
) -> None:
    """Restoring recorded history, python-statemachine runs the transition's ``on`` content
    again on entering the state, with the error handler of its ``on`` group."""

    class Own(Callbacks, StateChart[Log]):
        catch_errors_as_events = catch

        class p(State.Compound):
            x = State(initial=True)
            y = State()
            h = HistoryState()
            n = x.to(y)

        a = State(initial=True)
        visit = a.to(p)
        go = a.to(p.h, on=["slow", "quick"])
        back = p.to(a)

    log = both(Own, "visit", "n", "back", "go")
    if catch:  # one by one, in the sender's context
        again = [("slow starts", "set by quick"), ("slow ends", "set by quick")]
        expected = [*ONE_BY_ONE[:3], *again, ("quick", "set by quick"), ONE_BY_ONE[3]]
    else:
        expected = [*GATHERED[:3], *GATHERED]
    assert log == [
        ("caller sees", "caller of visit"),
        ("caller sees", "caller of n"),
        ("caller sees", "caller of back"),
        *expected,
        ("configuration", ["p", "y"]),
    ]


@pytest.mark.parametrize("catch", [False, True])
def test_c21_an_initial_transitions_content_is_gathered(catch: bool) -> None:
    class Initial(Callbacks, StateChart[Log]):
        catch_errors_as_events = catch

        class p(State.Compound):
            x = State(initial=True)
            y = State()
            n = x.to(y)

        a = State(initial=True)
        go = a.to(p)
        back = p.to(a)
        start = p.to(p.x, initial=True, on=["slow", "quick"])

    assert both(Initial, "go") == [*GATHERED, ("configuration", ["p", "x"])]


class Preparing(StateChart[Any]):
    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act")
    back = b.to(a)

    async def prepare_event(self) -> dict[str, Any]:
        self.model.log.append(("chart prepares", SEEN.get()))
        await asyncio.sleep(0)
        self.model.log.append("chart prepared")
        SEEN.set("set by prepare_event")
        return {"chart": 1}

    def act(self, chart: int = 0, model: Any = None, **kwargs: Any) -> None:
        self.model.log.append(("act", chart, kwargs.get("extra"), SEEN.get()))


class PreparingModel(Log):
    def prepare_event(self, chart: int = 0) -> dict[str, Any]:
        self.log.append(("model prepares", chart, SEEN.get()))
        SEEN.set("set by the model")
        return {"extra": 2}


def test_c21_prepare_event_callbacks_are_gathered() -> None:
    """The chart's and the model's ``prepare_event``, each in a task of its own: both get the
    arguments as they were before either added to them."""
    logs = []
    for machine in (
        Preparing(PreparingModel()),
        compile_chart(Preparing).create(PreparingModel()),
    ):
        asyncio.run(_send_all(machine, ("go",)))
        logs.append(machine.model.log)
    assert logs[1] == logs[0]
    assert logs[0][:3] == [
        ("chart prepares", "unset"),
        ("model prepares", 0, "unset"),
        "chart prepared",
    ]
    assert ("act", 1, 2, "caller of go") in logs[0]


class Sending(Callbacks, StateChart[Log]):
    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on=["asking", "quick"])
    more = b.to(c, on="slow")
    back = c.to(a)

    async def asking(self) -> None:
        self.model.log.append("asking")
        await self.send("more")
        self.model.log.append("asked")


def test_c21_a_gathered_callback_sending_an_event_queues_it_as_inside_the_run() -> None:
    assert both(Sending, "go") == [
        "asking",
        "asked",  # queued, and returned at once
        ("quick", "caller of go"),
        ("slow starts", "caller of go"),
        ("slow ends", "caller of go"),
        ("caller sees", "caller of go"),
        ("configuration", ["c"]),
    ]


class Final(Callbacks, StateChart[Log]):
    catch_errors_as_events = False

    class p(State.Compound):
        x = State(initial=True)
        y = State(final=True, enter=["giving_later", "giving"])
        n = x.to(y)

    done = State(final=True)
    done_state_p = p.to(done, on="received")

    async def giving_later(self) -> dict[str, int]:
        await asyncio.sleep(0)
        self.model.log.append("gave later")
        return {"amount": 1, "later": 1}

    def giving(self) -> dict[str, int]:
        self.model.log.append("gave")
        return {"amount": 2}

    def received(self, amount: int, later: int) -> None:
        self.model.log.append(("received", amount, later))


def test_c21_a_gathered_enter_group_gives_its_results_in_declaration_order_as_done_data() -> None:
    assert both(Final, "n") == [
        "gave",
        "gave later",
        ("received", 2, 1),
        ("caller sees", "caller of n"),
        ("configuration", ["done"]),
    ]


class Waiting(Callbacks, StateChart[Log]):
    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, on=["waiting", "quick"])
    back = b.to(a)

    async def waiting(self) -> None:
        self.model.log.append("waiting")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.model.log.append("waiting cancelled")
            raise


def test_c21_cancelling_the_sender_cancels_the_tasks_of_its_gathered_group() -> None:
    async def cancelled(machine: Any, events: tuple[str, ...]) -> None:
        await machine.activate_initial_state()
        sending = asyncio.ensure_future(machine.send("go"))
        while "waiting" not in machine.model.log:
            await asyncio.sleep(0)
        sending.cancel()
        try:
            await sending
        except asyncio.CancelledError:
            machine.model.log.append("sender cancelled")
        await settle()
        machine.model.log.append(("configuration", ids(machine)))

    log = both(Waiting, scenario=cancelled)
    assert log[:4] == ["waiting", ("quick", "unset"), "waiting cancelled", "sender cancelled"]


class Lingering(Callbacks, StateChart[Log]):
    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on=["lingering", "failing"])
    more = a.to(c, on="quick") | b.to(c)
    back = c.to(a)

    async def lingering(self) -> None:
        self.model.log.append("lingering")
        for _ in range(4):
            await asyncio.sleep(0)
        self.model.log.append(("lingering sends", ids(self)))
        await self.send("more")
        await self.raise_("back")
        self.model.log.append(("lingering sent", ids(self)))


def test_c21_a_callback_its_failed_group_left_running_sends_events_once_the_run_ended() -> None:
    """Its events are not part of the failed run (gone by then): they run as sent from
    outside, each to its end."""
    assert both(Lingering, "go") == [
        "lingering",
        "failing",
        ("raised", "ValueError", "failing"),
        ("caller sees", "caller of go"),
        ("lingering sends", ["a"]),
        ("quick", "caller of go"),
        ("lingering sent", ["a"]),
        ("configuration", ["a"]),
    ]


class Calling(Callbacks, StateChart[Any]):
    """Sends ``go`` to ``model.other`` from a gathered callback; when that one is a
    ``CallingBack``, its gathered callback sends ``more`` back."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on=["calling", "quick"])
    more = b.to(c, on="slow")
    back = c.to(a) | b.to(a)

    async def calling(self) -> None:
        self.model.log.append(f"{self.model.name} calls")
        await self.model.other.send(self.model.event)
        self.model.log.append(f"{self.model.name} called")


class Named(Log):
    def __init__(self, name: str, event: str, log: list[Any]) -> None:
        self.name, self.event, self.log = name, event, log
        self.other: Any = None


def test_c21_a_gathered_callback_of_another_instances_run_can_send_back_to_this_one() -> None:
    """An instance's gathered callback sends to a second instance, whose gathered callback
    sends back to the first, still running: that event is queued, as from any callback of
    the first's run (no deadlock)."""

    async def ping(first: Any, events: tuple[str, ...]) -> None:
        second = first.model.other
        await first.activate_initial_state()
        await second.activate_initial_state()
        await asyncio.wait_for(first.send("go"), 2)
        await settle()
        first.model.log.append((ids(first), ids(second)))

    logs = []
    for create in (lambda model: Calling(model), compile_chart(Calling).create):
        log: list[Any] = []
        first, second = Named("first", "go", log), Named("second", "more", log)
        first.other = create(second)
        second.other = first_machine = create(first)
        asyncio.run(ping(first_machine, ()))
        logs.append(log)
    assert logs[1] == logs[0]
    assert logs[0] == [
        "first calls",
        ("quick", "unset"),
        "second calls",
        "second called",  # queued on the first
        ("quick", "unset"),
        "first called",
        ("slow starts", "unset"),
        ("slow ends", "unset"),
        (["c"], ["b"]),
    ]


def initial_entry(catch: bool, compound: bool) -> Any:
    """A chart whose initial state (in a compound one: its initial child) has ``slow`` and
    ``quick`` as its ``enter`` callbacks."""

    class Flat(Callbacks, StateChart[Log]):
        catch_errors_as_events = catch
        a = State(initial=True, enter=["slow", "quick"])
        b = State()
        go = a.to(b) | b.to(a)

    class Nested(Callbacks, StateChart[Log]):
        catch_errors_as_events = catch

        class p(State.Compound):
            a = State(initial=True, enter=["slow", "quick"])
            b = State()
            go = a.to(b) | b.to(a)

    return Nested if compound else Flat


@pytest.mark.parametrize("compound", [False, True])
@pytest.mark.parametrize("catch", [False, True])
def test_c21_the_initial_states_enter_callbacks_are_gathered_without_catch_errors_as_events(
    catch: bool, compound: bool
) -> None:
    async def activate(machine: Any, events: tuple[str, ...]) -> None:
        SEEN.set("caller of activate")
        await machine.activate_initial_state()
        machine.model.log.append(("caller sees", SEEN.get()))

    log = both(initial_entry(catch, compound), scenario=activate)
    expected = ONE_BY_ONE if catch else GATHERED
    assert log == [(entry[0], entry[1].replace("go", "activate")) for entry in expected]


POOL = ["slow", "quick", "late", "failing", "late_failing", "quick_too"]
#: Where the random chart puts callbacks: ``<transition or state>.<group>``.
SLOTS = (
    "go_ab.validators",
    "go_ab.before",
    "go_ab.on",
    "go_ab.after",
    "a.exit",
    "b.enter",
    "go_bp.on",
    "x.enter",
    "x.exit",
    "stay.after",
    "back.before",
    "left.before",
    "left.after",
    "right.before",
    "right.on",
    "l1.exit",
    "r2.enter",
    "hist.on",
    "default.on",
)
GROUPS = st.lists(st.sampled_from(POOL), unique=True, max_size=3)


class Prepares:
    model: Log

    async def prepare_event(self, event: Any) -> dict[str, Any]:
        self.model.log.append(("prepares", str(event), SEEN.get()))
        await asyncio.sleep(0)
        SEEN.set("set by prepare_event")
        return {"prepared": True}


def random_chart(catch: bool, groups: dict[str, list[str]], prepare: bool = False) -> Any:
    """Flat states, a compound one with a history state, a parallel one and a targetless
    transition, with ``groups`` (by slot), and an async ``prepare_event`` if ``prepare``."""

    def of(owner: str, **extra: Any) -> dict[str, Any]:
        found = {
            slot.split(".")[1]: names
            for slot, names in groups.items()
            if slot.split(".")[0] == owner and names
        }
        return {**found, **extra}

    class Random(*((Prepares,) if prepare else ()), Callbacks, StateChart[Log]):
        catch_errors_as_events = catch
        a = State(initial=True, **of("a"))
        b = State(**of("b"))

        class p(State.Compound):
            x = State(initial=True, **of("x"))
            y = State()
            h = HistoryState()
            h.to(y, **of("default"))
            step = x.to(y) | y.to(x)

        class q(State.Parallel):
            class left(State.Compound):
                l1 = State(initial=True, **of("l1"))
                l2 = State()
                step = l1.to(l2, **of("left")) | l2.to(l1)

            class right(State.Compound):
                r1 = State(initial=True)
                r2 = State(**of("r2"))
                step = r1.to(r2, **of("right")) | r2.to(r1)

        go_ab = a.to(b, event="go", **of("go_ab"))
        go_bp = b.to(p, event="go", **of("go_bp"))
        go_pq = p.to(q, event="go")
        stay = a.to(None, event="stay", **of("stay")) | p.to(None, event="stay")
        back = p.to(a, **of("back")) | b.to(a) | q.to(a)
        hist = a.to(p.h, **of("hist"))
        recorded_errors = a.to.itself(event="error.execution", internal=True, on="recorded")
        slow_back = b.to(a, event="slow_back", on="slow")  # the chart is async

    return Random


@settings(max_examples=100, deadline=None)
@given(
    catch=st.booleans(),
    groups=st.fixed_dictionaries({slot: GROUPS for slot in SLOTS}),
    events=st.lists(st.sampled_from(["go", "stay", "back", "step", "hist"]), max_size=7),
    prepare=st.booleans(),
)
def test_c21_random_callback_groups_run_as_python_statemachines_async_engine(
    catch: bool, groups: dict[str, list[str]], events: list[str], prepare: bool
) -> None:
    both(random_chart(catch, groups, prepare), *events)
