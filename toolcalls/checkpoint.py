"""Where session checkpoints live, so a stream can move to another process.

``Checkpoints(store, key)`` saves one stream's ``ToolCallSession.checkpoint()`` under ``key``
and resumes it elsewhere. Every save carries the version it expects to replace, so exactly
one process owns a stream: resuming first *claims* the checkpoint (a save of its own), and a
process that was superseded (it was thought dead, or two resumed at once) gets
``CheckpointConflict`` instead of writing, and before running any call. The resume rule for
calls that were executing is ``ToolCallSession.resume``'s.

A store is two operations, ``load`` and a versioned ``save`` (``CheckpointStore``):
``MemoryStore`` (one process, for tests and development) and ``RedisStore`` (needs the ``ray``
extra's ``redis`` client and a Redis server).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Collection, Mapping
from typing import Any, Protocol, runtime_checkable

from ._errors import CheckpointConflict, CheckpointError
from ._runner import Runner
from ._session import ToolCallSession
from ._tools import Tool, ToolFunction

__all__ = ["CheckpointStore", "Checkpoints", "MemoryStore", "RedisStore"]


@runtime_checkable
class CheckpointStore(Protocol):
    """Versioned text under keys: version 0 means absent, each save adds one."""

    async def load(self, key: str) -> tuple[int, str] | None:
        """``(version, data)`` saved under ``key``, or ``None``."""

    async def save(self, key: str, data: str, expected: int) -> int:
        """Store ``data`` if ``key`` is at version ``expected``; return the new version, or
        raise ``CheckpointConflict`` (and write nothing)."""


class MemoryStore:
    """A ``CheckpointStore`` in this process's memory (thread-safe)."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()

    async def load(self, key: str) -> tuple[int, str] | None:
        """``(version, data)`` under ``key``, or ``None``."""
        with self._lock:
            return self._items.get(key)

    async def save(self, key: str, data: str, expected: int) -> int:
        """Compare-and-set by version."""
        with self._lock:
            found = self._items.get(key, (0, ""))[0]
            if found != expected:
                raise CheckpointConflict(key, expected, found)
            self._items[key] = (found + 1, data)
            return found + 1


_SAVE = """
local found = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if found ~= tonumber(ARGV[1]) then return {0, found} end
redis.call('HSET', KEYS[1], 'version', found + 1, 'data', ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return {1, found + 1}
"""


class RedisStore:
    """A ``CheckpointStore`` in Redis: one hash per key (``version``, ``data``), saved by a
    server-side script so the version check and the write are one atomic step.

    ``url`` is a Redis URL (``redis://127.0.0.1:6379/0``); ``prefix`` is put before every key;
    ``ttl`` (seconds) lets Redis forget a stream nobody saved for that long.
    """

    def __init__(self, url: str, *, prefix: str = "toolcalls:", ttl: int | None = None) -> None:
        try:
            import redis.asyncio
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise ModuleNotFoundError(
                "RedisStore needs the redis client: pip install 'toolcalls[ray]'", name=exc.name
            ) from exc
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 1):
            raise ValueError(f"ttl must be None or an int >= 1 (seconds), not {ttl!r}")
        self.prefix = prefix
        self.ttl = ttl
        self._client: Any = redis.asyncio.Redis.from_url(url, decode_responses=True)
        self._script: Any = self._client.register_script(_SAVE)

    async def load(self, key: str) -> tuple[int, str] | None:
        """``(version, data)`` under ``key``, or ``None``."""
        version, data = await self._client.hmget(self.prefix + key, ["version", "data"])
        return None if version is None else (int(version), data)

    async def save(self, key: str, data: str, expected: int) -> int:
        """Compare-and-set by version, atomically on the server."""
        done, version = await self._script(
            keys=[self.prefix + key], args=[expected, data, self.ttl or 0]
        )
        if not done:
            raise CheckpointConflict(key, expected, int(version))
        return int(version)

    async def aclose(self) -> None:
        """Close the connections."""
        await self._client.aclose()


class Checkpoints:
    """One stream's checkpoints in ``store`` under ``key``, owned by this process.

    ``save(session)`` writes the session's checkpoint over the version this process last
    wrote or claimed; ``resume(tools, ...)`` claims the stored checkpoint, then continues it
    as ``ToolCallSession.resume`` does. Both raise ``CheckpointConflict`` when another process
    got there first.
    """

    def __init__(self, store: CheckpointStore, key: str) -> None:
        self.store = store
        self.key = key
        self.version = 0
        self._saving = asyncio.Lock()  # this process's saves, one at a time

    async def save(self, session: ToolCallSession, position: Any = None) -> int:
        """Save the session's checkpoint (with your ``position``); return the new version.
        Saves from several tasks of this process wait for each other (each writes the state
        of its own moment); only another process's save or resume makes one conflict."""
        async with self._saving:
            data = json.dumps(session.checkpoint(position), allow_nan=False, separators=(",", ":"))
            self.version = await self.store.save(self.key, data, self.version)
            return self.version

    async def resume(
        self,
        tools: Mapping[str, ToolFunction | Tool],
        *,
        rerun: Collection[str] = (),
        max_concurrency: int | None = None,
        runner: Runner | None = None,
    ) -> ToolCallSession | None:
        """Claim the stored checkpoint and continue it (``None`` if nothing is stored).

        The checkpoint is checked (``CheckpointError`` when damaged, before anything is
        written), then claimed by saving the resumed session's own checkpoint (interrupted
        calls recorded as such, the calls to run as executing here), and only then are calls
        started: two processes resuming one checkpoint never both run its calls.
        """
        loaded = await self.store.load(self.key)
        if loaded is None:
            return None
        version, data = loaded
        try:
            checkpoint = json.loads(data)
        except ValueError as error:
            raise CheckpointError("checkpoint", f"not JSON ({error})") from None
        except RecursionError:
            raise CheckpointError("checkpoint", "nests too deeply to be read") from None
        # Everything is checked before the claim (a damaged checkpoint must not fence out its
        # live owner), and the claim already records the calls this process will run as
        # executing, so a process resuming after it never runs them too.
        session = ToolCallSession._prepare_resume(
            checkpoint, tools, rerun=rerun, max_concurrency=max_concurrency, runner=runner
        )
        async with self._saving:
            picture = session.checkpoint(session.position)
            claim = json.dumps(picture, allow_nan=False, separators=(",", ":"))
            self.version = await self.store.save(self.key, claim, version)
        session._start_resumed()
        return session
