"""A PPO self-play run from its config: the games, the model, the warm start, SB3's loop, the outputs.

Why one function: :func:`train` is what ``python -m training.train`` runs, and what
tests and notebooks call. The run directory's layout and the config's keys are
described in docs/training.md.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import torch
import yaml
from stable_baselines3.common.callbacks import BaseCallback, CallbackList

from agents.nets.checkpoint import load_ppo
from agents.pool import SNAPSHOTS
from training.common.budgets import WallBudget
from training.common.commit import JOURNAL, finish_commit
from training.common.config import ConfigError
from training.common.run_folder import RunLayout, claim_run_folder, empty_run_folder
from training.ppo.callbacks import ProgressCallback, SelfPlayCallback
from training.ppo.config import TrainConfig, to_dict
from training.ppo.model import build_model, check_resume, game_meta, initialise_from
from training.ppo.pretrain import behaviour_cloning
from training.ppo.vec_env import MixedSelfPlayVecEnv, OpponentPool, SelfPlayVecEnv

#: what ``python -m training.train`` writes in its output_dir (the folder rule: :mod:`training.common.run_folder`)
PPO_RUN = RunLayout(
    files=("config.yaml", "final.zip", "summary.json"),
    folders=("checkpoints", "snapshots", "tb"),
    checkpoint="checkpoints/latest.zip",
    resume="--resume {checkpoint}",
)


def build_env(cfg: TrainConfig, seed: int) -> SelfPlayVecEnv | MixedSelfPlayVecEnv:
    """The self-play games of the config: one player count, or a list of them side by side."""
    pool = OpponentPool(
        [(e.spec, e.weight, e.final_weight) for e in cfg.opponents.pool],
        max_snapshots=cfg.opponents.max_snapshots,
        snapshot_deterministic=cfg.opponents.snapshot_deterministic,
        seed=seed,
    )
    options = {
        "reward_mode": cfg.env.reward_mode,
        "shaping_scale": cfg.env.shaping_scale,
        "max_turns": cfg.env.max_turns,
        "modules": tuple(cfg.modules),
    }
    if isinstance(cfg.players, list):
        return MixedSelfPlayVecEnv(cfg.n_envs, pool, cfg.player_counts, seed=seed, **options)
    return SelfPlayVecEnv(cfg.n_envs, pool, cfg.players, seed=seed, **options)


def resume_meta(resume: str) -> dict[str, Any]:
    """The sidecar (``.json``) of the checkpoint ``resume``, once a checkpoint commit that a kill
    interrupted in its folder is carried out (:func:`training.common.commit.finish_commit`); ``{}``
    when it has none."""
    path = Path(resume)
    finish_commit(path.parent / JOURNAL, leftovers=[path, path.with_suffix(".json")])
    meta_path = path.with_suffix(".json")
    return json.loads(meta_path.read_text()) if meta_path.is_file() else {}


def train(
    cfg: TrainConfig, resume: str | None = None, progress_bar: bool = True, force: bool = False
) -> dict[str, Any]:
    """Run (or continue) training; returns the summary that is also written to summary.json.

    Everything that can be refused (the checkpoint to resume, its game and settings, ``init_from``
    and its network, an output directory that holds a run) is checked before anything is written
    there. A new run into a directory that holds a run is refused unless ``force`` empties it first
    (:func:`training.common.run_folder.claim_run_folder`).
    """
    budget = WallBudget(cfg.max_wall_minutes)
    t_begin = budget.start
    torch.set_num_threads(cfg.torch_threads)
    out = Path(cfg.output_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output_dir: {str(out)!r} exists and is not a directory")

    state: dict[str, Any] = {"best_score": -1.0, "best_timesteps": None, "eval_history": [], "pretrain": None}
    if resume:
        meta = resume_meta(resume)
        check_resume(resume, cfg)
        start_steps = int(meta.get("num_timesteps", 0))
        env = build_env(cfg, seed=cfg.seed + start_steps)  # fresh deals, not a replay of the first ones
        model = load_ppo(resume, env=env, tensorboard_log=str(out / "tb"))
    else:
        env = build_env(cfg, seed=cfg.seed)
        model = build_model(cfg, env, str(out / "tb"))
        if cfg.init_from is not None:
            initialise_from(model, cfg.init_from)
    if claim_run_folder(out, bool(resume), force, PPO_RUN):  # a folder of a run: refused, or --force
        empty_run_folder(out, PPO_RUN)
    for sub in ("checkpoints", "snapshots", "tb"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
    if resume:
        for path in meta.get("snapshots", []):
            if Path(path).is_file():
                env.pool.add_snapshot(path)
        for key in state:
            state[key] = meta.get(key, state[key])
        print(
            f"resumed from {resume} at {model.num_timesteps:,} steps, {len(env.pool.snapshot_paths)} snapshots"
        )
    elif cfg.init_from is None and cfg.pretrain.teacher is not None:
        state["pretrain"] = behaviour_cloning(model, cfg, budget, progress=progress_bar)
    state["config"] = to_dict(cfg)  # in every checkpoint's sidecar: what a resume must keep (check_resume)
    if any(e.spec == SNAPSHOTS for e in cfg.opponents.pool) and not env.pool.snapshot_paths:
        path = out / "snapshots" / f"snap_{model.num_timesteps}.zip"
        model.save(path)  # the initial policy, so the snapshot entry has something to draw
        env.pool.add_snapshot(path)

    callback = SelfPlayCallback(cfg, out, state, budget)
    callbacks: list[BaseCallback] = [callback]
    if progress_bar:
        callbacks.append(ProgressCallback(cfg.total_timesteps, budget))
    remaining = max(0, cfg.total_timesteps - model.num_timesteps)
    start_steps, t0, cpu0 = model.num_timesteps, time.perf_counter(), time.process_time()
    model.learn(
        total_timesteps=remaining,
        callback=CallbackList(callbacks),
        progress_bar=False,
        reset_num_timesteps=not resume,
        tb_log_name="ppo",
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    learner_steps = model.num_timesteps - start_steps
    final_eval = [r.as_dict() for r in callback.run_eval()]
    model.logger.dump(model.num_timesteps)
    model.save(out / "final.zip")
    callback.save_checkpoint(f"step_{model.num_timesteps}")
    summary = {
        "timesteps": model.num_timesteps,
        "learner_steps_this_run": learner_steps,
        "opponent_steps_this_run": env.opponent_steps,
        "wall_time_s": wall,
        "total_wall_time_s": time.perf_counter() - t_begin,  # pretraining and final evaluation included
        "stopped_by_time_limit": state.get("stopped_by_time_limit", False),
        "cpu_time_s": cpu,  # below 2 x wall when the cores are shared with other jobs
        "torch_threads": cfg.torch_threads,
        "learner_steps_per_s": learner_steps / wall if wall > 0 else None,
        "engine_steps_per_s": (learner_steps + env.opponent_steps) / wall if wall > 0 else None,
        "final_eval": final_eval,
        "best_timesteps": state["best_timesteps"],
        "best_score": state["best_score"],
        "eval_history": state["eval_history"],
        "pretrain": state["pretrain"],
        "config": to_dict(cfg),
        "game": game_meta(cfg),
        "resumed_from": resume,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(
        f"done: {model.num_timesteps:,} steps in {wall:.0f} s "
        f"({summary['learner_steps_per_s']:.0f} learner steps/s, {summary['engine_steps_per_s']:.0f} engine steps/s); "
        f"final model {out / 'final.zip'}\nbenchmark it: python -m training.benchmark ppo:{out / 'final.zip'} "
        f"--quick --out {out / 'card'}",
        flush=True,
    )
    return summary
