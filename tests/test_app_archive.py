"""The app's games database (``training.app.archive``) under the store: what is saved, when, and what is refused.

Why apart from the restart test (``tests/test_app_restart.py``, a real process killed): these
check the rules one by one, in process and fast: a move is saved before it is played (and not
played if it cannot be saved), each move is committed on its own, a game read back is the same
game (a game continued from a record included), a gap in the saved moves ends the game there,
and a file that is not this server's database is refused with one line naming it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import agents
from agents import runner
from tests.helpers.app_archive import LIMITS, corrupted_archive, store_in
from training.app.archive import FILE_NAME, Archive, ArchiveError
from training.app.checks import ApiError
from training.app.store import Store


def tokens_of(view: dict[str, Any]) -> list[str]:
    return list(view.get("tokens", {}).values())


def play_first(store: Store, game_id: str, tokens: list[str], times: int) -> dict[str, Any]:
    view = store.get_game(game_id, tokens)
    for _ in range(times):
        view = store.move(game_id, {"action": view["legal"][0]["id"], "move": view["move"], "tokens": tokens})
        view = store.get_game(game_id, tokens)
    return view


def test_a_game_read_back_is_the_same_game_and_goes_on(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    view = store.new_game({"agents": ["human", "greedy"], "modules": ["orient"], "seed": 7})
    game_id, tokens = view["game_id"], tokens_of(view)
    before = play_first(store, game_id, tokens, 4)
    with sqlite3.connect(tmp_path / FILE_NAME) as other:  # each move committed: another reader sees it
        assert other.execute("SELECT moves FROM games").fetchone()[0] == before["move"]
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.archive.close()
    again = store_in(tmp_path)  # a new server on the same folder
    after = again.get_game(game_id, tokens)
    for key in ("move", "board", "legal", "log", "agents", "modules", "my_seats"):
        assert after[key] == before[key], key
    assert play_first(again, game_id, tokens, 1)["move"] > before["move"]
    with pytest.raises(ApiError, match="no game 'abcdef'"):
        again.get_game("abcdef", [])


def test_a_game_continued_from_a_record_is_read_back_at_the_same_position(tmp_path: Path) -> None:
    specs = ["greedy", "random", "greedy"]
    record = runner.play_game(
        [agents.build(s, seed=i) for i, s in enumerate(specs)], 11, labels=specs, modules=("trading_posts",)
    )
    store = store_in(tmp_path)
    replay_id = store.open_record({"record": record})["replay_id"]
    view = store.continue_from(replay_id, {"move": 20, "agents": ["human", "human", "human"]})
    game_id, tokens = view["game_id"], tokens_of(view)
    before = play_first(store, game_id, tokens, 5)  # played on the env reset from the position's snapshot
    store.archive.close()
    after = store_in(tmp_path).get_game(game_id, tokens)  # replayed from the deal: the same position
    assert after["move"] == before["move"] == 25 and after["board"] == before["board"]
    assert after["legal"] == before["legal"]


def test_a_move_that_cannot_be_saved_is_not_played(tmp_path: Path, monkeypatch: Any) -> None:
    store = store_in(tmp_path)
    view = store.new_game({"agents": ["human", "human"], "seed": 2})
    game_id, tokens = view["game_id"], tokens_of(view)

    def full(*args: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store.archive, "move", full)
    with pytest.raises(sqlite3.OperationalError):
        store.move(game_id, {"action": view["legal"][0]["id"], "move": 0, "tokens": tokens})
    assert store.get_game(game_id, tokens)["move"] == 0  # the screen and the file agree
    monkeypatch.undo()
    with pytest.raises(ApiError, match="refused"):  # an illegal move is not saved either
        store.move(game_id, {"action": 10_000, "move": 0, "tokens": tokens})
    assert store.archive.load(game_id).actions == []  # type: ignore[union-attr]


def test_saved_moves_after_a_gap_are_left_out_and_an_unsaved_result_is_saved(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    view = store.new_game({"agents": ["human", "human"], "seed": 3})
    game_id, tokens = view["game_id"], tokens_of(view)
    play_first(store, game_id, tokens, 4)
    store.archive.close()
    with sqlite3.connect(tmp_path / FILE_NAME) as conn:
        conn.execute("DELETE FROM moves WHERE n = 2")
    archive = Archive(tmp_path)
    assert archive.load(game_id).actions == archive.load(game_id).actions[:2]  # type: ignore[union-attr]
    assert len(archive.load(game_id).actions) == 2  # type: ignore[union-attr]
    archive.close()
    # a finished game whose result was never written (killed between its last move and that)
    finished = Store(LIMITS, archive=Archive(tmp_path))
    done = finished.new_game({"agents": ["greedy", "random"], "seed": 4})["game_id"]
    game = finished.game(done)
    while not game.over():
        game.agent_move()
    finished.archive.close()
    with sqlite3.connect(tmp_path / FILE_NAME) as conn:
        conn.execute("UPDATE games SET result = NULL WHERE game_id = ?", (done,))
    again = store_in(tmp_path)
    assert again.get_game(done, [])["over"]
    listed = {g["game_id"]: g for g in again.lobby()["games"]}
    assert listed[done]["over"] and listed[done]["result"]["turns"] > 0
    assert again.saved_record(done)["actions"] == game.actions


@pytest.mark.parametrize("kind", ["text", "foreign", "corrupted", "newer"])
def test_a_file_that_is_not_this_servers_database_is_refused_naming_it(tmp_path: Path, kind: str) -> None:
    path = tmp_path / FILE_NAME
    if kind == "text":
        path.write_text("not a database\n" * 100)
    elif kind == "foreign":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE notes (text TEXT)")
    elif kind == "corrupted":
        corrupted_archive(tmp_path)
    else:
        Archive(tmp_path).close()
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA user_version = 99")
    original = path.read_bytes()
    with pytest.raises(ArchiveError) as refused:
        Archive(tmp_path)
    message = str(refused.value)
    assert str(path) in message and "\n" not in message and len(message) < 400, message
    assert path.read_bytes() == original  # nothing written to a file that is not ours
    elsewhere = Archive(tmp_path / "elsewhere")  # another folder is fine
    assert elsewhere.path.endswith(FILE_NAME)
    elsewhere.close()


def test_one_server_a_folder(tmp_path: Path) -> None:
    first = Archive(tmp_path)
    with pytest.raises(ArchiveError, match="another server"):
        Archive(tmp_path)
    first.close()
    Archive(tmp_path).close()  # free again once the first has gone (a killed one's lock goes with it)
