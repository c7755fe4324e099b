"""The browser app's server (``training.app.server``) on a free port in a thread, and JSON clients for it.

Shared by the API tests and the browser tests, which both need a real server
(uvicorn, its threads, its guards and its errors are what they test), started
and stopped by the test, not by hand.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlparse

from training.app.server import serve_in_thread

#: A running server on a free port (the app's own helper, shared with the browser benchmark).
app_server = serve_in_thread


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
