"""The Gymnasium vector view (``gymnasium.make_vec``): N single-agent views in one batched engine."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

import splendor_env
from agents.base import Agent
from agents.gym_vector import SplendorVectorEnv
from agents.gym_view import SplendorGymEnv
from splendor_env import IllegalActionError
from splendor_env.actions import NUM_ACTIONS, NUM_ACTIONS_ALL
from splendor_env.observation import OBS_DIM, OBS_DIM_ALL

ENV_ID = splendor_env.GYMNASIUM_ID


class FirstLegal(Agent):
    """A deterministic opponent (the lowest legal id) whose ``act`` and ``act_batch`` agree, so N
    single-agent views and one vector view play the same games."""

    name = "first_legal"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        return int(np.flatnonzero(action_mask)[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.asarray(action_masks).argmax(axis=1).astype(np.int64)


def test_make_vec_is_a_gymnasium_vector_env_with_its_conventions() -> None:
    env = gymnasium.make_vec(ENV_ID, num_envs=3, opponents="random", num_players=3, modules=("orient",))
    assert isinstance(env, gymnasium.vector.VectorEnv) and isinstance(env.unwrapped, SplendorVectorEnv)
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert env.num_envs == 3
    assert env.single_action_space == spaces.Discrete(NUM_ACTIONS_ALL)
    assert env.single_observation_space.shape == (OBS_DIM_ALL,)
    assert env.observation_space.shape == (3, OBS_DIM_ALL) and isinstance(
        env.action_space, spaces.MultiDiscrete
    )
    obs, info = env.reset(seed=4)
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(info["action_mask"].astype(bool), env.unwrapped.action_masks())
    sync = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", opponents="random")
    assert sync.single_observation_space.shape == (OBS_DIM,) and sync.single_action_space.n == NUM_ACTIONS


@pytest.mark.parametrize(
    "num_players, learner_seat", [(2, 0), (2, 1), pytest.param(3, 2, marks=pytest.mark.slow)]
)
def test_equals_n_single_agent_views_across_autoresets(num_players: int, learner_seat: int) -> None:
    """Game b of reset(seed=s) is the single view's reset(seed=s + b); after an auto-reset, the single
    view reset with the reported game seed: observations, masks, rewards and flags agree at every step."""
    n, seed = 4, 100
    common = {"num_players": num_players, "learner_seat": learner_seat, "max_turns": 40}
    venv = SplendorVectorEnv(n, opponents=FirstLegal(), **common)
    singles = [SplendorGymEnv(opponents=FirstLegal(), **common) for _ in range(n)]
    obs, info = venv.reset(seed=seed)
    for b, single in enumerate(singles):
        o, i = single.reset(seed=seed + b)
        np.testing.assert_array_equal(obs[b], o)
        np.testing.assert_array_equal(info["action_mask"][b], i["action_mask"])
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(120):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, rewards, term, trunc, info = venv.step(actions)
        for b, single in enumerate(singles):
            o, r, t, tr, i = single.step(int(actions[b]))
            assert (rewards[b], term[b], trunc[b]) == (r, t, tr)
            if t or tr:
                episodes += 1
                np.testing.assert_array_equal(info["final_obs"][b], o)
                assert info["final_info"]["winners"][b] == i["winners"]
                assert info["final_info"]["is_success"][b] == i["is_success"]
                assert info["final_info"]["game_seed"][b] != info["game_seed"][b]
                o, i = single.reset(seed=int(info["game_seed"][b]))  # the next game's seed
            np.testing.assert_array_equal(obs[b], o)
            np.testing.assert_array_equal(info["action_mask"][b], i["action_mask"])
        assert (venv.batch.current()[2] == venv.learner_seat).all()  # the learner is on move in every game
    assert episodes >= 4, "the test should cross auto-resets"


def test_seeded_runs_repeat_and_random_seats_and_pools_vary() -> None:
    def run(seed: int) -> list[np.ndarray]:
        env = SplendorVectorEnv(8, opponents={"random": 1.0, "greedy": 1.0}, num_players=3)
        obs, info = env.reset(seed=seed)
        out = [obs, info["learner_seat"]]
        for _ in range(30):
            obs, rewards, *_ = env.step(env.sample_actions())
            out += [obs, rewards]
        return out

    a, b, c = run(5), run(5), run(6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))
    assert len(set(a[1].tolist())) > 1, "learner seats are drawn per episode"


def test_game_ending_rewards_are_the_learners() -> None:
    env = SplendorVectorEnv(16, opponents="greedy", learner_seat=None)
    env.reset(seed=0)
    finished = []
    for _ in range(400):
        _, rewards, term, trunc, info = env.step(env.sample_actions())
        for b in np.flatnonzero(term):
            finished.append((rewards[b], info["final_info"]["is_success"][b]))
        assert not rewards[~(term | trunc)].any()  # terminal rewards only
    assert len(finished) >= 16
    assert all(r == (1.0 if won else r) and r in (-1.0, 0.0, 1.0) for r, won in finished)
    assert any(r == -1.0 for r, _ in finished), "random play loses to greedy: the -1 reaches the learner"


def test_illegal_action_raises_and_changes_nothing() -> None:
    env = SplendorVectorEnv(3, opponents="random", learner_seat=0)
    _, info = env.reset(seed=1)
    before = env.batch.states.copy()
    actions = info["action_mask"].argmax(axis=1)
    actions[2] = int(np.flatnonzero(info["action_mask"][2] == 0)[0])
    with pytest.raises(IllegalActionError, match="game 2: illegal action"):
        env.step(actions)
    np.testing.assert_array_equal(env.batch.states, before)
    with pytest.raises(ValueError, match="shape"):
        env.step(actions[:2])
    with pytest.raises(RuntimeError, match="before reset"):
        SplendorVectorEnv(2).step(np.zeros(2, dtype=np.int64))


@pytest.mark.slow
def test_search_opponents_get_determinised_states() -> None:
    env = gymnasium.make_vec(ENV_ID, num_envs=2, opponents="mcts:sims=4", learner_seat=0)
    _, info = env.reset(seed=0)
    for _ in range(3):
        _, _, _, _, info = env.step(info["action_mask"].argmax(axis=1))


def test_speed_vec_prints_both_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from training.speed import vec as speed_vec

    results = speed_vec.main(["--num-envs", "4", "--sync-envs", "2", "--seconds", "0.05"])
    assert results["batched"] > 0 and results["sync"] > 0
    assert "make_vec" in capsys.readouterr().out


def test_a_turn_cap_below_the_player_count_is_refused() -> None:
    with pytest.raises(ValueError, match="max_turns must be at least num_players"):
        SplendorVectorEnv(2, num_players=3, max_turns=2)


def test_only_the_current_gymnasium_id_is_registered() -> None:
    """No release registered a Gymnasium id before ``Splendor-v1`` (the views came in 0.3.0, unreleased)."""
    assert "splendor_env/Splendor-v1" in gymnasium.registry
    assert "splendor_env/Splendor-v0" not in gymnasium.registry
