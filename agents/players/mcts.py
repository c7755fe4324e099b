"""Determinised Monte-Carlo tree search, single-observer ISMCTS (spec ``mcts:sims=400,c=1.0``).

Why: Splendor hides the deck order and the opponents' blind reservations, so the search starts
from a state determinised for the acting seat (the fairness rule: :mod:`agents.runner`) and
re-determinises it for every simulation; its move for a given seed is the same whatever the
hidden information was (tested). It walks the search's trees (:mod:`agents.search.tree`) with UCB1 and
rollouts (the evaluator below); how it searches and values a game: docs/agents.md ("How mcts searches").
Options: :data:`PARAMS`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from agents.base import Agent, search_inputs
from agents.options import typed_options
from agents.players.greedy import policy_action, random_legal
from agents.search.driver import run_budget
from agents.search.tree import Tree, backup, step_down
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import num_actions
from splendor_env.determinize import determinize_inplace
from splendor_env.observation import obs_dim, observe
from splendor_env.rng import rand_unit
from splendor_env.state import CURRENT, MAX_PLAYERS, N_PLAYERS, P_CARDS, P_PRESTIGE, P_TOKENS, player_offset

#: name -> (type, default, help) for every MCTS parameter.
PARAMS: dict[str, tuple[type, object, str]] = {
    "sims": (int, 400, "simulations per move (> 0); the budget unless ms is given"),
    "ms": (float, 0.0, "time budget in milliseconds per move (> 0 replaces sims; 0 = off)"),
    "max_ms": (
        float,
        0.0,
        "cap in milliseconds on a sims search: a move stops at its sims or at max_ms, whichever comes first (0 = no cap; not with ms)",
    ),
    "c": (float, 1.0, "UCB exploration constant (>= 0)"),
    "depth": (int, 200, "rollout cap in plies (>= 0); then the heuristic evaluation"),
    "eps": (float, 0.1, "share of uniformly random moves in greedy rollouts (0..1)"),
    "noise": (float, 0.3, "score jitter of the greedy rollout policy (>= 0)"),
    "rollout": (str, "greedy", "rollout policy: greedy or random"),
    "shaping": (float, 0.2, "weight of the material heuristic in a finished game's value (0..1)"),
    "widen": (float, 1.0, "progressive widening: at most 1 + widen * sqrt(visits) children (0 = off)"),
}

#: Largest tree of a time-budgeted search (one node per simulation).
MAX_TIMED_NODES = 20_000
#: Simulations between two looks at the clock with a time budget.
CHUNK = 16


def validate_params(params: dict[str, object]) -> dict[str, object]:
    """Typed, range-checked MCTS parameters (defaults filled in); clear errors otherwise."""
    out = typed_options("mcts parameter", PARAMS, params)
    checks = {
        "sims": out["sims"] > 0,
        "ms": out["ms"] >= 0,
        "max_ms": out["max_ms"] >= 0 and not (out["max_ms"] > 0 and out["ms"] > 0),
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
        raise ValueError(
            "mcts parameter(s) out of range: " + ", ".join(f"{k}={out[k]!r} ({PARAMS[k][2]})" for k in bad)
        )
    return out


# ---------------------------------------------------------------------------
# The rollout evaluator (numba): UCB1 with availability counts, progressive widening, rollouts


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
def rollout_value(s: np.ndarray, out: np.ndarray, shaping: float) -> None:
    """Value in [0, 1] for every seat after a rollout: the result if the game is over, else a heuristic.

    A finished game is worth ``(1 - shaping) * share + shaping * margin``, the share of the win:
    1 a sole winner, 1/k each of k co-winners, 1/n each seat of a truncated n-player game, 0 a
    loser. Why 1/k and not a flat 1/2: with 3-4 players a draw at 1/2 is worth more than a seat's
    fair 1/n, so a trailing seat would play for the turn cap. ``margin`` makes a lost game still
    prefer a closer loss; an unfinished one (depth cap) is worth ``margin``.
    """
    for p in range(MAX_PLAYERS):
        out[p] = 0.0
    _margins(s, out)
    if rules.is_over(s):
        n = s[N_PLAYERS]
        raw = np.zeros(MAX_PLAYERS)
        rules.terminal_rewards(s, raw)  # +1 sole winner, 0 co-winner or truncated, -1 loser
        sharing = 0
        for p in range(n):
            if raw[p] == 0.0:
                sharing += 1
        for p in range(n):
            share = 1.0 if raw[p] > 0.0 else (1.0 / sharing if raw[p] == 0.0 else 0.0)
            out[p] = (1.0 - shaping) * share + shaping * out[p]


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
            a = random_legal(mask, rng)
        rules.apply_action(s, a)


@njit(cache=True)
def _select_ucb(tree: tuple, node: int, mask: np.ndarray, player: int, c: float, rng: np.ndarray) -> int:
    """UCB1 over the children legal in this world (availability counts); -1 if none exists."""
    child, visits, avail, wsum = tree[0], tree[2], tree[3], tree[4]
    best_a = -1
    best_u = -1e18
    for a in range(mask.shape[0]):
        ch = child[node, a]
        if mask[a] and ch >= 0:
            u = wsum[ch, player] / visits[ch] + c * math.sqrt(math.log(avail[ch]) / visits[ch])
            u += 1e-9 * rand_unit(rng)
            if u > best_u:
                best_u = u
                best_a = a
    return best_a


@njit(cache=True)
def search_rollouts(
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
    tree: tuple,
    n_nodes_in: int,
    rng: np.ndarray,
    obs: np.ndarray,
) -> int:
    """``sims`` more UCB1 simulations with rollouts; returns the new node count.

    Expansion: one untried action per simulation, in the rollout policy's order of
    preference (greedy) or at random; a node visited ``N`` times has at most
    ``1 + widen * sqrt(N)`` children (``widen=0``: all).
    """
    child, visits, avail, paths, plens = tree[0], tree[2], tree[3], tree[7], tree[8]
    max_nodes = child.shape[0]
    na = child.shape[1]
    d = np.empty_like(root)
    mask = np.zeros(na, dtype=np.int8)
    untried_mask = np.zeros(na, dtype=np.int8)
    value = np.zeros(MAX_PLAYERS)
    n_nodes = n_nodes_in
    for _ in range(sims):
        d[:] = root
        determinize_inplace(d, seat, rng)
        node = 0
        plens[0] = 1
        paths[0, 0] = 0
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
                if greedy:
                    observe(d, player, obs)
                    a = policy_action(obs, untried_mask, rng, noise, 0.0)
                else:
                    a = random_legal(untried_mask, rng)
                n_nodes = step_down(tree, 0, d, node, a, n_nodes, False)
                break
            a = _select_ucb(tree, node, mask, player, c_uct, rng)
            if a < 0:  # node budget exhausted with only untried actions: roll out from here
                break
            step_down(tree, 0, d, node, a, n_nodes, False)
            node = child[node, a]
        rollout(d, depth, greedy, noise, eps, rng, obs, mask)
        rollout_value(d, value, shaping)
        backup(tree, 0, value, False, d[N_PLAYERS])
    return n_nodes


class MCTSAgent(Agent):
    """ISMCTS over the numba engine; ``act`` needs ``state=`` (already determinised: the fairness rule, :mod:`agents.runner`)."""

    name = "mcts"
    needs_state = True

    def __init__(self, seed: int | None = None, **params: object) -> None:
        super().__init__(seed)
        self.params = validate_params(params)
        self._trees: dict[int, tuple[Tree, np.ndarray]] = {}  # modules bit set -> (tree, observation buffer)
        self._timed_ready = False  # the search compiled before a timed move

    def _tree(self, modules: int) -> tuple[Tree, np.ndarray]:
        key = int(modules != 0)
        if key not in self._trees:
            sims = int(self.params["sims"])
            nodes = sims + 1 if self.params["ms"] == 0 else MAX_TIMED_NODES
            obs = np.empty(obs_dim(int(modules)), dtype=np.float32)
            self._trees[key] = (Tree.alone(nodes, num_actions(int(modules))), obs)
        return self._trees[key]

    def root_counts(self, state: np.ndarray) -> np.ndarray:
        """Root visit counts (the seat's mean value breaking ties) after one search from ``state``."""
        p = self.params
        s = np.ascontiguousarray(state, dtype=np.int32)
        seat = int(s[st.CURRENT])
        rng = np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)
        tree, obs = self._tree(int(s[st.MODULES]))
        tree.reset(seat)
        args = (float(p["c"]), int(p["depth"]), p["rollout"] == "greedy", float(p["noise"]), float(p["eps"]))
        args += (float(p["shaping"]), float(p["widen"]), tree.arrays)

        def run(k: int, n: int) -> int:
            return search_rollouts(s, seat, k, *args, n, rng, obs)

        if p["ms"] > 0 and not self._timed_ready:
            run(1, 1)  # one simulation, then an empty tree again: numba compiles (or loads) the search
            tree.reset(seat)
            self._timed_ready = True
        tree.used = run_budget(
            run, int(p["sims"]), float(p["ms"]), CHUNK, tree.max_nodes, max_ms=float(p["max_ms"])
        )
        actions, visits, values = tree.root_stats(seat)
        counts = np.zeros(tree.num_actions)
        counts[actions] = visits + values / (visits + 1.0)  # visits, the mean value breaking ties
        return counts

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        s, legal, mask = search_inputs("MCTSAgent", state, action_mask)
        if legal.size == 1:
            return int(legal[0])
        counts = self.root_counts(s)
        return int(np.argmax(np.where(mask != 0, counts, -1.0)))

    def __repr__(self) -> str:
        return f"MCTSAgent({', '.join(f'{k}={v}' for k, v in self.params.items())})"


__all__ = ["PARAMS", "MCTSAgent", "rollout", "rollout_value", "validate_params"]
