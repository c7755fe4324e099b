"""Head-to-head evaluation: a candidate in one seat, each opponent in the others, seat-rotated.

    python -m training.evaluate ppo:ppo_2p --opponents random greedy --games 1000 --workers 2 \\
        [--players 3 4] [--modules cities orient] [--backend ray [--address auto]] \\
        [--out results/eval [--resume | --force]]

The library is :mod:`training.matches.evaluate`; docs/tournaments.md says how games are
scored, seeded and spread over workers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from training.common.cli import CliError, check_game_args, run_cli
from training.common.jobs import add_backend_arguments, check_backend
from training.common.progress import check_writable
from training.matches.evaluate import CHUNK_GAMES, check_players, run_evaluation


def check_inputs(args: argparse.Namespace) -> None:
    """Refuse bad arguments before any game is played or file written (messages name the argument)."""
    for name, value, low in (
        ("--games", args.games, 1),
        ("--seed", args.seed, 0),
        ("--chunk-games", args.chunk_games, 1),
    ):
        if value < low:
            raise CliError(f"{name} must be >= {low}, got {value}")
    check_game_args(args.players, args.modules)
    check_backend(args.backend, args.address, args.workers)
    check_players(args.candidate, args.opponents, args.players, tuple(args.modules), not args.stochastic)
    if args.resume and not args.out:
        raise CliError("--resume needs --out, the folder of the evaluation to resume")
    if args.force and not args.out:
        raise CliError("--force needs --out, the folder to empty and start afresh")
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        raise CliError(f"--out {args.out!r} exists and is not a directory")
    if args.json:
        check_writable(Path(args.json), "--json", is_file=True)
    if args.out:
        check_writable(Path(args.out), "--out")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m training.evaluate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("candidate", help="MaskablePPO .zip, or an agent spec")
    ap.add_argument("--opponents", nargs="+", default=["random", "greedy"])
    ap.add_argument("--games", type=int, default=1000, help="games per opponent")
    ap.add_argument("--players", type=int, nargs="+", default=[2], help="player counts, e.g. 3 4")
    ap.add_argument("--modules", nargs="*", default=[], help="Cities of Splendor modules of every game")
    add_backend_arguments(ap)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--stochastic", action="store_true", help="sample the PPO policy instead of argmax")
    ap.add_argument("--json", help="also write the results to this JSON file")
    ap.add_argument("--out", help="folder for the finished chunks as they finish, and results.json")
    ap.add_argument(
        "--resume", action="store_true", help="play only the chunks missing from --out (same arguments)"
    )
    ap.add_argument(
        "--force", action="store_true", help="empty --out first when it holds an evaluation (start afresh)"
    )
    ap.add_argument(
        "--chunk-games",
        type=int,
        default=CHUNK_GAMES,
        help=f"games per job, the unit of seeding (default {CHUNK_GAMES}); smaller keeps more workers busy, "
        "other sizes play other deals",
    )
    args = ap.parse_args(argv)
    check_inputs(args)
    run_evaluation(
        args.candidate,
        args.opponents,
        args.games,
        args.players,
        args.workers,
        args.seed,
        not args.stochastic,
        args.backend,
        args.address,
        tuple(args.modules),
        json_path=args.json,
        out=args.out,
        resume=args.resume,
        chunk_games=args.chunk_games,
        force=args.force,
    )


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.evaluate"))
