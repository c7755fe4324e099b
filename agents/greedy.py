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

**Module games** (Cities of Splendor, any combination; :func:`module_action`,
chosen by the mask length, so base games run the kernel above unchanged). The
same plan (buy, block, secure, take tokens, reserve, discard), over more cards
and with every module decision answered from the observation alone. The two
kernels share every step that is the same in both (the targets, the discard,
the token take, the block and the rest of the plan after a buy, the
tie-break), so a change to one of them changes both games:

*Candidates*: the 12 base and 6 Orient market slots, the own reserve and the
two cards of a "draw two" choice. A card under an opponent's stronghold is no
target (nobody else may buy or reserve it).
*Progress* of one more bonus of a colour adds, besides the nobles above:
``3 / deficit`` for every city on offer whose requirement (bonuses, the "N of
one colour" symbol counted on the best free colour, and prestige) it shortens,
and ``1.5 / deficit`` (``2.5`` for the points power) for every trading post not
held yet. Why: with Cities a city is the only way to win (nobody else ends the
game), so bonuses and points are steered towards the nearest city; trading
posts are permanent powers worth a few tokens. A point is worth ``1 + 3 /
deficit`` per city still short of prestige.
*Orient cards*: a double-bonus card counts its two bonuses; a pair card is
worth the best colour it could attach to (unbuyable without a bonus); a
double-gold card is worth ``1.0`` (two gold for one later purchase, then it is gone); a free-card
effect adds the best face-up card of that level; a sacrifice card subtracts
what the two discarded cards' bonuses are worth (and is bought only if still
worth ``>= 1``: giving up bonuses can cost a city). *Missing* counts gold
units (two gems each with the "gold counts double" post) less the gold held
and the 2 virtual gold of a held double-gold card.

* **Buy** as above; spending a double-gold card costs ``0.8``, so it is used
  only where the plain purchase is impossible or the card is clearly better.
* **Block** as above, over the Orient market too; with Cities the 15-point
  rule does not apply, so only strong cards are blocked.
* **Secure** when the target's value (not only points) is ``>= 3``.
* **Trading post choice**: points, token after buy, gold counts double, extra
  token, draw two (the points power pays at once and keeps paying; the token
  powers are frequent; draw two helps only blind reserves).
* **Trading-post tokens**: the colour the targets need most.
* **Keep a drawn card**: the better target.
* **Pair target**: the colour with the highest progress plus the targets' needs.
* **Free card**: the most valuable allowed face-up card.
* **Sacrifice**: discard the cards with the fewest points (keep the prestige).
* **Stronghold**: place on (or move to) the card worth most to the player,
  ``+1`` per own stronghold already on it (three on one card give a
  conquest: a second purchase in a turn), or remove an opponent's lone
  stronghold from a card the player wants (``0.3 + half its worth``).
* **Conquest**: always buy when allowed (an extra card at its normal price),
  spending a double-gold card only if that is the only way.
* **City choice** (and noble choice): any, all win the same way.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
    DISCARD,
    FREE_CARD,
    KEEP_DRAWN,
    NUM_ACTIONS,
    NUM_ACTIONS_ALL,
    PAIR_TARGET,
    PASS,
    RESERVE_DECK,
    RESERVE_MARKET,
    RESERVE_ODECK,
    RESERVE_OMARKET,
    SACRIFICE,
    SH_MOVE,
    SH_PLACE,
    SH_REMOVE,
    TAKE2_SAME,
    TAKE_DISTINCT_MASKS,
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
    CARD_DIM,
    CITY_DIM,
    FULL_CARD_DIM,
    M_DG,
    M_RES,
    M_TP,
    O_BANK,
    O_CARDS_COLOUR,
    O_CITIES,
    O_MARKET,
    O_MODULES,
    O_MPHASE,
    O_MSEATS,
    O_NOBLES,
    O_OMARKET,
    O_PDRAWN,
    O_PHASE,
    O_SEATS,
    O_STRONGHOLDS,
    OBS_DIM,
    OBS_DIM_ALL,
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

from .base import Agent, check_mask

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


@njit(cache=True)
def _random_legal(mask: np.ndarray, rng: np.ndarray) -> int:
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
def _pick(
    best: int, best_score: float, a: int, score: float, noise: float, rng: np.ndarray
) -> tuple[int, float]:
    """One step of every arg-max of the heuristics: ``score`` plus its jitter (``noise`` times one draw of
    ``rng``, the tie-break) against the best so far; returns the new (best id, best score)."""
    score += noise * rand_unit(rng)
    if score > best_score:
        return a, score
    return best, best_score


@njit(cache=True)
def _card_off(i: int) -> int:
    """Observation offset of candidate card ``i`` (market slot or own reserve slot)."""
    if i < 12:
        return O_MARKET + i * CARD_DIM
    return O_SEATS + S_RES + (i - 12) * CARD_DIM


@njit(cache=True)
def _lack(obs: np.ndarray, seat_off: int, c: int, cost: float) -> float:
    """Tokens of colour ``c`` a seat still lacks for ``cost`` after its bonuses and tokens (gold not counted).

    Every "what is missing" of both heuristics (shortfall, needs, gold to spend) is built from this.
    """
    need = cost - obs[seat_off + S_BONUS + c] - obs[seat_off + S_TOKENS + c]
    return need if need > 0 else 0.0


@njit(cache=True)
def _deficit(obs: np.ndarray, req_off: int, bon: np.ndarray) -> float:
    """Bonuses still missing for a requirement of five colours at ``req_off`` (a noble, a city)."""
    rem = 0.0
    for c in range(5):
        d = obs[req_off + c] - bon[c]
        if d > 0:
            rem += d
    return rem


@njit(cache=True)
def _shortfall(obs: np.ndarray, card_off: int, seat_off: int) -> float:
    """Tokens the seat still lacks for a card after bonuses, tokens and gold."""
    short = 0.0
    for c in range(5):
        short += _lack(obs, seat_off, c, obs[card_off + F_COST + c])
    short -= obs[seat_off + S_TOKENS + 5]
    return short if short > 0 else 0.0


@njit(cache=True)
def _needs(obs: np.ndarray, card_off: int, out: np.ndarray) -> None:
    """Per-colour tokens the observer lacks for a card (gold not counted)."""
    for c in range(5):
        out[c] = _lack(obs, O_SEATS, c, obs[card_off + F_COST + c])


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
            v += 3.0 / _deficit(obs, no + 1, bon)
        value[i] = v
        missing[i] = _shortfall(obs, off, O_SEATS)


@njit(cache=True)
def _targets(value: np.ndarray, missing: np.ndarray, n: int, noise: float, rng: np.ndarray) -> np.ndarray:
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
        best, best_score = _pick(best, best_score, a, score, noise, rng)
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
            gold += _lack(obs, O_SEATS, c, obs[off + F_COST + c])
        best, best_score = _pick(best, best_score, a, value[i] - 0.1 * gold, noise, rng)
    return best


@njit(cache=True)
def _block(obs: np.ndarray, mask: np.ndarray, slots: int, effs: np.ndarray, cities: bool) -> int:
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
            off, _ = _m_card_offsets(m)
            a = _reserve_action(m)
            if obs[off + F_PRESENT] == 0 or not mask[a] or effs[m] == EFFECT_SACRIFICE:
                continue
            pts = obs[off + F_POINTS]
            finishing = not cities and obs[so + S_PRESTIGE] + pts >= 15
            if not (pts >= 3 or finishing) or _shortfall(obs, off, so) > 0:
                continue
            if my_nres > 1 and not finishing:
                continue
            threat = pts + (100.0 if finishing else 0.0)
            if threat > best_threat:
                best_threat = threat
                best = a
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
        best, best_score = _pick(best, best_score, a, score, noise, rng)
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
    top = _targets(value, missing, N_CANDIDATES, noise, rng)
    needs = _need_vectors(obs, top)
    if obs[O_PHASE + 1] > 0:
        a = _discard(obs, mask, needs, noise, rng)
        return a if a >= 0 else _random_legal(mask, rng)
    a = _best_buy(obs, mask, value, noise, rng)
    if a >= 0:
        return a
    secure = top[0] >= 0 and top[0] < 12 and obs[_card_off(top[0]) + F_POINTS] >= 3
    return _after_buy(obs, mask, value, missing, top[0], secure, needs, 12, NO_EFFECTS, False, noise, rng)


@njit(cache=True)
def _after_buy(
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
    a = _block(obs, mask, slots, effs, cities)
    if a >= 0:
        return a
    if (
        secure
        and missing[tgt] == 1
        and obs[O_BANK + 5] > 0
        and obs[O_SEATS + S_NRES] <= 1
        and mask[_reserve_action(tgt)]
    ):
        return _reserve_action(tgt)
    a = _take(obs, mask, needs, noise, rng)
    if a >= 0:
        return a
    best = -1
    for m in range(slots):
        if mask[_reserve_action(m)] and (best < 0 or value[m] > value[best]):
            best = m
    if best >= 0:
        return _reserve_action(best)
    for lvl in range(2, -1, -1):
        if mask[RESERVE_DECK + lvl]:
            return RESERVE_DECK + lvl
        if slots > 12 and mask[RESERVE_ODECK + lvl]:
            return RESERVE_ODECK + lvl
    return _random_legal(mask, rng)


# ---------------------------------------------------------------------------
# Cities of Splendor: the same heuristic extended to every module decision.

# Candidate cards in module games: 0-17 the market slots (12 base, 6 Orient, as the
# module action ids number them), 18-20 the observer's reserve, 21-22 the cards drawn
# by the "draw two" trading post.
M_CANDIDATES = 23
M_MARKET = 18
M_DRAWN = 21
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
def _m_card_offsets(i: int) -> tuple[int, int]:
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
def _m_read(obs: np.ndarray, i: int, cost: np.ndarray) -> tuple[bool, int, float, int, int, int, int, int]:
    """Candidate ``i``: (present, colour or -1, points, effect, bonus count, sacrifice colour, sacrifice count, level).

    Fills ``cost`` with its gem cost.
    """
    off, xoff = _m_card_offsets(i)
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
        rem = _deficit(obs, no + 1, bon)
        for c in range(5):
            if obs[no + 1 + c] > bon[c]:
                prog[c] += 3.0 / rem
    point_value = 0.0
    for k in range(3):  # cities on offer
        co = O_CITIES + k * CITY_DIM
        if obs[co] == 0:
            continue
        deficit = _deficit(obs, co + 2, bon)
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
        short = _lack(obs, so, c, cost[c])
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
            needs[t, c] = _lack(obs, O_SEATS, c, costs[i, c])
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
def _reserve_action(m: int) -> int:
    return RESERVE_MARKET + m if m < 12 else RESERVE_OMARKET + m - 12


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
            best, best_score = _pick(
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
        best, best_score = _pick(best, best_score, first + c, score, noise, rng)
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
            best, best_score = _pick(best, best_score, SH_PLACE + m, ts[m] + SH_STACK * mine[m], noise, rng)
        if mask[SH_REMOVE + m]:
            best, best_score = _pick(best, best_score, SH_REMOVE + m, 0.3 + 0.5 * ts[m], noise, rng)
    for src in range(M_MARKET):
        if mine[src] == 0:
            continue
        for dst in range(M_MARKET):
            a = SH_MOVE + src * M_MARKET + dst
            if not mask[a]:
                continue
            score = ts[dst] + SH_STACK * mine[dst] - ts[src] - SH_STACK * (mine[src] - 1.0) - 0.2
            best, best_score = _pick(best, best_score, a, score, noise, rng)
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
                best, best_score = _pick(
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
                best, best_score = _pick(
                    best, best_score, PAIR_TARGET + card, util[ALL_CARD_COLOUR[card]], noise, rng
                )
        return best
    if phase == PHASE_FREE_CARD:
        best = -1
        best_score = -1e9
        for m in range(M_MARKET):
            if mask[FREE_CARD + m]:
                best, best_score = _pick(best, best_score, FREE_CARD + m, value[m], noise, rng)
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
        return _random_legal(mask, rng)
    phase = PHASE_MAIN
    if obs[O_PHASE + 1] > 0:
        phase = PHASE_DISCARD
    elif obs[O_PHASE + 2] > 0:
        phase = PHASE_NOBLE
    for k in range(NUM_PHASES - PHASE_TRUNCATED - 1):
        if obs[O_MPHASE + k] > 0:
            phase = PHASE_TRUNCATED + 1 + k
    if phase == PHASE_NOBLE or phase == PHASE_CITY:
        return _random_legal(mask, rng)
    value = np.empty(M_CANDIDATES)
    missing = np.empty(M_CANDIDATES)
    cols = np.empty(M_CANDIDATES, dtype=np.int64)
    costs = np.zeros((M_CANDIDATES, 5))
    effs = np.empty(M_CANDIDATES, dtype=np.int64)
    _m_card_values(obs, value, missing, cols, costs, effs)
    top = _targets(value, missing, M_DRAWN, noise, rng)
    needs = _m_needs(obs, top, costs, effs)
    if phase == PHASE_DISCARD:
        a = _discard(obs, mask, needs, noise, rng)
        return a if a >= 0 else _random_legal(mask, rng)
    if phase != PHASE_MAIN:
        a = _m_decision(obs, mask, phase, value, missing, costs, effs, needs, noise, rng)
        return a if a >= 0 and mask[a] else _random_legal(mask, rng)
    a = _m_best_buy(obs, mask, value, costs, effs, noise, rng)
    if a >= 0:
        return a
    secure = top[0] >= 0 and top[0] < M_MARKET and value[top[0]] >= 3
    return _after_buy(
        obs, mask, value, missing, top[0], secure, needs, M_MARKET, effs, obs[O_MODULES] > 0, noise, rng
    )


@njit(cache=True)
def policy_action(obs: np.ndarray, mask: np.ndarray, rng: np.ndarray, noise: float, eps: float) -> int:
    """The greedy heuristic for any game: the base kernel for a 72-id mask, the module kernel otherwise."""
    if mask.shape[0] == NUM_ACTIONS:
        return heuristic_action(obs, mask, rng, noise, eps)
    return module_action(obs, mask, rng, noise, eps)


@njit(cache=True)
def _policy_batch(obs: np.ndarray, masks: np.ndarray, rng: np.ndarray, noise: float) -> np.ndarray:
    """:func:`policy_action` on every row (one rng stream, rows in order)."""
    out = np.empty(obs.shape[0], dtype=np.int64)
    for b in range(obs.shape[0]):
        out[b] = policy_action(obs[b], masks[b], rng, noise, 0.0)
    return out


class GreedyAgent(Agent):
    """Deterministic (given the seed) one-ply heuristic over the observation; see the module docstring.

    Plays base games (72-id mask, 497-number observation) and module games
    (``NUM_ACTIONS_ALL`` ids, ``OBS_DIM_ALL`` numbers) alike.
    """

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)

    def _stream(self) -> np.ndarray:
        return np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        mask = np.asarray(action_mask, dtype=np.int8)
        size = NUM_ACTIONS_ALL if mask.ndim == 1 and mask.shape[0] == NUM_ACTIONS_ALL else NUM_ACTIONS
        check_mask(action_mask, size)
        obs = np.asarray(observation, dtype=np.float32)
        dim = OBS_DIM if size == NUM_ACTIONS else OBS_DIM_ALL
        if obs.shape != (dim,):
            raise ValueError(f"observation must have shape ({dim},) with a {size}-id mask, got {obs.shape}")
        return int(policy_action(obs, mask, self._stream(), 1e-6, 0.0))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=np.int8)
        if masks.ndim != 2 or masks.shape[1] not in (NUM_ACTIONS, NUM_ACTIONS_ALL):
            raise ValueError(
                f"action_masks must have shape (B, {NUM_ACTIONS}) or (B, {NUM_ACTIONS_ALL}), got {masks.shape}"
            )
        if not masks.any(axis=1).all():
            raise ValueError("every row of action_masks needs at least one legal action")
        obs = np.ascontiguousarray(observations, dtype=np.float32)
        return _policy_batch(obs, np.ascontiguousarray(masks), self._stream(), 1e-6)
