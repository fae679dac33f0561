"""Charts with async callbacks run on python-statemachine's awaitable send path: ``send``
returns a coroutine in a running event loop and runs to completion without one, each async
callback is awaited before the next callback starts, and the initial state is entered by the
first event. Differential: every run is compared with python-statemachine's async engine.

Rules checked here (docs/spec.md): C21.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statemachine import State, StateChart

from statecharts import compile_chart

from .charts import Recorder, note


class Fetcher(StateChart[Recorder]):
    """Async guards and actions in a compound and a parallel state, events sent from an async
    callback, an async failure caught as error.execution."""

    class working(State.Parallel):
        class net(State.Compound):
            idle = State(initial=True)
            fetching = State()
            fetched = State(final=True)
            fetch = idle.to(fetching, on="download")
            got = fetching.to(fetched, cond="checked")

        class disk(State.Compound):
            clean = State(initial=True)
            dirty = State()
            fetch = clean.to(dirty)
            flush = dirty.to(clean, on="write")

    failed = State()
    over = State(final=True)
    done_state_working = working.to(over)
    error_execution = working.to(failed, on="record")
    retry = failed.to(working)

    async def on_enter_state(self, state: Any, **kw: Any) -> None:
        await asyncio.sleep(0)
        note(self.model, "enter", state=state, kwargs=kw)

    async def download(self, boom: str | None = None, **kw: Any) -> None:
        await asyncio.sleep(0)
        note(self.model, "download", kwargs={"boom": boom, **kw})
        await self.send("got")

    async def checked(self, **kw: Any) -> bool:
        await asyncio.sleep(0)
        note(self.model, "checked", kwargs=kw)
        return bool(self.model.ready)

    def write(self, boom: str | None = None, **kw: Any) -> None:
        note(self.model, "write", kwargs={"boom": boom, **kw})

    async def record(self, error: Exception, **kw: Any) -> None:
        note(self.model, "record", kwargs={"error": error, **kw})


class Strict(StateChart[Recorder]):
    """Errors reach the caller (python-statemachine's StateMachine behaviour)."""

    catch_errors_as_events = False

    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a)

    async def act(self, boom: str | None = None, **kw: Any) -> None:
        await asyncio.sleep(0)
        note(self.model, "act", kwargs={"boom": boom, **kw})

    async def on_enter_b(self, **kw: Any) -> None:
        note(self.model, "enter_b", kwargs=kw)


def ids(states: Any) -> list[str]:
    return [state.id for state in states]


async def outcome_of(machine: Any, event: str, kwargs: dict[str, Any]) -> Any:
    try:
        await machine.send(event, **kwargs)
    except Exception as error:  # compared across the engines
        return (type(error).__name__, str(error))
    return None


EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["fetch", "got", "flush", "retry", "nope", "flip"]),
        st.sampled_from([None, "download", "write", "checked", "enter"]),
    ),
    max_size=8,
)


@settings(max_examples=40)
@given(steps=EVENTS)
def test_async_callbacks_run_as_python_statemachines_async_engine(
    steps: list[tuple[str, str | None]],
) -> None:
    async def both() -> None:
        reference = Fetcher(Recorder())
        instance = compile_chart(Fetcher).create(Recorder())
        for event, boom in steps:
            if event == "flip":
                for machine in (reference, instance):
                    machine.model.ready = not machine.model.ready
                continue
            kwargs = {"boom": boom} if boom else {}
            assert await outcome_of(instance, event, kwargs) == await outcome_of(
                reference, event, kwargs
            )
            assert ids(instance.configuration) == ids(reference.configuration)
            assert instance.model.log == reference.model.log

    asyncio.run(both())


def test_an_async_failure_reaches_the_awaiting_caller_and_the_state_is_kept() -> None:
    async def both() -> None:
        for machine in (Strict(Recorder()), compile_chart(Strict).create(Recorder())):
            with pytest.raises(Exception, match="act") as caught:
                await machine.send("go", boom="act")
            assert type(caught.value).__name__ == "Boom"
            assert ids(machine.configuration) == ["a"]
            await machine.send("go")
            assert ids(machine.configuration) == ["b"]

    asyncio.run(both())


def test_the_initial_state_is_entered_by_the_first_event_or_activation() -> None:
    async def both() -> None:
        reference = Fetcher(Recorder())
        instance = compile_chart(Fetcher).create(Recorder())
        assert ids(instance.configuration) == ids(reference.configuration) == []
        assert instance.model.log == reference.model.log == []
        await reference.activate_initial_state()
        await instance.activate_initial_state()
        assert ids(instance.configuration) == ids(reference.configuration)
        assert instance.model.log == reference.model.log != []
        await instance.activate_initial_state()  # once only
        assert instance.model.log == reference.model.log

    asyncio.run(both())


def test_without_an_event_loop_send_runs_to_completion() -> None:
    reference = Fetcher(Recorder())
    instance = compile_chart(Fetcher).create(Recorder())
    reference.send("fetch")
    outcome = instance.send("fetch")
    assert outcome.applied
    assert ids(instance.configuration) == ids(reference.configuration)
    assert instance.model.log == reference.model.log


def test_in_an_event_loop_send_is_awaitable_and_callbacks_can_await_send() -> None:
    async def run() -> None:
        instance = compile_chart(Fetcher).create(Recorder())
        pending = instance.send("fetch")
        assert asyncio.iscoroutine(pending)
        outcome = await pending
        assert outcome.applied
        assert [entry[0] for entry in instance.model.log].count("checked") == 1

    asyncio.run(run())


def test_an_event_a_second_task_sends_while_one_runs_joins_its_queue() -> None:
    class Slow(StateChart):
        a = State(initial=True)
        b = State()
        c = State(final=True)
        go = a.to(b, on="wait") | b.to(c)

        async def wait(self) -> None:
            await asyncio.sleep(0.01)

    async def run() -> None:
        instance = compile_chart(Slow).create()
        await instance.activate_initial_state()
        first = asyncio.ensure_future(instance.send("go"))
        await asyncio.sleep(0)  # the first run now awaits wait()
        second = await instance.send("go")
        assert second.reason == "queued"
        assert instance.is_terminated  # the first task's run took it
        assert (await first).applied

    asyncio.run(run())


def test_an_async_model_method_makes_the_run_awaited() -> None:
    class Model:
        def __init__(self) -> None:
            self.seen: list[str] = []

        async def on_enter_b(self) -> None:
            await asyncio.sleep(0)
            self.seen.append("b")

    class Plain(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

    async def run() -> None:
        chart = compile_chart(Plain)
        sync_instance = chart.create()
        assert sync_instance.send("go").applied  # no async callback: a plain Outcome
        model = Model()
        instance = chart.create(model)
        assert (await instance.send("go")).applied
        assert model.seen == ["b"]

    asyncio.run(run())


def test_a_custom_init_and_async_callbacks_together() -> None:
    class Job(StateChart):
        class work(State.Compound):
            fetch = State(initial=True)
            save = State()
            ok = State(final=True)
            got = fetch.to(save, on="store")
            saved = save.to(ok, cond="verified")

        done = State(final=True)
        done_state_work = work.to(done)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.log: list[Any] = []
            super().__init__(*args, **kwargs)

        async def on_enter_fetch(self) -> None:
            await asyncio.sleep(0)
            self.log.append("enter fetch")

        async def store(self, data: Any = None) -> None:
            await asyncio.sleep(0)
            self.log.append(("store", data))
            await self.send("saved")

        async def verified(self) -> bool:
            self.log.append("verified")
            return True

    async def both() -> None:
        for machine in (Job(), compile_chart(Job).create()):
            await machine.send("got", data=1)
            assert machine.log == ["enter fetch", ("store", 1), "verified"]
            assert ids(machine.configuration) == ["done"]

    asyncio.run(both())


def test_a_failing_run_fails_the_task_whose_event_waited_in_its_queue_too() -> None:
    class Failing(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State()
        c = State(final=True)
        go = a.to(b, on="slow") | b.to(c)

        async def slow(self) -> None:
            await asyncio.sleep(0.01)
            raise ValueError("boom")

    async def run(machine: Any) -> tuple[list[str], list[str]]:
        await machine.activate_initial_state()
        results = await asyncio.gather(
            machine.send("go"), machine.send("go"), return_exceptions=True
        )
        return [type(r).__name__ for r in results], ids(machine.configuration)

    expected = asyncio.run(run(Failing()))
    assert expected == (["ValueError", "ValueError"], ["a"])
    assert asyncio.run(run(compile_chart(Failing).create())) == expected
