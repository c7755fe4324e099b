"""Refit a network's critic on the results of many games of the network alone; its actor is kept.

    python -m training.critic_fit --config configs/critic_fit_2p.yaml [--workers N]
        [--backend local|ray] [--address HOST:6379|auto] [--set key=value ...]

Writes ``output_dir/best.zip`` (``ppo:`` and ``az:`` load it; ``training.ship`` ships it),
``metrics.json`` and ``fit.json``. The work is :func:`training.critic.fit.critic_fit`; what it
does: docs/training.md; what it gained: docs/development-notes.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from training.common.cli import run_cli
from training.common.jobs import add_backend_arguments, check_backend
from training.critic.config import load
from training.critic.fit import critic_fit


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(
        prog="python -m training.critic_fit",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--config", required=True, help="YAML config file (configs/critic_fit_2p.yaml)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    add_backend_arguments(ap, workers_help="game-playing processes / Ray CPUs")
    args = ap.parse_args(argv)
    check_backend(args.backend, args.address, args.workers)
    cfg = load(args.config, args.overrides)
    return critic_fit(cfg, args.workers, args.backend, args.address)


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.critic_fit"))
