"""The app's games and replays in memory: each game is the strict AEC env plus its seats, behind its own lock.

Why apart from the HTTP layer: what a request may do to a game (build its agents,
check a move is the one shown and made by the seat's holder, replay a record) is
independent of how the request arrived; :mod:`training.app.server` only routes
and encodes. Agents move on a thread of their own after a human's move, so the
page hears of each move (and of who is thinking) as it happens; every change
calls the game's watchers (the server's live streams).

A game only agents play (watch mode) is played here too, by one thread of its
own at the pace its pages ask for (:meth:`Game.set_pace`), and only while some
page watches it (:meth:`Game.watch`): the pages listen, none of them drives it,
so two pages watching one game see it at the pace set, not twice as fast, and
a game nobody watches stands still.

Games live until idle: a game nobody watches (no live stream) and nobody moved
in for :data:`IDLE_S` seconds is dropped when a new game starts, and beyond
:data:`MAX_GAMES` the least recently used unwatched game goes first; a watched
game is never dropped.
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

from agents import runner
from splendor_env import IllegalActionError, SnapshotError, records, rules
from splendor_env import state as st
from splendor_env.env import EnvConfig, raw_env
from splendor_env.picture import to_svg
from splendor_env.records import check_record, new_env, parse_records, replayed_moves
from splendor_env.state import MODULE_NAMES
from training.app.board import board, spends, target
from training.app.checks import HUMAN, ApiError, Limits, check_seat, read_record_file
from training.app.seats import build_seat, clock_ms
from training.common.games import check_plays

#: Games and replays kept in memory; beyond this the least recently used unwatched one is dropped.
MAX_GAMES = 64
#: Seconds after its last move (or view) that an unwatched game may be dropped.
IDLE_S = 2 * 3600
#: Moves in words sent back with a view (the page's log).
LOG_LINES = 60
#: Watch mode: the pause between two agent moves a game starts with, and the range a page may set (ms).
PACE_MS = 400
PACE_RANGE_MS = (0, 10_000)


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

    ``seat_agents[p]`` is ``None`` for a human seat, whose moves need its
    ``tokens[p]`` (given to whoever started the game: one screen for every
    human seat, or one seat link per browser). ``prefix`` holds the recorded
    decisions a game continued from a record started after, so that move
    numbers and the game's record run on from the original deal.
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
    tokens: dict[int, str] = field(default_factory=dict)
    #: The agent searching now: ``(seat, started at time.monotonic())``, or ``None``.
    thinking: tuple[int, float] | None = None
    last_used: float = field(default_factory=time.monotonic)
    #: Bumped by every change (a move, an agent starting or ending its search): a page keeps the newest view.
    version: int = 0
    watchers: set[Callable[[], None]] = field(default_factory=set)
    #: Watch mode (no human seat): milliseconds between two agent moves, and whether play is paused.
    delay_ms: int = PACE_MS
    paused: bool = False
    #: Guards the watchers, the pace and the pacing thread; taken before ``lock``, never inside it.
    pace_lock: threading.Condition = field(default_factory=threading.Condition)
    pacer: threading.Thread | None = None
    #: When the last agent move of watch mode ended (or play started or resumed): the next is due a delay later.
    paced_at: float = 0.0

    @property
    def human_seats(self) -> list[int]:
        """The seats people play, in seat order (none: the agents play each other)."""
        return [p for p, spec in enumerate(self.specs) if spec == HUMAN]

    @property
    def move(self) -> int:
        """Decisions played since the deal: the number a move request must carry."""
        return len(self.prefix) + len(self.actions)

    def seat_on_move(self) -> int:
        return records.seat_of(self.env.agent_selection)

    def over(self) -> bool:
        return records.is_over(self.env)

    def changed(self) -> None:
        """Tell every watcher (a live stream) that the game changed; a watcher must not block."""
        self.last_used = time.monotonic()
        for watcher in list(self.watchers):
            watcher()

    def seats_of(self, tokens: list[str]) -> set[int]:
        """The human seats whose tokens a viewer holds."""
        return {
            p for p, t in self.tokens.items() if any(secrets.compare_digest(t, given) for given in tokens)
        }

    def play(self, action: int) -> None:
        """Play ``action`` for the seat on move (the env refuses an illegal one and stays unchanged)."""
        seat = self.seat_on_move()
        words = self.env.describe_action(action)
        self.env.step(action)
        self.version += 1
        self.actions.append(int(action))
        self.log.append(f"{self.move}. player_{seat} ({self.specs[seat]}): {words}")

    def claim(self) -> int:
        """Mark the seat on move as thinking (call with the lock held): no other request may move now."""
        seat = self.seat_on_move()
        self.thinking = (seat, time.monotonic())
        self.version += 1
        return seat

    def agent_move(self, claimed: bool = False) -> None:
        """One move of the agent on move, asked through the one runner; watchers hear it start and end.

        The search runs outside the game's lock (it only reads the env, and no
        one else may move while an agent is on move), so views stay instant.
        """
        with self.lock:
            seat = self.seat_on_move() if claimed else self.claim()
        self.changed()
        try:
            action = runner.decide(self.seat_agents[seat], self.env, self.rng)
            with self.lock:
                self.play(action)
        finally:
            with self.lock:
                self.thinking = None
                self.version += 1
            self.changed()

    def agents_on_move(self) -> bool:
        return bool(self.human_seats) and not self.over() and self.seat_on_move() not in self.human_seats

    def run_agents(self) -> None:
        """Let the agents move until a human is on move or the game ends (not when only agents play)."""
        while self.agents_on_move():
            self.agent_move()

    # -- watch mode: the agents play each other while a page watches ------------
    def watch(self, watcher: Callable[[], None]) -> None:
        """Add a watcher (a live stream); a game only agents play starts moving if it was not."""
        with self.pace_lock:
            self.watchers.add(watcher)
            with self.lock:
                over = self.over()
            if not self.human_seats and not over and self.pacer is None:
                self.paced_at = time.monotonic()
                self.pacer = threading.Thread(target=self._pace, name=f"watch-{self.game_id}", daemon=True)
                self.pacer.start()
            self.pace_lock.notify_all()

    def unwatch(self, watcher: Callable[[], None]) -> None:
        """Drop a watcher; with none left, a game only agents play stops before its next move."""
        with self.pace_lock:
            self.watchers.discard(watcher)
            self.pace_lock.notify_all()

    def set_pace(self, delay_ms: int | None = None, paused: bool | None = None) -> None:
        """The pace of watch mode, for every page watching: the delay between moves, paused or not."""
        with self.pace_lock:
            if delay_ms is not None:
                self.delay_ms = delay_ms
            if paused is not None:
                if self.paused and not paused:
                    self.paced_at = time.monotonic()
                self.paused = paused
            self.pace_lock.notify_all()
        with self.lock:
            self.version += 1
        self.changed()

    def _due(self) -> bool:
        """Wait (``pace_lock`` held) until the next agent move is due: ``False`` when there is none to
        make (nobody watches, the game is over); then this pacing thread ends."""
        while True:
            with self.lock:
                over = self.over()
            if over or not self.watchers:
                self.pacer = None
                return False
            wait = self.paced_at + self.delay_ms / 1000.0 - time.monotonic()
            if not self.paused and wait <= 0:
                return True
            self.pace_lock.wait(None if self.paused else wait)

    def _pace(self) -> None:
        """The one thread that plays a game only agents play, one move when due, while it is watched."""
        while True:
            with self.pace_lock:
                if not self._due():
                    return
            with self.lock:  # one locked step: the checks, then the claim
                ready = (
                    not self.over() and self.thinking is None and self.seat_on_move() not in self.human_seats
                )
                seat = self.claim() if ready else -1
            if not ready:  # not this thread's move to make (none is, in a game only agents play)
                with self.pace_lock:
                    self.paced_at = time.monotonic()
                continue
            try:
                self.agent_move(claimed=True)
            except Exception as exc:  # a failing agent: said in the log, and play pauses
                with self.lock:
                    self.log.append(f"player_{seat} ({self.specs[seat]}) failed: {type(exc).__name__}: {exc}")
                self.set_pace(paused=True)
            with self.pace_lock:
                self.paced_at = time.monotonic()

    def record(self) -> dict[str, Any]:
        """The game as a record of :mod:`splendor_env.records` (the prefix of a continued game included)."""
        return records.game_record(self.env, self.seed, self.specs, self.prefix + self.actions)

    def view(self, mine: set[int] | None = None) -> dict[str, Any]:
        """What a page shows: the board for the seat it plays (the one on move if it holds that seat,
        a spectator's when it holds none), that seat's legal moves, who is thinking, the log."""
        mine = mine or set()
        s = self.env.game_state
        over = self.over()
        seat = self.seat_on_move()
        shown = seat if seat in mine else min(mine) if mine else None
        legal: list[dict[str, Any]] = []
        if not over and seat in mine and self.thinking is None:
            mask = self.env.observe(self.env.agent_selection)["action_mask"]
            legal = [
                {"id": int(a), "text": self.env.describe_action(int(a)), **target(int(a))}
                for a in np.flatnonzero(mask)
            ]
            for move in legal:
                if move["verb"].startswith("buy"):
                    move["spends"] = spends(s, move["id"])
        names = [f"{spec} (you)" if p in mine else spec for p, spec in enumerate(self.specs)]
        thinking = None
        if self.thinking is not None:
            who, since = self.thinking
            thinking = {
                "seat": who,
                "agent": self.specs[who],
                "elapsed_ms": int(1000 * (time.monotonic() - since)),
                "clock_ms": clock_ms(self.seat_agents[who]),
            }
        out: dict[str, Any] = {
            "game_id": self.game_id,
            "move": self.move,
            "version": self.version,
            "num_players": self.env.config.num_players,
            "modules": list(self.env.config.modules),
            "agents": list(self.specs),
            "pace": None if self.human_seats else {"delay_ms": self.delay_ms, "paused": self.paused},
            "clock_ms": [None if a is None else clock_ms(a) for a in self.seat_agents],
            "human_seats": self.human_seats,
            "my_seats": sorted(mine),
            "shown_seat": shown,
            "seat_on_move": None if over else seat,
            "phase": st.PHASE_NAMES[int(s[st.PHASE])],
            "over": over,
            "thinking": thinking,
            "legal": legal,
            "log": self.log[-LOG_LINES:],
            "svg": to_svg(s, shown, names=names),
            "board": board(s, shown),
            "names": names,
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
    server passes a thread starter; by default it runs in the caller).
    """

    def __init__(self, limits: Limits, start_agents: Callable[[Game], None] | None = None) -> None:
        self.limits = limits
        self._start_agents = start_agents or (lambda game: game.run_agents())
        self._lock = threading.Lock()
        self._games: OrderedDict[str, Game] = OrderedDict()
        self._replays: OrderedDict[str, Replay] = OrderedDict()

    @staticmethod
    def _new_id() -> str:
        return secrets.token_hex(6)

    def _keep_game(self, game: Game) -> None:
        """Keep ``game``; drop idle unwatched games, then the least recently used unwatched beyond MAX_GAMES."""
        now = time.monotonic()
        with self._lock:
            for key, old in list(self._games.items()):
                if not old.watchers and now - old.last_used > IDLE_S:
                    del self._games[key]
            unwatched = sorted((g.last_used, k) for k, g in self._games.items() if not g.watchers)
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

    def game(self, game_id: str) -> Game:
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise ApiError(
                f"no game {game_id!r} (idle for over {IDLE_S // 3600} hours, or the server restarted)",
                HTTPStatus.NOT_FOUND,
            )
        game.last_used = time.monotonic()
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
            moves, states = _replayed(record)
        except (ValueError, TypeError, SnapshotError, IllegalActionError) as exc:
            raise ApiError(f"malformed record {index}: {exc}") from exc
        replay = Replay(self._new_id(), record, moves, states)
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
