"""State -> observation vector for one seat (numba), and its layout table.

The observation is ego-centric: seat block 0 is the observer, then the others
in turn order; it has the same shape for 2, 3 and 4 players (absent seats are
zero, with ``present`` = 0). Values are raw counts as ``float32`` except the
turn, which is given as a fraction of the turn cap. Hidden information never
appears: decks show only their sizes, and a card another player reserved blind
shows only ``present``, ``blind`` and its level.

Each card (market slot or reserve slot) is 16 numbers, ``CARD_FEATURES``:
``present, blind, level 1-3 (one-hot), colour (one-hot, 5), points, cost (5)``.

``OBS_LAYOUT`` lists (name, offset, size) for every field; the README prints it.

With any Cities of Splendor module enabled the vector is ``OBS_DIM_ALL`` long:
the base part first, with its layout unchanged, then the module sections of
``MODULE_OBS_LAYOUT`` (the same sections whichever modules are enabled; those
of a disabled module stay zero). Orient cards carry ``ORIENT_FEATURES`` after
their 16 base numbers; a pair card's colour one-hot shows its host's colour
once attached.

``cards_per_colour`` (4 seats x 5 colours, observer first) counts each seat's
purchased cards per colour the way the sacrifice rule does: a double-bonus card
is one card, a pair card counts in its host's colour. With bonuses alone a
player could not tell whether an opponent can pay a sacrifice.
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
    CITIES_ON_OFFER,
    CITY_PRESTIGE,
    CITY_REQ,
    CITY_SAME,
    EFFECTS,
    NOBLE_REQ,
    NUM_ALL_CARDS,
    NUM_CARDS,
    NUM_ORIENT,
)
from .state import (
    ALL_SLOTS,
    BANK,
    BOX,
    CARD_OWNER,
    CITY_ID,
    CITY_OWNER,
    CURRENT,
    DECK_COUNT,
    FINAL_ROUND,
    MARKET,
    MAX_PLAYERS,
    MAX_RESERVED,
    MAX_TURNS,
    MOD_ORIENT,
    MOD_STRONGHOLDS,
    MODULES,
    N_PLAYERS,
    NOBLE_ID,
    NOBLE_OWNER,
    NOBLE_SLOTS,
    NUM_PHASES,
    OCARD_OWNER,
    ODECK_COUNT,
    OMARKET,
    ORIENT_SLOTS,
    P_BONUS,
    P_CARDS,
    P_NOBLES,
    P_PRESTIGE,
    P_RESERVED,
    P_RESERVED_BLIND,
    P_TOKENS,
    PAIR_HOST,
    PD_DRAWN0,
    PD_DRAWN_DECK,
    PD_EXTRA_EXCL,
    PD_FREE_LEVEL,
    PD_PAIR,
    PD_SAC_CARD,
    PD_SAC_LEFT,
    PHASE,
    PHASE_DISCARD,
    PHASE_MAIN,
    PHASE_NOBLE,
    PHASE_TRUNCATED,
    SH_ON,
    SH_SUPPLY,
    TP_HELD,
    TURN,
    player_offset,
)

CARD_FEATURES = (
    ("present", "blind", "level_1", "level_2", "level_3")
    + tuple(f"colour_{c}" for c in ("white", "blue", "green", "red", "black"))
    + ("points",)
    + tuple(f"cost_{c}" for c in ("white", "blue", "green", "red", "black"))
)
CARD_DIM = len(CARD_FEATURES)

SEAT_FIELDS = (
    ("present", 1),
    ("tokens", 6),
    ("bonuses", 5),
    ("prestige", 1),
    ("cards_purchased", 1),
    ("nobles", 1),
    ("reserved_count", 1),
    ("reserved_cards", MAX_RESERVED * CARD_DIM),
)
SEAT_DIM = sum(size for _, size in SEAT_FIELDS)

_fields: list[tuple[str, int]] = [("bank", 6)]
_fields += [(f"seat{i}.{name}", size) for i in range(MAX_PLAYERS) for name, size in SEAT_FIELDS]
_fields += [
    ("market_cards", 12 * CARD_DIM),
    ("nobles_on_offer", NOBLE_SLOTS * 6),
    ("deck_sizes", 3),
    ("phase_onehot", 3),
    ("final_round", 1),
    ("observer_seat_onehot", MAX_PLAYERS),
    ("observer_on_move", 1),
    ("turn_fraction", 1),
]
OBS_LAYOUT: tuple[tuple[str, int, int], ...] = tuple(
    (name, sum(sz for _, sz in _fields[:i]), size) for i, (name, size) in enumerate(_fields)
)
OBS_DIM = sum(size for _, size in _fields)
_OFF = {name: off for name, off, _ in OBS_LAYOUT}
O_BANK = _OFF["bank"]
O_SEATS = _OFF["seat0.present"]
O_MARKET = _OFF["market_cards"]
O_NOBLES = _OFF["nobles_on_offer"]
O_DECKS = _OFF["deck_sizes"]
O_PHASE = _OFF["phase_onehot"]
O_FINAL = _OFF["final_round"]
O_SEAT_ONEHOT = _OFF["observer_seat_onehot"]
O_ON_MOVE = _OFF["observer_on_move"]
O_TURN = _OFF["turn_fraction"]
# Offsets inside a seat block.
S_PRESENT, S_TOKENS, S_BONUS, S_PRESTIGE, S_CARDS, S_NOBLES, S_NRES, S_RES = np.cumsum(
    [0] + [size for _, size in SEAT_FIELDS[:-1]]
).tolist()


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


CARD_TABLE, HIDDEN_CARD_TABLE = _card_table()


@njit(cache=True, inline="always")
def _put_card(out: np.ndarray, off: int, card: int) -> None:
    for i in range(CARD_DIM):
        out[off + i] = CARD_TABLE[card, i]


@njit(cache=True)
def observe(s: np.ndarray, seat: int, out: np.ndarray) -> None:
    """Write seat ``seat``'s view of state ``s`` into ``out`` (float32, OBS_DIM)."""
    out[:] = 0.0
    n = s[N_PLAYERS]
    for c in range(6):
        out[O_BANK + c] = s[BANK + c]
    for rel in range(n):
        p = (seat + rel) % n
        po = player_offset(p)
        so = O_SEATS + rel * SEAT_DIM
        out[so + S_PRESENT] = 1.0
        for c in range(6):
            out[so + S_TOKENS + c] = s[po + P_TOKENS + c]
        for c in range(5):
            out[so + S_BONUS + c] = s[po + P_BONUS + c]
        out[so + S_PRESTIGE] = s[po + P_PRESTIGE]
        out[so + S_CARDS] = s[po + P_CARDS]
        out[so + S_NOBLES] = s[po + P_NOBLES]
        nres = 0
        for r in range(MAX_RESERVED):
            card = s[po + P_RESERVED + r]
            if card < 0:
                continue
            nres += 1
            off = so + S_RES + r * CARD_DIM
            blind = s[po + P_RESERVED_BLIND + r] == 1
            if blind and rel != 0:
                for i in range(CARD_DIM):
                    out[off + i] = HIDDEN_CARD_TABLE[ALL_CARD_LEVEL[card], i]
            else:
                _put_card(out, off, card)
                if blind:
                    out[off + 1] = 1.0
        out[so + S_NRES] = nres
    for slot in range(12):
        card = s[MARKET + slot]
        if card >= 0:
            _put_card(out, O_MARKET + slot * CARD_DIM, card)
    for k in range(NOBLE_SLOTS):
        noble = s[NOBLE_ID + k]
        if noble >= 0 and s[NOBLE_OWNER + k] < 0:
            out[O_NOBLES + k * 6] = 1.0
            for c in range(5):
                out[O_NOBLES + k * 6 + 1 + c] = NOBLE_REQ[noble, c]
    for lvl in range(3):
        out[O_DECKS + lvl] = s[DECK_COUNT + lvl]
    phase = s[PHASE]
    if phase == PHASE_MAIN or phase == PHASE_DISCARD or phase == PHASE_NOBLE:
        out[O_PHASE + phase] = 1.0
    out[O_FINAL] = s[FINAL_ROUND]
    out[O_SEAT_ONEHOT + seat] = 1.0
    out[O_ON_MOVE] = 1.0 if s[CURRENT] == seat else 0.0
    out[O_TURN] = s[TURN] / s[MAX_TURNS]
    if s[MODULES] != 0:
        _observe_modules(s, seat, out)


def layout_table(modules: bool = False) -> str:
    """The observation layout as aligned text (printed in the README).

    ``modules=True`` gives the module sections appended after the base 497 numbers.
    """
    lines = [f"{'field':<28} {'offset':>6} {'size':>5}"]
    layout = MODULE_OBS_LAYOUT if modules else OBS_LAYOUT
    for name, off, size in layout:
        prefix = "mseat" if name.startswith("mseat") else ("seat" if name.startswith("seat") else "")
        if prefix and not name.startswith(prefix + "0"):
            continue
        shown = name.replace(f"{prefix}0.", f"{prefix}[k].") if prefix else name
        lines.append(f"{shown:<28} {off:>6} {size:>5}")
    if modules:
        lines.append(f"(mseat[k] blocks repeat every {MODULE_SEAT_DIM} numbers for k = 0..3, observer first)")
    else:
        lines.append(f"(seat[k] blocks repeat every {SEAT_DIM} numbers for k = 0..3, observer first)")
    lines.append(f"{'total':<28} {'':>6} {(OBS_DIM_ALL if modules else OBS_DIM):>5}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Cities of Splendor sections, appended after the base observation.

#: Extra numbers of every card in the module sections (zero for base cards).
ORIENT_FEATURES = (
    ("is_orient",)
    + tuple(f"effect_{e}" for e in EFFECTS[1:])
    + ("bonus_count",)
    + tuple(f"sacrifice_{c}" for c in ("white", "blue", "green", "red", "black"))
    + ("sacrifice_count",)
)
ORIENT_DIM = len(ORIENT_FEATURES)
FULL_CARD_DIM = CARD_DIM + ORIENT_DIM
CITY_DIM = 8  # present, prestige, requirement (5), same-colour count

MODULE_SEAT_FIELDS = (
    ("present", 1),
    ("city", 1),
    ("trading_posts", 5),
    ("stronghold_supply", 1),
    ("double_gold_cards", 1),
    ("pair_bonuses", 5),
    ("reserved_extras", MAX_RESERVED * ORIENT_DIM),
)
MODULE_SEAT_DIM = sum(size for _, size in MODULE_SEAT_FIELDS)
_mfields: list[tuple[str, int]] = [
    ("modules_enabled", 4),
    ("module_phase_onehot", NUM_PHASES - PHASE_TRUNCATED - 1),
]
_mfields += [(f"mseat{i}.{name}", size) for i in range(MAX_PLAYERS) for name, size in MODULE_SEAT_FIELDS]
_mfields += [
    ("orient_market_cards", 3 * ORIENT_SLOTS * FULL_CARD_DIM),
    ("orient_deck_sizes", 3),
    ("strongholds_on_market", ALL_SLOTS * MAX_PLAYERS),
    ("cities_on_offer", CITIES_ON_OFFER * CITY_DIM),
    ("cards_in_box", 1),
    ("pending_card", FULL_CARD_DIM),
    ("pending_drawn_cards", 2 * FULL_CARD_DIM),
    ("pending_free_level", 3),
    ("pending_sacrifice_left", 1),
    ("pending_excluded_colour", 5),
    # Appended sections (the observation only grows at the end).
    ("cards_per_colour", MAX_PLAYERS * 5),
]
MODULE_OBS_LAYOUT: tuple[tuple[str, int, int], ...] = tuple(
    (name, OBS_DIM + sum(sz for _, sz in _mfields[:i]), size) for i, (name, size) in enumerate(_mfields)
)
OBS_DIM_ALL = OBS_DIM + sum(size for _, size in _mfields)
_MOFF = {name: off for name, off, _ in MODULE_OBS_LAYOUT}
O_MODULES = _MOFF["modules_enabled"]
O_MPHASE = _MOFF["module_phase_onehot"]
O_MSEATS = _MOFF["mseat0.present"]
O_OMARKET = _MOFF["orient_market_cards"]
O_ODECKS = _MOFF["orient_deck_sizes"]
O_STRONGHOLDS = _MOFF["strongholds_on_market"]
O_CITIES = _MOFF["cities_on_offer"]
O_BOX = _MOFF["cards_in_box"]
O_PCARD = _MOFF["pending_card"]
O_PDRAWN = _MOFF["pending_drawn_cards"]
O_PFREE = _MOFF["pending_free_level"]
O_PSAC = _MOFF["pending_sacrifice_left"]
O_PEXCL = _MOFF["pending_excluded_colour"]
O_CARDS_COLOUR = _MOFF["cards_per_colour"]
M_PRESENT, M_CITY, M_TP, M_SH, M_DG, M_PAIR, M_RES = np.cumsum(
    [0] + [size for _, size in MODULE_SEAT_FIELDS[:-1]]
).tolist()


def obs_dim(modules: int) -> int:
    """Observation length: 497 for the base game, OBS_DIM_ALL with any module."""
    return OBS_DIM if modules == 0 else OBS_DIM_ALL


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


ORIENT_TABLE = _orient_table()


@njit(cache=True)
def _put_full_card(s: np.ndarray, out: np.ndarray, off: int, card: int) -> None:
    """16 base numbers then the Orient extras; a pair card shows its host's colour."""
    _put_card(out, off, card)
    for i in range(ORIENT_DIM):
        out[off + CARD_DIM + i] = ORIENT_TABLE[card, i]
    if card >= NUM_CARDS and s[PAIR_HOST + card - NUM_CARDS] >= 0:
        out[off + 5 + ALL_CARD_COLOUR[s[PAIR_HOST + card - NUM_CARDS]]] = 1.0


@njit(cache=True)
def _observe_modules(s: np.ndarray, seat: int, out: np.ndarray) -> None:
    """The module sections; hidden cards (blind reserves, drawn cards) only for their owner."""
    n = s[N_PLAYERS]
    mods = s[MODULES]
    for k in range(4):
        out[O_MODULES + k] = (mods >> k) & 1
    phase = s[PHASE]
    if phase > PHASE_TRUNCATED:
        out[O_MPHASE + phase - PHASE_TRUNCATED - 1] = 1.0
    orient = (mods & MOD_ORIENT) != 0
    for rel in range(n):
        p = seat + rel if seat + rel < n else seat + rel - n
        po = player_offset(p)
        mo = O_MSEATS + rel * MODULE_SEAT_DIM
        out[mo + M_PRESENT] = 1.0
        for k in range(CITIES_ON_OFFER):
            if s[CITY_ID + k] >= 0 and s[CITY_OWNER + k] == p:
                out[mo + M_CITY] = 1.0
        for k in range(5):
            out[mo + M_TP + k] = (s[TP_HELD + p] >> k) & 1
        out[mo + M_SH] = s[SH_SUPPLY + p]
        for c in range(5):
            out[O_CARDS_COLOUR + rel * 5 + c] += s[po + P_BONUS + c]
        for i in range(NUM_ORIENT if orient else 0):  # no work for a disabled module
            if s[OCARD_OWNER + i] != p:
                continue
            card = NUM_CARDS + i
            if ALL_CARD_EFFECT[card] == 1:
                out[mo + M_DG] += 1.0
            colour = ALL_CARD_COLOUR[card]
            if colour >= 0:  # a double-bonus card: one card, two bonuses
                out[O_CARDS_COLOUR + rel * 5 + colour] -= ALL_CARD_BONUS[card] - 1
            host = s[PAIR_HOST + i]
            if host >= 0:
                out[mo + M_PAIR + ALL_CARD_COLOUR[host]] += 1.0
        for r in range(MAX_RESERVED):
            card = s[po + P_RESERVED + r]
            if card < NUM_CARDS:
                continue
            off = mo + M_RES + r * ORIENT_DIM
            if s[po + P_RESERVED_BLIND + r] == 1 and rel != 0:
                out[off] = 1.0  # others know only that it came from an Orient deck
            else:
                for i in range(ORIENT_DIM):
                    out[off + i] = ORIENT_TABLE[card, i]
    for slot in range(3 * ORIENT_SLOTS):
        card = s[OMARKET + slot]
        if card >= 0:
            _put_full_card(s, out, O_OMARKET + slot * FULL_CARD_DIM, card)
    for lvl in range(3):
        out[O_ODECKS + lvl] = s[ODECK_COUNT + lvl]
    if mods & MOD_STRONGHOLDS:
        for rel in range(n):
            q = seat + rel if seat + rel < n else seat + rel - n
            for m in range(ALL_SLOTS):
                out[O_STRONGHOLDS + m * MAX_PLAYERS + rel] = s[SH_ON + m * MAX_PLAYERS + q]
    for k in range(CITIES_ON_OFFER):
        city = s[CITY_ID + k]
        if city >= 0 and s[CITY_OWNER + k] < 0:
            off = O_CITIES + k * CITY_DIM
            out[off] = 1.0
            out[off + 1] = CITY_PRESTIGE[city]
            for c in range(5):
                out[off + 2 + c] = CITY_REQ[city, c]
            out[off + 7] = CITY_SAME[city]
    if orient:  # only the Orient's sacrifice and double-gold cards go to the box
        boxed = 0
        for card in range(NUM_CARDS):
            boxed += s[CARD_OWNER + card] == BOX
        for i in range(NUM_ORIENT):
            boxed += s[OCARD_OWNER + i] == BOX
        out[O_BOX] = boxed
    pending = s[PD_PAIR] if s[PD_PAIR] >= 0 else s[PD_SAC_CARD]
    if pending >= 0:
        _put_full_card(s, out, O_PCARD, pending)
    if s[PD_DRAWN0] >= 0:
        for k in range(2):
            off = O_PDRAWN + k * FULL_CARD_DIM
            card = s[PD_DRAWN0 + k]
            if seat == s[CURRENT]:
                _put_full_card(s, out, off, card)
            else:
                lvl = s[PD_DRAWN_DECK] % 3
                for i in range(CARD_DIM):
                    out[off + i] = HIDDEN_CARD_TABLE[lvl, i]
                out[off + CARD_DIM] = 1.0 if s[PD_DRAWN_DECK] >= 3 else 0.0
    if s[PD_FREE_LEVEL] >= 0:
        out[O_PFREE + s[PD_FREE_LEVEL]] = 1.0
    out[O_PSAC] = s[PD_SAC_LEFT]
    if s[PD_EXTRA_EXCL] >= 0:
        out[O_PEXCL + s[PD_EXTRA_EXCL]] = 1.0
