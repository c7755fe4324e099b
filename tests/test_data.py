"""The card and noble data match the verified invariants of data/README.md.

A single typo in a cost would silently change the game; the column sums below
are the checks that caught the typos of the public listings.
"""

from __future__ import annotations

import filecmp
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from splendor_env import cards

SHARED_DATA = Path("/work/shared/data")
LEVELS = (0, 1, 2)


def test_card_and_noble_counts() -> None:
    assert cards.CARD_LEVEL.shape == (90,)
    assert cards.CARD_COST.shape == (90, 5)
    assert cards.NOBLE_REQ.shape == (10, 5)
    assert np.bincount(cards.CARD_LEVEL).tolist() == [40, 30, 20]


def test_card_ids_are_grouped_by_level() -> None:
    """Ids 0-39 are level 1, 40-69 level 2, 70-89 level 3 (the action table and decks rely on it)."""
    assert (cards.CARD_LEVEL[:40] == 0).all()
    assert (cards.CARD_LEVEL[40:70] == 1).all()
    assert (cards.CARD_LEVEL[70:] == 2).all()
    assert cards.LEVEL_OFFSETS.tolist() == [0, 40, 70]
    assert cards.LEVEL_SIZES.tolist() == [40, 30, 20]


@pytest.mark.parametrize("level,per_colour", [(0, 8), (1, 6), (2, 4)])
def test_cards_per_colour_per_level(level: int, per_colour: int) -> None:
    colours = cards.CARD_COLOUR[level == cards.CARD_LEVEL]
    assert np.bincount(colours, minlength=5).tolist() == [per_colour] * 5


@pytest.mark.parametrize("level,total", [(0, 5), (1, 55), (2, 80)])
def test_points_total_per_level(level: int, total: int) -> None:
    assert int(cards.CARD_POINTS[level == cards.CARD_LEVEL].sum()) == total


@pytest.mark.parametrize("level,col_sum", [(0, 33), (1, 41), (2, 43)])
def test_cost_column_sums_per_level(level: int, col_sum: int) -> None:
    sums = cards.CARD_COST[level == cards.CARD_LEVEL].sum(axis=0)
    assert sums.tolist() == [col_sum] * 5


def test_card_values_in_range() -> None:
    assert cards.CARD_POINTS.min() >= 0 and cards.CARD_POINTS.max() <= 5
    assert cards.CARD_COST.min() >= 0
    assert (cards.CARD_COST.sum(axis=1) > 0).all(), "every card costs something"


def test_nobles_all_worth_three() -> None:
    assert cards.NOBLE_POINTS.tolist() == [3] * 10


def test_nobles_are_neighbour_pairs_and_runs() -> None:
    """Five 4+4 nobles on neighbouring colours and five 3+3+3 runs, in the cycle W U G R K."""
    pairs = {frozenset({i, (i + 1) % 5}) for i in range(5)}
    runs = {frozenset({i, (i + 1) % 5, (i + 2) % 5}) for i in range(5)}
    got_pairs, got_runs = set(), set()
    for req in cards.NOBLE_REQ:
        used = frozenset(np.flatnonzero(req).tolist())
        values = sorted(req[req > 0].tolist())
        if values == [4, 4]:
            got_pairs.add(used)
        elif values == [3, 3, 3]:
            got_runs.add(used)
        else:
            pytest.fail(f"noble requirement {req.tolist()} is neither 4+4 nor 3+3+3")
    assert got_pairs == pairs
    assert got_runs == runs


def test_colour_order() -> None:
    assert cards.COLOURS == ("white", "blue", "green", "red", "black")
    assert cards.TOKEN_COLOURS[-1] == "gold" and cards.GOLD == 5


def test_tables_are_read_only() -> None:
    """The rules close over these arrays as constants; writing to them must fail."""
    with pytest.raises(ValueError):
        cards.CARD_COST[0, 0] = 9


@pytest.mark.parametrize("name", ["cards.csv", "nobles.csv", "orient_cards.csv", "cities.csv"])
def test_package_data_matches_shared_copy(name: str) -> None:
    """The shipped CSV files are the reference files, byte for byte."""
    if not SHARED_DATA.is_dir():
        pytest.skip("no shared reference data folder on this machine")
    shared = SHARED_DATA / name
    if not shared.exists():
        pytest.skip(f"{name} not in the shared reference data")
    packaged = resources.files("splendor_env.data").joinpath(name)
    assert packaged.is_file(), f"{name} is not shipped as package data"
    assert filecmp.cmp(str(packaged), shared, shallow=False), f"{name} differs from {shared}"
