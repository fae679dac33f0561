"""The executor's rules (docs/spec.md, section X), each as a test named after it.

Tools here await gates the test opens (see ``executor_support``), so each test decides when a
call completes and asserts exact views.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolcalls import AbortSignal, ExecutionView, ToolAborted, ToolError, ToolExecutor

from .executor_support import Gates, Recorder, chunk, run_async, settle


def state(
    tool_call_id: str,
    tool_name: str,
    status: str,
    args: dict[str, Any] | None = None,
    result: Any = None,
    error: ToolError | None = None,
) -> ExecutionView:
    return ExecutionView(tool_call_id, tool_name, args or {}, status, result, error)  # type: ignore[arg-type]


# -- X1, X3, X6: a registered call runs its tool with its arguments -------------------------


@run_async
async def test_registered_call_runs_its_tool_with_the_args() -> None:
    seen: list[tuple[dict[str, Any], AbortSignal]] = []

    async def search(args: dict[str, Any], signal: AbortSignal) -> str:
        seen.append((args, signal))
        return f"found {args['query']}"

    async with ToolExecutor({"search": search}) as ex:
        assert ex.register_call(chunk("c1", "search", query="x")) is True
        assert await ex.wait("c1") == state(
            "c1", "search", "success", {"query": "x"}, result="found x"
        )
    assert [args for args, _ in seen] == [{"query": "x"}]
    assert isinstance(seen[0][1], AbortSignal)


# -- X2: pending -> executing -> success | error ---------------------------------------------


@run_async
async def test_call_goes_executing_then_success() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        assert ex.get_call("c1") == state("c1", "t", "executing", {"key": "a"})
        gates.open("a", 42)
        assert await ex.wait("c1") == state("c1", "t", "success", {"key": "a"}, result=42)


@run_async
async def test_call_goes_executing_then_error_when_the_tool_raises() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        gates.fail("a", RuntimeError("disk full"))
        settled = await ex.wait("c1")
    assert settled.status == "error"
    assert settled.error == ToolError(
        "tool_raised",
        "tool 't' raised RuntimeError: disk full",
        {"tool_name": "t", "exception_type": "RuntimeError", "exception_message": "disk full"},
    )


@run_async
async def test_call_waiting_for_a_slot_is_pending() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}, max_concurrency=1) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        ex.register_call(chunk("c2", "t", key="b"))
        assert [(c.tool_call_id, c.status) for c in ex.calls] == [
            ("c1", "executing"),
            ("c2", "pending"),
        ]
        gates.open("a")
        gates.open("b")
        await ex.join()


# -- X5: a call for an unregistered tool ends in error ---------------------------------------


@run_async
async def test_unregistered_tool_name_lands_in_error() -> None:
    async def search(args: dict[str, Any]) -> None: ...

    async def weather(args: dict[str, Any]) -> None: ...

    async with ToolExecutor({"weather": weather, "search": search}) as ex:
        ex.register_call(chunk("c1", "serch", query="x"))
        assert ex.get_call("c1") == state(
            "c1",
            "serch",
            "error",
            {"query": "x"},
            error=ToolError(
                "unknown_tool",
                "no tool named 'serch' is registered (available: 'search', 'weather')",
                {"tool_name": "serch", "available": ["search", "weather"]},
            ),
        )


# -- X10: on_call_settled runs exactly once per settled call ---------------------------------


@run_async
async def test_on_call_settled_fires_once_when_a_call_succeeds() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": gates.tool}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        await settle()
        assert recorder.settled == []
        gates.open("a", "ok")
        await ex.join()
        await settle()
    assert recorder.settled == [state("c1", "t", "success", {"key": "a"}, result="ok")]


@run_async
async def test_on_call_settled_fires_once_when_a_call_fails() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": gates.tool}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        gates.fail("a", ValueError("bad"))
        await ex.join()
    assert [(s.tool_call_id, s.status) for s in recorder.settled] == [("c1", "error")]


def test_on_call_settled_fires_once_when_the_tool_is_unknown() -> None:
    recorder = Recorder()
    ex = ToolExecutor({}, on_call_settled=recorder)
    ex.register_call(chunk("c1", "nope"))
    ex.register_call(chunk("c1", "nope"))
    assert recorder.ids == ["c1"]
    assert recorder.settled[0].error is not None
    assert recorder.settled[0].error.kind == "unknown_tool"


@run_async
async def test_on_call_settled_never_fires_for_a_call_still_in_flight() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": gates.tool}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        await settle()
        assert recorder.settled == []
    assert recorder.settled == []


# -- X11: bounded history, oldest settled first, never an in-flight call --------------------


@run_async
async def test_max_history_defaults_to_50() -> None:
    async def echo(args: dict[str, Any]) -> Any:
        return args["n"]

    async with ToolExecutor({"echo": echo}) as ex:
        for n in range(60):
            ex.register_call(chunk(f"c{n}", "echo", n=n))
        await ex.join()
        assert [c.tool_call_id for c in ex.calls] == [f"c{n}" for n in range(10, 60)]


@run_async
async def test_oldest_settled_calls_are_evicted_first() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}, max_history=3) as ex:
        for key in "abcd":
            ex.register_call(chunk(key, "t", key=key))
        gates.open("c")
        gates.open("b")
        gates.open("d")
        await settle()
        # c and b settled first, but b arrived first: b goes, then c stays for the history
        assert [(c.tool_call_id, c.status) for c in ex.calls] == [
            ("a", "executing"),
            ("c", "success"),
            ("d", "success"),
        ]
        gates.open("a")
        await ex.join()


@run_async
async def test_eviction_never_removes_in_flight_call() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}, max_history=2) as ex:
        for key in "abcde":
            ex.register_call(chunk(key, "t", key=key))
        assert [c.tool_call_id for c in ex.calls] == ["a", "b", "c", "d", "e"]
        gates.open("e")
        await settle()
        assert [c.tool_call_id for c in ex.calls] == ["a", "b", "c", "d"]
        for key in "abcd":
            gates.open(key)
        await ex.join()
        assert [c.tool_call_id for c in ex.calls] == ["c", "d"]


@run_async
async def test_in_flight_call_over_history_still_lands_its_result() -> None:
    """'an in-flight execution's eventual state update always has somewhere to land'"""
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}, max_history=2) as ex:
        ex.register_call(chunk("slow", "t", key="slow"))
        for n in range(5):
            ex.register_call(chunk(f"fast{n}", "t", key=f"fast{n}"))
            gates.open(f"fast{n}")
            await ex.wait(f"fast{n}")
        assert [c.tool_call_id for c in ex.calls] == ["slow", "fast4"]
        waiting = asyncio.ensure_future(ex.wait("slow"))
        gates.open("slow", "late but landed")
        assert (await waiting).result == "late but landed"
        assert [c.tool_call_id for c in ex.calls] == ["slow", "fast4"]


@run_async
async def test_max_history_zero_keeps_only_in_flight_calls() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": gates.tool}, max_history=0, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        assert [c.tool_call_id for c in ex.calls] == ["c1"]
        gates.open("a")
        await ex.join()
        assert ex.calls == []
    assert recorder.ids == ["c1"]


# -- X6, X14: a tool is (args, signal) -> result | awaitable ---------------------------------


@run_async
async def test_plain_function_tool_returns_its_result() -> None:
    def add(args: dict[str, Any], signal: AbortSignal) -> int:
        return int(args["a"] + args["b"])

    async with ToolExecutor({"add": add}) as ex:
        ex.register_call(chunk("c1", "add", a=1, b=2))
        assert (await ex.wait("c1")).result == 3


@run_async
async def test_tool_taking_only_args_is_called_without_signal() -> None:
    async def echo(args: dict[str, Any]) -> dict[str, Any]:
        return args

    async with ToolExecutor({"echo": echo}) as ex:
        ex.register_call(chunk("c1", "echo", a=1))
        assert (await ex.wait("c1")).result == {"a": 1}


@run_async
async def test_async_with_exit_aborts_running_tools() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        ex.register_call(chunk("c2", "t", key="b"))
        await settle()
    assert sorted(gates.cancelled) == ["a", "b"]
    assert [(s.aborted, s.reason) for s in gates.signals.values()] == [
        (True, "closed"),
        (True, "closed"),
    ]


# -- X12: calls, in arrival order -----------------------------------------------------------


@run_async
async def test_calls_are_in_arrival_order() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}) as ex:
        for key in "cab":
            ex.register_call(chunk(f"id-{key}", "t", key=key))
        ex.register_call(chunk("id-x", "unknown"))
        for key in "bac":
            gates.open(key)
        await ex.join()
        assert [c.tool_call_id for c in ex.calls] == ["id-c", "id-a", "id-b", "id-x"]


# -- X4: registration is idempotent by id ---------------------------------------------------


@run_async
async def test_register_call_is_idempotent() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": gates.tool}, on_call_settled=recorder) as ex:
        assert ex.register_call(chunk("c1", "t", key="a")) is True
        assert ex.register_call(chunk("c1", "t", key="a")) is False
        assert ex.register_call(chunk("c1", "other", key="z")) is False
        gates.open("a", 1)
        await ex.join()
        assert ex.register_call(chunk("c1", "t", key="a")) is False
        await settle()
        assert ex.calls == [state("c1", "t", "success", {"key": "a"}, result=1)]
    assert gates.started == ["a"]
    assert recorder.ids == ["c1"]


@run_async
async def test_redelivery_after_reconnect_is_harmless() -> None:
    """'only the first registration triggers execution. This makes re-delivery after a
    reconnect harmless.'"""
    gates = Gates()
    stream = [chunk("c1", "t", key="a"), chunk("c2", "t", key="b")]
    async with ToolExecutor({"t": gates.tool}) as ex:
        for ready in stream:
            ex.register_call(ready)
        gates.open("a", "A")
        await ex.wait("c1")
        for ready in stream:  # the reconnected stream replays everything
            ex.register_call(ready)
        gates.open("b", "B")
        await ex.join()
        assert [(c.tool_call_id, c.result) for c in ex.calls] == [("c1", "A"), ("c2", "B")]
    assert gates.started == ["a", "b"]


@run_async
async def test_register_call_after_eviction_is_a_new_call() -> None:
    async def echo(args: dict[str, Any]) -> Any:
        return args["n"]

    async with ToolExecutor({"echo": echo}, max_history=1) as ex:
        ex.register_call(chunk("c1", "echo", n=1))
        await ex.join()
        ex.register_call(chunk("c2", "echo", n=2))
        await ex.join()
        assert ex.get_call("c1") is None
        assert ex.register_call(chunk("c1", "echo", n=3)) is True
        assert (await ex.wait("c1")).result == 3


# -- X12: get_call returns one immutable view -----------------------------------------------


@run_async
async def test_get_call_returns_the_current_state_or_none() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}) as ex:
        assert ex.get_call("c1") is None
        ex.register_call(chunk("c1", "t", key="a"))
        before = ex.get_call("c1")
        gates.open("a", "done")
        await ex.join()
        assert before == state("c1", "t", "executing", {"key": "a"})
        assert ex.get_call("c1") == state("c1", "t", "success", {"key": "a"}, result="done")


@run_async
async def test_views_are_immutable() -> None:
    async with ToolExecutor({}) as ex:
        ex.register_call(chunk("c1", "nope", q="x"))
        view = ex.get_call("c1")
        assert view is not None
        with pytest.raises(AttributeError):
            view.status = "success"  # type: ignore[misc]
        with pytest.raises(TypeError):
            view.args["q"] = "y"  # type: ignore[index]


# -- X13, X16: reset aborts in-flight calls and forgets every call --------------------------


@run_async
async def test_reset_aborts_in_flight_calls_and_clears_state() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": gates.tool}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        ex.register_call(chunk("c2", "t", key="b"))
        gates.open("a")
        await ex.wait("c1")
        await settle()
        ex.reset()
        assert ex.calls == []
        assert ex.get_call("c1") is None
        assert ex.in_flight == 0
        await settle()
        assert gates.cancelled == ["b"]
        assert (gates.signals["b"].aborted, gates.signals["b"].reason) == (True, "reset")
    assert recorder.ids == ["c1"]


@run_async
async def test_late_result_of_a_reset_call_is_dropped() -> None:
    gates, recorder = Gates(), Recorder()
    async with ToolExecutor({"t": gates.stubborn}, on_call_settled=recorder) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        await settle()
        ex.reset()
        await settle()
        gates.open("a", "too late")
        await settle()
        assert ex.calls == []
        ex.register_call(chunk("c1", "t", key="b"))
        assert ex.get_call("c1") == state("c1", "t", "executing", {"key": "b"})
        gates.open("b", "fresh")
        await ex.join()
        assert ex.calls == [state("c1", "t", "success", {"key": "b"}, result="fresh")]
    assert [(s.tool_call_id, s.result) for s in recorder.settled] == [("c1", "fresh")]


@run_async
async def test_waiting_on_a_reset_call_raises_tool_aborted() -> None:
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        waiting = asyncio.ensure_future(ex.wait("c1"))
        await settle()
        ex.reset()
        with pytest.raises(ToolAborted) as raised:
            await waiting
    assert raised.value.reason == "reset"


# -- X14: leaving async with aborts every running tool --------------------------------------


@run_async
async def test_every_running_tools_signal_is_aborted_on_aclose() -> None:
    gates, recorder = Gates(), Recorder()
    ex = ToolExecutor({"t": gates.tool}, on_call_settled=recorder, max_concurrency=2)
    for key in "abc":
        ex.register_call(chunk(key, "t", key=key))
    gates.open("a", "kept")
    await ex.wait("a")
    await settle()
    waiting = asyncio.ensure_future(ex.wait("b"))
    await settle()
    await ex.aclose()
    assert ex.closed
    assert gates.cancelled == ["b", "c"]
    assert all(signal.aborted for key, signal in gates.signals.items() if key != "a")
    assert ex.calls == [state("a", "t", "success", {"key": "a"}, result="kept")]
    assert recorder.ids == ["a"]
    with pytest.raises(ToolAborted, match="closed"):
        await waiting


# -- X10, X12: a panel listing calls and logging each as it settles ------------------------


@run_async
async def test_a_settled_callback_logs_tool_name_and_status() -> None:
    lines: list[str] = []

    async def search(args: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"hits": [args["query"]]}

    async with ToolExecutor(
        {"search": search},
        on_call_settled=lambda call: lines.append(f"{call.tool_name} → {call.status}"),
    ) as ex:
        ex.register_call({"toolCallId": "t1", "toolName": "search", "args": {"query": "cats"}})
        await ex.join()
        assert [f"{c.tool_name}: {c.status}" for c in ex.calls] == ["search: success"]
    assert lines == ["search → success"]


# -- X6, X20, X21, X19: concurrency, event loops, copies, forget ----------------------------


@run_async
async def test_tools_run_concurrently() -> None:
    both = asyncio.Barrier(2)

    async def meet(args: dict[str, Any]) -> str:
        await asyncio.wait_for(both.wait(), timeout=5)
        return str(args["who"])

    async with ToolExecutor({"meet": meet}) as ex:
        ex.register_call(chunk("c1", "meet", who="x"))
        ex.register_call(chunk("c2", "meet", who="y"))
        await ex.join()
        assert [c.result for c in ex.calls] == ["x", "y"]


def test_registering_a_runnable_call_without_an_event_loop_fails_and_changes_nothing() -> None:
    ex = ToolExecutor({"t": Gates().tool})
    with pytest.raises(RuntimeError, match="needs an event loop"):
        ex.register_call(chunk("c1", "t", key="a"))
    assert (ex.calls, ex.in_flight) == ([], 0)


def test_an_executor_can_be_used_again_on_a_new_loop() -> None:
    async def echo(args: dict[str, Any]) -> Any:
        return args["n"]

    ex = ToolExecutor({"echo": echo})

    async def once(call_id: str) -> Any:
        ex.register_call(chunk(call_id, "echo", n=call_id))
        return (await ex.wait(call_id)).result

    assert asyncio.run(once("first")) == "first"
    assert asyncio.run(once("second")) == "second"


@run_async
async def test_views_and_tools_never_share_nested_arguments() -> None:
    seen: list[dict[str, Any]] = []

    async def mutate(args: dict[str, Any]) -> None:
        args["items"].append("tool")
        seen.append(args)

    sent = {"items": ["caller"]}
    async with ToolExecutor({"mutate": mutate}) as ex:
        ex.register_call({"toolCallId": "c1", "toolName": "mutate", "args": sent})
        before = ex.get_call("c1")
        sent["items"].append("caller again")
        await ex.wait("c1")
    assert before is not None
    assert before.args["items"] == ["caller"]
    assert ex.get_call("c1").args["items"] == ["caller"]  # type: ignore[union-attr]
    assert seen == [{"items": ["caller", "tool"]}]


@run_async
async def test_forget_drops_a_settled_call_so_its_id_runs_again_but_never_an_in_flight_one() -> (
    None
):
    gates = Gates()
    async with ToolExecutor({"t": gates.tool}) as ex:
        ex.register_call(chunk("c1", "t", key="a"))
        await settle()
        assert ex.forget("c1") is False
        gates.open("a", 1)
        await ex.wait("c1")
        assert ex.forget("c1") is True
        assert ex.get_call("c1") is None
        assert ex.register_call(chunk("c1", "t", key="b")) is True
        gates.open("b", 2)
        assert (await ex.wait("c1")).result == 2
