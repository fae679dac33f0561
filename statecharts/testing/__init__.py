"""Model-based testing from one declared chart.

- ``chart_machine(chart, adapter)`` derives a Hypothesis ``RuleBasedStateMachine`` that drives a
  system under test (through an ``Adapter``) beside the chart's own reference instances and
  fails, with a pasteable list of ``Step``s, as soon as they disagree (``Divergence``);
  ``replay`` runs such a list again.
- ``shortest_paths`` and ``transition_cover`` find paths by running the compiled chart;
  ``path_cases`` turns them into parametrized pytest cases and ``run_path`` checks one.
- ``record_coverage(coverage)`` counts the transitions every compiled instance takes while it
  is active; ``pytest --chart-coverage=FILE`` (the plugin) does it for a whole run.
"""

from .._errors import Divergence
from ._machine import ChartMachine, chart_machine
from ._paths import (
    Exploration,
    Path,
    PathStep,
    cover,
    explore,
    path_cases,
    run_path,
    shortest_paths,
    transition_cover,
)
from ._payloads import default_payloads, payload_parameters
from ._record import record_coverage
from ._runner import Adapter, ChartRunner, Step, configuration_of, replay

__all__ = [
    "Adapter",
    "ChartMachine",
    "ChartRunner",
    "Divergence",
    "Exploration",
    "Path",
    "PathStep",
    "Step",
    "chart_machine",
    "configuration_of",
    "cover",
    "default_payloads",
    "explore",
    "path_cases",
    "payload_parameters",
    "record_coverage",
    "replay",
    "run_path",
    "shortest_paths",
    "transition_cover",
]
