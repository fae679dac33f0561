"""Helpers for the executor tests: tools whose completion the test controls, and a runner.

``Gates`` hands each tool call a future keyed by the call's ``key`` argument; the test resolves
it, fails it or leaves it hanging, so a test decides exactly when and how every tool ends.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any

from toolcalls import AbortSignal, ExecutionView


def run_async(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an ``async def`` test on a fresh event loop (``asyncio.run``)."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return wrapper


async def settle(rounds: int = 6) -> None:
    """Let the loop run every ready callback a few times over."""
    for _ in range(rounds):
        await asyncio.sleep(0)


def chunk(tool_call_id: str, tool_name: str, **args: Any) -> dict[str, Any]:
    """A tool-call-ready chunk as the AI SDK sends it."""
    return {"toolCallId": tool_call_id, "toolName": tool_name, "args": args}


class Gates:
    """Futures that controlled tools await, one per ``key``; records what the tools saw."""

    def __init__(self) -> None:
        self.futures: dict[str, asyncio.Future[Any]] = {}
        self.started: list[str] = []
        self.cancelled: list[str] = []
        self.signals: dict[str, AbortSignal] = {}

    def future(self, key: str) -> asyncio.Future[Any]:
        found = self.futures.get(key)
        if found is None:
            found = self.futures[key] = asyncio.get_running_loop().create_future()
        return found

    def open(self, key: str, result: Any = None) -> None:
        """Let the tool waiting on ``key`` return ``result``."""
        self.future(key).set_result(result)

    def fail(self, key: str, exc: BaseException) -> None:
        """Make the tool waiting on ``key`` raise ``exc``."""
        self.future(key).set_exception(exc)

    async def tool(self, args: dict[str, Any], signal: AbortSignal) -> Any:
        """A tool that returns (or raises) whatever the test puts behind its gate."""
        key = args["key"]
        self.started.append(key)
        self.signals[key] = signal
        try:
            return await self.future(key)
        except asyncio.CancelledError:
            self.cancelled.append(key)
            raise

    async def stubborn(self, args: dict[str, Any], signal: AbortSignal) -> Any:
        """A tool that ignores cancellation and returns once its gate opens: a late result."""
        key = args["key"]
        self.started.append(key)
        self.signals[key] = signal
        future = self.future(key)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            self.cancelled.append(key)
            return await future


class Recorder:
    """An ``on_call_settled`` callback that keeps every view it is given."""

    def __init__(self) -> None:
        self.settled: list[ExecutionView] = []

    def __call__(self, state: ExecutionView) -> None:
        self.settled.append(state)

    @property
    def ids(self) -> list[str]:
        return [state.tool_call_id for state in self.settled]
