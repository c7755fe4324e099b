"""The side-by-side engine benchmark: engines from directories and git revisions, one process.

A stand-in engine (pure Python, no numba) keeps these tests fast; what is checked is that each
engine runs its own code and that bad engine names are clear errors (timings are not asserted).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from training.common.cli import CliError
from training.speed import ab as speed_ab

FAKE_VECTOR = """
import numpy as np

SPEED = {speed}


class VectorEnv:
    def __init__(self, batch, players, copy=True, modules=()):
        self.modules = modules
        self.batch = batch

    def reset(self, seed=0):
        return None, np.ones((self.batch, 2), dtype=np.int8), None

    def step(self, actions):
        sum(range(SPEED * (3 if self.modules else 1)))  # a module game costs 3x the base game
        return None, np.ones((self.batch, 2), dtype=np.int8), None, None, None, None, {{}}


def sample_legal_actions(masks, rng):
    return np.zeros(masks.shape[0], dtype=np.int64)
"""


def _fake_engine(root: Path, speed: int) -> Path:
    pkg = root / "splendor_env"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "vector.py").write_text(FAKE_VECTOR.format(speed=speed))
    return root


def test_engines_from_directories_each_run_their_own_code(tmp_path) -> None:
    fast = _fake_engine(tmp_path / "fast", 20_000)
    slow = _fake_engine(tmp_path / "slow", 60_000)
    results = speed_ab.main([str(fast), str(slow), "--game", "orient", "--rounds", "3", "--steps", "2"])
    assert list(results) == [f"0: {fast}", f"1: {slow}"]
    for r in results.values():
        assert 0 < r["share_q1"] <= r["share_median"] <= r["share_q3"]
        assert r["best_ns"] > 0
    # the stand-in module game costs 3x its base game: a share of about a third in both engines
    assert all(0.15 < r["share_median"] < 0.6 for r in results.values())
    assert results[f"1: {slow}"]["best_ns"] > results[f"0: {fast}"]["best_ns"]


def test_engine_from_a_git_revision(tmp_path) -> None:
    repo = _fake_engine(tmp_path / "repo", 20_000)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "fake engine"], check=True)
    results = speed_ab.main(["HEAD", "--repo", str(repo), "--rounds", "2", "--steps", "1"])
    assert list(results) == ["0: HEAD"]


def test_an_unknown_engine_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(CliError, match="'no-such-rev' is neither a directory holding splendor_env/"):
        speed_ab.main(["no-such-rev", "--repo", str(tmp_path), "--rounds", "1"])


@pytest.mark.parametrize("flag", ["--rounds", "--batch", "--steps"])
def test_counts_below_one_are_refused(flag, capsys) -> None:
    with pytest.raises(SystemExit):
        speed_ab.main([".", flag, "0"])
    assert f"{flag} must be at least 1, got 0" in capsys.readouterr().err
