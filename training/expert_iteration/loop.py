"""The expert-iteration loop: self-play, training and the gate as checkpointed steps of a run.

Why steps: each of an iteration's three steps (:data:`STEPS`; one function each,
:data:`STEP_FUNCTIONS`) ends with a checkpoint of what it changed (:class:`Run`),
so ``--resume`` continues after the last one and never replays a step, and
``max_wall_minutes`` stops the run cleanly between two steps. An iteration's
metrics go to ``metrics.json`` and TensorBoard in :func:`log_iteration`; where the
games run (local processes kept for the run, or Ray) is :class:`Workers`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.nets.checkpoint import model_bytes
from training.common.budgets import WallBudget, describe_progress
from training.common.cli import CliError, note_saving
from training.common.commit import JOURNAL, commit_files, finish_commit
from training.common.config import ConfigError
from training.common.jobs import LocalPool, check_backend, local_pool, map_jobs, stop_pool
from training.common.ray_cluster import connect_ray
from training.common.run_folder import RunLayout, claim_run_folder, empty_run_folder
from training.expert_iteration.config import SearchTrainConfig, to_dict
from training.expert_iteration.gate import gate_and_evaluate, match_job, opponent_win_rates
from training.expert_iteration.learner import (
    evaluate_positions,
    make_optimizer,
    resume_optimizer,
    train_network,
    winner_pick,
)
from training.expert_iteration.network import game_sizes, initial_model, load_learner, pick_device
from training.expert_iteration.replay import ReplayBuffer, concat, count
from training.expert_iteration.selfplay import selfplay_job, selfplay_jobs
from training.expert_iteration.snapshots import snapshot_path
from training.matches.match import MatchResult

STEPS = ("selfplay", "train", "gate")
TRUNCATION_WARNING = 0.05  # share of an iteration's self-play games cut by max_turns that earns a warning

#: what ``python -m training.search_train`` writes in its output_dir (the folder rule:
#: :mod:`training.common.run_folder`)
SEARCH_RUN = RunLayout(
    files=("config.yaml", "best.zip", "metrics.json", "summary.json"),
    folders=("checkpoints", "snapshots", "tb"),
    checkpoint="checkpoints/state.json",
    resume="--resume",
)


# ---------------------------------------------------------------------------
# Checkpoints


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
        """The checkpoint after step ``done``: the files it changed (all the first time), ``state.json``
        and ``metrics.json``, committed as one step (:func:`training.common.commit.commit_files`), so a
        kill while writing it leaves the checkpoint before it, or this one, whole."""
        copies_of_best = [self.ckpt / "best.zip", self.out / "best.zip"]
        every = self.cfg.snapshot_every
        if done == "gate" and every and self.iteration % every == 0:
            copies_of_best.append(snapshot_path(self.out, self.iteration))
        files: dict[str, list[tuple[Path, Callable[[Path], None]]]] = {
            "selfplay": [(self.ckpt / "buffer.npz", buffer.save)],
            "train": [
                (self.ckpt / "learner.zip", learner.save),
                (self.ckpt / "optimizer.pt", lambda path: torch.save(optimizer.state_dict(), path)),
            ],
            "gate": [(path, lambda p: p.write_bytes(best)) for path in copies_of_best],
        }
        writes = [
            (path, write)
            for step, step_writes in files.items()
            for path, write in step_writes
            if step == done or not path.is_file()
        ]
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
        writes += [
            (self.ckpt / "state.json", lambda p: p.write_text(json.dumps(state) + "\n")),
            (self.out / "metrics.json", lambda p: p.write_text(json.dumps(self.metrics, indent=1) + "\n")),
        ]
        commit_files(self.ckpt / JOURNAL, writes)
        note_saving(self.out)  # a stop from here on names the folder and --resume

    def load_state(self) -> None:
        """The last whole checkpoint's state (a commit a kill interrupted is carried out first)."""
        finish_commit(self.ckpt / JOURNAL, leftovers=self.checkpoint_files())
        path = self.ckpt / "state.json"
        if not path.is_file():
            raise CliError(f"--resume: no checkpoint in {str(self.ckpt)!r} (no state.json)")
        state = json.loads(path.read_text())
        self.iteration, self.step = int(state["iteration"]), state["step"]
        self.rng.bit_generator.state = state["rng"]
        self.row, self.metrics = state["row"], state["metrics"]
        self.positions, self.accepted = int(state["positions"]), int(state["accepted"])
        self.pieces = state.get("pieces", [])

    def checkpoint_files(self) -> list[Path]:
        """The files a checkpoint always names (snapshots aside)."""
        names = ("buffer.npz", "learner.zip", "optimizer.pt", "best.zip", "state.json")
        return [self.ckpt / name for name in names] + [self.out / "best.zip", self.out / "metrics.json"]

    def begin_piece(self, resumed: bool) -> None:
        """Start timing this invocation (a new piece of the run) from the current iteration."""
        self.t_start = time.perf_counter()
        self.pieces.append({"resumed": resumed, "from_iteration": self.iteration, "wall_seconds": 0.0})

    def pieces_so_far(self) -> list[dict[str, Any]]:
        """The pieces with this one's wall time and iteration reached brought up to date."""
        if self.pieces:
            self.pieces[-1].update(
                to_iteration=self.iteration, wall_seconds=round(time.perf_counter() - self.t_start, 3)
            )
        return self.pieces

    def wall_seconds(self) -> float:
        """Wall time of the whole run so far, over all its pieces (each to the millisecond, so that
        even a short step counts against ``max_total_wall_minutes``)."""
        return float(sum(p["wall_seconds"] for p in self.pieces_so_far()))


@dataclass
class Learning:
    """What the steps change besides the run's counters; a checkpoint saves each part."""

    learner: Any  # the MaskablePPO network being trained
    best: bytes  # the gated network, which plays self-play, as the bytes of its .zip
    buffer: ReplayBuffer
    optimizer: torch.optim.Optimizer

    def save(self, run: Run, done: str) -> None:
        """The checkpoint after step ``done`` (:meth:`Run.save`)."""
        run.save(self.learner, self.best, self.optimizer, self.buffer, done)


def start_learning(run: Run, resume: bool, log: Any) -> Learning:
    """A new run's network, buffer and Adam (``init``), or, resuming, the checkpoint's with its state."""
    cfg = run.cfg
    obs_dim, num_actions = game_sizes(cfg)
    if not resume:  # writes nothing: search_train claims the folder (an earlier run's files go) after this
        learner = initial_model(cfg)
        buffer = ReplayBuffer(cfg.buffer.capacity, obs_dim, num_actions, aux=cfg.train.aux_coef > 0)
        return Learning(learner, model_bytes(learner), buffer, make_optimizer(learner.policy, cfg))
    run.load_state()
    learner = load_learner(run.ckpt / "learner.zip", cfg)
    best = (run.ckpt / "best.zip").read_bytes()
    buffer = ReplayBuffer.load(
        run.ckpt / "buffer.npz", cfg.buffer.capacity, obs_dim, num_actions, aux=cfg.train.aux_coef > 0
    )
    optimizer = resume_optimizer(learner.policy, cfg, run.ckpt / "optimizer.pt")
    log(f"resumed at iteration {run.iteration} ({run.step}), {buffer.size:,} positions in the buffer")
    return Learning(learner, best, buffer, optimizer)


# ---------------------------------------------------------------------------
# Where the games run


def start_ray(backend: str, address: str | None, workers: int) -> bool:
    """Connect to Ray once for the whole run (``map_jobs`` then reuses it instead of starting one a step).

    Returns whether this call started it (and so must shut it down)."""
    if backend != "ray":
        return False
    return connect_ray(workers, address)


@dataclass
class Workers:
    """Where a run's games are played: ``count`` local processes (one pool for the whole run: workers
    start, with torch and numba's cache, once and not every iteration) or Ray."""

    count: int
    backend: str
    address: str | None
    pool: LocalPool | None = None  # replaces a worker that dies: a lost self-play job runs again
    ray_here: bool = False  # this run started Ray, and shuts it down

    @classmethod
    def start(cls, count: int, backend: str, address: str | None) -> Workers:
        ray_here = start_ray(backend, address, count)
        pool = local_pool(count) if backend == "local" and count > 1 else None
        return cls(count, backend, address, pool, ray_here)

    def selfplay(self, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """:func:`training.expert_iteration.selfplay.selfplay_job` over ``jobs``, on every worker."""
        return map_jobs(selfplay_job, jobs, self.count, self.backend, self.address, pool=self.pool)

    def matches(self, jobs: list[dict[str, Any]]) -> list[MatchResult]:
        """:func:`training.expert_iteration.gate.match_job` over ``jobs``, on the workers that play self-play.

        Why there: in the main process they ran on one core while the other waited; the pool is
        kept for the whole run, so they start no process. Each job carries its seeds, so the games
        are the same wherever they run."""
        return map_jobs(match_job, jobs, self.count, self.backend, self.address, pool=self.pool)

    def stop(self, now: bool) -> None:
        """End the pool (``now``: at once, not after the workers' current jobs) and the Ray this run started."""
        if self.pool is not None:
            stop_pool(self.pool, now=now)
        if self.ray_here:
            import ray

            ray.shutdown()


# ---------------------------------------------------------------------------
# The steps


@dataclass
class Session:
    """One invocation's means: where games run and the network trains, its clock, its outputs."""

    workers: Workers
    device: torch.device
    budget: WallBudget
    writer: Any  # TensorBoard's SummaryWriter
    bar: Progress
    log: Callable[..., Any]


def selfplay_step(run: Run, learning: Learning, session: Session) -> None:
    """The iteration's self-play games (with the gated network) into the buffer; the learner is scored
    on their positions first, which it has not trained on."""
    cfg, it = run.cfg, run.iteration
    t0 = time.perf_counter()
    jobs = selfplay_jobs(
        learning.best,
        it,
        cfg.seed,
        cfg.selfplay.games,
        cfg.selfplay.games_per_job,
        cfg.player_counts,
        tuple(cfg.modules),
        cfg.selfplay.model_dump(),
    )
    parts = session.workers.selfplay(jobs)
    data = concat([p["positions"] for p in parts])
    seconds = time.perf_counter() - t0
    records = [r for p in parts for r in p["records"]]
    run.row = {
        "iteration": it,
        "positions": count(data),
        "positions_per_s": count(data) / seconds,
        "selfplay_seconds": seconds,
        "positions_per_game": float(np.mean([r["positions"] for r in records])),
        "truncated": sum(r["truncated"] for r in records),
        **opponent_win_rates(records, cfg.player_counts),
    }
    if not run.warned_truncation:  # once a piece: the same config truncates every iteration
        run.warned_truncation = warn_truncation(run.row["truncated"], len(records), cfg, session.log)
    policy, weight = learning.learner.policy, cfg.train.search_value_weight
    new = evaluate_positions(policy, data, torch.device("cpu"), weight)
    run.row.update({f"new_{k}": v for k, v in new.items()})
    if cfg.eval.winner_pick:
        run.row.update({f"new_{k}": v for k, v in winner_pick(policy, records).items()})
    learning.buffer.add(data)
    run.positions += count(data)
    run.step = "train"


def train_step(run: Run, learning: Learning, session: Session) -> None:
    """``train.epochs`` passes over the buffer, once it holds ``train.min_positions``."""
    cfg = run.cfg
    t0 = time.perf_counter()
    if learning.buffer.size >= cfg.train.min_positions:
        run.row.update(
            train_network(
                learning.learner.policy,
                learning.optimizer,
                learning.buffer,
                cfg,
                run.rng,
                session.device,
                session.budget,
            )
        )
    run.row["train_seconds"] = time.perf_counter() - t0
    run.step = "gate"


def gate_step(run: Run, learning: Learning, session: Session) -> None:
    """The gate and evaluations (:func:`training.expert_iteration.gate.gate_and_evaluate`); ends the iteration."""
    it = run.iteration
    candidate = model_bytes(learning.learner)
    trained = "train_batches" in run.row
    learning.best, row = gate_and_evaluate(
        run.cfg, it, candidate, learning.best, trained, session.workers.matches, session.log
    )
    run.row.update(row)
    run.accepted += row.get("gate_accepted", 0)
    log_iteration(session.writer, run.row, it)
    run.row["wall_seconds"] = run.wall_seconds()  # the run's time so far, all pieces
    run.metrics.append(run.row)
    run.row, run.step, run.iteration = {}, STEPS[0], it + 1


STEP_FUNCTIONS: dict[str, Callable[[Run, Learning, Session], None]] = {
    "selfplay": selfplay_step,
    "train": train_step,
    "gate": gate_step,
}


def step_note(run: Run, learning: Learning) -> str:
    """What the progress bar says of the step about to run."""
    what = {
        "selfplay": "self-play",
        "train": f"training on {learning.buffer.size:,} positions",
        "gate": "gate",
    }
    return f" | iteration {run.iteration}: {what[run.step]}"


def run_steps(run: Run, learning: Learning, session: Session) -> bool:
    """Steps, each checkpointed, until ``iterations`` are done; True if the wall budget stopped them first."""
    # a resumed run already past its total does nothing
    spent = total_spent(run) if run.iteration < run.cfg.iterations else None
    while spent is None and run.iteration < run.cfg.iterations:
        done = run.step
        session.bar.update(run.iteration, step_note(run, learning))
        STEP_FUNCTIONS[done](run, learning, session)
        learning.save(run, done)
        if run.iteration < run.cfg.iterations:
            spent = "max_wall_minutes reached" if session.budget.expired() else total_spent(run)
    if spent is not None:
        session.log(f"{spent}: stopping at iteration {run.iteration} (next step: {run.step})")
    return spent is not None


def total_spent(run: Run) -> str | None:
    """Why the whole run's limit over all its pieces (``max_total_wall_minutes``) stops it, if it does."""
    total = run.cfg.max_total_wall_minutes
    if total is not None and run.wall_seconds() >= 60.0 * total:
        return f"max_total_wall_minutes reached ({run.wall_seconds() / 3600:.2f} hours over all pieces)"
    return None


# ---------------------------------------------------------------------------
# Metrics and messages


def log_iteration(writer: Any, row: dict[str, Any], iteration: int) -> None:
    """An iteration's numeric metrics as TensorBoard scalars (:func:`tb_name` groups them)."""
    for key, value in row.items():
        if isinstance(value, (int, float)) and key != "iteration":
            writer.add_scalar(tb_name(key), value, iteration)
    writer.flush()


def tb_name(key: str) -> str:
    """``train_policy_loss`` -> ``train/policy_loss``: TensorBoard groups by the first word."""
    head, _, rest = key.partition("_")
    return f"{head}/{rest}" if rest and head in ("train", "new", "gate", "eval") else f"selfplay/{key}"


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


# ---------------------------------------------------------------------------
# The run


def prepare_torch(cfg: SearchTrainConfig) -> torch.device:
    """torch's threads and arithmetic for the run; the device the network trains on."""
    torch.set_num_threads(cfg.torch_threads)
    # subnormal weights (weight decay on weights that never get a gradient) slow CPU arithmetic
    # many times over; flushed to zero, training never makes them (agents.nets.numba_net.flush_subnormals)
    torch.set_flush_denormal(True)
    return pick_device(cfg.device)


@contextmanager
def open_session(
    run: Run,
    workers: int,
    backend: str,
    address: str | None,
    device: torch.device,
    budget: WallBudget,
    progress: bool,
    log: Any,
) -> Iterator[Session]:
    """TensorBoard, the workers and the progress bar for one invocation, closed however it ends
    (stopped by Ctrl-C, SIGTERM or an error: the workers end now, not after their current job)."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run.out / "tb"))
    pool = Workers.start(workers, backend, address)
    bar = Progress(run.cfg, run.iteration, budget, progress)
    finished = False
    try:
        yield Session(pool, device, budget, writer, bar, log)
        finished = True
    finally:
        bar.close()
        writer.close()
        pool.stop(now=not finished)


def summarise(run: Run, learning: Learning, session: Session, stopped: bool) -> dict[str, Any]:
    """The invocation's summary, written to ``summary.json`` and said in one line."""
    total = run.wall_seconds()  # times the last piece once; the pieces listed below are that reading
    summary = {
        "iterations": run.iteration,
        "next_step": run.step,
        "stopped_by_time_limit": stopped,
        "positions": run.positions,
        "accepted": run.accepted,
        "buffer_size": learning.buffer.size,
        "wall_seconds": time.perf_counter() - run.t_start,  # this piece
        "total_wall_seconds": total,
        "pieces": run.pieces,
        "device": str(session.device),
        "backend": session.workers.backend,
        "workers": session.workers.count,
        "result": str(run.out / "best.zip"),
    }
    (run.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    session.log(
        f"done: {run.iteration} iterations, {run.positions:,} positions, {run.accepted} networks accepted; "
        f"result {run.out / 'best.zip'} (ppo:PATH or az:PATH)\nbenchmark it: python -m training.benchmark "
        f"az:{run.out / 'best.zip'} --quick --out {run.out / 'card'}"
    )
    return summary


def search_train(
    cfg: SearchTrainConfig,
    resume: bool = False,
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    progress: bool = True,
    log: Any = print,
    force: bool = False,
) -> dict[str, Any]:
    """Run (or continue) expert iteration; returns the summary also written to ``summary.json``.

    A new run into an ``output_dir`` that holds a run is refused unless ``force`` empties it first
    (:func:`training.common.run_folder.claim_run_folder`); ``resume`` goes on with it."""
    import yaml

    check_backend(backend, address, workers)
    budget = WallBudget(cfg.max_wall_minutes)
    device = prepare_torch(cfg)
    run = Run(cfg)
    if run.out.exists() and not run.out.is_dir():
        raise ConfigError(f"output_dir: {str(run.out)!r} exists and is not a directory")
    learning = start_learning(run, resume, log)  # checks init, or the checkpoint's game
    if claim_run_folder(run.out, resume, force, SEARCH_RUN):  # a folder of a run: refused, or --force
        empty_run_folder(run.out, SEARCH_RUN)  # its checkpoint files too, so none is taken for this run's
    run.out.mkdir(parents=True, exist_ok=True)
    (run.out / "config.yaml").write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
    with open_session(run, workers, backend, address, device, budget, progress, log) as session:
        run.begin_piece(resume)
        stopped = run_steps(run, learning, session)
        session.bar.update(run.iteration, "")
    return summarise(run, learning, session, stopped)
