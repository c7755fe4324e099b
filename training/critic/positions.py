"""The games a critic refit learns from: the network alone in every seat, a few decisions kept per game.

Why games of the network alone: they cost about a thousandth of a searched game (one network call a
move, 36,000 decisions a second in one process), so the critic can see hundreds of thousands of
outcomes where expert iteration's self-play gives it a few thousand a minute; and drawing a few
decisions per game keeps the targets of one batch from being one game's result over and over.
Game ``g`` of ``n`` players is dealt with seed ``seed + 10**9 * n + g`` (the held-out games'
:data:`VALIDATION_SEED_OFFSET` further on) in jobs of ``games_per_job`` games, so the same config
gives the same positions with any number of workers or backend.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from training.critic.config import CriticFitConfig
from training.matches.value_scores import Record

#: Offset of the held-out games' seeds from the training games' (no deal in both sets).
VALIDATION_SEED_OFFSET = 10**12
#: Largest rounding of a stored observation value (the turn fraction's; every count is exact).
FLOAT16_TOLERANCE = 1e-3


@dataclass(frozen=True)
class GamesJob:
    """``count`` games of ``players`` from deal seed ``first_seed``; ``per_game`` decisions kept of each
    (0: every decision, as a :class:`Record` for scoring)."""

    network: bytes
    players: int
    modules: tuple[str, ...]
    first_seed: int
    count: int
    max_turns: int
    per_game: int
    playouts: int = 0


@dataclass
class Positions:
    """Training rows: every seat's view of a drawn decision and every seat's result (+1 sole winner,
    -1 loser, 0 shared); ``obs`` is float16: half the memory, exact for the observation's counts
    (only the turn fraction rounds, by less than :data:`FLOAT16_TOLERANCE`)."""

    obs: np.ndarray  # [N, n, D] float16
    result: np.ndarray  # [N, n] float32
    games: int  # games played
    truncated: int  # games that reached max_turns (left out)


def split_games(total: int, counts: list[int]) -> dict[int, int]:
    """``total`` games shared over the player counts, the first counts taking the remainder."""
    base, extra = divmod(total, len(counts))
    return {n: base + (i < extra) for i, n in enumerate(counts)}


def jobs_for(cfg: CriticFitConfig, network: bytes, validation: bool) -> list[GamesJob]:
    """The config's training (or held-out) games as jobs, in a fixed order."""
    total = cfg.validation_games if validation else cfg.games
    offset = VALIDATION_SEED_OFFSET if validation else 0
    jobs = []
    for players, games in split_games(total, cfg.player_counts).items():
        first = cfg.seed + offset + 10**9 * players
        for start in range(0, games, cfg.games_per_job):
            jobs.append(
                GamesJob(
                    network,
                    players,
                    tuple(cfg.modules),
                    first + start,
                    min(cfg.games_per_job, games - start),
                    cfg.max_turns,
                    0 if validation else cfg.positions_per_game,
                    0 if validation else cfg.playouts,
                )
            )
    return jobs


def play_job(job: GamesJob) -> Record | Positions:
    """Play one job's games (run in a worker): a :class:`Record` of every decision, or drawn :class:`Positions`."""
    import torch

    from training.expert_iteration.network import cached_agent
    from training.matches.value_report import play_games

    torch.set_num_threads(1)  # one thread per worker process: two workers on two cores, not four threads

    agent = cached_agent(job.network, "ppo", job.first_seed)
    agent.check_game(job.players, job.modules)
    record = play_games(
        (agent, agent), job.count, job.first_seed, batch=500, max_turns=job.max_turns,
        players=job.players, modules=job.modules, keep_states=job.playouts > 0,
    )  # fmt: skip
    if job.per_game == 0:
        return record
    rng = np.random.default_rng([job.first_seed, job.count])
    if job.playouts == 0:
        return draw_positions(record, job.per_game, rng)
    return draw_positions(record, job.per_game, rng, lambda rows: playout_targets(record, rows, agent, job))


def playout_targets(record: Record, rows: np.ndarray, agent: object, job: GamesJob) -> np.ndarray:
    """``[len(rows), n]``: each seat's mean result over its game and ``job.playouts`` playouts of decision
    ``rows[i]`` by the network in every seat (:func:`training.matches.playouts.playout_values`)."""
    from training.matches.playouts import playout_values

    seating = np.zeros((rows.size, job.players), dtype=np.int64)  # the one agent in every seat
    mean = playout_values(
        record.states[rows], record.mover[rows], seating, (agent,), job.playouts, job.first_seed
    )
    return (record.result[record.game[rows]] + job.playouts * mean) / (job.playouts + 1)


def draw_positions(
    record: Record,
    per_game: int,
    rng: np.random.Generator,
    targets: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Positions:
    """``per_game`` decisions drawn without replacement from each finished game (all of a shorter one);
    their targets are their games' results, or ``targets(rows)`` of the drawn record rows."""
    finished = ~np.isnan(record.result[:, 0])
    rows = np.flatnonzero(finished[record.game])
    order = np.lexsort((rng.random(rows.size), record.game[rows]))  # by game, shuffled within each
    rows = rows[order]
    game = record.game[rows]
    starts = np.flatnonzero(np.r_[True, game[1:] != game[:-1]])
    rank = np.arange(rows.size) - np.repeat(starts, np.diff(np.r_[starts, rows.size]))
    keep = np.sort(rows[rank < per_game])
    obs = record.obs[keep]
    obs16 = obs.astype(np.float16)
    if obs.size and np.abs(obs16.astype(np.float32) - obs).max() > FLOAT16_TOLERANCE:
        raise ValueError(
            "an observation value does not fit float16; the positions cannot be stored compactly"
        )
    result = record.result[record.game[keep]] if targets is None else targets(keep)
    return Positions(
        obs=obs16,
        result=np.asarray(result, dtype=np.float32),
        games=int(record.result.shape[0]),
        truncated=int((~finished).sum()),
    )


def join_positions(parts: list[Positions]) -> Positions:
    """One :class:`Positions` of several jobs' (of one player count: the views must have one shape)."""
    return Positions(
        obs=np.concatenate([p.obs for p in parts]),
        result=np.concatenate([p.result for p in parts]),
        games=sum(p.games for p in parts),
        truncated=sum(p.truncated for p in parts),
    )


def collect(
    cfg: CriticFitConfig, network: bytes, workers: int, backend: str, address: str | None
) -> tuple[dict[int, Record], dict[int, Positions]]:
    """Per player count: the held-out games joined in one :class:`Record`, and the training
    :class:`Positions`; both sets are jobs of one :func:`~training.common.jobs.map_jobs` call, so the
    workers start once."""
    from training.common.jobs import map_jobs

    jobs = jobs_for(cfg, network, validation=True) + jobs_for(cfg, network, validation=False)
    held_out: dict[int, list[Record]] = {}
    training: dict[int, list[Positions]] = {}
    for job, res in zip(jobs, map_jobs(play_job, jobs, workers, backend, address), strict=True):
        (held_out if job.per_game == 0 else training).setdefault(job.players, []).append(res)
    return (
        {n: join_records(parts) for n, parts in held_out.items()},
        {n: join_positions(parts) for n, parts in training.items()},
    )


def join_records(records: list[Record]) -> Record:
    """One :class:`Record` of several jobs' held-out games (game numbers made distinct)."""
    offsets = np.cumsum([0] + [r.result.shape[0] for r in records[:-1]])
    return Record(
        game=np.concatenate([r.game + o for r, o in zip(records, offsets, strict=True)]),
        turn=np.concatenate([r.turn for r in records]),
        mover=np.concatenate([r.mover for r in records]),
        prestige=np.concatenate([r.prestige for r in records]),
        obs=np.concatenate([r.obs for r in records]),
        result=np.concatenate([r.result for r in records]),
        seating=np.concatenate([r.seating for r in records]),
        modules=records[0].modules,
    )
