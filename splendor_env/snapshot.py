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
from .snapshot_checks import (
    PENDING_FIELDS,
    ROOT,
    CardReader,
    SnapshotError,
    check_cross_fields,
    check_tokens,
    fail,
    read_bool,
    read_dict,
    read_int,
    read_list,
    read_owner,
    show,
    sub_path,
)
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
    PHASE,
    PHASE_NAMES,
    PHASE_TRUNCATED,
    PLAYER_SIZE,
    PLAYERS,
    SH_ON,
    SH_SUPPLY,
    STAGE_END,
    STATE_SIZE,
    STATE_SIZE_ALL,
    STRONGHOLDS,
    TP_HELD,
    TURN,
    deck_addr,
    module_names,
    owner_addr,
    player_offset,
    slot_addr,
    state_size,
)

INT32_MAX = 2**31 - 1


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
        d["pending"] = {name: int(s[addr]) for name, addr in PENDING_FIELDS}
    return d


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
# dict -> state array


def from_dict(d: Any) -> np.ndarray:
    """Rebuild a state array from a :func:`to_dict` snapshot, refusing anything invalid.

    Raises :class:`SnapshotError` (a ``ValueError``) naming the field path of the
    first problem found; see the module docstring for the format.
    """
    if not isinstance(d, dict):
        raise SnapshotError(f"{ROOT}: expected a dict (from snapshot() or to_dict()), got {show(d)}")
    mods = _read_modules(d)
    read_dict(d, ROOT, BASE_KEYS + (MODULE_KEYS if mods else ("modules",) if "modules" in d else ()))
    n = read_int(d["num_players"], sub_path(ROOT, "num_players"), 2, MAX_PLAYERS)
    s = np.zeros(state_size(mods), dtype=np.int32)
    s[N_PLAYERS] = n
    s[MODULES] = mods
    s[CARD_OWNER : CARD_OWNER + NUM_CARDS] = -1
    _read_header(s, d, n, mods)
    cards = CardReader(NUM_ALL_CARDS if mods & MOD_ORIENT else NUM_CARDS)
    _read_bank_and_market(s, d, n, cards)
    _read_nobles(s, d, n, mods)
    if mods:
        _read_module_fields(s, d, n, mods, cards)
    _read_players(s, d, n, mods, cards)
    missing = sorted(set(range(cards.ncards)) - set(cards.where))
    if missing:
        raise fail(
            sub_path(ROOT, "decks"),
            f"cards missing (in no deck, market, reserve, purchase or the box): {missing}",
        )
    check_tokens(s, n)
    recompute_derived(s)
    check_cross_fields(s, d, n, mods)
    problems = check_invariants(s)
    if problems:  # a backstop: every check above names its field, this one the first rule broken
        raise SnapshotError(f"{ROOT}: inconsistent state: {problems[0]}")
    return s


def _read_modules(d: dict[str, Any]) -> int:
    if "modules" not in d:
        return 0  # the 0.1.0 format: a base game
    path = sub_path(ROOT, "modules")
    names = read_list(d["modules"], path, 0, len(MODULE_NAMES))
    bits = 0
    for i, name in enumerate(names):
        if not isinstance(name, str) or name not in MODULE_NAMES:
            raise fail(
                f"{path}[{i}]", f"unknown module {show(name)}; known modules: {', '.join(MODULE_NAMES)}"
            )
        if bits & 1 << MODULE_NAMES.index(name):
            raise fail(f"{path}[{i}]", f"module {name!r} listed twice")
        bits |= 1 << MODULE_NAMES.index(name)
    return bits


def _read_header(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    s[MAX_TURNS] = read_int(d["max_turns"], sub_path(ROOT, "max_turns"), 1, INT32_MAX)
    s[CURRENT] = read_int(d["current_player"], sub_path(ROOT, "current_player"), 0, n - 1)
    phase = d["phase"]
    names = PHASE_NAMES if mods else PHASE_NAMES[: PHASE_TRUNCATED + 1]
    if not isinstance(phase, str) or phase not in names:
        extra = "" if mods or phase not in PHASE_NAMES else " (that phase exists only with modules)"
        raise fail(
            sub_path(ROOT, "phase"), f"unknown phase {show(phase)}{extra}; expected one of {list(names)}"
        )
    s[PHASE] = PHASE_NAMES.index(phase)
    s[TURN] = read_int(d["turn"], sub_path(ROOT, "turn"), 0, int(s[MAX_TURNS]))
    s[FINAL_ROUND] = read_bool(d["final_round"], sub_path(ROOT, "final_round"))
    s[PASSES] = read_int(d["consecutive_passes"], sub_path(ROOT, "consecutive_passes"), 0, n)


def _read_tokens(value: Any, path: str, n: int, count: int = 6) -> list[int]:
    names = TOKEN_COLOURS[:count]
    tokens = read_dict(value, path, names)
    limits = [GEMS_FOR_PLAYERS[n]] * 5 + [GOLD_TOKENS]
    return [read_int(tokens[c], sub_path(path, c), 0, limits[i]) for i, c in enumerate(names)]


def _read_bank_and_market(s: np.ndarray, d: dict[str, Any], n: int, cards: CardReader) -> None:
    s[BANK : BANK + 6] = _read_tokens(d["bank"], sub_path(ROOT, "bank"), n)
    market = read_list(d["market"], sub_path(ROOT, "market"), 3, 3)
    decks = read_list(d["decks"], sub_path(ROOT, "decks"), 3, 3)
    s[DECK : DECK + 3 * DECK_CAPACITY] = -1
    for lvl in range(3):
        path = f"{sub_path(ROOT, 'market')}[{lvl}]"
        row = read_list(market[lvl], path, MARKET_SLOTS, MARKET_SLOTS)
        for k, value in enumerate(row):
            if (
                isinstance(value, (int, np.integer))
                and not isinstance(value, (bool, np.bool_))
                and value == -1
            ):
                s[MARKET + lvl * MARKET_SLOTS + k] = -1
            else:
                s[MARKET + lvl * MARKET_SLOTS + k] = cards.read(value, f"{path}[{k}]", lvl, orient=False)
        path = f"{sub_path(ROOT, 'decks')}[{lvl}]"
        deck = read_list(decks[lvl], path, 0, int(LEVEL_SIZES[lvl]))
        s[DECK_COUNT + lvl] = len(deck)
        for i, value in enumerate(deck):
            s[DECK + lvl * DECK_CAPACITY + i] = cards.read(value, f"{path}[{i}]", lvl, orient=False)


def _read_nobles(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    path = sub_path(ROOT, "nobles")
    limit = 0 if mods & MOD_CITIES else n + 1
    entries = read_list(d["nobles"], path, 0, limit)
    s[NOBLE_ID : NOBLE_ID + NOBLE_SLOTS] = -1
    s[NOBLE_OWNER : NOBLE_OWNER + NOBLE_SLOTS] = -1
    seen: dict[int, str] = {}
    for k, entry in enumerate(entries):
        epath = f"{path}[{k}]"
        entry = read_dict(entry, epath, ("noble", "owner"))
        noble = read_int(entry["noble"], sub_path(epath, "noble"), 0, NUM_NOBLES - 1)
        if noble in seen:
            raise fail(sub_path(epath, "noble"), f"noble {noble} is listed twice: also at {seen[noble]}")
        seen[noble] = sub_path(epath, "noble")
        s[NOBLE_ID + k] = noble
        s[NOBLE_OWNER + k] = read_owner(entry["owner"], sub_path(epath, "owner"), n)


def _read_players(s: np.ndarray, d: dict[str, Any], n: int, mods: int, cards: CardReader) -> None:
    path = sub_path(ROOT, "players")
    entries = read_list(d["players"], path, n, n)
    for p in range(MAX_PLAYERS):
        s[player_offset(p) + P_RESERVED : player_offset(p) + P_RESERVED + MAX_RESERVED] = -1
    keys = PLAYER_KEYS + (PLAYER_MODULE_KEYS if mods else ())
    for p, entry in enumerate(entries):
        ppath = f"{path}[{p}]"
        pl = read_dict(entry, ppath, keys)
        po = player_offset(p)
        s[po + P_TOKENS : po + P_TOKENS + 6] = _read_tokens(pl["tokens"], sub_path(ppath, "tokens"), n)
        # Derived fields: type- and range-checked, then recomputed from the cards.
        bonus_path = sub_path(ppath, "bonuses")
        bonuses = read_dict(pl["bonuses"], bonus_path, TOKEN_COLOURS[:5])
        for c in TOKEN_COLOURS[:5]:
            read_int(bonuses[c], sub_path(bonus_path, c), 0, NUM_ALL_CARDS)
        read_int(pl["prestige"], sub_path(ppath, "prestige"), 0, 1000)
        for i, noble in enumerate(read_list(pl["nobles"], sub_path(ppath, "nobles"), 0, NOBLE_SLOTS)):
            read_int(noble, f"{sub_path(ppath, 'nobles')}[{i}]", 0, NUM_NOBLES - 1)
        bought = read_list(pl["purchased"], sub_path(ppath, "purchased"), 0, cards.ncards)
        for i, value in enumerate(bought):
            s[owner_addr(cards.read(value, f"{sub_path(ppath, 'purchased')}[{i}]"))] = p
        rpath = sub_path(ppath, "reserved")
        for r, res in enumerate(read_list(pl["reserved"], rpath, 0, MAX_RESERVED)):
            res = read_dict(res, f"{rpath}[{r}]", ("card", "blind"))
            s[po + P_RESERVED + r] = cards.read(res["card"], sub_path(f"{rpath}[{r}]", "card"))
            s[po + P_RESERVED_BLIND + r] = read_bool(res["blind"], sub_path(f"{rpath}[{r}]", "blind"))
        if mods:
            _read_player_modules(s, pl, ppath, p, mods)


def _read_player_modules(s: np.ndarray, pl: dict[str, Any], ppath: str, p: int, mods: int) -> None:
    tpath = sub_path(ppath, "trading_posts")
    names = read_list(pl["trading_posts"], tpath, 0, len(TRADING_POSTS) if mods & MOD_TRADING_POSTS else 0)
    for i, name in enumerate(names):
        if not isinstance(name, str) or name not in TRADING_POSTS:
            raise fail(
                f"{tpath}[{i}]", f"unknown trading post {show(name)}; known: {', '.join(TRADING_POSTS)}"
            )
        bit = 1 << TRADING_POSTS.index(name)
        if s[TP_HELD + p] & bit:
            raise fail(f"{tpath}[{i}]", f"trading post {name!r} listed twice")
        s[TP_HELD + p] |= bit
    hi = STRONGHOLDS if mods & MOD_STRONGHOLDS else 0
    s[SH_SUPPLY + p] = read_int(pl["stronghold_supply"], sub_path(ppath, "stronghold_supply"), 0, hi)
    pairs_path = sub_path(ppath, "pairs")
    pairs = pl["pairs"]
    if not isinstance(pairs, dict):
        raise fail(pairs_path, f"expected a dict of pair card id -> host card id, got {show(pairs)}")
    for key, host in pairs.items():
        kpath = sub_path(pairs_path, key) if isinstance(key, str) else f"{pairs_path}[{show(key)}]"
        card = int(key) if isinstance(key, str) and re.fullmatch(r"[0-9]{1,4}", key) else -1
        if not NUM_CARDS <= card < NUM_ALL_CARDS or ALL_CARD_EFFECT[card] not in (
            EFFECT_PAIR,
            EFFECT_PAIR_FREE_L1,
        ):
            raise fail(kpath, f"key {show(key)} is not the id of an Orient pair card (as a string)")
        if s[OCARD_OWNER + card - NUM_CARDS] != p:
            raise fail(kpath, f"pair card {card} is not among this player's purchased cards")
        host_card = read_int(host, kpath, 0, NUM_ALL_CARDS - 1)
        if s[owner_addr(host_card)] != p:
            raise fail(kpath, f"host card {host_card} is not among this player's purchased cards")
        if ALL_CARD_COLOUR[host_card] < 0:
            raise fail(kpath, f"host card {host_card} has no colour to pair with")
        s[PAIR_HOST + card - NUM_CARDS] = host_card


def _read_module_fields(s: np.ndarray, d: dict[str, Any], n: int, mods: int, cards: CardReader) -> None:
    s[OMARKET:STATE_SIZE_ALL] = 0
    s[OMARKET : OMARKET + 3 * ORIENT_SLOTS] = -1
    s[deck_addr(3) : deck_addr(3) + 3 * ORIENT_LEVEL_SIZE] = -1
    s[OCARD_OWNER : OCARD_OWNER + NUM_ORIENT] = -1
    s[PAIR_HOST : PAIR_HOST + NUM_ORIENT] = -1
    s[CITY_ID : CITY_ID + CITIES_ON_OFFER] = -1
    s[CITY_OWNER : CITY_OWNER + CITIES_ON_OFFER] = -1
    orient = bool(mods & MOD_ORIENT)
    market = read_list(d["orient_market"], sub_path(ROOT, "orient_market"), 3, 3)
    decks = read_list(d["orient_decks"], sub_path(ROOT, "orient_decks"), 3, 3)
    for lvl in range(3):
        path = f"{sub_path(ROOT, 'orient_market')}[{lvl}]"
        for k, value in enumerate(read_list(market[lvl], path, ORIENT_SLOTS, ORIENT_SLOTS)):
            if (
                isinstance(value, (int, np.integer))
                and not isinstance(value, (bool, np.bool_))
                and value == -1
            ):
                continue
            if not orient:
                raise fail(f"{path}[{k}]", f"expected -1 (no Orient module), got {show(value)}")
            s[OMARKET + lvl * ORIENT_SLOTS + k] = cards.read(value, f"{path}[{k}]", lvl, orient=True)
        path = f"{sub_path(ROOT, 'orient_decks')}[{lvl}]"
        deck = read_list(decks[lvl], path, 0, ORIENT_LEVEL_SIZE if orient else 0)
        s[ODECK_COUNT + lvl] = len(deck)
        for i, value in enumerate(deck):
            s[deck_addr(3 + lvl) + i] = cards.read(value, f"{path}[{i}]", lvl, orient=True)
    _read_cities(s, d, n, mods)
    _read_strongholds(s, d, n, mods)
    bpath = sub_path(ROOT, "boxed")
    for i, value in enumerate(read_list(d["boxed"], bpath, 0, NUM_ALL_CARDS if orient else 0)):
        s[owner_addr(cards.read(value, f"{bpath}[{i}]"))] = BOX
    ppath = sub_path(ROOT, "pending")
    pending = read_dict(d["pending"], ppath, tuple(name for name, _ in PENDING_FIELDS))
    for name, addr in PENDING_FIELDS:
        lo, hi = _PENDING_RANGES[name]
        value = pending[name]
        if name in ("drawn_0", "drawn_1") and value != -1:
            s[addr] = cards.read(value, sub_path(ppath, name))
        else:
            s[addr] = read_int(value, sub_path(ppath, name), lo, hi)


def _read_cities(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    path = sub_path(ROOT, "cities")
    entries = read_list(d["cities"], path, 0, CITIES_ON_OFFER if mods & MOD_CITIES else 0)
    tiles: dict[int, str] = {}
    holders: dict[int, str] = {}
    for k, entry in enumerate(entries):
        epath = f"{path}[{k}]"
        entry = read_dict(entry, epath, ("city", "owner"))
        city = read_int(entry["city"], sub_path(epath, "city"), 0, NUM_CITIES - 1)
        if city in tiles:
            raise fail(sub_path(epath, "city"), f"city {city} is listed twice: also at {tiles[city]}")
        tiles[city] = sub_path(epath, "city")
        owner = read_owner(entry["owner"], sub_path(epath, "owner"), n)
        if owner >= 0 and owner in holders:
            raise fail(sub_path(epath, "owner"), f"player {owner} already holds a city ({holders[owner]})")
        if owner >= 0:
            holders[owner] = epath
        s[CITY_ID + k] = city
        s[CITY_OWNER + k] = owner


def _read_strongholds(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    path = sub_path(ROOT, "strongholds")
    entries = read_list(d["strongholds"], path, 0, ALL_SLOTS * MAX_PLAYERS if mods & MOD_STRONGHOLDS else 0)
    for i, entry in enumerate(entries):
        epath = f"{path}[{i}]"
        slot, seat, count = read_list(entry, epath, 3, 3)
        m = read_int(slot, f"{epath}[0]", 0, ALL_SLOTS - 1)
        q = read_int(seat, f"{epath}[1]", 0, n - 1)
        c = read_int(count, f"{epath}[2]", 1, STRONGHOLDS)
        row = s[SH_ON + m * MAX_PLAYERS : SH_ON + (m + 1) * MAX_PLAYERS]
        if row.any():
            raise fail(epath, f"market slot {m} already holds strongholds (one player per slot)")
        if s[slot_addr(m)] < 0:
            raise fail(epath, f"market slot {m} is empty: strongholds sit on a card")
        s[SH_ON + m * MAX_PLAYERS + q] = c


# ---------------------------------------------------------------------------
# State arrays


def from_array(a: Any) -> np.ndarray:
    """Check a state array (from ``env.engine_state()``) as strictly as a snapshot; returns a copy.

    The array goes through :func:`to_dict` and :func:`from_dict` and must come
    back identical, so every check of a snapshot applies to it too.
    """
    if not isinstance(a, np.ndarray):
        raise SnapshotError(
            f"state: expected a dict (from snapshot()) or a numpy state array (from state()), got {show(a)}"
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
