"""Shared test settings: Hypothesis profiles.

``default`` is quick enough to run on every change; ``ci`` (selected by ``.ci/run`` through
``HYPOTHESIS_PROFILE=ci``) explores more. Stateful tests never have a deadline: they run many
steps per example and these machines are noisy.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
