"""What a snapshot is checked with: typed readers that name the field path, and cross-field checks.

Why a file of its own: :func:`splendor_env.snapshot.from_dict` reads every field
through the readers here (each returns the checked value or raises a
:class:`SnapshotError` naming the path), then checks the relations every reachable
position satisfies (tokens conserved, whose turn it is, the phase, the winners, the
pending record of a module game). The format itself, :func:`~splendor_env.snapshot.to_dict`
and :func:`~splendor_env.snapshot.from_dict` are in :mod:`splendor_env.snapshot`, which
re-exports :class:`SnapshotError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cards import (
    ALL_CARD_EFFECT,
    ALL_CARD_LEVEL,
    ALL_CARD_SAC_COLOUR,
    CITIES_ON_OFFER,
    EFFECT_PAIR,
    EFFECT_PAIR_FREE_L1,
    NUM_CARDS,
    TOKEN_COLOURS,
)
from .state import (
    ALL_SLOTS,
    BANK,
    CITY_OWNER,
    CURRENT,
    FINAL_ROUND,
    GEMS_FOR_PLAYERS,
    GOLD_TOKENS,
    MAX_PLAYERS,
    MAX_TURNS,
    MOD_CITIES,
    MOD_STRONGHOLDS,
    MODULES,
    N_PLAYERS,
    OUTCOME,
    P_TOKENS,
    PAIR_HOST,
    PASSES,
    PD_CONQ,
    PD_DRAWN0,
    PD_DRAWN1,
    PD_DRAWN_DECK,
    PD_EXTRA_EXCL,
    PD_FREE_LEVEL,
    PD_PAIR,
    PD_REFILL,
    PD_SAC_CARD,
    PD_SAC_LEFT,
    PD_SH,
    PD_STAGE,
    PD_TP_TOKEN,
    PHASE,
    PHASE_CITY,
    PHASE_CONQUEST,
    PHASE_DISCARD,
    PHASE_GAME_OVER,
    PHASE_MAIN,
    PHASE_NAMES,
    PHASE_NOBLE,
    PHASE_TRADING_POST_CHOICE,
    PHASE_TRUNCATED,
    SH_ON,
    SH_SUPPLY,
    STAGE_CITIES,
    STAGE_EFFECTS,
    STAGE_NOBLES,
    STAGE_TOKEN_LIMIT,
    STAGE_TRADING_POSTS,
    STRONGHOLDS,
    TOKEN_LIMIT,
    TURN,
    owner_addr,
    player_offset,
    qualifying_nobles,
    slot_addr,
)

ROOT = "snapshot"


class SnapshotError(ValueError):
    """A snapshot (or state array) that is not a valid game; the message names the field."""


#: The pending record's fields (``PD_*``) by their snapshot names, in state order.
PENDING_FIELDS = (
    ("stage", PD_STAGE),
    ("sacrifice_card", PD_SAC_CARD),
    ("sacrifice_left", PD_SAC_LEFT),
    ("pair_card", PD_PAIR),
    ("free_level", PD_FREE_LEVEL),
    ("trading_post_token", PD_TP_TOKEN),
    ("extra_token_excluded", PD_EXTRA_EXCL),
    ("stronghold_action", PD_SH),
    ("refill_slots", PD_REFILL),
    ("conquest_done", PD_CONQ),
    ("drawn_0", PD_DRAWN0),
    ("drawn_1", PD_DRAWN1),
    ("drawn_deck", PD_DRAWN_DECK),
)

# ---------------------------------------------------------------------------
# Typed readers: each returns the checked value or raises naming the path


def show(value: Any) -> str:
    """A value as a refusal quotes it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def fail(path: str, message: str) -> SnapshotError:
    """The error refusing the field at ``path`` (the caller raises it)."""
    return SnapshotError(f"{path}: {message}")


def sub_path(path: str, key: str | int) -> str:
    """The path of entry ``key`` under ``path``, as a refusal names it: ``snapshot["bank"]``, ``...[2]``."""
    return f"{path}[{key!r}]".replace("'", '"') if isinstance(key, str) else f"{path}[{key}]"


def read_int(value: Any, path: str, lo: int, hi: int) -> int:
    """An integer field: ints only (no bools, floats or strings), in ``lo..hi``."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer))
        or not lo <= value <= hi
    ):
        raise fail(path, f"expected an integer in {lo}..{hi}, got {show(value)}")
    return int(value)


def read_bool(value: Any, path: str) -> bool:
    """A bool field: ``True`` or ``False`` only (no 0 or 1)."""
    if not isinstance(value, (bool, np.bool_)):
        raise fail(path, f"expected true or false (a bool), got {show(value)}")
    return bool(value)


def read_list(value: Any, path: str, lo: int, hi: int) -> list[Any]:
    """A list (or tuple) of ``lo..hi`` entries."""
    if not isinstance(value, (list, tuple)):
        raise fail(path, f"expected a list, got {show(value)}")
    if not lo <= len(value) <= hi:
        want = f"{lo}" if lo == hi else f"{lo}..{hi}"
        raise fail(path, f"expected a list of {want} entries, got {len(value)}")
    return list(value)


def read_dict(value: Any, path: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """A dict with exactly ``keys``: a missing key or an unknown one is an error naming it."""
    if not isinstance(value, dict):
        raise fail(path, f"expected a dict with keys {list(keys)}, got {show(value)}")
    for k in keys:
        if k not in value:
            raise fail(sub_path(path, k), "missing (required key)")
    for k in value:
        if k not in keys:
            shown = sub_path(path, k) if isinstance(k, str) else f"{path}[{show(k)}]"
            raise fail(shown, f"unknown key; expected only {list(keys)}")
    return value


def read_owner(value: Any, path: str, n: int) -> int:
    """``None`` (unowned) or a seat of the game; returned as -1 or the seat."""
    return -1 if value is None else read_int(value, path, 0, n - 1)


class CardReader:
    """Registers where each card was read, so a card in two places names both."""

    def __init__(self, ncards: int) -> None:
        self.ncards = ncards
        self.where: dict[int, str] = {}

    def read(self, value: Any, path: str, level: int | None = None, orient: bool | None = None) -> int:
        card = read_int(value, path, 0, self.ncards - 1)
        if orient is not None and (card >= NUM_CARDS) != orient:
            kind = "an Orient card" if orient else "a base card"
            raise fail(path, f"card {card} is not {kind}")
        if level is not None and ALL_CARD_LEVEL[card] != level:
            raise fail(path, f"card {card} is a level-{ALL_CARD_LEVEL[card] + 1} card, not level {level + 1}")
        if card in self.where:
            raise fail(path, f"card {card} is in two places: also at {self.where[card]}")
        self.where[card] = path
        return card


# ---------------------------------------------------------------------------
# Cross-field checks (after every field was read)


def check_tokens(s: np.ndarray, n: int) -> None:
    """Every colour conserved: the bank and the players hold the tokens a game of ``n`` starts with."""
    expected = [GEMS_FOR_PLAYERS[n]] * 5 + [GOLD_TOKENS]
    for c, name in enumerate(TOKEN_COLOURS):
        held = sum(int(s[player_offset(p) + P_TOKENS + c]) for p in range(n))
        bank = int(s[BANK + c])
        if bank + held != expected[c]:
            raise fail(
                sub_path(sub_path(ROOT, "bank"), name),
                f"{name} tokens not conserved: bank {bank} + players {held} = {bank + held}, expected {expected[c]}",
            )


def check_cross_fields(s: np.ndarray, d: dict[str, Any], n: int, mods: int) -> None:
    """Relations every reachable position satisfies, each refused naming the field it concerns."""
    phase, cur, turn = int(s[PHASE]), int(s[CURRENT]), int(s[TURN])
    over = phase in (PHASE_GAME_OVER, PHASE_TRUNCATED)
    passes, max_turns = int(s[PASSES]), int(s[MAX_TURNS])
    if over and turn == 0:
        raise fail(sub_path(ROOT, "turn"), f"a game that is {PHASE_NAMES[phase]} has had turns, got turn 0")
    expected_seat = (turn - 1) % n if over else turn % n
    if cur != expected_seat:
        raise fail(
            sub_path(ROOT, "current_player"),
            f"seat {cur} cannot be on move after {turn} turn(s) of a {n}-player game "
            f"(phase {PHASE_NAMES[phase]}: expected seat {expected_seat})",
        )
    if not over and turn >= max_turns:
        raise fail(
            sub_path(ROOT, "turn"),
            f"turn {turn} reached max_turns {max_turns} but the phase is {PHASE_NAMES[phase]}",
        )
    if phase == PHASE_TRUNCATED and turn != max_turns:
        raise fail(
            sub_path(ROOT, "turn"), f"a truncated game stops at turn max_turns = {max_turns}, got {turn}"
        )
    if passes > turn + (0 if phase in (PHASE_MAIN, PHASE_GAME_OVER, PHASE_TRUNCATED) else 1):
        raise fail(
            sub_path(ROOT, "consecutive_passes"), f"{passes} consecutive passes in only {turn} turn(s)"
        )
    if passes == n and phase != PHASE_GAME_OVER:
        raise fail(
            sub_path(ROOT, "consecutive_passes"),
            f"{n} consecutive passes end the game, but the phase is {PHASE_NAMES[phase]}",
        )
    if phase == PHASE_GAME_OVER and passes < n and not (s[FINAL_ROUND] and cur == n - 1):
        raise fail(
            sub_path(ROOT, "phase"),
            "game_over needs the final round completed (final_round true, last seat on move) or every player passing",
        )
    _check_final_round(s, n, mods, phase, cur)
    _check_winners(s, d, n, phase)
    _check_phase(s, n, mods, phase, cur)


def _check_final_round(s: np.ndarray, n: int, mods: int, phase: int, cur: int) -> None:
    path = sub_path(ROOT, "final_round")
    final = bool(s[FINAL_ROUND])
    if mods & MOD_CITIES:
        claimed = any(s[CITY_OWNER + k] >= 0 for k in range(CITIES_ON_OFFER))
        if final != claimed:
            raise fail(
                path,
                f"with Cities the final round starts when a city is claimed: expected {claimed}, got {final}",
            )
        return


def _check_winners(s: np.ndarray, d: dict[str, Any], n: int, phase: int) -> None:
    from .rules import score_game  # the one scoring rule (a rules question; imported when asked)

    path = sub_path(ROOT, "winners")
    winners = read_list(d["winners"], path, 0, n)
    seats = [read_int(w, f"{path}[{i}]", 0, n - 1) for i, w in enumerate(winners)]
    if len(set(seats)) != len(seats):
        raise fail(path, f"a seat is listed twice: {seats}")
    if phase != PHASE_GAME_OVER:
        if seats:
            raise fail(path, f"winners {seats} set before the game is over (phase {PHASE_NAMES[phase]})")
        return
    scored = s.copy()
    score_game(scored)
    expected = [p for p in range(n) if scored[OUTCOME + p]]
    if sorted(seats) != expected:
        raise fail(path, f"expected {expected} (most prestige, then fewest cards), got {seats}")
    for p in expected:
        s[OUTCOME + p] = 1


#: Phases outside a turn's pending effects, with the turn stage each one belongs to.
_STAGE_OF_PHASE = {
    PHASE_MAIN: STAGE_EFFECTS,
    PHASE_GAME_OVER: STAGE_EFFECTS,
    PHASE_TRUNCATED: STAGE_EFFECTS,
    PHASE_CONQUEST: STAGE_EFFECTS,
    PHASE_DISCARD: STAGE_TOKEN_LIMIT,
    PHASE_NOBLE: STAGE_NOBLES,
    PHASE_TRADING_POST_CHOICE: STAGE_TRADING_POSTS,
    PHASE_CITY: STAGE_CITIES,
}


def check_phase(s: np.ndarray) -> None:
    """Refuse (:class:`SnapshotError`) a state whose phase the position does not call for: a discard
    or noble choice with nothing to choose, a module effect that is not the next pending one, a phase
    with no legal action. What :func:`~splendor_env.invariants.check_invariants` leaves to the snapshot."""
    _check_phase(s, int(s[N_PLAYERS]), int(s[MODULES]), int(s[PHASE]), int(s[CURRENT]))


def _check_phase(s: np.ndarray, n: int, mods: int, phase: int, cur: int) -> None:
    ppath = sub_path(ROOT, "phase")
    po = player_offset(cur)
    tokens = [int(t) for t in s[po + P_TOKENS : po + P_TOKENS + 6]]
    if phase == PHASE_DISCARD and sum(tokens) <= TOKEN_LIMIT:
        raise fail(
            ppath, f"discard phase but the player on move holds {sum(tokens)} tokens (at most {TOKEN_LIMIT})"
        )
    if phase == PHASE_NOBLE:
        qualify = qualifying_nobles(s, po)
        if qualify < 2:
            raise fail(
                ppath,
                f"noble phase but {qualify} noble(s) on offer qualify for the player on move (needs 2+)",
            )
    if mods:
        _check_pending(s, n, mods, phase, cur)
        _check_strongholds(s, n, mods)
    if phase not in (PHASE_GAME_OVER, PHASE_TRUNCATED):
        from .actions import num_actions
        from .rules import legal_mask

        if legal_mask(s, np.zeros(num_actions(mods), dtype=np.int8)) == 0:
            raise fail(ppath, f"no legal action for the player on move in phase {PHASE_NAMES[phase]}")


def _check_strongholds(s: np.ndarray, n: int, mods: int) -> None:
    want = STRONGHOLDS if mods & MOD_STRONGHOLDS else 0
    for q in range(n):
        on_board = int(s[SH_ON + q : SH_ON + ALL_SLOTS * MAX_PLAYERS : MAX_PLAYERS].sum())
        supply = int(s[SH_SUPPLY + q])
        if on_board + supply != want:
            raise fail(
                sub_path(f"{sub_path(ROOT, 'players')}[{q}]", "stronghold_supply"),
                f"strongholds not conserved: {supply} in supply + {on_board} on cards, expected {want}",
            )


def _check_pending(s: np.ndarray, n: int, mods: int, phase: int, cur: int) -> None:
    from .rules import next_pending_phase  # the engine's own order of pending effects

    path = sub_path(ROOT, "pending")
    effect_fields = {
        "sacrifice_card": -1,
        "sacrifice_left": 0,
        "pair_card": -1,
        "free_level": -1,
        "trading_post_token": 0,
        "extra_token_excluded": -1,
        "stronghold_action": 0,
        "refill_slots": 0,
        "drawn_0": -1,
        "drawn_1": -1,
        "drawn_deck": -1,
    }
    value = {name: int(s[addr]) for name, addr in PENDING_FIELDS}
    if (value["sacrifice_card"] >= 0) != (value["sacrifice_left"] > 0):
        raise fail(
            sub_path(path, "sacrifice_card"), "a sacrifice card is pending exactly when sacrifice_left > 0"
        )
    if value["sacrifice_card"] >= 0:
        card = value["sacrifice_card"]
        if ALL_CARD_SAC_COLOUR[card] < 0 or s[owner_addr(card)] != cur:
            raise fail(
                sub_path(path, "sacrifice_card"),
                f"card {card} is not a sacrifice card bought by the player on move",
            )
    if value["pair_card"] >= 0:
        card = value["pair_card"]
        if card < NUM_CARDS or ALL_CARD_EFFECT[card] not in (EFFECT_PAIR, EFFECT_PAIR_FREE_L1):
            raise fail(sub_path(path, "pair_card"), f"card {card} is not an Orient pair card")
        if s[owner_addr(card)] != cur or s[PAIR_HOST + card - NUM_CARDS] >= 0:
            raise fail(
                sub_path(path, "pair_card"),
                f"pair card {card} is not an unattached card of the player on move",
            )
    for m in range(ALL_SLOTS):
        if value["refill_slots"] >> m & 1 and s[slot_addr(m)] >= 0:
            raise fail(
                sub_path(path, "refill_slots"), f"market slot {m} is marked for refill but holds a card"
            )
    drawn = (value["drawn_0"], value["drawn_1"], value["drawn_deck"])
    if any(v >= 0 for v in drawn):
        deck = value["drawn_deck"]
        if min(drawn) < 0:
            raise fail(
                sub_path(path, "drawn_deck"),
                f"draw-two record incomplete: drawn_0, drawn_1, drawn_deck = {list(drawn)}",
            )
        for name in ("drawn_0", "drawn_1"):
            card = value[name]
            if ALL_CARD_LEVEL[card] != deck % 3 or (card >= NUM_CARDS) != (deck >= 3):
                raise fail(sub_path(path, name), f"card {card} does not come from deck {deck}")
    if phase in _STAGE_OF_PHASE:
        want = _STAGE_OF_PHASE[phase]
        if value["stage"] != want:
            raise fail(
                sub_path(path, "stage"),
                f"expected stage {want} in phase {PHASE_NAMES[phase]}, got {value['stage']}",
            )
        for name, clear in effect_fields.items():
            if value[name] != clear:
                raise fail(
                    sub_path(path, name),
                    f"expected {clear} in phase {PHASE_NAMES[phase]} (nothing pending), got {value[name]}",
                )
        if phase != PHASE_MAIN and value["conquest_done"] != 1:
            raise fail(sub_path(path, "conquest_done"), f"expected 1 in phase {PHASE_NAMES[phase]}, got 0")
    else:
        if value["stage"] != STAGE_EFFECTS:
            raise fail(
                sub_path(path, "stage"),
                f"expected stage {STAGE_EFFECTS} in phase {PHASE_NAMES[phase]}, got {value['stage']}",
            )
        if next_pending_phase(s) != phase:
            raise fail(
                sub_path(ROOT, "phase"),
                f"phase {PHASE_NAMES[phase]} is not the next pending effect of {value}",
            )
