"""A plain (synchronous) callback returning an awaitable, in charts with compound and
parallel states or eventless transitions: python-statemachine's synchronous ``send`` returns
the result of the event's ``before`` and ``on`` callbacks, and when there is exactly one and
it is awaitable, runs it to completion. The compiled ``send`` returns an ``Outcome``, so it
refuses any awaitable a ``before``/``on`` callback (or a compound's initial transition content)
returns (``UnsupportedChart``, naming the callback) instead of dropping the coroutine
unawaited, also where python-statemachine runs none (several results).
(Flat charts: tests/review/test_review_issue_10_r9.py, break 11.)

Rules checked here (docs/spec.md): C21.
"""

from __future__ import annotations

import types
import warnings
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import UnsupportedChart, compile_chart

LOG: list[str] = []


def coroutine(tag: str) -> Any:
    async def body() -> str:
        LOG.append(tag)
        return tag

    return body()


class Returns:
    """The callbacks: ``act`` returns a coroutine, ``other`` another, ``nothing`` None."""

    def act(self) -> Any:
        return coroutine("act ran")

    def other(self) -> Any:
        return coroutine("other ran")

    def nothing(self) -> None:
        return None

    def never(self) -> bool:
        return False


class InCompound(Returns, StateChart[Any]):
    class work(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="act") | b.to(a, on="act")


class BeforeInCompound(Returns, StateChart[Any]):
    class work(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, before="act") | b.to(a, before="act")


class OneRegionActs(Returns, StateChart[Any]):
    """``go`` is taken in both regions; only the first region's transition has an action."""

    class both(State.Parallel):
        class left(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b, on="act") | b.to(a, on="act")

        class right(State.Compound):
            c = State(initial=True)
            d = State()
            go_right = c.to(d, event="go") | d.to(c, event="go")


class EventlessAfter(Returns, StateChart[Any]):
    """``go``'s action returns a coroutine; the eventless transition it leads to has one
    too (not a result of ``send``)."""

    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="act")
    b.to(c, on="other")
    back = c.to(a)


class BothRegionsAct(Returns, StateChart[Any]):
    """``go`` is taken in both regions, each transition with an action: two results."""

    class both(State.Parallel):
        class left(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b, on="act") | b.to(a, on="act")

        class right(State.Compound):
            c = State(initial=True)
            d = State()
            go_right = c.to(d, event="go", on="other") | d.to(c, event="go", on="other")


class ActAndNothing(Returns, StateChart[Any]):
    """One transition with two actions, one returning None: two results."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on=["act", "nothing"]) | b.to(a, on=["act", "nothing"])


def sent(machine: Any) -> list[str]:
    """What ran when ``go`` was sent (coroutines python-statemachine does not run are
    garbage: their "never awaited" warnings are expected)."""
    LOG.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        machine.send("go")
    return list(LOG)


@pytest.mark.parametrize("declared", [InCompound, BeforeInCompound, OneRegionActs, EventlessAfter])
def test_c21_the_event_s_only_result_being_awaitable_is_refused_never_dropped(
    declared: type[StateChart[Any]],
) -> None:
    """python-statemachine runs the coroutine the event's only ``before``/``on`` callback
    returned; the compiled runtime refuses the event with ``UnsupportedChart`` naming the
    callback, and the coroutine is closed, not left unawaited."""
    assert sent(declared()) == ["act ran"]
    instance = compile_chart(declared).create()
    LOG.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a coroutine left unawaited fails
        with pytest.raises(UnsupportedChart, match=r"\.act, when the event runs") as refused:
            instance.send("go")
    assert "returning an awaitable" in str(refused.value)
    assert LOG == []


@pytest.mark.parametrize("declared", [BothRegionsAct, ActAndNothing])
def test_c21_an_awaitable_among_several_results_is_refused_where_psm_runs_none(
    declared: type[StateChart[Any]],
) -> None:
    """With several ``before``/``on`` results python-statemachine's ``send`` returns them as
    a list and runs none (unless all but one failed with errors caught as events, when it
    runs that one: test_review_issue_10_r10b.py); the compiled runtime cannot tell ahead
    which case a run is, so it refuses any awaitable there too, closing it, and never drops
    one silently."""
    assert sent(declared()) == []
    instance = compile_chart(declared).create()
    LOG.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(UnsupportedChart, match=r"\.(act|other), when the event runs"):
            instance.send("go")
    assert LOG == []


class Plain:
    """A value of a class no callback returned before (its awaitability is not known yet)."""


@types.coroutine
def _generator_coroutine() -> Any:
    LOG.append("generator coroutine ran")
    yield


class ReturnsKinds(StateChart[Any]):
    """``go``'s only action returns what the model's ``make`` gives."""

    a = State(initial=True)
    b = State()
    go = a.to(b, on="act") | b.to(a, on="act")

    def act(self) -> Any:
        return self.model.make()


class Maker:
    def __init__(self, make: Any) -> None:
        self.make = make


def _plain_generator() -> Any:
    yield 1


@pytest.mark.parametrize(
    "make", [Plain, _plain_generator], ids=["a-new-class-s-value", "a-plain-generator"]
)
def test_c21_a_value_that_is_not_awaitable_is_returned_as_in_psm(make: Any) -> None:
    """A plain callback returning a value that is no awaitable (of a class never seen before,
    or a plain generator) runs on, the transition taken, as in python-statemachine."""
    for machine in (ReturnsKinds(Maker(make)), compile_chart(ReturnsKinds).create(Maker(make))):
        machine.send("go")
        machine.send("go")
        assert [s.id for s in machine.configuration] == ["a"]


def test_c21_a_generator_based_coroutine_is_refused_every_time() -> None:
    """A generator-based coroutine (``types.coroutine``) is awaitable: refused, with what to
    do about it, each time it is returned (knowing generators are not awaitable in general
    must not let the next one through)."""
    chart = compile_chart(ReturnsKinds)
    for _ in range(2):
        instance = chart.create(Maker(_generator_coroutine))
        with pytest.raises(UnsupportedChart) as refused:
            instance.send("go")
        assert str(refused.value) == (
            "ReturnsKinds: a plain callback returning an awaitable as a before or on result (or "
            "a compound's initial transition content) on a synchronous chart is not supported "
            "by the compiled runtime (ReturnsKinds.act, when the event runs); "
            "python-statemachine's send runs it to completion after the event's run when it is "
            "the event's only result; make the callback async (the chart then runs awaited)"
        )
    assert LOG.count("generator coroutine ran") == 0
