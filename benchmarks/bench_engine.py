"""Compiled statecharts runtime against python-statemachine, transitions and a hand-written
dispatcher doing the same work, measured in one run.

Four costs: one event taking a self-transition with an action, one ignored event (declared, but
with no transition from the current state), creating one instance (with its model), and the
memory one live instance holds (tracemalloc, model included). A second table measures a
statechart (a parallel state of two compound regions, one event handled in both) against
python-statemachine. Each time is the median of several
repeats; every ratio is against the hand-written dispatcher of this same run, so the machine's
speed cancels out. Run: ``python benchmarks/bench_engine.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statemachine import State, StateChart
from transitions import Machine

from statecharts import compile_chart


class Model:
    """The same domain object for every engine: a running total."""

    def __init__(self) -> None:
        self.total = 0

    def count(self, amount: int = 1) -> None:
        self.total += amount


class Meter(StateChart):
    """The benchmark chart: a self-transition with an action, and an event to ignore."""

    idle = State(initial=True)
    running = State()

    start = idle.to(running)
    tick = running.to.itself(on="count")
    halt = running.to(idle)


class Media(StateChart):
    """The hierarchical benchmark chart: a parallel state of two compound regions, and one
    event (``toggle``) that takes a transition in both regions at once."""

    class powered(State.Parallel):
        class audio(State.Compound):
            playing = State(initial=True)
            paused = State()
            toggle = playing.to(paused) | paused.to(playing)

        class video(State.Compound):
            shown = State(initial=True)
            hidden = State()
            toggle = shown.to(hidden, on="count") | hidden.to(shown, on="count")

    off = State(initial=True)
    power = off.to(powered) | powered.to(off)


# -- the hand-written reference ----------------------------------------------------------------


def _count(model: Model, amount: int = 1) -> None:
    model.total += amount


APPLIED, IGNORED = ("applied",), ("ignored",)
TABLE: dict[str, dict[str, tuple[str, Callable[..., None] | None]]] = {
    "idle": {"start": ("running", None)},
    "running": {"tick": ("running", _count), "halt": ("idle", None)},
}


class HandMachine:
    """A dict dispatcher: look up (state, event), run the action, move, report the outcome."""

    __slots__ = ("model", "state")

    def __init__(self, model: Model) -> None:
        self.state = "idle"
        self.model = model

    def send(self, event: str, **payload: Any) -> tuple[str]:
        entry = TABLE[self.state].get(event)
        if entry is None:
            return IGNORED
        target, action = entry
        if action is not None:
            action(self.model, **payload)
        self.state = target
        return APPLIED


# -- the engines under test --------------------------------------------------------------------


@dataclass(frozen=True)
class Engine:
    """How to create a running instance and send it events, for one engine."""

    name: str
    create: Callable[[], Any]
    tick: Callable[[Any], Any]
    ignored: Callable[[Any], Any]
    scale: int  # iterations relative to the fast engines


def engines() -> list[Engine]:
    chart = compile_chart(Meter)
    machine = Machine(
        model=[],
        states=["idle", "running"],
        transitions=[
            ["start", "idle", "running"],
            {"trigger": "tick", "source": "running", "dest": "running", "after": "count"},
            ["halt", "running", "idle"],
        ],
        initial="idle",
        auto_transitions=False,
        ignore_invalid_triggers=True,
    )

    def transitions_create() -> Model:
        model = Model()
        machine.add_model(model)
        return model

    return [
        Engine(
            "hand-written",
            lambda: HandMachine(Model()),
            lambda m: m.send("tick", amount=1),
            lambda m: m.send("start"),
            1,
        ),
        Engine(
            "statecharts (compiled)",
            lambda: chart.create(Model()),
            lambda m: m.send("tick", amount=1),
            lambda m: m.send("start"),
            1,
        ),
        Engine(
            "transitions",
            transitions_create,
            lambda m: m.trigger("tick", amount=1),
            lambda m: m.trigger("start"),
            20,
        ),
        Engine(
            "python-statemachine",
            lambda: Meter(Model()),
            lambda m: m.send("tick", amount=1),
            lambda m: m.send("start"),
            400,
        ),
    ]


def start_running(engine: Engine) -> Any:
    instance = engine.create()
    if engine.name == "transitions":
        instance.trigger("start")
    else:
        instance.send("start")
    return instance


def median_ns(action: Callable[[], Any], number: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean time of ``number`` calls, in nanoseconds."""
    samples = []
    for _ in range(repeats):
        gc.collect()
        begin = time.perf_counter_ns()
        for _ in range(number):
            action()
        samples.append((time.perf_counter_ns() - begin) / number)
    return statistics.median(samples)


def bytes_per_instance(engine: Engine, count: int) -> float:
    """Net bytes held per live instance (model included), by tracemalloc."""
    engine.create()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = [engine.create() for _ in range(count)]
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    allocated = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    del kept
    return allocated / count


@dataclass
class Row:
    name: str
    tick: float
    ignored: float
    create: float
    memory: float


def measure(quick: bool) -> list[Row]:
    number = 2_000 if quick else 50_000
    repeats = 3 if quick else 7
    rows = []
    for engine in engines():
        per_run = max(number // engine.scale, 20)
        instance = start_running(engine)
        tick = median_ns(lambda i=instance, e=engine: e.tick(i), per_run, repeats)
        ignored = median_ns(lambda i=instance, e=engine: e.ignored(i), per_run, repeats)
        create = median_ns(engine.create, max(per_run // 2, 20), repeats)
        memory = bytes_per_instance(engine, max(per_run // 4, 50))
        rows.append(Row(engine.name, tick, ignored, create, memory))
    return rows


def measure_hierarchical(quick: bool) -> list[Row]:
    """Per event (``toggle``, a microstep in both regions), per instance and memory, for the
    statechart on the compiled runtime and on python-statemachine."""
    number = 2_000 if quick else 50_000
    repeats = 3 if quick else 7
    chart = compile_chart(Media)
    engines = [
        ("statecharts (compiled)", lambda: chart.create(Model()), 1),
        ("python-statemachine", lambda: Media(Model()), 200),
    ]
    rows = []
    for name, create, scale in engines:
        per_run = max(number // scale, 20)
        instance = create()
        instance.send("power")
        tick = median_ns(lambda i=instance: i.send("toggle"), per_run, repeats)
        ignored = median_ns(lambda i=instance: i.send("nothing"), per_run, repeats)
        made = median_ns(create, max(per_run // 2, 20), repeats)
        engine = Engine(name, create, lambda m: None, lambda m: None, scale)
        memory = bytes_per_instance(engine, max(per_run // 4, 50))
        rows.append(Row(name, tick, ignored, made, memory))
    return rows


def report_hierarchical(rows: list[Row]) -> str:
    compiled, psm = rows
    lines = [
        "",
        "hierarchical chart (a parallel state of two compound regions; one event in both)",
        f"{'engine':<24}{'tick event':>12}{'ignored event':>15}{'create':>12}{'bytes/inst':>12}",
    ]
    for row in rows:
        lines.append(
            f"{row.name:<24}{_us(row.tick):>12}{_us(row.ignored):>15}{_us(row.create):>12}"
            f"{row.memory:>12.0f}"
        )
    faster = psm.tick / compiled.tick
    smaller = compiled.memory / psm.memory
    lines.append("")
    lines.append(
        f"target >= 50x faster than python-statemachine per event: {faster:.0f}x "
        f"({'met' if faster >= 50 else 'MISSED'})"
    )
    lines.append(
        f"target memory per instance <= 1/10 of python-statemachine: {smaller:.3f} "
        f"({'met' if smaller <= 0.1 else 'MISSED'})"
    )
    return "\n".join(lines)


def report(rows: list[Row]) -> str:
    hand = rows[0]
    lines = [
        f"{'engine':<24}{'tick event':>12}{'ratio':>9}{'ignored event':>15}{'ratio':>9}"
        f"{'create':>12}{'ratio':>9}{'bytes/inst':>12}{'ratio':>8}",
    ]
    for row in rows:
        lines.append(
            f"{row.name:<24}{_us(row.tick):>12}{row.tick / hand.tick:>8.2f}x"
            f"{_us(row.ignored):>15}{row.ignored / hand.ignored:>8.2f}x"
            f"{_us(row.create):>12}{row.create / hand.create:>8.2f}x"
            f"{row.memory:>12.0f}{row.memory / hand.memory:>7.2f}x"
        )
    compiled = next(r for r in rows if r.name.startswith("statecharts"))
    psm = next(r for r in rows if r.name == "python-statemachine")
    trans = next(r for r in rows if r.name == "transitions")
    checks = [
        ("per event <= 2.5x hand-written", compiled.tick / hand.tick, 2.5),
        ("ignored event <= 2.5x hand-written", compiled.ignored / hand.ignored, 2.5),
        ("per instance <= 2x hand-written", compiled.create / hand.create, 2.0),
        ("memory per instance <= 2x hand-written", compiled.memory / hand.memory, 2.0),
    ]
    lines.append("")
    for label, ratio, bound in checks:
        verdict = "met" if ratio <= bound else "MISSED"
        lines.append(f"target {label}: {ratio:.2f}x ({verdict})")
    faster_psm = psm.tick / compiled.tick
    faster_trans = trans.tick / compiled.tick
    lines.append(
        f"target >= 100x faster than python-statemachine per event: {faster_psm:.0f}x "
        f"({'met' if faster_psm >= 100 else 'MISSED'})"
    )
    lines.append(
        f"target >= 10x faster than transitions per event: {faster_trans:.1f}x "
        f"({'met' if faster_trans >= 10 else 'MISSED'})"
    )
    return "\n".join(lines)


def _us(nanoseconds: float) -> str:
    return f"{nanoseconds / 1000:.3f} us"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke run)")
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}; medians of repeated runs; ratios vs hand-written")
    print(report(measure(args.quick)))
    print(report_hierarchical(measure_hierarchical(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
