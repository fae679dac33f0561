"""The executor's stateful test, run against ``RayRunner`` on the session's local cluster.

The machine, its model (``SeedModel``), its rules and its invariants are those of
``tests/toolcalls/test_executor_stateful.py``; only what cannot cross a process boundary is
replaced. The executor its ``build`` makes gets ``runner=`` the session's ``RayRunner``. Its
tools await futures of the test's event loop; here they run on an actor pool and await a *gate*
actor holding each token's outcome, which the test sets. Tokens are unique across examples
(the gates outlive them). Because results now travel back from another process, the loop is
advanced until every call whose token was resolved has settled.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from typing import Any

import pytest
import ray

from toolcalls import AbortSignal, ToolExecutor
from toolcalls.ray import RayRunner, ray_tool

from ..toolcalls import test_executor_stateful as stateful
from ..toolcalls.test_executor_stateful import ExecutorMachine

GATES = "toolcalls-test-gates"
SETTLE_SECONDS = 60.0
_tokens = itertools.count()


@ray.remote(num_cpus=0)
class Gates:
    """Each token's outcome, set by the test and awaited by the tools."""

    def __init__(self) -> None:
        self.outcomes: dict[int, tuple[bool, Any]] = {}
        self.waiting: dict[int, asyncio.Event] = {}

    async def wait(self, token: int) -> tuple[bool, Any]:
        while token not in self.outcomes:
            event = self.waiting.setdefault(token, asyncio.Event())
            await event.wait()
        return self.outcomes.pop(token)

    async def set(self, token: int, succeed: bool, value: Any) -> None:
        self.outcomes[token] = (succeed, value)
        event = self.waiting.pop(token, None)
        if event is not None:
            event.set()


async def _outcome(token: int) -> Any:
    succeed, value = await ray.get_actor(GATES).wait.remote(token)
    if not succeed:
        raise RuntimeError(value)
    return value


POOL = {"actors": 1, "actor_concurrency": 1000, "num_cpus": 0}


@ray_tool(**POOL)
async def gate(args: dict[str, Any], signal: AbortSignal) -> Any:
    return await _outcome(args["token"])


@ray_tool(**POOL)
async def stubborn(args: dict[str, Any], signal: AbortSignal) -> Any:
    waiting = asyncio.ensure_future(_outcome(args["token"]))
    try:
        return await asyncio.shield(waiting)
    except asyncio.CancelledError:
        return await waiting


@ray_tool(**POOL)
async def typed(token: int, n: int) -> Any:
    return await _outcome(token)


class RayExecutorMachine(ExecutorMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tokens = _tokens
        self.gates = ray.get_actor(GATES)
        self.resolved: set[int] = set()

    # The parent's build() makes its executor from these: tools a worker can import.
    gate = staticmethod(gate)
    stubborn = staticmethod(stubborn)
    typed = staticmethod(typed)

    def _resolve(self, token: int, succeed: bool) -> None:
        super()._resolve(token, succeed)
        value = f"result {token}" if succeed else f"tool failed {token}"
        # Sent, not awaited: the loop must not run here (a rule resets right after resolving,
        # "before the loop runs"); the gate actor runs our calls in the order sent.
        self.gates.set.remote(token, succeed, value)
        self.resolved.add(token)

    def advance_loop(self) -> None:
        """Run the loop until every executing call whose token was resolved has settled."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            super().advance_loop()
            waiting = [
                call
                for call in self.executor.calls
                if call.status == "executing" and call.args["token"] in self.resolved
            ]
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"calls never settled on the cluster: {waiting}")
            self.loop.run_until_complete(asyncio.sleep(0.002))

    def teardown(self) -> None:
        released = [
            self.gates.set.remote(token, True, None)
            for token in self.futures
            if token not in self.resolved
        ]
        ray.get(released)
        super().teardown()


@pytest.fixture(scope="module", autouse=True)
def _on_the_cluster(ray_runner: RayRunner) -> Iterator[None]:
    """Start the gates; the parent machine's executors get ``runner=ray_runner``."""
    gates = Gates.options(name=GATES).remote()  # type: ignore[attr-defined]

    def executor(tools: Any, **options: Any) -> ToolExecutor:
        return ToolExecutor(tools, runner=ray_runner, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stateful, "ToolExecutor", executor)
        yield
    ray.kill(gates)


TestRayExecutorMachine = RayExecutorMachine.TestCase
