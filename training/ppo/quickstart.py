"""The README's Gymnasium example, measured: plain MaskablePPO on ``splendor_env/Splendor-v1``.

Why: the README promises that a plain sb3-contrib ``MaskablePPO`` trained on the
single-agent view beats ``random`` within minutes; this is that example with a
wall-clock budget and a seat-rotated evaluation (``python -m training.gym_quickstart``),
so the figure can be reproduced (docs/tutorials/maskable-ppo.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

import splendor_env  # noqa: F401 - registers splendor_env/Splendor-v1
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


def quickstart(
    steps: int,
    minutes: float | None,
    n_envs: int = 8,
    seed: int = 0,
    num_players: int = 2,
    modules: tuple[str, ...] = (),
    eval_games: int = 400,
    save: str | None = None,
    threads: int = 1,
    echo: Callable[[str], None] = print,
) -> float:
    """Train against ``random`` opponents (every other seat) with prestige shaping, then play
    ``eval_games`` games (learner seat rotating, deterministic policy) and print the win rate with
    its 95% Wilson interval (chance is ``1 / num_players``); returns the win rate."""
    torch.set_num_threads(threads)
    start = time.monotonic()
    model = train(steps, minutes, n_envs, seed, num_players, modules)
    elapsed = time.monotonic() - start
    if save:
        model.save(save)
    rate = win_rate(model, eval_games, num_players=num_players, modules=modules)
    low, high = wilson(rate * eval_games, eval_games)
    echo(
        f"trained {model.num_timesteps:,} learner steps in {elapsed / 60:.1f} min "
        f"({model.num_timesteps / elapsed:,.0f} steps/s); {num_players} players, "
        f"{'+'.join(modules) or 'base game'}, vs random over {eval_games} games: "
        f"{100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
    )
    return rate
