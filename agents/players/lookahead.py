"""One-ply lookahead with a two-card purchase plan and denial (spec ``lookahead``), base game, 2-4 players.

Why: ``greedy`` reads only the observation and follows fixed priorities; a stronger reference
opponent, still well under a millisecond a move, tries every legal move on the engine from the
state it is given (determinised: the fairness rule, :mod:`agents.runner`) and scores the
position each one leads to. How it scores: docs/agents.md ("How lookahead scores a move");
the weights: :data:`WEIGHTS`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.base import Agent, search_inputs
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS
from splendor_env.cards import CARD_COLOUR, CARD_COST, CARD_POINTS, NOBLE_REQ
from splendor_env.rng import rand_unit
from splendor_env.state import (
    CURRENT,
    MARKET,
    N_PLAYERS,
    NOBLE_ID,
    NOBLE_OWNER,
    OUTCOME,
    P_BONUS,
    P_PRESTIGE,
    P_RESERVED,
    P_TOKENS,
    PHASE,
    PHASE_GAME_OVER,
    player_offset,
)

#: The evaluation's weights (name -> value), passed to the kernels as one array in this order.
WEIGHTS: dict[str, float] = {
    "DISCOUNT": 0.6,  # value of a planned card one turn later, relative to now
    "CARD_W": 0.3,  # a bonus card's worth beyond its points (its permanent discount)
    "BONUS_W": 0.0,  # per bonus held (the engine) beyond what the plan and nobles see in it
    "TOKEN_W": 0.3,  # per gem token held
    "GOLD_W": 0.3,  # per gold held
    "EXCESS_W": 5.0,  # per token over the limit: tokens taken only to be discarded are a lost turn
    "DENIAL": 0.6,  # weight of the opponent's best purchase on its next move
    "WIN_BONUS": 20.0,  # reaching 15 points
}
DISCOUNT, CARD_W, BONUS_W, TOKEN_W, GOLD_W, EXCESS_W, DENIAL, WIN_BONUS = range(8)


def weight_array(**over: float) -> np.ndarray:
    """:data:`WEIGHTS` as the kernels' array, with ``over`` replacing some (for tuning)."""
    unknown = set(over) - set(WEIGHTS)
    if unknown:
        raise ValueError(f"unknown lookahead weight(s) {sorted(unknown)}; known: {list(WEIGHTS)}")
    return np.array([over.get(k, v) for k, v in WEIGHTS.items()], dtype=np.float64)


N_CAND = 15  # 12 market slots + 3 reserve slots


@njit(cache=True)
def _noble_progress(s: np.ndarray, bonus: np.ndarray) -> float:
    """Sum over nobles still on offer of ``3 * (have / need)^2``."""
    v = 0.0
    for k in range(5):
        nb = s[NOBLE_ID + k]
        if nb < 0 or s[NOBLE_OWNER + k] >= 0:
            continue
        need = 0
        have = 0
        for c in range(5):
            r = NOBLE_REQ[nb, c]
            need += r
            have += min(r, bonus[c])
        if need > 0:
            v += 3.0 * (have / need) ** 2
    return v


@njit(cache=True)
def _candidates(s: np.ndarray, po: int, cards: np.ndarray) -> int:
    """Market cards and the seat's reserved cards; returns how many."""
    n = 0
    for m in range(12):
        c = s[MARKET + m]
        if c >= 0:
            cards[n] = c
            n += 1
    for r in range(3):
        c = s[po + P_RESERVED + r]
        if c >= 0:
            cards[n] = c
            n += 1
    return n


@njit(cache=True)
def _turns(missing: float) -> float:
    """Turns to collect ``missing`` tokens at 3 a turn, plus the buying turn."""
    return float((int(missing) + 2) // 3) + 1.0


@njit(cache=True)
def seat_value(s: np.ndarray, p: int, w: np.ndarray) -> float:
    """``V(p)``: material, noble progress and the two-card purchase plan (docs/agents.md)."""
    po = player_offset(p)
    bonus = np.empty(5, dtype=np.int64)
    tokens = np.empty(5, dtype=np.int64)
    total_tokens = 0
    for c in range(5):
        bonus[c] = s[po + P_BONUS + c]
        tokens[c] = s[po + P_TOKENS + c]
        total_tokens += tokens[c]
    gold = s[po + P_TOKENS + 5]
    total_tokens += gold
    nb_now = _noble_progress(s, bonus)
    v = float(s[po + P_PRESTIGE]) + nb_now
    nbonus = 0
    for c in range(5):
        nbonus += bonus[c]
    v += w[BONUS_W] * nbonus + w[TOKEN_W] * (total_tokens - gold) + w[GOLD_W] * gold
    if total_tokens > 10:
        v -= w[EXCESS_W] * (total_tokens - 10)
    if s[po + P_PRESTIGE] >= 15:
        v += w[WIN_BONUS]
    cards = np.empty(N_CAND, dtype=np.int64)
    n = _candidates(s, po, cards)
    worth = np.empty(N_CAND)
    need = np.zeros((N_CAND, 5), dtype=np.int64)
    t1 = np.empty(N_CAND)
    for i in range(n):
        c = cards[i]
        col = CARD_COLOUR[c]
        bonus[col] += 1
        worth[i] = CARD_POINTS[c] + w[CARD_W] + _noble_progress(s, bonus) - nb_now
        bonus[col] -= 1
        short = 0
        for k in range(5):
            r = CARD_COST[c, k] - bonus[k]
            need[i, k] = r if r > 0 else 0
            sh = need[i, k] - tokens[k]
            short += sh if sh > 0 else 0
        miss = short - gold
        t1[i] = _turns(miss if miss > 0 else 0)
    best = 0.0
    for i in range(n):
        single = worth[i] * w[DISCOUNT] ** t1[i]
        if single > best:
            best = single
        ci = CARD_COLOUR[cards[i]]
        for j in range(n):
            if j == i:
                continue
            cj = cards[j]
            short = 0
            for k in range(5):
                r2 = CARD_COST[cj, k] - bonus[k] - (1 if k == ci else 0)
                tot = need[i, k] + (r2 if r2 > 0 else 0)
                sh = tot - tokens[k]
                short += sh if sh > 0 else 0
            miss = short - gold
            t2 = max(_turns(miss if miss > 0 else 0) + 1.0, t1[i] + 1.0)
            pair = single + worth[j] * w[DISCOUNT] ** t2
            if pair > best:
                best = pair
    return v + best


@njit(cache=True)
def threat(s: np.ndarray, p: int, w: np.ndarray) -> float:
    """Worth of the best card seat ``p`` could buy right now (market or own reserve), 0 if none."""
    po = player_offset(p)
    cards = np.empty(N_CAND, dtype=np.int64)
    n = _candidates(s, po, cards)
    bonus = np.empty(5, dtype=np.int64)
    for c in range(5):
        bonus[c] = s[po + P_BONUS + c]
    nb_now = _noble_progress(s, bonus)
    best = 0.0
    for i in range(n):
        c = cards[i]
        short = 0
        for k in range(5):
            sh = CARD_COST[c, k] - bonus[k] - s[po + P_TOKENS + k]
            short += sh if sh > 0 else 0
        if short > s[po + P_TOKENS + 5]:
            continue
        col = CARD_COLOUR[c]
        bonus[col] += 1
        val = CARD_POINTS[c] + _noble_progress(s, bonus) - nb_now
        bonus[col] -= 1
        if s[po + P_PRESTIGE] + CARD_POINTS[c] >= 15:
            val += w[WIN_BONUS]
        if val > best:
            best = val
    return best


@njit(cache=True)
def position_value(s: np.ndarray, me: int, w: np.ndarray) -> float:
    """Score of ``s`` for seat ``me`` (docs/agents.md): the result if over, else values and denial."""
    n = s[N_PLAYERS]
    if rules.is_over(s):
        if s[PHASE] != PHASE_GAME_OVER or s[OUTCOME + me] == 0:
            return -1000.0 if s[PHASE] == PHASE_GAME_OVER else 0.0
        k = 0
        for q in range(n):
            k += s[OUTCOME + q]
        return 1000.0 if k == 1 else 0.0
    worst = -1e9
    for q in range(n):
        if q == me:
            continue
        vq = seat_value(s, q, w) + w[DENIAL] * threat(s, q, w)
        if vq > worst:
            worst = vq
    return seat_value(s, me, w) - worst


@njit(cache=True)
def turn_value(s: np.ndarray, me: int, w: np.ndarray) -> float:
    """:func:`position_value` once ``me``'s turn is over: its own pending discards and noble
    choice are answered by the best of their options (so taking tokens over the limit is scored
    after the discards it forces)."""
    if rules.is_over(s) or s[CURRENT] != me or s[PHASE] != st.PHASE_NOBLE:
        return position_value(s, me, w)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    rules.legal_mask(s, mask)
    d = np.empty_like(s)
    best = -1e18
    for a in range(NUM_ACTIONS):
        if mask[a]:
            d[:] = s
            rules.apply_action(d, a)
            v = turn_value(d, me, w)
            if v > best:
                best = v
    return best


@njit(cache=True)
def choose(s: np.ndarray, mask: np.ndarray, rng: np.ndarray, w: np.ndarray) -> int:
    """The legal action whose resulting position scores best for the seat on move."""
    me = s[CURRENT]
    d = np.empty_like(s)
    best = -1
    best_v = -1e18
    for a in range(mask.shape[0]):
        if not mask[a]:
            continue
        d[:] = s
        rules.apply_action(d, a)
        v = turn_value(d, me, w) + 1e-6 * rand_unit(rng)
        if v > best_v:
            best_v = v
            best = a
    return best


class LookaheadAgent(Agent):
    """One-ply lookahead over the engine (docs/agents.md); ``act`` needs ``state=`` (determinised)."""

    name = "lookahead"
    needs_state = True
    plays_modules = False

    def __init__(self, seed: int | None = None, **weights: float) -> None:
        super().__init__(seed)
        self.weights = weight_array(**weights)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        if state is not None:
            s = np.asarray(state)
            if s.shape[0] != st.STATE_SIZE or s[st.MODULES] != 0:
                raise ValueError("agent 'lookahead' plays only the base game; state= is a module game")
        s, legal, mask = search_inputs("LookaheadAgent", state, action_mask)
        if legal.size == 1:
            return int(legal[0])
        rng = np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)
        return int(choose(s, mask, rng, self.weights))
