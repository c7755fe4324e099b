"""Write the leaderboard page from the committed benchmark cards.

    python -m training.leaderboard [--cards results/cards] [--out docs/results/leaderboard.md] [--check]

Run it after committing a card under ``results/cards/`` (``python -m training.benchmark SPEC --out
results/cards/NAME``): the page is :func:`training.matches.leaderboard.leaderboard_markdown` of the
cards, and a test fails while the committed page differs from it. ``--check`` writes nothing and
exits 1 when the page is not current.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from training.common.cli import run_cli
from training.matches.leaderboard import CARDS, PAGE, leaderboard_markdown


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m training.leaderboard",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--cards", default=str(CARDS), help="folder of the cards (each NAME/card.json)")
    ap.add_argument("--out", default=str(PAGE), help="the page to write")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the page is not current")
    args = ap.parse_args(argv)
    text = leaderboard_markdown(Path(args.cards))
    out = Path(args.out)
    if args.check:
        current = out.is_file() and out.read_text(encoding="utf-8") == text
        print(f"{out} is {'current' if current else 'not current: run python -m training.leaderboard'}")
        return 0 if current else 1
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.leaderboard"))
