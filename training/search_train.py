"""Expert iteration (AlphaZero-style): a network improved from its own search, for every game.

    python -m training.search_train --config configs/search_2p.yaml [--resume] [--workers N]
        [--backend local|ray] [--address HOST:6379|auto] [--set key=value ...] [--no-progress]

Why: ``az`` (PUCT guided by a PPO card-slot network) plays better than the
network alone; training the network towards what the search chose (its root
visit counts) and towards the games' real results makes a better prior and
value, and so a better search. Each iteration:

1. **Self-play** (:mod:`training.search.selfplay`): ``selfplay.games`` games,
   every seat the same ``az`` agent with the current network; the first
   ``selfplay.sample_moves`` decisions sample from the visit counts so games
   differ. Every decision records the observation of the seat on move, its
   legal mask, the visit distribution over the legal ids and, at the end, that
   seat's terminal reward. Games run on :func:`training.common.jobs.map_jobs`
   (local processes or Ray), each seeded from (seed, iteration, game).
2. **Replay buffer**: the last ``buffer.capacity`` positions.
3. **Training**: ``train.epochs`` passes over the buffer, Adam, the actor's
   masked logits by cross-entropy to the visit targets, the critic by MSE to
   the outcome. The network stays a MaskablePPO ``.zip``: ``ppo:PATH`` plays it
   without search, ``az:PATH`` with.
4. **Gate**: the trained network (``az``, ``gate.sims``) against the current
   one in ``gate.games`` seat-rotated games (:func:`training.evaluate.play_match`);
   it becomes the self-play network if its win rate reaches ``gate.threshold``
   (on the 2-player scale, :func:`gate_score`: a rate with ``n`` players counts
   ``rate * n / 2``, pooled over the player counts). Otherwise the current one is
   kept for self-play while the learner goes on training (AlphaGo Zero's rule).

Output directory (``output_dir``)::

    config.yaml                  the resolved config
    tb/                          TensorBoard scalars
    best.zip                     the gated network (the run's result): ppo:best.zip or az:best.zip
    checkpoints/learner.zip      the network being trained
    checkpoints/best.zip         = best.zip
    checkpoints/buffer.npz       the replay buffer
    checkpoints/optimizer.pt     Adam's state
    checkpoints/state.json       iteration, step within it, rng state, metrics (written last)
    metrics.json                 one row per iteration (wall_seconds: the run's time when it ended)
    snapshots/best-NNNN.zip      with snapshot_every: K, best.zip after every K-th iteration

``--resume`` continues from ``checkpoints/`` (written after every step), with
its buffer, optimizer and rng; ``max_wall_minutes`` stops cleanly after the
step in which it passes, checkpointed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.ppo import GAME_ATTR, CardSlotPolicy, ScaledObs, game_record, load_model
from agents.runner import win_shares
from splendor_env.actions import num_actions as game_num_actions
from splendor_env.observation import obs_dim as game_obs_dim
from training.common.budgets import WallBudget, describe_progress
from training.common.cli import CliError, run_cli
from training.common.jobs import BACKENDS, check_backend, job_seed, local_pool, map_jobs, stop_pool
from training.common.model import policy_kwargs
from training.evaluate import MatchResult
from training.search import config as config_mod
from training.search.config import FRESH, SearchTrainConfig
from training.search.selfplay import (
    ReplayBuffer,
    concat,
    match_job,
    model_bytes,
    selfplay_job,
    selfplay_jobs,
)

STEPS = ("selfplay", "train", "gate")
PHASES = (("early", 0.0, 1 / 3), ("mid", 1 / 3, 2 / 3), ("late", 2 / 3, 1.01))
GATE_CHUNK = 10  # gate / evaluation games per job
TRUNCATION_WARNING = 0.05  # share of an iteration's self-play games cut by max_turns that earns a warning


# ---------------------------------------------------------------------------
# The network


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

    class SpacesEnv(gym.Env):
        """Spaces only, never stepped: MaskablePPO is built on an env."""

        observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        action_space = gym.spaces.Discrete(num_actions)

    model = MaskablePPO(
        CardSlotPolicy,
        DummyVecEnv([SpacesEnv]),
        n_steps=2,
        batch_size=2,
        policy_kwargs=policy_kwargs(
            cfg.network.net_arch, cfg.network.activation, ScaledObs, card_features=True
        ),
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )
    model.env = None  # never stepped; not saved
    return mark_game(model, cfg)


def mark_game(model: Any, cfg: SearchTrainConfig) -> Any:
    """Record the run's games in the model (``agents.ppo.GAME_ATTR``): ``ppo`` and ``az`` check it."""
    setattr(model, GAME_ATTR, game_record(cfg.player_counts, cfg.modules))
    return model


def initial_model(cfg: SearchTrainConfig) -> Any:
    """``init``: a fresh network, or a shipped model / ``.zip`` (checked to be a card-slot network)."""
    if cfg.init == FRESH:
        return fresh_model(cfg)
    from agents.net import export_network

    model = load_model(cfg.init)
    try:
        export_network(model.policy)
    except ValueError as e:
        raise config_mod.ConfigError(f"init: {cfg.init!r}: {e}") from None
    return mark_game(model, cfg)


def pick_device(choice: str) -> torch.device:
    """``auto``: the GPU when torch sees one (training only; self-play searches on the CPU in numba)."""
    if choice == "cuda" and not torch.cuda.is_available():
        raise config_mod.ConfigError("device: 'cuda' asked for, but torch sees no GPU")
    return torch.device(
        "cuda" if choice == "cuda" or (choice == "auto" and torch.cuda.is_available()) else "cpu"
    )


# ---------------------------------------------------------------------------
# Training


def policy_outputs(policy: Any, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities over the legal ids (illegal ids at about -1e9) and critic values of a batch."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        latent_pi = policy.mlp_extractor.forward_actor(features[0])
        latent_vf = policy.mlp_extractor.forward_critic(features[1])
    logits = policy.action_net(latent_pi).masked_fill(~mask, -1e9)
    return torch.log_softmax(logits, dim=1), policy.value_net(latent_vf).squeeze(-1)


def losses(
    policy: Any, batch: dict[str, np.ndarray], device: torch.device, search_value_weight: float = 0.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(policy cross-entropy to the visit targets, value MSE, the values) of a batch.

    The value target is the outcome, mixed with the search's root value by ``search_value_weight``.
    """
    obs = torch.as_tensor(batch["obs"], device=device)
    mask = torch.as_tensor(batch["mask"], device=device)
    logp, values = policy_outputs(policy, obs, mask)
    visits = torch.as_tensor(batch["policy"], device=device)
    policy_loss = -(visits * logp).sum(dim=1).mean()
    wanted = torch.as_tensor(value_target(batch, search_value_weight), device=device)
    return policy_loss, torch.nn.functional.mse_loss(values, wanted), values


def value_target(batch: dict[str, np.ndarray], search_value_weight: float) -> np.ndarray:
    """The critic's target: each seat's result, mixed with the search's value by ``search_value_weight``."""
    if search_value_weight > 0:
        return (1.0 - search_value_weight) * batch["value"] + search_value_weight * batch["q"]
    return batch["value"]


def value_accuracy(values: np.ndarray, targets: np.ndarray, phase: np.ndarray) -> dict[str, float]:
    """How often the critic has the sign of the result, per game phase (decided games only)."""
    out = {}
    for name, lo, hi in PHASES:
        sel = (phase >= lo) & (phase < hi) & (targets != 0)
        if sel.any():
            out[name] = float((np.sign(values[sel]) == np.sign(targets[sel])).mean())
    return out


def evaluate_positions(
    policy: Any, data: dict[str, np.ndarray], device: torch.device, search_value_weight: float = 0.0
) -> dict[str, float]:
    """Losses and value sign accuracy of the network on positions it has not trained on (the new games).

    ``value_loss`` is the error to the results; ``value_target_loss`` to the training target (the
    results mixed with the search values), the one ``train_value_loss`` measures: only the two
    losses to the same target tell memorising from learning.
    """
    policy.set_training_mode(False)
    with torch.no_grad():
        pl, vl, values = losses(policy, data, device)
    values = values.cpu().numpy()
    acc = value_accuracy(values, data["value"], data["phase"])
    return {
        "policy_loss": pl.item(),
        "value_loss": vl.item(),
        "value_target_loss": float(np.mean((values - value_target(data, search_value_weight)) ** 2)),
        **{f"value_sign_acc_{k}": v for k, v in acc.items()},
    }


def train_network(
    policy: Any,
    optimizer: torch.optim.Optimizer,
    buffer: ReplayBuffer,
    cfg: SearchTrainConfig,
    rng: np.random.Generator,
    device: torch.device,
    budget: WallBudget,
) -> dict[str, float]:
    """``train.epochs`` shuffled passes over the buffer (stops between batches when the wall budget ends)."""
    t = cfg.train
    policy.to(device)
    optimizer_to(optimizer, device)
    policy.set_training_mode(True)
    sums, batches = np.zeros(2), 0
    for epoch in range(int(np.ceil(t.epochs))):
        # the last (or only) pass may be a part of the buffer: epochs 0.25 trains on a random quarter
        share = min(1.0, t.epochs - epoch)
        order = rng.permutation(buffer.size)[: max(1, int(round(share * buffer.size)))]
        for start in range(0, order.size, t.batch_size):
            if budget.expired():
                break
            idx = np.sort(order[start : start + t.batch_size])
            pl, vl, _ = losses(policy, buffer.get(idx), device, t.search_value_weight)
            loss = pl + t.value_coef * vl
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), t.max_grad_norm)
            optimizer.step()
            sums += (pl.item(), vl.item())
            batches += 1
    policy.set_training_mode(False)
    policy.to("cpu")
    mean = sums / max(1, batches)
    return {"train_policy_loss": float(mean[0]), "train_value_loss": float(mean[1]), "train_batches": batches}


def resume_optimizer(policy: Any, cfg: SearchTrainConfig, path: Path) -> torch.optim.Optimizer:
    """Adam with its saved moments, at the config's rates (the saved state would bring back its own)."""
    optimizer = make_optimizer(policy, cfg)
    fresh = [dict(group) for group in optimizer.param_groups]
    try:
        optimizer.load_state_dict(torch.load(path, map_location="cpu"))
    except ValueError as err:
        raise config_mod.ConfigError(
            "train.value_learning_rate: the checkpoint's optimizer has "
            f"{'no ' if len(fresh) == 2 else 'a '}separate critic group; resume with the run's setting ({err})"
        ) from None
    for group, settings in zip(optimizer.param_groups, fresh, strict=True):
        group["lr"], group["weight_decay"] = settings["lr"], settings["weight_decay"]
    return optimizer


def optimizer_to(optimizer: torch.optim.Optimizer, device: torch.device) -> None:
    """Adam's moments onto the parameters' device (a resumed state loads on the CPU); ``step`` stays."""
    for state in optimizer.state.values():
        for key, value in state.items():
            if torch.is_tensor(value) and key != "step":
                state[key] = value.to(device)


def critic_parameters(policy: Any) -> list[torch.nn.Parameter]:
    """The parameters only the value uses: the critic trunk (card-slot or SB3 MLP extractor) and the value head."""
    extractor = policy.mlp_extractor
    trunk = getattr(extractor, "critic", None) or getattr(extractor, "value_net", None)
    params = list(policy.value_net.parameters()) + (list(trunk.parameters()) if trunk is not None else [])
    if not policy.share_features_extractor:
        params += list(policy.vf_features_extractor.parameters())
    return params


def make_optimizer(policy: Any, cfg: SearchTrainConfig) -> torch.optim.Optimizer:
    """Adam; with ``train.value_learning_rate`` set, the critic is a second group at that rate."""
    t = cfg.train
    if t.value_learning_rate is None:
        return torch.optim.Adam(policy.parameters(), lr=t.learning_rate, weight_decay=t.weight_decay)
    critic = {id(p) for p in critic_parameters(policy)}
    groups = [
        {"params": [p for p in policy.parameters() if id(p) not in critic], "lr": t.learning_rate},
        {"params": [p for p in policy.parameters() if id(p) in critic], "lr": t.value_learning_rate},
    ]
    return torch.optim.Adam(groups, weight_decay=t.weight_decay)


# ---------------------------------------------------------------------------
# Matches: the gate and the evaluations against fixed opponents


def gate_score(rates: dict[int, float]) -> float:
    """The gate's measure over its player counts: the mean of each win rate on the 2-player scale.

    A rate ``r`` with ``n`` players counts as ``r * n / 2`` (chance is 1/2 on that scale), and the
    counts are pooled rather than each asked to clear the bar: with 40 games a count, requiring
    3 and 4 players both to pass rejected a learner that was better at both most of the time
    (two equal networks pass one count about 30% of the time, both about 9%). One count: its rate.
    """
    return float(np.mean([rate * n / 2.0 for n, rate in rates.items()]))


def gate_rate(result: MatchResult) -> float:
    """The gate's win rate: a truncated game counts as a draw (``1/n``), not as a loss of the new network."""
    return (result.score + result.truncated / result.players) / result.games


def match_jobs(
    candidate: bytes,
    opponent: bytes | str,
    name: str,
    mode: str,
    sims: int,
    games: int,
    cfg: SearchTrainConfig,
    key: tuple[int, ...],
) -> list[dict[str, Any]]:
    """Seat-rotated games per player count in chunks, each seeded from (seed, ``key``, count, chunk)."""
    sp = cfg.selfplay
    options = {"sims": sims, "c": sp.c, "fpu": sp.fpu, "batch": sp.batch} if mode == "az" else {}
    return [
        {
            "candidate": candidate,
            "opponent": opponent,
            "name": name,
            "mode": mode,
            "options": options,
            "players": n,
            "games": min(GATE_CHUNK, games - first),
            "first_game": first,
            "seed": job_seed(cfg.seed, *key, n, c),
            "max_turns": sp.max_turns,
            "modules": list(cfg.modules),
        }
        for n in cfg.player_counts
        for c, first in enumerate(range(0, games, GATE_CHUNK))
    ]


def merge_by(jobs: list[dict[str, Any]], results: list[MatchResult]) -> dict[tuple[str, int], MatchResult]:
    """Results of the chunks summed per (name, player count)."""
    out: dict[tuple[str, int], MatchResult] = {}
    for job, r in zip(jobs, results, strict=True):
        key = (job["name"], job["players"])
        out[key] = r if key not in out else out[key].merge(r)
    return out


# ---------------------------------------------------------------------------
# Checkpoints


def snapshot_path(out: Path, iteration: int) -> Path:
    """Where ``snapshot_every`` keeps the gated network after ``iteration`` iterations."""
    return out / "snapshots" / f"best-{iteration:04d}.zip"


class Run:
    """The state of a run that a checkpoint holds, and where it lives."""

    def __init__(self, cfg: SearchTrainConfig) -> None:
        self.cfg = cfg
        self.out = Path(cfg.output_dir)
        self.ckpt = self.out / "checkpoints"
        self.iteration, self.step = 0, STEPS[0]
        self.rng = np.random.default_rng([cfg.seed, 99])
        self.metrics: list[dict[str, Any]] = []
        self.row: dict[str, Any] = {}  # the current iteration's metrics
        self.positions = 0
        self.accepted = 0
        # a run split into pieces (--resume): each piece's iterations and wall time, for the models page
        self.pieces: list[dict[str, Any]] = []
        self.t_start = time.perf_counter()
        self.warned_truncation = False

    def save(
        self, learner: Any, best: bytes, optimizer: torch.optim.Optimizer, buffer: ReplayBuffer, done: str
    ) -> None:
        """The checkpoint's files that step ``done`` changed (all the first time), each written aside and
        moved in place; ``state.json`` last, so a checkpoint is whole once it is there."""
        self.ckpt.mkdir(parents=True, exist_ok=True)
        copies_of_best = [self.ckpt / "best.zip", self.out / "best.zip"]
        every = self.cfg.snapshot_every
        if done == "gate" and every and self.iteration % every == 0:
            copies_of_best.append(snapshot_path(self.out, self.iteration))
            copies_of_best[-1].parent.mkdir(exist_ok=True)
        files = {
            "selfplay": [(self.ckpt / "buffer.npz", buffer.save)],
            "train": [
                (self.ckpt / "learner.zip", learner.save),
                (self.ckpt / "optimizer.pt", lambda path: torch.save(optimizer.state_dict(), path)),
            ],
            "gate": [(path, lambda p: p.write_bytes(best)) for path in copies_of_best],
        }
        for step, writes in files.items():
            for path, write in writes:
                if step == done or not path.is_file():
                    tmp = path.with_name(f"{path.stem}.tmp{path.suffix}")
                    write(tmp)
                    tmp.replace(path)
        state = {
            "iteration": self.iteration,
            "step": self.step,
            "rng": self.rng.bit_generator.state,
            "row": self.row,
            "positions": self.positions,
            "accepted": self.accepted,
            "pieces": self.pieces_so_far(),
            "metrics": self.metrics,
        }
        tmp = self.ckpt / "state.json.tmp"
        tmp.write_text(json.dumps(state) + "\n")
        tmp.replace(self.ckpt / "state.json")
        (self.out / "metrics.json").write_text(json.dumps(self.metrics, indent=1) + "\n")

    def load_state(self) -> None:
        path = self.ckpt / "state.json"
        if not path.is_file():
            raise CliError(f"--resume: no checkpoint in {str(self.ckpt)!r} (no state.json)")
        state = json.loads(path.read_text())
        self.iteration, self.step = int(state["iteration"]), state["step"]
        self.rng.bit_generator.state = state["rng"]
        self.row, self.metrics = state["row"], state["metrics"]
        self.positions, self.accepted = int(state["positions"]), int(state["accepted"])
        self.pieces = state.get("pieces", [])

    def begin_piece(self, resumed: bool) -> None:
        """Start timing this invocation (a new piece of the run) from the current iteration."""
        self.t_start = time.perf_counter()
        self.pieces.append({"resumed": resumed, "from_iteration": self.iteration, "wall_seconds": 0.0})

    def pieces_so_far(self) -> list[dict[str, Any]]:
        """The pieces with this one's wall time and iteration reached brought up to date."""
        if self.pieces:
            self.pieces[-1].update(
                to_iteration=self.iteration, wall_seconds=round(time.perf_counter() - self.t_start, 1)
            )
        return self.pieces

    def wall_seconds(self) -> float:
        """Wall time of the whole run so far, over all its pieces."""
        return float(sum(p["wall_seconds"] for p in self.pieces_so_far()))


# ---------------------------------------------------------------------------
# The loop


class Progress:
    """A tqdm bar over iterations whose time left follows the wall budget when it binds first."""

    def __init__(self, cfg: SearchTrainConfig, start: int, budget: WallBudget, enabled: bool) -> None:
        from tqdm import tqdm

        self.cfg, self.start, self.budget = cfg, start, budget
        self.t0 = time.perf_counter()
        self.bar = tqdm(
            total=1000, bar_format="{percentage:3.0f}%|{bar}| {desc}", file=sys.stderr, disable=not enabled
        )

    def update(self, iteration: int, note: str) -> None:
        elapsed = time.perf_counter() - self.t0
        rate = (iteration - self.start) / elapsed if elapsed > 0 else 0.0
        fraction, text = describe_progress(
            iteration, self.cfg.iterations, rate, self.budget.elapsed(), self.budget.left()
        )
        left = text.split(", ", 2)[2]  # "0:12:00 left (wall limit)": the binding limit's time left
        done = iteration - self.start
        pace = f"{elapsed / done:,.0f} s/iteration, " if done else ""
        self.bar.set_description_str(
            f"{iteration}/{self.cfg.iterations} iterations, {pace}{left}{note}", refresh=False
        )
        self.bar.n = int(1000 * fraction)
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def search_train(
    cfg: SearchTrainConfig,
    resume: bool = False,
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    progress: bool = True,
    log: Any = print,
) -> dict[str, Any]:
    """Run (or continue) expert iteration; returns the summary also written to ``summary.json``."""
    from torch.utils.tensorboard import SummaryWriter

    check_backend(backend, address, workers)
    budget = WallBudget(cfg.max_wall_minutes)
    torch.set_num_threads(cfg.torch_threads)
    # subnormal weights (weight decay on weights that never get a gradient) slow CPU arithmetic
    # many times over; flushed to zero, training never makes them (agents.net.flush_subnormals)
    torch.set_flush_denormal(True)
    device = pick_device(cfg.device)
    run = Run(cfg)
    if run.out.exists() and not run.out.is_dir():
        raise config_mod.ConfigError(f"output_dir: {str(run.out)!r} exists and is not a directory")
    obs_dim, num_actions = game_sizes(cfg)
    if resume:
        run.load_state()
        learner = mark_game(load_model(run.ckpt / "learner.zip"), cfg)
        best = (run.ckpt / "best.zip").read_bytes()
        buffer = ReplayBuffer.load(run.ckpt / "buffer.npz", cfg.buffer.capacity, obs_dim, num_actions)
        optimizer = resume_optimizer(learner.policy, cfg, run.ckpt / "optimizer.pt")
        log(f"resumed at iteration {run.iteration} ({run.step}), {buffer.size:,} positions in the buffer")
    else:
        learner = initial_model(cfg)
        best = model_bytes(learner)
        buffer = ReplayBuffer(cfg.buffer.capacity, obs_dim, num_actions)
        optimizer = make_optimizer(learner.policy, cfg)
    import yaml

    run.out.mkdir(parents=True, exist_ok=True)
    (run.out / "config.yaml").write_text(yaml.safe_dump(config_mod.to_dict(cfg), sort_keys=False))
    writer = SummaryWriter(str(run.out / "tb"))
    ray_here = start_ray(backend, address, workers)
    # one process pool for the whole run: workers start (torch, numba's cache) once, not every iteration
    pool = local_pool(workers) if backend == "local" and workers > 1 else None
    bar = Progress(cfg, run.iteration, budget, progress)
    stopped = False
    finished = False
    run.begin_piece(resume)
    sp = cfg.selfplay.model_dump()
    try:
        while run.iteration < cfg.iterations:
            it = run.iteration
            done = run.step
            if run.step == "selfplay":
                bar.update(it, f" | iteration {it}: self-play")
                t0 = time.perf_counter()
                jobs = selfplay_jobs(
                    best,
                    it,
                    cfg.seed,
                    cfg.selfplay.games,
                    cfg.selfplay.games_per_job,
                    cfg.player_counts,
                    tuple(cfg.modules),
                    sp,
                )
                parts = map_jobs(selfplay_job, jobs, workers, backend, address, pool=pool)
                data = concat([p["data"] for p in parts])
                seconds = time.perf_counter() - t0
                run.row = {
                    "iteration": it,
                    "positions": len(data["value"]),
                    "positions_per_s": len(data["value"]) / seconds,
                    "selfplay_seconds": seconds,
                    "positions_per_game": float(
                        np.mean([r["positions"] for p in parts for r in p["records"]])
                    ),
                    "truncated": sum(r["truncated"] for p in parts for r in p["records"]),
                    **opponent_win_rates([r for p in parts for r in p["records"]], cfg.player_counts),
                }
                if not run.warned_truncation:  # once a piece: the same config truncates every iteration
                    games = sum(len(p["records"]) for p in parts)
                    run.warned_truncation = warn_truncation(run.row["truncated"], games, cfg, log)
                run.row.update(
                    {
                        f"new_{k}": v
                        for k, v in evaluate_positions(
                            learner.policy, data, torch.device("cpu"), cfg.train.search_value_weight
                        ).items()
                    }
                )
                buffer.add(data)
                run.positions += len(data["value"])
                run.step = "train"
            elif run.step == "train":
                bar.update(it, f" | iteration {it}: training on {buffer.size:,} positions")
                t0 = time.perf_counter()
                if buffer.size >= cfg.train.min_positions:
                    run.row.update(
                        train_network(learner.policy, optimizer, buffer, cfg, run.rng, device, budget)
                    )
                run.row["train_seconds"] = time.perf_counter() - t0
                run.step = "gate"
            else:
                bar.update(it, f" | iteration {it}: gate")
                best = gate_and_evaluate(run, learner, best, workers, backend, address, log)
                for key, value in run.row.items():
                    if isinstance(value, (int, float)) and key != "iteration":
                        writer.add_scalar(_tb_name(key), value, it)
                writer.flush()
                run.row["wall_seconds"] = run.wall_seconds()  # the run's time so far, all pieces
                run.metrics.append(run.row)
                run.row, run.step, run.iteration = {}, STEPS[0], it + 1
            run.save(learner, best, optimizer, buffer, done)
            if budget.expired() and run.iteration < cfg.iterations:
                log(
                    f"max_wall_minutes reached: stopping at iteration {run.iteration} (next step: {run.step})"
                )
                stopped = True
                break
        bar.update(run.iteration, "")
        finished = True
    finally:
        bar.close()
        writer.close()
        if pool is not None:
            # stopped (Ctrl-C, SIGTERM, an error): the workers end now, not after their current job
            stop_pool(pool, now=not finished)
        if ray_here:
            import ray

            ray.shutdown()
    summary = {
        "iterations": run.iteration,
        "next_step": run.step,
        "stopped_by_time_limit": stopped,
        "positions": run.positions,
        "accepted": run.accepted,
        "buffer_size": buffer.size,
        "wall_seconds": time.perf_counter() - run.t_start,  # this piece
        "total_wall_seconds": run.wall_seconds(),
        "pieces": run.pieces_so_far(),
        "device": str(device),
        "backend": backend,
        "workers": workers,
        "result": str(run.out / "best.zip"),
    }
    (run.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    log(
        f"done: {run.iteration} iterations, {run.positions:,} positions, {run.accepted} networks accepted; "
        f"result {run.out / 'best.zip'} (ppo:PATH or az:PATH)"
    )
    return summary


def warn_truncation(truncated: int, games: int, cfg: SearchTrainConfig, log: Any) -> bool:
    """Say so when more than :data:`TRUNCATION_WARNING` of an iteration's self-play games were cut short.

    Why: a truncated game teaches every seat a draw (value 0), and ``selfplay.max_turns`` counts
    single turns, not rounds: 100 turns is 50 rounds with 2 players but only 25 with 4, shorter
    than a typical 4-player game. Returns whether it warned.
    """
    if games <= 0 or truncated <= TRUNCATION_WARNING * games:
        return False
    log(
        f"warning: {truncated} of {games} self-play games reached selfplay.max_turns = "
        f"{cfg.selfplay.max_turns} single turns and were scored as draws; raise it "
        f"(a {max(cfg.player_counts)}-player game needs about {40 * max(cfg.player_counts)})"
    )
    return True


def start_ray(backend: str, address: str | None, workers: int) -> bool:
    """Connect to Ray once for the whole run (``map_jobs`` then reuses it instead of starting one a step).

    Returns whether this call started it (and so must shut it down)."""
    if backend != "ray":
        return False
    import ray

    if ray.is_initialized():
        return False
    if address is None:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    return True


def _tb_name(key: str) -> str:
    """``train_policy_loss`` -> ``train/policy_loss``: TensorBoard groups by the first word."""
    head, _, rest = key.partition("_")
    return f"{head}/{rest}" if rest and head in ("train", "new", "gate", "eval") else f"selfplay/{key}"


def opponent_win_rates(records: list[dict[str, Any]], player_counts: list[int]) -> dict[str, float]:
    """The search's score in its self-play games against fixed opponents, per opponent (and count).

    A sole win counts 1, a win shared by k seats 1/k. Free: these games are played anyway, and
    there are more of them than the evaluation plays.
    """
    scores: dict[str, list[float]] = {}
    for r in records:
        seat = r.get("search_seat", -1)
        if seat < 0:
            continue
        name = next(a for p, a in enumerate(r["agents"]) if p != seat)
        suffix = f"_{r['num_players']}p" if len(player_counts) > 1 else ""
        scores.setdefault(f"opponent_win_rate_vs_{name}{suffix}", []).append(win_shares(r)[seat])
    return {k: float(np.mean(v)) for k, v in sorted(scores.items())}


def gate_and_evaluate(
    run: Run, learner: Any, best: bytes, workers: int, backend: str, address: str | None, log: Any
) -> bytes:
    """The gate (learner against the self-play network) and, every ``eval.every``, the fixed opponents.

    Returns the self-play network of the next iteration. One :func:`map_jobs` call for both, so
    worker processes start once.
    """
    cfg, it = run.cfg, run.iteration
    candidate = model_bytes(learner)
    trained = "train_batches" in run.row
    jobs = []
    if trained and cfg.gate.games > 0:
        jobs += match_jobs(candidate, best, "gate", "az", cfg.gate.sims, cfg.gate.games, cfg, (it, 1))
    if cfg.eval.every and (it + 1) % cfg.eval.every == 0:
        for k, spec in enumerate(cfg.eval.opponents):
            for mode in cfg.eval.modes:
                jobs += match_jobs(
                    candidate,
                    spec,
                    f"{spec}_{mode}",
                    mode,
                    cfg.eval.sims,
                    cfg.eval.games,
                    cfg,
                    (it, 2, k, cfg.eval.modes.index(mode)),
                )
    # on this machine the few match games run here: a local worker pool takes ~9 s to start
    # (torch, the model, numba's cache), more than 40 gate games at 32 simulations take
    here = 1 if backend == "local" else workers
    results = merge_by(jobs, map_jobs(match_job, jobs, here, backend, address)) if jobs else {}
    if trained:
        rates = {n: gate_rate(r) for (name, n), r in results.items() if name == "gate"}
        score = gate_score(rates) if rates else None
        accept = score is None or score >= cfg.gate.threshold
        if rates:
            run.row["gate_win_rate"] = float(np.mean(list(rates.values())))
            run.row["gate_score"] = score
            if len(rates) > 1:
                run.row.update({f"gate_win_rate_{n}p": rate for n, rate in rates.items()})
        run.row["gate_accepted"] = int(accept)
        if accept:
            best = candidate
            run.accepted += 1
        said = ", ".join(f"{rate:.1%} with {n} players" for n, rate in rates.items())
        if len(rates) > 1:
            said += f": {score:.1%} on the 2-player scale"
        log(
            f"[iteration {it}] gate: "
            + (f"{said} (needs {cfg.gate.threshold:.1%})" if rates else "no games")
            + (" -> accepted" if accept else " -> rejected, the previous network is kept")
        )
    for (name, n), r in results.items():
        if name != "gate":
            suffix = f"_{n}p" if len(cfg.player_counts) > 1 else ""
            run.row[f"eval_win_rate_vs_{name}{suffix}"] = r.win_rate
            log(f"[iteration {it}] {r}")
    return best


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(
        prog="python -m training.search_train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--config", required=True, help="YAML config file (configs/search_2p.yaml)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--resume", action="store_true", help="continue from output_dir/checkpoints")
    ap.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="self-play processes / Ray CPUs"
    )
    ap.add_argument("--backend", choices=BACKENDS, default="local")
    ap.add_argument(
        "--address", default=None, help="existing Ray cluster: HOST:6379, auto or ray://HOST:10001"
    )
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (for log files)")
    args = ap.parse_args(argv)
    check_backend(args.backend, args.address, args.workers)
    cfg = config_mod.load(args.config, args.overrides)
    return search_train(cfg, args.resume, args.workers, args.backend, args.address, not args.no_progress)


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.search_train"))
