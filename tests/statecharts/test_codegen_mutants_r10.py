"""Rules of the code generator that a mutation sample of ``statecharts/_codegen.py``
(seeds 2606 and 2611) found untested; each test is named after what a chart author
observes and, where the rule is a semantic one, compares with python-statemachine.

Rules checked here (docs/spec.md): C7 (errors as events), C16 (the generated source). (The
other survivors are killed by test_returned_awaitable.py, or argued equivalent in
tools/equivalent_mutants.txt.)
"""

from __future__ import annotations

from typing import Any

from statemachine import State, StateChart

from statecharts import compile_chart


class Level(StateChart[Any]):
    """A guard comparing an attribute with a float: a value no literal reads back."""

    a = State(initial=True)
    b = State()
    go = a.to(b, cond="level > 1.5") | b.to(a)
    level = 2


def test_c16_a_constant_in_a_guard_expression_is_named_value_in_the_source() -> None:
    """A value of a guard expression that is written as a constant (a float) is named
    ``VALUE`` in the generated code, beside the expression's text in the comment, and the
    guard answers as python-statemachine's."""
    source = compile_chart(Level).source()
    assert "    # a --go [level > 1.5]--> b\n" in source
    assert "enabled = (inst.level > VALUE)" in source
    reference, instance = Level(), compile_chart(Level).create()
    reference.send("go")
    instance.send("go")
    assert [s.id for s in instance.configuration] == [s.id for s in reference.configuration]


class FailingHandler(StateChart[Any]):
    """A flat chart (errors caught as events): ``go``'s action fails, and the action of the
    ``error.execution`` transition handling it fails too."""

    a = State(initial=True)
    b = State()
    c = State()
    go = a.to(b, on="boom")
    error_execution = b.to(c, on="boom_again")
    back = c.to(a) | b.to(a)

    def boom(self) -> None:
        raise ValueError("boom")

    def boom_again(self) -> None:
        raise KeyError("again")


def test_c7_a_failing_action_while_error_execution_is_handled_cancels_that_transition() -> None:
    """While ``error.execution`` is handled, a failing action cancels the handling transition
    and its error is dropped, as python-statemachine does: the instance is back in the
    handler's source (not between states) and takes the next event from there."""
    seen = []
    for machine in (FailingHandler(), compile_chart(FailingHandler).create()):
        machine.send("go")
        after_go = [s.id for s in machine.configuration]
        machine.send("back")
        seen.append((after_go, [s.id for s in machine.configuration]))
    assert seen[1] == seen[0] == (["b"], ["a"])
