"""Self-play of a job's games at once against one at a time: positions per second of one process, same games.

    python -m training.speed.batched_selfplay [--games 64] [--sims 100] [--init az_2p] [--device cpu]
        [--root gumbel --gumbel-actions 8]

Why: :func:`training.expert_iteration.selfplay.selfplay_job` searches a job's games in step and, with
``selfplay.batched``, evaluates the leaves of all their searches together on ``--device``; this
measures what that gains over one game after the other (``batched_games: 1``, "per-game") in one
process, on one job of the same games with the same network and simulations a move. Each figure is positions
recorded / wall seconds of one job call after an untimed call of a small job that compiles the
search and loads the network (as in a run, whose workers stay warm); the process's CPU seconds are
printed beside it (with ``--device cuda`` the network runs on the GPU, the rest on one core).
With ``--device cpu`` both paths must record the same positions, and the command says whether
they did. ``--breakdown`` (CPU) says where the batched path's time went: the network, the leaves'
selection (determinisation, descent, observations), expansion and backup, and the rest of the move.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from training.common.cli import CliError, run_cli


def timed(fn: Any, job: dict[str, Any]) -> tuple[dict[str, Any], float, float]:
    """``fn(job)``, its wall seconds and this process's CPU seconds."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn(job)
    return out, time.perf_counter() - w0, time.process_time() - c0


#: The numba kernels the batched CPU search calls each round (:func:`agents.search.driver.simulate`).
KERNELS = ("net_forward", "net_values", "select_leaves", "expand_backup")


@contextmanager
def kernel_seconds() -> Iterator[dict[str, float]]:
    """Seconds spent in each of :data:`KERNELS` and in the whole search (``"search"``) while inside.

    Why this way: the driver that calls the kernels is itself compiled, so nothing outside can time
    them; inside, it runs as Python (its ``py_func``: the same kernel calls in the same order, so the
    same games) with each kernel wrapped in a timer. The Python loop adds a little time to
    ``"search"``, none to the kernels.
    """
    import agents.search.driver as sb

    seconds = dict.fromkeys((*KERNELS, "search"), 0.0)
    saved = {name: getattr(sb, name) for name in (*KERNELS, "simulate")}

    def clocked(name: str, fn: Any) -> Any:
        def call(*args: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args)
            finally:
                seconds[name] += time.perf_counter() - t0

        return call

    try:
        for name in KERNELS:
            setattr(sb, name, clocked(name, saved[name]))
        sb.simulate = clocked("search", saved["simulate"].py_func)
        yield seconds
    finally:
        for name, fn in saved.items():
            setattr(sb, name, fn)


def print_breakdown(seconds: dict[str, float], wall: float, simulations: int) -> dict[str, float]:
    """Each part's share of ``wall`` and its microseconds per simulation (``simulations``: positions
    recorded times simulations a move); returns the shares."""
    parts = {
        "network (net_forward + net_values)": seconds["net_forward"] + seconds["net_values"],
        "leaf selection (select_leaves)": seconds["select_leaves"],
        "expansion and backup (expand_backup)": seconds["expand_backup"],
        "rest of the search loop": seconds["search"] - sum(seconds[k] for k in KERNELS),
        "outside the search (moves, records)": wall - seconds["search"],
    }
    print(f"  where the batched path's {wall:.1f} s went ({simulations} simulations):")
    for label, s in parts.items():
        print(
            f"    {label:<38} {s:7.2f} s {100 * s / wall:5.1f}%  {1e6 * s / simulations:6.2f} us a simulation"
        )
    return {label: s / wall for label, s in parts.items()}


def same_output(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two job results hold the same positions (bit for bit) and records."""
    import numpy as np

    from training.expert_iteration.replay import FIELDS

    pa, pb = a["positions"], b["positions"]
    return a["records"] == b["records"] and all(
        pa[k].dtype == pb[k].dtype and np.array_equal(pa[k], pb[k]) for k in FIELDS
    )


def main(argv: list[str] | None = None) -> dict[str, float]:
    from agents.nets.checkpoint import model_bytes
    from agents.search.driver import LANE_TREES
    from training.expert_iteration import config as search_config
    from training.expert_iteration.network import initial_model
    from training.expert_iteration.replay import count
    from training.expert_iteration.selfplay import selfplay_job, selfplay_jobs

    ap = argparse.ArgumentParser(prog="python -m training.speed.batched_selfplay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument(
        "--games", type=int, default=64, help="games of the job (all played at once, up to --at-once)"
    )
    ap.add_argument("--sims", type=int, default=100, help="simulations per move")
    ap.add_argument(
        "--root", default="puct", choices=["puct", "gumbel"], help="the root's rule (selfplay.root)"
    )
    ap.add_argument(
        "--gumbel-actions", type=int, default=16, help="moves Gumbel's root samples (selfplay.gumbel_actions)"
    )
    ap.add_argument("--init", default="az_2p", help="network: a shipped model, a .zip or fresh")
    ap.add_argument("--players", type=int, nargs="+", default=[2])
    ap.add_argument("--modules", nargs="*", default=[])
    ap.add_argument(
        "--device", default="cpu", choices=["cpu", "cuda", "auto"], help="where the batched path evaluates"
    )
    ap.add_argument(
        "--at-once",
        type=int,
        default=None,
        help="games the batched path plays at once (default: selfplay.batched_games)",
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
    ap.add_argument(
        "--reuse", action="store_true", help="keep the subtree between a game's searches (selfplay.reuse)"
    )
    ap.add_argument("--no-per-game", action="store_true", help="measure the batched path alone")
    ap.add_argument(
        "--breakdown", action="store_true", help="where the batched path's time went, kernel by kernel (cpu)"
    )
    args = ap.parse_args(argv)
    if args.breakdown and args.device != "cpu":
        raise CliError("--breakdown times the numba kernels: it needs --device cpu")
    cfg = search_config.from_dict(
        {"players": args.players, "modules": args.modules, "init": args.init,
         "selfplay": {"games": args.games, "sims": args.sims, "root": args.root,
                      "gumbel_actions": args.gumbel_actions, "reuse": args.reuse}},
        check_specs=False,
    )  # fmt: skip
    args.at_once = args.at_once or cfg.selfplay.batched_games
    sp = {
        **cfg.selfplay.model_dump(),
        "batched_device": args.device,
        "batched_games": args.at_once,
        "batched_lane_trees": args.lane_trees,
    }

    def per_game(job: dict[str, Any]) -> dict[str, Any]:
        return selfplay_job({**job, "selfplay": {**job["selfplay"], "batched": False, "batched_games": 1}})

    def batched(job: dict[str, Any]) -> dict[str, Any]:
        return selfplay_job({**job, "selfplay": {**job["selfplay"], "batched": True}})

    network = model_bytes(initial_model(cfg))

    def job(games: int, iteration: int) -> dict[str, Any]:
        return selfplay_jobs(
            network, iteration, cfg.seed, games, games, cfg.player_counts, tuple(cfg.modules), sp
        )[0]

    warm = job(len(cfg.player_counts), 0)
    per_game(warm)  # compile and load, untimed
    batched(warm)
    print(
        f"players {cfg.player_counts}, modules {cfg.modules or 'none'}, {args.sims} simulations a move "
        f"({args.root} root{f', {args.gumbel_actions} moves' if args.root == 'gumbel' else ''}"
        f"{', subtrees kept' if args.reuse else ''}), "
        f"network {args.init}, one process:"
    )
    out: dict[str, float] = {}
    results = {}
    runs = [("batched", args.games, batched)]
    if not args.no_per_game:
        runs.insert(0, ("per-game", args.per_game or args.games, per_game))
    for label, games, fn in runs:
        with kernel_seconds() if args.breakdown and label == "batched" else nullcontext({}) as seconds:
            res, wall, cpu = timed(fn, job(games, 1))
        results[label] = res
        n = count(res["positions"])
        out[label] = n / wall
        extra = f", {min(games, args.at_once)} at once on {args.device}" if label == "batched" else ""
        print(
            f"  {label:<9} {games:>4} games{extra}: {n:>6} positions in {wall:6.1f} s "
            f"({cpu:6.1f} s CPU): {n / wall:7.1f} positions/s"
        )
        if seconds:
            shares = print_breakdown(seconds, wall, n * args.sims)
            out.update({f"share {label}": share for label, share in shares.items()})
    if "per-game" in out:
        print(f"  batched / per-game: x{out['batched'] / out['per-game']:.2f}")
        if args.device == "cpu" and (args.per_game or args.games) == args.games:
            print(f"  same positions and records: {same_output(results['per-game'], results['batched'])}")
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.batched_selfplay"))
