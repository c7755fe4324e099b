"""The README's Gymnasium example, measured: plain MaskablePPO on ``splendor_env/Splendor-v1``.

Why: the README promises that a plain sb3-contrib ``MaskablePPO`` trained on the
single-agent view beats ``random`` within minutes; this script is that example
with a wall-clock budget and a seat-rotated evaluation, so the figure can be
reproduced::

    python -m training.gym_quickstart --minutes 5 --eval-games 400
    python -m training.gym_quickstart --players 3 --modules cities orient   # any game the engine offers

It trains against ``random`` opponents (every other seat) with prestige
shaping, then plays ``--eval-games`` games (learner seat rotating,
deterministic policy) and prints the win rate with its 95% Wilson interval
(chance is ``1 / players``).
"""

from __future__ import annotations

import argparse
import sys
import time

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

import splendor_env  # noqa: F401 - registers splendor_env/Splendor-v1
from training.common.cli import CliError, check_game_args, run_cli
from training.common.stats import wilson

ENV_ID = "splendor_env/Splendor-v1"


class WallClock(BaseCallback):
    """Stops training after ``seconds`` of wall-clock time."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.deadline = time.monotonic() + seconds

    def _on_step(self) -> bool:
        return time.monotonic() < self.deadline


def train(
    steps: int,
    minutes: float | None,
    n_envs: int = 8,
    seed: int = 0,
    num_players: int = 2,
    modules: tuple[str, ...] = (),
) -> MaskablePPO:
    """The README example (same hyper-parameters), optionally cut at ``minutes``."""
    game = {"num_players": num_players, "modules": modules}
    venv = make_vec_env(
        ENV_ID, n_envs=n_envs, seed=seed, env_kwargs={"opponents": "random", "reward_mode": "shaped", **game}
    )
    model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=512, seed=seed, verbose=0)
    callback = WallClock(minutes * 60) if minutes else None
    model.learn(total_timesteps=steps, callback=callback)
    return model


def win_rate(
    model: MaskablePPO,
    games: int,
    opponent: str = "random",
    seed: int = 10_000,
    num_players: int = 2,
    modules: tuple[str, ...] = (),
) -> float:
    """Share of games the deterministic policy wins outright, the learner's seat rotating."""
    wins = 0
    for g in range(games):
        env = gymnasium.make(
            ENV_ID, opponents=opponent, learner_seat=g % num_players, num_players=num_players, modules=modules
        )
        obs, info = env.reset(seed=seed + g)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)
            obs, _, term, trunc, info = env.step(int(action))
            done = term or trunc
        wins += bool(info["is_success"])
    return wins / games


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
    modules = tuple(args.modules)
    torch.set_num_threads(args.threads)
    start = time.monotonic()
    model = train(args.steps, args.minutes, args.n_envs, args.seed, args.players, modules)
    elapsed = time.monotonic() - start
    if args.save:
        model.save(args.save)
    rate = win_rate(model, args.eval_games, num_players=args.players, modules=modules)
    low, high = wilson(rate * args.eval_games, args.eval_games)
    print(
        f"trained {model.num_timesteps:,} learner steps in {elapsed / 60:.1f} min "
        f"({model.num_timesteps / elapsed:,.0f} steps/s); {args.players} players, "
        f"{'+'.join(modules) or 'base game'}, vs random over {args.eval_games} games: "
        f"{100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
    )


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.gym_quickstart"))
