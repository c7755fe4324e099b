"""A benchmark card: one agent spec against fixed reference agents, rated on a fixed scale.

    python -m training.benchmark SPEC [--quick] [--out DIR [--resume | --force]] [--workers 2]
        [--backend ray [--address auto]] [--players N [N ...]] [--modules none|all] [--no-progress]

SPEC is any agent spec (``ppo:PATH``, ``az:PATH``, ``mcts:sims=800``, ``package.module:Class``).
It plays the versioned protocol of :mod:`training.matches.card` in every game it plays (2, 3 and
4 players; the base game and all four modules: an agent declares its games, a PPO policy's are
those it was trained for), ``--players`` and ``--modules`` keeping only some of them, and writes
``card.json``, ``card.md`` and ``card.png`` into ``--out``, its games into ``--out/games/``. A
folder that already holds a card's games is refused unless ``--resume`` goes on with them or
``--force`` starts afresh. How to read a card: docs/benchmark.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from training.common.cli import CliError, chosen_games, run_cli
from training.common.jobs import add_backend_arguments, check_backend
from training.common.progress import check_writable
from training.matches.card import run_benchmark


#: ``--modules`` words: the protocol's games are the base game and the one with all four modules.
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m training.benchmark",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("spec", metavar="SPEC", help="the agent to benchmark: an agent spec or a model .zip")
    ap.add_argument("--quick", action="store_true", help="50 games per reference and game instead of 200")
    ap.add_argument("--out", default="results/card", help="folder of card.json, card.md, card.png")
    ap.add_argument(
        "--players", type=int, nargs="+", default=None, help="only these player counts (of those SPEC plays)"
    )
    ap.add_argument(
        "--modules",
        nargs="+",
        default=None,
        help="only the base game (none) or the all-module game (all), of those SPEC plays",
    )
    add_backend_arguments(ap)
    ap.add_argument(
        "--resume", action="store_true", help="play only the games missing from --out (an interrupted card)"
    )
    ap.add_argument(
        "--force", action="store_true", help="empty --out first when it holds a card's games (start afresh)"
    )
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (for log files)")
    args = ap.parse_args(argv)
    check_backend(args.backend, args.address, args.workers)
    if not args.spec.strip():
        raise CliError("SPEC must not be empty")
    check_writable(Path(args.out), "--out")  # before the first game, not after the last
    run_benchmark(
        args.spec,
        Path(args.out),
        args.quick,
        args.workers,
        args.backend,
        args.address,
        resume=args.resume,
        force=args.force,
        only=chosen_games(args.players, args.modules),
        progress_bar=not args.no_progress,
    )


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.benchmark"))
