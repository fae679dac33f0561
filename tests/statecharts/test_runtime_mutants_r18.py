"""Details the mutation sample of ``statecharts/_runtime.py`` (seed 1207) found untested: the
function that enters a flat chart's initial state is written once, with no positional twin
(the initial entry never receives positional arguments, so a twin would be dead code in the
source a traceback shows).

Rules checked here (docs/spec.md): C16.
"""

from __future__ import annotations

from typing import Any

from statemachine import State, StateChart

from statecharts import compile_chart


class Door(StateChart[Any]):
    """A flat chart whose initial state has an ``enter`` callback."""

    closed = State(initial=True)
    opened = State(final=True)
    open = closed.to(opened)

    def on_enter_closed(self) -> None:
        pass


def test_the_initial_entry_function_has_no_positional_twin() -> None:
    source = compile_chart(Door).source()
    assert source.count("def enter_closed(inst, args, kw):") == 1
    assert "enter_closed__positional" not in source
    assert "on_enter_closed(inst" in source


def test_an_event_function_with_a_callback_keeps_its_positional_twin() -> None:
    """The contrast: an event may carry positional arguments, so its function has a twin."""

    class Counted(StateChart[Any]):
        idle = State(initial=True)
        done = State(final=True)
        finish = idle.to(done, on="note")

        def note(self, *args: Any) -> None:
            pass

    source = compile_chart(Counted).source()
    assert "def idle__finish__positional(inst, args, kw):" in source
    assert "if args: return idle__finish__positional(inst, args, kw)" in source
