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

Calls become ready at the choice's ``finish_reason`` (``tool_calls``, or ``stop`` from servers
that say that). ``length`` (the token limit), any other reason, or a stream that ends without
one, cuts the open calls off: they end in error, truncated, and never run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._errors import AdapterError
from ._base import Event, StreamAdapter, _Call
from ._base import field as get

_COMPLETE = frozenset({"tool_calls", "stop", "function_call"})


@dataclass(slots=True)
class _Slot:
    """The call currently streaming at one (choice, index)."""

    call: _Call | None = None
    given_id: str | None = None
    held: list[str] = field(default_factory=list)  # fragments before the name came


class OpenAIChatAdapter(StreamAdapter):
    """Reads OpenAI Chat Completions stream chunks (``ChatCompletionChunk`` or dicts)."""

    def __init__(self, *, id_prefix: str | None = None) -> None:
        super().__init__(id_prefix=id_prefix)
        self._slots: dict[tuple[int, int], _Slot] = {}
        self._by_choice: dict[int, list[_Call]] = {}
        self._by_id: dict[str, _Slot] = {}

    def _reset(self) -> None:
        super()._reset()
        self._slots.clear()
        self._by_choice.clear()
        self._by_id.clear()

    def feed(self, chunk: Any) -> list[Event]:
        choices = get(chunk, "choices")
        if not choices:
            return []
        book = self._book
        for choice in choices:
            number = get(choice, "index") or 0
            delta = get(choice, "delta")
            tool_calls = None if delta is None else get(delta, "tool_calls")
            if tool_calls:
                for fragment in tool_calls:
                    self._fragment(number, fragment)
            reason = get(choice, "finish_reason")
            if reason is not None:
                self._finish_choice(number, reason)
        return book.take() if book.out else []

    def _fragment(self, number: int, fragment: Any) -> None:
        index = get(fragment, "index")
        if index is None:
            index = 0  # a few servers leave it out when there is one call
        elif type(index) is not int:
            raise AdapterError("choices[].delta.tool_calls[].index", "expected an integer")
        call_id = get(fragment, "id") or None
        function = get(fragment, "function")
        name = arguments = None
        if function is not None:
            name = get(function, "name") or None
            arguments = get(function, "arguments")
        slot = self._slot((number, index), call_id)
        call = slot.call
        if call is None:
            if arguments:
                slot.held.append(arguments)
            if name is None:
                return
            call = slot.call = self._book.start(slot.given_id or self._new_id(), name)
            self._by_choice.setdefault(number, []).append(call)
            for text in slot.held:
                self._book.delta(call, text)
            slot.held.clear()
        elif arguments:
            self._book.delta(call, arguments)

    def _slot(self, key: tuple[int, int], call_id: str | None) -> _Slot:
        """The slot a fragment belongs to: by id when it has one, else the latest at its key."""
        slot = self._slots.get(key)
        if call_id is not None and slot is not None and call_id != slot.given_id:
            known = self._by_id.get(call_id)
            if known is not None:
                slot = known  # an earlier call at this index, named by its id again
            elif slot.call is not None:
                slot = None  # a new id at a busy index: a new call
            else:
                slot.given_id = call_id  # the id came after the first fragment
        if slot is None:
            slot = self._slots[key] = _Slot(given_id=call_id)
        if call_id is not None:
            self._by_id[call_id] = slot
        return slot

    def _finish_choice(self, number: int, reason: str) -> None:
        book = self._book
        for key, slot in list(self._slots.items()):
            if key[0] == number and slot.call is None:
                call = slot.call = book.start(slot.given_id or self._new_id(), "(unnamed)")
                self._by_choice.setdefault(number, []).append(call)
                if reason in _COMPLETE:  # else the cut explains the missing name
                    book.fail(call, "unnamed", "the stream never named this call's tool")
        for call in self._by_choice.get(number, ()):
            if reason in _COMPLETE:
                book.ready(call)
            elif reason == "length":
                book.truncate(call, "the response hit its token limit (finish_reason 'length')")
            else:
                book.truncate(call, f"the response stopped with finish_reason {reason!r}")

    def finish(self) -> list[Event]:
        for key, slot in list(self._slots.items()):
            if slot.call is None:
                call = slot.call = self._book.start(slot.given_id or self._new_id(), "(unnamed)")
                self._by_choice.setdefault(key[0], []).append(call)
        return super().finish()
