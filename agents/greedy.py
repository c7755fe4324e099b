"""Greedy agent: a one-ply heuristic that reads only the observation and the mask.

It never sees the state array: everything is decoded from the observation
vector with the ``O_*``/``S_*`` offsets of :mod:`splendor_env.observation`
(seat block 0 is the observer), so it cannot cheat. The same numba kernel,
:func:`heuristic_action`, with noise and an epsilon of random moves, is the
rollout policy of :mod:`agents.mcts`.

The heuristic, in order of priority:

*Card value.* For each card the player could get (the 12 market slots and its
own reserved cards): ``points + noble progress + bonus value`` where noble
progress is ``3 / (bonuses still missing)`` summed over the nobles on offer
that still need the card's colour (a card that completes a noble is worth its
3 points), and the bonus value is ``0.5 + 0.1 * (number of candidate cards
whose cost in that colour exceeds the player's bonus)``, i.e. what the
permanent discount is worth.
*Missing tokens* of a card: its cost minus bonuses minus held tokens, per
colour, summed, minus held gold (never below 0).

1. **Noble choice**: any qualifying noble (all are worth 3): rng tie-break.
2. **Buy** the affordable card of highest value (minus 0.1 per gold spent).
3. **Block**: if an opponent can afford now a market card worth >= 3 points
   (or one that takes them to 15), reserve it (when the player holds at most
   one reserve, or always when it would end the game for them).
4. **Target**: the card maximising ``value / (1 + missing / 2)``; the runner-up
   is the secondary target.
5. **Secure**: if the target is a market card worth >= 3 points, only one
   token away, gold is in the bank and the player holds at most one reserve,
   reserve it (the gold makes it affordable next turn and nobody can take it).
6. **Take tokens** with the legal take action maximising the tokens that
   reduce the target's missing tokens (weight 1), the secondary target's
   (0.4) and the third's (0.2), plus 0.01 per token, minus 0.3 per token
   beyond the 10-token limit.
7. Otherwise **reserve** the best-value market card (gold helps later), else
   a blind reserve, else any legal action (pass).
8. **Discard** the token of largest surplus over the target's (and, half
   weighted, the secondary target's) needs; gold only last.

Ties are broken with the agent's rng (a ``1e-6`` jitter on every score), so
the agent is deterministic given its seed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from splendor_env.actions import (
    BUY_MARKET,
    BUY_RESERVED,
    DISCARD,
    NUM_ACTIONS,
    PASS,
    RESERVE_DECK,
    RESERVE_MARKET,
    TAKE2_SAME,
    TAKE_DISTINCT_MASKS,
)
from splendor_env.observation import (
    CARD_DIM,
    O_BANK,
    O_MARKET,
    O_NOBLES,
    O_PHASE,
    O_SEATS,
    OBS_DIM,
    S_BONUS,
    S_NRES,
    S_PRESENT,
    S_PRESTIGE,
    S_RES,
    S_TOKENS,
    SEAT_DIM,
)
from splendor_env.rng import rand_below, rand_unit

from .base import Agent, check_mask

# Feature offsets inside one card block of the observation.
F_PRESENT = 0
F_BLIND = 1
F_COLOUR = 5
F_POINTS = 10
F_COST = 11

N_CANDIDATES = 15  # 12 market slots, then the observer's 3 reserve slots
TOKEN_LIMIT = 10


@njit(cache=True)
def _random_legal(mask: np.ndarray, rng: np.ndarray) -> int:
    n = 0
    for a in range(NUM_ACTIONS):
        if mask[a]:
            n += 1
    k = rand_below(rng, n)
    for a in range(NUM_ACTIONS):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return PASS


@njit(cache=True)
def _card_off(i: int) -> int:
    """Observation offset of candidate card ``i`` (market slot or own reserve slot)."""
    if i < 12:
        return O_MARKET + i * CARD_DIM
    return O_SEATS + S_RES + (i - 12) * CARD_DIM


@njit(cache=True)
def _shortfall(obs: np.ndarray, card_off: int, seat_off: int) -> float:
    """Tokens the seat still lacks for a card after bonuses, tokens and gold."""
    short = 0.0
    for c in range(5):
        need = obs[card_off + F_COST + c] - obs[seat_off + S_BONUS + c] - obs[seat_off + S_TOKENS + c]
        if need > 0:
            short += need
    short -= obs[seat_off + S_TOKENS + 5]
    return short if short > 0 else 0.0


@njit(cache=True)
def _needs(obs: np.ndarray, card_off: int, out: np.ndarray) -> None:
    """Per-colour tokens the observer lacks for a card (gold not counted)."""
    for c in range(5):
        need = obs[card_off + F_COST + c] - obs[O_SEATS + S_BONUS + c] - obs[O_SEATS + S_TOKENS + c]
        out[c] = need if need > 0 else 0.0


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
            rem = 0.0
            for c in range(5):
                d = obs[no + 1 + c] - bon[c]
                if d > 0:
                    rem += d
            v += 3.0 / rem
        value[i] = v
        missing[i] = _shortfall(obs, off, O_SEATS)


@njit(cache=True)
def _top3(value: np.ndarray, missing: np.ndarray, noise: float, rng: np.ndarray) -> np.ndarray:
    """Indices of the three best targets by ``value / (1 + missing / 2)`` (-1 if fewer)."""
    score = np.full(N_CANDIDATES, -1e9)
    for i in range(N_CANDIDATES):
        if value[i] >= 0:
            score[i] = value[i] / (1.0 + 0.5 * missing[i]) + noise * rand_unit(rng)
    top = np.full(3, -1, dtype=np.int64)
    for t in range(3):
        best = -1
        for i in range(N_CANDIDATES):
            if score[i] > -1e8 and (best < 0 or score[i] > score[best]):
                best = i
        if best < 0:
            break
        top[t] = best
        score[best] = -1e9
    return top


@njit(cache=True)
def _need_vectors(obs: np.ndarray, top: np.ndarray) -> np.ndarray:
    needs = np.zeros((3, 5))
    for t in range(3):
        if top[t] >= 0:
            _needs(obs, _card_off(top[t]), needs[t])
    return needs


@njit(cache=True)
def _discard(obs: np.ndarray, mask: np.ndarray, needs: np.ndarray, noise: float, rng: np.ndarray) -> int:
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
        score += noise * rand_unit(rng)
        if score > best_score:
            best_score = score
            best = a
    return best


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
            need = obs[off + F_COST + c] - obs[O_SEATS + S_BONUS + c] - obs[O_SEATS + S_TOKENS + c]
            if need > 0:
                gold += need
        score = value[i] - 0.1 * gold + noise * rand_unit(rng)
        if score > best_score:
            best_score = score
            best = a
    return best


@njit(cache=True)
def _block(obs: np.ndarray, mask: np.ndarray) -> int:
    """A reserve that denies an opponent a strong card they can afford now, or -1."""
    my_nres = obs[O_SEATS + S_NRES]
    best = -1
    best_threat = 0.0
    for rel in range(1, 4):
        so = O_SEATS + rel * SEAT_DIM
        if obs[so + S_PRESENT] == 0:
            continue
        for i in range(12):
            off = O_MARKET + i * CARD_DIM
            if obs[off + F_PRESENT] == 0 or not mask[RESERVE_MARKET + i]:
                continue
            pts = obs[off + F_POINTS]
            finishing = obs[so + S_PRESTIGE] + pts >= 15
            if not (pts >= 3 or finishing) or _shortfall(obs, off, so) > 0:
                continue
            if my_nres > 1 and not finishing:
                continue
            threat = pts + (100.0 if finishing else 0.0)
            if threat > best_threat:
                best_threat = threat
                best = RESERVE_MARKET + i
    return best


@njit(cache=True)
def _take(obs: np.ndarray, mask: np.ndarray, needs: np.ndarray, noise: float, rng: np.ndarray) -> int:
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
        score += noise * rand_unit(rng)
        if score > best_score:
            best_score = score
            best = a
    return best


@njit(cache=True)
def heuristic_action(obs: np.ndarray, mask: np.ndarray, rng: np.ndarray, noise: float, eps: float) -> int:
    """The greedy heuristic (module docstring) on one observation; always a legal id.

    ``noise`` scales a uniform jitter added to every score (1e-6 for the
    greedy agent: a tie-break; larger in MCTS rollouts); ``eps`` is the
    probability of a uniformly random legal move instead.
    """
    if eps > 0.0 and rand_unit(rng) < eps:
        return _random_legal(mask, rng)
    if obs[O_PHASE + 2] > 0:  # noble choice: all are worth 3
        return _random_legal(mask, rng)
    value = np.empty(N_CANDIDATES)
    missing = np.empty(N_CANDIDATES)
    _card_values(obs, value, missing)
    top = _top3(value, missing, noise, rng)
    needs = _need_vectors(obs, top)
    if obs[O_PHASE + 1] > 0:
        a = _discard(obs, mask, needs, noise, rng)
        return a if a >= 0 else _random_legal(mask, rng)
    a = _best_buy(obs, mask, value, noise, rng)
    if a >= 0:
        return a
    a = _block(obs, mask)
    if a >= 0:
        return a
    tgt = top[0]
    if (
        tgt >= 0
        and tgt < 12
        and obs[_card_off(tgt) + F_POINTS] >= 3
        and missing[tgt] == 1
        and obs[O_BANK + 5] > 0
        and obs[O_SEATS + S_NRES] <= 1
        and mask[RESERVE_MARKET + tgt]
    ):
        return RESERVE_MARKET + tgt
    a = _take(obs, mask, needs, noise, rng)
    if a >= 0:
        return a
    best = -1
    for i in range(12):
        if mask[RESERVE_MARKET + i] and (best < 0 or value[i] > value[best]):
            best = i
    if best >= 0:
        return RESERVE_MARKET + best
    for lvl in range(2, -1, -1):
        if mask[RESERVE_DECK + lvl]:
            return RESERVE_DECK + lvl
    return _random_legal(mask, rng)


@njit(cache=True)
def _heuristic_batch(obs: np.ndarray, masks: np.ndarray, rng: np.ndarray, noise: float) -> np.ndarray:
    out = np.empty(obs.shape[0], dtype=np.int64)
    for b in range(obs.shape[0]):
        out[b] = heuristic_action(obs[b], masks[b], rng, noise, 0.0)
    return out


class GreedyAgent(Agent):
    """Deterministic (given the seed) one-ply heuristic over the observation; see the module docstring."""

    plays_modules = False

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)

    def _stream(self) -> np.ndarray:
        return np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        check_mask(action_mask, NUM_ACTIONS)
        obs = np.asarray(observation, dtype=np.float32)
        if obs.shape != (OBS_DIM,):
            raise ValueError(f"observation must have shape ({OBS_DIM},), got {obs.shape}")
        mask = np.asarray(action_mask, dtype=np.int8)
        return int(heuristic_action(obs, mask, self._stream(), 1e-6, 0.0))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=np.int8)
        if masks.ndim != 2 or masks.shape[1] != NUM_ACTIONS:
            raise ValueError(f"action_masks must have shape (B, {NUM_ACTIONS}), got {masks.shape}")
        if not masks.any(axis=1).all():
            raise ValueError("every row of action_masks needs at least one legal action")
        obs = np.ascontiguousarray(observations, dtype=np.float32)
        return _heuristic_batch(obs, np.ascontiguousarray(masks), self._stream(), 1e-6)
