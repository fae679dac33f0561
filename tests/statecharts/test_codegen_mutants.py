"""Rules of the code generator that a mutation sample of ``statecharts/_codegen.py`` found
untested: each test is named after what a chart author observes, and most compare with
python-statemachine.

Rules checked here (docs/spec.md): C7, C8, C16. (Async charts: test_codegen_async.py.)
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from statemachine import State, StateChart

from statecharts import compile_chart


def ids(machine: Any) -> list[str]:
    return [state.id for state in machine.configuration]


def odd_chart() -> type[StateChart[Any]]:
    """A chart (declared anew at each call: compiling one class again writes no source, so
    each case compiles its own whatever ran before) whose event names a comment of the
    generated source cannot hold raw: a lone surrogate (text decoded with
    ``surrogateescape``) and a line break followed by code."""

    class Odd(StateChart[Any]):
        catch_errors_as_events = False
        a = State(initial=True)
        b = State()
        go = a.to(b, event="go\udcff")
        run = a.to(b, event="run\nraise SystemExit('the name ran as code')\n")
        back = b.to(a, event="back\u2028now\r")

    return Odd


@pytest.mark.parametrize("directory", ["private", ""])
def test_c16_event_names_no_comment_can_hold_raw_compile_and_run(
    directory: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generated source names each transition in a comment; a lone surrogate or a line
    break there is written as its escape, so the chart compiles (its source in a file, or in
    ``linecache``), no name runs as code, and the events run as in python-statemachine."""
    monkeypatch.setenv("STATECHARTS_SOURCE_DIR", str(tmp_path / directory) if directory else "")
    odd = odd_chart()
    reference = odd()
    instance = compile_chart(odd).create()
    trail = []
    for event in [
        "go\udcff",
        "back\u2028now\r",
        "run",  # python-statemachine splits a name at white space: "run" is one of them
    ]:
        reference.send(event)
        instance.send(event)
        assert ids(instance) == ids(reference)
        trail.append(ids(instance))
    assert trail == [["b"], ["a"], ["b"]]
    if directory:
        (written,) = (tmp_path / directory).iterdir()
        source = written.read_text(encoding="utf-8")
        assert "# a --go\\udcff go--> b" in source
        assert "# b --back\\u2028now\\r back--> a" in source
        assert "# a --run\\nraise SystemExit('the name ran as code')\\n run--> b" in source


def test_c16_where_there_is_no_user_id_sources_go_to_a_directory_named_for_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A platform without ``os.getuid`` (Windows) gets ``statecharts-user`` under the
    temporary directory."""
    from statecharts import _codegen

    monkeypatch.delenv("STATECHARTS_SOURCE_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delattr(os, "getuid")
    assert _codegen._source_directory() == str(tmp_path / "statecharts-user")
    assert (tmp_path / "statecharts-user").is_dir()


class Log:
    def __init__(self) -> None:
        self.log: list[Any] = []


class Statics(StateChart[Log]):
    """Callbacks that are static methods of the chart (called as they are, with no ``self``),
    with defaults a literal can write (``0``) and defaults it cannot (a float, a tuple)."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, on="note", after="scaled")
    back = b.to(a)

    @staticmethod
    def note(*args: Any, amount: int = 0, model: Any = None) -> None:
        model.log.append(("note", args, amount))

    @staticmethod
    def scaled(factor: float = 1.5, tags: tuple[str, ...] = ("x",), model: Any = None) -> None:
        model.log.append(("scaled", factor, tags))

    def on_enter_b(self, transition: Any, source: Any, target: Any) -> None:
        self.model.log.append(("enter b", transition.event, source.id, target.id))


def test_c8_a_static_method_callback_gets_its_arguments_and_no_self_as_python_statemachine() -> (
    None
):
    """A static method is called as it is, with the payload (positional too) and its own
    defaults where none is sent, and an ``enter`` callback gets the transition taken."""
    logs = []
    for machine in (Statics(Log()), compile_chart(Statics).create(Log())):
        machine.send("go", amount=2)
        machine.send("back")
        machine.send("go", 9, amount=1)
        logs.append(machine.model.log)
    assert logs[0] == logs[1]
    assert logs[1] == [
        ("note", (), 2),
        ("enter b", "go", "a", "b"),
        ("scaled", 1.5, ("x",)),
        ("note", (9,), 1),
        ("enter b", "go", "a", "b"),
        ("scaled", 9, ("x",)),
    ]


def test_c16_a_default_that_reads_back_the_same_is_written_as_a_literal_in_the_source() -> None:
    """The generated source reads as the chart does: ``0`` is written ``0``; a float or a tuple
    default is a named constant (``DEFAULT_factor``), as its ``repr`` may not read back."""
    source = compile_chart(Statics).source()
    assert "note(amount=kw.get('amount', 0), model=m)" in source
    assert "factor=kw.get('factor', DEFAULT_factor)" in source
    assert "tags=kw.get('tags', DEFAULT_tags)" in source


class Kept(StateChart[Log]):
    """A transition with a validator and a guard, selected from events a callback queued, in
    a chart that catches errors as events (a validator's error still reaches the sender)."""

    a = State(initial=True)
    b = State()
    c = State()
    start = a.to(b, on="queue_two")
    go = b.to(c, validators="check", cond="ready")
    back = b.to(a) | c.to(a)
    look = a.to.itself(on="seen") | b.to.itself(on="seen")

    def queue_two(self) -> None:
        self.send("go")
        self.send("back")

    def check(self) -> None:
        raise ValueError("not yet")

    def ready(self) -> bool:
        return True

    def seen(self, state: Any) -> None:
        self.model.log.append(state.id)


def test_c7_events_queued_behind_a_raising_validator_are_kept_for_the_next_send() -> None:
    """A validator raising while a queued event is selected reaches the sender, and the events
    queued behind it run before the next event sent, as in python-statemachine."""
    trails = []
    for machine in (Kept(Log()), compile_chart(Kept).create(Log())):
        trail: list[Any] = []
        with pytest.raises(ValueError, match="not yet"):
            machine.send("start")
        trail.append(ids(machine))
        machine.send("look")  # "back" runs first, from b to a; then "look" in a
        trail.append(ids(machine))
        trails.append((trail, machine.model.log))
    assert trails[0] == trails[1] == ([["b"], ["a"]], ["a"])


def act(model: Any) -> None:
    model.log.append("free act")


class Stops(StateChart[Log]):
    """Two ``before`` callbacks, and three ``on`` callbacks all named ``act``: the chart's,
    the model's and a function's."""

    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, before=["fail", "after_fail"], on=["act", act])
    back = b.to(a)

    def fail(self, boom: bool = False) -> None:
        self.model.log.append("fail")
        if boom:
            raise ValueError("boom")

    def after_fail(self) -> None:
        self.model.log.append("after_fail")

    def act(self) -> None:
        self.model.log.append("chart act")


class ActingModel(Log):
    def act(self) -> None:
        self.log.append("model act")


def test_c7_a_raising_callback_stops_its_group_in_a_synchronous_chart() -> None:
    """Without errors caught as events, a ``before`` callback that raises reaches the sender
    and the callbacks after it in the group do not run (python-statemachine's synchronous
    engine calls a group in order; only its async engine gathers one)."""
    logs = []
    for machine in (Stops(ActingModel()), compile_chart(Stops).create(ActingModel())):
        with pytest.raises(ValueError, match="boom"):
            machine.send("go", boom=True)
        assert ids(machine) == ["a"]
        machine.send("go")
        logs.append(machine.model.log)
    assert logs[0] == logs[1]
    assert logs[1] == ["fail", "fail", "after_fail", "chart act", "model act", "free act"]


def test_c16_callbacks_sharing_a_name_are_numbered_in_the_source() -> None:
    """The generated source names each callback after its function: the chart's ``act``,
    the model's and a function's are ``act``, ``act_2`` and ``act_3``."""
    lines = compile_chart(Stops).source(ActingModel).splitlines()
    start = lines.index("def a__go(inst, args, kw):")
    body = [line.strip() for line in lines[start : start + 12]]
    assert [line for line in body if line.startswith("act")] == [
        "act(inst)",
        "act_2(m)",
        "act_3(model=m)",
    ]


class Regions(StateChart):
    """An ``In(...)`` guard naming two states of two regions."""

    catch_errors_as_events = False

    class r(State.Parallel):
        class x(State.Compound):
            a = State(initial=True)
            a2 = State()
            go = a.to(a2, cond="In('b', 'a')")
            back = a2.to(a)

        class y(State.Compound):
            b = State(initial=True)
            b2 = State()
            hop = b.to(b2)
            hop_back = b2.to(b)


def test_c16_an_in_guard_over_several_states_is_named_after_them_sorted() -> None:
    chart = compile_chart(Regions)
    assert "enabled = _in_states(inst, IN_a_b)" in chart.source()
    trails = []
    for machine in (Regions(), chart.create()):
        machine.send("hop")
        machine.send("go")  # b is no longer active: the guard is false
        trail = [ids(machine)]
        machine.send("hop_back")
        machine.send("go")
        trails.append([*trail, ids(machine)])
    assert trails[0] == trails[1]
    assert trails[1][1][-1] == "a2"


class Traced(StateChart[Log]):
    catch_errors_as_events = False
    a = State(initial=True)
    b = State()
    go = a.to(b, on="look")
    back = b.to(a, on="look")

    def look(self, event_data: Any) -> None:
        trigger = event_data.trigger_data
        self.model.log.append((trigger.event, trigger.send_id, trigger.args, trigger.kwargs))


def test_c8_the_trigger_data_of_an_event_sent_without_an_id_has_send_id_none() -> None:
    logs = []
    for machine in (Traced(Log()), compile_chart(Traced).create(Log())):
        machine.send("go", amount=1)
        machine.send("back", 2)
        logs.append([(str(event), *rest) for event, *rest in machine.model.log])
    assert logs[0] == logs[1] == [("go", None, (), {"amount": 1}), ("back", None, (2,), {})]
