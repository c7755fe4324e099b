"""The browser app's server (``training.app.server``) on a free port in a thread, and a JSON client for it.

Shared by the API tests and the browser tests, which both need a real server
(the HTTP layer, its threads and its errors are what they test), started and
stopped by the test, not by hand.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from training.app.server import make_server, warm_up


@contextmanager
def app_server() -> Iterator[str]:
    """A running server on 127.0.0.1 and a free port; yields its URL (``http://127.0.0.1:PORT/``)."""
    warm_up()
    server = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def call(url: str, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
    """``(status, decoded JSON)`` of one API call; an HTTP error status is returned, not raised."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
