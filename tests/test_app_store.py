"""The app's games in memory (``training.app.store``): which games are kept, how long a seat may
think, and the command's refusals.

Why: a game is a URL a person may come back to, so a watched game must never
be dropped to make room, and idle games must go on a schedule the docs state;
a server left running must not let a seat hold a core beyond ``--max-ms-per-move``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
from agents import runner
from agents.mcts import MCTSAgent
from splendor_env.env import raw_env
from training.app import checks
from training.app import store as store_module
from training.app.checks import ApiError, Limits
from training.app.seats import CappedAZ, CappedMCTS, build_seat, clock_ms
from training.app.store import IDLE_S, Store
from training.serve import main


def make_store(tmp_path: Path) -> Store:
    return Store(Limits(tmp_path, None, 3000.0))


def start(store: Store) -> str:
    return store.new_game({"agents": ["random", "random"], "seed": 1})["game_id"]


def test_a_watched_game_is_never_dropped_and_the_least_recent_unwatched_goes(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(store_module, "MAX_GAMES", 3)
    store = make_store(tmp_path)
    watched, old, recent = start(store), start(store), start(store)
    store.game(watched).watchers.add(lambda: None)
    store.game(recent)  # a view counts as use
    store.game(watched).last_used = store.game(old).last_used = time.monotonic() - 60
    fourth = start(store)
    for kept in (watched, recent, fourth):
        assert store.game(kept).game_id == kept
    with pytest.raises(ApiError, match="no game"):
        store.game(old)


def test_an_idle_unwatched_game_expires_and_a_full_table_of_watched_games_refuses(
    tmp_path: Path, monkeypatch: Any
) -> None:
    store = make_store(tmp_path)
    idle, busy = start(store), start(store)
    store.game(idle).last_used = time.monotonic() - IDLE_S - 1
    third = start(store)
    with pytest.raises(ApiError, match="no game"):
        store.game(idle)
    assert store.game(busy).game_id == busy
    monkeypatch.setattr(store_module, "MAX_GAMES", 2)
    for game_id in (busy, third):
        store.game(game_id).watchers.add(lambda: None)
    with pytest.raises(ApiError, match="being watched") as info:
        start(store)
    assert info.value.status == 503


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--max-ms-per-move", "0"], "--max-ms-per-move must be > 0"),
        (["--models-dir", "/nonexistent/models"], "is not a folder"),
        (["--port", "x"], "invalid int value"),
    ],
)
def test_the_command_refuses_bad_options(argv: list[str], words: str, capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and words in capsys.readouterr().err


def test_two_watchers_advancing_at_once_play_one_move(tmp_path: Path) -> None:
    import threading

    store = make_store(tmp_path)
    view = store.new_game({"agents": ["greedy", "random"], "seed": 3})
    answers: list[Any] = []

    def advance() -> None:
        try:
            answers.append(store.advance(view["game_id"], {"move": view["move"]})["move"])
        except ApiError as exc:
            answers.append(exc.status)

    threads = [threading.Thread(target=advance) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(answers, key=str).count(1) == 1 and all(a in (1, 409) for a in answers), answers
    assert store.get_game(view["game_id"], [])["move"] == 1


def test_a_search_seat_is_held_to_the_cap_even_when_the_estimate_is_wrong(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A slow machine, or a wrong speed estimate: the estimate admits a search far beyond the cap
    (here 10,000 simulations, seconds a move), and the server's clock still ends each move near it."""
    monkeypatch.setitem(checks.SIMS_PER_MS, "mcts", 1000.0)  # the estimate is wrong by far
    cap = 50.0
    store = Store(Limits(tmp_path, None, cap))
    game = store.game(store.new_game({"agents": ["mcts:sims=10000", "random"], "seed": 4})["game_id"])
    assert isinstance(game.seat_agents[0], CappedMCTS) and game.view()["clock_ms"] == [cap, None]
    took = []
    for _ in range(12):
        seat = game.seat_on_move()
        start = time.perf_counter()
        game.agent_move()
        if seat == 0:
            took.append(1000 * (time.perf_counter() - start))
    assert len(took) >= 5 and max(took[1:]) < 10 * cap, took  # the first move may load the search
    # A spec beyond the cap by the estimate is still refused, saying which cap.
    monkeypatch.setitem(checks.SIMS_PER_MS, "mcts", 0.3)
    for spec, words in [
        ("mcts:sims=16", "over this server's cap of 15 for mcts"),
        ("mcts:ms=51", "--max-ms-per-move 50"),
    ]:
        with pytest.raises(ApiError, match="seat 1") as info:
            store.new_game({"agents": ["random", spec]})
        assert words in str(info.value)
    store.new_game({"agents": ["random", "mcts:sims=15"]})
    store.new_game({"agents": ["random", "mcts:ms=50"]})


def test_a_capped_search_plays_the_moves_of_the_search_its_spec_names(tmp_path: Path) -> None:
    """Under the cap the clock changes nothing: the same moves as plain mcts with the same seed."""

    def moves(agent: Any) -> list[int]:
        env = raw_env(num_players=2, modules=("cities",))
        env.reset(seed=6)
        rng = np.random.default_rng(0)
        played = []
        for _ in range(20):
            played.append(runner.decide(agent, env, rng))
            env.step(played[-1])
        return played

    assert moves(build_seat("mcts:sims=64", 3, 60_000.0)) == moves(agents.build("mcts:sims=64", seed=3))
    plain = build_seat("mcts:ms=20", 3, 60_000.0)
    assert type(plain) is MCTSAgent and clock_ms(plain) == 20.0  # a seat given ms runs as it is
    assert clock_ms(build_seat("lookahead", 3, 50.0)) is None


def test_an_az_seat_is_held_to_the_cap(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    agent = build_seat("az:sims=100000", 5, 50.0)
    assert isinstance(agent, CappedAZ) and clock_ms(agent) == 50.0
    env = raw_env(num_players=2)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    took = []
    for _ in range(4):
        start = time.perf_counter()
        env.step(runner.decide(agent, env, rng))
        took.append(1000 * (time.perf_counter() - start))
    assert max(took[1:]) < 500, took  # the first move loads the network and the search
