"""Measure the benchmark protocol's anchors: the round robin of its references, as their own cards.

    python -m training.anchors [--out results/cards/protocol-2] [--workers 2] [--players 2] [--modules none]

Each reference at its budget plays its protocol-2 card (every other reference, itself left out), one
game at a time, saved chunk by chunk into ``--out/<reference>/games``; after each game the anchors of
every finished game are fitted and written to ``--out/anchors.json``. It always goes on where the
folder stopped (a folder of another protocol is refused), so run it again until every game is done.
Cost and what the anchors mean: docs/benchmark.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from training.common.cli import chosen_games, note_saving, run_cli
from training.common.games import config_label
from training.common.jobs import add_backend_arguments, check_backend
from training.matches.anchors import ROUND_ROBIN, fitted_anchors, play_round_robin, write_anchors
from training.matches.protocol import PROTOCOL_2, sorted_modules


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m training.anchors",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--out", default=str(ROUND_ROBIN), help="folder of the references' cards and anchors.json"
    )
    ap.add_argument("--players", type=int, nargs="+", default=None, help="only these player counts")
    ap.add_argument(
        "--modules", nargs="+", default=None, help="only the base game (none) or the all-module game (all)"
    )
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    check_backend(args.backend, args.address, args.workers)
    games = [(n, sorted_modules(m)) for n, m in PROTOCOL_2["configs"]]
    wanted = chosen_games(args.players, args.modules)
    if wanted is not None:
        games = [g for g in games if g in wanted]
    out = Path(args.out)
    note_saving(out, resume_flag="")  # a stop names the round robin's folder; the same command goes on
    meetings: dict = {}
    for game in games:
        meetings.update(play_round_robin(out, args.workers, args.backend, args.address, [game]))
        path = write_anchors(out, meetings)
        anchors = fitted_anchors(meetings)[config_label(*game)]
        print(f"{config_label(*game)} anchors: " + ", ".join(f"{k} {v:.0f}" for k, v in anchors.items()))
        print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.anchors"))
