"""Breaks found by an independent review of issue 8. Each test reproduces one; fix the code, do
not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolcalls import ExecutionView, ToolCallSession, ToolCallTracker


def stream_call(call_id: str, text: str, name: str) -> list[dict[str, Any]]:
    """A whole call as the stream sends it: start, its arguments in one delta, ready."""
    return [
        {"type": "start", "id": call_id, "name": name},
        {"type": "delta", "id": call_id, "argsTextDelta": text},
        {"type": "ready", "id": call_id},
    ]


def crowd_out(session: ToolCallSession, *ids: str) -> None:
    """Calls the stream starts and ends itself: they push older calls out of the tracker."""
    for call_id in ids:
        session.apply({"type": "start", "id": call_id, "name": "other"})
        session.apply({"type": "error", "id": call_id, "error": "cancelled upstream"})


class UnprintableError(Exception):
    """An exception whose message cannot be read (``str()`` raises), as some C extensions'
    and badly written exception classes are."""

    def __str__(self) -> str:
        raise ValueError("this exception cannot be printed")


async def raises_unprintable_async(args: dict[str, Any]) -> Any:
    raise UnprintableError


def raises_unprintable_sync(args: dict[str, Any]) -> Any:
    raise UnprintableError


async def _run_all(session: ToolCallSession, events: list[dict[str, Any]]) -> list[ExecutionView]:
    return [state async for state in session.run(events)]


@pytest.mark.parametrize("tool", [raises_unprintable_async, raises_unprintable_sync])
def test_X9_a_tool_raising_an_exception_that_cannot_be_printed_still_settles_its_call(
    tool: Any,
) -> None:
    """A tool raises an exception whose ``__str__`` fails: building the ``tool_raised`` error
    raises inside the executor's task, the call stays ``executing`` forever and ``run()``
    never ends (X9: nothing a tool raises escapes; S2: the call is reported)."""

    async def main() -> list[ExecutionView]:
        async with ToolCallSession({"t": tool}) as session:
            return await asyncio.wait_for(_run_all(session, stream_call("a", "{}", "t")), 2)

    settled = asyncio.run(main())
    assert [(s.tool_call_id, s.status) for s in settled] == [("a", "error")]
    assert settled[0].error is not None
    assert settled[0].error.kind == "tool_raised"


def _tracker_with_mixed_surrogate_halves() -> ToolCallTracker:
    """A string whose high surrogate arrives raw at the end of one fragment and whose low
    surrogate arrives as a JSON escape in the next (text split in UTF-16 code units)."""
    tracker = ToolCallTracker()
    tracker.apply({"type": "start", "id": "a", "name": "t"})
    tracker.apply({"type": "delta", "id": "a", "argsTextDelta": '{"q": "\ud83d'})
    tracker.apply({"type": "delta", "id": "a", "argsTextDelta": '\\ude00"}'})
    tracker.apply({"type": "ready", "id": "a"})
    return tracker


def test_T22_restore_accepts_the_snapshot_of_args_with_a_raw_and_an_escaped_surrogate_half() -> (
    None
):
    """Arguments hold a raw high surrogate followed by an escaped low one; ``snapshot()``
    writes them as one character, and ``restore()`` then rejects the tracker's own snapshot
    ("args does not match what argsText parses to"): defect 8 in another form."""
    snapshot = _tracker_with_mixed_surrogate_halves().snapshot()
    restored = ToolCallTracker.restore(snapshot)
    assert restored.snapshot() == snapshot


def test_T13_a_raw_high_surrogate_followed_by_an_escaped_low_one_parses_as_one_character() -> None:
    """``JSON.parse('"\\ud83d\\\\ude00"')`` (raw high half, escaped low half) gives one
    character; the tracker keeps two lone surrogates, arguments UTF-8 cannot encode."""
    call = _tracker_with_mixed_surrogate_halves().get("a")
    assert call is not None
    assert call.args == {"q": "\U0001f600"}
    call.args["q"].encode("utf-8")


async def _swallows_cancellation(args: dict[str, Any]) -> Any:
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        return "partial result"


async def _cleanup_fails_on_cancellation(args: dict[str, Any]) -> Any:
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        raise RuntimeError("cleanup failed while cancelled") from None


async def _sleeps(args: dict[str, Any]) -> Any:
    await asyncio.sleep(10)


@pytest.mark.parametrize("first", [_cleanup_fails_on_cancellation, _swallows_cancellation])
def test_S5_a_loop_ending_without_aclose_never_strands_a_queued_call(first: Any) -> None:
    """With ``max_concurrency=1`` the loop ends without ``aclose()``; the running tool does
    not end in ``CancelledError`` when cancelled (its cleanup raises, or it returns what it
    has), so the queued call starts on the dying loop and stays ``executing`` forever:
    defect 5 in another form."""
    holder: dict[str, ToolCallSession] = {}

    async def main() -> None:
        session = holder["session"] = ToolCallSession(
            {"first": first, "sleeps": _sleeps}, max_concurrency=1
        )
        for event in stream_call("a", "{}", "first") + stream_call("b", "{}", "sleeps"):
            session.apply(event)
        await asyncio.sleep(0.02)

    asyncio.run(main())
    session = holder["session"]
    assert [(c.tool_call_id, c.status) for c in session.executor.calls if not c.settled] == []
    assert session.executor.in_flight == 0
    assert session.in_flight == 0


def _counting_tool(runs: list[dict[str, Any]]) -> Any:
    async def tool(args: dict[str, Any]) -> Any:
        runs.append(dict(args))
        return args.get("n")

    return tool


def test_S2_a_new_call_reusing_a_remembered_id_with_other_arguments_is_reported() -> None:
    """The model reuses id ``a`` (as providers numbering calls per turn do) with other
    arguments after the tracker forgot the first ``a``: the new call ends in ``error`` ("id
    is taken") but is never reported, so the consumer never sends the model an answer."""
    runs: list[dict[str, Any]] = []

    async def main() -> list[ExecutionView]:
        async with ToolCallSession({"t": _counting_tool(runs)}, max_history=2) as session:
            for event in stream_call("a", '{"n": 1}', "t"):
                session.apply(event)
            await asyncio.sleep(0.01)
            crowd_out(session, "x", "y")
            assert "a" not in session.tracker
            for event in stream_call("a", '{"n": 2}', "t"):
                session.apply(event)
            await asyncio.sleep(0.01)
            call = session.tracker.get("a")
            assert call is not None
            assert call.status == "error"
            session.finish()
            return [state async for state in session.settled()]

    settled = asyncio.run(main())
    assert runs == [{"n": 1}]
    assert [(s.tool_call_id, s.status) for s in settled] == [("a", "success"), ("a", "error")]
    assert dict(settled[1].args) == {"n": 2}


def test_S2_redelivery_whose_arguments_differ_only_in_json_type_is_not_the_same_call() -> None:
    """Id ``a`` comes again with ``{"n": true}`` after ``{"n": 1}`` ran: Python says the
    arguments are equal, so the new call silently takes the old result ``1`` instead of
    ending in error as an id taken by other arguments (defect 10's equality, in the session)."""
    runs: list[dict[str, Any]] = []

    async def main() -> None:
        async with ToolCallSession({"t": _counting_tool(runs)}, max_history=2) as session:
            for event in stream_call("a", '{"n": 1}', "t"):
                session.apply(event)
            await asyncio.sleep(0.01)
            crowd_out(session, "x", "y")
            for event in stream_call("a", '{"n": true}', "t"):
                session.apply(event)
            await asyncio.sleep(0.01)
            call = session.tracker.get("a")
            assert call is not None
            assert call.args == {"n": True}
            assert call.status == "error"
            assert call.error["details"]["errors"][0]["type"] == "duplicate_id"

    asyncio.run(main())
    assert runs == [{"n": 1}]
