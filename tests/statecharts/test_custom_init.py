"""Charts with a custom ``__init__``, written as python-statemachine users write them: the
``__init__`` runs with the arguments ``create`` is given, keeps its fields on the instance,
and enters the initial state through ``super().__init__(...)``; names of fields set before
that resolve as callbacks, as python-statemachine resolves them.

Rules checked here (docs/spec.md): C20.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.exceptions import InvalidDefinition

from statecharts import InstanceSnapshotError, UnsupportedChart, compile_chart

from .charts import Recorder, Tally


def run_both(events: list[tuple[str, dict[str, Any]]], **init: Any) -> tuple[Any, Any]:
    reference = Tally(Recorder(), **init)
    instance = compile_chart(Tally).create(Recorder(), **init)
    assert instance.model.log == reference.model.log
    for event, kwargs in events:
        reference.send(event, **kwargs)
        instance.send(event, **kwargs)
        assert [s.id for s in instance.configuration] == [s.id for s in reference.configuration]
        assert instance.model.log == reference.model.log
    return reference, instance


def test_a_custom_init_runs_and_its_fields_live_on_the_instance() -> None:
    reference, instance = run_both(
        [("add", {"amount": 3}), ("check", {}), ("add", {}), ("close", {})], limit=1
    )
    fields = ("limit", "items", "open_for_business", "frozen", "opened_at")
    assert {name: getattr(instance, name) for name in fields} == {
        name: getattr(reference, name) for name in fields
    }
    assert instance.items == [3]  # in "full", add puts nothing
    assert instance.is_terminated


def test_fields_set_before_super_init_resolve_as_guards() -> None:
    # close is guarded by "open_for_business and not frozen": the fourth item freezes it
    events = [("add", {})] * 4 + [("close", {})]
    _, instance = run_both(events, limit=9)
    assert instance.state.id == "counting"
    _, instance = run_both([*events[:-1], ("unfreeze", {}), ("close", {})], limit=9)
    assert instance.is_terminated


def test_instances_do_not_share_fields() -> None:
    chart = compile_chart(Tally)
    first, second = chart.create(Recorder()), chart.create(Recorder(), limit=5)
    first.send("add")
    assert (first.items, second.items) == ([1], [])
    assert (first.limit, second.limit) == (2, 5)


def test_a_name_set_only_after_super_init_does_not_resolve_as_in_python_statemachine() -> None:
    class Late(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b, cond="ready")

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.ready = True

    with pytest.raises(InvalidDefinition, match="ready") as reference:
        Late()
    with pytest.raises(InvalidDefinition, match="ready") as compiled:
        compile_chart(Late).create()
    assert str(compiled.value) == str(reference.value)


def test_the_init_arguments_are_the_charts_own() -> None:
    chart = compile_chart(Tally)
    with pytest.raises(TypeError, match="limit"):
        chart.create(Recorder(), limit=1, **{"limit": 2, "x": 1})  # type: ignore[misc]
    with pytest.raises(TypeError, match="start_value"):
        chart.create(Recorder(), start_value="full")


def test_a_snapshot_keeps_the_fields_and_restore_does_not_run_init() -> None:
    chart = compile_chart(Tally)
    instance = chart.create(Recorder(), limit=3)
    instance.send("add", amount=2)
    snapshot = json.loads(json.dumps(instance.snapshot()))
    assert snapshot["fields"] == {
        "frozen": False,
        "items": [2],
        "limit": 3,
        "open_for_business": True,
        "opened_at": 2,  # on_enter_state and opened logged before it was set
    }
    model = Recorder()
    restored = chart.restore(snapshot, model)
    assert model.log == []
    assert restored.items == [2]
    assert restored.limit == 3
    restored.send("add")
    restored.send("add")
    assert restored.send("check").applied
    snapshot["fields"]["nope"] = 1
    with pytest.raises(InstanceSnapshotError, match="keeps no field of that name") as caught:
        chart.restore(snapshot)
    assert caught.value.field == "fields.nope"


def test_a_field_json_cannot_keep_or_one_init_never_set_is_refused_in_a_snapshot() -> None:
    chart = compile_chart(Tally)
    instance = chart.create(Recorder())
    instance.items = (1, 2)  # type: ignore[attr-defined]
    with pytest.raises(InstanceSnapshotError) as caught:
        instance.snapshot()
    assert caught.value.field == "fields.items"
    instance.items = []  # type: ignore[attr-defined]
    instance.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(
        InstanceSnapshotError, match=r"not a field of Tally \(one its __init__ sets"
    ):
        instance.snapshot()


def test_an_init_that_does_not_hand_over_is_refused() -> None:
    class Lost(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def __init__(self) -> None:
            self.x = 1

    with pytest.raises(UnsupportedChart, match=r"does not call super\(\).__init__"):
        compile_chart(Lost)


def test_an_init_that_skips_the_hand_over_at_run_time_is_a_type_error() -> None:
    class Sometimes(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def __init__(self, start: bool = True) -> None:
            self.started = start
            if start:
                super().__init__()

    chart = compile_chart(Sometimes)
    assert chart.create().started
    with pytest.raises(TypeError, match="without calling super"):
        chart.create(False)


def test_several_inits_and_fields_named_like_the_runtime_are_refused() -> None:
    class Base(StateChart):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)

    class Twice(Base):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)

    with pytest.raises(UnsupportedChart, match="several custom __init__"):
        compile_chart(Twice)

    class Shadow(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.configuration_name = "x"
            self.state = "x"
            super().__init__(*args, **kwargs)

    with pytest.raises(UnsupportedChart, match=r"sets self.state"):
        compile_chart(Shadow)


def test_a_statechart_with_a_custom_init_runs_hierarchically() -> None:
    class Job(StateChart):
        class work(State.Compound):
            step1 = State(initial=True)
            step2 = State(final=True)
            next = step1.to(step2, on="count")

        done = State(final=True)
        done_state_work = work.to(done)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.steps = 0
            super().__init__(*args, **kwargs)

        def count(self) -> None:
            self.steps += 1

    reference, instance = Job(), compile_chart(Job).create()
    reference.send("next")
    instance.send("next")
    assert instance.steps == reference.steps == 1
    assert [s.id for s in instance.configuration] == [s.id for s in reference.configuration]


def test_an_init_handing_over_with_two_argument_super_is_refused() -> None:
    class Explicit(StateChart):
        a = State(initial=True)
        b = State(final=True)
        go = a.to(b)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super(Explicit, self).__init__(*args, **kwargs)  # noqa: UP008 - the form refused

    with pytest.raises(UnsupportedChart, match=r"super\(Class, self\).*write super\(\)"):
        compile_chart(Explicit)


class _ClassCellBase(StateChart):
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b)


class _MroCounting(_ClassCellBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.depth = len(__class__.__mro__)


class _SuperAskedForItsClass(_ClassCellBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written_in = super().__thisclass__.__name__


class _SuperKept(_ClassCellBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        handover = super()
        handover.__init__(*args, **kwargs)
        self.kind = handover.__self_class__


class _LocalsRead(_ClassCellBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written_in = locals()["__class__"].__name__


class _NamedByTheClass(_ClassCellBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written_in = _NamedByTheClass.__name__


@pytest.mark.parametrize(
    ("declared", "what"),
    [
        (_MroCounting, "uses __class__ at"),
        (_SuperAskedForItsClass, "asks super() for __thisclass__"),
        (_SuperKept, "uses super() other than as super().name"),
        (_LocalsRead, "calls locals(), which holds __class__"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_c20_an_init_using_its_class_cell_but_for_super_is_refused(
    declared: type[StateChart], what: str
) -> None:
    """C20/C6: the compiled instance runs a copy of a custom ``__init__`` whose ``__class__``
    cell is the compiled instance's class (so that ``super().__init__`` hands over); any other
    use of the cell (``len(__class__.__mro__)``: 4 on python-statemachine, not compiled),
    ``super()`` asked for its classes or kept in a variable would answer otherwise: refused,
    naming the ``__init__``, what it does and where."""
    declared()  # python-statemachine runs it
    with pytest.raises(UnsupportedChart) as caught:
        compile_chart(declared)
    assert caught.value.chart == declared.__name__
    assert f"{declared.__name__}.__init__ {what}" in caught.value.where


def test_c20_an_init_naming_its_class_compiles_and_answers_alike() -> None:
    """C20: naming the class (not the ``__class__`` cell) answers alike, and compiles."""
    reference, instance = _NamedByTheClass(), compile_chart(_NamedByTheClass).create()
    assert instance.written_in == reference.written_in == "_NamedByTheClass"  # type: ignore[attr-defined]
