"""Rules of the code generator that a mutation sample of ``statecharts/_codegen.py``
(seed 2606, measured on 4284200) found untested; each test is named after what a chart author
observes and, where the rule is a semantic one, compares with python-statemachine.

Rules checked here (docs/spec.md): C16 (the generated source). (Its other survivors are
killed by test_returned_awaitable.py, or argued equivalent in tools/equivalent_mutants.txt.)
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
