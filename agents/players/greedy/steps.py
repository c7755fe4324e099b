"""The steps both greedy kernels share (targets, discard, token take, block, the plan after a buy,
the tie-break), so a change to one of them changes the base game and module games alike.

Candidates are the cards the player could get, by index: the base game's 12 market slots and
the observer's 3 reserve slots (:data:`N_CANDIDATES`), or in module games the layout of
:data:`M_CANDIDATES` (:func:`card_offsets`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from splendor_env.actions import (
    DISCARD,
    PASS,
    RESERVE_DECK,
    RESERVE_MARKET,
    RESERVE_ODECK,
    RESERVE_OMARKET,
    TAKE2_SAME,
    TAKE_DISTINCT_MASKS,
)
from splendor_env.cards import EFFECT_SACRIFICE
from splendor_env.observation import (
    CARD_DIM,
    FULL_CARD_DIM,
    M_RES,
    O_BANK,
    O_MARKET,
    O_MSEATS,
    O_OMARKET,
    O_PDRAWN,
    O_SEATS,
    ORIENT_DIM,
    S_BONUS,
    S_NRES,
    S_PRESENT,
    S_PRESTIGE,
    S_RES,
    S_TOKENS,
    SEAT_DIM,
)
from splendor_env.rng import rand_below, rand_unit

# Feature offsets inside one card block of the observation.
F_PRESENT = 0
F_BLIND = 1
F_COLOUR = 5
F_POINTS = 10
F_COST = 11

N_CANDIDATES = 15  # 12 market slots, then the observer's 3 reserve slots
TOKEN_LIMIT = 10
#: Missing tokens of a card tokens cannot get (absent, or in module games out of reach).
NO_TARGET = 99.0
#: The card effects of a base game's candidates: none (a global array is a constant to numba).
NO_EFFECTS = np.zeros(N_CANDIDATES, dtype=np.int64)

# Candidate cards in module games: 0-17 the market slots (12 base, 6 Orient, as the
# module action ids number them), 18-20 the observer's reserve, 21-22 the cards drawn
# by the "draw two" trading post.
M_CANDIDATES = 23
M_MARKET = 18
M_DRAWN = 21


@njit(cache=True)
def random_legal(mask: np.ndarray, rng: np.ndarray) -> int:
    """A uniformly random legal id of a mask of any length (72 base ids, or the module ids)."""
    n = 0
    for a in range(mask.shape[0]):
        if mask[a]:
            n += 1
    k = rand_below(rng, n)
    for a in range(mask.shape[0]):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return PASS


@njit(cache=True)
def pick(
    best: int, best_score: float, a: int, score: float, noise: float, rng: np.ndarray
) -> tuple[int, float]:
    """One step of every arg-max of the heuristics: ``score`` plus its jitter (``noise`` times one draw of
    ``rng``, the tie-break) against the best so far; returns the new (best id, best score)."""
    score += noise * rand_unit(rng)
    if score > best_score:
        return a, score
    return best, best_score


@njit(cache=True)
def card_offsets(i: int) -> tuple[int, int]:
    """(offset of the 16 base numbers, offset of the Orient extras or -1) of module candidate ``i``."""
    if i < 12:
        return O_MARKET + i * CARD_DIM, -1
    if i < M_MARKET:
        off = O_OMARKET + (i - 12) * FULL_CARD_DIM
        return off, off + CARD_DIM
    if i < M_DRAWN:
        r = i - M_MARKET
        return O_SEATS + S_RES + r * CARD_DIM, O_MSEATS + M_RES + r * ORIENT_DIM
    off = O_PDRAWN + (i - M_DRAWN) * FULL_CARD_DIM
    return off, off + CARD_DIM


@njit(cache=True)
def reserve_action(m: int) -> int:
    """The reserve id of market slot ``m`` (0-11 the base market, 12-17 the Orient market)."""
    return RESERVE_MARKET + m if m < 12 else RESERVE_OMARKET + m - 12


@njit(cache=True)
def lack(obs: np.ndarray, seat_off: int, c: int, cost: float) -> float:
    """Tokens of colour ``c`` a seat still lacks for ``cost`` after its bonuses and tokens (gold not counted).

    Every "what is missing" of both heuristics (shortfall, needs, gold to spend) is built from this.
    """
    need = cost - obs[seat_off + S_BONUS + c] - obs[seat_off + S_TOKENS + c]
    return need if need > 0 else 0.0


@njit(cache=True)
def bonus_deficit(obs: np.ndarray, req_off: int, bon: np.ndarray) -> float:
    """Bonuses still missing for a requirement of five colours at ``req_off`` (a noble, a city)."""
    rem = 0.0
    for c in range(5):
        d = obs[req_off + c] - bon[c]
        if d > 0:
            rem += d
    return rem


@njit(cache=True)
def shortfall(obs: np.ndarray, card_off: int, seat_off: int) -> float:
    """Tokens the seat still lacks for a card after bonuses, tokens and gold."""
    short = 0.0
    for c in range(5):
        short += lack(obs, seat_off, c, obs[card_off + F_COST + c])
    short -= obs[seat_off + S_TOKENS + 5]
    return short if short > 0 else 0.0


@njit(cache=True)
def targets(value: np.ndarray, missing: np.ndarray, n: int, noise: float, rng: np.ndarray) -> np.ndarray:
    """The three best of the first ``n`` candidates by ``value / (1 + missing / 2)`` (-1 if fewer).

    Absent cards (value < 0) and cards tokens cannot get (``missing`` NO_TARGET, module games only) are no target.
    """
    score = np.full(n, -1e9)
    for i in range(n):
        if value[i] >= 0 and missing[i] < NO_TARGET:
            score[i] = value[i] / (1.0 + 0.5 * missing[i]) + noise * rand_unit(rng)
    return _best_three(score)


@njit(cache=True)
def _best_three(score: np.ndarray) -> np.ndarray:
    """Indices of the three highest scores above -1e8, best first (-1 if fewer); ``score`` is consumed."""
    top = np.full(3, -1, dtype=np.int64)
    for t in range(3):
        best = -1
        for i in range(score.shape[0]):
            if score[i] > -1e8 and (best < 0 or score[i] > score[best]):
                best = i
        if best < 0:
            break
        top[t] = best
        score[best] = -1e9
    return top


@njit(cache=True)
def discard(obs: np.ndarray, mask: np.ndarray, needs: np.ndarray, noise: float, rng: np.ndarray) -> int:
    best = -1
    best_score = -1e9
    for c in range(6):
        a = DISCARD + c
        if not mask[a]:
            continue
        held = obs[O_SEATS + S_TOKENS + c]
        if c == 5:
            score = -100.0 + held
        else:
            score = held - needs[0, c] - 0.5 * needs[1, c]
        best, best_score = pick(best, best_score, a, score, noise, rng)
    return best


@njit(cache=True)
def block(obs: np.ndarray, mask: np.ndarray, slots: int, effs: np.ndarray, cities: bool) -> int:
    """A reserve that denies an opponent a strong market card they can afford now, or -1.

    ``slots``: the 12 base market slots, or 18 with the Orient market (module games); a sacrifice
    card (``effs``) is never worth denying. With Cities nobody wins by points, so only strong cards count.
    """
    my_nres = obs[O_SEATS + S_NRES]
    best = -1
    best_threat = 0.0
    for rel in range(1, 4):
        so = O_SEATS + rel * SEAT_DIM
        if obs[so + S_PRESENT] == 0:
            continue
        for m in range(slots):
            off, _ = card_offsets(m)
            a = reserve_action(m)
            if obs[off + F_PRESENT] == 0 or not mask[a] or effs[m] == EFFECT_SACRIFICE:
                continue
            pts = obs[off + F_POINTS]
            finishing = not cities and obs[so + S_PRESTIGE] + pts >= 15
            if not (pts >= 3 or finishing) or shortfall(obs, off, so) > 0:
                continue
            if my_nres > 1 and not finishing:
                continue
            threat = pts + (100.0 if finishing else 0.0)
            if threat > best_threat:
                best_threat = threat
                best = a
    return best


@njit(cache=True)
def take(obs: np.ndarray, mask: np.ndarray, needs: np.ndarray, noise: float, rng: np.ndarray) -> int:
    held = 0.0
    for c in range(6):
        held += obs[O_SEATS + S_TOKENS + c]
    best = -1
    best_score = -1e9
    t = np.zeros(5)
    for a in range(RESERVE_MARKET):
        if not mask[a]:
            continue
        for c in range(5):
            t[c] = 0.0
        if a < TAKE2_SAME:
            bits = TAKE_DISTINCT_MASKS[a]
            for c in range(5):
                if bits & (1 << c):
                    t[c] = 1.0
        else:
            t[a - TAKE2_SAME] = 2.0
        score = 0.0
        total = 0.0
        for c in range(5):
            score += min(t[c], needs[0, c]) + 0.4 * min(t[c], needs[1, c]) + 0.2 * min(t[c], needs[2, c])
            total += t[c]
        score += 0.01 * total
        over = held + total - TOKEN_LIMIT
        if over > 0:
            score -= 0.3 * over
        best, best_score = pick(best, best_score, a, score, noise, rng)
    return best


@njit(cache=True)
def after_buy(
    obs: np.ndarray,
    mask: np.ndarray,
    value: np.ndarray,
    missing: np.ndarray,
    tgt: int,
    secure: bool,
    needs: np.ndarray,
    slots: int,
    effs: np.ndarray,
    cities: bool,
    noise: float,
    rng: np.ndarray,
) -> int:
    """A main action when nothing is bought, the plan both heuristics share: block, secure, take, reserve.

    ``tgt`` is the first target, ``secure`` whether it is worth securing (a market card worth 3:
    its points in base games, its value in module games); ``slots`` the market slots (12, or 18
    with the Orient market).
    """
    a = block(obs, mask, slots, effs, cities)
    if a >= 0:
        return a
    if (
        secure
        and missing[tgt] == 1
        and obs[O_BANK + 5] > 0
        and obs[O_SEATS + S_NRES] <= 1
        and mask[reserve_action(tgt)]
    ):
        return reserve_action(tgt)
    a = take(obs, mask, needs, noise, rng)
    if a >= 0:
        return a
    best = -1
    for m in range(slots):
        if mask[reserve_action(m)] and (best < 0 or value[m] > value[best]):
            best = m
    if best >= 0:
        return reserve_action(best)
    for lvl in range(2, -1, -1):
        if mask[RESERVE_DECK + lvl]:
            return RESERVE_DECK + lvl
        if slots > 12 and mask[RESERVE_ODECK + lvl]:
            return RESERVE_ODECK + lvl
    return random_legal(mask, rng)


__all__ = [
    "F_BLIND",
    "F_COLOUR",
    "F_COST",
    "F_POINTS",
    "F_PRESENT",
    "M_CANDIDATES",
    "M_DRAWN",
    "M_MARKET",
    "NO_EFFECTS",
    "NO_TARGET",
    "N_CANDIDATES",
    "TOKEN_LIMIT",
    "after_buy",
    "block",
    "card_offsets",
    "bonus_deficit",
    "discard",
    "lack",
    "pick",
    "random_legal",
    "reserve_action",
    "shortfall",
    "take",
    "targets",
]
