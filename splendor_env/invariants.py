"""Invariants of a game state: what every reachable position satisfies, checked from the layout alone.

Why no rules here: this file answers "is this array a sound Splendor
position?" (every card in one place, tokens and strongholds conserved,
derived fields agreeing with the cards, pending fields in range), reading the
layout and the module files' own invariant checks, never the turn pipeline.
Whether the player on move has a legal action is a question for the rules;
:func:`splendor_env.snapshot.from_dict` asks it of them when it loads a
position.
"""

from __future__ import annotations

import numpy as np

from .cards import (
    ALL_CARD_BONUS,
    ALL_CARD_COLOUR,
    ALL_CARD_LEVEL,
    ALL_CARD_POINTS,
    LEVEL_SIZES,
    NOBLE_POINTS,
    NUM_ALL_CARDS,
    NUM_CARDS,
    NUM_NOBLES,
    NUM_ORIENT,
    ORIENT_LEVEL_SIZE,
    TP_POINTS,
)
from .layout import ALL_SLOTS
from .modules import cities, orient, strongholds, trading_posts
from .state import (
    ALL_MODULES,
    BANK,
    BOX,
    CARD_OWNER,
    CURRENT,
    DECK,
    DECK_CAPACITY,
    DECK_COUNT,
    GEMS_FOR_PLAYERS,
    GOLD_TOKENS,
    MARKET,
    MARKET_SLOTS,
    MAX_PLAYERS,
    MAX_RESERVED,
    MOD_ORIENT,
    MODULES,
    N_PLAYERS,
    NOBLE_ID,
    NOBLE_OWNER,
    NOBLE_SLOTS,
    OCARD_OWNER,
    ODECK_COUNT,
    OMARKET,
    ORIENT_SLOTS,
    OUTCOME,
    P_BONUS,
    P_CARDS,
    P_NOBLES,
    P_PRESTIGE,
    P_RESERVED,
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
    PHASE_DISCARD,
    PHASE_GAME_OVER,
    PHASE_NAMES,
    PHASE_NOBLE,
    PHASE_TRUNCATED,
    PLAYER_SIZE,
    PLAYERS,
    STAGE_END,
    TOKEN_LIMIT,
    TP_HELD,
    TURN,
    deck_addr,
    qualifying_nobles,
    state_size,
)


def _pending_problems(s: np.ndarray) -> list[str]:
    """Every pending field holds a value its meaning allows."""
    ranges = (
        (PD_STAGE, 0, STAGE_END),
        (PD_SAC_CARD, -1, NUM_ALL_CARDS - 1),
        (PD_SAC_LEFT, 0, 2),
        (PD_PAIR, -1, NUM_ALL_CARDS - 1),
        (PD_FREE_LEVEL, -1, 1),
        (PD_TP_TOKEN, 0, 1),
        (PD_EXTRA_EXCL, -1, 4),
        (PD_SH, 0, 1),
        (PD_REFILL, 0, (1 << ALL_SLOTS) - 1),
        (PD_CONQ, 0, 1),
        (PD_DRAWN_DECK, -1, 5),
    )
    return [
        f"pending field at {addr} holds {int(s[addr])}, outside {lo}..{hi}"
        for addr, lo, hi in ranges
        if not lo <= s[addr] <= hi
    ]


def card_owners(s: np.ndarray) -> np.ndarray:
    """Owner code of every card id this game can hold (90 base, 120 with modules).

    Shared: the invariants and the snapshots (:func:`splendor_env.snapshot.to_dict`)
    both read the owners of base and Orient cards as one array.
    """
    if s[MODULES] == 0:
        return s[CARD_OWNER : CARD_OWNER + NUM_CARDS]
    return np.concatenate([s[CARD_OWNER : CARD_OWNER + NUM_CARDS], s[OCARD_OWNER : OCARD_OWNER + NUM_ORIENT]])


def recompute_derived(s: np.ndarray) -> None:
    """Recompute bonuses, prestige and purchase counts from cards, pairs, nobles and trading posts."""
    n = int(s[N_PLAYERS])
    mods = int(s[MODULES])
    owners = card_owners(s)
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        mine = np.flatnonzero(owners == p)
        bonus = np.zeros(5, dtype=np.int64)
        for c in mine:
            colour = int(ALL_CARD_COLOUR[c])
            if colour >= 0:
                bonus[colour] += ALL_CARD_BONUS[c]
            elif c >= NUM_CARDS and s[PAIR_HOST + c - NUM_CARDS] >= 0 if mods else False:
                bonus[ALL_CARD_COLOUR[s[PAIR_HOST + c - NUM_CARDS]]] += 1
        s[po + P_BONUS : po + P_BONUS + 5] = bonus
        s[po + P_CARDS] = len(mine)
        nobles = [s[NOBLE_ID + k] for k in range(NOBLE_SLOTS) if s[NOBLE_OWNER + k] == p]
        s[po + P_NOBLES] = len(nobles)
        prestige = int(ALL_CARD_POINTS[mine].sum()) + int(sum(NOBLE_POINTS[k] for k in nobles))
        if mods:
            prestige += trading_post_points(int(s[TP_HELD + p]))
        s[po + P_PRESTIGE] = prestige


def trading_post_points(held: int) -> int:
    """Prestige from the points trading post: 1 per trading post held, if it is held."""
    return bin(held).count("1") if held >> TP_POINTS & 1 else 0


def _phase_problems(s: np.ndarray, n: int) -> list[str]:
    """Header fields a reachable position always satisfies (so the mask is never empty mid-game)."""
    problems = []
    phase, cur = int(s[PHASE]), int(s[CURRENT])
    last_phase = len(PHASE_NAMES) - 1 if s[MODULES] else PHASE_TRUNCATED
    if not 0 <= phase <= last_phase or not 0 <= cur < n:
        return [f"phase {phase} or current player {cur} out of range"]
    if s[TURN] < 0 or s[PASSES] < 0:
        problems.append("turn and consecutive passes must be non-negative")
    po = PLAYERS + cur * PLAYER_SIZE
    if phase == PHASE_DISCARD and s[po + P_TOKENS : po + P_TOKENS + 6].sum() <= TOKEN_LIMIT:
        problems.append("discard phase but the player on move holds at most 10 tokens")
    if phase == PHASE_NOBLE and qualifying_nobles(s, po) < 2:
        problems.append("noble phase but fewer than 2 nobles on offer qualify for the player on move")
    outcome = s[OUTCOME : OUTCOME + MAX_PLAYERS]
    if outcome[n:].any() or not np.isin(outcome, (0, 1)).all():
        problems.append(f"outcome {outcome.tolist()} marks seats outside the game")
    elif phase != PHASE_GAME_OVER and outcome.any():
        problems.append("winners set before the game is over")
    return problems


def check_invariants(s: np.ndarray) -> list[str]:
    """Conservation and consistency checks; returns a list of problems (empty = ok).

    Every card is in exactly one place (a deck, the market, a reserve, bought,
    or with modules the Orient market and decks, a pending draw or the box),
    every card sits at its own level, tokens add up to the setup totals,
    strongholds add up to 3 per player, counts are non-negative and derived
    fields agree with the cards.
    """
    problems: list[str] = []
    n = int(s[N_PLAYERS])
    if n not in GEMS_FOR_PLAYERS:
        return [f"num_players {n} is not 2, 3 or 4"]
    mods = int(s[MODULES])
    if mods & ~ALL_MODULES or len(s) != state_size(mods):
        return [f"modules bitmask {mods} does not match a state array of length {len(s)}"]
    ncards = NUM_ALL_CARDS if mods & MOD_ORIENT else NUM_CARDS
    seen = np.zeros(NUM_ALL_CARDS, dtype=np.int64)

    def place(card: int, where: str, level: int | None = None) -> None:
        if not 0 <= card < ncards:
            problems.append(f"{where}: card id {card} out of range")
            return
        seen[card] += 1
        if level is not None and ALL_CARD_LEVEL[card] != level:
            problems.append(f"{where}: card {card} is level {ALL_CARD_LEVEL[card] + 1}, not {level + 1}")

    for lvl in range(3):
        cnt = int(s[DECK_COUNT + lvl])
        if not 0 <= cnt <= LEVEL_SIZES[lvl]:
            problems.append(f"deck level {lvl + 1} count {cnt} out of range")
            cnt = 0
        for i in range(cnt):
            c = int(s[DECK + lvl * DECK_CAPACITY + i])
            place(c, f"deck level {lvl + 1}", lvl)
            if c >= NUM_CARDS:
                problems.append(f"Orient card {c} in a base deck")
        for k in range(MARKET_SLOTS):
            c = int(s[MARKET + lvl * MARKET_SLOTS + k])
            if c >= 0:
                place(c, f"market L{lvl + 1} slot {k + 1}", lvl)
                if c >= NUM_CARDS:
                    problems.append(f"Orient card {c} in the base market")
    if mods:
        for lvl in range(3):
            cnt = int(s[ODECK_COUNT + lvl])
            if not 0 <= cnt <= ORIENT_LEVEL_SIZE:
                problems.append(f"orient deck level {lvl + 1} count {cnt} out of range")
                cnt = 0
            for i in range(cnt):
                c = int(s[deck_addr(3 + lvl) + i])
                place(c, f"orient deck level {lvl + 1}", lvl)
                if c < NUM_CARDS:
                    problems.append(f"base card {c} in an Orient deck")
            for k in range(ORIENT_SLOTS):
                c = int(s[OMARKET + lvl * ORIENT_SLOTS + k])
                if c >= 0:
                    place(c, f"orient market L{lvl + 1} slot {k + 1}", lvl)
                    if c < NUM_CARDS:
                        problems.append(f"base card {c} in the Orient market")
        for addr in (PD_DRAWN0, PD_DRAWN1):
            if s[addr] >= 0:
                place(int(s[addr]), "drawn by the draw-two trading post")
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        held = [int(c) for c in s[po + P_RESERVED : po + P_RESERVED + MAX_RESERVED]]
        nres = sum(c >= 0 for c in held)
        if any(c < 0 for c in held[:nres]):
            problems.append(f"player {p}: reserved cards are not packed at the front")
        for c in held:
            if c >= 0:
                place(c, f"player {p} reserve")
    owners = card_owners(s)
    for c in range(len(owners)):
        o = int(owners[c])
        if o >= n or o < (BOX if mods else -1):
            problems.append(f"card {c} owned by invalid seat {o}")
        elif o >= 0 or o == BOX:
            seen[c] += 1
    missing = np.flatnonzero(seen[:ncards] == 0)
    dup = np.flatnonzero(seen > 1)
    if len(missing):
        problems.append(f"cards missing: {missing.tolist()}")
    if len(dup):
        problems.append(f"cards in two places: {dup.tolist()}")
    if mods and not mods & MOD_ORIENT and (owners[NUM_CARDS:] != -1).any():
        problems.append("Orient cards owned in a game without the Orient")
    total = s[BANK : BANK + 6].astype(np.int64).copy()
    for p in range(n):
        po = PLAYERS + p * PLAYER_SIZE
        total += s[po + P_TOKENS : po + P_TOKENS + 6]
        if (s[po + P_TOKENS : po + P_TOKENS + 6] < 0).any():
            problems.append(f"player {p} holds a negative token count")
    if (s[BANK : BANK + 6] < 0).any():
        problems.append("bank holds a negative token count")
    expected = [GEMS_FOR_PLAYERS[n]] * 5 + [GOLD_TOKENS]
    if total.tolist() != expected:
        problems.append(f"tokens not conserved: totals {total.tolist()}, expected {expected}")
    ids = [int(s[NOBLE_ID + k]) for k in range(NOBLE_SLOTS) if s[NOBLE_ID + k] >= 0]
    if len(set(ids)) != len(ids) or any(i >= NUM_NOBLES for i in ids):
        problems.append(f"noble ids invalid or repeated: {ids}")
    for k in range(NOBLE_SLOTS):
        o = int(s[NOBLE_OWNER + k])
        if not -1 <= o < n or (o >= 0 and s[NOBLE_ID + k] < 0):
            problems.append(f"noble slot {k + 1} owned by invalid seat {o}")
    problems += _phase_problems(s, n)
    if mods:
        problems += _pending_problems(s)
        # One line per module: each file checks its own pieces.
        problems += cities.invariants(s, n, mods)
        problems += trading_posts.invariants(s, n, mods)
        problems += orient.invariants(s, n, mods, owners)
        problems += strongholds.invariants(s, n, mods)
    derived = s.copy()
    recompute_derived(derived)
    if not np.array_equal(derived, s):
        problems.append("bonuses, prestige or counts disagree with the purchased cards and nobles")
    return problems
