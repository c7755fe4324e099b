"""The batched self-play benchmark (training/speed/batched_selfplay.py): same positions on both paths,
and a breakdown of the batched path's time that accounts for all of it without changing its games."""

from __future__ import annotations

import pytest

import agents.search.driver as sb
from training.common.cli import CliError
from training.speed import batched_selfplay as bench

ARGS = ["--games", "2", "--sims", "8", "--init", "fresh"]


def test_the_breakdown_accounts_for_the_batched_time_and_leaves_the_kernels_as_they_were(capsys) -> None:
    kernels = {name: getattr(sb, name) for name in (*bench.KERNELS, "simulate")}
    out = bench.main([*ARGS, "--breakdown"])
    printed = capsys.readouterr().out
    assert "same positions and records: True" in printed  # the timed driver plays the same games
    shares = {k: v for k, v in out.items() if k.startswith("share ")}
    assert len(shares) == 5 and all(v >= 0 for k, v in shares.items() if "rest" not in k)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["share network (net_forward + net_values)"] > 0
    assert shares["share leaf selection (select_leaves)"] > 0
    assert {name: getattr(sb, name) for name in kernels} == kernels  # restored on the way out


def test_the_breakdown_needs_the_cpu_path() -> None:
    with pytest.raises(CliError, match="--breakdown .* needs --device cpu"):
        bench.main([*ARGS, "--breakdown", "--device", "cuda"])


def test_gumbels_root_is_measured_on_the_same_games_as_the_per_game_path(capsys) -> None:
    out = bench.main([*ARGS, "--root", "gumbel", "--gumbel-actions", "4"])
    printed = capsys.readouterr().out
    assert "(gumbel root, 4 moves)" in printed
    assert "same positions and records: True" in printed
    assert out["batched"] > 0 and out["per-game"] > 0


def test_kept_subtrees_are_measured_on_the_same_games_as_the_per_game_path(capsys) -> None:
    out = bench.main([*ARGS, "--reuse"])
    printed = capsys.readouterr().out
    assert "subtrees kept" in printed
    assert "same positions and records: True" in printed
    assert out["batched"] > 0 and out["per-game"] > 0


def test_kept_subtrees_refuse_gumbels_root() -> None:
    with pytest.raises(ValueError, match="selfplay.reuse"):
        bench.main([*ARGS, "--reuse", "--root", "gumbel"])
