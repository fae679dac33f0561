"""Run a system under test beside a compiled chart, step by step, and check they agree.

``ChartRunner`` is the engine of the derived stateful tests, of path cases and of ``replay``:
it keeps one reference instance of the chart per key, sends every step to both the reference
and the system under test (through an ``Adapter``), and raises ``Divergence`` as soon as they
disagree. Agreement is judged on configurations (the sets of active state ids), so the same
checks hold for flat and hierarchical charts.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._clock import VirtualClock
from .._errors import Divergence
from .._ir import ChartDef
from .._runtime import Chart, Instance, Outcome


@runtime_checkable
class Adapter(Protocol):
    """How the tests drive a system under test (SUT) that implements a chart.

    ``create(key)`` makes a new instance known by ``key``; ``send`` delivers one event with its
    payload (keyword arguments) and says whether the SUT applied it (``None`` when the SUT
    cannot tell); ``configuration`` is the set of state ids active in the instance (one id for a
    flat chart). An adapter may also define ``close()``, called when a test case ends,
    ``transcript()``, a list of what it sent in the SUT's own terms, shown on a divergence, and
    ``advance(seconds)``, which lets that much time pass for every instance of the SUT (its
    delayed events due by then run): the chart's reference instances run on a virtual clock,
    and only an adapter that can advance the SUT's time is shown time passing.
    """

    def create(self, key: str) -> None: ...

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool | None: ...

    def configuration(self, key: str) -> Iterable[str]: ...


def configuration_of(instance: Instance) -> frozenset[str]:
    """The active state ids of a compiled instance (ancestors included on hierarchical charts).

    Uses ``instance.configuration`` where the runtime provides it, else the one current state.
    """
    configuration = getattr(instance, "configuration", None)
    if configuration is not None:
        return frozenset(state if isinstance(state, str) else state.id for state in configuration)
    return frozenset({instance.state.id})


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a run: ``Step(key)`` creates an instance, ``Step(key, event, payload)`` sends
    ``event`` to it. A list of steps is what ``replay`` takes and a divergence prints."""

    key: str
    event: str | None = None
    payload: Mapping[str, Any] = field(default_factory=dict)
    #: For a wait (``Step.wait(seconds)``): how many seconds pass for every instance.
    seconds: float | None = None

    @classmethod
    def wait(cls, seconds: float) -> Step:
        """A step letting ``seconds`` pass for every instance (their delayed events due by
        then run)."""
        return cls("", None, {}, seconds)

    def __repr__(self) -> str:
        if self.seconds is not None:
            return f"Step.wait({self.seconds!r})"
        if self.event is None:
            return f"Step({self.key!r})"
        if not self.payload:
            return f"Step({self.key!r}, {self.event!r})"
        return f"Step({self.key!r}, {self.event!r}, {python_literal(dict(self.payload))})"

    def imports(self) -> set[str]:
        """The import lines the step's printed form needs (``from shop import Color`` for a
        payload holding ``Color.RED``)."""
        needed: set[str] = set()
        python_literal(dict(self.payload), needed)
        return needed


def python_literal(value: Any, imports: set[str] | None = None) -> str:
    """Python source that evaluates to ``value`` where ``repr`` does not write it as code:
    floats ``repr`` writes ``nan`` or ``inf`` are written ``float("nan")``, an enum member
    ``Color.RED`` (``Color(3)`` for a combination of flags), a dataclass or named tuple by
    its fields (so a ``nan`` inside is written as code too), inside containers (sets too) and
    complex numbers too; anything else is its ``repr``. ``imports`` collects the import lines
    the text needs (``from shop import Color``)."""
    if isinstance(value, enum.Enum):
        cls = type(value)
        name = value.name
        if name is not None and name.isidentifier() and getattr(cls, name, None) is value:
            return f"{_class_name(cls, imports)}.{name}"
        return f"{_class_name(cls, imports)}({python_literal(value.value, imports)})"
    if isinstance(value, float) and not math.isfinite(value):
        text = "nan" if math.isnan(value) else "inf"
        return f'-float("{text}")' if value < 0 else f'float("{text}")'
    if type(value) is dict:
        items = ", ".join(
            f"{python_literal(k, imports)}: {python_literal(v, imports)}" for k, v in value.items()
        )
        return "{" + items + "}"
    if type(value) is list:
        return "[" + ", ".join(python_literal(item, imports) for item in value) + "]"
    if type(value) is tuple:
        parts = [python_literal(item, imports) for item in value]
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if type(value) in (set, frozenset):
        items = ", ".join(python_literal(item, imports) for item in value)
        if type(value) is set:
            return "{" + items + "}" if items else "set()"
        return "frozenset({" + items + "})" if items else "frozenset()"
    if type(value) is complex and not (math.isfinite(value.real) and math.isfinite(value.imag)):
        real, imag = python_literal(value.real), python_literal(value.imag)
        return f"complex({real}, {imag})"
    fields = _fields_of(value)
    if fields is not None:
        arguments = ", ".join(f"{name}={python_literal(v, imports)}" for name, v in fields)
        return f"{_class_name(type(value), imports)}({arguments})"
    return repr(value)


def _fields_of(value: Any) -> list[tuple[str, Any]] | None:
    """The constructor arguments of a dataclass instance (when every field is one) or a named
    tuple, by name; ``None`` for anything else."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        if all(f.init for f in fields) and type(value).__repr__ is not object.__repr__:
            return [(f.name, getattr(value, f.name)) for f in fields]
        return None
    names = getattr(type(value), "_fields", None)
    if isinstance(value, tuple) and isinstance(names, tuple):
        return list(zip(names, value, strict=True))
    return None


def _class_name(cls: type, imports: set[str] | None) -> str:
    """How the printed text names ``cls``: its qualified name, its module's top-level name
    imported (classes defined in a function print as they are named)."""
    if imports is not None and cls.__module__ not in ("builtins", "__main__"):
        top = cls.__qualname__.split(".")[0]
        if top != "<locals>" and "<locals>" not in cls.__qualname__:
            imports.add(f"from {cls.__module__} import {top}")
    return cls.__qualname__


ModelFactory = Callable[[str], Any]


class ChartRunner:
    """Drives an adapter and the chart's reference instances in lockstep, checking after every
    step that the configuration is declared, final states absorb, the SUT's configuration equals
    the reference's, and (when the SUT can tell) that both applied or both ignored the event.

    The reference instances share one ``VirtualClock`` (``clock``): a delayed event waits
    until ``advance`` lets time pass, never in real time.
    """

    def __init__(self, chart: Chart, adapter: Adapter, model: ModelFactory | None = None) -> None:
        self.chart = chart
        self.adapter = adapter
        self.model = model
        self.clock = VirtualClock()
        self.reference: dict[str, Instance] = {}
        self.steps: list[Step] = []
        self.declared = frozenset(state.id for state in chart.states)
        #: Called with every ``Divergence`` before it is raised (a conformance run keeps the
        #: first, in case Hypothesis cannot replay it).
        self.on_divergence: Callable[[Divergence], None] | None = None
        #: Given to every ``Divergence`` raised: finds a shorter run that still diverges
        #: (``minimizer``), when it is first read.
        self.minimize: Callable[[Divergence], Divergence | None] | None = None

    @property
    def keys(self) -> list[str]:
        """The keys created so far, in creation order."""
        return list(self.reference)

    def new_key(self, prefix: str = "k") -> str:
        """A key no instance uses yet: ``k0``, ``k1``, ..."""
        return f"{prefix}{len(self.reference)}"

    def create(self, key: str | None = None) -> str:
        """Create an instance in both; returns its key."""
        key = self.new_key() if key is None else key
        if key in self.reference:
            raise ValueError(f"key {key!r} already names an instance")
        self.steps.append(Step(key))
        model = None if self.model is None else self.model(key)
        self.reference[key] = self.chart.create(model, clock=self.clock)
        self.adapter.create(key)
        self.check(key)
        return key

    def next_wait(self) -> float | None:
        """How many seconds until a reference instance's next delayed event is due (``None``:
        none waits)."""
        dues = [due for ref in self.reference.values() if (due := ref.next_due()) is not None]
        return max(0.0, min(dues) - self.clock.now()) if dues else None

    def can_advance(self) -> bool:
        """Whether the adapter can let time pass (it has ``advance(seconds)``)."""
        return callable(getattr(self.adapter, "advance", None))

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass in both (the reference's virtual clock, the adapter's
        ``advance``), running the delayed events due by then; raise ``Divergence`` if they
        disagree afterwards. Where a delayed event makes the chart raise, the SUT must raise
        an exception of the same type. Raises ``TypeError`` if the adapter cannot advance."""
        advance = getattr(self.adapter, "advance", None)
        if not callable(advance):
            raise TypeError(
                f"{type(self.adapter).__name__} has no advance(seconds): it cannot let time "
                "pass for the chart's delayed events"
            )
        self.steps.append(Step.wait(seconds))
        try:
            self.clock.advance(seconds)
        except Exception as raised:  # a delayed event's callback refused: the SUT must too
            try:
                advance(seconds)
            except Exception as error:
                if type(error) is not type(raised):
                    self.fail(
                        f"the chart raised {type(raised).__name__} as time passed, the SUT "
                        f"{type(error).__name__}",
                        repr(raised),
                        repr(error),
                    )
            else:
                self.fail(
                    f"the chart raised {type(raised).__name__} as time passed, the SUT did not",
                    repr(raised),
                    None,
                )
        else:
            advance(seconds)
        self.check_all()

    def send(
        self, key: str, event: str, payload: Mapping[str, Any] | None = None
    ) -> Outcome | None:
        """Send one event to both; raise ``Divergence`` if they disagree afterwards. Where the
        chart raises (a guard or action refusing the payload, in a chart that does not catch
        errors as events), the SUT must raise an exception of the same type; then nothing is
        returned."""
        payload = dict(payload or {})
        reference = self.reference[key]
        before = configuration_of(reference)
        was_final = reference.is_terminated
        self.steps.append(Step(key, event, payload))
        try:
            outcome = reference.send(event, **payload)
        except Exception as error:  # the user's callback refused: the SUT must refuse too
            self._both_raise(key, event, payload, error)
            return None
        applied = self.adapter.send(key, event, payload)
        if was_final and (outcome.applied or configuration_of(reference) != before):
            self.fail("the reference left a final state", before, configuration_of(reference))
        if was_final:
            actual = frozenset(self.adapter.configuration(key))
            if actual != before:
                self.fail(
                    f"{key}: final state {sorted(before)} did not absorb {event!r}",
                    sorted(before),
                    sorted(actual),
                )
        if applied is not None and bool(applied) != outcome.applied:
            verb = "applied" if outcome.applied else "ignored"
            self.fail(
                f"{key}: the chart {verb} {event!r} in {sorted(before)}, the SUT did not",
                outcome.applied,
                applied,
            )
        self.check(key)
        return outcome

    def _both_raise(
        self, key: str, event: str, payload: dict[str, Any], raised: Exception
    ) -> None:
        try:
            self.adapter.send(key, event, payload)
        except Exception as error:
            if type(error) is not type(raised):
                self.fail(
                    f"{key}: the chart raised {type(raised).__name__} for {event!r}, the SUT "
                    f"{type(error).__name__}",
                    repr(raised),
                    repr(error),
                )
        else:
            self.fail(
                f"{key}: the chart raised {type(raised).__name__} for {event!r}, the SUT did not",
                repr(raised),
                None,
            )
        self.check(key)

    def check(self, key: str) -> frozenset[str]:
        """Check one instance's configuration: declared, and the same in both; return it."""
        actual = frozenset(self.adapter.configuration(key))
        undeclared = actual - self.declared
        if undeclared:
            self.fail(
                f"{key}: the SUT reports states the chart does not declare: {sorted(undeclared)}",
                sorted(self.declared),
                sorted(actual),
            )
        expected = configuration_of(self.reference[key])
        if actual != expected:
            self.fail(f"{key}: configurations differ", sorted(expected), sorted(actual))
        return actual

    def check_all(self) -> None:
        """Check every instance (so an event routed to the wrong key is caught too)."""
        for key in self.reference:
            self.check(key)

    def fail(self, problem: str, expected: Any, actual: Any) -> None:
        """Raise ``Divergence`` with the steps so far and the adapter's transcript."""
        transcript = getattr(self.adapter, "transcript", None)
        divergence = Divergence(
            problem,
            self.steps,
            expected,
            actual,
            transcript() if transcript is not None else (),
            self.minimize,
        )
        if self.on_divergence is not None:
            self.on_divergence(divergence)
        raise divergence

    def close(self) -> None:
        """Let the adapter release what it holds."""
        close = getattr(self.adapter, "close", None)
        if close is not None:
            close()


def minimizer(
    chart: Chart, adapter: Callable[[], Adapter], model: ModelFactory | None = None
) -> Callable[[Divergence], Divergence | None]:
    """A ``ChartRunner.minimize`` for runs on fresh adapters: drops one step at a time (a
    creation with the steps of its key), or else two in a row, while the shorter run,
    replayed on a new adapter, still diverges, until none can go; returns the shortest
    divergence found (``None``: none shorter). Each replay is checked as the derived test
    checks; a run that raises anything but ``Divergence`` does not count."""

    def attempt(steps: list[Step]) -> Divergence | None:
        try:
            replay(chart, adapter(), steps, model=model)
        except Divergence as found:
            found._minimize = None
            return found
        except Exception:  # the SUT or the chart refused the shorter run: it shows nothing
            return None
        return None

    def minimize(divergence: Divergence) -> Divergence | None:
        steps = [step for step in divergence._fields[1] if isinstance(step, Step)]
        best: Divergence | None = None
        shrinking = True
        while shrinking:
            shrinking = False
            for candidate in _shorter_runs(steps):
                found = attempt(candidate)
                if found is not None:
                    best = found
                    steps = [s for s in found._fields[1] if isinstance(s, Step)]
                    shrinking = True
                    break
        return best

    return minimize


def _shorter_runs(steps: list[Step]) -> Iterator[list[Step]]:
    """Each run with one step fewer (a creation with the steps of its key), then each
    with two steps in a row fewer (an event and the one undoing it, ``power, power``)."""
    for index in range(len(steps) - 1, -1, -1):
        step = steps[index]
        if step.event is None and step.seconds is None:  # an instance, with its steps
            yield [s for s in steps if s.key != step.key]
        else:
            yield steps[:index] + steps[index + 1 :]
    for index in range(len(steps) - 2, -1, -1):
        pair = steps[index : index + 2]
        if all(step.event is not None or step.seconds is not None for step in pair):
            yield steps[:index] + steps[index + 2 :]


def replay(
    chart: Chart | ChartDef,
    adapter: Adapter,
    steps: Iterable[Step],
    *,
    model: ModelFactory | None = None,
) -> ChartRunner:
    """Run ``steps`` (as a divergence printed them) against ``adapter`` and the chart, with the
    same checks as the derived tests; raises ``Divergence`` where they disagree."""
    if not isinstance(chart, Chart):
        raise TypeError("replay needs a compiled Chart (compile_chart(cls))")
    runner = ChartRunner(chart, adapter, model)
    try:
        for step in steps:
            if step.seconds is not None:
                runner.advance(step.seconds)
            elif step.event is None:
                runner.create(step.key)
            else:
                runner.send(step.key, step.event, step.payload)
        runner.check_all()
    finally:
        runner.close()
    return runner
