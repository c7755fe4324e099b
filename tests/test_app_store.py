"""The app's games in memory (``training.app.store``): which games are kept, and the command's refusals.

Why: a game is a URL a person may come back to, so a watched game must never
be dropped to make room, and idle games must go on a schedule the docs state.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from training.app import store as store_module
from training.app.checks import ApiError, Limits
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
