"""Multi-agent PPO with action masks on Ray RLlib: one shared policy for every seat.

    python -m training.rllib_ppo --config configs/rllib_ppo_2p.yaml [--set ppo.lr=1e-4 ...]
    python -m training.rllib_ppo --config configs/rllib_ppo_2p.yaml --resume
    python -m training.rllib_ppo --config configs/rllib_ppo_2p.yaml --address auto   # a running cluster

Needs the rllib extra (pip install -e '.[train,rllib]'), which pins gymnasium 1.2.2:
install it in a virtual environment of its own. The run is :func:`training.rllib.loop.train`;
the trained module plays as the agent spec rllib:OUTPUT_DIR/checkpoint. docs/tutorials/rllib.md
describes the config, the output folder and a measured run.
"""

from __future__ import annotations

import argparse
import sys

from training.common.cli import CliError, run_cli
from training.common.ray_cluster import use_token_auth


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(
        prog="python -m training.rllib_ppo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--config", required=True, help="YAML config file")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--resume", action="store_true", help="continue output_dir's checkpoint")
    ap.add_argument("--address", help="a running Ray cluster to join (e.g. auto, or HOST:6379)")
    args = ap.parse_args(argv)
    use_token_auth(args.address)  # before Ray is imported: it reads RAY_AUTH_MODE then
    try:
        import ray.rllib  # noqa: F401 - checked before anything runs
    except ImportError as exc:
        raise CliError(f"Ray RLlib is not installed ({exc}): pip install -e '.[train,rllib]'") from None
    from training.rllib import config as config_mod
    from training.rllib.loop import check_resume, train

    cfg = config_mod.load(args.config, args.overrides)
    if args.resume:
        check_resume(cfg)
    return train(cfg, resume=args.resume, address=args.address)


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.rllib_ppo"))
