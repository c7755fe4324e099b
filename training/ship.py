"""Ship a network trained by :mod:`training.search_train`: copy it into ``agents/shipped`` with its metadata.

    python -m training.ship runs/search_2p az_2p --description "2-player base game: ..." \\
        --command "python -m training.search_train --config configs/search_2p.yaml --workers 2" \\
        [--evaluation results/x.json --evaluation-command "python -m training.evaluate ..." ...]
        [--default] [--dest agents/shipped]

Why a command and not a copy by hand: a shipped model is found by
:mod:`agents.nets.shipped` from its ``NAME.json`` (the game it covers, its sizes), and
the models page promises the config, the command, the training time of every
piece of a resumed run and the measured results beside each file; reading them
from the run directory (``config.yaml``, ``checkpoints/state.json``,
``metrics.json``) keeps them true. The game is the one the network records, and a
run whose ``config.yaml`` names another is refused.

``--evaluation FILE --evaluation-command CMD`` (repeatable, in pairs) attaches
the results that ``python -m training.evaluate ... --json FILE`` wrote, each row
with the command that produced it (``evaluation``; the commands also in
``evaluation_command``, one a line), as the other shipped models' metadata has them.
``--iteration N`` ships the run's snapshot after N iterations
(``snapshot_every`` in its config) instead of its final ``best.zip``, with the
time, positions, pieces and curve of those N iterations only.
``--az-option ptemp=1.5`` (repeatable) records a search option ``az`` reads this
network with (``"az"`` in the metadata; only ``c``, ``fpu`` and ``ptemp``, see
:data:`agents.players.az.NETWORK_OPTIONS`); an option given in an ``az`` spec still wins.
``--default`` marks the network as ``az``'s default for its games
(:func:`agents.nets.shipped.default_model` prefers it over the others that cover
the game) and takes the mark from the shipped model that had it.

The work is :func:`training.expert_iteration.ship.ship`; this module only reads the command line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from training.common.cli import run_cli
from training.expert_iteration.ship import ship


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m training.ship", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path, help="a search-training output_dir (holds best.zip)")
    ap.add_argument("name", help="the shipped name: NAME.zip, ppo:NAME, az:NAME")
    ap.add_argument("--description", required=True, help="one line: the game and what it measured")
    ap.add_argument("--command", required=True, help="the training command, as run")
    ap.add_argument(
        "--evaluation", type=Path, action="append", default=[], help="training.evaluate --json output"
    )
    ap.add_argument(
        "--evaluation-command", action="append", default=[], help="the command that wrote each --evaluation"
    )
    ap.add_argument("--default", action="store_true", help="az's default network for its games")
    ap.add_argument(
        "--iteration",
        type=int,
        help="ship the snapshot after N iterations (snapshots/best-NNNN.zip), not best.zip",
    )
    ap.add_argument(
        "--az-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a search option az reads this network with (c, fpu, ptemp), e.g. ptemp=1.5; repeatable",
    )
    ap.add_argument("--dest", type=Path, default=Path(__file__).resolve().parents[1] / "agents" / "shipped")
    args = ap.parse_args(argv)
    out = ship(
        args.run_dir,
        args.name,
        args.description,
        args.command,
        args.evaluation,
        args.evaluation_command,
        args.default,
        args.dest,
        args.iteration,
        args.az_option,
    )
    print(f"shipped {out.with_suffix('.zip')} and {out}")


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.ship"))
