"""Card and noble data, loaded once from the package's CSV files into numpy tables.

The CSV files in ``splendor_env/data`` are the single copy of the component data.
Everything the rules need (levels, colours, points, costs, noble requirements)
is exposed as read-only numpy arrays indexed by card id / noble id, so that the
numba-compiled rules can close over them as compile-time constants.

Card ids: base cards are numbered in CSV order, which is sorted by level
(ids 0-39 level 1, 40-69 level 2, 70-89 level 3). The 30 Orient cards of the
Cities of Splendor expansion follow (ids 90-99 level 1, 100-109 level 2,
110-119 level 3); the ``ALL_*`` tables cover all 120 ids, the base tables
(``CARD_*``) only the 90 base cards. Cities are numbered in ``cities.csv`` order.
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


# ---------------------------------------------------------------------------
# Cities of Splendor: Orient cards, cities, trading posts

NUM_ORIENT = 30
NUM_ALL_CARDS = NUM_CARDS + NUM_ORIENT
#: First Orient card id of each level, and Orient cards per level.
ORIENT_OFFSETS = np.array([90, 100, 110], dtype=np.int32)
ORIENT_LEVEL_SIZE = 10

#: Orient effects (``effect`` column); ``reserve_noble`` cards are ordinary cards (docs/rules.md 7.3).
EFFECTS = ("none", "double_gold", "pair", "pair_free_level1", "double_bonus", "free_level2", "sacrifice")
EFFECT_NONE = 0
EFFECT_DOUBLE_GOLD = 1
EFFECT_PAIR = 2
EFFECT_PAIR_FREE_L1 = 3
EFFECT_DOUBLE_BONUS = 4
EFFECT_FREE_L2 = 5
EFFECT_SACRIFICE = 6


def _load_orient() -> tuple[np.ndarray, ...]:
    rows = _read_csv("orient_cards.csv")
    level = np.array([int(r["level"]) - 1 for r in rows], dtype=np.int32)
    if not np.array_equal(np.bincount(level), [10, 10, 10]) or not np.array_equal(np.sort(level), level):
        raise ValueError("orient_cards.csv must hold 10 cards per level, sorted by level")
    colour = np.array([COLOURS.index(r["color"]) if r["color"] in COLOURS else -1 for r in rows], np.int32)
    effect = np.array(
        [EFFECTS.index(r["effect"]) if r["effect"] in EFFECTS else EFFECT_NONE for r in rows], np.int32
    )
    bonus = np.array([int(r["bonus_count"]) for r in rows], dtype=np.int32)
    points = np.array([int(r["points"]) for r in rows], dtype=np.int32)
    cost = np.array([[int(r[c]) for c in COLOURS] for r in rows], dtype=np.int32)
    sac_colour = np.array(
        [COLOURS.index(r["sacrifice_color"]) if r["sacrifice_color"] else -1 for r in rows], np.int32
    )
    sac_count = np.array([int(r["sacrifice_count"]) for r in rows], dtype=np.int32)
    return level, colour, effect, bonus, points, cost, sac_colour, sac_count


def _load_cities() -> tuple[np.ndarray, ...]:
    rows = _read_csv("cities.csv")
    tile = np.array([int(r["tile"]) for r in rows], dtype=np.int32)
    prestige = np.array([int(r["prestige"]) for r in rows], dtype=np.int32)
    req = np.array([[int(r[c]) for c in COLOURS] for r in rows], dtype=np.int32)
    same = np.array([int(r["same_colour_count"]) for r in rows], dtype=np.int32)
    return tile, prestige, req, same


(
    _O_LEVEL,
    _O_COLOUR,
    ORIENT_EFFECT,
    _O_BONUS,
    _O_POINTS,
    _O_COST,
    _O_SAC_COLOUR,
    _O_SAC_COUNT,
) = _load_orient()

#: Tables over all 120 card ids (base then Orient). Colour -1: no colour of its
#: own (double gold, pair cards); a pair card's bonus takes its host's colour.
ALL_CARD_LEVEL = np.concatenate([CARD_LEVEL, _O_LEVEL])
ALL_CARD_COLOUR = np.concatenate([CARD_COLOUR, _O_COLOUR])
ALL_CARD_POINTS = np.concatenate([CARD_POINTS, _O_POINTS])
ALL_CARD_COST = np.concatenate([CARD_COST, _O_COST])
ALL_CARD_EFFECT = np.concatenate([np.zeros(NUM_CARDS, np.int32), ORIENT_EFFECT])
ALL_CARD_BONUS = np.concatenate([np.ones(NUM_CARDS, np.int32), _O_BONUS])
ALL_CARD_SAC_COLOUR = np.concatenate([np.full(NUM_CARDS, -1, np.int32), _O_SAC_COLOUR])
ALL_CARD_SAC_COUNT = np.concatenate([np.zeros(NUM_CARDS, np.int32), _O_SAC_COUNT])

CITY_TILE, CITY_PRESTIGE, CITY_REQ, CITY_SAME = _load_cities()
NUM_CITIES = len(CITY_TILE)
#: The distinct physical tiles; each has two sides (two city ids).
CITY_TILES = np.unique(CITY_TILE).astype(np.int32)
NUM_CITY_TILES = len(CITY_TILES)
#: CITY_SIDES[t] = the two city ids printed on tile CITY_TILES[t].
CITY_SIDES = np.array([np.flatnonzero(t == CITY_TILE) for t in CITY_TILES], dtype=np.int32)
CITIES_ON_OFFER = 3

#: Trading-post powers, in column order, with their bonus requirements (docs/rules.md 7.2).
TRADING_POSTS = ("token_after_buy", "draw_two", "extra_token", "gold_double", "points")
TRADING_POST_REQ = np.array(
    [
        [1, 0, 0, 3, 0],  # 3 red + 1 white: take a token after buying
        [0, 0, 0, 0, 3],  # 3 black: draw 2 when reserving blind, keep one
        [2, 0, 0, 0, 0],  # 2 white: extra token with a take-2-same
        [0, 3, 0, 0, 1],  # 3 blue + 1 black: each gold pays 2
        [0, 0, 5, 0, 0],  # 5 green: 1 point per trading post held
    ],
    dtype=np.int32,
)
TP_TOKEN_AFTER_BUY = 0
TP_DRAW_TWO = 1
TP_EXTRA_TOKEN = 2
TP_GOLD_DOUBLE = 3
TP_POINTS = 4

for _arr in (
    ALL_CARD_LEVEL,
    ALL_CARD_COLOUR,
    ALL_CARD_POINTS,
    ALL_CARD_COST,
    ALL_CARD_EFFECT,
    ALL_CARD_BONUS,
    ALL_CARD_SAC_COLOUR,
    ALL_CARD_SAC_COUNT,
    ORIENT_EFFECT,
    CITY_TILE,
    CITY_PRESTIGE,
    CITY_REQ,
    CITY_SAME,
    CITY_TILES,
    CITY_SIDES,
    TRADING_POST_REQ,
):
    _arr.setflags(write=False)


def colour_name(card: int) -> str:
    """The card's colour, or what stands for it on an Orient card without one."""
    c = int(ALL_CARD_COLOUR[card])
    if c >= 0:
        return COLOURS[c]
    return "no colour" if ALL_CARD_EFFECT[card] == EFFECT_DOUBLE_GOLD else "paired"


def card_summary(card: int) -> str:
    """Short human description of a card: ``"L2 red 2pt cost 3W 2U"`` (Orient: its effect too)."""
    cost = " ".join(f"{n}{COLOUR_LETTERS[c]}" for c, n in enumerate(ALL_CARD_COST[card]) if n)
    text = f"L{ALL_CARD_LEVEL[card] + 1} {colour_name(card)} {ALL_CARD_POINTS[card]}pt cost {cost or 'free'}"
    effect = int(ALL_CARD_EFFECT[card])
    if effect != EFFECT_NONE:
        text += f" [{EFFECTS[effect]}]"
    elif card >= NUM_CARDS:
        text += " [orient]"
    return text
