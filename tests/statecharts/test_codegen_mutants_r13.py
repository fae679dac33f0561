"""Details the mutation sample of ``statecharts/_codegen.py`` (seed 3101) found untested: the
bound on the cache of which result types are awaitable, and how generated code names the
callback a checked result is reported against.

Rules checked here (docs/spec.md): C13, C16, C21.
"""

from __future__ import annotations

from typing import Any

from statemachine import State, StateChart

from statecharts import _codegen as codegen
from statecharts import compile_chart


class Returns(StateChart[Any]):
    """A synchronous chart whose only ``on`` callback returns a value (checked: never an
    awaitable dropped unawaited)."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on="produce") | b.to(a, on="produce")


class Producer:
    def __init__(self) -> None:
        self.kinds = [type(f"Result{number}", (), {}) for number in range(300)]
        self.sent = 0

    def produce(self) -> Any:
        self.sent += 1
        return self.kinds[self.sent % len(self.kinds)]()


def test_c13_the_cache_of_awaitable_result_types_stays_bounded() -> None:
    """Results of 300 types, one new type a call: which types are awaitable is kept for at
    most ``_AWAITS_KEPT`` of them, so a chart returning ever new types holds no more."""
    model = Producer()
    instance = compile_chart(Returns).create(model)
    for _ in range(len(model.kinds) + 5):
        assert instance.send("go").applied
    assert len(codegen._AWAITS) <= codegen._AWAITS_KEPT


def test_c16_a_checked_result_names_its_callback_in_the_source() -> None:
    """The check of a returned value names the callback it reports, written out in the line
    a traceback shows."""
    source = compile_chart(Returns).source(Producer)
    lines = {line.strip() for line in source.splitlines() if "_returned(" in line}
    assert lines
    assert all(line.endswith("_returned(inst, _result, 'Producer.produce')") for line in lines)
