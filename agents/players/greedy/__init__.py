"""The greedy agent (spec ``greedy``): a one-ply heuristic over the observation and the mask only.

Two numba kernels, one per action table (:mod:`.base` for the base game, :mod:`.modules` for
Cities of Splendor games), share their common steps (:mod:`.steps`); :func:`policy_action` picks
the kernel by the mask's length and is also the rollout policy of :mod:`agents.players.mcts`. What the
heuristic does and why: docs/agents.md ("The greedy heuristic").
"""

from __future__ import annotations

from agents.players.greedy.agent import GreedyAgent, policy_action
from agents.players.greedy.base import heuristic_action
from agents.players.greedy.modules import module_action
from agents.players.greedy.steps import random_legal

__all__ = ["GreedyAgent", "heuristic_action", "module_action", "policy_action", "random_legal"]
