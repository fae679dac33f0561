"""Tools: how they are called (async on the loop, plain in threads), the abort signal, declared
parameters and argument validation, per-tool timeouts and the concurrency limit."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
import typing
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from toolcalls import AbortSignal, InvalidTool, Tool, ToolAborted, ToolError, ToolExecutor

from .executor_support import Gates, Recorder, chunk, run_async, settle

# -- X6: where tools run --------------------------------------------------------------------------


@run_async
async def test_async_tool_runs_on_the_event_loop_thread() -> None:
    async def where(args: dict[str, Any]) -> int:
        return threading.get_ident()

    async with ToolExecutor({"where": where}) as ex:
        ex.register_call(chunk("c1", "where"))
        assert (await ex.wait("c1")).result == threading.get_ident()


@run_async
async def test_plain_tool_runs_in_a_worker_thread() -> None:
    def where(args: dict[str, Any]) -> int:
        return threading.get_ident()

    async with ToolExecutor({"where": where}) as ex:
        ex.register_call(chunk("c1", "where"))
        assert (await ex.wait("c1")).result != threading.get_ident()


@run_async
async def test_blocking_plain_tool_never_blocks_the_loop() -> None:
    released = threading.Event()

    def blocking(args: dict[str, Any]) -> bool:
        return released.wait(timeout=5)

    async def quick(args: dict[str, Any]) -> str:
        return "quick"

    async with ToolExecutor({"blocking": blocking, "quick": quick}) as ex:
        ex.register_call(chunk("slow", "blocking"))
        ex.register_call(chunk("fast", "quick"))
        assert (await ex.wait("fast")).result == "quick"
        assert ex.get_call("slow") is not None
        assert ex.get_call("slow").status == "executing"  # type: ignore[union-attr]
        released.set()
        assert (await ex.wait("slow")).result is True


@run_async
async def test_plain_tool_returning_an_awaitable_has_it_awaited_on_the_loop() -> None:
    async def later(value: int) -> int:
        await asyncio.sleep(0)
        return value * 2

    async with ToolExecutor({"wrapped": lambda args: later(args["v"])}) as ex:
        ex.register_call(chunk("c1", "wrapped", v=21))
        assert (await ex.wait("c1")).result == 42


@run_async
async def test_callable_object_with_async_call_runs_on_the_loop() -> None:
    class Search:
        async def __call__(self, args: dict[str, Any], signal: AbortSignal) -> int:
            return threading.get_ident()

    async with ToolExecutor({"search": Search()}) as ex:
        ex.register_call(chunk("c1", "search"))
        assert (await ex.wait("c1")).result == threading.get_ident()


@run_async
async def test_context_variables_reach_plain_tools() -> None:
    import contextvars

    request: contextvars.ContextVar[str] = contextvars.ContextVar("request")
    request.set("r-1")

    async with ToolExecutor({"read": lambda args: request.get()}) as ex:
        ex.register_call(chunk("c1", "read"))
        assert (await ex.wait("c1")).result == "r-1"


# -- X6, X14: the abort signal --------------------------------------------------------------------


def test_abort_signal_starts_not_aborted() -> None:
    signal = AbortSignal()
    assert (signal.aborted, signal.reason) == (False, None)
    signal.raise_if_aborted()
    assert signal.wait_sync(0) is False
    assert repr(signal) == "<AbortSignal not aborted>"


def test_abort_signal_abort_sets_reason_once() -> None:
    signal = AbortSignal()
    signal.abort("reset")
    signal.abort("closed")
    assert (signal.aborted, signal.reason) == (True, "reset")
    assert signal.wait_sync(0) is True
    assert repr(signal) == "<AbortSignal aborted: 'reset'>"
    with pytest.raises(ToolAborted, match="tool call aborted: reset") as raised:
        signal.raise_if_aborted()
    assert raised.value.reason == "reset"


def test_abort_signal_callbacks_run_on_abort_or_at_once() -> None:
    signal, seen = AbortSignal(), []
    signal.add_callback(lambda s: seen.append(("before", s.reason)))
    signal.abort("timeout")
    signal.add_callback(lambda s: seen.append(("after", s.reason)))
    assert seen == [("before", "timeout"), ("after", "timeout")]


def test_abort_signal_callback_that_raises_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    signal, seen = AbortSignal(), []

    def broken(_: AbortSignal) -> None:
        raise RuntimeError("broken callback")

    signal.add_callback(broken)
    signal.add_callback(lambda s: seen.append(s.reason))
    signal.abort("x")
    assert seen == ["x"]
    assert [r.message for r in caplog.records] == ["an AbortSignal callback raised"]


def test_abort_signal_wakes_a_blocked_thread() -> None:
    signal, woke = AbortSignal(), []
    thread = threading.Thread(target=lambda: woke.append(signal.wait_sync(5)))
    thread.start()
    time.sleep(0.01)
    signal.abort("stop")
    thread.join(5)
    assert woke == [True]


@run_async
async def test_abort_signal_wait_returns_the_reason() -> None:
    signal = AbortSignal()
    waiting = asyncio.ensure_future(signal.wait())
    await settle()
    assert not waiting.done()
    signal.abort("reset")
    assert await waiting == "reset"
    assert await signal.wait() == "reset"


@run_async
async def test_async_tool_sees_cancellation_and_its_signal_on_abort() -> None:
    seen: list[Any] = []

    async def slow(args: dict[str, Any], signal: AbortSignal) -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append(signal.reason)
            raise

    async with ToolExecutor({"slow": slow}) as ex:
        ex.register_call(chunk("c1", "slow"))
        await settle()
        assert ex.abort("c1", "user stopped") is True
        await settle()
        assert seen == ["user stopped"]


@run_async
async def test_plain_tool_watching_its_signal_stops_on_reset() -> None:
    stopped = threading.Event()
    started = threading.Event()

    def poll(args: dict[str, Any], signal: AbortSignal) -> str:
        started.set()
        if signal.wait_sync(timeout=5):
            stopped.set()
            signal.raise_if_aborted()
        return "never aborted"

    recorder = Recorder()
    async with ToolExecutor({"poll": poll}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "poll"))
        await asyncio.to_thread(started.wait, 5)
        ex.reset()
        assert await asyncio.to_thread(stopped.wait, 5)
        await settle()
        assert ex.calls == []
    assert recorder.settled == []


# -- X7, X8, X21: declared parameters and validation ----------------------------------------------


class SearchArgs(BaseModel):
    query: str
    limit: int = 10


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Unit(TypedDict):
    name: str


class OldTypedDict(typing.TypedDict):
    name: str


@run_async
async def test_keyword_parameters_are_validated_and_passed_by_name() -> None:
    async def search(query: str, limit: int = 10) -> tuple[str, int]:
        return query, limit

    async with ToolExecutor({"search": search}) as ex:
        ex.register_call(chunk("c1", "search", query="x", limit="3"))
        ex.register_call(chunk("c2", "search", query="y"))
        await ex.join()
        assert [c.result for c in ex.calls] == [("x", 3), ("y", 10)]
        assert ex.get_call("c1").args == {"query": "x", "limit": "3"}  # type: ignore[union-attr]


@run_async
async def test_keyword_tool_gets_the_signal_by_annotation_or_name() -> None:
    async def by_type(query: str, stop: AbortSignal) -> bool:
        return isinstance(stop, AbortSignal)

    def by_name(query: str, *, signal: Any) -> bool:
        return isinstance(signal, AbortSignal)

    async with ToolExecutor({"a": by_type, "b": by_name}) as ex:
        ex.register_call(chunk("c1", "a", query="x"))
        ex.register_call(chunk("c2", "b", query="x"))
        await ex.join()
        assert [c.result for c in ex.calls] == [True, True]


@run_async
async def test_keyword_tool_with_var_keywords_receives_unknown_arguments() -> None:
    async def loose(query: str, **rest: Any) -> dict[str, Any]:
        return {"query": query, **rest}

    async with ToolExecutor({"loose": loose}) as ex:
        ex.register_call(chunk("c1", "loose", query="x", extra=1))
        assert (await ex.wait("c1")).result == {"query": "x", "extra": 1}


@run_async
async def test_pydantic_model_parameter_receives_the_validated_model() -> None:
    def search(args: SearchArgs, signal: AbortSignal) -> SearchArgs:
        return args

    async with ToolExecutor({"search": search}) as ex:
        ex.register_call(chunk("c1", "search", query="x"))
        assert (await ex.wait("c1")).result == SearchArgs(query="x", limit=10)


@run_async
async def test_dataclass_and_typed_dict_parameters_are_validated() -> None:
    async def move(to: Point) -> Point:
        return to

    async def greet(unit: Unit) -> str:
        return f"hello {unit['name']}"

    async with ToolExecutor({"move": move, "greet": greet}) as ex:
        ex.register_call(chunk("c1", "move", x="1", y=2))
        ex.register_call(chunk("c2", "greet", name="ops"))
        await ex.join()
        assert [c.result for c in ex.calls] == [Point(1, 2), "hello ops"]


@run_async
async def test_raw_args_parameter_gets_a_private_copy() -> None:
    async def mutate(args: dict[str, Any]) -> None:
        args["query"] = "changed"

    async with ToolExecutor({"mutate": mutate}) as ex:
        sent = {"query": "x"}
        ex.register_call(chunk("c1", "mutate", **sent))
        await ex.join()
        assert ex.get_call("c1").args == {"query": "x"}  # type: ignore[union-attr]


@run_async
async def test_invalid_arguments_end_in_error_with_validation_details() -> None:
    called: list[Any] = []

    async def search(query: str, limit: int = 10) -> None:
        called.append(query)

    recorder = Recorder()
    async with ToolExecutor({"search": search}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "search", limit="many", mode="fast"))
        settled = ex.get_call("c1")
    assert called == []
    assert recorder.settled == [settled]
    assert settled is not None
    assert settled.status == "error"
    assert settled.error == ToolError(
        "invalid_arguments",
        "invalid arguments for tool 'search': query: Field required; limit: Input should be a"
        " valid integer, unable to parse string as an integer; mode: Extra inputs are not"
        " permitted",
        {
            "tool_name": "search",
            "errors": [
                {"loc": ["query"], "msg": "Field required", "type": "missing"},
                {
                    "loc": ["limit"],
                    "msg": "Input should be a valid integer, unable to parse string as an integer",
                    "type": "int_parsing",
                },
                {
                    "loc": ["mode"],
                    "msg": "Extra inputs are not permitted",
                    "type": "extra_forbidden",
                },
            ],
        },
    )


@run_async
async def test_invalid_model_arguments_name_the_nested_field() -> None:
    def search(args: SearchArgs) -> None: ...

    async with ToolExecutor({"search": search}) as ex:
        ex.register_call(chunk("c1", "search", query=["not", "a", "string"]))
        error = ex.get_call("c1").error  # type: ignore[union-attr]
    assert error is not None
    assert error.details["errors"] == [
        {"loc": ["query"], "msg": "Input should be a valid string", "type": "string_type"}
    ]


class Picky(BaseModel):
    value: int

    def model_post_init(self, context: Any) -> None:
        if self.value == 13:
            raise LookupError("unlucky")


@run_async
async def test_validator_raising_a_foreign_exception_is_invalid_arguments() -> None:
    def pick(args: Picky) -> int:
        return args.value

    async with ToolExecutor({"pick": pick}) as ex:
        ex.register_call(chunk("c1", "pick", value=13))
        error = ex.get_call("c1").error  # type: ignore[union-attr]
    assert error is not None
    assert error.kind == "invalid_arguments"
    assert error.details["errors"] == [
        {"loc": [], "msg": "LookupError: unlucky", "type": "validator_raised"}
    ]


def test_tool_that_cannot_be_called_is_refused_at_construction() -> None:
    def positional_only(a: int, b: int, /) -> None: ...

    def star_args(*values: int) -> None: ...

    with pytest.raises(InvalidTool, match="'p': parameter 'a' cannot be passed by keyword"):
        ToolExecutor({"p": positional_only})
    with pytest.raises(InvalidTool, match="'s': parameter 'values' cannot be passed by keyword"):
        ToolExecutor({"s": star_args})
    with pytest.raises(InvalidTool, match="'n': 42 is not callable") as raised:
        ToolExecutor({"n": 42})  # type: ignore[dict-item]
    assert (raised.value.tool_name, raised.value.reason) == ("n", "42 is not callable")
    assert isinstance(raised.value, TypeError)


def test_tool_whose_parameters_pydantic_cannot_handle_is_refused() -> None:
    def greet(unit: OldTypedDict) -> None: ...

    with pytest.raises(InvalidTool, match="'g': pydantic cannot validate its parameters: Please"):
        ToolExecutor({"g": greet})


def test_tool_with_unresolvable_annotation_is_refused() -> None:
    def broken(query: Missing) -> None:  # type: ignore[name-defined]  # noqa: F821
        ...

    with pytest.raises(InvalidTool, match="'b': cannot read its signature"):
        ToolExecutor({"b": broken})


# -- X15, X17: timeouts ---------------------------------------------------------------------------


@run_async
async def test_async_tool_over_its_timeout_ends_in_error_and_is_cancelled() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": Tool(gates.tool, timeout=0.01)}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        settled = await ex.wait("c1")
        await settle()
    assert settled.error == ToolError(
        "timeout", "tool 't' timed out after 0.01 s", {"tool_name": "t", "timeout": 0.01}
    )
    assert gates.cancelled == ["a"]
    assert gates.signals["a"].reason == "timeout"
    assert recorder.settled == [settled]


@run_async
async def test_plain_tool_over_its_timeout_is_signalled_and_its_late_result_dropped() -> None:
    finished = threading.Event()

    def slow(args: dict[str, Any], signal: AbortSignal) -> str:
        signal.wait_sync(5)
        finished.set()
        return "late"

    recorder = Recorder()
    async with ToolExecutor({"slow": Tool(slow, timeout=0.01)}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "slow"))
        assert (await ex.wait("c1")).status == "error"
        assert await asyncio.to_thread(finished.wait, 5)
        await settle()
        assert ex.get_call("c1").error.kind == "timeout"  # type: ignore[union-attr]
    assert [s.status for s in recorder.settled] == ["error"]


@run_async
async def test_tool_finishing_within_its_timeout_succeeds() -> None:
    async def quick(args: dict[str, Any]) -> str:
        return "ok"

    async with ToolExecutor({"quick": Tool(quick, timeout=5)}) as ex:
        ex.register_call(chunk("c1", "quick"))
        assert (await ex.wait("c1")).result == "ok"


@run_async
async def test_aborting_a_call_whose_tool_has_a_timeout_settles_it_once_as_aborted() -> None:
    """X15, X19: abort() stops the tool and disarms its timeout; the call settles once."""
    gates = Gates()
    recorder = Recorder()
    async with ToolExecutor({"t": Tool(gates.tool, timeout=60)}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="k"))
        await settle()
        assert ex.abort("c1", "not needed")
        await settle()
    assert [(s.status, s.error and s.error.kind) for s in recorder.settled] == [
        ("error", "aborted")
    ]
    assert gates.cancelled == ["k"]


def test_tool_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds, not 0"):
        Tool(lambda args: None, timeout=0)


# -- X18: concurrency limit -----------------------------------------------------------------------


@run_async
async def test_calls_beyond_the_concurrency_limit_stay_pending_and_start_in_arrival_order() -> (
    None
):
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}, max_concurrency=2) as ex:
        for key in "abcde":
            ex.register_call(chunk(key, "t", key=key))
        await settle()
        assert gates.started == ["a", "b"]
        assert [c.status for c in ex.calls] == ["executing"] * 2 + ["pending"] * 3
        gates.open("b")
        await settle()
        assert gates.started == ["a", "b", "c"]
        assert ex.abort("d") is True
        gates.open("a")
        await settle()
        assert gates.started == ["a", "b", "c", "e"]
        assert [c.status for c in ex.calls] == [
            "success",
            "success",
            "executing",
            "error",
            "executing",
        ]
        gates.open("c")
        gates.open("e")
        await ex.join()


@run_async
async def test_calls_that_cannot_run_take_no_concurrency_slot() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}, max_concurrency=1) as ex:
        ex.register_call(chunk("c1", "nope"))
        ex.register_call(chunk("c2", "t", key="a"))
        assert [c.status for c in ex.calls] == ["error", "executing"]
        gates.open("a")
        await ex.join()


def test_executor_options_are_checked() -> None:
    with pytest.raises(ValueError, match="max_history must be an int >= 0, not -1"):
        ToolExecutor({}, max_history=-1)
    with pytest.raises(ValueError, match="max_concurrency must be None or an int >= 1, not 0"):
        ToolExecutor({}, max_concurrency=0)
