"""``ToolCallSession``: the stream's ready calls run, and their results flow back."""

# Rules checked here (docs/spec.md): S1, S2, S3, S4, S5, S6, S7, S10.

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from toolcalls import (
    AbortSignal,
    ExecutionView,
    InvalidEvent,
    SessionClosed,
    Tool,
    ToolCallSession,
    ToolError,
)

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


async def drain(session: ToolCallSession) -> list[ExecutionView]:
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
    [state] = settled
    assert (state.tool_name, dict(state.args), state.error) == ("gate", {"key": "k1"}, None)
    assert state.to_dict() == {
        "toolCallId": "c1",
        "toolName": "gate",
        "args": {"key": "k1"},
        "status": "success",
        "result": {"hits": 2},
    }
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
async def test_an_id_reused_with_other_arguments_while_remembered_is_reported_unrun() -> None:
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
    assert [(s.tool_call_id, s.status) for s in settled] == [("a", "success"), ("a", "error")]
    assert dict(settled[1].args) == {"key": "other"}
    assert settled[1].error is not None
    assert settled[1].error.to_dict() == call.error


def test_ready_applied_without_a_running_loop_fails_and_changes_nothing() -> None:
    gates = Gates()
    session = ToolCallSession({"gate": gates.tool})
    session.apply(start("c1", "gate"))
    session.apply(delta("c1", '{"key": "k"}'))
    with pytest.raises(RuntimeError, match="needs an event loop"):
        session.apply(ready("c1"))
    assert session.tracker.get("c1").status == "pending"  # type: ignore[union-attr]
    assert (session.in_flight, session.executor.calls) == (0, [])

    async def main() -> list[ExecutionView]:
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

        async def consume() -> list[ExecutionView]:
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
        settled_before_the_error: list[ExecutionView] = []

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


# -- options through a session -----------------------------------------------------------------


@run_async
async def test_max_concurrency_through_a_session_keeps_later_calls_waiting_in_order() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}, max_concurrency=2) as session:
        for call_id in ("a", "b", "c", "d"):
            for event in stream_call(call_id, f'{{"key": "{call_id}"}}'):
                session.apply(event)
        await settle()
        assert gates.started == ["a", "b"]
        assert [c.status for c in session.executor.calls] == [
            "executing",
            "executing",
            "pending",
            "pending",
        ]
        assert session.in_flight == 4
        assert [c.status for c in session.tracker.list()] == ["running"] * 4
        gates.open("b", "b")
        await settle()
        assert gates.started == ["a", "b", "c"]
        for key in ("a", "c"):
            gates.open(key, key)
            await settle()
        assert gates.started == ["a", "b", "c", "d"]
        gates.open("d", "d")
        settled = await drain(session)
    assert [s.tool_call_id for s in settled] == ["b", "a", "c", "d"]


@run_async
async def test_max_history_defaults_to_50_in_both_tracker_and_executor() -> None:
    async def echo(args: dict[str, Any]) -> Any:
        return args["n"]

    async with ToolCallSession({"echo": echo}) as session:
        assert session.tracker.max_history == 50
        for n in range(60):
            for event in stream_call(f"c{n}", f'{{"n": {n}}}', name="echo"):
                session.apply(event)
        settled = await drain(session)
    assert len(settled) == 60
    assert list(session.tracker) == [f"c{n}" for n in range(10, 60)]
    assert [c.tool_call_id for c in session.executor.calls] == [f"c{n}" for n in range(10, 60)]


# -- the error of a call that cannot run --------------------------------------------------------


class Query(BaseModel):
    q: str


async def typed(args: Query) -> str:
    return args.q


UNRUNNABLE = [
    (
        "unknown tool",
        stream_call("c", "{}", name="serch"),
        ToolError.unknown_tool("serch", ["gate", "typed"]),
    ),
    (
        "arguments not an object",
        stream_call("c", "[1, 2]"),
        ToolError(
            "invalid_arguments",
            "cannot run tool 'gate': arguments must be a JSON object",
            {
                "tool_name": "gate",
                "errors": [
                    {"loc": [], "msg": "arguments must be a JSON object", "type": "session"}
                ],
            },
        ),
    ),
    (
        "arguments that do not parse",
        stream_call("c", '{"q": tru}'),
        ToolError(
            "invalid_arguments",
            "cannot run tool 'gate': arguments are not valid JSON: Expecting value",
            {
                "tool_name": "gate",
                "errors": [
                    {
                        "loc": [],
                        "msg": "arguments are not valid JSON: Expecting value",
                        "type": "json_invalid",
                    }
                ],
            },
        ),
    ),
    (
        "arguments the tool refuses",
        stream_call("c", '{"q": 3}', name="typed"),
        ToolError.invalid_arguments(
            "typed",
            [{"loc": ["q"], "msg": "Input should be a valid string", "type": "string_type"}],
        ),
    ),
    (
        "stream ended first",
        [start("c"), delta("c", '{"q": ')],
        ToolError(
            "invalid_arguments",
            "cannot run tool 'search': the stream ended before the arguments were complete",
            {
                "tool_name": "search",
                "errors": [
                    {
                        "loc": [],
                        "msg": "the stream ended before the arguments were complete",
                        "type": "session",
                    }
                ],
            },
        ),
    ),
]


@pytest.mark.parametrize(
    ("label", "events", "error"), UNRUNNABLE, ids=[case[0] for case in UNRUNNABLE]
)
@run_async
async def test_a_call_that_cannot_run_is_reported_with_what_was_wrong(
    label: str, events: list[dict[str, Any]], error: ToolError
) -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool, "typed": typed}) as session:
        for event in events:
            session.apply(event)
        settled = await drain(session)
    assert gates.started == []
    [state] = settled
    assert (state.tool_call_id, state.status, state.result) == ("c", "error", None)
    assert state.tool_name == error.details["tool_name"]
    assert dict(state.args) == ({"q": 3} if label == "arguments the tool refuses" else {})
    assert state.error == error
    assert state.to_dict()["error"] == error.to_dict()
    call = session.tracker.get("c")
    assert call is not None
    assert call.status == "error"
    if label != "arguments that do not parse":  # the tracker keeps the parser's own error
        assert call.error == error.to_dict()


# -- a result the tracker cannot record --------------------------------------------------------


@run_async
async def test_a_result_the_tracker_cannot_record_is_reported_and_recorded_as_an_error() -> None:
    lock = threading.Lock()

    async def hands_out_a_lock(args: dict[str, Any]) -> Any:
        return {"lock": lock}

    async with ToolCallSession({"tool": hands_out_a_lock}) as session:
        for event in stream_call("c", "{}", name="tool"):
            session.apply(event)
        settled = await drain(session)
    assert [(s.status, s.result) for s in settled] == [("success", {"lock": lock})]
    call = session.tracker.get("c")
    assert call is not None
    assert call.status == "error"
    assert call.error["kind"] == "unrecordable_result"
    assert call.error["message"].startswith("invalid event: result: value cannot be copied (")


@run_async
async def test_results_reach_the_tracker_as_copies_the_tool_cannot_change_later() -> None:
    kept: dict[str, Any] = {"hits": [1]}

    async def shares(args: dict[str, Any]) -> Any:
        return kept

    async with ToolCallSession({"tool": shares}) as session:
        for event in stream_call("c", "{}", name="tool"):
            session.apply(event)
        settled = await drain(session)
    kept["hits"].append(2)
    assert settled[0].result is kept
    assert session.tracker.get("c").result == {"hits": [1]}  # type: ignore[union-attr]


@run_async
async def test_nested_arguments_are_never_shared_between_tracker_view_and_tool() -> None:
    seen: list[dict[str, Any]] = []

    async def mutates(args: dict[str, Any]) -> None:
        args["items"].append("tool")
        seen.append(args)

    async with ToolCallSession({"tool": mutates}) as session:
        for event in stream_call("c", '{"items": ["a"]}', name="tool"):
            session.apply(event)
        settled = await drain(session)
    assert seen == [{"items": ["a", "tool"]}]
    assert dict(settled[0].args) == {"items": ["a"]}
    assert session.tracker.get("c").args == {"items": ["a"]}  # type: ignore[union-attr]


# -- an id started again while its tool still runs ----------------------------------------------


@run_async
async def test_an_id_started_again_while_its_abandoned_tool_still_runs_runs_once_more() -> None:
    release = threading.Event()
    started: list[int] = []

    def slow(args: dict[str, Any], signal: AbortSignal) -> Any:
        started.append(args["n"])
        release.wait(5)
        return args["n"]

    async def quick(args: dict[str, Any]) -> Any:
        return "quick"

    async with ToolCallSession({"slow": slow, "quick": quick}, max_history=2) as session:
        for event in stream_call("a", '{"n": 1}', name="slow"):
            session.apply(event)
        await asyncio.sleep(0.05)
        assert started == [1]
        session.apply({"type": "error", "id": "a", "error": "cancelled by the model"})
        # The call is over (not reported); its thread runs on. Re-delivered while the
        # executor remembers it: not run again.
        crowd_out(session, "x", "y")
        for event in stream_call("a", '{"n": 1}', name="slow"):
            session.apply(event)
        await asyncio.sleep(0.05)
        assert started == [1]
        # Once the executor forgot it too, the id is a new call: it runs while the first
        # thread is still blocked.
        for call_id in ("q1", "q2"):
            for event in stream_call(call_id, "{}", name="quick"):
                session.apply(event)
        await settle()
        assert session.executor.get_call("a") is None
        crowd_out(session, "z1", "z2")
        for event in stream_call("a", '{"n": 2}', name="slow"):
            session.apply(event)
        await asyncio.sleep(0.05)
        assert started == [1, 2]
        release.set()
        settled = await drain(session)
    assert [(s.tool_call_id, s.result) for s in settled] == [
        ("q1", "quick"),
        ("q2", "quick"),
        ("a", 2),
    ]


# -- stopping run() early ------------------------------------------------------------------------


@run_async
async def test_stopping_run_early_stops_reading_the_events_and_the_feeder() -> None:
    read: list[int] = []
    closed = asyncio.Event()

    async def endless() -> AsyncIterator[dict[str, Any]]:
        try:
            n = 0
            while True:
                for event in stream_call(f"c{n}", "{}", name="echo"):
                    yield event
                read.append(n)
                n += 1
                await asyncio.sleep(0.001)
        finally:
            closed.set()

    async def echo(args: dict[str, Any]) -> str:
        return "ok"

    async with ToolCallSession({"echo": echo}) as session:
        async with contextlib.aclosing(session.run(endless())) as settled:
            async for state in settled:
                assert state.status == "success"
                break
        await asyncio.wait_for(closed.wait(), 1)
        await session.executor.join()
        count, before = len(read), session.tracker.snapshot()
        await asyncio.sleep(0.02)
        assert len(read) == count  # nothing is read any more, nothing applied
        assert session.tracker.snapshot() == before
        assert session.apply(start("after")).applied  # the session still takes events


@run_async
async def test_a_timed_out_tool_is_reported_with_its_timeout() -> None:
    async def sleeps(args: dict[str, Any]) -> None:
        await asyncio.sleep(10)

    async with ToolCallSession({"sleeps": Tool(sleeps, timeout=0.01)}) as session:
        for event in stream_call("c", "{}", name="sleeps"):
            session.apply(event)
        settled = await drain(session)
    assert [s.error for s in settled] == [ToolError.timeout("sleeps", 0.01)]
    assert session.tracker.get("c").error == ToolError.timeout("sleeps", 0.01).to_dict()  # type: ignore[union-attr]


@run_async
async def test_seed_valid_result_and_error_events_without_values_never_stop_run() -> None:
    gates = Gates()
    events = [
        *stream_call("a", '{"key": "a"}'),
        {"type": "result", "id": "a"},  # the provider ran it: no result value
        start("b"),
        {"type": "error", "id": "b"},  # the provider gave up on it: no error value
        start("c"),
        {"type": "error", "id": "c", "error": None},
        *stream_call("d", '{"key": "d"}'),
    ]
    async with ToolCallSession({"gate": gates.tool}) as session:

        async def consume() -> list[ExecutionView]:
            return [state async for state in session.run(events)]

        consumer = asyncio.ensure_future(consume())
        await settle()
        gates.open("d", "d")
        settled = await asyncio.wait_for(consumer, 1)
    assert [(s.tool_call_id, s.result) for s in settled] == [("d", "d")]
    calls = {call.id: call for call in session.tracker.list()}
    assert (calls["a"].status, calls["a"].has_result) == ("done", False)
    assert (calls["b"].status, calls["b"].has_error) == ("error", False)
    assert (calls["c"].status, calls["c"].error) == ("error", None)
    assert gates.started == ["d"]  # a was ended before its task ever ran


@run_async
async def test_run_lets_started_tools_run_before_a_long_list_is_all_applied() -> None:
    started_after: list[int] = []

    async def echo(args: dict[str, Any]) -> Any:
        started_after.append(len(session.tracker))
        return args["n"]

    events = [e for n in range(400) for e in stream_call(f"c{n}", f'{{"n": {n}}}', "echo")]
    session = ToolCallSession({"echo": echo}, max_history=1000)
    async with session:
        settled = [state async for state in session.run(events)]
    assert len(settled) == 400
    assert min(started_after) < 100  # the first tools ran after one batch, not after 400 calls


@run_async
async def test_reset_keeps_the_sessions_max_history() -> None:
    async with ToolCallSession({"gate": Gates().tool}, max_history=3) as session:
        session.reset()
        assert session.tracker.max_history == 3


@run_async
async def test_a_consumer_changing_reported_nested_arguments_changes_nothing_tracked() -> None:
    async def noop(args: dict[str, Any]) -> None:
        return None

    async with ToolCallSession({"noop": noop}) as session:
        for event in stream_call("c", '{"items": ["a"]}', name="noop"):
            session.apply(event)
        settled = await drain(session)
    settled[0].args["items"].append("consumer")
    assert session.tracker.get("c").args == {"items": ["a"]}  # type: ignore[union-attr]
    assert session.tracker.snapshot()["calls"][0]["args"] == {"items": ["a"]}
