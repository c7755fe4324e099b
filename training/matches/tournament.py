"""Round-robin tournaments between agents: the schedule, the games and every configuration's outputs.

Why: a table of agents plays the same deals in every seating, each game carrying
its own seeds, so the results are the same on every backend
(:mod:`training.common.jobs`) and for any number of workers. Schedule, fairness
and scoring are described in docs/tournaments.md; the statistics are
:mod:`training.matches.ratings`, the tables, CSV files and figure :mod:`training.matches.report`.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents import Agent, runner
from splendor_env import state as st
from splendor_env.env import raw_env
from splendor_env.records import write_records
from training.common.cli import CliError, check_game_args
from training.common.games import config_folder, config_label, plays
from training.common.jobs import check_backend, chunks, job_seed, map_jobs
from training.common.progress import JobLog, as_json, claim_folder, needs_keys, open_run, save_text
from training.common.provenance import run_provenance
from training.matches.match import seated_agent
from training.matches.report import format_tables, summarise, write_outputs


@dataclass(frozen=True)
class GameTask:
    """One game of the schedule (picklable, so it can go to a worker process)."""

    index: int
    table: int
    deal: int
    seating: int
    seed: int
    agent_ids: tuple[int, ...]
    specs: tuple[str, ...]
    agent_seeds: tuple[int, ...]
    max_turns: int = st.DEFAULT_MAX_TURNS
    modules: tuple[str, ...] = ()


# ---------------------------------------------------------------------------
# Schedule


def tables(num_agents: int, seats: int) -> list[tuple[int, ...]]:
    """Agent-index tuples, one per table (see docs/tournaments.md)."""
    if num_agents < 2:
        raise ValueError("a tournament needs at least two agents")
    if num_agents >= seats:
        return list(itertools.combinations(range(num_agents), seats))
    return [t for t in itertools.combinations_with_replacement(range(num_agents), seats) if len(set(t)) > 1]


def seatings(table: Sequence[int], all_permutations: bool = False) -> list[tuple[int, ...]]:
    """Seat orders of a table: cyclic rotations, or every distinct permutation."""
    if all_permutations:
        return sorted(set(itertools.permutations(table)))
    rots = [tuple(table[i:]) + tuple(table[:i]) for i in range(len(table))]
    return list(dict.fromkeys(rots))


def schedule(
    specs: Sequence[str],
    players: int,
    games: int,
    seed: int = 0,
    all_seatings: bool = False,
    max_turns: int = st.DEFAULT_MAX_TURNS,
    modules: Sequence[str] = (),
) -> list[GameTask]:
    """Every game of the round robin, in a deterministic order."""
    if players not in (2, 3, 4):
        raise ValueError(f"--players must be 2, 3 or 4, got {players}")
    if games < 1:
        raise ValueError(f"--games must be >= 1, got {games}")
    tasks: list[GameTask] = []
    for t, table in enumerate(tables(len(specs), players)):
        orders = seatings(table, all_seatings)
        deals = math.ceil(games / len(orders))
        for deal in range(deals):
            for k, order in enumerate(orders):
                tasks.append(
                    GameTask(
                        index=len(tasks),
                        table=t,
                        deal=deal,
                        seating=k,
                        seed=job_seed(seed, deal, bits=63),
                        agent_ids=order,
                        specs=tuple(specs[i] for i in order),
                        agent_seeds=tuple(job_seed(seed, t, deal, k, p, bits=63) for p in range(players)),
                        max_turns=max_turns,
                        modules=tuple(modules),
                    )
                )
    return tasks


# ---------------------------------------------------------------------------
# Playing


def play_game(task: GameTask, seat_agents: Sequence[Agent]) -> dict[str, Any]:
    """Play one game through the AEC env (:func:`agents.runner.play_game`); returns its record
    (see :mod:`training.records`) with the schedule's bookkeeping."""
    record = runner.play_game(
        seat_agents,
        task.seed,
        labels=task.specs,
        agent_seeds=task.agent_seeds,
        max_turns=task.max_turns,
        modules=task.modules,
        rng=np.random.default_rng([task.seed, task.index, 7]),
        game=f"game {task.index} of the schedule, seed {task.seed}",
    )
    return {
        **record,
        "index": task.index,
        "table": task.table,
        "deal": task.deal,
        "seating": task.seating,
        "agent_ids": list(task.agent_ids),
    }


def run_task(task: GameTask) -> dict[str, Any]:
    """Worker entry point: builds (once per process) and reuses one agent per (spec, seat)."""
    seat_agents = [seated_agent(spec, seat) for seat, spec in enumerate(task.specs)]
    return play_game(task, seat_agents)  # reseeds every seat from the task


def run_chunk(tasks: Sequence[GameTask]) -> list[dict[str, Any]]:
    """Worker entry point for a list of games (one round trip to a Ray worker for several games)."""
    return [run_task(task) for task in tasks]


def run_tasks(
    tasks: Sequence[GameTask],
    workers: int = 1,
    progress: bool = True,
    backend: str = "local",
    address: str | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Play all tasks on the chosen backend (:mod:`training.common.jobs`), results in task order.

    Every task carries its own seeds, so the records do not depend on the
    backend, the number of workers or which worker played which game.
    ``on_record`` is called with each record as its game's job finishes (to save it).
    """
    from tqdm import tqdm

    size = 1 if backend == "local" else max(1, min(25, len(tasks) // (4 * workers)))
    bar = tqdm(total=len(tasks), desc="games", unit="game", disable=not progress, file=sys.stderr)

    def finished(job: list[GameTask], part: list[dict[str, Any]]) -> None:
        bar.update(len(job))
        for record in part if on_record is not None else ():
            on_record(record)

    try:
        parts = map_jobs(run_chunk, chunks(tasks, size), workers, backend, address, on_result=finished)
    finally:
        bar.close()
    return [record for part in parts for record in part]


# ---------------------------------------------------------------------------
# Checks and the whole tournament


def check_inputs(
    specs: Sequence[str],
    players: int | Sequence[int],
    games: int,
    workers: int,
    seed: int,
    max_turns: int,
    out: str | Path | None,
    backend: str = "local",
    address: str | None = None,
    modules: Sequence[str] = (),
    resume: bool = False,
    force: bool = False,
) -> None:
    """Refuse bad arguments before any game is played or any file written (messages name the argument)."""
    counts = [players] if isinstance(players, int) else list(players)
    if len(specs) < 2:
        raise CliError(f"--agents needs at least two agent specs, got {len(specs)}")
    if len(set(specs)) != len(specs):
        raise CliError("--agents lists the same spec twice")
    check_game_args(counts, list(modules))
    for name, value, low in (("--games", games, 1), ("--seed", seed, 0), ("--max-turns", max_turns, 1)):
        if value < low:
            raise CliError(f"{name} must be >= {low}, got {value}")
    check_backend(backend, address, workers)
    if out is not None and Path(out).exists() and not Path(out).is_dir():
        raise CliError(f"--out {str(out)!r} exists and is not a directory")
    if resume and out is None:
        raise CliError("--resume needs --out, the folder of the run to resume")
    if force and out is None:
        raise CliError("--force needs --out, the folder to empty and start afresh")
    try:
        raw_env(num_players=counts[0], max_turns=max_turns, modules=tuple(modules))  # the env's own checks
    except ValueError as exc:
        raise CliError(str(exc)) from None
    for spec in specs:  # fail fast on a bad spec, before any process starts (built as run_task builds it)
        try:
            seated_agent(spec, 0)
        except ImportError as exc:
            raise CliError(f"--agents {spec!r}: {exc}") from None


def configurations(
    specs: Sequence[str], players: Sequence[int], modules: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Per player count: the agents that can play that game and those that sit out (with the reason)."""
    built = [seated_agent(spec, 0) for spec in specs]
    out = []
    for n in players:
        reasons = {spec: plays(agent, spec, n, modules) for spec, agent in zip(specs, built, strict=True)}
        out.append(
            {
                "players": n,
                "modules": list(modules),
                "config": config_label(n, modules),
                "agents": [s for s in specs if reasons[s] is None],
                "skipped": {s: r for s, r in reasons.items() if r is not None},
            }
        )
    return out


def run_tournament(
    specs: Sequence[str],
    players: int | Sequence[int] = 2,
    games: int = 100,
    workers: int = 1,
    seed: int = 0,
    out: str | Path | None = None,
    save_games: bool = False,
    all_seatings: bool = False,
    max_turns: int = st.DEFAULT_MAX_TURNS,
    progress: bool = True,
    echo: Callable[[str], None] | None = print,
    backend: str = "local",
    address: str | None = None,
    modules: Sequence[str] = (),
    resume: bool = False,
    force: bool = False,
) -> dict[str, Any]:
    """Play the round robin of every configuration and write the outputs; returns the summary.

    With one player count the summary (and ``--out``) is that configuration's,
    as before; with several, ``{"configurations": [...]}`` and one folder each.
    With ``out``, each game is saved there as it finishes (``games.progress.jsonl``
    per configuration, and ``manifest.json``); ``resume`` plays only the games missing
    from the folder of a run stopped with the same arguments, for the same tables. A folder that
    holds games is refused unless ``resume`` goes on with them or ``force`` empties it first
    (:func:`~training.common.progress.claim_folder`, once the agents are checked).
    """
    counts = [players] if isinstance(players, int) else list(players)
    modules = tuple(modules)
    check_inputs(
        specs, counts, games, workers, seed, max_turns, out, backend, address, modules, resume, force
    )
    configs = configurations(specs, counts, modules)
    if all(len(c["agents"]) < 2 for c in configs):
        reasons = "; ".join(f"{s}: {r}" for c in configs for s, r in c["skipped"].items())
        raise CliError(f"no configuration has two agents that can play it ({reasons})")
    if out is not None:
        claim_folder(Path(out), resume, force)
        manifest = {
            "command": "tournament",
            "agents": list(specs),
            "players": counts,
            "modules": list(modules),
            "games": games,
            "seed": seed,
            "all_seatings": all_seatings,
            "max_turns": max_turns,
        }
        manifest.update(run_provenance(specs, [(n, modules) for n in counts]))
        open_run(Path(out), manifest, resume)
    summaries = []
    for config in configs:
        where = (
            None
            if out is None
            else (
                Path(out)
                if len(configs) == 1
                else Path(out) / config_folder(config["players"], config["modules"])
            )
        )
        if echo is not None and len(configs) > 1:
            echo(f"\n== {config['config']} ==")
        if echo is not None:
            for spec, reason in config["skipped"].items():
                echo(f"{config['config']}: {spec} sits out: {reason}")
        if len(config["agents"]) < 2:
            summary = {**config, "games": 0, "note": "fewer than two agents can play this configuration"}
            if echo is not None:
                echo(f"{config['config']}: not played (fewer than two agents can play it)")
        else:
            summary = _run_config(
                config,
                games,
                workers,
                seed,
                where,
                save_games,
                all_seatings,
                max_turns,
                progress,
                echo,
                backend,
                address,
                resume,
            )
        summaries.append(summary)
    if len(configs) == 1:
        return summaries[0]
    result = {"configurations": summaries}
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        save_text(Path(out) / "summary.json", json.dumps(result, indent=2))
    return result


PROGRESS = "games.progress.jsonl"  # a configuration's finished games, one a line, as they finish
#: What the tables read from a saved game record (a resumed record lacking one is played again).
RECORD_KEYS = ("index", "num_players", "agent_ids", "winners", "prestige", "cards", "turns", "truncated")


def play_saved(
    tasks: Sequence[GameTask],
    workers: int,
    progress: bool,
    backend: str,
    address: str | None,
    out: Path | None,
    resume: bool,
) -> list[dict[str, Any]]:
    """:func:`run_tasks`, each record saved to ``out`` as it finishes; ``resume`` plays only the missing.

    Every record is used as it reads back from JSON, whether played now or before, so a
    resumed run's tables are those of an uninterrupted one.
    """
    if out is None:
        return [as_json(r) for r in run_tasks(tasks, workers, progress, backend, address)]
    log = JobLog(out / PROGRESS, resume, check=needs_keys(*RECORD_KEYS))
    try:
        missing = [t for t in tasks if t.index not in log.done]
        run_tasks(missing, workers, progress, backend, address, lambda r: log.add(r["index"], r))
    finally:
        log.close()
    return [log.done[t.index] for t in tasks]


def _run_config(
    config: dict[str, Any],
    games: int,
    workers: int,
    seed: int,
    out: Path | None,
    save_games: bool,
    all_seatings: bool,
    max_turns: int,
    progress: bool,
    echo: Callable[[str], None] | None,
    backend: str,
    address: str | None,
    resume: bool = False,
) -> dict[str, Any]:
    """One configuration's round robin (its agents, players and modules), outputs in ``out``."""
    specs, players, modules = config["agents"], config["players"], tuple(config["modules"])
    tasks = schedule(specs, players, games, seed, all_seatings, max_turns, modules)
    start = time.perf_counter()
    records = play_saved(tasks, workers, progress, backend, address, out, resume)
    summary = summarise(specs, records)
    summary["seconds"] = time.perf_counter() - start
    summary["modules"] = list(modules)
    summary["config"] = config["config"]
    summary["skipped"] = config["skipped"]
    summary["settings"] = {
        "players": players,
        "modules": list(modules),
        "games_per_table": games,
        "workers": workers,
        "backend": backend,
        "seed": seed,
        "all_seatings": all_seatings,
        "max_turns": max_turns,
        "tables": [list(t) for t in tables(len(specs), players)],
    }
    if out is not None:
        summary["files"] = [str(p) for p in write_outputs(summary, out)]
        if save_games:
            write_records(out / "games.jsonl", records)
            summary["files"].append(str(out / "games.jsonl"))
            save_text(out / "summary.json", json.dumps(summary, indent=2))
    if echo is not None:
        echo(format_tables(summary))
        if out is not None:
            echo("\nwrote " + ", ".join(summary["files"]))
    return summary
