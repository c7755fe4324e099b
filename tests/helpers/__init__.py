"""Helpers shared by the tests: action ids by name, reading and playing states, random play.

The test files import from this package only (``from tests.helpers import
Position, legal, play``), never from one another. Its modules:

* :mod:`tests.helpers.positions`: the one position builder, :class:`Position`
  (and its keyword form ``make_state`` / ``make_snapshot``);
* :mod:`tests.helpers.decisions`: the positions the agents are tested on
  (``sample_states`` from random games, ``noble_choice_state``,
  ``winning_position``) and ``decision_inputs`` (observation, mask, seat);
* :mod:`tests.helpers.snapshot_fuzz`: the snapshot mutation campaign
  (``python -m tests.helpers.snapshot_fuzz``);
* this file: action ids by name, reading and playing states, random play.

Everything but the campaign is re-exported here.

Conventions (the same as the action table): levels and market slots are
0-based; colours are white 0, blue 1, green 2, red 3, black 4, gold 5.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

import splendor_env
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import num_actions
from splendor_env.invariants import check_invariants
from splendor_env.snapshot import from_dict, to_dict
from splendor_env.vector import SplendorBatch
from tests.helpers.decisions import (
    decision_inputs,
    noble_choice_state,
    points_cards,
    sample_states,
    winning_position,
)
from tests.helpers.positions import (
    Position,
    ReserveSpec,
    TokenSpec,
    base_cards,
    make_snapshot,
    make_state,
    tokens6,
)

__all__ = [
    "G",
    "GOLD",
    "K",
    "PASS",
    "Position",
    "R",
    "ReserveSpec",
    "TokenSpec",
    "U",
    "W",
    "assert_batched_games_equal_aec_games",
    "bank_of",
    "base_cards",
    "bonus_of",
    "buy_market",
    "buy_reserved",
    "choose_noble",
    "deck",
    "decision_inputs",
    "discard",
    "legal",
    "make_snapshot",
    "make_state",
    "market_card",
    "noble_choice_state",
    "owner_of",
    "phase_of",
    "play",
    "points_cards",
    "player",
    "prestige_of",
    "random_playout",
    "refused",
    "reserve_deck",
    "reserve_market",
    "sample_states",
    "take1",
    "take2diff",
    "take2same",
    "take3",
    "tokens6",
    "tokens_of",
    "winning_position",
    "with_changes",
]

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


# ---------------------------------------------------------------------------
# Reading and playing states


def legal(s: np.ndarray) -> set[int]:
    """The set of legal action ids, from ``legal_mask``.

    Also checks that ``illegal_reason`` agrees with the mask on every id, so
    each test that reads the legal actions checks both sides of the engine.
    """
    mask = np.zeros(num_actions(int(s[st.MODULES])), dtype=np.int8)
    rules.legal_mask(s, mask)
    ids = set(np.flatnonzero(mask).tolist())
    for a in range(len(mask)):
        assert (rules.illegal_reason(s, a) == rules.OK) == (a in ids), (
            f"mask and illegal_reason disagree on {a}"
        )
    return ids


def play(s: np.ndarray, *actions: int) -> np.ndarray:
    """A copy of ``s`` after the given actions, each checked legal first and the invariants after it.

    ``s`` itself is never changed, so a test can play several lines from one position.
    """
    s = s.copy()
    for a in actions:
        reason = rules.step_checked(s, a)
        assert reason == 0, f"action {a} refused: {rules.REASONS[reason] if reason > 0 else reason}"
        problems = check_invariants(s)
        assert not problems, (a, problems)
    return s


def refused(s: np.ndarray, a: int) -> int:
    """Reason code for ``a`` (nonzero), asserting that ``step_checked`` left ``s`` untouched."""
    before = s.copy()
    reason = rules.step_checked(s, a)
    assert np.array_equal(before, s), f"refused action {a} changed the state"
    assert reason != 0, f"action {a} was accepted"
    return reason


def player(s: np.ndarray, seat: int) -> dict[str, Any]:
    """Seat ``seat``'s snapshot entry (tokens, bonuses, prestige, cards, nobles, module pieces)."""
    return to_dict(s)["players"][seat]


def tokens_of(s: np.ndarray, seat: int) -> list[int]:
    po = st.player_offset(seat)
    return s[po + st.P_TOKENS : po + st.P_TOKENS + 6].tolist()


def bonus_of(s: np.ndarray, seat: int) -> list[int]:
    po = st.player_offset(seat)
    return s[po + st.P_BONUS : po + st.P_BONUS + 5].tolist()


def prestige_of(s: np.ndarray, seat: int) -> int:
    return int(s[st.player_offset(seat) + st.P_PRESTIGE])


def owner_of(s: np.ndarray, card: int) -> int:
    """The seat owning ``card``, -1 if nobody (deck, market, reserve), ``st.BOX`` if boxed."""
    return int(s[st.owner_addr(card)])


def bank_of(s: np.ndarray) -> list[int]:
    return s[st.BANK : st.BANK + 6].tolist()


def phase_of(s: np.ndarray) -> str:
    return st.PHASE_NAMES[s[st.PHASE]]


def market_card(s: np.ndarray, level: int, slot: int) -> int:
    return int(s[st.MARKET + level * 4 + slot])


def deck(s: np.ndarray, d: int) -> list[int]:
    """Deck ``d`` (0-2 base levels, 3-5 Orient levels), bottom first (the last id is the top card)."""
    snap = to_dict(s)
    return snap["decks"][d] if d < 3 else snap["orient_decks"][d - 3]


def with_changes(s: np.ndarray, **changes: Any) -> np.ndarray:
    """A validated copy of ``s`` with top-level snapshot fields replaced."""
    d = copy.deepcopy(to_dict(s))
    d.update(changes)
    return from_dict(d)


def random_playout(
    s: np.ndarray, rng: np.random.Generator, max_steps: int = 10_000
) -> tuple[np.ndarray, list[int]]:
    """Play uniformly random legal actions until the game is over; returns (state, actions)."""
    s = s.copy()
    mask = np.zeros(num_actions(int(s[st.MODULES])), dtype=np.int8)
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
    """Play random games through ``SplendorBatch`` and ``raw_env`` side by side from the same seeds.

    At every step the observations, masks, player to move and rewards must
    agree, and at every game end the terminal flags, the final observations
    of every seat and the final state. Returns how many games finished (the
    batched engine resets them itself; the AEC envs are reset with the next
    seed, as the batched engine does).
    """
    venv = SplendorBatch(batch, num_players, **options)
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
                np.testing.assert_array_equal(e.engine_state(), info["final_state"][b])
                e.reset(seed=next_seed)
                next_seed += 1
                finished += 1
    return finished
