"""One seat-rotated match, batched on the SplendorBatch, and its result with a Wilson interval.

Why here: evaluation (:mod:`training.matches.evaluate`), PPO's evaluations during
training and expert iteration's gate all score a candidate the same way. Game
``g`` puts the candidate in seat ``(first_game + g) % num_players`` and the
opponent in every other seat, so first-move advantage cancels out; a win scores
1, a shared victory among ``k`` co-winners ``1/k``, a loss or a truncated game 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from agents import build
from agents.base import Agent
from agents.runner import error_label, play_batched, rotated_seat, rotation_seating
from splendor_env.rules import terminal_rewards
from splendor_env.state import MAX_PLAYERS
from splendor_env.vector import SplendorBatch
from training.common.agent_cache import WORKER_AGENTS
from training.common.games import config_label
from training.common.stats import wilson


@dataclass
class MatchResult:
    opponent: str
    games: int
    score: float  # wins + shared victories / co-winners
    wins: int
    shared: int
    losses: int
    truncated: int
    players: int = 2
    modules: tuple[str, ...] = ()

    @property
    def config(self) -> str:
        """The game configuration: ``"3p base"``, ``"2p cities+orient"``."""
        return config_label(self.players, self.modules)

    @property
    def win_rate(self) -> float:
        return self.score / self.games if self.games else 0.0

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.score, self.games)

    def merge(self, other: MatchResult) -> MatchResult:
        return MatchResult(
            self.opponent,
            self.games + other.games,
            self.score + other.score,
            self.wins + other.wins,
            self.shared + other.shared,
            self.losses + other.losses,
            self.truncated + other.truncated,
            self.players,
            self.modules,
        )

    def as_dict(self) -> dict[str, Any]:
        lo, hi = self.ci
        out = {**asdict(self), "win_rate": self.win_rate, "ci95": [lo, hi]}
        return {**out, "modules": list(self.modules), "config": self.config}

    def __str__(self) -> str:
        lo, hi = self.ci
        return (
            f"vs {self.opponent:<10} {self.games:>5} games: win rate {self.win_rate:6.1%} "
            f"[95% CI {lo:.1%}, {hi:.1%}]  (W {self.wins} / shared {self.shared} / "
            f"L {self.losses} / truncated {self.truncated})"
        )


def play_match(
    candidate: Agent,
    opponent: Agent,
    games: int,
    num_players: int = 2,
    seed: int = 0,
    batch: int = 250,
    opponent_name: str = "opponent",
    first_game: int = 0,
    candidate_name: str | None = None,
    **env_options: Any,
) -> MatchResult:
    """Play ``games`` seat-rotated games (game ``g`` -> candidate seat ``(first_game + g) % n``).

    The games run in :func:`agents.runner.play_batched` (``batch`` at a time);
    search agents get their decision states from ``default_rng([seed, first_game, 7])``.
    ``candidate_name`` and ``opponent_name`` (their specs) name a failing agent in its
    :class:`~agents.runner.AgentError`.
    """
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    n = num_players
    venv = SplendorBatch(min(games, batch), n, seed=seed, copy=False, **env_options)
    result = MatchResult(opponent_name, 0, 0.0, 0, 0, 0, 0, n, tuple(venv.config.modules))
    terminal = np.zeros(MAX_PLAYERS, dtype=np.float64)

    def on_end(game: int, _slot: int, final_state: np.ndarray, truncated: bool) -> None:
        result.games += 1
        if truncated:
            result.truncated += 1
            return
        terminal_rewards(final_state, terminal)
        r = terminal[rotated_seat(game, n, first_game)]
        if r > 0:
            result.wins += 1
            result.score += 1.0
        elif r == 0:
            result.shared += 1
            result.score += 1.0 / int((terminal[:n] == 0).sum())
        else:
            result.losses += 1

    rng = np.random.default_rng([seed, first_game, 7])  # determinisations for agents that search
    labels = (candidate_name or error_label(candidate), opponent_name)

    def game_name(game: int) -> str:
        return f"game {first_game + game} of the match vs {opponent_name!r}, seed {seed}"

    seating = rotation_seating(games, n, first_game)
    play_batched(venv, (candidate, opponent), seating, rng, on_end, labels=labels, game_name=game_name)
    return result


def seated_agent(spec: str, seat: int, seed: int | None = None, **options: Any) -> Agent:
    """This process's agent of ``spec`` (with ``options``) for ``seat``, reseeded with ``seed`` when given.

    Built once per process (:data:`training.common.agent_cache.WORKER_AGENTS`) by :func:`agents.build`;
    reseeding makes it play as ``build(spec, seed=seed, **options)`` would. One agent per seat, so
    an agent that meets its own spec in a match plays against a copy with its own generator.
    """
    key = ("spec", spec, seat, tuple(sorted(options.items())))
    agent = WORKER_AGENTS.get(key, lambda: build(spec, **options))
    if seed is not None:
        agent.seed(seed)
    return agent
