"""Determinised Monte-Carlo tree search (single-observer ISMCTS) over the engine.

Why this shape: Splendor hides the deck order and the opponents' blind
reservations, so a search agent must not simulate from the true state. The
caller (the tournament glue, :func:`training.tournament.agent_state`) hands
:meth:`MCTSAgent.act` a state that was already passed through
:func:`splendor_env.determinize.determinize` for the acting seat, and the
search itself re-determinises that state for every simulation. Because
``determinize`` depends only on the seat's view and the random stream, the
chosen move for a given seed is exactly the same whatever the hidden
information of the input was (tested).

One decision (all inside one numba call, :func:`search`):

* each of ``sims`` iterations samples a determinisation, descends the shared
  tree (nodes are keyed by action sequence; UCB1 with availability counts
  over the actions legal in this determinisation, exploration ``c``), expands
  one untried action, then plays a rollout;
* expansion follows the rollout policy's order of preference (the greedy
  heuristic restricted to the untried actions), with progressive widening: a
  node visited ``N`` times has at most ``1 + widen * sqrt(N)`` children, so
  the budget goes to plausible moves first (``widen=0``: all children);
* the rollout policy is the greedy heuristic of :mod:`agents.greedy` with a
  score jitter (``noise``) and an ``eps`` share of uniformly random moves
  (``rollout="random"``: uniform moves and random expansion order), for at
  most ``depth`` plies;
* values are vectors in [0, 1], one entry per seat (max^n style): a node's
  selection uses the entry of the seat on move there, so 2, 3 and 4 players
  are all handled, and discard / noble sub-decisions belong to the same seat;
* a finished game is worth ``(1 - shaping) * share + shaping * margin``, the
  share being 1 for a sole winner, ``1/k`` for each of ``k`` co-winners, 0
  for losers (``1/n`` each on truncation); ``margin`` is
  ``sigmoid((h_p - max_{q != p} h_q) / 3)`` with the material heuristic
  ``h = prestige + 0.3 * cards + 0.04 * gems + 0.08 * gold``, so a lost game
  still prefers a closer loss; at the depth cap the value is ``margin``;
* the move played is the most visited root action.

Module games (any combination of the Cities of Splendor modules, 2-4
players) use the same search: the tree's action space is the module table
(``NUM_ACTIONS_ALL`` ids, one node per decision, so a turn's sub-decisions
such as a stronghold placement or a pair host are tree levels of the same
seat), :func:`~splendor_env.determinize.determinize_inplace` also resamples
the Orient decks, Orient blind reserves and other seats' drawn cards, and the
rollout policy is the module heuristic of :mod:`agents.greedy`
(:func:`agents.greedy.policy_action` picks the kernel by the mask length). A
base game runs exactly as before (same tree size, same random stream).

Default budget: ``sims=400``, tens of milliseconds per move on one core
(``python -m training.bench_policies``); it beats ``greedy`` in about 90% of
two-player games. With all four modules a move takes about 150 ms (longer
games, a larger observation and mask) and it beat ``greedy`` in 195 of 200
two-player games (``python -m training.evaluate mcts --opponents greedy
--games 200 --modules cities trading_posts orient strongholds``).

Parameters (spec ``mcts:sims=400,c=1.0``): see :data:`PARAMS`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS, NUM_ACTIONS_ALL
from splendor_env.determinize import determinize_inplace
from splendor_env.observation import OBS_DIM, OBS_DIM_ALL, observe
from splendor_env.rng import rand_unit
from splendor_env.state import (
    CURRENT,
    MAX_PLAYERS,
    MODULES,
    N_PLAYERS,
    OUTCOME,
    P_CARDS,
    P_PRESTIGE,
    P_TOKENS,
    PHASE,
    PHASE_GAME_OVER,
    player_offset,
)

from .base import Agent, search_inputs, typed_options
from .greedy import _random_legal, policy_action

#: name -> (type, default, check, help) for every MCTS parameter.
PARAMS: dict[str, tuple[type, object, str]] = {
    "sims": (int, 400, "simulations per move (> 0)"),
    "c": (float, 1.0, "UCB exploration constant (>= 0)"),
    "depth": (int, 200, "rollout cap in plies (>= 0); then the heuristic evaluation"),
    "eps": (float, 0.1, "share of uniformly random moves in greedy rollouts (0..1)"),
    "noise": (float, 0.3, "score jitter of the greedy rollout policy (>= 0)"),
    "rollout": (str, "greedy", "rollout policy: greedy or random"),
    "shaping": (float, 0.2, "weight of the material heuristic in a finished game's value (0..1)"),
    "widen": (float, 1.0, "progressive widening: at most 1 + widen * sqrt(visits) children (0 = off)"),
}


@njit(cache=True)
def evaluate(s: np.ndarray, out: np.ndarray, shaping: float) -> None:
    """Value in [0, 1] for every seat: the result if the game is over, else a heuristic."""
    n = s[N_PLAYERS]
    for p in range(MAX_PLAYERS):
        out[p] = 0.0
    _margins(s, out)
    if rules.is_over(s):
        k = 0
        for p in range(n):
            k += s[OUTCOME + p]
        for p in range(n):
            share = 1.0 / n if s[PHASE] != PHASE_GAME_OVER else (1.0 / k if s[OUTCOME + p] == 1 else 0.0)
            out[p] = (1.0 - shaping) * share + shaping * out[p]


@njit(cache=True)
def _margins(s: np.ndarray, out: np.ndarray) -> None:
    """``sigmoid((h_p - max_{q != p} h_q) / 3)`` per seat, ``h`` the material heuristic."""
    n = s[N_PLAYERS]
    h = np.zeros(MAX_PLAYERS)
    for p in range(n):
        po = player_offset(p)
        gems = 0
        for c in range(5):
            gems += s[po + P_TOKENS + c]
        h[p] = s[po + P_PRESTIGE] + 0.3 * s[po + P_CARDS] + 0.04 * gems + 0.08 * s[po + P_TOKENS + 5]
    for p in range(n):
        best_other = -1e9
        for q in range(n):
            if q != p and h[q] > best_other:
                best_other = h[q]
        out[p] = 1.0 / (1.0 + math.exp(-(h[p] - best_other) / 3.0))


@njit(cache=True)
def rollout(
    s: np.ndarray,
    depth: int,
    greedy: bool,
    noise: float,
    eps: float,
    rng: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    """Play ``s`` forward in place for at most ``depth`` plies with the rollout policy."""
    for _ in range(depth):
        if rules.is_over(s):
            return
        p = s[CURRENT]
        rules.legal_mask(s, mask)
        if greedy:
            observe(s, p, obs)
            a = policy_action(obs, mask, rng, noise, eps)
        else:
            a = _random_legal(mask, rng)
        rules.apply_action(s, a)


@njit(cache=True)
def search(
    root: np.ndarray,
    seat: int,
    sims: int,
    c_uct: float,
    depth: int,
    greedy: bool,
    noise: float,
    eps: float,
    shaping: float,
    widen: float,
    rng: np.ndarray,
) -> np.ndarray:
    """ISMCTS from ``root`` for ``seat``; returns the visit count of every root action."""
    max_nodes = sims + 1
    na = NUM_ACTIONS if root[MODULES] == 0 else NUM_ACTIONS_ALL
    child = np.full((max_nodes, na), -1, dtype=np.int32)
    visits = np.zeros(max_nodes)
    avail = np.zeros(max_nodes)
    wsum = np.zeros((max_nodes, MAX_PLAYERS))
    path = np.empty(max_nodes + 1, dtype=np.int32)
    d = np.empty_like(root)
    mask = np.zeros(na, dtype=np.int8)
    untried_mask = np.zeros(na, dtype=np.int8)
    obs = np.empty(OBS_DIM if na == NUM_ACTIONS else OBS_DIM_ALL, dtype=np.float32)
    value = np.zeros(MAX_PLAYERS)
    n_nodes = 1
    for _ in range(sims):
        d[:] = root
        determinize_inplace(d, seat, rng)
        node = 0
        plen = 1
        path[0] = 0
        while not rules.is_over(d):
            rules.legal_mask(d, mask)
            player = d[CURRENT]
            untried = 0
            tried = 0
            for a in range(na):
                untried_mask[a] = 0
                if mask[a]:
                    ch = child[node, a]
                    if ch < 0:
                        untried += 1
                        untried_mask[a] = 1
                    else:
                        tried += 1
                        avail[ch] += 1.0
            limit = na if widen <= 0.0 else 1.0 + widen * math.sqrt(visits[node])
            if untried > 0 and n_nodes < max_nodes and (tried == 0 or tried < limit):
                if greedy:  # expand in the rollout policy's order of preference
                    observe(d, player, obs)
                    a = policy_action(obs, untried_mask, rng, noise, 0.0)
                else:
                    a = _random_legal(untried_mask, rng)
                child[node, a] = n_nodes
                avail[n_nodes] = 1.0
                node = n_nodes
                n_nodes += 1
                rules.apply_action(d, a)
                path[plen] = node
                plen += 1
                break
            best = -1
            best_a = -1
            best_u = -1e18
            for a in range(na):
                ch = child[node, a]
                if mask[a] and ch >= 0:
                    u = wsum[ch, player] / visits[ch] + c_uct * math.sqrt(math.log(avail[ch]) / visits[ch])
                    u += 1e-9 * rand_unit(rng)
                    if u > best_u:
                        best_u = u
                        best = ch
                        best_a = a
            if best < 0:  # node budget exhausted with only untried actions: roll out from here
                break
            rules.apply_action(d, best_a)
            node = best
            path[plen] = node
            plen += 1
        rollout(d, depth, greedy, noise, eps, rng, obs, mask)
        evaluate(d, value, shaping)
        for i in range(plen):
            nd = path[i]
            visits[nd] += 1.0
            for p in range(MAX_PLAYERS):
                wsum[nd, p] += value[p]
    counts = np.zeros(na)
    for a in range(na):
        ch = child[0, a]
        if ch >= 0:
            counts[a] = visits[ch] + wsum[ch, seat] / (visits[ch] + 1.0)  # visits, value as tie-break
    return counts


def validate_params(params: dict[str, object]) -> dict[str, object]:
    """Typed, range-checked MCTS parameters (defaults filled in); clear errors otherwise."""
    out = typed_options("mcts parameter", PARAMS, params)
    checks = {
        "sims": out["sims"] > 0,
        "c": out["c"] >= 0,
        "depth": out["depth"] >= 0,
        "eps": 0 <= out["eps"] <= 1,
        "noise": out["noise"] >= 0,
        "rollout": out["rollout"] in ("greedy", "random"),
        "shaping": 0 <= out["shaping"] <= 1,
        "widen": out["widen"] >= 0,
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise ValueError(f"mcts parameter(s) out of range: {', '.join(f'{k}={out[k]!r}' for k in bad)}")
    return out


class MCTSAgent(Agent):
    """ISMCTS over the numba engine; ``act`` needs ``state=`` (already determinised, see module docstring)."""

    name = "mcts"
    needs_state = True

    def __init__(self, seed: int | None = None, **params: object) -> None:
        super().__init__(seed)
        self.params = validate_params(params)

    def root_counts(self, state: np.ndarray) -> np.ndarray:
        """Root visit counts for the seat on move in ``state`` (one search)."""
        p = self.params
        s = np.ascontiguousarray(state, dtype=np.int32)
        rng = np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)
        return search(
            s,
            int(s[st.CURRENT]),
            int(p["sims"]),
            float(p["c"]),
            int(p["depth"]),
            p["rollout"] == "greedy",
            float(p["noise"]),
            float(p["eps"]),
            float(p["shaping"]),
            float(p["widen"]),
            rng,
        )

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        s, legal, mask = search_inputs("MCTSAgent", state, action_mask)
        if legal.size == 1:
            return int(legal[0])
        counts = self.root_counts(s)
        return int(np.argmax(np.where(mask != 0, counts, -1.0)))

    def __repr__(self) -> str:
        return f"MCTSAgent({', '.join(f'{k}={v}' for k, v in self.params.items())})"
