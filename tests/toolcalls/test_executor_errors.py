"""X9, X10, X16, X20: errors are structured and readable; callbacks that raise never break
the executor; late completions of aborted calls are dropped; malformed chunks are refused
without side effects."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar

import pytest

from toolcalls import (
    AbortSignal,
    CallbackFailure,
    ExecutionView,
    ExecutorClosed,
    InvalidToolCall,
    ToolAborted,
    ToolCallReadyChunk,
    ToolCallsError,
    ToolError,
    ToolExecutor,
)

from .executor_support import Gates, Recorder, chunk, run_async, settle


class QuotaExceeded(Exception):
    """A tool's own exception type, outside builtins."""


# -- X9, X12: ToolError and ExecutionView ---------------------------------------------------------


def test_every_error_kind_has_a_readable_message_and_json_details() -> None:
    errors = [
        ToolError.unknown_tool("serch", ["search", "fetch"]),
        ToolError.invalid_arguments(
            "search", [{"loc": ["q"], "msg": "Field required", "type": "missing"}]
        ),
        ToolError.tool_raised("search", QuotaExceeded("100 calls per minute")),
        ToolError.timeout("search", 2.5),
        ToolError.aborted("search", "user stopped"),
    ]
    assert [(e.kind, str(e)) for e in errors] == [
        ("unknown_tool", "no tool named 'serch' is registered (available: 'fetch', 'search')"),
        ("invalid_arguments", "invalid arguments for tool 'search': q: Field required"),
        (
            "tool_raised",
            "tool 'search' raised tests.toolcalls.test_executor_errors.QuotaExceeded:"
            " 100 calls per minute",
        ),
        ("timeout", "tool 'search' timed out after 2.5 s"),
        ("aborted", "tool 'search' was aborted: user stopped"),
    ]
    assert [e.to_dict()["details"] for e in errors] == [
        {"toolName": "serch", "available": ["fetch", "search"]},
        {
            "toolName": "search",
            "errors": [{"loc": ["q"], "msg": "Field required", "type": "missing"}],
        },
        {
            "toolName": "search",
            "exceptionType": "tests.toolcalls.test_executor_errors.QuotaExceeded",
            "exceptionMessage": "100 calls per minute",
        },
        {"toolName": "search", "timeout": 2.5},
        {"toolName": "search", "reason": "user stopped"},
    ]
    for error in errors:
        assert json.loads(json.dumps(error.to_dict())) == error.to_dict()


def test_unknown_tool_with_an_empty_registry_says_none_are_available() -> None:
    assert (
        str(ToolError.unknown_tool("x", [])) == "no tool named 'x' is registered (available: none)"
    )


def test_tool_raised_keeps_the_exception_for_logging_but_compares_by_value() -> None:
    first, second = ValueError("bad"), ValueError("bad")
    assert ToolError.tool_raised("t", first).exception is first
    assert ToolError.tool_raised("t", first) == ToolError.tool_raised("t", second)
    assert str(ToolError.tool_raised("t", KeyError())) == "tool 't' raised KeyError"


def test_call_state_to_dict_is_the_wire_shape() -> None:
    ok = ExecutionView("c1", "search", {"q": "x"}, "success", None)
    failed = ExecutionView("c2", "s", {}, "error", error=ToolError.timeout("s", 1))
    running = ExecutionView("c3", "s", {}, "executing")
    assert ok.to_dict() == {
        "toolCallId": "c1",
        "toolName": "search",
        "args": {"q": "x"},
        "status": "success",
        "result": None,
    }
    assert failed.to_dict() == {
        "toolCallId": "c2",
        "toolName": "s",
        "args": {},
        "status": "error",
        "error": {
            "kind": "timeout",
            "message": "tool 's' timed out after 1 s",
            "details": {"toolName": "s", "timeout": 1},
        },
    }
    assert running.to_dict() == {
        "toolCallId": "c3",
        "toolName": "s",
        "args": {},
        "status": "executing",
    }
    assert (ok.settled, failed.settled, running.settled) == (True, True, False)


@run_async
async def test_tool_raising_ends_in_error_with_exception_type_and_message() -> None:
    async def quota(args: dict[str, Any]) -> None:
        raise QuotaExceeded("100 calls per minute")

    async with ToolExecutor({"quota": quota}) as ex:
        ex.register_call(chunk("c1", "quota"))
        settled = await ex.wait("c1")
    assert settled.error == ToolError.tool_raised("quota", QuotaExceeded("100 calls per minute"))
    assert settled.error is not None
    assert isinstance(settled.error.exception, QuotaExceeded)


@run_async
async def test_tool_raising_tool_aborted_ends_in_error_of_kind_aborted() -> None:
    def gives_up(args: dict[str, Any], signal: AbortSignal) -> None:
        raise ToolAborted("upstream closed")

    async def cancels_itself(args: dict[str, Any]) -> None:
        raise asyncio.CancelledError

    async with ToolExecutor({"gives_up": gives_up, "cancels": cancels_itself}) as ex:
        ex.register_call(chunk("c1", "gives_up"))
        ex.register_call(chunk("c2", "cancels"))
        await ex.join()
        assert [c.error for c in ex.calls] == [
            ToolError.aborted("gives_up", "upstream closed"),
            ToolError.aborted("cancels", "cancelled"),
        ]


# -- X19, X16: abort one call; late completions are dropped ---------------------------------------


@run_async
async def test_abort_settles_an_in_flight_call_in_error() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": gates.tool}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        await settle()
        assert ex.abort("c1", "user stopped") is True
        assert ex.abort("c1") is False
        assert ex.abort("missing") is False
        await settle()
        assert gates.cancelled == ["a"]
    assert recorder.settled == [
        ExecutionView(
            "c1", "t", {"key": "a"}, "error", error=ToolError.aborted("t", "user stopped")
        )
    ]


@run_async
async def test_late_completion_of_an_aborted_call_is_dropped() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": gates.stubborn}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        await settle()
        ex.abort("c1")
        await settle()
        gates.open("a", "too late")
        await settle()
        assert ex.get_call("c1").error == ToolError.aborted("t", "aborted")  # type: ignore[union-attr]
    assert recorder.ids == ["c1"]


@run_async
async def test_late_completion_after_a_timeout_is_dropped() -> None:
    from toolcalls import Tool

    gates, recorder = Gates(), Recorder()
    async with ToolExecutor(
        {"t": Tool(gates.stubborn, timeout=0.01)}, on_call_settled=recorder
    ) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        await ex.wait("c1")
        gates.open("a", "too late")
        await settle()
        assert ex.get_call("c1").status == "error"  # type: ignore[union-attr]
    assert recorder.ids == ["c1"]


# -- X10: on_call_settled that raises -------------------------------------------------------------


@run_async
async def test_callback_that_raises_is_logged_kept_and_never_breaks_the_executor(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gates, calls = Gates(), []

    def flaky(state: ExecutionView) -> None:
        calls.append(state.tool_call_id)
        if state.tool_call_id == "c1":
            raise RuntimeError("callback bug")

    caplog.set_level(logging.ERROR, logger="toolcalls")
    async with ToolExecutor({"t": gates.tool}, on_call_settled=flaky) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        ex.register_call(chunk("c2", "t", key="b"))
        gates.open("a", 1)
        gates.open("b", 2)
        await ex.join()
        assert [(c.tool_call_id, c.status) for c in ex.calls] == [
            ("c1", "success"),
            ("c2", "success"),
        ]
        assert calls == ["c1", "c2"]
        [failure] = ex.callback_errors
    assert isinstance(failure, CallbackFailure)
    assert failure.call == ExecutionView("c1", "t", {"key": "a"}, "success", 1)
    assert str(failure.exception) == "callback bug"
    assert [(r.name, r.message) for r in caplog.records] == [
        ("toolcalls", "on_call_settled raised for tool call 'c1' (success)")
    ]


def test_callback_raising_for_a_call_that_cannot_run_does_not_escape_register_call() -> None:
    def broken(state: ExecutionView) -> None:
        raise RuntimeError("nope")

    ex = ToolExecutor({}, on_call_settled=broken)
    assert ex.register_call(chunk("c1", "missing")) is True
    assert [f.call.tool_call_id for f in ex.callback_errors] == ["c1"]


@run_async
async def test_async_callback_is_awaited_and_its_failure_reported() -> None:
    sent: list[str] = []

    async def send_back(state: ExecutionView) -> None:
        await asyncio.sleep(0)
        if state.tool_call_id == "bad":
            raise ConnectionError("upstream gone")
        sent.append(state.tool_call_id)

    async def echo(args: dict[str, Any]) -> None: ...

    async with ToolExecutor({"echo": echo}, on_call_settled=send_back) as ex:
        ex.register_call(chunk("good", "echo"))
        ex.register_call(chunk("bad", "echo"))
        await ex.join()
    assert sent == ["good"]
    assert [(f.call.tool_call_id, type(f.exception)) for f in ex.callback_errors] == [
        ("bad", ConnectionError)
    ]


@run_async
async def test_callback_may_register_and_reset_reentrantly() -> None:
    seen: list[tuple[str, str]] = []
    ex: ToolExecutor

    def chain(state: ExecutionView) -> None:
        seen.append((state.tool_call_id, state.status))
        if state.tool_call_id == "first":
            ex.register_call(chunk("second", "echo"))
        elif state.tool_call_id == "second":
            ex.reset()

    async def echo(args: dict[str, Any]) -> None: ...

    async with ToolExecutor({"echo": echo}, on_call_settled=chain) as ex:
        ex.register_call(chunk("first", "echo"))
        await ex.join()
        await ex.join()
        assert ex.calls == []
    assert seen == [("first", "success"), ("second", "success")]


# -- X19, X14: wait, join, close ------------------------------------------------------------------


@run_async
async def test_wait_for_an_unknown_id_raises_key_error() -> None:
    async with ToolExecutor({}) as ex:
        with pytest.raises(KeyError, match="c9"):
            await ex.wait("c9")


@run_async
async def test_wait_returns_at_once_for_a_settled_call_and_for_every_waiter() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        first = asyncio.ensure_future(ex.wait("c1"))
        second = asyncio.ensure_future(ex.wait("c1"))
        await settle()
        first.cancel()
        gates.open("a", "x")
        assert (await second).result == "x"
        assert (await ex.wait("c1")).result == "x"


@run_async
async def test_join_returns_once_nothing_is_in_flight() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}) as ex:
        await ex.join()
        ex.register_call(chunk("c1", "t", key="a"))
        joined = asyncio.ensure_future(ex.join())
        await settle()
        assert not joined.done()
        assert ex.in_flight == 1
        gates.open("a")
        await joined
        assert ex.in_flight == 0


@run_async
async def test_register_call_after_aclose_raises_executor_closed() -> None:
    ex = ToolExecutor({})
    await ex.aclose()
    await ex.aclose()
    with pytest.raises(ExecutorClosed, match="cannot register call 'c1': the executor is closed"):
        ex.register_call(chunk("c1", "t"))
    assert ex.calls == []
    assert repr(ex) == "<ToolExecutor tools=[] calls=0 in_flight=0 closed>"


# -- X3, X20: chunks ------------------------------------------------------------------------------


@run_async
async def test_chunk_is_accepted_in_camel_case_snake_case_and_as_a_model() -> None:
    async def echo(args: dict[str, Any]) -> dict[str, Any]:
        return args

    class Snapshot:
        tool_call_id = "c4"
        tool_name = "echo"
        args: ClassVar[dict[str, str]] = {"via": "attributes"}

    async with ToolExecutor({"echo": echo}) as ex:
        ex.register_call({"toolCallId": "c1", "toolName": "echo", "args": {"via": "camel"}})
        ex.register_call({"tool_call_id": "c2", "tool_name": "echo", "args": {"via": "snake"}})
        ex.register_call(
            ToolCallReadyChunk(toolCallId="c3", toolName="echo", args={"via": "model"})
        )
        ex.register_call(Snapshot())
        ex.register_call({"toolCallId": "c5", "toolName": "echo"})
        await ex.join()
        assert [(c.tool_call_id, c.result) for c in ex.calls] == [
            ("c1", {"via": "camel"}),
            ("c2", {"via": "snake"}),
            ("c3", {"via": "model"}),
            ("c4", {"via": "attributes"}),
            ("c5", {}),
        ]


def test_ready_chunk_model_validates_by_alias_and_by_name() -> None:
    by_alias = ToolCallReadyChunk.model_validate({"toolCallId": "c1", "toolName": "t"})
    by_name = ToolCallReadyChunk.model_validate({"tool_call_id": "c1", "tool_name": "t"})
    assert by_alias == by_name
    assert by_alias.args == {}


@pytest.mark.parametrize(
    ("bad", "field", "reason"),
    [
        ({"toolName": "t"}, "toolCallId", "missing"),
        ({"toolCallId": "", "toolName": "t"}, "toolCallId", "must not be empty"),
        ({"toolCallId": 7, "toolName": "t"}, "toolCallId", "must be a string, got int"),
        (
            {"toolCallId": 7, "toolName": "t", "args": {}},
            "toolCallId",
            "must be a string, got int",
        ),
        ({"toolCallId": "c1", "toolName": 5, "args": {}}, "toolName", "must be a string, got int"),
        ({"toolCallId": "c1"}, "toolName", "missing"),
        ({"toolCallId": "c1", "toolName": None}, "toolName", "must be a string, got NoneType"),
        ({"toolCallId": "c1", "toolName": ""}, "toolName", "must not be empty"),
        (
            {"toolCallId": "c1", "toolName": "t", "args": "{}"},
            "args",
            "must be a mapping, got str",
        ),
        (
            {"toolCallId": "c1", "toolName": "t", "args": None},
            "args",
            "must be a mapping, got NoneType",
        ),
        (["c1", "t"], "chunk", "expected a mapping or a ToolCallReadyChunk, got list"),
        (
            {"toolCallId": "c1", "toolName": "t", "args": {1: "x"}},
            "args",
            "keys must be strings, got int",
        ),
    ],
)
def test_malformed_chunk_raises_invalid_tool_call_and_changes_nothing(
    bad: Any, field: str, reason: str
) -> None:
    recorder = Recorder()
    ex = ToolExecutor({"t": lambda args: None}, on_call_settled=recorder)
    with pytest.raises(InvalidToolCall) as raised:
        ex.register_call(bad)
    assert (raised.value.field, raised.value.reason) == (field, reason)
    assert str(raised.value) == f"invalid tool call chunk: {field}: {reason}"
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, ToolCallsError)
    assert (ex.calls, recorder.settled, ex.in_flight) == ([], [], 0)
