"""A small self-play job for the tests of the per-game and batched paths (and what they keep between searches)."""

from __future__ import annotations

from typing import Any

from agents.nets.checkpoint import model_bytes
from training.expert_iteration import config as search_config
from training.expert_iteration.network import initial_model
from training.expert_iteration.selfplay import selfplay_jobs

#: Simulations a move of the test jobs: enough for trees of a few levels, small enough to be quick.
SIMS = 12


def selfplay_options(**overrides: Any) -> dict[str, Any]:
    """A ``selfplay`` section with the config's defaults and ``overrides``."""
    return {**search_config.SelfPlaySection().model_dump(), **overrides}


def selfplay_test_job(
    players: list[int], modules: list[str], init: str, games: int, **selfplay: Any
) -> dict[str, Any]:
    cfg = search_config.from_dict(
        {
            "players": players,
            "modules": modules,
            "init": init,
            "network": {"net_arch": [32, 32]},
            "selfplay": {
                "games": games,
                "sims": SIMS,
                "batch": 4,
                "sample_moves": 6,
                "target_temperature": 0.5,
            },
        },
        check_specs=False,
    )
    sp = {**cfg.selfplay.model_dump(), **selfplay}
    return selfplay_jobs(
        model_bytes(initial_model(cfg)), 1, 11, games, games, cfg.player_counts, tuple(modules), sp
    )[0]
