"""The README's Gymnasium example, measured: plain MaskablePPO on ``splendor_env/Splendor-v1``.

    python -m training.gym_quickstart --minutes 5 --eval-games 400
    python -m training.gym_quickstart --players 3 --modules cities orient   # any game the engine offers

It trains against ``random`` opponents with prestige shaping, then prints the
deterministic policy's win rate over ``--eval-games`` seat-rotated games with its
95% Wilson interval (:mod:`training.ppo.quickstart`).
"""

from __future__ import annotations

import argparse
import sys

from training.common.cli import CliError, check_game_args, run_cli
from training.ppo.quickstart import quickstart


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training.gym_quickstart", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--steps", type=int, default=2_000_000, help="learner steps (upper bound)")
    parser.add_argument("--minutes", type=float, default=5.0, help="wall-clock training budget (0: none)")
    parser.add_argument("--n-envs", type=int, default=8)
    parser.add_argument("--eval-games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=2, help="players at the table (2, 3 or 4)")
    parser.add_argument("--modules", nargs="*", default=[], help="Cities of Splendor modules of the game")
    parser.add_argument("--save", default=None, help="save the trained model here (.zip)")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (1 is fastest for this small net)"
    )
    args = parser.parse_args(argv)
    for name in ("steps", "n_envs", "eval_games", "threads"):
        if getattr(args, name) < 1:
            raise CliError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.minutes < 0:
        raise CliError(f"--minutes must be >= 0, got {args.minutes}")
    check_game_args([args.players], args.modules)
    quickstart(
        args.steps,
        args.minutes,
        args.n_envs,
        args.seed,
        args.players,
        tuple(args.modules),
        args.eval_games,
        args.save,
        args.threads,
    )


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.gym_quickstart"))
