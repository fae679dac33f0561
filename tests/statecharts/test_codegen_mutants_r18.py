"""Details the mutation sample of ``statecharts/_codegen.py`` (seed 1207) found untested: a
callback's ``True``, ``False`` and ``None`` defaults read as literals in the generated source,
and the refusal of an async ``prepare_event`` a model hands out on a synchronous chart names
where it was found.

Rules checked here (docs/spec.md): C6, C16, C21.
"""

from __future__ import annotations

from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import UnsupportedChart, compile_chart


class Defaults(StateChart[Any]):
    """A chart whose ``on`` callback has keyword defaults of every literal kind."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="note")

    def note(self, on: bool = True, off: bool = False, other: Any = None, count: int = 3) -> None:
        pass


def test_bool_and_none_defaults_are_written_as_literals() -> None:
    source = compile_chart(Defaults).source()
    assert (
        "note(inst, on=kw.get('on', True), off=kw.get('off', False), "
        "other=kw.get('other', None), count=kw.get('count', 3))"
    ) in source
    assert "DEFAULT_" not in source


async def _prepared(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return {}


class HandsOutAsync:
    """A model whose class hands out an async ``prepare_event`` only when it is read."""

    @property
    def prepare_event(self) -> Any:
        return _prepared


class Prepared(StateChart[Any]):
    """A synchronous chart with a ``prepare_event`` (so the model's is read too)."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b)

    def prepare_event(self) -> dict[str, Any]:
        return {}


def test_an_async_prepare_event_a_model_hands_out_is_refused_naming_it() -> None:
    with pytest.raises(UnsupportedChart) as refused:
        compile_chart(Prepared).create(HandsOutAsync())
    assert refused.value.where == "HandsOutAsync.prepare_event"
    assert refused.value.construct == (
        "an async callback only the model instance provides, on a synchronous chart"
    )
