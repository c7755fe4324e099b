# long file: the one turn pipeline, numba kernels (legality, effects, the end of a turn) that call each other, kept together in rule order
"""The rules: one turn pipeline for every game, base or with modules.

Pure numba functions over a state array (see :mod:`splendor_env.state`):

* :func:`illegal_reason` says whether one action is legal now and, if not,
  why (a code from :data:`REASONS`);
* :func:`legal_mask` fills the mask with the same predicates, block by block,
  so the mask and the check can never disagree;
* :func:`apply_action` plays a legal action, then works through the rest of
  the turn (:func:`_finish_turn`) until the next decision.

The base game runs once through this file: one payment rule
(:func:`splendor_env.board.pay`), one noble check, one mask, one main action.
Each Cities of Splendor module lives in its own file under
:mod:`splendor_env.modules` and joins the turn where its rules say, one
explicit line per hook below, always behind its bit of ``s[MODULES]`` (numba
cannot look modules up at run time). A base game never reads a module field:
its array does not have them.

A turn is a sequence of decisions. The main action records what it triggers
in the pending record (``PD_*``); :func:`_finish_turn` settles it in rule
order (drawn-card choice, sacrifice discards, pair host, free card,
trading-post tokens, stronghold action, refill, conquest), then the token
limit, nobles, trading posts, cities and game end, stopping at each decision
that has more than one option and settling alone those with exactly one.

The AEC env, the batched path and the agents all call these; none of them
holds a rule of its own. Every function is compiled with ``cache=True``.
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
    PAIR_TARGET,
    PASS,
    RESERVE_DECK,
    RESERVE_MARKET,
    RESERVE_ODECK,
    RESERVE_OMARKET,
    SACRIFICE,
    TAKE2_SAME,
    TAKE_DISTINCT_MASKS,
)
from .board import (
    available_colours,
    buying_power,
    can_afford,
    gain_card,
    has_bonus,
    meets_noble,
    noble_on_offer,
    pay,
    remove_reserved,
    reserve,
    reserved_count,
    take_noble,
    token_total,
)
from .layout import (
    ACTION_OFFSETS,
    ALL_SLOTS,
    BASE_SLOTS,
    NUM_ACTIONS,
    NUM_ACTIONS_ALL,
    ORIENT_SLOTS,
    PHASE_NAMES,
    phase_ids,
)
from .modules import cities, orient, strongholds, trading_posts
from .reasons import (  # noqa: F401 - the reason codes are part of this module's API
    OK,
    R_ALREADY_HELD,
    R_BANK_BELOW_4,
    R_CANNOT_AFFORD,
    R_CANNOT_SACRIFICE,
    R_COLOUR_EMPTY,
    R_DOUBLE_GOLD_NOT_NEEDED,
    R_EMPTY_DECK,
    R_EMPTY_SLOT,
    R_GAME_OVER,
    R_MODULE_OFF,
    R_MUST_TAKE_MORE,
    R_NO_DOUBLE_GOLD,
    R_NO_NOBLE,
    R_NO_PAIR_TARGET,
    R_NO_RESERVED_CARD,
    R_NO_STRONGHOLD,
    R_NO_TOKEN,
    R_NOBLE_NOT_MET,
    R_NOT_AN_OPTION,
    R_NOT_DISCARD_PHASE,
    R_NOT_MAIN_PHASE,
    R_NOT_NOBLE_PHASE,
    R_OCCUPIED,
    R_PASS_NOT_ALLOWED,
    R_REQUIREMENT_NOT_MET,
    R_RESERVE_FULL,
    R_WRONG_PHASE,
    REASONS,
)
from .state import (
    BANK,
    CURRENT,
    FINAL_ROUND,
    MARKET,
    MARKET_SLOTS,
    MAX_RESERVED,
    MAX_TURNS,
    MOD_CITIES,
    MOD_ORIENT,
    MOD_STRONGHOLDS,
    MOD_TRADING_POSTS,
    MODULES,
    N_PLAYERS,
    NOBLE_ID,
    NOBLE_SLOTS,
    OUTCOME,
    P_CARDS,
    P_PRESTIGE,
    P_RESERVED,
    P_TOKENS,
    PASSES,
    PD_CONQ,
    PD_FREE_LEVEL,
    PD_REFILL,
    PD_SAC_LEFT,
    PD_SH,
    PD_STAGE,
    PHASE,
    PHASE_CITY,
    PHASE_CONQUEST,
    PHASE_DISCARD,
    PHASE_FREE_CARD,
    PHASE_GAME_OVER,
    PHASE_MAIN,
    PHASE_NOBLE,
    PHASE_PAIR_TARGET,
    PHASE_SACRIFICE_CHOICE,
    PHASE_STRONGHOLD,
    PHASE_TRADING_POST_CHOICE,
    PHASE_TRUNCATED,
    STAGE_CITIES,
    STAGE_EFFECTS,
    STAGE_END,
    STAGE_NOBLES,
    STAGE_TOKEN_LIMIT,
    STAGE_TRADING_POSTS,
    TOKEN_LIMIT,
    TURN,
    WINNING_PRESTIGE,
    clear_pending,
    deck_count_addr,
    draw_card,
    draw_from,
    level_slot,
    player_offset,
    slot_addr,
    slot_deck,
)

ORIENT_MAIN_END = PAIR_TARGET  # the Orient's main-action ids are RESERVE_OMARKET .. this - 1

# Which file answers each id above the base ones: ids [first, end) of each module's blocks.
_TP_FIRST = ACTION_OFFSETS["choose_trading_post"][0]
_ORIENT_FIRST = RESERVE_OMARKET
_SH_FIRST = ACTION_OFFSETS["stronghold_place"][0]

# Decision phases: the id range of the blocks answering each (phase_ids from the layout table).
PHASE_FIRST_ID = np.array([phase_ids(name)[0] for name in PHASE_NAMES], dtype=np.int64)
PHASE_END_ID = np.array([phase_ids(name)[1] for name in PHASE_NAMES], dtype=np.int64)

# What a main action does, whichever block its id is in (see _main_move).
MOVE_TAKE = 0
MOVE_RESERVE_SLOT = 1
MOVE_RESERVE_DECK = 2
MOVE_BUY_SLOT = 3
MOVE_BUY_RESERVED = 4


# ---------------------------------------------------------------------------
# Legality


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
def _main_move(a: int) -> tuple[int, int, bool]:
    """(kind, market slot / deck / reserve slot, spends a double-gold card) of a main-action id.

    Market slots are 0-11 for the base market and 12-17 for the Orient's;
    decks 0-2 base and 3-5 Orient.
    """
    if a < RESERVE_MARKET:
        return MOVE_TAKE, a, False
    if a < RESERVE_DECK:
        return MOVE_RESERVE_SLOT, a - RESERVE_MARKET, False
    if a < BUY_MARKET:
        return MOVE_RESERVE_DECK, a - RESERVE_DECK, False
    if a < BUY_RESERVED:
        return MOVE_BUY_SLOT, a - BUY_MARKET, False
    if a < DISCARD:
        return MOVE_BUY_RESERVED, a - BUY_RESERVED, False
    # The Orient's main actions.
    if a < RESERVE_ODECK:
        return MOVE_RESERVE_SLOT, orient.FIRST_ORIENT_SLOT + a - RESERVE_OMARKET, False
    if a < BUY_OMARKET:
        return MOVE_RESERVE_DECK, 3 + a - RESERVE_ODECK, False
    if a < BUY_DG_MARKET:
        return MOVE_BUY_SLOT, orient.FIRST_ORIENT_SLOT + a - BUY_OMARKET, False
    if a < BUY_DG_RESERVED:
        return MOVE_BUY_SLOT, a - BUY_DG_MARKET, True
    return MOVE_BUY_RESERVED, a - BUY_DG_RESERVED, True


@njit(cache=True, inline="always")
def _occupied(s: np.ndarray, mods: int, m: int, p: int) -> bool:
    """Strongholds hook: another seat's stronghold stands on market slot ``m``."""
    return (mods & MOD_STRONGHOLDS) != 0 and strongholds.blocked(s, m, p)


@njit(cache=True, inline="always")
def _buy_reason(s: np.ndarray, mods: int, p: int, po: int, card: int, use_dg: bool) -> int:
    """Whether seat ``p`` may buy ``card``: coloured tokens then gold (base game); in a module game
    the Orient's purchase conditions, with the gold weight of the Trading Posts."""
    w = trading_posts.gold_weight(s, p) if mods & MOD_TRADING_POSTS else 1
    if (mods & MOD_ORIENT) == 0:  # base cards only, and no double-gold card to spend
        if use_dg:
            return R_NO_DOUBLE_GOLD
        return OK if can_afford(s, po, card, w) else R_CANNOT_AFFORD
    has_dg = use_dg and (mods & MOD_ORIENT) != 0 and orient.double_gold_card(s, p) >= 0
    return orient.buy_reason(s, p, po, card, use_dg, w, has_dg, has_bonus(s, po))


@njit(cache=True)
def _main_reason(s: np.ndarray, a: int, p: int, po: int, mods: int) -> int:
    """Reason code for a main action other than pass (base ids 0-59 or the Orient's)."""
    if a < TAKE2_SAME:
        return _take_distinct_reason(s, a, available_colours(s))
    if a < RESERVE_MARKET:
        return _take_same_reason(s, a - TAKE2_SAME)
    kind, i, dg = _main_move(a)
    if kind == MOVE_RESERVE_SLOT:
        if reserved_count(s, po) >= MAX_RESERVED:
            return R_RESERVE_FULL
        if s[slot_addr(i)] < 0:
            return R_EMPTY_SLOT
        return R_OCCUPIED if _occupied(s, mods, i, p) else OK
    if kind == MOVE_RESERVE_DECK:
        if reserved_count(s, po) >= MAX_RESERVED:
            return R_RESERVE_FULL
        return R_EMPTY_DECK if s[deck_count_addr(i)] == 0 else OK
    if kind == MOVE_BUY_SLOT:
        card = s[slot_addr(i)]
        if card < 0:
            return R_EMPTY_SLOT
        if _occupied(s, mods, i, p):
            return R_OCCUPIED
        return _buy_reason(s, mods, p, po, card, dg)
    card = s[po + P_RESERVED + i]
    if card < 0:
        return R_NO_RESERVED_CARD
    return _buy_reason(s, mods, p, po, card, dg)


@njit(cache=True)
def _any_main_action(s: np.ndarray, p: int, po: int, mods: int) -> bool:
    for a in range(DISCARD):
        if _main_reason(s, a, p, po, mods) == OK:
            return True
    if mods & MOD_ORIENT:
        for a in range(RESERVE_OMARKET, ORIENT_MAIN_END):
            if _main_reason(s, a, p, po, mods) == OK:
                return True
    return False


@njit(cache=True)
def _module_reason(s: np.ndarray, a: int, p: int, po: int, mods: int, phase: int) -> int:
    """Reason code for an id of a module's blocks: module on, then the phase it answers, then its file."""
    if a < _TP_FIRST:
        if (mods & MOD_CITIES) == 0:
            return R_MODULE_OFF
        if phase != PHASE_CITY:
            return R_WRONG_PHASE
        return cities.reason(s, a, p, po)
    if a < _ORIENT_FIRST:
        if (mods & MOD_TRADING_POSTS) == 0:
            return R_MODULE_OFF
        if not (PHASE_FIRST_ID[phase] <= a < PHASE_END_ID[phase]):
            return R_WRONG_PHASE
        return trading_posts.reason(s, a, p, po, phase)
    if a < _SH_FIRST:
        if a < ORIENT_MAIN_END:
            if phase != PHASE_MAIN:
                return R_NOT_MAIN_PHASE
            if (mods & MOD_ORIENT) == 0:
                return R_MODULE_OFF
            return _main_reason(s, a, p, po, mods)
        if (mods & MOD_ORIENT) == 0:
            return R_MODULE_OFF
        if not (PHASE_FIRST_ID[phase] <= a < PHASE_END_ID[phase]):
            return R_WRONG_PHASE
        if phase == PHASE_PAIR_TARGET:
            return orient.pair_target_reason(s, a, p)
        if phase == PHASE_FREE_CARD:
            m = a - FREE_CARD
            return orient.free_card_reason(s, po, m, _occupied(s, mods, m, p))
        return orient.sacrifice_reason(s, p, a - SACRIFICE)
    if (mods & MOD_STRONGHOLDS) == 0:
        return R_MODULE_OFF
    if not (PHASE_FIRST_ID[phase] <= a < PHASE_END_ID[phase]):
        return R_WRONG_PHASE
    if phase == PHASE_STRONGHOLD:
        return strongholds.reason(s, a, p)
    i = a - CONQUEST
    if i == 0:
        return OK
    m = strongholds.conquest_slot(s, p)
    if m < 0:
        return R_NOT_AN_OPTION
    return _buy_reason(s, mods, p, po, s[slot_addr(m)], i == 2)


@njit(cache=True)
def illegal_reason(s: np.ndarray, a: int) -> int:
    """0 if action ``a`` is legal in state ``s``, else a reason code (see REASONS)."""
    phase = s[PHASE]
    if phase == PHASE_GAME_OVER or phase == PHASE_TRUNCATED:
        return R_GAME_OVER
    mods = s[MODULES]
    p = s[CURRENT]
    po = player_offset(p)
    if a < DISCARD:
        if phase != PHASE_MAIN:
            return R_NOT_MAIN_PHASE
        return _main_reason(s, a, p, po, mods)
    if a < CHOOSE_NOBLE:
        if phase != PHASE_DISCARD:
            return R_NOT_DISCARD_PHASE
        return R_NO_TOKEN if s[po + P_TOKENS + a - DISCARD] == 0 else OK
    if a < PASS:
        if phase != PHASE_NOBLE:
            return R_NOT_NOBLE_PHASE
        k = a - CHOOSE_NOBLE
        if not noble_on_offer(s, k):
            return R_NO_NOBLE
        return OK if meets_noble(s, po, s[NOBLE_ID + k]) else R_NOBLE_NOT_MET
    if a == PASS:
        if phase != PHASE_MAIN:
            return R_NOT_MAIN_PHASE
        return R_PASS_NOT_ALLOWED if _any_main_action(s, p, po, mods) else OK
    if mods == 0:
        return R_MODULE_OFF
    return _module_reason(s, a, p, po, mods, phase)


@njit(cache=True, inline="always")
def _token_mask(s: np.ndarray, mask: np.ndarray) -> int:
    """Mark the legal token takes (ids 0 to TAKE2_SAME+4); returns how many."""
    n = 0
    avail = available_colours(s)
    for a in range(TAKE2_SAME):
        if _take_distinct_reason(s, a, avail) == OK:
            mask[a] = 1
            n += 1
    for c in range(5):
        if _take_same_reason(s, c) == OK:
            mask[TAKE2_SAME + c] = 1
            n += 1
    return n


@njit(cache=True, inline="always")
def _main_mask(s: np.ndarray, p: int, po: int, mods: int, mask: np.ndarray) -> int:
    """The legal main actions: the rules of :func:`_main_reason`, with the buyer's facts (gold weight,
    double-gold card, bonus, reserve count, colours in the bank) computed once and whole blocks
    skipped when they cannot apply (no Orient, no double-gold card held)."""
    n = _token_mask(s, mask)
    sh = (mods & MOD_STRONGHOLDS) != 0
    orient_on = (mods & MOD_ORIENT) != 0
    can_reserve = reserved_count(s, po) < MAX_RESERVED
    if can_reserve:
        for m in range(BASE_SLOTS):
            if s[MARKET + m] >= 0 and not (sh and strongholds.blocked(s, m, p)):
                mask[RESERVE_MARKET + m] = 1
                n += 1
        for d in range(3):
            if s[deck_count_addr(d)] > 0:
                mask[RESERVE_DECK + d] = 1
                n += 1
    w = trading_posts.gold_weight(s, p) if mods & MOD_TRADING_POSTS else 1
    if not orient_on:  # base cards only: coloured tokens, then gold at its weight
        for m in range(BASE_SLOTS):
            card = s[MARKET + m]
            if card >= 0 and not (sh and strongholds.blocked(s, m, p)) and can_afford(s, po, card, w):
                mask[BUY_MARKET + m] = 1
                n += 1
        for r in range(MAX_RESERVED):
            card = s[po + P_RESERVED + r]
            if card >= 0 and can_afford(s, po, card, w):
                mask[BUY_RESERVED + r] = 1
                n += 1
        return n
    # The Orient's purchase rule, with every buyer's fact read once; each card's check then reads
    # only the card tables (and both variants, with and without a double-gold card, at once).
    bonus = has_bonus(s, po)
    has_dg = orient.double_gold_card(s, p) >= 0
    power = buying_power(s, po)
    gold = s[po + P_TOKENS + 5]
    held = orient.cards_held(s, p, po)
    for m in range(ALL_SLOTS):
        card = s[slot_addr(m)]
        if card < 0 or (sh and strongholds.blocked(s, m, p)):
            continue
        plain, dg = orient.purchase_reasons(card, w, has_dg, bonus, power, gold, held)
        if plain == OK:
            mask[BUY_MARKET + m if m < BASE_SLOTS else BUY_OMARKET + m - BASE_SLOTS] = 1
            n += 1
        if dg == OK:
            mask[BUY_DG_MARKET + m] = 1
            n += 1
    for r in range(MAX_RESERVED):
        card = s[po + P_RESERVED + r]
        if card < 0:
            break
        plain, dg = orient.purchase_reasons(card, w, has_dg, bonus, power, gold, held)
        if plain == OK:
            mask[BUY_RESERVED + r] = 1
            n += 1
        if dg == OK:
            mask[BUY_DG_RESERVED + r] = 1
            n += 1
    if can_reserve:
        for k in range(ALL_SLOTS - BASE_SLOTS):
            m = BASE_SLOTS + k
            if s[slot_addr(m)] >= 0 and not (sh and strongholds.blocked(s, m, p)):
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

    The blocks with many ids are walked only where an answer can be (the
    module files' own masks); the others ask :func:`illegal_reason` per id.
    """
    if phase == PHASE_STRONGHOLD:
        return strongholds.decision_mask(s, p, mask)
    if phase == PHASE_SACRIFICE_CHOICE or phase == PHASE_PAIR_TARGET:
        return orient.decision_mask(s, phase, p, mask)
    n = 0
    if phase == PHASE_FREE_CARD:  # only the owed level's face-up slots can answer: 4 base, 2 Orient
        mods = s[MODULES]
        lvl = s[PD_FREE_LEVEL]
        for k in range(MARKET_SLOTS + ORIENT_SLOTS):
            m = level_slot(lvl, k)
            if orient.free_card_reason(s, po, m, _occupied(s, mods, m, p)) == OK:
                mask[FREE_CARD + m] = 1
                n += 1
        return n
    for a in range(PHASE_FIRST_ID[phase], PHASE_END_ID[phase]):
        if illegal_reason(s, a) == OK:
            mask[a] = 1
            n += 1
    return n


@njit(cache=True)
def legal_mask(s: np.ndarray, mask: np.ndarray) -> int:
    """Fill ``mask`` (int8, NUM_ACTIONS; NUM_ACTIONS_ALL with modules) with 1 for legal actions; returns how many."""
    mods = s[MODULES]
    end = NUM_ACTIONS if mods == 0 else NUM_ACTIONS_ALL
    for a in range(end):
        mask[a] = 0
    phase = s[PHASE]
    if phase == PHASE_GAME_OVER or phase == PHASE_TRUNCATED:
        return 0
    p = s[CURRENT]
    po = player_offset(p)
    if phase == PHASE_MAIN:
        n = _main_mask(s, p, po, mods, mask)
        if n == 0:
            mask[PASS] = 1
            n = 1
        return n
    return _decision_mask(s, phase, p, po, mask)


@njit(cache=True, inline="always")
def legal_mask_after(s: np.ndarray, mask: np.ndarray, scratch: np.ndarray) -> int:
    """:func:`legal_mask` right after :func:`apply_action_with` lent ``scratch`` (``int8[NUM_ACTIONS_ALL
    + 1]``): when the turn stopped at a module decision, the pipeline has just computed that
    decision's mask (to see whether it has more than one option) and it is copied, not computed
    again. A stronghold action follows every purchase in a Strongholds game."""
    if scratch.shape[0] > NUM_ACTIONS_ALL and scratch[NUM_ACTIONS_ALL] == 1:
        phase = s[PHASE]
        # Unsigned ids: with signed ones numba checks every byte of the copy for a negative index
        # (the 360-id stronghold block then took about 500 ns to copy).
        lo = np.uint64(PHASE_FIRST_ID[phase])
        hi = np.uint64(PHASE_END_ID[phase])
        for a in range(NUM_ACTIONS_ALL):
            mask[a] = 0
        n = 0
        for a in range(lo, hi):
            mask[a] = scratch[a]
            n += scratch[a]
        return n
    return legal_mask(s, mask)


# ---------------------------------------------------------------------------
# Applying actions


@njit(cache=True, inline="always")
def _take_from_slot(s: np.ndarray, m: int, mods: int) -> int:
    """Take the card of market slot ``m``. A base game refills the slot at once; a module game
    sends the card's strongholds home and refills after the turn's effects (a free card may be
    taken from the market first)."""
    if mods == 0:
        card = s[MARKET + m]
        s[MARKET + m] = draw_card(s, m // MARKET_SLOTS)
        return card
    addr = slot_addr(m)
    card = s[addr]
    s[addr] = -1
    if mods & MOD_STRONGHOLDS:
        strongholds.send_home(s, m)
    s[PD_REFILL] |= 1 << m
    return card


@njit(cache=True, inline="always")
def _refill_pending(s: np.ndarray) -> None:
    """Refill every emptied market slot from its own deck (base or Orient), in slot order."""
    bits = s[PD_REFILL]
    if bits == 0:
        return
    for m in range(ALL_SLOTS):
        if (bits >> m) & 1:
            s[slot_addr(m)] = draw_from(s, slot_deck(m))
    s[PD_REFILL] = 0


@njit(cache=True, inline="always")
def _gain(s: np.ndarray, p: int, po: int, card: int, mods: int) -> None:
    """Seat ``p`` takes ``card`` (bought or free); an Orient card records its effect."""
    gain_card(s, p, po, card)
    if mods & MOD_ORIENT:
        orient.on_gain(s, card)


@njit(cache=True, inline="always")
def _purchase(s: np.ndarray, p: int, po: int, card: int, use_dg: bool, mods: int) -> None:
    """A purchase (main action or conquest): pay, take, and record what it triggers."""
    if mods == 0:
        pay(s, po, card, 1, 0)
        gain_card(s, p, po, card)
        return
    if (mods & MOD_ORIENT) and orient.is_sacrifice(card):
        orient.start_sacrifice(s, card)
    else:
        w = trading_posts.gold_weight(s, p) if mods & MOD_TRADING_POSTS else 1
        virtual = orient.spend_double_gold(s, p, po) if use_dg else 0
        pay(s, po, card, w, virtual)
    _gain(s, p, po, card, mods)
    if mods & MOD_TRADING_POSTS:
        trading_posts.after_purchase(s, p)
    if mods & MOD_STRONGHOLDS:
        strongholds.after_purchase(s)


@njit(cache=True, inline="always")
def _apply_main(s: np.ndarray, a: int, p: int, po: int, mods: int) -> None:
    if mods:
        clear_pending(s)
    if a == PASS:
        s[PASSES] += 1
        if mods:
            s[PD_CONQ] = 1  # never a conquest after a pass
        return
    s[PASSES] = 0
    if a < TAKE2_SAME:
        bits = TAKE_DISTINCT_MASKS[a]
        for c in range(5):
            if bits & (1 << c):
                s[BANK + c] -= 1
                s[po + P_TOKENS + c] += 1
        return
    if a < RESERVE_MARKET:
        c = a - TAKE2_SAME
        s[BANK + c] -= 2
        s[po + P_TOKENS + c] += 2
        if mods & MOD_TRADING_POSTS:
            trading_posts.after_take_two(s, p, c)
        return
    kind, i, dg = _main_move(a)
    if kind == MOVE_RESERVE_SLOT:
        reserve(s, po, _take_from_slot(s, i, mods), False)
    elif kind == MOVE_RESERVE_DECK:
        if mods & MOD_TRADING_POSTS:
            trading_posts.reserve_blind(s, p, po, i)
        else:
            reserve(s, po, draw_from(s, i), True)
    elif kind == MOVE_BUY_SLOT:
        _purchase(s, p, po, _take_from_slot(s, i, mods), dg, mods)
    else:
        card = s[po + P_RESERVED + i]
        remove_reserved(s, po, i)
        _purchase(s, p, po, card, dg, mods)


@njit(cache=True, inline="always")
def next_pending_phase(s: np.ndarray) -> int:
    """The next module effect to settle, in rule order, as the phase that decides it; -1 if none.

    Shared: the snapshots check a module game's phase against the engine's own order of
    pending effects (:mod:`splendor_env.snapshot`).
    """
    ph = trading_posts.drawn_phase(s)
    if ph < 0:
        ph = orient.pending_phase(s)
    if ph < 0:
        ph = trading_posts.pending_phase(s)
    if ph < 0:
        ph = strongholds.pending_phase(s)
    return ph


@njit(cache=True)
def _resolve(s: np.ndarray, a: int, p: int, po: int, phase: int, mods: int) -> None:
    """Apply the answer to a pending effect (a legal id of the current phase's block)."""
    if phase == PHASE_STRONGHOLD:
        strongholds.resolve(s, a, p)
    elif phase == PHASE_FREE_CARD:
        s[PD_FREE_LEVEL] = -1
        _gain(s, p, po, _take_from_slot(s, a - FREE_CARD, mods), mods)
    elif phase == PHASE_SACRIFICE_CHOICE or phase == PHASE_PAIR_TARGET:
        orient.resolve(s, a, p, po, phase)
    else:
        trading_posts.resolve(s, a, po, phase)


@njit(cache=True)
def _drop(s: np.ndarray, phase: int) -> None:
    """A pending effect with no possible option lapses (e.g. no token left in the bank)."""
    if phase == PHASE_STRONGHOLD:
        s[PD_SH] = 0
    else:
        orient.drop(s, phase)
        trading_posts.drop(s, phase)


@njit(cache=True, inline="always")
def _effects(s: np.ndarray, p: int, po: int, mods: int, scratch: np.ndarray) -> bool:
    """The main action's module effects, the refill and the conquest offer; True at a real decision.

    A decision with no option lapses; one with a single option (for a
    sacrifice: no more candidates than cards still to discard) is settled by
    the engine, as the rules leave the player no choice.
    """
    while True:
        ph = next_pending_phase(s)
        if ph < 0:
            break
        s[PHASE] = ph
        lo = PHASE_FIRST_ID[ph]
        hi = PHASE_END_ID[ph]
        if scratch.shape[0] < NUM_ACTIONS_ALL:  # the caller lent none: allocate when a decision comes up
            scratch = np.zeros(NUM_ACTIONS_ALL, dtype=np.int8)
        else:
            scratch[lo:hi] = 0
        n = _decision_mask(s, ph, p, po, scratch)
        limit = s[PD_SAC_LEFT] if ph == PHASE_SACRIFICE_CHOICE else 1
        if n == 0:
            _drop(s, ph)
        elif n <= limit:  # settled alone: the last option (for a sacrifice, each in turn from the last)
            last = np.uint64(hi - 1)  # unsigned: no negative-index check on each byte scanned
            while scratch[last] == 0:
                last -= np.uint64(1)
            _resolve(s, int(last), p, po, ph, mods)
        else:
            if scratch.shape[0] > NUM_ACTIONS_ALL:
                scratch[NUM_ACTIONS_ALL] = 1  # scratch[lo:hi] is this decision's mask: see legal_mask_after
            return True
    _refill_pending(s)
    if s[PD_CONQ] == 0:
        s[PD_CONQ] = 1
        if (mods & MOD_STRONGHOLDS) and strongholds.conquest_slot(s, p) >= 0:
            s[PHASE] = PHASE_CONQUEST
            if illegal_reason(s, CONQUEST + 1) == OK or illegal_reason(s, CONQUEST + 2) == OK:
                return True
    return False


@njit(cache=True)
def score_game(s: np.ndarray) -> None:
    """Mark the winners: most prestige, then fewest purchased cards, else shared.

    With Cities, only players holding a city can win (if anyone holds one).
    """
    n = s[N_PLAYERS]
    best_pts = -1
    best_cards = 1 << 30
    holders = 0
    if s[MODULES] & MOD_CITIES:
        holders = cities.holders(s, n)
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


@njit(cache=True, inline="always")
def _end_turn(s: np.ndarray) -> None:
    """Game-end check and hand-over to the next seat (with Cities, a claimed city starts the last round)."""
    n = s[N_PLAYERS]
    p = s[CURRENT]
    if s[player_offset(p) + P_PRESTIGE] >= WINNING_PRESTIGE and (s[MODULES] & MOD_CITIES) == 0:
        s[FINAL_ROUND] = 1
    s[TURN] += 1
    if s[PASSES] >= n or (s[FINAL_ROUND] == 1 and p == n - 1):
        s[PHASE] = PHASE_GAME_OVER
        score_game(s)
        return
    if s[TURN] >= s[MAX_TURNS]:
        s[PHASE] = PHASE_TRUNCATED
        return
    s[CURRENT] = (p + 1) % n
    s[PHASE] = PHASE_MAIN


@njit(cache=True)
def _finish_turn(s: np.ndarray, stage: int, scratch: np.ndarray) -> None:
    """Work through the rest of the turn from ``stage`` until a real decision or the next turn.

    Stages in rule order: the main action's effects (modules only), the token
    limit, nobles, trading posts, cities, game end. A module game records the
    stage it stopped at in ``PD_STAGE``.
    """
    p = s[CURRENT]
    po = player_offset(p)
    mods = s[MODULES]
    while True:
        if stage == STAGE_EFFECTS:
            if mods and _effects(s, p, po, mods, scratch):
                break
            stage = STAGE_TOKEN_LIMIT
        elif stage == STAGE_TOKEN_LIMIT:
            if token_total(s, po) > TOKEN_LIMIT:
                s[PHASE] = PHASE_DISCARD
                break
            stage = STAGE_NOBLES
        elif stage == STAGE_NOBLES:
            count = 0
            only = -1
            for k in range(NOBLE_SLOTS):
                if noble_on_offer(s, k) and meets_noble(s, po, s[NOBLE_ID + k]):
                    count += 1
                    only = k
            if count > 1:
                s[PHASE] = PHASE_NOBLE
                break
            if count == 1:
                take_noble(s, p, po, only)
            stage = STAGE_TRADING_POSTS
        elif stage == STAGE_TRADING_POSTS:
            if (mods & MOD_TRADING_POSTS) and trading_posts.end_of_turn(s, p, po):
                break
            stage = STAGE_CITIES
        elif stage == STAGE_CITIES:
            if (mods & MOD_CITIES) and cities.end_of_turn(s, p, po):
                break
            stage = STAGE_END
        else:
            _end_turn(s)
            stage = STAGE_EFFECTS
            break
    if mods:
        s[PD_STAGE] = stage


@njit(cache=True)
def apply_action(s: np.ndarray, a: int) -> None:
    """Play legal action ``a`` for the player on move (the caller checks legality), then the rest
    of the turn: the stage after the decision just answered, to the next decision."""
    apply_action_with(s, a, np.zeros(0, dtype=np.int8))


@njit(cache=True)
def apply_action_with(s: np.ndarray, a: int, scratch: np.ndarray) -> None:
    """:func:`apply_action` with a lent ``int8[NUM_ACTIONS_ALL]`` work buffer (its contents are
    overwritten), so a batched step allocates nothing per game. A buffer one byte longer also
    records whether the turn stopped at a decision whose mask it holds (:func:`legal_mask_after`)."""
    if scratch.shape[0] > NUM_ACTIONS_ALL:
        scratch[NUM_ACTIONS_ALL] = 0
    p = s[CURRENT]
    po = player_offset(p)
    phase = s[PHASE]
    mods = s[MODULES]
    stage = STAGE_EFFECTS
    if phase == PHASE_MAIN:
        _apply_main(s, a, p, po, mods)
    elif phase == PHASE_DISCARD:
        c = a - DISCARD
        s[po + P_TOKENS + c] -= 1
        s[BANK + c] += 1
        stage = STAGE_TOKEN_LIMIT
    elif phase == PHASE_NOBLE:
        take_noble(s, p, po, a - CHOOSE_NOBLE)
        stage = STAGE_TRADING_POSTS
    elif phase == PHASE_TRADING_POST_CHOICE:
        trading_posts.take(s, p, po, a - CHOOSE_TRADING_POST)
        stage = STAGE_CITIES
    elif phase == PHASE_CITY:
        cities.take(s, p, a - CHOOSE_CITY)
        stage = STAGE_END
    elif phase == PHASE_CONQUEST:
        i = a - CONQUEST
        if i > 0:
            _purchase(s, p, po, _take_from_slot(s, strongholds.conquest_slot(s, p), mods), i == 2, mods)
    else:
        _resolve(s, a, p, po, phase, mods)
    _finish_turn(s, stage, scratch)


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
