"""The browser tests' fixtures (a pytest plugin, loaded by ``tests/conftest.py``): one headless Chromium
and one app server (``url``; a test module may define its own) per test module.

Why one place: three test files drive the distribution's Chromium (never a downloaded build); in CI
(``CI=1``) a missing browser or Playwright fails them instead of skipping, so a lane without a
browser cannot pass silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # imported here, not at the top: the RLlib lane (no app extra) loads this plugin too
    from training.speed.app import chromium, missing_browser

    reason = missing_browser()
    if reason is not None:
        if os.environ.get("CI") == "1":
            pytest.fail(f"the browser tests must run in CI: {reason}")
        pytest.skip(f"browser tests skipped: {reason}")
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    from tests.helpers.app_server import app_server

    with app_server() as base:
        yield base
