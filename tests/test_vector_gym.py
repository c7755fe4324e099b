"""SplendorBatch's Gymnasium vector attributes and its public random legal sampler."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from splendor_env.actions import NUM_ACTIONS, NUM_ACTIONS_ALL
from splendor_env.observation import OBS_DIM, OBS_DIM_ALL
from splendor_env.vector import SplendorBatch


@pytest.mark.parametrize(
    "modules, n_actions, obs_dim", [((), NUM_ACTIONS, OBS_DIM), (("orient",), NUM_ACTIONS_ALL, OBS_DIM_ALL)]
)
def test_single_and_batched_spaces_follow_gymnasium(modules: tuple, n_actions: int, obs_dim: int) -> None:
    venv = SplendorBatch(5, num_players=3, modules=modules)
    assert venv.num_envs == 5
    assert venv.single_action_space == spaces.Discrete(n_actions)
    assert venv.single_observation_space.shape == (obs_dim,)
    assert venv.observation_space.shape == (5, obs_dim)
    assert isinstance(venv.action_space, spaces.MultiDiscrete)
    assert venv.action_space.shape == (5,)
    obs, _, _ = venv.reset(seed=3)
    assert venv.observation_space.contains(obs)
    assert all(venv.single_observation_space.contains(o) for o in obs)


def test_sample_actions_are_legal_reproducible_and_cover_the_legal_set() -> None:
    venv = SplendorBatch(64, num_players=2)
    _, mask, _ = venv.reset(seed=0)
    first = venv.sample_actions(seed=1)
    assert mask[np.arange(64), first].all()
    np.testing.assert_array_equal(venv.sample_actions(seed=1), first)
    draws = np.stack([venv.sample_actions() for _ in range(200)])
    assert mask[np.arange(64), draws].all()
    assert len(np.unique(draws[:, 0])) == mask[0].sum()  # every legal move of game 0 comes up
    for _ in range(300):  # random play through auto-resets stays legal
        venv.step(venv.sample_actions())


def test_sample_actions_before_reset_is_refused() -> None:
    with pytest.raises(RuntimeError, match="before reset"):
        SplendorBatch(2).sample_actions()
