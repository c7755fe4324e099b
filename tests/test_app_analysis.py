"""The table's analysis view (``training.app.analysis``): its JSON, its budget, what it may see.

Why these: the analysis is a search the server runs for any page that asks, so what matters is that it
answers within the server's cap for every game a network plays, that it names moves as the table does,
that its errors are clear, and above all that a page never learns through it a card it cannot see (two
positions that differ only in such a card give the same answer).
"""

from __future__ import annotations

from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
from agents import runner
from splendor_env import rules
from splendor_env import state as st
from splendor_env.action_ids import num_actions
from splendor_env.actions import BUY_RESERVED, RESERVE_DECK, TAKE3, describe
from splendor_env.deal import new_state
from splendor_env.records import write_records
from tests.helpers.app_server import app_server, call
from training.app.analysis import MAX_SIMS, Analyst, move_words, win_chances
from training.app.checks import ApiError

ALL_MODULES = ("cities", "trading_posts", "orient", "strongholds")
#: The server's cap in these tests (ms): 4,000 simulations take 0.2-0.5 s on the 2-core machine, so an
#: answer is either the whole search or one cut at 80% of the cap, with room for a busy machine's delays.
CAP_MS = 1000.0
#: A cap no search of :data:`MAX_SIMS` simulations fits in: the search must be cut short.
TINY_CAP_MS = 30.0


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with app_server(records_dir=tmp_path_factory.mktemp("records"), max_ms_per_move=CAP_MS) as base:
        yield base


@pytest.fixture(scope="module")
def analyst() -> Analyst:
    return Analyst(60_000.0)  # a cap no test search reaches: the answers are the seed's alone


def check_shape(answer: dict[str, Any], num_players: int) -> None:
    assert answer["num_players"] == num_players
    assert len(answer["win_chance"]) == len(answer["values"]) == num_players
    assert abs(sum(answer["win_chance"]) - 1.0) < 1e-9 and all(0 <= w <= 1 for w in answer["win_chance"])
    assert abs(sum(answer["values"])) < 1e-6  # per-seat values sum to zero
    moves = answer["moves"]
    assert 1 <= len(moves) <= 3 and all(isinstance(m["text"], str) and m["text"] for m in moves)
    assert [m["visits"] for m in moves] == sorted((m["visits"] for m in moves), reverse=True)
    assert sum(m["share"] for m in moves) <= 1.0 + 1e-9 and all(0 < m["share"] <= 1 for m in moves)
    assert answer["sims"] >= sum(m["visits"] for m in moves)


def hidden_pair(on_move: int) -> tuple[np.ndarray, np.ndarray]:
    """Two 2-player positions, seat ``on_move`` to move, that differ only in seat 1's blind reserve (swapped
    with the bottom card of its deck): what seat 0 and a spectator cannot see."""
    s = new_state(2, 5)
    assert rules.step_checked(s, RESERVE_DECK + 0) == 0  # seat 0 reserves a level-1 card blind
    assert rules.step_checked(s, RESERVE_DECK + 1) == 0  # seat 1 reserves a level-2 card blind
    if on_move == 1:
        assert rules.step_checked(s, TAKE3) == 0
    assert int(s[st.CURRENT]) == on_move
    other = s.copy()
    slot = st.player_offset(1) + st.P_RESERVED
    bottom = st.DECK + 1 * st.DECK_CAPACITY
    other[slot], other[bottom] = s[bottom], s[slot]
    assert other[slot] != s[slot]
    return s, other


def same(a: dict[str, Any], b: dict[str, Any]) -> None:
    drop = ("elapsed_ms",)
    assert {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


# -- what the viewer may see ------------------------------------------------------
@pytest.mark.parametrize("on_move", [0, 1])
def test_an_opponents_hidden_reserve_does_not_change_the_analysis(analyst: Analyst, on_move: int) -> None:
    """Seat 0's analysis of two positions that differ only in seat 1's blind reserve is the same, whether
    seat 0 or seat 1 (who knows that card, and whose search would use it) is on move; so is a spectator's."""
    s, other = hidden_pair(on_move)
    for viewer in (0, None):
        first = analyst.analyse(s, viewer, sims=120, seed=7)
        same(first, analyst.analyse(other, viewer, sims=120, seed=7))
        check_shape(first, 2)
        assert first["viewer"] == viewer and first["seat_on_move"] == on_move
        assert first["samples"] == (1 if viewer == on_move else 4)  # draws of a card the viewer cannot see


def test_the_seat_that_holds_the_card_may_use_it(analyst: Analyst) -> None:
    """Control: seat 1's own analysis of the same pair is free to differ (its card is its information), and
    a repeated analysis of one position with one seed is the same (the comparison above means something)."""
    s, other = hidden_pair(1)
    same(analyst.analyse(s, 1, sims=120, seed=7), analyst.analyse(s, 1, sims=120, seed=7))
    assert analyst.analyse(s, 1, sims=120, seed=7) != analyst.analyse(other, 1, sims=120, seed=7)


def test_a_card_in_another_seats_hand_is_never_named() -> None:
    s, _ = hidden_pair(1)
    card_words = describe(BUY_RESERVED, s)  # names seat 1's blind card
    assert move_words(BUY_RESERVED, s, own_move=True) == card_words
    hidden = move_words(BUY_RESERVED, s, own_move=False)
    assert hidden.startswith(describe(BUY_RESERVED)) and card_words not in hidden
    assert move_words(TAKE3, s, own_move=False) == describe(TAKE3, s)


def test_values_map_to_win_chances() -> None:
    assert win_chances(np.array([0.0, 0.0]), 2) == [0.5, 0.5]
    assert win_chances(np.array([1.0, -1.0]), 2) == [1.0, 0.0]
    three = win_chances(np.array([1.0, -0.5, -0.5]), 3)  # a sole winner's and the losers' values
    assert three == pytest.approx([1.0, 0.0, 0.0])
    assert sum(win_chances(np.array([0.3, -0.2, 0.1, -0.2]), 4)) == pytest.approx(1.0)


# -- the budget ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "num_players,modules", [(2, ()), (3, ()), (4, ()), (2, ALL_MODULES)], ids=["2p", "3p", "4p", "2p-modules"]
)
def test_an_analysis_answers_within_the_cap(num_players: int, modules: tuple[str, ...]) -> None:
    """Asked for the most simulations, an analysis answers within the cap; under a cap they cannot fit in,
    the search is cut short (the time a busy machine adds is the benchmark's to measure, not a test's)."""
    capped, tiny = Analyst(CAP_MS), Analyst(TINY_CAP_MS)
    s = new_state(num_players, 2, modules=modules)
    rng = np.random.default_rng(0)
    for _ in range(6):  # a few moves in
        mask = np.zeros(num_actions(int(s[st.MODULES])), np.int8)
        rules.legal_mask(s, mask)
        assert rules.step_checked(s, int(rng.choice(np.flatnonzero(mask)))) == 0
    capped.analyse(s, 0, sims=16)  # loads the network (not counted) and compiles
    answer = capped.analyse(s, 0, sims=MAX_SIMS)
    check_shape(answer, num_players)
    assert answer["elapsed_ms"] <= CAP_MS and answer["max_ms"] == CAP_MS
    tiny.analyse(s, 0, sims=16)
    cut = tiny.analyse(s, 0, sims=MAX_SIMS)
    check_shape(cut, num_players)
    assert cut["sims"] < MAX_SIMS and cut["max_ms"] == TINY_CAP_MS


def test_a_second_analysis_waits_its_turn_then_is_refused_clearly() -> None:
    busy = Analyst(100.0)
    busy.lock.acquire()
    try:
        with pytest.raises(ApiError, match="another analysis") as caught:
            busy.analyse(new_state(2, 0), None, sims=8)
        assert caught.value.status == HTTPStatus.SERVICE_UNAVAILABLE
    finally:
        busy.lock.release()


# -- over HTTP --------------------------------------------------------------------------
def new_game(url: str, **body: Any) -> dict[str, Any]:
    status, view = call(url, "POST", "/api/games", body)
    assert status == 201, view
    return view


def test_a_seat_gets_its_own_analysis_and_a_watcher_the_public_one(url: str) -> None:
    view = new_game(url, agents=["human", "greedy"], seed=3)
    token = view["tokens"]["0"]
    status, mine = call(url, "GET", f"/api/games/{view['game_id']}/analysis?tokens={token}")
    assert status == 200, mine
    check_shape(mine, 2)
    assert mine["game_id"] == view["game_id"] and mine["move"] == view["move"] == 0
    assert mine["viewer"] == 0 and mine["seat_on_move"] == 0 and isinstance(mine["network"], str)
    legal_words = {m["text"] for m in view["legal"]}
    assert {m["text"] for m in mine["moves"]} <= legal_words  # named as the table names the moves
    assert {m["id"] for m in mine["moves"]} <= {m["id"] for m in view["legal"]}
    assert mine["elapsed_ms"] <= CAP_MS and mine["max_ms"] == CAP_MS
    status, public = call(url, "GET", f"/api/games/{view['game_id']}/analysis?tokens=not-a-token&sims=50")
    assert status == 200 and public["viewer"] is None and public["sims"] <= 50


def test_the_most_simulations_answer_within_the_servers_cap(url: str) -> None:
    view = new_game(url, agents=["greedy", "greedy", "greedy"], seed=4)
    status, answer = call(url, "GET", f"/api/games/{view['game_id']}/analysis?sims={MAX_SIMS}")
    assert status == 200, answer
    check_shape(answer, 3)
    assert answer["elapsed_ms"] <= CAP_MS and answer["max_ms"] == CAP_MS


def a_record(tmp_path: Path) -> Path:
    specs = ["greedy", "random"]
    rec = runner.play_game([agents.build(s, seed=i) for i, s in enumerate(specs)], 5, labels=specs)
    path = tmp_path / "games.jsonl"
    write_records(path, [rec])
    return path


def test_a_replay_position_is_analysed_from_public_information(url: str, tmp_path: Path) -> None:
    status, info = call(url, "POST", "/api/records", {"text": a_record(tmp_path).read_text()})
    assert status == 200, info
    rid, last = info["replay_id"], len(info["moves"])
    status, answer = call(url, "GET", f"/api/replays/{rid}/analysis?move=5&sims=64")
    assert status == 200, answer
    check_shape(answer, 2)
    assert answer["replay_id"] == rid and answer["move"] == 5 and answer["viewer"] is None
    status, error = call(url, "GET", f"/api/replays/{rid}/analysis?move={last}")
    assert status == 409 and "over" in error["error"]
    status, error = call(url, "GET", f"/api/replays/{rid}/analysis?move={last + 1}")
    assert status == 400 and "'move'" in error["error"]


@pytest.mark.parametrize(
    "query,status,words",
    [
        ("sims=0", 400, "'sims'"),
        (f"sims={MAX_SIMS + 1}", 400, "'sims'"),
        ("sims=many", 400, "'sims'"),
        ("seed=-1", 400, "'seed'"),
    ],
)
def test_bad_requests_are_refused_clearly(url: str, query: str, status: int, words: str) -> None:
    view = new_game(url, agents=["greedy", "greedy"], seed=1)
    got, error = call(url, "GET", f"/api/games/{view['game_id']}/analysis?{query}")
    assert got == status and words in error["error"], error


def test_unknown_games_and_games_without_a_network_are_refused(url: str) -> None:
    status, error = call(url, "GET", "/api/games/abcdef123456/analysis")
    assert status == 404 and "no game" in error["error"]
    status, error = call(url, "GET", "/api/replays/abcdef123456/analysis?move=0")
    assert status == 404
    view = new_game(url, agents=["greedy", "greedy"], modules=["cities"], seed=1)
    status, error = call(url, "GET", f"/api/games/{view['game_id']}/analysis")
    assert status == 409 and "no analysis for this game" in error["error"] and "network" in error["error"]


def test_the_analysis_benchmark_times_every_kind_and_scores_the_bar(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``python -m training.speed.analysis``: its figures come from a script, not from a timed test."""
    from training.common.cli import CliError
    from training.speed import analysis as speed_analysis

    assert speed_analysis.main(["--games", "2", "--positions", "2", "--sims", "32"]) == 0
    out = capsys.readouterr().out
    for kind in speed_analysis.KINDS:
        assert any(line.startswith(f"{kind}: 2 answers at sims=32: median") for line in out.splitlines()), out
    assert "slowest answer:" in out and "winner's bar over the last 10 decisions of" in out
    with pytest.raises(CliError, match="--sims in 1..4000"):
        speed_analysis.main(["--sims", "0"])
