"""The game state: one flat ``int32`` numpy array per game, and its layout.

Why a flat array: the rules are numba-compiled functions over this array, the
batched path stores ``B`` games as a ``[B, STATE_SIZE]`` matrix and hands each
row to the same functions, and copying, hashing or pickling a game is a plain
array copy. Field offsets are module constants (numba folds them in at compile
time). Every field below is documented; :func:`splendor_env.snapshot.to_dict` gives a
readable, JSON-serialisable view and :func:`splendor_env.snapshot.from_dict` rebuilds the
array from it; :func:`splendor_env.deal.new_state` deals a fresh game.

Layout (offsets into the array)::

    N_PLAYERS, CURRENT, PHASE, TURN, FINAL_ROUND, PASSES, MAX_TURNS, ...
    BANK[6]                  tokens in the bank (white, blue, green, red, black, gold)
    MARKET[3*4]              face-up card id per (level, slot), -1 when empty
    DECK_COUNT[3]            cards left in each level's deck
    DECK[3*40]               deck contents per level; the top card is at index count-1
    NOBLE_ID[5]              noble id in each offer slot, -1 when the slot is unused
    NOBLE_OWNER[5]           -1 while on offer, else the seat that took it
    CARD_OWNER[90]           -1 unless purchased, else the seat that bought it
    OUTCOME[4]               set at game end: 1 for each winner, 0 otherwise
    PLAYERS[4 * PLAYER_SIZE] per seat: tokens[6], bonus[5], prestige, cards bought,
                             nobles, reserved[3] (card id or -1), reserved_blind[3]

A base game's array ends there (``STATE_SIZE``). With any Cities of Splendor
module enabled (``MODULES`` header field, a bitmask of ``MOD_*``) the array is
``STATE_SIZE_ALL`` long, with the module fields appended (the base offsets do
not move)::

    OMARKET[3*2]             Orient face-up card per (level, slot), -1 when empty
    ODECK_COUNT[3], ODECK[3*10]   Orient decks, top card at index count-1
    OCARD_OWNER[30]          owner of Orient card 90+i: -1, a seat, or BOX (-2)
    PAIR_HOST[30]            for an attached pair card: the card it is attached to, else -1
    CITY_ID[3], CITY_OWNER[3]     cities on offer and the seat that claimed each (-1)
    TP_HELD[4]               per seat, bitmask of trading-post powers held
    SH_SUPPLY[4]             per seat, strongholds in the supply
    SH_ON[18*4]              strongholds per (market slot, seat); slots 0-11 base, 12-17 Orient
    PENDING[13]              the decision in progress (see the PD_* constants)

Base cards discarded by a sacrifice go to the box too: ``CARD_OWNER`` = BOX.
Market slots are numbered 0-17 everywhere in the modules: ``level * 4 + k`` for
the base market, ``12 + level * 2 + k`` for the Orient market.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .cards import (
    NOBLE_REQ,
    NUM_CARDS,
    ORIENT_LEVEL_SIZE,
)
from .layout import (  # noqa: F401 - the layout's sizes and offsets are part of this module's API
    ALL_SLOTS,
    BASE_SLOTS,
    DECK_CAPACITY,
    MARKET_SLOTS,
    MAX_PLAYERS,
    MAX_RESERVED,
    MODULE_NAMES,
    NOBLE_SLOTS,
    NUM_PHASES,
    ORIENT_SLOTS,
    PENDING,
    PENDING_SIZE,
    PHASE_NAMES,
    PLAYER_OFFSETS,
    PLAYER_SIZE,
    STATE_OFFSETS,
    STATE_SIZE,
    STATE_SIZE_ALL,
)

# Offsets, phases and sizes come from the declared tables in :mod:`splendor_env.layout`.
TOKEN_LIMIT = 10
WINNING_PRESTIGE = 15
DEFAULT_MAX_TURNS = 1000
BOX = -2  # owner code of a card returned to the box (sacrificed, or a spent double-gold card)
STRONGHOLDS = 3  # strongholds per player with the Strongholds module

_PH = {name: i for i, name in enumerate(PHASE_NAMES)}
PHASE_MAIN = _PH["main"]
PHASE_DISCARD = _PH["discard"]
PHASE_NOBLE = _PH["noble"]
PHASE_GAME_OVER = _PH["game_over"]
PHASE_TRUNCATED = _PH["truncated"]
PHASE_TRADING_POST_CHOICE = _PH["trading_post_choice"]
PHASE_TRADING_POST_TOKEN = _PH["trading_post_token"]
PHASE_TRADING_POST_EXTRA = _PH["trading_post_extra_token"]
PHASE_KEEP_DRAWN_CARD = _PH["keep_drawn_card"]
PHASE_PAIR_TARGET = _PH["pair_target"]
PHASE_FREE_CARD = _PH["free_card"]
PHASE_SACRIFICE_CHOICE = _PH["sacrifice_choice"]
PHASE_STRONGHOLD = _PH["stronghold"]
PHASE_CONQUEST = _PH["conquest"]
PHASE_CITY = _PH["city"]

MOD_CITIES = 1 << MODULE_NAMES.index("cities")
MOD_TRADING_POSTS = 1 << MODULE_NAMES.index("trading_posts")
MOD_ORIENT = 1 << MODULE_NAMES.index("orient")
MOD_STRONGHOLDS = 1 << MODULE_NAMES.index("strongholds")
ALL_MODULES = (1 << len(MODULE_NAMES)) - 1

_S = {name: off for name, (off, _) in STATE_OFFSETS.items()}
N_PLAYERS = _S["N_PLAYERS"]
CURRENT = _S["CURRENT"]
PHASE = _S["PHASE"]
TURN = _S["TURN"]
FINAL_ROUND = _S["FINAL_ROUND"]
PASSES = _S["PASSES"]
MAX_TURNS = _S["MAX_TURNS"]
MODULES = _S["MODULES"]
HEADER_SIZE = _S["BANK"]
BANK = _S["BANK"]
MARKET = _S["MARKET"]
DECK_COUNT = _S["DECK_COUNT"]
DECK = _S["DECK"]
NOBLE_ID = _S["NOBLE_ID"]
NOBLE_OWNER = _S["NOBLE_OWNER"]
CARD_OWNER = _S["CARD_OWNER"]
OUTCOME = _S["OUTCOME"]
PLAYERS = _S["PLAYERS"]

# Per-seat block, relative to PLAYERS + seat * PLAYER_SIZE.
P_TOKENS = PLAYER_OFFSETS["P_TOKENS"][0]
P_BONUS = PLAYER_OFFSETS["P_BONUS"][0]
P_PRESTIGE = PLAYER_OFFSETS["P_PRESTIGE"][0]
P_CARDS = PLAYER_OFFSETS["P_CARDS"][0]
P_NOBLES = PLAYER_OFFSETS["P_NOBLES"][0]
P_RESERVED = PLAYER_OFFSETS["P_RESERVED"][0]
P_RESERVED_BLIND = PLAYER_OFFSETS["P_RESERVED_BLIND"][0]

# Module fields, appended after the base layout (present only when MODULES != 0).
OMARKET = _S["OMARKET"]
ODECK_COUNT = _S["ODECK_COUNT"]
ODECK = _S["ODECK"]
OCARD_OWNER = _S["OCARD_OWNER"]
PAIR_HOST = _S["PAIR_HOST"]
CITY_ID = _S["CITY_ID"]
CITY_OWNER = _S["CITY_OWNER"]
TP_HELD = _S["TP_HELD"]
SH_SUPPLY = _S["SH_SUPPLY"]
SH_ON = _S["SH_ON"]
PD_STAGE = _S["PD_STAGE"]
PD_SAC_CARD = _S["PD_SAC_CARD"]
PD_SAC_LEFT = _S["PD_SAC_LEFT"]
PD_PAIR = _S["PD_PAIR"]
PD_FREE_LEVEL = _S["PD_FREE_LEVEL"]
PD_TP_TOKEN = _S["PD_TP_TOKEN"]
PD_EXTRA_EXCL = _S["PD_EXTRA_EXCL"]
PD_SH = _S["PD_SH"]
PD_REFILL = _S["PD_REFILL"]
PD_CONQ = _S["PD_CONQ"]
PD_DRAWN0 = _S["PD_DRAWN0"]
PD_DRAWN1 = _S["PD_DRAWN1"]
PD_DRAWN_DECK = _S["PD_DRAWN_DECK"]

#: Stages of the end of a turn, in rule order (PD_STAGE holds the one a module game is in).
STAGE_EFFECTS = 0  # the main action's effects (module decisions), refills, the conquest
STAGE_TOKEN_LIMIT = 1
STAGE_NOBLES = 2
STAGE_TRADING_POSTS = 3
STAGE_CITIES = 4
STAGE_END = 5

#: Gem tokens per colour in the bank at setup, by number of players.
GEMS_FOR_PLAYERS = {2: 4, 3: 5, 4: 7}
GOLD_TOKENS = 5


@njit(cache=True, inline="always")
def player_offset(seat: int) -> int:
    return PLAYERS + seat * PLAYER_SIZE


def state_size(modules: int) -> int:
    """Length of a game's state array: the base layout, or with the module fields."""
    return STATE_SIZE if modules == 0 else STATE_SIZE_ALL


def parse_modules(modules: Any) -> int:
    """Validate a ``modules=`` option (names from MODULE_NAMES) and return its bitmask."""
    if modules is None:
        return 0
    if isinstance(modules, str):
        modules = (modules,)
    try:
        names = list(modules)
    except TypeError:
        raise TypeError(f"modules must be a sequence of module names, got {modules!r}") from None
    bits = 0
    for name in names:
        if not isinstance(name, str) or name not in MODULE_NAMES:
            raise ValueError(f"unknown module {name!r}; known modules: {', '.join(MODULE_NAMES)}")
        bits |= 1 << MODULE_NAMES.index(name)
    return bits


def module_names(bits: int) -> tuple[str, ...]:
    """The module names of a MODULES bitmask, in MODULE_NAMES order."""
    return tuple(name for i, name in enumerate(MODULE_NAMES) if bits & (1 << i))


@njit(cache=True)
def clear_pending(s: np.ndarray) -> None:
    """Empty the pending record (``PD_*``): nothing left to settle, stage ``STAGE_EFFECTS``.

    Shared: the deal starts a module game with it and the rules clear the record before
    every main action, so both write the one "nothing pending" value.
    """
    s[PD_STAGE] = STAGE_EFFECTS
    s[PD_SAC_CARD] = -1
    s[PD_SAC_LEFT] = 0
    s[PD_PAIR] = -1
    s[PD_FREE_LEVEL] = -1
    s[PD_TP_TOKEN] = 0
    s[PD_EXTRA_EXCL] = -1
    s[PD_SH] = 0
    s[PD_REFILL] = 0
    s[PD_CONQ] = 0
    s[PD_DRAWN0] = -1
    s[PD_DRAWN1] = -1
    s[PD_DRAWN_DECK] = -1


@njit(cache=True, inline="always")
def deck_count_addr(d: int) -> int:
    """Address of deck ``d``'s card count (0-2 base levels, 3-5 Orient levels)."""
    return DECK_COUNT + d if d < 3 else ODECK_COUNT + d - 3


@njit(cache=True, inline="always")
def deck_addr(d: int) -> int:
    """Address of deck ``d``'s bottom card."""
    return DECK + d * DECK_CAPACITY if d < 3 else ODECK + (d - 3) * ORIENT_LEVEL_SIZE


@njit(cache=True)
def draw_from(s: np.ndarray, d: int) -> int:
    """Pop the top card of deck ``d`` (base or Orient); -1 when it is empty."""
    ca = deck_count_addr(d)
    n = s[ca]
    if n == 0:
        return -1
    n -= 1
    s[ca] = n
    card = s[deck_addr(d) + n]
    s[deck_addr(d) + n] = -1
    return card


@njit(cache=True)
def put_bottom(s: np.ndarray, d: int, card: int) -> None:
    """Put ``card`` at the bottom of deck ``d`` (the draw-two trading post)."""
    ca = deck_count_addr(d)
    n = s[ca]
    base = deck_addr(d)
    for i in range(n, 0, -1):
        s[base + i] = s[base + i - 1]
    s[base] = card
    s[ca] = n + 1


@njit(cache=True, inline="always")
def slot_addr(m: int) -> int:
    """Address of market slot ``m`` (0-11 base ``level*4+k``, 12-17 Orient ``12+level*2+k``)."""
    return MARKET + m if m < BASE_SLOTS else OMARKET + m - BASE_SLOTS


@njit(cache=True, inline="always")
def slot_deck(m: int) -> int:
    """The deck that refills market slot ``m``."""
    return m // MARKET_SLOTS if m < BASE_SLOTS else 3 + (m - BASE_SLOTS) // ORIENT_SLOTS


@njit(cache=True, inline="always")
def slot_level(m: int) -> int:
    return m // MARKET_SLOTS if m < BASE_SLOTS else (m - BASE_SLOTS) // ORIENT_SLOTS


@njit(cache=True, inline="always")
def level_slot(lvl: int, k: int) -> int:
    """Market slot ``k`` of level ``lvl`` (the inverse of :func:`slot_level`): its base slots
    (k < MARKET_SLOTS), then its Orient slots."""
    if k < MARKET_SLOTS:
        return lvl * MARKET_SLOTS + k
    return BASE_SLOTS + lvl * ORIENT_SLOTS + k - MARKET_SLOTS


@njit(cache=True, inline="always")
def owner_addr(card: int) -> int:
    """Address of a card's owner field (base cards in CARD_OWNER, Orient cards in OCARD_OWNER)."""
    return CARD_OWNER + card if card < NUM_CARDS else OCARD_OWNER + card - NUM_CARDS


@njit(cache=True, inline="always")
def draw_card(s: np.ndarray, lvl: int) -> int:
    """Pop the top card of a level's deck; -1 when the deck is empty."""
    n = s[DECK_COUNT + lvl]
    if n == 0:
        return -1
    n -= 1
    s[DECK_COUNT + lvl] = n
    card = s[DECK + lvl * DECK_CAPACITY + n]
    s[DECK + lvl * DECK_CAPACITY + n] = -1
    return card


#: the largest turn cap a state can hold (an int32)
MAX_TURNS_LIMIT = 2**31 - 1


def validate_setup_args(num_players: Any, seed: Any, max_turns: Any) -> None:
    """Raise a clear error for a bad player count, seed or turn cap."""
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
        raise TypeError(f"num_players must be an int in 2..4, got {num_players!r}")
    if num_players not in GEMS_FOR_PLAYERS:
        raise ValueError(f"num_players must be 2, 3 or 4, got {num_players}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be a non-negative int, got {seed!r}")
    if not 0 <= int(seed) < 2**63:
        raise ValueError(f"seed must be in [0, 2**63), got {seed}")
    if isinstance(max_turns, bool) or not isinstance(max_turns, (int, np.integer)):
        raise TypeError(f"max_turns must be a positive int, got {max_turns!r}")
    if not 1 <= max_turns <= MAX_TURNS_LIMIT:  # the state is int32: a larger cap would wrap
        raise ValueError(f"max_turns must be in 1..{MAX_TURNS_LIMIT} (an int32), got {max_turns}")


# ---------------------------------------------------------------------------
# Derived facts that snapshots and invariants share


def qualifying_nobles(s: np.ndarray, po: int) -> int:
    """Nobles on offer whose requirement the seat at offset ``po`` meets (a noble phase needs 2+)."""
    bonus = s[po + P_BONUS : po + P_BONUS + 5]
    return sum(
        1
        for k in range(NOBLE_SLOTS)
        if s[NOBLE_ID + k] >= 0 and s[NOBLE_OWNER + k] < 0 and (bonus >= NOBLE_REQ[s[NOBLE_ID + k]]).all()
    )
