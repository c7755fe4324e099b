"""How good is a PPO critic as a position evaluator? Sign accuracy, error and calibration over held-out games.

    python -m training.value_report --games 300 --out results/value_report
    python -m training.value_report --agents ppo:ppo_2p ppo:ppo_2p --games 300
    python -m training.value_report --players 3 --games 300    # critic of ppo_base_3_4p
    python -m training.value_report --modules cities trading_posts orient strongholds --games 300
    python -m training.value_report --players 4 --model my_3_4p.zip --agents ppo:my_3_4p.zip greedy
    python -m training.value_report --model az_2p_v5 --agents ppo:az_2p ppo:az_2p --games 300 --playouts 32

The library is :mod:`training.matches.value_report`; what is measured, how and what it
found: docs/results/value-report.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from training.common.cli import CliError, run_cli
from training.matches.value_report import DEFAULT_OPPONENT, DEFAULT_SEED, resolve_game_args, run_report


def check_inputs(args: argparse.Namespace) -> None:
    """Refuse bad arguments before any game is played; fills in the game's default ``args.model`` and
    ``args.agents`` (:func:`~training.matches.value_report.resolve_game_args`)."""
    resolve_game_args(args)
    if args.games < 1:
        raise CliError(f"--games must be >= 1, got {args.games}")
    if not 0 <= args.seed <= 2**62 - args.games:
        raise CliError(f"--seed must be in 0..2**62 - games, got {args.seed}")
    if args.playouts < 0:
        raise CliError(f"--playouts must be >= 0, got {args.playouts}")
    if len(args.agents) != 2:
        raise CliError(f"--agents needs exactly two specs (A B), got {len(args.agents)}")
    if args.out is not None and Path(args.out).is_file():
        raise CliError(f"--out {args.out!r} is a file, not a folder")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(
        prog="python -m training.value_report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--players", type=int, default=2, help="players per game: 2, 3 or 4 (default 2)")
    ap.add_argument(
        "--modules",
        nargs="*",
        default=[],
        metavar="MODULE",
        help="Cities of Splendor modules of every game (cities trading_posts orient strongholds; default none)",
    )
    ap.add_argument(
        "--model",
        default=None,
        help="MaskablePPO .zip (or shipped name) whose critic is measured, trained for the game "
        "(default: the shipped network az uses for it, agents.nets.shipped.default_model)",
    )
    ap.add_argument(
        "--agents",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="the two players A B: A in seat g %% players, B in the others "
        f"(default: ppo:<the game's shipped network> {DEFAULT_OPPONENT})",
    )
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="first deal seed (default: held out)")
    ap.add_argument("--out", default=None, help="write value_report.json, phases.csv, calibration.csv here")
    ap.add_argument(
        "--playouts",
        type=int,
        default=0,
        metavar="R",
        help="also play every decision out R times by the same agents (hidden cards resampled): the winner "
        "pick a perfect critic of these agents could reach (default 0: off)",
    )
    args = ap.parse_args(argv)
    check_inputs(args)
    return run_report(
        args.agents,
        args.model,
        args.players,
        args.modules,
        args.games,
        args.seed,
        args.out,
        playouts=args.playouts,
    )


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.value_report"))
