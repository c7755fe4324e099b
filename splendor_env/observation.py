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

from .card_features import CARD_TABLE, HIDDEN_CARD_TABLE, ORIENT_TABLE, put_card, put_full_card  # noqa: F401
from .cards import ALL_CARD_LEVEL, NOBLE_REQ
from .layout import (  # noqa: F401 - part of this module's API
    CARD_DIM,
    CARD_FEATURES,
    CITY_DIM,
    FULL_CARD_DIM,
    MODULE_SEAT_DIM,
    MODULE_SEAT_SECTIONS,
    OBS_DIM,
    OBS_DIM_ALL,
    OBS_OFFSETS,
    OBS_SECTIONS,
    ONEHOT_MODULE_PHASES,
    ORIENT_DIM,
    ORIENT_FEATURES,
    SEAT_DIM,
    SEAT_SECTIONS,
)
from .modules import cities, orient, strongholds, trading_posts
from .state import (
    BANK,
    CURRENT,
    DECK_COUNT,
    FINAL_ROUND,
    MARKET,
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
    P_BONUS,
    P_CARDS,
    P_NOBLES,
    P_PRESTIGE,
    P_RESERVED,
    P_RESERVED_BLIND,
    P_TOKENS,
    PHASE,
    PHASE_DISCARD,
    PHASE_MAIN,
    PHASE_NAMES,
    PHASE_NOBLE,
    TURN,
    player_offset,
)

SEAT_FIELDS = tuple((name, size) for name, size, _ in SEAT_SECTIONS)
MODULE_SEAT_FIELDS = tuple((name, size) for name, size, _ in MODULE_SEAT_SECTIONS)
#: (name, offset, size) for every base field, and for the module sections appended after them.
OBS_LAYOUT: tuple[tuple[str, int, int], ...] = tuple(
    (name, OBS_OFFSETS[name][0], size) for name, size, owner in OBS_SECTIONS if owner == "base"
)
MODULE_OBS_LAYOUT: tuple[tuple[str, int, int], ...] = tuple(
    (name, OBS_OFFSETS[name][0], size) for name, size, owner in OBS_SECTIONS if owner != "base"
)
_OFF = {name: off for name, (off, _) in OBS_OFFSETS.items()}
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
O_MODULES = _OFF["modules_enabled"]
O_MPHASE = _OFF["module_phase_onehot"]
O_MSEATS = _OFF["mseat0.present"]
O_OMARKET = _OFF["orient_market_cards"]
O_ODECKS = _OFF["orient_deck_sizes"]
O_STRONGHOLDS = _OFF["strongholds_on_market"]
O_CITIES = _OFF["cities_on_offer"]
O_BOX = _OFF["cards_in_box"]
O_PCARD = _OFF["pending_card"]
O_PDRAWN = _OFF["pending_drawn_cards"]
O_PFREE = _OFF["pending_free_level"]
O_PSAC = _OFF["pending_sacrifice_left"]
O_PEXCL = _OFF["pending_excluded_colour"]
O_CARDS_COLOUR = _OFF["cards_per_colour"]
# Offsets inside a seat block.
S_PRESENT, S_TOKENS, S_BONUS, S_PRESTIGE, S_CARDS, S_NOBLES, S_NRES, S_RES = np.cumsum(
    [0] + [size for _, size in SEAT_FIELDS[:-1]]
).tolist()
M_PRESENT, M_CITY, M_TP, M_SH, M_DG, M_PAIR, M_RES = np.cumsum(
    [0] + [size for _, size in MODULE_SEAT_FIELDS[:-1]]
).tolist()
NUM_MODULES = len(MODULE_NAMES)
_MODULE_ZERO_SPLIT = O_MODULES + NUM_MODULES + (OBS_DIM_ALL - O_MODULES - NUM_MODULES) // 2
#: Slot of each phase in ``module_phase_onehot`` (-1: not shown there).
MPHASE_SLOT = np.array(
    [ONEHOT_MODULE_PHASES.index(name) if name in ONEHOT_MODULE_PHASES else -1 for name in PHASE_NAMES],
    dtype=np.int64,
)


def obs_dim(modules: int) -> int:
    """Observation length: 497 for the base game, OBS_DIM_ALL with any module."""
    return OBS_DIM if modules == 0 else OBS_DIM_ALL


@njit(cache=True)
def observe(s: np.ndarray, seat: int, out: np.ndarray) -> None:
    """Write seat ``seat``'s view of state ``s`` into ``out`` (float32, OBS_DIM; OBS_DIM_ALL with modules)."""
    for i in range(OBS_DIM):
        out[i] = 0.0
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
                put_card(out, off, card)
                if blind:
                    out[off + 1] = 1.0
        out[so + S_NRES] = nres
    for slot in range(12):
        card = s[MARKET + slot]
        if card >= 0:
            put_card(out, O_MARKET + slot * CARD_DIM, card)
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
    end = OBS_DIM
    if s[MODULES] != 0:
        _observe_modules(s, seat, out)
        end = OBS_DIM_ALL
    for i in range(end, out.shape[0]):  # a longer buffer reads as zeros beyond the observation
        out[i] = 0.0


@njit(cache=True, inline="always")
def _observe_modules(s: np.ndarray, seat: int, out: np.ndarray) -> None:
    """The module sections: the shared ones here, then one line per module; a disabled module's stay zero.

    Hidden cards (blind reserves, drawn cards) are shown only to their owner.
    """
    # Zeroed in two pieces, each below the size at which glibc's memset switches to ``rep stosb``
    # (2 KB), which is several times slower per byte on this project's AMD machines; the write of
    # ``modules_enabled`` between them keeps LLVM from merging the two into one call.
    for i in range(OBS_DIM, _MODULE_ZERO_SPLIT):
        out[i] = 0.0
    mods = s[MODULES]
    for k in range(NUM_MODULES):
        out[O_MODULES + k] = (mods >> k) & 1
    for i in range(_MODULE_ZERO_SPLIT, OBS_DIM_ALL):
        out[i] = 0.0
    n = s[N_PLAYERS]
    slot = MPHASE_SLOT[s[PHASE]]
    if slot >= 0:
        out[O_MPHASE + slot] = 1.0
    for rel in range(n):
        p = seat + rel if seat + rel < n else seat + rel - n
        po = player_offset(p)
        mo = O_MSEATS + rel * MODULE_SEAT_DIM
        out[mo + M_PRESENT] = 1.0
        for c in range(5):
            out[O_CARDS_COLOUR + rel * 5 + c] += s[po + P_BONUS + c]
        if mods & MOD_CITIES:
            cities.observe_seat(s, p, out, mo + M_CITY)
        if mods & MOD_TRADING_POSTS:
            trading_posts.observe_seat(s, p, out, mo + M_TP)
        if mods & MOD_STRONGHOLDS:
            strongholds.observe_seat(s, p, out, mo + M_SH)
        if mods & MOD_ORIENT:
            orient.observe_reserved(s, po, rel, out, mo + M_RES)
    if mods & MOD_ORIENT:
        orient.observe_owned(s, seat, n, out, O_MSEATS, MODULE_SEAT_DIM, M_DG, M_PAIR)
        orient.observe(s, out)
    if mods & MOD_STRONGHOLDS:
        strongholds.observe(s, seat, n, out)
    if mods & MOD_CITIES:
        cities.observe(s, out)
    if mods & MOD_TRADING_POSTS:
        trading_posts.observe(s, seat, out)


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
