"""The MaskablePPO model of a run: built from the config's network and PPO sections, or loaded.

Why apart from the loop: building, initialising from another model and checking a
checkpoint to resume are what the warm start, tests and tools need without a run.
Every model records its games (``agents.nets.checkpoint.GAME_ATTR``), so a policy refuses any other game.
"""

from __future__ import annotations

from typing import Any

from sb3_contrib import MaskablePPO

from agents.nets import checkpoint
from agents.nets.checkpoint import GAME_ATTR, load_ppo, model_zip_problem
from agents.nets.policy_net import CardSlotPolicy, ScaledObs
from training.common.config import ConfigError
from training.common.model import linear_schedule, policy_kwargs
from training.ppo.config import TrainConfig
from training.ppo.vec_env import SelfPlayVecEnv

#: ``network.policy`` -> the SB3 policy class (or name) MaskablePPO builds.
POLICIES = {"mlp": "MlpPolicy", "card_slots": CardSlotPolicy}


def game_meta(cfg: TrainConfig) -> dict[str, Any]:
    """What a saved model records about its games (``agents.nets.checkpoint.GAME_ATTR``): player counts, modules."""
    return checkpoint.game_meta(cfg.player_counts, cfg.modules)


def build_model(cfg: TrainConfig, env: SelfPlayVecEnv, tb_dir: str) -> MaskablePPO:
    p = cfg.ppo
    extractor = ScaledObs if cfg.network.scale_obs else None
    kwargs = policy_kwargs(
        cfg.network.net_arch, cfg.network.activation, extractor, card_features=cfg.network.card_features
    )
    lr = (
        p.learning_rate
        if p.final_learning_rate is None
        else linear_schedule(p.learning_rate, p.final_learning_rate)
    )
    model = MaskablePPO(
        POLICIES[cfg.network.policy],
        env,
        learning_rate=lr,
        n_steps=p.n_steps,
        batch_size=p.batch_size,
        n_epochs=p.n_epochs,
        gamma=p.gamma,
        gae_lambda=p.gae_lambda,
        clip_range=p.clip_range,
        ent_coef=p.ent_coef,
        vf_coef=p.vf_coef,
        max_grad_norm=p.max_grad_norm,
        target_kl=p.target_kl,
        normalize_advantage=p.normalize_advantage,
        policy_kwargs=kwargs,
        tensorboard_log=tb_dir,
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )
    setattr(model, GAME_ATTR, game_meta(cfg))  # saved in every checkpoint: PPOAgent checks it
    return model


def initialise_from(model: MaskablePPO, path: str) -> None:
    """Copy the policy weights of a saved model (e.g. a pretrained or earlier run) into ``model``."""
    source = load_ppo(path)
    try:
        model.policy.load_state_dict(source.policy.state_dict())
    except RuntimeError as e:
        raise ConfigError(f"init_from: {path!r} has a different network: {e}") from e


def check_resume(path: str, modules: list[str] | None = None) -> None:
    """``--resume`` must name a loadable checkpoint for this game (checked before anything is created)."""
    problem = model_zip_problem(path, modules)
    if problem:
        raise ConfigError(f"--resume: {problem}")
