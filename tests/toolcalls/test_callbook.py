"""X22: the executor's bookkeeping is sans-I/O. ``CallBook`` runs with no event loop and no
thread; each operation returns the effects for the shell to carry out, in order."""

from __future__ import annotations

from typing import Any

import pytest

from toolcalls import ToolError
from toolcalls._execution import CallBook
from toolcalls._tools import prepare_tool


def book(max_concurrency: int | None = None, max_history: int = 50) -> CallBook:
    def echo(args: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("the book never calls a tool")

    return CallBook({"echo": prepare_tool("echo", echo)}, max_history, max_concurrency)


def kinds(effects: Any) -> list[tuple[str, str]]:
    return [(kind, call.tool_call_id) for kind, call, _reason in effects]


def test_admitting_a_call_returns_the_effect_of_running_it_and_runs_nothing() -> None:
    calls = book()
    effects = calls.admit("c1", "echo", {"q": 1}, True)
    assert kinds(effects) == [("run", "c1")]
    assert calls.calls["c1"].status == "executing"
    assert calls.admit("c1", "echo", {"q": 1}, True) is None  # X4: already tracked


def test_a_result_reported_back_settles_the_call_once() -> None:
    calls = book()
    [(_, call, _)] = calls.admit("c1", "echo", {}, True)  # type: ignore[misc]
    assert kinds(calls.succeed(call, {"ok": True})) == [("settle", "c1")]
    assert call.status == "success"
    assert calls.succeed(call, "late") == []  # X16: final states absorb
    assert calls.fail(call, ToolError.aborted("echo", "late")) == []


def test_an_unknown_tool_settles_at_once_without_a_run() -> None:
    calls = book()
    assert kinds(calls.admit("c1", "missing", {}, True)) == [("settle", "c1")]
    assert calls.calls["c1"].to_view().error.kind == "unknown_tool"  # type: ignore[union-attr]


def test_a_freed_slot_starts_the_next_waiting_call_before_settling() -> None:
    calls = book(max_concurrency=1)
    [(_, first, _)] = calls.admit("c1", "echo", {}, True)  # type: ignore[misc]
    assert calls.admit("c2", "echo", {}, True) == []  # X18: waits in pending
    assert calls.calls["c2"].status == "pending"
    assert kinds(calls.succeed(first, 1)) == [("run", "c2"), ("settle", "c1")]


def test_clearing_drops_in_flight_calls_and_never_settles_them() -> None:
    calls = book()
    [(_, call, _)] = calls.admit("c1", "echo", {}, True)  # type: ignore[misc]
    assert kinds(calls.clear("reset")) == [("drop", "c1")]
    assert calls.calls == {}
    assert calls.succeed(call, "late") == []


@pytest.mark.parametrize("max_history", [0, 1])
def test_eviction_happens_in_the_book(max_history: int) -> None:
    calls = book(max_history=max_history)
    for call_id in ("a", "b", "c"):
        [(_, call, _)] = calls.admit(call_id, "echo", {}, True)  # type: ignore[misc]
        calls.succeed(call, call_id)
    assert len(calls.calls) == max_history
