"""The compiled runtime's awaitable send path behaves exactly as python-statemachine's async
engine, on every differential chart made async.

Each chart gets an ``async def after_transition``, or ``on_enter_state`` (the rest of its
callbacks stay synchronous, as users mix them), which puts python-statemachine on its async
engine and the compiled chart on its awaitable instance class. The same Hypothesis sequences as the
synchronous differential test run on both inside one event loop; after every event the test
asserts the same configuration, exception (type and message), callback log and applied or
ignored decision, and what the outcome says (``check_outcome``).
"""

# Rules checked here (docs/spec.md): C3, C5, C21.

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statemachine import StateChart

from statecharts import compile_chart

from .charts import DIFFERENTIAL, HIERARCHICAL, VARIANTS, Logging, note
from .test_differential import Watcher, check_outcome, steps

#: Every chart with the shared logging callbacks (``strict`` declares none of its own).
CHARTS = {
    name: entry
    for name, entry in {**DIFFERENTIAL, **HIERARCHICAL, **VARIANTS}.items()
    if issubclass(entry[0], Logging)
}


def awaited(chart: type[StateChart[Any]], callback: str) -> type[StateChart[Any]]:
    """The chart with one of its shared logging callbacks made a coroutine function."""
    logged = "state" if callback.endswith("_state") else None

    async def awaiting(self: Any, event: Any, source: Any, **kw: Any) -> None:
        await asyncio.sleep(0)
        state, target = kw.pop("state", None), kw.pop("target", None)
        if callback == "after_transition":
            note(self.model, callback, event, state, source, kwargs=kw)
        elif logged:
            note(self.model, callback, event, state, source, target, kwargs=kw)
        else:
            note(self.model, callback, event, None, source, target, kwargs=kw)

    awaiting.__name__ = callback
    return type(f"{chart.__name__}Async", (chart,), {callback: awaiting})


#: Which callback is awaited: an ``after`` (run once the transition is taken) or an
#: ``enter`` (run while the configuration changes, entering compound and parallel states).
AWAITED = {
    f"{name}-{callback}": (awaited(declared, callback), *rest)
    for name, (declared, *rest) in CHARTS.items()
    for callback in ("after_transition", "on_enter_state")
}


async def outcome_of(action: Any) -> tuple[Any, Any]:
    try:
        return await action(), None
    except Exception as error:
        return None, (type(error).__name__, str(error))


#: A callback of these charts calls ``self.send`` without awaiting it (written for the
#: synchronous engine): python-statemachine's async engine then leaves a coroutine unawaited,
#: and Python warns when it is collected.
UNAWAITED = "ignore:coroutine 'AsyncEngine.processing_loop' was never awaited"


@pytest.mark.filterwarnings(UNAWAITED)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("name", sorted(AWAITED))
# each example runs two event loops' worth of engines: 60 of each of the 56 cases (CI's
# profile asks 400, which made this file a third of the suite's time)
@settings(max_examples=60)
@given(data=st.data())
def test_an_async_chart_runs_as_python_statemachines_async_engine(
    name: str, data: st.DataObject
) -> None:
    declared, model_type, events = AWAITED[name]
    chart = compile_chart(declared)
    script = data.draw(steps(events))

    async def scenario() -> None:
        reference_model, compiled_model = model_type(), model_type()
        watcher = Watcher()
        reference = declared(reference_model, listeners=[watcher])
        instance: Any = chart.create(compiled_model)
        _, reference_error = await outcome_of(reference.activate_initial_state)
        _, compiled_error = await outcome_of(instance.activate_initial_state)
        assert compiled_error == reference_error
        assert compiled_model.log == reference_model.log
        assert [s.id for s in reference.configuration] == [s.id for s in instance.configuration]
        for step in script:
            if step[0] == "flip":
                for model in (reference_model, compiled_model):
                    setattr(model, step[1], not getattr(model, step[1]))
                continue
            _, event, args, kwargs = step
            watcher.taken.clear()
            _, reference_error = await outcome_of(
                lambda e=event, a=args, k=kwargs: reference.send(e, *a, **k)
            )
            outcome, compiled_error = await outcome_of(
                lambda e=event, a=args, k=kwargs: instance.send(e, *a, **k)
            )
            assert compiled_error == reference_error, (event, args, kwargs)
            assert [s.id for s in reference.configuration] == [
                s.id for s in instance.configuration
            ]
            assert compiled_model.log == reference_model.log
            assert instance.is_terminated == reference.is_terminated
            if reference_error is None:
                assert outcome.applied == watcher.took(event, kwargs), (event, args, kwargs)
                check_outcome(chart, outcome, event, instance)

    asyncio.run(scenario())
