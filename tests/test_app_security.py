"""The browser app is safe to leave running: every bad input gets a quick JSON 4xx, and the server goes on.

Why each case: the server may be reached by any web page the user visits
(cross-origin posts, DNS rebinding), and anything a request names (a record
file, a model, a search budget) is checked against what the server was
started with before anything is opened or built.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.nets.shipped import shipped_names
from tests.helpers.app_server import app_server, call, raw_request
from training.app import checks
from training.app.checks import ApiError, Limits, check_seat, inside, json_depth
from training.app.server import BODY_TIMEOUT_S, MAX_BODY, Guard

RECORD = {"num_players": 2, "seed": 1, "actions": []}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("app")
    records, models, outside = root / "records", root / "models", root / "outside"
    for folder in (records, models, outside):
        folder.mkdir()
    (records / "ok.jsonl").write_text(json.dumps(RECORD) + "\n")
    (outside / "valid.jsonl").write_text(json.dumps(RECORD) + "\n")
    (records / "link.jsonl").symlink_to(outside / "valid.jsonl")
    os.mkfifo(records / "pipe.jsonl")
    (records / "folder.jsonl").mkdir()  # a folder named like a record: a 500 once (fdopen raised)
    with open(records / "huge.jsonl", "wb") as handle:
        handle.truncate(checks.MAX_RECORD_BYTES + 1)  # sparse: no disk spent
    (models / "mine.zip").write_bytes(b"not really a model")
    return {"records": records, "models": models, "outside": outside}


@pytest.fixture(scope="module")
def url(folders: dict[str, Path]) -> Iterator[str]:
    with app_server(records_dir=folders["records"], max_ms_per_move=3000) as base:
        yield base


def host(url: str) -> bytes:
    return url.split("//")[1].rstrip("/").encode()


def test_a_record_in_the_records_folder_opens_by_name(url: str) -> None:
    status, info = call(url, "POST", "/api/records", {"path": "ok.jsonl"})
    assert status == 200 and info["move"] == 0, info
    status, specs = call(url, "GET", "/api/specs")
    assert "ok.jsonl" in specs["records"]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("/etc/shadow", "outside"),
        ("/etc/passwd", "outside"),
        ("../../../../etc/passwd", "outside"),
        ("../outside/valid.jsonl", "outside"),  # a valid record, but not in the folder
        ("link.jsonl", "outside"),  # a link out of the folder
        ("pipe.jsonl", "not a regular file"),  # a named pipe would hang a read
        ("folder.jsonl", "not a regular file"),
        ("huge.jsonl", "too large"),
        ("nothing.jsonl", "no records file"),
        ("", "file name inside"),
        (".", "outside"),
    ],
)
def test_a_record_path_outside_the_folder_or_not_a_plain_file_is_refused(
    url: str, name: str, words: str
) -> None:
    status, error = call(url, "POST", "/api/records", {"path": name})
    assert status == 400 and words in error["error"], error
    assert "root:" not in error["error"]


def test_the_path_check_comes_before_any_file_is_opened(folders: dict[str, Path], monkeypatch: Any) -> None:
    opened: list[Any] = []
    monkeypatch.setattr(
        checks.os, "open", lambda *a, **k: opened.append(a) or (_ for _ in ()).throw(OSError())
    )
    for name in ("/etc/shadow", "../outside/valid.jsonl", "link.jsonl"):
        with pytest.raises(ApiError, match="outside"):
            checks.read_record_file(folders["records"], name)
    assert opened == []
    assert inside(folders["records"], "sub/x.jsonl", "'path'") == folders["records"].resolve() / "sub/x.jsonl"


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("ppo:/tmp/model.zip", "not a shipped model"),
        ("ppo:../../model.zip", "not a shipped model"),
        ("az:/tmp/model.zip,sims=10", "not a shipped model"),
        ("/tmp/run/best.zip", "unknown agent spec"),
        ("mcts:sims=1000000000", "over this server's cap"),
        ("mcts:ms=100000", "over this server's --max-ms-per-move"),
        ("az:sims=99999999", "over this server's cap"),
        ("grredy", "unknown agent spec"),
        ("rllib:/tmp/run/checkpoint", "only from --models-dir"),
        ("agents.players.mcts:MCTSAgent", "unknown agent spec"),  # no class of one's own
        ("mcts:sims", "must be key=value"),
    ],
)
def test_a_seat_naming_a_file_or_a_budget_beyond_the_cap_is_refused(url: str, spec: str, words: str) -> None:
    status, error = call(url, "POST", "/api/games", {"agents": ["human", spec]})
    assert status == 400 and words in error["error"] and "seat 1" in error["error"], error


def test_models_come_only_from_the_shipped_ones_or_models_dir(folders: dict[str, Path]) -> None:
    limits = Limits(folders["records"], folders["models"], 3000.0)
    assert check_seat("ppo:mine", limits) == f"ppo:{folders['models'].resolve() / 'mine.zip'}"
    assert check_seat(f"az:{shipped_names()[0]},sims=100", limits) == f"az:{shipped_names()[0]},sims=100"
    assert check_seat("mcts:sims=400", limits) == "mcts:sims=400"
    (folders["models"] / "run" / "checkpoint").mkdir(parents=True, exist_ok=True)
    assert (
        check_seat("rllib:run/checkpoint", limits)
        == f"rllib:{folders['models'].resolve() / 'run/checkpoint'}"
    )
    for spec in ("ppo:../outside/x.zip", "ppo:/etc/passwd", "ppo:absent", "rllib:../outside", "rllib:absent"):
        with pytest.raises(ApiError):
            check_seat(spec, limits)


def test_a_cross_origin_or_non_json_post_is_refused(url: str) -> None:
    body = json.dumps({"agents": ["greedy", "random"]}).encode()
    evil = {"Origin": "http://evil.example"}
    status, error = call(url, "POST", "/api/games", raw=body, headers=evil)
    assert status == 403 and "cross-origin" in error["error"]
    status, error = call(url, "POST", "/api/games", raw=body, headers={**evil, "Content-Type": "text/plain"})
    assert status == 403
    status, error = call(url, "POST", "/api/games", raw=body, headers={"Content-Type": "text/plain"})
    assert status == 415 and "application/json" in error["error"]
    same = {"Origin": url.rstrip("/")}
    assert call(url, "POST", "/api/games", raw=body, headers=same)[0] == 201


def test_an_unknown_host_is_refused_unless_named_at_start(url: str) -> None:
    seconds, answer = raw_request(url, b"GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400") and b"unknown Host" in answer
    guard = Guard(None, {"127.0.0.1", "splendor.lan"})
    assert guard.refusal("GET", {"host": "splendor.lan:8000"}) is None
    assert guard.refusal("GET", {"host": "evil.example:8000"}).status_code == 400  # type: ignore[union-attr]


def post(url: str, head: str, body: bytes = b"") -> tuple[float, bytes]:
    return raw_request(
        url, f"POST /api/games HTTP/1.1\r\nHost: {host(url).decode()}\r\n{head}\r\n".encode() + body
    )


def answer_of(raw: bytes) -> tuple[int, dict[str, str], Any]:
    """``(status, headers, decoded JSON body)`` of a raw HTTP answer (the body must be JSON)."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers.get("content-type", "").startswith("application/json"), raw[:300]
    return int(lines[0].split()[1]), headers, json.loads(body)


JSON = "Content-Type: application/json\r\n"


@pytest.mark.parametrize(
    ("head", "body", "status", "words"),
    [
        (f"{JSON}Content-Length: -1\r\n", b"{}", 400, "bad Content-Length"),
        (f"{JSON}Content-Length: abc\r\n", b"{}", 400, "bad Content-Length"),
        (f"{JSON}Content-Length: 2\r\nContent-Length: 3\r\n", b"{}", 400, "conflicting Content-Length"),
        (f"{JSON}Content-Length: 2, 3\r\n", b"{}", 400, "conflicting Content-Length"),
        (f"{JSON}Content-Length: 100\r\n", b"{}", 408, "did not arrive"),  # a body that never comes
        (f"{JSON}Content-Length: {MAX_BODY + 1}\r\n", b"{}", 413, "too large"),
        (f"{JSON}Transfer-Encoding: chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n", 411, "chunked"),
        (f"{JSON}Transfer-Encoding: gzip\r\n", b"{}", 400, "Transfer-Encoding"),
    ],
)
def test_a_bad_body_length_gets_a_json_error_promptly(
    url: str, head: str, body: bytes, status: int, words: str
) -> None:
    """At once, or for a body that never comes after the server's body timeout: never a hung connection."""
    seconds, raw = post(url, head, body)
    code, _, error = answer_of(raw)
    # the 2 s of slack keep a busy CI machine from failing a check of behaviour, not of speed
    limit = BODY_TIMEOUT_S + 2.0 if status == 408 else 2.0
    assert code == status and words in error["error"] and seconds < limit, (seconds, raw[:300])
    assert call(url, "GET", "/api/specs")[0] == 200  # and the server goes on


@pytest.mark.parametrize(
    ("request_bytes", "status", "words"),
    [
        (b"GARBAGE\r\n\r\n", 400, "illegal request line: 'GARBAGE'"),
        (b"GET / HTTP/1.1\r\nHost HOST\r\n\r\n", 400, "illegal header line"),
        (b"GET / HTTP/1.1\r\nHost: HOST\r\nBad Name: x\r\n\r\n", 400, "illegal header line"),
        (b"GET / HTTP/1.1\r\n\r\n", 400, "Missing mandatory Host"),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400, "illegal request line"),  # TLS
        (b"GET / HTTP/1.1\r\nHost: HOST\r\nX: " + b"a" * 200_000, 431, "over 65536 bytes"),
        # a head over the cap that arrives whole (h11 caps only one still arriving): 200 once
        (b"GET / HTTP/1.1\r\nHost: HOST\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431, "over 65536 bytes"),
    ],
)
def test_a_request_that_is_not_http_gets_a_json_error(
    url: str, request_bytes: bytes, status: int, words: str
) -> None:
    """What h11 refuses before the app runs is answered as every other refusal: JSON, 4xx, at once."""
    seconds, raw = raw_request(url, request_bytes.replace(b"HOST", host(url)))
    code, headers, error = answer_of(raw)
    assert code == status and seconds < 2.0, (seconds, raw[:300])
    assert error["error"].startswith("malformed HTTP request: ") and words in error["error"], error
    assert headers["connection"] == "close" and len(error["error"]) < 300
    assert call(url, "GET", "/api/specs")[0] == 200


def test_deep_json_and_other_methods_get_json_errors(url: str) -> None:
    deep = b'{"agents": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    status, error = call(url, "POST", "/api/games", raw=deep)
    assert status == 400 and "nests deeper" in error["error"]
    status, error = call(url, "POST", "/api/games", raw=b'{"a":' + b"[" * 20 + b"]" * 20 + b"}")
    assert status == 400 and "nests deeper" in error["error"]
    status, error = call(url, "DELETE", "/api/games")
    assert status == 405 and "DELETE" in error["error"]
    status, error = call(url, "GET", "/api/games/zzz")
    assert status == 404 and error["error"]
    assert json_depth({"a": [[1]]}) == 3 and json_depth(5) == 0


def test_a_move_needs_the_seat_token(url: str) -> None:
    status, view = call(url, "POST", "/api/games", {"agents": ["human", "greedy"], "seed": 2})
    assert status == 201
    body = {"action": view["legal"][0]["id"], "move": view["move"]}
    status, error = call(url, "POST", f"/api/games/{view['game_id']}/move", {**body, "tokens": ["guess"]})
    assert status == 403 and "token" in error["error"]
    status, watcher = call(url, "GET", f"/api/games/{view['game_id']}")
    assert watcher["legal"] == [] and watcher["my_seats"] == []  # a watcher sees no moves and no hidden card
    status, after = call(
        url, "POST", f"/api/games/{view['game_id']}/move", {**body, "tokens": list(view["tokens"].values())}
    )
    assert status == 200 and after["move"] == view["move"] + 1
