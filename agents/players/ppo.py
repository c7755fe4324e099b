"""A trained MaskablePPO policy as an :class:`~agents.base.Agent` (spec ``"ppo:PATH"`` or ``"ppo:NAME"``).

Why its own inference: one forward pass of the actor gives logits for the whole batch, illegal
actions are masked out, and the action is the argmax (``deterministic=True``) or a Gumbel-max
sample from the agent's own seeded generator, so stochastic play is reproducible. Loading and
the games a checkpoint records: :mod:`agents.nets.checkpoint`; the network: :mod:`agents.nets.policy_net`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch as th

from agents.base import Agent, check_mask
from agents.nets.checkpoint import describe_game, game_meta, game_mismatch, game_of, load_model

# Checkpoints saved before agents.nets.policy_net existed name these two classes by this module's path.
from agents.nets.policy_net import CardSlotPolicy, ScaledObs
from agents.nets.shipped import model_label
from splendor_env.observation import (
    O_MODULES,
    O_SEATS,
    OBS_DIM,
    OBS_DIM_ALL,
    S_PRESENT,
    SEAT_DIM,
)
from splendor_env.state import MAX_PLAYERS, MODULE_NAMES


class PPOAgent(Agent):
    """Plays a MaskablePPO policy; ``model=`` wraps an in-memory model instead of loading ``path``.

    ``game`` (from :func:`game_of`) says which games the policy was trained for;
    :meth:`check_game` refuses any other game naming what differs, and every
    move checks the observation's seats and modules against it, so a policy
    is never silently played in a game it has not learnt.
    """

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
        self.label = "in-memory model" if path is None else model_label(path)
        self.game = game_of(model, self.label)
        self.plays_modules = bool(self.game["modules"])  # read by agents.base.check_game
        self.model = model
        self.policy = model.policy
        self.deterministic = deterministic

    def check_game(self, num_players: int, modules: list[str] | tuple[str, ...] = ()) -> None:
        """Refuse a game the policy was not trained for, naming what differs."""
        problem = game_mismatch(self.game, int(num_players), tuple(modules))
        if problem:
            raise ValueError(
                f"PPO model {self.label!r} was trained for {describe_game(self.game['players'], self.game['modules'])}; "
                f"it cannot play {describe_game(int(num_players), game_meta(num_players, modules)['modules'])} "
                f"({problem})"
            )

    def _check_observations(self, obs: np.ndarray) -> None:
        """The same check from the observations themselves (seat ``present`` flags, module flags)."""
        if obs.ndim != 2 or obs.shape[1] != self.game["obs_dim"]:
            got = obs.shape[-1] if obs.ndim else None
            mods = "a module game" if got == OBS_DIM_ALL else "the base game" if got == OBS_DIM else "no game"
            raise ValueError(
                f"PPO model {self.label!r} was trained for {describe_game(self.game['players'], self.game['modules'])}"
                f" (observations of size {self.game['obs_dim']}); got observations of size {got} ({mods})"
            )
        seats = obs[:, [O_SEATS + k * SEAT_DIM + S_PRESENT for k in range(MAX_PLAYERS)]].sum(axis=1)
        counts = np.unique(seats.astype(np.int64))
        if obs.shape[1] == OBS_DIM_ALL:
            flags = np.unique(obs[:, O_MODULES : O_MODULES + len(MODULE_NAMES)] > 0, axis=0)
            games = [[m for m, on in zip(MODULE_NAMES, row, strict=True) if on] for row in flags]
        else:
            games = [[]]
        for n in counts:
            for mods in games:
                self.check_game(int(n), mods)

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Unmasked actor logits ``[B, num_actions]`` for raw observations ``[B, obs_dim]``."""
        policy = self.policy
        with th.no_grad():
            obs = th.as_tensor(np.asarray(observations, dtype=np.float32))
            features = policy.pi_features_extractor(obs)
            return policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        observations = np.asarray(observations, dtype=np.float32)
        self._check_observations(observations)
        return self._choose(observations, action_masks)

    def _choose(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks).astype(bool)
        if not masks.any(axis=1).all():
            raise ValueError("an action_mask row has no legal action")
        logits = self.logits(observations)
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape).astype(logits.dtype)
        return np.where(masks, logits, -np.inf).argmax(axis=1).astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        observations = np.asarray(observation, dtype=np.float32)[None]
        self._check_observations(observations)
        check_mask(action_mask, self.game["num_actions"])
        return int(self._choose(observations, np.asarray(action_mask)[None])[0])

    def __repr__(self) -> str:
        return f"PPOAgent({self.path!r}, deterministic={self.deterministic})"


__all__ = ["CardSlotPolicy", "PPOAgent", "ScaledObs"]
