"""OpenAI Chat Completions chunks: routing by index and the quirks of compatible servers."""

# Rules checked here (docs/spec.md): A1, A2, A3, A4, A5.

from __future__ import annotations

from typing import Any

import pytest
from openai.types.chat import ChatCompletionChunk

from toolcalls.adapters import OpenAIChatAdapter

from .support import calls, chat_chunk, fragment, summary


def two_parallel_calls() -> list[dict]:
    return [
        chat_chunk(fragment(0, "", id="call_a", name="weather")),
        chat_chunk(fragment(0, '{"city": "Os')),
        chat_chunk(fragment(0, 'lo"}')),
        chat_chunk(fragment(1, "", id="call_b", name="time")),
        chat_chunk(fragment(1, '{"tz": "UTC"}')),
        chat_chunk(finish="tool_calls"),
    ]


def test_fragments_route_by_index_and_calls_become_ready_at_finish_reason() -> None:
    assert summary(OpenAIChatAdapter(), two_parallel_calls()) == [
        ("call_a", "weather", "running", {"city": "Oslo"}),
        ("call_b", "time", "running", {"tz": "UTC"}),
    ]


def test_nothing_is_ready_before_the_finish_reason() -> None:
    adapter = OpenAIChatAdapter()
    events = [event for chunk in two_parallel_calls()[:-1] for event in adapter.feed(chunk)]
    assert all(event["type"] in ("start", "delta") for event in events)


def test_sdk_chunk_objects_are_read_like_dicts() -> None:
    chunks = [ChatCompletionChunk.model_validate(c) for c in two_parallel_calls()]
    assert calls(OpenAIChatAdapter(), chunks) == calls(OpenAIChatAdapter(), two_parallel_calls())


def test_quirk_id_and_name_resent_in_every_chunk_are_not_concatenated() -> None:
    chunks = [
        chat_chunk(fragment(0, '{"q":', id="call_a", name="search")),
        chat_chunk(fragment(0, ' "cats"', id="call_a", name="search")),
        chat_chunk(fragment(0, "}", id="call_a", name="search")),
        chat_chunk(finish="tool_calls"),
    ]
    assert summary(OpenAIChatAdapter(), chunks) == [("call_a", "search", "running", {"q": "cats"})]


def test_quirk_name_in_a_later_chunk_holds_the_fragments_until_it_comes() -> None:
    adapter = OpenAIChatAdapter()
    assert adapter.feed(chat_chunk(fragment(0, '{"q": ', id="call_a"))) == []
    events = adapter.feed(chat_chunk(fragment(0, '"x"}', name="search")))
    assert events == [
        {"type": "start", "id": "call_a", "name": "search"},
        {"type": "delta", "id": "call_a", "argsTextDelta": '{"q": '},
        {"type": "delta", "id": "call_a", "argsTextDelta": '"x"}'},
    ]
    assert adapter.feed(chat_chunk(finish="tool_calls"))[-1] == {"type": "ready", "id": "call_a"}


def test_quirk_two_fragments_of_one_index_in_one_chunk_apply_in_order() -> None:
    chunks = [
        chat_chunk(fragment(0, "", id="call_a", name="add"), fragment(0, '{"a": 1,')),
        chat_chunk(fragment(0, ' "b": 2'), fragment(0, "}")),
        chat_chunk(finish="tool_calls"),
    ]
    assert summary(OpenAIChatAdapter(), chunks) == [("call_a", "add", "running", {"a": 1, "b": 2})]


def test_quirk_every_parallel_call_at_index_zero_with_different_ids() -> None:
    chunks = [
        chat_chunk(fragment(0, '{"n": 1}', id="call_a", name="echo")),
        chat_chunk(fragment(0, '{"n":', id="call_b", name="echo")),
        chat_chunk(fragment(0, " 2}")),
        chat_chunk(fragment(0, '{"n": 3}', id="call_c", name="echo")),
        chat_chunk(finish="tool_calls"),
    ]
    assert summary(OpenAIChatAdapter(), chunks) == [
        ("call_a", "echo", "running", {"n": 1}),
        ("call_b", "echo", "running", {"n": 2}),
        ("call_c", "echo", "running", {"n": 3}),
    ]


def test_quirk_empty_arguments_mean_no_arguments() -> None:
    chunks = [
        chat_chunk(fragment(0, "", id="call_a", name="now")),
        chat_chunk(fragment(0, "")),
        chat_chunk(finish="tool_calls"),
    ]
    call = calls(OpenAIChatAdapter(), chunks)[0]
    assert (call.status, call.args, call.args_text) == ("running", {}, "{}")


def test_whitespace_only_arguments_mean_no_arguments() -> None:
    chunks = [chat_chunk(fragment(0, "  ", id="call_a", name="now")), chat_chunk(finish="stop")]
    assert calls(OpenAIChatAdapter(), chunks)[0].args == {}


@pytest.mark.parametrize("reason", ["length", "content_filter"])
def test_quirk_truncated_by_finish_reason_never_becomes_ready(reason: str) -> None:
    # The prefix parses: running it would act on half the arguments.
    chunks = [
        chat_chunk(fragment(0, '{"path": "a.txt"}', id="call_a", name="write")),
        chat_chunk(finish=reason),
    ]
    call = calls(OpenAIChatAdapter(), chunks)[0]
    assert call.status == "error"
    assert call.error["kind"] == "truncated"
    assert "truncated" in call.error["message"]
    assert reason in call.error["message"]


def test_quirk_truncated_empty_arguments_are_an_error_not_an_empty_call() -> None:
    chunks = [chat_chunk(fragment(0, "", id="call_a", name="now")), chat_chunk(finish="length")]
    call = calls(OpenAIChatAdapter(), chunks)[0]
    assert (call.status, call.error["kind"], call.has_args) == ("error", "truncated", False)


def test_quirk_stream_that_ends_without_finish_reason_truncates_the_open_calls() -> None:
    chunks = [chat_chunk(fragment(0, '{"a": 1}', id="call_a", name="f"))]
    call = calls(OpenAIChatAdapter(), chunks)[0]
    assert (call.status, call.error["kind"]) == ("error", "truncated")
    assert "stream ended" in call.error["message"]


def test_missing_ids_get_deterministic_generated_ids() -> None:
    def stream() -> list[dict]:
        return [
            chat_chunk(fragment(0, "{}", name="a"), fragment(1, "{}", name="b")),
            chat_chunk(finish="tool_calls"),
        ]

    first = [call.id for call in calls(OpenAIChatAdapter(), stream())]
    assert first == ["call_0", "call_1"]
    assert [call.id for call in calls(OpenAIChatAdapter(), stream())] == first
    adapter = OpenAIChatAdapter(id_prefix="turn1")
    adapter.feed_all(stream())
    second = [e["id"] for e in adapter.feed_all(stream()) if e["type"] == "start"]
    assert second == ["turn1_2", "turn1_3"]  # a reused adapter keeps ids unique
    assert adapter.generated_ids == {"turn1_0", "turn1_1", "turn1_2", "turn1_3"}


def test_a_call_never_named_ends_in_error_saying_so() -> None:
    chunks = [chat_chunk(fragment(0, "{}", id="call_a")), chat_chunk(finish="tool_calls")]
    assert summary(OpenAIChatAdapter(), chunks) == [("call_a", "(unnamed)", "error", "unnamed")]


def two_choices() -> list[dict]:
    return [
        chat_chunk(fragment(0, '{"n": 0}', id="c0", name="f"), choice=0),
        chat_chunk(fragment(0, '{"n": 1}', id="c1", name="f"), choice=1),
        chat_chunk(finish="tool_calls", choice=0),
        chat_chunk(finish="length", choice=1),
    ]


def test_choices_are_routed_separately_when_every_choice_is_asked_for() -> None:
    assert summary(OpenAIChatAdapter(choice=None), two_choices()) == [
        ("c0", "f", "running", {"n": 0}),
        ("c1", "f", "error", "truncated"),
    ]


def test_A1_only_choice_0_is_reported_by_default_so_n_alternatives_do_not_all_run() -> None:
    """With ``n=2`` the two choices are alternative answers: by default only the first one's
    calls are reported (and run); ``choice=1`` picks the other."""
    assert summary(OpenAIChatAdapter(), two_choices()) == [("c0", "f", "running", {"n": 0})]
    assert summary(OpenAIChatAdapter(choice=1), two_choices()) == [
        ("c1", "f", "error", "truncated")
    ]


@pytest.mark.parametrize("choice", [-1, True, 1.0, "0"])
def test_A1_a_choice_that_is_not_an_index_is_refused(choice: object) -> None:
    with pytest.raises(ValueError, match="choice must be a choice index"):
        OpenAIChatAdapter(choice=choice)  # type: ignore[arg-type]


def test_text_usage_and_empty_choices_make_no_events() -> None:
    adapter = OpenAIChatAdapter()
    assert adapter.feed({"choices": [{"index": 0, "delta": {"content": "hi"}}]}) == []
    assert adapter.feed({"choices": [], "usage": {"total_tokens": 3}}) == []
    assert adapter.finish() == []


def test_a_non_integer_index_is_refused_naming_the_field() -> None:
    from toolcalls.adapters import InvalidChunk

    with pytest.raises(InvalidChunk, match=r"tool_calls\[\]\.index"):
        OpenAIChatAdapter().feed(chat_chunk({"index": "0", "function": {"name": "f"}}))


def test_quirk_empty_string_finish_reason_on_every_chunk_is_not_a_stop() -> None:
    chunks = [
        chat_chunk(fragment(0, '{"a":', id="c1", name="f"), finish=""),
        chat_chunk(fragment(0, "1}"), finish=""),
        chat_chunk(finish="tool_calls"),
    ]
    assert summary(OpenAIChatAdapter(), chunks) == [("c1", "f", "running", {"a": 1})]


def test_a_generated_id_never_takes_an_id_the_provider_uses() -> None:
    chunks = [
        chat_chunk(fragment(0, "{}", name="f"), fragment(1, "{}", id="call_0", name="g")),
        chat_chunk(fragment(2, "{}", id="call_1", name="h")),
        chat_chunk(finish="tool_calls"),
    ]
    # The call without an id starts last, at the finish reason, when every id is known.
    assert [(c[0], c[1], c[2]) for c in summary(OpenAIChatAdapter(), chunks)] == [
        ("call_0", "g", "running"),
        ("call_1", "h", "running"),
        ("call_2", "f", "running"),
    ]


def test_quirk_id_after_the_name_keeps_one_call() -> None:
    chunks = [
        chat_chunk(fragment(0, '{"a"', name="f")),
        chat_chunk(fragment(0, ":1}", id="call_x")),
        chat_chunk(finish="tool_calls"),
    ]
    assert summary(OpenAIChatAdapter(), chunks) == [("call_x", "f", "running", {"a": 1})]


def test_legacy_function_call_deltas_are_one_call() -> None:
    chunks = [
        chat_chunk(),
        chat_chunk(),
        chat_chunk(finish="function_call"),
    ]
    chunks[0]["choices"][0]["delta"] = {"function_call": {"name": "f", "arguments": ""}}
    chunks[1]["choices"][0]["delta"] = {"function_call": {"arguments": '{"a": 1}'}}
    assert summary(OpenAIChatAdapter(), chunks) == [("call_0", "f", "running", {"a": 1})]


def test_the_stream_helpers_chunk_events_are_read_and_its_other_events_skipped() -> None:
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    helper_events: list[Any] = []
    for chunk in two_parallel_calls():
        helper_events += state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    assert {event.type for event in helper_events} > {"chunk"}
    assert calls(OpenAIChatAdapter(), helper_events) == calls(
        OpenAIChatAdapter(), two_parallel_calls()
    )
