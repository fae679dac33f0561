"""The AI SDK (npm package ``ai``) as a real peer: seed 000 sequences run through its UI message
stream processing. Differences are findings, not failures; this test keeps the table of them in
docs/conformance.md true to what the installed SDK does."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from toolcalls.conformance import ObjectImplementation, SubprocessImplementation

ROOT = Path(__file__).parents[2]
PEER_DIR = ROOT / "examples" / "ai-sdk"


def compare_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ai_sdk_compare", PEER_DIR / "compare.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def peer() -> SubprocessImplementation:
    if shutil.which("node") is None or not (PEER_DIR / "node_modules" / "ai").is_dir():
        if os.environ.get("CI"):
            pytest.fail("the AI SDK peer is not installed: .ci/run runs scripts/install-node")
        pytest.skip("the AI SDK peer is not installed (make test installs it)")
    implementation = SubprocessImplementation(f"node {PEER_DIR / 'peer.mjs'}")
    yield implementation
    implementation.close()


def test_the_peer_agrees_on_a_whole_call(peer: SubprocessImplementation) -> None:
    compare = compare_module()
    peer.reset()
    for event in [*compare.PARSED, compare.result(["r"])]:
        peer.apply(event)
    [call] = peer.list()
    assert (call["status"], call["args"], call["result"]) == ("done", {"q": "hi"}, ["r"])


def test_the_docs_table_of_differences_is_what_the_peer_does(
    peer: SubprocessImplementation,
) -> None:
    compare = compare_module()
    ours = ObjectImplementation.from_spec("toolcalls:tool_call_streaming_state_machine")
    lines = compare.table(ours, peer)
    docs = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    missing = [line for line in lines if line not in docs]
    assert not missing, (
        "docs/conformance.md is stale; run examples/ai-sdk/compare.py:\n" + "\n".join(missing)
    )
