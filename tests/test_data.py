"""The card and noble data match the verified invariants of data/README.md.

A single typo in a cost would silently change the game; the column sums below
are the checks that caught the typos of the public listings.

``tests/data/reference/`` is the repository's copy of the reference data (the
files the package data was made from, README included); the shipped package
data must equal it byte for byte, and its SHA-256 digests are pinned here so
that an edit to the reference copy itself shows up too.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from splendor_env import cards

REFERENCE = Path(__file__).parent / "data" / "reference"
REFERENCE_SHA256 = {
    "README.md": "49a572362e1fedcbe09f8f505928373bc07f9867886326cc7244a9707647e285",
    "cards.csv": "d48a6f504ea9c309c2ae9eb0e9c5ed962477498ee39777006fbd60d0324eacd6",
    "cities.csv": "f0be800f7fdc0d3b4938b0571b0c5a9a97bb6ff527dd573ca09289b9e1bd8ec5",
    "nobles.csv": "ea9be564a39a3d5553176a6f706944e715b398d21717c43a44a1a71ddf5eccb2",
    "orient_cards.csv": "43046c15c2f61ee082d93bc286c8df173f9b9a486b9c92701b89a8a25a841898",
}
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


def _package_data() -> dict[str, bytes]:
    """The data files shipped in ``splendor_env.data`` (everything but the Python files)."""
    folder = resources.files("splendor_env.data")
    return {f.name: f.read_bytes() for f in folder.iterdir() if f.is_file() and not f.name.endswith(".py")}


def test_reference_copy_is_pinned() -> None:
    """The reference copy holds exactly the pinned files, unchanged."""
    assert sorted(f.name for f in REFERENCE.iterdir()) == sorted(REFERENCE_SHA256)
    for name, digest in REFERENCE_SHA256.items():
        assert hashlib.sha256((REFERENCE / name).read_bytes()).hexdigest() == digest, f"{name} was edited"


def test_package_ships_every_reference_file_and_no_other() -> None:
    assert sorted(_package_data()) == sorted(REFERENCE_SHA256)


@pytest.mark.parametrize("name", sorted(REFERENCE_SHA256))
def test_package_data_matches_reference_copy(name: str) -> None:
    """The shipped data files are the reference files, byte for byte."""
    packaged = _package_data()
    assert name in packaged, f"{name} is not shipped as package data"
    assert packaged[name] == (REFERENCE / name).read_bytes(), f"{name} differs from {REFERENCE / name}"
