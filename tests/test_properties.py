"""Property tests over random games: conservation, mask/check agreement, termination.

Hypothesis draws the deal seed, the seed of the random legal policy and the
turn cap; each example plays a whole game and checks every position on the
way. The profile in conftest.py keeps the number of examples small.

Every test here plays whole games example after example (about 25 s of CPU in
all), so the file is in the slow lane; the quick lane still plays random games
with every invariant checked in tests/test_modules_properties.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hs

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS
from splendor_env.deal import new_state
from splendor_env.invariants import check_invariants
from splendor_env.observation import OBS_DIM, observe
from splendor_env.snapshot import from_dict, to_dict

pytestmark = pytest.mark.slow

#: Decisions per turn are bounded: one main action, at most 3 discards, one noble choice.
MAX_DECISIONS_PER_TURN = 5

seeds = hs.integers(min_value=0, max_value=2**62)


def check_position(s: np.ndarray, mask: np.ndarray) -> None:
    """Everything that must hold in any reachable position."""
    assert check_invariants(s) == []
    n_legal = rules.legal_mask(s, mask)
    assert n_legal == int(mask.sum())
    if rules.is_over(s):
        assert n_legal == 0
    else:
        assert n_legal > 0, "the mask is never empty before the game is over"
        if mask[rules.PASS]:
            assert n_legal == 1, "pass only when nothing else is legal"
    for a in range(NUM_ACTIONS):
        trial = s.copy()
        reason = rules.step_checked(trial, a)
        assert (reason == 0) == bool(mask[a]), f"mask and check disagree on action {a}"
        if reason == 0:
            assert check_invariants(trial) == []
        else:
            assert np.array_equal(trial, s), f"refused action {a} changed the state"
            assert rules.illegal_reason(s, a) == reason
    for a in (-1, NUM_ACTIONS):
        assert rules.step_checked(s.copy(), a) != 0


def play_random_game(n: int, seed: int, policy_seed: int, max_turns: int) -> np.ndarray:
    s = new_state(n, seed=seed, max_turns=max_turns)
    rng = np.random.default_rng(policy_seed)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for _ in range(max_turns * MAX_DECISIONS_PER_TURN + 1):
        check_position(s, mask)
        if rules.is_over(s):
            break
        turn = int(s[st.TURN])
        seat = int(s[st.CURRENT])
        a = int(rng.choice(np.flatnonzero(mask)))
        assert rules.step_checked(s, a) == 0
        assert s[st.TURN] in (turn, turn + 1)
        if s[st.TURN] == turn:
            assert s[st.CURRENT] == seat, "a turn is not over until its decisions are made"
    assert rules.is_over(s), "the game must end within the turn cap"
    assert s[st.TURN] <= max_turns
    return s


@pytest.mark.parametrize("n", [2, 3, 4])
@given(seed=seeds, policy_seed=seeds)
def test_random_games_keep_every_invariant(n: int, seed: int, policy_seed: int) -> None:
    s = play_random_game(n, seed, policy_seed, max_turns=st.DEFAULT_MAX_TURNS)
    d = to_dict(s)
    if d["phase"] == "game_over":
        assert d["winners"], "a finished game has at least one winner"
        best = max(p["prestige"] for p in d["players"])
        assert all(d["players"][w]["prestige"] == best for w in d["winners"])


@pytest.mark.parametrize("n", [2, 3, 4])
@given(seed=seeds, policy_seed=seeds, max_turns=hs.integers(min_value=1, max_value=60))
def test_short_turn_caps_truncate(n: int, seed: int, policy_seed: int, max_turns: int) -> None:
    s = play_random_game(n, seed, policy_seed, max_turns=max_turns)
    if st.PHASE_NAMES[s[st.PHASE]] == "truncated":
        assert s[st.TURN] == max_turns
        assert not s[st.OUTCOME : st.OUTCOME + 4].any()
        out = np.ones(4)
        rules.terminal_rewards(s, out)
        assert not out.any()


@pytest.mark.parametrize("n", [2, 3, 4])
@given(seed=seeds, policy_seed=seeds)
def test_snapshots_round_trip_and_hide_deck_order(n: int, seed: int, policy_seed: int) -> None:
    """At every step: JSON snapshot round trip; observations identical under any deck order."""
    s = new_state(n, seed=seed)
    rng = np.random.default_rng(policy_seed)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    a_obs = np.empty(OBS_DIM, dtype=np.float32)
    b_obs = np.empty(OBS_DIM, dtype=np.float32)
    while not rules.is_over(s):
        d = to_dict(s)
        assert np.array_equal(from_dict(d), s)
        for deck in d["decks"]:
            rng.shuffle(deck)
        shuffled = from_dict(d)
        for seat in range(n):
            observe(s, seat, a_obs)
            observe(shuffled, seat, b_obs)
            assert np.array_equal(a_obs, b_obs)
        rules.legal_mask(s, mask)
        rules.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
    assert np.array_equal(from_dict(to_dict(s)), s)
