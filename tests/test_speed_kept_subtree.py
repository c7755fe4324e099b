"""The kept-subtree benchmark (training/speed/kept_subtree.py) judges kept and fresh searches alike."""

from __future__ import annotations

import pytest

from splendor_env.state import MODULE_NAMES
from training.common.cli import CliError
from training.speed import kept_subtree


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


def test_a_module_game_is_judged_with_its_own_network() -> None:
    out = kept_subtree.main(
        ["--games", "1", "--sims", "12", "--judge-sims", "24", "--modules", *MODULE_NAMES]
    )
    assert 0 < out["share kept"]["decisions"] <= 1
    assert 0 <= out["kept"]["distance"] <= 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--modules", "harbour"], "--modules: unknown module 'harbour'"),
        (["--players", "3", "--modules", "cities"], "no shipped network for 3 players"),
    ],
)
def test_a_game_without_a_network_or_an_unknown_module_is_refused(argv: list[str], message: str) -> None:
    with pytest.raises(CliError, match=message):
        kept_subtree.main(argv)
