"""Cities (``"cities"``): claim a city instead of reaching 15 prestige.

Rules (docs/rules.md 7.1), as this engine plays them:

* Setup: 3 of the 7 double-sided tiles at random, a random side of each, for
  any number of players; no nobles (whatever the other modules). The module
  setup draws after the base deal, so a seed deals the same base cards with
  or without modules.
* End of turn, after the trading posts: a player without a city claims one
  when their prestige (trading-post points included) is at least the tile's
  and their bonuses meet the requirement. Several qualify: ``choose_city``
  (phase ``city``); one: claimed automatically. A player keeps at most one
  city; a city gives no prestige.
* **Engine decision (reading the symbol):** "N cards of one colour" is read
  in bonuses, as every requirement is (a double-bonus card counts 2, an
  attached pair card 1), in a colour the tile names nowhere else.
* The 15-point trigger is off. Claiming a city starts the final round, which
  is completed as in the base game. Winner: among the city holders, most
  prestige, then fewest purchased cards, else a shared victory (a sole
  holder wins whatever the others' prestige).
* **Engine decision:** a game that ends with no city holder (the all-pass
  rule, docs/rules.md 6) is scored over all players as in the base game;
  truncation is as in the base game.

Owns (rows tagged ``"cities"`` in :mod:`splendor_env.layout`): state
``CITY_ID``, ``CITY_OWNER``; phase ``city``; block ``choose_city``;
observation ``mseat[k].city``, ``cities_on_offer``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..action_ids import CHOOSE_CITY  # the module's action ids
from ..cards import CITIES_ON_OFFER, CITY_PRESTIGE, CITY_REQ, CITY_SAME, CITY_SIDES, NUM_CITY_TILES
from ..layout import CITY_DIM, OBS_OFFSETS
from ..reasons import OK, R_ALREADY_HELD, R_NOT_AN_OPTION, R_REQUIREMENT_NOT_MET
from ..rng import rand_below, shuffle
from ..state import (
    CITY_ID,
    CITY_OWNER,
    FINAL_ROUND,
    MOD_CITIES,
    NOBLE_ID,
    NOBLE_OWNER,
    NOBLE_SLOTS,
    P_BONUS,
    P_PRESTIGE,
    PHASE,
    PHASE_CITY,
)

O_CITIES = OBS_OFFSETS["cities_on_offer"][0]


@njit(cache=True)
def setup(s: np.ndarray, rng: np.ndarray) -> None:
    """No nobles; three random tiles, a random side each."""
    for k in range(NOBLE_SLOTS):
        s[NOBLE_ID + k] = -1
        s[NOBLE_OWNER + k] = -1
    tiles = np.arange(NUM_CITY_TILES)
    shuffle(tiles, NUM_CITY_TILES, rng)
    for k in range(CITIES_ON_OFFER):
        s[CITY_ID + k] = CITY_SIDES[tiles[k], rand_below(rng, 2)]


@njit(cache=True, inline="always")
def city_of(s: np.ndarray, p: int) -> int:
    """The city slot seat ``p`` claimed, or -1."""
    for k in range(CITIES_ON_OFFER):
        if s[CITY_ID + k] >= 0 and s[CITY_OWNER + k] == p:
            return k
    return -1


@njit(cache=True)
def meets_city(s: np.ndarray, po: int, city: int) -> bool:
    """Prestige and bonuses; the "N of one colour" symbol needs a colour the tile does not name."""
    if s[po + P_PRESTIGE] < CITY_PRESTIGE[city]:
        return False
    for c in range(5):
        if s[po + P_BONUS + c] < CITY_REQ[city, c]:
            return False
    n = CITY_SAME[city]
    if n == 0:
        return True
    for c in range(5):
        if CITY_REQ[city, c] == 0 and s[po + P_BONUS + c] >= n:
            return True
    return False


@njit(cache=True)
def take(s: np.ndarray, p: int, k: int) -> None:
    """Claiming a city starts the last round (the 15-point trigger does not apply with Cities)."""
    s[CITY_OWNER + k] = p
    s[FINAL_ROUND] = 1


@njit(cache=True)
def reason(s: np.ndarray, a: int, p: int, po: int) -> int:
    """Legality of a ``choose_city`` id in phase ``city`` (the caller checked module and phase)."""
    k = a - CHOOSE_CITY
    if s[CITY_ID + k] < 0 or s[CITY_OWNER + k] >= 0:
        return R_NOT_AN_OPTION
    if city_of(s, p) >= 0:
        return R_ALREADY_HELD
    if not meets_city(s, po, s[CITY_ID + k]):
        return R_REQUIREMENT_NOT_MET
    return OK


@njit(cache=True, inline="always")
def end_of_turn(s: np.ndarray, p: int, po: int) -> bool:
    """The city stage: claim the one city that qualifies; True when several do (phase ``city``)."""
    if city_of(s, p) >= 0:
        return False
    count = 0
    only = -1
    for k in range(CITIES_ON_OFFER):
        if s[CITY_ID + k] >= 0 and s[CITY_OWNER + k] < 0 and meets_city(s, po, s[CITY_ID + k]):
            count += 1
            only = k
    if count > 1:
        s[PHASE] = PHASE_CITY
        return True
    if count == 1:
        take(s, p, only)
    return False


@njit(cache=True)
def holders(s: np.ndarray, n: int) -> int:
    """Bitmask of the seats holding a city: only they can win, if there are any."""
    bits = 0
    for p in range(n):
        if city_of(s, p) >= 0:
            bits |= 1 << p
    return bits


@njit(cache=True, inline="always")
def observe_seat(s: np.ndarray, p: int, out: np.ndarray, city_at: int) -> None:
    """``mseat[k].city``: 1 if the seat holds a city."""
    if city_of(s, p) >= 0:
        out[city_at] = 1.0


@njit(cache=True, inline="always")
def observe(s: np.ndarray, out: np.ndarray) -> None:
    """``cities_on_offer``: present, prestige, requirement (5), same-colour count; claimed cities are gone."""
    for k in range(CITIES_ON_OFFER):
        city = s[CITY_ID + k]
        if city >= 0 and s[CITY_OWNER + k] < 0:
            off = O_CITIES + k * CITY_DIM
            out[off] = 1.0
            out[off + 1] = CITY_PRESTIGE[city]
            for c in range(5):
                out[off + 2 + c] = CITY_REQ[city, c]
            out[off + 7] = CITY_SAME[city]


def describe(name: str, i: int, state: np.ndarray | None) -> str:
    """Words for a ``choose_city`` id; with a state, the city's prestige."""
    text = f"claim city slot {i + 1}"
    if state is not None and len(state) > CITY_ID and state[CITY_ID + i] >= 0:
        text += f" ({int(CITY_PRESTIGE[state[CITY_ID + i]])} prestige city)"
    return text


def invariants(s: np.ndarray, n: int, mods: int) -> list[str]:
    """Cities on offer are valid, distinct, claimed once each and at most one per player."""
    problems: list[str] = []
    for k in range(CITIES_ON_OFFER):
        if not -1 <= s[CITY_ID + k] < len(CITY_SIDES) * 2 or not -1 <= s[CITY_OWNER + k] < n:
            problems.append(f"city slot {k + 1} holds an invalid city or owner")
    if mods & MOD_CITIES and any(s[NOBLE_ID + k] >= 0 for k in range(NOBLE_SLOTS)):
        problems.append("nobles on offer in a game with Cities")
    cities = [int(s[CITY_ID + k]) for k in range(CITIES_ON_OFFER) if s[CITY_ID + k] >= 0]
    if len(set(cities)) != len(cities):
        problems.append(f"cities repeated: {cities}")
    claimed = [int(s[CITY_OWNER + k]) for k in range(CITIES_ON_OFFER) if s[CITY_OWNER + k] >= 0]
    if len(set(claimed)) != len(claimed) or any(q >= n for q in claimed):
        problems.append(f"a player holds two cities, or a city has an invalid owner: {claimed}")
    return problems
