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
    CITY_PRESTIGE,
    COLOURS,
    EFFECTS,
    NOBLE_REQ,
    NUM_ALL_CARDS,
    TOKEN_COLOURS,
    TRADING_POSTS,
    card_summary,
    colour_name,
)

TAKE3_SETS = np.array(list(combinations(range(5), 3)), dtype=np.int32)
TAKE2_SETS = np.array(list(combinations(range(5), 2)), dtype=np.int32)

#: (name, first id, size) for every block, in id order.
BLOCKS: tuple[tuple[str, int, int], ...] = (
    ("take_3_different", 0, 10),
    ("take_2_different", 10, 10),
    ("take_1", 20, 5),
    ("take_2_same", 25, 5),
    ("reserve_market", 30, 12),
    ("reserve_deck", 42, 3),
    ("buy_market", 45, 12),
    ("buy_reserved", 57, 3),
    ("discard", 60, 6),
    ("choose_noble", 66, 5),
    ("pass", 71, 1),
)

TAKE3 = 0
TAKE2_DIFF = 10
TAKE1 = 20
TAKE2_SAME = 25
RESERVE_MARKET = 30
RESERVE_DECK = 42
BUY_MARKET = 45
BUY_RESERVED = 57
DISCARD = 60
CHOOSE_NOBLE = 66
PASS = 71
NUM_ACTIONS = 72

NUM_SLOTS = 18  # market slots in the module ids: 12 base + 6 Orient

#: (name, first id, size, module) for the Cities of Splendor blocks, in id order.
MODULE_BLOCKS: tuple[tuple[str, int, int, str], ...] = (
    ("choose_city", 72, 3, "cities"),
    ("choose_trading_post", 75, 5, "trading_posts"),
    ("trading_post_token", 80, 5, "trading_posts"),
    ("trading_post_extra_token", 85, 5, "trading_posts"),
    ("keep_drawn_card", 90, 2, "trading_posts"),
    ("reserve_orient_market", 92, 6, "orient"),
    ("reserve_orient_deck", 98, 3, "orient"),
    ("buy_orient_market", 101, 6, "orient"),
    ("buy_market_double_gold", 107, NUM_SLOTS, "orient"),
    ("buy_reserved_double_gold", 125, 3, "orient"),
    ("pair_target", 128, NUM_ALL_CARDS, "orient"),
    ("free_card", 248, NUM_SLOTS, "orient"),
    ("sacrifice_discard", 266, NUM_ALL_CARDS, "orient"),
    ("stronghold_place", 386, NUM_SLOTS, "strongholds"),
    ("stronghold_move", 404, NUM_SLOTS * NUM_SLOTS, "strongholds"),
    ("stronghold_remove", 728, NUM_SLOTS, "strongholds"),
    ("conquest", 746, 3, "strongholds"),
)
CHOOSE_CITY = 72
CHOOSE_TRADING_POST = 75
TP_TOKEN = 80
TP_EXTRA_TOKEN = 85
KEEP_DRAWN = 90
RESERVE_OMARKET = 92
RESERVE_ODECK = 98
BUY_OMARKET = 101
BUY_DG_MARKET = 107
BUY_DG_RESERVED = 125
PAIR_TARGET = 128
FREE_CARD = 248
SACRIFICE = 266
SH_PLACE = 386
SH_MOVE = 404
SH_REMOVE = 728
CONQUEST = 746
NUM_ACTIONS_ALL = 749
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


def _describe_module(name: str, i: int, state: np.ndarray | None, card_words) -> str:
    """Words for the Cities of Splendor action ids."""

    def slot_text(m: int) -> str:
        text = _slot_words(m)
        if state is not None and len(state) == st.STATE_SIZE_ALL:
            text += f" ({card_words(int(state[st.slot_addr(m)]))})"
        return text

    if name == "choose_city":
        text = f"claim city slot {i + 1}"
        if state is not None and len(state) == st.STATE_SIZE_ALL and state[st.CITY_ID + i] >= 0:
            text += f" ({int(CITY_PRESTIGE[state[st.CITY_ID + i]])} prestige city)"
        return text
    if name == "choose_trading_post":
        return f"take trading post {i + 1} ({TRADING_POSTS[i]})"
    if name == "trading_post_token":
        return f"trading post: take 1 {COLOURS[i]} after buying"
    if name == "trading_post_extra_token":
        return f"trading post: take 1 extra {COLOURS[i]}"
    if name == "keep_drawn_card":
        text = f"keep the {'first' if i == 0 else 'second'} drawn card"
        if state is not None and len(state) == st.STATE_SIZE_ALL:
            card = int(state[st.PD_DRAWN0 + i])
            if card >= 0:
                text += f" ({card_words(card)})"
        return text
    if name in ("reserve_orient_market", "buy_orient_market"):
        verb = "reserve" if name.startswith("reserve") else "buy"
        return f"{verb} {slot_text(12 + i)}"
    if name == "reserve_orient_deck":
        return f"reserve top of Orient L{i + 1} deck (blind)"
    if name == "buy_market_double_gold":
        return f"buy {slot_text(i)} spending a double-gold card"
    if name == "buy_reserved_double_gold":
        text = f"buy reserved card slot {i + 1} spending a double-gold card"
        if state is not None:
            card = int(state[st.player_offset(int(state[st.CURRENT])) + st.P_RESERVED + i])
            text += f" ({card_words(card)})"
        return text
    if name == "pair_target":
        return f"attach the pair card to card {i} ({card_summary(i)})"
    if name == "free_card":
        return f"take {slot_text(i)} for free"
    if name == "sacrifice_discard":
        return f"sacrifice card {i} ({card_summary(i)})"
    if name == "stronghold_place":
        return f"place a stronghold on {slot_text(i)}"
    if name == "stronghold_move":
        src, dst = divmod(i, NUM_SLOTS)
        return f"move a stronghold from {_slot_words(src)} to {slot_text(dst)}"
    if name == "stronghold_remove":
        return f"remove the opponent's stronghold from {slot_text(i)}"
    return (
        "decline the conquest",
        "buy the conquered card",
        "buy the conquered card spending a double-gold card",
    )[i]
