"""Expert iteration (AlphaZero-style): a network improved from its own search, for every game.

    python -m training.search_train --config configs/search_2p.yaml [--resume] [--workers N]
        [--backend local|ray] [--address HOST:6379|auto] [--set key=value ...] [--no-progress]

Why: ``az`` (PUCT guided by a PPO card-slot network) plays better than the
network alone; training the network towards what the search chose (its root
visit counts) and towards the games' real results makes a better prior and
value, and so a better search. Each iteration:

1. **Self-play** (:mod:`training.search.selfplay`): ``selfplay.games`` games,
   every seat the same ``az`` agent with the current network; the first
   ``selfplay.sample_moves`` decisions sample from the visit counts so games
   differ. Every decision records the observation of the seat on move, its
   legal mask, the visit distribution over the legal ids and, at the end, that
   seat's terminal reward. Games run on :func:`training.common.jobs.map_jobs`
   (local processes or Ray), each seeded from (seed, iteration, game).
2. **Replay buffer** (:mod:`training.search.replay`): the last ``buffer.capacity`` positions.
3. **Training** (:mod:`training.search.learner`): ``train.epochs`` passes over the buffer, Adam, the actor's
   masked logits by cross-entropy to the visit targets, the critic by MSE to
   the outcome. The network stays a MaskablePPO ``.zip``: ``ppo:PATH`` plays it
   without search, ``az:PATH`` with.
4. **Gate** (:mod:`training.search.gate`): the trained network (``az``, ``gate.sims``) against
   the current one in ``gate.games`` seat-rotated games (:func:`training.matches.match.play_match`);
   it becomes the self-play network if its win rate reaches ``gate.threshold``
   (on the 2-player scale, :func:`~training.search.gate.gate_score`: a rate with ``n`` players counts
   ``rate * n / 2``, pooled over the player counts). Otherwise the current one is
   kept for self-play while the learner goes on training (AlphaGo Zero's rule).

Output directory (``output_dir``)::

    config.yaml                  the resolved config
    tb/                          TensorBoard scalars
    best.zip                     the gated network (the run's result): ppo:best.zip or az:best.zip
    checkpoints/learner.zip      the network being trained
    checkpoints/best.zip         = best.zip
    checkpoints/buffer.npz       the replay buffer
    checkpoints/optimizer.pt     Adam's state
    checkpoints/state.json       iteration, step within it, rng state, metrics (written last)
    metrics.json                 one row per iteration (wall_seconds: the run's time when it ended)
    snapshots/best-NNNN.zip      with snapshot_every: K, best.zip after every K-th iteration

``--resume`` continues from ``checkpoints/`` (written after every step), with
its buffer, optimizer and rng; ``max_wall_minutes`` stops cleanly after the
step in which it passes, checkpointed. The loop is :func:`training.search.loop.search_train`;
this module only reads the command line.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from training.common.cli import run_cli
from training.common.jobs import BACKENDS, check_backend
from training.search.config import load
from training.search.loop import search_train


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(
        prog="python -m training.search_train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--config", required=True, help="YAML config file (configs/search_2p.yaml)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--resume", action="store_true", help="continue from output_dir/checkpoints")
    ap.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="self-play processes / Ray CPUs"
    )
    ap.add_argument("--backend", choices=BACKENDS, default="local")
    ap.add_argument(
        "--address", default=None, help="existing Ray cluster: HOST:6379, auto or ray://HOST:10001"
    )
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (for log files)")
    args = ap.parse_args(argv)
    check_backend(args.backend, args.address, args.workers)
    cfg = load(args.config, args.overrides)
    return search_train(cfg, args.resume, args.workers, args.backend, args.address, not args.no_progress)


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.search_train"))
