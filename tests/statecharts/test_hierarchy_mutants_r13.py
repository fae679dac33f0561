"""Details the mutation sample of ``statecharts/_hierarchy.py`` (seed 2703) found untested:
which snapshots restore a stopped machine, and that a node's eventless selection is generated
once, whatever its mode.

Rules checked here (docs/spec.md): C13, C15.
"""

from __future__ import annotations

from typing import Any

from statemachine import State, StateChart

from statecharts import compile_chart


def ids(instance: Any) -> list[str]:
    return sorted(state.id for state in instance.configuration)


class NestedParallel(StateChart[Any]):
    """A parallel state inside a compound one: not top-level, so never the machine's end."""

    class outer(State.Compound):
        class both(State.Parallel):
            class left(State.Compound):
                l1 = State(initial=True)
                l2 = State()
                lgo = l1.to(l2)

            class right(State.Compound):
                r1 = State(initial=True)
                r2 = State()
                rgo = r1.to(r2)

        wait = State()
        pause = both.to(wait)

    done = State(final=True)
    finish = outer.to(done)


class TopCompound(StateChart[Any]):
    """A top-level compound state whose final child is active: the machine goes on."""

    class outer(State.Compound):
        a = State(initial=True)
        end = State(final=True)
        close = a.to(end)

    other = State(final=True)
    leave = outer.to(other)


def test_c15_a_restored_nested_parallel_state_keeps_the_machine_running() -> None:
    chart = compile_chart(NestedParallel)
    snapshot = chart.create().snapshot()
    # at rest, running as its configuration says: the snapshot says nothing of stopping
    assert "stopping" not in snapshot
    restored = chart.restore(snapshot)
    assert restored.is_terminated is False
    assert restored.send("lgo").applied
    assert ids(restored) == ["both", "l2", "left", "outer", "r1", "right"]


def test_c15_a_restored_final_child_of_a_top_level_compound_keeps_the_machine_running() -> None:
    reference = TopCompound()
    reference.send("close")
    assert reference.is_terminated is False
    chart = compile_chart(TopCompound)
    instance = chart.create()
    instance.send("close")
    assert "stopping" not in instance.snapshot()
    for again in (chart.restore(instance.snapshot()), chart.resume("end")):
        assert again.is_terminated is False
        assert again.send("leave").applied
        assert ids(again) == ["other"]


class Finishing(StateChart[Any]):
    """A top-level parallel state completing (its node pending until the macrostep ends),
    left by an eventless transition enabled exactly there."""

    class work(State.Parallel):
        class one(State.Compound):
            a = State(initial=True)
            a_done = State(final=True)
            fin1 = a.to(a_done)

        class two(State.Compound):
            b = State(initial=True)
            b_done = State(final=True)
            fin2 = b.to(b_done)

    after = State()
    work.to(after, cond="In('a_done') and In('b_done')")
    restart = after.to(work)


def test_c13_an_eventless_selection_is_generated_once_per_node() -> None:
    """Reaching the same node again (a pending one too) reuses the code generated for it."""
    reference = Finishing()
    for event in ("fin1", "fin2"):
        reference.send(event)
    expected = ids(reference)
    chart = compile_chart(Finishing)
    instance = chart.create()
    binding = instance._node.binding
    sizes = []
    for _ in range(4):
        for event in ("fin1", "fin2"):
            assert instance.send(event).applied
        assert ids(instance) == expected
        assert instance.send("restart").applied
        sizes.append(len(binding.source))
    assert sizes[1:] == sizes[:1] * 3
