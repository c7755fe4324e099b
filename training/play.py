"""Play and show Splendor games between agents (the README's main job).

Usage::

    python -m training.play                                  # shipped PPO policy vs greedy, one game
    python -m training.play --agents mcts greedy random --seed 3
    python -m training.play --agents random random --render every
    python -m training.play --games 20 --render none         # just the results
    python -m training.play --agents human ppo:ppo_2p   # play against the shipped policy
    python -m training.play --agents human random random --modules cities orient

Each move is printed in words (``describe``); ``--render every`` draws the
board before every decision, ``final`` (default) only the final board.
Agents are spec strings understood by :func:`agents.make`; ``human`` is you at
the terminal (:mod:`agents.players.human`: the board, the legal moves with short codes,
a prompt that explains a bad entry and asks again; ``q`` abandons the game).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

import agents
import splendor_env
from agents import runner
from agents.nets.shipped import resolve_model
from agents.players.human import QuitGame
from splendor_env.records import seat_of, write_records
from splendor_env.rules import terminal_rewards
from splendor_env.state import MAX_PLAYERS
from training.common.cli import CliError, run_cli
from training.common.games import check_plays
from training.common.progress import check_writable

#: The shipped 2-player base-game policy (package data: :mod:`agents.nets.shipped`).
SHIPPED_POLICY = resolve_model("ppo_2p")


def default_agents() -> list[str]:
    """The shipped 2-player PPO policy against the greedy heuristic (path relative to the cwd)."""
    return [f"ppo:{os.path.relpath(SHIPPED_POLICY)}", "greedy"]


def play_game(
    specs: list[str],
    seed: int,
    render: str = "final",
    verbose: bool = True,
    max_turns: int | None = None,
    modules: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Play one game (:mod:`agents.runner`); returns the final snapshot, rewards, the actions and the record.

    Seat ``i`` is ``specs[i]`` seeded with ``seed * 101 + i``; determinisations
    for search agents come from ``default_rng(seed)``.
    """
    options: dict[str, Any] = {} if max_turns is None else {"max_turns": max_turns}
    env = splendor_env.env(num_players=len(specs), render_mode="ansi", modules=tuple(modules), **options)
    agent_seeds = [seed * 101 + i for i in range(len(specs))]
    players = [agents.build(spec, seed=s) for spec, s in zip(specs, agent_seeds, strict=True)]

    def before_move(env: Any, seat: int) -> None:
        if render == "every" and verbose:
            print(env.render() + "\n")

    def on_move(env: Any, seat: int, action: int) -> None:
        if verbose:
            print(f"player_{seat} ({specs[seat]}): {env.describe_action(action)}")

    record = runner.play_game(
        players,
        seed,
        labels=specs,
        agent_seeds=agent_seeds,
        env=env,
        rng=np.random.default_rng(seed),
        before_move=before_move,
        on_move=on_move,
    )
    snapshot = env.snapshot()
    if verbose and render != "none":
        print("\n" + env.render())
    seat_rewards = np.zeros(MAX_PLAYERS)
    terminal_rewards(env.game_state, seat_rewards)
    rewards = {name: float(seat_rewards[seat_of(name)]) for name in env.possible_agents}
    return {"snapshot": snapshot, "rewards": rewards, "actions": record["actions"], "record": record}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Play Splendor games between agents and show them.")
    parser.add_argument("--agents", nargs="+", default=default_agents(), help="one agent spec per seat (2-4)")
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--render", choices=["every", "final", "none"], default="final")
    parser.add_argument("--quiet", action="store_true", help="no move log, only results")
    parser.add_argument(
        "--modules", nargs="*", default=[], help=f"Cities of Splendor modules: {splendor_env.MODULE_NAMES}"
    )
    parser.add_argument("--max-turns", type=int, default=None, help="turn cap (default: the env's)")
    parser.add_argument(
        "--save-games",
        default=None,
        help="write every game as a record (JSON lines) for training.records replay",
    )
    args = parser.parse_args(argv)
    if not 2 <= len(args.agents) <= 4:
        parser.error(f"--agents needs 2 to 4 specs (one per seat), got {len(args.agents)}")
    if args.games < 1:
        raise CliError(f"--games must be >= 1, got {args.games}")
    if not 0 <= args.seed <= 2**62:
        raise CliError(f"--seed must be in 0..2**62, got {args.seed}")
    if args.max_turns is not None and args.max_turns < 1:
        raise ValueError(f"--max-turns must be >= 1, got {args.max_turns}")
    config = splendor_env.EnvConfig(
        num_players=len(args.agents), modules=tuple(args.modules)
    )  # names a bad module
    for (
        spec
    ) in args.agents:  # fail fast on a bad spec or game (modules, player count), before any game is played
        check_plays(agents.build(spec), spec, len(args.agents), config.modules)
    if args.save_games:  # before the first game: a game against a person is not played twice
        check_writable(Path(args.save_games), "--save-games", is_file=True)
    wins = np.zeros(len(args.agents))
    records = []
    for g in range(args.games):
        verbose = not args.quiet and (args.games == 1 or "human" in args.agents)
        try:
            result = play_game(
                args.agents, args.seed + g, args.render, verbose, args.max_turns, tuple(args.modules)
            )
        except QuitGame as exc:
            print(f"game {g} abandoned: {exc}")
            return
        records.append(result["record"])
        if args.save_games:  # after every game, so a long session is never lost
            write_records(args.save_games, records)
        winners = result["snapshot"]["winners"]
        for w in winners:
            wins[w] += 1 / len(winners)
        scores = [p["prestige"] for p in result["snapshot"]["players"]]
        print(
            f"game {g} (seed {args.seed + g}): prestige {scores}, winners {[f'player_{w}' for w in winners]}"
        )
    if args.games > 1:
        for i, spec in enumerate(args.agents):
            print(f"player_{i} {spec:<20} wins {wins[i]:.1f}/{args.games}")


def cli() -> int:
    """Console-script entry point (``splendor-play``): :func:`main` with one-line input errors."""
    return run_cli(main, prog="splendor-play")


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.play"))
