"""Rules of the code generator that a mutation sample of ``statecharts/_codegen.py`` (seed
2503) found untested: a model's ``prepare_event`` (read from the model instance each time it
runs) misusing the machine is refused naming it, an async callable a chart's field holds is
refused naming the field, and a source directory others may read but not write is used.

Rules checked here (docs/spec.md): C6, C16, C20, C21.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import UnsupportedChart, compile_chart


def ids(machine: Any) -> list[str]:
    return [state.id for state in machine.configuration]


class Peeking:
    """A model whose ``prepare_event`` reads python-statemachine's machine API that the
    compiled instance lacks."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def prepare_event(self, machine: Any) -> dict[str, Any]:
        return {"allowed": len(machine.allowed_events)}


class Counting:
    """A model whose ``prepare_event`` reads only the model."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def prepare_event(self, machine: Any) -> dict[str, Any]:
        return {"seen": len(machine.model.log)}


class Prepared(StateChart[Any]):
    """A chart with a ``prepare_event`` of its own (so the model's runs too, after it)."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="moved")

    def prepare_event(self) -> dict[str, Any]:
        return {"chart": True}

    def moved(self, chart: bool = False, seen: int = -1) -> None:
        self.model.log.append((chart, seen))


def test_c6_a_model_s_prepare_event_misusing_the_machine_is_refused_naming_it() -> None:
    """python-statemachine calls the model's ``prepare_event`` with the machine: one reading
    ``machine.allowed_events`` (the compiled instance has none) raises ``UnsupportedChart``
    naming the model's method and what it reads, when it runs, never a silent answer."""
    reference = Prepared(Peeking())  # python-statemachine runs it
    assert ids(reference) == ["a"]
    with pytest.raises(UnsupportedChart) as raised:
        compile_chart(Prepared).create(Peeking())
    assert raised.value.where == "Peeking.prepare_event reads machine.allowed_events at run time"
    assert raised.value.construct == "a model's callback using python-statemachine's machine"


def test_c6_a_model_s_prepare_event_reading_only_the_model_runs_and_agrees() -> None:
    logs = []
    for machine in (Prepared(Counting()), compile_chart(Prepared).create(Counting())):
        machine.send("go")
        machine.model.log.append(ids(machine))
        logs.append(machine.model.log)
    assert logs[0] == logs[1] == [(True, 0), ["b"]]


async def later(model: Any) -> None:
    model.log.append("later")


class Fielded(StateChart[Any]):
    """A chart whose ``on`` callback is a field its ``__init__`` sets before handing over
    (C20): any callable, read from the instance when the callback runs."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State(final=True)
    go = a.to(b, on="handler")

    def __init__(self, model: Any = None, handler: Any = None) -> None:
        self.handler = handler
        super().__init__(model)


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []


def test_c21_an_async_callable_a_chart_field_holds_is_refused_naming_the_field() -> None:
    """The chart was compiled without an async callback, so it runs synchronously; an async
    function a field holds cannot be awaited there, and the refusal names the field."""
    instance = compile_chart(Fielded).create(Log(), handler=later)
    with pytest.raises(TypeError) as raised:
        instance.send("go")
    assert str(raised.value) == (
        "handler is an async callback read from the model instance, and the chart was "
        "compiled for a synchronous run: define it on the model's class"
    )
    assert ids(instance) == ["a"]
    assert instance.model.log == []


def test_c20_a_plain_callable_a_chart_field_holds_runs_as_the_callback() -> None:
    def note(model: Any, source: Any) -> None:
        model.log.append(("note", source.id))

    logs = []
    for machine in (Fielded(Log(), note), compile_chart(Fielded).create(Log(), handler=note)):
        machine.send("go")
        logs.append((machine.model.log, ids(machine)))
    assert logs[0] == logs[1] == ([("note", "a")], ["b"])


def fresh_chart() -> type[StateChart[Any]]:
    """A chart declared anew at each call: compiling one class again writes no source."""

    class Written(StateChart[Any]):
        a = State(initial=True)
        b = State()
        go = a.to(b)
        back = b.to(a)

    return Written


@pytest.mark.parametrize(("mode", "used"), [(0o755, True), (0o711, True), (0o775, False)])
def test_c16_a_source_directory_is_used_unless_others_may_write_to_it(
    mode: int, used: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sources go to ``$STATECHARTS_SOURCE_DIR`` when only its owner may write there (others
    may read and enter it); one that others could write to, where a file could be replaced
    under the tracebacks that show its lines, gets none."""
    directory = tmp_path / "sources"
    directory.mkdir()
    directory.chmod(mode)
    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(directory))
    instance = compile_chart(fresh_chart()).create()
    instance.send("go")
    assert ids(instance) == ["b"]
    written = sorted(path.name for path in directory.iterdir())
    assert bool(written) is used
    assert all(name.startswith("Written") and name.endswith(".py") for name in written)
    assert os.stat(directory).st_mode & 0o777 == mode
