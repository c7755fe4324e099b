"""The batched engine against the AEC env: same games, same observations, masks and rewards."""

from __future__ import annotations

import numpy as np
import pytest

import splendor_env
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS
from splendor_env.observation import OBS_DIM, observe
from splendor_env.vector import VectorEnv, sample_legal_actions


def _aec_view(e: splendor_env.raw_env) -> tuple[np.ndarray, np.ndarray]:
    o = e.observe(e.agent_selection)
    return o["observation"], o["action_mask"]


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("reward_mode", ["terminal", "shaped"])
def test_batched_games_equal_aec_games_step_by_step(num_players: int, reward_mode: str) -> None:
    """Random games through both paths from the same seeds agree at every step, across auto-resets."""
    batch, base_seed = 4, 1000
    venv = VectorEnv(batch, num_players, reward_mode=reward_mode, max_turns=120)
    obs, masks, players = venv.reset(seed=base_seed)
    envs = [splendor_env.raw_env(num_players, reward_mode=reward_mode, max_turns=120) for _ in range(batch)]
    for b, e in enumerate(envs):
        e.reset(seed=base_seed + b)
    next_seed = base_seed + batch
    rng = np.random.default_rng(7)
    finished = 0
    for _ in range(1500):
        for b, e in enumerate(envs):
            aec_obs, aec_mask = _aec_view(e)
            np.testing.assert_array_equal(aec_obs, obs[b])
            np.testing.assert_array_equal(aec_mask, masks[b])
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
    assert finished >= 4, "the test should cross several auto-resets"


def test_step_subset_leaves_other_games_untouched() -> None:
    venv = VectorEnv(3, 2)
    obs, masks, _ = venv.reset(seed=5)
    before = venv.states.copy()
    action = int(np.flatnonzero(masks[1])[0])
    obs2, _, _, rewards, term, trunc, _ = venv.step(np.array([action]), env_ids=np.array([1]))
    np.testing.assert_array_equal(venv.states[[0, 2]], before[[0, 2]])
    assert not np.array_equal(venv.states[1], before[1])
    np.testing.assert_array_equal(obs2[[0, 2]], obs[[0, 2]])
    assert not rewards[[0, 2]].any() and not term.any() and not trunc.any()


def test_illegal_action_raises_and_changes_nothing() -> None:
    venv = VectorEnv(2, 2)
    _, masks, _ = venv.reset(seed=3)
    illegal = int(np.flatnonzero(masks[1] == 0)[0])
    legal = int(np.flatnonzero(masks[0])[0])
    before = venv.states.copy()
    with pytest.raises(ValueError, match=rf"game 1: illegal action {illegal}"):
        venv.step(np.array([legal, illegal]))
    np.testing.assert_array_equal(venv.states, before)
    with pytest.raises(ValueError, match="out of range"):
        venv.step(np.array([legal, NUM_ACTIONS]))
    with pytest.raises(ValueError, match="integer array of shape"):
        venv.step(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="integer array of shape"):
        venv.step(np.array([legal]))
    with pytest.raises(ValueError, match="distinct game indices"):
        venv.step(np.array([legal, legal]), env_ids=np.array([0, 0]))
    np.testing.assert_array_equal(venv.states, before)


def test_bad_construction_and_order_errors() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        VectorEnv(0)
    with pytest.raises(ValueError, match="num_players"):
        VectorEnv(2, num_players=5)
    with pytest.raises(TypeError, match="unknown option"):
        VectorEnv(2, colour_blind=True)
    with pytest.raises(RuntimeError, match="before reset"):
        VectorEnv(2).step(np.array([0, 0]))


def test_seeded_resets_are_reproducible_and_distinct() -> None:
    a, b = VectorEnv(3, 2), VectorEnv(3, 2)
    oa, ma, _ = a.reset(seed=11)
    ob, mb, _ = b.reset(seed=11)
    np.testing.assert_array_equal(a.states, b.states)
    assert not np.array_equal(a.states[0], a.states[1]), "games in one batch get different seeds"
    np.testing.assert_array_equal(a.states[2], splendor_env.new_state(2, seed=13))


def test_observe_other_seat_matches_single_game_observe() -> None:
    venv = VectorEnv(2, 3)
    venv.reset(seed=0)
    seen = venv.observe(2)
    expected = np.empty(OBS_DIM, dtype=np.float32)
    observe(venv.states[1], 2, expected)
    np.testing.assert_array_equal(seen[1], expected)


def test_sample_legal_actions_only_picks_legal_ids() -> None:
    venv = VectorEnv(64, 4, copy=False)
    _, masks, _ = venv.reset(seed=2)
    rng = np.array([9], dtype=np.uint64)
    for step in range(300):
        actions = sample_legal_actions(masks, rng)
        assert masks[np.arange(64), actions].all()
        _, masks, *_ = venv.step(actions)
        if step % 25 == 0:
            assert not [p for row in venv.states for p in st.check_invariants(row)]
