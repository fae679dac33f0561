"""Rules of the statechart runtime that a mutation sample of ``statecharts/_runtime.py``
(seed 6421) found untested; each test is named after what a chart author observes and, where
the rule is a semantic one, compares with python-statemachine. (Async charts:
test_runtime_mutants_r7_async.py.)

Rules checked here (docs/spec.md): C4, C8, C11, C20.
"""

from __future__ import annotations

from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import TransitionNotAllowed

from statecharts import compile_chart


def ids(machine: Any) -> list[str]:
    return sorted(state.id for state in machine.configuration)


def test_c20_an_init_that_skips_the_hand_over_is_refused_naming_the_declared_class() -> None:
    """The error names the chart as declared (``Sometimes``), not the compiled instance
    class behind it."""

    class Sometimes(StateChart[Any]):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def __init__(self, start: bool = True) -> None:
            self.started = start
            if start:
                super().__init__()

    chart = compile_chart(Sometimes)
    with pytest.raises(TypeError) as raised:
        chart.create(False)
    assert str(raised.value) == (
        "Sometimes.__init__ returned without calling super().__init__(...), "
        "so no state was entered"
    )


class Preparing:
    """A model with a ``prepare_event`` of its own."""

    def __init__(self) -> None:
        self.log: list[Any] = []
        self.prepared = 0

    def prepare_event(self, event: Any) -> dict[str, Any]:
        self.prepared += 1
        return {"owner": "model", "by_model": str(event)}


class Prepared(StateChart[Preparing]):
    """A chart whose ``prepare_event`` and its model's both add keyword arguments."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    def prepare_event(self, event: Any) -> dict[str, Any]:
        return {"owner": "chart", "by_chart": str(event)}

    def record(self, owner: str, by_chart: str = "-", by_model: str = "-") -> None:
        self.model.log.append((owner, by_chart, by_model))


def test_c8_the_model_s_prepare_event_runs_on_the_model_after_the_chart_s() -> None:
    """Both hooks run, the model's on the model and after the chart's (so its value of a
    keyword both give wins), as in python-statemachine."""
    reference_model, model = Preparing(), Preparing()
    Prepared(reference_model).send("go")
    compile_chart(Prepared).create(model).send("go")
    assert model.log == reference_model.log == [("model", "go", "go")]
    assert model.prepared == reference_model.prepared > 0


class Payload(StateChart[Any]):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="record")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.log: list[Any] = []
        super().__init__(*args, **kwargs)

    def record(self, *args: Any, amount: int = 0) -> None:
        self.log.append((args, amount))


@pytest.mark.parametrize(
    "options", [{"delay": 0}, {"internal": False}, {"delay": 0, "internal": True}]
)
def test_c4_a_send_with_options_that_runs_at_once_keeps_its_positional_payload(
    options: dict[str, Any],
) -> None:
    """``delay=0`` or ``internal=...`` from outside a callback runs the event at once, with
    the positional payload as well as the keywords, as python-statemachine runs it."""
    reference = Payload()
    reference.send("go", 1, 2, amount=3, **options)
    instance: Any = compile_chart(Payload).create()
    instance.send("go", 1, 2, amount=3, **options)
    assert instance.log == reference.log == [((1, 2), 3)]


class StrictWork(StateChart[Any]):
    """A strict hierarchical chart whose transition raises an internal event no guard of the
    new state allows."""

    allow_event_without_transition = False

    class work(State.Compound):
        idle = State(initial=True)
        busy = State()
        start = idle.to(busy, on="nudge")
        poke = busy.to(idle, cond="never")

    done = State(final=True)
    finish = work.to(done)

    def nudge(self) -> None:
        self.raise_("poke")

    def never(self) -> bool:
        return False


def test_c11_a_strict_statechart_drops_a_raised_event_no_transition_allows() -> None:
    """An internal event of a strict chart that no guard lets through is dropped, as
    python-statemachine drops it; the same event sent from outside is refused."""
    reference = StrictWork()
    instance = compile_chart(StrictWork).create()
    reference.send("start")
    outcome = instance.send("start")
    assert outcome.applied
    assert ids(instance) == ids(reference) == ["busy", "work"]
    with pytest.raises(TransitionNotAllowed):
        reference.send("poke")
    with pytest.raises(TransitionNotAllowed):
        instance.send("poke")
    assert ids(instance) == ids(reference) == ["busy", "work"]
