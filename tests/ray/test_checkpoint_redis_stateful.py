"""The versioned-store machine of ``tests/toolcalls`` against ``RedisStore`` (a fresh key
prefix per example, on the session's Redis server)."""

from __future__ import annotations

import itertools

import pytest

from toolcalls.checkpoint import CheckpointStore, RedisStore

from ..toolcalls.test_checkpoint_store_stateful import StoreMachine

_examples = itertools.count()
_url: list[str] = []


class RedisStoreMachine(StoreMachine):
    async def make_store(self) -> CheckpointStore:
        return RedisStore(_url[0], prefix=f"stateful-{next(_examples)}:")

    def teardown(self) -> None:
        assert isinstance(self.store, RedisStore)
        self.run(self.store.aclose())
        super().teardown()


@pytest.fixture(scope="module", autouse=True)
def _redis(redis_url: str) -> None:
    _url[:] = [redis_url]


TestRedisStore = RedisStoreMachine.TestCase
