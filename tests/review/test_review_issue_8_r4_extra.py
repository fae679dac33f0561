"""Breaks found by an independent review of issue 8 (round 4, extra). Each test reproduces one;
fix the code, do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from toolcalls import AbortSignal, ToolCallSession, ToolExecutor


def _stream_call(call_id: str, text: str, name: str = "echo") -> list[dict[str, Any]]:
    return [
        {"type": "start", "id": call_id, "name": name},
        {"type": "delta", "id": call_id, "argsTextDelta": text},
        {"type": "ready", "id": call_id},
    ]


async def _reported_now(session: ToolCallSession) -> list[tuple[str, str]]:
    """The calls reported so far (without finishing the session)."""
    await asyncio.sleep(0.05)
    reported: list[tuple[str, str]] = []
    iterator = session.settled()
    while True:
        try:
            state = await asyncio.wait_for(anext(iterator), 0.1)
        except TimeoutError:
            return reported
        reported.append((state.tool_call_id, state.status))


# -- distinct refused calls whose arguments cannot run ------------------------------------------


def test_S2_distinct_unparsable_calls_reusing_a_remembered_id_are_each_reported() -> None:
    """``a`` runs and settles; then three different calls reuse the id ``a`` with arguments that
    do not parse (``{"x": ``, ``{"query": "abc", "limit": ``, ``[1, 2, 3,``): only the first is
    reported, because a refusal is matched on its error alone (whose message has no position),
    not on the arguments text (S2: every call is reported)."""

    async def echo(x: int) -> int:
        return x

    async def main() -> list[tuple[str, str]]:
        session = ToolCallSession({"echo": echo}, max_history=1)
        for event in _stream_call("a", '{"x": 1}'):
            session.apply(event)
        reported = await _reported_now(session)
        texts = ['{"x": ', '{"query": "abc", "limit": ', "[1, 2, 3,"]
        for round_, text in enumerate(texts):
            # a call still streaming pushes the finished ``a`` out of the tracker
            session.apply({"type": "start", "id": f"other-{round_}", "name": "echo"})
            for event in _stream_call("a", text):
                session.apply(event)
            reported += await _reported_now(session)
        await session.aclose()
        return reported

    reported = asyncio.run(main())
    assert reported == [("a", "success")] + [("a", "error")] * 3, (
        f"three distinct calls reusing id a, reported: {reported}"
    )


# -- the interrupted view after a resume --------------------------------------------------------


def test_X21_changing_an_interrupted_views_nested_arguments_never_changes_the_executor() -> None:
    """After a resume, the consumer normalises in place the nested arguments of the reported
    interrupted call (``view.args["items"].append(...)``): the list is shared with the
    executor's memory (a shallow copy), so the executor's record changes (X21) and an identical
    re-delivery is then refused and reported a second time (S10)."""

    async def slow(items: list[int]) -> int:
        await asyncio.sleep(0.05)
        return len(items)

    async def main() -> tuple[list[tuple[str, str]], Any, list[tuple[str, str]]]:
        session = ToolCallSession({"slow": slow}, max_history=1)
        for event in _stream_call("a", '{"items": [1, 2]}', "slow"):
            session.apply(event)
        await asyncio.sleep(0)  # a's tool starts
        saved = json.loads(json.dumps(session.checkpoint()))
        await session.aclose()
        resumed = ToolCallSession.resume(saved, {"slow": slow})
        state = await asyncio.wait_for(anext(resumed.settled()), 1)
        first: list[tuple[str, str]] = [(state.tool_call_id, state.status)]
        state.args["items"].append(3)  # the consumer normalises what it was handed
        kept = resumed.executor.get_call("a")
        args = None if kept is None else json.loads(json.dumps(dict(kept.args)))
        resumed.apply({"type": "start", "id": "b", "name": "slow"})  # the tracker forgets a
        for event in _stream_call("a", '{"items": [1, 2]}', "slow"):  # identical re-delivery
            resumed.apply(event)
        again = await _reported_now(resumed)
        await resumed.aclose()
        return first, args, again

    first, args, again = asyncio.run(main())
    assert first == [("a", "error")]
    assert args == {"items": [1, 2]}, f"the executor now holds {args}"
    assert again == [], f"an identical re-delivery was reported again: {again}"


# -- a loop closed under an executing call, before anything binds the next loop ---------------


async def _long(args: dict[str, Any], signal: AbortSignal) -> int:
    await asyncio.sleep(0.05)
    return 1


def _executor_left_on_a_closed_loop() -> ToolExecutor:
    """An executor whose call ``a`` was executing when its loop was closed."""
    executor = ToolExecutor({"t": _long}, max_concurrency=1)

    async def first() -> None:
        executor.register_call({"toolCallId": "a", "toolName": "t", "args": {}})
        await asyncio.sleep(0)  # its tool starts

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(first())
    finally:
        loop.close()
    return executor


def _on_next_loop(executor: ToolExecutor, step: Callable[[], Awaitable[Any]]) -> str:
    """Run ``step`` on a new loop with a timeout; what came of it."""

    async def main() -> str:
        try:
            result = await asyncio.wait_for(step(), 1)
        except TimeoutError:
            view = executor.get_call("a")
            return "hung (a is " + (view.status if view else "untracked") + ")"
        finally:
            with contextlib.suppress(Exception):  # only the step's outcome is checked here
                await asyncio.wait_for(executor.aclose(), 1)
        return f"done {result!r}" if result is not None else "done"

    return asyncio.run(main())


def test_X18_join_on_the_next_loop_returns_when_the_closed_loops_call_ended() -> None:
    """The host closes the executor's loop with a call executing, then, on the next loop, awaits
    ``executor.join()`` before registering anything: it hangs, since the closed loop's call is
    ended only when something binds the next loop (X18, X19)."""
    executor = _executor_left_on_a_closed_loop()
    outcome = _on_next_loop(executor, executor.join)
    assert outcome == "done", f"join() on the next loop: {outcome}"


def test_X18_wait_on_the_next_loop_returns_the_closed_loops_call_in_error() -> None:
    """As above, but the host awaits ``executor.wait("a")`` on the next loop: it hangs instead
    of returning ``a`` in ``error`` (kind ``aborted``, its event loop was closed) (X18)."""
    executor = _executor_left_on_a_closed_loop()

    async def step() -> str:
        state = await executor.wait("a")
        kind = state.error.kind if state.error is not None else None
        return f"{state.status} {kind}"

    outcome = _on_next_loop(executor, step)
    assert outcome == "done 'error aborted'", f"wait('a') on the next loop: {outcome}"


def test_X18_a_session_finished_on_the_next_loop_reports_the_closed_loops_call() -> None:
    """A session's loop is closed with a call executing; on the next loop the host calls
    ``finish()`` and reads ``settled()``: it hangs instead of reporting the call in ``error``
    and ending (X18, S4)."""
    session = ToolCallSession({"t": _long})

    async def first() -> None:
        for event in _stream_call("a", "{}", "t"):
            session.apply(event)
        await asyncio.sleep(0)  # its tool starts

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(first())
    finally:
        loop.close()

    async def step() -> list[tuple[str, str]]:
        session.finish()
        return [(state.tool_call_id, state.status) async for state in session.settled()]

    async def main() -> str:
        try:
            reported = await asyncio.wait_for(step(), 1)
        except TimeoutError:
            return "hung"
        finally:
            with contextlib.suppress(Exception):  # only the step's outcome is checked here
                await asyncio.wait_for(session.aclose(), 1)
        return f"reported {reported}"

    outcome = asyncio.run(main())
    assert outcome == "reported [('a', 'error')]", f"settled() on the next loop: {outcome}"
