"""The commands a user knows give the same games, tables and weights as before the layout changed.

Why: ``agents/`` and ``training/`` were reorganised (issue: the layout shows the
architecture) with behaviour unchanged. Each digest below was recorded on the
code before that step, by ``python -m tests.helpers.pinned_runs``; a change
of behaviour (a rule, an agent, a training default) changes one, and its new
digest goes in with the commit that says why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.pinned_runs import RUNS

pytestmark = pytest.mark.slow
pytest.importorskip("sb3_contrib")

DIGESTS = {
    "play": "5b4a84c4db67dab1",
    "evaluate": "b73325f832c21d34",  # az_3_4p_v2 searched with c=1.0 (0.6.0)
    "tournament": "0fc0f58943174c13",
    "train": "31da2170bdf59869",
    "search_train": "91b655ea6dae6878",
}


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_command_output_unchanged(name: str, tmp_path: Path) -> None:
    assert RUNS[name](tmp_path) == DIGESTS[name]


def test_every_pinned_command_has_a_digest() -> None:
    assert sorted(RUNS) == sorted(DIGESTS)
