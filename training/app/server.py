"""See the game in a browser: a local web server with one page (``training/app/web/index.html``).

Usage::

    python -m training.serve                      # http://127.0.0.1:8000/
    python -m training.serve --port 8080 --host 127.0.0.1

Why the standard library: the page needs a handful of JSON calls and one
static file, which :class:`http.server.ThreadingHTTPServer` serves without a
dependency or a front-end build step. The server engine is the only source
of truth: the page shows what the server sends (the board as SVG from
:mod:`splendor_env.picture`, the legal moves in words from
``raw_env.describe_action``) and sends back an action id with the move number
it was shown, so a move made on a position the page no longer shows (a second
tab, a double click) is refused as stale instead of being played on another
position. Every agent seat moves on the server through
:func:`agents.runner.decide` (the one runner, so a search agent gets its
determinised state as everywhere else).

JSON API (every error is ``{"error": "..."}`` with a 4xx status; the server goes on):

* ``GET /api/specs``: the agent specs and the module names;
* ``POST /api/games`` ``{"agents": [...], "modules": [...], "seed": int|null}``: a new game;
  ``"human"`` marks the seat of the person at the page (at most one; none: watch the agents);
* ``GET /api/games/ID``: the game as the page shows it (its *view*);
* ``POST /api/games/ID/move`` ``{"action": id, "move": n}``: the human's move, then the
  agents move until the human is on move again or the game ends;
* ``POST /api/games/ID/advance`` ``{"move": n}``: one agent move (watch mode, paced by the page);
* ``POST /api/records`` ``{"record": {...}}`` or ``{"text": "<JSON lines>"}`` or
  ``{"path": "games.jsonl"}``, with ``"index"`` (default 0): open a record for replay;
* ``GET /api/replays/ID?move=k``: the record's position after its first ``k`` decisions;
* ``POST /api/replays/ID/continue`` ``{"move": k, "agents": [...]}``: a new game from that
  position (its snapshot, through ``reset(options={"snapshot": ...})``).

Games are kept apart by id, each behind its own lock (two requests on one game
queue; requests on two games run at once). The server binds to localhost by
default: it plays agents on request and reads record files by path, which is
for the person at this machine only.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np

import agents
from agents import runner
from splendor_env import IllegalActionError, SnapshotError, rules
from splendor_env import state as st
from splendor_env.env import EnvConfig, raw_env
from splendor_env.picture import to_svg
from splendor_env.state import MODULE_NAMES
from training.common.games import check_plays
from training.records import check_record, new_env, parse_records, replayed_moves

#: The page (package data).
WEB = Path(__file__).parent / "web"
#: The spec of the person at the page (not an agent of the registry: the page is the human's input).
HUMAN = "human"
#: Games and replays kept in memory; the oldest are dropped beyond this (a long session cannot grow without end).
MAX_GAMES = 64
#: Largest request body (an uploaded records file included).
MAX_BODY = 32 * 1024 * 1024
#: Moves in words sent back with a view (the page's log).
LOG_LINES = 60


class ApiError(Exception):
    """A request the server refuses, with the HTTP status and the message the page shows."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST):
        super().__init__(message)
        self.status = status


def _int(value: Any, what: str) -> int:
    """``value`` as an int, refusing bools, floats and strings (a JSON API should not guess)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(f"{what} must be an integer, got {value!r}")
    return value


# ---------------------------------------------------------------------------
# Games


@dataclass
class Game:
    """One live game: the strict AEC env (the truth), its seats and what was played.

    ``seat_agents[p]`` is ``None`` for the human seat. ``prefix`` holds the
    recorded decisions a game continued from a record started after, so that
    move numbers and the game's record run on from the original deal.
    """

    game_id: str
    env: raw_env
    specs: list[str]
    seat_agents: list[Any]
    seed: int
    rng: np.random.Generator
    prefix: list[int] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def human_seat(self) -> int | None:
        """The seat the page plays (and whose hidden cards it shows), or ``None`` when watching."""
        return self.specs.index(HUMAN) if HUMAN in self.specs else None

    @property
    def move(self) -> int:
        """Decisions played since the deal: the number a move request must carry."""
        return len(self.prefix) + len(self.actions)

    def seat_on_move(self) -> int:
        return runner.seat_of(self.env.agent_selection)

    def over(self) -> bool:
        return runner.is_over(self.env)

    def play(self, action: int) -> None:
        """Play ``action`` for the seat on move (the env refuses an illegal one and stays unchanged)."""
        seat = self.seat_on_move()
        words = self.env.describe_action(action)
        self.env.step(action)
        self.actions.append(int(action))
        self.log.append(f"{self.move}. player_{seat} ({self.specs[seat]}): {words}")

    def agent_move(self) -> None:
        """One move of the agent on move, asked through the one runner."""
        agent = self.seat_agents[self.seat_on_move()]
        self.play(runner.decide(agent, self.env, self.rng))

    def agents_until_human(self) -> None:
        """Let the agents move until the human is on move or the game ends (not in watch mode)."""
        if self.human_seat is None:
            return
        while not self.over() and self.seat_on_move() != self.human_seat:
            self.agent_move()

    def record(self) -> dict[str, Any]:
        """The game as a record of :mod:`training.records` (the prefix of a continued game included)."""
        return runner.game_record(self.env, self.seed, self.specs, self.prefix + self.actions)

    def view(self) -> dict[str, Any]:
        """What the page shows: the board for the human seat (a spectator's when watching), the moves."""
        s = self.env.game_state
        over = self.over()
        seat = self.seat_on_move()
        human = self.human_seat
        legal: list[dict[str, Any]] = []
        if not over and seat == human:
            mask = self.env.observe(self.env.agent_selection)["action_mask"]
            legal = [{"id": int(a), "text": self.env.describe_action(int(a))} for a in np.flatnonzero(mask)]
        names = [f"you ({HUMAN})" if spec == HUMAN else spec for spec in self.specs]
        out: dict[str, Any] = {
            "game_id": self.game_id,
            "move": self.move,
            "num_players": self.env.config.num_players,
            "modules": list(self.env.config.modules),
            "agents": list(self.specs),
            "human_seat": human,
            "seat_on_move": None if over else seat,
            "phase": st.PHASE_NAMES[int(s[st.PHASE])],
            "over": over,
            "legal": legal,
            "log": self.log[-LOG_LINES:],
            "svg": to_svg(s, human, names=names),
        }
        if over:
            out["result"] = runner.game_result(s)
            out["record"] = self.record()
        return out


@dataclass
class Replay:
    """An opened record: the record, each move in words and every position (the deal first)."""

    replay_id: str
    record: dict[str, Any]
    moves: list[str]
    states: list[np.ndarray]
    lock: threading.Lock = field(default_factory=threading.Lock)


def _check_agents(specs: Any, num_players: int | None = None) -> list[str]:
    """The seat specs as strings, refused with the seat and the reason (before any game is built)."""
    if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
        raise ApiError(f"'agents' must be a list of spec strings, got {specs!r}")
    specs = [s.strip() for s in specs]
    if not 2 <= len(specs) <= 4:
        raise ApiError(f"a game needs 2 to 4 seats, got {len(specs)}")
    if num_players is not None and len(specs) != num_players:
        raise ApiError(
            f"the position is a {num_players}-player game: give {num_players} seats, not {len(specs)}"
        )
    if specs.count(HUMAN) > 1:
        raise ApiError("at most one seat may be 'human' (the page plays one seat)")
    return specs


def _build_agents(specs: list[str], seed: int, modules: tuple[str, ...]) -> list[Any]:
    """One agent per non-human seat (seeded as :mod:`training.play` seeds them), each checked to play this game."""
    built: list[Any] = []
    for p, spec in enumerate(specs):
        if spec == HUMAN:
            built.append(None)
            continue
        try:
            agent = agents.build(spec, seed=seed * 101 + p)
            check_plays(agent, spec, len(specs), modules)
        except (ValueError, TypeError, ImportError, FileNotFoundError) as exc:
            raise ApiError(f"seat {p}: agent spec {spec!r}: {exc}") from exc
        built.append(agent)
    return built


def _modules(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(m, str) for m in value):
        raise ApiError(f"'modules' must be a list of module names, got {value!r}")
    unknown = sorted(set(value) - set(MODULE_NAMES))
    if unknown:
        raise ApiError(f"unknown module(s) {unknown}; modules are {list(MODULE_NAMES)}")
    return tuple(m for m in MODULE_NAMES if m in value)  # the engine's order, each once


class Store:
    """The server's games and replays, by id; one lock guards the tables, one lock per game its play."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._games: OrderedDict[str, Game] = OrderedDict()
        self._replays: OrderedDict[str, Replay] = OrderedDict()

    @staticmethod
    def _new_id() -> str:
        return secrets.token_hex(6)

    def _keep(self, table: OrderedDict[str, Any], key: str, value: Any) -> None:
        with self._lock:
            table[key] = value
            while len(table) > MAX_GAMES:
                table.popitem(last=False)

    def game(self, game_id: str) -> Game:
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise ApiError(
                f"no game {game_id!r} (finished long ago, or the server restarted)", HTTPStatus.NOT_FOUND
            )
        return game

    def replay(self, replay_id: str) -> Replay:
        with self._lock:
            replay = self._replays.get(replay_id)
        if replay is None:
            raise ApiError(f"no record {replay_id!r} open (the server restarted?)", HTTPStatus.NOT_FOUND)
        return replay

    # -- games --------------------------------------------------------------
    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        modules = _modules(body.get("modules"))
        specs = _check_agents(body.get("agents"))
        seed = body.get("seed")
        seed = secrets.randbelow(2**31) if seed is None else _int(seed, "'seed'")
        if not 0 <= seed <= 2**62:
            raise ApiError(f"'seed' must be in 0..2**62, got {seed}")
        try:
            EnvConfig(num_players=len(specs), modules=modules)
        except (ValueError, TypeError) as exc:
            raise ApiError(str(exc)) from exc
        seat_agents = _build_agents(specs, seed, modules)
        env = raw_env(num_players=len(specs), modules=modules)
        env.reset(seed=seed)
        return self._start(env, specs, seat_agents, seed, prefix=[])

    def _start(
        self, env: raw_env, specs: list[str], seat_agents: list[Any], seed: int, prefix: list[int]
    ) -> dict[str, Any]:
        game = Game(
            self._new_id(), env, specs, seat_agents, seed, np.random.default_rng(seed), prefix=list(prefix)
        )
        with game.lock:
            self._keep(self._games, game.game_id, game)
            game.agents_until_human()
            return game.view()

    def get_game(self, game_id: str) -> dict[str, Any]:
        game = self.game(game_id)
        with game.lock:
            return game.view()

    @staticmethod
    def _check_move(game: Game, body: dict[str, Any]) -> None:
        shown = _int(body.get("move"), "'move' (the move number the page showed)")
        if shown != game.move:
            raise ApiError(
                f"stale move: the page showed move {shown} but the game is at move {game.move}; "
                "the board has been reloaded",
                HTTPStatus.CONFLICT,
            )
        if game.over():
            raise ApiError("the game is over", HTTPStatus.CONFLICT)

    def move(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        game = self.game(game_id)
        with game.lock:
            self._check_move(game, body)
            action = _int(body.get("action"), "'action'")
            seat = game.seat_on_move()
            if seat != game.human_seat:
                raise ApiError(
                    f"it is player_{seat}'s move ({game.specs[seat]}), not yours", HTTPStatus.CONFLICT
                )
            try:
                game.play(action)
            except IllegalActionError as exc:
                raise ApiError(f"refused: {exc}") from exc
            game.agents_until_human()
            return game.view()

    def advance(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        game = self.game(game_id)
        with game.lock:
            self._check_move(game, body)
            seat = game.seat_on_move()
            if seat == game.human_seat:
                raise ApiError("it is your move: choose one of the moves", HTTPStatus.CONFLICT)
            game.agent_move()
            return game.view()

    # -- records ------------------------------------------------------------
    def open_record(self, body: dict[str, Any]) -> dict[str, Any]:
        index = _int(body.get("index", 0), "'index'")
        if "record" in body:
            records = [body["record"]]
        elif "text" in body:
            if not isinstance(body["text"], str):
                raise ApiError("'text' must be the records file's text (JSON lines)")
            records = _parse_lines(body["text"], "the uploaded file")
        elif "path" in body:
            if not isinstance(body["path"], str) or not body["path"].strip():
                raise ApiError("'path' must name a records file (JSON lines)")
            path = Path(body["path"].strip()).expanduser()
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ApiError(f"cannot read {str(path)!r}: {exc}") from exc
            records = _parse_lines(text, str(path))
        else:
            raise ApiError("give a record: 'record' (an object), 'text' (JSON lines) or 'path' (a file)")
        if not records:
            raise ApiError("no record in the file")
        if not 0 <= index < len(records):
            raise ApiError(f"'index' {index} out of range: the file holds {len(records)} record(s)")
        record = records[index]
        try:
            check_record(record)
            moves, states = _replayed(record)
        except (ValueError, TypeError, SnapshotError, IllegalActionError) as exc:
            raise ApiError(f"malformed record {index}: {exc}") from exc
        replay = Replay(self._new_id(), record, moves, states)
        self._keep(self._replays, replay.replay_id, replay)
        return {
            "replay_id": replay.replay_id,
            "records": len(records),
            "index": index,
            "num_players": int(record["num_players"]),
            "modules": list(record.get("modules", [])),
            "agents": record.get("agents"),
            "seed": record["seed"],
            "moves": moves,
            **self._position(replay, len(moves)),
        }

    @staticmethod
    def _position(replay: Replay, move: int) -> dict[str, Any]:
        state = replay.states[move]
        names = replay.record.get("agents")
        caption = f"the deal (seed {replay.record['seed']})" if move == 0 else replay.moves[move - 1]
        over = rules.is_over(state)
        return {
            "move": move,
            "caption": caption,
            "svg": to_svg(state, None, caption=caption, names=names),
            "over": over,
            "result": runner.game_result(state) if over else None,
        }

    def _replay_move(self, replay: Replay, value: Any) -> int:
        move = _int(value, "'move'")
        if not 0 <= move <= len(replay.moves):
            raise ApiError(f"'move' must be in 0..{len(replay.moves)}, got {move}")
        return move

    def replay_at(self, replay_id: str, move: Any) -> dict[str, Any]:
        replay = self.replay(replay_id)
        with replay.lock:
            return self._position(replay, self._replay_move(replay, move))

    def continue_from(self, replay_id: str, body: dict[str, Any]) -> dict[str, Any]:
        replay = self.replay(replay_id)
        with replay.lock:
            move = self._replay_move(replay, body.get("move"))
            record = replay.record
            state = replay.states[move]
        if rules.is_over(state):
            raise ApiError("the game is over at that move: continue from an earlier one")
        modules = tuple(record.get("modules", ()))
        specs = _check_agents(body.get("agents"), int(record["num_players"]))
        seed = int(record["seed"])
        seat_agents = _build_agents(specs, seed, modules)
        max_turns = int(record.get("max_turns", st.DEFAULT_MAX_TURNS))
        game_env = raw_env(num_players=len(specs), modules=modules, max_turns=max_turns)
        game_env.reset(seed=seed, options={"snapshot": state})
        return self._start(game_env, specs, seat_agents, seed, prefix=list(record["actions"][:move]))


def _parse_lines(text: str, where: str) -> list[Any]:
    try:
        return list(parse_records(text.splitlines(), where))
    except ValueError as exc:
        raise ApiError(str(exc)) from exc


def _replayed(record: dict[str, Any]) -> tuple[list[str], list[np.ndarray]]:
    """Every decision of the record in words and every position (the deal first), replayed once:
    this also proves the record replays, and paging through it then replays nothing."""
    states = [new_env(record).engine_state()]
    words = []
    for move in replayed_moves(record):
        words.append(f"{move.number}. {move.who}: {move.words}")
        states.append(move.env.engine_state())
    return words, states


# ---------------------------------------------------------------------------
# HTTP


_GAME = re.compile(r"^/api/games/([0-9a-f]+)(?:/(move|advance))?$")
_REPLAY = re.compile(r"^/api/replays/([0-9a-f]+)(?:/(continue))?$")


class Handler(BaseHTTPRequestHandler):
    """Routes the page and the JSON API to the server's :class:`Store`; every error answers JSON."""

    server: AppServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload, separators=(",", ":")).encode(), "application/json")

    def _body(self) -> dict[str, Any]:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise ApiError("the Content-Length header is not a number") from None
        if length > MAX_BODY:
            raise ApiError(
                f"request too large ({length} bytes; at most {MAX_BODY})", HTTPStatus.REQUEST_ENTITY_TOO_LARGE
            )
        raw = self.rfile.read(length) if length else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ApiError(f"the request body is not JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise ApiError("the request body must be a JSON object")
        return body

    def _answer(self, route: Any) -> None:
        try:
            status, payload = route()
        except ApiError as exc:
            self._json(exc.status, {"error": str(exc)})
        except Exception as exc:  # a bug must not stop the server: say it, go on
            self._json(
                HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"server error: {type(exc).__name__}: {exc}"}
            )
        else:
            self._json(status, payload)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlparse(self.path)
        if url.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, (WEB / "index.html").read_bytes(), "text/html; charset=utf-8")
            return
        store = self.server.store

        def route() -> tuple[int, Any]:
            if url.path == "/api/specs":
                specs = {k: v for k, v in agents.known_specs().items() if k != HUMAN}
                return HTTPStatus.OK, {"specs": specs, "modules": list(MODULE_NAMES), "human": HUMAN}
            m = _GAME.match(url.path)
            if m and not m.group(2):
                return HTTPStatus.OK, store.get_game(m.group(1))
            m = _REPLAY.match(url.path)
            if m and not m.group(2):
                move = parse_qs(url.query).get("move", ["0"])[0]
                if not re.fullmatch(r"\d{1,6}", move):
                    raise ApiError(f"'move' must be a move number, got {move!r}")
                return HTTPStatus.OK, store.replay_at(m.group(1), int(move))
            raise ApiError(f"no such page: GET {url.path}", HTTPStatus.NOT_FOUND)

        self._answer(route)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        path = urlparse(self.path).path
        store = self.server.store

        def route() -> tuple[int, Any]:
            body = self._body()
            if path == "/api/games":
                return HTTPStatus.CREATED, store.new_game(body)
            if path == "/api/records":
                return HTTPStatus.OK, store.open_record(body)
            m = _GAME.match(path)
            if m and m.group(2) == "move":
                return HTTPStatus.OK, store.move(m.group(1), body)
            if m and m.group(2) == "advance":
                return HTTPStatus.OK, store.advance(m.group(1), body)
            m = _REPLAY.match(path)
            if m and m.group(2) == "continue":
                return HTTPStatus.CREATED, store.continue_from(m.group(1), body)
            raise ApiError(f"no such call: POST {path}", HTTPStatus.NOT_FOUND)

        self._answer(route)


class AppServer(ThreadingHTTPServer):
    """The app's HTTP server: a thread per request, one :class:`Store` of games for all of them."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], verbose: bool = False):
        super().__init__(address, Handler)
        self.store = Store()
        self.verbose = verbose

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


def make_server(host: str = "127.0.0.1", port: int = 8000, verbose: bool = False) -> AppServer:
    """The server bound to ``host:port`` (``port=0``: a free port; read it from ``.url``), not yet serving."""
    return AppServer((host, port), verbose=verbose)


def warm_up() -> float:
    """Compile the engine and the greedy agent once (numba), so that the first move on the page is fast."""
    start = time.perf_counter()
    env = raw_env(num_players=2)
    env.reset(seed=0)
    agent = agents.build("greedy", seed=0)
    rng = np.random.default_rng(0)
    for _ in range(4):
        env.step(runner.decide(agent, env, rng))
    to_svg(env.game_state, 0)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.serve", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"warning: serving on {args.host}: anyone who reaches it can play agents and read record files "
            "by path on this machine",
            file=sys.stderr,
        )
    print("compiling the engine (numba, first run only: up to a minute)...", flush=True)
    warm_up()
    server = make_server(args.host, args.port, verbose=args.verbose)
    print(f"splendor app on {server.url} (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
