"""``Instance.configuration`` answers set questions as python-statemachine's ``OrderedSet``
(C15): compared with, or combined with, a set of states."""

# Rules checked here (docs/spec.md): C15.

from __future__ import annotations

from statemachine import State, StateChart

from statecharts import compile_chart


class Shop(StateChart):  # type: ignore[type-arg]
    class work(State.Parallel, initial=True):
        class pay(State.Compound):
            unpaid = State(initial=True)
            paid = State()
            settle = unpaid.to(paid)

        class ship(State.Compound):
            packing = State(initial=True)
            shipped = State()
            dispatch = packing.to(shipped)

    done = State(final=True)
    close = work.to(done)


PAID, SHIPPED, PACKING = Shop.work.pay.paid, Shop.work.ship.shipped, Shop.work.ship.packing


def test_c15_configuration_answers_set_comparisons_and_operations_as_python_statemachine() -> None:
    """C15: ``>=``, ``<=``, ``>``, ``<``, ``==`` a set, ``|``, ``&``, ``-``, ``^`` and
    ``isdisjoint`` give what python-statemachine's configuration gives, in its order."""
    reference = Shop()
    instance = compile_chart(Shop).create()
    for machine in (reference, instance):
        machine.send("settle")
    mine, theirs = instance.configuration, reference.configuration
    questions = [
        lambda c: c >= {PAID},
        lambda c: c >= {PAID, SHIPPED},
        lambda c: c <= {PAID},
        lambda c: c > {PAID},
        lambda c: c < set(theirs) | {SHIPPED},
        lambda c: c == set(theirs),
        lambda c: c != {PAID},
        lambda c: {s.id for s in c | {SHIPPED}},
        lambda c: {s.id for s in {SHIPPED} | c},
        lambda c: {s.id for s in c & {PAID, SHIPPED}},
        lambda c: {s.id for s in c - {PAID}},
        lambda c: {s.id for s in {PAID, SHIPPED} - c},
        lambda c: {s.id for s in c ^ {PAID, SHIPPED}},
        lambda c: c.isdisjoint({SHIPPED}),
        lambda c: c.isdisjoint([PACKING]),
        lambda c: [s.id for s in c],
    ]
    assert [question(mine) for question in questions] == [
        question(theirs) for question in questions
    ]
    assert list(mine) == list(theirs)  # python-statemachine's order
    assert mine == theirs
