"""MaskablePPO self-play training, driven by one YAML config.

    python -m training.train --config configs/ppo_2p.yaml [--set ppo.learning_rate=3e-4 ...]
    python -m training.train --config configs/ppo_2p.yaml --resume runs/ppo_2p/checkpoints/latest.zip

Output directory (``output_dir``)::

    config.yaml            the resolved config (after --set)
    tb/                    TensorBoard logs (losses, self-play and evaluation win rates)
    snapshots/snap_N.zip   frozen learner copies used as opponents
    checkpoints/step_N.zip, latest.zip, best.zip (+ .json sidecars: pool and schedule state)
    final.zip, summary.json

The learner's timesteps are counted as SB3 counts them (one per learner move);
opponent moves are extra engine steps, reported separately in the summary.

``players`` may list several counts (``[3, 4]``): one policy learns them all,
the batched games split evenly between them (``MixedSelfPlayVecEnv``), the
warm start's teacher positions too, and every evaluation runs per count
(``greedy@3p``...; best.zip follows the mean over counts). ``modules`` plays
any Cities of Splendor combination. Every saved model records its games
(``agents.ppo.GAME_ATTR``), so a policy refuses any other game when played.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList

from agents import build
from agents.ppo import GAME_ATTR, CardSlotPolicy, PPOAgent, ScaledObs, game_record
from agents.runner import BatchedGames
from splendor_env.rules import terminal_rewards
from splendor_env.state import MAX_PLAYERS
from splendor_env.vector import SplendorBatch
from training.common import config as config_mod
from training.common.budgets import WallBudget, describe_progress
from training.common.cli import run_cli
from training.common.config import TrainConfig
from training.common.model import linear_schedule, policy_kwargs
from training.matches.match import MatchResult, play_match
from training.ppo.vec_env import MixedSelfPlayVecEnv, OpponentPool, SelfPlayVecEnv

POLICIES = {"mlp": "MlpPolicy", "card_slots": CardSlotPolicy}


class ProgressCallback(BaseCallback):
    """A progress line that tells the truth: steps, steps/s and time left by the limit that ends the run.

    (SB3's own bar counts steps only: a wall-limited run showed "0% 16,640/26,000,000 ? it/s".)
    """

    def __init__(self, total: int, budget: WallBudget, every_s: float = 1.0) -> None:
        super().__init__()
        self.total, self.budget, self.every_s = total, budget, every_s
        self.bar: Any = None

    def _on_training_start(self) -> None:
        from tqdm import tqdm

        self.t0, self.steps0, self.last = time.perf_counter(), self.num_timesteps, 0.0
        self.bar = tqdm(
            total=1000, bar_format="{percentage:3.0f}%|{bar}| {desc}", file=sys.stderr, dynamic_ncols=True
        )
        self._refresh()

    def _refresh(self) -> None:
        elapsed = time.perf_counter() - self.t0
        rate = (self.num_timesteps - self.steps0) / elapsed if elapsed > 0 else 0.0
        fraction, text = describe_progress(
            self.num_timesteps, self.total, rate, self.budget.elapsed(), self.budget.left()
        )
        self.bar.set_description_str(text, refresh=False)
        self.bar.n = int(1000 * fraction)
        self.bar.refresh()

    def _on_step(self) -> bool:
        now = time.perf_counter()
        if now - self.last >= self.every_s:
            self.last = now
            self._refresh()
        return True

    def _on_training_end(self) -> None:
        self._refresh()
        self.bar.close()


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


def game_meta(cfg: TrainConfig) -> dict[str, Any]:
    """What a saved model records about its games (``agents.ppo.GAME_ATTR``): player counts, modules."""
    return game_record(cfg.player_counts, cfg.modules)


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


def eval_label(spec: str, players: int, cfg: TrainConfig) -> str:
    """An evaluation's name: the opponent spec, with ``@Np`` when the run trains several player counts."""
    return f"{spec}@{players}p" if isinstance(cfg.players, list) else spec


def evaluate_model(model: MaskablePPO, cfg: TrainConfig, games: int | None = None) -> list[MatchResult]:
    """Seat-rotated games of the current (deterministic) policy against each eval opponent, per player count."""
    candidate = PPOAgent(model=model, deterministic=True)
    results = []
    for n in cfg.player_counts:
        for i, spec in enumerate(cfg.eval.opponents):
            opponent = build(spec, seed=cfg.seed + 7 + i)
            results.append(
                play_match(
                    candidate,
                    opponent,
                    games or cfg.eval.games,
                    n,
                    seed=cfg.seed + 1_000_000,  # the same deals at every evaluation
                    opponent_name=eval_label(spec, n, cfg),
                    max_turns=cfg.env.max_turns,
                    modules=tuple(cfg.modules),
                )
            )
    return results


def best_score(results: list[MatchResult], cfg: TrainConfig) -> float:
    """The number best.zip is chosen by: the mean win rate against ``eval.best_opponent`` over player counts."""
    key = cfg.eval.best_opponent or cfg.eval.opponents[-1]
    rates = [r.win_rate for r in results for n in cfg.player_counts if r.opponent == eval_label(key, n, cfg)]
    return float(np.mean(rates)) if rates else -1.0


def teacher_dataset(
    cfg: TrainConfig, seed: int, budget: WallBudget | None = None, progress: bool = False
) -> dict[str, np.ndarray]:
    """Positions from games the teacher plays against itself, with its moves and the discounted outcome.

    With several player counts each gets an equal share of the positions (in
    blocks, shuffled later by the epochs). Stops early (fewer rows) when the
    wall ``budget`` runs out.
    """
    from tqdm import tqdm

    pt, counts = cfg.pretrain, cfg.player_counts
    modules = tuple(cfg.modules)
    teacher = build(pt.teacher, seed=seed)
    rng = np.random.default_rng([seed, 7])  # determinisations, for a teacher that searches
    games = min(cfg.n_envs, 256)
    venvs = [
        SplendorBatch(
            games, n, seed=seed + 7919 * i, copy=False, max_turns=cfg.env.max_turns, modules=modules
        )
        for i, n in enumerate(counts)
    ]
    data = {
        "obs": np.zeros((pt.samples, venvs[0].obs_dim), np.float32),
        "mask": np.zeros((pt.samples, venvs[0].num_actions), bool),
        "action": np.zeros(pt.samples, np.int64),
        "value": np.zeros(pt.samples, np.float32),
    }
    terminal = np.zeros(MAX_PLAYERS)
    row = 0
    bar = tqdm(total=pt.samples, desc="[pretrain] teacher positions", disable=not progress, file=sys.stderr)
    for i, venv in enumerate(venvs):
        n = venv.num_players
        share_end = pt.samples * (i + 1) // len(venvs)
        row = _teacher_games(
            venv, teacher, data, row, share_end, n, cfg.ppo.gamma, budget, bar, terminal, rng
        )
    bar.close()
    return {k: v[:row] for k, v in data.items()}  # rows of unfinished games keep value 0


def _teacher_games(
    venv: SplendorBatch,
    teacher: Any,
    data: dict[str, np.ndarray],
    row: int,
    end: int,
    n: int,
    gamma: float,
    budget: WallBudget | None,
    bar: Any,
    terminal: np.ndarray,
    rng: np.random.Generator | None = None,
) -> int:
    """Fill rows ``row..end`` of ``data`` with the teacher's self-play in ``venv``; returns the next row.

    The games are :class:`agents.runner.BatchedGames` with the teacher in every seat (a search
    teacher gets a state determinised from ``rng`` per game); each round plays the first
    ``min(slots, end - row)`` games, so the data stop exactly at ``end`` and the games left
    unfinished keep value 0.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    open_rows: list[list[tuple[int, int]]] = [[] for _ in range(venv.num_envs)]  # (row, seat) per game
    next_row = [row]

    def record(
        ids: np.ndarray, actions: np.ndarray, obs: np.ndarray, mask: np.ndarray, player: np.ndarray
    ) -> None:
        rows = np.arange(next_row[0], next_row[0] + ids.size)
        data["obs"][rows], data["mask"][rows], data["action"][rows] = obs[ids], mask[ids] > 0, actions
        for b, r in zip(ids, rows, strict=True):
            open_rows[b].append((r, int(player[b])))
        next_row[0] += ids.size
        bar.update(ids.size)

    def on_end(_game: int, slot: int, final_state: np.ndarray, _truncated: bool) -> None:
        terminal_rewards(final_state, terminal)  # all zero for a truncated game
        moves_left = np.zeros(n, np.int64)
        for r, seat in reversed(open_rows[slot]):
            data["value"][r] = terminal[seat] * gamma ** moves_left[seat]
            moves_left[seat] += 1
        open_rows[slot] = []

    games = BatchedGames(venv, [teacher], None, rng, on_end, on_actions=record)
    while next_row[0] < end and not (budget is not None and budget.expired()):
        games.play_round(np.arange(min(venv.num_envs, end - next_row[0])))
    return next_row[0]


def behaviour_cloning(
    model: MaskablePPO, cfg: TrainConfig, budget: WallBudget | None = None, progress: bool = False
) -> dict[str, Any]:
    """Warm start: cross-entropy to the teacher's moves (masked) + value regression to the outcome.

    The learning rate decays linearly to 0; 2% of the positions are held out to
    report how often the policy's top move is the teacher's. Both the data
    collection and the epochs stop when the wall ``budget`` (the run's
    ``max_wall_minutes``) runs out.
    """
    from tqdm import tqdm

    pt = cfg.pretrain
    budget = budget or WallBudget(None)
    t0 = time.perf_counter()
    data = teacher_dataset(cfg, seed=cfg.seed + 99, budget=budget, progress=progress)
    tensors = {k: torch.as_tensor(v) for k, v in data.items()}
    samples = len(data["action"])
    n_val = max(1, samples // 50) if samples > 50 else 0
    n_train = samples - n_val
    loss = torch.tensor(float("nan"))
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=pt.learning_rate)
    batches_per_epoch = max(1, n_train // pt.batch_size)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda i: max(0.0, 1.0 - i / (pt.epochs * batches_per_epoch))
    )
    rng = np.random.default_rng(cfg.seed)
    agreement = float("nan")
    total_batches = pt.epochs * batches_per_epoch if n_train else 0
    bar = tqdm(total=total_batches, desc="[pretrain] batches", disable=not progress, file=sys.stderr)
    done_batches = 0
    for epoch in range(pt.epochs if n_train else 0):
        if budget.expired():
            break
        order = torch.as_tensor(rng.permutation(n_train))
        for b in range(batches_per_epoch):
            if budget.expired():
                break
            idx = order[b * pt.batch_size : (b + 1) * pt.batch_size]
            values, log_prob, _ = policy.evaluate_actions(
                tensors["obs"][idx], tensors["action"][idx], action_masks=tensors["mask"][idx].numpy()
            )
            loss = -log_prob.mean() + pt.value_coef * torch.nn.functional.mse_loss(
                values.flatten(), tensors["value"][idx]
            )
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.ppo.max_grad_norm)
            optimizer.step()
            scheduler.step()
            done_batches += 1
            bar.update()
        if n_val:
            held_out = slice(n_train, samples)
            with torch.no_grad():
                dist = policy.get_distribution(
                    tensors["obs"][held_out], action_masks=tensors["mask"][held_out].numpy()
                )
                top = dist.distribution.probs.argmax(dim=1)
            agreement = float((top == tensors["action"][held_out]).float().mean())
        print(
            f"[pretrain] epoch {epoch + 1}/{pt.epochs}: loss {loss.item():.3f}, "
            f"top move = teacher's on {agreement:.1%} of held-out positions",
            flush=True,
        )
    bar.close()
    policy.set_training_mode(False)
    stopped = done_batches < total_batches or samples < pt.samples
    if stopped:
        print(
            f"[pretrain] max_wall_minutes reached: {samples:,} positions, {done_batches} batches", flush=True
        )
    return {
        "seconds": time.perf_counter() - t0,
        "samples": samples,
        "batches": done_batches,
        "stopped_by_time_limit": stopped,
        "final_loss": loss.item(),
        "held_out_agreement": agreement,
    }


def initialise_from(model: MaskablePPO, path: str) -> None:
    """Copy the policy weights of a saved model (e.g. a pretrained or earlier run) into ``model``."""
    source = MaskablePPO.load(path, device="cpu")
    try:
        model.policy.load_state_dict(source.policy.state_dict())
    except RuntimeError as e:
        raise config_mod.ConfigError(f"init_from: {path!r} has a different network: {e}") from e


class SelfPlayCallback(BaseCallback):
    """Opponent-pool schedule, snapshots, checkpoints, evaluation and self-play statistics."""

    def __init__(self, cfg: TrainConfig, out: Path, state: dict[str, Any], budget: WallBudget) -> None:
        super().__init__()
        self.cfg, self.out, self.state, self.budget = cfg, out, state, budget
        self.stats: dict[str, list[float]] = {}
        self.t_start = time.perf_counter()
        self.steps_start = 0

    @property
    def pool(self) -> OpponentPool:
        return self.training_env.pool

    def _next(self, every: int) -> int:
        return (self.num_timesteps // every + 1) * every if every > 0 else sys.maxsize

    def _on_training_start(self) -> None:
        self.steps_start = self.num_timesteps
        self.next_snapshot = self._next(self.cfg.opponents.snapshot_every)
        self.next_checkpoint = self._next(self.cfg.checkpoint_every)
        self.next_eval = self._next(self.cfg.eval.every)

    def _on_rollout_start(self) -> None:
        self.pool.progress = min(1.0, self.num_timesteps / self.cfg.total_timesteps)

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "outcome" in info:
                outcome = info["outcome"]
                score = 0.0 if outcome is None else 1.0 if outcome > 0 else 0.5 if outcome == 0 else 0.0
                label = info["opponent"] + (f"@{info['players']}p" if "players" in info else "")
                self.stats.setdefault(label, []).append(score)
        if self.num_timesteps >= self.next_snapshot:
            self.next_snapshot = self._next(self.cfg.opponents.snapshot_every)
            self.add_snapshot()
        if self.num_timesteps >= self.next_eval:
            self.next_eval = self._next(self.cfg.eval.every)
            self.run_eval()
        if self.num_timesteps >= self.next_checkpoint:
            self.next_checkpoint = self._next(self.cfg.checkpoint_every)
            self.save_checkpoint(f"step_{self.num_timesteps}")
        if self.budget.expired():
            print(f"max_wall_minutes reached at {self.num_timesteps:,} steps: stopping", flush=True)
            self.state["stopped_by_time_limit"] = True
            return False
        return True

    def _on_rollout_end(self) -> None:
        for label, scores in self.stats.items():
            self.logger.record(f"selfplay/win_rate_vs_{label}", float(np.mean(scores)))
            self.logger.record(f"selfplay/games_vs_{label}", len(scores))
        self.stats = {}
        elapsed = time.perf_counter() - self.t_start
        self.logger.record("time/learner_steps_per_s", (self.num_timesteps - self.steps_start) / elapsed)
        self.logger.record("selfplay/pool_progress", self.pool.progress)

    def add_snapshot(self) -> None:
        path = self.out / "snapshots" / f"snap_{self.num_timesteps}.zip"
        self.model.save(path)
        self.pool.add_snapshot(path)

    def run_eval(self) -> list[MatchResult]:
        t0 = time.perf_counter()
        results = evaluate_model(self.model, self.cfg)
        for r in results:
            lo, hi = r.ci
            self.logger.record(f"eval/win_rate_vs_{r.opponent}", r.win_rate)
            self.logger.record(f"eval/ci95_low_vs_{r.opponent}", lo)
            self.logger.record(f"eval/ci95_high_vs_{r.opponent}", hi)
            print(f"[eval @ {self.num_timesteps:,} steps] {r}", flush=True)
        self.state["eval_history"].append(
            {"timesteps": self.num_timesteps, "results": [r.as_dict() for r in results]}
        )
        score = best_score(results, self.cfg)
        if score > self.state["best_score"]:
            self.state["best_score"] = score
            self.state["best_timesteps"] = self.num_timesteps
            self.save_checkpoint("best", also_latest=False)
        self.logger.record("eval/seconds", time.perf_counter() - t0)
        return results

    def save_checkpoint(self, name: str, also_latest: bool = True) -> None:
        ckpt = self.out / "checkpoints"
        meta = {**self.state, "num_timesteps": self.num_timesteps, "snapshots": self.pool.snapshot_paths}
        for stem in [name, "latest"] if also_latest else [name]:
            self.model.save(ckpt / f"{stem}.zip")
            (ckpt / f"{stem}.json").write_text(json.dumps(meta, indent=1) + "\n")


def check_resume(path: str, modules: list[str] | None = None) -> None:
    """``--resume`` must name a loadable checkpoint for this game (checked before anything is created)."""
    from training.common.model_file import model_zip_problem

    problem = model_zip_problem(path, modules)
    if problem:
        raise config_mod.ConfigError(f"--resume: {problem}")


def train(cfg: TrainConfig, resume: str | None = None, progress_bar: bool = True) -> dict[str, Any]:
    """Run (or continue) training; returns the summary that is also written to summary.json.

    Everything that can be refused (the checkpoint to resume, ``init_from`` and
    its network) is checked before the output directory is created.
    """
    budget = WallBudget(cfg.max_wall_minutes)
    t_begin = budget.start
    torch.set_num_threads(cfg.torch_threads)
    out = Path(cfg.output_dir)
    if out.exists() and not out.is_dir():
        raise config_mod.ConfigError(f"output_dir: {str(out)!r} exists and is not a directory")

    state: dict[str, Any] = {"best_score": -1.0, "best_timesteps": None, "eval_history": [], "pretrain": None}
    if resume:
        check_resume(resume, cfg.modules)
        meta_path = Path(resume).with_suffix(".json")
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        start_steps = int(meta.get("num_timesteps", 0))
        env = build_env(cfg, seed=cfg.seed + start_steps)  # fresh deals, not a replay of the first ones
        model = MaskablePPO.load(resume, env=env, device="cpu", tensorboard_log=str(out / "tb"))
    else:
        env = build_env(cfg, seed=cfg.seed)
        model = build_model(cfg, env, str(out / "tb"))
        if cfg.init_from is not None:
            initialise_from(model, cfg.init_from)
    for sub in ("checkpoints", "snapshots", "tb"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(yaml.safe_dump(config_mod.to_dict(cfg), sort_keys=False))
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
    if any(e.spec == config_mod.SNAPSHOTS for e in cfg.opponents.pool) and not env.pool.snapshot_paths:
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
    final_results = callback.run_eval()
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
        "final_eval": [r.as_dict() for r in final_results],
        "best_timesteps": state["best_timesteps"],
        "best_score": state["best_score"],
        "eval_history": state["eval_history"],
        "pretrain": state["pretrain"],
        "config": config_mod.to_dict(cfg),
        "game": game_meta(cfg),
        "resumed_from": resume,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(
        f"done: {model.num_timesteps:,} steps in {wall:.0f} s "
        f"({summary['learner_steps_per_s']:.0f} learner steps/s, {summary['engine_steps_per_s']:.0f} engine steps/s); "
        f"final model {out / 'final.zip'}",
        flush=True,
    )
    return summary


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m training.train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--config", required=True, help="YAML config file")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--resume", help="checkpoint .zip to continue from (e.g. runs/x/checkpoints/latest.zip)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (for log files)")
    args = ap.parse_args(argv)
    cfg = config_mod.load(args.config, args.overrides)
    if args.resume:
        check_resume(args.resume, cfg.modules)
    train(cfg, resume=args.resume, progress_bar=not args.no_progress)


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.train"))
