"""Self-play positions in one form, from a finished game to a training batch, and the replay buffer.

Why one form: a position is written down once, when its game ends
(:func:`training.expert_iteration.selfplay.play_selfplay_game`), as a row of
:data:`Positions`: a dict of numpy arrays, one per field of :data:`FIELDS`, in
the dtypes of :data:`DTYPES`. A job's games, an iteration's jobs, the buffer's
ring, its saved ``.npz`` and every training batch are that same dict (the
buffer holds one of ``capacity`` rows); only the loss turns a batch into
tensors (:func:`training.expert_iteration.learner.losses`).
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

#: The auxiliary value targets (``train.aux_coef``), self-play records them for every position but the
#: buffer keeps them only when asked (``aux``), so a run without them saves the buffer it always did:
#: the final prestige margin of the seat on move (its prestige minus the best other seat's, / 15) and
#: the player turns left to the game's end (/ the turn cap). NaN in a buffer saved without them.
AUX_DTYPES: dict[str, type] = {"margin": np.float32, "moves_left": np.float32}
AUX_FIELDS = tuple(AUX_DTYPES)
#: Every field a self-play batch has.
FIELDS = tuple(DTYPES) + AUX_FIELDS


def empty_positions(n: int, obs_dim: int, num_actions: int, aux: bool = True) -> Positions:
    """``n`` zeroed positions of a game with ``obs_dim`` observation floats and ``num_actions`` ids
    (with the :data:`AUX_FIELDS` unless ``aux`` is false)."""
    widths = {"obs": (obs_dim,), "mask": (num_actions,), "policy": (num_actions,)}
    dtypes = {**DTYPES, **AUX_DTYPES} if aux else DTYPES
    return {name: np.zeros((n, *widths.get(name, ())), dtype) for name, dtype in dtypes.items()}


def concat(parts: list[Positions]) -> Positions:
    """Positions of several games (or jobs) as one batch (the fields every part has)."""
    return {k: np.concatenate([p[k] for p in parts]) for k in FIELDS if all(k in p for p in parts)}


def count(positions: Positions) -> int:
    """How many positions a batch holds."""
    return len(positions["value"])


class ReplayBuffer:
    """The last ``capacity`` positions in fixed numpy arrays (a ring: the oldest are overwritten).

    ``aux``: keep the :data:`AUX_FIELDS` too (positions added without them get NaN there)."""

    def __init__(self, capacity: int, obs_dim: int, num_actions: int, aux: bool = False) -> None:
        self.capacity = capacity
        self.arrays = empty_positions(capacity, obs_dim, num_actions, aux)
        self.pos = 0  # next row written
        self.size = 0
        self.added = 0  # positions ever added (the oldest-out count is added - size)

    def add(self, data: Positions) -> None:
        """Append positions; past ``capacity`` the oldest are dropped (a batch larger than it keeps its tail)."""
        k = count(data)
        skip = max(0, k - self.capacity)
        rows = (self.pos + np.arange(k - skip)) % self.capacity
        for name, arr in self.arrays.items():
            arr[rows] = data[name][skip:] if name in data else np.nan
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
    def load(
        cls, path: str | Path, capacity: int, obs_dim: int, num_actions: int, aux: bool = False
    ) -> ReplayBuffer:
        """A buffer of ``capacity`` holding the positions saved at ``path`` (the newest, if more)."""
        buf = cls(capacity, obs_dim, num_actions, aux)
        with np.load(path) as z:
            data = {k: z[k] for k in FIELDS if k in z}
            added = int(z["added"])
        data.setdefault("q", data["value"])  # a buffer saved before the search value was recorded
        if data["obs"].shape[1:] != (obs_dim,) or data["mask"].shape[1:] != (num_actions,):
            raise ValueError(f"replay buffer {str(path)!r} holds positions of another game")
        buf.add(data)
        buf.added = added
        return buf
