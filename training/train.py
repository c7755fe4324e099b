"""MaskablePPO self-play training, driven by one YAML config.

    python -m training.train --config configs/ppo_2p.yaml [--set ppo.learning_rate=3e-4 ...]
    python -m training.train --config configs/ppo_2p.yaml --resume runs/ppo_2p/checkpoints/latest.zip
    python -m training.train --config configs/ppo_2p.yaml --force  # afresh: empties output_dir first

The run is :func:`training.ppo.loop.train`; docs/training.md describes the config,
the output directory and how several player counts or modules are trained.
"""

from __future__ import annotations

import argparse
import sys

from training.common.cli import run_cli
from training.ppo import config as config_mod
from training.ppo.loop import train
from training.ppo.model import check_resume


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m training.train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--config", required=True, help="YAML config file")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--resume", help="checkpoint .zip to continue from (e.g. runs/x/checkpoints/latest.zip)")
    ap.add_argument(
        "--force",
        action="store_true",
        help="start afresh in an output_dir that holds a run: empty it first (else such a start is refused)",
    )
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (for log files)")
    args = ap.parse_args(argv)
    cfg = config_mod.load(args.config, args.overrides)
    if args.resume:
        check_resume(args.resume, cfg)
    train(cfg, resume=args.resume, progress_bar=not args.no_progress, force=args.force)


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.train"))
