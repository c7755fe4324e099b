"""The config of a critic refit (:mod:`training.critic.fit`): YAML -> typed pydantic models.

Read by the one loader the other training configs use (:class:`training.common.config.ConfigReader`),
so a bad key or value fails the same way: one line naming it, before any game is played.
"""

from __future__ import annotations

from typing import Any

from training.common.config import (
    ConfigReader,
    Float,
    Int,
    Players,
    Section,
    Str,
    check_modules,
    player_counts,
    require,
)


class FitSection(Section):
    """How the critic trains: Adam on the squared error to each seat's result, the actor frozen."""

    epochs: Float(gt=0) = 3.0  # passes over the training rows (every seat's view of every drawn decision)
    learning_rate: Float(gt=0) = 1e-4
    batch_size: Int(ge=1) = 1024
    evals: Int(ge=1) = 6  # held-out checks over the run; the critic with the lowest held-out error is kept
    # 0: fine-tune the model's own critic; K > 0: a new critic trunk (Linear to critic_width, then K
    # residual blocks, agents.nets.policy_net.critic_trunk) and value head, trained from scratch
    critic_blocks: Int(ge=0, le=64) = 0
    critic_width: Int(ge=1, le=4096) = 256


class CriticFitConfig(Section):
    # the network (a shipped name or a MaskablePPO .zip): its actor plays the games, its critic is refit
    model: Str = ""
    players: Players = 2
    modules: list[Str] = []
    seed: Int(ge=0) = 0
    output_dir: Str = "runs/critic_fit_2p"
    games: Int(ge=1) = 200_000  # training games of the network alone in every seat (argmax moves)
    validation_games: Int(ge=1) = 2_000  # held-out games (other seeds), every decision scored
    positions_per_game: Int(ge=1) = 12  # decisions drawn from each training game (all its seats' views)
    # > 0: a drawn decision's target is the mean result of its game and this many playouts of it by the
    # network (hidden cards resampled for the seat on move; training.matches.playouts): more outcomes
    # per position, a target closer to the position's value than one game's result
    playouts: Int(ge=0) = 0
    games_per_job: Int(ge=1) = 2_000  # games a worker plays at once (memory: ~0.5 GB per 2,000)
    max_turns: Int(ge=1) = 100  # single turns; a longer game is truncated and left out
    torch_threads: Int(ge=1) = 2
    fit: FitSection = FitSection()

    @property
    def player_counts(self) -> list[int]:
        """``players`` as a sorted list of distinct counts."""
        return player_counts(self.players)


def _cross_checks(cfg: CriticFitConfig, check_specs: bool) -> None:
    check = require
    check_modules(cfg.modules, check)
    check(bool(cfg.output_dir.strip()), "output_dir", "must not be empty")
    check(
        cfg.games >= len(cfg.player_counts) and cfg.validation_games >= len(cfg.player_counts),
        "games",
        f"games and validation_games must each be >= the number of player counts ({len(cfg.player_counts)})",
    )
    check(
        bool(cfg.model.strip()), "model", "name the network whose critic is refit (a shipped name or a .zip)"
    )
    from agents.nets.checkpoint import model_zip_problem
    from agents.nets.shipped import resolve_model

    try:
        path = str(resolve_model(cfg.model))
    except FileNotFoundError:
        path = cfg.model
    problem = model_zip_problem(path, cfg.modules)
    check(problem is None, "model", str(problem))


_READER = ConfigReader(CriticFitConfig, _cross_checks)
#: Parse and validate a raw mapping after the ``--set`` overrides.
from_dict = _READER.from_dict
#: Read a YAML config file, apply the overrides, parse and validate it.
load = _READER.load


def to_dict(cfg: CriticFitConfig) -> dict[str, Any]:
    """Plain mapping (the output folder's config.yaml)."""
    return cfg.model_dump()
