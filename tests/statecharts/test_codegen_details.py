"""Details of the generated code a mutation run found untested: what a callback missing an
argument raises (as python-statemachine raises it), the names generated for states and events
that are not identifiers, where the generated source goes when it cannot be written, and the
``repr`` of the values callbacks receive.

Rules checked here (docs/spec.md): C8, C16.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import os
import re
import traceback
from pathlib import Path
from typing import Any

import pytest
from statemachine import State, StateChart
from statemachine.io import load

from statecharts import UnsupportedChart, compile_chart


class Needs(StateChart):
    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act")
    kw = a.to(b, on="act_by_name")
    back = b.to(a)

    def act(self, amount: int) -> None:
        pass

    def act_by_name(self, *, amount: int) -> None:
        pass


class NeedsOnTheModel:
    def act(self, amount: int) -> None:
        pass

    def act_by_name(self, *, amount: int) -> None:
        pass


class Plain(StateChart):
    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, on="act")
    kw = a.to(b, on="act_by_name")
    back = b.to(a)


@pytest.mark.parametrize(
    ("chart", "model", "event", "message"),
    [
        (Needs, None, "go", "Needs.act() missing 1 required positional argument: 'amount'"),
        (
            Needs,
            None,
            "kw",
            "Needs.act_by_name() missing 1 required keyword-only argument: 'amount'",
        ),
        (
            Plain,
            NeedsOnTheModel,
            "go",
            "NeedsOnTheModel.act() missing 1 required positional argument: 'amount'",
        ),
        (
            Plain,
            NeedsOnTheModel,
            "kw",
            "NeedsOnTheModel.act_by_name() missing 1 required keyword-only argument: 'amount'",
        ),
    ],
)
def test_c8_a_callback_missing_an_argument_raises_what_python_statemachine_raises(
    chart: type[StateChart], model: type | None, event: str, message: str
) -> None:
    errors = []
    for machine in (
        chart(None if model is None else model()),
        compile_chart(chart).create(None if model is None else model()),
    ):
        with pytest.raises(TypeError) as raised:
            machine.send(event)
        errors.append(str(raised.value))
        assert [state.id for state in machine.configuration] == ["a"]
    assert errors == [message, message]
    assert compile_chart(chart).create(None if model is None else model()).send(event, amount=1)


def test_c16_names_that_are_keywords_or_start_with_a_digit_become_identifiers() -> None:
    class Lambdas(StateChart):
        a = State(initial=True)
        b = State()
        go = a.to(b, on=lambda: None) | b.to(a, on=lambda: None)

    source = compile_chart(Lambdas).source()
    assert "    _lambda()\n" in source  # ``<lambda>`` is the keyword ``lambda``: prefixed
    assert "    _lambda_2()\n" in source  # the second one gets a name of its own
    assert "def a__go(inst, args, kw):\n    if args: return a__go__positional(" in source

    document = """<?xml version="1.0" encoding="UTF-8"?>
    <scxml xmlns="http://www.w3.org/2005/07/scxml" initial="1st" version="1.0">
      <state id="1st"><transition event="9.go" target="2nd" /></state>
      <final id="2nd" />
    </scxml>"""
    with contextlib.redirect_stdout(io.StringIO()):
        loaded = compile_chart(load(document, format="scxml", trusted=True))
    source = loaded.source()
    assert "def _1st__9_go(inst, args, kw):" in source
    assert "def enter_1st(inst, args, kw):" in source


def _raising_chart(name: str) -> type[StateChart]:
    def fail(self: Any) -> None:
        raise RuntimeError("failed on purpose")

    namespace = {
        "catch_errors_as_events": False,
        "a": State(initial=True),
        "b": State(),
        "fail": fail,
    }
    namespace["go"] = namespace["a"].to(namespace["b"], on="fail")
    namespace["back"] = namespace["b"].to(namespace["a"])
    return type(name, (StateChart,), namespace)


def _generated_file_of_a_failure(chart: type[StateChart]) -> tuple[str, str]:
    instance = compile_chart(chart).create()
    with pytest.raises(RuntimeError) as raised:
        instance.send("go")
    frame = traceback.extract_tb(raised.value.__traceback__)[-2]
    return frame.filename, linecache.getline(frame.filename, frame.lineno or 0)


def test_c16_a_source_that_cannot_be_written_stays_in_linecache_and_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from statecharts import _codegen

    def refuse(source: str, target: str) -> None:
        raise OSError("disk full")

    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(tmp_path))
    monkeypatch.setattr(_codegen.os, "replace", refuse)
    filename, line = _generated_file_of_a_failure(_raising_chart("Unwritable"))
    assert filename.startswith("<statecharts Unwritable")
    assert line.strip() == "fail(inst)"
    assert list(tmp_path.iterdir()) == []  # the half-written temporary file was removed


def test_c16_a_source_directory_others_can_write_to_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(shared))
    filename, line = _generated_file_of_a_failure(_raising_chart("Shared"))
    assert filename.startswith("<statecharts Shared")
    assert line.strip() == "fail(inst)"
    assert list(shared.iterdir()) == []


def test_c16_a_source_directory_that_cannot_be_made_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(blocker / "sources"))
    filename, _ = _generated_file_of_a_failure(_raising_chart("Blocked"))
    assert filename.startswith("<statecharts Blocked")


def test_c16_a_private_source_directory_gets_one_file_per_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = tmp_path / "private"
    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(private))
    filename, line = _generated_file_of_a_failure(_raising_chart("Private"))
    assert Path(filename).parent == private
    assert re.fullmatch(r"Private, model Model [0-9a-f]{12}\.py", Path(filename).name)
    assert line.strip() == "fail(inst)"
    assert (private.stat().st_mode & 0o777) == 0o700
    assert [path.name for path in private.iterdir()] == [Path(filename).name]
    assert Path(filename).read_text(encoding="utf-8").startswith("def a__go(")


def test_c8_event_data_and_trigger_data_show_the_event_and_where_it_goes() -> None:
    seen: list[str] = []

    class Look(StateChart):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="look")
        back = b.to(a)

        def look(self, event_data: Any) -> None:
            seen.append(repr(event_data))
            seen.append(repr(event_data.trigger_data))

    compile_chart(Look).create().send("go", 1, x=2)
    assert seen == [
        "EventData(event=Event('go', delay=0, internal=False), "
        "source=State('A', id='a', value='a', initial=True, final=False, parallel=False), "
        "target=State('B', id='b', value='b', initial=False, final=False, parallel=False))",
        "TriggerData(event=Event('go', delay=0, internal=False), args=(1,), kwargs={'x': 2})",
    ]


class Validated(StateChart):
    """Validators raise whatever the chart's ``catch_errors_as_events`` says (they are not
    guards): the error reaches the sender, with or without a guard beside them."""

    a = State(initial=True)
    b = State()
    go = a.to(b, validators="check") | b.to(a)
    guarded = a.to(b, validators="check", cond="ok")

    def check(self, amount: int = 0) -> None:
        if amount < 0:
            raise ValueError("negative")

    def ok(self) -> bool:
        return True


class ValidatedUncaught(Validated):
    catch_errors_as_events = False


class TargetlessAfter(StateChart[Any]):
    """A targetless transition with two ``after`` callbacks, the first raising, errors
    caught as events."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(None, after=["first", "second"])
    error_execution = a.to(b, on="recorded")

    def first(self) -> None:
        self.model.log.append("first")
        raise ValueError("first")

    def second(self) -> None:
        self.model.log.append("second")
        raise KeyError("second")

    def recorded(self, error: Exception) -> None:
        self.model.log.append(("recorded", repr(error)))


class Logged:
    def __init__(self) -> None:
        self.log: list[Any] = []


def test_c7_a_targetless_transitions_after_callbacks_each_queue_their_error() -> None:
    """python-statemachine hands a targetless transition's ``after`` group the error handler
    of its ``on`` group: each callback runs, and each failure is an ``error.execution``."""
    logs = []
    for machine in (TargetlessAfter(Logged()), compile_chart(TargetlessAfter).create(Logged())):
        machine.send("go")
        logs.append(machine.model.log)
    assert logs[1] == logs[0]
    assert logs[0] == ["first", "second", ("recorded", "ValueError('first')")]


@pytest.mark.parametrize("chart", [Validated, ValidatedUncaught])
@pytest.mark.parametrize("event", ["go", "guarded"])
def test_c7_a_raising_validator_reaches_the_sender_as_in_python_statemachine(
    chart: type[StateChart], event: str
) -> None:
    for machine in (chart(), compile_chart(chart).create()):
        with pytest.raises(ValueError, match=r"^negative$"):
            machine.send(event, amount=-1)
        assert [state.id for state in machine.configuration] == ["a"]
        machine.send(event, amount=1)
        assert [state.id for state in machine.configuration] == ["b"]


def test_c16_without_a_source_directory_the_first_name_is_the_label_and_later_ones_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from statecharts import _codegen

    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", "")
    label = f"Counted {id(monkeypatch)}"
    names = [_codegen.source_file(label, f"x = {n}\n") for n in range(3)]
    assert names == [
        f"<statecharts {label}>",
        f"<statecharts {label} #2>",
        f"<statecharts {label} #3>",
    ]
    assert [linecache.getline(name, 1) for name in names] == ["x = 0\n", "x = 1\n", "x = 2\n"]


def test_c21_an_async_callback_set_on_a_model_instance_is_refused_when_it_is_created() -> None:
    """The chart was compiled for the model's class, which has no async callback, so it runs
    synchronously; an async function found on the instance when it is created cannot be
    awaited there, and says so (defined on the class, it makes the chart async)."""

    class Hooked:
        def __init__(self) -> None:
            async def hook() -> None:
                pass

            self.hook = hook

    class UsesHook(StateChart):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State()
        go = a.to(b, on="hook")
        back = b.to(a)

    with pytest.raises(UnsupportedChart) as raised:
        compile_chart(UsesHook).create(Hooked())
    assert raised.value.where == "Hooked.hook, when the instance is created"
    assert str(raised.value).endswith("declare this one on the model's class")


def test_c16_by_default_sources_go_to_a_directory_of_the_user_s_own_under_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.delenv("STATECHARTS_SOURCE_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    filename, line = _generated_file_of_a_failure(_raising_chart("Defaulted"))
    assert Path(filename).parent == tmp_path / f"statecharts-{os.getuid()}"
    assert line.strip() == "fail(inst)"


def test_c16_a_source_is_written_next_to_where_it_goes_then_moved_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary file is made in the source directory itself, so the final rename is
    atomic (a temporary file elsewhere may sit on another file system, where it fails)."""
    from statecharts import _codegen

    moves: list[tuple[Path, Path]] = []
    replace = os.replace

    def recorded(source: str, target: str) -> None:
        moves.append((Path(source), Path(target)))
        replace(source, target)

    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(tmp_path))
    monkeypatch.setattr(_codegen.os, "replace", recorded)
    filename, _ = _generated_file_of_a_failure(_raising_chart("Moved"))
    assert [(source.parent, target) for source, target in moves] == [(tmp_path, Path(filename))]
    assert moves[0][0].suffix == ".tmp"


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []


class Prepared(StateChart[Log]):
    """A chart with a ``prepare_event`` of its own: every callback is bound as
    python-statemachine binds it, positional payload and prepared keywords included."""

    catch_errors_as_events = False

    class box(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="act") | b.to(a, on="act")

    def prepare_event(self, event: Any) -> dict[str, Any]:
        return {"extra": str(event)}

    def act(
        self, *args: Any, extra: str, previous_configuration: Any, new_configuration: Any
    ) -> None:
        self.model.log.append(
            (
                args,
                extra,
                [state.id for state in previous_configuration],
                [state.id for state in new_configuration],
            )
        )


class Configurations(StateChart[Log]):
    catch_errors_as_events = False

    class box(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="act") | b.to(a, on="act")

    def act(
        self, previous_configuration: Any, new_configuration: Any, source: Any, target: Any
    ) -> None:
        self.model.log.append(
            (
                [state.id for state in previous_configuration],
                [state.id for state in new_configuration],
                source.id,
                target.id,
            )
        )


@pytest.mark.parametrize("chart", [Prepared, Configurations])
def test_c8_a_statechart_s_on_callbacks_get_the_configurations_before_and_after(
    chart: type[StateChart[Log]],
) -> None:
    logs = []
    for machine in (chart(Log()), compile_chart(chart).create(Log())):
        machine.send("go", 1)
        machine.send("go")
        logs.append(machine.model.log)
    assert logs[0] == logs[1]
    configurations = [entry[:2] if chart is Configurations else entry[2:] for entry in logs[1]]
    assert configurations == [(["box", "a"], ["box", "b"]), (["box", "b"], ["box", "a"])]


class CarriesAct(Log):
    """``act`` is the instance's own (the chart reads it when the event runs)."""

    def __init__(self) -> None:
        super().__init__()
        self.act = lambda *args, extra: self.log.append((args, extra))


class PreparedDynamic(StateChart[Log]):
    catch_errors_as_events = False

    class box(State.Compound):
        a = State(initial=True)
        b = State()
        go = a.to(b, on="act") | b.to(a, on="act")

    def prepare_event(self, event: Any) -> dict[str, Any]:
        return {"extra": str(event)}


def test_c8_a_callback_read_from_the_model_instance_gets_the_prepared_arguments() -> None:
    logs = []
    for machine in (
        PreparedDynamic(CarriesAct()),
        compile_chart(PreparedDynamic).create(CarriesAct()),
    ):
        machine.send("go", 1)
        machine.send("go")
        logs.append(machine.model.log)
    assert logs[0] == logs[1] == [((1,), "go"), ((), "go")]
