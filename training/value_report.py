"""How good is a PPO critic as a position evaluator? Sign accuracy, error and calibration over held-out games.

Why: the ``az`` search (:mod:`agents.az`) evaluates every leaf with the critic of
the shipped network of the game (``ppo_2p`` for 2-player base games): seat ``p``'s
leaf value is ``(V(obs_p) - mean of V(obs_q) over the other seats) / 2``
(:func:`agents.net.seat_values`; two players: ``(V(obs_p) - V(obs_q)) / 2``). This
report measures how far that number (and the raw ``V`` it is built from) predicts
who wins, overall and by game phase, so a change of network or of leaf formula
can be judged by one command.

What it does:

* plays ``--games`` games of ``--players`` players (2, 3 or 4; default 2) with
  the Cities of Splendor ``--modules`` given (default none: the base game)
  between two agents (``--agents A B``, any :func:`agents.make` spec or a ``.zip``
  path); game ``g`` puts ``A`` in seat ``g % players`` and ``B`` in every other
  seat (:func:`agents.runner.rotation_seating`, as in ``training.evaluate``), so
  ``A`` plays every seat equally often. The games run in
  :func:`agents.runner.play_batched`: search agents (``needs_state``) get the
  state determinised for their seat, as in ``training.evaluate``;
* the critic is that of ``--model``, by default the shipped network ``az`` uses
  for the game (:func:`agents.models.default_model`; :mod:`agents.az` lists them);
  a model trained for another game is refused, naming both. The agents default
  to ``ppo:<that shipped network>`` against ``greedy`` (``ppo:<--model>`` when
  no shipped network covers the game);
* at every *main* decision (not a discard, noble or module choice) records every
  seat's observation (:func:`splendor_env.observation.observe`, the module
  observation in a module game), the turn number (``TURN``: one per seat's turn,
  so ``players`` per round), every seat's prestige and who is on move; after the
  games it runs the critic over all of them in a few batched torch calls
  (``policy.predict_values``, the same numbers :func:`agents.az.net_values`
  gives: :func:`agents.az.check_export`). All views come from the true state;
  inside a search the other seats' views are taken from a state determinised for
  the searching seat (their blind reserves guessed), so az's own leaves carry a
  little more noise than the ``leaf`` measured here;
* attaches each seat's result, :func:`splendor_env.rules.terminal_rewards`: +1
  sole win, -1 loss, 0 shared victory (a co-winner; the other seats of a shared
  game lost: -1); truncated games (turn cap) are left out and counted.

Four predictors are scored against the result:

* ``value``: the raw critic ``V`` of a seat's observation, one row per seat per
  decision. It learnt the *shaped* return against its training pool (terminal
  +-1 plus 0.02 per prestige point, gamma 0.995), so it is biased upwards: at
  the start it rates every seat about +0.85 and its sign says little there;
* ``leaf``: az's leaf value from the seat on move's side, one row per decision,
  computed by :func:`agents.net.seat_values` itself (the other seats' values
  of the same position say little new: with two players they are its negation);
* ``lead``: a baseline with no network, the seat on move's prestige minus the
  best other seat's (a tie scores half): the critic is worth its cost where it
  beats this;
* ``agent``: a baseline that knows only who sits where: every seat of an agent
  gets the sign of that agent's results over its seats in these games (+1 if its
  seats won more often than they lost, -1 if they lost more, 0 if even; one
  number per agent, fitted on the games it scores). Two players, ``A`` the
  stronger: +1 when ``A`` is on move, and its accuracy is ``A``'s win share.
  Between unequal agents (the policy wins about 90% against greedy) a value can
  score well by recognising the stronger agent's seat from its style; only where
  it beats this baseline does it read the position. Games of an agent against
  itself have no such shortcut: with two players this baseline is then about 50%,
  with ``n`` it is the base rate ``(n - 1) / n`` of "every seat loses" (each seat
  wins about one game in ``n``), the bar a value must clear there. Those games
  are the test that matters for ``az``, whose search plays every seat with the
  same network.

Per predictor: sign accuracy on decisive rows (``sign(x) == result``; x == 0
counts half; a shared victory's co-winners, result 0, are left out) with a
Wilson 95% interval over positions *and* a 95% bootstrap interval over games
(1000 resamples of whole games, seed 0). Positions of one game are strongly
correlated (a game is won or lost once), so the Wilson interval is too narrow
and is shown only for reference: read the game bootstrap. Also the mean squared
error against the result (shared victories as 0) and the Pearson correlation.
Calibration tables: predictor bins -> mean result, each row with its positions,
its distinct games and a game-bootstrap interval of the mean.

Winner pick (every player count): at each main decision of a game won alone,
does the seat with the highest leaf value (:func:`agents.net.seat_values` of every
seat at once, the same numbers as ``leaf``) turn out to be the sole winner? A
tie at the top between ``k`` seats scores ``1/k`` if the winner is among them.
Games with a shared victory (no sole winner) and truncated games are left out
of this measure (counted in the report). Why: with ``n`` players "every seat
loses" is right ``(n - 1) / n`` of the time, so sign accuracy can look good, or
fall below that base rate, whatever the value knows; picking the winner has no
such shortcut. Shown next to two baselines with no network: the prestige
leader (the highest prestige; ties split evenly) and chance (``1 / n``), overall
and by the phases below, with the same game-bootstrap interval. With two
players it equals the leaf's (and the prestige leader the lead's) sign
accuracy on decisive games.

Phases: by turn number and by the leader's prestige (0-2, 3-5, 6-8, 9-11,
12-14, 15+). The turn bins are the same *rounds* for every player count: rounds
0-4, 5-9, 10-14, 15-19, 20+, that is turns 0-9, 10-19, 20-29, 30-39, 40+ with
two players (a 2-player game lasts about 50-60 turns), 0-14, ..., 60+ with
three and 0-19, ..., 80+ with four (:func:`turn_edges`). The turn says how much
of the game is left on average; the leader's prestige says how close *this*
game is to its end (15 starts the last round of a base game), which is what a
value must see, so both are reported.

Seeds: deals are seeded from ``--seed`` upwards (game ``g`` about ``seed + g``).
Training never used the default ``10**9``: self-play deals of
``configs/ppo_2p.yaml`` count up from 0 (under a million games), its pretraining
games start at 99, and its evaluations (which chose ``best.zip``) replay the
deals from ``10**6``, so ``10**6`` is *not* held out.

CLI::

    python -m training.value_report --games 300 --out results/value_report
    python -m training.value_report --agents ppo:ppo_2p ppo:ppo_2p --games 300
    python -m training.value_report --players 3 --games 300    # critic of ppo_base_3_4p
    python -m training.value_report --modules cities trading_posts orient strongholds --games 300
    python -m training.value_report --players 4 --model my_3_4p.zip --agents ppo:my_3_4p.zip greedy

Speed, one core: 300 2-player base games of ppo against greedy (or against itself)
play in about 2 s and the critic takes 1-2 s more (10 s with imports and model
loading); 3 and 4 players and module games take longer per game; an agent that
searches (``az``, ``mcts``) costs its own time per move.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents import build
from agents.base import Agent
from agents.net import seat_values
from agents.runner import play_batched, rotation_seating
from splendor_env import state as st
from splendor_env.observation import obs_dim, observe
from splendor_env.rules import terminal_rewards
from splendor_env.state import MAX_PLAYERS, PHASE, PHASE_MAIN, TURN
from training.common.cli import CliError, check_game_args, run_cli
from training.common.stats import bootstrap_counts, clean_number, percent, wilson

#: First deal seed by default: far from every seed the shipped models were trained or selected on.
DEFAULT_SEED = 10**9
#: Agent B by default; agent A is ``ppo:`` the game's shipped network (:func:`default_agents`).
DEFAULT_OPPONENT = "greedy"
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
# Playing and recording


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


def play_games(
    agents: tuple[Agent, Agent],
    games: int,
    seed: int = DEFAULT_SEED,
    batch: int = 100,
    max_turns: int | None = None,
    players: int = 2,
    modules: tuple[str, ...] | list[str] = (),
) -> Record:
    """Play ``games`` games of ``players`` with ``modules``, recording main decisions.

    Game ``g`` puts ``agents[0]`` in seat ``g % players`` and ``agents[1]`` in every
    other seat (:func:`agents.runner.rotation_seating`). ``max_turns`` overrides the
    env's turn cap (a game that reaches it is truncated).
    """
    from splendor_env.vector import SplendorBatch

    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    options: dict[str, Any] = {} if max_turns is None else {"max_turns": max_turns}
    n_seats = int(players)
    venv = SplendorBatch(min(games, batch), n_seats, seed=seed, copy=False, modules=tuple(modules), **options)
    dim = obs_dim(venv.modules)
    result = np.full((games, n_seats), np.nan)
    rows_game, rows_turn, rows_mover, rows_pts, rows_obs = [], [], [], [], []
    terminal = np.zeros(MAX_PLAYERS, dtype=np.float64)
    pts = [st.player_offset(p) + st.P_PRESTIGE for p in range(n_seats)]

    def before_round(slots: np.ndarray, numbers: np.ndarray, states: np.ndarray, player: np.ndarray) -> None:
        for b, g in zip(slots, numbers, strict=True):
            if states[b, PHASE] != PHASE_MAIN:
                continue
            views = np.empty((n_seats, dim), dtype=np.float32)
            for p in range(n_seats):
                observe(states[b], p, views[p])
            rows_obs.append(views)
            rows_game.append(g)
            rows_turn.append(states[b, TURN])
            rows_mover.append(player[b])
            rows_pts.append(states[b, pts])

    def on_end(game: int, _slot: int, final_state: np.ndarray, truncated: bool) -> None:
        if not truncated:
            terminal_rewards(final_state, terminal)
            result[game] = terminal[:n_seats]

    seating = rotation_seating(games, n_seats)  # A (agent 0) in seat g % n, B (agent 1) elsewhere
    play_batched(venv, agents, seating, np.random.default_rng([seed, 7]), on_end, before_round)
    n = len(rows_game)
    return Record(
        game=np.asarray(rows_game, dtype=np.int64).reshape(n),
        turn=np.asarray(rows_turn, dtype=np.int64).reshape(n),
        mover=np.asarray(rows_mover, dtype=np.int64).reshape(n),
        prestige=np.asarray(rows_pts, dtype=np.int64).reshape(n, n_seats),
        obs=np.stack(rows_obs) if rows_obs else np.zeros((0, n_seats, dim), np.float32),
        result=result,
        seating=seating,
        modules=tuple(venv.config.modules),
    )


def critic_values(policy: Any, observations: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``policy.predict_values`` of raw observations ``[N, D]`` -> ``float32[N]``, in batched torch calls."""
    import torch as th

    obs = np.asarray(observations, dtype=np.float32)
    out = np.empty(obs.shape[0], dtype=np.float32)
    with th.no_grad():
        for i in range(0, obs.shape[0], chunk):
            out[i : i + chunk] = policy.predict_values(th.as_tensor(obs[i : i + chunk])).numpy()[:, 0]
    return out


def attach_values(record: Record, policy: Any) -> Record:
    """Fill ``record.values`` ``[N, n]``: the critic's value of each seat's observation."""
    rows, seats, dim = record.obs.shape
    record.values = critic_values(policy, record.obs.reshape(rows * seats, dim)).reshape(rows, seats)
    return record


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
    """az's leaf value of every seat, per row of critic values ``[N, n]`` -> ``[N, n]``: :func:`agents.net.seat_values`.

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


#: Winner-pick predictors: the seat with the highest leaf value, and the prestige leader (a baseline, no network).
PICKS = ("leaf", "prestige")


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
        "sole winner (a k-way tie at the top counts 1/k); shared and truncated games left out",
        "chance": 1.0 / record.players,
        "games_scored": int(np.unique(p.game).size),
        "shared_left_out": int((done & ((res == 1).sum(axis=1) != 1)).sum()),
        "overall": {},
        "by_turn": {},
        "by_lead": {},
    }
    for kind in PICKS:
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


# ---------------------------------------------------------------------------
# Output


def _pct(x: float | None) -> str:
    return percent(x, "   -  ", "%")


def _ci(ci: list[float] | None) -> str:
    return "       -       " if not ci else f"[{100 * ci[0]:4.1f}, {100 * ci[1]:5.1f}]"


def _num(x: float | None, fmt: str = "+.3f") -> str:
    return "   -  " if x is None else format(x, fmt)


def _score_line(label: str, s: dict[str, Any], width: int = 10) -> str:
    return (
        f"  {label:<{width}} {s['positions']:>6} {s['games']:>5}  {_pct(s['sign_accuracy'])} "
        f"{_ci(s['sign_games95'])} {_ci(s['sign_wilson95'])}  {_num(s['mse'], '6.3f')}  {_num(s['corr'])}"
    )


def _winner_pick_lines(wp: dict[str, Any], n: int) -> list[str]:
    """The winner-pick table: leaf and prestige leader side by side, overall and by phase."""
    lines = [
        f"winner pick: is the seat with the highest leaf the sole winner? (k-way ties at the top count 1/k; "
        f"{wp['games_scored']} games won alone, {wp['shared_left_out']} shared left out)",
        f"  baselines: prestige = the prestige leader (ties split evenly), chance 1/{n} = {_pct(wp['chance']).strip()}",
        f"  {'phase':<5} {'bin':<6} {'rows':>6} {'games':>5}  {'leaf':>6} {'games 95% CI':<15}  "
        f"{'prestige':>8} {'games 95% CI'}",
    ]
    ov = wp["overall"]
    rows = [("all", "all", ov["leaf"], ov["prestige"])]
    for phase, key in (("turn", "by_turn"), ("lead", "by_lead")):
        rows += [(phase, a["bin"], a, b) for a, b in zip(wp[key]["leaf"], wp[key]["prestige"], strict=True)]
    for phase, label, a, b in rows:
        lines.append(
            f"  {phase:<5} {label:<6} {a['positions']:>6} {a['games']:>5}  {_pct(a['accuracy'])} "
            f"{_ci(a['games95'])}  {_pct(b['accuracy']):>8} {_ci(b['games95'])}"
        )
    return lines


def format_report(summary: dict[str, Any]) -> str:
    """The readable tables (what the CLI prints)."""
    from training.common.games import config_label

    gm = summary["games"]
    game = summary.get("game", {"players": 2, "modules": []})
    n = game["players"]
    # a 2-player base game prints as it always did; any other game is named in the header
    where = "" if n == 2 and not game["modules"] else f" of {config_label(n, game['modules'])}"
    seats = "seats alternated" if n == 2 else f"A in seat g % {n}, B in the others"
    seat_wins = ", ".join(f"seat {p}{' won' if p == 0 else ''} {gm[f'seat{p}_wins']}" for p in range(n))
    base = summary.get("agent_baseline", {"A": 1, "B": -1})
    if (base["A"], base["B"]) == (1, -1):
        who = "agent = +1 when A is on move"
    else:
        who = f"agent = {base['A']:+d} when A is on move, {base['B']:+d} when B is"
    if n == 2:
        defs = [
            "  value = critic V of a seat's observation (both seats); leaf = az's (V(on move) - V(other)) / 2;",
            f"  lead = prestige difference, {who} (baselines, no network);",
        ]
    else:
        defs = [
            "  value = critic V of a seat's observation (every seat); "
            "leaf = az's (V(on move) - mean V(others)) / 2;",
            f"  lead = prestige minus the best other seat's, {who} (baselines, no network);",
        ]
    lines = [
        f"value report: critic of {summary['model']}; {gm['played']} games{where} {summary['agents'][0]} (A) vs "
        f"{summary['agents'][1]} (B), {seats}, seeds from {summary['seed']}",
        f"  A won {gm['a_wins']}, B won {gm['b_wins']} ({seat_wins}), "
        f"shared {gm['shared']}, truncated (left out) "
        f"{gm['truncated']}; {summary['decisions']} main decisions",
        *defs,
        "  sign = sign(x) == result on decisive games (x == 0 counts half).",
        "  " + summary["caveat"] + ".",
    ]
    head = f"  {'':<10} {'rows':>6} {'games':>5}  {'sign':>6} {'games 95% CI':<15} {'Wilson 95% CI':<15}  {'MSE':>6}  {'corr':>6}"
    for title, key in (("overall", None), ("by turn", "by_turn"), ("by leader's prestige", "by_lead")):
        lines.append("")
        lines.append(f"{title}:")
        for kind in PREDICTORS:
            lines.append(f" {kind}:")
            lines.append(head)
            if key is None:
                lines.append(_score_line("all", summary["overall"][kind]))
            else:
                lines.extend(_score_line(r["bin"], r) for r in summary[key][kind])
    if "winner_pick" in summary:
        lines.append("")
        lines.extend(_winner_pick_lines(summary["winner_pick"], n))
    lines.append("")
    lines.append("raw value by the agent whose seat it rates:")
    lines.append(head.replace(f"{'':<10}", f"{'':<24}"))
    for label, s in summary["value_by_agent"].items():
        lines.append(_score_line(label[:24], s, 24))
    for kind, rows in summary["calibration"].items():
        lines.append("")
        lines.append(f"calibration of {kind} (bins of x -> mean result; win share = fraction of rows won):")
        lines.append(
            f"  {'bin':<14} {'rows':>6} {'games':>5}  {'mean x':>7} {'mean result':>11}  {'games 95% CI':<17} {'win share':>9}"
        )
        for r in rows:
            if not r["positions"]:
                continue
            ci = r["mean_result_games95"]
            lines.append(
                f"  {r['bin']:<14} {r['positions']:>6} {r['games']:>5}  {r['mean_x']:+7.3f} {r['mean_result']:+11.3f}  "
                f"[{ci[0]:+.3f}, {ci[1]:+.3f}] {_pct(r['win_share']):>9}"
            )
    return "\n".join(lines)


CSV_FIELDS = ("decisive_positions", "sign_accuracy", "mse", "corr", "mean")
#: phases.csv rows that carry a winner pick: the leaf's, and the prestige leader's on the ``lead`` rows.
CSV_PICKS = {"leaf": "leaf", "lead": "prestige"}


def write_outputs(summary: dict[str, Any], out: Path) -> list[Path]:
    """``value_report.json`` (everything), ``phases.csv`` and ``calibration.csv`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "value_report.json", out / "phases.csv", out / "calibration.csv"]
    paths[0].write_text(json.dumps(summary, indent=2) + "\n")
    with paths[1].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "phase",
                "bin",
                "predictor",
                "positions",
                "games",
                *CSV_FIELDS,
                "sign_games95_lo",
                "sign_games95_hi",
                "winner_pick_positions",
                "winner_pick",
                "winner_pick_games95_lo",
                "winner_pick_games95_hi",
            ]
        )
        wp = summary.get("winner_pick", {})
        for phase, key in (("all", None), ("turn", "by_turn"), ("lead", "by_lead")):
            for kind in PREDICTORS:
                rows = [{"bin": "all", **summary["overall"][kind]}] if key is None else summary[key][kind]
                pick = CSV_PICKS.get(kind)
                picks = None
                if pick in wp.get("overall", {}):
                    picks = [wp["overall"][pick]] if key is None else wp[key][pick]
                for i, r in enumerate(rows):
                    ci = r["sign_games95"] or [None, None]
                    wr = picks[i] if picks else {"positions": None, "accuracy": None, "games95": None}
                    wci = wr["games95"] or [None, None]
                    w.writerow(
                        [phase, r["bin"], kind, r["positions"], r["games"]]
                        + [clean_number(r[c]) for c in CSV_FIELDS]
                        + [clean_number(ci[0]), clean_number(ci[1])]
                        + [clean_number(wr["positions"]), clean_number(wr["accuracy"])]
                        + [clean_number(wci[0]), clean_number(wci[1])]
                    )
    with paths[2].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["predictor", "bin", "positions", "games", "mean_x", "mean_result", "win_share", "lo", "hi"]
        )
        for kind, rows in summary["calibration"].items():
            for r in rows:
                ci = r["mean_result_games95"] or [None, None]
                w.writerow(
                    [kind, r["bin"], r["positions"], r["games"]]
                    + [clean_number(r[c]) for c in ("mean_x", "mean_result", "win_share")]
                    + [clean_number(ci[0]), clean_number(ci[1])]
                )
    return paths


# ---------------------------------------------------------------------------
# CLI


def shipped(path: str) -> str:
    """``path`` as a file: a shipped name (``ppo_2p``) or an old ``models/ppo_2p.zip`` is the packaged model.

    Resolved by :func:`agents.models.resolve_model`, so the defaults work from any
    folder and from an installed wheel; a path that names nothing stays as given,
    for the file check to report.
    """
    from agents.models import resolve_model

    try:
        return str(resolve_model(path))
    except FileNotFoundError:
        return path


def load_critic(path: str, players: int = 2, modules: tuple[str, ...] | list[str] = ()) -> Any:
    """The policy whose critic is measured; refused (one line, naming model and game) unless a readable
    model trained for ``players`` with ``modules`` (the check :meth:`agents.ppo.PPOAgent.check_game` makes)."""
    from agents.ppo import PPOAgent, load_model
    from training.common.model_file import model_zip_problem

    path = shipped(path)
    problem = model_zip_problem(path)
    if problem:
        raise CliError(f"--model: {problem}")
    model = load_model(path)
    try:
        PPOAgent(path, model=model).check_game(players, tuple(modules))
    except ValueError as exc:
        raise CliError(f"--model: {exc}") from None
    return model.policy


def default_agents(players: int, modules: tuple[str, ...], model: str) -> list[str]:
    """``[ppo:<the game's shipped network>, greedy]`` (``ppo:<model>`` when no shipped network covers the game)."""
    from agents.models import default_model

    return [f"ppo:{default_model(players, modules) or model}", DEFAULT_OPPONENT]


def resolve_game_args(args: argparse.Namespace) -> None:
    """Check ``--players`` / ``--modules`` and fill in the defaults of ``--model`` and ``--agents`` for that game."""
    from agents.models import default_model, shipped_names
    from agents.ppo import describe_game

    check_game_args([args.players], args.modules)
    args.modules = list(st.module_names(st.parse_modules(tuple(args.modules))))  # the engine's order
    if args.model is None:
        args.model = default_model(args.players, tuple(args.modules))
        if args.model is None:
            raise CliError(
                f"--model: no shipped network covers {describe_game(args.players, args.modules)} "
                f"(shipped: {', '.join(shipped_names())}); pass --model PATH.zip"
            )
    if args.agents is None:
        args.agents = default_agents(args.players, tuple(args.modules), args.model)


def check_inputs(args: argparse.Namespace) -> tuple[tuple[Agent, Agent], Any]:
    """Refuse bad arguments before any game is played; returns the two agents and the critic policy.

    Fills in the game's default ``args.model`` and ``args.agents`` (:func:`resolve_game_args`).
    """
    from training.common.games import check_plays

    resolve_game_args(args)
    n, modules = args.players, tuple(args.modules)
    if args.games < 1:
        raise CliError(f"--games must be >= 1, got {args.games}")
    if not 0 <= args.seed <= 2**62 - args.games:
        raise CliError(f"--seed must be in 0..2**62 - games, got {args.seed}")
    if len(args.agents) != 2:
        raise CliError(f"--agents needs exactly two specs (A B), got {len(args.agents)}")
    if args.out is not None and Path(args.out).is_file():
        raise CliError(f"--out {args.out!r} is a file, not a folder")
    built = []
    for k, spec in enumerate(args.agents):
        try:
            agent = build(spec, seed=args.seed + k)
            check_plays(agent, spec, n, modules)
        except (ValueError, OSError) as exc:
            raise CliError(f"--agents {spec!r}: {str(exc).splitlines()[0]}") from None
        built.append(agent)
    return (built[0], built[1]), load_critic(args.model, n, modules)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(
        prog="python -m training.value_report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--players", type=int, default=2, help="players per game: 2, 3 or 4 (default 2)")
    ap.add_argument(
        "--modules",
        nargs="*",
        default=[],
        metavar="MODULE",
        help="Cities of Splendor modules of every game (cities trading_posts orient strongholds; default none)",
    )
    ap.add_argument(
        "--model",
        default=None,
        help="MaskablePPO .zip (or shipped name) whose critic is measured, trained for the game "
        "(default: the shipped network az uses for it, agents.models.default_model)",
    )
    ap.add_argument(
        "--agents",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="the two players A B: A in seat g %% players, B in the others "
        f"(default: ppo:<the game's shipped network> {DEFAULT_OPPONENT})",
    )
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="first deal seed (default: held out)")
    ap.add_argument("--out", default=None, help="write value_report.json, phases.csv, calibration.csv here")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    agents, policy = check_inputs(args)
    t0 = time.perf_counter()
    record = play_games(agents, args.games, args.seed, players=args.players, modules=tuple(args.modules))
    t_play = time.perf_counter() - t0
    attach_values(record, policy)
    summary = summarise(record, (args.agents[0], args.agents[1]), args.model, args.seed)
    summary["seconds"] = {"games": round(t_play, 1), "total": round(time.perf_counter() - t0, 1)}
    print(format_report(summary))
    print(f"\n({summary['seconds']['games']} s of games, {summary['seconds']['total']} s in all)")
    if args.out is not None:
        for path in write_outputs(summary, Path(args.out)):
            print(f"wrote {path}")
    return summary


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.value_report"))
