"""The agents a worker process builds once and reuses for every job it runs.

Why its own module: :mod:`training.common.jobs` says where jobs run and with which seeds;
what a job keeps between calls in its process is another concern, shared by the
tournaments, evaluations and search self-play.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class AgentCache:
    """Agents built once per worker process and reused by every job it runs, the oldest dropped first.

    Why: building an agent can cost a second or more (loading a network), and a
    worker runs many jobs of the same agents. The key says what makes two agents
    the same (a spec and a seat, a network digest and options); the caller
    reseeds an agent before each game, so reuse never changes a result.
    """

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._agents: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The agent cached under ``key``, built by ``build()`` the first time."""
        if key in self._agents:
            self._agents.move_to_end(key)
            return self._agents[key]
        while len(self._agents) >= self.capacity:
            self._agents.popitem(last=False)
        self._agents[key] = agent = build()
        return agent

    def __len__(self) -> int:
        return len(self._agents)


#: The one per-process agent cache of every job runner (tournaments, evaluations, search self-play).
WORKER_AGENTS = AgentCache()
