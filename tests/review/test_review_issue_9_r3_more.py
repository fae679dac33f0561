"""Breaks found by an independent review of issue 9 (round 3). Each test reproduces one; fix the
code, do not weaken the test. If a test is wrong, say why in your report."""

# Rules checked here (docs/spec.md): M4, L5, L7.

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from statemachine import State, StateChart

from statecharts import compile_chart
from statecharts.testing import Divergence, chart_machine

ROOT = Path(__file__).parents[2]


class Document(StateChart):  # type: ignore[type-arg]
    """A document service: ``create`` makes the document, ``send_create`` sends the creation
    request on to the next system."""

    draft = State(initial=True)
    made = State()
    forwarded = State(final=True)

    create = draft.to(made)
    send_create = made.to(forwarded)


class NeverCreates:
    """A SUT of ``Document`` that ignores ``create`` (and so never leaves ``draft``)."""

    def __init__(self) -> None:
        self.states: dict[str, str] = {}

    def create(self, key: str) -> None:
        self.states[key] = "draft"

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> bool:
        if event == "send_create" and self.states[key] == "made":
            self.states[key] = "forwarded"
            return True
        return False

    def configuration(self, key: str) -> set[str]:
        return {self.states[key]}


def test_M4_every_declared_event_keeps_its_own_rule() -> None:
    """A chart declaring ``create`` and ``send_create``: the rule for ``create`` is renamed
    ``send_create`` (the machine has a ``create`` rule) and then replaced by the rule of the
    event ``send_create``, so ``create`` is never sent and a SUT that ignores it passes."""
    machine = chart_machine(compile_chart(Document), NeverCreates)
    with pytest.raises(Divergence):
        run_state_machine_as_test(machine, settings=settings(max_examples=50, database=None))


@pytest.mark.parametrize("factory", ["os:getcwd", "collections:OrderedDict"])
def test_L7_an_object_without_apply_get_list_is_not_a_divergence(factory: str) -> None:
    """``--object`` naming a factory whose objects have no ``apply`` (a typo for the right
    factory): the CLI prints ``DIVERGENCE ... apply raised AttributeError`` and exits 1, the
    status of a non-conforming implementation, instead of 2 on one line (L5, L7)."""
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "toolcalls.conformance", "--quiet", "--object", factory],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=environment,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr[-1500:]
    assert "DIVERGENCE" not in done.stdout
    assert "Traceback" not in done.stderr
