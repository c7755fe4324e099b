"""Card and noble data, loaded once from the package's CSV files into numpy tables.

The CSV files in ``splendor_env/data`` are the single copy of the component data.
Everything the rules need (levels, colours, points, costs, noble requirements)
is exposed as read-only numpy arrays indexed by card id / noble id, so that the
numba-compiled rules can close over them as compile-time constants.

Card ids: base cards are numbered in CSV order, which is sorted by level
(ids 0-39 level 1, 40-69 level 2, 70-89 level 3).
"""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np

COLOURS = ("white", "blue", "green", "red", "black")
TOKEN_COLOURS = COLOURS + ("gold",)
#: One-letter names used in compact text (W U G R K, and * for gold).
COLOUR_LETTERS = "WUGRK*"
GOLD = 5
NUM_GEMS = 5
NUM_LEVELS = 3

#: Number of base cards per level (index 0 = level 1).
LEVEL_SIZES = np.array([40, 30, 20], dtype=np.int32)
#: First card id of each level.
LEVEL_OFFSETS = np.array([0, 40, 70], dtype=np.int32)
NUM_CARDS = 90
NUM_NOBLES = 10


def _read_csv(name: str) -> list[dict[str, str]]:
    with resources.files("splendor_env.data").joinpath(name).open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _load_cards() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rows = _read_csv("cards.csv")
    level = np.array([int(r["level"]) - 1 for r in rows], dtype=np.int32)
    colour = np.array([COLOURS.index(r["color"]) for r in rows], dtype=np.int32)
    points = np.array([int(r["points"]) for r in rows], dtype=np.int32)
    cost = np.array([[int(r[c]) for c in COLOURS] for r in rows], dtype=np.int32)
    order = np.argsort(level, kind="stable")
    if not np.array_equal(order, np.arange(len(rows))):
        raise ValueError("cards.csv must be sorted by level")
    return level, colour, points, cost


def _load_nobles() -> tuple[np.ndarray, np.ndarray]:
    rows = _read_csv("nobles.csv")
    points = np.array([int(r["points"]) for r in rows], dtype=np.int32)
    req = np.array([[int(r[c]) for c in COLOURS] for r in rows], dtype=np.int32)
    return points, req


CARD_LEVEL, CARD_COLOUR, CARD_POINTS, CARD_COST = _load_cards()
NOBLE_POINTS, NOBLE_REQ = _load_nobles()

for _arr in (CARD_LEVEL, CARD_COLOUR, CARD_POINTS, CARD_COST, NOBLE_POINTS, NOBLE_REQ):
    _arr.setflags(write=False)


def card_summary(card: int) -> str:
    """Short human description of a card: ``"L2 red 2pt cost 3W 2U"``."""
    cost = " ".join(f"{n}{COLOUR_LETTERS[c]}" for c, n in enumerate(CARD_COST[card]) if n)
    return f"L{CARD_LEVEL[card] + 1} {COLOURS[CARD_COLOUR[card]]} {CARD_POINTS[card]}pt cost {cost or 'free'}"
