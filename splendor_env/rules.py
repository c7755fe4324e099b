"""The rules: the only implementation of Splendor in this package.

Pure numba functions over a state array (see :mod:`splendor_env.state`):

* :func:`illegal_reason` says whether one action is legal now and, if not,
  why (a code from :data:`REASONS`);
* :func:`legal_mask` fills the mask by asking :func:`illegal_reason` for every
  id, so the mask and the check can never disagree;
* :func:`apply_action` plays a legal action, including the end-of-turn steps
  (token limit, nobles, game end) and the phase changes between decisions.

The AEC env, the batched path and the agents all call these; none of them
holds a rule of its own. Every function is compiled with ``cache=True``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .actions import (
    BUY_MARKET,
    BUY_RESERVED,
    CHOOSE_NOBLE,
    DISCARD,
    NUM_ACTIONS,
    PASS,
    RESERVE_DECK,
    RESERVE_MARKET,
    TAKE2_SAME,
    TAKE_DISTINCT_MASKS,
)
from .cards import CARD_COLOUR, CARD_COST, CARD_POINTS, NOBLE_POINTS, NOBLE_REQ
from .state import (
    BANK,
    CARD_OWNER,
    CURRENT,
    DECK_COUNT,
    FINAL_ROUND,
    MARKET,
    MARKET_SLOTS,
    MAX_RESERVED,
    MAX_TURNS,
    N_PLAYERS,
    NOBLE_ID,
    NOBLE_OWNER,
    NOBLE_SLOTS,
    OUTCOME,
    P_BONUS,
    P_CARDS,
    P_NOBLES,
    P_PRESTIGE,
    P_RESERVED,
    P_RESERVED_BLIND,
    P_TOKENS,
    PASSES,
    PHASE,
    PHASE_DISCARD,
    PHASE_GAME_OVER,
    PHASE_MAIN,
    PHASE_NOBLE,
    PHASE_TRUNCATED,
    TOKEN_LIMIT,
    TURN,
    WINNING_PRESTIGE,
    draw_card,
    player_offset,
)

# Reason codes returned by illegal_reason (0 = legal).
OK = 0
R_GAME_OVER = 1
R_NOT_MAIN_PHASE = 2
R_NOT_DISCARD_PHASE = 3
R_NOT_NOBLE_PHASE = 4
R_COLOUR_EMPTY = 5
R_MUST_TAKE_MORE = 6
R_BANK_BELOW_4 = 7
R_RESERVE_FULL = 8
R_EMPTY_SLOT = 9
R_EMPTY_DECK = 10
R_NO_RESERVED_CARD = 11
R_CANNOT_AFFORD = 12
R_NO_TOKEN = 13
R_NO_NOBLE = 14
R_NOBLE_NOT_MET = 15
R_PASS_NOT_ALLOWED = 16

#: Human-readable text for each reason code, indexed by code.
REASONS = (
    "legal",
    "the game is over",
    "the player must first finish the current decision (discard or noble choice); main actions are not allowed now",
    "discarding is only allowed when the player holds more than 10 tokens at the end of their action",
    "choosing a noble is only allowed when several nobles qualify at the end of the turn",
    "the bank has no token of a requested colour",
    "fewer tokens than allowed: with 3 or more colours in the bank you must take 3 different colours "
    "(2 or 1 only when exactly that few colours are available)",
    "taking 2 tokens of one colour needs at least 4 of that colour in the bank",
    "the player already holds 3 reserved cards",
    "that market slot is empty",
    "that deck is empty",
    "the player has no reserved card in that slot",
    "the player cannot afford that card, even with gold",
    "the player holds no token of that colour",
    "there is no noble on offer in that slot",
    "the player's bonuses do not meet that noble's requirement",
    "passing is only allowed when no other action is legal",
)


@njit(cache=True, inline="always")
def _available_colours(s: np.ndarray) -> int:
    n = 0
    for c in range(5):
        if s[BANK + c] > 0:
            n += 1
    return n


@njit(cache=True, inline="always")
def _shortfall(s: np.ndarray, po: int, card: int) -> int:
    """Gold the seat at ``po`` would need to buy ``card`` (coloured tokens first)."""
    short = 0
    for c in range(5):
        need = CARD_COST[card, c] - s[po + P_BONUS + c]
        if need > 0:
            have = s[po + P_TOKENS + c]
            if need > have:
                short += need - have
    return short


@njit(cache=True, inline="always")
def _can_afford(s: np.ndarray, po: int, card: int) -> bool:
    return _shortfall(s, po, card) <= s[po + P_TOKENS + 5]


@njit(cache=True, inline="always")
def _reserved_count(s: np.ndarray, po: int) -> int:
    n = 0
    for r in range(MAX_RESERVED):
        if s[po + P_RESERVED + r] >= 0:
            n += 1
    return n


@njit(cache=True, inline="always")
def _meets_noble(s: np.ndarray, po: int, noble: int) -> bool:
    for c in range(5):
        if s[po + P_BONUS + c] < NOBLE_REQ[noble, c]:
            return False
    return True


@njit(cache=True, inline="always")
def _token_total(s: np.ndarray, po: int) -> int:
    t = 0
    for c in range(6):
        t += s[po + P_TOKENS + c]
    return t


@njit(cache=True)
def _main_reason(s: np.ndarray, a: int, po: int) -> int:
    """Reason code for a main-phase action other than pass."""
    if a < TAKE2_SAME:
        bits = TAKE_DISTINCT_MASKS[a]
        size = 0
        for c in range(5):
            if bits & (1 << c):
                size += 1
                if s[BANK + c] == 0:
                    return R_COLOUR_EMPTY
        avail = _available_colours(s)
        if size < 3 and avail >= 3:
            return R_MUST_TAKE_MORE
        if size == 2 and avail != 2:
            return R_MUST_TAKE_MORE
        return OK
    if a < RESERVE_MARKET:
        if s[BANK + a - TAKE2_SAME] < 4:
            return R_BANK_BELOW_4
        return OK
    if a < RESERVE_DECK:
        if _reserved_count(s, po) >= MAX_RESERVED:
            return R_RESERVE_FULL
        if s[MARKET + a - RESERVE_MARKET] < 0:
            return R_EMPTY_SLOT
        return OK
    if a < BUY_MARKET:
        if _reserved_count(s, po) >= MAX_RESERVED:
            return R_RESERVE_FULL
        if s[DECK_COUNT + a - RESERVE_DECK] == 0:
            return R_EMPTY_DECK
        return OK
    if a < BUY_RESERVED:
        card = s[MARKET + a - BUY_MARKET]
        if card < 0:
            return R_EMPTY_SLOT
        if not _can_afford(s, po, card):
            return R_CANNOT_AFFORD
        return OK
    card = s[po + P_RESERVED + a - BUY_RESERVED]
    if card < 0:
        return R_NO_RESERVED_CARD
    if not _can_afford(s, po, card):
        return R_CANNOT_AFFORD
    return OK


@njit(cache=True)
def _any_main_action(s: np.ndarray, po: int) -> bool:
    for a in range(DISCARD):
        if _main_reason(s, a, po) == OK:
            return True
    return False


@njit(cache=True)
def illegal_reason(s: np.ndarray, a: int) -> int:
    """0 if action ``a`` is legal in state ``s``, else a reason code (see REASONS)."""
    phase = s[PHASE]
    if phase == PHASE_GAME_OVER or phase == PHASE_TRUNCATED:
        return R_GAME_OVER
    po = player_offset(s[CURRENT])
    if a < DISCARD:
        if phase != PHASE_MAIN:
            return R_NOT_MAIN_PHASE
        return _main_reason(s, a, po)
    if a < CHOOSE_NOBLE:
        if phase != PHASE_DISCARD:
            return R_NOT_DISCARD_PHASE
        if s[po + P_TOKENS + a - DISCARD] == 0:
            return R_NO_TOKEN
        return OK
    if a < PASS:
        if phase != PHASE_NOBLE:
            return R_NOT_NOBLE_PHASE
        k = a - CHOOSE_NOBLE
        if s[NOBLE_ID + k] < 0 or s[NOBLE_OWNER + k] >= 0:
            return R_NO_NOBLE
        if not _meets_noble(s, po, s[NOBLE_ID + k]):
            return R_NOBLE_NOT_MET
        return OK
    if phase != PHASE_MAIN:
        return R_NOT_MAIN_PHASE
    if _any_main_action(s, po):
        return R_PASS_NOT_ALLOWED
    return OK


@njit(cache=True)
def legal_mask(s: np.ndarray, mask: np.ndarray) -> int:
    """Fill ``mask`` (int8, NUM_ACTIONS) with 1 for legal actions; returns how many."""
    n = 0
    for a in range(NUM_ACTIONS):
        mask[a] = 0
    phase = s[PHASE]
    if phase == PHASE_MAIN:
        po = player_offset(s[CURRENT])
        for a in range(DISCARD):
            if _main_reason(s, a, po) == OK:
                mask[a] = 1
                n += 1
        if n == 0:
            mask[PASS] = 1
            n = 1
    elif phase == PHASE_DISCARD or phase == PHASE_NOBLE:
        lo = DISCARD if phase == PHASE_DISCARD else CHOOSE_NOBLE
        hi = CHOOSE_NOBLE if phase == PHASE_DISCARD else PASS
        for a in range(lo, hi):
            if illegal_reason(s, a) == OK:
                mask[a] = 1
                n += 1
    return n


# ---------------------------------------------------------------------------
# Applying actions


@njit(cache=True)
def _refill(s: np.ndarray, slot: int) -> None:
    s[MARKET + slot] = draw_card(s, slot // MARKET_SLOTS)


@njit(cache=True)
def _reserve(s: np.ndarray, po: int, card: int, blind: bool) -> None:
    r = _reserved_count(s, po)
    s[po + P_RESERVED + r] = card
    s[po + P_RESERVED_BLIND + r] = 1 if blind else 0
    if s[BANK + 5] > 0:
        s[BANK + 5] -= 1
        s[po + P_TOKENS + 5] += 1


@njit(cache=True)
def _buy(s: np.ndarray, p: int, po: int, card: int) -> None:
    """Pay for ``card`` (coloured tokens first, gold for the shortfall) and take it."""
    for c in range(5):
        need = CARD_COST[card, c] - s[po + P_BONUS + c]
        if need > 0:
            have = s[po + P_TOKENS + c]
            paid = need if need <= have else have
            gold = need - paid
            s[po + P_TOKENS + c] -= paid
            s[BANK + c] += paid
            s[po + P_TOKENS + 5] -= gold
            s[BANK + 5] += gold
    s[CARD_OWNER + card] = p
    s[po + P_BONUS + CARD_COLOUR[card]] += 1
    s[po + P_PRESTIGE] += CARD_POINTS[card]
    s[po + P_CARDS] += 1


@njit(cache=True)
def _remove_reserved(s: np.ndarray, po: int, r: int) -> None:
    """Remove reserve slot ``r`` and pack the remaining reserved cards to the front."""
    for i in range(r, MAX_RESERVED - 1):
        s[po + P_RESERVED + i] = s[po + P_RESERVED + i + 1]
        s[po + P_RESERVED_BLIND + i] = s[po + P_RESERVED_BLIND + i + 1]
    s[po + P_RESERVED + MAX_RESERVED - 1] = -1
    s[po + P_RESERVED_BLIND + MAX_RESERVED - 1] = 0


@njit(cache=True)
def _apply_main(s: np.ndarray, a: int, p: int, po: int) -> None:
    if a == PASS:
        s[PASSES] += 1
        return
    s[PASSES] = 0
    if a < TAKE2_SAME:
        bits = TAKE_DISTINCT_MASKS[a]
        for c in range(5):
            if bits & (1 << c):
                s[BANK + c] -= 1
                s[po + P_TOKENS + c] += 1
    elif a < RESERVE_MARKET:
        c = a - TAKE2_SAME
        s[BANK + c] -= 2
        s[po + P_TOKENS + c] += 2
    elif a < RESERVE_DECK:
        slot = a - RESERVE_MARKET
        _reserve(s, po, s[MARKET + slot], False)
        _refill(s, slot)
    elif a < BUY_MARKET:
        _reserve(s, po, draw_card(s, a - RESERVE_DECK), True)
    elif a < BUY_RESERVED:
        slot = a - BUY_MARKET
        _buy(s, p, po, s[MARKET + slot])
        _refill(s, slot)
    else:
        r = a - BUY_RESERVED
        _buy(s, p, po, s[po + P_RESERVED + r])
        _remove_reserved(s, po, r)


@njit(cache=True)
def _take_noble(s: np.ndarray, p: int, po: int, k: int) -> None:
    s[NOBLE_OWNER + k] = p
    s[po + P_NOBLES] += 1
    s[po + P_PRESTIGE] += NOBLE_POINTS[s[NOBLE_ID + k]]


@njit(cache=True)
def _score_game(s: np.ndarray) -> None:
    """Mark the winners: most prestige, then fewest purchased cards, else shared."""
    n = s[N_PLAYERS]
    best_pts = -1
    best_cards = 1 << 30
    for p in range(n):
        po = player_offset(p)
        pts = s[po + P_PRESTIGE]
        cards = s[po + P_CARDS]
        if pts > best_pts or (pts == best_pts and cards < best_cards):
            best_pts = pts
            best_cards = cards
    for p in range(n):
        po = player_offset(p)
        won = s[po + P_PRESTIGE] == best_pts and s[po + P_CARDS] == best_cards
        s[OUTCOME + p] = 1 if won else 0


@njit(cache=True)
def _end_turn(s: np.ndarray) -> None:
    """Game-end check and hand-over to the next seat."""
    n = s[N_PLAYERS]
    p = s[CURRENT]
    if s[player_offset(p) + P_PRESTIGE] >= WINNING_PRESTIGE:
        s[FINAL_ROUND] = 1
    s[TURN] += 1
    if s[PASSES] >= n or (s[FINAL_ROUND] == 1 and p == n - 1):
        s[PHASE] = PHASE_GAME_OVER
        _score_game(s)
        return
    if s[TURN] >= s[MAX_TURNS]:
        s[PHASE] = PHASE_TRUNCATED
        return
    s[CURRENT] = (p + 1) % n
    s[PHASE] = PHASE_MAIN


@njit(cache=True)
def _nobles_step(s: np.ndarray, p: int, po: int) -> None:
    """End-of-turn noble visit: automatic if one qualifies, a choice if several."""
    count = 0
    only = -1
    for k in range(NOBLE_SLOTS):
        if s[NOBLE_ID + k] >= 0 and s[NOBLE_OWNER + k] < 0 and _meets_noble(s, po, s[NOBLE_ID + k]):
            count += 1
            only = k
    if count == 0:
        _end_turn(s)
    elif count == 1:
        _take_noble(s, p, po, only)
        _end_turn(s)
    else:
        s[PHASE] = PHASE_NOBLE


@njit(cache=True)
def apply_action(s: np.ndarray, a: int) -> None:
    """Play legal action ``a`` for the player on move. The caller checks legality.

    Runs the end-of-turn steps in the rulebook's order: the token limit
    (switching to the discard phase until the player is back at 10), then the
    noble visit (switching to the noble phase when several qualify), then the
    game-end check and the hand-over to the next seat.
    """
    p = s[CURRENT]
    po = player_offset(p)
    phase = s[PHASE]
    if phase == PHASE_MAIN:
        _apply_main(s, a, p, po)
        if _token_total(s, po) > TOKEN_LIMIT:
            s[PHASE] = PHASE_DISCARD
        else:
            _nobles_step(s, p, po)
    elif phase == PHASE_DISCARD:
        c = a - DISCARD
        s[po + P_TOKENS + c] -= 1
        s[BANK + c] += 1
        if _token_total(s, po) <= TOKEN_LIMIT:
            _nobles_step(s, p, po)
    else:  # PHASE_NOBLE
        _take_noble(s, p, po, a - CHOOSE_NOBLE)
        _end_turn(s)


@njit(cache=True)
def step_checked(s: np.ndarray, a: int) -> int:
    """Apply ``a`` if legal and return 0; otherwise leave ``s`` untouched and return the reason."""
    if a < 0 or a >= NUM_ACTIONS:
        return -1
    r = illegal_reason(s, a)
    if r == OK:
        apply_action(s, a)
    return r


@njit(cache=True)
def is_over(s: np.ndarray) -> bool:
    return s[PHASE] == PHASE_GAME_OVER or s[PHASE] == PHASE_TRUNCATED


@njit(cache=True)
def terminal_rewards(s: np.ndarray, out: np.ndarray) -> None:
    """Rewards at the end of a game, per seat (0 until the game has ended).

    Sole winner +1, every loser -1; in a shared victory the co-winners get 0.
    A truncated game gives 0 to everyone.
    """
    n = s[N_PLAYERS]
    for p in range(out.shape[0]):
        out[p] = 0.0
    if s[PHASE] != PHASE_GAME_OVER:
        return
    winners = 0
    for p in range(n):
        winners += s[OUTCOME + p]
    for p in range(n):
        if s[OUTCOME + p] == 1:
            out[p] = 1.0 if winners == 1 else 0.0
        else:
            out[p] = -1.0
