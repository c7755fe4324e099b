"""Moves on the board that the base game and every module share.

Small numba functions over the state array: counting a seat's tokens or
reserved cards, checking a requirement, the one payment rule, taking a card,
reserving one. The turn pipeline (:mod:`splendor_env.rules`) and the module
files call these, so each of these rules is written once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import ALL_CARD_BONUS, ALL_CARD_COLOUR, ALL_CARD_COST, ALL_CARD_POINTS, NOBLE_POINTS, NOBLE_REQ
from .state import (
    BANK,
    MAX_RESERVED,
    NOBLE_ID,
    NOBLE_OWNER,
    P_BONUS,
    P_CARDS,
    P_NOBLES,
    P_PRESTIGE,
    P_RESERVED,
    P_RESERVED_BLIND,
    P_TOKENS,
    owner_addr,
)


@njit(cache=True, inline="always")
def available_colours(s: np.ndarray) -> int:
    """Gem colours the bank holds at least one token of."""
    n = 0
    for c in range(5):
        if s[BANK + c] > 0:
            n += 1
    return n


@njit(cache=True, inline="always")
def token_total(s: np.ndarray, po: int) -> int:
    t = 0
    for c in range(6):
        t += s[po + P_TOKENS + c]
    return t


@njit(cache=True, inline="always")
def reserved_count(s: np.ndarray, po: int) -> int:
    n = 0
    for r in range(MAX_RESERVED):
        if s[po + P_RESERVED + r] >= 0:
            n += 1
    return n


@njit(cache=True, inline="always")
def meets_req(s: np.ndarray, po: int, req: np.ndarray) -> bool:
    """Bonuses at least ``req`` in every colour (nobles, trading posts)."""
    for c in range(5):
        if s[po + P_BONUS + c] < req[c]:
            return False
    return True


@njit(cache=True, inline="always")
def has_bonus(s: np.ndarray, po: int) -> bool:
    """A card with a bonus is owned (pair hosts always are: pairs are discarded before hosts)."""
    for c in range(5):
        if s[po + P_BONUS + c] > 0:
            return True
    return False


@njit(cache=True, inline="always")
def buying_power(s: np.ndarray, po: int) -> tuple[int, int, int, int, int]:
    """Bonuses plus coloured tokens, per colour: what a seat pays each colour with before gold.

    Read once per mask, so each card's check (:func:`short_units`) touches no state."""
    return (
        s[po + P_BONUS] + s[po + P_TOKENS],
        s[po + P_BONUS + 1] + s[po + P_TOKENS + 1],
        s[po + P_BONUS + 2] + s[po + P_TOKENS + 2],
        s[po + P_BONUS + 3] + s[po + P_TOKENS + 3],
        s[po + P_BONUS + 4] + s[po + P_TOKENS + 4],
    )


@njit(cache=True, inline="always")
def gold_for(short: int, w: int) -> int:
    """Gold units paying ``short`` gems of one colour, each paying ``w`` (1, or 2 with the "gold
    counts double" post), rounded up; no division, as every mask runs it per card and colour."""
    return short if w == 1 else (short + 1) >> 1


@njit(cache=True, inline="always")
def short_units(power: tuple[int, int, int, int, int], card: int, w: int) -> int:
    """Gold tokens ``card`` needs beyond ``power`` (see :func:`buying_power`), each gold paying ``w``
    gems of one colour, rounded up per colour."""
    units = 0
    for c in range(5):
        short = ALL_CARD_COST[card, c] - power[c]
        if short > 0:
            units += gold_for(short, w)
    return units


@njit(cache=True, inline="always")
def gold_units(s: np.ndarray, po: int, card: int, w: int) -> int:
    """Gold tokens needed for ``card`` after bonuses and coloured tokens, each gold paying ``w`` gems
    of one colour."""
    return short_units(buying_power(s, po), card, w)


@njit(cache=True, inline="always")
def can_afford(s: np.ndarray, po: int, card: int, w: int) -> bool:
    return gold_units(s, po, card, w) <= s[po + P_TOKENS + 5]


@njit(cache=True)
def pay(s: np.ndarray, po: int, card: int, w: int, virtual: int) -> None:
    """The payment rule: deterministic, and it never spends a token the purchase does not need.

    Coloured tokens first, then per colour the shortfall in gold units, each
    paying ``w`` gems of one colour (2 with the "gold counts double" trading
    post, else 1). A coloured token that a gold unit already covers (an odd
    shortfall with ``w`` = 2) is kept. ``virtual`` gold units (2 from a spent
    double-gold card, else 0) go first to the shortfall, then replace coloured
    tokens colour by colour in colour order, ``w`` tokens per unit; real gold
    pays only what virtual gold does not. Example: owing 3 red with 2 red +
    1 gold and ``w`` = 2, the player pays 1 red + 1 gold. The base game is
    ``w`` = 1, ``virtual`` = 0: coloured tokens first, gold for the rest.
    """
    units = gold_units(s, po, card, w)
    spare = virtual - units if units < virtual else 0
    real = units - virtual if units > virtual else 0
    for c in range(5):
        need = ALL_CARD_COST[card, c] - s[po + P_BONUS + c]
        if need <= 0:
            continue
        have = s[po + P_TOKENS + c]
        short = need - have if need > have else 0
        coloured = need - short
        keep = gold_for(short, w) * w - short  # gems the gold units overpay: coloured tokens not needed
        paid = coloured - (keep if keep < coloured else coloured)
        while spare > 0 and paid > 0:
            paid -= w if paid >= w else paid
            spare -= 1
        s[po + P_TOKENS + c] -= paid
        s[BANK + c] += paid
    s[po + P_TOKENS + 5] -= real
    s[BANK + 5] += real


@njit(cache=True)
def gain_card(s: np.ndarray, p: int, po: int, card: int) -> None:
    """Seat ``p`` now owns ``card``: owner, bonus, prestige, count (its effects are the caller's)."""
    s[owner_addr(card)] = p
    s[po + P_CARDS] += 1
    s[po + P_PRESTIGE] += ALL_CARD_POINTS[card]
    colour = ALL_CARD_COLOUR[card]
    if colour >= 0:
        s[po + P_BONUS + colour] += ALL_CARD_BONUS[card]


@njit(cache=True)
def reserve(s: np.ndarray, po: int, card: int, blind: bool) -> None:
    """Add ``card`` to the seat's reserve and give it a gold token if the bank has one."""
    r = reserved_count(s, po)
    s[po + P_RESERVED + r] = card
    s[po + P_RESERVED_BLIND + r] = 1 if blind else 0
    if s[BANK + 5] > 0:
        s[BANK + 5] -= 1
        s[po + P_TOKENS + 5] += 1


@njit(cache=True)
def remove_reserved(s: np.ndarray, po: int, r: int) -> None:
    """Remove reserve slot ``r`` and pack the remaining reserved cards to the front."""
    for i in range(r, MAX_RESERVED - 1):
        s[po + P_RESERVED + i] = s[po + P_RESERVED + i + 1]
        s[po + P_RESERVED_BLIND + i] = s[po + P_RESERVED_BLIND + i + 1]
    s[po + P_RESERVED + MAX_RESERVED - 1] = -1
    s[po + P_RESERVED_BLIND + MAX_RESERVED - 1] = 0


@njit(cache=True, inline="always")
def meets_noble(s: np.ndarray, po: int, noble: int) -> bool:
    return meets_req(s, po, NOBLE_REQ[noble])


@njit(cache=True)
def noble_on_offer(s: np.ndarray, k: int) -> bool:
    return s[NOBLE_ID + k] >= 0 and s[NOBLE_OWNER + k] < 0


@njit(cache=True)
def take_noble(s: np.ndarray, p: int, po: int, k: int) -> None:
    s[NOBLE_OWNER + k] = p
    s[po + P_NOBLES] += 1
    s[po + P_PRESTIGE] += NOBLE_POINTS[s[NOBLE_ID + k]]
