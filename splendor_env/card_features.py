"""How a card is written into the observation: its numbers, from precomputed tables.

Every card id has a row of ``CARD_FEATURES`` numbers (present, blind, level
one-hot, colour one-hot, points, cost) and, for the module sections, a row of
``ORIENT_FEATURES`` extras (zero for base cards). A hidden card (another
seat's blind reserve) shows only ``present``, ``blind`` and its level. The
base observation and the module files both write cards with these functions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import (
    ALL_CARD_BONUS,
    ALL_CARD_COLOUR,
    ALL_CARD_COST,
    ALL_CARD_EFFECT,
    ALL_CARD_LEVEL,
    ALL_CARD_POINTS,
    ALL_CARD_SAC_COLOUR,
    ALL_CARD_SAC_COUNT,
    EFFECTS,
    NUM_ALL_CARDS,
    NUM_CARDS,
)
from .layout import CARD_DIM, ORIENT_DIM
from .state import PAIR_HOST


def _card_table() -> tuple[np.ndarray, np.ndarray]:
    """Rows for all 120 card ids (Orient cards without a colour of their own have none set)."""
    full = np.zeros((NUM_ALL_CARDS, CARD_DIM), dtype=np.float32)
    for c in range(NUM_ALL_CARDS):
        full[c, 0] = 1.0
        full[c, 2 + ALL_CARD_LEVEL[c]] = 1.0
        if ALL_CARD_COLOUR[c] >= 0:
            full[c, 5 + ALL_CARD_COLOUR[c]] = 1.0
        full[c, 10] = ALL_CARD_POINTS[c]
        full[c, 11:16] = ALL_CARD_COST[c]
    hidden = np.zeros((3, CARD_DIM), dtype=np.float32)
    for lvl in range(3):
        hidden[lvl, 0] = 1.0
        hidden[lvl, 1] = 1.0
        hidden[lvl, 2 + lvl] = 1.0
    return full, hidden


def _orient_table() -> np.ndarray:
    extra = np.zeros((NUM_ALL_CARDS, ORIENT_DIM), dtype=np.float32)
    for c in range(NUM_CARDS, NUM_ALL_CARDS):
        extra[c, 0] = 1.0
        if ALL_CARD_EFFECT[c] > 0:
            extra[c, ALL_CARD_EFFECT[c]] = 1.0
        extra[c, len(EFFECTS)] = ALL_CARD_BONUS[c]
        if ALL_CARD_SAC_COLOUR[c] >= 0:
            extra[c, len(EFFECTS) + 1 + ALL_CARD_SAC_COLOUR[c]] = 1.0
        extra[c, ORIENT_DIM - 1] = ALL_CARD_SAC_COUNT[c]
    return extra


CARD_TABLE, HIDDEN_CARD_TABLE = _card_table()
ORIENT_TABLE = _orient_table()


@njit(cache=True, inline="always")
def put_card(out: np.ndarray, off: int, card: int) -> None:
    for i in range(CARD_DIM):
        out[off + i] = CARD_TABLE[card, i]


@njit(cache=True, inline="always")
def put_full_card(s: np.ndarray, out: np.ndarray, off: int, card: int) -> None:
    """16 base numbers then the Orient extras; a pair card shows its host's colour."""
    put_card(out, off, card)
    for i in range(ORIENT_DIM):
        out[off + CARD_DIM + i] = ORIENT_TABLE[card, i]
    if card >= NUM_CARDS and s[PAIR_HOST + card - NUM_CARDS] >= 0:
        out[off + 5 + ALL_CARD_COLOUR[s[PAIR_HOST + card - NUM_CARDS]]] = 1.0
