"""Helpers for the adapter tests: run chunks through an adapter into a tracker."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolcalls import ToolCallTracker, ToolCallView
from toolcalls.adapters import StreamAdapter


def track(adapter: StreamAdapter, chunks: Iterable[Any]) -> ToolCallTracker:
    """Feed every chunk and ``finish()``; apply the events to a fresh tracker."""
    tracker = ToolCallTracker()
    for event in adapter.feed_all(chunks):
        outcome = tracker.apply(event)
        assert outcome.applied, (event, outcome.message)
    return tracker


def calls(adapter: StreamAdapter, chunks: Iterable[Any]) -> list[ToolCallView]:
    return track(adapter, chunks).list()


def summary(adapter: StreamAdapter, chunks: Iterable[Any]) -> list[tuple[str, str, str, Any]]:
    """(id, name, status, args or error kind) of every call."""
    out = []
    for call in calls(adapter, chunks):
        detail = call.args if call.status == "running" else call.error
        if isinstance(detail, dict) and "kind" in detail and call.status == "error":
            detail = detail["kind"]
        out.append((call.id, call.name, call.status, detail))
    return out


def chat_chunk(*tool_calls: dict[str, Any], finish: str | None = None, choice: int = 0) -> dict:
    """A Chat Completions chunk whose delta carries these tool call fragments."""
    delta: dict[str, Any] = {"tool_calls": list(tool_calls)} if tool_calls else {}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": choice, "delta": delta, "finish_reason": finish}],
    }


def fragment(
    index: int, arguments: str | None = None, *, id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    """One ``tool_calls[]`` entry; ``id`` and ``name`` only when given."""
    entry: dict[str, Any] = {"index": index}
    if id is not None:
        entry["id"] = id
        entry["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    if function:
        entry["function"] = function
    return entry
