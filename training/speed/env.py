"""Environment throughput benchmark: batched engine, AEC env, and a PettingZoo reference.

Usage::

    python -m training.speed.env                 # full run (about 1-2 minutes)
    python -m training.speed.env --seconds 0.5   # quick look
    python -m training.speed.env --json out.json # also write the figures as JSON

In one run, with uniformly random legal actions, 2 players, one thread, it prints:

1. batched engine steps per second per core (masks and observations included)
   for B in {1, 64, 1024, 4096}, and B=1024 with each Cities module alone and all
   four, with their ratio to a base game measured just before (same process);
2. the wrapped (``splendor_env.env``) and raw AEC env, steps per second;
3. PettingZoo's ``connect_four_v3`` (wrapped) in the same loop, and the ratio
   of (2) to it;
4. peak memory per 1000 batched games (tracemalloc, all buffers included) and
   the one-time numba compile time from a cold cache (in a subprocess).

The AEC loop is PettingZoo's documented one (``agent_iter`` / ``last`` /
``step``) with a random legal action drawn from the mask, the same code for
both environments.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from training.common.cli import run_cli

BATCH_SIZES = (1, 64, 1024, 4096)


def bench_batched(batch: int, seconds: float, num_players: int = 2, modules: tuple[str, ...] = ()) -> float:
    """Steps per second of :class:`SplendorBatch` (all games stepped each call)."""
    from splendor_env.vector import SplendorBatch, sample_legal_actions

    venv = SplendorBatch(batch, num_players, copy=False, modules=modules)
    _, masks, _ = venv.reset(seed=0)
    rng = np.array([12345], dtype=np.uint64)
    venv.step(sample_legal_actions(masks, rng))  # warm-up (compiled code already cached)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            _, masks, *_ = venv.step(sample_legal_actions(masks, rng))
        steps += 10 * batch
    return steps / (time.perf_counter() - start)


def bench_aec(make_env, seconds: float) -> float:
    """Steps per second of an AEC env under PettingZoo's standard loop with random legal moves."""
    env = make_env()
    rng = np.random.default_rng(0)
    steps = 0
    game = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=game)
        game += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(legal.size)])
            env.step(action)
            steps += 1
            del agent
    return steps / (time.perf_counter() - start)


MODULE_CONFIGS = {
    "cities": ("cities",),
    "trading_posts": ("trading_posts",),
    "orient": ("orient",),
    "strongholds": ("strongholds",),
    "all_modules": ("cities", "trading_posts", "orient", "strongholds"),
}


def bench_games() -> dict[str, tuple[str, ...]]:
    """Every game the module benchmarks time, by name: the base game, then :data:`MODULE_CONFIGS`
    (read when called, so a test can narrow it)."""
    return {"base": (), **MODULE_CONFIGS}


def bench_modules(seconds: float, batch: int = 1024) -> dict[str, float]:
    """Module games at B=1024 and their ratio to a base game measured right before each, in one process
    (a shared machine drifts: the ratio of neighbouring measurements is steadier than either figure)."""
    results: dict[str, float] = {}
    for name, modules in MODULE_CONFIGS.items():
        base = bench_batched(batch, seconds)
        sps = bench_batched(batch, seconds, modules=modules)
        results[f"batched_B{batch}_{name}"] = sps
        results[f"ratio_B{batch}_{name}_vs_base"] = sps / base
        label = f"batched B={batch}, {name.replace('_', ' ')}"
        print(f"{label:<34} {sps:>12,.0f}  ({sps / base:.0%} of the base game)")
    return results


def bench_modules_cpu(rounds: int = 8, steps: int | None = None, batch: int = 1024) -> dict[str, float]:
    """Each module game's share of the base game's speed, from process CPU time over ``rounds``
    rounds of ``steps`` batched steps (by default about 41,000 game steps per run).

    Two figures per game. ``cpu_share_median_*``: each round times the base game, the module game,
    then the base game again, and takes the module game's share of the mean of the two base runs
    around it; the median over rounds (and its quartiles, ``cpu_share_q1_*`` / ``cpu_share_q3_*``)
    is what to compare, as a host whose speed drifts moves both neighbours alike. ``cpu_ratio_*``:
    the share between each game's best run, the figure of earlier versions (steady on an idle
    host, biased by a single lucky run on a noisy one).

    At B=1024 the games' rows (7.4 KB per module game, 3.4 KB per base game) do not stay in the
    caches between steps, so the figure includes memory traffic; a small ``batch`` keeps them
    cached, but each batched step's fixed cost (two Python calls, a few microseconds) is then
    shared by fewer games and raises every module's share."""
    if steps is None:
        steps = max(1, 40_960 // batch)
    from splendor_env import vector

    configs = bench_games()
    timed = {name: cpu_timer(vector, batch, modules, steps) for name, modules in configs.items()}
    times: dict[str, list[float]] = {name: [] for name in configs}
    shares: dict[str, list[float]] = {name: [] for name in configs}
    for _ in range(rounds):
        for name in configs:
            share, t, around = sandwiched(timed["base"], timed[name])
            times[name].append(t)
            times["base"] += around
            shares[name].append(share)
    best = {name: min(ts) for name, ts in times.items()}
    results = {}
    for name in configs:
        q1, median, q3 = quartiles(shares[name])
        results[f"cpu_ns_per_step_{name}"] = best[name] * 1e9
        results[f"cpu_ratio_{name}_vs_base"] = best["base"] / best[name]
        results[f"cpu_share_median_{name}"] = median
        results[f"cpu_share_q1_{name}"] = q1
        results[f"cpu_share_q3_{name}"] = q3
        print(
            f"{name:<16} {best[name] * 1e9:>7.0f} ns per step (best)   share of the base game: "
            f"median {median:.0%} [quartiles {q1:.0%}, {q3:.0%}], best runs {best['base'] / best[name]:.0%}"
        )
    return results


def cpu_timer(vector: Any, batch: int, modules: tuple[str, ...], steps: int) -> Callable[[], float]:
    """A function timing ``steps`` batched steps (uniformly random legal actions, 2 players) of one
    game of ``vector`` (a ``splendor_env.vector`` module, or another engine version's): process CPU
    seconds per game step. The game carries on from one call to the next."""
    batch_class = getattr(vector, "SplendorBatch", None) or vector.VectorEnv  # engines before 0.5.0
    venv = batch_class(batch, 2, copy=False, modules=modules)
    _, masks, _ = venv.reset(seed=0)
    rng = np.array([12345], dtype=np.uint64)
    sample = vector.sample_legal_actions

    def timed() -> float:
        nonlocal masks
        start = time.process_time()
        for _ in range(steps):
            _, masks, *_ = venv.step(sample(masks, rng))
        return (time.process_time() - start) / (steps * batch)

    return timed


def sandwiched(base: Callable[[], float], game: Callable[[], float]) -> tuple[float, float, list[float]]:
    """Time ``base``, ``game``, then ``base`` again (timers from :func:`cpu_timer`): the game's share
    of the mean speed of its two base-game neighbours, the game's time and the two base times."""
    before, t, after = base(), game(), base()
    return (before + after) / 2 / t, t, [before, after]


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """First quartile, median and third quartile."""
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return float(q1), float(median), float(q3)


def memory_per_1000_games(batch: int = 1000, steps: int = 200) -> float:
    """Peak traced memory (MB) of a SplendorBatch of ``batch`` games while stepping, per 1000 games."""
    from splendor_env.vector import SplendorBatch, sample_legal_actions

    tracemalloc.start()
    venv = SplendorBatch(batch, 2)
    _, masks, _ = venv.reset(seed=0)
    rng = np.array([1], dtype=np.uint64)
    for _ in range(steps):
        _, masks, *_ = venv.step(sample_legal_actions(masks, rng))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6 * 1000 / batch


_COLD_COMPILE = """
import time, numpy as np
t = time.perf_counter()
import splendor_env
from splendor_env.vector import SplendorBatch, sample_legal_actions
e = splendor_env.env(); e.reset(seed=0); e.step(int(np.flatnonzero(e.observe('player_0')['action_mask'])[0]))
v = SplendorBatch(4); _, m, _ = v.reset(seed=0); v.step(sample_legal_actions(m, np.array([1], dtype=np.uint64)))
print(time.perf_counter() - t)
"""


def cold_compile_seconds() -> float:
    """Import + first step of the AEC env and the batched path with an empty numba cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run(
            [sys.executable, "-c", _COLD_COMPILE], env=env, capture_output=True, text=True, check=True
        )
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--skip-compile", action="store_true", help="skip the cold-cache compile measurement")
    parser.add_argument(
        "--module-rounds",
        type=int,
        metavar="N",
        help="only each module game's share of the base game's speed, from CPU time over N rounds "
        "that time each module game between two base-game runs (the issue-12 figures; about 0.5 s "
        "per round)",
    )
    parser.add_argument(
        "--module-batch",
        type=int,
        default=1024,
        metavar="B",
        help="games per batch for --module-rounds (default 1024, the issue-12 setting; a small batch "
        "keeps the games' rows cached, but the fixed cost per batched step then counts more)",
    )
    args = parser.parse_args(argv)
    if args.module_rounds is not None and args.module_rounds < 1:
        parser.error(f"--module-rounds must be at least 1, got {args.module_rounds}")
    if args.module_batch < 1:
        parser.error(f"--module-batch must be at least 1, got {args.module_batch}")

    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    if args.module_rounds is not None:
        results = bench_modules_cpu(rounds=args.module_rounds, batch=args.module_batch)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
        return results
    import splendor_env

    results: dict[str, Any] = {"cores": os.cpu_count(), "num_players": 2}
    if not args.skip_compile:
        results["cold_compile_s"] = cold_compile_seconds()
        print(f"cold-cache compile (import + first steps): {results['cold_compile_s']:.1f} s")
    print(f"{'environment':<34} {'steps/s':>12}")
    for batch in BATCH_SIZES:
        sps = bench_batched(batch, args.seconds)
        results[f"batched_B{batch}"] = sps
        print(f"{f'batched engine B={batch} (1 core)':<34} {sps:>12,.0f}")
    results.update(bench_modules(args.seconds))
    results["aec_wrapped"] = bench_aec(lambda: splendor_env.env(num_players=2), args.seconds)
    print(f"{'splendor_env.env (wrapped AEC)':<34} {results['aec_wrapped']:>12,.0f}")
    results["aec_raw"] = bench_aec(lambda: splendor_env.raw_env(num_players=2), args.seconds)
    print(f"{'splendor_env.raw_env (raw AEC)':<34} {results['aec_raw']:>12,.0f}")
    try:  # PettingZoo's registry builds it with its standard wrapper stack, as connect_four_v3.env() does
        import pettingzoo

        pettingzoo.make("aec", "classic/connect_four-v3")
    except ImportError as exc:  # pygame missing: the reference needs the 'bench' extra
        print(f"connect_four_v3 unavailable ({exc}); install the 'bench' extra for the reference")
    else:
        results["connect_four_v3_wrapped"] = bench_aec(
            lambda: pettingzoo.make("aec", "classic/connect_four-v3"), args.seconds
        )
        results["ratio_wrapped_vs_connect_four"] = results["aec_wrapped"] / results["connect_four_v3_wrapped"]
        print(f"{'connect_four_v3 (wrapped AEC)':<34} {results['connect_four_v3_wrapped']:>12,.0f}")
        print(
            f"ratio splendor wrapped / connect_four wrapped: {results['ratio_wrapped_vs_connect_four']:.2f}x"
        )
    results["memory_mb_per_1000_games"] = memory_per_1000_games()
    print(f"peak memory per 1000 batched games: {results['memory_mb_per_1000_games']:.1f} MB")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return results


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.env"))
