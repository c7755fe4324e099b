"""Determinised Monte-Carlo tree search (single-observer ISMCTS) over the engine.

Why this shape: Splendor hides the deck order and the opponents' blind
reservations, so a search agent must not simulate from the true state. The
caller (the runner, :func:`agents.runner.decision_state`) hands
:meth:`MCTSAgent.act` a state that was already passed through
:func:`splendor_env.determinize.determinize` for the acting seat, and the
search itself re-determinises that state for every simulation. Because
``determinize`` depends only on the seat's view and the random stream, the
chosen move for a given seed is exactly the same whatever the hidden
information of the input was (tested).

One decision runs the shared search core (:mod:`agents.search`) with the
rollout evaluator (:func:`agents.search.search_rollouts`):

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
  share of the win (from :func:`splendor_env.rules.terminal_rewards`): 1 for a
  sole winner, 1/k for each of k co-winners, 1/n for each seat of a truncated
  n-player game, 0 for losers; ``margin`` is
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
(``python -m training.bench.policies``); it beats ``greedy`` in about 90% of
two-player games. With all four modules a move takes about 150 ms (longer
games, a larger observation and mask) and it beat ``greedy`` in 195 of 200
two-player games (``python -m training.evaluate mcts --opponents greedy
--games 200 --modules cities trading_posts orient strongholds``).

Budget: ``sims`` simulations, or ``ms`` milliseconds per move (then the search
runs in chunks of 16 simulations until the time is up, and is no longer
reproducible from the seed alone).

Parameters (spec ``mcts:sims=400,c=1.0``): see :data:`PARAMS`.
"""

from __future__ import annotations

import numpy as np

from splendor_env import state as st
from splendor_env.actions import num_actions
from splendor_env.observation import obs_dim

from .base import Agent, search_inputs, typed_options
from .search import Tree, rollout, rollout_value, run_budget, search_rollouts, warm_up

#: name -> (type, default, help) for every MCTS parameter.
PARAMS: dict[str, tuple[type, object, str]] = {
    "sims": (int, 400, "simulations per move (> 0); the budget unless ms is given"),
    "ms": (float, 0.0, "time budget in milliseconds per move (> 0 replaces sims; 0 = off)"),
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
        tree.used = run_budget(run, int(p["sims"]), float(p["ms"]), CHUNK, tree.max_nodes)
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
