"""The browser app's server (``training.app.server``) on a free port in a thread, and JSON clients for it.

Shared by the API tests and the browser tests, which both need a real server
(uvicorn, its threads, its guards and its errors are what they test), started
and stopped by the test, not by hand.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from training.app.server import serve_in_thread

#: A running server on a free port (the app's own helper, shared with the browser benchmark).
app_server = serve_in_thread
#: The repository (a server process runs from here, as a user starts it).
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A port free now, for a server that must come back on the same address after a restart."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def server_process(
    data_dir: Path, port: int, *args: str, timeout: float = 180
) -> Iterator[subprocess.Popen[str]]:
    """``python -m training.serve --port PORT --data-dir DATA_DIR ARGS`` in a process of its own (so a test can
    SIGKILL it, as a crash or ``kill -9`` would), once it says it serves; killed at the end if still running.
    Its output is kept in ``.lines``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    command = [
        sys.executable,
        "-m",
        "training.serve",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *args,
    ]
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    proc.lines = lines  # type: ignore[attr-defined]

    def drain() -> None:  # read every line, so that a chatty server never blocks on a full pipe
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + timeout
        while not any(line.startswith("splendor app on") for line in lines):
            if proc.poll() is not None or time.monotonic() > deadline:
                time.sleep(0.2)  # the last lines
                raise AssertionError(f"the server did not start (exit {proc.poll()}):\n" + "\n".join(lines))
            time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def call(
    url: str,
    method: str,
    path: str,
    body: Any = None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """``(status, decoded JSON)`` of one API call; an HTTP error status is returned, not raised."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def events(
    url: str,
    game_id: str,
    tokens: Sequence[str] = (),
    until: Callable[[dict[str, Any]], bool] | None = None,
    timeout: float = 120,
) -> dict[str, Any]:
    """The views a game's live stream sends, read until ``until(view)`` holds; returns that view."""
    parts = urlparse(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("GET", f"/api/games/{game_id}/events?tokens={','.join(tokens)}")
        response = conn.getresponse()
        assert response.status == 200, response.read()
        assert response.getheader("Content-Type", "").startswith("text/event-stream")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = response.readline()
            if not line:
                raise AssertionError("the stream ended")
            if line.startswith(b"data: "):
                view = json.loads(line[6:])
                if until is None or until(view):
                    return view
        raise AssertionError(f"no view of game {game_id} came within {timeout} s")
    finally:
        conn.close()


def raw_request(url: str, data: bytes, timeout: float = 5) -> tuple[float, bytes]:
    """Send ``data`` as is on a fresh connection; ``(seconds until the answer, the answer's bytes)``."""
    import socket

    parts = urlparse(url)
    start = time.monotonic()
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                head, _, rest = b"".join(chunks).partition(b"\r\n\r\n")
                length = [ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length:")]
                if length and len(rest) >= int(length[0].split(b":")[1]):
                    break
    return time.monotonic() - start, b"".join(chunks)


#: each game's seat tokens, by game id (what new_game was answered), for the helpers below
TOKENS: dict[str, list[str]] = {}


def settled(url: str, view: dict[str, Any]) -> dict[str, Any]:
    """The game once the agents have moved (a human on move, or over), heard on the live stream."""
    if (
        not view["human_seats"]
        or view["over"]
        or (view["seat_on_move"] in view["my_seats"] and view["legal"])
    ):
        return view
    return events(url, view["game_id"], TOKENS[view["game_id"]], until=lambda v: v["over"] or v["legal"])


def new_game(url: str, **body: Any) -> dict[str, Any]:
    status, view = call(url, "POST", "/api/games", body)
    assert status == 201, view
    TOKENS[view["game_id"]] = list(view.pop("tokens").values())
    return settled(url, view)


def move(url: str, view: dict[str, Any], action: Any, shown: int | None = None) -> tuple[int, Any]:
    """Post a human move; on success the answer is the game once the agents have answered it."""
    body = {
        "action": action,
        "move": view["move"] if shown is None else shown,
        "tokens": TOKENS[view["game_id"]],
    }
    status, after = call(url, "POST", f"/api/games/{view['game_id']}/move", body)
    return status, settled(url, after) if status == 200 else after


def get(url: str, game_id: str) -> dict[str, Any]:
    status, view = call(url, "GET", f"/api/games/{game_id}?tokens={','.join(TOKENS.get(game_id, []))}")
    assert status == 200, view
    return view
