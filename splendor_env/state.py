"""The game state: one flat ``int32`` numpy array per game, and its layout.

Why a flat array: the rules are numba-compiled functions over this array, the
batched path stores ``B`` games as a ``[B, STATE_SIZE]`` matrix and hands each
row to the same functions, and copying, hashing or pickling a game is a plain
array copy. Field offsets are module constants (numba folds them in at compile
time). Every field below is documented; :func:`to_dict` gives a readable,
JSON-serialisable view and :func:`from_dict` rebuilds the array from it.

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
    ALL_CARD_BONUS,
    ALL_CARD_COLOUR,
    ALL_CARD_EFFECT,
    ALL_CARD_LEVEL,
    ALL_CARD_POINTS,
    CITIES_ON_OFFER,
    CITY_SIDES,
    EFFECT_PAIR,
    EFFECT_PAIR_FREE_L1,
    LEVEL_OFFSETS,
    LEVEL_SIZES,
    NOBLE_POINTS,
    NOBLE_REQ,
    NUM_ALL_CARDS,
    NUM_CARDS,
    NUM_CITY_TILES,
    NUM_NOBLES,
    NUM_ORIENT,
    ORIENT_LEVEL_SIZE,
    ORIENT_OFFSETS,
    TP_POINTS,
    TRADING_POSTS,
)
from .rng import rand_below, shuffle

MAX_PLAYERS = 4
MARKET_SLOTS = 4
MAX_RESERVED = 3
TOKEN_LIMIT = 10
WINNING_PRESTIGE = 15
DEFAULT_MAX_TURNS = 1000

# Phases: what kind of decision the player on move faces.
PHASE_MAIN = 0
PHASE_DISCARD = 1
PHASE_NOBLE = 2
PHASE_GAME_OVER = 3
PHASE_TRUNCATED = 4
# Module phases (Cities of Splendor): one per kind of pending decision.
PHASE_TRADING_POST_CHOICE = 5
PHASE_TRADING_POST_TOKEN = 6
PHASE_TRADING_POST_EXTRA = 7
PHASE_KEEP_DRAWN_CARD = 8
PHASE_PAIR_TARGET = 9
PHASE_FREE_CARD = 10
PHASE_SACRIFICE_CHOICE = 11
PHASE_STRONGHOLD = 12
PHASE_CONQUEST = 13
PHASE_CITY = 14
PHASE_NAMES = (
    "main",
    "discard",
    "noble",
    "game_over",
    "truncated",
    "trading_post_choice",
    "trading_post_token",
    "trading_post_extra_token",
    "keep_drawn_card",
    "pair_target",
    "free_card",
    "sacrifice_choice",
    "stronghold",
    "conquest",
    "city",
)
NUM_PHASES = len(PHASE_NAMES)

#: Module names accepted by ``modules=`` and their bits in the MODULES header field.
MODULE_NAMES = ("cities", "trading_posts", "orient", "strongholds")
MOD_CITIES = 1
MOD_TRADING_POSTS = 2
MOD_ORIENT = 4
MOD_STRONGHOLDS = 8
ALL_MODULES = 15

# Header fields.
N_PLAYERS = 0
CURRENT = 1
PHASE = 2
TURN = 3  # completed turns, all players together
FINAL_ROUND = 4  # 1 once someone ended a turn with >= 15 prestige
PASSES = 5  # consecutive pass turns
MAX_TURNS = 6  # turn cap; reaching it truncates the game
MODULES = 7  # bitmask of enabled Cities of Splendor modules (0 = base game)
HEADER_SIZE = 8

BANK = HEADER_SIZE
MARKET = BANK + 6
DECK_COUNT = MARKET + 3 * MARKET_SLOTS
DECK_CAPACITY = 40
DECK = DECK_COUNT + 3
NOBLE_SLOTS = MAX_PLAYERS + 1
NOBLE_ID = DECK + 3 * DECK_CAPACITY
NOBLE_OWNER = NOBLE_ID + NOBLE_SLOTS
CARD_OWNER = NOBLE_OWNER + NOBLE_SLOTS
OUTCOME = CARD_OWNER + NUM_CARDS
PLAYERS = OUTCOME + MAX_PLAYERS

# Per-seat block, relative to PLAYERS + seat * PLAYER_SIZE.
P_TOKENS = 0
P_BONUS = 6
P_PRESTIGE = 11
P_CARDS = 12
P_NOBLES = 13
P_RESERVED = 14
P_RESERVED_BLIND = P_RESERVED + MAX_RESERVED
PLAYER_SIZE = P_RESERVED_BLIND + MAX_RESERVED

STATE_SIZE = PLAYERS + MAX_PLAYERS * PLAYER_SIZE

# Module fields, appended after the base layout (present only when MODULES != 0).
BOX = -2  # owner code of a card returned to the box (sacrificed, or a spent double-gold card)
ORIENT_SLOTS = 2
BASE_SLOTS = 3 * MARKET_SLOTS
ALL_SLOTS = BASE_SLOTS + 3 * ORIENT_SLOTS  # market slots 0-17
STRONGHOLDS = 3
OMARKET = STATE_SIZE
ODECK_COUNT = OMARKET + 3 * ORIENT_SLOTS
ODECK = ODECK_COUNT + 3
OCARD_OWNER = ODECK + 3 * ORIENT_LEVEL_SIZE
PAIR_HOST = OCARD_OWNER + NUM_ORIENT
CITY_ID = PAIR_HOST + NUM_ORIENT
CITY_OWNER = CITY_ID + CITIES_ON_OFFER
TP_HELD = CITY_OWNER + CITIES_ON_OFFER
SH_SUPPLY = TP_HELD + MAX_PLAYERS
SH_ON = SH_SUPPLY + MAX_PLAYERS
PENDING = SH_ON + ALL_SLOTS * MAX_PLAYERS
# The pending record: what is left to do in the current turn.
PD_STAGE = PENDING + 0  # STAGE_*: where the turn is (effects, token limit, nobles, ...)
PD_SAC_CARD = PENDING + 1  # sacrifice card being bought, -1
PD_SAC_LEFT = PENDING + 2  # cards still to discard for it
PD_PAIR = PENDING + 3  # pair card waiting for its host, -1
PD_FREE_LEVEL = PENDING + 4  # level of the free card owed, -1
PD_TP_TOKEN = PENDING + 5  # 1 if the after-purchase trading-post token is owed
PD_EXTRA_EXCL = PENDING + 6  # colour of the pair just taken when the extra token is owed, -1
PD_SH = PENDING + 7  # 1 if a stronghold action is owed
PD_REFILL = PENDING + 8  # bitmask of market slots to refill
PD_CONQ = PENDING + 9  # 1 once the conquest has been offered (or cannot be) this turn
PD_DRAWN0 = PENDING + 10  # the two cards drawn by the draw-two trading post, -1
PD_DRAWN1 = PENDING + 11
PD_DRAWN_DECK = PENDING + 12  # the deck they came from (0-2 base, 3-5 Orient)
PENDING_SIZE = 13
STATE_SIZE_ALL = PENDING + PENDING_SIZE

STAGE_EFFECTS = 0
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
def setup(s: np.ndarray, num_players: int, seed: int, max_turns: int, modules: int = 0) -> None:
    """Fill ``s`` with a fresh game. The same seed always deals the same game.

    Shuffling uses a counter-based generator seeded by ``seed`` (not numpy's
    global state), so the AEC env and the batched path deal identical games.
    The module setup draws after the base deal, so the base cards and nobles
    of a seed are the same with or without modules.
    """
    s[:] = 0
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(seed)
    s[N_PLAYERS] = num_players
    s[MAX_TURNS] = max_turns
    gems = 4 if num_players == 2 else (5 if num_players == 3 else 7)
    for c in range(5):
        s[BANK + c] = gems
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
    """Module fields: Orient decks and market, cities (replacing nobles), strongholds."""
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
        for lvl in range(3):
            base = ODECK + lvl * ORIENT_LEVEL_SIZE
            for i in range(ORIENT_LEVEL_SIZE):
                s[base + i] = ORIENT_OFFSETS[lvl] + i
            shuffle(s[base : base + ORIENT_LEVEL_SIZE], ORIENT_LEVEL_SIZE, rng)
            s[ODECK_COUNT + lvl] = ORIENT_LEVEL_SIZE
            for k in range(ORIENT_SLOTS):
                s[OMARKET + lvl * ORIENT_SLOTS + k] = draw_from(s, 3 + lvl)
    if modules & MOD_CITIES:
        for k in range(NOBLE_SLOTS):
            s[NOBLE_ID + k] = -1
            s[NOBLE_OWNER + k] = -1
        tiles = np.arange(NUM_CITY_TILES)
        shuffle(tiles, NUM_CITY_TILES, rng)
        for k in range(CITIES_ON_OFFER):
            s[CITY_ID + k] = CITY_SIDES[tiles[k], rand_below(rng, 2)]
    if modules & MOD_STRONGHOLDS:
        for p in range(num_players):
            s[SH_SUPPLY + p] = STRONGHOLDS
    _clear_pending(s)


@njit(cache=True)
def _clear_pending(s: np.ndarray) -> None:
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


def new_state(
    num_players: int = 2, seed: int = 0, max_turns: int = DEFAULT_MAX_TURNS, modules: Any = ()
) -> np.ndarray:
    """A freshly dealt game as a state array (validated arguments)."""
    validate_setup_args(num_players, seed, max_turns)
    bits = parse_modules(modules)
    s = np.zeros(state_size(bits), dtype=np.int32)
    setup(s, num_players, seed, max_turns, bits)
    return s


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
    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")


# ---------------------------------------------------------------------------
# Derived fields and invariants (snapshots live in splendor_env/snapshot.py)


def _owners(s: np.ndarray) -> np.ndarray:
    """Owner code of every card id this game can hold (90 base, 120 with modules)."""
    if s[MODULES] == 0:
        return s[CARD_OWNER : CARD_OWNER + NUM_CARDS]
    return np.concatenate([s[CARD_OWNER : CARD_OWNER + NUM_CARDS], s[OCARD_OWNER : OCARD_OWNER + NUM_ORIENT]])


def recompute_derived(s: np.ndarray) -> None:
    """Recompute bonuses, prestige and purchase counts from cards, pairs, nobles and trading posts."""
    n = int(s[N_PLAYERS])
    mods = int(s[MODULES])
    owners = _owners(s)
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        mine = np.flatnonzero(owners == p)
        bonus = np.zeros(5, dtype=np.int64)
        for c in mine:
            colour = int(ALL_CARD_COLOUR[c])
            if colour >= 0:
                bonus[colour] += ALL_CARD_BONUS[c]
            elif c >= NUM_CARDS and s[PAIR_HOST + c - NUM_CARDS] >= 0 if mods else False:
                bonus[ALL_CARD_COLOUR[s[PAIR_HOST + c - NUM_CARDS]]] += 1
        s[po + P_BONUS : po + P_BONUS + 5] = bonus
        s[po + P_CARDS] = len(mine)
        nobles = [s[NOBLE_ID + k] for k in range(NOBLE_SLOTS) if s[NOBLE_OWNER + k] == p]
        s[po + P_NOBLES] = len(nobles)
        prestige = int(ALL_CARD_POINTS[mine].sum()) + int(sum(NOBLE_POINTS[k] for k in nobles))
        if mods:
            prestige += trading_post_points(int(s[TP_HELD + p]))
        s[po + P_PRESTIGE] = prestige


def trading_post_points(held: int) -> int:
    """Prestige from the points trading post: 1 per trading post held, if it is held."""
    return bin(held).count("1") if held >> TP_POINTS & 1 else 0


def _phase_problems(s: np.ndarray, n: int) -> list[str]:
    """Header fields a reachable position always satisfies (so the mask is never empty mid-game)."""
    problems = []
    phase, cur = int(s[PHASE]), int(s[CURRENT])
    last_phase = len(PHASE_NAMES) - 1 if s[MODULES] else PHASE_TRUNCATED
    if not 0 <= phase <= last_phase or not 0 <= cur < n:
        return [f"phase {phase} or current player {cur} out of range"]
    if s[TURN] < 0 or s[PASSES] < 0:
        problems.append("turn and consecutive passes must be non-negative")
    po = PLAYERS + cur * PLAYER_SIZE
    if phase == PHASE_DISCARD and s[po + P_TOKENS : po + P_TOKENS + 6].sum() <= TOKEN_LIMIT:
        problems.append("discard phase but the player on move holds at most 10 tokens")
    if phase == PHASE_NOBLE and qualifying_nobles(s, po) < 2:
        problems.append("noble phase but fewer than 2 nobles on offer qualify for the player on move")
    outcome = s[OUTCOME : OUTCOME + MAX_PLAYERS]
    if outcome[n:].any() or not np.isin(outcome, (0, 1)).all():
        problems.append(f"outcome {outcome.tolist()} marks seats outside the game")
    elif phase != PHASE_GAME_OVER and outcome.any():
        problems.append("winners set before the game is over")
    return problems


def qualifying_nobles(s: np.ndarray, po: int) -> int:
    """Nobles on offer whose requirement the seat at offset ``po`` meets (a noble phase needs 2+)."""
    bonus = s[po + P_BONUS : po + P_BONUS + 5]
    return sum(
        1
        for k in range(NOBLE_SLOTS)
        if s[NOBLE_ID + k] >= 0 and s[NOBLE_OWNER + k] < 0 and (bonus >= NOBLE_REQ[s[NOBLE_ID + k]]).all()
    )


def check_invariants(s: np.ndarray) -> list[str]:
    """Conservation and consistency checks; returns a list of problems (empty = ok).

    Every card is in exactly one place (a deck, the market, a reserve, bought,
    or with modules the Orient market and decks, a pending draw or the box),
    every card sits at its own level, tokens add up to the setup totals,
    strongholds add up to 3 per player, counts are non-negative and derived
    fields agree with the cards.
    """
    problems: list[str] = []
    n = int(s[N_PLAYERS])
    if n not in GEMS_FOR_PLAYERS:
        return [f"num_players {n} is not 2, 3 or 4"]
    mods = int(s[MODULES])
    if mods & ~ALL_MODULES or len(s) != state_size(mods):
        return [f"modules bitmask {mods} does not match a state array of length {len(s)}"]
    ncards = NUM_ALL_CARDS if mods & MOD_ORIENT else NUM_CARDS
    seen = np.zeros(NUM_ALL_CARDS, dtype=np.int64)

    def place(card: int, where: str, level: int | None = None) -> None:
        if not 0 <= card < ncards:
            problems.append(f"{where}: card id {card} out of range")
            return
        seen[card] += 1
        if level is not None and ALL_CARD_LEVEL[card] != level:
            problems.append(f"{where}: card {card} is level {ALL_CARD_LEVEL[card] + 1}, not {level + 1}")

    for lvl in range(3):
        cnt = int(s[DECK_COUNT + lvl])
        if not 0 <= cnt <= LEVEL_SIZES[lvl]:
            problems.append(f"deck level {lvl + 1} count {cnt} out of range")
            cnt = 0
        for i in range(cnt):
            c = int(s[DECK + lvl * DECK_CAPACITY + i])
            place(c, f"deck level {lvl + 1}", lvl)
            if c >= NUM_CARDS:
                problems.append(f"Orient card {c} in a base deck")
        for k in range(MARKET_SLOTS):
            c = int(s[MARKET + lvl * MARKET_SLOTS + k])
            if c >= 0:
                place(c, f"market L{lvl + 1} slot {k + 1}", lvl)
                if c >= NUM_CARDS:
                    problems.append(f"Orient card {c} in the base market")
    if mods:
        for lvl in range(3):
            cnt = int(s[ODECK_COUNT + lvl])
            if not 0 <= cnt <= ORIENT_LEVEL_SIZE:
                problems.append(f"orient deck level {lvl + 1} count {cnt} out of range")
                cnt = 0
            for i in range(cnt):
                c = int(s[deck_addr(3 + lvl) + i])
                place(c, f"orient deck level {lvl + 1}", lvl)
                if c < NUM_CARDS:
                    problems.append(f"base card {c} in an Orient deck")
            for k in range(ORIENT_SLOTS):
                c = int(s[OMARKET + lvl * ORIENT_SLOTS + k])
                if c >= 0:
                    place(c, f"orient market L{lvl + 1} slot {k + 1}", lvl)
                    if c < NUM_CARDS:
                        problems.append(f"base card {c} in the Orient market")
        for addr in (PD_DRAWN0, PD_DRAWN1):
            if s[addr] >= 0:
                place(int(s[addr]), "drawn by the draw-two trading post")
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        held = [int(c) for c in s[po + P_RESERVED : po + P_RESERVED + MAX_RESERVED]]
        nres = sum(c >= 0 for c in held)
        if any(c < 0 for c in held[:nres]):
            problems.append(f"player {p}: reserved cards are not packed at the front")
        for c in held:
            if c >= 0:
                place(c, f"player {p} reserve")
    owners = _owners(s)
    for c in range(len(owners)):
        o = int(owners[c])
        if o >= n or o < (BOX if mods else -1):
            problems.append(f"card {c} owned by invalid seat {o}")
        elif o >= 0 or o == BOX:
            seen[c] += 1
    missing = np.flatnonzero(seen[:ncards] == 0)
    dup = np.flatnonzero(seen > 1)
    if len(missing):
        problems.append(f"cards missing: {missing.tolist()}")
    if len(dup):
        problems.append(f"cards in two places: {dup.tolist()}")
    if mods and not mods & MOD_ORIENT and (owners[NUM_CARDS:] != -1).any():
        problems.append("Orient cards owned in a game without the Orient")
    total = s[BANK : BANK + 6].astype(np.int64).copy()
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        total += s[po + P_TOKENS : po + P_TOKENS + 6]
        if (s[po + P_TOKENS : po + P_TOKENS + 6] < 0).any():
            problems.append(f"player {p} holds a negative token count")
    if (s[BANK : BANK + 6] < 0).any():
        problems.append("bank holds a negative token count")
    expected = [GEMS_FOR_PLAYERS[n]] * 5 + [GOLD_TOKENS]
    if total.tolist() != expected:
        problems.append(f"tokens not conserved: totals {total.tolist()}, expected {expected}")
    ids = [int(s[NOBLE_ID + k]) for k in range(NOBLE_SLOTS) if s[NOBLE_ID + k] >= 0]
    if len(set(ids)) != len(ids) or any(i >= NUM_NOBLES for i in ids):
        problems.append(f"noble ids invalid or repeated: {ids}")
    for k in range(NOBLE_SLOTS):
        o = int(s[NOBLE_OWNER + k])
        if not -1 <= o < n or (o >= 0 and s[NOBLE_ID + k] < 0):
            problems.append(f"noble slot {k + 1} owned by invalid seat {o}")
    problems += _phase_problems(s, n)
    if mods:
        problems += _check_module_invariants(s, n, mods, owners)
        if not problems and s[PHASE] not in (PHASE_GAME_OVER, PHASE_TRUNCATED):
            # Only on an otherwise sound array: the compiled rules do not bounds-check.
            from .actions import NUM_ACTIONS_ALL  # both import this module
            from .rules import legal_mask

            if legal_mask(s, np.zeros(NUM_ACTIONS_ALL, dtype=np.int8)) == 0:
                problems.append(f"no legal action in phase {PHASE_NAMES[s[PHASE]]} mid-game")
    derived = s.copy()
    recompute_derived(derived)
    if not np.array_equal(derived, s):
        problems.append("bonuses, prestige or counts disagree with the purchased cards and nobles")
    return problems


def _check_module_invariants(s: np.ndarray, n: int, mods: int, owners: np.ndarray) -> list[str]:
    problems: list[str] = []
    ranges = (
        (PD_STAGE, 0, STAGE_END),
        (PD_SAC_CARD, -1, NUM_ALL_CARDS - 1),
        (PD_SAC_LEFT, 0, 2),
        (PD_PAIR, -1, NUM_ALL_CARDS - 1),
        (PD_FREE_LEVEL, -1, 1),
        (PD_TP_TOKEN, 0, 1),
        (PD_EXTRA_EXCL, -1, 4),
        (PD_SH, 0, 1),
        (PD_REFILL, 0, (1 << ALL_SLOTS) - 1),
        (PD_CONQ, 0, 1),
        (PD_DRAWN_DECK, -1, 5),
    )
    for addr, lo, hi in ranges:
        if not lo <= s[addr] <= hi:
            problems.append(f"pending field at {addr} holds {int(s[addr])}, outside {lo}..{hi}")
    if (s[PD_DRAWN0] >= 0) != (s[PD_DRAWN_DECK] >= 0) or (s[PD_DRAWN0] >= 0) != (s[PD_DRAWN1] >= 0):
        problems.append("draw-two pending record incomplete")
    for k in range(CITIES_ON_OFFER):
        if not -1 <= s[CITY_ID + k] < len(CITY_SIDES) * 2 or not -1 <= s[CITY_OWNER + k] < n:
            problems.append(f"city slot {k + 1} holds an invalid city or owner")
    for q in range(MAX_PLAYERS):
        if not 0 <= s[TP_HELD + q] < 1 << len(TRADING_POSTS):
            problems.append(f"player {q}: invalid trading-post bitmask")
    if mods & MOD_CITIES and any(s[NOBLE_ID + k] >= 0 for k in range(NOBLE_SLOTS)):
        problems.append("nobles on offer in a game with Cities")
    for i in range(NUM_ORIENT):
        host = int(s[PAIR_HOST + i])
        card = NUM_CARDS + i
        if host < 0:
            continue
        if ALL_CARD_EFFECT[card] not in (EFFECT_PAIR, EFFECT_PAIR_FREE_L1):
            problems.append(f"card {card} is not a pair card but has a host")
        elif not 0 <= host < NUM_ALL_CARDS or owners[card] < 0 or owners[host] != owners[card]:
            problems.append(f"pair card {card} attached to card {host} of another owner")
        elif ALL_CARD_COLOUR[host] < 0:
            problems.append(f"pair card {card} attached to card {host} that has no colour")
    cities = [int(s[CITY_ID + k]) for k in range(CITIES_ON_OFFER) if s[CITY_ID + k] >= 0]
    if len(set(cities)) != len(cities):
        problems.append(f"cities repeated: {cities}")
    claimed = [int(s[CITY_OWNER + k]) for k in range(CITIES_ON_OFFER) if s[CITY_OWNER + k] >= 0]
    if len(set(claimed)) != len(claimed) or any(q >= n for q in claimed):
        problems.append(f"a player holds two cities, or a city has an invalid owner: {claimed}")
    for q in range(MAX_PLAYERS):
        on_board = int(s[SH_ON + q : SH_ON + ALL_SLOTS * MAX_PLAYERS : MAX_PLAYERS].sum())
        supply = int(s[SH_SUPPLY + q])
        want = STRONGHOLDS if (mods & MOD_STRONGHOLDS and q < n) else 0
        if supply < 0 or on_board + supply != want:
            problems.append(
                f"player {q}: strongholds not conserved ({supply} in supply, {on_board} on cards)"
            )
    for m in range(ALL_SLOTS):
        row = s[SH_ON + m * MAX_PLAYERS : SH_ON + (m + 1) * MAX_PLAYERS]
        if (row < 0).any() or (row > 0).sum() > 1:
            problems.append(f"market slot {m}: strongholds of several players or negative counts")
        elif row.sum() and s[slot_addr(m)] < 0:
            problems.append(f"market slot {m}: strongholds on an empty slot")
    for q in range(n, MAX_PLAYERS):
        if s[TP_HELD + q]:
            problems.append(f"absent seat {q} holds trading posts")
    return problems


def __getattr__(name: str) -> Any:
    """``state.to_dict`` / ``state.from_dict`` moved to :mod:`splendor_env.snapshot`; still importable here."""
    if name in ("to_dict", "from_dict"):
        from . import snapshot

        return getattr(snapshot, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
