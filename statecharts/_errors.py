"""Errors raised by ``statecharts``.

::

    statemachine.exceptions.InvalidDefinition  the chart is declared wrongly (python-statemachine)
    └── UnsupportedChart                         declared correctly, but uses a construct that the
                                                 compiled runtime does not run faithfully

Definition problems that python-statemachine already detects (no initial state, unreachable
states, a non-final state with no way out, a name that resolves to nothing) are raised as
python-statemachine raises them, with its messages, so one ``except InvalidDefinition`` covers
both. Exceptions raised by a chart's own guards and actions are never wrapped: they reach the
caller of ``send`` unchanged.
"""

from __future__ import annotations

from statemachine.exceptions import InvalidDefinition


class UnsupportedChart(InvalidDefinition):
    """A chart uses a construct the compiled runtime refuses rather than approximates.

    ``construct`` names the construct (``"compound state"``, ``"eventless transition"`` ...),
    ``where`` names the state, transition or attribute that uses it, and ``chart`` the class.
    """

    def __init__(self, chart: str, construct: str, where: str, hint: str = "") -> None:
        self.chart = chart
        self.construct = construct
        self.where = where
        self.hint = hint
        message = f"{chart}: {construct} is not supported by the compiled runtime ({where})"
        if hint:
            message = f"{message}; {hint}"
        super().__init__(message)
