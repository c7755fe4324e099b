"""A search-training run's learning curve: its networks' Elo on the benchmark scale over training time.

    python -m training.learning_curve runs/search_2p [--out DIR] [--agent az|ppo] [--options sims=200]
        [--every-hours 0.5] [--players N] [--workers 2] [--backend ray [--address auto]]

Each point is the quick benchmark card (docs/benchmark.md) of one network of the run in the
run's game: its starting network at hour 0 and every snapshot its config's ``snapshot_every``
kept, at the run's wall time when it was kept (``--every-hours H``: the first snapshot past each H
hours and the newest, for a long run). Writes ``curve.json`` and ``curve.png`` into
``--out`` (default ``RUN/curve``; ``RUN/curve-Np`` with ``--players N``, which a run of several
player counts needs: one curve per count). Run it again as training goes on: only new snapshots play.
The work is :mod:`training.expert_iteration.curve`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from training.common.cli import run_cli
from training.common.jobs import add_backend_arguments, check_backend
from training.expert_iteration.curve import AGENTS, make_curve, write_curve


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m training.learning_curve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("run", metavar="RUN", help="a search-training run's output_dir")
    ap.add_argument("--out", default=None, help="folder of curve.json and curve.png (default RUN/curve)")
    ap.add_argument("--agent", choices=AGENTS, default="az", help="play each network with search or alone")
    ap.add_argument("--options", default="", help="the agent's options for every point, e.g. sims=200")
    ap.add_argument(
        "--every-hours",
        type=float,
        default=None,
        metavar="H",
        help="one point per H hours of training (and the newest snapshot), not every snapshot",
    )
    ap.add_argument(
        "--players",
        type=int,
        default=None,
        help="the player count to rate in, for a run that trains several (default folder RUN/curve-Np)",
    )
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    check_backend(args.backend, args.address, args.workers)
    run = Path(args.run)
    out = (
        Path(args.out) if args.out else run / ("curve" if args.players is None else f"curve-{args.players}p")
    )
    curve = make_curve(
        run,
        out,
        args.agent,
        args.options,
        args.workers,
        args.backend,
        args.address,
        every_hours=args.every_hours,
        players=args.players,
    )
    for path in write_curve(curve, out):
        print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.learning_curve"))
