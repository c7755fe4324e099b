"""The action ids: every block's first id, as module constants (numba folds them in).

Why a file of their own: the module files under :mod:`splendor_env.modules`
name their own blocks' ids, and :mod:`splendor_env.actions` describes every id
in words by asking each module file; with the ids here, below both, the imports
go one way (``actions -> modules -> action_ids``). The table of blocks is in
:mod:`splendor_env.actions`; every name here is importable from there too.
All ids are derived from :data:`splendor_env.layout.ACTION_BLOCKS`.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

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
