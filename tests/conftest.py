"""Shared pytest configuration: hypothesis profiles.

``ci`` (the default) is bounded and deterministic so the default test run stays fast;
``thorough`` is for local runs: ``HYPOTHESIS_PROFILE=thorough python -m pytest``.

``examples(n)`` (``from conftest import examples``) bounds one expensive property to ``n``
examples under ``ci`` and scales it with the profile elsewhere, so the property still runs
with varied inputs in the default run and exhaustively under ``thorough``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: max_examples of the ci profile, the unit ``examples`` scales by
CI_EXAMPLES = 60

settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def examples(ci: int) -> settings:
    """Settings running ``ci`` examples under the ``ci`` profile and proportionally more
    under a profile with more (``thorough``: ``ci * 2000 / 60``)."""
    scale = max(1.0, settings.default.max_examples / CI_EXAMPLES)
    return settings(max_examples=max(1, round(ci * scale)))
