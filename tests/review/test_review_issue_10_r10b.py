"""Review round 10 (second part) of issue 10: the node modes of b514b1f/63581d5 (a top-level
parallel state stops the machine at the end of the macrostep that completed it) and the
returned-awaitable refusal of 0b70c8a, attacked against python-statemachine 3.2's engines.

What held: the completing final state's ``enter``/``after`` raising an ``Exception`` or a
``BaseException`` at each position (sync and async, StateChart and StateMachine, regions
completed one by one or together by a multi-target transition), done.state.<parallel>
transitions leaving, re-entering it or going to another complete parallel state, targetless
transitions while pending, internal events and eventless transitions after completion,
strict charts, nested parallels, parallels in compound states with deep history, history
states re-entering final regions, delayed events dropped at the stop; callbacks held by the
model, naming conventions, ``prepare_event`` charts, generic ``on_transition``.

The breaks:

1. C19 -- ``Chart.restore`` gives a snapshot's node mode ``None`` ("at rest"), so every
   restored configuration whose top-level parallel state has all regions final is stopped.
   python-statemachine stops only when a final-state entry set its pending flag: a top-level
   parallel completed last by a *nested* parallel region (no exception anywhere), or left
   complete by a ``BaseException`` in the completing ``enter``, runs on; after a failed
   completing macrostep it stops only at the end of the next one. The original instance
   continues as python-statemachine does (``leave`` taken / dropped quietly); the restored
   one is terminated at once (``is_terminated`` true, ``leave`` ignored, a strict chart
   raising ``TransitionNotAllowed`` for the first ``leave``).
2. C10/C15 -- ``Chart.resume("f1")`` into a configuration python-statemachine's
   ``start_value="f1"`` enters with a complete top-level parallel state (the other region's
   initial state is final): python-statemachine is terminated at once (``is_terminated``
   true; a ``StateMachine`` raises ``TransitionNotAllowed`` for the next event); the compiled
   instance is left PENDING: ``is_terminated`` false, and the next event is dropped quietly.
3. C15 -- a ``StateMachine`` (atomic configuration updates, errors not caught) whose
   top-level parallel ``P`` is complete but running (completed last by its nested parallel
   region ``q``) takes a multi-target transition re-entering all of P's final states; the
   first final entered sets python-statemachine's pending flag, a later ``enter`` raises
   ``ValueError`` and the configuration is restored (still complete). python-statemachine
   keeps the flag, so the next ``send`` stops the machine in ``P`` (``leave`` dropped; the
   async engine refuses it); the compiled ``restore_node`` is RUNNING and ``leave`` is taken
   to ``other``. Sync and async.
4. C21 -- the ``on`` callback of a compound state's declared initial transition is part of
   the microstep's result in python-statemachine (``_enter_states`` adds it): entering the
   compound state by default, with no other ``before``/``on`` callback, the event's only
   result is that coroutine and python-statemachine's ``send`` runs it; the compiled chart
   counts the event's transitions only, neither runs nor refuses it (dropped unawaited).
5. C21 -- with ``catch_errors_as_events``, an ``on`` callback that raises is left out of the
   results (``CallbacksExecutor.call`` with ``on_error``): ``on=["act", "bad"]`` with ``bad``
   raising leaves ``act``'s coroutine the event's only result, which python-statemachine's
   ``send`` runs; the compiled chart counts two callbacks, so it neither runs nor refuses it
   (dropped unawaited). Compound, parallel (one region's action raising) and flat charts.

Over-refusals noticed (acceptable, not tested as breaks): a plain callback returning an
awaitable as the only ``on`` of an internal event (``raise_``) or of a ``done.state`` event,
or of an external event queued by a callback of an event that took a transition, is refused
by the compiled chart although python-statemachine's ``send`` never returns (nor runs) it.

Rules checked here (docs/spec.md): C10, C15, C19, C21.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from typing import Any

import pytest
from statemachine import State, StateChart, StateMachine
from statemachine.exceptions import TransitionNotAllowed

from statecharts import UnsupportedChart, compile_chart


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


# -- 1. a restored snapshot of a complete top-level parallel state that had not stopped -----


class NestedLast(StateChart[Any]):
    """The top-level parallel ``P`` has a compound region ``r1`` and a parallel region ``q``.
    Completing ``q`` last (``gin2``) completes ``P``, but python-statemachine sets its
    pending flag only for a final state whose grandparent is top-level: it runs on."""

    class P(State.Parallel):
        class r1(State.Compound):
            a1 = State(initial=True)
            f1 = State(final=True)
            fin1 = a1.to(f1)

        class q(State.Parallel):
            class s1(State.Compound):
                b1 = State(initial=True)
                g1 = State(final=True)
                gin1 = b1.to(g1)

            class s2(State.Compound):
                b2 = State(initial=True)
                g2 = State(final=True)
                gin2 = b2.to(g2)

    other = State(final=True)
    leave = P.to(other)


class Once:
    def __init__(self) -> None:
        self.armed = True


class Interrupted(StateChart[Once]):
    """The ``enter`` of ``f2``, completing the top-level parallel ``p``, raises
    ``KeyboardInterrupt`` once: python-statemachine never sets its pending flag."""

    class p(State.Parallel):
        class r1(State.Compound):
            a1 = State(initial=True)
            f1 = State(final=True)
            fin1 = a1.to(f1)

        class r2(State.Compound):
            a2 = State(initial=True)
            f2 = State(final=True)
            fin2 = a2.to(f2)

    other = State(final=True)
    leave = p.to(other)

    def on_enter_f2(self) -> None:
        if self.model.armed:
            self.model.armed = False
            raise KeyboardInterrupt


class StrictAfter(StateMachine):
    """A strict chart whose ``after`` callback of ``fin2`` (completing ``p``) raises: the
    macrostep fails; python-statemachine stops at the end of the next one."""

    class p(State.Parallel):
        class r1(State.Compound):
            a1 = State(initial=True)
            f1 = State(final=True)
            fin1 = a1.to(f1)

        class r2(State.Compound):
            a2 = State(initial=True)
            f2 = State(final=True)
            fin2 = a2.to(f2, after="boom")

    other = State(final=True)
    leave = p.to(other)

    def boom(self) -> None:
        raise ValueError("boom")


def _disarmed() -> Once:
    model = Once()
    model.armed = False
    return model


#: the chart, the events reaching the complete parallel state, and whether it takes a model
#: (the restored instance gets one already disarmed)
SNAPSHOT_CASES: dict[str, tuple[Any, list[str], bool]] = {
    "nested-region-last": (NestedLast, ["gin1", "fin1", "gin2"], False),
    "base-exception": (Interrupted, ["fin1", "fin2"], True),
    "failed-macrostep": (StrictAfter, ["fin1", "fin2"], False),
}


def _reach(machine: Any, events: list[str]) -> Any:
    for event in events:
        with contextlib.suppress(KeyboardInterrupt, ValueError):
            machine.send(event)
    return machine


def _continue(machine: Any) -> list[Any]:
    seen: list[Any] = [machine.is_terminated]
    for _ in range(2):
        try:
            machine.send("leave")
            seen.append("sent")
        except TransitionNotAllowed:
            seen.append("refused")
        seen.append((ids(machine), machine.is_terminated))
    return seen


@pytest.mark.parametrize("case", sorted(SNAPSHOT_CASES))
def test_c19_a_restored_complete_parallel_continues_as_the_original_and_psm(case: str) -> None:
    """python-statemachine, and the compiled instance the snapshot was taken of, are not
    terminated there and take (or drop quietly) ``leave``; the restored instance is
    terminated at once."""
    declared, events, with_model = SNAPSHOT_CASES[case]
    args: tuple[Any, ...] = (Once(),) if with_model else ()
    expected = _continue(_reach(declared(*args), events))
    assert expected[0] is False

    chart = compile_chart(declared)
    args = (Once(),) if with_model else ()
    original = _reach(chart.create(*args), events)
    restored = chart.restore(original.snapshot(), _disarmed() if with_model else None)
    assert _continue(original) == expected
    assert _continue(restored) == expected


# -- 2. resume into a complete top-level parallel state --------------------------------------


class ResumedComplete(StateMachine):
    """The region ``r2`` starts in its final state: ``start_value="f1"`` (``resume("f1")``)
    is a configuration whose top-level parallel state ``p`` is complete."""

    class p(State.Parallel):
        class r1(State.Compound):
            a1 = State(initial=True)
            f1 = State(final=True)
            fin1 = a1.to(f1)

        class r2(State.Compound):
            f2 = State(final=True, initial=True)

    other = State(final=True)
    leave = p.to(other)


def _after_start(machine: Any) -> list[Any]:
    seen: list[Any] = [ids(machine), machine.is_terminated]
    try:
        machine.send("leave")
        seen.append("sent")
    except TransitionNotAllowed:
        seen.append("refused")
    return [*seen, ids(machine), machine.is_terminated]


def test_c10_resume_into_a_complete_top_level_parallel_is_terminated_as_start_value_is() -> None:
    """python-statemachine's ``start_value="f1"`` enters ``p`` complete and stops at once
    (terminated; the strict chart refuses ``leave``); the resumed compiled instance is not
    terminated and drops ``leave`` quietly."""
    reference = _after_start(ResumedComplete(start_value="f1"))
    complete = ["f1", "f2", "p", "r1", "r2"]
    assert reference == [complete, True, "refused", complete, True]
    assert _after_start(compile_chart(ResumedComplete).resume("f1")) == reference


# -- 3. a failed microstep that set the pending flag, its configuration restored complete ----


class Entries:
    def __init__(self) -> None:
        self.g2 = 0


class RedoFails(StateMachine):
    """``P`` completed last by its nested parallel ``q`` (running, as python-statemachine
    leaves it); ``redo`` re-enters all of P's final states in one microstep (multi-target),
    the second ``enter`` of ``g2`` raising ``ValueError``."""

    class P(State.Parallel):
        class r1(State.Compound):
            a1 = State(initial=True)
            f1 = State(final=True)
            fin1 = a1.to(f1)

        class q(State.Parallel):
            class s1(State.Compound):
                b1 = State(initial=True)
                g1 = State(final=True)
                gin1 = b1.to(g1)

            class s2(State.Compound):
                b2 = State(initial=True)
                g2 = State(final=True)
                gin2 = b2.to(g2)

    other = State(final=True)
    leave = P.to(other)
    redo = P.to([P.r1.f1, P.q.s1.g1, P.q.s2.g2])

    def on_enter_g2(self) -> None:
        self.model.g2 += 1
        if self.model.g2 == 2:
            raise ValueError("second")


class RedoFailsAsync(RedoFails):
    async def on_enter_f1(self) -> None:
        pass


EVENTS = ["gin1", "fin1", "gin2", "redo", "leave", "leave"]


def _redo_sync(make: Any) -> list[Any]:
    machine = make(Entries())
    seen: list[Any] = []
    for event in EVENTS:
        try:
            machine.send(event)
            seen.append(event)
        except (ValueError, TransitionNotAllowed) as error:
            seen.append(f"{event}: {type(error).__name__}")
        seen.append((ids(machine), machine.is_terminated))
    return seen


def _redo_async(make: Any) -> list[Any]:
    async def scenario() -> list[Any]:
        machine = make(Entries())
        await machine.activate_initial_state()
        seen: list[Any] = []
        for event in EVENTS:
            try:
                await machine.send(event)
                seen.append(event)
            except (ValueError, TransitionNotAllowed) as error:
                seen.append(f"{event}: {type(error).__name__}")
            seen.append((ids(machine), machine.is_terminated))
        return seen

    return asyncio.run(scenario())


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_c15_a_failed_microstep_that_completed_the_parallel_again_stops_the_next_macrostep(
    variant: str,
) -> None:
    """python-statemachine keeps ``_root_parallel_final_pending`` across the failed ``redo``
    (its configuration restored, ``P`` still complete): the next ``send`` stops it in ``P``
    and ``leave`` is never taken. The compiled instance takes ``leave`` to ``other``."""
    declared, scenario = (
        (RedoFails, _redo_sync) if variant == "sync" else (RedoFailsAsync, _redo_async)
    )
    reference = scenario(declared)
    complete = ["P", "f1", "g1", "g2", "q", "r1", "s1", "s2"]
    assert reference[7] == (complete, False)  # after the failed redo
    assert reference[9] == (complete, True)  # stopped by the next send, leave not taken
    assert scenario(compile_chart(declared).create) == reference


# -- 4./5. an awaitable that is the only result python-statemachine's send sees ---------------

LOG: list[str] = []


def coroutine(tag: str) -> Any:
    async def body() -> str:
        LOG.append(tag)
        return tag

    return body()


class InitialAction(StateChart[Any]):
    """``go`` enters ``work`` by default; its declared initial transition has an action."""

    idle = State(initial=True)

    class work(State.Compound):
        a = State()
        b = State()
        hop = a.to(b)

    work.to(work.a, initial=True, on="act")
    go = idle.to(work)
    leave = work.to(idle)

    def act(self) -> Any:
        return coroutine("act ran")


class FailingSibling(StateChart[Any]):
    """``go``'s actions: ``act`` returns a coroutine, ``bad`` raises (caught as an event)."""

    class work(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on=["act", "bad"])
        back = b.to(a)

    def act(self) -> Any:
        return coroutine("act ran")

    def bad(self) -> None:
        raise ValueError("bad")


class FailingRegion(StateChart[Any]):
    """``go`` is taken in both regions: the first's action returns a coroutine, the
    second's raises (caught as an event)."""

    class both(State.Parallel):
        class left(State.Compound):
            a = State(initial=True)
            b = State()
            go = a.to(b, on="act") | b.to(a, on="act")

        class right(State.Compound):
            c = State(initial=True)
            d = State()
            go_right = c.to(d, event="go", on="bad") | d.to(c, event="go", on="bad")

    def act(self) -> Any:
        return coroutine("act ran")

    def bad(self) -> None:
        raise ValueError("bad")


class FailingSiblingFlat(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, on=["act", "bad"])
    back = b.to(a)

    def act(self) -> Any:
        return coroutine("act ran")

    def bad(self) -> None:
        raise ValueError("bad")


@pytest.mark.parametrize(
    "declared", [InitialAction, FailingSibling, FailingRegion, FailingSiblingFlat]
)
def test_c21_the_only_awaitable_result_psm_runs_is_run_or_refused_never_dropped(
    declared: type[StateChart[Any]],
) -> None:
    """python-statemachine's ``send`` gets one result, the coroutine, and runs it; the
    compiled chart must refuse the event (``UnsupportedChart``) rather than drop the
    coroutine unawaited."""
    LOG.clear()
    reference = declared()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert reference.send("go") == "act ran"
    assert LOG == ["act ran"]

    LOG.clear()
    instance = compile_chart(declared).create()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            instance.send("go")
        except UnsupportedChart:
            return
    assert LOG == ["act ran"], "the coroutine python-statemachine runs was dropped"
