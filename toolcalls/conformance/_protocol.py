"""How the suite talks to an implementation of seed 000: in process, or over JSON lines.

The JSON-lines protocol (one request per line on the implementation's stdin, exactly one
response line on its stdout, UTF-8)::

    {"op": "reset"}                       -> {"ok": true}
    {"op": "apply", "event": {...}}       -> {"ok": true}
    {"op": "get", "id": "..."}            -> {"ok": true, "value": <call or null>}
    {"op": "list"}                        -> {"ok": true, "value": [<calls in start order>]}
    a failure of the implementation       -> {"ok": false, "error": "<message>"}

A call is the seed's wire shape: ``{"id", "name", "argsText", "args"?, "status", "result"?,
"error"?}``, keys that are not set left out.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .._errors import ImplementationFailed, ProtocolError

#: Seconds to wait for one response line before calling it a protocol error.
DEFAULT_TIMEOUT = 10.0
#: How much one read of the answer pipe takes at most (a pipe holds 64 KiB).
_READ_SIZE = 1 << 16


class Implementation(Protocol):
    """Seed 000's API, as the suite drives it. Values are plain JSON (dicts, lists...)."""

    def reset(self) -> None: ...

    def apply(self, event: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Apply one event; return what it did (``{"applied": bool, "reason": ...,
        "status": ...}``, any of them) if the implementation tells, else ``None``."""

    def get(self, call_id: str) -> dict[str, Any] | None: ...

    def list(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


def _plain(value: Any, where: str) -> Any:
    """A call as plain JSON data: ``to_dict()`` if the object has it, then a JSON round trip
    that keeps strings as the object holds them (an escaping one would join two surrogate
    halves into the character they encode, hiding a split pair a Python implementation failed
    to join, T27)."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        value = to_dict()
    try:
        return json.loads(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError) as error:
        raise ProtocolError(f"{where} returned a value JSON cannot hold: {error}") from None


def _effect(outcome: Any) -> dict[str, Any] | None:
    """What an object's ``apply`` said it did, when it returns something with a boolean
    ``applied`` (this package's ``ApplyOutcome``): that, with ``reason`` and ``status`` if it
    has them; ``None`` when it says nothing (the seed's ``apply`` returns nothing)."""
    applied = getattr(outcome, "applied", None)
    if not isinstance(applied, bool):
        return None
    effect: dict[str, Any] = {"applied": applied}
    for name in ("reason", "status"):
        if hasattr(outcome, name):
            effect[name] = getattr(outcome, name)
    return effect


class ObjectImplementation:
    """An in-process implementation: ``factory()`` returns an object with ``apply(event)``,
    ``get(id)`` and ``list()``; calls may be dicts or objects with ``to_dict()``."""

    def __init__(self, factory: Callable[[], Any], name: str = "object") -> None:
        self.factory = factory
        self.name = name
        self.target = self._make()

    def _make(self) -> Any:
        try:
            made = self.factory()
        except Exception as error:
            raise ProtocolError(
                f"{self.name}: the factory raised {type(error).__name__}: {error}"
            ) from None
        missing = [
            name for name in ("apply", "get", "list") if not callable(getattr(made, name, None))
        ]
        if missing:
            raise ProtocolError(
                f"{self.name}: the factory made a {type(made).__name__}, which has no "
                f"{'/'.join(missing)}: not an implementation of seed 000"
            )
        return made

    @classmethod
    def from_spec(cls, spec: str) -> ObjectImplementation:
        """``module:factory`` (``module:Class`` works too)."""
        module_name, _, attribute = spec.partition(":")
        if not module_name or not attribute:
            raise ProtocolError(f"--object wants MODULE:FACTORY, got {spec!r}")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ProtocolError(f"cannot import {module_name!r}: {error}") from None
        factory = getattr(module, attribute, None)
        if not callable(factory):
            raise ProtocolError(f"{module_name} has no callable {attribute!r}")
        return cls(factory, spec)

    def reset(self) -> None:
        self.target = self._make()

    def apply(self, event: Mapping[str, Any]) -> Mapping[str, Any] | None:
        try:
            outcome = self.target.apply(dict(event))
        except Exception as error:
            raise ImplementationFailed(f"apply raised {type(error).__name__}: {error}") from None
        return _effect(outcome)

    def get(self, call_id: str) -> dict[str, Any] | None:
        try:
            value = self.target.get(call_id)
        except Exception as error:
            raise ImplementationFailed(f"get raised {type(error).__name__}: {error}") from None
        return None if value is None else _plain(value, "get")

    def list(self) -> list[dict[str, Any]]:
        try:
            values = list(self.target.list())
        except Exception as error:
            raise ImplementationFailed(f"list raised {type(error).__name__}: {error}") from None
        plain: list[dict[str, Any]] = [_plain(value, "list") for value in values]
        return plain

    def close(self) -> None:
        pass


class SubprocessImplementation:
    """An implementation in another process, speaking the JSON-lines protocol."""

    def __init__(self, command: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.command = command
        self.name = command
        self.timeout = timeout
        try:
            argv = shlex.split(command)
        except ValueError as error:
            raise ProtocolError(f"--cmd {command!r} cannot be split into words: {error}") from None
        if not argv:
            raise ProtocolError("--cmd is empty")
        try:
            # Its own process group, so a wrapper's children (sh -c, npm start) end with it.
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as error:
            raise ProtocolError(f"cannot start {command!r}: {error}") from None
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._stdin = self.process.stdin
        self._fd = self.process.stdout.fileno()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)
        self._buffer = bytearray()
        #: The last request sent (an answer left over afterwards is its extra line).
        self._last: Mapping[str, Any] | None = None

    def request(self, message: Mapping[str, Any], *, value: bool = False) -> Any:
        """Send one request; return the response's ``value`` (``None`` if it has none; with
        ``value``, a response without one is a protocol error: ``get`` and ``list`` answer
        with a value, ``null`` included)."""
        if self._last is not None and not self._buffer and self._selector.select(0):
            self._buffer += os.read(self._fd, _READ_SIZE)  # nothing (end of output): it died
        if self._buffer:
            raise ProtocolError(
                f"the implementation answered {_short(self._last or message)} with more than "
                "one line (each request gets exactly one)"
            )
        self._last = message
        # ASCII: a string may hold lone surrogate halves (T27), which UTF-8 cannot encode
        line = json.dumps(message, allow_nan=False) + "\n"
        try:
            self._stdin.write(line.encode("utf-8"))
        except (BrokenPipeError, OSError):
            raise ProtocolError(self._died(message)) from None
        raw = self._read_line(message)
        try:
            response = json.loads(raw)
        except ValueError:
            raise ProtocolError(
                f"answer to {_short(message)} is not JSON: {raw[:200]!r}"
            ) from None
        if not isinstance(response, dict) or not isinstance(response.get("ok"), bool):
            raise ProtocolError(f'answer to {_short(message)} has no boolean "ok": {raw[:200]}')
        if not response["ok"]:
            error = response.get("error")
            if not isinstance(error, str):
                raise ProtocolError(f'failure answer to {_short(message)} has no "error" text')
            raise ImplementationFailed(f"{message['op']} failed: {error}")
        if value and "value" not in response:
            raise ProtocolError(f'answer to {_short(message)} has no "value" (null if none)')
        return response.get("value")

    def _read_line(self, message: Mapping[str, Any]) -> str:
        """The next answer line. Linear in its length however it trickles in: the buffer grows
        in place and each chunk is searched for the newline once (appending to ``bytes`` and
        searching the whole buffer again made a 32 MB answer take 24 s)."""
        deadline = time.monotonic() + self.timeout  # for the whole line, however it trickles
        buffer = self._buffer
        end = buffer.find(b"\n")
        while end < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                raise ProtocolError(f"no answer to {_short(message)} within {self.timeout:g} s")
            chunk = os.read(self._fd, _READ_SIZE)
            if not chunk:
                raise ProtocolError(self._died(message))
            searched = len(buffer)
            buffer += chunk
            end = buffer.find(b"\n", searched)
        line = bytes(buffer[:end])
        del buffer[: end + 1]  # what follows (a program may answer ahead) stays buffered
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(f"answer to {_short(message)} is not UTF-8") from None

    def _died(self, message: Mapping[str, Any]) -> str:
        try:
            code: int | None = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        how = f"exited with status {code}" if code is not None else "closed its output"
        return f"the implementation {how} before answering {_short(message)}"

    def reset(self) -> None:
        self.request({"op": "reset"})

    def apply(self, event: Mapping[str, Any]) -> None:
        self.request({"op": "apply", "event": event})
        return None

    def get(self, call_id: str) -> dict[str, Any] | None:
        value = self.request({"op": "get", "id": call_id}, value=True)
        if value is not None and not isinstance(value, dict):
            raise ProtocolError(f"get {call_id!r} answered {value!r}, not a call or null")
        return value

    def list(self) -> list[dict[str, Any]]:
        value = self.request({"op": "list"}, value=True)
        if not isinstance(value, list) or not all(isinstance(call, dict) for call in value):
            raise ProtocolError(f"list answered {json.dumps(value)[:200]}, not a list of calls")
        return value

    def close(self) -> None:
        self._selector.close()
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        # Whatever the program started and left behind (a wrapper's hung child) goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.stdout is not None:
            self.process.stdout.close()


def _short(message: Mapping[str, Any]) -> str:
    return _text(message)[:200]


def _text(value: Any) -> str:
    """JSON for people: characters as they are, unless a lone surrogate half (which no
    output encoding can write) makes that impossible."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text
