"""How the table's analysis view does: its answers timed against the server's cap, its win-chance bar scored.

Why a benchmark and not a test: both targets are figures on a shared machine. The analysis
(:mod:`training.app.analysis`) must answer within the server's ``--max-ms-per-move`` for 2, 3 and 4
players and the 2-player game with every module; and its bar must mean something: over the last ten
decisions of finished games, the side that went on to win should get, on average, more than 50%.

::

    python -m training.speed.analysis                      # 50 scored games, the default budget
    python -m training.speed.analysis --games 10 --sims 200

It starts one server on a free port (:func:`training.app.server.serve_in_thread`) and asks it over HTTP,
as the page does, about positions of ``greedy`` self-play records (cheap to make; opened with
``POST /api/records``, asked with ``GET /api/replays/ID/analysis?move=k``: a replay is analysed from
public information only, the harder case for the bar). Times are the client's, request to parsed
answer, with the server's own ``elapsed_ms`` beside them (the search's part; a network's first load per
game kind is left out by a warm-up question).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from typing import Any

from training.common.cli import CliError, run_cli

#: The games timed against the cap: name -> (players, modules).
KINDS: dict[str, tuple[int, tuple[str, ...]]] = {
    "2p": (2, ()),
    "3p": (3, ()),
    "4p": (4, ()),
    "2p-modules": (2, ("cities", "trading_posts", "orient", "strongholds")),
}
#: The decisions before the end of a game whose positions score the bar.
LAST_MOVES = 10


def greedy_record(num_players: int, modules: tuple[str, ...], seed: int) -> dict[str, Any]:
    """One game of ``greedy`` against itself, as a record (the one runner plays it)."""
    import agents
    from agents import runner

    specs = ["greedy"] * num_players
    seats = [agents.build(s, seed=seed * 10 + i) for i, s in enumerate(specs)]
    return runner.play_game(seats, seed, labels=specs, modules=modules)


def ask(url: str, method: str, path: str, body: Any = None) -> tuple[float, dict[str, Any]]:
    """``(milliseconds to the parsed answer, the answer)``; an error answer raises, naming it."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"{method} {path}: {exc.code} {exc.read().decode()}") from None
    return 1000.0 * (time.perf_counter() - t0), answer


def open_record(url: str, record: dict[str, Any]) -> tuple[str, int]:
    """The record opened on the server: ``(replay id, its decisions)``."""
    _, info = ask(url, "POST", "/api/records", {"record": record})
    return info["replay_id"], len(info["moves"])


def time_kinds(url: str, sims: int, positions: int) -> list[dict[str, Any]]:
    """Per game kind: ``positions`` positions of one greedy game asked at ``sims``, each timed."""
    rows = []
    for name, (n, modules) in KINDS.items():
        replay, moves = open_record(url, greedy_record(n, modules, seed=1))
        ask(url, "GET", f"/api/replays/{replay}/analysis?move=0&sims=8")  # the network's first load
        picks = [round(k * (moves - 1) / max(positions - 1, 1)) for k in range(positions)]
        walls, searched = [], []
        for move in picks:
            wall, answer = ask(url, "GET", f"/api/replays/{replay}/analysis?move={move}&sims={sims}")
            walls.append(wall)
            searched.append(answer["elapsed_ms"])
        rows.append(
            {
                "kind": name,
                "answers": len(walls),
                "median_ms": statistics.median(walls),
                "max_ms": max(walls),
                "max_search_ms": max(searched),
                "cap_ms": answer["max_ms"],
            }
        )
        row = rows[-1]
        print(
            f"{name}: {row['answers']} answers at sims={sims}: median {row['median_ms']:.0f} ms, "
            f"max {row['max_ms']:.0f} ms (search max {row['max_search_ms']:.0f} ms); cap {row['cap_ms']:g} ms",
            flush=True,
        )
    return rows


def score_bar(url: str, games: int, sims: int) -> dict[str, Any]:
    """The winner's bar over the last :data:`LAST_MOVES` decisions of ``games`` 2-player greedy games."""
    chances, per_game, skipped = [], [], 0
    for seed in range(games):
        record = greedy_record(2, (), seed=100 + seed)
        winners = record["winners"]
        if len(winners) != 1 or record["truncated"]:
            skipped += 1
            continue
        replay, moves = open_record(url, record)
        mine = []
        for move in range(max(0, moves - LAST_MOVES), moves):
            _, answer = ask(url, "GET", f"/api/replays/{replay}/analysis?move={move}&sims={sims}")
            mine.append(answer["win_chance"][winners[0]])
        chances += mine
        per_game.append(statistics.mean(mine))
    if not chances:
        raise CliError("no game had a sole winner: nothing to score")
    return {
        "games": len(per_game),
        "skipped": skipped,
        "positions": len(chances),
        "mean": statistics.mean(chances),
        "above_half": sum(c > 0.5 for c in chances) / len(chances),
        "games_above_half": sum(g > 0.5 for g in per_game),
    }


def main(argv: list[str] | None = None) -> int:
    from training.app.analysis import DEFAULT_SIMS, MAX_SIMS
    from training.app.server import MAX_MS_PER_MOVE

    parser = argparse.ArgumentParser(
        prog="python -m training.speed.analysis", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--games", type=int, default=50, help="2-player greedy games scored (default 50)")
    parser.add_argument(
        "--sims",
        type=int,
        default=DEFAULT_SIMS,
        help=f"simulations an analysis asks for (default {DEFAULT_SIMS})",
    )
    parser.add_argument(
        "--positions", type=int, default=20, help="positions timed per game kind (default 20)"
    )
    parser.add_argument(
        "--max-ms-per-move",
        type=float,
        default=MAX_MS_PER_MOVE,
        help=f"the server's cap (default {MAX_MS_PER_MOVE:g}, the server's own default)",
    )
    args = parser.parse_args(argv)
    if args.games < 0 or args.positions < 1 or not 1 <= args.sims <= MAX_SIMS or args.max_ms_per_move <= 0:
        raise CliError(f"need --games >= 0, --positions >= 1, --sims in 1..{MAX_SIMS}, --max-ms-per-move > 0")
    from training.app.server import serve_in_thread

    with serve_in_thread(max_ms_per_move=args.max_ms_per_move) as url:
        rows = time_kinds(url, args.sims, args.positions)
        print(f"capped: sims={MAX_SIMS} (more than fit) at each kind's middle position", flush=True)
        for name in KINDS:
            n, modules = KINDS[name]
            replay, moves = open_record(url, greedy_record(n, modules, seed=1))
            wall, answer = ask(
                url, "GET", f"/api/replays/{replay}/analysis?move={moves // 2}&sims={MAX_SIMS}"
            )
            print(
                f"  {name}: {wall:.0f} ms, {answer['sims']} simulations (cap {answer['max_ms']:g} ms)",
                flush=True,
            )
        worst = max(r["max_ms"] for r in rows)
        print(f"slowest answer: {worst:.0f} ms (target: within the cap, {args.max_ms_per_move:g} ms)")
        if args.games:
            t0 = time.perf_counter()
            bar = score_bar(url, args.games, args.sims)
            print(
                f"winner's bar over the last {LAST_MOVES} decisions of {bar['games']} games "
                f"({bar['skipped']} without a sole winner left out; {bar['positions']} positions, "
                f"{time.perf_counter() - t0:.0f} s): mean {100 * bar['mean']:.1f}% (target > 50%), "
                f"above 50% at {100 * bar['above_half']:.1f}% of positions, "
                f"in {bar['games_above_half']}/{bar['games']} games on average"
            )
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.speed.analysis"))
