"""One live game of the browser app: the strict AEC env (the truth), its seats, its watchers and pace.

Why a file of its own: what a game is (who may move, an agent's move off the request, the view a
page gets, watch mode's own thread) is apart from how the server keeps many of them
(:mod:`training.app.store`). Agents move on a thread of their own after a human's move, so the
page hears of each move (and of who is thinking) as it happens; every change calls the game's
watchers (the server's live streams). A game only agents play is played by one thread of its own
at the pace its pages ask for (:meth:`Game.set_pace`), and only while some page watches it
(:meth:`Game.watch`): two pages watching one game see it at the pace set, not twice as fast, and
a game nobody watches stands still.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from agents import runner
from splendor_env import IllegalActionError, records
from splendor_env import state as st
from splendor_env.actions import block_of
from splendor_env.env import raw_env
from splendor_env.picture import to_svg
from training.app.board import board, last_moves, said, spends, target
from training.app.checks import HUMAN
from training.app.seats import clock_ms

#: Moves in words sent back with a view (the page's log).
LOG_LINES = 60
#: Watch mode: the pause between two agent moves a game starts with, and the range a page may set (ms).
PACE_MS = 400
PACE_RANGE_MS = (0, 10_000)


def log_words(env: raw_env, action: int) -> str:
    """A move in words for the game's log, which every page reads: a card kept face down from a drawn
    pair (Trading Posts) is not named; every other move is the env's words for it."""
    if block_of(action)[0] == "keep_drawn_card":
        return "keep one of the two drawn cards (face down)"
    return env.describe_action(action)


def _utf8(token: str) -> bytes:
    """A seat token as bytes (a lone surrogate, which JSON may carry, included): compared as such."""
    return token.encode("utf-8", "surrogatepass")


class Saver(Protocol):
    """Where a game is saved as it goes (:class:`training.app.archive.Archive`)."""

    def move(self, game: Game, action: int) -> None: ...
    def ended(self, game: Game) -> None: ...
    def paced(self, game: Game) -> None: ...


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
    #: Each move of this game as people say it: ``(move number, seat, said)`` (:func:`training.app.board.said`).
    said: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)
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
    #: Where each move is saved before it is played (:mod:`training.app.archive`); ``None``: nowhere.
    archive: Saver | None = None

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
        """The human seats whose tokens a viewer holds (compared as bytes: any text is a token, if wrong)."""
        given = [_utf8(t) for t in tokens]
        return {p for p, t in self.tokens.items() if any(secrets.compare_digest(_utf8(t), g) for g in given)}

    def play(self, action: int) -> None:
        """Play ``action`` for the seat on move (the env refuses an illegal one and stays unchanged).

        A legal move is saved first: if saving fails, the game has not moved, so what is saved
        and what is shown never part. The log says it as every page may read it (:func:`log_words`).
        """
        mask = self.env.observe(self.env.agent_selection)["action_mask"]
        legal = (
            isinstance(action, (int, np.integer))
            and not isinstance(action, bool)
            and 0 <= action < len(mask)
            and bool(mask[action])
        )
        if not legal:  # refused before anything reads the move's card (an empty reserve slot has none)
            self.env.step(action)  # the env says why, in its own words, and stays unchanged
            raise IllegalActionError(f"illegal action {action!r}")  # should the env not have refused it
        seat = self.seat_on_move()
        words = log_words(self.env, int(action))
        short = said(self.env.game_state, action)
        if self.archive is not None:
            self.archive.move(self, int(action))
        self.env.step(action)
        self.version += 1
        self.actions.append(int(action))
        self.log.append(f"{self.move}. player_{seat} ({self.specs[seat]}): {words}")
        self.said.append((self.move, seat, short))
        if self.archive is not None and self.over():
            self.archive.ended(self)

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
            if self.archive is not None:
                self.archive.paced(self)
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
                # the seat is named here: an exception inside act is shown as raised, not as the runner's line
                shown = (
                    exc.__cause__ if isinstance(exc, runner.AgentError) and exc.__cause__ is not None else exc
                )
                with self.lock:
                    self.log.append(
                        f"player_{seat} ({self.specs[seat]}) failed: {type(shown).__name__}: {shown}"
                    )
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
            "last": last_moves(self.said, self.env.config.num_players),
        }
        if over:
            out["result"] = records.game_result(s)
            out["record"] = self.record()
        return out
