"""Snapshots: a game's state array <-> a readable, JSON-serialisable dict, validated strictly.

Why strict: a snapshot is data a user hands the library (a saved game, a hand-made
position, a JSON file). The compiled rules do not bounds-check, so a value that
slipped through (an index out of range, a float read as an int, a missing key read
as a default) would corrupt the game silently. :func:`from_dict` therefore checks
every key, every type, every range and every cross-field relation a reachable game
satisfies, and refuses the first problem with one :class:`SnapshotError` line that
names the field path, e.g. ``snapshot["players"][1]["tokens"]["red"]: expected an
integer in 0..4, got 15.9``.

Format (what :func:`to_dict` writes; every key is required, unknown keys are refused):

* ``num_players``, ``current_player``, ``phase`` (a name of ``PHASE_NAMES``),
  ``turn``, ``final_round`` (a bool), ``consecutive_passes``, ``max_turns``,
  ``bank`` (colour -> count), ``market`` (3 x 4 card ids, -1 empty), ``decks``
  (3 lists, bottom first), ``nobles`` (``{"noble", "owner"}``), ``players`` and
  ``winners``.
* per player: ``tokens``, ``purchased``, ``reserved`` (``{"card", "blind"}``) and
  the derived ``bonuses``, ``prestige`` and ``nobles``: these three are
  type-checked, then recomputed from the cards, nobles and trading posts (so a
  hand-edited snapshot cannot contradict itself).
* with modules: ``modules``, ``orient_market``, ``orient_decks``, ``cities``,
  ``strongholds`` (``[slot, seat, count]``), ``boxed``, ``pending`` (all 13
  ``PD_*`` fields) and per player ``pairs``, ``trading_posts``,
  ``stronghold_supply``.
* Older format: a snapshot without ``modules`` (version 0.1.0) is a base game;
  that is the only default.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .cards import (
    ALL_CARD_COLOUR,
    ALL_CARD_EFFECT,
    ALL_CARD_LEVEL,
    ALL_CARD_SAC_COLOUR,
    CITIES_ON_OFFER,
    EFFECT_PAIR,
    EFFECT_PAIR_FREE_L1,
    LEVEL_SIZES,
    NUM_ALL_CARDS,
    NUM_CARDS,
    NUM_CITIES,
    NUM_NOBLES,
    NUM_ORIENT,
    ORIENT_LEVEL_SIZE,
    TOKEN_COLOURS,
    TRADING_POSTS,
)
from .invariants import card_owners, check_invariants, recompute_derived
from .state import (
    ALL_SLOTS,
    BANK,
    BOX,
    CARD_OWNER,
    CITY_ID,
    CITY_OWNER,
    CURRENT,
    DECK,
    DECK_CAPACITY,
    DECK_COUNT,
    FINAL_ROUND,
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
    MOD_TRADING_POSTS,
    MODULE_NAMES,
    MODULES,
    N_PLAYERS,
    NOBLE_ID,
    NOBLE_OWNER,
    NOBLE_SLOTS,
    OCARD_OWNER,
    ODECK_COUNT,
    OMARKET,
    ORIENT_SLOTS,
    OUTCOME,
    P_BONUS,
    P_PRESTIGE,
    P_RESERVED,
    P_RESERVED_BLIND,
    P_TOKENS,
    PAIR_HOST,
    PASSES,
    PD_CONQ,
    PD_DRAWN0,
    PD_DRAWN1,
    PD_DRAWN_DECK,
    PD_EXTRA_EXCL,
    PD_FREE_LEVEL,
    PD_PAIR,
    PD_REFILL,
    PD_SAC_CARD,
    PD_SAC_LEFT,
    PD_SH,
    PD_STAGE,
    PD_TP_TOKEN,
    PHASE,
    PHASE_CITY,
    PHASE_CONQUEST,
    PHASE_DISCARD,
    PHASE_GAME_OVER,
    PHASE_MAIN,
    PHASE_NAMES,
    PHASE_NOBLE,
    PHASE_TRADING_POST_CHOICE,
    PHASE_TRUNCATED,
    PLAYER_SIZE,
    PLAYERS,
    SH_ON,
    SH_SUPPLY,
    STAGE_CITIES,
    STAGE_EFFECTS,
    STAGE_END,
    STAGE_NOBLES,
    STAGE_TOKEN_LIMIT,
    STAGE_TRADING_POSTS,
    STATE_SIZE,
    STATE_SIZE_ALL,
    STRONGHOLDS,
    TOKEN_LIMIT,
    TP_HELD,
    TURN,
    deck_addr,
    module_names,
    owner_addr,
    player_offset,
    qualifying_nobles,
    slot_addr,
    state_size,
)

INT32_MAX = 2**31 - 1
ROOT = "snapshot"


class SnapshotError(ValueError):
    """A snapshot (or state array) that is not a valid game; the message names the field."""


# ---------------------------------------------------------------------------
# state array -> dict


def _tokens(arr: np.ndarray) -> dict[str, int]:
    return {name: int(v) for name, v in zip(TOKEN_COLOURS, arr, strict=False)}


def to_dict(s: np.ndarray) -> dict[str, Any]:
    """Full, JSON-serialisable snapshot of a game (hidden information included).

    ``decks`` lists each level's remaining cards bottom first (the last id is
    the top card). ``from_dict(to_dict(s))`` reproduces ``s`` exactly. A game
    with modules has the extra keys ``modules``, ``orient_market``,
    ``orient_decks``, ``cities``, ``strongholds``, ``boxed``, ``pending`` and,
    per player, ``pairs``, ``trading_posts`` and ``stronghold_supply``.
    """
    n = int(s[N_PLAYERS])
    mods = int(s[MODULES])
    owners = card_owners(s)
    players = []
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        reserved = [
            {"card": int(s[po + P_RESERVED + r]), "blind": bool(s[po + P_RESERVED_BLIND + r])}
            for r in range(MAX_RESERVED)
            if s[po + P_RESERVED + r] >= 0
        ]
        entry = {
            "tokens": _tokens(s[po + P_TOKENS : po + P_TOKENS + 6]),
            "bonuses": _tokens(s[po + P_BONUS : po + P_BONUS + 5]),
            "prestige": int(s[po + P_PRESTIGE]),
            "purchased": [int(c) for c in np.flatnonzero(owners == p)],
            "nobles": [int(s[NOBLE_ID + k]) for k in range(NOBLE_SLOTS) if s[NOBLE_OWNER + k] == p],
            "reserved": reserved,
        }
        if mods:
            entry["pairs"] = {
                str(NUM_CARDS + i): int(s[PAIR_HOST + i])
                for i in range(NUM_ORIENT)
                if s[OCARD_OWNER + i] == p and s[PAIR_HOST + i] >= 0
            }
            entry["trading_posts"] = [name for k, name in enumerate(TRADING_POSTS) if s[TP_HELD + p] >> k & 1]
            entry["stronghold_supply"] = int(s[SH_SUPPLY + p])
        players.append(entry)
    d = {
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
    if mods:
        d["modules"] = list(module_names(mods))
        d["orient_market"] = [
            [int(s[OMARKET + lvl * ORIENT_SLOTS + k]) for k in range(ORIENT_SLOTS)] for lvl in range(3)
        ]
        d["orient_decks"] = [
            [int(c) for c in s[deck_addr(3 + lvl) : deck_addr(3 + lvl) + s[ODECK_COUNT + lvl]]]
            for lvl in range(3)
        ]
        d["cities"] = [
            {"city": int(s[CITY_ID + k]), "owner": None if s[CITY_OWNER + k] < 0 else int(s[CITY_OWNER + k])}
            for k in range(CITIES_ON_OFFER)
            if s[CITY_ID + k] >= 0
        ]
        d["strongholds"] = [
            [m, q, int(s[SH_ON + m * MAX_PLAYERS + q])]
            for m in range(ALL_SLOTS)
            for q in range(MAX_PLAYERS)
            if s[SH_ON + m * MAX_PLAYERS + q]
        ]
        d["boxed"] = [int(c) for c in np.flatnonzero(owners == BOX)]
        d["pending"] = {name: int(s[addr]) for name, addr in _PENDING_FIELDS}
    return d


_PENDING_FIELDS = (
    ("stage", PD_STAGE),
    ("sacrifice_card", PD_SAC_CARD),
    ("sacrifice_left", PD_SAC_LEFT),
    ("pair_card", PD_PAIR),
    ("free_level", PD_FREE_LEVEL),
    ("trading_post_token", PD_TP_TOKEN),
    ("extra_token_excluded", PD_EXTRA_EXCL),
    ("stronghold_action", PD_SH),
    ("refill_slots", PD_REFILL),
    ("conquest_done", PD_CONQ),
    ("drawn_0", PD_DRAWN0),
    ("drawn_1", PD_DRAWN1),
    ("drawn_deck", PD_DRAWN_DECK),
)

#: Range of each pending field (drawn cards are checked as cards).
_PENDING_RANGES = {
    "stage": (0, STAGE_END),
    "sacrifice_card": (-1, NUM_ALL_CARDS - 1),
    "sacrifice_left": (0, 2),
    "pair_card": (-1, NUM_ALL_CARDS - 1),
    "free_level": (-1, 1),
    "trading_post_token": (0, 1),
    "extra_token_excluded": (-1, 4),
    "stronghold_action": (0, 1),
    "refill_slots": (0, (1 << ALL_SLOTS) - 1),
    "conquest_done": (0, 1),
    "drawn_0": (-1, NUM_ALL_CARDS - 1),
    "drawn_1": (-1, NUM_ALL_CARDS - 1),
    "drawn_deck": (-1, 5),
}

BASE_KEYS = (
    "num_players",
    "current_player",
    "phase",
    "turn",
    "final_round",
    "consecutive_passes",
    "max_turns",
    "bank",
    "market",
    "decks",
    "nobles",
    "players",
    "winners",
)
MODULE_KEYS = ("modules", "orient_market", "orient_decks", "cities", "strongholds", "boxed", "pending")
PLAYER_KEYS = ("tokens", "bonuses", "prestige", "purchased", "nobles", "reserved")
PLAYER_MODULE_KEYS = ("pairs", "trading_posts", "stronghold_supply")

# ---------------------------------------------------------------------------
# Typed readers: each returns the checked value or raises naming the path


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(path: str, message: str) -> SnapshotError:
    return SnapshotError(f"{path}: {message}")


def _key(path: str, key: str | int) -> str:
    return f"{path}[{key!r}]".replace("'", '"') if isinstance(key, str) else f"{path}[{key}]"


def _int(value: Any, path: str, lo: int, hi: int) -> int:
    """An integer field: ints only (no bools, floats or strings), in ``lo..hi``."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer))
        or not lo <= value <= hi
    ):
        raise _fail(path, f"expected an integer in {lo}..{hi}, got {_show(value)}")
    return int(value)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise _fail(path, f"expected true or false (a bool), got {_show(value)}")
    return bool(value)


def _list(value: Any, path: str, lo: int, hi: int) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise _fail(path, f"expected a list, got {_show(value)}")
    if not lo <= len(value) <= hi:
        want = f"{lo}" if lo == hi else f"{lo}..{hi}"
        raise _fail(path, f"expected a list of {want} entries, got {len(value)}")
    return list(value)


def _dict(value: Any, path: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """A dict with exactly ``keys``: a missing key or an unknown one is an error naming it."""
    if not isinstance(value, dict):
        raise _fail(path, f"expected a dict with keys {list(keys)}, got {_show(value)}")
    for k in keys:
        if k not in value:
            raise _fail(_key(path, k), "missing (required key)")
    for k in value:
        if k not in keys:
            shown = _key(path, k) if isinstance(k, str) else f"{path}[{_show(k)}]"
            raise _fail(shown, f"unknown key; expected only {list(keys)}")
    return value


def _owner(value: Any, path: str, n: int) -> int:
    """``None`` (unowned) or a seat of the game; returned as -1 or the seat."""
    return -1 if value is None else _int(value, path, 0, n - 1)


class _Cards:
    """Registers where each card was read, so a card in two places names both."""

    def __init__(self, ncards: int) -> None:
        self.ncards = ncards
        self.where: dict[int, str] = {}

    def read(self, value: Any, path: str, level: int | None = None, orient: bool | None = None) -> int:
        card = _int(value, path, 0, self.ncards - 1)
        if orient is not None and (card >= NUM_CARDS) != orient:
            kind = "an Orient card" if orient else "a base card"
            raise _fail(path, f"card {card} is not {kind}")
        if level is not None and ALL_CARD_LEVEL[card] != level:
            raise _fail(
                path, f"card {card} is a level-{ALL_CARD_LEVEL[card] + 1} card, not level {level + 1}"
            )
        if card in self.where:
            raise _fail(path, f"card {card} is in two places: also at {self.where[card]}")
        self.where[card] = path
        return card


# ---------------------------------------------------------------------------
# dict -> state array


def from_dict(d: Any) -> np.ndarray:
    """Rebuild a state array from a :func:`to_dict` snapshot, refusing anything invalid.

    Raises :class:`SnapshotError` (a ``ValueError``) naming the field path of the
    first problem found; see the module docstring for the format.
    """
    if not isinstance(d, dict):
        raise SnapshotError(f"{ROOT}: expected a dict (from snapshot() or to_dict()), got {_show(d)}")
    mods = _read_modules(d)
    _dict(d, ROOT, BASE_KEYS + (MODULE_KEYS if mods else ("modules",) if "modules" in d else ()))
    n = _int(d["num_players"], _key(ROOT, "num_players"), 2, MAX_PLAYERS)
    s = np.zeros(state_size(mods), dtype=np.int32)
    s[N_PLAYERS] = n
    s[MODULES] = mods
    s[CARD_OWNER : CARD_OWNER + NUM_CARDS] = -1
    _read_header(s, d, n, mods)
    cards = _Cards(NUM_ALL_CARDS if mods & MOD_ORIENT else NUM_CARDS)
    _read_bank_and_market(s, d, n, cards)
    _read_nobles(s, d, n, mods)
    if mods:
        _read_module_fields(s, d, n, mods, cards)
    _read_players(s, d, n, mods, cards)
    missing = sorted(set(range(cards.ncards)) - set(cards.where))
    if missing:
        raise _fail(
            _key(ROOT, "decks"),
            f"cards missing (in no deck, market, reserve, purchase or the box): {missing}",
        )
    _check_tokens(s, n)
    recompute_derived(s)
    _check_cross_fields(s, d, n, mods)
    problems = check_invariants(s)
    if problems:  # a backstop: every check above names its field, this one the first rule broken
        raise SnapshotError(f"{ROOT}: inconsistent state: {problems[0]}")
    return s


def _read_modules(d: dict[str, Any]) -> int:
    if "modules" not in d:
        return 0  # the 0.1.0 format: a base game
    path = _key(ROOT, "modules")
    names = _list(d["modules"], path, 0, len(MODULE_NAMES))
    bits = 0
    for i, name in enumerate(names):
        if not isinstance(name, str) or name not in MODULE_NAMES:
            raise _fail(
                f"{path}[{i}]", f"unknown module {_show(name)}; known modules: {', '.join(MODULE_NAMES)}"
            )
        if bits & 1 << MODULE_NAMES.index(name):
            raise _fail(f"{path}[{i}]", f"module {name!r} listed twice")
        bits |= 1 << MODULE_NAMES.index(name)
    return bits


def _read_header(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    s[MAX_TURNS] = _int(d["max_turns"], _key(ROOT, "max_turns"), 1, INT32_MAX)
    s[CURRENT] = _int(d["current_player"], _key(ROOT, "current_player"), 0, n - 1)
    phase = d["phase"]
    names = PHASE_NAMES if mods else PHASE_NAMES[: PHASE_TRUNCATED + 1]
    if not isinstance(phase, str) or phase not in names:
        extra = "" if mods or phase not in PHASE_NAMES else " (that phase exists only with modules)"
        raise _fail(
            _key(ROOT, "phase"), f"unknown phase {_show(phase)}{extra}; expected one of {list(names)}"
        )
    s[PHASE] = PHASE_NAMES.index(phase)
    s[TURN] = _int(d["turn"], _key(ROOT, "turn"), 0, int(s[MAX_TURNS]))
    s[FINAL_ROUND] = _bool(d["final_round"], _key(ROOT, "final_round"))
    s[PASSES] = _int(d["consecutive_passes"], _key(ROOT, "consecutive_passes"), 0, n)


def _read_tokens(value: Any, path: str, n: int, count: int = 6) -> list[int]:
    names = TOKEN_COLOURS[:count]
    tokens = _dict(value, path, names)
    limits = [GEMS_FOR_PLAYERS[n]] * 5 + [GOLD_TOKENS]
    return [_int(tokens[c], _key(path, c), 0, limits[i]) for i, c in enumerate(names)]


def _read_bank_and_market(s: np.ndarray, d: dict[str, Any], n: int, cards: _Cards) -> None:
    s[BANK : BANK + 6] = _read_tokens(d["bank"], _key(ROOT, "bank"), n)
    market = _list(d["market"], _key(ROOT, "market"), 3, 3)
    decks = _list(d["decks"], _key(ROOT, "decks"), 3, 3)
    s[DECK : DECK + 3 * DECK_CAPACITY] = -1
    for lvl in range(3):
        path = f"{_key(ROOT, 'market')}[{lvl}]"
        row = _list(market[lvl], path, MARKET_SLOTS, MARKET_SLOTS)
        for k, value in enumerate(row):
            if (
                isinstance(value, (int, np.integer))
                and not isinstance(value, (bool, np.bool_))
                and value == -1
            ):
                s[MARKET + lvl * MARKET_SLOTS + k] = -1
            else:
                s[MARKET + lvl * MARKET_SLOTS + k] = cards.read(value, f"{path}[{k}]", lvl, orient=False)
        path = f"{_key(ROOT, 'decks')}[{lvl}]"
        deck = _list(decks[lvl], path, 0, int(LEVEL_SIZES[lvl]))
        s[DECK_COUNT + lvl] = len(deck)
        for i, value in enumerate(deck):
            s[DECK + lvl * DECK_CAPACITY + i] = cards.read(value, f"{path}[{i}]", lvl, orient=False)


def _read_nobles(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    path = _key(ROOT, "nobles")
    limit = 0 if mods & MOD_CITIES else n + 1
    entries = _list(d["nobles"], path, 0, limit)
    s[NOBLE_ID : NOBLE_ID + NOBLE_SLOTS] = -1
    s[NOBLE_OWNER : NOBLE_OWNER + NOBLE_SLOTS] = -1
    seen: dict[int, str] = {}
    for k, entry in enumerate(entries):
        epath = f"{path}[{k}]"
        entry = _dict(entry, epath, ("noble", "owner"))
        noble = _int(entry["noble"], _key(epath, "noble"), 0, NUM_NOBLES - 1)
        if noble in seen:
            raise _fail(_key(epath, "noble"), f"noble {noble} is listed twice: also at {seen[noble]}")
        seen[noble] = _key(epath, "noble")
        s[NOBLE_ID + k] = noble
        s[NOBLE_OWNER + k] = _owner(entry["owner"], _key(epath, "owner"), n)


def _read_players(s: np.ndarray, d: dict[str, Any], n: int, mods: int, cards: _Cards) -> None:
    path = _key(ROOT, "players")
    entries = _list(d["players"], path, n, n)
    for p in range(MAX_PLAYERS):
        s[player_offset(p) + P_RESERVED : player_offset(p) + P_RESERVED + MAX_RESERVED] = -1
    keys = PLAYER_KEYS + (PLAYER_MODULE_KEYS if mods else ())
    for p, entry in enumerate(entries):
        ppath = f"{path}[{p}]"
        pl = _dict(entry, ppath, keys)
        po = player_offset(p)
        s[po + P_TOKENS : po + P_TOKENS + 6] = _read_tokens(pl["tokens"], _key(ppath, "tokens"), n)
        # Derived fields: type- and range-checked, then recomputed from the cards.
        bonus_path = _key(ppath, "bonuses")
        bonuses = _dict(pl["bonuses"], bonus_path, TOKEN_COLOURS[:5])
        for c in TOKEN_COLOURS[:5]:
            _int(bonuses[c], _key(bonus_path, c), 0, NUM_ALL_CARDS)
        _int(pl["prestige"], _key(ppath, "prestige"), 0, 1000)
        for i, noble in enumerate(_list(pl["nobles"], _key(ppath, "nobles"), 0, NOBLE_SLOTS)):
            _int(noble, f"{_key(ppath, 'nobles')}[{i}]", 0, NUM_NOBLES - 1)
        bought = _list(pl["purchased"], _key(ppath, "purchased"), 0, cards.ncards)
        for i, value in enumerate(bought):
            s[owner_addr(cards.read(value, f"{_key(ppath, 'purchased')}[{i}]"))] = p
        rpath = _key(ppath, "reserved")
        for r, res in enumerate(_list(pl["reserved"], rpath, 0, MAX_RESERVED)):
            res = _dict(res, f"{rpath}[{r}]", ("card", "blind"))
            s[po + P_RESERVED + r] = cards.read(res["card"], _key(f"{rpath}[{r}]", "card"))
            s[po + P_RESERVED_BLIND + r] = _bool(res["blind"], _key(f"{rpath}[{r}]", "blind"))
        if mods:
            _read_player_modules(s, pl, ppath, p, mods)


def _read_player_modules(s: np.ndarray, pl: dict[str, Any], ppath: str, p: int, mods: int) -> None:
    tpath = _key(ppath, "trading_posts")
    names = _list(pl["trading_posts"], tpath, 0, len(TRADING_POSTS) if mods & MOD_TRADING_POSTS else 0)
    for i, name in enumerate(names):
        if not isinstance(name, str) or name not in TRADING_POSTS:
            raise _fail(
                f"{tpath}[{i}]", f"unknown trading post {_show(name)}; known: {', '.join(TRADING_POSTS)}"
            )
        bit = 1 << TRADING_POSTS.index(name)
        if s[TP_HELD + p] & bit:
            raise _fail(f"{tpath}[{i}]", f"trading post {name!r} listed twice")
        s[TP_HELD + p] |= bit
    hi = STRONGHOLDS if mods & MOD_STRONGHOLDS else 0
    s[SH_SUPPLY + p] = _int(pl["stronghold_supply"], _key(ppath, "stronghold_supply"), 0, hi)
    pairs_path = _key(ppath, "pairs")
    pairs = pl["pairs"]
    if not isinstance(pairs, dict):
        raise _fail(pairs_path, f"expected a dict of pair card id -> host card id, got {_show(pairs)}")
    for key, host in pairs.items():
        kpath = _key(pairs_path, key) if isinstance(key, str) else f"{pairs_path}[{_show(key)}]"
        card = int(key) if isinstance(key, str) and re.fullmatch(r"[0-9]{1,4}", key) else -1
        if not NUM_CARDS <= card < NUM_ALL_CARDS or ALL_CARD_EFFECT[card] not in (
            EFFECT_PAIR,
            EFFECT_PAIR_FREE_L1,
        ):
            raise _fail(kpath, f"key {_show(key)} is not the id of an Orient pair card (as a string)")
        if s[OCARD_OWNER + card - NUM_CARDS] != p:
            raise _fail(kpath, f"pair card {card} is not among this player's purchased cards")
        host_card = _int(host, kpath, 0, NUM_ALL_CARDS - 1)
        if s[owner_addr(host_card)] != p:
            raise _fail(kpath, f"host card {host_card} is not among this player's purchased cards")
        if ALL_CARD_COLOUR[host_card] < 0:
            raise _fail(kpath, f"host card {host_card} has no colour to pair with")
        s[PAIR_HOST + card - NUM_CARDS] = host_card


def _read_module_fields(s: np.ndarray, d: dict[str, Any], n: int, mods: int, cards: _Cards) -> None:
    s[OMARKET:STATE_SIZE_ALL] = 0
    s[OMARKET : OMARKET + 3 * ORIENT_SLOTS] = -1
    s[deck_addr(3) : deck_addr(3) + 3 * ORIENT_LEVEL_SIZE] = -1
    s[OCARD_OWNER : OCARD_OWNER + NUM_ORIENT] = -1
    s[PAIR_HOST : PAIR_HOST + NUM_ORIENT] = -1
    s[CITY_ID : CITY_ID + CITIES_ON_OFFER] = -1
    s[CITY_OWNER : CITY_OWNER + CITIES_ON_OFFER] = -1
    orient = bool(mods & MOD_ORIENT)
    market = _list(d["orient_market"], _key(ROOT, "orient_market"), 3, 3)
    decks = _list(d["orient_decks"], _key(ROOT, "orient_decks"), 3, 3)
    for lvl in range(3):
        path = f"{_key(ROOT, 'orient_market')}[{lvl}]"
        for k, value in enumerate(_list(market[lvl], path, ORIENT_SLOTS, ORIENT_SLOTS)):
            if (
                isinstance(value, (int, np.integer))
                and not isinstance(value, (bool, np.bool_))
                and value == -1
            ):
                continue
            if not orient:
                raise _fail(f"{path}[{k}]", f"expected -1 (no Orient module), got {_show(value)}")
            s[OMARKET + lvl * ORIENT_SLOTS + k] = cards.read(value, f"{path}[{k}]", lvl, orient=True)
        path = f"{_key(ROOT, 'orient_decks')}[{lvl}]"
        deck = _list(decks[lvl], path, 0, ORIENT_LEVEL_SIZE if orient else 0)
        s[ODECK_COUNT + lvl] = len(deck)
        for i, value in enumerate(deck):
            s[deck_addr(3 + lvl) + i] = cards.read(value, f"{path}[{i}]", lvl, orient=True)
    _read_cities(s, d, n, mods)
    _read_strongholds(s, d, n, mods)
    bpath = _key(ROOT, "boxed")
    for i, value in enumerate(_list(d["boxed"], bpath, 0, NUM_ALL_CARDS if orient else 0)):
        s[owner_addr(cards.read(value, f"{bpath}[{i}]"))] = BOX
    ppath = _key(ROOT, "pending")
    pending = _dict(d["pending"], ppath, tuple(name for name, _ in _PENDING_FIELDS))
    for name, addr in _PENDING_FIELDS:
        lo, hi = _PENDING_RANGES[name]
        value = pending[name]
        if name in ("drawn_0", "drawn_1") and value != -1:
            s[addr] = cards.read(value, _key(ppath, name))
        else:
            s[addr] = _int(value, _key(ppath, name), lo, hi)


def _read_cities(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    path = _key(ROOT, "cities")
    entries = _list(d["cities"], path, 0, CITIES_ON_OFFER if mods & MOD_CITIES else 0)
    tiles: dict[int, str] = {}
    holders: dict[int, str] = {}
    for k, entry in enumerate(entries):
        epath = f"{path}[{k}]"
        entry = _dict(entry, epath, ("city", "owner"))
        city = _int(entry["city"], _key(epath, "city"), 0, NUM_CITIES - 1)
        if city in tiles:
            raise _fail(_key(epath, "city"), f"city {city} is listed twice: also at {tiles[city]}")
        tiles[city] = _key(epath, "city")
        owner = _owner(entry["owner"], _key(epath, "owner"), n)
        if owner >= 0 and owner in holders:
            raise _fail(_key(epath, "owner"), f"player {owner} already holds a city ({holders[owner]})")
        if owner >= 0:
            holders[owner] = epath
        s[CITY_ID + k] = city
        s[CITY_OWNER + k] = owner


def _read_strongholds(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    path = _key(ROOT, "strongholds")
    entries = _list(d["strongholds"], path, 0, ALL_SLOTS * MAX_PLAYERS if mods & MOD_STRONGHOLDS else 0)
    for i, entry in enumerate(entries):
        epath = f"{path}[{i}]"
        slot, seat, count = _list(entry, epath, 3, 3)
        m = _int(slot, f"{epath}[0]", 0, ALL_SLOTS - 1)
        q = _int(seat, f"{epath}[1]", 0, n - 1)
        c = _int(count, f"{epath}[2]", 1, STRONGHOLDS)
        row = s[SH_ON + m * MAX_PLAYERS : SH_ON + (m + 1) * MAX_PLAYERS]
        if row.any():
            raise _fail(epath, f"market slot {m} already holds strongholds (one player per slot)")
        if s[slot_addr(m)] < 0:
            raise _fail(epath, f"market slot {m} is empty: strongholds sit on a card")
        s[SH_ON + m * MAX_PLAYERS + q] = c


# ---------------------------------------------------------------------------
# Cross-field checks (after every field was read)


def _check_tokens(s: np.ndarray, n: int) -> None:
    expected = [GEMS_FOR_PLAYERS[n]] * 5 + [GOLD_TOKENS]
    for c, name in enumerate(TOKEN_COLOURS):
        held = sum(int(s[player_offset(p) + P_TOKENS + c]) for p in range(n))
        bank = int(s[BANK + c])
        if bank + held != expected[c]:
            raise _fail(
                _key(_key(ROOT, "bank"), name),
                f"{name} tokens not conserved: bank {bank} + players {held} = {bank + held}, expected {expected[c]}",
            )


def _check_cross_fields(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    """Relations every reachable position satisfies, each refused naming the field it concerns."""
    phase, cur, turn = int(s[PHASE]), int(s[CURRENT]), int(s[TURN])
    over = phase in (PHASE_GAME_OVER, PHASE_TRUNCATED)
    passes, max_turns = int(s[PASSES]), int(s[MAX_TURNS])
    if over and turn == 0:
        raise _fail(_key(ROOT, "turn"), f"a game that is {PHASE_NAMES[phase]} has had turns, got turn 0")
    expected_seat = (turn - 1) % n if over else turn % n
    if cur != expected_seat:
        raise _fail(
            _key(ROOT, "current_player"),
            f"seat {cur} cannot be on move after {turn} turn(s) of a {n}-player game "
            f"(phase {PHASE_NAMES[phase]}: expected seat {expected_seat})",
        )
    if not over and turn >= max_turns:
        raise _fail(
            _key(ROOT, "turn"),
            f"turn {turn} reached max_turns {max_turns} but the phase is {PHASE_NAMES[phase]}",
        )
    if phase == PHASE_TRUNCATED and turn != max_turns:
        raise _fail(_key(ROOT, "turn"), f"a truncated game stops at turn max_turns = {max_turns}, got {turn}")
    if passes > turn + (0 if phase in (PHASE_MAIN, PHASE_GAME_OVER, PHASE_TRUNCATED) else 1):
        raise _fail(_key(ROOT, "consecutive_passes"), f"{passes} consecutive passes in only {turn} turn(s)")
    if passes == n and phase != PHASE_GAME_OVER:
        raise _fail(
            _key(ROOT, "consecutive_passes"),
            f"{n} consecutive passes end the game, but the phase is {PHASE_NAMES[phase]}",
        )
    if phase == PHASE_GAME_OVER and passes < n and not (s[FINAL_ROUND] and cur == n - 1):
        raise _fail(
            _key(ROOT, "phase"),
            "game_over needs the final round completed (final_round true, last seat on move) or every player passing",
        )
    _check_final_round(s, n, mods, phase, cur)
    _check_winners(s, d, n, phase)
    _check_phase(s, n, mods, phase, cur)


def _check_final_round(s: np.ndarray, n: int, mods: int, phase: int, cur: int) -> None:
    path = _key(ROOT, "final_round")
    final = bool(s[FINAL_ROUND])
    if mods & MOD_CITIES:
        claimed = any(s[CITY_OWNER + k] >= 0 for k in range(CITIES_ON_OFFER))
        if final != claimed:
            raise _fail(
                path,
                f"with Cities the final round starts when a city is claimed: expected {claimed}, got {final}",
            )
        return


def _check_winners(s: np.ndarray, d: dict[str, Any], n: int, phase: int) -> None:
    from .rules import score_game  # the one scoring rule (a rules question; imported when asked)

    path = _key(ROOT, "winners")
    winners = _list(d["winners"], path, 0, n)
    seats = [_int(w, f"{path}[{i}]", 0, n - 1) for i, w in enumerate(winners)]
    if len(set(seats)) != len(seats):
        raise _fail(path, f"a seat is listed twice: {seats}")
    if phase != PHASE_GAME_OVER:
        if seats:
            raise _fail(path, f"winners {seats} set before the game is over (phase {PHASE_NAMES[phase]})")
        return
    scored = s.copy()
    score_game(scored)
    expected = [p for p in range(n) if scored[OUTCOME + p]]
    if sorted(seats) != expected:
        raise _fail(path, f"expected {expected} (most prestige, then fewest cards), got {seats}")
    for p in expected:
        s[OUTCOME + p] = 1


#: Phases outside a turn's pending effects, with the turn stage each one belongs to.
_STAGE_OF_PHASE = {
    PHASE_MAIN: STAGE_EFFECTS,
    PHASE_GAME_OVER: STAGE_EFFECTS,
    PHASE_TRUNCATED: STAGE_EFFECTS,
    PHASE_CONQUEST: STAGE_EFFECTS,
    PHASE_DISCARD: STAGE_TOKEN_LIMIT,
    PHASE_NOBLE: STAGE_NOBLES,
    PHASE_TRADING_POST_CHOICE: STAGE_TRADING_POSTS,
    PHASE_CITY: STAGE_CITIES,
}


def _check_phase(s: np.ndarray, n: int, mods: int, phase: int, cur: int) -> None:
    ppath = _key(ROOT, "phase")
    po = player_offset(cur)
    tokens = [int(t) for t in s[po + P_TOKENS : po + P_TOKENS + 6]]
    if phase == PHASE_DISCARD and sum(tokens) <= TOKEN_LIMIT:
        raise _fail(
            ppath, f"discard phase but the player on move holds {sum(tokens)} tokens (at most {TOKEN_LIMIT})"
        )
    if phase == PHASE_NOBLE:
        qualify = qualifying_nobles(s, po)
        if qualify < 2:
            raise _fail(
                ppath,
                f"noble phase but {qualify} noble(s) on offer qualify for the player on move (needs 2+)",
            )
    if mods:
        _check_pending(s, n, mods, phase, cur)
        _check_strongholds(s, n, mods)
    if phase not in (PHASE_GAME_OVER, PHASE_TRUNCATED):
        from .actions import num_actions
        from .rules import legal_mask

        if legal_mask(s, np.zeros(num_actions(mods), dtype=np.int8)) == 0:
            raise _fail(ppath, f"no legal action for the player on move in phase {PHASE_NAMES[phase]}")


def _check_strongholds(s: np.ndarray, n: int, mods: int) -> None:
    want = STRONGHOLDS if mods & MOD_STRONGHOLDS else 0
    for q in range(n):
        on_board = int(s[SH_ON + q : SH_ON + ALL_SLOTS * MAX_PLAYERS : MAX_PLAYERS].sum())
        supply = int(s[SH_SUPPLY + q])
        if on_board + supply != want:
            raise _fail(
                _key(f"{_key(ROOT, 'players')}[{q}]", "stronghold_supply"),
                f"strongholds not conserved: {supply} in supply + {on_board} on cards, expected {want}",
            )


def _check_pending(s: np.ndarray, n: int, mods: int, phase: int, cur: int) -> None:
    from .rules import next_pending_phase  # the engine's own order of pending effects

    path = _key(ROOT, "pending")
    effect_fields = {
        "sacrifice_card": -1,
        "sacrifice_left": 0,
        "pair_card": -1,
        "free_level": -1,
        "trading_post_token": 0,
        "extra_token_excluded": -1,
        "stronghold_action": 0,
        "refill_slots": 0,
        "drawn_0": -1,
        "drawn_1": -1,
        "drawn_deck": -1,
    }
    value = {name: int(s[addr]) for name, addr in _PENDING_FIELDS}
    if (value["sacrifice_card"] >= 0) != (value["sacrifice_left"] > 0):
        raise _fail(
            _key(path, "sacrifice_card"), "a sacrifice card is pending exactly when sacrifice_left > 0"
        )
    if value["sacrifice_card"] >= 0:
        card = value["sacrifice_card"]
        if ALL_CARD_SAC_COLOUR[card] < 0 or s[owner_addr(card)] != cur:
            raise _fail(
                _key(path, "sacrifice_card"),
                f"card {card} is not a sacrifice card bought by the player on move",
            )
    if value["pair_card"] >= 0:
        card = value["pair_card"]
        if card < NUM_CARDS or ALL_CARD_EFFECT[card] not in (EFFECT_PAIR, EFFECT_PAIR_FREE_L1):
            raise _fail(_key(path, "pair_card"), f"card {card} is not an Orient pair card")
        if s[owner_addr(card)] != cur or s[PAIR_HOST + card - NUM_CARDS] >= 0:
            raise _fail(
                _key(path, "pair_card"), f"pair card {card} is not an unattached card of the player on move"
            )
    for m in range(ALL_SLOTS):
        if value["refill_slots"] >> m & 1 and s[slot_addr(m)] >= 0:
            raise _fail(_key(path, "refill_slots"), f"market slot {m} is marked for refill but holds a card")
    drawn = (value["drawn_0"], value["drawn_1"], value["drawn_deck"])
    if any(v >= 0 for v in drawn):
        deck = value["drawn_deck"]
        if min(drawn) < 0:
            raise _fail(
                _key(path, "drawn_deck"),
                f"draw-two record incomplete: drawn_0, drawn_1, drawn_deck = {list(drawn)}",
            )
        for name in ("drawn_0", "drawn_1"):
            card = value[name]
            if ALL_CARD_LEVEL[card] != deck % 3 or (card >= NUM_CARDS) != (deck >= 3):
                raise _fail(_key(path, name), f"card {card} does not come from deck {deck}")
    if phase in _STAGE_OF_PHASE:
        want = _STAGE_OF_PHASE[phase]
        if value["stage"] != want:
            raise _fail(
                _key(path, "stage"),
                f"expected stage {want} in phase {PHASE_NAMES[phase]}, got {value['stage']}",
            )
        for name, clear in effect_fields.items():
            if value[name] != clear:
                raise _fail(
                    _key(path, name),
                    f"expected {clear} in phase {PHASE_NAMES[phase]} (nothing pending), got {value[name]}",
                )
        if phase != PHASE_MAIN and value["conquest_done"] != 1:
            raise _fail(_key(path, "conquest_done"), f"expected 1 in phase {PHASE_NAMES[phase]}, got 0")
    else:
        if value["stage"] != STAGE_EFFECTS:
            raise _fail(
                _key(path, "stage"),
                f"expected stage {STAGE_EFFECTS} in phase {PHASE_NAMES[phase]}, got {value['stage']}",
            )
        if next_pending_phase(s) != phase:
            raise _fail(
                _key(ROOT, "phase"), f"phase {PHASE_NAMES[phase]} is not the next pending effect of {value}"
            )


# ---------------------------------------------------------------------------
# State arrays


def from_array(a: Any) -> np.ndarray:
    """Check a state array (from ``env.engine_state()``) as strictly as a snapshot; returns a copy.

    The array goes through :func:`to_dict` and :func:`from_dict` and must come
    back identical, so every check of a snapshot applies to it too.
    """
    if not isinstance(a, np.ndarray):
        raise SnapshotError(
            f"state: expected a dict (from snapshot()) or a numpy state array (from state()), got {_show(a)}"
        )
    if a.ndim != 1 or a.shape[0] not in (STATE_SIZE, STATE_SIZE_ALL):
        raise SnapshotError(
            f"state: expected a 1-D array of length {STATE_SIZE} or {STATE_SIZE_ALL}, got shape {a.shape}"
        )
    if not np.issubdtype(a.dtype, np.integer):
        raise SnapshotError(f"state: expected an integer array, got dtype {a.dtype}")
    if a.min() < -(2**31) or a.max() > INT32_MAX:
        raise SnapshotError("state: values outside the int32 range")
    s = a.astype(np.int32)
    n, mods, phase = int(s[N_PLAYERS]), int(s[MODULES]), int(s[PHASE])
    if n not in GEMS_FOR_PLAYERS:
        raise SnapshotError(f"state[{N_PLAYERS}] (num_players): expected 2, 3 or 4, got {n}")
    if not 0 <= mods <= 15 or len(s) != state_size(mods):
        raise SnapshotError(
            f"state[{MODULES}] (modules): bitmask {mods} does not match an array of length {len(s)}"
        )
    if not 0 <= phase < len(PHASE_NAMES):
        raise SnapshotError(f"state[{PHASE}] (phase): expected 0..{len(PHASE_NAMES) - 1}, got {phase}")
    counts = [(DECK_COUNT + lvl, DECK_CAPACITY) for lvl in range(3)]
    counts += [(ODECK_COUNT + lvl, ORIENT_LEVEL_SIZE) for lvl in range(3)] if mods else []
    for addr, cap in counts:
        if not 0 <= s[addr] <= cap:
            raise SnapshotError(f"state[{addr}] (deck count): expected 0..{cap}, got {int(s[addr])}")
    try:
        back = from_dict(to_dict(s))
    except SnapshotError as exc:
        raise SnapshotError(f"state array, read as a {exc}") from None
    diff = np.flatnonzero(back != s)
    if diff.size:
        i = int(diff[0])
        raise SnapshotError(
            f"state[{i}]: holds {int(s[i])} where a consistent game holds {int(back[i])} "
            "(a derived field, or a value the snapshot format cannot hold)"
        )
    return back


__all__ = ["SnapshotError", "from_array", "from_dict", "to_dict"]
