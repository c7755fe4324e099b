"""The RLlib run: multi-agent PPO, one shared masked policy, checkpoints, resume and evaluation.

Why these choices: every seat maps to one module (``shared_policy``), RLlib's
``ActionMaskingTorchRLModule`` keeps illegal moves at zero probability, and the
result is evaluated by the same match runner as every other agent
(:func:`training.matches.match.play_match`, the trained module as ``rllib:PATH``).
``num_env_runners: 0`` samples in the driver (what Ray's removed ``local_mode`` gave);
``address`` joins a running cluster (``ray start --head``), where the env runners spread.
An env runner lost with its machine is restarted by Ray where a CPU is free and given the current
weights by RLlib; the iteration it cost samples again until it has its ``train_batch_size`` steps
(:func:`algorithm_config`), so a run outlives a lost node (not with the undisturbed run's numbers:
the lost steps are sampled again by a fresh runner).

Output (``output_dir``): ``checkpoint/`` (the algorithm, overwritten every
``checkpoint_every`` iterations and at the end), ``game.json`` (players, modules:
what the agent may play), ``progress.json`` (iterations, env steps, seconds, for
``--resume``) and ``summary.json`` (the figures and the evaluation).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.players.rllib import GAME_FILE, SHARED_POLICY, RLlibAgent
from training.common.cli import CliError, note_saving
from training.common.ray_cluster import connect_ray
from training.matches.match import play_match, seated_agent
from training.rllib.config import RLlibConfig
from training.rllib.env import SplendorMultiAgentEnv, env_config

CHECKPOINT = "checkpoint"
PROGRESS = "progress.json"


def shared_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Every seat plays the one shared module (module level, so Ray can ship it to runners)."""
    return SHARED_POLICY


def algorithm_config(cfg: RLlibConfig) -> Any:
    """The ``PPOConfig`` of a run: the env adapter, the shared masked module, the PPO settings."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    runners, ppo, net, env = cfg.env_runners, cfg.ppo, cfg.network, cfg.env
    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={"fcnet_hiddens": list(net.hidden), "fcnet_activation": net.activation},
    )
    return (
        PPOConfig()
        .environment(
            SplendorMultiAgentEnv,
            env_config=env_config(
                cfg.players,
                cfg.modules,
                reward_mode=env.reward_mode,
                shaping_scale=env.shaping_scale,
                max_turns=env.max_turns,
            ),
            disable_env_checking=True,  # its check plays random action ids, which a masked game refuses
        )
        .framework("torch")
        .env_runners(
            num_env_runners=runners.num_env_runners,
            num_envs_per_env_runner=runners.envs_per_runner,
            rollout_fragment_length=runners.rollout_fragment_length,
        )
        .learners(num_learners=0)
        .multi_agent(
            policies={SHARED_POLICY}, policy_mapping_fn=shared_policy, policies_to_train=[SHARED_POLICY]
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED_POLICY: module}))
        .training(
            lr=ppo.lr,
            gamma=ppo.gamma,
            lambda_=ppo.gae_lambda,
            clip_param=ppo.clip_param,
            entropy_coeff=ppo.entropy_coeff,
            vf_loss_coeff=ppo.vf_loss_coeff,
            num_epochs=ppo.num_epochs,
            train_batch_size_per_learner=ppo.train_batch_size,
            minibatch_size=ppo.minibatch_size,
        )
        # an env runner whose node dies is restarted (Ray's actor restarts) and synced before it samples
        # again; without a minimum, the iteration it died in ended with what it had, even no steps at all
        .fault_tolerance(restart_failed_env_runners=True)
        .reporting(min_sample_timesteps_per_iteration=ppo.train_batch_size)
        .debugging(seed=cfg.seed, log_level="ERROR")
    )


def check_resume(cfg: RLlibConfig) -> Path:
    """The checkpoint ``--resume`` continues from; a one-line error when the run has none."""
    path = Path(cfg.output_dir) / CHECKPOINT
    if not (path / "algorithm_state.pkl").is_file() and not any(path.glob("algorithm_state*")):
        raise CliError(f"--resume: no checkpoint in {str(path)!r} (train without --resume first)")
    return path


def _env_steps(result: dict[str, Any]) -> int:
    """Env steps sampled this iteration, from RLlib's result dict (NaN, when nothing was sampled, is 0)."""
    steps = float(result.get("env_runners", {}).get("num_env_steps_sampled", 0) or 0)
    return int(steps) if math.isfinite(steps) else 0


def evaluate(cfg: RLlibConfig, checkpoint: str | Path, games: int | None = None) -> list[dict[str, Any]]:
    """Seat-rotated games of the trained module (deterministic) against each ``eval.opponents`` spec."""
    games = cfg.eval.games if games is None else games
    if games < 1:
        return []
    candidate = RLlibAgent(checkpoint, seed=cfg.seed)
    results = []
    for i, spec in enumerate(cfg.eval.opponents):
        r = play_match(
            candidate,
            seated_agent(spec, 1, seed=cfg.seed + 7 + i),
            games,
            cfg.players,
            seed=cfg.seed + 1_000_000,
            opponent_name=spec,
            max_turns=cfg.env.max_turns,
            modules=tuple(cfg.modules),
        )
        results.append(r.as_dict())
    return results


def train(
    cfg: RLlibConfig,
    resume: bool = False,
    address: str | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train ``cfg.iterations`` PPO iterations (or until ``max_wall_minutes``), save, evaluate; the summary.

    ``address`` joins a Ray cluster; without it, Ray starts here (or the running one is used).
    ``resume`` continues ``output_dir``'s checkpoint up to ``iterations`` in all.
    """
    import ray

    out = Path(cfg.output_dir)
    ckpt = out / CHECKPOINT
    start = check_resume(cfg) if resume else None
    if address and ray.is_initialized():
        raise CliError("--address: Ray is already initialised in this process")
    started_ray = connect_ray(None, address)
    out.mkdir(parents=True, exist_ok=True)
    (out / GAME_FILE).write_text(json.dumps({"players": [cfg.players], "modules": list(cfg.modules)}) + "\n")
    algo = algorithm_config(cfg).build_algo()
    try:
        done = {"iterations": 0, "env_steps": 0, "seconds": 0.0}
        if start is not None:
            algo.restore_from_path(str(start.resolve()))
            done = json.loads((out / PROGRESS).read_text()) if (out / PROGRESS).is_file() else done
            log(f"resumed from {start} after {done['iterations']} iterations")
        t0, steps0 = time.perf_counter(), done["env_steps"]
        deadline = t0 + 60 * cfg.max_wall_minutes if cfg.max_wall_minutes else None
        rates = []
        while done["iterations"] < cfg.iterations:
            t = time.perf_counter()
            result = algo.train()
            seconds = time.perf_counter() - t
            steps = _env_steps(result)
            rates.append(steps / seconds if seconds else 0.0)
            done["iterations"] += 1
            done["env_steps"] += steps
            done["seconds"] += seconds
            ret = result.get("env_runners", {}).get("agent_episode_returns_mean", {}).get("player_0")
            log(
                f"iteration {done['iterations']}: {steps} env steps in {seconds:.1f} s "
                f"({rates[-1]:,.0f}/s), player_0 return {ret if ret is None else round(float(ret), 3)}"
            )
            if done["iterations"] % cfg.checkpoint_every == 0 or done["iterations"] == cfg.iterations:
                _save(algo, ckpt, out, done)
            if deadline is not None and time.perf_counter() > deadline:
                log(f"max_wall_minutes={cfg.max_wall_minutes} reached")
                break
        _save(algo, ckpt, out, done)
    finally:
        algo.stop()
        if started_ray:
            ray.shutdown()
    session_steps, session_s = done["env_steps"] - steps0, time.perf_counter() - t0
    results = evaluate(cfg, ckpt)
    for r in results:
        log(f"vs {r['opponent']:<10} {r['games']} games: win rate {r['win_rate']:.1%}")
    summary = {
        **done,
        "env_steps_per_s": session_steps / session_s if session_s else 0.0,
        "env_runners": cfg.env_runners.num_env_runners,
        "checkpoint": str(ckpt),
        "agent_spec": f"rllib:{ckpt}",
        "eval": results,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _save(algo: Any, ckpt: Path, out: Path, done: dict[str, Any]) -> None:
    algo.save_to_path(str(ckpt.resolve()))
    (out / PROGRESS).write_text(json.dumps(done) + "\n")
    note_saving(out)  # a stop from here on names the folder and --resume
