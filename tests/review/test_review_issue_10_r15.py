"""Review round 15 of commits fe62523 and 7523030 (rules C5, C6, C9, C12, C18, C19):

- ``_shadowed`` looks a chart's names up on a model instance with ``object.__getattribute__``;
- ``_vet_own_dict`` refuses a model class defining ``__dict__`` only where an instance could
  shadow a callback of its class;
- ``_new_instance`` (``resume``, ``restore``) sets up ``_prepared`` for charts with a
  ``prepare_event``; ``create``'s direct path never takes them;
- an event declared under a name of python-statemachine's machine API the compiled instance
  lacks gets its event method (``_provided``);
- ``create``'s direct path checks a method shadow inline.

python-statemachine 3.2 (the reference) is the oracle throughout: each test runs a chart on it
and on the compiled runtime and asserts the compiled answer is the reference's (or, where
noted, a refusal, ``UnsupportedChart``, which C6 allows in place of an approximation). The
first part holds the breaks found (each failed on 7523030, fixed since); the second pins
behaviours checked that hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import random
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import InvalidDefinition
from statemachine.io import load

from statecharts import UnsupportedChart, compile_chart

LOG: list[Any] = []


def _ids(machine: Any) -> list[str]:
    return [state.id for state in machine.configuration]


def _chart(namespace: dict[str, Any], name: str = "Named") -> type[StateChart[Any]]:
    return type(StateChart)(name, (StateChart,), dict(namespace))


def _named_event_chart(
    event: str, prepare: bool = False, callback: str | None = None
) -> type[StateChart[Any]]:
    """``a --event--> b --event--> c`` (and ``go``: ``a -> b``); with ``prepare``, a
    ``prepare_event`` of the chart's (every chart python-statemachine's loaders build has
    one)."""
    namespace: dict[str, Any] = {
        "a": State(initial=True),
        "b": State(),
        "c": State(final=True),
    }
    namespace[event] = namespace["a"].to(namespace["b"]) | namespace["b"].to(namespace["c"])
    namespace["go"] = namespace["a"].to(namespace["b"])
    if prepare:

        def prepare_event(self: Any) -> dict[str, Any]:
            return {}

        namespace["prepare_event"] = prepare_event
    if callback is not None:
        namespace["on_go"] = _CALLBACKS[callback]
    return _chart(namespace)


def _on_go_snapshot(self: Any) -> None:
    LOG.append("on_go")
    self.snapshot()


_CALLBACKS: dict[str, Callable[..., Any]] = {"snapshot": _on_go_snapshot}


def _scxml(event: str) -> str:
    return f"""<scxml xmlns="http://www.w3.org/2005/07/scxml" initial="s0" version="1.0"
  datamodel="python" name="Doc">
  <state id="s0"><transition event="{event}" target="s1" /></state>
  <state id="s1"><transition event="{event}" target="s0" /></state>
</scxml>"""


def _quiet(action: Callable[[], Any]) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return action()


class Guarded(StateChart[Any]):
    """A guard the chart provides (``ready``); a model's class lacks it (``chart_only``)."""

    a = State(initial=True)
    b = State()
    go = a.to(b, cond="ready") | b.to(a)

    def ready(self) -> bool:
        return True


class Plain(StateChart[Any]):
    """No callback of the chart's: a model's naming-convention callbacks are its only ones."""

    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)


def _go_outcomes(
    chart: type[StateChart[Any]], models: list[Callable[[], Any]], compiled: bool
) -> list[Any]:
    """For each model made in turn (the second and later of a type: ``create``'s direct
    path), the configuration after one ``go`` and what the callbacks logged, or the error."""
    runtime = compile_chart(chart) if compiled else None
    found: list[Any] = []
    for make in models:
        LOG.clear()
        try:
            model = make()
            machine = runtime.create(model) if runtime is not None else chart(model)
            machine.send("go")
            found.append((_ids(machine), list(LOG)))
        except Exception as error:
            found.append(("raises", type(error).__name__))
    return found


def _same_go(chart: type[StateChart[Any]], models: list[Callable[[], Any]]) -> list[Any]:
    reference = _go_outcomes(chart, models, compiled=False)
    assert _go_outcomes(chart, models, compiled=True) == reference
    return reference


# ============================================================================================
# Breaks (each failed on 7523030; fixed or refused since)
# ============================================================================================


# break 1 (change 4 does not reach charts with a prepare_event): the event method for an
# event named ``name`` or ``id`` is overwritten by the runtime's ``extra["name"] =
# declared.name`` (``extra["id"]``), which for such a chart is the declared ``Event``; read
# through the compiled instance it gives python-statemachine's ``BoundEvent`` bound to it, and
# calling it runs python-statemachine's engine on the compiled instance. python-statemachine
# sends the event (a -> b); compiled: ``TypeError: StatechartInstance._processing_loop()
# missing 1 required positional argument``. Every SCXML, JSON or YAML chart has a
# prepare_event, so an SCXML document with an event "name" or "id" breaks the same way.
@pytest.mark.parametrize("event", ["name", "id"])
def test_c5_an_event_named_name_or_id_on_a_prepare_event_chart_sends_as_psm(event: str) -> None:
    chart = _named_event_chart(event, prepare=True)
    reference = chart()
    getattr(reference, event)()
    assert _ids(reference) == ["b"]
    if event == "name":  # refused since (round 16): executable content reads it as _name
        with pytest.raises(UnsupportedChart, match="event 'name'"):
            compile_chart(chart)
        return
    instance = compile_chart(chart).create()
    getattr(instance, event)()
    assert _ids(instance) == ["b"]


@pytest.mark.parametrize("event", ["name", "id"])
def test_c18_an_scxml_event_named_name_or_id_has_its_event_method_as_in_psm(event: str) -> None:
    def run(compiled: bool) -> Any:
        chart = load(_scxml(event), format="scxml", trusted=True)
        machine = compile_chart(chart).create() if compiled else chart()
        try:
            getattr(machine, event)()
        except Exception as error:
            return ("raises", type(error).__name__)
        return _ids(machine)

    reference = _quiet(lambda: run(False))
    assert reference == ["s1"]
    if event == "name":  # refused since (round 16): executable content reads it as _name
        with pytest.raises(UnsupportedChart, match="event 'name'"):
            run(True)
        return
    assert _quiet(lambda: run(True)) == reference


class SendsByName:
    """A model callback sending the chart's event ``name`` through the machine it gets,
    logging what that raises."""

    def on_enter_b(self, machine: Any) -> None:
        try:
            machine.name()
        except Exception as error:
            LOG.append(type(error).__name__)


# break 1, from a model callback: python-statemachine queues ``name`` (b -> c) and nothing
# raises; compiled, ``BoundEvent.__call__`` queues it through ``_put_nonblocking`` (so the
# instance still reaches c) and then raises TypeError from ``_processing_loop`` into the
# callback (uncaught, it would become an ``error.execution`` event).
def test_c5_a_model_callback_sending_name_on_a_prepare_event_chart_runs_as_psm() -> None:
    chart = _named_event_chart("name", prepare=True)
    LOG.clear()
    reference = chart(SendsByName())
    reference.send("go")
    assert (_ids(reference), LOG) == (["c"], [])
    # refused since (round 16): executable content reads an event named ``name`` as _name
    with pytest.raises(UnsupportedChart, match="event 'name'"):
        compile_chart(chart)


class DictListsGetattrAnswers:
    """A model class defining ``__dict__`` (a property) that lists ``ready``, which only its
    ``__getattr__`` answers: ``dir(model)`` reads ``__dict__`` through the property, so
    python-statemachine finds ``ready`` and reads it (``False``)."""

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        return {"ready": False}

    def __getattr__(self, name: str) -> Any:
        if name == "ready":
            return False
        raise AttributeError(name)


class DictListsConvention:
    """As ``DictListsGetattrAnswers``, for a naming-convention callback (``on_enter_b``)."""

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        return {"on_enter_b": None}

    def __getattr__(self, name: str) -> Any:
        if name == "on_enter_b":
            return lambda: LOG.append("model on_enter_b")
        raise AttributeError(name)


class DictListsUnreadable:
    """A model class defining ``__dict__`` that lists ``ready``, which nothing answers:
    ``dir(model)`` lists it, reading it raises ``AttributeError``."""

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        return {"ready": False}


# break 2 (new in fe62523: refused, UnsupportedChart, on b2972a3): a model class defining
# ``__dict__`` is now admitted when no instance could shadow a callback of its class, and a
# chart name (or a naming-convention callback) it holds is then looked for by
# ``gc.get_referents`` and ``object.__getattribute__``, both reading the instance's real
# dict; python-statemachine's ``dir(model)`` reads ``__dict__`` through the class's own
# property. python-statemachine: the guard is the chart's ``ready`` and the model's
# ``False`` (stays in a), the model's ``on_enter_b`` runs; compiled: the model's are never
# seen (moves to b; nothing logged), first model and later ones alike.
@pytest.mark.parametrize(
    ("chart", "model_type"),
    [(Guarded, DictListsGetattrAnswers), (Plain, DictListsConvention)],
    ids=["chart-name", "convention"],
)
def test_c9_a_model_dict_property_listing_a_name_binds_it_as_psm_or_is_refused(
    chart: type[StateChart[Any]], model_type: type
) -> None:
    reference = _go_outcomes(chart, [model_type, model_type], compiled=False)
    assert reference in (
        [(["a"], []), (["a"], [])],
        [(["b"], ["model on_enter_b"]), (["b"], ["model on_enter_b"])],
    )
    compiled = _go_outcomes(chart, [model_type, model_type], compiled=True)
    assert compiled in (reference, [("raises", "UnsupportedChart")] * 2)


# break 3 (new in fe62523, as break 2): C12 says a name ``dir()`` lists is read when the
# instance is created, raising what reading it raises. python-statemachine: AttributeError
# (``'DictListsUnreadable' object has no attribute 'ready'``); compiled: the chart's guard
# alone runs, the instance moves to b.
def test_c12_a_name_a_dict_property_lists_but_nothing_answers_raises_as_psm() -> None:
    models = [DictListsUnreadable, DictListsUnreadable]
    reference = _go_outcomes(Guarded, models, compiled=False)
    assert reference == [("raises", "AttributeError")] * 2
    compiled = _go_outcomes(Guarded, models, compiled=True)
    assert compiled in (reference, [("raises", "UnsupportedChart")] * 2)


# break 4 (C6; before these commits too): an event named like a part of the compiled
# instance's own API (RUNTIME_NAMES) gets no event method and is not refused: the runtime's
# attribute answers in its place. python-statemachine's class holds the event there, so
# ``machine.snapshot()`` sends ``snapshot`` (a -> b). Compiled: ``snapshot()`` returns a dict
# and nothing moves, ``clock()`` raises TypeError (``None`` is not callable), ``next_due()``
# returns None, ``send()`` and ``raise_()`` and ``cancel_event()`` raise TypeError (missing
# argument), ``is_terminated()``/``chart()`` raise TypeError (not callable).
@pytest.mark.parametrize(
    "event",
    [
        "snapshot",
        "clock",
        "next_due",
        "run_due",
        "send",
        "raise_",
        "cancel_event",
        "is_terminated",
        "chart",
        "configuration_values",
    ],
)
def test_c6_an_event_named_like_the_runtime_api_is_sent_as_psm_or_refused(event: str) -> None:
    chart = _named_event_chart(event)
    reference = chart()
    getattr(reference, event)()
    assert _ids(reference) == ["b"]
    try:
        runtime = compile_chart(chart)
    except UnsupportedChart:
        return
    instance = runtime.create()
    try:
        getattr(instance, event)()
    except Exception as error:
        pytest.fail(f"compiled {event}() raised {type(error).__name__}: {error}")
    assert _ids(instance) == ["b"]


# break 4, from a callback: python-statemachine's ``self.snapshot()`` in ``on_go`` queues the
# event ``snapshot`` (a -> b, then b -> c); the compiled instance takes (or fails to take) a
# snapshot instead, silently: it rests in b.
def test_c6_a_callback_sending_an_event_named_snapshot_runs_as_psm_or_is_refused() -> None:
    chart = _named_event_chart("snapshot", callback="snapshot")
    reference = chart()
    reference.send("go")
    assert _ids(reference) == ["c"]
    try:
        runtime = compile_chart(chart)
    except UnsupportedChart:
        return
    instance = runtime.create()
    instance.send("go")
    assert _ids(instance) == ["c"]


# break 5 (C5; before these commits too): an event named like an attribute
# python-statemachine's machine sets on itself in ``__init__`` (``history_values``,
# ``state_field``): the instance's attribute wins there, a dict or a string, and calling it
# raises TypeError; the compiled instance has an event method under that name and moves.
@pytest.mark.parametrize("event", ["history_values", "state_field"])
def test_c5_an_event_named_like_a_machine_instance_attribute_answers_as_psm(event: str) -> None:
    def run(compiled: bool) -> Any:
        chart = _named_event_chart(event)
        try:
            machine = compile_chart(chart).create() if compiled else chart()
        except UnsupportedChart:
            return "refused"
        try:
            getattr(machine, event)()
        except Exception as error:
            return ("raises", type(error).__name__, _ids(machine))
        return _ids(machine)

    reference = run(False)
    assert reference == ("raises", "TypeError", ["a"])
    assert run(True) in (reference, "refused")


# break 6 (C12; before these commits too): an event named ``start_configuration_values``
# makes python-statemachine raise its InvalidStateValue (an InvalidDefinition) when the
# machine is built; compile_chart crashes with a bare ``KeyError: 's'`` (the compiler
# iterates the event's name as the chart's start configuration).
def test_c12_an_event_named_start_configuration_values_fails_as_an_invalid_definition() -> None:
    chart = _named_event_chart("start_configuration_values")
    with pytest.raises(InvalidDefinition):
        chart()
    with pytest.raises(InvalidDefinition):
        compile_chart(chart).create()


# break 7 (C12; ``prepare`` is new in fe62523: it now gets an event method): an event named
# ``prepare`` (psm's PREPARE callback grouper), ``configuration`` or
# ``_get_initial_configuration`` makes python-statemachine fail building the machine
# (AttributeError, AttributeError, TypeError); the compiled chart runs, sending the event.
@pytest.mark.parametrize("event", ["prepare", "configuration", "_get_initial_configuration"])
def test_c12_an_event_name_python_statemachine_cannot_build_is_not_run_compiled(
    event: str,
) -> None:
    chart = _named_event_chart(event)
    with pytest.raises(Exception) as reference:  # noqa: PT011 - psm's own, compared below
        chart()
    compiled: Any = "built"
    try:
        compile_chart(chart).create()
    except UnsupportedChart:
        compiled = "refused"
    except Exception as error:
        compiled = type(error)
    assert compiled in ("refused", type(reference.value))


# ============================================================================================
# Pins (behaviours checked that hold on 7523030)
# ============================================================================================


@pytest.mark.parametrize(
    "event",
    [
        "id",
        "name",
        "current_state",
        "add_listener",
        "enabled_events",
        "allowed_events",
        "states_x",
    ],
)
@pytest.mark.parametrize("where", ["outside", "chart", "machine", "model"])
def test_c5_pin_an_event_named_like_the_machine_api_is_sent_as_psm(event: str, where: str) -> None:
    """Without a prepare_event: the event method, called outside, from a chart method
    (``self.<event>()``), a chart callback's ``machine`` and a model's."""
    namespace: dict[str, Any] = {
        "a": State(initial=True),
        "b": State(),
        "c": State(final=True),
    }
    namespace[event] = namespace["a"].to(namespace["b"]) | namespace["b"].to(namespace["c"])
    namespace["go"] = namespace["a"].to(namespace["b"])
    model_ns: dict[str, Any] = {}
    source = {
        "chart": f"def on_enter_b(self):\n    self.{event}()\n",
        "machine": f"def on_enter_b(self, machine):\n    machine.{event}()\n",
        "model": f"def on_enter_b(self, machine):\n    machine.{event}()\n",
    }.get(where)
    if source is not None:
        exec(source, {}, model_ns if where == "model" else namespace)
    chart = _chart(namespace)
    model_type = type("Model", (), model_ns)

    def run(compiled: bool) -> list[str]:
        model = model_type() if where == "model" else None
        machine = compile_chart(chart).create(model) if compiled else chart(model)
        if where == "outside":
            getattr(machine, event)()
        else:
            machine.send("go")
        return _ids(machine)

    reference = run(False)
    assert reference == (["b"] if where == "outside" else ["c"])
    assert run(True) == reference


class Prepared(StateChart[Any]):
    """A prepare_event reading a field its custom ``__init__`` sets."""

    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    def __init__(self, *args: Any, tag: str = "t", **kwargs: Any) -> None:
        self.tag = tag
        super().__init__(*args, **kwargs)

    def prepare_event(self) -> dict[str, Any]:
        return {"extra": self.tag}

    def on_go(self, extra: str) -> None:
        LOG.append(extra)


def test_c19_pin_a_prepare_event_chart_with_init_restored_sends_as_psm() -> None:
    LOG.clear()
    reference = Prepared(tag="x")
    for _ in range(3):
        reference.send("go")
    expected = (_ids(reference), list(LOG))
    LOG.clear()
    runtime = compile_chart(Prepared)
    first = runtime.create(tag="x")
    first.send("go")
    restored = runtime.restore(json.loads(json.dumps(first.snapshot())), first.model)
    restored.send("go")
    restored.send("go")
    assert (_ids(restored), list(LOG)) == expected


def test_c10_pin_a_prepare_event_chart_created_in_a_row_sends_as_psm() -> None:
    """create never takes the direct path for it; each instance has its prepared cache."""
    runtime = compile_chart(Prepared)
    for _ in range(4):
        LOG.clear()
        instance = runtime.create()
        instance.send("go")
        instance.send("go")
        assert (_ids(instance), LOG) == (["a"], ["t", "t"])


class AsyncPrepared(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b) | b.to(a)

    async def prepare_event(self) -> dict[str, Any]:
        return {"extra": 1}

    async def on_go(self, extra: int) -> None:
        LOG.append(extra)


@pytest.mark.parametrize("how", ["resume", "restore"])
def test_c21_pin_an_async_prepare_event_chart_resumed_or_restored_sends_as_psm(how: str) -> None:
    async def reference() -> Any:
        machine = AsyncPrepared(start_value="b")
        await machine.send("go")
        await machine.send("go")
        return _ids(machine)

    async def compiled() -> Any:
        runtime = compile_chart(AsyncPrepared)
        machine = runtime.resume("b")
        if how == "restore":
            machine = runtime.restore(machine.snapshot(), machine.model)
        await machine.send("go")
        await machine.send("go")
        return _ids(machine)

    LOG.clear()
    expected = (asyncio.run(reference()), list(LOG))
    LOG.clear()
    assert (asyncio.run(compiled()), list(LOG)) == expected == (["b"], [1, 1])


@pytest.mark.parametrize("event", ["go", "current_state", "add_listener"])
@pytest.mark.parametrize("how", ["create", "resume", "restore"])
def test_c18_pin_an_scxml_chart_event_method_after_resume_or_restore_runs_as_psm(
    event: str, how: str
) -> None:
    def run(compiled: bool) -> Any:
        chart = load(_scxml(event), format="scxml", trusted=True)
        if not compiled:
            machine = chart() if how == "create" else chart(start_value="s1")
        else:
            runtime = compile_chart(chart)
            if how == "create":
                machine = runtime.create()
            else:
                machine = runtime.resume("s1")
                if how == "restore":
                    machine = runtime.restore(machine.snapshot(), machine.model)
        getattr(machine, event)()
        first = _ids(machine)
        machine.send(event)
        return first, _ids(machine)

    assert _quiet(lambda: run(True)) == _quiet(lambda: run(False))


class FlipsHeld:
    """Holds ``ready``; its ``__getattribute__`` answers the opposite."""

    def __init__(self, value: Any) -> None:
        self.ready = value

    def __getattribute__(self, name: str) -> Any:
        if name == "ready":
            return not object.__getattribute__(self, name)
        return object.__getattribute__(self, name)


class HidesHeld:
    """Holds ``ready``; its ``__getattribute__`` hides it, ``__getattr__`` answers."""

    def __init__(self, value: Any) -> None:
        self.ready = value

    def __getattribute__(self, name: str) -> Any:
        if name == "ready":
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        if name == "ready":
            return lambda: LOG.append("getattr ready") or False
        raise AttributeError(name)


class HidesHeldOnly:
    """Holds ``ready``; its ``__getattribute__`` hides it, nothing answers."""

    def __init__(self, value: Any) -> None:
        self.ready = value

    def __getattribute__(self, name: str) -> Any:
        if name == "ready":
            raise AttributeError(name)
        return object.__getattribute__(self, name)


class WrapsHeld:
    """Holds a value under ``ready``; its ``__getattribute__`` wraps it in a callable."""

    def __init__(self, value: Any) -> None:
        self.ready = value

    def __getattribute__(self, name: str) -> Any:
        if name == "ready":
            held = object.__getattribute__(self, name)
            return lambda: LOG.append("wrapped") or held
        return object.__getattribute__(self, name)


class AnswersUnheld:
    """Holds a value; only its ``__getattr__`` answers ``ready`` (dir does not list it)."""

    def __init__(self, value: Any) -> None:
        self.x = value

    def __getattr__(self, name: str) -> Any:
        if name == "ready":
            return False
        raise AttributeError(name)


@pytest.mark.parametrize(
    "model_type", [FlipsHeld, HidesHeld, HidesHeldOnly, WrapsHeld, AnswersUnheld]
)
def test_c9_pin_a_custom_getattribute_over_a_held_chart_name_answers_as_psm(
    model_type: type,
) -> None:
    values = [True, False, True, 0, 1, None]
    _same_go(Guarded, [(lambda v=v: model_type(v)) for v in values])


class FlagDescriptor:
    """A callable class attribute whose ``__get__`` answers by the instance's ``mode``:
    a callable, a value, or AttributeError / ValueError."""

    def __call__(self, *args: Any) -> bool:
        return True

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        mode = instance.__dict__.get("mode", "fn")
        if mode == "attribute-error":
            raise AttributeError("ready")
        if mode == "value-error":
            raise ValueError("ready")
        if mode in ("false", "true"):
            return mode == "true"
        return (lambda: False) if mode == "fn-false" else (lambda: True)


class WithFlagDescriptor:
    ready = FlagDescriptor()

    def __init__(self, mode: str) -> None:
        self.mode = mode


class WithFlagDescriptorAndGetattr(WithFlagDescriptor):
    def __getattr__(self, name: str) -> Any:
        if name == "ready":
            return lambda: False
        raise AttributeError(name)


@pytest.mark.parametrize("model_type", [WithFlagDescriptor, WithFlagDescriptorAndGetattr])
def test_c9_pin_a_descriptor_raising_only_sometimes_answers_as_psm_in_a_row(
    model_type: type,
) -> None:
    modes = ["fn", "false", "fn", "attribute-error", "fn", "true", "fn-false", "fn"]
    modes += ["value-error", "fn", "false", "attribute-error", "fn-false", "fn"]
    _same_go(Guarded, [(lambda m=m: model_type(m)) for m in modes])


MODE = {"value": "fn"}


class ChecksFlag(StateChart[Any]):
    a = State(initial=True)
    b = State()
    go = a.to(b, cond="ready") | b.to(a)

    def helper(self) -> bool:
        return True


class FlagGetattribute:
    """A method ``ready`` its ``__getattribute__`` answers otherwise by a global mode (an
    instance holding nothing: the direct path's case)."""

    def ready(self) -> bool:
        return True

    def __getattribute__(self, name: str) -> Any:
        if name == "ready":
            mode = MODE["value"]
            if mode == "false":
                return False
            if mode == "raise":
                raise AttributeError(name)
            if mode == "fn-false":
                return lambda: False
        return object.__getattribute__(self, name)


class FlagGetattributeSlots(FlagGetattribute):
    __slots__ = ()


@pytest.mark.parametrize("model_type", [FlagGetattribute, FlagGetattributeSlots])
def test_c9_pin_a_getattribute_shadowing_a_method_by_a_global_answers_as_psm(
    model_type: type,
) -> None:
    modes = ["fn", "false", "fn", "raise", "fn", "fn-false", "fn", "false", "raise"]

    def outcomes(compiled: bool) -> list[Any]:
        runtime = compile_chart(ChecksFlag) if compiled else None
        found: list[Any] = []
        for mode in modes:
            MODE["value"] = mode
            try:
                model = model_type()
                machine = runtime.create(model) if runtime else ChecksFlag(model)
                machine.send("go")
                found.append(_ids(machine))
            except Exception as error:
                found.append(type(error).__name__)
        return found

    try:
        reference = outcomes(False)
        assert outcomes(True) == reference
    finally:
        MODE["value"] = "fn"


class Shadows(StateChart[Any]):
    a = State(initial=True)
    b = State()
    c = State(final=True)
    go = a.to(b, cond=["ready", "check"]) | b.to(c, cond="done_ok")

    def ready(self) -> bool:
        return True


class ShadowModel:
    def check(self) -> bool:
        return True

    def done_ok(self) -> bool:
        return True

    def on_enter_b(self) -> None:
        LOG.append("class on_enter_b")


_SHADOW_KINDS: list[dict[str, Any]] = [
    {},
    {"check": False},
    {"ready": False},
    {"check": 0},
    {"ready": 1},
    {"x": 1},
    {"on_enter_b": 5},
    {"done_ok": False},
    {"check": True, "ready": True},
    {"on_enter_b": lambda: LOG.append("own on_enter_b")},
    {"ready": None},
    {"check": "yes"},
    {"x": {}},
]


def _shadow_model(values: dict[str, Any]) -> Callable[[], Any]:
    def make() -> Any:
        model = ShadowModel()
        for name, value in values.items():
            setattr(model, name, value)
        return model

    return make


def test_c9_pin_models_alternating_shadow_kinds_answer_as_psm_on_the_direct_path() -> None:
    rng = random.Random(3)
    kinds = [rng.choice(_SHADOW_KINDS) for _ in range(60)]
    models = [_shadow_model(kind) for kind in kinds]

    def outcomes(compiled: bool) -> list[Any]:
        runtime = compile_chart(Shadows) if compiled else None
        found: list[Any] = []
        for make in models:
            LOG.clear()
            model = make()
            machine = runtime.create(model) if runtime else Shadows(model)
            machine.send("go")
            machine.send("go")
            found.append((_ids(machine), list(LOG)))
        return found

    assert outcomes(True) == outcomes(False)


def test_c9_pin_threads_creating_alternating_shadow_kinds_answer_as_psm() -> None:
    kinds = [{}, {"check": False}, {"ready": False}, {"x": 1}, {"check": 0, "x": 2}]
    expected = []
    for kind in kinds:
        LOG.clear()
        machine = Shadows(_shadow_model(kind)())
        machine.send("go")
        expected.append(_ids(machine))
    runtime = compile_chart(Shadows)
    wrong: list[Any] = []

    def work(offset: int) -> None:
        for step in range(200):
            index = (step + offset) % len(kinds)
            machine = runtime.create(_shadow_model(kinds[index])())
            machine.send("go")
            if _ids(machine) != expected[index]:
                wrong.append((index, _ids(machine)))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []


class DictProxy:
    """A class-defined ``__dict__`` backed by a dict the instance holds, ``__getattr__``
    reading it (a proxy): its values are visible, so the general path reads them."""

    def __init__(self, **values: Any) -> None:
        object.__setattr__(self, "_values", values)

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        return self._values  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None


class DictHidesHeld:
    """A class-defined ``__dict__`` hiding a value the real dict holds: dir does not list it."""

    def __init__(self) -> None:
        object.__setattr__(self, "ready", False)

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        return {}


def test_c9_pin_a_dict_property_backed_by_held_values_answers_as_psm() -> None:
    kinds: list[dict[str, Any]] = [
        {"ready": False},
        {},
        {"ready": False},
        {"on_enter_b": lambda: LOG.append("proxy on_enter_b")},
        {"ready": 0},
    ]
    _same_go(Guarded, [(lambda k=k: DictProxy(**k)) for k in kinds])
    _same_go(Guarded, [DictHidesHeld, DictHidesHeld])


class Base:
    ready = False


class Inherits(Base):
    pass


class Overrides(Base):
    ready = True


class Bare:
    pass


def _module(name: str, **values: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    for key, value in values.items():
        setattr(module, key, value)
    return module


def _missing(name: str) -> Any:
    raise AttributeError(name)


def test_c9_pin_classes_and_modules_as_models_answer_as_psm() -> None:
    """A class as the model (object.__getattribute__ on it misses inherited names; dir lists
    them) and modules (a module-level __getattr__, with and without __dir__)."""
    unlisted = _module("unlisted", __getattr__=lambda n: False if n == "ready" else _missing(n))
    listed = _module(
        "listed",
        __getattr__=lambda n: False if n == "ready" else _missing(n),
        __dir__=lambda: ["ready"],
    )
    models: list[Any] = [Inherits, Bare, Overrides, Inherits, _module("held", ready=False)]
    models += [unlisted, listed, Base]
    assert _same_go(Guarded, [(lambda m=m: m) for m in models]) == [
        (["a"], []),
        (["b"], []),
        (["b"], []),
        (["a"], []),
        (["a"], []),
        (["b"], []),
        (["a"], []),
        (["a"], []),
    ]


class SlotsAndDict:
    __slots__ = ("__dict__", "ready")


def test_c9_pin_a_slot_for_a_chart_name_answers_as_psm() -> None:
    def make(value: Any) -> Callable[[], Any]:
        def build() -> Any:
            model = SlotsAndDict()
            if value is not None:
                model.ready = value
            return model

        return build

    values = [None, False, None, True, (lambda: False), 0, (lambda: True), None]
    _same_go(Guarded, [make(v) for v in values])
