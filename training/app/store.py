"""The app's games and replays in memory: each game is the strict AEC env plus its seats, behind its own lock.

Why apart from the HTTP layer: what a request may do to a game (build its agents,
check a move is the one shown, replay a record) is independent of how the
request arrived; :mod:`training.app.server` only routes and encodes.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents import runner
from splendor_env import IllegalActionError, SnapshotError, records, rules
from splendor_env import state as st
from splendor_env.env import EnvConfig, raw_env
from splendor_env.picture import to_svg
from splendor_env.records import check_record, new_env, parse_records, replayed_moves
from splendor_env.state import MODULE_NAMES
from training.common.games import check_plays

#: The spec of the person at the page (not an agent of the registry: the page is the human's input).
HUMAN = "human"
#: Games and replays kept in memory; the oldest are dropped beyond this (a long session cannot grow without end).
MAX_GAMES = 64
#: Moves in words sent back with a view (the page's log).
LOG_LINES = 60


class ApiError(Exception):
    """A request the server refuses, with the HTTP status and the message the page shows."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST):
        super().__init__(message)
        self.status = status


def _int(value: Any, what: str) -> int:
    """``value`` as an int, refusing bools, floats and strings (a JSON API should not guess)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(f"{what} must be an integer, got {value!r}")
    return value


# ---------------------------------------------------------------------------
# Games


@dataclass
class Game:
    """One live game: the strict AEC env (the truth), its seats and what was played.

    ``seat_agents[p]`` is ``None`` for the human seat. ``prefix`` holds the
    recorded decisions a game continued from a record started after, so that
    move numbers and the game's record run on from the original deal.
    """

    game_id: str
    env: raw_env
    specs: list[str]
    seat_agents: list[Any]
    seed: int
    rng: np.random.Generator
    prefix: list[int] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def human_seat(self) -> int | None:
        """The seat the page plays (and whose hidden cards it shows), or ``None`` when watching."""
        return self.specs.index(HUMAN) if HUMAN in self.specs else None

    @property
    def move(self) -> int:
        """Decisions played since the deal: the number a move request must carry."""
        return len(self.prefix) + len(self.actions)

    def seat_on_move(self) -> int:
        return records.seat_of(self.env.agent_selection)

    def over(self) -> bool:
        return records.is_over(self.env)

    def play(self, action: int) -> None:
        """Play ``action`` for the seat on move (the env refuses an illegal one and stays unchanged)."""
        seat = self.seat_on_move()
        words = self.env.describe_action(action)
        self.env.step(action)
        self.actions.append(int(action))
        self.log.append(f"{self.move}. player_{seat} ({self.specs[seat]}): {words}")

    def agent_move(self) -> None:
        """One move of the agent on move, asked through the one runner."""
        agent = self.seat_agents[self.seat_on_move()]
        self.play(runner.decide(agent, self.env, self.rng))

    def agents_until_human(self) -> None:
        """Let the agents move until the human is on move or the game ends (not in watch mode)."""
        if self.human_seat is None:
            return
        while not self.over() and self.seat_on_move() != self.human_seat:
            self.agent_move()

    def record(self) -> dict[str, Any]:
        """The game as a record of :mod:`training.records` (the prefix of a continued game included)."""
        return records.game_record(self.env, self.seed, self.specs, self.prefix + self.actions)

    def view(self) -> dict[str, Any]:
        """What the page shows: the board for the human seat (a spectator's when watching), the moves."""
        s = self.env.game_state
        over = self.over()
        seat = self.seat_on_move()
        human = self.human_seat
        legal: list[dict[str, Any]] = []
        if not over and seat == human:
            mask = self.env.observe(self.env.agent_selection)["action_mask"]
            legal = [{"id": int(a), "text": self.env.describe_action(int(a))} for a in np.flatnonzero(mask)]
        names = [f"you ({HUMAN})" if spec == HUMAN else spec for spec in self.specs]
        out: dict[str, Any] = {
            "game_id": self.game_id,
            "move": self.move,
            "num_players": self.env.config.num_players,
            "modules": list(self.env.config.modules),
            "agents": list(self.specs),
            "human_seat": human,
            "seat_on_move": None if over else seat,
            "phase": st.PHASE_NAMES[int(s[st.PHASE])],
            "over": over,
            "legal": legal,
            "log": self.log[-LOG_LINES:],
            "svg": to_svg(s, human, names=names),
        }
        if over:
            out["result"] = records.game_result(s)
            out["record"] = self.record()
        return out


@dataclass
class Replay:
    """An opened record: the record, each move in words and every position (the deal first)."""

    replay_id: str
    record: dict[str, Any]
    moves: list[str]
    states: list[np.ndarray]
    lock: threading.Lock = field(default_factory=threading.Lock)


def _check_agents(specs: Any, num_players: int | None = None) -> list[str]:
    """The seat specs as strings, refused with the seat and the reason (before any game is built)."""
    if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
        raise ApiError(f"'agents' must be a list of spec strings, got {specs!r}")
    specs = [s.strip() for s in specs]
    if not 2 <= len(specs) <= 4:
        raise ApiError(f"a game needs 2 to 4 seats, got {len(specs)}")
    if num_players is not None and len(specs) != num_players:
        raise ApiError(
            f"the position is a {num_players}-player game: give {num_players} seats, not {len(specs)}"
        )
    if specs.count(HUMAN) > 1:
        raise ApiError("at most one seat may be 'human' (the page plays one seat)")
    return specs


def _build_agents(specs: list[str], seed: int, modules: tuple[str, ...]) -> list[Any]:
    """One agent per non-human seat (seeded as :mod:`training.play` seeds them), each checked to play this game."""
    built: list[Any] = []
    for p, spec in enumerate(specs):
        if spec == HUMAN:
            built.append(None)
            continue
        try:
            agent = agents.build(spec, seed=seed * 101 + p)
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


class Store:
    """The server's games and replays, by id; one lock guards the tables, one lock per game its play."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._games: OrderedDict[str, Game] = OrderedDict()
        self._replays: OrderedDict[str, Replay] = OrderedDict()

    @staticmethod
    def _new_id() -> str:
        return secrets.token_hex(6)

    def _keep(self, table: OrderedDict[str, Any], key: str, value: Any) -> None:
        with self._lock:
            table[key] = value
            while len(table) > MAX_GAMES:
                table.popitem(last=False)

    def game(self, game_id: str) -> Game:
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise ApiError(
                f"no game {game_id!r} (finished long ago, or the server restarted)", HTTPStatus.NOT_FOUND
            )
        return game

    def replay(self, replay_id: str) -> Replay:
        with self._lock:
            replay = self._replays.get(replay_id)
        if replay is None:
            raise ApiError(f"no record {replay_id!r} open (the server restarted?)", HTTPStatus.NOT_FOUND)
        return replay

    # -- games --------------------------------------------------------------
    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        modules = _modules(body.get("modules"))
        specs = _check_agents(body.get("agents"))
        seed = body.get("seed")
        seed = secrets.randbelow(2**31) if seed is None else _int(seed, "'seed'")
        if not 0 <= seed <= 2**62:
            raise ApiError(f"'seed' must be in 0..2**62, got {seed}")
        try:
            EnvConfig(num_players=len(specs), modules=modules)
        except (ValueError, TypeError) as exc:
            raise ApiError(str(exc)) from exc
        seat_agents = _build_agents(specs, seed, modules)
        env = raw_env(num_players=len(specs), modules=modules)
        env.reset(seed=seed)
        return self._start(env, specs, seat_agents, seed, prefix=[])

    def _start(
        self, env: raw_env, specs: list[str], seat_agents: list[Any], seed: int, prefix: list[int]
    ) -> dict[str, Any]:
        game = Game(
            self._new_id(), env, specs, seat_agents, seed, np.random.default_rng(seed), prefix=list(prefix)
        )
        with game.lock:
            self._keep(self._games, game.game_id, game)
            game.agents_until_human()
            return game.view()

    def get_game(self, game_id: str) -> dict[str, Any]:
        game = self.game(game_id)
        with game.lock:
            return game.view()

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

    def move(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        game = self.game(game_id)
        with game.lock:
            self._check_move(game, body)
            action = _int(body.get("action"), "'action'")
            seat = game.seat_on_move()
            if seat != game.human_seat:
                raise ApiError(
                    f"it is player_{seat}'s move ({game.specs[seat]}), not yours", HTTPStatus.CONFLICT
                )
            try:
                game.play(action)
            except IllegalActionError as exc:
                raise ApiError(f"refused: {exc}") from exc
            game.agents_until_human()
            return game.view()

    def advance(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        game = self.game(game_id)
        with game.lock:
            self._check_move(game, body)
            seat = game.seat_on_move()
            if seat == game.human_seat:
                raise ApiError("it is your move: choose one of the moves", HTTPStatus.CONFLICT)
            game.agent_move()
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
            if not isinstance(body["path"], str) or not body["path"].strip():
                raise ApiError("'path' must name a records file (JSON lines)")
            path = Path(body["path"].strip()).expanduser()
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ApiError(f"cannot read {str(path)!r}: {exc}") from exc
            records = _parse_lines(text, str(path))
        else:
            raise ApiError("give a record: 'record' (an object), 'text' (JSON lines) or 'path' (a file)")
        if not records:
            raise ApiError("no record in the file")
        if not 0 <= index < len(records):
            raise ApiError(f"'index' {index} out of range: the file holds {len(records)} record(s)")
        record = records[index]
        try:
            check_record(record)
            moves, states = _replayed(record)
        except (ValueError, TypeError, SnapshotError, IllegalActionError) as exc:
            raise ApiError(f"malformed record {index}: {exc}") from exc
        replay = Replay(self._new_id(), record, moves, states)
        self._keep(self._replays, replay.replay_id, replay)
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
        specs = _check_agents(body.get("agents"), int(record["num_players"]))
        seed = int(record["seed"])
        seat_agents = _build_agents(specs, seed, modules)
        max_turns = int(record.get("max_turns", st.DEFAULT_MAX_TURNS))
        game_env = raw_env(num_players=len(specs), modules=modules, max_turns=max_turns)
        game_env.reset(seed=seed, options={"snapshot": state})
        return self._start(game_env, specs, seat_agents, seed, prefix=list(record["actions"][:move]))


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
