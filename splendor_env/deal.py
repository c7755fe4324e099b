"""A fresh game: the base deal, then each enabled module's setup (:func:`new_state`).

The module setups draw after the base deal, so a seed deals the same base
cards and nobles with or without modules. Shuffling uses a counter-based
generator seeded by ``seed`` (not numpy's global state), so the AEC env and
the batched path deal identical games.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .cards import (
    CITIES_ON_OFFER,
    LEVEL_OFFSETS,
    LEVEL_SIZES,
    NUM_CARDS,
    NUM_NOBLES,
    NUM_ORIENT,
    ORIENT_LEVEL_SIZE,
)
from .modules import cities, orient, strongholds
from .rng import shuffle
from .state import (
    BANK,
    CARD_OWNER,
    CITY_ID,
    CITY_OWNER,
    CURRENT,
    DECK,
    DECK_CAPACITY,
    DECK_COUNT,
    DEFAULT_MAX_TURNS,
    GEMS_FOR_PLAYERS,
    GOLD_TOKENS,
    MARKET,
    MARKET_SLOTS,
    MAX_PLAYERS,
    MAX_RESERVED,
    MAX_TURNS,
    MOD_CITIES,
    MOD_ORIENT,
    MOD_STRONGHOLDS,
    MODULES,
    N_PLAYERS,
    NOBLE_ID,
    NOBLE_OWNER,
    NOBLE_SLOTS,
    OCARD_OWNER,
    ODECK,
    OMARKET,
    ORIENT_SLOTS,
    P_RESERVED,
    PAIR_HOST,
    PHASE,
    PHASE_MAIN,
    STATE_SIZE_ALL,
    clear_pending,
    draw_card,
    parse_modules,
    player_offset,
    state_size,
    validate_setup_args,
)

_GEMS = np.array([0, 0] + [GEMS_FOR_PLAYERS[n] for n in (2, 3, 4)], dtype=np.int32)


@njit(cache=True)
def setup(s: np.ndarray, num_players: int, seed: int, max_turns: int, modules: int = 0) -> None:
    """Fill ``s`` with a fresh game. The same seed always deals the same game."""
    s[:] = 0
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(seed)
    s[N_PLAYERS] = num_players
    s[MAX_TURNS] = max_turns
    for c in range(5):
        s[BANK + c] = _GEMS[num_players]
    s[BANK + 5] = GOLD_TOKENS
    for lvl in range(3):
        base = DECK + lvl * DECK_CAPACITY
        n = LEVEL_SIZES[lvl]
        for i in range(DECK_CAPACITY):
            s[base + i] = -1
        for i in range(n):
            s[base + i] = LEVEL_OFFSETS[lvl] + i
        shuffle(s[base : base + n], n, rng)
        s[DECK_COUNT + lvl] = n
        for slot in range(MARKET_SLOTS):
            s[MARKET + lvl * MARKET_SLOTS + slot] = draw_card(s, lvl)
    nobles = np.arange(NUM_NOBLES)
    shuffle(nobles, NUM_NOBLES, rng)
    for k in range(NOBLE_SLOTS):
        s[NOBLE_ID + k] = nobles[k] if k < num_players + 1 else -1
        s[NOBLE_OWNER + k] = -1
    for c in range(NUM_CARDS):
        s[CARD_OWNER + c] = -1
    for p in range(MAX_PLAYERS):
        po = player_offset(p)
        for r in range(MAX_RESERVED):
            s[po + P_RESERVED + r] = -1
    s[CURRENT] = 0
    s[PHASE] = PHASE_MAIN
    if modules != 0:
        _setup_modules(s, num_players, modules, rng)


@njit(cache=True)
def _setup_modules(s: np.ndarray, num_players: int, modules: int, rng: np.ndarray) -> None:
    """Empty module fields, then each enabled module's setup, in the order that draws the cards."""
    s[MODULES] = modules
    for i in range(OMARKET, STATE_SIZE_ALL):
        s[i] = 0
    for i in range(3 * ORIENT_SLOTS):
        s[OMARKET + i] = -1
    for i in range(3 * ORIENT_LEVEL_SIZE):
        s[ODECK + i] = -1
    for i in range(NUM_ORIENT):
        s[OCARD_OWNER + i] = -1
        s[PAIR_HOST + i] = -1
    for k in range(CITIES_ON_OFFER):
        s[CITY_ID + k] = -1
        s[CITY_OWNER + k] = -1
    if modules & MOD_ORIENT:
        orient.setup(s, rng)
    if modules & MOD_CITIES:
        cities.setup(s, rng)
    if modules & MOD_STRONGHOLDS:
        strongholds.setup(s, num_players)
    clear_pending(s)


def new_state(
    num_players: int = 2, seed: int = 0, max_turns: int = DEFAULT_MAX_TURNS, modules: Any = ()
) -> np.ndarray:
    """A freshly dealt game as a state array (validated arguments)."""
    validate_setup_args(num_players, seed, max_turns)
    bits = parse_modules(modules)
    s = np.zeros(state_size(bits), dtype=np.int32)
    setup(s, num_players, seed, max_turns, bits)
    return s
