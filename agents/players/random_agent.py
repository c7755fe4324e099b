"""Uniform random agent: every legal action equally likely.

The baseline every other agent must beat; ``act_batch`` is vectorised (one
uniform draw per action, masked argmax) for the batched engine.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent, check_mask


class RandomAgent(Agent):
    """Uniform over the legal actions, reproducible given its seed."""

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        legal = check_mask(action_mask)
        return int(legal[self.rng.integers(legal.size)])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks)
        if masks.ndim != 2:
            raise ValueError(f"action_masks must be 2-D [B, NUM_ACTIONS], got shape {masks.shape}")
        legal = masks != 0
        if not legal.any(axis=1).all():
            raise ValueError("every row of action_masks needs at least one legal action")
        draws = np.where(legal, self.rng.random(masks.shape), -1.0)
        return draws.argmax(axis=1).astype(np.int64)
