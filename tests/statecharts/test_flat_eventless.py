"""A flat chart with eventless transitions runs on flat generated code: an event's function,
then the eventless transitions of each state it reaches, as python-statemachine's processing
loop takes them (the differential test compares ``Assembly`` with the reference engine)."""

# Rules checked here (docs/spec.md): C3, M1.

from __future__ import annotations

from typing import Any

from statemachine import State, StateChart

from statecharts import Coverage, compile_chart, observe_outcomes
from statecharts._runtime import StatechartInstance
from statecharts.testing import record_coverage
from toolcalls import ToolCallChart, ToolCallTracker
from toolcalls._record import ToolCallModel

from .charts import Assembly, Boom, Recorder, caught

ASSEMBLY = compile_chart(Assembly)
ASSEMBLY_CAUGHT = compile_chart(caught(Assembly))


def ids(transitions: Any) -> list[str]:
    return [transition.id for transition in transitions]


def calls(model: Recorder) -> list[str]:
    return [entry[0] for entry in model.log]


def test_a_flat_chart_with_eventless_transitions_runs_on_flat_generated_code() -> None:
    source = ASSEMBLY.source(Recorder)
    assert "def loaded__eventless(inst, args, kw):" in source
    assert "def idle__load(inst, args, kw):" in source
    assert "_plan(" not in source  # no statechart microstep planning
    assert isinstance(ASSEMBLY.create(Recorder()), StatechartInstance)


def test_the_tool_call_chart_runs_on_flat_generated_code() -> None:
    source = compile_chart(ToolCallChart).source(ToolCallModel)
    assert "def parsing__eventless(inst, args, kw):" in source
    assert "_plan(" not in source


def attempt(send: Any, event: str) -> tuple[str | None, Any]:
    """What sending ``event`` raised (a ``Boom``'s message, or None), and what it returned or
    raised."""
    try:
        return None, send(event)
    except Boom as error:
        return str(error), error


def run_both(
    declared: type[Any],
    events: list[str],
    level: int = 0,
    ready: bool = True,
    locked: bool = False,
) -> tuple[Any, Recorder, list[Any]]:
    """Send ``events`` to a compiled instance and to python-statemachine's engine, models set
    alike; assert both end in the same state having made the same calls; return the compiled
    instance, its model and the outcomes (or the exception raised)."""
    models = []
    for _ in range(2):
        model = Recorder()
        model.level, model.ready, model.locked = level, ready, locked
        models.append(model)
    reference = declared(models[0])
    instance = compile_chart(declared).create(models[1])
    outcomes: list[Any] = []
    for event in events:
        expected, _ = attempt(reference.send, event)
        raised, outcome = attempt(instance.send, event)
        assert raised == expected
        outcomes.append(outcome)
        assert [s.id for s in reference.configuration] == [s.id for s in instance.configuration]
        assert models[1].log == models[0].log
    return instance, models[1], outcomes


def test_an_event_chains_into_the_eventless_transitions_of_each_state_reached() -> None:
    instance, _, (outcome,) = run_both(Assembly, ["load"], level=4)  # 5: nothing raised
    assert instance.state.id == "shipped"
    assert outcome.applied
    assert outcome.event == "load"
    assert outcome.transition is not None
    assert outcome.transition.id == "idle:load:loaded"
    assert ids(outcome.transitions) == [
        "idle:load:loaded",
        "loaded::checked",
        "checked::packed",
        "packed::shipped",
    ]
    assert outcome.target is not None
    assert outcome.target.id == "shipped"
    assert instance.is_terminated


def test_eventless_guards_are_tried_again_before_the_next_event() -> None:
    instance, model, (outcome,) = run_both(Assembly, ["load"], level=4, ready=False)
    assert instance.state.id == "loaded"  # "inspect" said no
    assert ids(outcome.transitions) == ["idle:load:loaded"]
    model.ready = True
    outcome = instance.send("nudge")  # none from loaded: the macrostep before it moves on
    assert instance.state.id == "shipped"
    assert not outcome.applied


def test_observers_see_the_event_then_each_eventless_step() -> None:
    instance = ASSEMBLY.create(Recorder())
    instance.model.level = 4
    seen: list[tuple[str, list[str]]] = []
    with observe_outcomes(
        lambda _, outcome: seen.append((outcome.event, ids(outcome.transitions)))
    ):
        instance.send("load")
    assert seen == [
        ("load", ["idle:load:loaded"]),
        ("", ["loaded::checked"]),
        ("", ["checked::packed"]),
        ("", ["packed::shipped"]),
    ]


def test_coverage_records_every_eventless_transition_once() -> None:
    model = Recorder()
    model.level = 4
    with record_coverage(Coverage()) as coverage:
        ASSEMBLY.create(model).send("load")
    assert coverage.chart(ASSEMBLY).taken == {
        "idle:load:loaded": 1,
        "loaded::checked": 1,
        "checked::packed": 1,
        "packed::shipped": 1,
    }


def test_the_tool_call_trackers_coverage_records_the_parse_step() -> None:
    chart = compile_chart(ToolCallChart)
    with record_coverage(Coverage()) as coverage:
        tracker = ToolCallTracker()
        tracker.apply({"type": "start", "id": "a", "name": "f"})
        tracker.apply({"type": "delta", "id": "a", "argsTextDelta": '{"x": 1}'})
        tracker.apply({"type": "ready", "id": "a"})
        tracker.apply({"type": "start", "id": "b", "name": "f"})
        tracker.apply({"type": "delta", "id": "b", "argsTextDelta": "{"})
        tracker.apply({"type": "ready", "id": "b"})
    taken = coverage.chart(chart).taken
    assert taken["pending:ready:parsing"] == 2
    assert taken["parsing::running"] == 1
    assert taken["parsing::error"] == 1


def test_an_internal_event_raised_in_the_chain_runs_after_the_eventless_transitions() -> None:
    # the load makes level 2: "stamp" (loaded -> checked) raises nudge; the eventless
    # checked -> packed runs first (a macrostep prefers eventless transitions), then nudge, a
    # self-transition of packed that counts, and "level > 2" lets packed -> shipped run
    _instance, model, (outcome,) = run_both(Assembly, ["load"], level=1)
    assert ids(outcome.transitions) == [
        "idle:load:loaded",
        "loaded::checked",
        "checked::packed",
        "packed:nudge:packed",
        "packed::shipped",
    ]
    assert model.level == 3


def test_an_event_sent_from_the_chain_waits_for_the_macrostep_and_is_dropped_at_the_end() -> None:
    seen: list[tuple[str, str | None]] = []
    with observe_outcomes(lambda _, outcome: seen.append((outcome.event, outcome.reason))):
        instance, _model, (outcome,) = run_both(Assembly, ["load"], level=2)  # "wrap" sends
    assert ("back", "queued") in seen
    assert instance.state.id == "shipped"  # final: python-statemachine drops what is queued
    assert ids(outcome.transitions)[-1] == "packed::shipped"
    assert "back" not in [event for event, reason in seen if reason != "queued"]


def test_a_raising_eventless_guard_reaches_the_caller_and_leaves_the_state() -> None:
    instance, model, (error,) = run_both(Assembly, ["load"], locked=True)
    assert isinstance(error, Boom)
    assert str(error) == "inspect"
    assert instance.state.id == "loaded"
    model.locked = False
    model.level = 4
    outcome = instance.send("back")  # nothing was left queued; the guards are tried again
    assert instance.state.id == "shipped"
    assert not outcome.applied


def test_a_raising_eventless_action_reaches_the_caller_and_leaves_the_source() -> None:
    instance, _, (error,) = run_both(Assembly, ["load"], level=0)  # 1: "wrap" raises
    assert isinstance(error, Boom)
    assert str(error) == "wrap"
    assert instance.state.id == "checked"


def test_a_raising_eventless_guard_becomes_error_execution_when_errors_are_events() -> None:
    instance, model, (outcome,) = run_both(caught(Assembly), ["load"], locked=True)
    assert instance.state.id == "faulty"
    assert ids(outcome.transitions) == ["idle:load:loaded", "loaded:error.execution:faulty"]
    # the guard raised once: the error runs before the eventless transitions are tried again
    assert calls(model).count("inspect") == 1


def test_a_raising_eventless_action_becomes_error_execution_when_errors_are_events() -> None:
    instance, model, (outcome,) = run_both(caught(Assembly), ["load"], level=0)
    assert instance.state.id == "faulty"
    assert ids(outcome.transitions) == [
        "idle:load:loaded",
        "loaded::checked",
        "checked::packed",
        "packed:error.execution:faulty",
    ]
    assert "record_error" in calls(model)


def test_the_initial_states_eventless_transitions_run_on_create() -> None:
    class Starter(StateChart[Any]):
        catch_errors_as_events = False
        first = State(initial=True)
        second = State()
        third = State(final=True)
        first.to(second)
        go = second.to(third)

    seen: list[list[str]] = []
    with observe_outcomes(lambda _, outcome: seen.append(ids(outcome.transitions))):
        instance = compile_chart(Starter).create()
    assert instance.state.id == "second"
    assert seen == [["first::second"]]
    assert [s.id for s in Starter().configuration] == ["second"]


def _parse_chart() -> Any:
    """A chart shaped like the tool call chart's parse step (an event, then an eventless
    choice), compiled; each call makes a chart of its own, with its own transitions."""

    class Parse(StateChart):  # type: ignore[misc]
        pending = State(initial=True)
        parsing = State()
        running = State()
        failed = State(final=True)
        ready = pending.to(parsing)
        parsing.to(running, cond="ok")
        parsing.to(failed, unless="ok")
        stop = running.to(failed)

    return compile_chart(Parse)


class _Flag:
    def __init__(self, ok: bool) -> None:
        self.ok = ok


def test_an_event_and_its_eventless_chain_report_every_transition_each_time() -> None:
    """The outcome of an event and the eventless transitions after it is remembered per chain
    (the same few per chart): every send reports the chain it took, for each instance, and two
    charts of the same shape each report their own transitions."""
    first, second = _parse_chart(), _parse_chart()
    for _ in range(3):
        for compiled in (first, second):
            for ok, end in ((True, "running"), (False, "failed")):
                instance = compiled.create(_Flag(ok))
                outcome = instance.send("ready")
                assert outcome.applied
                assert outcome.target is not None
                assert outcome.target.id == end
                assert [f"{t.source}>{t.target}" for t in outcome.transitions] == [
                    "pending>parsing",
                    f"parsing>{end}",
                ]
                own = {id(transition) for transition in compiled.transitions}
                assert {id(transition) for transition in outcome.transitions} <= own
