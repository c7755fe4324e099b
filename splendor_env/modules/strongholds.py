"""Strongholds (``"strongholds"``): occupy market cards, then conquer one.

Rules (docs/rules.md 7.4), as this engine plays them:

* 3 strongholds per player. After every purchase (main action or conquest),
  before the refill, a compulsory stronghold action when one is possible
  (phase ``stronghold``): ``stronghold_place`` (slot), ``stronghold_move``
  (``source × 18 + destination``) or ``stronghold_remove`` (slot). Targets are
  face-up cards, base or Orient, never the slot just emptied and never a card
  holding an opponent's stronghold (own ones are fine); a card therefore
  holds strongholds of one player at most. Removal takes an opponent's
  stronghold standing alone on its card back to its owner. One action per
  purchase, free cards included; none after taking tokens or reserving.
* Occupation: a card holding a player's strongholds can be bought, reserved
  or taken free only by that player; whenever a card leaves the market its
  strongholds go back to their owners.
* Conquest: once per turn, after the main action and its effects (refill
  included) and never after a pass, if all 3 of the player's strongholds
  stand on one card that they can buy: phase ``conquest`` with ``decline``,
  ``buy`` or ``buy spending a double-gold card``. The conquest is a purchase
  (trading-post token, stronghold action, refill), and comes before the
  token limit and the noble check, so tokens and bonuses gained this turn
  count. The extra noble tile is not used.

Owns (rows tagged ``"strongholds"`` in :mod:`splendor_env.layout`): state
``SH_SUPPLY``, ``SH_ON``, ``PD_SH``, ``PD_CONQ``; phases ``stronghold``,
``conquest``; blocks ``stronghold_place``, ``stronghold_move``,
``stronghold_remove``, ``conquest``; observation
``mseat[k].stronghold_supply``, ``strongholds_on_market``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..action_ids import SH_MOVE, SH_PLACE, SH_REMOVE  # the module's action ids
from ..layout import ALL_SLOTS, OBS_OFFSETS
from ..reasons import OK, R_EMPTY_SLOT, R_NO_STRONGHOLD, R_NOT_AN_OPTION, R_OCCUPIED
from ..state import (
    MAX_PLAYERS,
    MOD_STRONGHOLDS,
    MODULES,
    PD_SH,
    PHASE_STRONGHOLD,
    SH_ON,
    SH_SUPPLY,
    STRONGHOLDS,
    slot_addr,
)

O_STRONGHOLDS = OBS_OFFSETS["strongholds_on_market"][0]


@njit(cache=True)
def setup(s: np.ndarray, num_players: int) -> None:
    for p in range(num_players):
        s[SH_SUPPLY + p] = STRONGHOLDS


@njit(cache=True, inline="always")
def blocked(s: np.ndarray, m: int, p: int) -> bool:
    """True if market slot ``m`` holds a stronghold of a seat other than ``p``."""
    for q in range(MAX_PLAYERS):
        if q != p and s[SH_ON + m * MAX_PLAYERS + q] > 0:
            return True
    return False


@njit(cache=True, inline="always")
def send_home(s: np.ndarray, m: int) -> None:
    """The card of slot ``m`` leaves the market: its strongholds go back to their owners."""
    for q in range(MAX_PLAYERS):
        k = SH_ON + m * MAX_PLAYERS + q
        s[SH_SUPPLY + q] += s[k]
        s[k] = 0


@njit(cache=True)
def after_purchase(s: np.ndarray) -> None:
    """Every purchase owes a stronghold action (it lapses if none is possible)."""
    if s[MODULES] & MOD_STRONGHOLDS:
        s[PD_SH] = 1


@njit(cache=True)
def pending_phase(s: np.ndarray) -> int:
    """The stronghold action, the last effect of a purchase; -1 if none is owed."""
    return PHASE_STRONGHOLD if s[PD_SH] != 0 else -1


@njit(cache=True, inline="always")
def conquest_slot(s: np.ndarray, p: int) -> int:
    """The market slot holding all 3 of seat ``p``'s strongholds, or -1."""
    for m in range(ALL_SLOTS):
        if s[SH_ON + m * MAX_PLAYERS + p] == STRONGHOLDS:
            return m
    return -1


@njit(cache=True, inline="always")
def reason(s: np.ndarray, a: int, p: int) -> int:
    """Legality of a place / move / remove id in phase ``stronghold``."""
    if a < SH_MOVE:
        m = a - SH_PLACE
        if s[SH_SUPPLY + p] == 0:
            return R_NO_STRONGHOLD
        if s[slot_addr(m)] < 0:
            return R_EMPTY_SLOT
        if blocked(s, m, p):
            return R_OCCUPIED
        return OK
    if a < SH_REMOVE:
        src = (a - SH_MOVE) // ALL_SLOTS
        dst = (a - SH_MOVE) % ALL_SLOTS
        if src == dst or s[SH_ON + src * MAX_PLAYERS + p] == 0:
            return R_NO_STRONGHOLD
        if s[slot_addr(dst)] < 0:
            return R_EMPTY_SLOT
        if blocked(s, dst, p):
            return R_OCCUPIED
        return OK
    m = a - SH_REMOVE
    for q in range(MAX_PLAYERS):
        if q != p and s[SH_ON + m * MAX_PLAYERS + q] == 1:
            return OK
    return R_NOT_AN_OPTION


@njit(cache=True, inline="always")
def decision_mask(s: np.ndarray, p: int, mask: np.ndarray) -> int:
    """The stronghold actions, walking the moves only from the (at most 3) slots holding the player's."""
    n = 0
    supply = s[SH_SUPPLY + p] > 0
    own0 = own1 = own2 = -1  # the (at most 3) slots holding the player's strongholds
    for m in range(ALL_SLOTS):
        if s[SH_ON + m * MAX_PLAYERS + p] > 0:
            if own0 < 0:
                own0 = m
            elif own1 < 0:
                own1 = m
            else:
                own2 = m
    for m in range(ALL_SLOTS):
        if s[slot_addr(m)] < 0 or blocked(s, m, p):
            continue
        if supply:
            mask[SH_PLACE + m] = 1
            n += 1
        for src in (own0, own1, own2):
            if src >= 0 and src != m:
                mask[SH_MOVE + src * ALL_SLOTS + m] = 1
                n += 1
    for m in range(ALL_SLOTS):
        if reason(s, SH_REMOVE + m, p) == OK:
            mask[SH_REMOVE + m] = 1
            n += 1
    return n


@njit(cache=True, inline="always")
def resolve(s: np.ndarray, a: int, p: int) -> None:
    """Place, move or remove a stronghold."""
    if a < SH_MOVE:
        m = a - SH_PLACE
        s[SH_SUPPLY + p] -= 1
        s[SH_ON + m * MAX_PLAYERS + p] += 1
    elif a < SH_REMOVE:
        src = (a - SH_MOVE) // ALL_SLOTS
        dst = (a - SH_MOVE) % ALL_SLOTS
        s[SH_ON + src * MAX_PLAYERS + p] -= 1
        s[SH_ON + dst * MAX_PLAYERS + p] += 1
    else:
        m = a - SH_REMOVE
        for q in range(MAX_PLAYERS):
            if q != p and s[SH_ON + m * MAX_PLAYERS + q] == 1:
                s[SH_ON + m * MAX_PLAYERS + q] = 0
                s[SH_SUPPLY + q] += 1
    s[PD_SH] = 0


@njit(cache=True, inline="always")
def observe_seat(s: np.ndarray, p: int, out: np.ndarray, at: int) -> None:
    """``mseat[k].stronghold_supply``."""
    out[at] = s[SH_SUPPLY + p]


@njit(cache=True, inline="always")
def observe(s: np.ndarray, seat: int, n: int, out: np.ndarray) -> None:
    """``strongholds_on_market``: 18 slots x 4 seats, observer first."""
    for rel in range(n):
        q = seat + rel if seat + rel < n else seat + rel - n
        for m in range(ALL_SLOTS):
            out[O_STRONGHOLDS + m * MAX_PLAYERS + rel] = s[SH_ON + m * MAX_PLAYERS + q]


def _slot_words(m: int) -> str:
    if m < 12:
        return f"market card L{m // 4 + 1} slot {m % 4 + 1}"
    return f"Orient market card L{(m - 12) // 2 + 1} slot {(m - 12) % 2 + 1}"


def describe(name: str, i: int, slot_text) -> str:
    """Words for this module's ids; ``slot_text(m)`` names a market slot and its card."""
    if name == "stronghold_place":
        return f"place a stronghold on {slot_text(i)}"
    if name == "stronghold_move":
        src, dst = divmod(i, ALL_SLOTS)
        return f"move a stronghold from {_slot_words(src)} to {slot_text(dst)}"
    if name == "stronghold_remove":
        return f"remove the opponent's stronghold from {slot_text(i)}"
    return (
        "decline the conquest",
        "buy the conquered card",
        "buy the conquered card spending a double-gold card",
    )[i]


def invariants(s: np.ndarray, n: int, mods: int) -> list[str]:
    """3 strongholds per player in all (none without the module), one player's at most per card,
    none on an empty slot."""
    problems: list[str] = []
    for q in range(MAX_PLAYERS):
        on_board = int(s[SH_ON + q : SH_ON + ALL_SLOTS * MAX_PLAYERS : MAX_PLAYERS].sum())
        supply = int(s[SH_SUPPLY + q])
        want = STRONGHOLDS if (mods & MOD_STRONGHOLDS and q < n) else 0
        if supply < 0 or on_board + supply != want:
            problems.append(
                f"player {q}: strongholds not conserved ({supply} in supply, {on_board} on cards)"
            )
    for m in range(ALL_SLOTS):
        row = s[SH_ON + m * MAX_PLAYERS : SH_ON + (m + 1) * MAX_PLAYERS]
        if (row < 0).any() or (row > 0).sum() > 1:
            problems.append(f"market slot {m}: strongholds of several players or negative counts")
        elif row.sum() and s[slot_addr(m)] < 0:
            problems.append(f"market slot {m}: strongholds on an empty slot")
    return problems
