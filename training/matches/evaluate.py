"""Evaluation of one candidate against opponents, per game configuration, over workers or Ray.

Why: a candidate is judged in chunks of :data:`CHUNK_GAMES` seat-rotated games
(:func:`training.matches.match.play_match`), each seeded from ``(seed, opponent,
chunk)``, so the results are the same for any number of workers and on either
backend. Every agent is built once per process (:func:`seated_agent`) and
reseeded per chunk. Usage and rules: docs/tournaments.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from agents.nets.checkpoint import model_zip_problem
from agents.registry import checkpoint_of
from training.common.cli import CliError
from training.common.games import check_plays, config_label, plays
from training.common.jobs import job_seed, map_jobs
from training.common.progress import JobLog, claim_folder, needs_keys, open_run, save_text
from training.common.provenance import run_provenance
from training.matches.match import MatchResult, play_match, seated_agent

CHUNK_GAMES = 100  # games per job: the unit of seeding and of work sent to a worker
CANDIDATE, OPPONENT = 0, 1  # the seat each role's agent is cached for (:func:`seated_agent`)


def candidate_spec(spec: str, deterministic: bool) -> tuple[str, dict[str, Any]]:
    """The spec and options :func:`agents.build` gets for a candidate: a checkpoint
    (:func:`agents.registry.checkpoint_of`) is ``ppo:PATH`` played ``deterministic`` (argmax) or sampled;
    any other spec as is, without options."""
    path = checkpoint_of(spec)
    return (spec, {}) if path is None else (f"ppo:{path}", {"deterministic": deterministic})


def play_chunk(job: dict[str, Any]) -> MatchResult:
    """Worker entry point: one chunk of games of :func:`evaluation_jobs`."""
    import torch

    torch.set_num_threads(1)
    spec, options = candidate_spec(job["candidate"], job["deterministic"])
    cand = seated_agent(spec, CANDIDATE, job["seed"], **options)
    opp = seated_agent(job["opponent"], OPPONENT, job["seed"] + 1)
    modules = tuple(job.get("modules", ()))
    check_plays(cand, job["candidate"], job["players"], modules)
    check_plays(opp, job["opponent"], job["players"], modules)
    return play_match(
        cand,
        opp,
        job["games"],
        job["players"],
        seed=job["seed"],
        opponent_name=job["opponent"],
        first_game=job["first_game"],
        modules=modules,
        candidate_name=job["candidate"],
    )


def player_list(players: int | list[int]) -> list[int]:
    """``3`` -> ``[3]``; a list stays as given (the order of the report)."""
    return [int(players)] if isinstance(players, (int, np.integer)) else [int(n) for n in players]


def evaluation_jobs(
    candidate: str,
    opponents: list[str],
    games: int,
    players: int | list[int],
    seed: int,
    deterministic: bool,
    modules: tuple[str, ...] = (),
    skip: dict[tuple[int, str], str] | None = None,
    chunk_games: int = CHUNK_GAMES,
) -> list[dict[str, Any]]:
    """Chunks of ``chunk_games`` games per configuration and opponent, seeded from ``(seed, opponent, chunk)``.

    ``skip`` (from :func:`sit_outs`) leaves out the (player count, opponent) pairs that cannot be played.

    The split does not depend on the number of workers or the backend, so
    neither do the results; it does depend on ``chunk_games`` (smaller chunks keep more workers
    busy: 1000 games are 10 jobs of 100, or 40 of 25, and the games are other deals).
    """
    if chunk_games < 1:
        raise ValueError(f"chunk_games must be >= 1, got {chunk_games}")
    return [
        {
            "candidate": candidate,
            "opponent": opp,
            "opponent_index": k,
            "games": min(chunk_games, games - first),
            "players": n,
            "modules": list(modules),
            "seed": job_seed(seed, k, c),
            "first_game": first,
            "deterministic": deterministic,
        }
        for n in player_list(players)
        for k, opp in enumerate(opponents)
        if (n, opp) not in (skip or {})
        for c, first in enumerate(range(0, games, chunk_games))
    ]


def sit_outs(
    opponents: list[str], players: int | list[int], modules: tuple[str, ...] = ()
) -> dict[tuple[int, str], str]:
    """``{(player count, opponent): why}`` for every opponent that cannot play that configuration."""
    built = {spec: seated_agent(spec, OPPONENT) for spec in opponents}
    out = {}
    for n in player_list(players):
        for spec, agent in built.items():
            reason = plays(agent, spec, n, modules)
            if reason is not None:
                out[(n, spec)] = reason
    return out


def evaluate(
    candidate: str,
    opponents: list[str],
    games: int,
    players: int | list[int] = 2,
    workers: int = 1,
    seed: int = 0,
    deterministic: bool = True,
    backend: str = "local",
    address: str | None = None,
    modules: tuple[str, ...] = (),
    out: str | Path | None = None,
    resume: bool = False,
    chunk_games: int = CHUNK_GAMES,
    left_out: dict[int, str] | None = None,
    on_chunk: Callable[[dict[str, Any], MatchResult], None] | None = None,
) -> list[MatchResult]:
    """Evaluate a candidate spec / model path against each opponent, per player count (in that order).

    Chunks of games are spread over workers; one :class:`MatchResult` per
    (player count, opponent) that can be played, with its ``players`` and
    ``modules`` (opponents that cannot play a configuration sit it out: :func:`sit_outs`).
    With ``out``, each chunk is saved there as it finishes (:data:`PROGRESS`, and
    ``manifest.json``); ``resume`` plays only the chunks missing from it. ``left_out``:
    ``{opponent index: why}`` of opponents not played (a benchmark reference's own card leaves
    itself out); the others keep the seeds they have with it in the list. ``on_chunk(job, result)``
    is called in this process as each chunk of games finishes (a progress bar), and at once for
    each chunk a resumed run already has.
    """
    skip = sit_outs(opponents, players, tuple(modules))
    for k, why in (left_out or {}).items():
        skip.update({(n, opponents[k]): why for n in player_list(players)})
    jobs = evaluation_jobs(
        candidate, opponents, games, players, seed, deterministic, tuple(modules), skip, chunk_games
    )
    if out is None:
        parts = map_jobs(play_chunk, jobs, workers, backend, address, on_result=on_chunk)
    else:
        manifest = {
            "command": "evaluate",
            "candidate": candidate,
            "opponents": list(opponents),
            "games": games,
            "players": player_list(players),
            "modules": list(modules),
            "seed": seed,
            "deterministic": deterministic,
        }
        if chunk_games != CHUNK_GAMES:  # (the default is left out, so older folders still resume)
            manifest["chunk_games"] = chunk_games
        if left_out:
            manifest["left_out"] = {str(k): why for k, why in sorted(left_out.items())}
        manifest.update(run_provenance([candidate, *opponents], [(n, modules) for n in player_list(players)]))
        parts = play_saved(jobs, workers, backend, address, Path(out), manifest, resume, on_chunk)
    results = []
    for n in player_list(players):
        for k, opp in enumerate(opponents):
            if (n, opp) in skip:
                continue
            mine = [
                part
                for job, part in zip(jobs, parts, strict=True)
                if job["opponent_index"] == k and job["players"] == n
            ]
            total = mine[0]
            for part in mine[1:]:
                total = total.merge(part)
            results.append(total)
    return results


PROGRESS = "chunks.progress.jsonl"  # an evaluation's finished chunks, one a line, as they finish


def play_saved(
    jobs: list[dict[str, Any]],
    workers: int,
    backend: str,
    address: str | None,
    out: Path,
    manifest: dict[str, Any],
    resume: bool,
    on_chunk: Callable[[dict[str, Any], MatchResult], None] | None = None,
) -> list[MatchResult]:
    """The chunks' results, each saved to ``out`` as it finishes; ``resume`` plays only the missing.

    ``on_chunk``: as in :func:`evaluate`, for the chunks already saved and then each one played."""
    open_run(out, manifest, resume)
    log = JobLog(out / PROGRESS, resume, check=needs_keys(*(f.name for f in fields(MatchResult))))
    key = {(j["players"], j["opponent_index"], j["first_game"]): i for i, j in enumerate(jobs)}

    def finished(job: dict[str, Any], result: MatchResult) -> None:
        log.add(key[(job["players"], job["opponent_index"], job["first_game"])], result.as_dict())
        if on_chunk is not None:
            on_chunk(job, result)

    for i, job in enumerate(jobs):  # what a resumed run already has counts as done at once
        if on_chunk is not None and i in log.done:
            on_chunk(job, match_result(log.done[i]))
    try:
        missing = [j for i, j in enumerate(jobs) if i not in log.done]
        map_jobs(play_chunk, missing, workers, backend, address, on_result=finished)
    finally:
        log.close()
    return [match_result(log.done[i]) for i in range(len(jobs))]


def match_result(saved: dict[str, Any]) -> MatchResult:
    """A :class:`MatchResult` back from its :meth:`~MatchResult.as_dict` (a saved chunk)."""
    values = {f.name: saved[f.name] for f in fields(MatchResult)}
    return MatchResult(**{**values, "modules": tuple(values["modules"])})


def check_players(
    candidate: str,
    opponents: list[str],
    players: list[int],
    modules: tuple[str, ...] = (),
    deterministic: bool = True,
) -> None:
    """Refuse, before any game, a candidate that cannot play every configuration, an opponent spec
    that does not build, and a configuration no opponent can play (messages name what differs)."""
    path = checkpoint_of(candidate)
    if path is not None:
        problem = model_zip_problem(path)
        if problem:
            raise CliError(f"candidate: {problem}")
    spec, options = candidate_spec(candidate, deterministic)
    agent = seated_agent(spec, CANDIDATE, **options)
    for n in players:  # the candidate must play every configuration: say what differs
        try:
            check_plays(agent, candidate, n, modules)
        except ValueError as exc:
            raise CliError(f"candidate {candidate!r} cannot play {config_label(n, modules)}: {exc}") from None
    skip = sit_outs(opponents, players, modules)
    for n in players:
        if all((n, spec) in skip for spec in opponents):
            reasons = "; ".join(skip[(n, spec)] for spec in opponents)
            raise CliError(f"--opponents: none can play {config_label(n, modules)} ({reasons})")


def run_evaluation(
    candidate: str,
    opponents: list[str],
    games: int,
    players: list[int],
    workers: int = 1,
    seed: int = 0,
    deterministic: bool = True,
    backend: str = "local",
    address: str | None = None,
    modules: tuple[str, ...] = (),
    json_path: str | Path | None = None,
    echo: Callable[[str], None] = print,
    out: str | Path | None = None,
    resume: bool = False,
    chunk_games: int = CHUNK_GAMES,
    force: bool = False,
) -> list[MatchResult]:
    """:func:`evaluate`, then the report per player count (who sat out and why) and, with
    ``json_path``, the results as JSON: what ``python -m training.evaluate`` prints and writes.
    With ``out`` the finished chunks and the results (``results.json``) go there too: a folder that
    holds games is refused unless ``resume`` goes on with them or ``force`` empties it first
    (:func:`~training.common.progress.claim_folder`)."""
    modules = tuple(modules)
    skip = sit_outs(opponents, players, modules)
    if out is not None:
        claim_folder(Path(out), resume, force)
    t0 = time.perf_counter()
    results = evaluate(
        candidate,
        opponents,
        games,
        players,
        workers,
        seed,
        deterministic,
        backend,
        address,
        modules,
        out,
        resume,
        chunk_games,
    )
    elapsed = time.perf_counter() - t0
    for n in players:
        game = "base game" if not modules else "modules " + "+".join(modules)
        echo(f"{candidate} ({n} players, {game}, seat-rotated, seed {seed}):")
        for r in results:
            if r.players == n:
                echo("  " + str(r))
        for spec in opponents:
            if (n, spec) in skip:
                echo(f"  vs {spec}: sits out ({skip[(n, spec)]})")
    echo(f"  ({elapsed:.1f} s)")
    text = json.dumps([r.as_dict() for r in results], indent=2) + "\n"
    if json_path:
        save_text(json_path, text)
    if out is not None:
        save_text(Path(out) / "results.json", text)
    return results
