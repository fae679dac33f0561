"""OpenAI Chat Completions: ``chat.completion.chunk`` objects in, our events out.

A tool call's fragments are routed by ``(choice index, tool_calls[].index)``; its ``id`` and
``function.name`` normally come only on the first fragment. What compatible servers do instead,
and what this adapter does about it:

- ``id`` and ``name`` repeated on every fragment: a call keeps the id and name it started with
  (they are never concatenated);
- the name arriving in a later fragment than the first: fragments are held until the name
  comes, then the call starts with all of them;
- two fragments of one index in one chunk: applied in order;
- every parallel call at index 0, told apart by id: a new id at an index starts a new call,
  and a fragment naming an earlier call's id goes to that call;
- no id at all: a deterministic one is generated (``call_0``, ``call_1``, ...).

Only the calls of choice 0 are reported unless the adapter is told otherwise (``choice=``):
with ``n > 1`` the choices are alternative answers, and running each one's tools would run them
once per alternative. Calls become ready at the choice's ``finish_reason`` (``tool_calls``, or
``stop`` from servers that say that). ``length`` (the token limit), any other reason, or a
stream that ends without one, cuts the open calls off: they end in error, truncated, and never
run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._base import Event, StreamAdapter, _Call, int_field, text_field
from ._base import field as get

_COMPLETE = frozenset({"tool_calls", "stop", "function_call"})


@dataclass(slots=True)
class _Slot:
    """The call currently streaming at one (choice, index)."""

    call: _Call | None = None
    given_id: str | None = None
    name: str | None = None
    held: list[str] = field(default_factory=list)  # fragments before the call could start


class OpenAIChatAdapter(StreamAdapter):
    """Reads OpenAI Chat Completions stream chunks (``ChatCompletionChunk`` or dicts), and the
    ``chunk`` events of openai's ``client.chat.completions.stream()`` helper."""

    def __init__(self, *, id_prefix: str | None = None, choice: int | None = 0) -> None:
        """``choice`` is the index of the choice whose calls are reported (``n > 1`` asks for
        alternative answers, and each would run its tools); ``None`` reports every choice's."""
        super().__init__(id_prefix=id_prefix)
        if choice is not None and (type(choice) is not int or choice < 0):
            raise ValueError(
                f"choice must be a choice index (an int >= 0) or None, not {choice!r}"
            )
        self.choice = choice
        self._slots: dict[tuple[int, int], _Slot] = {}
        self._by_choice: dict[int, list[_Call]] = {}
        self._by_id: dict[str, _Slot] = {}

    def _reset(self) -> None:
        super()._reset()
        self._slots.clear()
        self._by_choice.clear()
        self._by_id.clear()

    def _feed(self, chunk: Any) -> list[Event]:
        choices = get(chunk, "choices")
        if choices is None and get(chunk, "type") is not None:
            # An event of openai's stream helper: a "chunk" event wraps the chunk; the others
            # repeat what the chunks already said.
            if get(chunk, "type") != "chunk":
                return []
            choices = get(get(chunk, "chunk"), "choices")
        if not choices:
            return []
        # Read the whole chunk first: a malformed part raises before anything changed.
        steps = [_read_choice(choice) for choice in choices]
        if self.choice is not None:
            steps = [step for step in steps if step[0] == self.choice]
        seen = self._book.seen
        for _, fragments, _ in steps:
            seen.update(fragment[1] for fragment in fragments if fragment[1] is not None)
        for number, fragments, reason in steps:
            for index, call_id, name, arguments in fragments:
                self._fragment(number, index, call_id, name, arguments)
            if reason is not None:
                self._finish_choice(number, reason)
        book = self._book
        return book.take() if book.out else []

    def _fragment(
        self, number: int, index: int, call_id: str | None, name: str | None, arguments: str
    ) -> None:
        slot = self._slot((number, index), call_id)
        if slot.call is not None:
            if arguments:
                self._book.delta(slot.call, arguments)
            return
        if arguments:
            slot.held.append(arguments)
        if slot.name is None:
            slot.name = name
        # A call starts once it has a name and an id; one the server sends without an id
        # waits for it (some send the id after the name) until the finish reason.
        if slot.name is not None and slot.given_id is not None:
            self._start(number, slot, slot.given_id, slot.name)

    def _start(self, number: int, slot: _Slot, call_id: str, name: str) -> _Call:
        call = slot.call = self._book.start(call_id, name)
        self._by_choice.setdefault(number, []).append(call)
        for text in slot.held:
            self._book.delta(call, text)
        slot.held.clear()
        return call

    def _slot(self, key: tuple[int, int], call_id: str | None) -> _Slot:
        """The slot a fragment belongs to: by id when it has one, else the latest at its key."""
        slot = self._slots.get(key)
        if call_id is not None and slot is not None and call_id != slot.given_id:
            known = self._by_id.get(call_id)
            if known is not None:
                slot = known  # an earlier call at this index, named by its id again
            elif slot.call is not None or slot.given_id is not None:
                slot = None  # a new id at a busy index: a new call
            else:
                slot.given_id = call_id  # the id came after the first fragment
        if slot is None:
            slot = self._slots[key] = _Slot(given_id=call_id)
        if call_id is not None:
            self._by_id[call_id] = slot
        return slot

    def _start_waiting(self, number: int | None) -> list[_Call]:
        """Start the calls of choice ``number`` (every choice for ``None``) still waiting for
        an id or a name; return those that never got a name."""
        unnamed = []
        for key, slot in list(self._slots.items()):
            if slot.call is None and (number is None or key[0] == number):
                call_id = slot.given_id or self._new_id()
                call = self._start(key[0], slot, call_id, slot.name or "(unnamed)")
                if slot.name is None:
                    unnamed.append(call)
        return unnamed

    def _finish_choice(self, number: int, reason: str) -> None:
        book = self._book
        unnamed = self._start_waiting(number)
        if reason in _COMPLETE:  # else the cut explains the missing name
            for call in unnamed:
                book.fail(call, "unnamed", "the stream never named this call's tool")
        for call in self._by_choice.get(number, ()):
            if reason in _COMPLETE:
                book.ready(call)
            elif reason == "length":
                book.truncate(call, "the response hit its token limit (finish_reason 'length')")
            else:
                book.truncate(call, f"the response stopped with finish_reason {reason!r}")

    def _end(self, failure: str | None) -> list[Event]:
        self._start_waiting(None)
        return super()._end(failure)


_Fragment = tuple[int, str | None, str | None, str]
#: Where a choice's fields sit, as an ``InvalidChunk`` names them.
_DELTA = "choices[].delta."
_CALL_FUNCTION = _DELTA + "tool_calls[].function"


def _read_choice(choice: Any) -> tuple[int, list[_Fragment], str | None]:
    """(choice index, its tool call fragments, its finish reason), every type checked."""
    number = int_field(choice, "index", "choices[]") or 0
    delta = get(choice, "delta")
    tool_calls = None if delta is None else get(delta, "tool_calls")
    fragments: list[_Fragment] = []
    legacy = None if delta is None else get(delta, "function_call")
    if legacy is not None:  # the deprecated functions API: one call, no id, no index
        name = text_field(legacy, "name", _DELTA + "function_call") or None
        arguments = text_field(legacy, "arguments", _DELTA + "function_call")
        fragments.append((-1, None, name, arguments or ""))
    for fragment in tool_calls or ():
        # A few servers leave the index out when there is one call.
        index = int_field(fragment, "index", _DELTA + "tool_calls[]") or 0
        call_id = text_field(fragment, "id", _DELTA + "tool_calls[]") or None
        function = get(fragment, "function")
        name, arguments = None, ""
        if function is not None:
            name = text_field(function, "name", _CALL_FUNCTION) or None
            arguments = text_field(function, "arguments", _CALL_FUNCTION)
        fragments.append((index, call_id, name, arguments or ""))
    # Some compatible servers send "" rather than null on every chunk but the last.
    reason = text_field(choice, "finish_reason", "choices[]") or None
    return number, fragments, reason
