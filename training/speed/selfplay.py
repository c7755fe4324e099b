"""Self-play throughput of expert iteration: positions per second for 1 and N local workers and Ray.

    python -m training.speed.selfplay [--games 8] [--sims 64] [--workers 2] [--init ppo_2p] [--reuse] [--no-ray]

Why: the iteration's self-play is where a search-training run spends its time;
this measures what :func:`training.expert_iteration.loop.search_train` gets from more
processes or from Ray on one machine, with the same jobs
(:func:`training.expert_iteration.selfplay.selfplay_jobs`) and the same games on every
backend. Each figure is positions recorded / wall seconds of one
:func:`training.common.jobs.map_jobs` call, after an untimed call on the same
workers that compiles and warms their caches: as in a run, which keeps one
local process pool (:func:`training.common.jobs.local_pool`) or one Ray session for
all its iterations, worker start-up is not counted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from training.common.cli import run_cli
from training.common.jobs import local_pool, map_jobs


def measure(jobs: list[dict[str, Any]], workers: int, backend: str) -> tuple[int, float]:
    """(positions, seconds) of one self-play call on warm workers (a first call warms them, untimed)."""
    from training.expert_iteration.loop import start_ray
    from training.expert_iteration.replay import count
    from training.expert_iteration.selfplay import selfplay_job

    pool = local_pool(workers) if backend == "local" and workers > 1 else None
    ray_here = start_ray(backend, None, workers)
    try:
        map_jobs(selfplay_job, jobs[:workers], workers, backend, pool=pool)  # start and warm the workers
        t0 = time.perf_counter()
        parts = map_jobs(selfplay_job, jobs, workers, backend, pool=pool)
        return sum(count(p["positions"]) for p in parts), time.perf_counter() - t0
    finally:
        if pool is not None:
            pool.shutdown()
        if ray_here:
            import ray

            ray.shutdown()


def main(argv: list[str] | None = None) -> dict[str, float]:
    from agents.nets.checkpoint import model_bytes
    from training.expert_iteration import config as search_config
    from training.expert_iteration.network import initial_model
    from training.expert_iteration.selfplay import selfplay_jobs

    ap = argparse.ArgumentParser(prog="python -m training.speed.selfplay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--games", type=int, default=8, help="games per measurement")
    ap.add_argument("--sims", type=int, default=64, help="simulations per move")
    ap.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="the N of the N-worker runs"
    )
    ap.add_argument("--init", default="ppo_2p", help="network: a shipped model, a .zip or fresh")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--modules", nargs="*", default=[])
    ap.add_argument(
        "--reuse", action="store_true", help="keep the subtree between a game's searches (selfplay.reuse)"
    )
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray backend")
    args = ap.parse_args(argv)
    cfg = search_config.from_dict(
        {"players": args.players, "modules": args.modules, "init": args.init,
         "selfplay": {"games": args.games, "sims": args.sims, "games_per_job": 1, "reuse": args.reuse}},
        check_specs=False,
    )  # fmt: skip
    network = model_bytes(initial_model(cfg))
    sp = cfg.selfplay.model_dump()

    def jobs(iteration: int) -> list[dict[str, Any]]:
        return selfplay_jobs(
            network, iteration, cfg.seed, args.games, 1, cfg.player_counts, tuple(cfg.modules), sp
        )

    measure(jobs(0)[:1], 1, "local")  # compile here first, untimed
    runs = [("local, 1 worker", 1, "local"), (f"local, {args.workers} workers", args.workers, "local")]
    if not args.no_ray:
        runs.append((f"ray (local runtime), {args.workers} CPUs", args.workers, "ray"))
    out = {}
    print(
        f"{args.games} games of {args.players} players, {args.sims} simulations a move"
        f"{' (subtrees kept)' if args.reuse else ''}, network {args.init}:"
    )
    for label, workers, backend in runs:
        positions, seconds = measure(jobs(1), workers, backend)  # the same games on every backend
        out[label] = positions / seconds
        print(
            f"  {label:<32} {positions:>6} positions in {seconds:6.1f} s: {positions / seconds:7.1f} positions/s"
        )
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.selfplay"))
