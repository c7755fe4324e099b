"""Benchmark policies: decision latency and win rates against fixed anchors, for any game.

CLI::

    python -m training.speed.policies --agents greedy mcts mcts:sims=100 \\
        [--anchors random greedy] [--games 40] [--players 2 3 4] [--modules cities orient] \\
        [--workers 2] [--states 200] [--seed 0] [--json FILE]

Latency: every agent answers the same ``--states`` positions, sampled from
games between random agents (2, 3 and 4 players, of the ``--modules``
game, all phases: main, discard, noble choice and the module decisions), less
the player counts the agent cannot play (a 2-player PPO policy answers 2-player
positions only); agents with ``needs_state`` get their decision state
(:func:`agents.runner.decision_state`: determinised for the seat on move; not timed). Reported: mean, median and 95th percentile
milliseconds per ``act`` call, single process.

Win rates: for each player count in ``--players`` (default 2), each agent
holds one seat against the anchor in every other seat, ``--games`` games with
the seat rotating (:func:`training.matches.evaluate.evaluate`: the same deals for every
agent), scored as there (a shared victory among ``k`` winners is ``1/k`` of a
win), with a 95% Wilson interval. A spec equal to the anchor, or one that
cannot play the configuration, is skipped (``-``).

Why under ``speed/`` though it also reports win rates: its own figure is the latency; the win
rates are :func:`training.matches.evaluate.evaluate`'s against the anchors, a check that a fast
agent is not a weak one. The strength measurements proper are ``python -m training.evaluate``,
``training.tournament`` and the benchmark card (``training.benchmark``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents import build
from agents.positions import decision_inputs, sample_states
from agents.runner import decision_state
from training.common.cli import CliError, check_game_args, run_cli
from training.common.games import plays
from training.common.jobs import check_backend
from training.common.progress import MANIFEST, claim_folder, open_run
from training.matches.evaluate import evaluate


def latency(spec: str, states: Sequence[np.ndarray], seed: int = 0) -> dict[str, float]:
    """Milliseconds per ``act`` over ``states`` (after one warm-up call)."""
    agent = build(spec, seed=seed)
    rng = np.random.default_rng(seed)
    times = []
    for i, s in enumerate([states[0], *states]):
        obs, mask, seat = decision_inputs(s)
        det = decision_state(agent, s, seat, rng)  # not timed: the table would deal it
        t0 = time.perf_counter()
        agent.act(obs, mask, det)
        if i:  # the first call only warms up (numba loads, model build)
            times.append(time.perf_counter() - t0)
    ms = 1000.0 * np.array(times)
    return {
        "mean_ms": float(ms.mean()),
        "median_ms": float(np.median(ms)),
        "p95_ms": float(np.percentile(ms, 95)),
        "calls": len(ms),
    }


def win_rate(
    spec: str,
    anchor: str,
    games: int,
    workers: int,
    seed: int,
    players: int = 2,
    modules: Sequence[str] = (),
    out: Path | None = None,
) -> dict[str, Any]:
    """``spec`` in one seat, ``anchor`` in the others: its score with a 95% Wilson interval.

    With ``out``, the games are saved there as they finish and a folder that has them is resumed.
    """
    resume = out is not None and (out / MANIFEST).is_file()
    (result,) = evaluate(
        spec, [anchor], games, players, workers, seed, modules=tuple(modules), out=out, resume=resume
    )
    lo, hi = result.ci
    return {"games": result.games, "score": result.score, "rate": result.win_rate, "ci95": [lo, hi]}


def run_bench(
    specs: Sequence[str],
    anchors: Sequence[str] = ("random", "greedy"),
    games: int = 40,
    workers: int = 1,
    n_states: int = 200,
    seed: int = 0,
    players: Sequence[int] = (2,),
    modules: Sequence[str] = (),
    out: Path | None = None,
    resume: bool = False,
    force: bool = False,
) -> dict[str, Any]:
    """Latency and anchor win rates (per player count) for every spec, in the ``modules`` game.

    With ``out``, every match's games are saved there as they finish (one evaluation folder per
    agent, anchor and player count); ``resume`` plays only the games missing from it, ``force``
    empties it first (the folder rule: :func:`~training.common.progress.claim_folder`). Latencies
    are timings, so they are measured again.
    """
    if out is not None:
        claim_folder(out, resume, force)
        # the name from before training/bench became training/speed: older folders still resume
        manifest = {"command": "bench.policies", "agents": list(specs), "anchors": list(anchors)}
        manifest |= {"games": games, "seed": seed, "players": list(players), "modules": list(modules)}
        open_run(out, manifest, resume)
    pools = {n: sample_states(n, 6, seed + n, modules=modules) for n in (2, 3, 4)}
    results: dict[str, Any] = {}
    columns = [(a, n) for n in players for a in anchors]
    for i, spec in enumerate(specs):
        agent = build(spec)
        counts = [n for n in (2, 3, 4) if plays(agent, spec, n, modules) is None]
        pool = [s for n in counts for s in pools[n]]
        pick = np.random.default_rng(seed).choice(len(pool), size=min(n_states, len(pool)), replace=False)
        row: dict[str, Any] = {"latency": latency(spec, [pool[i] for i in sorted(pick)], seed)}
        row["latency"]["players"] = counts
        for j, (anchor, n) in enumerate(columns):
            playable = spec != anchor and n in counts and plays(build(anchor), anchor, n, modules) is None
            folder = None if out is None else out / f"agent{i}-column{j}"
            row[f"vs_{anchor}@{n}p"] = (
                win_rate(spec, anchor, games, workers, seed, n, modules, folder) if playable else None
            )
        results[spec] = row
    return {
        "anchors": list(anchors),
        "players": list(players),
        "modules": list(modules),
        "games": games,
        "states": n_states,
        "agents": results,
    }


def format_bench(bench: dict[str, Any]) -> str:
    """The benchmark as an aligned text table."""
    width = max(8, *(len(s) for s in bench["agents"]))
    columns = [(a, n) for n in bench["players"] for a in bench["anchors"]]
    head = f"{'agent':<{width}} {'mean ms':>8} {'median':>8} {'p95 ms':>8}"
    head += "".join(f" {f'vs {a} {n}p % [95% CI]':>26}" for a, n in columns)
    lines = [head]
    for spec, row in bench["agents"].items():
        lat = row["latency"]
        line = f"{spec:<{width}} {lat['mean_ms']:8.3f} {lat['median_ms']:8.3f} {lat['p95_ms']:8.3f}"
        for a, n in columns:
            w = row[f"vs_{a}@{n}p"]
            cell = (
                "-"
                if w is None
                else f"{100 * w['rate']:5.1f} [{100 * w['ci95'][0]:4.1f},{100 * w['ci95'][1]:5.1f}]"
            )
            line += f" {cell:>26}"
        lines.append(line)
    game = "+".join(bench["modules"]) or "base"
    lines.append(
        f"({game} game; up to {bench['states']} positions for latency; {bench['games']} games per anchor "
        "and player count, the agent in one seat, the anchor in the others)"
    )
    return "\n".join(lines)


def check_inputs(args: argparse.Namespace) -> None:
    """Refuse bad arguments before anything runs or is written (messages name the argument)."""
    for name, value, low in (
        ("--games", args.games, 1),
        ("--states", args.states, 1),
        ("--seed", args.seed, 0),
    ):
        if value < low:
            raise CliError(f"{name} must be >= {low}, got {value}")
    check_game_args(args.players, args.modules)
    check_backend("local", None, args.workers)
    for spec in [*args.agents, *args.anchors]:
        try:
            build(spec)
        except ImportError as exc:
            raise CliError(f"agent {spec!r}: {exc}") from None
    if args.json and (Path(args.json).is_dir() or not Path(args.json).parent.is_dir()):
        raise CliError(f"--json {args.json!r}: not a writable file path (a folder, or its folder is missing)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.speed.policies", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--agents", nargs="+", default=["random", "greedy", "mcts"], help="agent specs")
    parser.add_argument("--anchors", nargs="+", default=["random", "greedy"], help="anchor specs")
    parser.add_argument("--games", type=int, default=40, help="games per agent, anchor and player count")
    parser.add_argument("--players", type=int, nargs="+", default=[2], help="player counts of the win rates")
    parser.add_argument("--modules", nargs="*", default=[], help="Cities of Splendor modules of every game")
    parser.add_argument("--workers", type=int, default=1, help="worker processes for the games")
    parser.add_argument("--states", type=int, default=200, help="positions timed per agent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    parser.add_argument("--out", default=None, help="save the games here as they finish (for --resume)")
    parser.add_argument("--resume", action="store_true", help="play only the games missing from --out")
    parser.add_argument("--force", action="store_true", help="empty --out first when it holds a run's games")
    args = parser.parse_args(argv)
    if args.resume and args.out is None:
        raise CliError("--resume needs --out, the folder of the run to resume")
    if args.force and args.out is None:
        raise CliError("--force needs --out, the folder to empty and start afresh")
    check_inputs(args)
    bench = run_bench(
        args.agents,
        args.anchors,
        args.games,
        args.workers,
        args.states,
        args.seed,
        args.players,
        args.modules,
        None if args.out is None else Path(args.out),
        args.resume,
        args.force,
    )
    print(format_bench(bench))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(bench, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.policies"))
