"""Command line for game records (:mod:`splendor_env.records`): replay and check them, draw them.

CLI::

    python -m training.records replay results/tournament/games.jsonl [--index 3] [--moves] [--render]
    python -m training.records video results/tournament/games.jsonl --index 0 --out game.gif
    python -m training.records picture results/tournament/games.jsonl --index 0 --move 40 --out board.png

``replay`` replays every record (or only line ``--index``, 0-based) and exits
non-zero if any replay does not reproduce the recorded result; ``--moves``
prints the game move by move in words, ``--render`` the board after every move
(with ``--moves``) or the final position. ``video`` draws one record as a GIF
(or an MP4 when ``imageio-ffmpeg`` is installed): the deal, then one frame per
decision with the move in words under the board (:mod:`splendor_env.picture`;
needs the ``render`` extra); ``picture`` draws one position of it as PNG or
SVG (``--move k``: after the first k decisions; default the final position).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from splendor_env.records import (
    RESULT_FIELDS,
    check_record,
    env_at,
    read_records,
    replay,
    replay_moves,
    write_video,
)
from training.common.cli import CliError, run_cli


def _record_at(records: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    """The record ``--index`` names, refused with the file's record count when out of range."""
    if not 0 <= args.index < len(records):
        raise CliError(f"--index {args.index} out of range: {args.file} holds {len(records)} record(s)")
    return records[args.index]


def _check_seat(record: dict[str, Any], seat: int | None) -> None:
    """``--seat`` is ``None`` (a spectator) or a seat of the record's game."""
    if seat is not None and not 0 <= seat < int(record["num_players"]):
        raise ValueError(f"--seat must be in 0..{int(record['num_players']) - 1}, got {seat}")


def _replay_cli(args: argparse.Namespace) -> int:
    records = list(read_records(args.file))
    if args.index is not None:
        chosen = [(args.index, _record_at(records, args))]
    else:
        chosen = list(enumerate(records))
    bad = 0
    for i, rec in chosen:
        try:
            check_record(rec)
            if args.moves:
                print(f"record {i}: seed {rec['seed']}, agents {rec.get('agents')}")
                for line in replay_moves(rec, render=args.render):
                    print(line)
            ok, result, text = replay(rec, render=args.render and not args.moves)
        except ValueError as exc:
            raise CliError(f"{args.file}: record {i}: {exc}") from exc
        if text:
            print(text)
        status = "ok" if ok else "MISMATCH"
        print(
            f"record {i}: {status} ({len(rec['actions'])} actions, agents {rec.get('agents')}, "
            f"prestige {result['prestige']}, winners {result['winners']})"
        )
        if not ok:
            bad += 1
            print(f"  recorded: { {k: rec.get(k) for k in RESULT_FIELDS} }")
            print(f"  replayed: { {k: result[k] for k in RESULT_FIELDS} }")
    print(f"{len(chosen) - bad}/{len(chosen)} record(s) reproduced")
    return 1 if bad else 0


def _video_cli(args: argparse.Namespace) -> int:
    record = _record_at(list(read_records(args.file)), args)
    try:
        check_record(record)
        _check_seat(record, args.seat)
        frames = write_video(record, args.out, seat=args.seat, fps=args.fps, scale=args.scale)
    except ValueError as exc:
        raise CliError(f"{args.file}: record {args.index}: {exc}") from exc
    print(f"wrote {args.out}: {frames} frames (the deal + {frames - 1} moves)")
    return 0


def _picture_cli(args: argparse.Namespace) -> int:
    from splendor_env.picture import to_png, to_svg

    record = _record_at(list(read_records(args.file)), args)
    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".svg"):
        raise CliError(f"--out must name a .png or an .svg file, got {out.name!r}")
    try:
        check_record(record)
        move = len(record["actions"]) if args.move is None else args.move
        env = env_at(record, move)
        _check_seat(record, args.seat)
    except ValueError as exc:
        raise CliError(f"{args.file}: record {args.index}: {exc}") from exc
    names = record.get("agents")
    if out.suffix.lower() == ".svg":
        out.write_text(to_svg(env.game_state, args.seat, names=names), encoding="utf-8")
    else:
        out.write_bytes(to_png(env.game_state, args.seat, names=names))
    print(f"wrote {out}: record {args.index} after move {move} of {len(record['actions'])}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.records", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="replay records through the env and check their results")
    rp.add_argument("file", help="JSON-lines file written by the tournament (--save-games)")
    rp.add_argument("--index", type=int, default=None, help="replay only this record (0-based line)")
    rp.add_argument("--moves", action="store_true", help="print every move in words")
    rp.add_argument(
        "--render",
        action="store_true",
        help="print the board after every move (with --moves) or the final one",
    )
    vp = sub.add_parser("video", help="draw one record as a GIF (or MP4): one frame per move")
    vp.add_argument("file", help="JSON-lines file of game records")
    vp.add_argument("--index", type=int, default=0, help="which record (0-based line; default 0)")
    vp.add_argument("--out", required=True, help="output file: .gif (Pillow) or .mp4 (needs imageio-ffmpeg)")
    vp.add_argument("--seat", type=int, default=None, help="draw as this seat sees it (default: a spectator)")
    vp.add_argument("--fps", type=float, default=2.0, help="frames (moves) per second (default 2)")
    vp.add_argument(
        "--scale", type=float, default=1.0, help="shrink the frames, 0.1..1 (default 1: 1280x840)"
    )
    pp = sub.add_parser("picture", help="draw one position of a record as PNG or SVG")
    pp.add_argument("file", help="JSON-lines file of game records")
    pp.add_argument("--index", type=int, default=0, help="which record (0-based line; default 0)")
    pp.add_argument("--move", type=int, default=None, help="after this many decisions (default: the end)")
    pp.add_argument("--out", required=True, help="output file: .png (needs the render extra) or .svg")
    pp.add_argument("--seat", type=int, default=None, help="draw as this seat sees it (default: a spectator)")
    args = parser.parse_args(argv)
    commands = {"video": _video_cli, "picture": _picture_cli, "replay": _replay_cli}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.records"))
