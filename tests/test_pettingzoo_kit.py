"""PettingZoo's own test kit for every game configuration, and the AEC conventions it relies on.

``api_test``, ``seed_test``, the ``state_space`` / ``state()`` checks of ``state_test`` (the AEC
half: the env has no parallel form) and truncation at ``max_turns`` (Splendor's turn cap stands in
for ``max_cycles_test``, which needs a ``parallel_env(max_cycles=...)`` constructor), for 2-4
players in the base game, each Cities of Splendor module alone and all four. All 18 configurations
take under 2 s together (the kit's state test samples blind actions, which ``env()`` answers by
ending the game, so it is short), so none is marked slow.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import splendor_env
from splendor_env import SnapshotError, raw_env
from splendor_env.observation import obs_dim
from splendor_env.state import MODULE_NAMES, parse_modules

#: PettingZoo's state checks: the module (``pettingzoo.test.state_test`` the name is its function), whose
#: AEC checks are named ``test_*`` and so are reached through it rather than imported into this file.
pz_state = importlib.import_module("pettingzoo.test.state_test")
GAMES = [(), *((m,) for m in MODULE_NAMES), tuple(MODULE_NAMES)]
CONFIGS = [pytest.param(n, mods, id=f"{n}p-{'+'.join(mods) or 'base'}") for n in (2, 3, 4) for mods in GAMES]


@pytest.mark.parametrize("num_players, modules", CONFIGS)
def test_pettingzoo_api_seed_and_state_tests(num_players: int, modules: tuple[str, ...]) -> None:
    def make() -> raw_env:
        return splendor_env.env(num_players=num_players, modules=modules)

    with warnings.catch_warnings():
        # Dict observations with an action mask are PettingZoo's own convention for board games;
        # the state test samples blind (illegal) actions, which env() answers by ending the game.
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        warnings.filterwarnings("ignore", message="Observation space for each agent probably")
        warnings.filterwarnings("ignore", message=r"\[WARNING\]: Illegal move")
        api_test(make(), num_cycles=100)
        seed_test(make, num_cycles=100)
        env = make()
        pz_state.test_state_space(env)
        pz_state.test_state(env, num_cycles=50)


@pytest.mark.parametrize("num_players, modules", CONFIGS)
def test_turn_cap_truncates_every_agent_with_zero_reward(num_players: int, modules: tuple[str, ...]) -> None:
    env = splendor_env.env(num_players=num_players, modules=modules, max_turns=3 * num_players)
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    ends = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            ends[agent] = (reward, term, trunc)
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert ends == dict.fromkeys(env.possible_agents, (0.0, False, True))


@pytest.mark.parametrize("num_players, modules", [(2, ()), (3, ("orient", "cities"))])
def test_state_is_every_seats_observation_in_a_fixed_space(
    num_players: int, modules: tuple[str, ...]
) -> None:
    env = raw_env(num_players=num_players, modules=modules)
    dim = obs_dim(parse_modules(modules))
    assert env.state_space.shape == (num_players * dim,) and env.state_space.dtype == np.float32
    env.reset(seed=5)
    for _ in range(7):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
    state = env.state()
    assert env.state_space.contains(state)
    for p, agent in enumerate(env.possible_agents):
        np.testing.assert_array_equal(state[p * dim : (p + 1) * dim], env.observe(agent)["observation"])
    engine = env.engine_state()
    assert engine.dtype == np.int32 and engine.shape != state.shape  # the engine array moved, unchanged
    np.testing.assert_array_equal(engine, env.game_state)
    with pytest.raises(RuntimeError, match="before reset"):
        raw_env().state()
    with pytest.raises(RuntimeError, match="before reset"):
        raw_env().engine_state()


def test_reset_takes_a_snapshot_option_validated_like_restore() -> None:
    env = raw_env(num_players=3, modules=("trading_posts",))
    env.reset(seed=9)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    snap = env.snapshot()
    other = raw_env(num_players=3, modules=("trading_posts",))
    other.reset(seed=1, options={"snapshot": snap})
    np.testing.assert_array_equal(other.engine_state(), env.engine_state())
    assert other.agent_selection == env.agent_selection
    np.testing.assert_array_equal(other.state(), env.state())
    other.reset(options={"snapshot": env.engine_state()})  # an engine array works too
    np.testing.assert_array_equal(other.engine_state(), env.engine_state())
    before = other.engine_state()
    bad = dict(snap, num_players=2)
    with pytest.raises(SnapshotError):
        other.reset(options={"snapshot": bad})
    np.testing.assert_array_equal(other.engine_state(), before)
    other.reset(seed=9, options={"unrelated": 1})  # PettingZoo passes options of its own: ignored
    fresh = raw_env(num_players=3, modules=("trading_posts",))
    fresh.reset(seed=9)
    np.testing.assert_array_equal(other.engine_state(), fresh.engine_state())
