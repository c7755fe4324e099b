"""Determinised Monte-Carlo tree search, single-observer ISMCTS (spec ``mcts:sims=400,c=1.0``).

Why: Splendor hides the deck order and the opponents' blind reservations, so the search starts
from a state determinised for the acting seat (the fairness rule: :mod:`agents.runner`) and
re-determinises it for every simulation; its move for a given seed is the same whatever the
hidden information was (tested). It is the shared search core (:mod:`agents.search`) with the
rollout evaluator; how it searches and values a game: docs/agents.md ("How mcts searches").
Options: :data:`PARAMS`.
"""

from __future__ import annotations

import numpy as np

from splendor_env import state as st
from splendor_env.actions import num_actions
from splendor_env.observation import obs_dim

from .base import Agent, search_inputs
from .options import typed_options
from .search import Tree, rollout, rollout_value, run_budget, search_rollouts, warm_up

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
            self._trees[key] = (Tree(nodes, num_actions(int(modules))), obs)
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
            warm_up(run, tree, seat)
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
