"""Run tools on a Ray cluster: ``ToolExecutor(tools, runner=RayRunner(address=...))``.

Needs the ``ray`` extra (``pip install 'toolcalls[ray]'``). Each call runs as a Ray task, or on
a pool of actors when its tool declares one (``@ray_tool(actors=2)`` or ``RayRunner(options=
{name: RayOptions(actors=2)})``), with the tool's resource options (``num_cpus``, ``num_gpus``,
``memory``, ``runtime_env``). Arguments are validated in this process before anything is
submitted; the worker binds the same JSON arguments again and calls the tool with an
``AbortSignal`` of its own.

Aborting a call (abort, timeout, reset, close) cancels its Ray task with ``ray.cancel``: inside
the worker the tool's ``AbortSignal`` is aborted (an ``async def`` tool is also cancelled), and
a plain ``def`` task still running ``cancel_grace`` seconds later is force-cancelled (its worker
process is killed). Tasks are never retried by Ray (``max_retries=0``), so a call runs at most
once. What the cluster adds as failures comes back as ``ToolError`` kinds: ``worker_died``,
``result_unserializable``, ``cluster_unreachable``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import math
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self, TypeVar

try:
    import ray
    import ray.exceptions
    from ray import cloudpickle
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ModuleNotFoundError(
        "toolcalls.ray needs Ray: install the extra with pip install 'toolcalls[ray]'",
        name=exc.name,
    ) from exc

from ._errors import InvalidTool, ToolAborted, ToolFailure
from ._execution import ToolError, _exception_type, exception_text
from ._tools import AbortSignal, PreparedTool, prepare_tool

__all__ = ["RayOptions", "RayRunner", "ray_tool"]

F = TypeVar("F", bound=Callable[..., Any])
_dumps: Callable[[Any], bytes] = cloudpickle.dumps
_loads: Callable[[bytes], Any] = cloudpickle.loads
_ATTRIBUTE = "__toolcalls_ray__"
#: How long a connection probe of ``host:port`` waits before the cluster counts as unreachable.
CONNECT_TIMEOUT = 5.0
#: How often (seconds) a call waiting for its result checks that the connection is still open.
WATCH_INTERVAL = 1.0


@dataclass(frozen=True, slots=True)
class RayOptions:
    """Where and with what one tool runs on the cluster.

    ``num_cpus``, ``num_gpus``, ``memory`` (bytes) and ``runtime_env`` are Ray's resource
    options (``None`` keeps Ray's default: one CPU per task). ``actors=N`` runs the tool on a
    pool of N actors started on first use (kept warm, restarted by Ray if one dies) instead of
    one task per call; each actor runs ``actor_concurrency`` calls at once.
    """

    num_cpus: float | None = None
    num_gpus: float | None = None
    memory: int | None = None
    runtime_env: Mapping[str, Any] | None = None
    actors: int | None = None
    actor_concurrency: int = 1

    def __post_init__(self) -> None:
        for name in ("num_cpus", "num_gpus"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(f"{name} must be a number >= 0, not {value!r}")
        for name, low in (("memory", 1), ("actors", 1), ("actor_concurrency", 1)):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < low
            ):
                raise ValueError(f"{name} must be an int >= {low}, not {value!r}")
        if self.runtime_env is not None and not isinstance(self.runtime_env, Mapping):
            raise ValueError(f"runtime_env must be a mapping, not {self.runtime_env!r}")

    def ray_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments of Ray's ``.options()``."""
        kwargs: dict[str, Any] = {}
        for name in ("num_cpus", "num_gpus", "memory"):
            value = getattr(self, name)
            if value is not None:
                kwargs[name] = value
        if self.runtime_env is not None:
            kwargs["runtime_env"] = dict(self.runtime_env)
        return kwargs


def ray_tool(**options: Any) -> Callable[[F], F]:
    """Declare how a tool runs on Ray: ``@ray_tool(num_cpus=2)``, ``@ray_tool(actors=2)``.

    Takes ``RayOptions``' fields and returns the function itself (it still runs locally);
    ``RayRunner(options=...)`` given for the same tool name wins over what it declares.
    """
    declared = RayOptions(**options)

    def declare(function: F) -> F:
        setattr(function, _ATTRIBUTE, declared)
        return function

    return declare


# -- the worker side --------------------------------------------------------------------------

_worker_tools: dict[str, PreparedTool] = {}
_worker_pool: concurrent.futures.ThreadPoolExecutor | None = None
_worker_lock = threading.Lock()

Outcome = tuple[Any, ...]


def _worker_tool(key: str, name: str, function: bytes) -> PreparedTool:
    """The tool, prepared once per worker process (its function unpickled on first use: for
    a module-level function the bytes are only its module and name)."""
    tool = _worker_tools.get(key)
    if tool is None:
        tool = _worker_tools[key] = prepare_tool(name, _loads(function))
    return tool


def _raised(exc: BaseException) -> Outcome:
    """How a tool's exception travels: its type and message, and itself when it pickles."""
    if isinstance(exc, ToolAborted):
        return ("aborted", exc.reason)
    try:
        pickled: bytes | None = _dumps(exc)
    except Exception:
        pickled = None
    return ("raised", _exception_type(exc), exception_text(exc), pickled)


def _call_sync(tool: PreparedTool, args: Mapping[str, Any], signal: AbortSignal) -> Outcome:
    try:
        result = tool.invoke(tool.validate(args, True), signal)
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
    except BaseException as exc:
        return _raised(exc)
    return ("ok", result)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _run_task(call: tuple[str, str, bytes, Mapping[str, Any]]) -> Outcome:
    """A Ray task running one call: the tool runs in a thread (on an event loop of its own if
    it is ``async def``) while this thread waits; ``ray.cancel`` interrupts the wait, and the
    tool's signal is aborted (and its task cancelled). The task returns when the tool does.
    ``call`` is ``(key, name, pickled function, args)``: one argument, serialised once."""
    global _worker_pool
    key, name, function, args = call
    try:
        tool = _worker_tool(key, name, function)
    except Exception as exc:  # the tool cannot be loaded here (a module missing on the worker)
        return _raised(exc)
    signal = AbortSignal()
    with _worker_lock:
        if _worker_pool is None:
            _worker_pool = concurrent.futures.ThreadPoolExecutor(2, "toolcalls-tool")
        pool = _worker_pool
    started: concurrent.futures.Future[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]]
    started = concurrent.futures.Future()
    if tool.is_async:
        future = pool.submit(asyncio.run, _async_in_worker(tool, args, signal, started))
    else:
        future = pool.submit(_call_sync, tool, args, signal)
    while True:
        try:
            concurrent.futures.wait([future], timeout=0.05)  # short: ray.cancel lands between
            if future.done():
                return future.result()
        except KeyboardInterrupt:  # ray.cancel
            if not tool.is_async:
                signal.abort("cancelled")
            elif started.done():
                loop, task = started.result()
                loop.call_soon_threadsafe(_abort_async, signal, task)


def _abort_async(signal: AbortSignal, task: asyncio.Task[Any]) -> None:
    signal.abort("cancelled")
    task.cancel()


async def _async_in_worker(
    tool: PreparedTool,
    args: Mapping[str, Any],
    signal: AbortSignal,
    started: concurrent.futures.Future[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]],
) -> Outcome:
    task = asyncio.ensure_future(_guarded(tool, args, signal))
    started.set_result((asyncio.get_running_loop(), task))
    try:
        return await task
    except asyncio.CancelledError:
        return ("aborted", signal.reason)


async def _guarded(tool: PreparedTool, args: Mapping[str, Any], signal: AbortSignal) -> Outcome:
    """Run an ``async def`` tool, catching what it raises inside its own task: asyncio would
    let a ``SystemExit`` out of the loop and end the worker."""
    try:
        return ("ok", await tool.invoke(tool.validate(args, True), signal))
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        return _raised(exc)


class _ToolActor:
    """An actor of a tool's pool: ``async def`` tools run on its loop (cancelled by
    ``ray.cancel``), plain ``def`` tools in its threads (their signal aborted)."""

    def __init__(self, key: str, name: str, function: bytes, concurrency: int) -> None:
        self.tool = _worker_tool(key, name, function)
        self.pool = concurrent.futures.ThreadPoolExecutor(concurrency, "toolcalls-tool")

    async def call(self, args: Mapping[str, Any]) -> Outcome:
        tool, signal = self.tool, AbortSignal()
        if tool.is_async:
            try:
                return ("ok", await tool.invoke(tool.validate(args, True), signal))
            except asyncio.CancelledError:
                signal.abort("cancelled")
                raise
            except BaseException as exc:
                return _raised(exc)
        future = asyncio.get_running_loop().run_in_executor(
            self.pool, _call_sync, tool, args, signal
        )
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            signal.abort("cancelled")
            await asyncio.wait([future])  # the thread cannot be killed: keep its slot until done
            raise

    def ping(self) -> bool:
        return True


# -- the driver side --------------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    """What the runner keeps per tool: its options and its remote handles."""

    name: str
    function: Any
    options: RayOptions
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    pickled: bytes = b""
    remote: Any = None
    actors: list[Any] = field(default_factory=list)
    load: list[int] = field(default_factory=list)

    def release(self, actor: int) -> None:
        """One call on ``actor`` ended there."""
        if actor < len(self.load):
            self.load[actor] -= 1


class RayRunner:
    """Runs tool calls on a Ray cluster (see the module docstring for the semantics).

    ``address`` is the cluster to connect to (``"auto"``, ``"host:port"``, ``"ray://..."``);
    ``None`` connects to the cluster Ray is already initialised with, else starts a local one
    for development (``init`` holds more ``ray.init`` keyword arguments, e.g. ``num_cpus``).
    ``options`` maps tool names to ``RayOptions`` (winning over what a tool declares with
    ``ray_tool``); ``default`` applies to the others. The connection is made by ``connect()``
    or on the first call (in a thread, so the loop runs on; a call still waiting after
    ``connect_timeout`` seconds is ``cluster_unreachable``); ``close()`` ends the actor pools
    and abandoned tasks and, when this runner started or connected Ray itself, disconnects.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        options: Mapping[str, RayOptions] | None = None,
        default: RayOptions | None = None,
        cancel_grace: float = 2.0,
        connect_timeout: float = 30.0,
        init: Mapping[str, Any] | None = None,
    ) -> None:
        if not (cancel_grace >= 0 and math.isfinite(cancel_grace)):
            raise ValueError(f"cancel_grace must be a number of seconds >= 0, not {cancel_grace}")
        for name, value in (options or {}).items():
            if not isinstance(value, RayOptions):
                raise TypeError(f"options[{name!r}] must be RayOptions, not {value!r}")
        self.address = address
        self.cancel_grace = cancel_grace
        if not (connect_timeout > 0 and math.isfinite(connect_timeout)):
            raise ValueError(f"connect_timeout must be a positive number, not {connect_timeout}")
        self.connect_timeout = connect_timeout
        self._options = dict(options or {})
        self._default = default or RayOptions()
        self._init = dict(init or {})
        self._entries: dict[tuple[str, int], _Entry] = {}
        self._owns_ray = False
        self._connected = False
        self._closed = False
        self._forcing: dict[asyncio.TimerHandle, Any] = {}  # force-cancel timers and refs
        self._connecting: concurrent.futures.Future[None] | None = None

    # -- the Runner protocol -------------------------------------------------------------------

    def check(self, tools: Mapping[str, PreparedTool]) -> None:
        """Refuse (``InvalidTool``) a tool whose function cannot be sent to a worker."""
        for name, tool in tools.items():
            try:
                _dumps(tool.function)
            except Exception as exc:
                reason = f"cannot be sent to a Ray worker ({type(exc).__name__}: {exc})"
                raise InvalidTool(name, reason) from exc

    async def run(
        self, tool: PreparedTool, args: Mapping[str, Any], bound: Any, signal: AbortSignal
    ) -> Any:
        """Submit one call and await its outcome; cancelled, it cancels the Ray task."""
        entry = self._entries.get((tool.name, id(tool.function)))
        if entry is None or entry.function is not tool.function:
            entry = await self._new_entry(tool)
        ref, actor = self._submit(entry, args)
        return await self._outcome(tool.name, ref, entry, actor)

    def _submit(self, entry: _Entry, args: Mapping[str, Any]) -> tuple[Any, int]:
        """Submit a call: its ref, and the index of the actor it went to (-1: a task)."""
        try:
            if entry.options.actors is None:
                ref = entry.remote.remote((entry.key, entry.name, entry.pickled, dict(args)))
                actor = -1
            else:
                actor = min(range(len(entry.actors)), key=entry.load.__getitem__)
                ref = entry.actors[actor].call.remote(dict(args))
                entry.load[actor] += 1
        except ToolFailure:
            raise
        except Exception as exc:  # submission refused: the cluster is gone
            raise ToolFailure(ToolError.cluster_unreachable(entry.name, _describe(exc))) from exc
        return ref, actor

    async def _outcome(self, tool_name: str, ref: Any, entry: _Entry, actor: int) -> Any:
        """Await a submitted call: its result, or the ``ToolFailure`` it stands for."""
        done = ref.future()
        if actor >= 0:  # the actor's slot is free when its call ends there, not when we stop
            loop = asyncio.get_running_loop()
            done.add_done_callback(lambda _: _call_soon(loop, entry.release, actor))
        waiting = asyncio.wrap_future(done)
        try:
            while True:
                finished, _ = await asyncio.wait((waiting,), timeout=WATCH_INTERVAL)
                if finished:
                    outcome = waiting.result()
                    break
                if not ray.is_initialized():  # the connection went: the ref never resolves
                    gone = ToolError.cluster_unreachable(tool_name, "the Ray connection closed")
                    raise ToolFailure(gone)
        except asyncio.CancelledError:
            waiting.cancel()
            self._cancel(ref, actor < 0)
            raise
        except ToolFailure:
            raise
        except ray.exceptions.RayError as exc:
            raise ToolFailure(_ray_error(tool_name, exc)) from exc
        except Exception as exc:  # the result arrived but could not be read here
            error = ToolError.result_unserializable(tool_name, _describe(exc))
            raise ToolFailure(error) from exc
        return _decode(tool_name, outcome)

    # -- connection and lifecycle --------------------------------------------------------------

    def connect(self) -> None:
        """Connect to the cluster now (blocking) instead of on the first call; raises
        ``ConnectionError`` when it cannot be reached."""
        if self._closed:
            raise RuntimeError("this RayRunner is closed")
        if self._connected and ray.is_initialized():
            return
        if self.address is not None:
            _probe(self.address)
        if ray.is_initialized():  # one process holds one connection: use the caller's
            self._connected = True
            return
        try:
            ray.init(
                address=self.address,
                include_dashboard=False,
                log_to_driver=False,
                **self._init,
            )
        except Exception as exc:
            raise ConnectionError(f"cannot connect to Ray at {self.address!r}: {exc}") from exc
        self._owns_ray = self._connected = True

    def close(self) -> None:
        """End the actor pools and forget the tools; disconnect from Ray if this runner
        connected (an existing ``ray.init`` of the caller is left alone)."""
        self._closed = True
        forcing, self._forcing = self._forcing, {}
        for timer in forcing:
            timer.cancel()
        _force_all(list(forcing.values()), self.cancel_grace + 5.0)
        if ray.is_initialized():
            for entry in self._entries.values():
                for actor in entry.actors:
                    with contextlib.suppress(Exception):  # of an earlier Ray session: gone
                        ray.kill(actor)
        self._entries.clear()
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
        self._owns_ray = self._connected = False

    async def __aenter__(self) -> Self:
        await asyncio.get_running_loop().run_in_executor(None, self.connect)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def options_for(self, tool: PreparedTool) -> RayOptions:
        """The options a tool runs with: the runner's for its name, else what it declares."""
        declared = getattr(tool.function, _ATTRIBUTE, None)
        if tool.name in self._options:
            return self._options[tool.name]
        return declared if isinstance(declared, RayOptions) else self._default

    def __repr__(self) -> str:
        state = "closed" if self._closed else "connected" if self._connected else "idle"
        return f"<RayRunner address={self.address!r} {state}>"

    # -- internals -----------------------------------------------------------------------------

    async def _connected_now(self, tool_name: str) -> None:
        """Connect without blocking the loop (in a thread of its own, shared by the calls
        waiting for it); ``ToolFailure`` when it fails or takes over ``connect_timeout``."""
        if self._connected and ray.is_initialized():
            return
        if self._connecting is None or self._connecting.done():
            self._connecting = concurrent.futures.Future()
            threading.Thread(
                target=_settle_with, args=(self._connecting, self.connect), daemon=True
            ).start()
        try:
            await asyncio.wait_for(
                asyncio.shield(asyncio.wrap_future(self._connecting)), self.connect_timeout
            )
        except TimeoutError:
            detail = f"no Ray cluster answered at {self.address!r} in {self.connect_timeout:g} s"
            raise ToolFailure(ToolError.cluster_unreachable(tool_name, detail)) from None
        except Exception as exc:
            raise ToolFailure(ToolError.cluster_unreachable(tool_name, str(exc))) from exc

    async def _new_entry(self, tool: PreparedTool) -> _Entry:
        key = (tool.name, id(tool.function))  # shared by executors running the same tool
        if self._closed:
            raise ToolFailure(ToolError.cluster_unreachable(tool.name, "the runner is closed"))
        await self._connected_now(tool.name)
        entry = self._entries.get(key)
        if entry is not None and entry.function is tool.function:
            return entry  # made by another call while this one waited
        options = self.options_for(tool)
        entry = _Entry(tool.name, tool.function, options)
        try:
            kwargs = options.ray_kwargs()
            entry.pickled = _dumps(tool.function)
            if options.actors is None:
                name = f"toolcalls:{tool.name}"
                entry.remote = _task.options(max_retries=0, name=name, **kwargs)
            else:
                actor_class = _actor.options(
                    max_restarts=-1,
                    max_task_retries=0,
                    max_concurrency=options.actor_concurrency,
                    **kwargs,
                )
                start = (entry.key, tool.name, entry.pickled, options.actor_concurrency)
                entry.actors = [actor_class.remote(*start) for _ in range(options.actors)]
                entry.load = [0] * options.actors
        except Exception as exc:
            raise ToolFailure(ToolError.cluster_unreachable(tool.name, _describe(exc))) from exc
        self._entries[key] = entry
        return entry

    def _cancel(self, ref: Any, is_task: bool) -> None:
        """``ray.cancel`` the call; a task still running after ``cancel_grace`` is killed."""
        try:
            # On an actor, concurrent calls share one worker, and Ray may count a Ray call one
            # of them made as a child of another: a recursive cancel would reach it.
            ray.cancel(ref, recursive=is_task)
        except Exception:  # already finished, or the cluster is gone: nothing left to stop
            return
        if not is_task:
            return
        loop = asyncio.get_running_loop()
        timer: asyncio.TimerHandle

        def force() -> None:
            self._forcing.pop(timer, None)
            _force(ref)

        timer = loop.call_later(self.cancel_grace, force)
        self._forcing[timer] = ref


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[..., Any], *args: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing to update
        loop.call_soon_threadsafe(callback, *args)


_task = ray.remote(_run_task)
_actor = ray.remote(_ToolActor)


def _force(ref: Any) -> None:
    """Kill the worker of a task that is still running."""
    with contextlib.suppress(Exception):  # finished, or the cluster is gone
        ready, _ = ray.wait([ref], timeout=0)
        if not ready:
            ray.cancel(ref, force=True)


def _force_all(refs: list[Any], seconds: float) -> None:
    """Kill the workers of abandoned tasks now (blocking, at most ``seconds``): Ray ignores a
    forced cancel that arrives while the first, polite one is still being delivered, so it is
    repeated until each task has ended."""
    deadline = time.monotonic() + seconds
    with contextlib.suppress(Exception):  # the cluster is gone: nothing is left to stop
        while refs and time.monotonic() < deadline:
            for ref in refs:
                ray.cancel(ref, force=True)
            _, refs = ray.wait(refs, num_returns=len(refs), timeout=0.2)


def _decode(tool_name: str, outcome: Outcome) -> Any:
    """The result of a worker's outcome, or the ``ToolFailure``/exception it stands for."""
    tag = outcome[0]
    if tag == "ok":
        return outcome[1]
    if tag == "aborted":
        raise ToolAborted(outcome[1])
    _, exception_type, text, pickled = outcome
    exception: BaseException | None = None
    if pickled is not None:
        try:
            exception = _loads(pickled)
        except Exception:
            exception = None
    raise ToolFailure(
        ToolError(
            "tool_raised",
            f"tool {tool_name!r} raised {exception_type}" + (f": {text}" if text else ""),
            {"tool_name": tool_name, "exception_type": exception_type, "exception_message": text},
            exception,
        )
    )


def _ray_error(tool_name: str, exc: BaseException) -> ToolError:
    """The ``ToolError`` for a failure Ray reported instead of an outcome."""
    errors = ray.exceptions
    if isinstance(exc, errors.TaskCancelledError):
        return ToolError.aborted(tool_name, "cancelled on the cluster")
    if isinstance(
        exc,
        errors.WorkerCrashedError
        | errors.RayActorError
        | errors.NodeDiedError
        | errors.OutOfMemoryError
        | errors.ObjectLostError,
    ):
        return ToolError.worker_died(tool_name, _describe(exc))
    if isinstance(exc, errors.RayTaskError):  # the worker could not send the outcome back
        return ToolError.result_unserializable(tool_name, _describe(exc.cause or exc))
    if isinstance(exc, errors.RaySystemError) and ray.is_initialized():
        return ToolError.result_unserializable(tool_name, _describe(exc))  # unpickling here
    return ToolError.cluster_unreachable(tool_name, _describe(exc))


def _settle_with(future: concurrent.futures.Future[None], work: Callable[[], None]) -> None:
    try:
        work()
    except BaseException as exc:
        future.set_exception(exc)
    else:
        future.set_result(None)


def _describe(exc: BaseException) -> str:
    text = exception_text(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _probe(address: str) -> None:
    """Fail fast (``ConnectionError``) when nothing listens at a ``host:port`` address:
    ``ray.init`` would retry for minutes."""
    if "://" in address or address == "auto" or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        return
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT):
            return
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {address} ({exc})") from exc
