"""Derive a Hypothesis ``RuleBasedStateMachine`` from a compiled chart and an adapter.

``chart_machine(chart, adapter_factory)`` returns a machine class with one rule per declared
event (the rule has the event's name, so Hypothesis prints readable steps and swarm testing
switches events on and off), a rule sending undeclared events, and rules creating instances:
a Bundle of keys seeded by an ``initialize`` rule, so several instances interleave. Every step
goes through a ``ChartRunner``, which checks the SUT against the chart's reference instances.
Subclass the result to add rules the chart cannot express (malformed input, checkpoints...).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from .._runtime import Chart
from ._paths import Path, explore, node_paths
from ._payloads import PayloadStrategy, default_payloads, payload_parameters
from ._runner import Adapter, ChartRunner, ModelFactory, minimizer


class ChartMachine(RuleBasedStateMachine):
    """The base of derived machines; ``chart_machine`` fills in the class attributes."""

    chart: ClassVar[Chart]
    adapter_factory: ClassVar[Callable[[], Adapter]]
    model_factory: ClassVar[Callable[[], ModelFactory | None]] = staticmethod(lambda: None)
    max_instances: ClassVar[int] = 3
    keys = Bundle("keys")

    #: Whether a divergence's steps are minimized by replaying shorter runs on new adapters
    #: when first read (see ``minimizer``); off where replaying is costly or has effects.
    minimize_steps: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        cls = type(self)
        self.runner = ChartRunner(cls.chart, cls.adapter_factory(), cls.model_factory())
        if cls.minimize_steps:
            self.runner.minimize = minimizer(cls.chart, cls.adapter_factory, cls.model_factory())

    @initialize(target=keys)
    def create_first(self) -> str:
        return self.runner.create()

    @precondition(lambda self: len(self.runner.reference) < self.max_instances)
    @rule(target=keys)
    def create(self) -> str:
        return self.runner.create()

    @precondition(lambda self: self.runner.can_advance() and self.runner.next_wait() is not None)
    @rule()
    def advance_time(self) -> None:
        """Let time pass until the next delayed event of any instance is due (only for an
        adapter that can advance the SUT's time)."""
        wait = self.runner.next_wait()
        assert wait is not None
        self.runner.advance(wait)

    @invariant()
    def every_instance_agrees_with_the_chart(self) -> None:
        self.runner.check_all()

    def teardown(self) -> None:
        self.runner.close()


def chart_machine(
    chart: Chart,
    adapter: Callable[[], Adapter],
    *,
    payloads: Mapping[str, PayloadStrategy] | None = None,
    model: ModelFactory | None = None,
    max_instances: int = 3,
    undeclared: st.SearchStrategy[str] | None = None,
    paths: Sequence[Path] | None = None,
    name: str | None = None,
) -> type[ChartMachine]:
    """A ``RuleBasedStateMachine`` class testing what ``adapter()`` returns against ``chart``.

    ``payloads`` maps event ids to strategies of keyword-argument dicts (events left out get
    ``default_payloads``, reading the callbacks of the chart and of the model's class:
    ``model("k0")`` is called once for it); ``model(key)`` builds the model of each reference
    instance (guards and actions run on it, for real); ``undeclared`` draws event names the
    chart does not declare (default: ``"undeclared"``, ``"bogus"``). A ``walk_path`` rule
    walks one instance along one of ``paths`` (see ``transition_cover``), so random runs reach
    deep states quickly and interleave from there; by default they are ``node_paths``: each
    configuration, history and model state the chart reaches (``explore``, on the default
    payloads) followed by each event, so a system that remembers a history differently is
    shown it by one short walk; ``()``: no walks. Run it as ``Machine.TestCase`` or with
    ``run_state_machine_as_test``.
    """
    if not isinstance(chart, Chart):
        raise TypeError("chart_machine needs a compiled Chart (compile_chart(cls))")
    if max_instances < 1:
        raise ValueError(f"max_instances must be at least 1, got {max_instances}")
    payloads = dict(payloads or {})
    event_ids = [event.id for event in chart.events]
    unknown = sorted(set(payloads) - set(event_ids))
    if unknown:
        raise ValueError(
            f"payloads name events {chart.name} does not declare: {unknown} (events: {event_ids})"
        )
    # Names the machine uses itself: its methods, its class attributes (``chart`` is only
    # annotated on the base) and the runner set in ``__init__``.
    taken = set(dir(ChartMachine)) | set(ChartMachine.__annotations__) | {"runner"}
    namespace: dict[str, Any] = {
        "chart": chart,
        "adapter_factory": staticmethod(adapter),
        "model_factory": staticmethod(lambda: model),
        "max_instances": max_instances,
        "__module__": __name__,
        "__doc__": f"Derived stateful test of {chart.qualname}.",
    }
    # one model, to read the callbacks its class defines (the runtime looks names up there too)
    sample = None if model is None else model("k0")
    for event, rule_name in rule_names(event_ids, taken).items():
        strategy = payloads[event] if event in payloads else default_payloads(chart, event, sample)
        namespace[rule_name] = _event_rule(rule_name, event, strategy)
    declared = set(event_ids)
    names = undeclared if undeclared is not None else st.sampled_from(["undeclared", "bogus"])
    namespace["undeclared_event"] = _undeclared_rule(names.filter(lambda e: e not in declared))
    if paths is None:
        paths = _default_paths(chart, model, payloads, sample)
    if paths:
        namespace["walk_path"] = _walk_rule(list(paths))
    machine = type(name or f"{chart.name}Machine", (ChartMachine,), namespace)
    return machine


def rule_names(events: Sequence[str], taken: set[str]) -> dict[str, str]:
    """The rule name of each event: the event's own name where it is an identifier the
    machine does not use itself and not a Python keyword (Hypothesis compiles a ``def`` named
    after the rule); otherwise ``send_`` and the name with every character an identifier
    cannot hold made ``_`` (``continue`` gets ``send_continue``), numbered if that is taken
    too. Every event gets its own rule (``create`` and ``send_create`` both get one)."""
    names: dict[str, str] = {}
    used = set(taken)
    for event in events:
        if event.isidentifier() and not keyword.iskeyword(event) and event not in taken:
            names[event] = event
            used.add(event)
    for event in events:
        if event in names:
            continue
        base = "send_" + re.sub(r"\W", "_", event)
        name, number = base, 2
        while name in used:
            name, number = f"{base}_{number}", number + 1
        names[event] = name
        used.add(name)
    return {event: names[event] for event in events}


def _event_rule(rule_name: str, event: str, strategy: PayloadStrategy) -> Any:
    def send_event(self: ChartMachine, key: str, payload: Mapping[str, Any]) -> None:
        self.runner.send(key, event, payload)

    send_event.__name__ = send_event.__qualname__ = rule_name
    send_event.__doc__ = f"Send {event!r} to one instance."
    return rule(key=ChartMachine.keys, payload=strategy)(send_event)


def _default_paths(
    chart: Chart, model: ModelFactory | None, payloads: Mapping[str, Any], sample: Any = None
) -> list[Path]:
    """``node_paths`` of a bounded exploration by the events that take no payload (no
    argument, no strategy given): a payload only the user's strategies can draw is theirs to
    send, so the walks never invent one."""
    plain = [
        event.id
        for event in chart.events
        if event.id not in payloads and not payload_parameters(chart, event.id, sample)
    ]
    if not plain:
        return []
    candidates: dict[str, list[dict[str, Any]]] = {
        event.id: [] for event in chart.events if event.id not in plain
    }
    candidates.update({event: [{}] for event in plain})
    try:
        found = explore(chart, candidates, model=model, max_depth=8, max_nodes=200)
    except Exception:  # a user's callback refused to run on the search's model: no walks
        return []
    return node_paths(found, plain)


def _walk_rule(paths: list[Path]) -> Any:
    def walk_path(self: ChartMachine, key: str, path: Path) -> None:
        for step in path.steps:
            if step.seconds is None:
                self.runner.send(key, step.event, step.payload)
            elif self.runner.can_advance():
                self.runner.advance(step.seconds)
            else:  # the SUT cannot be shown time passing: the walk stops here
                return

    walk_path.__doc__ = "Walk one instance along a path (from wherever it is)."
    deepest_first = sorted(paths, key=lambda path: -len(path.steps))  # shrinking goes shallower
    return rule(key=ChartMachine.keys, path=st.sampled_from(deepest_first))(walk_path)


def _undeclared_rule(names: st.SearchStrategy[str]) -> Any:
    def undeclared_event(self: ChartMachine, key: str, event: str) -> None:
        self.runner.send(key, event, {})

    return rule(key=ChartMachine.keys, event=names)(undeclared_event)
