"""Scoring a critic against game results: the predictors, sign accuracy, calibration and winner pick.

Why apart from the games: every function here is pure over the arrays of a
:class:`Record` (one row per main decision), so the report's numbers can be
tested on hand-made records. What each predictor and table means: docs/results/value-report.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.nets.numba_net import seat_values
from training.common.stats import bootstrap_counts, wilson

#: Lower edges of the phase bins (the last is open); turn edges of a 2-player game (:func:`turn_edges`).
TURN_EDGES = (0, 10, 20, 30, 40)
LEAD_EDGES = (0, 3, 6, 9, 12, 15)
#: Inner edges of the calibration bins (both ends open).
VALUE_EDGES = (-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0)
BOOTSTRAP_ROUNDS = 1000
PREDICTORS = ("value", "leaf", "lead", "agent")


def turn_edges(players: int) -> tuple[int, ...]:
    """Turn bins of a ``players`` game: the rounds of :data:`TURN_EDGES` (0, 5, 10, 15, 20+ rounds).

    ``TURN`` counts one per seat's turn, so a round is ``players`` turns: 2 players
    ``(0, 10, 20, 30, 40)``, 3 ``(0, 15, 30, 45, 60)``, 4 ``(0, 20, 40, 60, 80)``.
    """
    return tuple(e * players // 2 for e in TURN_EDGES)


# ---------------------------------------------------------------------------
# What the games left


@dataclass
@dataclass
class Record:
    """What the games left: one row per main decision (``obs`` holds every seat's view).

    ``result[g, p]`` is seat ``p``'s result in game ``g`` (:func:`splendor_env.rules.terminal_rewards`),
    NaN when truncated; ``seating[g, p]`` the agent index (0 = ``A``, 1 = ``B``) in seat ``p``.
    ``n`` below is the player count, ``D`` the observation size of the game.
    """

    game: np.ndarray  # [N] game number of the decision
    turn: np.ndarray  # [N] state TURN
    mover: np.ndarray  # [N] seat on move
    prestige: np.ndarray  # [N, n] every seat's prestige
    obs: np.ndarray  # [N, n, D] every seat's observation
    result: np.ndarray  # [games, n]
    seating: np.ndarray  # [games, n] agent index per seat
    values: np.ndarray | None = field(default=None)  # [N, n] critic values, once computed
    modules: tuple[str, ...] = ()  # the game's modules (for the report)
    states: np.ndarray | None = field(default=None)  # [N, S] the decisions' states, when kept for playouts
    playouts: np.ndarray | None = field(default=None)  # [N, n] mean playout results (matches.playouts)
    playout_count: int = 0  # playouts per decision behind ``playouts``

    @property
    def players(self) -> int:
        return int(self.result.shape[1])

    @property
    def a_seat(self) -> np.ndarray:
        """``[games]`` the seat of agent ``A`` in each game."""
        return np.argmin(self.seating, axis=1)

    @property
    def truncated(self) -> int:
        return int(np.isnan(self.result[:, 0]).sum())


# ---------------------------------------------------------------------------
# Scoring (pure functions over arrays)


@dataclass
class Predictions:
    """Flat rows for one predictor: its number, the seat's result, the game, the phase keys."""

    x: np.ndarray
    result: np.ndarray
    game: np.ndarray
    turn: np.ndarray
    lead: np.ndarray  # the leader's prestige at the decision


def seat_leaf_values(values: np.ndarray) -> np.ndarray:
    """az's leaf value of every seat, per row of critic values ``[N, n]`` -> ``[N, n]``: :func:`agents.nets.numba_net.seat_values`.

    The search's own function, row by row (float64, as the search backs values up);
    two players: ``(V(seat) - V(other)) / 2``.
    """
    raw = np.ascontiguousarray(values, dtype=np.float64)
    rows, n = raw.shape
    out = np.zeros((rows, n), dtype=np.float64)
    for i in range(rows):
        seat_values(raw[i], n, out[i])
    return out


def leaf_values(values: np.ndarray, mover: np.ndarray) -> np.ndarray:
    """az's leaf value of the seat on move, per row of critic values ``[N, n]`` (:func:`seat_leaf_values`)."""
    return seat_leaf_values(values)[np.arange(len(mover)), mover]


def agent_signs(record: Record) -> np.ndarray:
    """``[2]`` the ``agent`` baseline of agents ``A`` and ``B``: the sign of each one's summed results over its seats.

    +1 for an agent whose seats (in the games scored) won more often than they lost,
    -1 for one whose seats lost more, 0 if even; see the module docstring.
    """
    done = ~np.isnan(record.result[:, 0])
    res, seating = record.result[done], record.seating[done]
    return np.array([np.sign(res[seating == k].sum()) for k in (0, 1)], dtype=np.float64)


def predictions(record: Record, kind: str) -> Predictions:
    """The rows of predictor ``kind`` (:data:`PREDICTORS`, see the module docstring); truncated games dropped."""
    if record.values is None and kind in ("value", "leaf"):
        raise ValueError("record has no critic values: call attach_values first")
    n = record.players
    keep = ~np.isnan(record.result[record.game, 0])
    g, turn, mover = record.game[keep], record.turn[keep], record.mover[keep]
    pts = record.prestige[keep]
    lead = pts.max(axis=1)
    rows = np.arange(g.size)
    if kind == "value":  # every seat, one row each
        vals = record.values[keep]
        return Predictions(
            x=vals.reshape(-1).astype(np.float64),
            result=record.result[g].reshape(-1),
            game=np.repeat(g, n),
            turn=np.repeat(turn, n),
            lead=np.repeat(lead, n),
        )
    if kind == "leaf":
        x = leaf_values(record.values[keep], mover)
    elif kind == "lead":  # the seat on move's prestige minus the best other seat's
        others = np.where(np.arange(n)[None, :] == mover[:, None], np.iinfo(np.int64).min, pts)
        x = (pts[rows, mover] - others.max(axis=1)).astype(np.float64)
    elif kind == "agent":  # every seat of an agent gets that agent's sign
        x = agent_signs(record)[record.seating[g, mover]]
    else:
        raise ValueError(f"unknown predictor {kind!r}; known: {', '.join(PREDICTORS)}")
    return Predictions(x=x, result=record.result[g, mover], game=g, turn=turn, lead=lead)


def _game_sums(game: np.ndarray, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per distinct game, the sum of each column (games in order of first appearance do not matter)."""
    _, inv = np.unique(game, return_inverse=True)
    return tuple(np.bincount(inv, weights=c) for c in columns)


def game_bootstrap(
    game: np.ndarray,
    num: np.ndarray,
    den: np.ndarray | None = None,
    rounds: int = BOOTSTRAP_ROUNDS,
    seed: int = 0,
) -> tuple[float, float] | None:
    """95% percentile interval of ``sum(num) / sum(den)`` when whole games are resampled with replacement.

    ``den`` defaults to one per row (a mean over positions). Games, not positions, are the
    independent units: this interval carries the correlation of positions within a game.
    """
    if game.size == 0:
        return None
    den = np.ones_like(num, dtype=np.float64) if den is None else den
    s_num, s_den = _game_sums(game, num.astype(np.float64), den.astype(np.float64))
    k = s_num.size
    counts = bootstrap_counts(k, rounds, seed)
    tot = counts @ s_den
    ratio = (counts @ s_num)[tot > 0] / tot[tot > 0]
    lo, hi = np.percentile(ratio, [2.5, 97.5])
    return float(lo), float(hi)


def sign_hits(x: np.ndarray, result: np.ndarray) -> np.ndarray:
    """1 where ``sign(x)`` is the result, 0 where it is the opposite, 0.5 where ``x == 0`` (a coin flip)."""
    return np.where(x == 0, 0.5, (np.sign(x) == np.sign(result)).astype(np.float64))


def score(x: np.ndarray, result: np.ndarray, game: np.ndarray, bootstrap: bool = True) -> dict[str, Any]:
    """Sign accuracy (decisive rows, Wilson and game-bootstrap intervals), MSE and correlation of ``x`` vs ``result``."""
    x = np.asarray(x, dtype=np.float64)
    result = np.asarray(result, dtype=np.float64)
    game = np.asarray(game)
    decisive = result != 0
    hits = sign_hits(x[decisive], result[decisive])
    n_dec = int(decisive.sum())
    out: dict[str, Any] = {
        "positions": int(x.size),
        "games": int(np.unique(game).size),
        "decisive_positions": n_dec,
        "sign_accuracy": float(hits.mean()) if n_dec else None,
        "sign_wilson95": list(wilson(float(hits.sum()), n_dec)) if n_dec else None,
        "sign_games95": None,
        "mse": float(np.mean((x - result) ** 2)) if x.size else None,
        "corr": None,
        "mean": float(x.mean()) if x.size else None,
    }
    if bootstrap and n_dec:
        ci = game_bootstrap(game[decisive], hits)
        out["sign_games95"] = list(ci) if ci else None
    if x.size > 1 and x.std() > 0 and result.std() > 0:
        out["corr"] = float(np.corrcoef(x, result)[0, 1])
    return out


def bin_labels(edges: tuple[float, ...], open_low: bool) -> list[str]:
    """``(0, 10, 20)`` -> ``["0-9", "10-19", "20+"]`` (integers); floats -> ``["<-1", "[-1,-0.75)", ..., ">=1"]``."""
    if not open_low:
        return [f"{a}-{b - 1}" for a, b in zip(edges[:-1], edges[1:], strict=True)] + [f"{edges[-1]}+"]
    inner = [f"[{a:g},{b:g})" for a, b in zip(edges[:-1], edges[1:], strict=True)]
    return [f"<{edges[0]:g}", *inner, f">={edges[-1]:g}"]


def phase_table(p: Predictions, key: str, edges: tuple[int, ...]) -> list[dict[str, Any]]:
    """:func:`score` per bin of ``p.turn`` or ``p.lead`` (lower edges ``edges``, the last bin open)."""
    keys = getattr(p, key)
    idx = np.searchsorted(np.asarray(edges), keys, side="right") - 1
    rows = []
    for i, label in enumerate(bin_labels(edges, open_low=False)):
        sel = idx == i
        rows.append({"bin": label, **score(p.x[sel], p.result[sel], p.game[sel])})
    return rows


def calibration(
    x: np.ndarray, result: np.ndarray, game: np.ndarray, edges: tuple[float, ...] = VALUE_EDGES
) -> list[dict[str, Any]]:
    """Predictor bins -> mean result, with positions, distinct games and a game-bootstrap 95% interval per row.

    A calibrated value on the result's scale has ``mean result ~ mean x`` in every row.
    Empty bins are kept (with zero counts) so tables from different runs line up.
    """
    x = np.asarray(x, dtype=np.float64)
    result = np.asarray(result, dtype=np.float64)
    idx = np.searchsorted(np.asarray(edges), x, side="right")
    rows = []
    for i, label in enumerate(bin_labels(edges, open_low=True)):
        sel = idx == i
        n = int(sel.sum())
        rows.append(
            {
                "bin": label,
                "positions": n,
                "games": int(np.unique(game[sel]).size),
                "mean_x": float(x[sel].mean()) if n else None,
                "mean_result": float(result[sel].mean()) if n else None,
                "win_share": float((result[sel] > 0).mean()) if n else None,
                "mean_result_games95": list(game_bootstrap(game[sel], result[sel])) if n else None,
            }
        )
    return rows


#: Winner-pick predictors: the seat with the highest leaf value, the prestige leader (a baseline, no network)
#: and, when measured, the seat that wins most playouts (the ceiling, :mod:`training.matches.playouts`).
PICKS = ("leaf", "prestige", "playouts")


@dataclass
class Picks:
    """Winner-pick rows: one per main decision of a game won alone (shared and truncated games left out).

    ``hits[kind]`` is 1 where the seat ``kind`` rates highest is the sole winner, 0 where
    not, ``1/k`` where ``k`` seats tie at the top and the winner is one of them.
    """

    hits: dict[str, np.ndarray]
    game: np.ndarray
    turn: np.ndarray
    lead: np.ndarray  # the leader's prestige at the decision


def pick_hits(scores: np.ndarray, winner: np.ndarray) -> np.ndarray:
    """``[N]``: whether the seat with the highest of ``scores[i]`` (``[N, n]``) is ``winner[i]``; a k-way tie at the top 1/k."""
    at_top = scores == scores.max(axis=1, keepdims=True)
    return at_top[np.arange(winner.size), winner] / at_top.sum(axis=1)


def winner_picks(record: Record) -> Picks:
    """:class:`Picks` of :data:`PICKS` over the record's decisions in games with a sole winner."""
    res = record.result
    sole = (res == 1).sum(axis=1) == 1  # NaN (truncated) and shared games (no +1) are False
    keep = sole[record.game]
    g = record.game[keep]
    winner = np.argmax(res, axis=1)[g]
    pts = record.prestige[keep]
    hits = {"prestige": pick_hits(pts, winner)}
    if record.values is not None:
        hits["leaf"] = pick_hits(seat_leaf_values(record.values[keep]), winner)
    if record.playouts is not None:
        hits["playouts"] = pick_hits(record.playouts[keep], winner)
    return Picks(hits=hits, game=g, turn=record.turn[keep], lead=pts.max(axis=1))


def pick_score(hits: np.ndarray, game: np.ndarray) -> dict[str, Any]:
    """Winner-pick share of ``hits`` with its game-bootstrap 95% interval."""
    return {
        "positions": int(hits.size),
        "games": int(np.unique(game).size),
        "accuracy": float(hits.mean()) if hits.size else None,
        "games95": list(game_bootstrap(game, hits)) if hits.size else None,
    }


def winner_pick_summary(record: Record, edges: tuple[int, ...]) -> dict[str, Any]:
    """The ``winner_pick`` entry of :func:`summarise`: overall, by turn and by leader's prestige, with the baselines."""
    p = winner_picks(record)
    res = record.result
    done = ~np.isnan(res[:, 0])
    out: dict[str, Any] = {
        "rule": "share of main decisions of games won alone at which the seat with the highest x is the "
        "sole winner (a k-way tie at the top counts 1/k); shared and truncated games left out; "
        "'gap' (with playouts): playouts' pick minus the leaf's on the same decisions",
        "chance": 1.0 / record.players,
        "games_scored": int(np.unique(p.game).size),
        "shared_left_out": int((done & ((res == 1).sum(axis=1) != 1)).sum()),
        "overall": {},
        "by_turn": {},
        "by_lead": {},
    }
    if "playouts" in p.hits:  # how far the critic is below the ceiling, paired on the same decisions
        p.hits["gap"] = p.hits["playouts"] - p.hits["leaf"]
        out["playouts"] = record.playout_count
    for kind in (*PICKS, "gap"):
        if kind not in p.hits:
            continue
        hits = p.hits[kind]
        out["overall"][kind] = pick_score(hits, p.game)
        for key, keys, bins in (("by_turn", p.turn, edges), ("by_lead", p.lead, LEAD_EDGES)):
            idx = np.searchsorted(np.asarray(bins), keys, side="right") - 1
            out[key][kind] = [
                {"bin": label, **pick_score(hits[idx == i], p.game[idx == i])}
                for i, label in enumerate(bin_labels(bins, open_low=False))
            ]
    return out


def summarise(record: Record, agents: tuple[str, str], model: str, seed: int) -> dict[str, Any]:
    """Everything the report prints and writes, as plain JSON-able data."""
    res = record.result
    n = record.players
    done = ~np.isnan(res[:, 0])
    a_result = res[np.arange(res.shape[0]), record.a_seat]
    b_won = ((res > 0) & (record.seating == 1)).any(axis=1)  # a B seat won alone
    edges = turn_edges(n)
    signs = agent_signs(record)
    summary: dict[str, Any] = {
        "agents": list(agents),
        "model": model,
        "seed": seed,
        "game": {"players": n, "modules": list(record.modules)},
        "games": {
            "played": int(res.shape[0]),
            "truncated": record.truncated,
            "scored": int(done.sum()),
            "shared": int((done & (res == 0).any(axis=1)).sum()),
            "a_wins": int((a_result[done] > 0).sum()),
            "b_wins": int(b_won[done].sum()),
            **{f"seat{p}_wins": int((res[done, p] > 0).sum()) for p in range(n)},
        },
        "decisions": int(record.game.size),
        "bootstrap": f"95% percentile interval over games ({BOOTSTRAP_ROUNDS} resamples, seed 0)",
        "caveat": "positions of one game are correlated: the Wilson intervals (per position) are too narrow, "
        "the game-bootstrap intervals are the ones to read",
        "overall": {},
        "by_turn": {},
        "by_lead": {},
        "calibration": {},
        "value_by_agent": {},
        "turn_edges": list(edges),
        "agent_baseline": {"A": int(signs[0]), "B": int(signs[1])},
    }
    for kind in PREDICTORS:
        p = predictions(record, kind)
        summary["overall"][kind] = score(p.x, p.result, p.game)
        summary["by_turn"][kind] = phase_table(p, "turn", edges)
        summary["by_lead"][kind] = phase_table(p, "lead", LEAD_EDGES)
        if kind in ("value", "leaf"):
            summary["calibration"][kind] = calibration(p.x, p.result, p.game)
    # the raw value split by whose seat it rates (the critic's own agent, or the other)
    keep = ~np.isnan(res[record.game, 0])
    g = record.game[keep]
    vals = record.values[keep].astype(np.float64)
    for k, spec in enumerate(agents):
        held = record.seating[g] == k  # [rows, n] the seats agent k holds in that game
        games = np.broadcast_to(g[:, None], held.shape)[held]
        summary["value_by_agent"][f"{'AB'[k]} ({spec})"] = score(vals[held], res[g][held], games)
    summary["winner_pick"] = winner_pick_summary(record, edges)
    return summary
