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

import numpy as np

from . import state as st
from .action_ids import (  # noqa: F401 - the ids are part of this module's API
    BLOCKS,
    BUY_DG_MARKET,
    BUY_DG_RESERVED,
    BUY_MARKET,
    BUY_OMARKET,
    BUY_RESERVED,
    CHOOSE_CITY,
    CHOOSE_NOBLE,
    CHOOSE_TRADING_POST,
    CONQUEST,
    CONQUEST_BUY,
    CONQUEST_BUY_DG,
    CONQUEST_DECLINE,
    DISCARD,
    FREE_CARD,
    KEEP_DRAWN,
    MODULE_BLOCKS,
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
    TAKE1,
    TAKE2_DIFF,
    TAKE2_SAME,
    TAKE2_SETS,
    TAKE3,
    TAKE3_SETS,
    TAKE_DISTINCT_MASKS,
    TP_EXTRA_TOKEN,
    TP_TOKEN,
    block_of,
    num_actions,
)
from .cards import (
    ALL_CARD_EFFECT,
    ALL_CARD_POINTS,
    COLOURS,
    EFFECTS,
    NOBLE_REQ,
    TOKEN_COLOURS,
    colour_name,
)
from .layout import NUM_ACTIONS, NUM_ACTIONS_ALL
from .modules import cities, orient, strongholds, trading_posts


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
