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


def untimed(state: dict[str, Any]) -> dict[str, Any]:
    """A search run's ``state.json`` without what the clock decides (seconds, rates, the pieces' wall time)."""
    timed = ("seconds", "_per_s")
    metrics = [{k: v for k, v in m.items() if not k.endswith(timed)} for m in state["metrics"]]
    return {**{k: v for k, v in state.items() if k != "pieces"}, "metrics": metrics}
