"""A policy trained by RLlib (``python -m training.rllib_ppo``) played as an agent: ``rllib:PATH``.

Why here: every command plays agents from spec strings, so the RLlib-trained module must be
one too, and its input must be built exactly as during training. :func:`rllib_inputs` is that
one translation (RLlib's action-masking module reads the keys ``observations`` and
``action_mask``, a float mask, where the env gives ``observation`` and an int8 mask); the
training env adapter (:mod:`training.rllib.env`) calls it too. Ray and torch are imported only
when an agent is built, so ``import agents`` never pulls in Ray.

``PATH`` is a run's checkpoint folder (``runs/rllib_2p/checkpoint``, as written by
:func:`training.rllib.loop.train`) or the shared module's own folder inside it. The run's
``game.json`` (players and modules) sits next to ``checkpoint/``; the agent refuses other games.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent, check_mask
from agents.nets.checkpoint import describe_game, game_meta, game_mismatch
from splendor_env.actions import NUM_ACTIONS, NUM_ACTIONS_ALL
from splendor_env.observation import OBS_DIM, OBS_DIM_ALL

#: The RLModule id of the one policy every seat shares.
SHARED_POLICY = "shared_policy"
#: Where the shared module lies inside an RLlib algorithm checkpoint.
MODULE_SUBDIR = Path("learner_group") / "learner" / "rl_module" / SHARED_POLICY
#: The file next to a run's ``checkpoint/`` folder that says which games it was trained for.
GAME_FILE = "game.json"


def observation_scale(dim: int) -> np.ndarray:
    """Divisors putting each observation feature roughly in [0, 1] (the same as the PPO policies')."""
    from agents.nets.policy_net import obs_scale  # torch and stable-baselines3: the train extra

    return obs_scale(dim)


def rllib_inputs(
    observation: np.ndarray, action_mask: np.ndarray, scale: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """The env's observation and mask as RLlib's masking module reads them (one row or a batch).

    ``{"observations": float32 scaled features, "action_mask": float32 0/1}``; ``scale`` is
    :func:`observation_scale` of the observation size (computed when not given).
    """
    obs = np.asarray(observation, dtype=np.float32)
    if scale is None:
        scale = observation_scale(obs.shape[-1])
    return {
        "observations": obs / scale,
        "action_mask": (np.asarray(action_mask) != 0).astype(np.float32),
    }


def module_dir(path: str | Path) -> Path:
    """The shared module's folder for a run's checkpoint folder (or that folder itself); named when absent."""
    p = Path(path)
    for candidate in (p / MODULE_SUBDIR, p / "checkpoint" / MODULE_SUBDIR, p):
        if candidate.is_dir() and any(candidate.glob("module_state*")):
            return candidate
    raise FileNotFoundError(
        f"no RLlib checkpoint at {str(path)!r}: expected a run's checkpoint folder "
        f"(runs/NAME/checkpoint, written by python -m training.rllib_ppo) holding {MODULE_SUBDIR}"
    )


def read_game(module: Path) -> dict[str, Any] | None:
    """The run's ``game.json`` above the module folder (players, modules), or ``None`` if there is none."""
    for folder in module.parents:
        f = folder / GAME_FILE
        if f.is_file():
            meta = json.loads(f.read_text(encoding="utf-8"))
            return game_meta(meta["players"], meta["modules"])
    return None


class RLlibAgent(Agent):
    """The shared policy of an RLlib run; deterministic (the most likely legal move) by default."""

    name = "rllib"

    def __init__(self, path: str | Path, deterministic: bool = True, seed: int | None = None) -> None:
        super().__init__(seed)
        try:
            import torch
            from ray.rllib.core.rl_module.rl_module import RLModule
        except ImportError as exc:
            raise ImportError(
                f"agent rllib:{path} needs Ray RLlib and torch: pip install -e '.[train,rllib]' "
                f"(it pins gymnasium 1.2.2; use a separate virtual environment): {exc}"
            ) from exc
        self.path = str(path)
        folder = module_dir(path)
        self._torch = torch
        self.module = RLModule.from_checkpoint(str(folder.resolve()))  # pyarrow refuses relative paths
        self.module.eval()
        space = self.module.observation_space["observations"]
        obs_dim = int(np.prod(space.shape))
        n_actions = int(self.module.action_space.n)
        if (obs_dim, n_actions) not in ((OBS_DIM, NUM_ACTIONS), (OBS_DIM_ALL, NUM_ACTIONS_ALL)):
            raise ValueError(f"RLlib module {self.path!r}: observation size {obs_dim} is no Splendor game's")
        meta = read_game(folder)
        if meta is None and obs_dim != OBS_DIM:
            raise ValueError(
                f"RLlib module {self.path!r} plays module games but no {GAME_FILE} says which "
                "(train it with python -m training.rllib_ppo)"
            )
        self.game = {**(meta or game_meta(2, [])), "obs_dim": obs_dim, "num_actions": n_actions}
        self.plays_modules = bool(self.game["modules"])  # read by agents.base.check_game
        self.deterministic = deterministic
        self.scale = observation_scale(obs_dim)

    def check_game(self, num_players: int, modules: list[str] | tuple[str, ...] = ()) -> None:
        """Refuse a game the policy was not trained for, naming what differs."""
        problem = game_mismatch(self.game, int(num_players), tuple(modules))
        if problem:
            raise ValueError(
                f"RLlib module {self.path!r} was trained for "
                f"{describe_game(self.game['players'], self.game['modules'])}; it cannot play this game ({problem})"
            )

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.game["obs_dim"]:
            raise ValueError(
                f"RLlib module {self.path!r} reads observations of size {self.game['obs_dim']}, got {obs.shape}"
            )
        masks = np.asarray(action_masks).astype(bool)
        if not masks.any(axis=1).all():
            raise ValueError("an action_mask row has no legal action")
        torch = self._torch
        inputs = rllib_inputs(obs, masks, self.scale)
        with torch.no_grad():
            out = self.module.forward_inference({"obs": {k: torch.as_tensor(v) for k, v in inputs.items()}})
        logits = out["action_dist_inputs"].numpy().astype(np.float64)
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape)
        return np.where(masks, logits, -np.inf).argmax(axis=1).astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        check_mask(action_mask, self.game["num_actions"])
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def __repr__(self) -> str:
        return f"RLlibAgent({self.path!r}, deterministic={self.deterministic})"


__all__ = ["GAME_FILE", "MODULE_SUBDIR", "SHARED_POLICY", "RLlibAgent", "module_dir", "rllib_inputs"]
