"""The table's analysis view: ``az``'s win chance per player and its top moves, from what the viewer sees.

Why a module of its own: the analysis is a search the server runs for a page, not a move in a game, so it
keeps its own ``az`` agent (:class:`agents.players.az.AZAgent`, the one search driver and the shipped
network of each game) apart from the seats, and it must never use what its viewer cannot see.

Viewer's information only: the position searched is :func:`splendor_env.determinize.determinize` of the
true one for the viewer (the seat the page shows, as :meth:`training.app.game.Game.view` picks it, or
``None`` for a page without a seat and for a replay: public information only): every card the viewer
cannot see (other seats' blind reserves, the deck order, a drawn pair) is a draw from the cards the viewer
cannot account for. The search itself then determinises each simulation for the seat on move. When the
seat on move holds a card the viewer cannot see, :data:`SAMPLES` draws share the simulations, so no single
guess at that card decides. The answer is a function of the viewer's information, the seed and the
budget: two positions that differ only in what the viewer cannot see give the same analysis.

The value: for each seat ``p`` the search's mean value ``v_p`` (the network's value head at the leaves,
``(r_p - mean of the others) / 2``, :func:`agents.nets.numba_net.seat_values`; a finished game's own
values). A sole winner's value is 1 and a loser's ``-1/(n-1)``, so ``v_p = w_p - (1 - w_p)/(n-1)`` for a
win chance ``w_p``, and :func:`win_chances` inverts it: ``w_p = ((n-1) v_p + 1) / n`` (``(1 + v) / 2``
with two players), clipped to 0..1 and summing to 1.

Budget: at most ``sims`` simulations (:data:`DEFAULT_SIMS`, up to :data:`MAX_SIMS`) and
:data:`SEARCH_SHARE` of the server's ``--max-ms-per-move`` (the search's own cap, ``max_ms``), the rest
left for determinising, words and JSON; one analysis runs at a time (a page asks for one at a time).
"""

from __future__ import annotations

import re
import threading
import time
from http import HTTPStatus
from typing import Any

import numpy as np

from agents.players.az import AZAgent
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import block_of, describe
from splendor_env.determinize import determinize
from training.app.checks import ApiError

#: Simulations an analysis runs unless the request asks for fewer or more (``sims=``).
DEFAULT_SIMS = 800
#: The most simulations a request may ask for (the tree is allocated for this many).
MAX_SIMS = 4000
#: Moves listed, most visited first.
TOP_MOVES = 3
#: Root draws sharing the simulations when the seat on move holds a card the viewer cannot see.
SAMPLES = 4
#: The share of ``--max-ms-per-move`` the search may take (the cap is on the whole answer).
SEARCH_SHARE = 0.8
#: Action blocks whose words name a card of the seat on move's hand (its reserve, its drawn pair):
#: for another seat's move they are said without the card.
HAND_BLOCKS = ("buy_reserved", "buy_reserved_double_gold", "keep_drawn_card")
#: A number in a query: plain ASCII digits, short enough for ``int`` (``str.isdigit`` takes "²" and 5,000 digits).
NUMBER = re.compile(r"[0-9]{1,19}")


def win_chances(values: np.ndarray, num_players: int) -> list[float]:
    """Search values per seat (summing to 0) as win chances (summing to 1): module docstring."""
    n = int(num_players)
    w = np.clip(((n - 1) * np.asarray(values[:n], dtype=float) + 1.0) / n, 0.0, 1.0)
    total = float(w.sum())
    return [float(x) for x in (w / total if total > 0 else np.full(n, 1.0 / n))]


def hides_hand(state: np.ndarray, viewer: int | None) -> bool:
    """Whether the seat on move holds a card ``viewer`` cannot see (a blind reserve, a drawn pair):
    public facts only (how many blind reserves, whether a pair is drawn)."""
    seat = int(state[st.CURRENT])
    if seat == viewer:
        return False
    po = st.player_offset(seat)
    blind = any(
        state[po + st.P_RESERVED + r] >= 0 and state[po + st.P_RESERVED_BLIND + r] == 1
        for r in range(st.MAX_RESERVED)
    )
    drawn = len(state) > st.PD_DRAWN0 and int(state[st.MODULES]) != 0 and state[st.PD_DRAWN0] >= 0
    return bool(blind or drawn)


def move_words(action: int, seen: np.ndarray, own_move: bool) -> str:
    """A move in words as the table names it (:func:`splendor_env.actions.describe`), from ``seen`` (a
    state determinised for the viewer); a card of another seat's hand is not named."""
    if not own_move and block_of(int(action))[0] in HAND_BLOCKS:
        return describe(int(action)) + " (a card you cannot see)"
    return describe(int(action), seen)


def viewer_of(seat_on_move: int, mine: set[int]) -> int | None:
    """The seat whose information a page analyses: the one it shows (the seat on move if it holds it, else
    its lowest; ``None`` for a page that holds no seat), as :meth:`training.app.game.Game.view` shows it."""
    return seat_on_move if seat_on_move in mine else min(mine) if mine else None


def read_sims(value: str | None) -> int:
    """The ``sims=`` of a request: 1..MAX_SIMS, :data:`DEFAULT_SIMS` when absent."""
    if value is None or value == "":
        return DEFAULT_SIMS
    if not NUMBER.fullmatch(value) or not 1 <= int(value) <= MAX_SIMS:
        raise ApiError(f"'sims' must be a whole number in 1..{MAX_SIMS}, got {value!r}")
    return int(value)


def read_seed(value: str | None) -> int:
    """The ``seed=`` of a request (0..2**62; 0 when absent): the draws of the hidden cards and the search."""
    if value is None or value == "":
        return 0
    if not NUMBER.fullmatch(value) or int(value) > 2**62:
        raise ApiError(f"'seed' must be a whole number in 0..2**62, got {value!r}")
    return int(value)


class Analyst:
    """The server's one ``az`` for analyses, held to ``cap_ms`` an answer; one analysis at a time."""

    def __init__(self, cap_ms: float) -> None:
        self.cap_ms = float(cap_ms)
        self.lock = threading.Lock()
        self.agent: AZAgent | None = None

    def _agent(self, state: np.ndarray) -> AZAgent:
        """The agent, with the network of this game loaded (a clear 409 for a game no network plays)."""
        if self.agent is None:
            self.agent = AZAgent(seed=0, sims=MAX_SIMS, max_ms=self.cap_ms)
        try:
            self.agent.check_game(int(state[st.N_PLAYERS]), st.module_names(int(state[st.MODULES])))
        except ValueError as exc:
            raise ApiError(f"no analysis for this game: {exc}", HTTPStatus.CONFLICT) from exc
        return self.agent

    def analyse(
        self, state: np.ndarray, viewer: int | None, sims: int = DEFAULT_SIMS, seed: int = 0
    ) -> dict[str, Any]:
        """``az``'s view of ``state`` for ``viewer`` (a seat, or ``None``: public information only)."""
        asked = time.perf_counter()
        if rules.is_over(state):
            raise ApiError("the game is over: there is nothing left to analyse", HTTPStatus.CONFLICT)
        if not self.lock.acquire(timeout=self.cap_ms / 2000.0):
            raise ApiError(
                "another analysis is running on this server: ask again in a moment",
                HTTPStatus.SERVICE_UNAVAILABLE,
            )
        try:
            before = time.perf_counter()
            agent = self._agent(state)
            load = time.perf_counter() - before  # a network's first load (once per game kind) is not counted
            return self._search(agent, state, viewer, sims, seed, asked + load)
        finally:
            self.lock.release()

    def _search(
        self, agent: AZAgent, state: np.ndarray, viewer: int | None, sims: int, seed: int, started: float
    ) -> dict[str, Any]:
        n, seat = int(state[st.N_PLAYERS]), int(state[st.CURRENT])
        deadline = started + SEARCH_SHARE * self.cap_ms / 1000.0
        samples = SAMPLES if hides_hand(state, viewer) else 1
        rng = np.random.default_rng(seed)
        agent.seed(seed)
        seen = determinize(state, viewer, rng)
        visits = np.zeros(agent.network(n, st.module_names(int(state[st.MODULES]))).num_actions)
        sums = np.zeros((visits.size, n))
        for k in range(samples):
            left_ms = 1000.0 * (deadline - time.perf_counter())
            if k > 0 and left_ms <= 0:
                break
            root = seen if k == 0 else determinize(state, viewer, rng)
            agent.params["max_ms"] = max(left_ms, 1.0)
            agent.root_visits(root, sims=max(1, sims // samples))
            tree = agent.last_tree
            assert tree is not None
            for p in range(n):
                actions, counts, value_sums = tree.root_stats(p)
                if p == 0:
                    visits[actions] += counts
                sums[actions, p] += value_sums
        total = float(visits.sum())
        values = sums.sum(axis=0) / max(total, 1.0)
        order = sorted(np.flatnonzero(visits), key=lambda a: (-visits[a], a))[:TOP_MOVES]
        moves = [
            {
                "id": int(a),
                "text": move_words(int(a), seen, seat == viewer),
                "visits": int(visits[a]),
                "share": float(visits[a] / total),
                "win_chance": win_chances(sums[a] / visits[a], n)[seat],
            }
            for a in order
        ]
        return {
            "viewer": viewer,
            "seat_on_move": seat,
            "num_players": n,
            "network": agent.label,
            "values": [float(v) for v in values],
            "win_chance": win_chances(values, n),
            "moves": moves,
            "sims": int(total),
            "samples": samples,
            "seed": seed,
            "elapsed_ms": round(1000.0 * (time.perf_counter() - started), 1),
            "max_ms": self.cap_ms,
        }


def game_analysis(analyst: Analyst, game: Any, tokens: list[str], query: Any) -> dict[str, Any]:
    """``GET /api/games/ID/analysis``: the position on screen for the holder of ``tokens``."""
    sims, seed = read_sims(query.get("sims")), read_seed(query.get("seed"))
    mine = game.seats_of(tokens)
    with game.lock:
        state = np.array(game.env.game_state, copy=True)
        move = game.move
    viewer = viewer_of(int(state[st.CURRENT]), mine)
    return {"game_id": game.game_id, "move": move, **analyst.analyse(state, viewer, sims, seed)}


def replay_analysis(analyst: Analyst, replay: Any, query: Any) -> dict[str, Any]:
    """``GET /api/replays/ID/analysis?move=k``: a record's position, from public information only."""
    sims, seed = read_sims(query.get("sims")), read_seed(query.get("seed"))
    raw = query.get("move", "0")
    if not NUMBER.fullmatch(raw) or not 0 <= int(raw) < len(replay.states):
        raise ApiError(f"'move' must be in 0..{len(replay.states) - 1}, got {raw!r}")
    with replay.lock:
        state = np.array(replay.states[int(raw)], copy=True)
    return {"replay_id": replay.replay_id, "move": int(raw), **analyst.analyse(state, None, sims, seed)}
