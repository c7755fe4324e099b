"""Games survive the server: ``python -m training.serve`` killed with SIGKILL mid-game and started again.

Why a real process and a real kill: what must hold is what a user sees after a crash or ``kill -9``
(no shutdown code runs): every game at the same address, with the same seat links, at the same
position, and play going on, the agents' included; finished games listed and exported as records.
Unit checks of the database itself (a foreign or corrupted file, a move saved before it is played)
are in ``tests/test_app_archive.py``.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from splendor_env.records import replay
from tests.helpers.app_server import ROOT, call, events, free_port, server_process

pytestmark = pytest.mark.slow


def view_of(url: str, game: dict[str, Any]) -> dict[str, Any]:
    status, view = call(url, "GET", f"/api/games/{game['game_id']}?tokens={','.join(game['tokens'])}")
    assert status == 200, view
    return view


def settled(url: str, game: dict[str, Any]) -> dict[str, Any]:
    """The game once it is a human's move (or over), heard on its live stream."""
    return events(url, game["game_id"], game["tokens"], until=lambda v: v["over"] or bool(v["legal"]))


def play(url: str, game: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
    """One human move (the first legal one), then the agents' answer."""
    body = {"action": view["legal"][0]["id"], "move": view["move"], "tokens": game["tokens"]}
    status, after = call(url, "POST", f"/api/games/{game['game_id']}/move", body)
    assert status == 200, after
    return settled(url, game)


def start(url: str, body: dict[str, Any], path: str = "/api/games") -> dict[str, Any]:
    status, view = call(url, "POST", path, body)
    assert status == 201, view
    return {"game_id": view["game_id"], "tokens": list(view["tokens"].values())}


SAME = ("move", "board", "legal", "log", "agents", "modules", "human_seats", "my_seats", "over")


def test_a_killed_server_goes_on_with_every_game_at_its_address(tmp_path: Path) -> None:
    data, port = tmp_path / "data", free_port()
    url = f"http://127.0.0.1:{port}/"
    with server_process(data, port) as first:
        versus = start(url, {"agents": ["human", "greedy"], "modules": ["cities"], "seed": 3})
        view = settled(url, versus)
        for _ in range(3):
            view = play(url, versus, view)
        # a game continued from a record, its move numbers running on from the record's deal
        record = call(url, "POST", "/api/games", {"agents": ["greedy", "random"], "seed": 4})[1]
        call(url, "POST", f"/api/games/{record['game_id']}/pace", {"delay_ms": 0})
        watched = events(
            url, record["game_id"], until=lambda v: v["over"]
        )  # agents only: the stream plays it
        opened = call(url, "POST", "/api/records", {"record": watched["record"]})[1]
        continued = start(
            url, {"move": 9, "agents": ["human", "greedy"]}, f"/api/replays/{opened['replay_id']}/continue"
        )
        play(url, continued, settled(url, continued))
        # two people, one token each; and an agent caught thinking by the kill
        pair = start(url, {"agents": ["human", "human"], "seed": 5})
        play(url, pair, view_of(url, pair))
        thinker = start(url, {"agents": ["human", "mcts:ms=3000"], "seed": 6})
        first_move = view_of(url, thinker)
        call(url, "POST", f"/api/games/{thinker['game_id']}/move",
             {"action": first_move["legal"][0]["id"], "move": 0, "tokens": thinker["tokens"]})  # fmt: skip
        events(url, thinker["game_id"], thinker["tokens"], until=lambda v: v["thinking"] is not None)
        before = {g["game_id"]: view_of(url, g) for g in (versus, continued, pair)}
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    assert (data / "games.sqlite3").is_file()

    with server_process(data, port):  # the same port: every address of the first server works again
        for game in (versus, continued, pair):
            after = view_of(url, game)
            old = before[game["game_id"]]
            assert {k: after[k] for k in SAME} == {k: old[k] for k in SAME}, game
        assert view_of(url, continued)["move"] >= 10  # 9 recorded decisions, then its own
        for game in (versus, continued):  # and play goes on, the agents answering
            view = view_of(url, game)
            assert play(url, game, view)["move"] > view["move"]
        status, error = call(
            url, "POST", f"/api/games/{pair['game_id']}/move",
            {"action": 0, "move": before[pair["game_id"]]["move"], "tokens": ["a guess"]},
        )  # fmt: skip
        assert status == 403, error  # the seat links still guard their seats
        second = {"game_id": pair["game_id"], "tokens": pair["tokens"][1:]}  # player_1's link only
        view = view_of(url, second)
        body = {"action": view["legal"][0]["id"], "move": 1, "tokens": second["tokens"]}
        status, after = call(url, "POST", f"/api/games/{pair['game_id']}/move", body)
        assert status == 200 and after["move"] == 2 and after["legal"] == [], after
        # the agent interrupted mid-search searches again, and it is the human's move once more
        resumed = settled(url, thinker)
        assert resumed["move"] >= 2 and resumed["seat_on_move"] == 0 and resumed["legal"]
        # the finished game: listed with its result, and exported as the record its page offered
        lobby = {g["game_id"]: g for g in call(url, "GET", "/api/lobby")[1]["games"]}
        assert {versus["game_id"], continued["game_id"], pair["game_id"], record["game_id"]} <= set(lobby)
        done = lobby[record["game_id"]]
        assert (
            done["over"] and done["agents"] == ["greedy", "random"] and done["result"]["winners"] is not None
        )
        assert not lobby[versus["game_id"]]["over"] and lobby[versus["game_id"]]["result"] is None
        saved = call(url, "GET", f"/api/games/{record['game_id']}/record")[1]
        assert saved == watched["record"] and replay(saved)[0]
        finished = view_of(url, {"game_id": record["game_id"], "tokens": []})
        assert finished["over"] and finished["record"] == watched["record"]
        status, error = call(url, "GET", f"/api/games/{versus['game_id']}/record")
        assert status == 409 and "not over" in error["error"]


@pytest.mark.parametrize("kind", ["text", "foreign", "corrupted"])
def test_a_database_the_server_cannot_use_is_refused_in_one_line_naming_it(tmp_path: Path, kind: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    path = data / "games.sqlite3"
    if kind == "text":
        path.write_text("not a database\n" * 100)
    elif kind == "foreign":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE notes (text TEXT)")
    else:
        from tests.helpers.app_archive import corrupted_archive

        corrupted_archive(data)
    done = subprocess.run(
        [sys.executable, "-m", "training.serve", "--port", "0", "--data-dir", str(data)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and str(path) in lines[0], done.stderr
    assert "compiling" not in done.stdout  # said before anything else is done
