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
from .cards import CARD_COLOUR, CARD_POINTS, COLOURS, NOBLE_REQ, TOKEN_COLOURS

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

#: Colour bitmask (bit c = colour c) for each "take different colours" id 0..24.
TAKE_DISTINCT_MASKS = np.array(
    [sum(1 << c for c in cs) for cs in TAKE3_SETS]
    + [sum(1 << c for c in cs) for cs in TAKE2_SETS]
    + [1 << c for c in range(5)],
    dtype=np.int32,
)


def block_of(action: int) -> tuple[str, int]:
    """The block name and the offset inside it for an action id."""
    for name, first, size in BLOCKS:
        if first <= action < first + size:
            return name, action - first
    raise ValueError(f"action id {action} is outside 0..{NUM_ACTIONS - 1}")


def action_table() -> str:
    """The action table as aligned text (printed in the README)."""
    lines = [f"{'block':<18} {'ids':>9}  size"]
    for name, first, size in BLOCKS:
        ids = f"{first}" if size == 1 else f"{first}-{first + size - 1}"
        lines.append(f"{name:<18} {ids:>9}  {size:>4}")
    lines.append(f"{'total':<18} {'':>9}  {NUM_ACTIONS:>4}")
    return "\n".join(lines)


def describe(action: int, state: np.ndarray | None = None) -> str:
    """Describe an action id in words; with a state, name the card involved.

    ``describe(47, s)`` -> ``"buy market card L1 slot 3 (red, 1 pt)"``.
    """
    name, i = block_of(int(action))

    def card_words(card: int) -> str:
        if card < 0:
            return "empty"
        pts = int(CARD_POINTS[card])
        return f"{COLOURS[CARD_COLOUR[card]]}, {pts} pt{'s' if pts != 1 else ''}"

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
