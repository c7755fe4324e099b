"""Benchmark policies: decision latency and win rates against fixed anchors.

CLI::

    python -m training.bench_policies --agents greedy mcts mcts:sims=100 \\
        [--anchors random greedy] [--games 40] [--workers 2] [--states 200] [--seed 0] [--json FILE]

Latency: every agent answers the same ``--states`` positions, sampled from
games between random agents (2, 3 and 4 players, all phases: main, discard,
noble choice); agents with ``needs_state`` get a state determinised for the
seat on move (not timed). Reported: mean, median and 95th percentile
milliseconds per ``act`` call, single process.

Win rates: each agent plays ``--games`` two-player games against each anchor
(``random`` and ``greedy`` by default) through :mod:`training.tournament`
(shared deals, both seatings), scored as there (a shared victory is half a
win), with a 95% Wilson interval. A spec equal to the anchor is skipped.
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

from agents import make
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS
from splendor_env.determinize import determinize
from splendor_env.observation import OBS_DIM, observe
from training.backend import check_backend
from training.cli import CliError, run_cli
from training.stats import wilson
from training.tournament import run_tasks, schedule


def sample_states(
    num_players: int, games: int, seed: int = 0, max_per_game: int | None = None
) -> list[np.ndarray]:
    """Non-terminal states (copies) from random-agent games, in play order."""
    rng = np.random.default_rng(seed)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    out: list[np.ndarray] = []
    for g in range(games):
        s = st.new_state(num_players, int(rng.integers(0, 2**62)) + g)
        taken = 0
        while not rules.is_over(s):
            if max_per_game is None or taken < max_per_game:
                out.append(s.copy())
                taken += 1
            rules.legal_mask(s, mask)
            legal = np.flatnonzero(mask)
            rules.apply_action(s, int(legal[rng.integers(legal.size)]))
    return out


def decision_inputs(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Observation and mask of the seat on move, and that seat."""
    seat = int(s[st.CURRENT])
    obs = np.empty(OBS_DIM, dtype=np.float32)
    observe(s, seat, obs)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    rules.legal_mask(s, mask)
    return obs, mask, seat


def latency(spec: str, states: Sequence[np.ndarray], seed: int = 0) -> dict[str, float]:
    """Milliseconds per ``act`` over ``states`` (after one warm-up call)."""
    agent = make(spec, seed=seed)
    rng = np.random.default_rng(seed)
    times = []
    for i, s in enumerate([states[0], *states]):
        obs, mask, seat = decision_inputs(s)
        det = determinize(s, seat, rng) if agent.needs_state else None
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


def win_rate(spec: str, anchor: str, games: int, workers: int, seed: int) -> dict[str, Any]:
    """Two-player score of ``spec`` against ``anchor`` with a 95% Wilson interval."""
    tasks = schedule([spec, anchor], 2, games, seed)
    records = run_tasks(tasks, workers, progress=False)
    score = 0.0
    for rec in records:
        me = rec["agent_ids"].index(0)
        winners = rec["winners"]
        if me in winners:
            score += 1.0 / len(winners)
    lo, hi = wilson(score, len(records))
    return {"games": len(records), "score": score, "rate": score / len(records), "ci95": [lo, hi]}


def run_bench(
    specs: Sequence[str],
    anchors: Sequence[str] = ("random", "greedy"),
    games: int = 40,
    workers: int = 1,
    n_states: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """Latency and anchor win rates for every spec."""
    pools = [sample_states(n, 6, seed + n) for n in (2, 3, 4)]
    pool = [s for p in pools for s in p]
    pick = np.random.default_rng(seed).choice(len(pool), size=min(n_states, len(pool)), replace=False)
    states = [pool[i] for i in sorted(pick)]
    results: dict[str, Any] = {}
    for spec in specs:
        row: dict[str, Any] = {"latency": latency(spec, states, seed)}
        for anchor in anchors:
            row[f"vs_{anchor}"] = None if spec == anchor else win_rate(spec, anchor, games, workers, seed)
        results[spec] = row
    return {"anchors": list(anchors), "games": games, "states": len(states), "agents": results}


def format_bench(bench: dict[str, Any]) -> str:
    """The benchmark as an aligned text table."""
    width = max(8, *(len(s) for s in bench["agents"]))
    head = f"{'agent':<{width}} {'mean ms':>8} {'median':>8} {'p95 ms':>8}"
    head += "".join(f" {'vs ' + a + ' % [95% CI]':>24}" for a in bench["anchors"])
    lines = [head]
    for spec, row in bench["agents"].items():
        lat = row["latency"]
        line = f"{spec:<{width}} {lat['mean_ms']:8.3f} {lat['median_ms']:8.3f} {lat['p95_ms']:8.3f}"
        for a in bench["anchors"]:
            w = row[f"vs_{a}"]
            cell = (
                "-"
                if w is None
                else f"{100 * w['rate']:5.1f} [{100 * w['ci95'][0]:4.1f},{100 * w['ci95'][1]:5.1f}]"
            )
            line += f" {cell:>24}"
        lines.append(line)
    lines.append(f"({bench['states']} positions for latency; {bench['games']} two-player games per anchor)")
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
    check_backend("local", None, args.workers)
    for spec in [*args.agents, *args.anchors]:
        try:
            make(spec)
        except ImportError as exc:
            raise CliError(f"agent {spec!r}: {exc}") from None
    if args.json and (Path(args.json).is_dir() or not Path(args.json).parent.is_dir()):
        raise CliError(f"--json {args.json!r}: not a writable file path (a folder, or its folder is missing)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.bench_policies", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--agents", nargs="+", default=["random", "greedy", "mcts"], help="agent specs")
    parser.add_argument("--anchors", nargs="+", default=["random", "greedy"], help="anchor specs")
    parser.add_argument("--games", type=int, default=40, help="two-player games per agent and anchor")
    parser.add_argument("--workers", type=int, default=1, help="worker processes for the games")
    parser.add_argument("--states", type=int, default=200, help="positions timed per agent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    check_inputs(args)
    bench = run_bench(args.agents, args.anchors, args.games, args.workers, args.states, args.seed)
    print(format_bench(bench))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(bench, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.bench_policies"))
