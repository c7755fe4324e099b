"""The app's games in memory (``training.app.store``): which games are kept, how long a seat may
think, and the command's refusals.

Why: a game is a URL a person may come back to, so a watched game must never
leave memory to make room (one that left is read back from the archive), and idle games
must go on a schedule the docs state;
a server left running must not let a seat hold a core beyond ``--max-ms-per-move``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
from agents import runner
from agents.players.mcts import MCTSAgent
from splendor_env.env import raw_env
from splendor_env.records import replay
from training.app import checks
from training.app import store as store_module
from training.app.checks import ApiError, Limits
from training.app.seats import build_seat, capped_spec, clock_ms
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
    assert set(store.in_memory()) == {watched, recent, fourth}
    assert store.game(old).game_id == old  # read back from the archive when asked for again


def test_an_idle_unwatched_game_expires_and_a_full_table_of_watched_games_refuses(
    tmp_path: Path, monkeypatch: Any
) -> None:
    store = make_store(tmp_path)
    idle, busy = start(store), start(store)
    store.game(idle).last_used = time.monotonic() - IDLE_S - 1
    third = start(store)
    assert idle not in store.in_memory() and busy in store.in_memory()
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


def wait_for(test: Any, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not test():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def pacers(game_id: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"watch-{game_id}" and t.is_alive()]


def test_a_watched_game_is_played_by_one_thread_however_many_watch(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    game = store.game(start(store))
    store.pace(game.game_id, {"delay_ms": 0})
    heard: list[int] = []
    first, second = (lambda: heard.append(1)), (lambda: heard.append(2))
    game.watch(first)
    game.watch(second)
    assert len(pacers(game.game_id)) == 1  # two pages, one pace
    wait_for(game.over)
    wait_for(lambda: game.pacer is None)
    assert not pacers(game.game_id) and game.thinking is None
    moves = game.move
    time.sleep(0.2)  # no move after the end
    assert game.move == moves == len(game.actions) and 1 in heard and 2 in heard
    assert replay(game.record())[0]


def test_an_unwatched_or_paused_game_stands_still(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    game = store.game(start(store))
    store.pace(game.game_id, {"delay_ms": 20, "paused": True})
    time.sleep(0.3)
    assert game.move == 0 and game.pacer is None  # nobody watches: nothing plays it
    watcher = lambda: None  # noqa: E731
    game.watch(watcher)
    time.sleep(0.3)
    assert game.move == 0  # watched, but paused
    store.pace(game.game_id, {"paused": False})
    wait_for(lambda: game.move >= 5)
    store.pace(game.game_id, {"paused": True})
    time.sleep(0.1)  # a move under way ends
    paused_at = game.move
    time.sleep(0.3)
    assert game.move == paused_at and not game.over()
    store.pace(game.game_id, {"paused": False})
    wait_for(lambda: game.move > paused_at + 3)
    game.unwatch(watcher)
    wait_for(lambda: game.pacer is None)
    left_at = game.move
    time.sleep(0.3)
    assert game.move == left_at and not game.over()


def test_a_failing_agent_pauses_a_watched_game_and_says_why(tmp_path: Path) -> None:
    class Broken:
        def act(self, *args: Any, **kwargs: Any) -> int:
            raise RuntimeError("no move today")

    store = make_store(tmp_path)
    game = store.game(start(store))
    game.seat_agents[0] = Broken()
    store.pace(game.game_id, {"delay_ms": 0})
    game.watch(lambda: None)
    wait_for(lambda: game.paused)
    assert game.move == 0 and game.thinking is None
    assert game.log[-1] == "player_0 (random) failed: RuntimeError: no move today"


def test_the_pace_waits_between_moves(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    game = store.game(start(store))
    store.pace(game.game_id, {"delay_ms": 200})
    game.watch(lambda: None)
    game.watch(lambda: None)
    time.sleep(1.0)
    assert 2 <= game.move <= 6, game.move  # about one move each 200 ms, with two watchers too


def test_only_a_game_without_people_takes_a_pace(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    view = store.new_game({"agents": ["human", "greedy"], "seed": 1})
    game = store.game(view["game_id"])
    game.watch(lambda: None)
    assert game.pacer is None and view["pace"] is None
    with pytest.raises(ApiError, match="a person plays this game") as info:
        store.pace(game.game_id, {"delay_ms": 0})
    assert info.value.status == 409
    agents_only = start(store)
    for body, words in [
        ({"delay_ms": -1}, "'delay_ms' must be in 0..10000"),
        ({"delay_ms": 10_001}, "'delay_ms' must be in 0..10000"),
        ({"delay_ms": "fast"}, "'delay_ms' must be an integer"),
        ({"delay_ms": 1.5}, "'delay_ms' must be an integer"),
        ({"paused": "yes"}, "'paused' must be true or false"),
        ({"speed": 3}, "unknown key(s) ['speed']"),
    ]:
        with pytest.raises(ApiError) as info:
            store.pace(agents_only, body)
        assert words in str(info.value) and info.value.status == 400
    assert store.pace(agents_only, {"delay_ms": 10_000})["pace"] == {"delay_ms": 10_000, "paused": False}


def test_a_search_seat_is_held_to_the_cap_even_when_the_estimate_is_wrong(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A slow machine, or a wrong speed estimate: the estimate admits a search far beyond the cap
    (here 10,000 simulations, seconds a move), and the server's clock still ends each move near it."""
    monkeypatch.setitem(checks.SIMS_PER_MS, "mcts", 1000.0)  # the estimate is wrong by far
    cap = 50.0
    store = Store(Limits(tmp_path, None, cap))
    game = store.game(store.new_game({"agents": ["mcts:sims=10000", "random"], "seed": 4})["game_id"])
    assert game.seat_agents[0].params["max_ms"] == cap and game.view()["clock_ms"] == [cap, None]
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


@pytest.mark.parametrize(
    ("spec", "capped"),
    [
        ("mcts", "mcts:max_ms=50"),
        ("mcts:sims=64,c=2", "mcts:sims=64,c=2,max_ms=50"),
        ("az:az_2p,sims=100", "az:az_2p,sims=100,max_ms=50"),
        ("az:max_ms=20", "az:max_ms=20"),  # a lower cap of its own is kept
        ("az:max_ms=900", "az:max_ms=50"),
        ("mcts:ms=40", "mcts:ms=40"),  # a clock already
        ("greedy", "greedy"),
        ("ppo:ppo_2p", "ppo:ppo_2p"),
    ],
)
def test_every_search_seat_gets_the_cap_on_its_simulations(spec: str, capped: str) -> None:
    assert capped_spec(spec, 50.0) == capped


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
    from agents.players.az import AZAgent

    agent = build_seat("az:sims=100000", 5, 50.0)
    assert isinstance(agent, AZAgent) and clock_ms(agent) == 50.0
    env = raw_env(num_players=2)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    took = []
    for _ in range(4):
        start = time.perf_counter()
        env.step(runner.decide(agent, env, rng))
        took.append(1000 * (time.perf_counter() - start))
    assert max(took[1:]) < 500, took  # the first move loads the network and the search
