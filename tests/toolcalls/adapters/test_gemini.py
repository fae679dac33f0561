"""Gemini chunks: whole calls without ids, Vertex partialArgs by JSON path, truncation."""

# Rules checked here (docs/spec.md): A1, A5, A6, A7.

from __future__ import annotations

import base64
from typing import Any

import pytest
from google.genai import types

from toolcalls.adapters import GeminiAdapter, InvalidChunk

from .support import calls, summary


def chunk(*function_calls: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    parts = [{"functionCall": call} for call in function_calls]
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-x", "responseId": "r1"}


def parallel_same_name() -> list[dict[str, Any]]:
    return [
        chunk(
            {"name": "weather", "args": {"city": "Denver"}},
            {"name": "weather", "args": {"city": "Moab"}},
        ),
        chunk({"name": "now", "args": {}}, finish="STOP"),
    ]


def test_quirk_whole_calls_without_ids_get_deterministic_ids() -> None:
    expected = [
        ("call_0", "weather", "running", {"city": "Denver"}),
        ("call_1", "weather", "running", {"city": "Moab"}),
        ("call_2", "now", "running", {}),
    ]
    assert summary(GeminiAdapter(), parallel_same_name()) == expected
    assert summary(GeminiAdapter(), parallel_same_name()) == expected


def test_a_whole_call_is_ready_at_once() -> None:
    events = GeminiAdapter().feed(chunk({"name": "f", "args": {"a": 1}}))
    assert [event["type"] for event in events] == ["start", "delta", "ready"]


def test_ids_the_model_sent_are_kept() -> None:
    chunks = [chunk({"id": "fc_1", "name": "f", "args": {"a": "é"}}, finish="STOP")]
    assert summary(GeminiAdapter(), chunks) == [("fc_1", "f", "running", {"a": "é"})]


def test_a_whole_call_delivered_twice_runs_once() -> None:
    """A retried or replayed chunk repeats a whole call with its id: it is one call, not two
    (re-delivery is harmless, X4); another call under the same id is still its own call."""
    first = chunk({"id": "fc-1", "name": "pay", "args": {"amount": 5}})
    adapter = GeminiAdapter()
    events = adapter.feed(first) + adapter.feed(first)
    assert [(event["type"], event["id"]) for event in events] == [
        ("start", "fc-1"),
        ("delta", "fc-1"),
        ("ready", "fc-1"),
    ]
    other = adapter.feed(chunk({"id": "fc-1", "name": "pay", "args": {"amount": 6}}))
    assert [event["type"] for event in other] == ["start", "delta", "ready"]
    assert other[0]["id"] != "fc-1"


def test_google_genai_objects_are_read_like_dicts() -> None:
    objects = [types.GenerateContentResponse.model_validate(c) for c in parallel_same_name()]
    assert calls(GeminiAdapter(), objects) == calls(GeminiAdapter(), parallel_same_name())


def vertex_stream() -> list[dict[str, Any]]:
    return [
        chunk({"name": "weather", "willContinue": True}),
        chunk(
            {
                "partialArgs": [
                    {"jsonPath": "$.location", "stringValue": "San ", "willContinue": True}
                ],
                "willContinue": True,
            }
        ),
        chunk(
            {
                "partialArgs": [
                    {"jsonPath": "$.location", "stringValue": "Francisco", "willContinue": True}
                ],
                "willContinue": True,
            }
        ),
        chunk(
            {"partialArgs": [{"jsonPath": "$.location", "stringValue": ""}], "willContinue": True}
        ),
        chunk(
            {
                "partialArgs": [
                    {"jsonPath": "$.days", "numberValue": 3},
                    {"jsonPath": "$.opts.metric", "boolValue": True},
                    {"jsonPath": "$.stops[1].name", "stringValue": "Reno"},
                    {"jsonPath": "$['odd key']", "nullValue": "NULL_VALUE"},
                ],
                "willContinue": True,
            }
        ),
        chunk({}),
        chunk({}, finish="STOP"),
    ]


VERTEX_ARGS = {
    "location": "San Francisco",
    "days": 3,
    "opts": {"metric": True},
    "stops": [None, {"name": "Reno"}],
    "odd key": None,
}


def test_quirk_vertex_partial_args_addressed_by_json_path() -> None:
    assert summary(GeminiAdapter(), vertex_stream()) == [
        ("call_0", "weather", "running", VERTEX_ARGS)
    ]


def test_vertex_partial_args_as_google_genai_objects() -> None:
    objects = [types.GenerateContentResponse.model_validate(c) for c in vertex_stream()]
    assert calls(GeminiAdapter(), objects)[0].args == VERTEX_ARGS


def test_a_vertex_call_ends_with_a_part_that_does_not_continue() -> None:
    chunks = [
        chunk({"name": "f", "willContinue": True}),
        chunk({"partialArgs": [{"jsonPath": "$.a", "numberValue": 1}]}),
    ]
    assert summary(GeminiAdapter(), chunks) == [("call_0", "f", "running", {"a": 1})]


def test_quirk_vertex_call_truncated_by_max_tokens_never_becomes_ready() -> None:
    chunks = [
        chunk({"name": "write", "willContinue": True}),
        chunk(
            {
                "partialArgs": [{"jsonPath": "$.path", "stringValue": "a.txt"}],
                "willContinue": True,
            },
            finish="MAX_TOKENS",
        ),
    ]
    call = calls(GeminiAdapter(), chunks)[0]
    assert (call.status, call.error["kind"]) == ("error", "truncated")
    assert "MAX_TOKENS" in call.error["message"]


def test_quirk_vertex_stream_that_ends_mid_call_truncates() -> None:
    chunks = [chunk({"name": "write", "willContinue": True})]
    assert summary(GeminiAdapter(), chunks) == [("call_0", "write", "error", "truncated")]


def test_quirk_empty_arguments_mean_no_arguments() -> None:
    chunks = [chunk({"name": "now"}), chunk({"name": "later", "willContinue": True}), chunk({})]
    assert [call.args for call in calls(GeminiAdapter(), chunks)] == [{}, {}]


def test_a_bad_json_path_is_refused_naming_it() -> None:
    adapter = GeminiAdapter()
    adapter.feed(chunk({"name": "f", "willContinue": True}))
    bad = chunk(
        {"partialArgs": [{"jsonPath": "location", "stringValue": "x"}], "willContinue": True}
    )
    with pytest.raises(InvalidChunk, match=r"jsonPath.*not a JSON path"):
        adapter.feed(bad)


def test_numbers_from_google_genai_objects_match_the_wire() -> None:
    stream = [
        chunk({"name": "f", "willContinue": True}),
        chunk(
            {
                "partialArgs": [
                    {"jsonPath": "$.days", "numberValue": 3},
                    {"jsonPath": "$.ratio", "numberValue": 0.5},
                ]
            }
        ),
    ]
    objects = [types.GenerateContentResponse.model_validate(c) for c in stream]
    wire, sdk = calls(GeminiAdapter(), stream)[0], calls(GeminiAdapter(), objects)[0]
    assert wire.args_text == sdk.args_text == '{"days": 3, "ratio": 0.5}'
    assert type(sdk.args["days"]) is int


def test_a_provider_id_is_never_generated_for_another_call() -> None:
    chunks = [chunk({"name": "f", "args": {}}, {"id": "call_0", "name": "g", "args": {}})]
    assert [c[0] for c in summary(GeminiAdapter(), chunks)] == ["call_1", "call_0"]


def signed(signature: Any, **function_call: Any) -> dict[str, Any]:
    """A chunk whose one part is a function call carrying a ``thoughtSignature``."""
    part = {"functionCall": function_call, "thoughtSignature": signature}
    candidate = {"content": {"role": "model", "parts": [part]}, "index": 0}
    return {"candidates": [candidate], "modelVersion": "gemini-x", "responseId": "r1"}


def test_A7_a_calls_thought_signature_goes_back_with_its_function_call_part() -> None:
    """Thinking models sign a call's part and want the signature back in the history: the
    adapter keeps it past ``finish()``, and ``function_call_part`` rebuilds the part with it
    (the generated id is not sent; the model never saw it)."""
    adapter = GeminiAdapter()
    signature = base64.b64encode(b"\x00sig\xff").decode()
    chunks = [signed(signature, name="weather", args={"city": "Moab"}), chunk(finish="STOP")]
    (call,) = calls(adapter, chunks)
    assert adapter.function_call_part(call) == {
        "functionCall": {"name": "weather", "args": {"city": "Moab"}},
        "thoughtSignature": signature,
    }
    part = types.Part.model_validate(adapter.function_call_part(call))
    assert part.thought_signature == b"\x00sig\xff"


def test_A7_signatures_from_google_genai_objects_are_kept_as_the_wire_text() -> None:
    """google-genai holds the signature as bytes; the part built back is the same as from the
    wire dicts, with the model's own id."""
    wire = signed(base64.b64encode(b"s1").decode(), id="fc_1", name="now", args={})
    objects = [types.GenerateContentResponse.model_validate(wire)]
    adapter = GeminiAdapter()
    (call,) = calls(adapter, objects)
    assert adapter.function_call_part(call) == {
        "functionCall": {"name": "now", "args": {}, "id": "fc_1"},
        "thoughtSignature": "czE=",
    }


def test_A7_a_call_without_a_signature_gets_a_part_without_one() -> None:
    adapter = GeminiAdapter()
    (call,) = calls(adapter, [chunk({"name": "now", "args": {}}, finish="STOP")])
    assert adapter.function_call_part(call) == {"functionCall": {"name": "now", "args": {}}}


def test_A6_a_signature_that_is_not_text_is_refused_naming_it() -> None:
    adapter = GeminiAdapter()
    with pytest.raises(InvalidChunk) as caught:
        adapter.feed(signed(42, name="now", args={}))
    assert caught.value.field == "candidates[].content.parts[].thoughtSignature"
    assert adapter.feed(chunk({"name": "now", "args": {}})) == [
        {"type": "start", "id": "call_0", "name": "now"},
        {"type": "delta", "id": "call_0", "argsTextDelta": "{}"},
        {"type": "ready", "id": "call_0"},
    ]


def two_candidates() -> dict[str, Any]:
    first = {"functionCall": {"name": "send", "args": {"to": "ann"}}}
    second = {"functionCall": {"name": "send", "args": {"to": "bob"}}}
    candidates = [
        {"index": 0, "content": {"role": "model", "parts": [first]}, "finishReason": "STOP"},
        {"index": 1, "content": {"role": "model", "parts": [second]}, "finishReason": "STOP"},
    ]
    return {"candidates": candidates, "modelVersion": "gemini-x", "responseId": "r1"}


def test_A1_only_candidate_0_is_reported_by_default_so_alternatives_do_not_all_run() -> None:
    """``candidateCount=2`` asks for alternative answers: by default only the first one's calls
    are reported (and run); ``candidate=1`` picks the other, ``None`` reads both."""
    assert summary(GeminiAdapter(), [two_candidates()]) == [
        ("call_0", "send", "running", {"to": "ann"})
    ]
    assert summary(GeminiAdapter(candidate=1), [two_candidates()]) == [
        ("call_0", "send", "running", {"to": "bob"})
    ]
    assert [c[3] for c in summary(GeminiAdapter(candidate=None), [two_candidates()])] == [
        {"to": "ann"},
        {"to": "bob"},
    ]


@pytest.mark.parametrize("candidate", [-1, True, 0.0, "0"])
def test_A1_a_candidate_that_is_not_an_index_is_refused(candidate: object) -> None:
    with pytest.raises(ValueError, match="candidate must be a candidate index"):
        GeminiAdapter(candidate=candidate)  # type: ignore[arg-type]
