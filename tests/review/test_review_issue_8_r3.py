"""Breaks found by an independent review of issue 8 (round 3). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from toolcalls import AbortSignal, ExecutionView, SnapshotError, ToolCallSession

ROOT = Path(__file__).parents[2]


def stream_call(call_id: str, text: str, name: str = "echo") -> list[dict[str, Any]]:
    """A whole call as the stream sends it: start, its arguments in one delta, ready."""
    return [
        {"type": "start", "id": call_id, "name": name},
        {"type": "delta", "id": call_id, "argsTextDelta": text},
        {"type": "ready", "id": call_id},
    ]


async def _settled_now(session: ToolCallSession) -> list[ExecutionView]:
    """Finish the session and collect every call it reports."""
    session.finish()
    return [state async for state in session.settled()]


# -- a finished call pushed out of a full tracker at once ------------------------------------


def test_S2_a_call_whose_arguments_do_not_parse_is_reported_when_the_tracker_is_full() -> None:
    """With ``max_history=1`` and one call still running, a second call whose arguments do not
    parse ends in ``error`` and is evicted at once; the session then reads its record,
    gets ``None`` and ``apply`` raises ``AssertionError``: the call is never reported."""

    async def main() -> tuple[list[tuple[str, str]], BaseException | None]:
        gate = asyncio.Event()

        async def echo(x: int) -> int:
            await gate.wait()
            return x

        session = ToolCallSession({"echo": echo}, max_history=1)
        for event in stream_call("busy", '{"x": 1}'):
            session.apply(event)
        raised = None
        try:
            for event in stream_call("bad", '{"x": '):
                session.apply(event)
        except BaseException as exc:  # what escapes is the finding
            raised = exc
        gate.set()
        reported: list[tuple[str, str]] = [
            (s.tool_call_id, s.status) for s in await _settled_now(session)
        ]
        await session.aclose()
        return reported, raised

    reported, raised = asyncio.run(main())
    assert raised is None, f"apply raised {raised!r}"
    assert sorted(reported) == [("bad", "error"), ("busy", "success")]


def test_S3_a_truncated_call_is_reported_when_the_tracker_is_full() -> None:
    """With ``max_history=1`` and one call still running, an adapter ends a second call as
    truncated (``error`` of kind ``truncated``): the call is evicted at once, the session's
    ``_report_truncated`` finds no record and ``apply`` raises ``AssertionError``; the
    truncated call is never reported although S3 says it is."""

    async def main() -> tuple[list[tuple[str, str]], BaseException | None]:
        gate = asyncio.Event()

        async def echo(x: int) -> int:
            await gate.wait()
            return x

        session = ToolCallSession({"echo": echo}, max_history=1)
        for event in stream_call("busy", '{"x": 1}'):
            session.apply(event)
        raised = None
        try:
            session.apply({"type": "start", "id": "cut", "name": "echo"})
            session.apply({"type": "delta", "id": "cut", "argsTextDelta": '{"x"'})
            session.apply(
                {"type": "error", "id": "cut", "error": {"kind": "truncated", "message": "cut"}}
            )
        except BaseException as exc:  # what escapes is the finding
            raised = exc
        gate.set()
        reported: list[tuple[str, str]] = [
            (s.tool_call_id, s.status) for s in await _settled_now(session)
        ]
        await session.aclose()
        return reported, raised

    reported, raised = asyncio.run(main())
    assert raised is None, f"apply raised {raised!r}"
    assert sorted(reported) == [("busy", "success"), ("cut", "error")]


# -- re-delivery -----------------------------------------------------------------------------


def test_S10_redelivery_after_a_resume_never_runs_a_call_twice() -> None:
    """``max_history=1``: call ``a`` runs and settles; the session is checkpointed and resumed;
    ``start b`` pushes ``a`` out of the tracker; ``a`` is re-delivered. Without the resume the
    executor remembers ``a`` and nothing runs again; after it, the resumed executor only
    remembers calls the tracker had forgotten, so ``a`` runs and is reported a second time."""

    async def main() -> tuple[list[int], list[str]]:
        runs: list[int] = []

        async def echo(x: int) -> int:
            runs.append(x)
            return x

        session = ToolCallSession({"echo": echo}, max_history=1)
        for event in stream_call("a", '{"x": 1}'):
            session.apply(event)
        first = await session.settled().__anext__()  # reported: sent back to the model
        checkpoint = session.checkpoint()
        await session.aclose()
        resumed = ToolCallSession.resume(json.loads(json.dumps(checkpoint)), {"echo": echo})
        resumed.apply({"type": "start", "id": "b", "name": "echo"})
        for event in stream_call("a", '{"x": 1}'):  # re-delivered
            resumed.apply(event)
        await asyncio.sleep(0.01)
        resumed.apply({"type": "delta", "id": "b", "argsTextDelta": '{"x": 2}'})
        resumed.apply({"type": "ready", "id": "b"})
        reported = [first.tool_call_id] + [s.tool_call_id for s in await _settled_now(resumed)]
        await resumed.aclose()
        return runs, reported

    runs, reported = asyncio.run(main())
    assert runs == [1, 2]
    assert reported == ["a", "b"]


def test_S10_a_call_reusing_a_remembered_id_with_unparsable_arguments_is_reported() -> None:
    """A new call reuses an id the executor still remembers (the tracker forgot it). With other
    valid arguments it is reported in ``error`` ("the id is taken"); with arguments that do
    not parse (or are not an object) it ends in ``error`` in the tracker and is never
    reported, so the model never hears about it (S2)."""

    async def main(text: str) -> list[tuple[str, str]]:
        async def echo(x: int) -> int:
            return x

        session = ToolCallSession({"echo": echo}, max_history=2)

        async def events() -> AsyncIterator[dict[str, Any]]:
            for event in stream_call("a", '{"x": 1}'):
                yield event
            await asyncio.sleep(0.01)
            yield {"type": "start", "id": "c", "name": "echo"}  # stays pending a while
            for event in stream_call("b", '{"x": 7}'):  # 'a' leaves the tracker
                yield event
            await asyncio.sleep(0.01)
            for event in stream_call("a", text):  # the id again, other (broken) arguments
                yield event
            await asyncio.sleep(0.01)
            yield {"type": "delta", "id": "c", "argsTextDelta": '{"x": 5}'}
            yield {"type": "ready", "id": "c"}

        async with session:
            return [(s.tool_call_id, s.status) async for s in session.run(events())]

    for text in ('{"x": 2}', '{"x": ', "[1]"):
        reported = asyncio.run(main(text))
        assert reported.count(("a", "error")) == 1, (text, reported)


def test_X21_changing_a_reported_calls_to_dict_never_changes_the_executor() -> None:
    """A consumer post-processes ``settled.to_dict()`` (its own dict, it thinks) and appends to
    a nested argument list: the executor's record of the call changes with it, so a later
    genuine re-delivery of the same call is refused as "the id is taken by an earlier call
    with other arguments" and reported a second time."""

    async def main() -> list[tuple[str, str]]:
        async def echo(x: list[int]) -> int:
            return len(x)

        session = ToolCallSession({"echo": echo}, max_history=1)
        reported: list[tuple[str, str]] = []
        for event in stream_call("a", '{"x": [1]}'):
            session.apply(event)
        state = await session.settled().__anext__()
        reported.append((state.tool_call_id, state.status))
        wire = state.to_dict()
        wire["args"]["x"].append(2)  # the consumer's own copy, it thinks
        session.apply({"type": "start", "id": "b", "name": "echo"})  # 'a' leaves the tracker
        for event in stream_call("a", '{"x": [1]}'):  # re-delivered, identical
            session.apply(event)
        await asyncio.sleep(0.01)
        session.apply({"type": "delta", "id": "b", "argsTextDelta": '{"x": []}'})
        session.apply({"type": "ready", "id": "b"})
        reported += [(s.tool_call_id, s.status) for s in await _settled_now(session)]
        await session.aclose()
        return reported

    assert asyncio.run(main()) == [("a", "success"), ("b", "success")]


# -- shutdown --------------------------------------------------------------------------------


def test_X17_a_loop_ending_without_aclose_aborts_the_signal_of_a_thread_tool() -> None:
    """A plain ``def`` tool waits on its ``AbortSignal`` (``wait_sync``), as X6 suggests. The
    loop ends without ``aclose()``: the call settles as ``aborted`` but the signal is never
    aborted, so the worker thread never hears of it and ``asyncio.run`` blocks until the
    tool gives up on its own (forever for ``wait_sync()`` without a timeout)."""
    seen: list[bool] = []

    def waits(args: dict[str, Any], signal: AbortSignal) -> int:
        seen.append(signal.wait_sync(2.0))
        return 1

    async def main() -> None:
        session = ToolCallSession({"waits": waits})
        for event in stream_call("a", "{}", "waits"):
            session.apply(event)
        await asyncio.sleep(0.05)  # the thread is waiting; the program ends here

    started = time.perf_counter()
    asyncio.run(main())
    elapsed = time.perf_counter() - started
    assert seen == [True]
    assert elapsed < 1.5


def _blocks_cancellation_briefly() -> Any:
    async def slow_to_stop(args: dict[str, Any]) -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # its cleanup takes a moment
            raise

    return slow_to_stop


def test_S5_a_second_aclose_returns_only_once_every_call_is_ended() -> None:
    """Two tasks close the session (a signal handler and the ``async with`` exit, say): the
    second ``aclose()`` returns at once while the first still waits for the tool, and the
    tracker still shows the call ``running`` after ``aclose()`` returned."""

    async def main() -> str:
        session = ToolCallSession({"slow": _blocks_cancellation_briefly()})
        for event in stream_call("a", "{}", "slow"):
            session.apply(event)
        await asyncio.sleep(0)
        first = asyncio.ensure_future(session.aclose())
        await asyncio.sleep(0)
        await session.aclose()
        status = session.tracker.get("a").status  # type: ignore[union-attr]
        await first
        return status

    assert asyncio.run(main()) == "error"


def test_S5_an_aclose_cancelled_midway_can_be_finished_by_calling_it_again() -> None:
    """``aclose()`` is cancelled while it waits for a tool to stop (a timeout around the
    ``async with`` exit): calling ``aclose()`` again does nothing, and the call stays
    ``running`` in the tracker for good although the session is closed."""

    async def main() -> str:
        session = ToolCallSession({"slow": _blocks_cancellation_briefly()})
        for event in stream_call("a", "{}", "slow"):
            session.apply(event)
        await asyncio.sleep(0)
        closing = asyncio.ensure_future(session.aclose())
        await asyncio.sleep(0.01)
        closing.cancel()
        await asyncio.gather(closing, return_exceptions=True)
        await session.aclose()
        await asyncio.sleep(0.1)
        return session.tracker.get("a").status  # type: ignore[union-attr]

    assert asyncio.run(main()) == "error"


# -- checkpoints -----------------------------------------------------------------------------


def _checkpoint_with_an_error_and_a_result() -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async def echo(x: int) -> int:
            return x

        session = ToolCallSession({"echo": echo})
        for event in stream_call("a", '{"x": 1}'):
            session.apply(event)
        for event in stream_call("bad", '{"x": 1}', "nope"):
            session.apply(event)
        await asyncio.sleep(0.01)
        checkpoint = session.checkpoint()
        await session.aclose()
        copied: dict[str, Any] = json.loads(json.dumps(checkpoint))
        return copied

    return asyncio.run(main())


async def _echo(x: int) -> int:
    return x


@pytest.mark.parametrize(
    ("label", "damage"),
    [
        ("error without kind", lambda error: error.pop("kind")),
        ("details not an object", lambda error: error.update(details=[1])),
    ],
)
def test_R6_resume_refuses_a_damaged_unreported_error_with_a_snapshot_error(
    label: str, damage: Any
) -> None:
    """A stored checkpoint whose unreported ``error`` lost its ``kind`` (or whose ``details``
    is not an object) makes ``ToolCallSession.resume`` raise ``KeyError``/``TypeError``
    instead of the ``SnapshotError`` naming the field that it promises for damage."""
    checkpoint = _checkpoint_with_an_error_and_a_result()
    [failed] = [item for item in checkpoint["unreported"] if item["status"] == "error"]
    damage(failed["error"])
    with pytest.raises(SnapshotError):
        ToolCallSession.resume(checkpoint, {"echo": _echo})


@pytest.mark.parametrize("version", [True, 1.0])
def test_R2_resume_refuses_a_checkpoint_whose_version_is_not_the_integer_1(version: Any) -> None:
    """The session checkpoint's ``version`` is compared with ``!=``, so ``true`` and ``1.0``
    pass, where T22 (which R2 extends to checkpoints) says it must be the integer 1 (the
    tracker's own snapshot inside it is held to that)."""
    checkpoint = _checkpoint_with_an_error_and_a_result()
    checkpoint["version"] = version
    with pytest.raises(SnapshotError):
        ToolCallSession.resume(checkpoint, {"echo": _echo})


def test_R6_resume_refuses_a_checkpoint_listing_one_unreported_call_twice() -> None:
    """A checkpoint lists the same unreported call twice (a damaged or hand-merged file):
    ``resume`` accepts it and the call is reported twice, though the same damage in
    ``inFlight`` is refused ("listed twice")."""
    checkpoint = _checkpoint_with_an_error_and_a_result()
    checkpoint["unreported"].append(copy.deepcopy(checkpoint["unreported"][0]))
    with pytest.raises(SnapshotError):
        ToolCallSession.resume(checkpoint, {"echo": _echo})


# -- the command line, with --format / --tools ------------------------------------------------

REGISTRY = """
import math

def infinite(args):
    return math.inf

def a_set(args):
    return {1, 2}

def one(args):
    return 1

TOOLS = {"infinite": infinite, "a_set": a_set, "one": one}
"""


def _not_json(name: str) -> Any:
    pytest.fail(f"{name} is not JSON")


def _replay(tmp_path: Path, lines: list[str], *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "registry_r3.py").write_text(REGISTRY, encoding="utf-8")
    recording = tmp_path / "events.jsonl"
    recording.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "toolcalls", "replay", str(recording), *options],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("tool", ["infinite", "a_set"])
def test_L6_replay_tools_json_writes_valid_json_whatever_a_tool_returns(
    tmp_path: Path, tool: str
) -> None:
    """``toolcalls replay FILE --tools registry:TOOLS --json`` where a tool returns
    ``math.inf`` prints ``"result": Infinity`` (not JSON), and where it returns a set dies
    with a ``TypeError`` traceback; L1/L6 promise JSON lines, or one line and exit 2."""
    lines = [json.dumps(event) for event in stream_call("a", "{}", tool)]
    done = _replay(tmp_path, lines, "--tools", "registry_r3:TOOLS", "--json")
    assert "Traceback" not in done.stderr, done.stderr
    for line in done.stdout.splitlines():
        json.loads(line, parse_constant=_not_json)


@pytest.mark.parametrize("fmt", ["anthropic", "openai-chat"])
def test_L5_replay_format_reports_a_deeply_nested_line_on_one_line(
    tmp_path: Path, fmt: str
) -> None:
    """``toolcalls replay FILE --format anthropic`` with a line of 100,000 nested brackets
    crashes with a ``RecursionError`` traceback and exit 1 (the native path says "line N"
    and exits 2, as L5 asks of every bad file)."""
    done = _replay(tmp_path, ["[" * 100_000 + "]" * 100_000], "--format", fmt)
    assert done.returncode == 2, done.stderr[-300:]
    assert "Traceback" not in done.stderr
    assert "line 1" in done.stderr


def test_L6_replay_tools_json_refuses_infinity_in_the_recording(tmp_path: Path) -> None:
    """A recorded ``result`` of ``1e999`` replayed with ``--tools`` is read as ``inf`` (the
    ``--format`` path uses ``json.loads``, not the tracker's parser) and printed back as
    ``Infinity``: invalid JSON, where the native path stops with "line 4 ... out of range"."""
    lines = [json.dumps(event) for event in stream_call("a", "{}", "one")]
    lines.append('{"type": "result", "id": "a", "result": 1e999}')
    done = _replay(tmp_path, lines, "--tools", "registry_r3:TOOLS", "--json")
    for line in done.stdout.splitlines():
        json.loads(line, parse_constant=_not_json)
    assert "Traceback" not in done.stderr
