"""Breaks found by an independent review of issue 8 (round 3). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from pydantic import BaseModel, field_validator

from toolcalls import (
    AbortSignal,
    ExecutionView,
    SnapshotError,
    Tool,
    ToolCallSession,
    ToolCallTracker,
)
from toolcalls.adapters import (
    ai_sdk_tool_output,
    anthropic_tool_result,
    gemini_function_response,
    openai_chat_tool_message,
)
from toolcalls.checkpoint import Checkpoints, MemoryStore

TRUNCATED = {"kind": "truncated", "message": "arguments truncated: the token limit"}


def stream_call(call_id: str, text: str, name: str = "echo") -> list[dict[str, Any]]:
    """A whole call as the stream sends it: start, its arguments in one delta, ready."""
    return [
        {"type": "start", "id": call_id, "name": name},
        {"type": "delta", "id": call_id, "argsTextDelta": text},
        {"type": "ready", "id": call_id},
    ]


def crowd_out(session: ToolCallSession, *ids: str) -> None:
    """Calls the stream starts and ends itself: they push older calls out of the tracker
    without ever reaching the executor."""
    for call_id in ids:
        session.apply({"type": "start", "id": call_id, "name": "other"})
        session.apply({"type": "error", "id": call_id, "error": "cancelled upstream"})


async def _settled_now(session: ToolCallSession) -> list[ExecutionView]:
    session.finish()
    return [state async for state in session.settled()]


async def _echo(x: Any) -> Any:
    return x


# -- calls reported twice on re-delivery -------------------------------------------------------


def test_S2_a_truncated_call_is_reported_once_when_delivered_again() -> None:
    """A provider resends a call the session already reported as unable to run, after other
    calls pushed it out of the tracker. Arguments that do not parse are remembered by the
    executor and not reported again (send ``ready`` instead of the error below: one report);
    a call cut off as ``truncated`` (A4) is reported a second time, so the model hears of the
    same call twice."""

    async def main() -> list[tuple[str, str]]:
        session = ToolCallSession({"echo": _echo}, max_history=2)
        for round_ in range(2):  # the call, then its re-delivery
            session.apply({"type": "start", "id": "a", "name": "echo"})
            session.apply({"type": "delta", "id": "a", "argsTextDelta": '{"x'})
            session.apply({"type": "error", "id": "a", "error": TRUNCATED})
            crowd_out(session, f"b{round_}", f"c{round_}")
        reported: list[tuple[str, str]] = [
            (s.tool_call_id, s.status) for s in await _settled_now(session)
        ]
        await session.aclose()
        return reported

    assert asyncio.run(main()) == [("a", "error")]


def test_S2_a_call_refused_for_a_taken_id_is_reported_once_when_delivered_again() -> None:
    """Call ``a`` (x=1) runs; later a different call reuses ``a`` (x=2) and is reported in
    ``error`` ("the id is taken"), as S10 says. When that second call is re-delivered after
    the tracker forgot it, it is reported again: one call, two reports."""

    async def main() -> list[tuple[str, str, Any]]:
        session = ToolCallSession({"echo": _echo}, max_history=2)
        for event in stream_call("a", '{"x": 1}'):
            session.apply(event)
        await asyncio.sleep(0.01)
        crowd_out(session, "b0", "c0")
        for event in stream_call("a", '{"x": 2}'):
            session.apply(event)
        crowd_out(session, "b1", "c1")
        for event in stream_call("a", '{"x": 2}'):  # the same second call, re-delivered
            session.apply(event)
        reported: list[tuple[str, str, Any]] = [
            (s.tool_call_id, s.status, s.args["x"]) for s in await _settled_now(session)
        ]
        await session.aclose()
        return reported

    assert asyncio.run(main()) == [("a", "success", 1), ("a", "error", 2)]


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("this exception cannot be printed")


class _Checked(BaseModel):
    """A tool's argument model whose validator raises what ``RAISE`` holds."""

    x: int

    @field_validator("x")
    @classmethod
    def _check(cls, value: int) -> int:
        raise _RAISE[0]


_RAISE: list[BaseException] = [ValueError("unset")]


async def _checked(args: _Checked) -> int:
    return args.x


@pytest.mark.parametrize(
    "raised", [_Unprintable(), SystemExit(3)], ids=["unprintable", "sys.exit"]
)
def test_X8_a_validator_that_raises_oddly_ends_the_call_in_error(raised: BaseException) -> None:
    """A tool's pydantic model has a validator that raises an exception whose ``str()`` fails
    (or calls ``sys.exit``): the failure escapes ``apply`` (``ValueError`` / ``SystemExit``)
    after the tracker moved the call to ``running``, the executor never tracks it, and
    ``settled()`` never ends: the call is stranded instead of ending in ``error`` (X8, X9)."""
    _RAISE[0] = raised

    async def main() -> list[tuple[str, str]]:
        session = ToolCallSession({"checked": _checked})
        for event in stream_call("a", '{"x": 1}', "checked"):
            session.apply(event)
        async with asyncio.timeout(2):
            reported: list[tuple[str, str]] = [
                (s.tool_call_id, s.status) for s in await _settled_now(session)
            ]
        await session.aclose()
        return reported

    assert asyncio.run(main()) == [("a", "error")]


def test_T20_arguments_full_of_escaped_quotes_parse_in_linear_time() -> None:
    """A model degenerates into repeating ``\\"`` inside a string it never closes, then a
    few hundred brackets (32 KB of arguments). ``ready`` spends about 13 s on the event loop
    (the nesting check's string pattern restarts at every escaped quote: quadratic), where
    ``json.loads`` of the same text fails in microseconds; 100 KB takes minutes."""
    text = '{"q": "' + '\\"' * 16_000 + "[" * 300
    tracker = ToolCallTracker()
    tracker.apply({"type": "start", "id": "a", "name": "t"})
    tracker.apply({"type": "delta", "id": "a", "argsTextDelta": text})
    started = time.perf_counter()
    tracker.apply({"type": "ready", "id": "a"})
    elapsed = time.perf_counter() - started
    call = tracker.get("a")
    assert call is not None
    assert call.status == "error"
    assert elapsed < 2.0, f"ready took {elapsed:.1f} s for {len(text):,} characters"


def test_S10_a_redelivery_cut_short_by_the_end_of_the_stream_is_not_reported_again() -> None:
    """Call ``a`` runs and is reported ``success``; the tracker forgets it; the provider
    reconnects and re-sends ``a``, but the stream ends before its ``ready`` (``finish()``).
    The executor still remembers ``a``, yet the cut-off re-delivery is now reported too, in
    ``error`` ("the stream ended before the arguments were complete"): two results for one
    call id (the same cut-off ended by an adapter as ``truncated`` is not reported)."""

    async def main() -> list[tuple[str, str]]:
        session = ToolCallSession({"echo": _echo}, max_history=2)
        for event in stream_call("a", '{"x": 1}'):
            session.apply(event)
        await asyncio.sleep(0.01)
        crowd_out(session, "b", "c")
        session.apply({"type": "start", "id": "a", "name": "echo"})
        session.apply({"type": "delta", "id": "a", "argsTextDelta": '{"x": 1'})
        reported: list[tuple[str, str]] = [
            (s.tool_call_id, s.status) for s in await _settled_now(session)
        ]
        await session.aclose()
        return reported

    assert asyncio.run(main()) == [("a", "success")]


# -- abort signals -----------------------------------------------------------------------------


def test_X6_an_abort_callback_added_after_the_abort_runs_on_the_event_loop_thread() -> None:
    """``AbortSignal.add_callback`` promises the callback "runs on the event loop thread". A
    plain ``def`` tool that times out, notices it and then adds a callback (to wake something
    on the loop) has it run at once in its worker thread instead, where touching loop
    objects is not safe."""
    threads: dict[str, str] = {}

    def slow(args: dict[str, Any], signal: AbortSignal) -> int:
        signal.wait_sync(2.0)
        signal.add_callback(lambda _: threads.setdefault("callback", _current()))
        return 1

    async def main() -> None:
        threads["loop"] = _current()
        async with ToolCallSession({"slow": Tool(slow, timeout=0.05)}) as session:
            for event in stream_call("a", "{}", "slow"):
                session.apply(event)
            for _ in range(200):  # until the callback ran, wherever it ran
                await asyncio.sleep(0.01)
                if "callback" in threads:
                    break

    asyncio.run(main())
    assert threads["callback"] == threads["loop"]


def _current() -> str:
    return threading.current_thread().name


def test_X15_a_timeout_given_as_a_bool_is_refused() -> None:
    """``Tool(fn, timeout=True)`` is taken as one second (``max_history=True`` and
    ``max_concurrency=True`` are refused as bools elsewhere); a typo'd flag silently becomes
    a timeout instead of a clear ``ValueError``."""
    with pytest.raises((ValueError, TypeError)):
        Tool(_echo, timeout=True)


def test_X15_a_thread_tool_waiting_for_a_worker_thread_does_not_time_out_before_it_runs() -> None:
    """Plain ``def`` tools run in the loop's default thread pool. While slow tools fill every
    worker, a quick tool with ``timeout=0.2`` waits for a thread; its timeout runs from the
    moment the call was registered, so it is reported "timed out after 0.2 s" and never
    runs, though X15 counts the timeout from the start of execution."""
    release = threading.Event()
    ran: list[str] = []

    def hold(args: dict[str, Any]) -> int:
        release.wait(5.0)
        return 0

    def quick(args: dict[str, Any]) -> int:
        ran.append("quick")
        return 1

    async def main() -> ExecutionView | None:
        workers = min(32, (os.cpu_count() or 1) + 4)  # ThreadPoolExecutor's default
        tools: dict[str, Any] = {"hold": hold, "quick": Tool(quick, timeout=0.2)}
        async with ToolCallSession(tools) as session:
            for index in range(workers):
                for event in stream_call(f"hold{index}", "{}", "hold"):
                    session.apply(event)
            for event in stream_call("q", "{}", "quick"):
                session.apply(event)
            await asyncio.sleep(0.5)
            release.set()
            for _ in range(200):  # until the quick call settled
                state = session.executor.get_call("q")
                if state is not None and state.settled:
                    break
                await asyncio.sleep(0.01)
            return session.executor.get_call("q")

    state = asyncio.run(main())
    assert state is not None
    assert (state.status, ran) == ("success", ["quick"]), state.error


# -- checkpoints in a store ----------------------------------------------------------------


def test_R7_resume_refuses_a_deeply_nested_stored_checkpoint_with_a_snapshot_error() -> None:
    """A store holds damaged data: 100,000 nested brackets. ``Checkpoints.resume`` promises a
    ``SnapshotError`` for a damaged checkpoint, but ``json.loads`` raises ``RecursionError``
    straight through."""

    async def main() -> None:
        store = MemoryStore()
        await store.save("stream", "[" * 100_000 + "]" * 100_000, 0)
        await Checkpoints(store, "stream").resume({"echo": _echo})

    with pytest.raises(SnapshotError):
        asyncio.run(main())


# -- closing and resuming ----------------------------------------------------------------------


async def _slow_to_stop(args: dict[str, Any]) -> None:
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        await asyncio.sleep(0.05)  # its cleanup takes a moment
        raise


def test_S9_a_session_that_reported_an_unrecordable_result_can_still_checkpoint() -> None:
    """A tool returns an object that cannot be copied (a lock): the tracker records the call
    as ``unrecordable_result`` and the consumer receives it. Since the checkpoint lists every
    settled call the executor remembers, ``checkpoint()`` now raises ``CheckpointError``
    (``remembered.0``: a lock is not JSON) for as long as the executor remembers that call
    (50 calls by default); before, it saved the tracker's error and went on."""

    async def hands_out_a_lock(args: dict[str, Any]) -> Any:
        return {"lock": threading.Lock()}

    async def main() -> None:
        async with ToolCallSession({"lock": hands_out_a_lock}) as session:
            for event in stream_call("a", "{}", "lock"):
                session.apply(event)
            await session.settled().__anext__()  # reported, sent back
            session.checkpoint()

    asyncio.run(main())


def test_R6_a_session_that_reported_one_id_for_two_calls_can_be_resumed() -> None:
    """``max_history=1``: ``a`` (x=1) settles, ``b`` pushes it out of tracker and executor,
    then a new call reuses ``a`` (x=2), which S10 allows once both forgot the id. Before the
    consumer reads them, ``checkpoint()`` lists both ``a`` calls as unreported, and
    ``resume`` refuses the session's own checkpoint ("call 'a' is listed twice")."""

    async def main() -> list[tuple[str, Any]]:
        session = ToolCallSession({"echo": _echo}, max_history=1)
        for call_id, text in (("a", '{"x": 1}'), ("b", '{"x": 3}'), ("a", '{"x": 2}')):
            for event in stream_call(call_id, text):
                session.apply(event)
            await asyncio.sleep(0.01)
        checkpoint = session.checkpoint()
        await session.aclose()
        resumed = ToolCallSession.resume(checkpoint, {"echo": _echo})
        reported = [(s.tool_call_id, s.args["x"]) for s in await _settled_now(resumed)]
        await resumed.aclose()
        return reported

    assert asyncio.run(main()) == [("a", 1), ("b", 3), ("a", 2)]


def test_R6_resuming_an_executing_call_when_history_is_full_reports_it_interrupted() -> None:
    """``max_history=1``: call ``a`` is executing and ``b`` still streams (two calls, neither
    finished). ``resume`` of that checkpoint ends ``a`` as ``interrupted``, the tracker evicts
    it at once, and ``resume`` crashes with ``AttributeError`` reading it back: the session's
    own checkpoint cannot be resumed."""

    async def main() -> list[tuple[str, str]]:
        session = ToolCallSession({"slow": _slow_to_stop}, max_history=1)
        for event in stream_call("a", "{}", "slow"):
            session.apply(event)
        session.apply({"type": "start", "id": "b", "name": "slow"})
        await asyncio.sleep(0)
        checkpoint = session.checkpoint()
        await session.aclose()
        resumed = ToolCallSession.resume(checkpoint, {"slow": _slow_to_stop})
        resumed.apply({"type": "error", "id": "b", "error": "cancelled upstream"})
        reported: list[tuple[str, str]] = [
            (s.tool_call_id, s.status) for s in await _settled_now(resumed)
        ]
        await resumed.aclose()
        return reported

    assert asyncio.run(main()) == [("a", "error")]


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_T22_a_checkpoint_holding_a_deeply_nested_result_raises_a_snapshot_error() -> None:
    """A tool returns a result nested 100,000 deep: the tracker records it as
    ``unrecordable_result`` (S9), but the settled call waits unreported, and ``checkpoint()``
    then dies with ``RecursionError`` instead of the ``SnapshotError`` it promises for a value
    that cannot be JSON (the tracker's own snapshot catches exactly this)."""

    async def deep(args: dict[str, Any]) -> Any:
        return _nested(100_000)

    async def main() -> None:
        async with ToolCallSession({"deep": deep}) as session:
            for event in stream_call("a", "{}", "deep"):
                session.apply(event)
            await asyncio.sleep(0.01)
            session.checkpoint()

    with pytest.raises(SnapshotError):
        asyncio.run(main())


# -- the command line with --tools ---------------------------------------------------------


TOOLS_OPTION = ("--tools", "registry_r3_more:TOOLS")


def test_L6_replay_tools_json_writes_valid_json_when_stdout_is_not_utf8(tmp_path: Path) -> None:
    """``toolcalls replay FILE --tools reg:TOOLS --json`` with ``PYTHONIOENCODING=ascii`` (a
    Windows console, a non-UTF-8 file): the provider path dumps with ``ensure_ascii=False``
    and the stream's ``backslashreplace`` writes ``\\xe9`` and ``\\U0001f600``, which are not
    JSON escapes (the native path was fixed for exactly this)."""
    (tmp_path / "registry_r3_more.py").write_text(
        "def echo(args):\n    return args\n\nTOOLS = {'echo': echo}\n", encoding="utf-8"
    )
    events = stream_call("a", json.dumps({"q": "\u00e9\U0001f600"}, ensure_ascii=False))
    recording = tmp_path / "events.jsonl"
    recording.write_text("".join(json.dumps(event) + "\n" for event in events), "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolcalls", "replay", str(recording), "--json", *TOOLS_OPTION],
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.decode("ascii").splitlines()
    assert json.loads(line)["result"] == {"q": "\u00e9\U0001f600"}


BAD_TOOLS_OPTION = ("--tools", "registry_r3_bad:TOOLS")


@pytest.mark.parametrize("tool", ["5", "lambda *args: 1"], ids=["not callable", "star args"])
def test_L6_replay_tools_with_an_unusable_tool_exits_2_on_one_line(
    tmp_path: Path, tool: str
) -> None:
    """``--tools reg:TOOLS`` where the registry holds something the executor refuses (not
    callable, or ``*args``): ``InvalidTool`` escapes as a traceback with exit status 1, where
    L6 says an unusable registry stops the replay with one line and exit status 2."""
    (tmp_path / "registry_r3_bad.py").write_text(f"TOOLS = {{'t': {tool}}}\n", encoding="utf-8")
    recording = tmp_path / "events.jsonl"
    recording.write_text(json.dumps({"type": "start", "id": "a", "name": "t"}) + "\n", "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolcalls", "replay", str(recording), *BAD_TOOLS_OPTION],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr[-400:]
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# -- results back to the provider ------------------------------------------------------------


@pytest.mark.parametrize(
    "result", [float("nan"), float("inf"), 10**5000], ids=["nan", "infinity", "huge int"]
)
@pytest.mark.parametrize("build", [ai_sdk_tool_output, gemini_function_response])
def test_A7_a_result_builder_always_returns_json(result: Any, build: Any) -> None:
    """A tool returns ``float("nan")`` (the mean of nothing), ``inf`` or a 5,000-digit integer.
    The builders promise "It is always JSON", but hand back ``nan``/``inf`` (which the SDK
    writes as ``NaN``, invalid JSON for the client or the API) or raise ``ValueError`` (an
    integer too long for ``str``) instead of writing it some JSON way."""
    settled = ExecutionView("a", "t", MappingProxyType({}), "success", result, None)
    json.dumps(build(settled), allow_nan=False)


@pytest.mark.parametrize("ending", [{"type": "result"}, {"type": "error"}], ids=["done", "error"])
@pytest.mark.parametrize(
    "build",
    [
        openai_chat_tool_message,
        anthropic_tool_result,
        gemini_function_response,
        ai_sdk_tool_output,
    ],
)
def test_A7_a_finished_call_without_a_value_never_sends_the_unset_sentinel(
    ending: dict[str, Any], build: Any
) -> None:
    """T26 lets a ``result`` (or ``error``) event leave its value out; the finished
    ``ToolCallView`` then holds ``UNSET``. The builders turn that internal sentinel into the
    text ``"UNSET"`` (``content: '"UNSET"'``, ``{"error": "UNSET"}``) and send it to the
    model as the tool's answer."""
    tracker = ToolCallTracker()
    for event in stream_call("a", "{}"):
        tracker.apply(event)
    tracker.apply({**ending, "id": "a"})
    call = tracker.get("a")
    assert call is not None
    assert "UNSET" not in json.dumps(build(call))
