"""``az``'s milliseconds per move: the same positions searched with a fixed budget, for any game.

Usage::

    python -m training.speed.search                       # 1000 simulations, 2p, 4p, 2p with every module
    python -m training.speed.search --sims 200 --positions 20 --repeats 5
    python -m training.speed.search --clock cpu           # CPU time: for a machine other jobs share

Why: the search's speed is a figure users choose a budget by, and a change to the search
driver must keep it (docs/results/benchmarks.md, "One search driver"). Each game's positions
come from random games (:func:`agents.positions.sample_states`, determinised for the seat on
move); every position is searched ``--repeats`` times with the same seed (so the same
search) and the fastest kept, which takes most of a shared machine's noise out; ``stop=0``
spends every simulation. One process, one thread. To hold two versions side by side, run
this file with each version's checkout first on ``PYTHONPATH``. ``--clock cpu`` times the process's
CPU instead of the wall: on a machine other jobs load, the wall time of the same code varied
fivefold, its CPU time by a few percent.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from training.common.cli import run_cli

ALL_MODULES = ("cities", "trading_posts", "orient", "strongholds")
GAMES = {"2p": (2, ()), "4p": (4, ()), "2p-modules": (2, ALL_MODULES)}
#: how a search is timed: the wall, or this process's CPU (``--clock cpu``, for a shared machine)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def ms_per_move(
    sims: int, players: int, modules: tuple[str, ...], positions: int, repeats: int, clock: str = "wall"
) -> float:
    """Mean over ``positions`` positions of the fastest of ``repeats`` equal searches, in milliseconds
    of ``clock`` (:data:`CLOCKS`)."""
    import agents
    from agents.positions import sample_states
    from splendor_env.determinize import determinize
    from splendor_env.state import CURRENT

    az = agents.make(f"az:sims={sims},stop=0", seed=0)
    states = sample_states(players, max(4, positions // 10 + 1), seed=3, modules=modules)[: positions + 1]
    roots = [determinize(s, int(s[CURRENT]), i) for i, s in enumerate(states)]
    az.root_visits(roots[0])  # compile (or load) the search and the network, untimed
    now, best = CLOCKS[clock], []
    for i, root in enumerate(roots[1:]):
        times = []
        for _ in range(repeats):
            az.seed(i)
            t0 = now()
            az.root_visits(root)
            times.append(now() - t0)
        best.append(min(times))
    return 1000.0 * float(np.mean(best))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m training.speed.search", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--sims", type=int, default=1000, help="simulations a move (az's sims=)")
    ap.add_argument("--positions", type=int, default=40, help="positions per game")
    ap.add_argument("--repeats", type=int, default=3, help="searches of each position; the fastest counts")
    ap.add_argument("--games", nargs="+", choices=sorted(GAMES), default=list(GAMES), help="which games")
    ap.add_argument(
        "--clock", choices=sorted(CLOCKS), default="wall", help="wall time, or this process's CPU"
    )
    args = ap.parse_args(argv)
    for name in ("sims", "positions", "repeats"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    out = {}
    for game in args.games:
        players, modules = GAMES[game]
        out[game] = ms_per_move(args.sims, players, modules, args.positions, args.repeats, args.clock)
        print(
            f"{game:<11} az:sims={args.sims},stop=0  {out[game]:8.2f} {args.clock} ms a move "
            f"({args.positions} positions)"
        )
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.search"))
