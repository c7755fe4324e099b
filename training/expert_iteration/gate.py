"""The matches of expert iteration: the gate that picks the self-play network, and the fixed opponents.

Why apart from the loop: whether a trained network replaces the one that plays
self-play is the decision that shapes a run, and it is a rule about scores
(:func:`gate_score`: win rates on the 2-player scale, pooled over the player
counts; a truncated game a draw, :func:`gate_rate`), not about steps or files.
The matches are jobs for :func:`training.common.jobs.map_jobs` (:func:`match_jobs`,
played by :func:`match_job`, summed by :func:`merge_by`); the caller says where
they run. The self-play games against fixed opponents are scored here too
(:func:`opponent_win_rates`): a free evaluation over more games.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.runner import win_shares
from training.common.jobs import job_seed
from training.expert_iteration.config import SearchTrainConfig
from training.expert_iteration.network import cached_agent
from training.matches.match import MatchResult, play_match, seated_agent

GATE_CHUNK = 10  # gate / evaluation games per job

#: Plays match jobs (:func:`match_job` on some backend), results in job order.
PlayMatches = Callable[[list[dict[str, Any]]], list[MatchResult]]


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


def match_job(job: dict[str, Any]) -> MatchResult:
    """Seat-rotated games (:func:`training.matches.match.play_match`) of a network against a network or a spec."""
    import torch

    torch.set_num_threads(1)
    cand = cached_agent(job["candidate"], job["mode"], job["seed"], **job["options"])
    if isinstance(job["opponent"], bytes):
        opp = cached_agent(job["opponent"], "az", job["seed"] + 1, **job["options"])
    else:
        opp = seated_agent(job["opponent"], 1, job["seed"] + 1)
    return play_match(
        cand,
        opp,
        job["games"],
        job["players"],
        seed=job["seed"],
        opponent_name=job["name"],
        first_game=job["first_game"],
        max_turns=job["max_turns"],
        modules=tuple(job["modules"]),
    )


def merge_by(jobs: list[dict[str, Any]], results: list[MatchResult]) -> dict[tuple[str, int], MatchResult]:
    """Results of the chunks summed per (name, player count)."""
    out: dict[tuple[str, int], MatchResult] = {}
    for job, r in zip(jobs, results, strict=True):
        key = (job["name"], job["players"])
        out[key] = r if key not in out else out[key].merge(r)
    return out


def iteration_matches(
    cfg: SearchTrainConfig, iteration: int, candidate: bytes, best: bytes, trained: bool
) -> list[dict[str, Any]]:
    """The iteration's match jobs: the gate (if the learner trained) and, every ``eval.every``, the
    fixed opponents in each mode."""
    jobs = []
    if trained and cfg.gate.games > 0:
        jobs += match_jobs(candidate, best, "gate", "az", cfg.gate.sims, cfg.gate.games, cfg, (iteration, 1))
    if cfg.eval.every and (iteration + 1) % cfg.eval.every == 0:
        for k, spec in enumerate(cfg.eval.opponents):
            for mode in cfg.eval.modes:
                key = (iteration, 2, k, cfg.eval.modes.index(mode))
                jobs += match_jobs(
                    candidate, spec, f"{spec}_{mode}", mode, cfg.eval.sims, cfg.eval.games, cfg, key
                )
    return jobs


def gate_verdict(
    cfg: SearchTrainConfig, iteration: int, results: dict[tuple[str, int], MatchResult], log: Any
) -> tuple[bool, dict[str, Any]]:
    """Whether the learner passes the gate (no gate games: it does), and the gate's metrics."""
    rates = {n: gate_rate(r) for (name, n), r in results.items() if name == "gate"}
    score = gate_score(rates) if rates else None
    accept = score is None or score >= cfg.gate.threshold
    row: dict[str, Any] = {}
    if rates:
        row["gate_win_rate"] = float(np.mean(list(rates.values())))
        row["gate_score"] = score
        if len(rates) > 1:
            row.update({f"gate_win_rate_{n}p": rate for n, rate in rates.items()})
    row["gate_accepted"] = int(accept)
    said = ", ".join(f"{rate:.1%} with {n} players" for n, rate in rates.items())
    if len(rates) > 1:
        said += f": {score:.1%} on the 2-player scale"
    log(
        f"[iteration {iteration}] gate: "
        + (f"{said} (needs {cfg.gate.threshold:.1%})" if rates else "no games")
        + (" -> accepted" if accept else " -> rejected, the previous network is kept")
    )
    return accept, row


def gate_and_evaluate(
    cfg: SearchTrainConfig,
    iteration: int,
    candidate: bytes,
    best: bytes,
    trained: bool,
    play: PlayMatches,
    log: Any,
) -> tuple[bytes, dict[str, Any]]:
    """The gate (``candidate``, the learner, against ``best``, the self-play network) and, every
    ``eval.every``, the fixed opponents, all played by one ``play`` call (so worker processes start once).

    Returns the self-play network of the next iteration and the iteration's match metrics.
    """
    jobs = iteration_matches(cfg, iteration, candidate, best, trained)
    results = merge_by(jobs, play(jobs)) if jobs else {}
    row: dict[str, Any] = {}
    if trained:
        accept, row = gate_verdict(cfg, iteration, results, log)
        if accept:
            best = candidate
    for (name, n), r in results.items():
        if name != "gate":
            suffix = f"_{n}p" if len(cfg.player_counts) > 1 else ""
            row[f"eval_win_rate_vs_{name}{suffix}"] = r.win_rate
            log(f"[iteration {iteration}] {r}")
    return best, row


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
