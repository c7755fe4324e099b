"""The agents the server seats: every search held to ``--max-ms-per-move`` while it runs.

Why here: :func:`training.app.checks.check_seat` refuses a spec whose budget
looks beyond the cap, but that is an estimate (``SIMS_PER_MS``), and a slower
or busier machine makes it wrong; a server left running must not let one seat
hold a core for longer than the cap. The search agents (``mcts``, ``az``)
take either a simulation budget (``sims``) or a clock (``ms``), and a clock
*replaces* the simulations (:func:`agents.search.run_budget`: a timed search
runs until its time is up or its tree is nearly full), so adding ``ms`` to a
``sims`` seat would spend the whole cap on every move. Instead a ``sims``
seat here runs a timed search (``ms`` = the cap) on a tree sized for its
simulations: the search ends after its ``sims`` simulations (rounded up to
the search's chunk, a few more late in a game, where a simulation may end the
game without adding a node) or at the cap, whichever comes first. Until the
cap is reached it is the search the spec asks for, seeded as any seat. A seat
given ``ms`` (at most the cap, checked) runs as it is. ``az``'s early stop
(``stop``) has no effect under the clock (a timed search never stops early),
so such a seat runs all its simulations: the same move, a little later.

Agents that do not search spend a fixed, small time a move (docs/app.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import agents
from agents.az import AZAgent, parse_az_spec
from agents.mcts import CHUNK, MCTSAgent
from agents.options import parse_options
from agents.search import Tree
from splendor_env.actions import num_actions
from splendor_env.observation import obs_dim


class CappedMCTS(MCTSAgent):
    """``mcts`` with ``sims`` that stops at its simulations or after ``cap_ms``, whichever comes first."""

    def __init__(self, seed: int | None = None, cap_ms: float = 5000.0, **params: object) -> None:
        if "ms" in params:
            raise ValueError("CappedMCTS is for a sims budget: a seat given ms runs as plain mcts")
        super().__init__(seed, ms=float(cap_ms), **params)
        # No warm-up simulation before the first move (it would draw from the search's random
        # stream): the moves are then those of plain mcts with the same sims and seed.
        self._timed_ready = True

    def _tree(self, modules: int) -> tuple[Tree, np.ndarray]:
        """A timed search's tree, room for ``sims`` simulations (one node each) and one chunk more:
        run_budget stops a timed search once fewer than a chunk of nodes are left."""
        key = int(modules != 0)
        if key not in self._trees:
            nodes = int(self.params["sims"]) + 1 + CHUNK
            obs = np.empty(obs_dim(int(modules)), dtype=np.float32)
            self._trees[key] = (Tree(nodes, num_actions(int(modules))), obs)
        return self._trees[key]


class CappedAZ(AZAgent):
    """``az`` with a simulation budget that stops at its simulations or after ``cap_ms``, whichever comes first."""

    def __init__(
        self, path: str | None = None, seed: int | None = None, cap_ms: float = 5000.0, **params: object
    ) -> None:
        if "ms" in params:
            raise ValueError("CappedAZ is for a sims budget: a seat given ms runs as plain az")
        super().__init__(path, seed=seed, ms=float(cap_ms), **params)

    def _tree(self, num_actions: int, p: dict[str, object]) -> Tree:
        """The tree an untimed search of ``sims`` plus one chunk (``4 * batch``, as root_visits drives it) gets."""
        chunk = 4 * int(p["batch"])  # type: ignore[call-overload]
        return super()._tree(num_actions, {**p, "ms": 0.0, "sims": int(p["sims"]) + chunk})  # type: ignore[call-overload]


def build_seat(spec: str, seed: int, cap_ms: float) -> Any:
    """The agent for a checked seat spec (:func:`training.app.checks.check_seat`), seeded;
    a search given ``sims`` (or its default) is held to ``cap_ms`` a move (:class:`CappedMCTS`, :class:`CappedAZ`)."""
    name, rest = agents.parse_spec(spec)
    if name == "mcts":
        options = parse_options(rest)
        if "ms" not in options:
            return CappedMCTS(seed, cap_ms=cap_ms, **options)
    if name == "az":
        path, options = parse_az_spec(rest)
        if "ms" not in options:
            return CappedAZ(path, seed=seed, cap_ms=cap_ms, **options)
    return agents.build(spec, seed=seed)


def clock_ms(agent: Any) -> float | None:
    """The most a seat's agent searches a move (ms), or ``None`` for an agent that does not search."""
    if isinstance(agent, (MCTSAgent, AZAgent)):
        return float(agent.params["ms"])
    return None
