"""Round-robin tournaments between agents, played through the PettingZoo AEC env.

    python -m training.tournament --agents random greedy mcts:sims=100 \\
        --players 2 --games 100 --workers 2 --seed 0 --out results/tournament [--save-games] [--resume | --force] \\
        [--modules cities orient] [--backend ray [--address auto]]

The library is :mod:`training.matches.tournament`; docs/tournaments.md describes the
schedule, the scoring, the ratings and the files written to ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from splendor_env import state as st
from training.common.cli import run_cli
from training.common.jobs import add_backend_arguments
from training.common.progress import check_writable
from training.matches.tournament import run_tournament


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.tournament",
        description="Round-robin tournament between agents (docs/tournaments.md).",
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
    add_backend_arguments(parser, workers=1)
    parser.add_argument("--seed", type=int, default=0, help="master seed for deals and agents")
    parser.add_argument("--out", default="results/tournament", help="output folder")
    parser.add_argument("--save-games", action="store_true", help="also write games.jsonl records")
    parser.add_argument(
        "--all-seatings", action="store_true", help="every seat permutation, not only rotations"
    )
    parser.add_argument("--max-turns", type=int, default=st.DEFAULT_MAX_TURNS, help="turn cap (truncation)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="play only the games missing from --out (a stopped run, same arguments)",
    )
    parser.add_argument(
        "--force", action="store_true", help="empty --out first when it holds a run's games (start afresh)"
    )
    args = parser.parse_args(argv)
    check_writable(Path(args.out), "--out")  # before the first game, not after the last
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
        resume=args.resume,
        force=args.force,
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.tournament"))
