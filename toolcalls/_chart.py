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

from ._record import ToolCallModel


class ToolCallChart(StateChart[ToolCallModel]):
    """One streamed tool call: pending (arguments streaming) -> running -> done, or error.

    Every transition T3 and T4 do not list is absent, so a delta after ready, a result while
    pending or an error after done is ignored by construction (T9).
    """

    pending = State(initial=True)
    running = State()
    done = State(final=True)
    error = State(final=True)

    delta = pending.to.itself(internal=True, on="append_arguments")  # type: ignore[no-untyped-call]
    ready = pending.to(running, cond="arguments_parse", on="keep_arguments") | pending.to(
        error, on="reject_arguments"
    )
    result = running.to(done, on="keep_result")
    fail = pending.to(error, on="keep_error") | running.to(error, on="keep_error")

    def append_arguments(self, text: str) -> None:
        """Accumulate a fragment as raw text; nothing is parsed while pending."""
        self.model.parts.append(text)

    def arguments_parse(self) -> bool:
        """Parse the complete arguments as JSON.parse would; keep the outcome for the action."""
        return self.model.parse_arguments()

    def keep_arguments(self) -> None:
        self.model.args = self.model.parsed

    def reject_arguments(self) -> None:
        self.model.error = self.model.parse_error

    def keep_result(self, value: Any) -> None:
        self.model.result = value

    def keep_error(self, value: Any) -> None:
        self.model.error = value
