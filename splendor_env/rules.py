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

The Cities of Splendor modules live in the second half of this file. A game
with modules (``s[MODULES] != 0``) is routed to them by one branch at the top
of each entry point, so the base game runs the same code as before. A turn
with modules is a sequence of decisions: the main action records what it
triggers in the pending record (``PD_*``), and :func:`_drive` works through
it in rule order (drawn-card choice, sacrifice discards, pair host, free card,
trading-post tokens, stronghold action, refill, conquest, token limit, nobles,
trading posts, cities, game end), stopping at each decision that has more
than one option and settling alone the ones that have exactly one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .actions import (
    BUY_DG_MARKET,
    BUY_DG_RESERVED,
    BUY_MARKET,
    BUY_OMARKET,
    BUY_RESERVED,
    CHOOSE_CITY,
    CHOOSE_NOBLE,
    CHOOSE_TRADING_POST,
    CONQUEST,
    DISCARD,
    FREE_CARD,
    KEEP_DRAWN,
    NUM_ACTIONS,
    NUM_ACTIONS_ALL,
    NUM_SLOTS,
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
from .cards import (
    ALL_CARD_BONUS,
    ALL_CARD_COLOUR,
    ALL_CARD_COST,
    ALL_CARD_EFFECT,
    ALL_CARD_POINTS,
    ALL_CARD_SAC_COLOUR,
    ALL_CARD_SAC_COUNT,
    CARD_COLOUR,
    CARD_COST,
    CARD_POINTS,
    CITIES_ON_OFFER,
    CITY_PRESTIGE,
    CITY_REQ,
    CITY_SAME,
    EFFECT_DOUBLE_GOLD,
    EFFECT_FREE_L2,
    EFFECT_PAIR,
    EFFECT_PAIR_FREE_L1,
    EFFECT_SACRIFICE,
    NOBLE_POINTS,
    NOBLE_REQ,
    NUM_ALL_CARDS,
    NUM_CARDS,
    ORIENT_LEVEL_SIZE,
    TP_DRAW_TWO,
    TP_GOLD_DOUBLE,
    TP_POINTS,
    TP_TOKEN_AFTER_BUY,
    TRADING_POST_REQ,
)
from .cards import (
    TP_EXTRA_TOKEN as TP_POWER_EXTRA_TOKEN,
)
from .state import (
    BANK,
    BOX,
    CARD_OWNER,
    CITY_ID,
    CITY_OWNER,
    CURRENT,
    DECK_COUNT,
    FINAL_ROUND,
    MARKET,
    MARKET_SLOTS,
    MAX_PLAYERS,
    MAX_RESERVED,
    MAX_TURNS,
    MOD_CITIES,
    MOD_ORIENT,
    MOD_STRONGHOLDS,
    MOD_TRADING_POSTS,
    MODULES,
    N_PLAYERS,
    NOBLE_ID,
    NOBLE_OWNER,
    NOBLE_SLOTS,
    OCARD_OWNER,
    ORIENT_SLOTS,
    OUTCOME,
    P_BONUS,
    P_CARDS,
    P_NOBLES,
    P_PRESTIGE,
    P_RESERVED,
    P_RESERVED_BLIND,
    P_TOKENS,
    PAIR_HOST,
    PASSES,
    PD_CONQ,
    PD_DRAWN0,
    PD_DRAWN1,
    PD_DRAWN_DECK,
    PD_EXTRA_EXCL,
    PD_FREE_LEVEL,
    PD_PAIR,
    PD_REFILL,
    PD_SAC_CARD,
    PD_SAC_LEFT,
    PD_SH,
    PD_STAGE,
    PD_TP_TOKEN,
    PHASE,
    PHASE_CITY,
    PHASE_CONQUEST,
    PHASE_DISCARD,
    PHASE_FREE_CARD,
    PHASE_GAME_OVER,
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
    SH_ON,
    SH_SUPPLY,
    STAGE_CITIES,
    STAGE_EFFECTS,
    STAGE_END,
    STAGE_NOBLES,
    STAGE_TOKEN_LIMIT,
    STAGE_TRADING_POSTS,
    TOKEN_LIMIT,
    TP_HELD,
    TURN,
    WINNING_PRESTIGE,
    _clear_pending,
    deck_count_addr,
    draw_card,
    draw_from,
    owner_addr,
    player_offset,
    put_bottom,
    slot_addr,
    slot_deck,
    slot_level,
)

BASE_SLOTS_N = 3 * MARKET_SLOTS
assert NUM_SLOTS == BASE_SLOTS_N + 3 * ORIENT_SLOTS

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
R_MODULE_OFF = 17
R_WRONG_PHASE = 18
R_OCCUPIED = 19
R_NO_DOUBLE_GOLD = 20
R_DOUBLE_GOLD_NOT_NEEDED = 21
R_NO_PAIR_TARGET = 22
R_CANNOT_SACRIFICE = 23
R_NOT_AN_OPTION = 24
R_ALREADY_HELD = 25
R_REQUIREMENT_NOT_MET = 26
R_NO_STRONGHOLD = 27

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
    "that action belongs to a module that is not enabled in this game",
    "that decision is not the one the player faces now",
    "a card holding another player's stronghold can be bought, reserved or taken only by that player",
    "the player holds no double-gold card",
    "a double-gold card can only be spent in a purchase that needs gold",
    "a pair card can only be bought by a player who has a card with a bonus",
    "the player does not hold enough purchased cards of the colour that card sacrifices",
    "that choice is not one of the options of the current decision",
    "the player already holds that trading post, or already holds a city",
    "the player does not meet that requirement",
    "the player has no stronghold to place or move there",
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


# Per-block legality predicates. ``illegal_reason`` (one action) and
# ``legal_mask`` (every action) both call these, so there is one definition of
# each rule; the mask only hoists the counts they share (colours available in
# the bank, reserved cards held) out of its loops.


@njit(cache=True, inline="always")
def _take_distinct_reason(s: np.ndarray, a: int, avail: int) -> int:
    """Take 1-3 different colours (ids 0-24); ``avail`` = gem colours in the bank."""
    bits = TAKE_DISTINCT_MASKS[a]
    size = 0
    for c in range(5):
        if bits & (1 << c):
            size += 1
            if s[BANK + c] == 0:
                return R_COLOUR_EMPTY
    if size < 3 and avail >= 3:
        return R_MUST_TAKE_MORE
    if size == 2 and avail != 2:
        return R_MUST_TAKE_MORE
    return OK


@njit(cache=True, inline="always")
def _take_same_reason(s: np.ndarray, c: int) -> int:
    """Take 2 of colour ``c``: the bank must hold at least 4 of it."""
    if s[BANK + c] < 4:
        return R_BANK_BELOW_4
    return OK


@njit(cache=True, inline="always")
def _reserve_market_reason(s: np.ndarray, slot: int, nres: int) -> int:
    if nres >= MAX_RESERVED:
        return R_RESERVE_FULL
    if s[MARKET + slot] < 0:
        return R_EMPTY_SLOT
    return OK


@njit(cache=True, inline="always")
def _reserve_deck_reason(s: np.ndarray, lvl: int, nres: int) -> int:
    if nres >= MAX_RESERVED:
        return R_RESERVE_FULL
    if s[DECK_COUNT + lvl] == 0:
        return R_EMPTY_DECK
    return OK


@njit(cache=True, inline="always")
def _buy_market_reason(s: np.ndarray, po: int, slot: int) -> int:
    card = s[MARKET + slot]
    if card < 0:
        return R_EMPTY_SLOT
    if not _can_afford(s, po, card):
        return R_CANNOT_AFFORD
    return OK


@njit(cache=True, inline="always")
def _buy_reserve_slot_reason(s: np.ndarray, po: int, r: int) -> int:
    card = s[po + P_RESERVED + r]
    if card < 0:
        return R_NO_RESERVED_CARD
    if not _can_afford(s, po, card):
        return R_CANNOT_AFFORD
    return OK


@njit(cache=True)
def _main_reason(s: np.ndarray, a: int, po: int) -> int:
    """Reason code for a main-phase action other than pass."""
    if a < TAKE2_SAME:
        return _take_distinct_reason(s, a, _available_colours(s))
    if a < RESERVE_MARKET:
        return _take_same_reason(s, a - TAKE2_SAME)
    if a < RESERVE_DECK:
        return _reserve_market_reason(s, a - RESERVE_MARKET, _reserved_count(s, po))
    if a < BUY_MARKET:
        return _reserve_deck_reason(s, a - RESERVE_DECK, _reserved_count(s, po))
    if a < BUY_RESERVED:
        return _buy_market_reason(s, po, a - BUY_MARKET)
    return _buy_reserve_slot_reason(s, po, a - BUY_RESERVED)


@njit(cache=True, inline="always")
def _token_mask(s: np.ndarray, mask: np.ndarray) -> int:
    """Mark the legal token takes (ids 0 to TAKE2_SAME+4), the same in every game; returns how many."""
    n = 0
    avail = _available_colours(s)
    for a in range(TAKE2_SAME):
        if _take_distinct_reason(s, a, avail) == OK:
            mask[a] = 1
            n += 1
    for c in range(5):
        if _take_same_reason(s, c) == OK:
            mask[TAKE2_SAME + c] = 1
            n += 1
    return n


@njit(cache=True)
def _main_mask(s: np.ndarray, po: int, mask: np.ndarray) -> int:
    """Mark the legal main actions (ids 0-59) in ``mask``; returns how many."""
    n = _token_mask(s, mask)
    nres = _reserved_count(s, po)
    for slot in range(3 * MARKET_SLOTS):
        if _reserve_market_reason(s, slot, nres) == OK:
            mask[RESERVE_MARKET + slot] = 1
            n += 1
    for lvl in range(3):
        if _reserve_deck_reason(s, lvl, nres) == OK:
            mask[RESERVE_DECK + lvl] = 1
            n += 1
    for slot in range(3 * MARKET_SLOTS):
        if _buy_market_reason(s, po, slot) == OK:
            mask[BUY_MARKET + slot] = 1
            n += 1
    for r in range(MAX_RESERVED):
        if _buy_reserve_slot_reason(s, po, r) == OK:
            mask[BUY_RESERVED + r] = 1
            n += 1
    return n


@njit(cache=True)
def _any_main_action(s: np.ndarray, po: int) -> bool:
    for a in range(DISCARD):
        if _main_reason(s, a, po) == OK:
            return True
    return False


@njit(cache=True, inline="always")
def _discard_reason(s: np.ndarray, a: int, phase: int, po: int) -> int:
    """A discard id: only in the discard phase, only a colour the player holds."""
    if phase != PHASE_DISCARD:
        return R_NOT_DISCARD_PHASE
    if s[po + P_TOKENS + a - DISCARD] == 0:
        return R_NO_TOKEN
    return OK


@njit(cache=True, inline="always")
def _noble_reason(s: np.ndarray, a: int, phase: int, po: int) -> int:
    """A noble choice: only in the noble phase, only a noble on offer that the player meets."""
    if phase != PHASE_NOBLE:
        return R_NOT_NOBLE_PHASE
    k = a - CHOOSE_NOBLE
    if s[NOBLE_ID + k] < 0 or s[NOBLE_OWNER + k] >= 0:
        return R_NO_NOBLE
    if not _meets_noble(s, po, s[NOBLE_ID + k]):
        return R_NOBLE_NOT_MET
    return OK


@njit(cache=True)
def illegal_reason(s: np.ndarray, a: int) -> int:
    """0 if action ``a`` is legal in state ``s``, else a reason code (see REASONS)."""
    if s[MODULES] != 0:
        return _mod_reason(s, a)
    phase = s[PHASE]
    if phase == PHASE_GAME_OVER or phase == PHASE_TRUNCATED:
        return R_GAME_OVER
    po = player_offset(s[CURRENT])
    if a < DISCARD:
        if phase != PHASE_MAIN:
            return R_NOT_MAIN_PHASE
        return _main_reason(s, a, po)
    if a < CHOOSE_NOBLE:
        return _discard_reason(s, a, phase, po)
    if a < PASS:
        return _noble_reason(s, a, phase, po)
    if phase != PHASE_MAIN:
        return R_NOT_MAIN_PHASE
    if _any_main_action(s, po):
        return R_PASS_NOT_ALLOWED
    return OK


@njit(cache=True)
def legal_mask(s: np.ndarray, mask: np.ndarray) -> int:
    """Fill ``mask`` (int8, NUM_ACTIONS; NUM_ACTIONS_ALL with modules) with 1 for legal actions; returns how many."""
    if s[MODULES] != 0:
        return _mod_legal_mask(s, mask)
    n = 0
    for a in range(NUM_ACTIONS):
        mask[a] = 0
    phase = s[PHASE]
    if phase == PHASE_MAIN:
        n = _main_mask(s, player_offset(s[CURRENT]), mask)
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
    """Mark the winners: most prestige, then fewest purchased cards, else shared.

    With Cities, only players holding a city can win (if anyone holds one).
    """
    n = s[N_PLAYERS]
    best_pts = -1
    best_cards = 1 << 30
    holders = 0
    if s[MODULES] & MOD_CITIES:
        for p in range(n):
            if _city_of(s, p) >= 0:
                holders |= 1 << p
    for p in range(n):
        if holders and not (holders >> p) & 1:
            continue
        po = player_offset(p)
        pts = s[po + P_PRESTIGE]
        cards = s[po + P_CARDS]
        if pts > best_pts or (pts == best_pts and cards < best_cards):
            best_pts = pts
            best_cards = cards
    for p in range(n):
        po = player_offset(p)
        won = s[po + P_PRESTIGE] == best_pts and s[po + P_CARDS] == best_cards
        if holders and not (holders >> p) & 1:
            won = False
        s[OUTCOME + p] = 1 if won else 0


@njit(cache=True)
def _end_turn(s: np.ndarray) -> None:
    """Game-end check and hand-over to the next seat."""
    n = s[N_PLAYERS]
    p = s[CURRENT]
    if s[player_offset(p) + P_PRESTIGE] >= WINNING_PRESTIGE and (s[MODULES] & MOD_CITIES) == 0:
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
    if s[MODULES] != 0:
        _apply_mod(s, a)
        return
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
    if a < 0 or a >= (NUM_ACTIONS if s[MODULES] == 0 else NUM_ACTIONS_ALL):
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


# ===========================================================================
# Cities of Splendor modules (RULES.md section 7). Only games with
# s[MODULES] != 0 reach the functions below; they work on the full layout.


@njit(cache=True, inline="always")
def _tp_has(s: np.ndarray, p: int, k: int) -> bool:
    return (s[TP_HELD + p] >> k) & 1 == 1


@njit(cache=True, inline="always")
def _tp_points(held: int) -> int:
    """Prestige from the points trading post: 1 per trading post held, once it is held."""
    if (held >> TP_POINTS) & 1 == 0:
        return 0
    n = 0
    for k in range(5):
        n += (held >> k) & 1
    return n


@njit(cache=True)
def _city_of(s: np.ndarray, p: int) -> int:
    """The city slot seat ``p`` claimed, or -1."""
    for k in range(CITIES_ON_OFFER):
        if s[CITY_ID + k] >= 0 and s[CITY_OWNER + k] == p:
            return k
    return -1


@njit(cache=True, inline="always")
def _sh_blocked(s: np.ndarray, m: int, p: int) -> bool:
    """True if market slot ``m`` holds a stronghold of a seat other than ``p``."""
    for q in range(MAX_PLAYERS):
        if q != p and s[SH_ON + m * MAX_PLAYERS + q] > 0:
            return True
    return False


@njit(cache=True, inline="always")
def _has_bonus(s: np.ndarray, po: int) -> bool:
    """A card with a bonus is owned (pair hosts always are: pairs are discarded before hosts)."""
    for c in range(5):
        if s[po + P_BONUS + c] > 0:
            return True
    return False


@njit(cache=True, inline="always")
def _gold_units_at(s: np.ndarray, po: int, card: int, w: int) -> int:
    """Gold tokens needed for ``card`` after coloured tokens, each gold paying ``w`` gems."""
    units = 0
    for c in range(5):
        need = ALL_CARD_COST[card, c] - s[po + P_BONUS + c]
        if need > 0:
            short = need - s[po + P_TOKENS + c]
            if short > 0:
                units += (short + w - 1) // w
    return units


@njit(cache=True)
def _double_gold_card(s: np.ndarray, p: int) -> int:
    """The lowest-id double-gold card seat ``p`` holds, or -1 (they are all alike)."""
    for i in range(ORIENT_LEVEL_SIZE):
        card = NUM_CARDS + i
        if ALL_CARD_EFFECT[card] == EFFECT_DOUBLE_GOLD and s[OCARD_OWNER + i] == p:
            return card
    return -1


@njit(cache=True, inline="always")
def _owner(s: np.ndarray, card: int) -> int:
    return s[owner_addr(card)]


@njit(cache=True, inline="always")
def _is_pair(card: int) -> bool:
    e = ALL_CARD_EFFECT[card]
    return e == EFFECT_PAIR or e == EFFECT_PAIR_FREE_L1


@njit(cache=True)
def _card_colour_now(s: np.ndarray, card: int) -> int:
    """Colour a held card counts as: its own, a pair card's host colour, or -1."""
    c = ALL_CARD_COLOUR[card]
    if c >= 0 or card < NUM_CARDS:
        return c
    host = s[PAIR_HOST + card - NUM_CARDS]
    return ALL_CARD_COLOUR[host] if host >= 0 else -1


@njit(cache=True)
def _sacrifice_counts(s: np.ndarray, p: int, colour: int) -> tuple[int, int]:
    """(pair cards attached to ``colour`` cards, other cards of ``colour``) held by seat ``p``."""
    pairs = 0
    others = 0
    for card in range(NUM_ALL_CARDS):
        if _owner(s, card) != p:
            continue
        if _is_pair(card):
            if _card_colour_now(s, card) == colour:
                pairs += 1
        elif ALL_CARD_COLOUR[card] == colour:
            others += 1
    return pairs, others


@njit(cache=True)
def _cards_of_colour(s: np.ndarray, p: int, po: int, colour: int) -> int:
    """Cards of ``colour`` seat ``p`` holds, as a sacrifice counts them (pair cards attached to
    that colour included, a double-bonus card once): its bonus less the second bonus of each
    double-bonus card, so only the 30 Orient cards are looked at."""
    n = s[po + P_BONUS + colour]
    for i in range(ORIENT_LEVEL_SIZE * 3):
        card = NUM_CARDS + i
        if ALL_CARD_COLOUR[card] == colour and ALL_CARD_BONUS[card] > 1 and s[OCARD_OWNER + i] == p:
            n -= ALL_CARD_BONUS[card] - 1
    return n


@njit(cache=True, inline="always")
def _buy_reason_with(
    s: np.ndarray, p: int, po: int, card: int, use_dg: bool, w: int, has_dg: bool, has_bonus: bool
) -> int:
    """:func:`_buy_reason` with the buyer's per-turn facts passed in (the mask computes them once):
    ``w`` gems per gold, whether a double-gold card is held, whether a card with a bonus is owned."""
    eff = ALL_CARD_EFFECT[card]
    if eff == EFFECT_SACRIFICE:
        if use_dg:
            return R_DOUBLE_GOLD_NOT_NEEDED
        if _cards_of_colour(s, p, po, ALL_CARD_SAC_COLOUR[card]) < ALL_CARD_SAC_COUNT[card]:
            return R_CANNOT_SACRIFICE
        return OK
    if (eff == EFFECT_PAIR or eff == EFFECT_PAIR_FREE_L1) and not has_bonus:
        return R_NO_PAIR_TARGET
    units = _gold_units_at(s, po, card, w)
    gold = s[po + P_TOKENS + 5]
    if use_dg:
        if not has_dg:
            return R_NO_DOUBLE_GOLD
        if units == 0:
            return R_DOUBLE_GOLD_NOT_NEEDED
        if units > gold + 2:
            return R_CANNOT_AFFORD
        return OK
    if units > gold:
        return R_CANNOT_AFFORD
    return OK


@njit(cache=True)
def _buy_reason(s: np.ndarray, p: int, po: int, card: int, use_dg: bool) -> int:
    """Whether seat ``p`` may buy ``card`` (with or without spending a double-gold card)."""
    w = 2 if _tp_has(s, p, TP_GOLD_DOUBLE) else 1
    has_dg = use_dg and _double_gold_card(s, p) >= 0
    return _buy_reason_with(s, p, po, card, use_dg, w, has_dg, _has_bonus(s, po))


@njit(cache=True)
def _buy_slot_reason(s: np.ndarray, p: int, po: int, m: int, use_dg: bool) -> int:
    card = s[slot_addr(m)]
    if card < 0:
        return R_EMPTY_SLOT
    if (s[MODULES] & MOD_STRONGHOLDS) and _sh_blocked(s, m, p):
        return R_OCCUPIED
    return _buy_reason(s, p, po, card, use_dg)


@njit(cache=True)
def _buy_reserved_reason(s: np.ndarray, p: int, po: int, r: int, use_dg: bool) -> int:
    card = s[po + P_RESERVED + r]
    if card < 0:
        return R_NO_RESERVED_CARD
    return _buy_reason(s, p, po, card, use_dg)


@njit(cache=True)
def _main_reason_mod(s: np.ndarray, a: int, p: int, po: int) -> int:
    """Reason code for a main action (base ids 0-59 or the Orient ids) in a game with modules."""
    mods = s[MODULES]
    if a < RESERVE_MARKET or (a >= RESERVE_DECK and a < BUY_MARKET):
        return _main_reason(s, a, po)
    if a < RESERVE_DECK:
        r = _main_reason(s, a, po)
        if r == OK and (mods & MOD_STRONGHOLDS) and _sh_blocked(s, a - RESERVE_MARKET, p):
            return R_OCCUPIED
        return r
    if a < BUY_RESERVED:
        return _buy_slot_reason(s, p, po, a - BUY_MARKET, False)
    if a < DISCARD:
        return _buy_reserved_reason(s, p, po, a - BUY_RESERVED, False)
    if (mods & MOD_ORIENT) == 0:
        return R_MODULE_OFF
    if a < RESERVE_ODECK:
        if _reserved_count(s, po) >= MAX_RESERVED:
            return R_RESERVE_FULL
        m = 12 + a - RESERVE_OMARKET
        if s[slot_addr(m)] < 0:
            return R_EMPTY_SLOT
        if (mods & MOD_STRONGHOLDS) and _sh_blocked(s, m, p):
            return R_OCCUPIED
        return OK
    if a < BUY_OMARKET:
        if _reserved_count(s, po) >= MAX_RESERVED:
            return R_RESERVE_FULL
        if s[deck_count_addr(3 + a - RESERVE_ODECK)] == 0:
            return R_EMPTY_DECK
        return OK
    if a < BUY_DG_MARKET:
        return _buy_slot_reason(s, p, po, 12 + a - BUY_OMARKET, False)
    if a < BUY_DG_RESERVED:
        return _buy_slot_reason(s, p, po, a - BUY_DG_MARKET, True)
    return _buy_reserved_reason(s, p, po, a - BUY_DG_RESERVED, True)


@njit(cache=True)
def _any_main_mod(s: np.ndarray, p: int, po: int) -> bool:
    for a in range(DISCARD):
        if _main_reason_mod(s, a, p, po) == OK:
            return True
    if s[MODULES] & MOD_ORIENT:
        for a in range(RESERVE_OMARKET, PAIR_TARGET):
            if _main_reason_mod(s, a, p, po) == OK:
                return True
    return False


@njit(cache=True, inline="always")
def _meets_req(s: np.ndarray, po: int, req: np.ndarray) -> bool:
    for c in range(5):
        if s[po + P_BONUS + c] < req[c]:
            return False
    return True


@njit(cache=True)
def _meets_city(s: np.ndarray, po: int, city: int) -> bool:
    """Prestige and bonuses; the "N of one colour" symbol needs a colour the tile does not name."""
    if s[po + P_PRESTIGE] < CITY_PRESTIGE[city]:
        return False
    if not _meets_req(s, po, CITY_REQ[city]):
        return False
    n = CITY_SAME[city]
    if n == 0:
        return True
    for c in range(5):
        if CITY_REQ[city, c] == 0 and s[po + P_BONUS + c] >= n:
            return True
    return False


@njit(cache=True)
def _conquest_slot(s: np.ndarray, p: int) -> int:
    """The market slot holding all 3 of seat ``p``'s strongholds, or -1."""
    for m in range(NUM_SLOTS):
        if s[SH_ON + m * MAX_PLAYERS + p] == 3:
            return m
    return -1


@njit(cache=True)
def _stronghold_reason(s: np.ndarray, a: int, p: int) -> int:
    if a < SH_MOVE:
        m = a - SH_PLACE
        if s[SH_SUPPLY + p] == 0:
            return R_NO_STRONGHOLD
        if s[slot_addr(m)] < 0:
            return R_EMPTY_SLOT
        if _sh_blocked(s, m, p):
            return R_OCCUPIED
        return OK
    if a < SH_REMOVE:
        src = (a - SH_MOVE) // NUM_SLOTS
        dst = (a - SH_MOVE) % NUM_SLOTS
        if src == dst or s[SH_ON + src * MAX_PLAYERS + p] == 0:
            return R_NO_STRONGHOLD
        if s[slot_addr(dst)] < 0:
            return R_EMPTY_SLOT
        if _sh_blocked(s, dst, p):
            return R_OCCUPIED
        return OK
    m = a - SH_REMOVE
    for q in range(MAX_PLAYERS):
        if q != p and s[SH_ON + m * MAX_PLAYERS + q] == 1:
            return OK
    return R_NOT_AN_OPTION


@njit(cache=True)
def _sacrifice_reason(s: np.ndarray, p: int, card: int) -> int:
    """A discard for the pending sacrifice: pair cards on that colour first, then the colour's cards."""
    if _owner(s, card) != p or card == s[PD_SAC_CARD]:
        return R_NOT_AN_OPTION
    colour = ALL_CARD_SAC_COLOUR[s[PD_SAC_CARD]]
    pairs, _ = _sacrifice_counts(s, p, colour)
    if _is_pair(card):
        return OK if _card_colour_now(s, card) == colour else R_NOT_AN_OPTION
    if pairs > 0 or ALL_CARD_COLOUR[card] != colour:
        return R_NOT_AN_OPTION
    return OK


@njit(cache=True)
def _free_card_reason(s: np.ndarray, p: int, po: int, m: int) -> int:
    card = s[slot_addr(m)]
    if card < 0:
        return R_EMPTY_SLOT
    if slot_level(m) != s[PD_FREE_LEVEL]:
        return R_NOT_AN_OPTION
    if (s[MODULES] & MOD_STRONGHOLDS) and _sh_blocked(s, m, p):
        return R_OCCUPIED
    if _is_pair(card) and not _has_bonus(s, po):
        return R_NO_PAIR_TARGET
    return OK


@njit(cache=True)
def _module_block_reason(s: np.ndarray, a: int, p: int, po: int) -> int:
    """Reason code for an id of a module decision block (ids >= PAIR_TARGET or 72-91)."""
    mods = s[MODULES]
    phase = s[PHASE]
    if a < CHOOSE_TRADING_POST:
        if (mods & MOD_CITIES) == 0:
            return R_MODULE_OFF
        if phase != PHASE_CITY:
            return R_WRONG_PHASE
        k = a - CHOOSE_CITY
        if s[CITY_ID + k] < 0 or s[CITY_OWNER + k] >= 0:
            return R_NOT_AN_OPTION
        if _city_of(s, p) >= 0:
            return R_ALREADY_HELD
        if not _meets_city(s, po, s[CITY_ID + k]):
            return R_REQUIREMENT_NOT_MET
        return OK
    if a < RESERVE_OMARKET:
        if (mods & MOD_TRADING_POSTS) == 0:
            return R_MODULE_OFF
        if a < TP_TOKEN:
            if phase != PHASE_TRADING_POST_CHOICE:
                return R_WRONG_PHASE
            k = a - CHOOSE_TRADING_POST
            if _tp_has(s, p, k):
                return R_ALREADY_HELD
            if not _meets_req(s, po, TRADING_POST_REQ[k]):
                return R_REQUIREMENT_NOT_MET
            return OK
        if a < TP_EXTRA_TOKEN:
            if phase != PHASE_TRADING_POST_TOKEN:
                return R_WRONG_PHASE
            return OK if s[BANK + a - TP_TOKEN] > 0 else R_COLOUR_EMPTY
        if a < KEEP_DRAWN:
            if phase != PHASE_TRADING_POST_EXTRA:
                return R_WRONG_PHASE
            c = a - TP_EXTRA_TOKEN
            if c == s[PD_EXTRA_EXCL]:
                return R_NOT_AN_OPTION
            return OK if s[BANK + c] > 0 else R_COLOUR_EMPTY
        return OK if phase == PHASE_KEEP_DRAWN_CARD else R_WRONG_PHASE
    if a < SH_PLACE:
        if (mods & MOD_ORIENT) == 0:
            return R_MODULE_OFF
        if a < FREE_CARD:
            if phase != PHASE_PAIR_TARGET:
                return R_WRONG_PHASE
            t = a - PAIR_TARGET
            if _owner(s, t) != p or ALL_CARD_COLOUR[t] < 0:
                return R_NOT_AN_OPTION
            return OK
        if a < SACRIFICE:
            if phase != PHASE_FREE_CARD:
                return R_WRONG_PHASE
            return _free_card_reason(s, p, po, a - FREE_CARD)
        if phase != PHASE_SACRIFICE_CHOICE:
            return R_WRONG_PHASE
        return _sacrifice_reason(s, p, a - SACRIFICE)
    if (mods & MOD_STRONGHOLDS) == 0:
        return R_MODULE_OFF
    if a < CONQUEST:
        if phase != PHASE_STRONGHOLD:
            return R_WRONG_PHASE
        return _stronghold_reason(s, a, p)
    if phase != PHASE_CONQUEST:
        return R_WRONG_PHASE
    i = a - CONQUEST
    if i == 0:
        return OK
    m = _conquest_slot(s, p)
    if m < 0:
        return R_NOT_AN_OPTION
    return _buy_reason(s, p, po, s[slot_addr(m)], i == 2)


@njit(cache=True)
def _mod_reason(s: np.ndarray, a: int) -> int:
    """illegal_reason for a game with modules."""
    phase = s[PHASE]
    if phase == PHASE_GAME_OVER or phase == PHASE_TRUNCATED:
        return R_GAME_OVER
    p = s[CURRENT]
    po = player_offset(p)
    if a < DISCARD or (a >= RESERVE_OMARKET and a < PAIR_TARGET):
        if phase != PHASE_MAIN:
            return R_NOT_MAIN_PHASE
        return _main_reason_mod(s, a, p, po)
    if a < CHOOSE_NOBLE:
        return _discard_reason(s, a, phase, po)
    if a < PASS:
        return _noble_reason(s, a, phase, po)
    if a == PASS:
        if phase != PHASE_MAIN:
            return R_NOT_MAIN_PHASE
        if _any_main_mod(s, p, po):
            return R_PASS_NOT_ALLOWED
        return OK
    return _module_block_reason(s, a, p, po)


@njit(cache=True, inline="always")
def _phase_range(phase: int) -> tuple[int, int]:
    """The ids of the block answering a decision phase."""
    if phase == PHASE_DISCARD:
        return DISCARD, CHOOSE_NOBLE
    if phase == PHASE_NOBLE:
        return CHOOSE_NOBLE, PASS
    if phase == PHASE_CITY:
        return CHOOSE_CITY, CHOOSE_TRADING_POST
    if phase == PHASE_TRADING_POST_CHOICE:
        return CHOOSE_TRADING_POST, TP_TOKEN
    if phase == PHASE_TRADING_POST_TOKEN:
        return TP_TOKEN, TP_EXTRA_TOKEN
    if phase == PHASE_TRADING_POST_EXTRA:
        return TP_EXTRA_TOKEN, KEEP_DRAWN
    if phase == PHASE_KEEP_DRAWN_CARD:
        return KEEP_DRAWN, RESERVE_OMARKET
    if phase == PHASE_PAIR_TARGET:
        return PAIR_TARGET, FREE_CARD
    if phase == PHASE_FREE_CARD:
        return FREE_CARD, SACRIFICE
    if phase == PHASE_SACRIFICE_CHOICE:
        return SACRIFICE, SH_PLACE
    if phase == PHASE_STRONGHOLD:
        return SH_PLACE, CONQUEST
    if phase == PHASE_CONQUEST:
        return CONQUEST, NUM_ACTIONS_ALL
    return 0, 0


@njit(cache=True)
def _main_mask_mod(s: np.ndarray, p: int, po: int, mask: np.ndarray) -> int:
    """Legal main actions with modules: the rules of :func:`_main_reason_mod`, with the buyer's
    facts (gold weight, double-gold card, bonus, reserve count, colours in the bank) computed once
    and whole blocks skipped when they cannot apply (no Orient, no double-gold card held)."""
    mods = s[MODULES]
    sh = (mods & MOD_STRONGHOLDS) != 0
    n = _token_mask(s, mask)
    can_reserve = _reserved_count(s, po) < MAX_RESERVED
    if can_reserve:
        for slot in range(BASE_SLOTS_N):
            if s[MARKET + slot] >= 0 and not (sh and _sh_blocked(s, slot, p)):
                mask[RESERVE_MARKET + slot] = 1
                n += 1
        for lvl in range(3):
            if s[DECK_COUNT + lvl] > 0:
                mask[RESERVE_DECK + lvl] = 1
                n += 1
    w = 2 if _tp_has(s, p, TP_GOLD_DOUBLE) else 1
    has_bonus = _has_bonus(s, po)
    orient = (mods & MOD_ORIENT) != 0
    has_dg = orient and _double_gold_card(s, p) >= 0
    for m in range(NUM_SLOTS if orient else BASE_SLOTS_N):
        card = s[slot_addr(m)]
        if card < 0 or (sh and _sh_blocked(s, m, p)):
            continue
        buy = BUY_MARKET + m if m < BASE_SLOTS_N else BUY_OMARKET + m - BASE_SLOTS_N
        if _buy_reason_with(s, p, po, card, False, w, has_dg, has_bonus) == OK:
            mask[buy] = 1
            n += 1
        if has_dg and _buy_reason_with(s, p, po, card, True, w, has_dg, has_bonus) == OK:
            mask[BUY_DG_MARKET + m] = 1
            n += 1
    for r in range(MAX_RESERVED):
        card = s[po + P_RESERVED + r]
        if card < 0:
            break
        if _buy_reason_with(s, p, po, card, False, w, has_dg, has_bonus) == OK:
            mask[BUY_RESERVED + r] = 1
            n += 1
        if has_dg and _buy_reason_with(s, p, po, card, True, w, has_dg, has_bonus) == OK:
            mask[BUY_DG_RESERVED + r] = 1
            n += 1
    if orient and can_reserve:
        for k in range(3 * 2):
            m = BASE_SLOTS_N + k
            if s[slot_addr(m)] >= 0 and not (sh and _sh_blocked(s, m, p)):
                mask[RESERVE_OMARKET + k] = 1
                n += 1
        for lvl in range(3):
            if s[deck_count_addr(3 + lvl)] > 0:
                mask[RESERVE_ODECK + lvl] = 1
                n += 1
    return n


@njit(cache=True)
def _decision_mask(s: np.ndarray, phase: int, p: int, po: int, mask: np.ndarray) -> int:
    """Legal answers to a decision phase (not main), written into ``mask`` (cleared by the caller).

    The blocks with many ids are walked only where an answer can be: the
    stronghold moves from the (at most 3) slots holding the player's
    strongholds, the sacrifice and pair-host candidates among the player's cards.
    """
    n = 0
    if phase == PHASE_STRONGHOLD:
        supply = s[SH_SUPPLY + p] > 0
        for m in range(NUM_SLOTS):
            if s[slot_addr(m)] < 0 or _sh_blocked(s, m, p):
                continue
            if supply:
                mask[SH_PLACE + m] = 1
                n += 1
            for src in range(NUM_SLOTS):
                if src != m and s[SH_ON + src * MAX_PLAYERS + p] > 0:
                    mask[SH_MOVE + src * NUM_SLOTS + m] = 1
                    n += 1
        for m in range(NUM_SLOTS):
            if _stronghold_reason(s, SH_REMOVE + m, p) == OK:
                mask[SH_REMOVE + m] = 1
                n += 1
        return n
    if phase == PHASE_SACRIFICE_CHOICE:
        colour = ALL_CARD_SAC_COLOUR[s[PD_SAC_CARD]]
        pairs, _ = _sacrifice_counts(s, p, colour)
        for card in range(NUM_ALL_CARDS):
            if _owner(s, card) != p or card == s[PD_SAC_CARD]:
                continue
            if (
                _card_colour_now(s, card) == colour
                if _is_pair(card)
                else (pairs == 0 and ALL_CARD_COLOUR[card] == colour)
            ):
                mask[SACRIFICE + card] = 1
                n += 1
        return n
    if phase == PHASE_PAIR_TARGET:
        for card in range(NUM_ALL_CARDS):
            if ALL_CARD_COLOUR[card] >= 0 and _owner(s, card) == p:
                mask[PAIR_TARGET + card] = 1
                n += 1
        return n
    lo, hi = _phase_range(phase)
    for a in range(lo, hi):
        if _mod_reason(s, a) == OK:
            mask[a] = 1
            n += 1
    return n


@njit(cache=True)
def _mod_legal_mask(s: np.ndarray, mask: np.ndarray) -> int:
    """legal_mask for a game with modules: only the blocks of the current phase are examined."""
    mask[:] = 0
    phase = s[PHASE]
    if phase == PHASE_GAME_OVER or phase == PHASE_TRUNCATED:
        return 0
    p = s[CURRENT]
    po = player_offset(p)
    if phase == PHASE_MAIN:
        n = _main_mask_mod(s, p, po, mask)
        if n == 0:
            mask[PASS] = 1
            n = 1
        return n
    return _decision_mask(s, phase, p, po, mask)


# -- applying actions with modules -------------------------------------------


@njit(cache=True)
def _take_from_slot(s: np.ndarray, m: int) -> int:
    """Take the card of market slot ``m``: its strongholds go home, the slot waits for the refill."""
    addr = slot_addr(m)
    card = s[addr]
    s[addr] = -1
    for q in range(MAX_PLAYERS):
        k = SH_ON + m * MAX_PLAYERS + q
        s[SH_SUPPLY + q] += s[k]
        s[k] = 0
    s[PD_REFILL] |= 1 << m
    return card


@njit(cache=True)
def _refill_pending(s: np.ndarray) -> None:
    """Refill every emptied market slot from its own deck (base or Orient)."""
    bits = s[PD_REFILL]
    if bits == 0:
        return
    for m in range(NUM_SLOTS):
        if (bits >> m) & 1:
            s[slot_addr(m)] = draw_from(s, slot_deck(m))
    s[PD_REFILL] = 0


@njit(cache=True)
def _gain_card(s: np.ndarray, p: int, po: int, card: int) -> None:
    """Seat ``p`` now owns ``card``: bonus, points, count, and its own acquisition effect."""
    s[owner_addr(card)] = p
    s[po + P_CARDS] += 1
    s[po + P_PRESTIGE] += ALL_CARD_POINTS[card]
    colour = ALL_CARD_COLOUR[card]
    if colour >= 0:
        s[po + P_BONUS + colour] += ALL_CARD_BONUS[card]
    eff = ALL_CARD_EFFECT[card]
    if eff == EFFECT_PAIR:
        s[PD_PAIR] = card
    elif eff == EFFECT_PAIR_FREE_L1:
        s[PD_PAIR] = card
        s[PD_FREE_LEVEL] = 0
    elif eff == EFFECT_FREE_L2:
        s[PD_FREE_LEVEL] = 1


@njit(cache=True)
def _discard_to_box(s: np.ndarray, p: int, po: int, card: int) -> None:
    """A held card goes back to the box (sacrificed, or a spent double-gold card)."""
    s[owner_addr(card)] = BOX
    s[po + P_CARDS] -= 1
    s[po + P_PRESTIGE] -= ALL_CARD_POINTS[card]
    colour = _card_colour_now(s, card)
    if colour >= 0:
        s[po + P_BONUS + colour] -= 1 if _is_pair(card) else ALL_CARD_BONUS[card]
    if card >= NUM_CARDS:
        s[PAIR_HOST + card - NUM_CARDS] = -1


@njit(cache=True)
def _pay(s: np.ndarray, p: int, po: int, card: int, use_dg: bool) -> None:
    """The payment rule with modules; deterministic, and it never spends a token the purchase does not need.

    Gold units first follow the base rule (coloured tokens first, then per colour
    the shortfall in gold units, each paying ``w`` = 2 gems of one colour with the
    "gold counts double" trading post, else 1). Then nothing superfluous is paid:
    a coloured token that a gold unit already covers (an odd shortfall with
    ``w`` = 2) is kept, and the 2 virtual gold units of a spent double-gold card
    go first to the shortfall, then replace coloured tokens, colour by colour in
    colour order, ``w`` tokens per unit. Real gold pays only what virtual gold
    does not. Example: owing 3 red with 2 red + 1 gold and ``w`` = 2, the player
    pays 1 red + 1 gold.
    """
    w = 2 if _tp_has(s, p, TP_GOLD_DOUBLE) else 1
    paid = np.zeros(5, dtype=np.int32)
    units = 0
    for c in range(5):
        need = ALL_CARD_COST[card, c] - s[po + P_BONUS + c]
        if need > 0:
            have = s[po + P_TOKENS + c]
            short = need - have if need > have else 0
            u = (short + w - 1) // w
            units += u
            keep = u * w - short  # gems the gold units overpay: coloured tokens not needed
            paid[c] = need - short - (keep if keep < need - short else need - short)
    spare = 0
    if use_dg:
        _discard_to_box(s, p, po, _double_gold_card(s, p))
        spare = 2 - units if units < 2 else 0
        units = units - 2 if units >= 2 else 0
    for c in range(5):
        while spare > 0 and paid[c] > 0:
            paid[c] -= w if paid[c] >= w else paid[c]
            spare -= 1
        s[po + P_TOKENS + c] -= paid[c]
        s[BANK + c] += paid[c]
    s[po + P_TOKENS + 5] -= units
    s[BANK + 5] += units


@njit(cache=True)
def _purchase(s: np.ndarray, p: int, po: int, card: int, use_dg: bool) -> None:
    """A purchase (main action or conquest): pay, take, and record what it triggers."""
    if ALL_CARD_EFFECT[card] == EFFECT_SACRIFICE:
        s[PD_SAC_CARD] = card
        s[PD_SAC_LEFT] = ALL_CARD_SAC_COUNT[card]
    else:
        _pay(s, p, po, card, use_dg)
    _gain_card(s, p, po, card)
    if _tp_has(s, p, TP_TOKEN_AFTER_BUY):
        s[PD_TP_TOKEN] = 1
    if s[MODULES] & MOD_STRONGHOLDS:
        s[PD_SH] = 1


@njit(cache=True)
def _reserve_deck_mod(s: np.ndarray, p: int, po: int, d: int) -> None:
    """Blind reserve; with the draw-two trading post, draw two and wait for the choice."""
    if _tp_has(s, p, TP_DRAW_TWO) and s[deck_count_addr(d)] >= 2:
        s[PD_DRAWN0] = draw_from(s, d)
        s[PD_DRAWN1] = draw_from(s, d)
        s[PD_DRAWN_DECK] = d
    else:
        _reserve(s, po, draw_from(s, d), True)


@njit(cache=True)
def _apply_main_mod(s: np.ndarray, a: int, p: int, po: int) -> None:
    _clear_pending(s)
    if a == PASS:
        s[PASSES] += 1
        s[PD_CONQ] = 1
        return
    if a < RESERVE_MARKET:
        _apply_main(s, a, p, po)  # token takes: as in the base game
        if a >= TAKE2_SAME and _tp_has(s, p, TP_POWER_EXTRA_TOKEN):
            s[PD_EXTRA_EXCL] = a - TAKE2_SAME
        return
    s[PASSES] = 0
    if a < RESERVE_DECK:
        m = a - RESERVE_MARKET
        _reserve(s, po, _take_from_slot(s, m), False)
    elif a < BUY_MARKET:
        _reserve_deck_mod(s, p, po, a - RESERVE_DECK)
    elif a < BUY_RESERVED:
        _purchase(s, p, po, _take_from_slot(s, a - BUY_MARKET), False)
    elif a < DISCARD:
        r = a - BUY_RESERVED
        card = s[po + P_RESERVED + r]
        _remove_reserved(s, po, r)
        _purchase(s, p, po, card, False)
    elif a < RESERVE_ODECK:
        _reserve(s, po, _take_from_slot(s, 12 + a - RESERVE_OMARKET), False)
    elif a < BUY_OMARKET:
        _reserve_deck_mod(s, p, po, 3 + a - RESERVE_ODECK)
    elif a < BUY_DG_MARKET:
        _purchase(s, p, po, _take_from_slot(s, 12 + a - BUY_OMARKET), False)
    elif a < BUY_DG_RESERVED:
        _purchase(s, p, po, _take_from_slot(s, a - BUY_DG_MARKET), True)
    else:
        r = a - BUY_DG_RESERVED
        card = s[po + P_RESERVED + r]
        _remove_reserved(s, po, r)
        _purchase(s, p, po, card, True)


@njit(cache=True)
def _resolve(s: np.ndarray, a: int, p: int, po: int) -> None:
    """Apply the answer to a pending decision (a legal id of the current phase's block)."""
    phase = s[PHASE]
    if phase == PHASE_KEEP_DRAWN_CARD:
        k = a - KEEP_DRAWN
        kept = s[PD_DRAWN0 + k]
        other = s[PD_DRAWN1 - k]
        s[PD_DRAWN0] = -1
        s[PD_DRAWN1] = -1
        _reserve(s, po, kept, True)
        put_bottom(s, s[PD_DRAWN_DECK], other)
        s[PD_DRAWN_DECK] = -1
    elif phase == PHASE_SACRIFICE_CHOICE:
        _discard_to_box(s, p, po, a - SACRIFICE)
        s[PD_SAC_LEFT] -= 1
        if s[PD_SAC_LEFT] == 0:
            s[PD_SAC_CARD] = -1
    elif phase == PHASE_PAIR_TARGET:
        host = a - PAIR_TARGET
        s[PAIR_HOST + s[PD_PAIR] - NUM_CARDS] = host
        s[po + P_BONUS + ALL_CARD_COLOUR[host]] += 1
        s[PD_PAIR] = -1
    elif phase == PHASE_FREE_CARD:
        s[PD_FREE_LEVEL] = -1
        _gain_card(s, p, po, _take_from_slot(s, a - FREE_CARD))
    elif phase == PHASE_TRADING_POST_TOKEN or phase == PHASE_TRADING_POST_EXTRA:
        c = (a - TP_TOKEN) if phase == PHASE_TRADING_POST_TOKEN else (a - TP_EXTRA_TOKEN)
        s[BANK + c] -= 1
        s[po + P_TOKENS + c] += 1
        if phase == PHASE_TRADING_POST_TOKEN:
            s[PD_TP_TOKEN] = 0
        else:
            s[PD_EXTRA_EXCL] = -1
    elif phase == PHASE_STRONGHOLD:
        if a < SH_MOVE:
            m = a - SH_PLACE
            s[SH_SUPPLY + p] -= 1
            s[SH_ON + m * MAX_PLAYERS + p] += 1
        elif a < SH_REMOVE:
            src = (a - SH_MOVE) // NUM_SLOTS
            dst = (a - SH_MOVE) % NUM_SLOTS
            s[SH_ON + src * MAX_PLAYERS + p] -= 1
            s[SH_ON + dst * MAX_PLAYERS + p] += 1
        else:
            m = a - SH_REMOVE
            for q in range(MAX_PLAYERS):
                if q != p and s[SH_ON + m * MAX_PLAYERS + q] == 1:
                    s[SH_ON + m * MAX_PLAYERS + q] = 0
                    s[SH_SUPPLY + q] += 1
        s[PD_SH] = 0


@njit(cache=True)
def _drop_pending(s: np.ndarray, phase: int) -> None:
    """A pending effect with no possible option lapses (e.g. no token left in the bank)."""
    if phase == PHASE_FREE_CARD:
        s[PD_FREE_LEVEL] = -1
    elif phase == PHASE_TRADING_POST_TOKEN:
        s[PD_TP_TOKEN] = 0
    elif phase == PHASE_TRADING_POST_EXTRA:
        s[PD_EXTRA_EXCL] = -1
    elif phase == PHASE_STRONGHOLD:
        s[PD_SH] = 0
    elif phase == PHASE_PAIR_TARGET:
        s[PD_PAIR] = -1
    elif phase == PHASE_SACRIFICE_CHOICE:
        s[PD_SAC_LEFT] = 0
        s[PD_SAC_CARD] = -1


@njit(cache=True)
def _pending_phase(s: np.ndarray) -> int:
    """The next effect to settle, in rule order, as the phase that decides it; -1 if none."""
    if s[PD_DRAWN0] >= 0:
        return PHASE_KEEP_DRAWN_CARD
    if s[PD_SAC_LEFT] > 0:
        return PHASE_SACRIFICE_CHOICE
    if s[PD_PAIR] >= 0:
        return PHASE_PAIR_TARGET
    if s[PD_FREE_LEVEL] >= 0:
        return PHASE_FREE_CARD
    if s[PD_TP_TOKEN] != 0:
        return PHASE_TRADING_POST_TOKEN
    if s[PD_EXTRA_EXCL] >= 0:
        return PHASE_TRADING_POST_EXTRA
    if s[PD_SH] != 0:
        return PHASE_STRONGHOLD
    return -1


@njit(cache=True)
def _drive(s: np.ndarray) -> None:
    """Work through the rest of the turn until a real decision (or the next turn) is reached.

    A decision with no option lapses; one with a single option (for a
    sacrifice: no more candidates than cards still to discard) is settled by
    the engine, as the rules leave the player no choice.
    """
    p = s[CURRENT]
    po = player_offset(p)
    mods = s[MODULES]
    scratch = np.zeros(0, dtype=np.int8)  # mask of a pending decision, allocated when one comes up
    while True:
        stage = s[PD_STAGE]
        if stage == STAGE_EFFECTS:
            ph = _pending_phase(s)
            if ph >= 0:
                s[PHASE] = ph
                lo, hi = _phase_range(ph)
                if scratch.shape[0] == 0:
                    scratch = np.zeros(NUM_ACTIONS_ALL, dtype=np.int8)
                else:
                    scratch[lo:hi] = 0
                n = _decision_mask(s, ph, p, po, scratch)
                last = hi - 1
                while n > 0 and scratch[last] == 0:
                    last -= 1
                limit = s[PD_SAC_LEFT] if ph == PHASE_SACRIFICE_CHOICE else 1
                if n == 0:
                    _drop_pending(s, ph)
                elif n <= limit:
                    _resolve(s, last, p, po)
                else:
                    return
                continue
            _refill_pending(s)
            if s[PD_CONQ] == 0:
                s[PD_CONQ] = 1
                if (mods & MOD_STRONGHOLDS) and _conquest_slot(s, p) >= 0:
                    s[PHASE] = PHASE_CONQUEST
                    if _mod_reason(s, CONQUEST + 1) == OK or _mod_reason(s, CONQUEST + 2) == OK:
                        return
            s[PD_STAGE] = STAGE_TOKEN_LIMIT
        elif stage == STAGE_TOKEN_LIMIT:
            if _token_total(s, po) > TOKEN_LIMIT:
                s[PHASE] = PHASE_DISCARD
                return
            s[PD_STAGE] = STAGE_NOBLES
        elif stage == STAGE_NOBLES:
            count = 0
            only = -1
            for k in range(NOBLE_SLOTS):
                if s[NOBLE_ID + k] >= 0 and s[NOBLE_OWNER + k] < 0 and _meets_noble(s, po, s[NOBLE_ID + k]):
                    count += 1
                    only = k
            if count > 1:
                s[PHASE] = PHASE_NOBLE
                return
            if count == 1:
                _take_noble(s, p, po, only)
            s[PD_STAGE] = STAGE_TRADING_POSTS
        elif stage == STAGE_TRADING_POSTS:
            if mods & MOD_TRADING_POSTS:
                count = 0
                only = -1
                for k in range(5):
                    if not _tp_has(s, p, k) and _meets_req(s, po, TRADING_POST_REQ[k]):
                        count += 1
                        only = k
                if count > 1:
                    s[PHASE] = PHASE_TRADING_POST_CHOICE
                    return
                if count == 1:
                    _take_trading_post(s, p, po, only)
            s[PD_STAGE] = STAGE_CITIES
        elif stage == STAGE_CITIES:
            if (mods & MOD_CITIES) and _city_of(s, p) < 0:
                count = 0
                only = -1
                for k in range(CITIES_ON_OFFER):
                    if s[CITY_ID + k] >= 0 and s[CITY_OWNER + k] < 0 and _meets_city(s, po, s[CITY_ID + k]):
                        count += 1
                        only = k
                if count > 1:
                    s[PHASE] = PHASE_CITY
                    return
                if count == 1:
                    _take_city(s, p, only)
            s[PD_STAGE] = STAGE_END
        else:
            _end_turn(s)
            s[PD_STAGE] = STAGE_EFFECTS
            return


@njit(cache=True)
def _take_trading_post(s: np.ndarray, p: int, po: int, k: int) -> None:
    before = _tp_points(s[TP_HELD + p])
    s[TP_HELD + p] |= 1 << k
    s[po + P_PRESTIGE] += _tp_points(s[TP_HELD + p]) - before


@njit(cache=True)
def _take_city(s: np.ndarray, p: int, k: int) -> None:
    """Claiming a city starts the last round (the 15-point trigger does not apply with Cities)."""
    s[CITY_OWNER + k] = p
    s[FINAL_ROUND] = 1


@njit(cache=True)
def _apply_mod(s: np.ndarray, a: int) -> None:
    """apply_action for a game with modules."""
    p = s[CURRENT]
    po = player_offset(p)
    phase = s[PHASE]
    if phase == PHASE_MAIN:
        _apply_main_mod(s, a, p, po)
    elif phase == PHASE_DISCARD:
        c = a - DISCARD
        s[po + P_TOKENS + c] -= 1
        s[BANK + c] += 1
    elif phase == PHASE_NOBLE:
        _take_noble(s, p, po, a - CHOOSE_NOBLE)
        s[PD_STAGE] = STAGE_TRADING_POSTS
    elif phase == PHASE_TRADING_POST_CHOICE:
        _take_trading_post(s, p, po, a - CHOOSE_TRADING_POST)
        s[PD_STAGE] = STAGE_CITIES
    elif phase == PHASE_CITY:
        _take_city(s, p, a - CHOOSE_CITY)
        s[PD_STAGE] = STAGE_END
    elif phase == PHASE_CONQUEST:
        i = a - CONQUEST
        if i > 0:
            _purchase(s, p, po, _take_from_slot(s, _conquest_slot(s, p)), i == 2)
    else:
        _resolve(s, a, p, po)
    _drive(s)
