"""RayRunner's rules, each on the session's local cluster: results and errors come back as data,
every call settles exactly once, aborts reach the tool inside the worker."""

# Rules checked here (docs/spec.md): R4, R5.

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from toolcalls import AbortSignal, ExecutionView, InvalidTool, Tool, ToolCallSession, ToolExecutor
from toolcalls.ray import RayOptions, RayRunner, ray_tool

pytestmark = pytest.mark.usefixtures("ray_cluster")


def add(a: int, b: int) -> int:
    return a + b


async def add_async(a: int, b: int) -> int:
    await asyncio.sleep(0)
    return a + b


def pid() -> int:
    return os.getpid()


def raises(message: str) -> None:
    raise ValueError(message)


def dies() -> None:
    os._exit(3)


def lock() -> Any:
    return threading.Lock()


def watches_its_signal(path: str, signal: AbortSignal) -> str:
    """A cooperative def tool: records that it started, then what its signal said."""
    Path(path).write_text("started")
    aborted = signal.wait_sync(30)
    Path(path).write_text(f"aborted={aborted} reason={signal.reason}")
    return "done"


def ignores_its_signal(path: str) -> None:
    """A tool that never looks at its signal: only killing its worker stops it."""
    Path(path).write_text(str(os.getpid()))
    time.sleep(60)


async def awaits_cancellation(path: str, signal: AbortSignal) -> str:
    """An async tool: records that it started, then how its cancellation reached it."""
    Path(path).write_text("started")
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        Path(path).write_text(f"cancelled aborted={signal.aborted} reason={signal.reason}")
        raise
    return "done"


def resources_and_environment() -> tuple[dict[str, float], str | None]:
    import ray

    assigned = ray.get_runtime_context().get_assigned_resources()
    return assigned, os.environ.get("TOOLCALLS_PROBE")


@ray_tool(actors=2, num_cpus=0)
def pooled_pid() -> int:
    return os.getpid()


@ray_tool(actors=1, actor_concurrency=8, num_cpus=0)
async def pooled_async(a: int) -> int:
    await asyncio.sleep(0.05)
    return a * 3


def chunk(call_id: str, tool: str, **args: Any) -> dict[str, Any]:
    return {"toolCallId": call_id, "toolName": tool, "args": args}


async def run_calls(
    runner: RayRunner, tools: dict[str, Any], calls: list[dict[str, Any]]
) -> tuple[list[ExecutionView], list[ExecutionView]]:
    log: list[ExecutionView] = []
    async with ToolExecutor(tools, runner=runner, on_call_settled=log.append) as executor:
        for call in calls:
            executor.register_call(call)
        await asyncio.wait_for(executor.join(), 60)
        return executor.calls, log


async def wait_for_file(path: Path, prefix: str, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().startswith(prefix):
            return path.read_text()
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never started with {prefix!r}")


def test_results_come_back_from_tasks_and_run_in_other_processes(ray_runner: RayRunner) -> None:
    tools = {"add": add, "add_async": add_async, "pid": pid}
    calls = [chunk("a", "add", a=1, b=2), chunk("b", "add_async", a=2, b=3), chunk("p", "pid")]
    states, log = asyncio.run(run_calls(ray_runner, tools, calls))
    assert [(s.status, s.result) for s in states[:2]] == [("success", 3), ("success", 5)]
    assert states[2].status == "success"
    assert states[2].result != os.getpid()
    assert sorted(s.tool_call_id for s in log) == ["a", "b", "p"]


def test_a_tool_exception_is_tool_raised_with_its_type_and_message(
    ray_runner: RayRunner,
) -> None:
    states, _ = asyncio.run(run_calls(ray_runner, {"r": raises}, [chunk("c", "r", message="no")]))
    error = states[0].error
    assert error is not None
    assert error.kind == "tool_raised"
    assert error.details["exception_type"] == "ValueError"
    assert error.details["exception_message"] == "no"
    assert isinstance(error.exception, ValueError)


def test_a_worker_that_dies_mid_tool_settles_the_call_once_as_worker_died(
    ray_runner: RayRunner,
) -> None:
    async def main() -> list[ExecutionView]:
        log: list[ExecutionView] = []
        tools = {"dies": dies}
        async with ToolExecutor(tools, runner=ray_runner, on_call_settled=log.append) as ex:
            ex.register_call(chunk("d", "dies"))
            state = await asyncio.wait_for(ex.wait("d"), 60)
            assert state.error is not None
            assert state.error.kind == "worker_died"
            await asyncio.sleep(1.0)  # time for any second report to arrive: none may
        return log

    log = asyncio.run(main())
    assert [(s.tool_call_id, s.status) for s in log] == [("d", "error")]


def test_a_result_that_cannot_be_serialised_is_result_unserializable(
    ray_runner: RayRunner,
) -> None:
    states, log = asyncio.run(run_calls(ray_runner, {"lock": lock}, [chunk("l", "lock")]))
    assert states[0].error is not None
    assert states[0].error.kind == "result_unserializable"
    assert "pickle" in states[0].error.message
    assert len(log) == 1


def test_an_unreachable_cluster_settles_calls_as_cluster_unreachable() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    runner = RayRunner(address=f"127.0.0.1:{port}")
    states, log = asyncio.run(run_calls(runner, {"add": add}, [chunk("u", "add", a=1, b=1)]))
    assert states[0].error is not None
    assert states[0].error.kind == "cluster_unreachable"
    assert f"127.0.0.1:{port}" in states[0].error.message
    assert len(log) == 1


def test_invalid_arguments_are_refused_before_anything_is_submitted() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    runner = RayRunner(address=f"127.0.0.1:{port}")  # any submission would fail as unreachable
    calls = [chunk("i", "add", a="one", b=2), chunk("u", "nope")]
    states, _ = asyncio.run(run_calls(runner, {"add": add}, calls))
    assert [s.error.kind for s in states if s.error] == ["invalid_arguments", "unknown_tool"]


def test_a_tool_that_cannot_be_sent_to_a_worker_is_refused_when_the_executor_is_built(
    ray_runner: RayRunner,
) -> None:
    held = threading.Lock()

    def holds_a_lock() -> bool:
        return held.locked()

    with pytest.raises(InvalidTool, match="cannot be sent to a Ray worker"):
        ToolExecutor({"holds": holds_a_lock}, runner=ray_runner)


def test_abort_reaches_a_cooperative_def_tool_inside_the_worker(
    ray_runner: RayRunner, tmp_path: Path
) -> None:
    marker = tmp_path / "signal.txt"

    async def main() -> ExecutionView:
        async with ToolExecutor({"w": watches_its_signal}, runner=ray_runner) as ex:
            ex.register_call(chunk("w", "w", path=str(marker)))
            await wait_for_file(marker, "started")
            assert ex.abort("w", "the user pressed stop")
            await wait_for_file(marker, "aborted=")
            state = ex.get_call("w")
            assert state is not None
            return state

    state = asyncio.run(main())
    assert state.error is not None
    assert state.error.kind == "aborted"
    assert marker.read_text() == "aborted=True reason=cancelled"


def test_a_timeout_cancels_the_task_and_the_tool_sees_it(
    ray_runner: RayRunner, tmp_path: Path
) -> None:
    marker = tmp_path / "signal.txt"
    tools = {"w": Tool(watches_its_signal, timeout=1.0)}
    states, _ = asyncio.run(run_calls(ray_runner, tools, [chunk("t", "w", path=str(marker))]))
    assert states[0].error is not None
    assert states[0].error.kind == "timeout"
    asyncio.run(wait_for_file(marker, "aborted=True"))


def test_a_tool_that_ignores_the_abort_is_killed_after_the_grace_period(
    ray_cluster: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "pid.txt"
    runner = RayRunner(cancel_grace=0.5)

    async def main() -> None:
        async with ToolExecutor({"i": ignores_its_signal}, runner=runner) as ex:
            ex.register_call(chunk("i", "i", path=str(marker)))
            worker = int(await wait_for_file(marker, ""))
            ex.abort("i")
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    os.kill(worker, 0)
                except ProcessLookupError:
                    return
                await asyncio.sleep(0.1)
            raise AssertionError("the worker of an abandoned tool was never stopped")

    try:
        asyncio.run(main())
    finally:
        runner.close()


def test_abort_cancels_an_async_tool_inside_the_worker_and_aborts_its_signal(
    ray_runner: RayRunner, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled.txt"

    async def main() -> None:
        async with ToolExecutor({"a": awaits_cancellation}, runner=ray_runner) as ex:
            ex.register_call(chunk("a", "a", path=str(marker)))
            await wait_for_file(marker, "started")
            assert ex.abort("a")
            await wait_for_file(marker, "cancelled")

    asyncio.run(main())
    assert marker.read_text() == "cancelled aborted=True reason=cancelled"


def test_each_tool_runs_with_its_resource_options_and_runtime_env(ray_cluster: Any) -> None:
    options = RayOptions(num_cpus=0.5, runtime_env={"env_vars": {"TOOLCALLS_PROBE": "yes"}})
    runner = RayRunner(options={"probe": options})
    tools = {"probe": resources_and_environment, "plain": resources_and_environment}
    try:
        states, _ = asyncio.run(
            run_calls(runner, tools, [chunk("p", "probe"), chunk("q", "plain")])
        )
    finally:
        runner.close()
    assert [s.error for s in states] == [None, None]
    assert states[0].result == ({"CPU": 0.5}, "yes")
    assert states[1].result == ({"CPU": 1.0}, None)


def test_a_tool_declaring_an_actor_pool_runs_on_its_actors(ray_runner: RayRunner) -> None:
    tools = {"pooled": pooled_pid, "pooled_async": pooled_async}
    calls = [chunk(f"p{n}", "pooled") for n in range(8)]
    calls += [chunk(f"a{n}", "pooled_async", a=n) for n in range(8)]
    states, log = asyncio.run(run_calls(ray_runner, tools, calls))
    assert [s.error for s in states if s.error] == []
    assert len({s.result for s in states[:8]}) <= 2  # two actors serve every call
    assert [s.result for s in states[8:]] == [n * 3 for n in range(8)]
    assert len(log) == 16


def test_runner_options_win_over_what_the_tool_declares(ray_cluster: Any) -> None:
    runner = RayRunner(options={"pooled": RayOptions(num_cpus=0.5)})
    prepared = ToolExecutor({"pooled": pooled_pid, "add": add})
    from toolcalls._tools import prepare_tool

    assert runner.options_for(prepare_tool("pooled", pooled_pid)) == RayOptions(num_cpus=0.5)
    assert runner.options_for(prepare_tool("other", pooled_pid)).actors == 2
    assert runner.options_for(prepare_tool("add", add)) == RayOptions()
    assert prepared.runner is not runner


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_cpus": -1}, "num_cpus must be a number >= 0"),
        ({"num_gpus": float("nan")}, "num_gpus must be a number >= 0"),
        ({"memory": 0}, "memory must be an int >= 1"),
        ({"actors": True}, "actors must be an int >= 1"),
        ({"actor_concurrency": 0}, "actor_concurrency must be an int >= 1"),
    ],
)
def test_bad_resource_options_are_refused_when_declared(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        RayOptions(**options)


def test_a_session_runs_its_calls_on_the_runner(ray_runner: RayRunner) -> None:
    stream = [
        {"type": "start", "id": "c1", "name": "add"},
        {"type": "delta", "id": "c1", "argsTextDelta": '{"a": 2, "b": 40}'},
        {"type": "ready", "id": "c1"},
    ]

    async def main() -> list[ExecutionView]:
        async with ToolCallSession({"add": add}, runner=ray_runner) as session:
            settled = [call async for call in session.run(stream)]
            assert session.tracker.get("c1").to_dict()["result"] == 42  # type: ignore[union-attr]
            return settled

    assert [(s.tool_call_id, s.result) for s in asyncio.run(main())] == [("c1", 42)]


def test_toolcalls_ray_exports_the_runner_its_options_and_the_decorator() -> None:
    import toolcalls.ray

    assert set(toolcalls.ray.__all__) == {"RayOptions", "RayRunner", "ray_tool"}


LOCAL_CLUSTER = """
import asyncio, ray
from toolcalls import ToolExecutor
from toolcalls.ray import RayRunner

def add(a: int, b: int = 2) -> int:
    return a + b

async def main():
    async with RayRunner(init={"num_cpus": 1}) as runner:
        assert ray.is_initialized()
        async with ToolExecutor({"add": add}, runner=runner) as executor:
            executor.register_call({"toolCallId": "x", "toolName": "add", "args": {"a": 1}})
            print((await executor.wait("x")).result)
    print(ray.is_initialized())

asyncio.run(main())
"""


def test_without_an_address_the_runner_starts_a_local_cluster_and_stops_it() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", LOCAL_CLUSTER], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3", "False"]
