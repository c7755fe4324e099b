"""Ratings from game records: head-to-head scores, Bradley-Terry Elo with a bootstrap, OpenSkill.

Why a module of its own: the statistics do not depend on how the games were
played (any list of records from :mod:`training.records` will do), so the
tournament's scheduling and playing can change without touching them, and a
report can rate records read back from ``games.jsonl``.

A record needs ``num_players``, ``winners``, ``prestige``, ``cards`` and
``agent_ids`` (the agent index in each seat). Head to head, seat ``i`` beats
seat ``j`` when its standing (won, prestige, fewer cards) is better; equal
standings count half to each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from training.common.stats import Z95, bootstrap_counts


def standings(record: dict[str, Any]) -> list[tuple[bool, int, int]]:
    """Per seat, the key that orders the table: (won, prestige, fewer cards), larger is better."""
    return [
        (p in record["winners"], record["prestige"][p], -record["cards"][p])
        for p in range(record["num_players"])
    ]


def pairwise_scores(record: dict[str, Any]) -> list[tuple[int, int, float]]:
    """``(seat_i, seat_j, score of i against j)`` for every ordered pair of seats."""
    n = record["num_players"]
    key = standings(record)
    out = []
    for i in range(n):
        for j in range(n):
            if i != j:
                out.append((i, j, 1.0 if key[i] > key[j] else (0.0 if key[i] < key[j] else 0.5)))
    return out


def bradley_terry_elo(wins: np.ndarray, prior: float = 0.5, iters: int = 10_000) -> np.ndarray:
    """Batch Elo from pairwise wins ``wins[..., i, j]`` (i over j, half for draws).

    Minorisation-maximisation for the Bradley-Terry strengths; ``prior`` wins
    are added each way to every pair that met, so a perfect record stays
    finite. The mean rating is anchored at 1500. Leading axes are independent
    fits (the bootstrap fits all its resamples at once).
    """
    games = wins + np.swapaxes(wins, -1, -2)
    w = wins + prior * (games > 0)
    n = w + np.swapaxes(w, -1, -2)
    p = np.ones(wins.shape[:-1])
    total = w.sum(axis=-1)
    for _ in range(iters):
        denom = (n / (p[..., :, None] + p[..., None, :])).sum(axis=-1)
        new = np.where(denom > 0, total / np.where(denom > 0, denom, 1.0), p)
        new /= np.exp(np.mean(np.log(new), axis=-1, keepdims=True))
        done = np.max(np.abs(new - p)) < 1e-10
        p = new
        if done:
            break
    elo = 400.0 * np.log10(p)
    return elo - elo.mean(axis=-1, keepdims=True) + 1500.0


def pair_score_tensor(records: Sequence[dict[str, Any]], num_agents: int) -> np.ndarray:
    """Per game, the head-to-head scores between distinct agents: shape ``(games, agents, agents)``."""
    out = np.zeros((len(records), num_agents, num_agents))
    for r, rec in enumerate(records):
        ids = rec["agent_ids"]
        for i, j, score in pairwise_scores(rec):
            if ids[i] != ids[j]:
                out[r, ids[i], ids[j]] += score
    return out


def elo_intervals(per_game: np.ndarray, rounds: int = 1000, seed: int = 0, level: float = 0.95) -> np.ndarray:
    """Percentile bootstrap interval of each Bradley-Terry Elo: ``(agents, 2)``.

    Games are resampled with replacement ``rounds`` times with a fixed seed, so
    the interval is reproducible; ``per_game`` comes from :func:`pair_score_tensor`.
    """
    n, k, _ = per_game.shape
    if n == 0:
        return np.full((k, 2), np.nan)
    counts = bootstrap_counts(n, rounds, seed)
    elos = bradley_terry_elo(np.tensordot(counts.astype(float), per_game, axes=1))
    tail = 100 * (1 - level) / 2
    return np.percentile(elos, [tail, 100 - tail], axis=0).T


def openskill_ratings(records: Sequence[dict[str, Any]], num_agents: int) -> list[dict[str, float]]:
    """Plackett-Luce OpenSkill ratings, one team per seat, games rated in record order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=str(i)) for i in range(num_agents)]
    for rec in records:
        ids = rec["agent_ids"]
        if len(set(ids)) < 2:
            continue
        n = rec["num_players"]
        key = standings(rec)
        order = sorted(set(key), reverse=True)
        ranks = [order.index(k) + 1 for k in key]
        # An agent seated twice plays as two teams sharing one rating: update with the mean change.
        teams = [[ratings[a]] for a in ids]
        new = model.rate(teams, ranks=ranks)
        for a in set(ids):
            seats = [p for p in range(n) if ids[p] == a]
            ratings[a].mu = float(np.mean([new[p][0].mu for p in seats]))
            ratings[a].sigma = float(np.mean([new[p][0].sigma for p in seats]))
    return [
        {
            "mu": r.mu,
            "sigma": r.sigma,
            "ordinal": r.mu - 3 * r.sigma,
            "ci95": [r.mu - Z95 * r.sigma, r.mu + Z95 * r.sigma],
        }
        for r in ratings
    ]


__all__ = [
    "bradley_terry_elo",
    "elo_intervals",
    "openskill_ratings",
    "pair_score_tensor",
    "pairwise_scores",
    "standings",
]
