"""Learner steps per second of the Gymnasium vector view, batched against Gymnasium's sync vectorisation.

Usage::

    python -m training.speed.vec                      # 256 games, random opponents, 3 s each
    python -m training.speed.vec --seconds 1 --sync-envs 64 --players 3 --modules cities

Both environments play the same game (``gymnasium.make_vec("splendor_env/Splendor-v1", ...)``,
the same options), with uniformly random legal learner actions drawn in compiled code
(:func:`splendor_env.vector.sample_legal_actions`) from each step's ``info["action_mask"]``:

1. ``vector_entry_point`` (the default): :class:`agents.gym_vector.SplendorVectorEnv`, the
   games in one batched engine, each opponent agent asked once per round for all its games;
2. ``vectorization_mode="sync"``: Gymnasium's ``SyncVectorEnv`` over single-agent views (one
   Python ``step`` per game, its opponents one decision at a time).

A learner step is one learner decision in one game (opponent moves included, auto-reset steps of
``SyncVectorEnv``, which play no learner move, not counted). One thread, wall-clock time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

from training.common.cli import CliError, check_game_args, run_cli


def learner_steps_per_second(env: Any, seconds: float, seed: int = 0) -> float:
    """Random legal learner actions in the vector env ``env`` for about ``seconds``; learner steps per second."""
    from splendor_env.vector import sample_legal_actions

    stream = np.array([seed + 1], dtype=np.uint64)
    _, info = env.reset(seed=seed)
    pending_reset = np.zeros(env.num_envs, dtype=bool)  # sync (NEXT_STEP): the next step only resets these
    steps, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        masks = np.ascontiguousarray(info["action_mask"], dtype=np.int8)
        masks[~masks.any(axis=1), 0] = 1  # a finished game's all-zero mask (ignored by the reset step)
        _, _, term, trunc, info = env.step(sample_legal_actions(masks, stream))
        steps += env.num_envs - int(pending_reset.sum())
        pending_reset = np.zeros_like(pending_reset)
        if (
            env.metadata.get("autoreset_mode") is not None
            and env.metadata["autoreset_mode"].value == "NextStep"
        ):
            pending_reset = np.asarray(term) | np.asarray(trunc)
    return steps / elapsed


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--num-envs", type=int, default=256, help="games in the batched vector env (default 256)"
    )
    parser.add_argument(
        "--sync-envs",
        type=int,
        default=None,
        help="games in the SyncVectorEnv (default: --num-envs; 0 skips it)",
    )
    parser.add_argument("--opponents", default="random", help="opponent spec (default random)")
    parser.add_argument("--players", type=int, default=2, help="players per game (default 2)")
    parser.add_argument("--modules", nargs="*", default=[], help="Cities of Splendor modules")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    args = parser.parse_args(argv)
    check_game_args([args.players], args.modules)
    sync_envs = args.num_envs if args.sync_envs is None else args.sync_envs
    if args.num_envs < 1 or sync_envs < 0:
        raise CliError("--num-envs must be at least 1 and --sync-envs at least 0")
    if args.seconds <= 0:
        raise CliError(f"--seconds must be positive, got {args.seconds}")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    import gymnasium

    import splendor_env

    options = {"opponents": args.opponents, "num_players": args.players, "modules": tuple(args.modules)}
    game = f"{args.players} players, modules {list(args.modules) or 'none'}, opponents {args.opponents}"
    print(f"learner steps per second ({game}; one thread, wall clock):")
    results: dict[str, Any] = {"num_envs": args.num_envs, "sync_envs": sync_envs, **options}
    results["modules"] = list(args.modules)
    batched = gymnasium.make_vec(splendor_env.GYMNASIUM_ID, num_envs=args.num_envs, **options)
    learner_steps_per_second(batched, min(0.3, args.seconds))  # warm-up: compile, caches
    results["batched"] = learner_steps_per_second(batched, args.seconds)
    print(f"  make_vec (SplendorVectorEnv, {args.num_envs} games): {results['batched']:>12,.0f}")
    if sync_envs:
        sync = gymnasium.make_vec(
            splendor_env.GYMNASIUM_ID, num_envs=sync_envs, vectorization_mode="sync", **options
        )
        learner_steps_per_second(sync, min(0.3, args.seconds))
        results["sync"] = learner_steps_per_second(sync, args.seconds)
        results["ratio"] = results["batched"] / results["sync"]
        print(f"  make_vec(vectorization_mode='sync', {sync_envs} games): {results['sync']:>12,.0f}")
        print(f"  ratio: {results['ratio']:.1f}x")
    return results


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.vec"))
