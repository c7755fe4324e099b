"""One opponent pool and one reward routing, for every learner that plays against opponents.

Why here: self-play training (:class:`training.ppo.vec_env.SelfPlayVecEnv`, batched)
and the Gymnasium views (:mod:`agents.gym_view`, :mod:`agents.gym_vector`) all seat a
learner against opponents drawn from weighted specs; all draw from an :class:`OpponentPool`
and credit the learner through a :class:`LearnerReward`, so none can drift from the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import check_game
from agents.registry import build
from agents.runner import label_of

SNAPSHOTS = "snapshots"

#: An entry of the pool: ``(spec or agent, weight, final weight or None)``.
PoolEntry = tuple[Any, float, float | None]


@dataclass
class PoolSlot:
    """One pool entry: a fixed agent, or the snapshot family (``agent_index == -1``)."""

    spec: str
    weight: float
    final_weight: float
    agent_index: int = -1  # index into OpponentPool.agents (fixed agents only)

    def weight_at(self, progress: float) -> float:
        """The entry's weight at ``progress`` (0 = start of training, 1 = end): linear in between."""
        return self.weight + (self.final_weight - self.weight) * progress


class OpponentPool:
    """Weighted opponent entries, drawn per opponent seat.

    Entries are ``(spec, weight, final_weight)``: a spec string
    (:func:`agents.build`), an :class:`~agents.base.Agent` instance, or
    ``"snapshots"`` (the family of frozen learner copies added by
    :meth:`add_snapshot`, drawn uniformly among the newest ``max_snapshots``).
    Weights move linearly from ``weight`` to ``final_weight`` as ``progress``
    goes from 0 to 1 (training's schedule); ``final_weight=None`` keeps the
    weight fixed. Fixed agents are built in entry order with seeds ``seed, seed + 1, ...``
    (``seed`` ``None`` counts as 0); draws use ``rng`` (``default_rng(seed)``)
    unless a caller passes its own generator.
    """

    def __init__(
        self,
        entries: Sequence[PoolEntry],
        max_snapshots: int = 10,
        snapshot_deterministic: bool = False,
        seed: int | None = None,
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.seed = 0 if seed is None else seed
        self.agents: list[Any] = []
        self.labels: list[str] = []
        self.slots: list[PoolSlot] = []
        for spec, weight, final_weight in entries:
            label = label_of(spec)
            if float(weight) < 0 or (final_weight is not None and float(final_weight) < 0):
                raise ValueError(
                    f"opponent pool weights must be >= 0, got {label!r}: {weight} -> {final_weight}"
                )
            slot = PoolSlot(label, float(weight), float(weight if final_weight is None else final_weight))
            if not (isinstance(spec, str) and spec == SNAPSHOTS):
                slot.agent_index = self._add_agent(build(spec, seed=self.seed + len(self.agents)), label)
            self.slots.append(slot)
        self.max_snapshots = max_snapshots
        self.snapshot_deterministic = snapshot_deterministic
        self.snapshot_paths: list[str] = []
        self._snapshot_indices: list[int] = []  # agent indices of the active snapshots
        self.progress = 0.0

    def _add_agent(self, agent: Any, label: str) -> int:
        self.agents.append(agent)
        self.labels.append(label)
        return len(self.agents) - 1

    def add_snapshot(self, path: str | Path, agent: Any = None) -> None:
        """Freeze a saved learner checkpoint (or ``agent``) as an opponent; only the newest
        ``max_snapshots`` stay drawable. Evicted ones stay in :attr:`agents`: games in progress may use them."""
        if agent is None:
            from agents.players.ppo import PPOAgent

            agent = PPOAgent(
                path, deterministic=self.snapshot_deterministic, seed=self.seed + 1000 + len(self.agents)
            )
        self._snapshot_indices.append(self._add_agent(agent, SNAPSHOTS))
        self.snapshot_paths.append(str(path))
        del self._snapshot_indices[: -self.max_snapshots]
        del self.snapshot_paths[: -self.max_snapshots]

    @property
    def snapshot_indices(self) -> list[int]:
        """Agent indices of the drawable snapshots, oldest first."""
        return list(self._snapshot_indices)

    def weights(self) -> np.ndarray:
        """Current entry probabilities (the schedule at :attr:`progress`; no snapshot saved = 0)."""
        w = np.array([s.weight_at(self.progress) for s in self.slots])
        for i, s in enumerate(self.slots):
            if s.agent_index < 0 and not self._snapshot_indices:
                w[i] = 0.0
        if w.sum() <= 0:
            raise RuntimeError("opponent pool has no drawable entry (only 'snapshots' and none saved yet?)")
        return w / w.sum()

    def draw(self, n: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """``n`` opponent agent indices, drawn with ``rng`` (default: the pool's own)."""
        rng = self.rng if rng is None else rng
        entry = rng.choice(len(self.slots), size=n, p=self.weights())
        out = np.empty(n, dtype=np.int64)
        for i, e in enumerate(entry):
            slot = self.slots[e]
            if slot.agent_index < 0:
                out[i] = self._snapshot_indices[rng.integers(len(self._snapshot_indices))]
            else:
                out[i] = slot.agent_index
        return out

    def reseed(self, rng: np.random.Generator) -> None:
        """Reseed every agent from ``rng`` (an episode reproducible from its seed)."""
        for agent in self.agents:
            if hasattr(agent, "seed"):
                agent.seed(int(rng.integers(2**63 - 1)))

    def check_game(self, num_players: int, modules: Sequence[str] = ()) -> None:
        """Refuse, naming the agent, a fixed opponent that cannot play this game (snapshots are the learner's)."""
        for label, agent in zip(self.labels, self.agents, strict=True):
            if label != SNAPSHOTS:
                check_game(agent, label, tuple(modules), num_players)


class LearnerReward:
    """The learner's reward for one step in each of ``size`` games.

    The reward for one of the learner's steps is its own move's reward plus the
    reward its seat gets on every opponent move that follows, until it is on
    move again or the game ends. A game that ends on an opponent's move is
    credited to the learner (the classic self-play bug is to drop it); moves
    after the end (a new game already dealt in the same slot) are not. Create one per learner step; call :meth:`credit` after every engine step
    of it (the learner's own move, then each opponent move).
    """

    def __init__(self, size: int) -> None:
        self.reward = np.zeros(size, dtype=np.float64)
        self.done = np.zeros(size, dtype=bool)

    def credit(self, ids: np.ndarray, seat_rewards: np.ndarray, ended: np.ndarray) -> np.ndarray:
        """Add the learner seat's rewards ``seat_rewards`` of the move just played in games ``ids``
        (``ended``: that move ended the game); returns the games that ended now.

        A game already ended in this step is skipped: its slot holds the next game.
        """
        ids = np.asarray(ids)
        live = ~self.done[ids]
        self.reward[ids] += np.where(live, seat_rewards, 0.0)
        newly = ids[np.asarray(ended, dtype=bool) & live]
        self.done[newly] = True
        return newly


__all__ = ["SNAPSHOTS", "LearnerReward", "OpponentPool", "PoolEntry", "PoolSlot"]
