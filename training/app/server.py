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
import sys
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np

import agents
from agents import runner
from splendor_env.env import raw_env
from splendor_env.picture import to_svg
from splendor_env.state import MODULE_NAMES
from training.app.store import HUMAN, ApiError, Store

#: The page (package data).
WEB = Path(__file__).parent / "web"
#: Largest request body (an uploaded records file included).
MAX_BODY = 32 * 1024 * 1024


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
