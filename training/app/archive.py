"""The app's games on disk: one SQLite file, written as each game is set up and as each move is made.

Why: a game is its setup (players, modules, turn cap, seed, the recorded moves it was continued
from) and its list of action ids, which the engine replays exactly (:mod:`splendor_env.records`),
so that is all that is kept; a restarted server, even one killed without warning, replays a game
the first time it is asked for and goes on at the same address with the same seat links. Each
move is one transaction in write-ahead-log mode (``synchronous=NORMAL``: a killed server loses
nothing; a power cut may lose the last moves). :mod:`training.app.store` decides when a game is
read back; this module only reads and writes rows.

One server holds a data folder at a time (a lock file beside the database); a file that is not
this server's database (another program's SQLite file, a corrupted file, text) is refused at
start-up with one line naming it. ``folder=None`` keeps the database in memory (tests, scripts).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from splendor_env import records

if TYPE_CHECKING:
    from training.app.game import Game

try:
    import fcntl
except ImportError:  # not POSIX: one server per folder is then the user's to keep
    fcntl = None  # type: ignore[assignment]

#: The database's file name inside ``--data-dir``.
FILE_NAME = "games.sqlite3"
#: SQLite's ``application_id`` of this server's databases ("SplT"): another program's file is refused.
APPLICATION_ID = 0x53706C54
#: The schema this code reads and writes (SQLite's ``user_version``).
SCHEMA_VERSION = 1
#: Games listed in the lobby, the most recently played first.
LISTED = 200

SCHEMA = """
CREATE TABLE games (
    game_id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    num_players INTEGER NOT NULL,
    modules TEXT NOT NULL,
    max_turns INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    agents TEXT NOT NULL,
    tokens TEXT NOT NULL,
    prefix TEXT NOT NULL,
    delay_ms INTEGER NOT NULL,
    paused INTEGER NOT NULL,
    moves INTEGER NOT NULL,
    result TEXT
);
CREATE TABLE moves (
    game_id TEXT NOT NULL REFERENCES games (game_id),
    n INTEGER NOT NULL,
    action INTEGER NOT NULL,
    PRIMARY KEY (game_id, n)
) WITHOUT ROWID;
CREATE INDEX games_by_update ON games (updated);
"""


class ArchiveError(Exception):
    """A data folder or database file the server cannot use: one line, naming the file."""


@dataclass(frozen=True)
class SavedGame:
    """A game as saved: its setup and its moves (those after ``prefix``), ready to replay."""

    game_id: str
    num_players: int
    modules: tuple[str, ...]
    max_turns: int
    seed: int
    agents: list[str]
    tokens: dict[int, str]
    prefix: list[int]
    actions: list[int]
    delay_ms: int
    paused: bool
    result: dict[str, Any] | None


def _connect(path: str) -> sqlite3.Connection:
    """The database at ``path``, created if new, refused unless it is this server's and sound."""
    conn = sqlite3.connect(path, check_same_thread=False, timeout=5.0)
    try:
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if tables == 0 and app_id == 0:  # a new (or empty) file: this server's from now on
            conn.executescript(
                f"BEGIN; {SCHEMA} PRAGMA application_id = {APPLICATION_ID}; "
                f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            )
        if app_id not in (0, APPLICATION_ID) or (app_id == 0 and tables):
            raise ArchiveError(
                f"{path} is another program's SQLite database, not this server's games: give another --data-dir"
            )
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise ArchiveError(f"{path} holds games of schema {version}; this server reads {SCHEMA_VERSION}")
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise ArchiveError(f"{path} is corrupted ({' '.join(str(check).split())[:160]}...)")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    except (sqlite3.DatabaseError, ArchiveError) as exc:
        conn.close()
        if isinstance(exc, ArchiveError):
            raise
        raise ArchiveError(f"{path} is not a game database this server can use: {exc}") from None
    return conn


def _hold(lock_path: Path) -> Any:
    """An exclusive lock on ``lock_path`` for this process's life (the OS drops it when it dies)."""
    handle = open(lock_path, "a+")  # noqa: SIM115 (held until close)
    if fcntl is not None:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise ArchiveError(f"{lock_path}: another server is using this --data-dir") from None
    return handle


class Archive:
    """The games database (:data:`FILE_NAME` in ``folder``; in memory without one), safe across threads."""

    def __init__(self, folder: Path | None) -> None:
        self._lock = threading.Lock()
        self._held: Any = None
        if folder is None:
            self.path = ":memory:"
        else:
            self.path = str(folder / FILE_NAME)
            try:
                folder.mkdir(parents=True, exist_ok=True)
                self._held = _hold(folder / f"{FILE_NAME}.lock")
            except OSError as exc:
                raise ArchiveError(f"{folder}: cannot keep games there: {exc.strerror or exc}") from None
        try:
            self._conn = _connect(self.path)
        except ArchiveError:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            if getattr(self, "_conn", None) is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]
            if self._held is not None:
                self._held.close()
                self._held = None

    def _write(self, *statements: tuple[str, tuple[Any, ...]]) -> None:
        """Run ``statements`` as one transaction."""
        with self._lock, self._conn:
            for sql, args in statements:
                self._conn.execute(sql, args)

    # -- writing ------------------------------------------------------------------
    def add(self, game: Game) -> None:
        """Save a new game's setup (and any moves it already has)."""
        now = time.time()
        config = game.env.config
        row = (
            game.game_id,
            now,
            now,
            config.num_players,
            json.dumps(list(config.modules)),
            config.max_turns,
            game.seed,
            json.dumps(game.specs),
            json.dumps({str(p): t for p, t in game.tokens.items()}),
            json.dumps(game.prefix),
            game.delay_ms,
            int(game.paused),
            game.move,
        )
        moves = [(game.game_id, n, a) for n, a in enumerate(game.actions)]
        with self._lock, self._conn:
            self._conn.execute(f"INSERT INTO games VALUES ({', '.join('?' * len(row))}, NULL)", row)
            self._conn.executemany("INSERT INTO moves VALUES (?, ?, ?)", moves)

    def move(self, game: Game, action: int) -> None:
        """Save the move ``action`` that ``game`` is about to play (before the engine plays it)."""
        self._write(
            ("INSERT INTO moves VALUES (?, ?, ?)", (game.game_id, len(game.actions), int(action))),
            (
                "UPDATE games SET moves = ?, updated = ? WHERE game_id = ?",
                (game.move + 1, time.time(), game.game_id),
            ),
        )

    def ended(self, game: Game) -> None:
        """Save a finished game's result (its row then lists it as finished)."""
        result = json.dumps(records.game_result(game.env.game_state))
        self._write(("UPDATE games SET result = ? WHERE game_id = ?", (result, game.game_id)))

    def paced(self, game: Game) -> None:
        """Save the pace of a game only agents play."""
        self._write(
            (
                "UPDATE games SET delay_ms = ?, paused = ? WHERE game_id = ?",
                (game.delay_ms, int(game.paused), game.game_id),
            )
        )

    # -- reading ------------------------------------------------------------------
    def load(self, game_id: str) -> SavedGame | None:
        """The game saved as ``game_id``, or ``None``; its moves up to the first one missing."""
        with self._lock:
            row = self._conn.execute(
                "SELECT num_players, modules, max_turns, seed, agents, tokens, prefix, delay_ms, paused, result "
                "FROM games WHERE game_id = ?",
                (game_id,),
            ).fetchone()
            if row is None:
                return None
            found = self._conn.execute("SELECT n, action FROM moves WHERE game_id = ? ORDER BY n", (game_id,))
            actions = []
            for n, action in found:
                if n != len(actions):
                    break
                actions.append(int(action))
        players, modules, max_turns, seed, agents, tokens, prefix, delay_ms, paused, result = row
        return SavedGame(
            game_id,
            int(players),
            tuple(json.loads(modules)),
            int(max_turns),
            int(seed),
            json.loads(agents),
            {int(p): t for p, t in json.loads(tokens).items()},
            [int(a) for a in json.loads(prefix)],
            actions,
            int(delay_ms),
            bool(paused),
            None if result is None else json.loads(result),
        )

    def listing(self, limit: int = LISTED) -> list[dict[str, Any]]:
        """The most recently played games, newest first: who plays, how far, the result once over."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT game_id, created, updated, num_players, modules, agents, moves, result "
                "FROM games ORDER BY updated DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            {
                "game_id": game_id,
                "created": created,
                "updated": updated,
                "num_players": players,
                "modules": json.loads(modules),
                "agents": json.loads(agents),
                "move": moves,
                "over": result is not None,
                "result": None if result is None else json.loads(result),
            }
            for game_id, created, updated, players, modules, agents, moves, result in rows
        ]

    def finished_records(self) -> Iterator[dict[str, Any]]:
        """The record of every finished game (:func:`splendor_env.records.game_record`'s fields), oldest first."""
        with self._lock:
            ids = [
                r[0]
                for r in self._conn.execute(
                    "SELECT game_id FROM games WHERE result IS NOT NULL ORDER BY created"
                )
            ]
        for game_id in ids:
            saved = self.load(game_id)
            if saved is not None:
                yield record_of(saved)


def record_of(saved: SavedGame) -> dict[str, Any]:
    """A finished saved game as a record (the one its page offers), without replaying it."""
    if saved.result is None:
        raise ValueError(f"game {saved.game_id} is not over")
    return {
        "num_players": saved.num_players,
        "seed": saved.seed,
        "max_turns": saved.max_turns,
        "modules": list(saved.modules),
        "agents": list(saved.agents),
        "actions": saved.prefix + saved.actions,
        **saved.result,
    }
