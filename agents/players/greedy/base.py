"""The greedy heuristic for the base game (72 action ids, the 497-number observation).

What it does and why: docs/agents.md ("The greedy heuristic"). It reads only the observation
(seat block 0 is the observer) and the mask, so it cannot cheat.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.players.greedy.steps import (
    F_COLOUR,
    F_COST,
    F_POINTS,
    F_PRESENT,
    N_CANDIDATES,
    NO_EFFECTS,
    after_buy,
    bonus_deficit,
    discard,
    lack,
    pick,
    random_legal,
    shortfall,
    targets,
)
from splendor_env.actions import (
    BUY_MARKET,
    BUY_RESERVED,
)
from splendor_env.observation import (
    CARD_DIM,
    O_MARKET,
    O_NOBLES,
    O_PHASE,
    O_SEATS,
    S_BONUS,
    S_RES,
)
from splendor_env.rng import rand_unit


@njit(cache=True)
def _card_off(i: int) -> int:
    """Observation offset of candidate card ``i`` (market slot or own reserve slot)."""
    if i < 12:
        return O_MARKET + i * CARD_DIM
    return O_SEATS + S_RES + (i - 12) * CARD_DIM


@njit(cache=True)
def _needs(obs: np.ndarray, card_off: int, out: np.ndarray) -> None:
    """Per-colour tokens the observer lacks for a card (gold not counted)."""
    for c in range(5):
        out[c] = lack(obs, O_SEATS, c, obs[card_off + F_COST + c])


@njit(cache=True)
def _card_values(obs: np.ndarray, value: np.ndarray, missing: np.ndarray) -> None:
    """Value and missing tokens of every candidate card (-1 value when absent)."""
    bon = obs[O_SEATS + S_BONUS : O_SEATS + S_BONUS + 5]
    demand = np.zeros(5)
    for i in range(N_CANDIDATES):
        off = _card_off(i)
        if obs[off + F_PRESENT] == 0:
            continue
        for c in range(5):
            if obs[off + F_COST + c] > bon[c]:
                demand[c] += 1.0
    for i in range(N_CANDIDATES):
        off = _card_off(i)
        if obs[off + F_PRESENT] == 0:
            value[i] = -1.0
            missing[i] = 99.0
            continue
        col = 0
        for c in range(5):
            if obs[off + F_COLOUR + c] > 0:
                col = c
        v = obs[off + F_POINTS] + 0.5 + 0.1 * demand[col]
        for k in range(5):
            no = O_NOBLES + k * 6
            if obs[no] == 0 or obs[no + 1 + col] <= bon[col]:
                continue
            v += 3.0 / bonus_deficit(obs, no + 1, bon)
        value[i] = v
        missing[i] = shortfall(obs, off, O_SEATS)


@njit(cache=True)
def _need_vectors(obs: np.ndarray, top: np.ndarray) -> np.ndarray:
    needs = np.zeros((3, 5))
    for t in range(3):
        if top[t] >= 0:
            _needs(obs, _card_off(top[t]), needs[t])
    return needs


@njit(cache=True)
def _best_buy(obs: np.ndarray, mask: np.ndarray, value: np.ndarray, noise: float, rng: np.ndarray) -> int:
    best = -1
    best_score = -1e9
    for i in range(N_CANDIDATES):
        a = BUY_MARKET + i if i < 12 else BUY_RESERVED + i - 12
        if not mask[a]:
            continue
        off = _card_off(i)
        gold = 0.0
        for c in range(5):
            gold += lack(obs, O_SEATS, c, obs[off + F_COST + c])
        best, best_score = pick(best, best_score, a, value[i] - 0.1 * gold, noise, rng)
    return best


@njit(cache=True)
def heuristic_action(obs: np.ndarray, mask: np.ndarray, rng: np.ndarray, noise: float, eps: float) -> int:
    """The base-game greedy heuristic on one observation; always a legal id.

    ``noise`` scales a uniform jitter added to every score (1e-6 for the
    greedy agent: a tie-break; larger in MCTS rollouts); ``eps`` is the
    probability of a uniformly random legal move instead.
    """
    if eps > 0.0 and rand_unit(rng) < eps:
        return random_legal(mask, rng)
    if obs[O_PHASE + 2] > 0:  # noble choice: all are worth 3
        return random_legal(mask, rng)
    value = np.empty(N_CANDIDATES)
    missing = np.empty(N_CANDIDATES)
    _card_values(obs, value, missing)
    top = targets(value, missing, N_CANDIDATES, noise, rng)
    needs = _need_vectors(obs, top)
    if obs[O_PHASE + 1] > 0:
        a = discard(obs, mask, needs, noise, rng)
        return a if a >= 0 else random_legal(mask, rng)
    a = _best_buy(obs, mask, value, noise, rng)
    if a >= 0:
        return a
    secure = top[0] >= 0 and top[0] < 12 and obs[_card_off(top[0]) + F_POINTS] >= 3
    return after_buy(obs, mask, value, missing, top[0], secure, needs, 12, NO_EFFECTS, False, noise, rng)


__all__ = ["heuristic_action"]
