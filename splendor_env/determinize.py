"""Determinisation: resample everything one seat cannot see.

Why: search agents (MCTS) need a full state to simulate from, but must never
use information hidden from the seat they play. :func:`determinize` returns a
copy of the true state in which the hidden parts are replaced by a uniform
sample among the possibilities consistent with what ``seat`` knows:

* the order of every deck;
* the identity of every card another player reserved blind (only its level
  is public).

Per level, the *unseen pool* is every card of that level that ``seat`` cannot
see: not in the market, not purchased, not reserved face up by anyone, not in
``seat``'s own reserve. That pool (taken in ascending card id, so the input's
hidden arrangement cannot leak through the order) is shuffled, its first cards
fill the other players' blind slots of that level (seat order, slot order) and
the rest becomes the deck. The result is therefore a function of ``seat``'s
view and the random stream only: permuting the hidden information of the input
gives the same output for the same seed. Public information and ``seat``'s
own reserves are untouched, and the card/token invariants still hold.

:func:`determinize_inplace` is the numba kernel (a splitmix64 stream in a
one-element ``uint64`` array), used inside the MCTS loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import CARD_LEVEL, LEVEL_OFFSETS, LEVEL_SIZES, NUM_CARDS
from .rng import shuffle
from .state import (
    CARD_OWNER,
    DECK,
    DECK_CAPACITY,
    DECK_COUNT,
    MARKET,
    MARKET_SLOTS,
    MAX_RESERVED,
    MODULES,
    N_PLAYERS,
    P_RESERVED,
    P_RESERVED_BLIND,
    PLAYER_SIZE,
    PLAYERS,
    STATE_SIZE,
)


@njit(cache=True)
def determinize_inplace(s: np.ndarray, seat: int, rng: np.ndarray) -> None:
    """Resample, in place, all information hidden from ``seat`` (see the module docstring)."""
    n = s[N_PLAYERS]
    visible = np.zeros(NUM_CARDS, dtype=np.bool_)
    for slot in range(3 * MARKET_SLOTS):
        c = s[MARKET + slot]
        if c >= 0:
            visible[c] = True
    for c in range(NUM_CARDS):
        if s[CARD_OWNER + c] >= 0:
            visible[c] = True
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        for r in range(MAX_RESERVED):
            c = s[po + P_RESERVED + r]
            if c >= 0 and (p == seat or s[po + P_RESERVED_BLIND + r] == 0):
                visible[c] = True
    pool = np.empty(DECK_CAPACITY, dtype=np.int32)
    for lvl in range(3):
        k = 0
        for c in range(LEVEL_OFFSETS[lvl], LEVEL_OFFSETS[lvl] + LEVEL_SIZES[lvl]):
            if not visible[c]:
                pool[k] = c
                k += 1
        shuffle(pool, k, rng)
        used = 0
        for p in range(n):
            if p == seat:
                continue
            po = PLAYERS + p * PLAYER_SIZE
            for r in range(MAX_RESERVED):
                c = s[po + P_RESERVED + r]
                if c >= 0 and s[po + P_RESERVED_BLIND + r] == 1 and CARD_LEVEL[c] == lvl:
                    s[po + P_RESERVED + r] = pool[used]
                    used += 1
        base = DECK + lvl * DECK_CAPACITY
        cnt = s[DECK_COUNT + lvl]
        for i in range(cnt):
            s[base + i] = pool[used + i]


def _seed_array(rng_or_seed: np.random.Generator | int | np.integer) -> np.ndarray:
    if isinstance(rng_or_seed, np.random.Generator):
        seed = int(rng_or_seed.integers(0, 2**63))
    elif isinstance(rng_or_seed, (int, np.integer)) and not isinstance(rng_or_seed, bool):
        seed = int(rng_or_seed) % 2**64
    else:
        raise TypeError(f"rng_or_seed must be a numpy Generator or an int, got {rng_or_seed!r}")
    return np.array([seed], dtype=np.uint64)


def determinize(s: np.ndarray, seat: int, rng_or_seed: np.random.Generator | int) -> np.ndarray:
    """A new state array with everything hidden from ``seat`` resampled uniformly.

    ``rng_or_seed`` is a numpy ``Generator`` (one 63-bit draw is taken from it)
    or an integer seed. The input is not modified.
    """
    n = int(s[N_PLAYERS])
    if not 0 <= seat < n:
        raise ValueError(f"seat {seat} is not a seat of a {n}-player game")
    if len(s) > STATE_SIZE and s[MODULES] != 0:
        raise NotImplementedError(
            "determinize resamples base-game hidden information only; the Cities of Splendor "
            "modules (Orient decks, drawn cards) are not handled yet"
        )
    out = np.array(s, dtype=np.int32, copy=True)
    determinize_inplace(out, int(seat), _seed_array(rng_or_seed))
    return out
