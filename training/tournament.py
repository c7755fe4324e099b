"""Round-robin tournaments between agents, played through the PettingZoo AEC env.

CLI::

    python -m training.tournament --agents random greedy mcts:sims=100 \\
        --players 2 --games 100 --workers 2 --seed 0 --out results/tournament [--save-games] \\
        [--modules cities orient] [--backend ray [--address auto]]

Configurations. ``--players`` takes one or more table sizes and
``--modules`` the Cities of Splendor modules of every game; each (players,
modules) configuration is its own round robin, reported on its own, among
the agents that can play it: an agent that plays only the base game
(``plays_modules`` false) sits out module games, and a PPO policy sits out
the player counts and modules it was not trained for; the report names who
sat out and why. With several configurations each one's files go to
``--out/<players>p_<modules>/`` and ``--out/summary.json`` lists them all.

Games run in this process, a local process pool, or on Ray
(:mod:`training.common.jobs`); every game carries its own seeds, so the
results are the same on every backend and for any number of workers.

Schedule. A *table* is a choice of agents for the seats: every combination of
distinct agents of the table size, or, when there are fewer agents than
seats, every multiset of them using at least two different agents. Each
table plays ``--games`` games (rounded up to whole deals): a *deal* is one
deck seed, played once in every *seating* of the table (cyclic rotations of
the seats; every distinct permutation with ``--all-seatings``), so seat
advantage and deal luck cancel. Deal seeds depend only on ``--seed`` and the
deal number, so every table sees the same deals.

Fairness. Agents with ``needs_state`` (MCTS) only ever get a state through
:func:`agents.runner.decision_state`, which determinises the true state for the
acting seat first: they never see a deck order or an opponent's blind reservation.

Scoring. A sole winner scores 1; a shared victory of ``k`` players scores
``1/k`` each (half a win each for two co-winners); losers 0. A truncated game
(turn cap) has no winner. Head to head, seat ``i`` beats seat ``j`` when its
standing (won, prestige, fewer cards) is better; equal standings count half
to each. An agent's own win rate counts every seat it occupied (a table with
repeats seats it more than once). These pairwise scores make the win-rate matrix (row agent against
column agent; 95% Wilson intervals). Ratings: batch Elo from a Bradley-Terry
fit (minorisation-maximisation, with a prior of one drawn game per pair
played; mean anchored at 1500) for two-player tables; OpenSkill
(Plackett-Luce, games rated in schedule order, ranks from the standings;
``ordinal = mu - 3 sigma``) for three- and four-player tables; an agent
seated twice is rated as two teams and takes the mean of their updates.
The statistics live in :mod:`training.matches.ratings`, the tables, CSV files and
figure in :mod:`training.matches.report` (both re-exported here).

Output in ``--out``: ``summary.json`` (everything), ``winrates.csv``
(pairwise matrix with intervals), ``ratings.csv``, ``tournament.png``
(heatmap and rating bars) and, with ``--save-games``, ``games.jsonl``
(records replayable with ``python -m training.records replay``).
"""

from __future__ import annotations

import argparse
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

from agents import Agent, build, runner
from splendor_env import state as st
from splendor_env.env import raw_env
from training.common.cli import CliError, check_game_args, run_cli
from training.common.games import config_label, plays
from training.common.jobs import BACKENDS, WORKER_AGENTS, check_backend, chunks, job_seed, map_jobs
from training.common.stats import wilson  # re-exported
from training.matches.ratings import (  # re-exported: the statistics used to live here
    bradley_terry_elo,
    elo_intervals,
    openskill_ratings,
    pair_score_tensor,
    pairwise_scores,
)
from training.matches.report import figure, format_tables, plot, summarise, write_outputs
from training.records import write_records


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
    """Agent-index tuples, one per table (see the module docstring)."""
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


def agent_state(env: raw_env, seat: int, rng: np.random.Generator) -> np.ndarray:
    """Deprecated: the true state of ``env`` determinised for ``seat``; use :func:`agents.runner.decision_state`."""
    import warnings

    from splendor_env.determinize import determinize

    warnings.warn(
        "training.tournament.agent_state is deprecated: use agents.runner.decision_state",
        DeprecationWarning,
        stacklevel=2,
    )
    return determinize(env.engine_state(), seat, rng)


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
    seat_agents = [
        WORKER_AGENTS.get(("spec", spec, seat), lambda spec=spec: build(spec))
        for seat, spec in enumerate(task.specs)
    ]
    return play_game(task, seat_agents)


def run_chunk(tasks: Sequence[GameTask]) -> list[dict[str, Any]]:
    """Worker entry point for a list of games (one round trip to a Ray worker for several games)."""
    return [run_task(task) for task in tasks]


def run_tasks(
    tasks: Sequence[GameTask],
    workers: int = 1,
    progress: bool = True,
    backend: str = "local",
    address: str | None = None,
) -> list[dict[str, Any]]:
    """Play all tasks on the chosen backend (:mod:`training.common.jobs`), results in task order.

    Every task carries its own seeds, so the records do not depend on the
    backend, the number of workers or which worker played which game.
    """
    from tqdm import tqdm

    size = 1 if backend == "local" else max(1, min(25, len(tasks) // (4 * workers)))
    bar = tqdm(total=len(tasks), desc="games", unit="game", disable=not progress, file=sys.stderr)
    try:
        parts = map_jobs(
            run_chunk,
            chunks(tasks, size),
            workers,
            backend,
            address,
            on_result=lambda job, _: bar.update(len(job)),
        )
    finally:
        bar.close()
    return [record for part in parts for record in part]


win_shares = runner.win_shares  # kept importable from here; the one definition is the runner's


# ---------------------------------------------------------------------------
# Command line


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
    try:
        raw_env(num_players=counts[0], max_turns=max_turns, modules=tuple(modules))  # the env's own checks
    except ValueError as exc:
        raise CliError(str(exc)) from None
    for spec in specs:  # fail fast on a bad spec, before any process starts (built as run_task builds it)
        try:
            build(spec)
        except ImportError as exc:
            raise CliError(f"--agents {spec!r}: {exc}") from None


def configurations(
    specs: Sequence[str], players: Sequence[int], modules: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Per player count: the agents that can play that game and those that sit out (with the reason)."""
    built = [build(spec) for spec in specs]
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


def config_dir(config: dict[str, Any]) -> str:
    """``3p_base``, ``2p_cities+orient``: a configuration's folder under ``--out``."""
    return config["config"].replace(" ", "_")


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
) -> dict[str, Any]:
    """Play the round robin of every configuration and write the outputs; returns the summary.

    With one player count the summary (and ``--out``) is that configuration's,
    as before; with several, ``{"configurations": [...]}`` and one folder each.
    """
    counts = [players] if isinstance(players, int) else list(players)
    modules = tuple(modules)
    check_inputs(specs, counts, games, workers, seed, max_turns, out, backend, address, modules)
    configs = configurations(specs, counts, modules)
    if all(len(c["agents"]) < 2 for c in configs):
        reasons = "; ".join(f"{s}: {r}" for c in configs for s, r in c["skipped"].items())
        raise CliError(f"no configuration has two agents that can play it ({reasons})")
    summaries = []
    for config in configs:
        where = None if out is None else (Path(out) if len(configs) == 1 else Path(out) / config_dir(config))
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
            )
        summaries.append(summary)
    if len(configs) == 1:
        return summaries[0]
    result = {"configurations": summaries}
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "summary.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result


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
) -> dict[str, Any]:
    """One configuration's round robin (its agents, players and modules), outputs in ``out``."""
    specs, players, modules = config["agents"], config["players"], tuple(config["modules"])
    tasks = schedule(specs, players, games, seed, all_seatings, max_turns, modules)
    start = time.perf_counter()
    records = run_tasks(tasks, workers, progress, backend, address)
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
            (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if echo is not None:
        echo(format_tables(summary))
        if out is not None:
            echo("\nwrote " + ", ".join(summary["files"]))
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.tournament",
        description="Round-robin tournament between agents (see the module docstring).",
    )
    parser.add_argument(
        "--agents", nargs="+", required=True, help="agent specs, e.g. random greedy mcts:sims=100"
    )
    parser.add_argument(
        "--players",
        type=int,
        nargs="+",
        default=[2],
        help="seats per table (2, 3 or 4; several: one round robin each)",
    )
    parser.add_argument("--modules", nargs="*", default=[], help="Cities of Splendor modules of every game")
    parser.add_argument("--games", type=int, default=100, help="games per table (rounded up to whole deals)")
    parser.add_argument(
        "--workers", type=int, default=1, help="worker processes (Ray: CPUs of a local runtime)"
    )
    parser.add_argument("--backend", choices=BACKENDS, default="local", help="where the games run")
    parser.add_argument(
        "--address", default=None, help="existing Ray cluster (auto, HOST:PORT or ray://HOST:10001)"
    )
    parser.add_argument("--seed", type=int, default=0, help="master seed for deals and agents")
    parser.add_argument("--out", default="results/tournament", help="output folder")
    parser.add_argument("--save-games", action="store_true", help="also write games.jsonl records")
    parser.add_argument(
        "--all-seatings", action="store_true", help="every seat permutation, not only rotations"
    )
    parser.add_argument("--max-turns", type=int, default=st.DEFAULT_MAX_TURNS, help="turn cap (truncation)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    run_tournament(
        args.agents,
        players=args.players if len(args.players) > 1 else args.players[0],
        games=args.games,
        workers=args.workers,
        seed=args.seed,
        out=args.out,
        save_games=args.save_games,
        all_seatings=args.all_seatings,
        max_turns=args.max_turns,
        progress=not args.no_progress,
        backend=args.backend,
        address=args.address,
        modules=args.modules,
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.tournament"))


__all__ = [
    "GameTask",
    "agent_state",
    "bradley_terry_elo",
    "check_inputs",
    "configurations",
    "elo_intervals",
    "figure",
    "format_tables",
    "main",
    "openskill_ratings",
    "pair_score_tensor",
    "pairwise_scores",
    "play_game",
    "plot",
    "run_tasks",
    "run_tournament",
    "schedule",
    "summarise",
    "wilson",
    "write_outputs",
]
