"""Breaks found by an independent review of issue 9 (round 4). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): M3, M4, M5, L7.

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from statemachine import State, StateChart

from statecharts import Coverage, compile_chart
from statecharts.testing import (
    chart_machine,
    explore,
    path_cases,
    payload_parameters,
    record_coverage,
    shortest_paths,
)
from tests.statecharts.charts import EngineAdapter
from toolcalls._chart import ToolCallChart
from toolcalls.conformance._suite import SEARCH, _record

ROOT = Path(__file__).parents[2]


class Till(StateChart):  # type: ignore[type-arg]
    """A till whose guard refuses a negative amount by raising (python-statemachine raises it
    to the sender, as ``catch_errors_as_events = False`` asks)."""

    catch_errors_as_events = False

    open = State(initial=True)
    paid = State(final=True)

    pay = open.to(paid, cond="enough")

    def enough(self, amount: int) -> bool:
        if amount < 0:
            raise ValueError("a negative amount")
        return amount >= 10


class Race(StateChart):  # type: ignore[type-arg]
    """Two parallel regions: ``start`` enters five states at once."""

    idle = State(initial=True)

    class run(State.Parallel):
        class left(State.Compound):
            l1 = State(initial=True)
            l2 = State(final=True)

            lgo = l1.to(l2)

        class right(State.Compound):
            r1 = State(initial=True)
            r2 = State(final=True)

            rgo = r1.to(r2)

    done = State(final=True)

    start = idle.to(run)
    finish = run.to(done)


class Card:
    """The model of ``Checkout``."""

    number: str | None = None


class Checkout(StateChart):  # type: ignore[type-arg]
    """``pay`` enters ``checkout`` and so its initial child ``paying``, whose entry action
    takes the card from the payload; an action that fails sends the user back (the
    ``error.execution`` transition python-statemachine charts declare)."""

    browsing = State(initial=True)

    class checkout(State.Compound):
        paying = State(initial=True)
        done = State(final=True)

        confirm = paying.to(done)

    pay = browsing.to(checkout)
    failed = checkout.to(browsing, event="error.execution")

    def on_enter_paying(self, card: str) -> None:
        self.model.number = card


class Lamp(StateChart):  # type: ignore[type-arg]
    off = State(initial=True)
    on = State()

    flip = off.to(on) | on.to(off)


# -- M5: paths by construction ----------------------------------------------------------------


def test_M5_shortest_paths_with_default_candidates_survive_a_guard_on_an_int() -> None:
    """``shortest_paths(chart)`` with no candidates on a chart whose guard takes
    ``amount: int``: the default candidate sends ``amount=None`` (the annotation ignored, unlike
    the derived test's default payloads), the guard compares ``None < 0`` and the search dies
    with the user's ``TypeError``."""
    chart = compile_chart(Till)
    found = shortest_paths(chart)
    assert "open" in found


def test_M5_path_cases_of_shortest_paths_have_one_case_per_path() -> None:
    """``path_cases(shortest_paths(chart))``, as documented, on a chart whose ``start`` enters
    five states at once: five cases all named ``start`` (pytest renames them ``start0`` ...
    ``start4``, ids that read as an event ``start0``), running the same path five times."""
    ids = [case.id for case in path_cases(shortest_paths(compile_chart(Race)))]
    assert len(ids) == len(set(ids)), ids


def test_M5_payloads_carry_what_the_states_an_event_enters_ask_for() -> None:
    """``pay`` enters ``checkout`` and its initial child ``paying``, whose entry action takes
    ``card``: ``payload_parameters`` looks only at the source's and target's own callbacks,
    gives ``[]``, so neither the search nor the derived test ever sends a card; every ``pay``
    fails back to ``browsing`` and ``explore`` reports ``paying`` and ``done`` unreachable."""
    chart = compile_chart(Checkout)
    instance = chart.create(Card())
    instance.send("pay", card="4111")
    assert {state.id for state in instance.configuration} == {"checkout", "paying"}
    assert "card" in payload_parameters(chart, "pay")
    found = explore(chart, model=lambda key: Card())
    assert found.unreached_states == ()


def test_M5_shortest_paths_reach_the_state_a_macrostep_passes_through() -> None:
    """The tool call chart's own ``parsing`` state (T7: ``ready`` enters it, eventless
    transitions leave it in the same step): with the conformance suite's candidates every
    transition is taken, ``pending:ready:parsing`` included, yet ``explore`` lists ``parsing``
    unreached and ``shortest_paths`` has no path to it, because only the configurations runs
    end in count as reached."""
    chart = compile_chart(ToolCallChart)
    found = explore(chart, SEARCH, model=_record)
    assert "pending:ready:parsing" in found.to_transition
    assert found.unreached_states == ()
    assert "parsing" in shortest_paths(chart, SEARCH, model=_record)


# -- M4: derived stateful tests ---------------------------------------------------------------


def test_M4_a_guard_that_raises_is_not_a_failure_of_a_correct_sut() -> None:
    """A chart whose guard raises on a negative amount, tested against python-statemachine's
    own engine running the same class (it raises the same ``ValueError``): the derived test
    fails with that ``ValueError`` from the reference instance, before the SUT is even asked,
    so no chart with a raising guard or action can be tested."""
    machine = chart_machine(compile_chart(Till), lambda: EngineAdapter(Till))
    run_state_machine_as_test(
        machine, settings=settings(max_examples=60, database=None, deadline=None)
    )


# -- M3: coverage -----------------------------------------------------------------------------


def test_M3_events_other_threads_send_during_a_path_search_are_recorded() -> None:
    """``record_coverage`` (the plugin's, for the whole run) is active; one thread runs
    ``explore`` while another flips a lamp: the flip is not counted, because the search hides
    events from every recorder of the process, not just its own."""
    chart, lamp = compile_chart(Race), compile_chart(Lamp)
    inside, sent = threading.Event(), threading.Event()

    def model(key: str) -> None:
        if not inside.is_set():
            inside.set()
            sent.wait(10)

    coverage = Coverage()
    with record_coverage(coverage):
        search = threading.Thread(target=lambda: explore(chart, model=model))
        search.start()
        assert inside.wait(10)
        lamp.create().send("flip")  # another test's thread, while the search runs
        sent.set()
        search.join(30)
    assert coverage.chart(lamp).taken == {"off:flip:on": 1}


# -- L7: the protocol -------------------------------------------------------------------------

NO_VALUE = """
import json, sys
from tests.toolcalls.seed000_impls import Seed000
machine = Seed000()
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "reset":
        machine = Seed000()
        answer = {"ok": True}
    elif request["op"] == "apply":
        machine.apply(request["event"])
        answer = {"ok": True}
    elif request["op"] == "get":
        answer = {"ok": True}  # "value" left out: not the protocol's answer to get
    else:
        answer = {"ok": True, "value": machine.list()}
    print(json.dumps(answer), flush=True)
"""


def test_L7_a_get_answered_without_value_is_a_protocol_error(tmp_path: Path) -> None:
    """An implementation answering ``get`` with ``{"ok": true}`` (no ``"value"``, as
    ``JSON.stringify`` writes ``{ok: true, value: undefined}``): the CLI reports a DIVERGENCE,
    ``actual: null`` for a call the implementation holds, and exits 1, where ``list`` missing
    its value is a protocol error (exit 2)."""
    server = tmp_path / "no_value.py"
    server.write_text(NO_VALUE, encoding="utf-8")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolcalls.conformance",
            "--quiet",
            "--examples",
            "5",
            "--cmd",
            f"{sys.executable} {server}",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=environment,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout[-1500:]
    assert "protocol error" in done.stderr


TWO_ANSWERS = """
import json, sys
from tests.toolcalls.seed000_impls import Seed000
machine = Seed000()
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "reset":
        machine = Seed000()
        answer = json.dumps({"ok": True}) + "\\n" + json.dumps({"ok": True})  # one too many
    elif request["op"] == "apply":
        machine.apply(request["event"])
        answer = json.dumps({"ok": True})
    elif request["op"] == "get":
        answer = json.dumps({"ok": True, "value": machine.get(request["id"])})
    else:
        answer = json.dumps({"ok": True, "value": machine.list()})
    print(answer, flush=True)
"""


def test_L7_two_answers_to_one_request_are_reported_at_that_request(tmp_path: Path) -> None:
    """An implementation that answers ``reset`` with two lines (the protocol allows exactly
    one): every later answer is read for the request after its own, and the CLI's message
    blames the first request that cannot take the shifted answer (``list answered null, not
    a list of calls``), never naming ``reset`` or the extra line."""
    server = tmp_path / "two_answers.py"
    server.write_text(TWO_ANSWERS, encoding="utf-8")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolcalls.conformance",
            "--quiet",
            "--examples",
            "5",
            "--cmd",
            f"{sys.executable} {server}",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=environment,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout[-1500:]
    assert "reset" in done.stderr, done.stderr
