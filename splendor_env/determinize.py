"""Determinisation: resample everything one seat cannot see.

Why: search agents (MCTS) need a full state to simulate from, but must never
use information hidden from the seat they play. :func:`determinize` returns a
copy of the true state in which the hidden parts are replaced by a uniform
sample among the possibilities consistent with what ``seat`` knows:

* the order of every deck (base decks, and with the Orient its three decks);
* the identity of every card another player reserved blind (only its level,
  and whether it came from a base or an Orient deck, is public);
* with the "draw two" trading post, the two cards the player on move drew and
  must choose between (``PD_DRAWN0`` / ``PD_DRAWN1``): only that player sees
  them, so for any other seat they are resampled like a blind reserve.

The card the "draw two" trading post puts back under a deck is in that deck:
only the player who put it there knows it is the bottom card, and the state
(like the observation) keeps no record of it, so it is resampled with the
rest of the deck for every seat. Forgetting it costs that player a little
information; it never leaks any.

Per deck kind (base or Orient) and level, the *unseen pool* is every card of
that kind and level that ``seat`` cannot see: not in a market, not purchased
or in the box, not reserved face up by anyone, not in ``seat``'s own reserve,
not among the drawn cards when ``seat`` is on move. That pool (taken in
ascending card id, so the input's hidden arrangement cannot leak through the
order) is shuffled; its first cards fill the other players' blind slots of
that kind and level (seat order, slot order), then the hidden drawn cards of
that deck, and the rest becomes the deck. The result is therefore a function
of ``seat``'s view and the random stream only: permuting the hidden
information of the input gives the same output for the same seed. Public
information and ``seat``'s own reserves are untouched, and the card/token
invariants still hold. A base game draws exactly the same random stream as
before the modules existed (the Orient pools are shuffled after the base ones).

:func:`determinize_inplace` is the numba kernel (a splitmix64 stream in a
one-element ``uint64`` array), used inside the MCTS loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import (
    ALL_CARD_LEVEL,
    LEVEL_OFFSETS,
    LEVEL_SIZES,
    NUM_ALL_CARDS,
    NUM_CARDS,
    ORIENT_LEVEL_SIZE,
    ORIENT_OFFSETS,
)
from .rng import shuffle
from .state import (
    CARD_OWNER,
    CURRENT,
    DECK,
    DECK_CAPACITY,
    DECK_COUNT,
    MARKET,
    MARKET_SLOTS,
    MAX_RESERVED,
    MOD_ORIENT,
    MODULES,
    N_PLAYERS,
    OCARD_OWNER,
    ODECK,
    ODECK_COUNT,
    OMARKET,
    ORIENT_SLOTS,
    P_RESERVED,
    P_RESERVED_BLIND,
    PD_DRAWN0,
    PD_DRAWN1,
    PD_DRAWN_DECK,
    PLAYER_SIZE,
    PLAYERS,
    STATE_SIZE,
)


@njit(cache=True)
def _fill_hidden(
    s: np.ndarray, seat: int, deck: int, pool: np.ndarray, k: int, hide_drawn: bool, rng: np.ndarray
) -> None:
    """Shuffle the ``k`` pooled cards of deck ``deck`` (0-2 base, 3-5 Orient) into its hidden places."""
    shuffle(pool, k, rng)
    orient = deck >= 3
    lvl = deck - 3 if orient else deck
    used = 0
    for p in range(s[N_PLAYERS]):
        if p == seat:
            continue
        po = PLAYERS + p * PLAYER_SIZE
        for r in range(MAX_RESERVED):
            c = s[po + P_RESERVED + r]
            if (
                c >= 0
                and s[po + P_RESERVED_BLIND + r] == 1
                and ALL_CARD_LEVEL[c] == lvl
                and (c >= NUM_CARDS) == orient
            ):
                s[po + P_RESERVED + r] = pool[used]
                used += 1
    if hide_drawn and s[PD_DRAWN_DECK] == deck:
        s[PD_DRAWN0] = pool[used]
        s[PD_DRAWN1] = pool[used + 1]
        used += 2
    if orient:
        base = ODECK + lvl * ORIENT_LEVEL_SIZE
        cnt = s[ODECK_COUNT + lvl]
    else:
        base = DECK + lvl * DECK_CAPACITY
        cnt = s[DECK_COUNT + lvl]
    for i in range(cnt):
        s[base + i] = pool[used + i]


@njit(cache=True)
def determinize_inplace(s: np.ndarray, seat: int, rng: np.ndarray) -> None:
    """Resample, in place, all information hidden from ``seat`` (see the module docstring); ``seat=-1``: a
    spectator, from whom every blind reserve and the drawn pair are hidden."""
    n = s[N_PLAYERS]
    mods = s[MODULES]
    orient = (mods & MOD_ORIENT) != 0
    visible = np.zeros(NUM_ALL_CARDS, dtype=np.bool_)
    for slot in range(3 * MARKET_SLOTS):
        c = s[MARKET + slot]
        if c >= 0:
            visible[c] = True
    for c in range(NUM_CARDS):
        if s[CARD_OWNER + c] != -1:  # a seat, or the box (a sacrificed card)
            visible[c] = True
    if orient:
        for slot in range(3 * ORIENT_SLOTS):
            c = s[OMARKET + slot]
            if c >= 0:
                visible[c] = True
        for i in range(NUM_ALL_CARDS - NUM_CARDS):
            if s[OCARD_OWNER + i] != -1:
                visible[NUM_CARDS + i] = True
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        for r in range(MAX_RESERVED):
            c = s[po + P_RESERVED + r]
            if c >= 0 and (p == seat or s[po + P_RESERVED_BLIND + r] == 0):
                visible[c] = True
    hide_drawn = False
    if mods != 0 and s[PD_DRAWN0] >= 0:
        if seat == s[CURRENT]:
            visible[s[PD_DRAWN0]] = True
            visible[s[PD_DRAWN1]] = True
        else:
            hide_drawn = True
    pool = np.empty(DECK_CAPACITY, dtype=np.int32)
    for lvl in range(3):
        k = 0
        for c in range(LEVEL_OFFSETS[lvl], LEVEL_OFFSETS[lvl] + LEVEL_SIZES[lvl]):
            if not visible[c]:
                pool[k] = c
                k += 1
        _fill_hidden(s, seat, lvl, pool, k, hide_drawn, rng)
    if orient:
        for lvl in range(3):
            k = 0
            for c in range(ORIENT_OFFSETS[lvl], ORIENT_OFFSETS[lvl] + ORIENT_LEVEL_SIZE):
                if not visible[c]:
                    pool[k] = c
                    k += 1
            _fill_hidden(s, seat, 3 + lvl, pool, k, hide_drawn, rng)


def _seed_array(rng_or_seed: np.random.Generator | int | np.integer) -> np.ndarray:
    if isinstance(rng_or_seed, np.random.Generator):
        seed = int(rng_or_seed.integers(0, 2**63))
    elif isinstance(rng_or_seed, (int, np.integer)) and not isinstance(rng_or_seed, bool):
        seed = int(rng_or_seed) % 2**64
    else:
        raise TypeError(f"rng_or_seed must be a numpy Generator or an int, got {rng_or_seed!r}")
    return np.array([seed], dtype=np.uint64)


def determinize(s: np.ndarray, seat: int | None, rng_or_seed: np.random.Generator | int) -> np.ndarray:
    """A new state array with everything hidden from ``seat`` resampled uniformly.

    ``seat=None`` is a spectator, who sees no hidden card: every seat's blind
    reserves (and any drawn pair) are resampled too, so the result is a function
    of the public information and the random stream only (the app's analysis
    for a page that holds no seat). Works for 2-4 players and any combination
    of modules. ``rng_or_seed`` is a numpy ``Generator`` (one 63-bit draw is
    taken from it) or an integer seed. The input is not modified.
    """
    n = int(s[N_PLAYERS])
    if seat is not None and not 0 <= seat < n:
        raise ValueError(f"seat {seat} is not a seat of a {n}-player game")
    if len(s) == STATE_SIZE and s[MODULES] != 0:
        raise ValueError("a state with modules needs the full module layout (state_size(modules) entries)")
    out = np.array(s, dtype=np.int32, copy=True)
    determinize_inplace(out, -1 if seat is None else int(seat), _seed_array(rng_or_seed))
    return out
