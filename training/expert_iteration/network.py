"""The network expert iteration trains: built fresh or loaded, marked with its games, sent to workers as bytes.

Why one module: the network is a MaskablePPO ``.zip`` with the card-slot policy from
start to end, so ``ppo:PATH`` plays it alone and ``az:PATH`` with search; what a run
starts from (:func:`initial_model`), where it trains (:func:`pick_device`) and how
the self-play and match workers get it (:func:`agents.nets.checkpoint.model_bytes`, rebuilt once per
process by :func:`cached_agent`) are decided here and nowhere else. Networks
travel as the bytes of their ``.zip``, so a Ray worker on another machine needs
no shared file system.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import torch

from agents.nets.checkpoint import GAME_ATTR, describe_game, game_meta, load_model, model_from_bytes
from agents.nets.policy_net import CardSlotPolicy, ScaledObs
from splendor_env.actions import num_actions as game_num_actions
from splendor_env.observation import obs_dim as game_obs_dim
from training.common.agent_cache import WORKER_AGENTS
from training.common.cli import CliError
from training.common.config import ConfigError
from training.common.model import policy_kwargs
from training.expert_iteration.config import FRESH, SearchTrainConfig
from training.expert_iteration.replay import AUX_FIELDS


def game_sizes(cfg: SearchTrainConfig) -> tuple[int, int]:
    """Observation floats and action ids of the config's game (module games share one table)."""
    from splendor_env.state import parse_modules

    bits = parse_modules(cfg.modules)
    return game_obs_dim(bits), game_num_actions(bits)


def fresh_model(cfg: SearchTrainConfig) -> Any:
    """A new card-slot MaskablePPO network for the config's game (what ``az`` and ``ppo`` load)."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    obs_dim, num_actions = game_sizes(cfg)
    kwargs = policy_kwargs(cfg.network.net_arch, cfg.network.activation, ScaledObs, card_features=True)
    if cfg.network.critic_blocks > 0:  # only then: a default network's saved kwargs stay as they were
        kwargs.update(critic_blocks=cfg.network.critic_blocks, critic_width=cfg.network.critic_width)
    if cfg.train.aux_coef > 0:
        kwargs["aux_outputs"] = len(AUX_FIELDS)

    class SpacesEnv(gym.Env):
        """Spaces only, never stepped: MaskablePPO is built on an env."""

        observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        action_space = gym.spaces.Discrete(num_actions)

    model = MaskablePPO(
        CardSlotPolicy,
        DummyVecEnv([SpacesEnv]),
        n_steps=2,
        batch_size=2,
        policy_kwargs=kwargs,
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )
    model.env = None  # never stepped; not saved
    return mark_game(model, cfg)


def mark_game(model: Any, cfg: SearchTrainConfig) -> Any:
    """Record the run's games in the model (``agents.nets.checkpoint.GAME_ATTR``): ``ppo`` and ``az`` check it."""
    setattr(model, GAME_ATTR, game_meta(cfg.player_counts, cfg.modules))
    return model


def with_aux_head(model: Any, cfg: SearchTrainConfig) -> Any:
    """``model`` with an auxiliary-target head (``train.aux_coef`` > 0) if it has none, recorded in its
    ``policy_kwargs`` so that its saved ``.zip`` loads with it; any other model unchanged."""
    if cfg.train.aux_coef <= 0 or hasattr(model.policy, "aux_net"):
        return model
    policy = model.policy
    policy.aux_outputs = len(AUX_FIELDS)
    policy.aux_net = torch.nn.Linear(policy.mlp_extractor.latent_dim_vf, len(AUX_FIELDS))
    model.policy_kwargs = {**model.policy_kwargs, "aux_outputs": len(AUX_FIELDS)}
    # SB3 saves the policy's own optimizer with the model: it must know the head to load again
    lr = policy.optimizer.param_groups[0]["lr"]
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=lr, **policy.optimizer_kwargs)
    return model


def initial_model(cfg: SearchTrainConfig) -> Any:
    """``init``: a fresh network, or a shipped model / ``.zip`` (checked to be a card-slot network)."""
    if cfg.init == FRESH:
        return fresh_model(cfg)
    from agents.nets.numba_net import export_network

    model = load_model(cfg.init)
    try:
        export_network(model.policy)
    except ValueError as e:
        raise ConfigError(f"init: {cfg.init!r}: {e}") from None
    return mark_game(with_aux_head(model, cfg), cfg)


def load_learner(path: Any, cfg: SearchTrainConfig) -> Any:
    """A checkpoint's learner, marked with the run's games, which must be those it records.

    Why checked: marked with a config's other players or modules, a 2-player network went on
    training (and was saved, and shipped) as a 3-4 player one."""
    model = load_model(path)
    recorded = getattr(model, GAME_ATTR, None)
    wanted = game_meta(cfg.player_counts, cfg.modules)
    if recorded is not None and game_meta(recorded["players"], recorded["modules"]) != wanted:
        theirs = game_meta(recorded["players"], recorded["modules"])
        raise CliError(
            f"--resume: {str(path)!r} is a network for {describe_game(theirs['players'], theirs['modules'])}, "
            f"but the config gives {describe_game(wanted['players'], wanted['modules'])}: resume with the "
            "run's players and modules, or start a new run (another output_dir, or --force)"
        )
    return mark_game(with_aux_head(model, cfg), cfg)


def pick_device(choice: str) -> torch.device:
    """``auto``: the GPU when torch sees one (training only; self-play searches on the CPU in numba)."""
    if choice == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: 'cuda' asked for, but torch sees no GPU")
    return torch.device(
        "cuda" if choice == "cuda" or (choice == "auto" and torch.cuda.is_available()) else "cpu"
    )


# ---------------------------------------------------------------------------
# The agents workers build from a network's bytes (agents.nets.checkpoint.model_bytes)


def cached_agent(data: bytes, kind: str, seed: int, **options: Any) -> Any:
    """An ``az`` or ``ppo`` agent for the network ``data``, built once per process and network.

    Why: loading a ``.zip`` costs a second or more; a worker that runs several jobs of one
    iteration (or the main process with one worker, every iteration) reuses the agent. It is
    reseeded by the caller before each game.
    """
    from agents.players.az import AZAgent
    from agents.players.ppo import PPOAgent

    key = ("network", hashlib.sha1(data).hexdigest(), f"{kind}:{sorted(options.items())}")

    def make() -> Any:
        model = model_from_bytes(data)
        return AZAgent(model=model, seed=seed, **options) if kind == "az" else PPOAgent(model=model)

    agent = WORKER_AGENTS.get(key, make)
    agent.seed(seed)
    return agent
