"""How fast the board pictures draw: frames per second of ``render_mode="rgb_array"``, SVG and PNG.

Why: a video recorder (Gymnasium's ``RecordVideo``, ``training.records video``)
draws one frame per step, so drawing must not dominate a recorded run. The
target is 50 rgb_array frames a second on one core for a 4-player game with
every module (the largest board). Positions come from seeded random games
(several phases, full reserves, strongholds on cards), so the text cache meets
new strings as it would in a real game, not one frame drawn over and over.

::

    python -m training.speed.render                      # 4 players, all modules, 300 positions
    python -m training.speed.render --players 2 --modules none --positions 100

Drawing is single-threaded Python and Pillow; ``--pin`` also pins the process
to one CPU (Linux), as the target says. The machine may be shared: figures
from a busy machine are lower bounds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from splendor_env import picture
from splendor_env.env import raw_env
from splendor_env.state import MODULE_NAMES
from training.common.cli import CliError, check_game_args, run_cli


def sample_positions(
    num_players: int, modules: tuple[str, ...], count: int, seed: int = 0
) -> list[np.ndarray]:
    """``count`` state arrays from seeded random games, every 3rd decision (new games as they end)."""
    env = raw_env(num_players=num_players, modules=modules)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    states: list[np.ndarray] = []
    step = 0
    while len(states) < count:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            states.append(env.game_state.copy())
            env.reset(seed=int(rng.integers(2**31)))
            continue
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        step += 1
        if step % 3 == 0:
            states.append(env.game_state.copy())
    return states[:count]


def frames_per_second(draw: Callable[[np.ndarray], Any], states: list[np.ndarray], repeat: int) -> float:
    """Frames a second of ``draw`` over ``states`` (``repeat`` passes; the first state drawn once first,
    so font loading is not timed)."""
    draw(states[0])
    start = time.perf_counter()
    for _ in range(repeat):
        for s in states:
            draw(s)
    return repeat * len(states) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(
        prog="python -m training.speed.render", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--players", type=int, default=4, help="2, 3 or 4 (default 4)")
    parser.add_argument(
        "--modules", default="all", help="comma-separated module names, 'all' (default) or 'none'"
    )
    parser.add_argument("--positions", type=int, default=300, help="positions drawn per pass (default 300)")
    parser.add_argument("--repeat", type=int, default=1, help="passes over the positions (default 1)")
    parser.add_argument("--pin", action="store_true", help="pin the process to one CPU first (Linux)")
    args = parser.parse_args(argv)
    modules = (
        MODULE_NAMES
        if args.modules == "all"
        else ()
        if args.modules == "none"
        else tuple(m for m in args.modules.split(",") if m)
    )
    check_game_args([args.players], modules)
    if args.positions < 1 or args.repeat < 1:
        raise CliError("--positions and --repeat must be at least 1")
    if args.pin:
        if not hasattr(os, "sched_setaffinity"):
            raise CliError("--pin needs os.sched_setaffinity (Linux)")
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    states = sample_positions(args.players, modules, args.positions)
    results = {
        "rgb_array": frames_per_second(lambda s: picture.to_rgb_array(s, seat=0), states, args.repeat),
        "svg": frames_per_second(lambda s: picture.to_svg(s, seat=0), states, args.repeat),
        "png": frames_per_second(lambda s: picture.to_png(s, seat=0), states, args.repeat),
    }
    game = f"{args.players} players, modules: {', '.join(modules) or 'none'}"
    print(
        f"board pictures, {game}; {len(states)} positions x {args.repeat}, {picture.WIDTH}x{picture.HEIGHT}"
    )
    for name, fps in results.items():
        print(f"  {name:<9} {fps:8.1f} frames/s  ({1000 / fps:6.2f} ms a frame)")
    return results


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.render"))
