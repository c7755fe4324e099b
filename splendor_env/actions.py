"""The one action table: a fixed ``Discrete(NUM_ACTIONS)`` laid out as blocks.

The same ids are used for 2, 3 and 4 players and in every phase; the legality
mask says which are allowed right now. Blocks are only ever appended (the
Cities of Splendor modules add theirs after ``PASS``), so a base-game id never
moves.

=====================  ======  =====  ===============================================
block                  first   size   meaning of the offset ``i`` inside the block
=====================  ======  =====  ===============================================
take 3 different         0      10    ``TAKE3_SETS[i]``: 3 colours, lexicographic
take 2 different        10      10    ``TAKE2_SETS[i]``: 2 colours (only if 2 available)
take 1                  20       5    colour ``i`` (only if at most 2 available)
take 2 same             25       5    colour ``i`` (bank holds >= 4 of it)
reserve market card     30      12    level ``i // 4``, slot ``i % 4``
reserve deck top        42       3    level ``i`` (blind)
buy market card         45      12    level ``i // 4``, slot ``i % 4``
buy reserved card       57       3    own reserve slot ``i``
discard one token       60       6    colour ``i`` (gold = 5), one token per decision
choose noble            66       5    noble offer slot ``i``
pass                    71       1    only when no other action is legal
=====================  ======  =====  ===============================================

Colours are numbered white 0, blue 1, green 2, red 3, black 4, gold 5.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from . import state as st
from .cards import (
    ALL_CARD_EFFECT,
    ALL_CARD_POINTS,
    COLOURS,
    EFFECTS,
    NOBLE_REQ,
    TOKEN_COLOURS,
    colour_name,
)
from .layout import ACTION_BLOCKS, ACTION_OFFSETS, ALL_SLOTS, NUM_ACTIONS, NUM_ACTIONS_ALL, first_id

TAKE3_SETS = np.array(list(combinations(range(5), 3)), dtype=np.int32)
TAKE2_SETS = np.array(list(combinations(range(5), 2)), dtype=np.int32)

#: (name, first id, size) for every base block, in id order (derived from :mod:`splendor_env.layout`).
BLOCKS: tuple[tuple[str, int, int], ...] = tuple(
    (name, ACTION_OFFSETS[name][0], size) for name, size, owner in ACTION_BLOCKS if owner == "base"
)
#: (name, first id, size, module) for the Cities of Splendor blocks, in id order.
MODULE_BLOCKS: tuple[tuple[str, int, int, str], ...] = tuple(
    (name, ACTION_OFFSETS[name][0], size, owner) for name, size, owner in ACTION_BLOCKS if owner != "base"
)

TAKE3 = first_id("take_3_different")
TAKE2_DIFF = first_id("take_2_different")
TAKE1 = first_id("take_1")
TAKE2_SAME = first_id("take_2_same")
RESERVE_MARKET = first_id("reserve_market")
RESERVE_DECK = first_id("reserve_deck")
BUY_MARKET = first_id("buy_market")
BUY_RESERVED = first_id("buy_reserved")
DISCARD = first_id("discard")
CHOOSE_NOBLE = first_id("choose_noble")
PASS = first_id("pass")

NUM_SLOTS = ALL_SLOTS  # market slots in the module ids: 12 base + 6 Orient

CHOOSE_CITY = first_id("choose_city")
CHOOSE_TRADING_POST = first_id("choose_trading_post")
TP_TOKEN = first_id("trading_post_token")
TP_EXTRA_TOKEN = first_id("trading_post_extra_token")
KEEP_DRAWN = first_id("keep_drawn_card")
RESERVE_OMARKET = first_id("reserve_orient_market")
RESERVE_ODECK = first_id("reserve_orient_deck")
BUY_OMARKET = first_id("buy_orient_market")
BUY_DG_MARKET = first_id("buy_market_double_gold")
BUY_DG_RESERVED = first_id("buy_reserved_double_gold")
PAIR_TARGET = first_id("pair_target")
FREE_CARD = first_id("free_card")
SACRIFICE = first_id("sacrifice_discard")
SH_PLACE = first_id("stronghold_place")
SH_MOVE = first_id("stronghold_move")
SH_REMOVE = first_id("stronghold_remove")
CONQUEST = first_id("conquest")
#: Conquest offsets: decline, buy, buy spending a double-gold card.
CONQUEST_DECLINE = 0
CONQUEST_BUY = 1
CONQUEST_BUY_DG = 2

#: Colour bitmask (bit c = colour c) for each "take different colours" id 0..24.
TAKE_DISTINCT_MASKS = np.array(
    [sum(1 << c for c in cs) for cs in TAKE3_SETS]
    + [sum(1 << c for c in cs) for cs in TAKE2_SETS]
    + [1 << c for c in range(5)],
    dtype=np.int32,
)


def num_actions(modules: int) -> int:
    """Size of the action space: 72 for the base game, NUM_ACTIONS_ALL with any module."""
    return NUM_ACTIONS if modules == 0 else NUM_ACTIONS_ALL


def block_of(action: int) -> tuple[str, int]:
    """The block name and the offset inside it for an action id."""
    for name, first, size in BLOCKS:
        if first <= action < first + size:
            return name, action - first
    for name, first, size, _ in MODULE_BLOCKS:
        if first <= action < first + size:
            return name, action - first
    raise ValueError(f"action id {action} is outside 0..{NUM_ACTIONS_ALL - 1}")


def action_table(modules: bool = False) -> str:
    """The action table as aligned text (printed in the README).

    ``modules=True`` gives the Cities of Splendor blocks appended after id 71.
    """
    if not modules:
        lines = [f"{'block':<18} {'ids':>9}  size"]
        for name, first, size in BLOCKS:
            ids = f"{first}" if size == 1 else f"{first}-{first + size - 1}"
            lines.append(f"{name:<18} {ids:>9}  {size:>4}")
        lines.append(f"{'total':<18} {'':>9}  {NUM_ACTIONS:>4}")
        return "\n".join(lines)
    lines = [f"{'block':<26} {'ids':>9}  size  module"]
    for name, first, size, module in MODULE_BLOCKS:
        lines.append(f"{name:<26} {f'{first}-{first + size - 1}':>9}  {size:>4}  {module}")
    lines.append(f"{'total with the base ids':<26} {'':>9}  {NUM_ACTIONS_ALL:>4}")
    return "\n".join(lines)


def _slot_words(m: int) -> str:
    if m < 12:
        return f"market card L{m // 4 + 1} slot {m % 4 + 1}"
    return f"Orient market card L{(m - 12) // 2 + 1} slot {(m - 12) % 2 + 1}"


def describe(action: int, state: np.ndarray | None = None) -> str:
    """Describe an action id in words; with a state, name the card involved.

    ``describe(47, s)`` -> ``"buy market card L1 slot 3 (red, 1 pt)"``.
    """
    name, i = block_of(int(action))

    def card_words(card: int) -> str:
        if card < 0:
            return "empty"
        pts = int(ALL_CARD_POINTS[card])
        text = f"{colour_name(card)}, {pts} pt{'s' if pts != 1 else ''}"
        if ALL_CARD_EFFECT[card]:
            text += f", {EFFECTS[ALL_CARD_EFFECT[card]]}"
        return text

    if name not in {b[0] for b in BLOCKS}:
        return _describe_module(name, i, state, card_words)

    if name == "take_3_different":
        return "take " + ", ".join(f"1 {COLOURS[c]}" for c in TAKE3_SETS[i])
    if name == "take_2_different":
        return "take " + ", ".join(f"1 {COLOURS[c]}" for c in TAKE2_SETS[i])
    if name == "take_1":
        return f"take 1 {COLOURS[i]}"
    if name == "take_2_same":
        return f"take 2 {COLOURS[i]}"
    if name in ("reserve_market", "buy_market"):
        verb = "reserve" if name == "reserve_market" else "buy"
        text = f"{verb} market card L{i // 4 + 1} slot {i % 4 + 1}"
        if state is not None:
            text += f" ({card_words(int(state[st.MARKET + i]))})"
        return text
    if name == "reserve_deck":
        return f"reserve top of L{i + 1} deck (blind)"
    if name == "buy_reserved":
        text = f"buy reserved card slot {i + 1}"
        if state is not None:
            card = int(state[st.player_offset(int(state[st.CURRENT])) + st.P_RESERVED + i])
            text += f" ({card_words(card)})"
        return text
    if name == "discard":
        return f"discard 1 {TOKEN_COLOURS[i]}"
    if name == "choose_noble":
        text = f"choose noble slot {i + 1}"
        if state is not None and state[st.NOBLE_ID + i] >= 0:
            req = NOBLE_REQ[int(state[st.NOBLE_ID + i])]
            text += " (" + " ".join(f"{n} {COLOURS[c]}" for c, n in enumerate(req) if n) + ")"
        return text
    return "pass"


#: The module owning each module block (its file describes the block's ids).
_MODULE_OF_BLOCK = {name: module for name, _, _, module in MODULE_BLOCKS}


def _describe_module(name: str, i: int, state: np.ndarray | None, card_words) -> str:
    """Words for the Cities of Splendor ids: each module file describes its own blocks."""
    from .modules import cities, orient, strongholds, trading_posts

    with_modules = state is not None and len(state) == st.STATE_SIZE_ALL

    def slot_text(m: int) -> str:
        text = _slot_words(m)
        if with_modules:
            text += f" ({card_words(int(state[st.slot_addr(m)]))})"
        return text

    module = _MODULE_OF_BLOCK[name]
    if name == "buy_reserved_double_gold":
        text = f"buy reserved card slot {i + 1} spending a double-gold card"
        if state is not None:
            card = int(state[st.player_offset(int(state[st.CURRENT])) + st.P_RESERVED + i])
            text += f" ({card_words(card)})"
        return text
    if module == "cities":
        return cities.describe(name, i, state if with_modules else None)
    if module == "trading_posts":
        return trading_posts.describe(name, i, state if with_modules else None, card_words)
    if module == "orient":
        return orient.describe(name, i, slot_text)
    return strongholds.describe(name, i, slot_text)
