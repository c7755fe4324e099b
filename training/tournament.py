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
(:mod:`training.backend`); every game carries its own seeds, so the
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
:func:`agent_state`, which determinises the true state for the acting seat
first: they never see a deck order or an opponent's blind reservation.

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

Output in ``--out``: ``summary.json`` (everything), ``winrates.csv``
(pairwise matrix with intervals), ``ratings.csv``, ``tournament.png``
(heatmap and rating bars) and, with ``--save-games``, ``games.jsonl``
(records replayable with ``python -m training.records replay``).
"""

from __future__ import annotations

import argparse
import csv
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

from agents import Agent, make
from splendor_env import state as st
from splendor_env.determinize import determinize
from splendor_env.env import raw_env
from training.backend import BACKENDS, check_backend, chunks, map_jobs
from training.cli import CliError, check_game_args, run_cli
from training.games import config_label, plays
from training.records import game_result, write_records
from training.stats import Z95, clean_number, wilson


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


def _seed(*key: int) -> int:
    """A 63-bit seed derived from integers (stable across runs and platforms)."""
    return int(np.random.SeedSequence(list(key)).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


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
                        seed=_seed(seed, deal),
                        agent_ids=order,
                        specs=tuple(specs[i] for i in order),
                        agent_seeds=tuple(_seed(seed, t, deal, k, p) for p in range(players)),
                        max_turns=max_turns,
                        modules=tuple(modules),
                    )
                )
    return tasks


# ---------------------------------------------------------------------------
# Playing


def agent_state(env: raw_env, seat: int, rng: np.random.Generator) -> np.ndarray:
    """The only state a search agent is given: the true state determinised for ``seat``."""
    return determinize(env.state(), seat, rng)


def play_game(task: GameTask, seat_agents: Sequence[Agent]) -> dict[str, Any]:
    """Play one game through the AEC env; returns its record (see :mod:`training.records`)."""
    n = len(task.specs)
    env = raw_env(num_players=n, max_turns=task.max_turns, modules=task.modules)
    env.reset(seed=task.seed)
    for agent, s in zip(seat_agents, task.agent_seeds, strict=True):
        agent.seed(s)
    rng = np.random.default_rng([task.seed, task.index, 7])
    actions: list[int] = []
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(name.rsplit("_", 1)[1])
        agent = seat_agents[seat]
        state = agent_state(env, seat, rng) if agent.needs_state else None
        action = int(agent.act(obs["observation"], obs["action_mask"], state))
        env.step(action)
        actions.append(action)
    record = {
        "num_players": n,
        "seed": task.seed,
        "max_turns": task.max_turns,
        "modules": list(task.modules),
        "agents": list(task.specs),
        "agent_seeds": list(task.agent_seeds),
        "actions": actions,
        **game_result(env.game_state),
        "index": task.index,
        "table": task.table,
        "deal": task.deal,
        "seating": task.seating,
        "agent_ids": list(task.agent_ids),
    }
    return record


_WORKER_AGENTS: dict[tuple[str, int], Agent] = {}


def run_task(task: GameTask) -> dict[str, Any]:
    """Worker entry point: builds (once per process) and reuses one agent per (spec, seat)."""
    seat_agents = []
    for seat, spec in enumerate(task.specs):
        key = (spec, seat)
        if key not in _WORKER_AGENTS:
            _WORKER_AGENTS[key] = make(spec)
        seat_agents.append(_WORKER_AGENTS[key])
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
    """Play all tasks on the chosen backend (:mod:`training.backend`), results in task order.

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


# ---------------------------------------------------------------------------
# Statistics


def win_shares(record: dict[str, Any]) -> list[float]:
    """Per seat: 1 for a sole winner, 1/k for each of k co-winners, else 0."""
    winners = record["winners"]
    return [1.0 / len(winners) if p in winners else 0.0 for p in range(record["num_players"])]


def pairwise_scores(record: dict[str, Any]) -> list[tuple[int, int, float]]:
    """``(seat_i, seat_j, score of i against j)`` for every ordered pair of seats."""
    n = record["num_players"]
    key = [(p in record["winners"], record["prestige"][p], -record["cards"][p]) for p in range(n)]
    out = []
    for i in range(n):
        for j in range(n):
            if i != j:
                out.append((i, j, 1.0 if key[i] > key[j] else (0.0 if key[i] < key[j] else 0.5)))
    return out


def bradley_terry_elo(wins: np.ndarray, prior: float = 0.5, iters: int = 10_000) -> np.ndarray:
    """Batch Elo from pairwise wins ``wins[..., i, j]`` (i over j, half for draws).

    Minorisation-maximisation for the Bradley-Terry strengths; ``prior`` wins
    are added each way to every pair that met, so a perfect record stays
    finite. The mean rating is anchored at 1500. Leading axes are independent
    fits (the bootstrap fits all its resamples at once).
    """
    games = wins + np.swapaxes(wins, -1, -2)
    w = wins + prior * (games > 0)
    n = w + np.swapaxes(w, -1, -2)
    p = np.ones(wins.shape[:-1])
    total = w.sum(axis=-1)
    for _ in range(iters):
        denom = (n / (p[..., :, None] + p[..., None, :])).sum(axis=-1)
        new = np.where(denom > 0, total / np.where(denom > 0, denom, 1.0), p)
        new /= np.exp(np.mean(np.log(new), axis=-1, keepdims=True))
        done = np.max(np.abs(new - p)) < 1e-10
        p = new
        if done:
            break
    elo = 400.0 * np.log10(p)
    return elo - elo.mean(axis=-1, keepdims=True) + 1500.0


def pair_score_tensor(records: Sequence[dict[str, Any]], num_agents: int) -> np.ndarray:
    """Per game, the head-to-head scores between distinct agents: shape ``(games, agents, agents)``."""
    out = np.zeros((len(records), num_agents, num_agents))
    for r, rec in enumerate(records):
        ids = rec["agent_ids"]
        for i, j, score in pairwise_scores(rec):
            if ids[i] != ids[j]:
                out[r, ids[i], ids[j]] += score
    return out


def elo_intervals(per_game: np.ndarray, rounds: int = 1000, seed: int = 0, level: float = 0.95) -> np.ndarray:
    """Percentile bootstrap interval of each Bradley-Terry Elo: ``(agents, 2)``.

    Games are resampled with replacement ``rounds`` times with a fixed seed, so
    the interval is reproducible; ``per_game`` comes from :func:`pair_score_tensor`.
    """
    n, k, _ = per_game.shape
    if n == 0:
        return np.full((k, 2), np.nan)
    counts = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=rounds)
    elos = bradley_terry_elo(np.tensordot(counts.astype(float), per_game, axes=1))
    tail = 100 * (1 - level) / 2
    return np.percentile(elos, [tail, 100 - tail], axis=0).T


def openskill_ratings(records: Sequence[dict[str, Any]], num_agents: int) -> list[dict[str, float]]:
    """Plackett-Luce OpenSkill ratings, one team per seat, games rated in record order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=str(i)) for i in range(num_agents)]
    for rec in records:
        ids = rec["agent_ids"]
        if len(set(ids)) < 2:
            continue
        n = rec["num_players"]
        key = [(p in rec["winners"], rec["prestige"][p], -rec["cards"][p]) for p in range(n)]
        order = sorted(set(key), reverse=True)
        ranks = [order.index(k) + 1 for k in key]
        # An agent seated twice plays as two teams sharing one rating: update with the mean change.
        teams = [[ratings[a]] for a in ids]
        new = model.rate(teams, ranks=ranks)
        for a in set(ids):
            seats = [p for p in range(n) if ids[p] == a]
            ratings[a].mu = float(np.mean([new[p][0].mu for p in seats]))
            ratings[a].sigma = float(np.mean([new[p][0].sigma for p in seats]))
    return [
        {
            "mu": r.mu,
            "sigma": r.sigma,
            "ordinal": r.mu - 3 * r.sigma,
            "ci95": [r.mu - Z95 * r.sigma, r.mu + Z95 * r.sigma],
        }
        for r in ratings
    ]


def summarise(specs: Sequence[str], records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Win-rate matrix, per-agent win rates and ratings from game records."""
    k = len(specs)
    pair_score = np.zeros((k, k))
    pair_games = np.zeros((k, k))
    wins = np.zeros(k)
    seats_played = np.zeros(k)
    for rec in records:
        ids = rec["agent_ids"]
        for p, share in enumerate(win_shares(rec)):
            wins[ids[p]] += share
            seats_played[ids[p]] += 1
        for i, j, score in pairwise_scores(rec):
            if ids[i] != ids[j]:
                pair_score[ids[i], ids[j]] += score
                pair_games[ids[i], ids[j]] += 1
    matrix = []
    for i in range(k):
        row = []
        for j in range(k):
            n = pair_games[i, j]
            rate = pair_score[i, j] / n if n else None
            lo, hi = wilson(pair_score[i, j], n) if n else (None, None)
            row.append({"score": pair_score[i, j], "games": n, "rate": rate, "ci95": [lo, hi]})
        matrix.append(row)
    players = records[0]["num_players"] if records else 2
    agents_out = []
    for i, spec in enumerate(specs):
        lo, hi = wilson(wins[i], seats_played[i])
        agents_out.append(
            {
                "agent": spec,
                "games": int(seats_played[i]),
                "wins": float(wins[i]),
                "win_rate": wins[i] / seats_played[i] if seats_played[i] else None,
                "ci95": [lo, hi],
            }
        )
    if players == 2:
        intervals = elo_intervals(pair_score_tensor(records, k))
        for a, elo, (lo, hi) in zip(agents_out, bradley_terry_elo(pair_score), intervals, strict=True):
            a["elo"] = float(elo)
            a["elo_ci95"] = [float(lo), float(hi)]
    else:
        for a, r in zip(agents_out, openskill_ratings(records, k), strict=True):
            a["openskill"] = r
    return {
        "agents": list(specs),
        "players": players,
        "games": len(records),
        "mean_turns": float(np.mean([r["turns"] for r in records])) if records else 0.0,
        "truncated": int(sum(r["truncated"] for r in records)),
        "matrix": matrix,
        "ratings": agents_out,
        "rating_kind": "bradley-terry elo" if players == 2 else "openskill plackett-luce",
        "rating_interval": (
            "95% percentile bootstrap over games (1000 resamples, seed 0)"
            if players == 2
            else "mu +- 1.96 sigma"
        ),
    }


# ---------------------------------------------------------------------------
# Output


def _pct(x: float | None) -> str:
    return "  -  " if x is None else f"{100 * x:5.1f}"


def format_tables(summary: dict[str, Any]) -> str:
    """The win-rate matrix and the ratings as aligned text."""
    specs = summary["agents"]
    width = max(8, *(len(s) for s in specs))
    lines = [
        f"{summary['games']} games, {summary['players']} players"
        f"{', modules ' + '+'.join(summary['modules']) if summary.get('modules') else ''}, "
        f"mean {summary['mean_turns']:.1f} turns, "
        f"{summary['truncated']} truncated",
        "",
        "win rate % of row against column [95% CI]",
        " " * width + "".join(f" {s[:20]:>21}" for s in specs),
    ]
    for i, spec in enumerate(specs):
        cells = []
        for j in range(len(specs)):
            c = summary["matrix"][i][j]
            cell = (
                "-" if c["rate"] is None else f"{_pct(c['rate'])} [{_pct(c['ci95'][0])},{_pct(c['ci95'][1])}]"
            )
            cells.append(f" {cell:>21}")
        lines.append(f"{spec:<{width}}" + "".join(cells))
    lines += ["", f"ratings ({summary['rating_kind']})"]
    head = f"{'agent':<{width}} {'games':>6} {'win %':>6} {'95% CI':>13}"
    head += (
        f" {'elo':>7} {'95% CI':>13}"
        if summary["players"] == 2
        else f" {'mu':>7} {'sigma':>6} {'ordinal':>8} {'mu 95% CI':>15}"
    )
    lines.append(head)
    for r in sorted(summary["ratings"], key=_rating_key, reverse=True):
        line = (
            f"{r['agent']:<{width}} {r['games']:>6} {_pct(r['win_rate']):>6} "
            f"{_pct(r['ci95'][0]):>6}-{_pct(r['ci95'][1]).strip():<6}"
        )
        if "elo" in r:
            lo, hi = r["elo_ci95"]
            line += f" {r['elo']:7.0f} {f'{lo:.0f}-{hi:.0f}':>13}"
        else:
            o = r["openskill"]
            lo, hi = o["ci95"]
            line += f" {o['mu']:7.2f} {o['sigma']:6.2f} {o['ordinal']:8.2f} {f'{lo:.2f}-{hi:.2f}':>15}"
        lines.append(line)
    return "\n".join(lines)


def _rating_key(r: dict[str, Any]) -> float:
    return r["elo"] if "elo" in r else r["openskill"]["ordinal"]


def write_outputs(summary: dict[str, Any], out: Path) -> list[Path]:
    """``summary.json``, ``winrates.csv``, ``ratings.csv`` and ``tournament.png`` in ``out``.

    CSV numbers are fixed-point (rates and intervals 4 decimals, Elo 1, OpenSkill 3).
    """
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "summary.json", out / "winrates.csv", out / "ratings.csv", out / "tournament.png"]
    paths[0].write_text(json.dumps(summary, indent=2), encoding="utf-8")
    with open(paths[1], "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["agent", "opponent", "games", "score", "win_rate", "ci95_low", "ci95_high"])
        for i, a in enumerate(summary["agents"]):
            for j, b in enumerate(summary["agents"]):
                c = summary["matrix"][i][j]
                if c["games"]:
                    nums = [c["score"], c["rate"], *c["ci95"]]
                    w.writerow([a, b, int(c["games"]), *(clean_number(x) for x in nums)])
    with open(paths[2], "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        cols = ["agent", "games", "wins", "win_rate", "ci95_low", "ci95_high"]
        two = summary["players"] == 2
        extra = (
            ["elo", "elo_ci95_low", "elo_ci95_high"]
            if two
            else ["mu", "sigma", "ordinal", "mu_ci95_low", "mu_ci95_high"]
        )
        w.writerow(cols + extra)
        for r in summary["ratings"]:
            vals = [
                r["agent"],
                r["games"],
                *(clean_number(x) for x in (r["wins"], r["win_rate"], *r["ci95"])),
            ]
            if two:
                vals += [clean_number(x, 1) for x in (r["elo"], *r["elo_ci95"])]
            else:
                o = r["openskill"]
                vals += [clean_number(x, 3) for x in (o["mu"], o["sigma"], o["ordinal"], *o["ci95"])]
            w.writerow(vals)
    plot(summary, paths[3])
    return paths


def figure(summary: dict[str, Any]) -> Any:
    """Win-rate heatmap (percent, colour bar 0-100) and ratings with 95% intervals (matplotlib Figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = summary["agents"]
    k = len(specs)
    grid = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(k):
            rate = summary["matrix"][i][j]["rate"]
            if rate is not None:
                grid[i, j] = 100.0 * rate
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6 + 1.2 * k, 3 + 0.6 * k))
    im = ax1.imshow(grid, vmin=0, vmax=100, cmap="RdYlGn")
    ax1.set_xticks(range(k), specs, rotation=45, ha="right")
    ax1.set_yticks(range(k), specs)
    for i in range(k):
        for j in range(k):
            if not np.isnan(grid[i, j]):
                ax1.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=9)
    ax1.set_title("win rate of row vs column")
    fig.colorbar(im, ax=ax1, fraction=0.046, label="win rate (%)")
    if summary["players"] == 2:
        vals = np.array([r["elo"] for r in summary["ratings"]])
        bounds = np.array([r["elo_ci95"] for r in summary["ratings"]])
        yerr = np.abs(bounds.T - vals)  # asymmetric: below, above
        ax2.bar(range(k), vals - 1500, bottom=1500, yerr=yerr, capsize=4, color="tab:blue")
        ax2.axhline(1500, color="grey", lw=0.8)
        ax2.set_title("Bradley-Terry Elo (mean 1500, 95% bootstrap interval)")
    else:
        mus = [r["openskill"]["mu"] for r in summary["ratings"]]
        sig = [r["openskill"]["sigma"] for r in summary["ratings"]]
        ax2.bar(range(k), mus, yerr=[Z95 * s for s in sig], color="tab:blue", capsize=4)
        ax2.set_title("OpenSkill mu (95% interval: 1.96 sigma)")
    ax2.set_xticks(range(k), specs, rotation=45, ha="right")
    fig.suptitle(f"{summary['players']}-player tournament, {summary['games']} games")
    fig.tight_layout()
    return fig


def plot(summary: dict[str, Any], path: Path) -> None:
    """Write :func:`figure` as a PNG."""
    import matplotlib.pyplot as plt

    fig = figure(summary)
    fig.savefig(path, dpi=100)
    plt.close(fig)


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
    for spec in specs:  # fail fast on a bad spec, before any process starts
        try:
            make(spec)
        except ImportError as exc:
            raise CliError(f"--agents {spec!r}: {exc}") from None


def configurations(
    specs: Sequence[str], players: Sequence[int], modules: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Per player count: the agents that can play that game and those that sit out (with the reason)."""
    built = [make(spec) for spec in specs]
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
    "play_game",
    "run_tasks",
    "run_tournament",
    "schedule",
    "summarise",
    "wilson",
]
