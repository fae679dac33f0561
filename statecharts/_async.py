"""Async callbacks: the compiled run, awaited on the caller's event loop.

The generated code is synchronous. A chart whose callbacks include coroutine functions calls
each of them through ``awaiting``: the shim creates the coroutine and hands it, through a
greenlet switch, to ``drive``, which awaits it on the caller's event loop and switches back
with its result (or throws its exception in). So the run keeps python-statemachine's order
exactly without a second, async copy of the runtime: a callback of a group its async engine
awaits one by one finishes before the next starts, and a group it gathers is handed to
``gather``, which runs each callback in a task of its own, as ``asyncio.gather`` does there.

``drive`` runs one call (a ``send``, or entering the initial state) in its own greenlet; a
coroutine awaiting ``drive`` sees every awaited callback as an ordinary await.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import functools
import inspect
import threading
import weakref
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import greenlet


class _Run(greenlet.greenlet):  # type: ignore[misc]
    """The greenlet of one driven call, or of one callback of a gathered group; ``owner`` is
    the instance it runs."""

    owner: Any = None
    #: the awaitable the run waits for, handed to ``_pump``
    handoff: Any = None


class _Driving:
    """A run in progress: the task driving it (an async callback's body runs in that task,
    awaited by ``drive``, outside the run's greenlet) and a future done when it ends."""

    __slots__ = ("_task", "done")

    def __init__(self) -> None:
        # weakly: a task left on an event loop closed without cancelling it is collected,
        # closing its run (python-statemachine's processing loop releases the machine so)
        task = asyncio.current_task()
        self._task = None if task is None else weakref.ref(task)
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @property
    def task(self) -> asyncio.Task[Any] | None:
        return None if self._task is None else self._task()


#: The run in progress on each instance, by ``id``.
_driving: dict[int, _Driving] = {}


#: The instances whose gathered group the current task runs a callback of, the innermost
#: last (set in the task's own context: the tasks it starts inherit it, as with
#: python-statemachine they inherit the engine whose step started them).
_members: contextvars.ContextVar[tuple[Any, ...]] = contextvars.ContextVar(
    "statecharts_members", default=()
)


def running(owner: Any) -> bool:
    """Whether this code runs inside a driven call of ``owner``, while it goes on: a callback
    of its run, sync (in the run's greenlet, or the greenlet of a gathered callback) or async
    (in the task driving it, or the task of a gathered callback)."""
    current = greenlet.getcurrent()
    if isinstance(current, _Run) and current.owner is owner:
        return id(owner) in _driving
    record = _driving.get(id(owner))
    if record is None:
        return False
    if any(member is owner for member in _members.get()):
        return True
    if isinstance(current, _Run):  # a callback of another instance's run
        return False
    try:
        return record.task is asyncio.current_task()
    except RuntimeError:  # no running loop: not inside a run
        return False


def driven(owner: Any) -> bool:
    """Whether another task's run is in progress on ``owner``."""
    return id(owner) in _driving


def loop_running() -> bool:
    """Whether an event loop runs in this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def may_wait(owner: Any) -> bool:
    """Whether a task sending to ``owner`` while another task's run is in progress on it
    waits for that run, as python-statemachine's caller awaits its event's future: not from
    inside any instance's run (python-statemachine gives a callback's event no future), nor
    from another event loop than the run's (none there: the run is not its own)."""
    if _members.get() or inside_a_run():
        return False
    record = _driving.get(id(owner))
    if record is None:
        return False
    try:
        return record.done.get_loop() is asyncio.get_running_loop()
    except RuntimeError:
        return False


async def finished(owner: Any) -> bool:
    """Wait until the run in progress on ``owner`` ends; raise what ended it, if it raised
    (python-statemachine rejects the callers waiting on its queue with it); return whether
    it was interrupted (its task cancelled: python-statemachine wakes the callers waiting
    for it, to take the loop over)."""
    record = _driving.get(id(owner))
    if record is None:
        return False
    try:
        await asyncio.shield(record.done)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if record.done.cancelled() and not (task is not None and task.cancelling()):
            return True
        raise
    return False


def inside_a_run() -> bool:
    """Whether this code runs inside any driven call."""
    return isinstance(greenlet.getcurrent(), _Run)


def wait(awaitable: Awaitable[Any]) -> Any:
    """Await ``awaitable`` from the synchronous run: switch to ``drive``, which awaits it."""
    current = greenlet.getcurrent()
    if not isinstance(current, _Run):  # pragma: no cover - awaiting shims run only in a run
        raise RuntimeError("an async callback ran outside an awaited send")
    # handed over outside the greenlet's frames: a suspended greenlet is never collected, so
    # what its frames hold (an awaitable, whose callbacks hold the task) would live forever
    current.handoff = awaitable
    del awaitable
    return current.parent.switch()


def gather(owner: Any, calls: tuple[Callable[[], Any], ...]) -> list[Any]:
    """Run a callback group as python-statemachine's async engine gathers it: each call in a
    task of its own (in a copy of the context, so what it sets no other callback nor the
    sender sees), all started in order before any resumes, so one that suspends lets the
    next start; return their results in order, or raise the first exception to happen (the
    other tasks run on, as ``asyncio.gather`` leaves them). Called from the run's greenlet."""
    results: list[Any] = wait(asyncio.gather(*(_gathered(owner, call) for call in calls)))
    return results


async def _gathered(owner: Any, call: Callable[[], Any]) -> Any:
    """One callback of a gathered group, in its task: in a greenlet of its own (a plain
    callback, and the code around an awaited one, runs there), inside ``owner``'s run."""
    _members.set((*_members.get(), owner))
    run = _Run(_exits_loudly(call))
    run.owner = owner
    return await _pump(run)


def awaiting(function: Callable[..., Any]) -> Callable[..., Any]:
    """A synchronous stand-in for an async callback: called inside a run, it waits for the
    coroutine and returns its result; its signature is the callback's."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        return wait(function(*args, **kwargs))

    return call


def is_async(target: Any) -> bool:
    """Whether calling ``target`` gives a coroutine (an ``async def``, or an object whose
    ``__call__`` is one), as python-statemachine decides it needs its async engine."""
    function = target.func if isinstance(target, functools.partial) else target
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004
    )


async def drive(owner: Any, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``function(*args, **kwargs)`` in a greenlet, awaiting each awaitable it hands over,
    and return its result (or raise its exception)."""
    run = _Run(_exits_loudly(function))
    run.owner = owner
    key = id(owner)
    record = _driving[key] = _Driving()
    # the run's callbacks, and the tasks they start, are inside it (python-statemachine's
    # tasks inherit the engine whose step started them, a context variable)
    token = _members.set((*_members.get(), owner))
    try:
        value = await _pump(run, *args, **kwargs)
    except BaseException as error:
        if isinstance(error, Exception):
            record.done.set_exception(error)
            record.done.exception()  # retrieved here: only waiting callers re-raise it
        else:
            record.done.cancel()
        raise
    else:
        record.done.set_result(None)
        return value
    finally:
        del _driving[key]
        with contextlib.suppress(ValueError):  # closed by the collector, not in its context
            _members.reset(token)


async def _pump(run: _Run, *args: Any, **kwargs: Any) -> Any:
    """Run the greenlet ``run`` to its end in this task, awaiting each awaitable it hands
    over; return its result (or raise its exception).

    The greenlet runs in this task's own context (the same ``Context`` object, not a copy),
    as a callback does running in its task with python-statemachine: it sees and sets the
    task's context variables, and a token one callback (or the sender) got another can reset.
    It switches back to whichever greenlet resumes it (an event loop runs a task's steps in
    the greenlet it runs in)."""
    run.parent = greenlet.getcurrent()
    run.gr_context = _context()
    value = run.switch(*args, **kwargs)
    while not run.dead:
        value, run.handoff = run.handoff, None
        try:
            result = await value
        except BaseException as error:  # handed back into the run, where it awaited
            run.parent = greenlet.getcurrent()
            run.gr_context = _context()
            value = run.throw(error)
        else:
            run.parent = greenlet.getcurrent()
            run.gr_context = _context()
            value = run.switch(result)
    if isinstance(value, _Exited):
        raise value.error
    return value


class _Exited:
    """What a run's greenlet returns when its code raised ``GreenletExit`` (a greenlet ends
    quietly on it, returning it): ``_pump`` raises it, as the code did."""

    __slots__ = ("error",)

    def __init__(self, error: greenlet.GreenletExit) -> None:
        self.error = error


def _exits_loudly(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, a ``GreenletExit`` it raises handed back as an ``_Exited``."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except greenlet.GreenletExit as error:
            return _Exited(error)

    return run


def _context() -> contextvars.Context:
    """The current context itself (a task's step runs in its task's ``Context``)."""
    context: contextvars.Context | None = greenlet.getcurrent().gr_context
    if context is None:  # pragma: no cover - a task's step always runs in a context
        context = contextvars.copy_context()
    return context


def awaiting_results(function: Callable[..., Any]) -> Callable[..., Any]:
    """A plain callback of an async chart: called inside a run, an awaitable it returns is
    awaited, as python-statemachine's async engine awaits every callback's result."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        if inspect.isawaitable(result) and inside_a_run():
            return wait(result)
        return result

    return call


class Done:
    """An already-known result that can be awaited, as python-statemachine's async ``send``
    from inside a callback is (``await self.send(...)``); unawaited it warns about nothing."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result

    def __await__(self) -> Generator[Any, None, Any]:
        return self.result
        yield  # pragma: no cover - makes this a generator

    def __getattr__(self, name: str) -> Any:
        return getattr(self.result, name)

    def __bool__(self) -> bool:
        return bool(self.result)

    def __repr__(self) -> str:
        return repr(self.result)


_local = threading.local()


def complete(coroutine: Any) -> Any:
    """``coroutine`` awaited by the caller when an event loop runs in this thread (it is
    returned), else run to completion on a private loop, as python-statemachine's
    ``run_async_from_sync`` does."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        loop = getattr(_local, "loop", None)
        if loop is None or loop.is_closed():
            loop = _local.loop = asyncio.new_event_loop()
            atexit.register(loop.close)
        return loop.run_until_complete(coroutine)
    return coroutine
