"""``MemoryStore`` against a plain model of a versioned store, under Hypothesis' stateful
testing: saves succeed exactly when they name the current version, a refused save changes
nothing, and a load returns the last accepted save. (``tests/ray`` runs the same machine
against ``RedisStore``.)"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from toolcalls import CheckpointConflict
from toolcalls.checkpoint import CheckpointStore, MemoryStore

KEYS = st.sampled_from(["a", "b", "c"])


class StoreMachine(RuleBasedStateMachine):
    """Subclasses set ``make_store`` (and may clean up in ``teardown``)."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.store: CheckpointStore = self.loop.run_until_complete(self.make_store())
        self.model: dict[str, tuple[int, str]] = {}

    async def make_store(self) -> CheckpointStore:
        return MemoryStore()

    def run(self, awaitable: Any) -> Any:
        return self.loop.run_until_complete(awaitable)

    def version(self, key: str) -> int:
        return self.model.get(key, (0, ""))[0]

    @rule(key=KEYS, data=st.text(max_size=20))
    def save_over_the_current_version(self, key: str, data: str) -> None:
        expected = self.version(key)
        assert self.run(self.store.save(key, data, expected)) == expected + 1
        self.model[key] = (expected + 1, data)

    @rule(key=KEYS, data=st.text(max_size=20), off=st.integers(-3, 3).filter(bool))
    def save_over_a_stale_version_is_refused(self, key: str, data: str, off: int) -> None:
        expected = max(0, self.version(key) + off)
        if expected == self.version(key):
            return
        with pytest.raises(CheckpointConflict) as conflict:
            self.run(self.store.save(key, data, expected))
        assert (conflict.value.expected, conflict.value.found) == (expected, self.version(key))

    @invariant()
    def loads_return_the_last_accepted_save(self) -> None:
        for key in ("a", "b", "c"):
            assert self.run(self.store.load(key)) == self.model.get(key)

    def teardown(self) -> None:
        self.loop.close()


TestMemoryStore = StoreMachine.TestCase
