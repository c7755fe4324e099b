"""A trained MaskablePPO policy as an :class:`~agents.base.Agent` (spec ``"ppo:PATH"``).

Inference skips SB3's ``predict`` plumbing: one forward pass of the actor
gives logits for the whole batch, illegal actions are masked out, and the
action is the argmax (``deterministic=True``) or a Gumbel-max sample drawn
from the agent's own seeded generator, so stochastic play is reproducible.

:class:`ScaledObs` lives here (not in ``training``) because a saved model
refers to it by import path: loading a checkpoint must only need ``agents``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch as th
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from splendor_env.observation import CARD_DIM, OBS_DIM, OBS_LAYOUT

from .base import Agent, check_mask

# Typical maximum of each observation field: dividing by it puts every feature
# roughly in [0, 1], which keeps the first layer's pre-activations sane.
_FIELD_SCALE = {
    "bank": 7.0,
    "tokens": 7.0,
    "bonuses": 7.0,
    "prestige": 20.0,
    "cards_purchased": 20.0,
    "nobles": 3.0,
    "reserved_count": 3.0,
    "deck_sizes": 40.0,
}


def _card_scale() -> np.ndarray:
    scale = np.ones(CARD_DIM, dtype=np.float32)
    scale[10] = 5.0  # points
    scale[11:16] = 7.0  # cost per colour
    return scale


def obs_scale() -> np.ndarray:
    """Per-feature divisor for the raw-count observation (``float32[OBS_DIM]``)."""
    scale = np.ones(OBS_DIM, dtype=np.float32)
    for name, off, size in OBS_LAYOUT:
        field = name.split(".")[-1]
        if field in _FIELD_SCALE:
            scale[off : off + size] = _FIELD_SCALE[field]
        elif field in ("reserved_cards", "market_cards"):
            scale[off : off + size] = np.tile(_card_scale(), size // CARD_DIM)
        elif field == "nobles_on_offer":
            block = np.array([1.0, 4.0, 4.0, 4.0, 4.0, 4.0], dtype=np.float32)
            scale[off : off + size] = np.tile(block, size // 6)
    return scale


class ScaledObs(BaseFeaturesExtractor):
    """Features = observation / typical maximum: a fixed, data-independent normalisation."""

    def __init__(self, observation_space: gym.spaces.Box) -> None:
        super().__init__(observation_space, features_dim=int(np.prod(observation_space.shape)))
        self.register_buffer("inv_scale", th.as_tensor(1.0 / obs_scale()))

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return observations * self.inv_scale


def load_model(path: str | Path) -> Any:
    """Load a MaskablePPO ``.zip`` on the CPU, with a clear error for a missing file."""
    from sb3_contrib import MaskablePPO

    p = Path(path)
    if not p.exists() and p.suffix != ".zip" and p.with_suffix(p.suffix + ".zip").exists():
        p = p.with_suffix(p.suffix + ".zip")
    if not p.is_file():
        raise FileNotFoundError(f"PPO model file not found: {str(path)!r} (expected a MaskablePPO .zip)")
    return MaskablePPO.load(p, device="cpu")


class PPOAgent(Agent):
    """Plays a MaskablePPO policy; ``model=`` wraps an in-memory model instead of loading ``path``."""

    name = "ppo"

    def __init__(
        self,
        path: str | Path | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        model: Any = None,
    ) -> None:
        super().__init__(seed)
        if model is None:
            if path is None:
                raise ValueError("PPOAgent needs a model path (or model=)")
            model = load_model(path)
        self.path = None if path is None else str(path)
        self.model = model
        self.policy = model.policy
        self.deterministic = deterministic

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Unmasked actor logits ``[B, NUM_ACTIONS]`` for raw observations ``[B, OBS_DIM]``."""
        policy = self.policy
        with th.no_grad():
            obs = th.as_tensor(np.asarray(observations, dtype=np.float32))
            features = policy.pi_features_extractor(obs)
            return policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks).astype(bool)
        if not masks.any(axis=1).all():
            raise ValueError("an action_mask row has no legal action")
        logits = self.logits(observations)
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape).astype(logits.dtype)
        return np.where(masks, logits, -np.inf).argmax(axis=1).astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        check_mask(action_mask)
        return int(self.act_batch(observation[None], np.asarray(action_mask)[None])[0])

    def __repr__(self) -> str:
        return f"PPOAgent({self.path!r}, deterministic={self.deterministic})"
