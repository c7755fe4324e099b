"""Inputs that once made the table answer 500 or say too much: each is refused with a 4xx, or said for all.

Why each case: the server is left running for any page to reach, so every request it cannot
serve must get a clear 4xx that leaves the game as it was (an illegal id, a token or a number
Python will not read, a record's odd field, a record too long to open in reasonable time and
memory), and the game's log goes to every page, so it must not name a card only its holder saw.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

import agents
from agents import runner
from splendor_env.actions import BUY_RESERVED
from splendor_env.records import check_record
from tests.helpers.app_server import TOKENS, app_server, call, events, get, move, new_game
from training.app import store as store_module
from training.app.checks import MAX_RECORD_ACTIONS

#: A 2-player Trading Posts game (seed 0) that reaches seat 1 keeping one of two drawn cards face down.
TO_KEEP = {
    "num_players": 2,
    "seed": 0,
    "modules": ["trading_posts"],
    "agents": ["human", "human"],
    "actions": [
        25, 5, 5, 9, 9, 46, 26, 8, 47, 47, 1, 5, 7, 60, 61, 48, 50, 47, 0, 6, 46, 9, 34, 48, 57, 50, 27,
        25, 87, 31, 36, 57, 57, 8, 46, 30, 30, 57, 57, 45, 45, 82, 6, 45, 81, 51, 52, 80, 36, 51, 84, 57, 42,
    ],
}  # fmt: skip
#: A number longer than Python reads from text (``sys.get_int_max_str_digits``).
HUGE = "9" * (sys.get_int_max_str_digits() + 700)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with app_server(records_dir=tmp_path_factory.mktemp("records")) as base:
        yield base


def opened(url: str, record: dict[str, Any]) -> dict[str, Any]:
    status, info = call(url, "POST", "/api/records", {"record": record})
    assert status == 200, info
    return info


def test_a_card_kept_face_down_is_named_in_no_log(url: str) -> None:
    info = opened(url, TO_KEEP)
    body = {"move": len(TO_KEEP["actions"]), "agents": ["human", "human"]}
    status, game = call(url, "POST", f"/api/replays/{info['replay_id']}/continue", body)
    assert status == 201, game
    tokens = game.pop("tokens")
    TOKENS[game["game_id"]] = list(tokens.values())
    assert game["phase"] == "keep_drawn_card" and game["seat_on_move"] == 1, game["phase"]
    kept = game["legal"][0]["text"]  # its holder's words for it name the card: "... (white, 0 pts)"
    card = kept[kept.index("(") :]
    assert card.endswith(")") and "pt" in card, kept
    status, after = move(url, game, game["legal"][0]["id"])
    assert status == 200, after
    gid = game["game_id"]
    views = {
        "a watcher": call(url, "GET", f"/api/games/{gid}")[1],
        "the other seat": call(url, "GET", f"/api/games/{gid}?tokens={tokens['0']}")[1],
        "its holder": call(url, "GET", f"/api/games/{gid}?tokens={tokens['1']}")[1],
        "a watcher's live stream": events(url, gid),
        "the other seat's live stream": events(url, gid, [tokens["0"]]),
    }
    for who, view in views.items():
        said = view["log"][-1]
        assert "keep one of the two drawn cards" in said and card not in said, (who, said)
        assert not any(card in line for line in view["log"]), (who, view["log"])


def test_an_illegal_buy_of_an_empty_reserve_slot_is_refused_and_the_game_unchanged(url: str) -> None:
    view = new_game(url, agents=["human", "greedy"], seed=4)
    assert BUY_RESERVED not in {m["id"] for m in view["legal"]}  # nothing reserved yet
    for action in (BUY_RESERVED, BUY_RESERVED + 2):
        status, error = move(url, view, action)
        assert status == 400 and "refused" in error["error"] and "illegal" in error["error"], error
        assert get(url, view["game_id"]) == view


def test_a_token_that_is_not_ascii_is_a_wrong_token(url: str) -> None:
    view = new_game(url, agents=["human", "greedy"], seed=2)
    gid = view["game_id"]
    status, seen = call(url, "GET", f"/api/games/{gid}?tokens=%C3%A9,{TOKENS[gid][0]}%C3%A9")
    assert status == 200 and seen["my_seats"] == [] and seen["legal"] == [], seen
    assert events(url, gid, ["%C3%A9"])["my_seats"] == []
    body = {"action": view["legal"][0]["id"], "move": view["move"]}
    for tokens in (["é"], ["\ud800"], [TOKENS[gid][0] + "é"]):
        status, error = call(url, "POST", f"/api/games/{gid}/move", {**body, "tokens": tokens})
        assert status == 403 and "token" in error["error"], (tokens, error)
    assert get(url, gid) == view


@pytest.mark.parametrize("field", ["sims", "seed"])
@pytest.mark.parametrize("value", ["%C2%B2", "%D9%A3", HUGE, "1" + "0" * 19])
def test_an_analysis_number_that_is_not_plain_digits_is_refused(url: str, field: str, value: str) -> None:
    view = new_game(url, agents=["greedy", "greedy"], seed=1)
    status, error = call(url, "GET", f"/api/games/{view['game_id']}/analysis?{field}={value}")
    assert status == 400 and f"'{field}'" in error["error"], error
    rid = opened(url, {"num_players": 2, "seed": 1, "actions": [0]})["replay_id"]
    status, error = call(url, "GET", f"/api/replays/{rid}/analysis?move=0&{field}={value}")
    assert status == 400 and f"'{field}'" in error["error"], error
    status, error = call(url, "GET", f"/api/replays/{rid}/analysis?move={value}")
    assert status == 400 and "'move'" in error["error"], error


def test_a_body_with_a_number_too_long_to_read_is_refused(url: str) -> None:
    status, error = call(
        url, "POST", "/api/games", raw=b'{"agents": ["human", "greedy"], "seed": %s}' % HUGE.encode()
    )
    assert status == 400 and "too long" in error["error"] and len(error["error"]) < 300, error
    view = new_game(url, agents=["human", "greedy"], seed=5)
    raw = b'{"action": %s, "move": 0, "tokens": []}' % HUGE.encode()
    status, error = call(url, "POST", f"/api/games/{view['game_id']}/move", raw=raw)
    assert status == 400 and "too long" in error["error"], error
    assert get(url, view["game_id"]) == view


@pytest.mark.parametrize(
    "agents_field", [5, {"a": 1}, "ab", ["x"], ["a", "b", "c"], [1, 2], [["a"], {"b": 2}]]
)
def test_a_record_whose_agents_are_not_a_name_per_seat_is_refused_naming_the_field(
    url: str, agents_field: Any
) -> None:
    record = {"num_players": 2, "seed": 1, "actions": [0, 5], "agents": agents_field}
    status, error = call(url, "POST", "/api/records", {"record": record})
    assert status == 400 and "'agents'" in error["error"], error
    with pytest.raises(ValueError, match="'agents'"):
        check_record(record)


def test_a_record_with_agents_named_or_none_opens(url: str) -> None:
    assert opened(url, {"num_players": 2, "seed": 1, "actions": [0, 5]})["names"] == ["player_0", "player_1"]
    unnamed = {"num_players": 2, "seed": 1, "actions": [0, 5], "agents": None}
    assert opened(url, unnamed)["names"] == ["player_0", "player_1"]
    named = {"num_players": 2, "seed": 1, "actions": [0, 5], "agents": ["a", "b"]}
    assert opened(url, named)["names"] == ["a", "b"]


def test_a_record_longer_than_the_cap_is_refused_before_it_is_replayed(url: str, monkeypatch: Any) -> None:
    too_long = {"num_players": 2, "seed": 1, "actions": [0] * (MAX_RECORD_ACTIONS + 1)}
    status, error = call(url, "POST", "/api/records", {"record": too_long})
    assert status == 400 and f"{MAX_RECORD_ACTIONS:,}" in error["error"], error
    specs = ["greedy", "random"]
    record = runner.play_game([agents.build(s, seed=i) for i, s in enumerate(specs)], 5, labels=specs)
    n = len(record["actions"])
    monkeypatch.setattr(store_module, "MAX_RECORD_ACTIONS", n)  # the server runs in this process
    assert opened(url, record)["move"] == n
    monkeypatch.setattr(store_module, "MAX_RECORD_ACTIONS", n - 1)
    status, error = call(url, "POST", "/api/records", {"record": record})
    assert status == 400 and f"{n - 1:,}" in error["error"] and "actions" in error["error"], error


def test_the_cap_on_record_actions_is_far_above_a_real_game() -> None:
    assert 10_000 <= MAX_RECORD_ACTIONS <= 100_000
