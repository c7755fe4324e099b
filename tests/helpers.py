"""Helpers shared by the tests: build arbitrary positions in a few readable lines.

The central one is :func:`make_state`. It starts from a freshly dealt game and
moves cards and tokens around so that conservation always holds (every card in
exactly one place, token totals as at setup), then goes through
``state.from_dict``, so a constructed position is validated exactly like a
snapshot a user would restore.

Conventions (the same as the action table): levels and market slots are
0-based, ``(level, slot)``; colours are white 0, blue 1, green 2, red 3,
black 4, gold 5. Tokens may be given as a dict (``{"white": 2}``), a list of 5
or 6 counts, or compact text ``"2W 1U 1*"`` (letters W U G R K *).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import splendor_env
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS
from splendor_env.cards import CARD_LEVEL, COLOUR_LETTERS, TOKEN_COLOURS
from splendor_env.vector import VectorEnv

TokenSpec = str | Mapping[str, int] | Sequence[int]
ReserveSpec = int | tuple[int, bool]

# Action ids by name, so that tests read like the rules.
W, U, G, R, K, GOLD = range(6)


def take3(*colours: int) -> int:
    """Action id of "take 1 of each of these 3 colours"."""
    from splendor_env.actions import TAKE3_SETS

    want = sorted(colours)
    for i, cs in enumerate(TAKE3_SETS):
        if list(cs) == want:
            return i
    raise ValueError(f"no take-3 action for {colours}")


def take2diff(*colours: int) -> int:
    from splendor_env.actions import TAKE2_DIFF, TAKE2_SETS

    want = sorted(colours)
    for i, cs in enumerate(TAKE2_SETS):
        if list(cs) == want:
            return TAKE2_DIFF + i
    raise ValueError(f"no take-2-different action for {colours}")


def take1(c: int) -> int:
    return 20 + c


def take2same(c: int) -> int:
    return 25 + c


def reserve_market(level: int, slot: int) -> int:
    return 30 + level * 4 + slot


def reserve_deck(level: int) -> int:
    return 42 + level


def buy_market(level: int, slot: int) -> int:
    return 45 + level * 4 + slot


def buy_reserved(r: int) -> int:
    return 57 + r


def discard(c: int) -> int:
    return 60 + c


def choose_noble(k: int) -> int:
    return 66 + k


PASS = 71


def tokens6(spec: TokenSpec | None) -> list[int]:
    """Normalise a token spec to 6 counts (white, blue, green, red, black, gold)."""
    if spec is None:
        return [0] * 6
    if isinstance(spec, str):
        out = [0] * 6
        for part in spec.split():
            m = re.fullmatch(r"(\d*)([WUGRK*])", part)
            if not m:
                raise ValueError(f"bad token text {part!r} in {spec!r} (use e.g. '2W 1U 1*')")
            out[COLOUR_LETTERS.index(m.group(2))] += int(m.group(1) or 1)
        return out
    if isinstance(spec, Mapping):
        unknown = set(spec) - set(TOKEN_COLOURS)
        if unknown:
            raise ValueError(f"unknown colours {unknown}")
        return [int(spec.get(c, 0)) for c in TOKEN_COLOURS]
    counts = [int(x) for x in spec]
    if len(counts) == 5:
        counts.append(0)
    if len(counts) != 6:
        raise ValueError(f"token list must have 5 or 6 counts, got {counts}")
    return counts


def _as_dict(counts: Sequence[int]) -> dict[str, int]:
    return {c: int(n) for c, n in zip(TOKEN_COLOURS, counts, strict=True)}


def make_snapshot(
    num_players: int = 2,
    *,
    seed: int = 0,
    bank: TokenSpec | None = None,
    tokens: Mapping[int, TokenSpec] | None = None,
    purchased: Mapping[int, Iterable[int]] | None = None,
    reserved: Mapping[int, Iterable[ReserveSpec]] | None = None,
    market: Mapping[tuple[int, int], int] | None = None,
    deck_sizes: Mapping[int, int] | None = None,
    sink_seat: int | None = None,
    nobles: Iterable[int] | None = None,
    player_nobles: Mapping[int, Iterable[int]] | None = None,
    current: int = 0,
    phase: str = "main",
    turn: int | None = None,
    final_round: bool = False,
    passes: int = 0,
    max_turns: int = st.DEFAULT_MAX_TURNS,
) -> dict[str, Any]:
    """A snapshot dict of a constructed position (see the module docstring).

    * ``purchased`` / ``reserved`` / ``market`` name cards; each is taken from
      wherever the fresh deal put it (a deck or a market slot). A market slot
      emptied that way is refilled from the top of its deck, like in play.
      ``reserved`` entries are card ids (face up) or ``(card, blind)``.
      ``market`` maps ``(level, slot)`` to a card id, or -1 for an empty slot.
    * ``deck_sizes`` ``{level: n}`` shrinks a deck to ``n`` cards (its top
      cards are kept); the removed cards become purchases of ``sink_seat``
      (default: the last seat) because every card must be somewhere.
    * ``bank``: when omitted, the bank holds what the players do not. When
      given, the tokens neither in the bank nor in an explicit ``tokens`` entry
      are shared out between the seats without an explicit entry, other than
      the player on move (who holds nothing unless told).
    * ``nobles``: ids on offer (default: the deal's); ``player_nobles`` gives
      nobles already taken, per seat.
    """
    d = st.to_dict(st.new_state(num_players, seed, max_turns))
    purchased = {p: list(cs) for p, cs in (purchased or {}).items()}
    reserved_norm: dict[int, list[tuple[int, bool]]] = {}
    for p, items in (reserved or {}).items():
        reserved_norm[p] = [
            (int(x), False) if isinstance(x, (int, np.integer)) else (int(x[0]), bool(x[1])) for x in items
        ]
    market = dict(market or {})

    placed = [c for cs in purchased.values() for c in cs]
    placed += [c for items in reserved_norm.values() for c, _ in items]
    placed += [c for c in market.values() if c >= 0]
    if len(placed) != len(set(placed)):
        raise ValueError(f"a card is placed twice: {sorted(placed)}")
    placed_set = set(placed)

    decks: list[list[int]] = d["decks"]
    rows: list[list[int]] = d["market"]
    vacated: list[tuple[int, int]] = []
    for lvl in range(3):
        decks[lvl] = [c for c in decks[lvl] if c not in placed_set]
        for k in range(4):
            if rows[lvl][k] in placed_set:
                rows[lvl][k] = -1
                vacated.append((lvl, k))
    for (lvl, k), c in market.items():
        if c >= 0 and CARD_LEVEL[c] != lvl:
            raise ValueError(f"card {c} is level {CARD_LEVEL[c] + 1}, not {lvl + 1}")
        old = rows[lvl][k]
        if old >= 0 and old not in placed_set:
            decks[lvl].insert(0, old)  # displaced card goes to the bottom of its deck
        rows[lvl][k] = c
    for lvl, k in vacated:
        if (lvl, k) not in market and decks[lvl]:
            rows[lvl][k] = decks[lvl].pop()

    sink = num_players - 1 if sink_seat is None else sink_seat
    for lvl, n in (deck_sizes or {}).items():
        if n > len(decks[lvl]):
            raise ValueError(f"deck level {lvl + 1} has only {len(decks[lvl])} cards, asked for {n}")
        cut = len(decks[lvl]) - n
        purchased.setdefault(sink, []).extend(decks[lvl][:cut])
        decks[lvl] = decks[lvl][cut:]

    for p in range(num_players):
        pl = d["players"][p]
        pl["purchased"] = sorted(purchased.get(p, []))
        pl["reserved"] = [{"card": c, "blind": b} for c, b in reserved_norm.get(p, [])]

    # Nobles.
    offer = [n["noble"] for n in d["nobles"]] if nobles is None else list(nobles)
    owned = {p: list(ns) for p, ns in (player_nobles or {}).items()}
    entries = [{"noble": int(n), "owner": None} for n in offer]
    entries += [{"noble": int(n), "owner": p} for p, ns in owned.items() for n in ns]
    d["nobles"] = entries

    # Tokens: explicit seats, explicit bank, the rest shared out.
    total = [st.GEMS_FOR_PLAYERS[num_players]] * 5 + [st.GOLD_TOKENS]
    explicit = {p: tokens6(t) for p, t in (tokens or {}).items()}
    held = [sum(t[c] for t in explicit.values()) for c in range(6)]
    if bank is None:
        bank6 = [total[c] - held[c] for c in range(6)]
        rest = [0] * 6
    else:
        bank6 = tokens6(bank)
        rest = [total[c] - held[c] - bank6[c] for c in range(6)]
    if min(bank6) < 0 or min(rest) < 0:
        raise ValueError(f"more tokens than exist: bank {bank6}, held {held}, total {total}")
    others = [p for p in range(num_players) if p not in explicit and p != current]
    if any(rest) and not others:
        raise ValueError(f"tokens {rest} are in neither the bank nor a player's hands")
    players_tok = {p: explicit.get(p, [0] * 6) for p in range(num_players)}
    for c in range(6):
        for i in range(rest[c]):
            players_tok[others[i % len(others)]][c] += 1
    d["bank"] = _as_dict(bank6)
    for p in range(num_players):
        d["players"][p]["tokens"] = _as_dict(players_tok[p])

    if turn is None:  # the seat on move is turn % num_players (the last mover once the game is over)
        turn = current + (1 if phase in ("game_over", "truncated") else 0)
    d.update(
        current_player=current,
        phase=phase,
        turn=turn,
        final_round=final_round,
        consecutive_passes=passes,
        max_turns=max_turns,
        winners=[],
    )
    return d


def make_state(num_players: int = 2, **kw: Any) -> np.ndarray:
    """A validated state array for a constructed position (see :func:`make_snapshot`)."""
    return st.from_dict(make_snapshot(num_players, **kw))


# ---------------------------------------------------------------------------
# Reading and playing states


def legal(s: np.ndarray) -> set[int]:
    """The set of legal action ids, from ``legal_mask``."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    rules.legal_mask(s, mask)
    return set(np.flatnonzero(mask).tolist())


def play(s: np.ndarray, *actions: int) -> np.ndarray:
    """A copy of ``s`` after the given actions, each checked legal first."""
    s = s.copy()
    for a in actions:
        reason = rules.step_checked(s, a)
        assert reason == 0, f"action {a} refused: {rules.REASONS[reason] if reason > 0 else reason}"
    return s


def refused(s: np.ndarray, a: int) -> int:
    """Reason code for ``a`` (nonzero), asserting that ``step_checked`` left ``s`` untouched."""
    before = s.copy()
    reason = rules.step_checked(s, a)
    assert np.array_equal(before, s), f"refused action {a} changed the state"
    return reason


def player(s: np.ndarray, seat: int) -> dict[str, Any]:
    return st.to_dict(s)["players"][seat]


def tokens_of(s: np.ndarray, seat: int) -> list[int]:
    po = st.player_offset(seat)
    return s[po + st.P_TOKENS : po + st.P_TOKENS + 6].tolist()


def bank_of(s: np.ndarray) -> list[int]:
    return s[st.BANK : st.BANK + 6].tolist()


def phase_of(s: np.ndarray) -> str:
    return st.PHASE_NAMES[s[st.PHASE]]


def market_card(s: np.ndarray, level: int, slot: int) -> int:
    return int(s[st.MARKET + level * 4 + slot])


def deck(s: np.ndarray, level: int) -> list[int]:
    """A level's deck, bottom first (the last id is the top card)."""
    return st.to_dict(s)["decks"][level]


def with_changes(s: np.ndarray, **changes: Any) -> np.ndarray:
    """A validated copy of ``s`` with top-level snapshot fields replaced."""
    d = copy.deepcopy(st.to_dict(s))
    d.update(changes)
    return st.from_dict(d)


def random_playout(
    s: np.ndarray, rng: np.random.Generator, max_steps: int = 10_000
) -> tuple[np.ndarray, list[int]]:
    """Play uniformly random legal actions until the game is over; returns (state, actions)."""
    s = s.copy()
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    actions: list[int] = []
    for _ in range(max_steps):
        if rules.is_over(s):
            break
        rules.legal_mask(s, mask)
        a = int(rng.choice(np.flatnonzero(mask)))
        rules.apply_action(s, a)
        actions.append(a)
    return s, actions


def assert_batched_games_equal_aec_games(
    num_players: int, batch: int, base_seed: int, action_seed: int, steps: int, **options: Any
) -> int:
    """Play random games through ``VectorEnv`` and ``raw_env`` side by side from the same seeds.

    At every step the observations, masks, player to move and rewards must
    agree, and at every game end the terminal flags, the final observations
    of every seat and the final state. Returns how many games finished (the
    batched engine resets them itself; the AEC envs are reset with the next
    seed, as the batched engine does).
    """
    venv = VectorEnv(batch, num_players, **options)
    obs, masks, players = venv.reset(seed=base_seed)
    envs = [splendor_env.raw_env(num_players, **options) for _ in range(batch)]
    for b, e in enumerate(envs):
        e.reset(seed=base_seed + b)
    next_seed = base_seed + batch
    rng = np.random.default_rng(action_seed)
    finished = 0
    for _ in range(steps):
        for b, e in enumerate(envs):
            o = e.observe(e.agent_selection)
            np.testing.assert_array_equal(o["observation"], obs[b])
            np.testing.assert_array_equal(o["action_mask"], masks[b])
            assert e.agent_selection == f"player_{players[b]}"
        actions = np.array([rng.choice(np.flatnonzero(masks[b])) for b in range(batch)])
        obs, masks, players, rewards, terminated, truncated, info = venv.step(actions)
        for b, e in enumerate(envs):
            e.step(int(actions[b]))
            np.testing.assert_allclose([e.rewards[a] for a in e.possible_agents], rewards[b])
            if terminated[b] or truncated[b]:
                assert all(e.terminations.values()) == bool(terminated[b])
                assert all(e.truncations.values()) == bool(truncated[b])
                for seat in range(num_players):
                    final = e.observe(f"player_{seat}")["observation"]
                    np.testing.assert_array_equal(final, info["final_observation"][b, seat])
                np.testing.assert_array_equal(e.state(), info["final_state"][b])
                e.reset(seed=next_seed)
                next_seed += 1
                finished += 1
    return finished
