"""The env adapter RLlib needs: the AEC env as a ``MultiAgentEnv`` whose observations the masking module reads.

Why: RLlib's ``PettingZooEnv`` wrapper plays a turn-based AEC env (one observation per
step, for the seat on move; everyone's at the end), but its action-masking module
(``ActionMaskingTorchRLModule``) reads ``{"observations", "action_mask"}`` with a float
mask, where this env gives ``{"observation", "action_mask"}`` with an int8 one. The
translation is :func:`agents.players.rllib.rllib_inputs`, the same one the trained agent uses.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

import splendor_env
from agents.players.rllib import observation_scale, rllib_inputs
from splendor_env.env import OBS_HIGH


def env_config(players: int, modules: list[str] | tuple[str, ...] = (), **options: Any) -> dict[str, Any]:
    """The ``env_config`` mapping :class:`SplendorMultiAgentEnv` is built from (what RLlib ships to runners)."""
    return {"players": int(players), "modules": list(modules), **options}


class SplendorMultiAgentEnv(PettingZooEnv):
    """``splendor_env.env(...)`` for RLlib: agents ``player_0..``, observations in the masking module's keys.

    ``config``: ``players``, ``modules`` and any option of :class:`splendor_env.EnvConfig`
    (``reward_mode``, ``shaping_scale``, ``max_turns``); unknown options are refused by the env.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        options = dict(config or {})
        players = int(options.pop("players", 2))
        modules = tuple(options.pop("modules", ()))
        super().__init__(splendor_env.env(num_players=players, modules=modules, **options))
        space = self.env.observation_space(self.env.possible_agents[0])
        dim, n_actions = space["observation"].shape[0], space["action_mask"].shape[0]
        self._scale = observation_scale(dim)
        adapted = gym.spaces.Dict(
            {
                "observations": gym.spaces.Box(0.0, OBS_HIGH, (dim,), np.float32),
                "action_mask": gym.spaces.Box(0.0, 1.0, (n_actions,), np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self._agent_ids, adapted)
        self.observation_space = gym.spaces.Dict(self.observation_spaces)

    def _adapt(self, obs: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, np.ndarray]]:
        return {a: rllib_inputs(o["observation"], o["action_mask"], self._scale) for a, o in obs.items()}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, info = super().reset(seed=seed, options=options)
        return self._adapt(obs), info

    def step(self, action: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terminated, truncated, info = super().step(action)
        return self._adapt(obs), rewards, terminated, truncated, info
