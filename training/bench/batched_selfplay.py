"""Batched self-play against the per-game path: positions per second of one process, same games.

    python -m training.bench.batched_selfplay [--games 64] [--sims 100] [--init az_2p] [--device cpu]

Why: :func:`training.search.batched_selfplay.selfplay_job_batched` plays a job's games at once and
evaluates the leaves of all their searches together; this measures what that gains over
:func:`training.search.selfplay.selfplay_job` (one game after the other) in one process, on one
job of the same games with the same network and simulations a move. Each figure is positions
recorded / wall seconds of one job call after an untimed call of a small job that compiles the
search and loads the network (as in a run, whose workers stay warm); the process's CPU seconds are
printed beside it (with ``--device cuda`` the network runs on the GPU, the rest on one core).
With ``--device cpu`` both paths must record the same positions, and the command says whether
they did.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from training.common.cli import run_cli


def timed(fn: Any, job: dict[str, Any]) -> tuple[dict[str, Any], float, float]:
    """``fn(job)``, its wall seconds and this process's CPU seconds."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn(job)
    return out, time.perf_counter() - w0, time.process_time() - c0


def same_output(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two job results hold the same positions (bit for bit) and records."""
    import numpy as np

    from training.search.replay import FIELDS

    pa, pb = a["positions"], b["positions"]
    return a["records"] == b["records"] and all(
        pa[k].dtype == pb[k].dtype and np.array_equal(pa[k], pb[k]) for k in FIELDS
    )


def main(argv: list[str] | None = None) -> dict[str, float]:
    from agents.checkpoint import model_bytes
    from agents.search_batch import LANE_TREES
    from training.search import config as search_config
    from training.search.batched_selfplay import MAX_GAMES_AT_ONCE, selfplay_job_batched
    from training.search.network import initial_model
    from training.search.replay import count
    from training.search.selfplay import selfplay_job, selfplay_jobs

    ap = argparse.ArgumentParser(prog="python -m training.bench.batched_selfplay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument(
        "--games", type=int, default=64, help="games of the job (all played at once, up to --at-once)"
    )
    ap.add_argument("--sims", type=int, default=100, help="simulations per move")
    ap.add_argument("--init", default="az_2p", help="network: a shipped model, a .zip or fresh")
    ap.add_argument("--players", type=int, nargs="+", default=[2])
    ap.add_argument("--modules", nargs="*", default=[])
    ap.add_argument(
        "--device", default="cpu", choices=["cpu", "cuda", "auto"], help="where the batched path evaluates"
    )
    ap.add_argument(
        "--at-once", type=int, default=MAX_GAMES_AT_ONCE, help="games the batched path plays at once"
    )
    ap.add_argument(
        "--per-game", type=int, default=None, help="games of the per-game measurement (default: --games)"
    )
    ap.add_argument(
        "--lane-trees",
        type=int,
        default=LANE_TREES,
        help="torch: trees per lane (one lane selected while one is evaluated)",
    )
    ap.add_argument("--no-per-game", action="store_true", help="measure the batched path alone")
    args = ap.parse_args(argv)
    cfg = search_config.from_dict(
        {"players": args.players, "modules": args.modules, "init": args.init,
         "selfplay": {"games": args.games, "sims": args.sims}},
        check_specs=False,
    )  # fmt: skip
    sp = {
        **cfg.selfplay.model_dump(),
        "batched_device": args.device,
        "batched_games": args.at_once,
        "batched_lane_trees": args.lane_trees,
    }
    network = model_bytes(initial_model(cfg))

    def job(games: int, iteration: int) -> dict[str, Any]:
        return selfplay_jobs(
            network, iteration, cfg.seed, games, games, cfg.player_counts, tuple(cfg.modules), sp
        )[0]

    warm = job(len(cfg.player_counts), 0)
    selfplay_job(warm)  # compile and load, untimed
    selfplay_job_batched(warm)
    print(
        f"players {cfg.player_counts}, modules {cfg.modules or 'none'}, {args.sims} simulations a move, "
        f"network {args.init}, one process:"
    )
    out: dict[str, float] = {}
    results = {}
    runs = [("batched", args.games, selfplay_job_batched)]
    if not args.no_per_game:
        runs.insert(0, ("per-game", args.per_game or args.games, selfplay_job))
    for label, games, fn in runs:
        res, wall, cpu = timed(fn, job(games, 1))
        results[label] = res
        n = count(res["positions"])
        out[label] = n / wall
        extra = f", {min(games, args.at_once)} at once on {args.device}" if label == "batched" else ""
        print(
            f"  {label:<9} {games:>4} games{extra}: {n:>6} positions in {wall:6.1f} s "
            f"({cpu:6.1f} s CPU): {n / wall:7.1f} positions/s"
        )
    if "per-game" in out:
        print(f"  batched / per-game: x{out['batched'] / out['per-game']:.2f}")
        if args.device == "cpu" and (args.per_game or args.games) == args.games:
            print(f"  same positions and records: {same_output(results['per-game'], results['batched'])}")
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.bench.batched_selfplay"))
