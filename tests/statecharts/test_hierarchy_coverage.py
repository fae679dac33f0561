"""Coverage and paths of hierarchical charts: the initial transitions the runtime really takes,
the states really entered, history states, and events ignored in parallel configurations."""

# Rules checked here (docs/spec.md): M3, M5, D6.

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from statemachine import HistoryState, State, StateChart

from statecharts import Chart, Coverage, compile_chart
from statecharts._coverage import exercised
from statecharts._diagram import diagram_of, dot_source
from statecharts._report import ChartSummary
from statecharts.testing import explore, record_coverage, transition_cover


class Oven(StateChart):  # type: ignore[type-arg]
    off = State(initial=True)

    class heating(State.Compound):
        warm = State(initial=True)
        hot = State()

        up = warm.to(hot)

    heat = off.to(heating)
    blast = off.to(heating.hot)
    stop = heating.to(off)


class Panel(StateChart):  # type: ignore[type-arg]
    off = State(initial=True)

    class on(State.Parallel):
        class left(State.Compound):
            l1 = State(initial=True)
            l2 = State()

        class right(State.Compound):
            r1 = State(initial=True)
            r2 = State()

    power = off.to(on)
    tick = on.left.l1.to(on.left.l2)
    aim = off.to(on.right.r2)  # the right region entered explicitly, the left by default
    reset = on.to(off)


class Radio(StateChart):  # type: ignore[type-arg]
    """A shallow history with a default transition."""

    off = State(initial=True)

    class on(State.Compound):
        fm = State(initial=True)

        class am(State.Compound):
            long = State(initial=True)
            short = State()

            band = long.to(short)

        h = HistoryState()
        h.to(am)
        switch = fm.to(am)

    mute = on.to(off)
    unmute = off.to(on.h)
    power = off.to(on)


class Stereo(StateChart):  # type: ignore[type-arg]
    """A compound initial state holding a compound initial state."""

    class on(State.Compound):
        class tape(State.Compound):
            play = State(initial=True)
            rewind = State()

            back = play.to(rewind)

        cd = State()
        eject = tape.to(cd)

    off = State(final=True)
    stop = on.to(off)


OVEN, PANEL, RADIO = compile_chart(Oven), compile_chart(Panel), compile_chart(Radio)
STEREO = compile_chart(Stereo)


def recorded(chart: Chart, *events: str) -> ChartSummary:
    coverage = Coverage()
    with record_coverage(coverage):
        instance = chart.create()
        for event in events:
            instance.send(event)
    return ChartSummary.of(chart, coverage.charts[chart.qualname])


def ids(transitions: object) -> list[str]:
    return [t.id for t in transitions]  # type: ignore[attr-defined]


def test_M3_entering_a_compound_state_by_default_takes_its_initial_transition() -> None:
    outcome = OVEN.create().send("heat")
    assert ids(outcome.transitions) == ["off:heat:heating", "heating::warm"]
    assert outcome.transition is not None
    assert outcome.transition.id == "off:heat:heating"


def test_M3_a_transition_straight_into_a_deeper_child_takes_no_initial_transition() -> None:
    assert ids(OVEN.create().send("blast").transitions) == ["off:blast:hot"]
    summary = recorded(OVEN, "blast", "stop")
    assert summary.taken["heating::warm"] == 0
    assert summary.entered == {"off": True, "heating": True, "warm": False, "hot": True}


def test_M3_a_parallel_state_takes_the_initial_transitions_of_regions_entered_by_default() -> None:
    outcome = PANEL.create().send("aim")
    assert ids(outcome.transitions) == ["off:aim:r2", "on::left", "left::l1"]
    summary = recorded(PANEL, "aim")
    assert summary.taken["on::right"] == summary.taken["right::r1"] == 0
    assert not summary.entered["r1"]


def test_M3_an_initial_compound_state_counts_its_start_transitions_once() -> None:
    assert ids(STEREO.start_transitions()) == ["on::tape", "tape::play"]
    summary = recorded(STEREO, "back", "eject")
    assert summary.taken["on::tape"] == summary.taken["tape::play"] == 1
    assert summary.entered == {
        "on": True,
        "tape": True,
        "play": True,
        "rewind": True,
        "cd": True,
        "off": False,
    }


def test_M3_a_history_default_transition_counts_when_it_runs() -> None:
    radio = RADIO.create()
    assert ids(radio.send("unmute").transitions) == ["off:unmute:h", "h::am", "am::long"]
    radio.send("band")
    radio.send("mute")
    restored = radio.send("unmute")  # the history recorded am: am is entered by default
    assert ids(restored.transitions) == ["off:unmute:h", "am::long"]
    assert [state.id for state in radio.configuration] == ["on", "am", "long"]


def test_M3_an_event_ignored_in_a_parallel_configuration_counts_for_every_region() -> None:
    coverage = Coverage()
    with record_coverage(coverage):
        panel = PANEL.create()
        panel.send("power")
        panel.send("power")  # declared, no transition from l1 nor r1
        panel.send("tick")
        panel.send("nothing")  # undeclared
    counts = coverage.charts[PANEL.qualname]
    assert counts.ignored == {
        "l1": {"power": 1},
        "r1": {"power": 1, "nothing": 1},
        "l2": {"nothing": 1},
    }
    assert counts.ignored_total() == 4


def test_M3_an_event_ignored_in_a_flat_configuration_counts_once() -> None:
    coverage = Coverage()
    with record_coverage(coverage):
        OVEN.create().send("stop")
    assert coverage.charts[OVEN.qualname].ignored == {"off": {"stop": 1}}


CHARTS = {
    "oven": (OVEN, Oven),
    "panel": (PANEL, Panel),
    "radio": (RADIO, Radio),
    "stereo": (STEREO, Stereo),
}


@settings(max_examples=60, deadline=None, database=None)
@given(
    st.sampled_from(sorted(CHARTS)).flatmap(
        lambda name: st.tuples(
            st.just(name),
            st.lists(st.sampled_from([e.id for e in CHARTS[name][0].events]), max_size=8),
        )
    )
)
def test_M3_coverage_says_entered_exactly_the_states_a_run_was_in(
    run: tuple[str, list[str]],
) -> None:
    """Against a plain model: the states python-statemachine's own engine was in over the run
    (its configuration after creation and after every event) are exactly those the coverage
    calls entered, with the history states transitions went into; an initial transition
    counted as taken always leads into a state the run was in."""
    name, events = run
    chart, cls = CHARTS[name]
    coverage = Coverage()
    with record_coverage(coverage):
        instance = chart.create()
        for event in events:
            instance.send(event)
    reference = cls()
    seen = {state.id for state in reference.configuration}
    for event in events:
        reference.send(event)
        seen |= {state.id for state in reference.configuration}
    counts = coverage.charts.get(chart.qualname)
    if counts is None:  # nothing sent: nothing recorded
        assert events == []
        return
    taken, reached = exercised(chart, counts)
    histories = {
        target
        for t in chart.transitions
        if taken[t.id]
        for target in t.targets
        if chart.state(target).kind.endswith("_history")
    }
    assert reached == seen | histories
    for transition in chart.transitions:
        if transition.initial and taken[transition.id]:
            assert set(transition.targets) <= seen, transition.id


def test_M5_the_cover_of_hierarchical_charts_takes_every_transition() -> None:
    for chart in (OVEN, PANEL, RADIO, STEREO):
        found = explore(chart)
        assert found.unreached_states == ()
        assert found.untaken_transitions == ()
        paths = transition_cover(chart)
        assert set().union(*(path.transitions for path in paths)) == {
            t.id for t in chart.transitions
        }


def test_M5_a_history_state_is_reached_by_the_path_into_it() -> None:
    found = explore(RADIO)
    assert found.to_state["h"].events == ("unmute",)


def test_D6_the_initial_arrow_of_a_compound_state_has_an_id_of_its_own() -> None:
    """Each compound state's initial arrow has an id (reports link to it, coverage marks
    it), and no two shapes of the diagram share an id (a compound initial state included)."""
    dot = dot_source(diagram_of(STEREO))
    assert 'id="initial:tape"' in dot
    assert 'id="initial:play"' in dot
    shape_ids = re.findall(r'\bid="([^"]+)"', dot)
    assert len(shape_ids) == len(set(shape_ids)), sorted(shape_ids)
