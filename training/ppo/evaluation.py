"""Evaluations during a PPO run: seat-rotated matches of the current policy, and the score best.zip follows.

Why apart: the self-play callback evaluates every ``eval.every`` steps and the loop
once more at the end; both name results the same way (``greedy@3p`` when a run
trains several player counts) and choose best.zip by the same number.
"""

from __future__ import annotations

import numpy as np
from sb3_contrib import MaskablePPO

from agents.players.ppo import PPOAgent
from training.matches.match import MatchResult, play_match, seated_agent
from training.ppo.config import TrainConfig


def eval_label(spec: str, players: int, cfg: TrainConfig) -> str:
    """An evaluation's name: the opponent spec, with ``@Np`` when the run trains several player counts."""
    return f"{spec}@{players}p" if isinstance(cfg.players, list) else spec


def evaluate_model(model: MaskablePPO, cfg: TrainConfig, games: int | None = None) -> list[MatchResult]:
    """Seat-rotated games of the current (deterministic) policy against each eval opponent, per player count."""
    candidate = PPOAgent(model=model, deterministic=True)
    results = []
    for n in cfg.player_counts:
        for i, spec in enumerate(cfg.eval.opponents):
            opponent = seated_agent(spec, 1, seed=cfg.seed + 7 + i)  # built once per process
            results.append(
                play_match(
                    candidate,
                    opponent,
                    games or cfg.eval.games,
                    n,
                    seed=cfg.seed + 1_000_000,  # the same deals at every evaluation
                    opponent_name=eval_label(spec, n, cfg),
                    max_turns=cfg.env.max_turns,
                    modules=tuple(cfg.modules),
                )
            )
    return results


def best_score(results: list[MatchResult], cfg: TrainConfig) -> float:
    """The number best.zip is chosen by: the mean win rate against ``eval.best_opponent`` over player counts."""
    key = cfg.eval.best_opponent or cfg.eval.opponents[-1]
    rates = [r.win_rate for r in results for n in cfg.player_counts if r.opponent == eval_label(key, n, cfg)]
    return float(np.mean(rates)) if rates else -1.0
