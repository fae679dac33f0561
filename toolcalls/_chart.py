"""The chart of one streamed tool call (spec T3, T4), declared once as a python-statemachine
``StateChart``.

The tracker runs one compiled instance of this chart per call; the diagrams in ``diagrams/``
are drawn from the same declaration. States carry the call's status names. The wire's ``error``
event is declared as ``fail`` (T24): python-statemachine names states and events by attribute,
and the state is already called ``error`` (the tracker maps the wire name to the chart's).
"""

from __future__ import annotations

from typing import Any

from statemachine import State, StateChart

from ._record import UNSET, ToolCallModel


class ToolCallChart(StateChart[ToolCallModel]):
    """One streamed tool call: pending (arguments streaming) -> running -> done, or error.

    ``ready`` parses the arguments as a step of its own: it enters ``parsing``, whose entry
    action (the model's ``parse_arguments``) parses the complete text into the call's ``args``
    or its ``error`` (T7, T8), and the chart leaves ``parsing`` at once, in the same step, for
    ``running`` or ``error`` by what the parse produced: ``parsing`` is never a call's status.
    Every transition T3 and T4 do not list is absent, so a delta after ready, a result while
    pending or an error after done is ignored by construction (T9).
    """

    pending = State(initial=True)
    parsing = State(enter="parse_arguments")
    running = State()
    done = State(final=True)
    error = State(final=True)

    delta = pending.to.itself(internal=True, on="append_arguments")  # type: ignore[no-untyped-call]
    ready = pending.to(parsing)
    # Eventless: taken as soon as ``parsing`` is entered, within the ``ready`` step.
    parsing.to(running, cond="arguments_parsed")
    parsing.to(error, unless="arguments_parsed")
    result = running.to(done, on="keep_result")
    fail = pending.to(error, on="keep_error") | running.to(error, on="keep_error")

    def append_arguments(self, text: str) -> None:
        """Accumulate a fragment as raw text; nothing is parsed while pending."""
        self.model.parts.append(text)

    def arguments_parsed(self) -> bool:
        """Whether the parse produced arguments (reads the model, changes nothing)."""
        return self.model.args is not UNSET

    def keep_result(self, value: Any = UNSET) -> None:
        """Keep the result; a ``result`` sent without one ends the call with none (T26)."""
        self.model.result = value

    def keep_error(self, value: Any = UNSET) -> None:
        """Keep the error; a ``fail`` sent without one ends the call with none (T26)."""
        self.model.error = value
