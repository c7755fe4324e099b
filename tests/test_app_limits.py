"""Connections the server cuts short (``training.app.protocol``): slow request heads, too many from one address.

Why: a server left running on a network must not be held by clients that open connections and
never finish a request (slowloris), nor by one address opening thousands; each such connection
is closed on a deadline or refused at once, and a normal request is answered meanwhile. A live
stream (a long answer) is never cut by the head deadline.

``SPLENDOR_SLOW_HEADS=2000`` runs the slow-head test with 2,000 connections (docs/results/benchmarks.md
gives the figures); by default it opens fewer, to stay fast on a shared machine.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from tests.helpers.app_server import app_server, call, raw_request
from training.app.protocol import ConnectionLimits

#: Seconds a head may take in these tests (the server's default is 10).
DEADLINE_S = 2.0
#: Connections from one address in these tests (the default is 64).
PER_CLIENT = 16
#: Slow connections opened by the slow-head test.
SLOW = int(os.environ.get("SPLENDOR_SLOW_HEADS", "300"))


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with app_server(connections=ConnectionLimits(head_timeout_s=DEADLINE_S, per_client=PER_CLIENT)) as base:
        yield base


def address(url: str) -> tuple[str, int]:
    parts = urlparse(url)
    return str(parts.hostname), int(parts.port or 80)


def connect(url: str, source: str) -> socket.socket:
    """A connection from ``source`` (another loopback address: a client of its own)."""
    sock = socket.socket()
    try:
        sock.bind((source, 0))
    except OSError as exc:
        sock.close()
        pytest.skip(f"cannot send from {source}: {exc}")
    sock.connect(address(url))
    return sock


def read_all(sock: socket.socket, seconds: float) -> bytes:
    """What the server sends until it closes the connection (at most ``seconds``)."""
    sock.settimeout(seconds)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except TimeoutError:
        chunks.append(b"<still open>")
    except ConnectionResetError:
        pass
    return b"".join(chunks)


def timed_get(url: str) -> float:
    start = time.monotonic()
    status, _ = call(url, "GET", "/api/specs")
    assert status == 200
    return time.monotonic() - start


def test_slow_heads_are_closed_on_the_deadline_and_a_normal_request_is_answered_meanwhile(url: str) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * SLOW + 256  # the server's ends and the test's, in this one process
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"{SLOW} connections need {needed} open files; this process may have {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    host = address(url)[0]
    opened = time.monotonic()
    slow = []
    for k in range(SLOW):  # PER_CLIENT - 1 from each address: the per-address cap is not what closes them
        client = k // (PER_CLIENT - 1)
        sock = connect(url, f"127.0.{client // 254}.{2 + client % 254}")
        sock.sendall(f"GET /api/specs HTTP/1.1\r\nHost: {host}\r\nX-Slow: ".encode())  # and never the rest
        slow.append(sock)
    took = time.monotonic() - opened
    answers = [timed_get(url) for _ in range(5)]
    print(f"\n{SLOW} slow heads opened in {took:.2f} s; normal requests answered in "
          f"{', '.join(f'{1000 * a:.0f}' for a in answers)} ms")  # fmt: skip
    assert took < DEADLINE_S, f"opening them took {took:.1f} s: the first had gone before the last came"
    ends = [read_all(sock, DEADLINE_S + 10) for sock in slow]
    closed_after = time.monotonic() - opened
    for sock in slow:
        sock.close()
    print(f"all {SLOW} closed {closed_after:.2f} s after the first was opened (deadline {DEADLINE_S:g} s)")
    assert all(end.startswith(b"HTTP/1.1 408 ") for end in ends), {e[:60] for e in ends}
    assert b"did not arrive within 2 s" in ends[0]
    assert closed_after < took + DEADLINE_S + 10
    assert timed_get(url) < 5


def test_a_head_trickled_after_an_answer_is_cut_off_too(url: str) -> None:
    host = address(url)[0]
    sock = connect(url, "127.0.0.1")
    sock.sendall(f"GET /api/specs HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    sock.settimeout(10)
    assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")  # kept alive: the next head has the deadline too
    start = time.monotonic()
    sock.sendall(b"GET /api/specs HTTP/1.1\r\n")
    for _ in range(int(4 * DEADLINE_S)):  # a byte every quarter second: it never completes
        time.sleep(0.25)
        try:
            sock.sendall(b"X")
        except OSError:
            break
    end = read_all(sock, 10)
    sock.close()
    # (the end of the first answer's body may come first)
    assert b"HTTP/1.1 408 " in end and time.monotonic() - start < DEADLINE_S + 3, end[-300:]


def test_one_address_holds_so_many_connections_and_others_are_served(url: str) -> None:
    held = [connect(url, "127.0.0.250") for _ in range(PER_CLIENT)]
    time.sleep(0.2)
    extra = connect(url, "127.0.0.250")
    code, error = answer(read_all(extra, 5))
    assert code == 429 and f"{PER_CLIENT} connections are open from 127.0.0.250" in error, error
    assert timed_get(url) < 5  # another address is served
    held.pop().close()
    time.sleep(0.2)
    again = connect(url, "127.0.0.250")  # one closed: one more may open
    again.sendall(f"GET /api/specs HTTP/1.1\r\nHost: {address(url)[0]}\r\nConnection: close\r\n\r\n".encode())
    assert read_all(again, 10).startswith(b"HTTP/1.1 200 ")
    for sock in [*held, extra, again]:
        sock.close()


def answer(raw: bytes) -> tuple[int, str]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)["error"]


def test_a_live_stream_outlasts_the_head_deadline(url: str) -> None:
    status, view = call(url, "POST", "/api/games", {"agents": ["human", "human"], "seed": 1})
    assert status == 201
    game_id, tokens = view["game_id"], list(view["tokens"].values())
    host, port = address(url)
    stream = socket.create_connection((host, port))
    stream.sendall(f"GET /api/games/{game_id}/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    stream.settimeout(10)
    assert stream.recv(65536).startswith(b"HTTP/1.1 200 ")
    time.sleep(DEADLINE_S + 1)
    body = {"action": view["legal"][0]["id"], "move": 0, "tokens": tokens}
    assert call(url, "POST", f"/api/games/{game_id}/move", body)[0] == 200
    seen = b""
    while b'"move":1' not in seen:
        chunk = stream.recv(65536)
        assert chunk, "the stream was closed"
        seen += chunk
    stream.close()


def test_a_head_just_under_the_cap_is_answered(url: str) -> None:
    host = address(url)[0]
    _, raw = raw_request(
        url, f"GET /api/specs HTTP/1.1\r\nHost: {host}\r\nX: {'a' * 60_000}\r\n\r\n".encode()
    )
    assert raw.startswith(b"HTTP/1.1 200 "), raw[:200]
