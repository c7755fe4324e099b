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
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .cards import (
    CARD_COLOUR,
    CARD_LEVEL,
    CARD_POINTS,
    LEVEL_OFFSETS,
    LEVEL_SIZES,
    NOBLE_POINTS,
    NOBLE_REQ,
    NUM_CARDS,
    NUM_NOBLES,
    TOKEN_COLOURS,
)

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
PHASE_NAMES = ("main", "discard", "noble", "game_over", "truncated")

# Header fields.
N_PLAYERS = 0
CURRENT = 1
PHASE = 2
TURN = 3  # completed turns, all players together
FINAL_ROUND = 4  # 1 once someone ended a turn with >= 15 prestige
PASSES = 5  # consecutive pass turns
MAX_TURNS = 6  # turn cap; reaching it truncates the game
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

#: Gem tokens per colour in the bank at setup, by number of players.
GEMS_FOR_PLAYERS = {2: 4, 3: 5, 4: 7}
GOLD_TOKENS = 5


@njit(cache=True, inline="always")
def player_offset(seat: int) -> int:
    return PLAYERS + seat * PLAYER_SIZE


@njit(cache=True)
def _splitmix64(rng: np.ndarray) -> np.uint64:
    """Deterministic 64-bit generator; ``rng`` is a one-element uint64 array."""
    x = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = x
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _randint(rng: np.ndarray, n: int) -> int:
    return int(_splitmix64(rng) % np.uint64(n))


@njit(cache=True)
def setup(s: np.ndarray, num_players: int, seed: int, max_turns: int) -> None:
    """Fill ``s`` with a fresh game. The same seed always deals the same game.

    Shuffling uses a counter-based generator seeded by ``seed`` (not numpy's
    global state), so the AEC env and the batched path deal identical games.
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
        for i in range(n - 1, 0, -1):  # Fisher-Yates
            j = _randint(rng, i + 1)
            t = s[base + i]
            s[base + i] = s[base + j]
            s[base + j] = t
        s[DECK_COUNT + lvl] = n
        for slot in range(MARKET_SLOTS):
            s[MARKET + lvl * MARKET_SLOTS + slot] = draw_card(s, lvl)
    nobles = np.arange(NUM_NOBLES)
    for i in range(NUM_NOBLES - 1, 0, -1):
        j = _randint(rng, i + 1)
        t = nobles[i]
        nobles[i] = nobles[j]
        nobles[j] = t
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


def new_state(num_players: int = 2, seed: int = 0, max_turns: int = DEFAULT_MAX_TURNS) -> np.ndarray:
    """A freshly dealt game as a state array (validated arguments)."""
    validate_setup_args(num_players, seed, max_turns)
    s = np.zeros(STATE_SIZE, dtype=np.int32)
    setup(s, num_players, seed, max_turns)
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
# Snapshots: state array <-> JSON-serialisable dict


def _tokens(arr: np.ndarray) -> dict[str, int]:
    return {name: int(v) for name, v in zip(TOKEN_COLOURS, arr, strict=False)}


def to_dict(s: np.ndarray) -> dict[str, Any]:
    """Full, JSON-serialisable snapshot of a game (hidden information included).

    ``decks`` lists each level's remaining cards bottom first (the last id is
    the top card). ``from_dict(to_dict(s))`` reproduces ``s`` exactly.
    """
    n = int(s[N_PLAYERS])
    players = []
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        reserved = [
            {"card": int(s[po + P_RESERVED + r]), "blind": bool(s[po + P_RESERVED_BLIND + r])}
            for r in range(MAX_RESERVED)
            if s[po + P_RESERVED + r] >= 0
        ]
        players.append(
            {
                "tokens": _tokens(s[po + P_TOKENS : po + P_TOKENS + 6]),
                "bonuses": _tokens(s[po + P_BONUS : po + P_BONUS + 5]),
                "prestige": int(s[po + P_PRESTIGE]),
                "purchased": [int(c) for c in np.flatnonzero(s[CARD_OWNER : CARD_OWNER + NUM_CARDS] == p)],
                "nobles": [int(s[NOBLE_ID + k]) for k in range(NOBLE_SLOTS) if s[NOBLE_OWNER + k] == p],
                "reserved": reserved,
            }
        )
    return {
        "num_players": n,
        "current_player": int(s[CURRENT]),
        "phase": PHASE_NAMES[s[PHASE]],
        "turn": int(s[TURN]),
        "final_round": bool(s[FINAL_ROUND]),
        "consecutive_passes": int(s[PASSES]),
        "max_turns": int(s[MAX_TURNS]),
        "bank": _tokens(s[BANK : BANK + 6]),
        "market": [
            [int(s[MARKET + lvl * MARKET_SLOTS + k]) for k in range(MARKET_SLOTS)] for lvl in range(3)
        ],
        "decks": [
            [int(c) for c in s[DECK + lvl * DECK_CAPACITY : DECK + lvl * DECK_CAPACITY + s[DECK_COUNT + lvl]]]
            for lvl in range(3)
        ],
        "nobles": [
            {
                "noble": int(s[NOBLE_ID + k]),
                "owner": None if s[NOBLE_OWNER + k] < 0 else int(s[NOBLE_OWNER + k]),
            }
            for k in range(NOBLE_SLOTS)
            if s[NOBLE_ID + k] >= 0
        ],
        "players": players,
        "winners": [p for p in range(n) if s[OUTCOME + p]],
    }


def from_dict(d: dict[str, Any]) -> np.ndarray:
    """Rebuild a state array from a :func:`to_dict` snapshot, checking it.

    Derived fields (bonuses, prestige, card counts) are recomputed from the
    purchased cards and nobles, so a hand-edited snapshot cannot contradict
    itself. Raises ``ValueError`` naming the first problem found.
    """
    try:
        n = int(d["num_players"])
        validate_setup_args(n, 0, int(d.get("max_turns", DEFAULT_MAX_TURNS)))
        s = np.zeros(STATE_SIZE, dtype=np.int32)
        s[N_PLAYERS] = n
        s[CURRENT] = int(d.get("current_player", 0))
        if not 0 <= s[CURRENT] < n:
            raise ValueError(f"current_player {s[CURRENT]} is not a seat of a {n}-player game")
        phase = d.get("phase", "main")
        if phase not in PHASE_NAMES:
            raise ValueError(f"unknown phase {phase!r}; expected one of {PHASE_NAMES}")
        s[PHASE] = PHASE_NAMES.index(phase)
        s[TURN] = int(d.get("turn", 0))
        s[FINAL_ROUND] = int(bool(d.get("final_round", False)))
        s[PASSES] = int(d.get("consecutive_passes", 0))
        s[MAX_TURNS] = int(d.get("max_turns", DEFAULT_MAX_TURNS))
        s[BANK : BANK + 6] = [int(d["bank"][c]) for c in TOKEN_COLOURS]
        s[MARKET : MARKET + 12] = -1
        s[DECK : DECK + 3 * DECK_CAPACITY] = -1
        for lvl in range(3):
            row = d["market"][lvl]
            if len(row) != MARKET_SLOTS:
                raise ValueError(f"market level {lvl + 1} must have {MARKET_SLOTS} slots, got {len(row)}")
            s[MARKET + lvl * MARKET_SLOTS : MARKET + (lvl + 1) * MARKET_SLOTS] = row
            deck = d["decks"][lvl]
            s[DECK_COUNT + lvl] = len(deck)
            s[DECK + lvl * DECK_CAPACITY : DECK + lvl * DECK_CAPACITY + len(deck)] = deck
        s[NOBLE_ID : NOBLE_ID + NOBLE_SLOTS] = -1
        s[NOBLE_OWNER : NOBLE_OWNER + NOBLE_SLOTS] = -1
        for k, entry in enumerate(d["nobles"]):
            s[NOBLE_ID + k] = int(entry["noble"])
            s[NOBLE_OWNER + k] = -1 if entry.get("owner") is None else int(entry["owner"])
        s[CARD_OWNER : CARD_OWNER + NUM_CARDS] = -1
        if len(d["players"]) != n:
            raise ValueError(f"{n}-player game needs {n} player entries, got {len(d['players'])}")
        for p, pl in enumerate(d["players"]):
            po = PLAYERS + p * PLAYER_SIZE
            s[po + P_TOKENS : po + P_TOKENS + 6] = [int(pl["tokens"][c]) for c in TOKEN_COLOURS]
            for c in pl.get("purchased", []):
                if not 0 <= int(c) < NUM_CARDS:
                    raise ValueError(f"player {p}: purchased card id {c} out of range")
                s[CARD_OWNER + int(c)] = p
            s[po + P_RESERVED : po + P_RESERVED + MAX_RESERVED] = -1
            if len(pl.get("reserved", [])) > MAX_RESERVED:
                raise ValueError(f"player {p} holds more than {MAX_RESERVED} reserved cards")
            for r, res in enumerate(pl.get("reserved", [])):
                s[po + P_RESERVED + r] = int(res["card"])
                s[po + P_RESERVED_BLIND + r] = int(bool(res.get("blind", False)))
        for p in range(MAX_PLAYERS):
            if p >= n:
                s[
                    PLAYERS + p * PLAYER_SIZE + P_RESERVED : PLAYERS
                    + p * PLAYER_SIZE
                    + P_RESERVED
                    + MAX_RESERVED
                ] = -1
        for p in d.get("winners", []):
            if not 0 <= int(p) < n:
                raise ValueError(f"winner {p} is not a seat of a {n}-player game")
            s[OUTCOME + int(p)] = 1
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"malformed state snapshot: {exc!r}") from exc
    recompute_derived(s)
    problems = check_invariants(s)
    if problems:
        raise ValueError("inconsistent state snapshot: " + "; ".join(problems))
    return s


def recompute_derived(s: np.ndarray) -> None:
    """Recompute bonuses, prestige and purchase counts from cards and nobles."""
    n = int(s[N_PLAYERS])
    owners = s[CARD_OWNER : CARD_OWNER + NUM_CARDS]
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        mine = np.flatnonzero(owners == p)
        s[po + P_BONUS : po + P_BONUS + 5] = np.bincount(CARD_COLOUR[mine], minlength=5)
        s[po + P_CARDS] = len(mine)
        nobles = [s[NOBLE_ID + k] for k in range(NOBLE_SLOTS) if s[NOBLE_OWNER + k] == p]
        s[po + P_NOBLES] = len(nobles)
        s[po + P_PRESTIGE] = int(CARD_POINTS[mine].sum()) + int(sum(NOBLE_POINTS[k] for k in nobles))


def _phase_problems(s: np.ndarray, n: int) -> list[str]:
    """Header fields a reachable position always satisfies (so the mask is never empty mid-game)."""
    problems = []
    phase, cur = int(s[PHASE]), int(s[CURRENT])
    if not 0 <= phase < len(PHASE_NAMES) or not 0 <= cur < n:
        return [f"phase {phase} or current player {cur} out of range"]
    if s[TURN] < 0 or s[PASSES] < 0:
        problems.append("turn and consecutive passes must be non-negative")
    po = PLAYERS + cur * PLAYER_SIZE
    if phase == PHASE_DISCARD and s[po + P_TOKENS : po + P_TOKENS + 6].sum() <= TOKEN_LIMIT:
        problems.append("discard phase but the player on move holds at most 10 tokens")
    if phase == PHASE_NOBLE:
        bonus = s[po + P_BONUS : po + P_BONUS + 5]
        qualify = sum(
            1
            for k in range(NOBLE_SLOTS)
            if s[NOBLE_ID + k] >= 0 and s[NOBLE_OWNER + k] < 0 and (bonus >= NOBLE_REQ[s[NOBLE_ID + k]]).all()
        )
        if qualify < 2:
            problems.append("noble phase but fewer than 2 nobles on offer qualify for the player on move")
    outcome = s[OUTCOME : OUTCOME + MAX_PLAYERS]
    if outcome[n:].any() or not np.isin(outcome, (0, 1)).all():
        problems.append(f"outcome {outcome.tolist()} marks seats outside the game")
    elif phase != PHASE_GAME_OVER and outcome.any():
        problems.append("winners set before the game is over")
    return problems


def check_invariants(s: np.ndarray) -> list[str]:
    """Conservation and consistency checks; returns a list of problems (empty = ok).

    Every card is in exactly one place (a deck, the market, a reserve, or
    bought), every card sits at its own level, tokens add up to the setup
    totals, counts are non-negative and derived fields agree with the cards.
    """
    problems: list[str] = []
    n = int(s[N_PLAYERS])
    if n not in GEMS_FOR_PLAYERS:
        return [f"num_players {n} is not 2, 3 or 4"]
    seen = np.zeros(NUM_CARDS, dtype=np.int64)

    def place(card: int, where: str, level: int | None = None) -> None:
        if not 0 <= card < NUM_CARDS:
            problems.append(f"{where}: card id {card} out of range")
            return
        seen[card] += 1
        if level is not None and CARD_LEVEL[card] != level:
            problems.append(f"{where}: card {card} is level {CARD_LEVEL[card] + 1}, not {level + 1}")

    for lvl in range(3):
        cnt = int(s[DECK_COUNT + lvl])
        if not 0 <= cnt <= LEVEL_SIZES[lvl]:
            problems.append(f"deck level {lvl + 1} count {cnt} out of range")
            cnt = 0
        for i in range(cnt):
            place(int(s[DECK + lvl * DECK_CAPACITY + i]), f"deck level {lvl + 1}", lvl)
        for k in range(MARKET_SLOTS):
            c = int(s[MARKET + lvl * MARKET_SLOTS + k])
            if c >= 0:
                place(c, f"market L{lvl + 1} slot {k + 1}", lvl)
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        held = [int(c) for c in s[po + P_RESERVED : po + P_RESERVED + MAX_RESERVED]]
        nres = sum(c >= 0 for c in held)
        if any(c < 0 for c in held[:nres]):
            problems.append(f"player {p}: reserved cards are not packed at the front")
        for c in held:
            if c >= 0:
                place(c, f"player {p} reserve")
    for c in range(NUM_CARDS):
        o = int(s[CARD_OWNER + c])
        if o >= n or o < -1:
            problems.append(f"card {c} owned by invalid seat {o}")
        elif o >= 0:
            seen[c] += 1
    missing = np.flatnonzero(seen == 0)
    dup = np.flatnonzero(seen > 1)
    if len(missing):
        problems.append(f"cards missing: {missing.tolist()}")
    if len(dup):
        problems.append(f"cards in two places: {dup.tolist()}")
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
    derived = s.copy()
    recompute_derived(derived)
    if not np.array_equal(derived, s):
        problems.append("bonuses, prestige or counts disagree with the purchased cards and nobles")
    return problems
