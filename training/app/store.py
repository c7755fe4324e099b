"""The app's games and replays in memory: each game is the strict AEC env plus its seats, behind its own lock.

Why apart from the HTTP layer: what a request may do to a game (build its agents,
check a move is the one shown and made by the seat's holder, replay a record) is
independent of how the request arrived; :mod:`training.app.server` only routes
and encodes. One game, its agents' thread and watch mode are :mod:`training.app.game`.

Every game is saved as it is set up and as it moves (:mod:`training.app.archive`); memory
holds the games in play. A game nobody watches (no live stream) and nobody moved in for
:data:`IDLE_S` seconds leaves memory when a new game starts, and beyond :data:`MAX_GAMES` the
least recently used unwatched game goes first; a watched game, or one an agent is moving in,
stays. A game asked for that is not in memory (left it, or the server restarted) is replayed
from the archive, and its agents go on.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import numpy as np

from splendor_env import IllegalActionError, SnapshotError, records, rules
from splendor_env import state as st
from splendor_env.env import EnvConfig, raw_env
from splendor_env.picture import to_svg
from splendor_env.records import check_record, new_env, parse_records, replayed_moves
from splendor_env.state import MODULE_NAMES
from training.app.archive import Archive, SavedGame, record_of
from training.app.board import board, last_moves, said
from training.app.checks import HUMAN, MAX_RECORD_ACTIONS, ApiError, Limits, check_seat, read_record_file
from training.app.game import PACE_RANGE_MS, Game
from training.app.seats import build_seat
from training.common.games import check_plays

#: Games and replays kept in memory; beyond this the least recently used unwatched one leaves it.
MAX_GAMES = 64
#: Seconds after its last move (or view) that an unwatched game may leave memory (it stays saved).
IDLE_S = 2 * 3600


def _int(value: Any, what: str) -> int:
    """``value`` as an int, refusing bools, floats and strings (a JSON API should not guess)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(f"{what} must be an integer, got {value!r}")
    return value


@dataclass
class Replay:
    """An opened record: the record, each move in words and every position (the deal first)."""

    replay_id: str
    record: dict[str, Any]
    moves: list[str]
    states: list[np.ndarray]
    #: Each move as people say it (:func:`training.app.board.said`), for the players' last moves.
    said: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _check_agents(specs: Any, limits: Limits, num_players: int | None = None) -> tuple[list[str], list[str]]:
    """The seat specs as given and as built (:func:`check_seat`), refused with the seat and the reason."""
    if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
        raise ApiError(f"'agents' must be a list of spec strings, got {specs!r}")
    specs = [s.strip() for s in specs]
    if not 2 <= len(specs) <= 4:
        raise ApiError(f"a game needs 2 to 4 seats, got {len(specs)}")
    if num_players is not None and len(specs) != num_players:
        raise ApiError(
            f"the position is a {num_players}-player game: give {num_players} seats, not {len(specs)}"
        )
    built = []
    for p, spec in enumerate(specs):
        try:
            built.append(check_seat(spec, limits))
        except ApiError as exc:
            raise ApiError(f"seat {p}: {exc}", exc.status) from None
        except ValueError as exc:
            raise ApiError(f"seat {p}: {exc}") from None
    return [HUMAN if b == HUMAN else s for s, b in zip(specs, built, strict=True)], built


def _build_agents(specs: list[str], seed: int, modules: tuple[str, ...], cap_ms: float) -> list[Any]:
    """One agent per non-human seat (seeded as :mod:`training.play` seeds them), each checked to play
    this game, every search held to ``cap_ms`` a move (:func:`training.app.seats.build_seat`)."""
    built: list[Any] = []
    for p, spec in enumerate(specs):
        if spec == HUMAN:
            built.append(None)
            continue
        try:
            agent = build_seat(spec, seed * 101 + p, cap_ms)
            check_plays(agent, spec, len(specs), modules)
        except (ValueError, TypeError, ImportError, FileNotFoundError) as exc:
            raise ApiError(f"seat {p}: agent spec {spec!r}: {exc}") from exc
        built.append(agent)
    return built


def _modules(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(m, str) for m in value):
        raise ApiError(f"'modules' must be a list of module names, got {value!r}")
    unknown = sorted(set(value) - set(MODULE_NAMES))
    if unknown:
        raise ApiError(f"unknown module(s) {unknown}; modules are {list(MODULE_NAMES)}")
    return tuple(m for m in MODULE_NAMES if m in value)  # the engine's order, each once


def _tokens(body: dict[str, Any]) -> list[str]:
    tokens = body.get("tokens", [])
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise ApiError("'tokens' must be a list of seat tokens")
    return tokens


class Store:
    """The server's games and replays, by id; one lock guards the tables, one lock per game its play.

    ``start_agents(game)`` runs :meth:`Game.run_agents` off the request (the
    server passes a thread starter; by default it runs in the caller). Games are
    saved in ``archive`` (by default a database in memory, gone with the store).
    """

    def __init__(
        self,
        limits: Limits,
        start_agents: Callable[[Game], None] | None = None,
        archive: Archive | None = None,
    ) -> None:
        self.limits = limits
        self._start_agents = start_agents or (lambda game: game.run_agents())
        self.archive = archive if archive is not None else Archive(None)
        self._lock = threading.Lock()
        self._restoring = threading.Lock()
        self._games: OrderedDict[str, Game] = OrderedDict()
        self._replays: OrderedDict[str, Replay] = OrderedDict()

    @staticmethod
    def _new_id() -> str:
        return secrets.token_hex(6)

    def _keep_game(self, game: Game) -> None:
        """Keep ``game``; drop idle unwatched games, then the least recently used unwatched beyond MAX_GAMES
        (never one an agent is moving in: its moves must not go on beside a copy read back)."""
        now = time.monotonic()
        with self._lock:
            idle = {k: g for k, g in self._games.items() if not g.watchers and not _moving(g)}
            for key, old in list(idle.items()):
                if now - old.last_used > IDLE_S:
                    del self._games[key], idle[key]
            unwatched = sorted((g.last_used, k) for k, g in idle.items())
            while len(self._games) >= MAX_GAMES and unwatched:
                del self._games[unwatched.pop(0)[1]]
            if len(self._games) >= MAX_GAMES:
                raise ApiError(
                    f"{MAX_GAMES} games are being watched: close one first", HTTPStatus.SERVICE_UNAVAILABLE
                )
            self._games[game.game_id] = game

    def _keep_replay(self, replay: Replay) -> None:
        with self._lock:
            self._replays[replay.replay_id] = replay
            while len(self._replays) > MAX_GAMES:
                self._replays.popitem(last=False)

    def in_memory(self) -> list[str]:
        """The ids of the games in memory now, least recently kept first (the rest are only saved)."""
        with self._lock:
            return list(self._games)

    def game(self, game_id: str) -> Game:
        """The game ``game_id``: from memory, else read back from the archive (its agents then go on)."""
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            with self._restoring:  # one reader: a game read back twice would be played twice
                with self._lock:
                    game = self._games.get(game_id)
                restored = game is None
                if game is None:
                    game = self._restore(game_id)
                    self._keep_game(game)
            if restored and game.agents_on_move():  # an agent was on move when the server stopped
                self._start_agents(game)
        game.last_used = time.monotonic()
        return game

    def _restore(self, game_id: str) -> Game:
        """The saved game ``game_id`` replayed to its last saved move; a finished one seats no agent."""
        saved = self.archive.load(game_id)
        if saved is None:
            raise ApiError(f"no game {game_id!r} on this server", HTTPStatus.NOT_FOUND)
        seat_agents: list[Any] = [None] * saved.num_players
        if saved.result is None:
            try:
                _, built = _check_agents(saved.agents, self.limits, saved.num_players)
                seat_agents = _build_agents(built, saved.seed, saved.modules, self.limits.max_ms_per_move)
            except ApiError as exc:
                raise ApiError(f"game {game_id} cannot go on here: {exc}", HTTPStatus.CONFLICT) from exc
        try:
            game = _replayed_game(saved, seat_agents)
        except (ValueError, TypeError, IllegalActionError) as exc:
            raise ApiError(f"game {game_id} no longer replays: {exc}", HTTPStatus.CONFLICT) from exc
        game.archive = self.archive
        if saved.result is None and game.over():  # stopped between its last move and saving the result
            self.archive.ended(game)
        return game

    def lobby(self) -> dict[str, Any]:
        """The games saved here, the most recently played first (no seat tokens: anyone may list them)."""
        return {"games": self.archive.listing()}

    def saved_record(self, game_id: str) -> dict[str, Any]:
        """A finished game's record, as its page offers it."""
        saved = self.archive.load(game_id)
        if saved is None:
            raise ApiError(f"no game {game_id!r} on this server", HTTPStatus.NOT_FOUND)
        if saved.result is None:
            raise ApiError(f"game {game_id} is not over: its record comes at the end", HTTPStatus.CONFLICT)
        return record_of(saved)

    def replay(self, replay_id: str) -> Replay:
        with self._lock:
            replay = self._replays.get(replay_id)
        if replay is None:
            raise ApiError(f"no record {replay_id!r} open (the server restarted?)", HTTPStatus.NOT_FOUND)
        return replay

    # -- games --------------------------------------------------------------
    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        modules = _modules(body.get("modules"))
        specs, built = _check_agents(body.get("agents"), self.limits)
        seed = body.get("seed")
        seed = secrets.randbelow(2**31) if seed is None else _int(seed, "'seed'")
        if not 0 <= seed <= 2**62:
            raise ApiError(f"'seed' must be in 0..2**62, got {seed}")
        try:
            EnvConfig(num_players=len(specs), modules=modules)
        except (ValueError, TypeError) as exc:
            raise ApiError(str(exc)) from exc
        seat_agents = _build_agents(built, seed, modules, self.limits.max_ms_per_move)
        env = raw_env(num_players=len(specs), modules=modules)
        env.reset(seed=seed)
        return self._start(env, specs, seat_agents, seed, prefix=[])

    def _start(
        self, env: raw_env, specs: list[str], seat_agents: list[Any], seed: int, prefix: list[int]
    ) -> dict[str, Any]:
        game = Game(
            self._new_id(), env, specs, seat_agents, seed, np.random.default_rng(seed), prefix=list(prefix)
        )
        game.tokens = {p: secrets.token_urlsafe(12) for p in game.human_seats}
        self.archive.add(game)
        game.archive = self.archive
        self._keep_game(game)
        with game.lock:
            view = game.view(set(game.tokens))
        self._start_agents(game)
        return {**view, "tokens": {str(p): t for p, t in game.tokens.items()}}

    def get_game(self, game_id: str, tokens: list[str]) -> dict[str, Any]:
        game = self.game(game_id)
        with game.lock:
            return game.view(game.seats_of(tokens))

    @staticmethod
    def _check_move(game: Game, body: dict[str, Any]) -> None:
        shown = _int(body.get("move"), "'move' (the move number the page showed)")
        if shown != game.move:
            raise ApiError(
                f"stale move: the page showed move {shown} but the game is at move {game.move}; "
                "the board has been reloaded",
                HTTPStatus.CONFLICT,
            )
        if game.over():
            raise ApiError("the game is over", HTTPStatus.CONFLICT)
        if game.thinking is not None:
            raise ApiError(
                f"{game.specs[game.thinking[0]]} is thinking: wait for its move", HTTPStatus.CONFLICT
            )

    def move(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The human's move; the agents then move off the request (the page hears them live)."""
        game = self.game(game_id)
        tokens = _tokens(body)
        with game.lock:
            self._check_move(game, body)
            action = _int(body.get("action"), "'action'")
            seat = game.seat_on_move()
            if seat not in game.human_seats:
                raise ApiError(
                    f"it is player_{seat}'s move ({game.specs[seat]}), not yours", HTTPStatus.CONFLICT
                )
            mine = game.seats_of(tokens)
            if seat not in mine:
                raise ApiError(
                    f"player_{seat} is on move: this page holds no token for that seat", HTTPStatus.FORBIDDEN
                )
            try:
                game.play(action)
            except IllegalActionError as exc:
                raise ApiError(f"refused: {exc}") from exc
            view = game.view(mine)
        game.changed()
        if game.agents_on_move():
            self._start_agents(game)
        return view

    def pace(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Set the pace of a game only agents play (``delay_ms``, ``paused``): its pages only listen."""
        game = self.game(game_id)
        unknown = sorted(set(body) - {"delay_ms", "paused"})
        if unknown:
            raise ApiError(f"unknown key(s) {unknown}: give 'delay_ms' and/or 'paused'")
        delay = body.get("delay_ms")
        if delay is not None:
            delay = _int(delay, "'delay_ms'")
            low, high = PACE_RANGE_MS
            if not low <= delay <= high:
                raise ApiError(
                    f"'delay_ms' must be in {low}..{high} (milliseconds between moves), got {delay}"
                )
        paused = body.get("paused")
        if paused is not None and not isinstance(paused, bool):
            raise ApiError(f"'paused' must be true or false, got {paused!r}")
        if game.human_seats:
            raise ApiError("a person plays this game: the agents move by themselves", HTTPStatus.CONFLICT)
        game.set_pace(delay, paused)
        with game.lock:
            return game.view()

    # -- records ------------------------------------------------------------
    def open_record(self, body: dict[str, Any]) -> dict[str, Any]:
        index = _int(body.get("index", 0), "'index'")
        if "record" in body:
            records = [body["record"]]
        elif "text" in body:
            if not isinstance(body["text"], str):
                raise ApiError("'text' must be the records file's text (JSON lines)")
            records = _parse_lines(body["text"], "the uploaded file")
        elif "path" in body:
            name = body["path"]
            text = read_record_file(self.limits.records_dir, name)
            records = _parse_lines(text, name)
        else:
            raise ApiError("give a record: 'record' (an object), 'text' (JSON lines) or 'path' (a file)")
        if not records:
            raise ApiError("no record in the file")
        if not 0 <= index < len(records):
            raise ApiError(f"'index' {index} out of range: the file holds {len(records)} record(s)")
        record = records[index]
        try:
            check_record(record)
            if len(record["actions"]) > MAX_RECORD_ACTIONS:  # before the replay, which keeps every position
                raise ApiError(
                    f"record {index} has {len(record['actions']):,} actions: the table opens records of "
                    f"at most {MAX_RECORD_ACTIONS:,} (a game has a few hundred)"
                )
            moves, states = _replayed(record)
        except (ValueError, TypeError, SnapshotError, IllegalActionError) as exc:
            raise ApiError(f"malformed record {index}: {exc}") from exc
        replay = Replay(self._new_id(), record, moves, states)
        replay.said = [said(state, int(a)) for state, a in zip(states, record["actions"], strict=False)]
        self._keep_replay(replay)
        return {
            "replay_id": replay.replay_id,
            "records": len(records),
            "index": index,
            "num_players": int(record["num_players"]),
            "modules": list(record.get("modules", [])),
            "agents": record.get("agents"),
            "seed": record["seed"],
            "moves": moves,
            **self._position(replay, len(moves)),
        }

    @staticmethod
    def _position(replay: Replay, move: int) -> dict[str, Any]:
        state = replay.states[move]
        names = replay.record.get("agents")
        caption = f"the deal (seed {replay.record['seed']})" if move == 0 else replay.moves[move - 1]
        over = rules.is_over(state)
        return {
            "move": move,
            "caption": caption,
            "svg": to_svg(state, None, caption=caption, names=names),
            "board": board(state, None),
            "names": names or [f"player_{p}" for p in range(int(replay.record["num_players"]))],
            "last": last_moves(
                [(k + 1, w["seat"], w) for k, w in enumerate(replay.said[:move])],
                int(replay.record["num_players"]),
            ),
            "over": over,
            "result": records.game_result(state) if over else None,
        }

    def _replay_move(self, replay: Replay, value: Any) -> int:
        move = _int(value, "'move'")
        if not 0 <= move <= len(replay.moves):
            raise ApiError(f"'move' must be in 0..{len(replay.moves)}, got {move}")
        return move

    def replay_at(self, replay_id: str, move: Any) -> dict[str, Any]:
        replay = self.replay(replay_id)
        with replay.lock:
            return self._position(replay, self._replay_move(replay, move))

    def continue_from(self, replay_id: str, body: dict[str, Any]) -> dict[str, Any]:
        replay = self.replay(replay_id)
        with replay.lock:
            move = self._replay_move(replay, body.get("move"))
            record = replay.record
            state = replay.states[move]
        if rules.is_over(state):
            raise ApiError("the game is over at that move: continue from an earlier one")
        modules = tuple(record.get("modules", ()))
        specs, built = _check_agents(body.get("agents"), self.limits, int(record["num_players"]))
        seed = int(record["seed"])
        seat_agents = _build_agents(built, seed, modules, self.limits.max_ms_per_move)
        max_turns = int(record.get("max_turns", st.DEFAULT_MAX_TURNS))
        game_env = raw_env(num_players=len(specs), modules=modules, max_turns=max_turns)
        game_env.reset(seed=seed, options={"snapshot": state})
        return self._start(game_env, specs, seat_agents, seed, prefix=list(record["actions"][:move]))


def _moving(game: Game) -> bool:
    """Whether an agent is moving in ``game`` now or is about to (its thread is under way)."""
    with game.lock:
        return game.thinking is not None or game.agents_on_move()


def _replayed_game(saved: SavedGame, seat_agents: list[Any]) -> Game:
    """A saved game replayed from its deal (the recorded moves it continued from, then its own)."""
    env = raw_env(num_players=saved.num_players, modules=saved.modules, max_turns=saved.max_turns)
    env.reset(seed=saved.seed)
    for action in saved.prefix:
        env.step(action)
    move = len(saved.prefix) + len(saved.actions)
    rng = np.random.default_rng([saved.seed, move])  # the agents' own draws go on from a seed of their own
    game = Game(
        saved.game_id, env, list(saved.agents), seat_agents, saved.seed, rng, prefix=list(saved.prefix)
    )
    game.tokens, game.delay_ms, game.paused = dict(saved.tokens), saved.delay_ms, saved.paused
    for action in saved.actions:
        game.play(action)
    return game


def _parse_lines(text: str, where: str) -> list[Any]:
    try:
        return list(parse_records(text.splitlines(), where))
    except ValueError as exc:
        raise ApiError(str(exc)) from exc


def _replayed(record: dict[str, Any]) -> tuple[list[str], list[np.ndarray]]:
    """Every decision of the record in words and every position (the deal first), replayed once:
    this also proves the record replays, and paging through it then replays nothing."""
    states = [new_env(record).engine_state()]
    words = []
    for move in replayed_moves(record):
        words.append(f"{move.number}. {move.who}: {move.words}")
        states.append(move.env.engine_state())
    return words, states
