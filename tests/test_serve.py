"""The browser app's JSON API (``training.app.server``), against a real server on a free port.

Why over HTTP: the page trusts the server for everything, so what matters is
what the server answers (a whole game played by posting moves, refused and
stale moves leaving the game as it was, clear errors that do not stop the
server, games kept apart), through its threads and its JSON, as the page sees it.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

import agents
from agents import runner
from splendor_env.records import replay, write_records
from tests.helpers.app_server import TOKENS, app_server, call, events, get, move, new_game, settled


#: Each test game's seat tokens, by game id (the page keeps them the same way).
@pytest.fixture(scope="module")
def records_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("records")


@pytest.fixture(scope="module")
def url(records_dir: Path) -> Iterator[str]:
    with app_server(records_dir=records_dir) as base:
        yield base


def a_record(tmp_path: Path, num_players: int = 2, modules: tuple[str, ...] = ()) -> Path:
    """A records file of one greedy-vs-random game (the one runner writes it, as a tournament would)."""
    specs = ["greedy", "random", "random", "random"][:num_players]
    rec = runner.play_game(
        [agents.build(s, seed=i) for i, s in enumerate(specs)], 5, labels=specs, modules=modules
    )
    path = tmp_path / "games.jsonl"
    write_records(path, [rec])
    return path


def test_the_page_and_the_specs_are_served(url: str) -> None:
    import urllib.request

    with urllib.request.urlopen(url, timeout=30) as response:
        assert b"<title>Splendor" in response.read()
    status, specs = call(url, "GET", "/api/specs")
    assert status == 200 and "greedy" in specs["specs"] and "human" not in specs["specs"]
    assert specs["modules"] == ["cities", "trading_posts", "orient", "strongholds"]


def test_a_whole_two_player_game_is_played_by_posting_moves(url: str) -> None:
    view = new_game(url, agents=["human", "greedy"], seed=3)
    assert view["human_seats"] == [0] and view["seat_on_move"] == 0 and view["svg"].startswith("<svg")
    posted = 0
    while not view["over"]:
        assert view["seat_on_move"] == 0 and view["legal"], view  # the greedy seat moved on the server
        ids = [m["id"] for m in view["legal"]]
        assert all(isinstance(m["text"], str) and m["text"] for m in view["legal"])
        status, view = move(url, view, ids[posted % len(ids)])
        assert status == 200, view
        posted += 1
    record = view["record"]
    assert view["legal"] == [] and view["seat_on_move"] is None and record["agents"] == ["human", "greedy"]
    assert len(record["actions"]) == view["move"] > posted
    ok, result, _ = replay(record)  # the server's record replays to the result it showed
    assert ok and result == view["result"]
    status, error = move(url, view, ids[0])
    assert status == 409 and "over" in error["error"]


def test_a_refused_move_leaves_the_game_unchanged(url: str) -> None:
    view = new_game(url, agents=["human", "greedy"], seed=4)
    legal = {m["id"] for m in view["legal"]}
    illegal = next(a for a in range(200) if a not in legal)
    for action in (illegal, -1, 10_000, "3", 1.5, None):
        status, error = move(url, view, action)
        assert status == 400 and error["error"], action
        assert get(url, view["game_id"]) == view
    status, error = move(url, view, illegal)
    assert "refused" in error["error"] and "illegal" in error["error"]


def test_a_stale_move_is_refused(url: str) -> None:
    view = new_game(url, agents=["human", "random"], seed=5)
    first = view["legal"][0]["id"]
    status, after = move(url, view, first)
    assert status == 200 and after["move"] >= view["move"] + 2  # the human's move and the agent's
    # The same click again, from the page that still shows the old position (a double click, a second tab).
    status, error = move(url, view, first)
    assert status == 409 and "stale" in error["error"]
    assert get(url, view["game_id"]) == after
    status, error = call(url, "POST", f"/api/games/{view['game_id']}/move", {"action": first})
    assert status == 400 and "'move'" in error["error"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"agents": ["human", "grredy"]}, "unknown agent spec 'grredy'"),
        ({"agents": ["human"]}, "2 to 4 seats"),
        ({"agents": ["human:x", "greedy"]}, "'human' takes no options"),
        ({"agents": ["human", "greedy"], "modules": ["citys"]}, "unknown module"),
        ({"agents": ["human", "mcts:sims=-3"]}, "seat 1"),
        ({"agents": "greedy"}, "list of spec strings"),
        ({"agents": ["human", "greedy"], "seed": "x"}, "'seed'"),
    ],
)
def test_a_bad_game_request_gets_a_clear_error(url: str, body: dict[str, Any], words: str) -> None:
    status, error = call(url, "POST", "/api/games", body)
    assert status == 400 and words in error["error"], error


def test_the_server_goes_on_after_bad_requests(url: str) -> None:
    assert call(url, "POST", "/api/games", raw=b"{not json")[0] == 400
    assert call(url, "POST", "/api/games", raw=b"[1, 2]")[0] == 400
    assert call(url, "GET", "/api/games/abc123")[0] == 404
    assert call(url, "GET", "/api/nothing")[0] == 404
    assert call(url, "POST", "/api/nothing", {})[0] == 404
    assert new_game(url, agents=["greedy", "random"], seed=1)["move"] == 0


def test_two_games_are_kept_apart(url: str) -> None:
    one = new_game(url, agents=["human", "greedy"], seed=7)
    two = new_game(url, agents=["human", "greedy"], seed=7)
    assert one["game_id"] != two["game_id"] and one["svg"] == two["svg"]
    status, one_after = move(url, one, one["legal"][0]["id"])
    assert status == 200 and get(url, two["game_id"]) == two
    # Moves on both at once, from several threads: each game's lock keeps each game consistent.
    views = {one["game_id"]: one_after, two["game_id"]: two}
    errors: list[Any] = []

    def play(game_id: str) -> None:
        view = views[game_id]
        for _ in range(15):
            if view["over"]:
                return
            status, view = move(url, view, view["legal"][-1]["id"])
            if status != 200:
                errors.append(view)
                return
        views[game_id] = view

    threads = [threading.Thread(target=play, args=(g,)) for g in views]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for game_id, view in views.items():
        assert get(url, game_id) == view


class Watch:
    """A page watching a game: its live stream open and read on a thread, every view kept."""

    def __init__(self, url: str, game_id: str) -> None:
        parts = urlparse(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
        self.conn.request("GET", f"/api/games/{game_id}/events")
        self.response = self.conn.getresponse()
        assert self.response.status == 200
        self.views: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for line in self.response:
                if line.startswith(b"data: "):
                    self.views.append(json.loads(line[6:]))
        except (OSError, ValueError, http.client.HTTPException):  # closed by the test
            pass

    def until(self, test: Any, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.views and test(self.views[-1]):
                return self.views[-1]
            time.sleep(0.01)
        raise AssertionError(f"no such view within {timeout} s; last: {self.views[-1:]}")

    def close(self) -> None:
        assert self.conn.sock is not None
        self.conn.sock.shutdown(socket.SHUT_RDWR)  # the page goes: the reader sees the stream end
        self.thread.join(timeout=10)
        self.conn.close()


def pace(url: str, game_id: str, **body: Any) -> dict[str, Any]:
    status, view = call(url, "POST", f"/api/games/{game_id}/pace", body)
    assert status == 200, view
    return view


def test_a_watched_game_plays_to_its_end_with_no_request_but_its_pace(url: str) -> None:
    """Watch mode is server push: one pace call, then the stream alone carries every agent move."""
    view = new_game(url, agents=["greedy", "random", "greedy"], modules=["cities", "orient"], seed=2)
    assert view["human_seats"] == [] and view["legal"] == [] and view["move"] == 0
    assert view["pace"] == {"delay_ms": 400, "paused": False}
    assert pace(url, view["game_id"], delay_ms=0)["pace"] == {"delay_ms": 0, "paused": False}
    # The only request from here on: the live stream, read until the end.
    moves = []

    def seen(v: dict[str, Any]) -> bool:
        moves.append(v["move"])
        return v["over"]

    end = events(url, view["game_id"], until=seen)
    assert moves == sorted(moves) and end["move"] == len(end["record"]["actions"]) > 20
    assert replay(end["record"])[0]
    time.sleep(0.3)
    assert get(url, view["game_id"])["move"] == end["move"]  # nothing moves after the end


def test_a_game_nobody_watches_stands_still_and_pausing_stops_it(url: str) -> None:
    view = new_game(url, agents=["greedy", "random"], seed=9)
    game_id = view["game_id"]
    pace(url, game_id, delay_ms=30)
    time.sleep(0.5)
    assert get(url, game_id)["move"] == 0  # no page watches it
    page = Watch(url, game_id)
    try:
        page.until(lambda v: v["move"] >= 3)
        paused = pace(url, game_id, paused=True)
        assert paused["pace"]["paused"]
        time.sleep(0.2)  # a move under way ends
        stopped = get(url, game_id)["move"]
        time.sleep(0.6)
        assert get(url, game_id)["move"] == stopped and page.views[-1]["pace"]["paused"]
        pace(url, game_id, paused=False)
        page.until(lambda v: v["move"] > stopped + 2)
    finally:
        page.close()
    time.sleep(1.5)  # the server notices the page has gone (within a second)
    left = get(url, game_id)["move"]
    time.sleep(0.6)
    assert get(url, game_id)["move"] == left and not get(url, game_id)["over"]


def test_two_pages_watching_one_game_see_it_at_the_pace_set(url: str) -> None:
    view = new_game(url, agents=["greedy", "random"], seed=10)
    game_id = view["game_id"]
    pace(url, game_id, delay_ms=250)
    pages = [Watch(url, game_id), Watch(url, game_id)]
    try:
        start = time.monotonic()
        pages[0].until(lambda v: v["move"] >= 1)
        time.sleep(1.5)
        moved, seconds = get(url, game_id)["move"], time.monotonic() - start
        assert 2 <= moved <= seconds / 0.25 + 1, (moved, seconds)  # not twice the pace
        assert pages[1].until(lambda v: v["move"] >= moved)["pace"]["delay_ms"] == 250
    finally:
        for page in pages:
            page.close()


def test_the_pace_call_is_checked(url: str) -> None:
    view = new_game(url, agents=["greedy", "random"], seed=11)
    path = f"/api/games/{view['game_id']}/pace"
    for body, words in [
        ({"delay_ms": -5}, "'delay_ms' must be in 0..10000"),
        ({"delay_ms": "fast"}, "'delay_ms' must be an integer"),
        ({"paused": 1}, "'paused' must be true or false"),
        ({"move": 3}, "unknown key"),
    ]:
        status, error = call(url, "POST", path, body)
        assert status == 400 and words in error["error"], error
    body = json.dumps({"paused": True}).encode()
    status, error = call(url, "POST", path, raw=body, headers={"Origin": "http://evil.example"})
    assert status == 403 and "cross-origin" in error["error"]
    assert call(url, "POST", path, raw=body, headers={"Content-Type": "text/plain"})[0] == 415
    assert call(url, "POST", "/api/games/abc123/pace", {"paused": True})[0] == 404
    human = new_game(url, agents=["human", "greedy"], seed=11)
    status, error = call(url, "POST", f"/api/games/{human['game_id']}/pace", {"delay_ms": 0})
    assert status == 409 and "a person plays this game" in error["error"]
    assert call(url, "POST", f"/api/games/{view['game_id']}/advance", {"move": 0})[0] == 404  # no polling


def test_a_record_is_stepped_through_and_continued(url: str, records_dir: Path) -> None:
    path = a_record(records_dir)
    record = json.loads(path.read_text())
    specs = record["agents"]
    status, info = call(url, "POST", "/api/records", {"path": path.name})
    assert status == 200, info
    n = len(record["actions"])
    assert len(info["moves"]) == n and info["move"] == n and info["over"] and info["records"] == 1
    assert info["result"]["winners"] == record["winners"]
    status, upload = call(url, "POST", "/api/records", {"text": path.read_text(), "index": 0})
    assert status == 200 and upload["svg"] == info["svg"] and upload["replay_id"] != info["replay_id"]
    status, deal = call(url, "GET", f"/api/replays/{info['replay_id']}?move=0")
    assert status == 200 and deal["move"] == 0 and "the deal" in deal["caption"]
    status, pos = call(url, "GET", f"/api/replays/{info['replay_id']}?move=10")
    assert status == 200 and pos["caption"] == info["moves"][9]
    assert call(url, "GET", f"/api/replays/{info['replay_id']}?move={n + 1}")[0] == 400

    body = {"move": 10, "agents": ["greedy", "human"]}
    status, game = call(url, "POST", f"/api/replays/{info['replay_id']}/continue", body)
    assert status == 201, game
    TOKENS[game["game_id"]] = list(game.pop("tokens").values())
    game = settled(url, game)
    assert game["move"] >= 10 and game["seat_on_move"] == 1 and game["agents"] == ["greedy", "human"]
    status, game = move(url, game, game["legal"][0]["id"])
    assert status == 200
    # Watched to its end, a continued game's record (the recorded prefix, then its own moves) replays.
    status, watched = call(
        url, "POST", f"/api/replays/{info['replay_id']}/continue", {"move": 10, "agents": specs}
    )
    assert status == 201 and watched["move"] == 10
    pace(url, watched["game_id"], delay_ms=0)
    watched = events(url, watched["game_id"], until=lambda v: v["over"])
    assert watched["record"]["actions"][:10] == record["actions"][:10] and replay(watched["record"])[0]
    body = {"move": 10, "agents": ["greedy", "human", "random"]}
    status, error = call(url, "POST", f"/api/replays/{info['replay_id']}/continue", body)
    assert status == 400 and "2-player game" in error["error"]
    status, error = call(
        url, "POST", f"/api/replays/{info['replay_id']}/continue", {"move": n, "agents": ["greedy", "human"]}
    )
    assert status == 400 and "over" in error["error"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"text": "{not json\n"}, "not a JSON record"),
        ({"text": ""}, "no record"),
        ({"record": {"num_players": 2, "actions": []}}, "'seed' is missing"),
        ({"record": {"num_players": 5, "seed": 1, "actions": []}}, "'num_players'"),
        ({"record": {"num_players": 2, "seed": 1, "actions": [0, 0, 0, 0, 0, 0, 0, 0]}}, "illegal action"),
        ({"record": {"num_players": 2, "seed": 1, "actions": ["x"]}}, "'actions'"),
        ({"record": [1, 2]}, "JSON object"),
        ({"text": '{"num_players": 2, "seed": 1, "actions": []}\n', "index": 3}, "out of range"),
        ({"path": "missing.jsonl"}, "no records file 'missing.jsonl'"),
        ({}, "give a record"),
    ],
)
def test_a_malformed_record_gets_a_clear_error(url: str, body: dict[str, Any], words: str) -> None:
    status, error = call(url, "POST", "/api/records", body)
    assert status == 400 and words in error["error"], error


def test_each_seat_link_moves_only_its_own_seat(url: str) -> None:
    status, view = call(url, "POST", "/api/games", {"agents": ["human", "human"], "seed": 8})
    assert status == 201 and view["my_seats"] == [0, 1]  # the page that started it holds both (hot-seat)
    first, second = view["tokens"]["0"], view["tokens"]["1"]
    body = {"action": view["legal"][0]["id"], "move": 0}
    status, error = call(url, "POST", f"/api/games/{view['game_id']}/move", {**body, "tokens": [second]})
    assert status == 403 and "player_0" in error["error"]
    status, seen = call(url, "GET", f"/api/games/{view['game_id']}?tokens={second}")
    assert seen["my_seats"] == [1] and seen["legal"] == [] and seen["shown_seat"] == 1
    status, after = call(url, "POST", f"/api/games/{view['game_id']}/move", {**body, "tokens": [first]})
    assert status == 200 and after["seat_on_move"] == 1 and after["legal"] == []  # player_0's page waits
    status, seen = call(url, "GET", f"/api/games/{view['game_id']}?tokens={second}")
    assert seen["seat_on_move"] == 1 and seen["legal"]


def test_a_server_takes_connections_from_the_moment_it_is_made(tmp_path: Path) -> None:
    """``training.serve`` says where it serves before uvicorn starts; a client that connects then waits in
    the queue and is answered once it runs, instead of being refused (it was, under load in CI)."""
    from training.app.server import make_server

    server = make_server("127.0.0.1", 0, records_dir=tmp_path)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    try:
        parts = urlparse(server.url)
        with socket.create_connection((parts.hostname, parts.port), timeout=5) as early:
            early.sendall(b"GET /api/specs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            thread.start()
            early.settimeout(60)
            assert early.recv(64).startswith(b"HTTP/1.1 200")
    finally:
        server.shutdown()
        if thread.is_alive():
            thread.join(timeout=10)
        server.server_close()
