"""Shared pytest configuration for the engine and env tests.

Hypothesis gets a small, deadline-free profile: the first call of a numba
function compiles (or loads from the cache), which would trip a deadline, and
the machine the suite runs on is shared, so the property tests must stay cheap.
Set ``HYPOTHESIS_PROFILE=thorough`` for a longer local run.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["tests.helpers.browser"]  # the browser tests' Chromium

settings.register_profile(
    "default",
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
