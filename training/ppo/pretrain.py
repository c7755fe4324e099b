"""The warm start of a PPO run: behaviour cloning of a teacher agent's self-play.

Why: a policy that starts from a teacher's moves (``pretrain.teacher``, e.g.
``greedy``) reaches a useful level in minutes instead of hours of PPO. The
positions come from batched games, an equal share per player count; both the
collection and the epochs stop when the run's wall budget runs out.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from agents import build
from agents.runner import BatchedGames
from splendor_env.rules import terminal_rewards
from splendor_env.state import MAX_PLAYERS
from splendor_env.vector import SplendorBatch
from training.common.budgets import WallBudget
from training.ppo.config import TrainConfig


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
        row = teacher_games(venv, teacher, data, row, share_end, n, cfg.ppo.gamma, budget, bar, terminal, rng)
    bar.close()
    return {k: v[:row] for k, v in data.items()}  # rows of unfinished games keep value 0


def teacher_games(
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
