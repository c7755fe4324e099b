"""The kept-subtree benchmark (training/bench/kept_subtree.py) judges kept and fresh searches alike."""

from __future__ import annotations

import pytest

from training.bench import kept_subtree
from training.common.cli import CliError


def test_kept_and_fresh_searches_are_scored_on_the_same_decisions() -> None:
    out = kept_subtree.main(["--games", "1", "--sims", "12", "--judge-sims", "24", "--init", "az_2p"])
    assert 0 < out["share kept"]["decisions"] <= 1
    for label in kept_subtree.LABELS:
        assert 0 <= out[label]["judge's move"] <= 1
        assert 0 <= out[label]["distance"] <= 1
        assert -1 <= out[label]["judge's value"] <= 1


def test_a_budget_below_one_is_refused() -> None:
    with pytest.raises(CliError, match="--sims"):
        kept_subtree.main(["--sims", "0"])
