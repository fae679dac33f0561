"""Stateful Hypothesis tests: adapters against a simple model of the stream they read.

The model keeps, per call, the argument text the server means to send and how much it sent;
the machine sends it in arbitrary fragments, with the servers' quirks mixed in (ids and names
repeated on every fragment, names arriving late, calls sharing index 0, empty arguments), and
checks after every chunk that the tracker holds exactly what the model says: nothing is ready
before the finish reason, and at the end every call is running with its arguments, or, when the
response was cut off, in error as truncated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from toolcalls import ToolCallTracker
from toolcalls.adapters import AnthropicAdapter, OpenAIChatAdapter

from .support import chat_chunk, fragment

ARGS_TEXT = st.sampled_from(["", "{}"]) | st.dictionaries(
    st.text(max_size=3), st.integers() | st.text(max_size=4), max_size=3
).map(lambda args: json.dumps(args, ensure_ascii=False))


@dataclass
class ModelCall:
    id: str
    name: str
    index: int
    text: str
    sent: int = 0
    named: bool = False  # the name went out (the adapter can start the call)
    resend: bool = False  # this server repeats id and name on every fragment

    @property
    def args(self) -> Any:
        return json.loads(self.text or "{}")


class OpenAIChatStream(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.adapter = OpenAIChatAdapter()
        self.tracker = ToolCallTracker()
        self.calls: list[ModelCall] = []
        self.finished: str | None = None
        self.started = 0  # calls begun over every turn: ids stay unique

    @precondition(lambda self: self.finished is not None)
    @rule()
    def next_turn(self) -> None:
        """The same adapter reads the next response."""
        self.calls, self.finished = [], None

    def send(self, *fragments: dict[str, Any], finish: str | None = None) -> None:
        for event in self.adapter.feed(chat_chunk(*fragments, finish=finish)):
            outcome = self.tracker.apply(event)
            assert outcome.applied, (event, outcome.message)

    def routable(self) -> list[ModelCall]:
        """Calls that can still get fragments: the latest call at each index."""
        latest: dict[int, ModelCall] = {}
        for call in self.calls:
            latest[call.index] = call
        return list(latest.values())

    @precondition(lambda self: self.finished is None and len(self.calls) < 5)
    @rule(text=ARGS_TEXT, shared=st.booleans(), name_later=st.booleans(), resend=st.booleans())
    def begin(self, text: str, shared: bool, name_later: bool, resend: bool) -> None:
        number = self.started
        self.started += 1
        # Calls sharing index 0 are told apart by their ids, so each must be named at once.
        shared = shared and all(c.index == 0 and c.named for c in self.calls)
        index = 0 if shared else len(self.calls)
        if not shared and any(c.index == 0 for c in self.calls) and not self.calls[0].named:
            name_later = False
        call = ModelCall(f"call_{number}", f"tool{number}", index, text, resend=resend)
        self.calls.append(call)
        call.named = not (name_later and not shared)
        self.send(fragment(index, "", id=call.id, name=call.name if call.named else None))

    @precondition(lambda self: self.finished is None)
    @rule(data=st.data())
    def send_fragment(self, data: st.DataObject) -> None:
        open_calls = [c for c in self.routable() if c.sent < len(c.text) or not c.named]
        if not open_calls:
            return
        call = data.draw(st.sampled_from(open_calls))
        size = data.draw(st.integers(0, len(call.text) - call.sent))
        piece = call.text[call.sent : call.sent + size]
        call.sent += size
        name = call.name if (call.resend or not call.named) else None
        call.named = True
        parts = [fragment(call.index, piece, id=call.id if call.resend else None, name=name)]
        if data.draw(st.booleans()) and piece:  # split it in two fragments of one chunk
            cut = data.draw(st.integers(0, len(piece)))
            parts = [
                fragment(call.index, piece[:cut], id=parts[0].get("id"), name=name),
                fragment(call.index, piece[cut:]),
            ]
        self.send(*parts)

    @precondition(lambda self: self.finished is None)
    @rule(reason=st.sampled_from(["tool_calls", "length", None]))
    def finish(self, reason: str | None) -> None:
        if reason == "tool_calls":
            for call in self.calls:
                if not call.named or call.sent < len(call.text):
                    self.send(
                        fragment(call.index, call.text[call.sent :], id=call.id, name=call.name)
                    )
                    call.sent, call.named = len(call.text), True
            self.send(finish=reason)
        elif reason == "length":
            self.send(finish=reason)
        self.finished = reason or "end"
        for event in self.adapter.finish():
            assert self.tracker.apply(event).applied

    @invariant()
    def tracker_matches_the_model(self) -> None:
        calls = {call.id: call for call in self.tracker.list()}
        for model in self.calls:
            call = calls.get(model.id)
            if self.finished is None:
                if model.named:
                    assert call is not None
                    assert call.status == "pending"
                    assert call.args_text == model.text[: model.sent]
                else:
                    assert call is None
            elif self.finished == "tool_calls":
                assert call is not None
                assert (call.name, call.status, call.args) == (model.name, "running", model.args)
            else:
                assert call is not None
                assert call.status == "error"
                assert call.error["kind"] == "truncated"


TestOpenAIChatStream = OpenAIChatStream.TestCase


class AnthropicStream(RuleBasedStateMachine):
    """Blocks one after another; each stop is provisional until the model goes on."""

    def __init__(self) -> None:
        super().__init__()
        self.adapter = AnthropicAdapter()
        self.tracker = ToolCallTracker()
        self.calls: list[ModelCall] = []
        self.stopped = 0  # blocks stopped
        self.finished: str | None = None
        self.turn = 0

    @precondition(lambda self: self.finished is not None)
    @rule()
    def next_turn(self) -> None:
        """The same adapter reads the next message."""
        self.calls, self.stopped, self.finished = [], 0, None
        self.turn += 1

    def send(self, event: dict[str, Any]) -> None:
        for native in self.adapter.feed(event):
            assert self.tracker.apply(native).applied, native

    def current(self) -> ModelCall | None:
        return self.calls[-1] if len(self.calls) > self.stopped else None

    @precondition(lambda self: self.finished is None and len(self.calls) < 4)
    @rule(text=ARGS_TEXT, whole=st.booleans())
    def start_block(self, text: str, whole: bool) -> None:
        if self.current() is not None:
            return
        number = len(self.calls)
        call = ModelCall(f"toolu_{self.turn}_{number}", f"tool{number}", number, text)
        given: dict[str, Any] = {}
        if whole and text:
            given, call.sent = json.loads(text), len(text)
        self.calls.append(call)
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": given}
        self.send({"type": "content_block_start", "index": number, "content_block": block})

    @precondition(lambda self: self.finished is None)
    @rule(data=st.data())
    def input_delta(self, data: st.DataObject) -> None:
        call = self.current()
        if call is None:
            return
        size = data.draw(st.integers(0, len(call.text) - call.sent))
        piece = call.text[call.sent : call.sent + size]
        call.sent += size
        delta = {"type": "input_json_delta", "partial_json": piece}
        self.send({"type": "content_block_delta", "index": call.index, "delta": delta})

    @precondition(lambda self: self.finished is None)
    @rule()
    def stop_block(self) -> None:
        call = self.current()
        if call is None or call.sent < len(call.text):
            return
        self.stopped += 1
        self.send({"type": "content_block_stop", "index": call.index})

    @precondition(lambda self: self.finished is None)
    @rule(reason=st.sampled_from(["tool_use", "max_tokens", None]))
    def end(self, reason: str | None) -> None:
        if reason is not None:
            delta = {"stop_reason": reason, "stop_sequence": None}
            self.send({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 1}})
        for native in self.adapter.finish():
            assert self.tracker.apply(native).applied
        self.finished = reason or "end"

    @invariant()
    def tracker_matches_the_model(self) -> None:
        calls = {call.id: call for call in self.tracker.list()}
        for number, model in enumerate(self.calls):
            call = calls[model.id]
            # a stopped block is ready once a later block started, or the message ended well
            proven = number < self.stopped and (
                number < len(self.calls) - 1 or self.finished == "tool_use"
            )
            if proven:
                assert (call.status, call.args) == ("running", model.args)
            elif self.finished is not None:
                assert call.status == "error"
                assert call.error["kind"] == "truncated"
            else:
                assert call.status == "pending"


TestAnthropicStream = AnthropicStream.TestCase
