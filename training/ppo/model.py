"""The MaskablePPO model of a run: built from the config's network and PPO sections, or loaded.

Why apart from the loop: building, initialising from another model and checking a
checkpoint to resume are what the warm start, tests and tools need without a run.
Every model records its games (``agents.nets.checkpoint.GAME_ATTR``), so a policy refuses any other game.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
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


def check_resume(path: str, cfg: TrainConfig) -> None:
    """``--resume`` must name a loadable checkpoint for this game, trained with the config's ``network``
    and ``ppo`` sections (checked before anything is created or written).

    Why the sections: the checkpoint holds its network and PPO settings, and the run goes on with them;
    a config that changed one was ignored while ``config.yaml`` and ``summary.json`` claimed it. Why the
    game: the loaded model keeps its recorded game, so a 2-player checkpoint resumed with ``players:
    [3, 4]`` trained on 3 and 4 player games, saved as a 2-player network."""
    problem = model_zip_problem(path, cfg.modules)
    if problem:
        raise ConfigError(f"--resume: {problem}")
    recorded = checkpoint.recorded_game(path)
    wanted = game_meta(cfg)
    if recorded is not None and recorded != wanted:
        raise ConfigError(
            f"--resume: {str(path)!r} is a network for "
            f"{checkpoint.describe_game(recorded['players'], recorded['modules'])}, but the config gives "
            f"{checkpoint.describe_game(wanted['players'], wanted['modules'])}: resume with the run's "
            "players and modules, or start a new run"
        )
    saved = saved_config(path)
    if saved is None:
        return
    for section in ("network", "ppo"):
        now = getattr(cfg, section)
        try:
            before = type(now).model_validate(saved[section])
        except (KeyError, ValueError):
            continue  # not there, or written by another version: nothing to compare with
        for key in type(now).model_fields:
            old, new = getattr(before, key), getattr(now, key)
            if old != new:
                raise ConfigError(
                    f"--resume: the run was trained with {section}.{key} {old!r}, the config gives {new!r}: "
                    f"a resumed run keeps the checkpoint's network and PPO settings; resume with "
                    f"{section}.{key}: {old!r}, or start a new run"
                )


def saved_config(path: str | Path) -> dict[str, Any] | None:
    """The config a checkpoint was trained with: its sidecar's ``config`` (``NAME.json`` beside it), or
    the ``config.yaml`` of the run folder it lies in (``RUN/checkpoints/NAME.zip``, before sidecars held
    it); ``None`` when neither is there."""
    path = Path(path)
    sidecar = path.with_suffix(".json")
    if sidecar.is_file():
        config = json.loads(sidecar.read_text()).get("config")
        if isinstance(config, dict):
            return config
    run_config = path.parent.parent / "config.yaml"
    if path.parent.name == "checkpoints" and run_config.is_file():
        config = yaml.safe_load(run_config.read_text())
        return config if isinstance(config, dict) else None
    return None
