"""Session rules the mutation run of ``toolcalls/_session.py`` found unchecked: what a refused
event, a truncated call and a re-delivered call that cannot run report (S2, S3, S10), how
``run()`` shares the loop with tools (S6), and what a resume keeps (R2, R6)."""

# Rules checked here (docs/spec.md): S2, S3, S6, S10, R2, R6.

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from toolcalls import CheckpointError, ExecutionView, SessionClosed, SnapshotError, ToolCallSession
from toolcalls._runner import LocalRunner
from toolcalls._session import BATCH

from .executor_support import Gates, run_async, settle
from .test_checkpoint import drain, interrupted_session
from .test_session import crowd_out
from .test_tracker import delta, ready, start


def whole_call(call_id: str, text: str, name: str = "echo") -> list[dict[str, Any]]:
    return [start(call_id, name), delta(call_id, text), ready(call_id)]


async def echo(x: Any) -> Any:
    return x


def truncated(call_id: str, message: str | None) -> dict[str, Any]:
    error: dict[str, Any] = {"kind": "truncated"}
    if message is not None:
        error["message"] = message
    return {"type": "error", "id": call_id, "error": error}


# -- S2, S3: what is reported, and what is refused ------------------------------------------


@run_async
async def test_events_after_finish_are_refused_saying_why() -> None:
    async with ToolCallSession({"echo": echo}) as session:
        session.finish()
        with pytest.raises(SessionClosed) as raised:
            session.apply(start("late", "echo"))
    assert str(raised.value) == "the session takes no more events (finish() or aclose() ran)"


@pytest.mark.parametrize(
    ("message", "reason"),
    [("cut off after 12 bytes", "cut off after 12 bytes"), (None, "truncated")],
)
@run_async
async def test_a_truncated_call_is_reported_with_the_adapters_reason_and_no_arguments(
    message: str | None, reason: str
) -> None:
    async with ToolCallSession({"echo": echo}) as session:
        session.apply(start("cut", "echo"))
        session.apply(delta("cut", '{"x": 1'))
        session.apply(truncated("cut", message))
        [state] = await drain(session)
    assert state.to_dict() == {
        "toolCallId": "cut",
        "toolName": "echo",
        "args": {},
        "status": "error",
        "error": {
            "kind": "invalid_arguments",
            "message": f"cannot run tool 'echo': {reason}",
            "details": {
                "toolName": "echo",
                "errors": [{"loc": [], "msg": reason, "type": "truncated"}],
            },
        },
    }


@run_async
async def test_a_truncated_redelivery_of_a_remembered_call_is_not_reported_again() -> None:
    async with ToolCallSession({"echo": echo}, max_history=1) as session:
        for event in whole_call("a", '{"x": 1}'):
            session.apply(event)
        first = await anext(session.settled())
        session.apply(start("b", "echo"))  # 'a' leaves the tracker, the executor remembers it
        session.apply(start("a", "echo"))
        session.apply(delta("a", '{"x"'))
        session.apply(truncated("a", "cut"))
        rest = await drain(session)
    assert (first.tool_call_id, first.status) == ("a", "success")
    assert [(s.tool_call_id, s.status) for s in rest] == [("b", "error")]


@run_async
async def test_a_redelivered_call_that_cannot_run_as_before_is_not_reported_again() -> None:
    async with ToolCallSession({"echo": echo}, max_history=1) as session:
        for event in whole_call("a", '{"x": '):
            session.apply(event)
        first = await anext(session.settled())
        session.apply(start("b", "echo"))  # 'a' leaves the tracker
        for event in whole_call("a", '{"x": '):  # the same broken call again
            session.apply(event)
        await settle()
        session.apply(delta("b", '{"x": 2}'))
        session.apply(ready("b"))
        rest = await drain(session)
    assert (first.tool_call_id, first.status) == ("a", "error")
    assert [(s.tool_call_id, s.status) for s in rest] == [("b", "success")]


@run_async
async def test_a_call_whose_arguments_do_not_parse_reusing_a_remembered_id_says_so() -> None:
    async with ToolCallSession({"echo": echo}, max_history=1) as session:
        for event in whole_call("a", '{"x": 1}'):
            session.apply(event)
        await anext(session.settled())
        session.apply(start("b", "echo"))  # 'a' leaves the tracker
        for event in whole_call("a", '{"x": '):  # the id again, arguments that do not parse
            session.apply(event)
        await settle()
        [state] = [s for s in await drain(session) if s.tool_call_id == "a"]
    assert state.error is not None
    assert state.error.details["errors"][0]["type"] == "json_invalid"


@run_async
async def test_a_call_of_another_tool_reusing_a_remembered_id_is_reported_as_itself() -> None:
    async def other(y: Any) -> Any:
        return y

    async with ToolCallSession({"echo": echo, "other": other}, max_history=1) as session:
        for event in whole_call("a", '{"x": '):  # could not run
            session.apply(event)
        await anext(session.settled())
        session.apply(start("b", "echo"))  # 'a' leaves the tracker
        for event in whole_call("a", '{"y": [1]}', "other"):  # the id again, another tool
            session.apply(event)
        await settle()
        [state] = [s for s in await drain(session) if s.tool_call_id == "a"]
    assert (state.tool_name, dict(state.args), state.status) == ("other", {"y": [1]}, "error")
    assert state.error is not None
    assert state.error.details["errors"][0]["type"] == "duplicate_id"


# -- S6: run() and the loop ------------------------------------------------------------------


def _batches() -> tuple[list[dict[str, Any]], int]:
    """Call ``a`` first, then ``b`` streaming one character per event, with call ``c`` whole
    in the middle of the second batch; returns the events and where ``c`` is ready."""
    events = [*whole_call("a", '{"x": "a"}'), start("b", "echo")]
    while len(events) < BATCH + 40:
        events.append(delta("b", " "))
    events += whole_call("c", '{"x": "c"}')
    c_ready = len(events)
    while len(events) < 3 * BATCH:
        events.append(delta("b", " "))
    return events, c_ready


@pytest.mark.parametrize("source", ["list", "async generator"])
@run_async
async def test_run_lets_tools_run_after_each_batch_of_events_not_each_event(source: str) -> None:
    events, c_ready = _batches()
    consumed: dict[str, int] = {}
    read = 0

    async def counting() -> AsyncIterator[dict[str, Any]]:
        nonlocal read
        for event in events:
            read += 1
            yield event

    async def watch(x: str) -> str:
        fragments = len(session.tracker.get("b").args_text)  # type: ignore[union-attr]
        consumed[x] = fragments + 4 + (3 if x == "c" else 0)  # events applied so far
        return x

    session = ToolCallSession({"echo": watch}, max_history=10)
    async with session:
        feed = events if source == "list" else counting()
        async with contextlib.aclosing(session.run(feed)) as settled:
            reported = [s.tool_call_id async for s in settled if s.status == "success"]
    assert reported == ["a", "c"]
    assert c_ready < 2 * BATCH
    assert consumed == {"a": BATCH, "c": 2 * BATCH}  # one loop turn per BATCH events


@run_async
async def test_finish_called_while_run_reads_the_events_stops_run_with_session_closed() -> None:
    async def events() -> AsyncIterator[dict[str, Any]]:
        for event in whole_call("a", '{"x": 1}'):
            yield event
        session.finish()  # someone ends the stream while run() still reads it
        yield start("late", "echo")

    session = ToolCallSession({"echo": echo})
    async with session:
        with pytest.raises(SessionClosed):
            async for _ in session.run(events()):
                pass


@run_async
async def test_stopping_run_early_returns_once_the_feeder_has_stopped() -> None:
    closed = False

    async def endless() -> AsyncIterator[dict[str, Any]]:
        nonlocal closed
        try:
            n = 0
            while True:
                for event in whole_call(f"c{n}", '{"x": 1}'):
                    yield event
                n += 1
                await asyncio.sleep(0.001)
        finally:
            closed = True

    async with ToolCallSession({"echo": echo}) as session:
        async with contextlib.aclosing(session.run(endless())) as settled:
            async for _ in settled:
                break
        assert closed  # the events were closed before run() returned


# -- R2, R6: resuming ------------------------------------------------------------------------


@run_async
async def test_a_checkpoint_taken_before_resumed_calls_start_lists_them_as_executing() -> None:
    checkpoint = await interrupted_session(Gates())
    gates = Gates()
    prepared = ToolCallSession._prepare_resume(
        checkpoint,
        {"gate": gates.tool, "safe": gates.tool},
        rerun={"safe"},
        max_concurrency=None,
        runner=None,
    )
    assert prepared.checkpoint()["inFlight"] == [
        {"id": "c4", "name": "safe", "state": "executing"},
        {"id": "c5", "name": "gate", "state": "executing"},
    ]
    assert gates.started == []


@run_async
async def test_resume_uses_the_concurrency_limit_and_the_runner_it_is_given() -> None:
    checkpoint = await interrupted_session(Gates())
    gates = Gates()
    runner = LocalRunner()
    session = ToolCallSession.resume(
        checkpoint,
        {"gate": gates.tool, "safe": gates.tool},
        rerun={"gate", "safe"},
        max_concurrency=1,
        runner=runner,
    )
    async with session:
        await settle()
        assert session.executor.runner is runner
        assert gates.started == ["k3"]  # c4 and c5 wait for the one slot
        assert session.in_flight == 3


@pytest.mark.parametrize(
    ("damage", "field", "message"),
    [
        (
            lambda c: c["inFlight"].append(dict(c["inFlight"][0])),
            "inFlight.3",
            "call 'c3' is listed twice",
        ),
        (
            lambda c: c["inFlight"].append({"id": "c1", "name": "gate", "state": "executing"}),
            "inFlight.3",
            "call 'c1' is not running",
        ),
        (
            lambda c: c["inFlight"][0].update(name="safe"),
            "inFlight.0",
            "names 'safe', the tracker 'gate'",
        ),
        (lambda c: c["inFlight"].pop(0), "tracker.calls.2", "call 'c3' is running but not in"),
    ],
)
@run_async
async def test_a_damaged_in_flight_list_is_refused_naming_the_field_and_the_call(
    damage: Any, field: str, message: str
) -> None:
    checkpoint = await interrupted_session(Gates())
    damage(checkpoint)
    with pytest.raises(SnapshotError) as raised:
        ToolCallSession.resume(checkpoint, {"gate": Gates().tool, "safe": Gates().tool})
    assert raised.value.field == field
    assert message in str(raised.value)


@pytest.mark.parametrize(("kept", "expected"), [(None, 50), (8, 8)])
@run_async
async def test_a_resumed_session_keeps_the_checkpoints_max_history(
    kept: int | None, expected: int
) -> None:
    checkpoint = await interrupted_session(Gates())
    checkpoint["tracker"]["maxHistory"] = kept
    session = ToolCallSession.resume(
        checkpoint, {"gate": Gates().tool, "safe": Gates().tool}, rerun={"gate", "safe"}
    )
    async with session:
        assert session.tracker.max_history == kept
        assert session.executor._book.max_history == expected


@run_async
async def test_a_resumed_finished_session_takes_no_more_events() -> None:
    async with ToolCallSession({"echo": echo}) as session:
        for event in whole_call("a", '{"x": 1}'):
            session.apply(event)
        session.finish()
        await settle()
        checkpoint = json.loads(json.dumps(session.checkpoint()))
    resumed = ToolCallSession.resume(checkpoint, {"echo": echo})
    async with resumed:
        with pytest.raises(SessionClosed):
            resumed.apply(start("b", "echo"))
        reported = [s.tool_call_id async for s in resumed.settled()]
    assert reported == ["a"]


@run_async
async def test_an_interrupted_call_is_reported_with_its_tool_arguments_and_error() -> None:
    checkpoint = await interrupted_session(Gates())
    gates = Gates()
    session = ToolCallSession.resume(checkpoint, {"gate": gates.tool, "safe": gates.tool})
    async with session:
        reported: dict[str, ExecutionView] = {}
        async for state in session.settled():
            reported[state.tool_call_id] = state
            if "c4" in reported:
                break
    for call_id, name, key in (("c3", "gate", "k3"), ("c4", "safe", "k4")):
        state = reported[call_id]
        assert (state.tool_name, dict(state.args), state.status) == (name, {"key": key}, "error")
        assert state.error is not None
        assert state.error.to_dict() == {
            "kind": "interrupted",
            "message": f"tool {name!r} was executing when its process stopped; "
            "it was not run again",
            "details": {"toolName": name},
        }
        assert session.tracker.get(call_id).error == state.error.to_dict()  # type: ignore[union-attr]


@run_async
async def test_a_resumed_pending_call_runs_with_its_nested_arguments() -> None:
    gates = Gates()
    nested = {"key": "k2", "deep": [1, {"x": [2, 3]}]}
    async with ToolCallSession({"gate": gates.tool}, max_concurrency=1) as session:
        for event in whole_call("a", '{"key": "k1"}', "gate"):
            session.apply(event)
        for event in whole_call("b", json.dumps(nested), "gate"):
            session.apply(event)
        await settle()
        checkpoint = json.loads(json.dumps(session.checkpoint()))
    seen: list[Any] = []

    async def records(args: dict[str, Any]) -> str:
        seen.append(args)
        args["deep"].append("changed by the tool")
        return "ok"

    resumed = ToolCallSession.resume(checkpoint, {"gate": records})
    async with resumed:
        await settle()
        resumed.finish()
        reported = {s.tool_call_id: s.status async for s in resumed.settled()}
        assert reported == {"a": "error", "b": "success"}
        assert seen[0]["deep"][:2] == nested["deep"]
        [view] = [c for c in resumed.executor.calls if c.tool_call_id == "b"]
        view.args["deep"].append("changed by a reader")  # its own copy: nothing tracked changes
        assert resumed.tracker.get("b").args == nested  # type: ignore[union-attr]


# -- S10: refused re-deliveries, remembered as long as the executor remembers the id ---------


def redeliver(session: ToolCallSession, call_id: str, text: str) -> None:
    """The tracker forgets every call it holds (two calls the stream ends itself push them
    out of a tracker of ``max_history=2``), then ``call_id`` comes whole again."""
    crowd_out(session, f"{call_id}-{text}-1", f"{call_id}-{text}-2")
    for event in whole_call(call_id, text):
        session.apply(event)


def taken(call_id: str) -> dict[str, Any]:
    """The error of a call refused because an earlier call of the same tool holds its id."""
    reason = f"id {call_id!r} is taken by an earlier call with other arguments"
    return {
        "kind": "invalid_arguments",
        "message": f"cannot run tool 'echo': {reason}",
        "details": {
            "toolName": "echo",
            "errors": [{"loc": [], "msg": reason, "type": "duplicate_id"}],
        },
    }


@run_async
async def test_an_identical_redelivery_of_a_refused_call_is_recorded_but_not_reported() -> None:
    async with ToolCallSession({"echo": echo}, max_history=1) as session:
        for event in whole_call("a", '{"x": 1}'):
            session.apply(event)
        first = await anext(session.settled())
        crowd_out(session, "b")  # 'a' leaves the tracker, the executor remembers it
        for event in whole_call("a", '{"x": 2}'):  # another call reusing the id: refused
            session.apply(event)
        refused = await anext(session.settled())
        crowd_out(session, "c")
        for event in whole_call("a", '{"x": 2}'):  # that refused call, re-delivered
            session.apply(event)
        assert session.tracker.get("a").to_dict()["error"] == taken("a")  # type: ignore[union-attr]
        rest = await drain(session)
    assert (first.status, refused.status, refused.error.to_dict()) == (  # type: ignore[union-attr]
        "success",
        "error",
        taken("a"),
    )
    assert rest == []


@run_async
async def test_refused_calls_are_remembered_while_the_executor_remembers_their_ids() -> None:
    """Refusals of ``a``, ``b``, ``a`` again (other arguments) and ``c``, with room for two
    calls: the executor then remembers ``b`` and ``c``, so an identical re-delivery of the
    refused ``b`` or ``c`` is still not reported, whichever refusal came last."""
    async with ToolCallSession({"echo": echo}, max_history=2) as session:
        for event in [*whole_call("a", '{"x": 1}'), *whole_call("b", '{"x": 1}')]:
            session.apply(event)
        await settle()
        redeliver(session, "a", '{"x": 2}')
        redeliver(session, "b", '{"x": 2}')
        redeliver(session, "a", '{"x": 3}')
        for event in whole_call("c", '{"x": 1}'):
            session.apply(event)
        await settle()  # c settles: the executor forgets a, the oldest
        redeliver(session, "c", '{"x": 2}')
        reported = [(s.tool_call_id, s.status, s.args["x"]) async for s in _now(session)]
        for call_id in ("b", "c"):  # re-delivered as refused before: recorded, not reported
            redeliver(session, call_id, '{"x": 2}')
            assert session.tracker.get(call_id).to_dict()["error"] == taken(call_id)  # type: ignore[union-attr]
        assert [(s.tool_call_id, s.args["x"]) async for s in _now(session)] == []
        redeliver(session, "a", '{"x": 3}')  # forgotten by the executor: a new call, it runs
        rest = await drain(session)
    assert reported == [
        ("a", "success", 1),
        ("b", "success", 1),
        ("a", "error", 2),
        ("b", "error", 2),
        ("a", "error", 3),
        ("c", "success", 1),
        ("c", "error", 2),
    ]
    assert [(s.tool_call_id, s.status, s.args["x"]) for s in rest] == [("a", "success", 3)]


async def _now(session: ToolCallSession) -> AsyncIterator[ExecutionView]:
    """The calls settled so far, without ending the session."""
    await settle()
    while session._ready:
        yield await anext(session.settled())


def unrunnable(reason: str, kind: str) -> dict[str, Any]:
    """The error of an ``echo`` call that never reached its tool."""
    return {
        "kind": "invalid_arguments",
        "message": f"cannot run tool 'echo': {reason}",
        "details": {"toolName": "echo", "errors": [{"loc": [], "msg": reason, "type": kind}]},
    }


@run_async
async def test_a_call_that_cannot_run_reusing_a_remembered_id_is_reported_once() -> None:
    async with ToolCallSession({"echo": echo}, max_history=1) as session:
        for event in whole_call("a", '{"x": 1}'):
            session.apply(event)
        await settle()
        for text in ("[1]", "[1]", "[2]", "{}", "{}", '{"x": ', '{"x": 2}', '{"x": 2}'):
            crowd_out(session, f"other {text}")  # the tracker forgets 'a' each time
            for event in whole_call("a", text):
                session.apply(event)
            await settle()
        reported = await drain(session)
    not_an_object = unrunnable("arguments must be a JSON object", "session")
    assert [(s.status, s.error and s.error.to_dict()) for s in reported][:4] == [
        ("success", None),
        ("error", not_an_object),  # [1], once
        ("error", not_an_object),  # [2]: another call, reported too
        ("error", taken("a")),  # {}: the id is taken
    ]
    assert [(s.error.kind, s.error.details["errors"][0]["type"]) for s in reported[4:]] == [  # type: ignore[union-attr]
        ("invalid_arguments", "json_invalid"),  # no arguments either, but another error
        ("invalid_arguments", "duplicate_id"),
    ]
    assert session.tracker.get("a").to_dict()["error"] == taken("a")  # type: ignore[union-attr]


@run_async
async def test_a_refusal_is_forgotten_with_the_call_it_was_refused_against() -> None:
    """``a`` (x=2) is refused while the executor remembers ``a`` (x=1); once the executor
    forgot that call and ``a`` (x=5) ran, ``a`` (x=2) is refused against another call."""
    async with ToolCallSession({"echo": echo}, max_history=1) as session:
        for call_id, text in (("a", '{"x": 1}'), ("a", '{"x": 2}'), ("d", '{"x": 1}')):
            crowd_out(session, f"other {call_id} {text}")
            for event in whole_call(call_id, text):
                session.apply(event)
            await settle()  # d settles: the executor forgets a (x=1)
        for text in ('{"x": 5}', '{"x": 2}'):
            crowd_out(session, f"other {text}")
            for event in whole_call("a", text):
                session.apply(event)
            await settle()
        reported = await drain(session)
    assert [(s.tool_call_id, s.status, s.args["x"]) for s in reported] == [
        ("a", "success", 1),
        ("a", "error", 2),
        ("d", "success", 1),
        ("a", "success", 5),
        ("a", "error", 2),
    ]


@run_async
async def test_a_remembered_call_redelivered_and_cut_short_ends_in_error_unreported() -> None:
    async with ToolCallSession({"echo": echo}, max_history=1) as session:
        for event in whole_call("a", '{"x": 1}'):
            session.apply(event)
        first = await anext(session.settled())
        crowd_out(session, "b")  # 'a' leaves the tracker, the executor remembers it
        session.apply(start("a", "echo"))
        session.apply(delta("a", '{"x": 1'))
        rest = await drain(session)  # finish(): the re-delivery never became ready
    assert (first.tool_call_id, first.status, rest) == ("a", "success", [])
    reason = "the stream ended before the arguments were complete"
    assert session.tracker.get("a").to_dict() == {  # type: ignore[union-attr]
        "id": "a",
        "name": "echo",
        "argsText": '{"x": 1',
        "status": "error",
        "error": unrunnable(reason, "session"),
    }


def test_a_session_read_on_another_loop_while_its_calls_run_on_an_open_loop_is_refused() -> None:
    async def hangs(x: Any) -> None:
        await asyncio.Event().wait()

    session = ToolCallSession({"hangs": hangs})
    loop = asyncio.new_event_loop()
    try:

        async def first() -> None:
            for event in whole_call("a", '{"x": 1}', "hangs"):
                session.apply(event)
            await asyncio.sleep(0)  # its tool starts

        loop.run_until_complete(first())

        async def elsewhere() -> str:
            with pytest.raises(RuntimeError) as refused:
                await asyncio.wait_for(anext(session.settled()), 5)
            return str(refused.value)

        assert asyncio.run(elsewhere()) == "ToolExecutor is in use on another event loop"
        assert session.in_flight == 1
        assert session.executor.calls[0].status == "executing"
        loop.run_until_complete(session.aclose())
    finally:
        loop.close()


# -- S6: the loop turn between batches is one turn ------------------------------------------


@pytest.mark.parametrize("source", ["list", "async generator"])
@run_async
async def test_run_yields_one_loop_turn_between_batches_of_events(source: str) -> None:
    """A task spinning on the loop counts its turns while ``run()`` applies three batches of
    events: one turn per batch, never a pause (the spinner would count thousands)."""
    events = [start("b", "echo"), *[delta("b", " ") for _ in range(3 * BATCH)]]
    turns, running = 0, True

    async def spin() -> None:
        nonlocal turns
        while running and turns < 10_000:
            turns += 1
            await asyncio.sleep(0)

    async def produce() -> AsyncIterator[dict[str, Any]]:
        for event in events:
            yield event

    async with ToolCallSession({"echo": echo}) as session:
        spinner = asyncio.create_task(spin())
        feed = events if source == "list" else produce()
        reported = [s.tool_call_id async for s in session.run(feed)]
        running = False
        await spinner
    assert reported == ["b"]  # cut short by the end of the events
    assert turns < 20


# -- R2: damaged checkpoints, odd ones --------------------------------------------------------


@run_async
async def test_damage_in_the_checkpoints_tracker_is_a_checkpoint_error_naming_the_field() -> None:
    checkpoint = await interrupted_session(Gates())
    checkpoint["tracker"]["calls"][0]["status"] = "finished"
    with pytest.raises(CheckpointError) as raised:
        ToolCallSession.resume(checkpoint, {"gate": Gates().tool, "safe": Gates().tool})
    assert raised.value.field == "tracker.calls.0.status"
    assert raised.value.reason == "Input should be 'pending', 'running', 'done' or 'error'"


@run_async
async def test_an_executing_call_whose_arguments_are_no_object_resumes_interrupted() -> None:
    """A checkpoint written by hand: a call executing with arguments ``[1]`` (a session never
    runs such a call) is reported interrupted, with no arguments, like any executing call."""
    checkpoint = await interrupted_session(Gates())
    [c3] = [call for call in checkpoint["tracker"]["calls"] if call["id"] == "c3"]
    c3.update(argsText="[1]", args=[1])
    session = ToolCallSession.resume(checkpoint, {"gate": Gates().tool, "safe": Gates().tool})
    async with session:
        reported = [await anext(session.settled()) for _ in range(2)]
    assert reported[1].to_dict() == {
        "toolCallId": "c3",
        "toolName": "gate",
        "args": {},
        "status": "error",
        "error": {
            "kind": "interrupted",
            "message": "tool 'gate' was executing when its process stopped; it was not run again",
            "details": {"toolName": "gate"},
        },
    }


# -- S1: the executor hands every settled call to the session without a failure --------------


@run_async
async def test_calls_settling_with_and_without_a_waiting_consumer_record_no_failure() -> None:
    gates = Gates()
    async with ToolCallSession({"gate": gates.tool}) as session:
        for call_id in ("a", "b", "c"):
            for event in whole_call(call_id, json.dumps({"key": call_id}), "gate"):
                session.apply(event)
        await settle()
        gates.open("a", 1)  # settles while nobody waits for a settled call
        await settle()
        settled = session.settled()
        assert (await anext(settled)).tool_call_id == "a"
        waiting = asyncio.ensure_future(anext(settled))
        await settle()
        gates.open("b", 2)  # settles while the consumer waits
        gates.open("c", 3)  # in the same loop turn: the consumer's wake-up is already due
        await settle()
        assert (await waiting).tool_call_id == "b"
        assert (await anext(settled)).tool_call_id == "c"
        await settled.aclose()
        assert session.executor.callback_errors == ()


# -- S5, R6: closing; a session's position -----------------------------------------------------


@run_async
async def test_closing_ends_every_unfinished_call_in_error_naming_its_tool() -> None:
    gates = Gates()
    session = ToolCallSession({"gate": gates.tool})
    async with session:
        for event in whole_call("running", '{"key": "k"}', "gate"):
            session.apply(event)
        session.apply(start("streaming", "gate"))
        session.apply(delta("streaming", '{"ke'))
        await settle()
    aborted = {
        "kind": "aborted",
        "message": "tool 'gate' was aborted: the session closed",
        "details": {"toolName": "gate", "reason": "the session closed"},
    }
    for call_id in ("running", "streaming"):
        assert session.tracker.get(call_id).to_dict()["error"] == aborted  # type: ignore[union-attr]
    assert gates.cancelled == ["k"]


def test_a_new_session_has_no_position_one_resumed_has_its_checkpoints() -> None:
    assert ToolCallSession({"echo": echo}).position is None
    checkpoint = ToolCallSession({"echo": echo}).checkpoint(position={"offset": 3})
    assert ToolCallSession.resume(checkpoint, {"echo": echo}).position == {"offset": 3}


@run_async
async def test_a_resumed_session_remembers_the_settled_calls_so_a_redelivery_is_not_run() -> None:
    """R6, S10: the executor of a resumed session holds every settled call of the checkpoint
    under its id and tool; the tracker forgot ``a``, so its re-delivery takes its outcome."""
    runs: list[Any] = []

    async def counted(x: Any) -> Any:
        runs.append(x)
        return x

    async with ToolCallSession({"echo": counted}, max_history=1) as session:
        for event in whole_call("a", '{"x": 1}'):
            session.apply(event)
        await anext(session.settled())
        crowd_out(session, "b")  # the tracker forgets 'a'; the executor remembers it
        checkpoint = json.loads(json.dumps(session.checkpoint()))
    resumed = ToolCallSession.resume(checkpoint, {"echo": counted})
    async with resumed:
        remembered = resumed.executor.get_call("a")
        assert remembered is not None
        assert (remembered.tool_name, dict(remembered.args), remembered.result) == (
            "echo",
            {"x": 1},
            {"x": 1},
        )
        for event in whole_call("a", '{"x": 1}'):
            resumed.apply(event)
        reported = await drain(resumed)
    assert (runs, reported) == ([{"x": 1}], [])
    assert resumed.tracker.get("a").to_dict()["result"] == {"x": 1}  # type: ignore[union-attr]
