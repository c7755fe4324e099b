"""The greedy heuristic for module games (Cities of Splendor, any combination).

The base game's plan (buy, block, secure, take tokens, reserve, discard) over more cards, with
every module decision answered from the observation alone; what it weighs and why:
docs/agents.md ("The greedy heuristic").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.players.greedy.steps import (
    F_COLOUR,
    F_COST,
    F_POINTS,
    F_PRESENT,
    M_CANDIDATES,
    M_DRAWN,
    M_MARKET,
    NO_TARGET,
    after_buy,
    bonus_deficit,
    card_offsets,
    discard,
    lack,
    pick,
    random_legal,
    targets,
)
from splendor_env.actions import (
    BUY_DG_MARKET,
    BUY_DG_RESERVED,
    BUY_MARKET,
    BUY_OMARKET,
    BUY_RESERVED,
    CHOOSE_TRADING_POST,
    CONQUEST,
    CONQUEST_BUY,
    CONQUEST_BUY_DG,
    CONQUEST_DECLINE,
    FREE_CARD,
    KEEP_DRAWN,
    PAIR_TARGET,
    SACRIFICE,
    SH_MOVE,
    SH_PLACE,
    SH_REMOVE,
    TP_EXTRA_TOKEN,
    TP_TOKEN,
)
from splendor_env.cards import (
    ALL_CARD_COLOUR,
    ALL_CARD_POINTS,
    EFFECT_DOUBLE_GOLD,
    EFFECT_FREE_L2,
    EFFECT_PAIR,
    EFFECT_PAIR_FREE_L1,
    EFFECT_SACRIFICE,
    NUM_ALL_CARDS,
    TP_GOLD_DOUBLE,
    TP_POINTS,
    TRADING_POST_REQ,
)
from splendor_env.observation import (
    CITY_DIM,
    M_DG,
    M_TP,
    O_CARDS_COLOUR,
    O_CITIES,
    O_MODULES,
    O_MPHASE,
    O_MSEATS,
    O_NOBLES,
    O_PHASE,
    O_SEATS,
    O_STRONGHOLDS,
    S_BONUS,
    S_PRESTIGE,
    S_TOKENS,
)
from splendor_env.rng import rand_unit
from splendor_env.state import (
    NUM_PHASES,
    PHASE_CITY,
    PHASE_CONQUEST,
    PHASE_DISCARD,
    PHASE_FREE_CARD,
    PHASE_KEEP_DRAWN_CARD,
    PHASE_MAIN,
    PHASE_NOBLE,
    PHASE_PAIR_TARGET,
    PHASE_SACRIFICE_CHOICE,
    PHASE_STRONGHOLD,
    PHASE_TRADING_POST_CHOICE,
    PHASE_TRADING_POST_EXTRA,
    PHASE_TRADING_POST_TOKEN,
    PHASE_TRUNCATED,
)

# Extra features of an Orient card, after its 16 base numbers.
X_EFFECT = 1  # one-hot of the effects 1..6 starts at extras + 1 - 1 + effect
X_BONUS = 7
X_SAC = 8
X_SAC_N = 13
# Weights of the module heuristic (see the GreedyAgent docstring).
CITY_WEIGHT = 3.0
TP_WEIGHT = 1.5
TP_POINTS_WEIGHT = 2.5
DG_CARD_VALUE = 1.0
DG_SPEND_COST = 0.8
SH_STACK = 1.0
#: Trading-post powers in the order the heuristic takes them (points, token after buy,
#: gold counts double, extra token, draw two).
TP_PREFERENCE = np.array([4, 0, 3, 2, 1], dtype=np.int64)


@njit(cache=True)
def _m_read(obs: np.ndarray, i: int, cost: np.ndarray) -> tuple[bool, int, float, int, int, int, int, int]:
    """Candidate ``i``: (present, colour or -1, points, effect, bonus count, sacrifice colour, sacrifice count, level).

    Fills ``cost`` with its gem cost.
    """
    off, xoff = card_offsets(i)
    if obs[off + F_PRESENT] == 0:
        return False, -1, 0.0, 0, 0, -1, 0, 0
    col = -1
    for c in range(5):
        if obs[off + F_COLOUR + c] > 0:
            col = c
        cost[c] = obs[off + F_COST + c]
    lvl = 0
    for k in range(3):
        if obs[off + 2 + k] > 0:
            lvl = k
    eff = 0
    bcount = 1
    sac = -1
    sacn = 0
    if xoff >= 0 and obs[xoff] > 0:
        for e in range(1, 7):
            if obs[xoff + e] > 0:
                eff = e
        bcount = int(obs[xoff + X_BONUS])
        for c in range(5):
            if obs[xoff + X_SAC + c] > 0:
                sac = c
        sacn = int(obs[xoff + X_SAC_N])
    return True, col, float(obs[off + F_POINTS]), eff, bcount, sac, sacn, lvl


@njit(cache=True)
def _m_progress(obs: np.ndarray, prog: np.ndarray) -> float:
    """What one more bonus of each colour is worth towards nobles, cities and trading posts
    (into ``prog``); returns what one more prestige point is worth towards the cities."""
    bon = obs[O_SEATS + S_BONUS : O_SEATS + S_BONUS + 5]
    prestige = obs[O_SEATS + S_PRESTIGE]
    for c in range(5):
        prog[c] = 0.0
    for k in range(5):  # nobles (none on offer with Cities)
        no = O_NOBLES + k * 6
        if obs[no] == 0:
            continue
        rem = bonus_deficit(obs, no + 1, bon)
        for c in range(5):
            if obs[no + 1 + c] > bon[c]:
                prog[c] += 3.0 / rem
    point_value = 0.0
    for k in range(3):  # cities on offer
        co = O_CITIES + k * CITY_DIM
        if obs[co] == 0:
            continue
        deficit = bonus_deficit(obs, co + 2, bon)
        same = obs[co + 7]
        best_same = -1
        if same > 0:
            for c in range(5):
                if obs[co + 2 + c] == 0 and (best_same < 0 or bon[c] > bon[best_same]):
                    best_same = c
            if best_same >= 0 and same > bon[best_same]:
                deficit += same - bon[best_same]
            else:
                best_same = -1
        short_pts = obs[co + 1] - prestige
        total = deficit + (short_pts if short_pts > 0 else 0.0)
        if total <= 0:
            continue
        for c in range(5):
            if obs[co + 2 + c] > bon[c] or c == best_same:
                prog[c] += CITY_WEIGHT / total
        if short_pts > 0:
            point_value += CITY_WEIGHT / total
    if obs[O_MODULES + 1] > 0:  # trading posts not held yet
        for k in range(5):
            if obs[O_MSEATS + M_TP + k] > 0:
                continue
            rem = 0.0
            for c in range(5):
                d = TRADING_POST_REQ[k, c] - bon[c]
                if d > 0:
                    rem += d
            w = TP_POINTS_WEIGHT if k == TP_POINTS else TP_WEIGHT
            for c in range(5):
                if TRADING_POST_REQ[k, c] > bon[c]:
                    prog[c] += w / rem
    return point_value


@njit(cache=True)
def _m_units(obs: np.ndarray, cost: np.ndarray, w: int, so: int) -> float:
    """Gold units seat block ``so`` lacks for a cost, each gold paying ``w`` gems."""
    units = 0.0
    for c in range(5):
        short = lack(obs, so, c, cost[c])
        if short > 0:
            units += (short + w - 1) // w
    return units


@njit(cache=True)
def _m_card_values(
    obs: np.ndarray,
    value: np.ndarray,
    missing: np.ndarray,
    cols: np.ndarray,
    costs: np.ndarray,
    effs: np.ndarray,
) -> None:
    """Value, missing gold units (NO_TARGET when tokens cannot get it), colour, cost and effect of every
    module candidate (value -1 when absent)."""
    bon = obs[O_SEATS + S_BONUS : O_SEATS + S_BONUS + 5]
    w = 2 if obs[O_MSEATS + M_TP + TP_GOLD_DOUBLE] > 0 else 1
    gold = obs[O_SEATS + S_TOKENS + 5]
    dg = obs[O_MSEATS + M_DG] > 0
    has_bonus = False
    for c in range(5):
        if bon[c] > 0:
            has_bonus = True
    prog = np.zeros(5)
    point_value = _m_progress(obs, prog)
    demand = np.zeros(5)
    pts = np.zeros(M_CANDIDATES)
    lvls = np.zeros(M_CANDIDATES, dtype=np.int64)
    sacs = np.full(M_CANDIDATES, -1, dtype=np.int64)
    sacn = np.zeros(M_CANDIDATES)
    bcount = np.zeros(M_CANDIDATES)
    present = np.zeros(M_CANDIDATES, dtype=np.bool_)
    for i in range(M_CANDIDATES):
        ok, col, p, eff, bc, sc, sn, lvl = _m_read(obs, i, costs[i])
        present[i] = ok
        cols[i] = col
        pts[i] = p
        effs[i] = eff
        bcount[i] = bc
        sacs[i] = sc
        sacn[i] = sn
        lvls[i] = lvl
        if ok and i < M_DRAWN:
            for c in range(5):
                if costs[i, c] > bon[c]:
                    demand[c] += 1.0
    best_lvl = np.zeros(2)  # best plain value of a face-up level 1 / level 2 card (free-card effects)
    for i in range(M_CANDIDATES):
        if not present[i]:
            value[i] = -1.0
            missing[i] = NO_TARGET
            continue
        col = cols[i]
        eff = effs[i]
        v = pts[i] * (1.0 + point_value)
        if col >= 0:
            v += bcount[i] * (0.5 + 0.1 * demand[col] + prog[col])
        elif eff == EFFECT_PAIR or eff == EFFECT_PAIR_FREE_L1:
            best = 0.0
            for c in range(5):
                if bon[c] > 0 and 0.5 + 0.1 * demand[c] + prog[c] > best:
                    best = 0.5 + 0.1 * demand[c] + prog[c]
            v += best
        elif eff == EFFECT_DOUBLE_GOLD:
            v += DG_CARD_VALUE
        if eff == EFFECT_SACRIFICE and sacs[i] >= 0:
            c = sacs[i]
            v -= sacn[i] * (0.6 + 0.1 * demand[c] + prog[c])
        value[i] = v
        if i < M_MARKET and lvls[i] < 2 and v > best_lvl[lvls[i]]:
            best_lvl[lvls[i]] = v
        if eff == EFFECT_SACRIFICE:
            held = obs[O_CARDS_COLOUR + sacs[i]] if sacs[i] >= 0 else 0.0
            missing[i] = 0.0 if held >= sacn[i] else NO_TARGET
        elif (eff == EFFECT_PAIR or eff == EFFECT_PAIR_FREE_L1) and not has_bonus:
            missing[i] = NO_TARGET
        else:
            m = _m_units(obs, costs[i], w, O_SEATS) - gold - (2.0 if dg else 0.0)
            missing[i] = m if m > 0 else 0.0
        if i < M_MARKET:  # an opponent's stronghold: neither buyable nor reservable
            for rel in range(1, 4):
                if obs[O_STRONGHOLDS + i * 4 + rel] > 0:
                    missing[i] = NO_TARGET
    for i in range(M_CANDIDATES):
        if effs[i] == EFFECT_FREE_L2 and value[i] >= 0:
            value[i] += best_lvl[1]
        elif effs[i] == EFFECT_PAIR_FREE_L1 and value[i] >= 0:
            value[i] += best_lvl[0]


@njit(cache=True)
def _m_needs(obs: np.ndarray, top: np.ndarray, costs: np.ndarray, effs: np.ndarray) -> np.ndarray:
    """Per target, the tokens of each colour still lacking (none for a sacrifice card)."""
    needs = np.zeros((3, 5))
    for t in range(3):
        i = top[t]
        if i < 0 or effs[i] == EFFECT_SACRIFICE:
            continue
        for c in range(5):
            needs[t, c] = lack(obs, O_SEATS, c, costs[i, c])
    return needs


@njit(cache=True)
def _m_buy_action(i: int, dg: bool) -> int:
    """The buy id of module candidate ``i`` (market slot or reserve slot), plain or spending a double-gold card."""
    if i < M_MARKET:
        if dg:
            return BUY_DG_MARKET + i
        return BUY_MARKET + i if i < 12 else BUY_OMARKET + i - 12
    return (BUY_DG_RESERVED if dg else BUY_RESERVED) + i - M_MARKET


@njit(cache=True)
def _m_best_buy(
    obs: np.ndarray,
    mask: np.ndarray,
    value: np.ndarray,
    costs: np.ndarray,
    effs: np.ndarray,
    noise: float,
    rng: np.ndarray,
) -> int:
    """The most valuable card the mask lets the player buy (gold and double-gold cards spent count against it)."""
    w = 2 if obs[O_MSEATS + M_TP + TP_GOLD_DOUBLE] > 0 else 1
    best = -1
    best_score = -1e9
    for i in range(M_DRAWN):
        if value[i] < 0:
            continue
        if effs[i] == EFFECT_SACRIFICE and value[i] < 1.0:
            continue  # what is given up outweighs the card
        gold = _m_units(obs, costs[i], w, O_SEATS) if effs[i] != EFFECT_SACRIFICE else 0.0
        for dg in range(2):
            a = _m_buy_action(i, dg == 1)
            if not mask[a]:
                continue
            best, best_score = pick(
                best, best_score, a, value[i] - 0.1 * gold - (DG_SPEND_COST if dg == 1 else 0.0), noise, rng
            )
    return best


@njit(cache=True)
def _m_token_choice(
    obs: np.ndarray, mask: np.ndarray, first: int, needs: np.ndarray, noise: float, rng: np.ndarray
) -> int:
    """One gem token (a trading-post token): the colour the targets need most, else the one held least."""
    best = -1
    best_score = -1e9
    for c in range(5):
        if not mask[first + c]:
            continue
        score = needs[0, c] + 0.4 * needs[1, c] + 0.2 * needs[2, c] - 0.01 * obs[O_SEATS + S_TOKENS + c]
        best, best_score = pick(best, best_score, first + c, score, noise, rng)
    return best


@njit(cache=True)
def _m_colour_utility(obs: np.ndarray, needs: np.ndarray, out: np.ndarray) -> None:
    """What one more bonus of each colour is worth now: progress plus the targets' needs."""
    _m_progress(obs, out)
    for c in range(5):
        out[c] += 0.5 * needs[0, c] + 0.2 * needs[1, c] + 0.1 * needs[2, c]


@njit(cache=True)
def _m_stronghold(
    obs: np.ndarray, mask: np.ndarray, value: np.ndarray, missing: np.ndarray, noise: float, rng: np.ndarray
) -> int:
    """Place, move or remove a stronghold: guard (and stack towards a conquest of) the cards worth most to
    the player; take an opponent's lone stronghold off a card the player wants."""
    ts = np.zeros(M_MARKET)
    mine = np.zeros(M_MARKET)
    for m in range(M_MARKET):
        mine[m] = obs[O_STRONGHOLDS + m * 4]
        if value[m] > 0:
            miss = missing[m] if missing[m] < NO_TARGET else 6.0
            ts[m] = value[m] / (1.0 + 0.5 * miss)
    best = -1
    best_score = -1e9
    for m in range(M_MARKET):
        if mask[SH_PLACE + m]:
            best, best_score = pick(best, best_score, SH_PLACE + m, ts[m] + SH_STACK * mine[m], noise, rng)
        if mask[SH_REMOVE + m]:
            best, best_score = pick(best, best_score, SH_REMOVE + m, 0.3 + 0.5 * ts[m], noise, rng)
    for src in range(M_MARKET):
        if mine[src] == 0:
            continue
        for dst in range(M_MARKET):
            a = SH_MOVE + src * M_MARKET + dst
            if not mask[a]:
                continue
            score = ts[dst] + SH_STACK * mine[dst] - ts[src] - SH_STACK * (mine[src] - 1.0) - 0.2
            best, best_score = pick(best, best_score, a, score, noise, rng)
    return best


@njit(cache=True)
def _m_decision(
    obs: np.ndarray,
    mask: np.ndarray,
    phase: int,
    value: np.ndarray,
    missing: np.ndarray,
    costs: np.ndarray,
    effs: np.ndarray,
    needs: np.ndarray,
    noise: float,
    rng: np.ndarray,
) -> int:
    """Answer a module decision phase (-1: leave it to a random legal id)."""
    if phase == PHASE_TRADING_POST_CHOICE:
        for k in TP_PREFERENCE:
            if mask[CHOOSE_TRADING_POST + k]:
                return CHOOSE_TRADING_POST + k
        return -1
    if phase == PHASE_TRADING_POST_TOKEN:
        return _m_token_choice(obs, mask, TP_TOKEN, needs, noise, rng)
    if phase == PHASE_TRADING_POST_EXTRA:
        return _m_token_choice(obs, mask, TP_EXTRA_TOKEN, needs, noise, rng)
    if phase == PHASE_KEEP_DRAWN_CARD:
        best = -1
        best_score = -1e9
        for k in range(2):
            i = M_DRAWN + k
            if mask[KEEP_DRAWN + k] and value[i] >= 0:
                miss = missing[i] if missing[i] < NO_TARGET else 6.0
                best, best_score = pick(
                    best, best_score, KEEP_DRAWN + k, value[i] / (1.0 + 0.5 * miss), noise, rng
                )
        return best
    if phase == PHASE_PAIR_TARGET:
        util = np.zeros(5)
        _m_colour_utility(obs, needs, util)
        best = -1
        best_score = -1e9
        for card in range(NUM_ALL_CARDS):
            if mask[PAIR_TARGET + card]:
                best, best_score = pick(
                    best, best_score, PAIR_TARGET + card, util[ALL_CARD_COLOUR[card]], noise, rng
                )
        return best
    if phase == PHASE_FREE_CARD:
        best = -1
        best_score = -1e9
        for m in range(M_MARKET):
            if mask[FREE_CARD + m]:
                best, best_score = pick(best, best_score, FREE_CARD + m, value[m], noise, rng)
        return best
    if phase == PHASE_SACRIFICE_CHOICE:
        best = -1
        best_score = 1e9
        for card in range(NUM_ALL_CARDS):
            if mask[SACRIFICE + card]:
                score = ALL_CARD_POINTS[card] + noise * rand_unit(rng)  # keep the points
                if score < best_score:
                    best_score = score
                    best = SACRIFICE + card
        return best
    if phase == PHASE_STRONGHOLD:
        return _m_stronghold(obs, mask, value, missing, noise, rng)
    if phase == PHASE_CONQUEST:
        if mask[CONQUEST + CONQUEST_BUY]:
            return CONQUEST + CONQUEST_BUY
        if mask[CONQUEST + CONQUEST_BUY_DG]:
            return CONQUEST + CONQUEST_BUY_DG
        return CONQUEST + CONQUEST_DECLINE if mask[CONQUEST + CONQUEST_DECLINE] else -1
    return -1  # city or noble choice: every option ends the same way


@njit(cache=True)
def module_action(obs: np.ndarray, mask: np.ndarray, rng: np.ndarray, noise: float, eps: float) -> int:
    """The greedy heuristic for a game with modules (GreedyAgent docstring); always a legal id."""
    if eps > 0.0 and rand_unit(rng) < eps:
        return random_legal(mask, rng)
    phase = PHASE_MAIN
    if obs[O_PHASE + 1] > 0:
        phase = PHASE_DISCARD
    elif obs[O_PHASE + 2] > 0:
        phase = PHASE_NOBLE
    for k in range(NUM_PHASES - PHASE_TRUNCATED - 1):
        if obs[O_MPHASE + k] > 0:
            phase = PHASE_TRUNCATED + 1 + k
    if phase == PHASE_NOBLE or phase == PHASE_CITY:
        return random_legal(mask, rng)
    value = np.empty(M_CANDIDATES)
    missing = np.empty(M_CANDIDATES)
    cols = np.empty(M_CANDIDATES, dtype=np.int64)
    costs = np.zeros((M_CANDIDATES, 5))
    effs = np.empty(M_CANDIDATES, dtype=np.int64)
    _m_card_values(obs, value, missing, cols, costs, effs)
    top = targets(value, missing, M_DRAWN, noise, rng)
    needs = _m_needs(obs, top, costs, effs)
    if phase == PHASE_DISCARD:
        a = discard(obs, mask, needs, noise, rng)
        return a if a >= 0 else random_legal(mask, rng)
    if phase != PHASE_MAIN:
        a = _m_decision(obs, mask, phase, value, missing, costs, effs, needs, noise, rng)
        return a if a >= 0 and mask[a] else random_legal(mask, rng)
    a = _m_best_buy(obs, mask, value, costs, effs, noise, rng)
    if a >= 0:
        return a
    secure = top[0] >= 0 and top[0] < M_MARKET and value[top[0]] >= 3
    return after_buy(
        obs, mask, value, missing, top[0], secure, needs, M_MARKET, effs, obs[O_MODULES] > 0, noise, rng
    )


__all__ = ["module_action"]
