"""The callbacks of a PPO run: an honest progress line, and the self-play schedule around SB3's loop.

Why callbacks: SB3 owns the rollout/update loop; snapshots of the learner, the
opponent pool's schedule, evaluations, checkpoints (with their JSON state, for
``--resume``) and the wall budget hook into it here.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from training.common.budgets import WallBudget, describe_progress
from training.common.cli import note_saving
from training.common.commit import JOURNAL, commit_files
from training.matches.match import MatchResult
from training.ppo.config import TrainConfig
from training.ppo.evaluation import best_score, evaluate_model
from training.ppo.vec_env import OpponentPool


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
        """``checkpoints/NAME.zip`` and its ``.json`` sidecar (and ``latest``'s), committed as one step
        (:func:`training.common.commit.commit_files`): a kill while writing them leaves the pair
        before, whole, never a new .zip beside the old sidecar or a .zip cut short."""
        ckpt = self.out / "checkpoints"
        meta = {**self.state, "num_timesteps": self.num_timesteps, "snapshots": self.pool.snapshot_paths}
        text = json.dumps(meta, indent=1) + "\n"
        writes: list[tuple[Path, Callable[[Path], Any]]] = []
        for stem in [name, "latest"] if also_latest else [name]:
            writes += [
                (ckpt / f"{stem}.zip", self.model.save),
                (ckpt / f"{stem}.json", lambda p: p.write_text(text)),
            ]
        commit_files(ckpt / JOURNAL, writes)
        if also_latest:  # a stop from here on names the checkpoint that goes on
            note_saving(self.out, resume_flag=f"--resume {ckpt / 'latest.zip'}")
