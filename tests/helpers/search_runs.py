"""The smallest search-training run, shared by the tests that train, checkpoint or run it on Ray."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def tiny(tmp_path: Path, **changes: Any) -> dict[str, Any]:
    """A run of 1 iteration, 2 games, 8 simulations, a tiny batch (overridden by ``changes``)."""
    raw: dict[str, Any] = {
        "players": 2,
        "init": "fresh",
        "output_dir": str(tmp_path / "run"),
        "iterations": 1,
        "selfplay": {"games": 2, "sims": 8, "games_per_job": 1, "max_turns": 60},
        "buffer": {"capacity": 4000},
        "train": {"batch_size": 32, "epochs": 1, "min_positions": 10},
        "gate": {"games": 2, "sims": 8},
        "eval": {"every": 1, "games": 2, "sims": 8, "opponents": ["greedy"], "modes": ["ppo"]},
    }
    for key, value in changes.items():
        section, _, field = key.partition("__")
        if field:
            raw[section][field] = value
        else:
            raw[key] = value
    return raw
