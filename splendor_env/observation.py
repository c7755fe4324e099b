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
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import CARD_COLOUR, CARD_COST, CARD_LEVEL, CARD_POINTS, NOBLE_REQ, NUM_CARDS
from .state import (
    BANK,
    CURRENT,
    DECK_COUNT,
    FINAL_ROUND,
    MARKET,
    MAX_PLAYERS,
    MAX_RESERVED,
    MAX_TURNS,
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
    PHASE_NOBLE,
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
    full = np.zeros((NUM_CARDS, CARD_DIM), dtype=np.float32)
    for c in range(NUM_CARDS):
        full[c, 0] = 1.0
        full[c, 2 + CARD_LEVEL[c]] = 1.0
        full[c, 5 + CARD_COLOUR[c]] = 1.0
        full[c, 10] = CARD_POINTS[c]
        full[c, 11:16] = CARD_COST[c]
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
                    out[off + i] = HIDDEN_CARD_TABLE[CARD_LEVEL[card], i]
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


def layout_table() -> str:
    """The observation layout as aligned text (printed in the README)."""
    lines = [f"{'field':<28} {'offset':>6} {'size':>5}"]
    for name, off, size in OBS_LAYOUT:
        if name.startswith("seat") and not name.startswith("seat0"):
            continue
        shown = name.replace("seat0.", "seat[k].") if name.startswith("seat0") else name
        lines.append(f"{shown:<28} {off:>6} {size:>5}")
    lines.append(f"(seat[k] blocks repeat every {SEAT_DIM} numbers for k = 0..3, observer first)")
    lines.append(f"{'total':<28} {'':>6} {OBS_DIM:>5}")
    return "\n".join(lines)
