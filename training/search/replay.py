"""Self-play positions in one form, from a finished game to a training batch, and the replay buffer.

Why one form: a position is written down once, when its game ends
(:func:`training.search.selfplay.play_selfplay_game`), as a row of
:data:`Positions`: a dict of numpy arrays, one per field of :data:`FIELDS`, in
the dtypes of :data:`DTYPES`. A job's games, an iteration's jobs, the buffer's
ring, its saved ``.npz`` and every training batch are that same dict (the
buffer holds one of ``capacity`` rows); only the loss turns a batch into
tensors (:func:`training.search.learner.losses`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: A batch of positions: field name -> one array whose first axis is the position.
Positions = dict[str, np.ndarray]

#: Each field and its dtype: the observation of the seat on move, its legal mask, the policy target
#: (visit shares over the legal ids), that seat's result, the search's value of the position for it
#: (``q``), the seat, and the position's place in its game (``phase``: decision index / decisions).
DTYPES: dict[str, type] = {
    "obs": np.float32,
    "mask": np.bool_,
    "policy": np.float32,
    "value": np.float32,
    "q": np.float32,
    "seat": np.int8,
    "phase": np.float32,
}
FIELDS = tuple(DTYPES)


def empty_positions(n: int, obs_dim: int, num_actions: int) -> Positions:
    """``n`` zeroed positions of a game with ``obs_dim`` observation floats and ``num_actions`` ids."""
    widths = {"obs": (obs_dim,), "mask": (num_actions,), "policy": (num_actions,)}
    return {name: np.zeros((n, *widths.get(name, ())), dtype) for name, dtype in DTYPES.items()}


def concat(parts: list[Positions]) -> Positions:
    """Positions of several games (or jobs) as one batch."""
    return {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}


def count(positions: Positions) -> int:
    """How many positions a batch holds."""
    return len(positions["value"])


class ReplayBuffer:
    """The last ``capacity`` positions in fixed numpy arrays (a ring: the oldest are overwritten)."""

    def __init__(self, capacity: int, obs_dim: int, num_actions: int) -> None:
        self.capacity = capacity
        self.arrays = empty_positions(capacity, obs_dim, num_actions)
        self.pos = 0  # next row written
        self.size = 0
        self.added = 0  # positions ever added (the oldest-out count is added - size)

    def add(self, data: Positions) -> None:
        """Append positions; past ``capacity`` the oldest are dropped (a batch larger than it keeps its tail)."""
        k = count(data)
        skip = max(0, k - self.capacity)
        rows = (self.pos + np.arange(k - skip)) % self.capacity
        for name, arr in self.arrays.items():
            arr[rows] = data[name][skip:]
        self.pos = int((self.pos + k - skip) % self.capacity)
        self.size = min(self.capacity, self.size + k - skip)
        self.added += k

    def get(self, idx: np.ndarray) -> Positions:
        """The rows ``idx`` (indices into ``0..size-1``)."""
        return {k: v[idx] for k, v in self.arrays.items()}

    def ordered(self) -> Positions:
        """Every held position, oldest first."""
        start = self.pos if self.size == self.capacity else 0
        return self.get((start + np.arange(self.size)) % self.capacity)

    def save(self, path: str | Path) -> None:
        """Write the held positions (oldest first) to an ``.npz`` (written aside, then moved in place)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, added=np.int64(self.added), **self.ordered())
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path, capacity: int, obs_dim: int, num_actions: int) -> ReplayBuffer:
        """A buffer of ``capacity`` holding the positions saved at ``path`` (the newest, if more)."""
        buf = cls(capacity, obs_dim, num_actions)
        with np.load(path) as z:
            data = {k: z[k] for k in FIELDS if k in z}
            added = int(z["added"])
        data.setdefault("q", data["value"])  # a buffer saved before the search value was recorded
        if data["obs"].shape[1:] != (obs_dim,) or data["mask"].shape[1:] != (num_actions,):
            raise ValueError(f"replay buffer {str(path)!r} holds positions of another game")
        buf.add(data)
        buf.added = added
        return buf
