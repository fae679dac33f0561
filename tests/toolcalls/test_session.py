"""``ToolCallSession``: the stream's ready calls run, and their results flow back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from toolcalls import AbortSignal, InvalidEvent, SessionClosed, ToolCallSession, ToolCallState

from .executor_support import Gates, run_async, settle
from .test_tracker import delta, ready, start


def stream_call(call_id: str, text: str, name: str = "gate") -> list[dict[str, Any]]:
    """A whole call as the stream sends it: start, its arguments in one delta, ready."""
    return [start(call_id, name), delta(call_id, text), ready(call_id)]


def crowd_out(session: ToolCallSession, *ids: str) -> None:
    """Calls the stream starts and ends itself: they fill the tracker, never the executor."""
    for call_id in ids:
        session.apply(start(call_id))
        session.apply({"type": "error", "id": call_id, "error": "cancelled upstream"})


async def drain(session: ToolCallSession) -> list[ToolCallState]:
    session.finish()
    return [state async for state in session.settled()]


@run_async
async def test_a_call_that_becomes_running_is_executed_and_its_result_reaches_the_tracker() -> (
    None
):
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}) as session:
        for event in stream_call("c1", '{"key": "k1"}'):
            session.apply(event)
        await settle()
        assert gates.started == ["k1"]
        assert session.tracker.get("c1").status == "running"  # type: ignore[union-attr]
        gates.open("k1", {"hits": 2})
        settled = await drain(session)
    assert [(s.tool_call_id, s.status, s.result) for s in settled] == [
        ("c1", "success", {"hits": 2})
    ]
    assert session.tracker.get("c1").to_dict() == {  # type: ignore[union-attr]
        "id": "c1",
        "name": "gate",
        "argsText": '{"key": "k1"}',
        "args": {"key": "k1"},
        "status": "done",
        "result": {"hits": 2},
    }


@run_async
async def test_settled_calls_are_yielded_in_the_order_they_settle() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}) as session:
        for call_id in ("a", "b", "c"):
            for event in stream_call(call_id, f'{{"key": "{call_id}"}}'):
                session.apply(event)
        await settle()
        gates.open("c", 3)
        gates.fail("a", RuntimeError("down"))
        gates.open("b", 2)
        settled = await drain(session)
    assert [(s.tool_call_id, s.status) for s in settled] == [
        ("c", "success"),
        ("a", "error"),
        ("b", "success"),
    ]
    error = session.tracker.get("a").error  # type: ignore[union-attr]
    assert error["kind"] == "tool_raised"
    assert error["message"] == "tool 'gate' raised RuntimeError: down"


@run_async
async def test_unknown_tool_is_reported_and_the_tracker_records_the_error() -> None:
    async with ToolCallSession({"gate": Gates().tool}) as session:
        for event in stream_call("c1", "{}", name="serch"):
            session.apply(event)
        settled = await drain(session)
    assert [(s.tool_call_id, s.status, s.error.kind) for s in settled] == [  # type: ignore[union-attr]
        ("c1", "error", "unknown_tool")
    ]
    assert session.tracker.get("c1").error["message"] == (  # type: ignore[union-attr]
        "no tool named 'serch' is registered (available: 'gate')"
    )


@run_async
async def test_arguments_that_are_not_a_json_object_end_in_error_without_running() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}) as session:
        for event in stream_call("c1", "[1, 2]"):
            session.apply(event)
        settled = await drain(session)
    assert gates.started == []
    assert [(s.status, s.error.kind) for s in settled] == [("error", "invalid_arguments")]  # type: ignore[union-attr]
    call = session.tracker.get("c1")
    assert call is not None
    assert (call.status, call.args) == ("error", [1, 2])
    assert call.error["message"] == "cannot run tool 'gate': arguments must be a JSON object"


@run_async
async def test_arguments_that_do_not_parse_never_run_a_tool_and_are_reported() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}) as session:
        for event in stream_call("c1", '{"key": '):
            session.apply(event)
        settled = await drain(session)
    assert gates.started == []
    assert [(c.tool_call_id, c.status) for c in session.executor.calls] == [("c1", "error")]
    assert [(s.tool_call_id, s.status) for s in settled] == [("c1", "error")]
    error = settled[0].error
    assert error is not None
    assert (error.kind, error.message) == (
        "invalid_arguments",
        "cannot run tool 'gate': arguments are not valid JSON: Expecting value",
    )
    assert session.tracker.get("c1").status == "error"  # type: ignore[union-attr]


@run_async
async def test_calls_still_streaming_when_the_stream_ends_are_ended_and_reported() -> None:
    async with ToolCallSession({"gate": Gates().tool}) as session:
        session.apply(start("c1", "gate"))
        session.apply(delta("c1", '{"key": "trunc'))
        settled = await drain(session)
    assert [(s.tool_call_id, s.status) for s in settled] == [("c1", "error")]
    assert settled[0].error.message == (  # type: ignore[union-attr]
        "cannot run tool 'gate': the stream ended before the arguments were complete"
    )
    assert session.tracker.get("c1").status == "error"  # type: ignore[union-attr]


@run_async
async def test_an_id_both_tracker_and_executor_forgot_runs_again_as_a_new_call() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}, max_history=1) as session:
        for event in stream_call("a", '{"key": "first"}'):
            session.apply(event)
        await settle()
        gates.open("first", 1)
        await settle()
        for event in stream_call("b", '{"key": "b"}'):
            session.apply(event)
        await settle()
        gates.open("b", "b")
        await settle()  # b settled: the executor forgot a (max_history=1)
        assert session.executor.get_call("a") is None
        for event in stream_call("a", '{"key": "second"}'):
            session.apply(event)
        await settle()
        assert gates.started == ["first", "b", "second"]
        gates.open("second", 2)
        settled = await drain(session)
    assert [(s.tool_call_id, s.status, s.result) for s in settled] == [
        ("a", "success", 1),
        ("b", "success", "b"),
        ("a", "success", 2),
    ]


@run_async
async def test_redelivery_after_the_tracker_forgot_a_call_never_runs_or_reports_it_twice() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}, max_history=2) as session:
        for event in stream_call("a", '{"key": "a"}'):
            session.apply(event)
        await settle()
        gates.open("a", {"hits": 1})
        await settle()
        crowd_out(session, "x", "y")  # the tracker forgets a; the executor still knows it
        assert "a" not in session.tracker
        assert session.executor.get_call("a") is not None
        for event in stream_call("a", '{"key": "a"}'):  # the stream re-delivers a
            assert session.apply(event).applied
        await settle()
        assert gates.started == ["a"]
        call = session.tracker.get("a")
        assert call is not None
        assert (call.status, call.result) == ("done", {"hits": 1})
        settled = await drain(session)
    assert [(s.tool_call_id, s.status) for s in settled] == [("a", "success")]


@run_async
async def test_redelivery_of_a_failed_call_takes_its_error_and_is_not_reported_again() -> None:
    async with ToolCallSession({"gate": Gates().tool}, max_history=2) as session:
        for event in stream_call("a", "{}", name="missing"):
            session.apply(event)
        crowd_out(session, "x", "y")
        assert "a" not in session.tracker
        for event in stream_call("a", "{}", name="missing"):
            session.apply(event)
        call = session.tracker.get("a")
        assert call is not None
        assert (call.status, call.error["kind"]) == ("error", "unknown_tool")
        settled = await drain(session)
    assert [s.tool_call_id for s in settled] == ["a"]


@run_async
async def test_an_id_reused_with_other_arguments_while_remembered_ends_in_error_unrun() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}, max_history=2) as session:
        for event in stream_call("a", '{"key": "first"}'):
            session.apply(event)
        await settle()
        gates.open("first", 1)
        await settle()
        crowd_out(session, "x", "y")
        for event in stream_call("a", '{"key": "other"}'):
            session.apply(event)
        await settle()
        assert gates.started == ["first"]
        call = session.tracker.get("a")
        assert call is not None
        assert call.status == "error"
        assert call.error["message"] == (
            "cannot run tool 'gate': id 'a' is taken by an earlier call with other arguments"
        )
        assert call.error["details"]["errors"][0]["type"] == "duplicate_id"
        settled = await drain(session)
    assert [s.tool_call_id for s in settled] == ["a"]


def test_ready_applied_without_a_running_loop_fails_and_changes_nothing() -> None:
    gates = Gates()
    session = ToolCallSession({"gate": gates.tool})
    session.apply(start("c1", "gate"))
    session.apply(delta("c1", '{"key": "k"}'))
    with pytest.raises(RuntimeError, match="needs an event loop"):
        session.apply(ready("c1"))
    assert session.tracker.get("c1").status == "pending"  # type: ignore[union-attr]
    assert (session.in_flight, session.executor.calls) == (0, [])

    async def main() -> list[ToolCallState]:
        assert session.apply(ready("c1")).status == "running"
        await settle()
        gates.open("k", "ran")
        async with session:
            return await drain(session)

    settled = asyncio.run(main())
    assert [(s.tool_call_id, s.result) for s in settled] == [("c1", "ran")]
    assert session.tracker.get("c1").status == "done"  # type: ignore[union-attr]


@run_async
async def test_reset_ends_a_consumer_waiting_for_running_calls() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}) as session:
        for event in stream_call("c1", '{"key": "k"}'):
            session.apply(event)
        session.finish()
        consumer = asyncio.ensure_future(drain(session))
        await settle()
        session.reset()
        assert await asyncio.wait_for(consumer, 1) == []


@run_async
async def test_closing_the_session_ends_run_without_an_error() -> None:
    gates = Gates()
    events = [e for i in range(200) for e in stream_call(f"c{i}", f'{{"key": "k{i}"}}')]
    session = ToolCallSession({"gate": gates.tool})
    async with session:

        async def consume() -> list[ToolCallState]:
            return [state async for state in session.run(events)]

        consumer = asyncio.ensure_future(consume())
        await settle()
        await session.aclose()
        assert await asyncio.wait_for(consumer, 1) == []
    assert all(c.status == "error" for c in session.tracker.list())


@pytest.mark.parametrize(
    "ending",
    [
        {"type": "error", "id": "c1", "error": "cancelled by the model"},
        {"type": "result", "id": "c1", "result": "provider ran it"},
    ],
)
@run_async
async def test_stream_ending_a_running_call_aborts_its_tool_and_reports_nothing(
    ending: dict[str, Any],
) -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}) as session:
        for event in stream_call("c1", '{"key": "k"}'):
            session.apply(event)
        await settle()
        assert session.apply(ending).applied
        await settle()
        assert gates.cancelled == ["k"]
        assert gates.signals["k"].reason == "the stream ended the call"
        settled = await drain(session)
    assert settled == []
    assert session.tracker.get("c1").status == ("error" if ending["type"] == "error" else "done")  # type: ignore[union-attr]


@run_async
async def test_ending_the_session_aborts_in_flight_tools() -> None:
    gates = Gates()
    session = ToolCallSession({"gate": gates.tool})
    async with session:
        for event in stream_call("c1", '{"key": "k"}'):
            session.apply(event)
        await settle()
    assert gates.cancelled == ["k"]
    assert gates.signals["k"].aborted
    call = session.tracker.get("c1")
    assert call is not None
    assert (call.status, call.error["kind"], call.error["details"]["reason"]) == (
        "error",
        "aborted",
        "the session closed",
    )
    assert [s async for s in session.settled()] == []
    with pytest.raises(SessionClosed):
        session.apply(start("c2"))


@run_async
async def test_a_late_result_after_the_session_closed_is_dropped() -> None:
    gates = Gates()
    session = ToolCallSession({"stubborn": gates.stubborn})
    async with session:
        for event in stream_call("c1", '{"key": "k"}', name="stubborn"):
            session.apply(event)
        await settle()
        closing = asyncio.ensure_future(session.aclose())
        await settle()
        gates.open("k", "too late")
        await closing
    assert session.tracker.get("c1").status == "error"  # type: ignore[union-attr]
    assert [s async for s in session.settled()] == []


@run_async
async def test_run_reads_an_async_stream_and_yields_each_settled_call() -> None:
    async def search(query: str, signal: AbortSignal) -> str:
        await asyncio.sleep(0)
        return f"results for {query}"

    async def provider() -> AsyncIterator[dict[str, Any]]:
        for event in [
            start("a", "search"),
            start("b", "search"),
            delta("a", '{"query": '),
            delta("b", '{"query": "dogs"}'),
            ready("b"),
            delta("a", '"cats"}'),
            ready("a"),
        ]:
            await asyncio.sleep(0)
            yield event

    async with ToolCallSession({"search": search}) as session:
        results = {s.tool_call_id: s.result async for s in session.run(provider())}
    assert results == {"a": "results for cats", "b": "results for dogs"}
    assert [c.status for c in session.tracker.list()] == ["done", "done"]


@run_async
async def test_run_stops_at_a_malformed_event_while_the_running_calls_go_on() -> None:
    gates = Gates()
    events = [*stream_call("c1", '{"key": "k"}'), {"type": "delta", "id": "c1"}]
    async with ToolCallSession({"gate": gates.tool}) as session:
        settled_before_the_error: list[ToolCallState] = []

        async def consume() -> None:
            async for state in session.run(events):
                settled_before_the_error.append(state)

        with pytest.raises(InvalidEvent, match="argsTextDelta"):
            await consume()
        assert settled_before_the_error == []
        assert session.in_flight == 1
        gates.open("k", "still delivered")
        settled = await drain(session)
    assert [(s.tool_call_id, s.result) for s in settled] == [("c1", "still delivered")]


@run_async
async def test_session_reset_aborts_running_tools_and_forgets_every_call() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}) as session:
        for event in stream_call("c1", '{"key": "k"}'):
            session.apply(event)
        await settle()
        session.reset()
        await settle()
        assert gates.cancelled == ["k"]
        assert len(session.tracker) == 0
        assert session.executor.calls == []
        for event in stream_call("c1", '{"key": "k2"}'):
            session.apply(event)
        await settle()
        gates.open("k2", "fresh")
        settled = await drain(session)
    assert [(s.tool_call_id, s.result) for s in settled] == [("c1", "fresh")]
