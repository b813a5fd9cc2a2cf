"""Fuzz budgets: bounded under the ``ci`` hypothesis profile, scaled up under
``thorough`` (``HYPOTHESIS_PROFILE=thorough``) and by ``PTOC_FUZZ_SCALE`` (an integer
factor, for long local runs: ``PTOC_FUZZ_SCALE=50 python -m pytest tests/fuzz``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: max_examples of the ci profile (tests/conftest.py), the unit the budgets scale by
_CI_EXAMPLES = 60


def fuzz(examples: int) -> settings:
    """Settings running ``examples`` inputs under ``ci`` (proportionally more under a
    profile with more examples, times ``PTOC_FUZZ_SCALE``)."""
    profile = settings.default.max_examples / _CI_EXAMPLES
    scale = max(1, int(os.environ.get("PTOC_FUZZ_SCALE", "1")))
    return settings(
        max_examples=max(1, int(examples * max(profile, 1.0) * scale)),
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )
