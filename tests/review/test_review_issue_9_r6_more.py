"""Breaks found by an independent review of issue 9 (round 6). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): M4, M5 (with C17's delayed events), M6 (through L7).

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from statemachine import State, StateChart

from statecharts import compile_chart
from statecharts.testing import (
    Divergence,
    Exploration,
    chart_machine,
    explore,
    payload_parameters,
)
from tests.toolcalls.seed000_impls import Seed000
from toolcalls.conformance._protocol import ObjectImplementation
from toolcalls.conformance._suite import check

ROOT = Path(__file__).parents[2]


class Heartbeat(StateChart):  # type: ignore[type-arg]
    """docs/statecharts.md's heartbeat: each ``ping`` re-arms a ``timeout`` due 30 s later."""

    alive = State(initial=True)
    dead = State(final=True)

    ping = alive.to.itself(internal=True, on="rearm")  # type: ignore[no-untyped-call]
    timeout = alive.to(dead)

    def rearm(self) -> None:
        self.cancel_event("beat")
        self.send("timeout", delay=30_000, send_id="beat")


def test_M5_explore_does_not_wait_out_a_chart_s_delayed_events() -> None:
    """``explore`` (and so ``shortest_paths``, ``transition_cover`` and every ``chart_machine``,
    which explores for its walks) creates instances without a clock, so each run that sends
    ``ping`` blocks for the 30 s of real time its timer is due in: exploring this two-state
    chart takes 30 s, and the derived test's reference instances wait the same way."""
    chart = compile_chart(Heartbeat)
    found: list[Exploration] = []
    searching = threading.Thread(target=lambda: found.append(explore(chart)), daemon=True)
    started = time.monotonic()
    searching.start()
    searching.join(timeout=10)
    elapsed: Any = round(time.monotonic() - started, 1)
    assert found, f"explore still running after {elapsed} s"
    assert found[0].unreached_states == ()
    assert found[0].untaken_transitions == ()


# -- M4: derived stateful tests ---------------------------------------------------------------


class Wizard(StateChart):  # type: ignore[type-arg]
    """A wizard whose ``next_page`` transition answers the event ``continue``."""

    first = State(initial=True)
    second = State(final=True)

    next_page = first.to(second, event="continue")


class Stays:
    """A SUT that never leaves ``first``."""

    def create(self, key: str) -> None:
        pass

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> None:
        return None

    def configuration(self, key: str) -> set[str]:
        return {"first"}


def test_M4_an_event_named_like_a_python_keyword_gets_its_rule() -> None:
    """An event called ``continue`` (or ``return``, ``pass``, ``break``: ordinary words in a
    wizard, a library or a game) is an identifier the machine does not use, so its rule is
    named ``continue``; Hypothesis compiles a ``def continue(...)`` for it and
    ``chart_machine`` raises ``SyntaxError``."""
    machine = chart_machine(compile_chart(Wizard), Stays)
    rules = [name for name in vars(machine) if "continue" in name]
    assert rules, sorted(vars(machine))


class Job(StateChart):  # type: ignore[type-arg]
    """``stop`` leaves ``step`` and so its parent ``work``, whose exit callback wants a
    ``reason``."""

    class work(State.Compound):
        step = State(initial=True)
        more = State()

        advance = step.to(more)

    stopped = State(final=True)

    stop = work.step.to(stopped)

    def on_exit_work(self, reason: str) -> None:
        self.model.reason = reason


class Shift(StateChart):  # type: ignore[type-arg]
    """``stop`` leaves ``work`` and so its active child ``step``, whose exit callback wants a
    ``reason``."""

    class work(State.Compound):
        step = State(initial=True)
        more = State()

        advance = step.to(more)

    stopped = State(final=True)

    stop = work.to(stopped)

    def on_exit_step(self, reason: str) -> None:
        self.model.reason = reason


@pytest.mark.parametrize("cls", [Job, Shift], ids=["exits-the-parent", "exits-the-child"])
def test_M4_payloads_carry_what_the_states_an_event_exits_ask_for(
    cls: type[StateChart],  # type: ignore[type-arg]
) -> None:
    """``stop`` runs the exit callback of a state it leaves that is not its source (the
    source's parent, or the source's active child); that callback asks for ``reason``, but
    ``payload_parameters`` looks at the source and the targets only, so the default payloads
    never carry it and the callback fails (``error.execution``) on every derived step."""
    assert "reason" in payload_parameters(compile_chart(cls), "stop")


class Wallet:
    """The model of ``Kiosk``: ``pay``'s guard lives here, where python-statemachine (and the
    compiled runtime, C9) look callbacks up too."""

    def __init__(self) -> None:
        self.balance = 10

    def can_pay(self, amount: int) -> bool:
        return 0 < amount <= self.balance


class Kiosk(StateChart):  # type: ignore[type-arg]
    """Sells when the model's guard accepts the amount."""

    idle = State(initial=True)
    sold = State(final=True)

    pay = idle.to(sold, cond="can_pay")


class NeverSells:
    """A SUT that stays ``idle`` whatever it is paid."""

    def create(self, key: str) -> None:
        pass

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> None:
        return None

    def configuration(self, key: str) -> set[str]:
        return {"idle"}


def test_M4_default_payloads_carry_what_a_model_s_guard_asks_for() -> None:
    """``chart_machine(chart, adapter, model=...)`` whose guard ``can_pay(self, amount: int)``
    is a method of the model: the default payloads look at the chart class only, send ``pay``
    without ``amount``, the guard is rejected every time, and a SUT that never sells passes
    100 examples (``pay(amount=5)`` sells on the chart)."""
    chart = compile_chart(Kiosk)
    assert [t.id for t in chart.create(Wallet()).send("pay", amount=5).transitions] == [
        "idle:pay:sold"
    ]
    machine = chart_machine(chart, NeverSells, model=lambda key: Wallet())
    with pytest.raises(Divergence):
        run_state_machine_as_test(
            machine, settings=settings(max_examples=100, database=None, deadline=None)
        )


# -- M6: conformance ----------------------------------------------------------------------------


class NormalizesNewlines(Seed000):
    """Reads each fragment as text with universal newlines (``\\r\\n`` and ``\\r`` become
    ``\\n``), as a text-mode stream does: ``argsText`` is not what was sent."""

    def apply(self, event: dict[str, Any]) -> None:
        if event.get("type") == "delta":
            text = event["argsTextDelta"].replace("\r\n", "\n").replace("\r", "\n")
            event = {**event, "argsTextDelta": text}
        super().apply(event)


def test_M6_an_implementation_rewriting_carriage_returns_is_caught() -> None:
    """A carriage return is JSON whitespace, but no argument text the suite sends holds one
    raw (``HARMLESS`` is space, newline, tab; whole values escape it), so an implementation
    that rewrites it conforms with the command line's 1000 sequences."""
    report = check(ObjectImplementation(NormalizesNewlines), examples=1000)
    assert report.divergence is not None, "NormalizesNewlines conforms"


#: Seed 000 in JavaScript, correct except that it copies values with a hand-written deep copy
#: (``out[key] = ...``, as code from before ``structuredClone`` does): a ``__proto__`` key of
#: the arguments, a result or an error sets the copy's prototype instead, and disappears.
HAND_COPY_SERVER = r"""
import { createInterface } from "node:readline";
function clone(value) {
  if (Array.isArray(value)) return value.map(clone);
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const key of Object.keys(value)) out[key] = clone(value[key]);
    return out;
  }
  return value;
}
function finite(key, value) {
  if (typeof value === "number" && !Number.isFinite(value)) throw new SyntaxError("range");
  return value;
}
let calls = new Map();
function snapshot(call) {
  const out = { id: call.id, name: call.name, argsText: call.argsText };
  if ("args" in call) out.args = clone(call.args);
  out.status = call.status;
  if ("result" in call) out.result = clone(call.result);
  if ("error" in call) out.error = clone(call.error);
  return out;
}
function apply(event) {
  const call = calls.get(event.id);
  if (event.type === "start") {
    const fresh = { id: event.id, name: event.name, argsText: "", status: "pending" };
    if (!call) calls.set(event.id, fresh);
  } else if (!call) {
  } else if (event.type === "delta" && call.status === "pending") {
    call.argsText += event.argsTextDelta;
  } else if (event.type === "ready" && call.status === "pending") {
    try {
      call.args = JSON.parse(call.argsText, finite);
      call.status = "running";
    } catch (failure) {
      call.status = "error";
      call.error = `arguments are not valid JSON: ${failure.message}`;
    }
  } else if (event.type === "result" && call.status === "running") {
    call.result = clone(event.result);
    call.status = "done";
  } else if (event.type === "error" && (call.status === "pending" || call.status === "running")) {
    call.error = clone(event.error);
    call.status = "error";
  }
}
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const request = JSON.parse(line);
  let response = { ok: true };
  if (request.op === "reset") calls = new Map();
  else if (request.op === "apply") apply(request.event);
  else if (request.op === "get") {
    const call = calls.get(request.id);
    response = { ok: true, value: call ? snapshot(call) : null };
  } else if (request.op === "list") {
    response = { ok: true, value: [...calls.values()].map(snapshot) };
  }
  process.stdout.write(JSON.stringify(response) + "\n");
}
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_M6_a_javascript_implementation_losing_proto_keys_is_caught(tmp_path: Path) -> None:
    """``toolcalls conformance --cmd "node server.mjs"`` with its defaults against a
    JavaScript implementation that deep-copies by assignment: arguments ``{"__proto__": {...}}``
    come back as ``{}``. The suite tries ``__proto__`` as a call id (the crowd run) but never as
    a key of arguments, results or errors, so it says the implementation conforms (exit 0)."""
    server = tmp_path / "server.mjs"
    server.write_text(HAND_COPY_SERVER, encoding="utf-8")
    lost = subprocess.run(
        ["node", str(server)],
        input='{"op": "apply", "event": {"type": "start", "id": "a", "name": "n"}}\n'
        '{"op": "apply", "event": {"type": "delta", "id": "a", '
        '"argsTextDelta": "{\\"__proto__\\": {\\"x\\": 1}}"}}\n'
        '{"op": "apply", "event": {"type": "ready", "id": "a"}}\n'
        '{"op": "get", "id": "a"}\n',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert '"args":{}' in lost.stdout.splitlines()[-1], lost.stdout + lost.stderr
    done = subprocess.run(
        [sys.executable, "-m", "toolcalls.conformance", "--cmd", f"node {server}", "--quiet"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr


def _depth(text: str) -> int:
    """How deeply brackets nest in ``text``, outside string literals."""
    depth = deepest = 0
    inside = escaped = False
    for char in text:
        if inside:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


class RecursionLimit128(Seed000):
    """Parses with a recursion limit of 128 levels (serde_json's default): arguments nested
    deeper, which ``JSON.parse`` and T13 (up to 256 levels) both accept, end in error."""

    def apply(self, event: dict[str, Any]) -> None:
        call = self.calls.get(event.get("id"))  # type: ignore[arg-type]
        if (
            event.get("type") == "ready"
            and call is not None
            and call["status"] == "pending"
            and _depth(call["argsText"]) > 128
        ):
            call["status"], call["error"] = "error", "recursion limit exceeded"
            return
        super().apply(event)


def test_M6_an_implementation_refusing_deep_but_valid_arguments_is_caught() -> None:
    """Arguments nested 129 to 256 levels deep parse for ``JSON.parse`` and for T13 alike, but
    the suite sends nesting past a few levels only when held to T8 (``NESTED``), so an
    implementation built on a parser with a 128-level limit conforms with the command line's
    1000 sequences."""
    report = check(ObjectImplementation(RecursionLimit128), examples=1000)
    assert report.divergence is not None, "RecursionLimit128 conforms"
