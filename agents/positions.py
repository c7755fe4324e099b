"""The positions agents are asked about: states from random games, and what the seat on move is given.

Why here: policy benchmarks (``training.speed.policies``) time agents on these
positions and the test suite checks agents on them; both read one definition.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import num_actions
from splendor_env.deal import new_state
from splendor_env.observation import obs_dim, observe


def sample_states(
    num_players: int,
    games: int,
    seed: int = 0,
    max_per_game: int | None = None,
    modules: Sequence[str] = (),
) -> list[np.ndarray]:
    """Non-terminal states (copies) from random-agent games, in play order (at most ``max_per_game`` a game).

    Every phase the game reaches appears: main moves, discards, noble choices and the module decisions.
    """
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for g in range(games):
        s = new_state(num_players, int(rng.integers(0, 2**62)) + g, modules=tuple(modules))
        mask = np.zeros(num_actions(int(s[st.MODULES])), dtype=np.int8)
        taken = 0
        while not rules.is_over(s):
            if max_per_game is None or taken < max_per_game:
                out.append(s.copy())
                taken += 1
            rules.legal_mask(s, mask)
            legal = np.flatnonzero(mask)
            rules.apply_action(s, int(legal[rng.integers(legal.size)]))
    return out


def decision_inputs(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Observation and mask of the seat on move (module sizes in a module game), and that seat."""
    bits = int(s[st.MODULES])
    seat = int(s[st.CURRENT])
    obs = np.empty(obs_dim(bits), dtype=np.float32)
    observe(s, seat, obs)
    mask = np.zeros(num_actions(bits), dtype=np.int8)
    rules.legal_mask(s, mask)
    return obs, mask, seat


__all__ = ["decision_inputs", "sample_states"]
