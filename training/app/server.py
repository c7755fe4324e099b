"""See the game in a browser: a Starlette app on uvicorn with one page (``training/app/web/index.html``).

Usage::

    python -m training.serve                      # http://127.0.0.1:8000/
    python -m training.serve --port 8080 --records-dir results --models-dir runs --data-dir results/table

Why Starlette and uvicorn: an established ASGI stack parses HTTP, streams live
updates and runs the blocking engine calls on worker threads, so this file
only routes, guards and encodes (``pip install 'splendor-env[app]'``). The
engine on the server is the only source of truth (:mod:`training.app.store`):
the page shows what the server sends and sends back an action id with the move
number it was shown, so a stale click is refused instead of played elsewhere.
Every game is saved as it moves (:mod:`training.app.archive`, in ``--data-dir``),
so a restarted server goes on with each game at its address.

Safe to leave running: it binds 127.0.0.1; a state-changing request needs a
JSON content type and a same-origin ``Origin`` (or none), so no other web page
can drive it; an unknown ``Host`` is refused (DNS rebinding) unless ``--host``
names it; bodies are capped in size, depth and time to arrive; records open
only by upload or from ``--records-dir``, models only shipped or from
``--models-dir``, and search budgets only up to ``--max-ms-per-move``
(:mod:`training.app.checks`). Every error is JSON with a 4xx status, a request
that is not well-formed HTTP included, and slow or greedy connections are cut short
(:mod:`training.app.protocol`).

JSON API:

* ``GET /api/specs``: the agent specs, the module names, the shipped models, the records folder's files;
* ``POST /api/games`` ``{"agents": [...], "modules": [...], "seed": int|null}``: a new game
  (``"human"`` seats for people; the answer's ``tokens`` hold each human seat's secret);
* ``GET /api/games/ID?tokens=T1,T2``: the game as a holder of those seats sees it (its *view*);
* ``GET /api/games/ID/events?tokens=...``: the view again on every change (server-sent events);
  while one is open, a game only agents play moves (watch mode);
* ``POST /api/games/ID/move`` ``{"action": id, "move": n, "tokens": [...]}``: a human's move;
  the agents then move on the server and the stream carries each move;
* ``POST /api/games/ID/pace`` ``{"delay_ms": 0..10000, "paused": bool}`` (either or both): how a game
  only agents play moves; the server plays it at that pace while some page watches its stream;
* ``POST /api/records`` ``{"record": {...}}`` or ``{"text": "<JSON lines>"}`` or
  ``{"path": "NAME.jsonl"}`` (inside ``--records-dir``), with ``"index"`` (default 0);
* ``GET /api/replays/ID?move=k``: the record's position after its first ``k`` decisions;
* ``GET /api/games/ID/analysis?tokens=...`` and ``GET /api/replays/ID/analysis?move=k`` (either with
  ``sims``, ``seed``): ``az``'s win chances and top moves from what the viewer sees (:mod:`training.app.analysis`);
* ``POST /api/replays/ID/continue`` ``{"move": k, "agents": [...]}``: a new game from that position;
* ``GET /api/lobby``: the games saved here, newest first (``/lobby`` shows them);
* ``GET /api/games/ID/record``: a finished game's record; ``GET /api/lobby/records``: every one, as JSON lines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents import runner
from agents.nets.shipped import shipped_names
from splendor_env.env import raw_env
from splendor_env.picture import to_svg
from splendor_env.state import MODULE_NAMES
from training.app import analysis
from training.app.archive import FILE_NAME, Archive, ArchiveError
from training.app.checks import HUMAN, MAX_JSON_DEPTH, ApiError, Limits, json_depth, record_files
from training.app.store import Store

try:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    from training.app.protocol import ConnectionLimits, protocol_for
except ImportError as exc:  # the optional extra
    raise ImportError(
        f"the browser app needs Starlette and uvicorn: pip install -e '.[app]' ({exc})"
    ) from exc

#: The page (package data).
WEB = Path(__file__).parent / "web"
#: The page's other files, by name, with their media types (nothing else under web/ is served).
ASSETS = {
    "app.js": "text/javascript",
    "table.js": "text/javascript",
    "lobby.js": "text/javascript",
    "app.css": "text/css",
    "analysis.js": "text/javascript",
    "analysis.css": "text/css",
}
#: Largest request body (an uploaded records file included).
MAX_BODY = 16 * 1024 * 1024
#: Seconds a request body may take to arrive in full.
BODY_TIMEOUT_S = 1.5
#: Default cap on an agent's time per move (``--max-ms-per-move``).
MAX_MS_PER_MOVE = 5000.0
#: Where ``python -m training.serve`` saves games unless ``--data-dir`` says otherwise.
DATA_DIR = "results/table"
#: Seconds between keep-alive comments on a live stream.
HEARTBEAT_S = 15.0
#: Host names always served (with any port): this machine.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")

_ID = re.compile(r"^[0-9a-f]{1,32}$")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=int(status), headers={"Cache-Control": "no-store"})


def _host_name(host: str) -> str:
    """``host:port`` without the port (``[::1]:80`` -> ``[::1]``)."""
    return host if host.startswith("[") and host.endswith("]") else host.rsplit(":", 1)[0].lower()


class Guard:
    """ASGI middleware: refuses what no page of this server would send, before any route runs.

    Unknown ``Host`` (DNS rebinding), a state-changing request from another
    origin or not declared JSON (a plain form post from any web page), a chunked
    or over-long body: each gets its JSON 4xx here.
    """

    def __init__(self, app: Any, hosts: set[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.refusal(scope["method"], headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, method: str, headers: dict[str, str]) -> Response | None:
        host = headers.get("host", "")
        if _host_name(host) not in self.hosts:
            return _error(
                HTTPStatus.BAD_REQUEST, f"unknown Host {host!r}: start the server with --host to serve it"
            )
        if method in ("GET", "HEAD"):
            return None
        if method != "POST":
            return _error(HTTPStatus.METHOD_NOT_ALLOWED, f"{method} is not allowed here (GET and POST only)")
        origin = headers.get("origin")
        if origin is not None and origin not in (f"http://{host}", f"https://{host}"):
            return _error(HTTPStatus.FORBIDDEN, f"cross-origin request from {origin!r} refused")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return _error(HTTPStatus.LENGTH_REQUIRED, "chunked bodies are not accepted: send Content-Length")
        length = headers.get("content-length", "0")
        if not length.isdigit():
            return _error(HTTPStatus.BAD_REQUEST, f"bad Content-Length {length!r}")
        if int(length) > MAX_BODY:
            return _error(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"request too large ({length} bytes; at most {MAX_BODY})"
            )
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return _error(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"send JSON (Content-Type: application/json), not {kind!r}"
            )
        return None


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object, refused when it arrives too slowly, nests too deep or is not an object."""
    try:
        raw = await asyncio.wait_for(request.body(), BODY_TIMEOUT_S)
    except TimeoutError:
        raise ApiError(
            f"the request body did not arrive within {BODY_TIMEOUT_S:g} s", HTTPStatus.REQUEST_TIMEOUT
        ) from None
    try:
        body = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(f"the request body is not JSON: {exc}") from None
    except ValueError:  # the one other refusal of json.loads: an integer too long for int()
        raise ApiError(
            f"the request body holds a number too long (over {sys.get_int_max_str_digits()} digits)"
        ) from None
    except RecursionError:
        raise ApiError(f"the request body nests deeper than {MAX_JSON_DEPTH} levels") from None
    if json_depth(body) > MAX_JSON_DEPTH:
        raise ApiError(f"the request body nests deeper than {MAX_JSON_DEPTH} levels")
    if not isinstance(body, dict):
        raise ApiError("the request body must be a JSON object")
    return body


def _id(request: Request, key: str = "id") -> str:
    value = request.path_params[key]
    if not _ID.match(value):
        raise ApiError(f"no such id {value!r}", HTTPStatus.NOT_FOUND)
    return value


def _tokens(request: Request) -> list[str]:
    return [t for t in request.query_params.get("tokens", "").split(",") if t]


def build_app(limits: Limits, hosts: tuple[str, ...] = (), archive: Archive | None = None) -> Any:
    """The ASGI app: routes over one :class:`Store`, behind :class:`Guard` (``hosts``: extra Host names;
    ``archive``: where games are saved, in memory without one)."""

    def start_agents(game: Any) -> None:
        threading.Thread(target=game.run_agents, name=f"agents-{game.game_id}", daemon=True).start()

    store = Store(limits, start_agents=start_agents, archive=archive)
    analyst = analysis.Analyst(limits.max_ms_per_move)

    def page(request: Request) -> Response:
        return FileResponse(WEB / "index.html", media_type="text/html; charset=utf-8")

    def lobby_page(request: Request) -> Response:
        return FileResponse(WEB / "lobby.html", media_type="text/html; charset=utf-8")

    async def lobby(request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(store.lobby), headers={"Cache-Control": "no-store"})

    async def saved_record(request: Request) -> Response:
        record = await run_in_threadpool(store.saved_record, _id(request))
        return _jsonl([record], f"game-{_id(request)}.jsonl")

    async def saved_records(request: Request) -> Response:
        return _jsonl(await run_in_threadpool(lambda: list(store.archive.finished_records())), "games.jsonl")

    def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            raise ApiError(f"no such file: {name!r}", HTTPStatus.NOT_FOUND)
        return FileResponse(WEB / name, media_type=ASSETS[name], headers={"Cache-Control": "no-cache"})

    def specs(request: Request) -> JSONResponse:
        listed = {k: v for k, v in agents.known_specs().items() if k != HUMAN}
        return JSONResponse(
            {
                "specs": listed,
                "modules": list(MODULE_NAMES),
                "human": HUMAN,
                "models": shipped_names(),
                "records": record_files(limits.records_dir),
                "max_ms_per_move": limits.max_ms_per_move,
            }
        )

    async def new_game(request: Request) -> JSONResponse:
        body = await _body(request)
        return JSONResponse(await run_in_threadpool(store.new_game, body), status_code=201)

    async def get_game(request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(store.get_game, _id(request), _tokens(request)))

    async def events(request: Request) -> StreamingResponse:
        game = await run_in_threadpool(store.game, _id(request))  # may replay a saved game: off the loop
        mine = game.seats_of(_tokens(request))
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def wake() -> None:
            loop.call_soon_threadsafe(changed.set)

        async def stream() -> Any:
            game.watch(wake)
            try:
                changed_now, idle = True, 0.0
                while True:
                    if changed_now:
                        changed.clear()
                        view = await run_in_threadpool(lambda: _locked_view(game, mine))
                        yield f"data: {json.dumps(view, separators=(',', ':'))}\n\n"
                    try:
                        await asyncio.wait_for(changed.wait(), 1.0)
                        changed_now, idle = True, 0.0
                    except TimeoutError:  # each second: is the page still there? a comment now and then
                        if await request.is_disconnected():
                            return
                        changed_now, idle = False, idle + 1.0
                        if idle >= HEARTBEAT_S:
                            yield ": still here\n\n"
                            idle = 0.0
            finally:
                game.unwatch(wake)

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def move(request: Request) -> JSONResponse:
        body = await _body(request)
        return JSONResponse(await run_in_threadpool(store.move, _id(request), body))

    async def pace(request: Request) -> JSONResponse:
        body = await _body(request)
        return JSONResponse(await run_in_threadpool(store.pace, _id(request), body))

    async def open_record(request: Request) -> JSONResponse:
        body = await _body(request)
        return JSONResponse(await run_in_threadpool(store.open_record, body))

    async def replay_at(request: Request) -> JSONResponse:
        move = request.query_params.get("move", "0")
        if not re.fullmatch(r"\d{1,6}", move):
            raise ApiError(f"'move' must be a move number, got {move!r}")
        return JSONResponse(await run_in_threadpool(store.replay_at, _id(request), int(move)))

    async def game_analysis(request: Request) -> JSONResponse:
        game = await run_in_threadpool(store.game, _id(request))
        answer = analysis.game_analysis, analyst, game, _tokens(request), request.query_params
        return JSONResponse(await run_in_threadpool(*answer), headers={"Cache-Control": "no-store"})

    async def replay_analysis(request: Request) -> JSONResponse:
        replay = store.replay(_id(request))
        answer = analysis.replay_analysis, analyst, replay, request.query_params
        return JSONResponse(await run_in_threadpool(*answer), headers={"Cache-Control": "no-store"})

    async def continue_from(request: Request) -> JSONResponse:
        body = await _body(request)
        return JSONResponse(await run_in_threadpool(store.continue_from, _id(request), body), status_code=201)

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return _error(exc.status, str(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return _error(404, f"no such page: {request.method} {request.url.path}")
        if exc.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(exc.status_code, str(exc.detail))

    async def server_error(request: Request, exc: Exception) -> Response:
        return _error(
            500, f"server error: {type(exc).__name__}: {exc}"
        )  # a bug: said, and the server goes on

    routes = [
        Route("/", page),
        Route("/games/{id}", page),
        Route("/lobby", lobby_page),
        Route("/api/lobby", lobby),
        Route("/api/lobby/records", saved_records),
        Route("/api/games/{id}/record", saved_record),
        Route("/web/{name}", asset),
        Route("/api/specs", specs),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{id}", get_game),
        Route("/api/games/{id}/events", events),
        Route("/api/games/{id}/move", move, methods=["POST"]),
        Route("/api/games/{id}/pace", pace, methods=["POST"]),
        Route("/api/records", open_record, methods=["POST"]),
        Route("/api/replays/{id}", replay_at),
        Route("/api/replays/{id}/continue", continue_from, methods=["POST"]),
        Route("/api/games/{id}/analysis", game_analysis),
        Route("/api/replays/{id}/analysis", replay_analysis),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={ApiError: api_error, HTTPException: http_error, Exception: server_error},
    )
    app.state.store = store
    return Guard(app, {*LOCAL_HOSTS, *(_host_name(h) for h in hosts if h)})


def _jsonl(records: list[dict[str, Any]], name: str) -> Response:
    """Records as a JSON-lines file to save (the format of ``training.play --save-games``)."""
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    headers = {"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"}
    return Response(text, media_type="application/x-ndjson", headers=headers)


def _locked_view(game: Any, mine: set[int]) -> dict[str, Any]:
    with game.lock:
        return game.view(mine)


class AppServer:
    """uvicorn serving :func:`build_app` on a socket bound here (``port=0``: a free port, read ``.url``);
    it owns ``archive`` (closed with the server)."""

    def __init__(
        self,
        host: str,
        port: int,
        limits: Limits,
        verbose: bool = False,
        connections: ConnectionLimits | None = None,
        archive: Archive | None = None,
    ) -> None:
        self.archive = archive
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host, port))
            # listening from here: a client told "splendor app on ..." waits in the queue until uvicorn
            # starts instead of being refused (it was, under load, in CI)
            self.socket.listen(2048)
        except OSError:
            self.server_close()
            raise
        extra = () if host in ("127.0.0.1", "localhost", "::1") else (host,)
        self.app = build_app(limits, extra, archive)
        config = uvicorn.Config(
            self.app,
            log_level="info" if verbose else "warning",
            access_log=verbose,
            timeout_keep_alive=5,
            timeout_graceful_shutdown=2,
            http=protocol_for(connections or ConnectionLimits()),
            ws="none",
        )
        self.server = uvicorn.Server(config)
        self.server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        bound_host, bound_port = self.socket.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        self.url = f"http://{shown}:{bound_port}/"

    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` (or Ctrl-C)."""
        self.server.run(sockets=[self.socket])

    def shutdown(self) -> None:
        self.server.should_exit = True

    def server_close(self) -> None:
        self.socket.close()
        if self.archive is not None:
            self.archive.close()


def make_server(
    host: str = "127.0.0.1",
    port: int = 8000,
    verbose: bool = False,
    records_dir: str | Path = "results",
    models_dir: str | Path | None = None,
    max_ms_per_move: float = MAX_MS_PER_MOVE,
    connections: ConnectionLimits | None = None,
    data_dir: str | Path | None = None,
) -> AppServer:
    """The server bound to ``host:port``, not yet serving; records and models only from the folders named,
    games saved in ``data_dir`` (in memory without it; :class:`ArchiveError` for a folder or database it
    cannot use); ``connections``: the limits on connections (:mod:`training.app.protocol`'s defaults)."""
    if max_ms_per_move <= 0:
        raise ValueError(f"max_ms_per_move must be > 0, got {max_ms_per_move}")
    limits = Limits(
        Path(records_dir), None if models_dir is None else Path(models_dir), float(max_ms_per_move)
    )
    archive = None if data_dir is None else Archive(Path(data_dir))
    return AppServer(host, port, limits, verbose=verbose, connections=connections, archive=archive)


@contextmanager
def serve_in_thread(records_dir: str | Path = "results", **options: Any) -> Iterator[str]:
    """A running server on 127.0.0.1 and a free port, in a daemon thread; yields its URL.

    For the tests and the browser benchmark, which need a real server (uvicorn,
    its threads, its guards) started and stopped by the caller, not by hand.
    """
    warm_up()
    server = make_server("127.0.0.1", 0, records_dir=records_dir, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield server.url
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()


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


def _more_open_files() -> None:
    """Raise this process's soft limit on open files to its hard limit: each connection is a file, and
    a soft limit of 1,024 (common) would stop accepting while slow clients wait out the head deadline."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
            resource.setrlimit(
                resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard)
            )
    except (ImportError, ValueError, OSError):  # not POSIX, or not allowed: the limit stays
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.serve", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port)")
    parser.add_argument(
        "--records-dir",
        default="results",
        help="the only folder records open from by name (default results/)",
    )
    parser.add_argument(
        "--models-dir",
        default=None,
        help="a folder of .zip models seats may name (default: shipped models only)",
    )
    parser.add_argument(
        "--max-ms-per-move",
        type=float,
        default=MAX_MS_PER_MOVE,
        help=f"cap on an agent's search per move in ms; bigger specs are refused (default {MAX_MS_PER_MOVE:g})",
    )
    parser.add_argument(
        "--data-dir",
        default=DATA_DIR,
        help=f"the folder games are saved in ({FILE_NAME}), so a restart goes on with them (default {DATA_DIR}/)",
    )
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    if args.max_ms_per_move <= 0:
        parser.error(f"--max-ms-per-move must be > 0, got {args.max_ms_per_move:g}")
    if args.models_dir is not None and not Path(args.models_dir).is_dir():
        parser.error(f"--models-dir {args.models_dir!r} is not a folder")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"warning: serving on {args.host}: anyone who reaches it can start games and play agents; "
            "seats need their seat links",
            file=sys.stderr,
        )
    try:  # first: a database it cannot use is said at once, before the engine compiles
        server = make_server(
            args.host, args.port, args.verbose, args.records_dir, args.models_dir, args.max_ms_per_move,
            data_dir=args.data_dir,
        )  # fmt: skip
    except ArchiveError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        parser.error(f"cannot listen on {args.host}:{args.port}: {exc}")
    _more_open_files()
    print("compiling the engine (numba, first run only: up to a minute)...", flush=True)
    warm_up()
    print(
        f"splendor app on {server.url} (Ctrl-C stops it); games saved in {Path(args.data_dir) / FILE_NAME}",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
