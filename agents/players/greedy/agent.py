"""The greedy agent: :func:`policy_action` (either kernel, by the mask's length) behind the
:class:`~agents.base.Agent` interface; it is also :mod:`agents.players.mcts`'s rollout policy."""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.base import Agent, check_mask
from agents.players.greedy.base import heuristic_action
from agents.players.greedy.modules import module_action
from splendor_env.actions import (
    NUM_ACTIONS,
    NUM_ACTIONS_ALL,
)
from splendor_env.observation import (
    OBS_DIM,
    OBS_DIM_ALL,
)


@njit(cache=True)
def policy_action(obs: np.ndarray, mask: np.ndarray, rng: np.ndarray, noise: float, eps: float) -> int:
    """The greedy heuristic for any game: the base kernel for a 72-id mask, the module kernel otherwise."""
    if mask.shape[0] == NUM_ACTIONS:
        return heuristic_action(obs, mask, rng, noise, eps)
    return module_action(obs, mask, rng, noise, eps)


@njit(cache=True)
def _policy_batch(obs: np.ndarray, masks: np.ndarray, rng: np.ndarray, noise: float) -> np.ndarray:
    """:func:`policy_action` on every row (one rng stream, rows in order)."""
    out = np.empty(obs.shape[0], dtype=np.int64)
    for b in range(obs.shape[0]):
        out[b] = policy_action(obs[b], masks[b], rng, noise, 0.0)
    return out


class GreedyAgent(Agent):
    """Deterministic (given the seed) one-ply heuristic over the observation (docs/agents.md, "The greedy heuristic").

    Plays base games (72-id mask, 497-number observation) and module games
    (``NUM_ACTIONS_ALL`` ids, ``OBS_DIM_ALL`` numbers) alike.
    """

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)

    def _stream(self) -> np.ndarray:
        return np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        mask = np.asarray(action_mask, dtype=np.int8)
        size = NUM_ACTIONS_ALL if mask.ndim == 1 and mask.shape[0] == NUM_ACTIONS_ALL else NUM_ACTIONS
        check_mask(action_mask, size)
        obs = np.asarray(observation, dtype=np.float32)
        dim = OBS_DIM if size == NUM_ACTIONS else OBS_DIM_ALL
        if obs.shape != (dim,):
            raise ValueError(f"observation must have shape ({dim},) with a {size}-id mask, got {obs.shape}")
        return int(policy_action(obs, mask, self._stream(), 1e-6, 0.0))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=np.int8)
        if masks.ndim != 2 or masks.shape[1] not in (NUM_ACTIONS, NUM_ACTIONS_ALL):
            raise ValueError(
                f"action_masks must have shape (B, {NUM_ACTIONS}) or (B, {NUM_ACTIONS_ALL}), got {masks.shape}"
            )
        if not masks.any(axis=1).all():
            raise ValueError("every row of action_masks needs at least one legal action")
        obs = np.ascontiguousarray(observations, dtype=np.float32)
        dim = OBS_DIM if masks.shape[1] == NUM_ACTIONS else OBS_DIM_ALL
        if obs.shape != (masks.shape[0], dim):
            raise ValueError(
                f"observations must have shape ({masks.shape[0]}, {dim}) with masks of shape {masks.shape}, "
                f"got {obs.shape}"
            )
        return _policy_batch(obs, np.ascontiguousarray(masks), self._stream(), 1e-6)


__all__ = ["GreedyAgent", "policy_action"]
