"""Expert iteration (AlphaZero-style): a network improved from its own search, for every game.

    python -m training.search_train --config configs/search_2p.yaml [--resume | --force] [--workers N]
        [--backend local|ray] [--address HOST:6379|auto] [--set key=value ...] [--no-progress]

Each iteration plays self-play games with ``az`` and the current network, trains
the network towards the search's visits and the games' results, and gates it
against the current one; every step is checkpointed, so ``--resume`` continues
where a run stopped. A new run into an ``output_dir`` that holds a run is refused unless
``--force`` empties it first. The loop is :func:`training.expert_iteration.loop.search_train`; the
steps, the config keys and the output folder are described in docs/training.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from training.common.cli import run_cli
from training.common.jobs import add_backend_arguments, check_backend
from training.expert_iteration.config import load
from training.expert_iteration.loop import search_train


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
        "--force",
        action="store_true",
        help="start afresh in an output_dir that holds a run: empty it first (else such a start is refused)",
    )
    add_backend_arguments(ap, workers_help="self-play processes / Ray CPUs")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (for log files)")
    args = ap.parse_args(argv)
    check_backend(args.backend, args.address, args.workers)
    cfg = load(args.config, args.overrides)
    return search_train(
        cfg, args.resume, args.workers, args.backend, args.address, not args.no_progress, force=args.force
    )


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.search_train"))
