"""Tools: how the executor reads a tool's signature, validates arguments and calls it.

A tool is ``(args, signal) -> result | awaitable``. Its signature is read once, when the
executor is built, and decides how it is called. First the *signal parameter* is found: the one
annotated ``AbortSignal``, else the one named ``signal`` (a tool may have none). Of the other
parameters:

1. exactly one, unannotated or annotated ``Any``, ``dict`` or ``Mapping`` -> **raw**: it gets a
   copy of the arguments mapping, unvalidated (``(args, signal)``, X6);
2. exactly one, annotated with a pydantic model, a dataclass or a ``TypedDict`` -> **structured**:
   the arguments are validated into that type, which the tool receives;
3. anything else -> **keywords**: each parameter is an argument taken by name, validated
   against its annotation as ``pydantic.validate_call`` would (lax mode, defaults apply,
   unknown names refused unless the tool takes ``**kwargs``).

Validation runs when the call is registered, before any execution; its failure is data
(``ArgumentsInvalid`` carries pydantic's error list), never a call of the tool. ``async def``
tools run on the loop; any other callable runs in a worker thread.

Errors: ``InvalidTool`` at construction, ``ToolAborted`` from ``AbortSignal.raise_if_aborted()``
(both in ``_errors``, with the rest of the tree).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import decimal
import inspect
import logging
import math
import numbers
import threading
import typing
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.errors import PydanticUserError

from ._errors import InvalidTool, ToolAborted

logger = logging.getLogger("toolcalls")

Mode = Literal["raw", "structured", "keywords"]
ToolFunction = Callable[..., Any]

_RAW_ANNOTATIONS: frozenset[Any] = frozenset(
    {inspect.Parameter.empty, Any, dict, Mapping, MutableMapping}
)
_signal_lock = threading.Lock()


class AbortSignal:
    """Tells a running tool that its call was aborted (X6).

    ``async def`` tools are also cancelled; a thread cannot be, so plain ``def`` tools watch
    the signal: poll ``aborted`` or ``raise_if_aborted()``, block on ``wait_sync(timeout)``, or
    register ``add_callback``. The executor aborts it from the event loop thread; reading it
    and ``wait_sync`` are safe from any thread.
    """

    __slots__ = ("_callbacks", "_event", "_loop", "_on_start", "_reason", "_waiters", "aborted")

    aborted: bool

    def __init__(self) -> None:
        self.aborted = False
        self._reason: str | None = None
        self._event: threading.Event | None = None
        self._waiters: list[asyncio.Future[None]] | None = None
        self._callbacks: list[Callable[[AbortSignal], object]] | None = None
        #: The loop of the call (the executor sets it): callbacks run on its thread.
        self._loop: asyncio.AbstractEventLoop | None = None
        #: What the executor runs on the loop once a worker thread starts the tool (arming its
        #: timeout, X15); ``None`` when nothing waits for that.
        self._on_start: Callable[[], object] | None = None

    @property
    def reason(self) -> str | None:
        """Why the call was aborted (``None`` while it was not)."""
        return self._reason

    def raise_if_aborted(self) -> None:
        """Raise ``ToolAborted`` (with the reason) if the call was aborted; otherwise nothing."""
        if self.aborted:
            raise ToolAborted(self._reason)

    async def wait(self) -> str | None:
        """Wait on the event loop until the call is aborted; return the reason."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with _signal_lock:
            if not self.aborted:
                if self._waiters is None:
                    self._waiters = []
                self._waiters.append(waiter)
            else:
                waiter.set_result(None)
        await waiter
        return self._reason

    def wait_sync(self, timeout: float | None = None) -> bool:
        """Block the calling thread until the call is aborted or ``timeout`` seconds passed;
        return whether it was aborted. For tools running in worker threads."""
        with _signal_lock:
            if self.aborted:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)

    def add_callback(self, callback: Callable[[AbortSignal], object]) -> None:
        """Call ``callback(signal)`` when the call is aborted (at once if it already was, or,
        added from a worker thread, soon after on the loop's thread).

        It runs on the event loop thread; an exception it raises is logged and dropped.
        """
        with _signal_lock:  # abort() from another thread must not slip in between
            if not self.aborted:
                if self._callbacks is None:
                    self._callbacks = []
                self._callbacks.append(callback)
                return
        loop = self._loop
        if loop is not None and asyncio.events._get_running_loop() is not loop:
            try:  # added from a worker thread after the abort: run it on the loop's thread
                loop.call_soon_threadsafe(_run_abort_callback, callback, self)
                return
            except RuntimeError:  # the loop is closed: nothing else will run it
                pass
        _run_abort_callback(callback, self)

    def abort(self, reason: str | None = None) -> None:
        """Mark the call aborted and wake every waiter. The executor calls this; a second call
        changes nothing. Aborting a signal yourself only tells the tool, not the executor."""
        with _signal_lock:
            if self.aborted:
                return
            self._reason = reason
            self.aborted = True
            event, waiters, callbacks = self._event, self._waiters, self._callbacks
            self._waiters = self._callbacks = None
        if event is not None:
            event.set()
        for waiter in waiters or ():
            _wake(waiter)
        for callback in callbacks or ():
            _run_abort_callback(callback, self)

    def __repr__(self) -> str:
        state = f"aborted: {self._reason!r}" if self.aborted else "not aborted"
        return f"<AbortSignal {state}>"


def _wake(waiter: asyncio.Future[None]) -> None:
    """Resolve a ``wait()`` waiter on its own loop's thread (a tool in a worker thread may
    wait on a loop of its own), or at once when that loop runs here."""
    loop = waiter.get_loop()
    if asyncio.events._get_running_loop() is loop:
        if not waiter.done():
            waiter.set_result(None)
        return
    with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits any more
        loop.call_soon_threadsafe(_resolve, waiter)


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _run_abort_callback(callback: Callable[[AbortSignal], object], signal: AbortSignal) -> None:
    try:
        callback(signal)
    except Exception:
        logger.exception("an AbortSignal callback raised")


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool implementation with options: ``tools={"search": Tool(search, timeout=5.0)}``.

    ``timeout`` (seconds, counted from the start of execution) ends a call that runs longer in
    ``error`` of kind ``"timeout"``; the tool is cancelled (``async def``) or its signal aborted.
    """

    function: ToolFunction
    timeout: float | None = None

    def __post_init__(self) -> None:
        timeout = self.timeout
        if timeout is None:
            return
        if isinstance(timeout, bool) or not isinstance(timeout, (numbers.Real, decimal.Decimal)):
            raise ValueError(f"timeout must be a number of seconds, not {timeout!r}")
        if type(timeout) is not float:  # an int, Decimal or Fraction: as the loop takes it
            timeout = float(timeout)
            object.__setattr__(self, "timeout", timeout)
        if not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout}")


class ArgumentsInvalid(Exception):
    """Arguments refused by a tool's declared types; ``errors`` is pydantic's list (JSON-safe)."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors)
        self.errors = errors


@dataclass(frozen=True, slots=True)
class PreparedTool:
    """A tool with its signature worked out: how to validate arguments and how to call it."""

    name: str
    function: ToolFunction
    mode: Mode
    is_async: bool
    timeout: float | None
    bind: Callable[[Mapping[str, Any]], Any]
    invoke: Callable[[Any, AbortSignal], Any]

    def validate(self, args: Mapping[str, Any], flat: bool) -> Any:
        """What ``invoke`` takes for these arguments, sharing nothing with ``args`` (raw tools
        get a copy; validated ones get what pydantic builds, from a copy when the arguments
        nest); ``flat`` says whether ``is_flat(args)``. Raises ``ArgumentsInvalid``."""
        if self.mode == "raw":
            return copy_args(args, flat)
        try:
            return self.bind(args if flat else copy_args(args, flat))
        except ValidationError as exc:
            raise ArgumentsInvalid(_error_list(exc)) from None
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a validator of the tool's own types raised something
            # else (even SystemExit: validation is data, it cannot end the host)
            message = f"{type(exc).__name__}: {_text(exc)}"
            raise ArgumentsInvalid(
                [{"loc": [], "msg": message, "type": "validator_raised"}]
            ) from exc


def _text(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in when the exception cannot be turned into text."""
    try:
        return str(exc)
    except Exception as problem:
        return f"<{type(exc).__name__} whose str() raised {type(problem).__name__}>"


def _error_list(exc: ValidationError) -> list[dict[str, Any]]:
    """pydantic's errors reduced to JSON-friendly ``loc``, ``msg`` and ``type``."""
    return [
        {"loc": list(error["loc"]), "msg": error["msg"], "type": error["type"]}
        for error in exc.errors(include_url=False)
    ]


def prepare_tool(name: str, spec: ToolFunction | Tool) -> PreparedTool:
    """Read a tool's signature once; raise ``InvalidTool`` if it cannot be called."""
    tool = spec if isinstance(spec, Tool) else Tool(spec)
    function = tool.function
    if not callable(function):
        raise InvalidTool(name, f"{function!r} is not callable")
    try:
        signature = inspect.signature(function, eval_str=True)
    except (TypeError, ValueError, NameError) as exc:
        reason = f"cannot read its signature ({exc}); wrap it in a function"
        raise InvalidTool(name, reason) from exc
    parameters = list(signature.parameters.values())
    signal = _signal_parameter(parameters)
    others = [p for p in parameters if p is not signal]
    mode = _mode(others)
    try:
        if mode == "keywords":
            bind, call = _keywords(name, others)
        elif mode == "structured":
            bind, call = _structured(others[0].annotation), _identity
        else:
            bind, call = _identity, _identity
    except PydanticUserError as exc:
        raise InvalidTool(name, f"pydantic cannot validate its parameters: {exc.message}") from exc
    return PreparedTool(
        name=name,
        function=function,
        mode=mode,
        is_async=is_async(function),
        timeout=tool.timeout,
        bind=bind,
        invoke=_invoker(function, parameters, signal, call, mode),
    )


def is_async(function: Any) -> bool:
    """Whether calling ``function`` returns a coroutine (an ``async def`` or a callable object
    with an ``async def __call__``)."""
    call = getattr(type(function), "__call__", None)  # noqa: B004 - a class may define it async
    return inspect.iscoroutinefunction(function) or (
        not inspect.isroutine(function) and inspect.iscoroutinefunction(call)
    )


def _signal_parameter(parameters: list[inspect.Parameter]) -> inspect.Parameter | None:
    for parameter in parameters:
        if parameter.annotation is AbortSignal:
            return parameter
    return next((p for p in parameters if p.name == "signal"), None)


def _mode(others: list[inspect.Parameter]) -> Mode:
    if len(others) == 1 and others[0].kind not in (
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.VAR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    ):
        annotation = others[0].annotation
        if (typing.get_origin(annotation) or annotation) in _RAW_ANNOTATIONS:
            return "raw"
        if _is_structured(annotation):
            return "structured"
    return "keywords"


def _is_structured(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return dataclasses.is_dataclass(annotation) or typing_extensions.is_typeddict(annotation)


SCALARS = frozenset({str, int, float, bool, type(None)})


def is_flat(args: Mapping[str, Any]) -> bool:
    """Whether every argument is a plain scalar (so a one-level copy shares nothing)."""
    return SCALARS.issuperset(map(type, args.values()))


def copy_args(args: Mapping[str, Any], flat: bool) -> dict[str, Any]:
    """An independent copy of a call's arguments: flat arguments (the usual case) are copied
    one level, nested ones deeply, so no one shares a list or dict with anyone else."""
    return dict(args) if flat else copy.deepcopy(dict(args))


def _identity(value: Any) -> Any:
    return value


def _structured(annotation: Any) -> Callable[[Mapping[str, Any]], Any]:
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    return adapter.validate_python


def _keywords(
    name: str, parameters: list[inspect.Parameter]
) -> tuple[Callable[[Mapping[str, Any]], Any], Callable[[Any], Any]]:
    """A pydantic model of the keyword parameters (fields aliased to the parameter names, so
    any name is allowed) and the function turning a validated model into keyword arguments."""
    fields: dict[str, Any] = {}
    names: list[tuple[str, str]] = []
    extra: Literal["allow", "forbid"] = "forbid"
    for index, parameter in enumerate(parameters):
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            extra = "allow"
            continue
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            raise InvalidTool(
                name,
                f"parameter {parameter.name!r} cannot be passed by keyword; take (args, signal)"
                " or keyword parameters",
            )
        annotation = Any if parameter.annotation is parameter.empty else parameter.annotation
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[f"f{index}"] = (annotation, Field(default, alias=parameter.name))
        names.append((f"f{index}", parameter.name))
    config = ConfigDict(extra=extra, arbitrary_types_allowed=True)
    model: type[BaseModel] = create_model(f"{name}_arguments", __config__=config, **fields)

    def keywords(validated: BaseModel) -> dict[str, Any]:
        values = {parameter: getattr(validated, field) for field, parameter in names}
        if validated.model_extra:
            values.update(validated.model_extra)
        return values

    return model.model_validate, keywords


def _invoker(
    function: ToolFunction,
    parameters: list[inspect.Parameter],
    signal: inspect.Parameter | None,
    call: Callable[[Any], Any],
    mode: Mode,
) -> Callable[[Any, AbortSignal], Any]:
    """``invoke(bound, signal)`` calling the function with exactly what its signature asks."""
    if mode == "keywords":
        if signal is None:
            return lambda bound, _signal: function(**call(bound))
        if signal.kind is inspect.Parameter.POSITIONAL_ONLY:
            return lambda bound, abort: function(abort, **call(bound))
        key = signal.name
        return lambda bound, abort: function(**call(bound), **{key: abort})
    if signal is None:
        return lambda bound, _signal: function(bound)
    if parameters.index(signal) == 1 and signal.kind is not inspect.Parameter.KEYWORD_ONLY:
        return function
    if parameters.index(signal) == 0 and signal.kind is not inspect.Parameter.KEYWORD_ONLY:
        return lambda bound, abort: function(abort, bound)
    key = signal.name
    return lambda bound, abort: function(bound, **{key: abort})
