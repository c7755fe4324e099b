"""Playouts of recorded decisions by the agents that played them: the winner pick a critic could reach.

Why: a critic's winner pick is capped by chance: the cards still in the decks decide many games.
Playing each recorded decision out many times, by the same agents in the same seats from hidden
cards resampled for the seat on move (:func:`splendor_env.determinize.determinize_inplace`),
estimates each seat's chance of winning from what that seat knows. The seat that wins most
playouts is what a critic that knew these agents perfectly would pick (up to the noise of
``playouts`` playouts), so its winner pick is the ceiling for the critic on these games
(``python -m training.value_report --playouts R``; docs/results/value-report.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.runner import BatchedGames
from splendor_env import state as st
from splendor_env.determinize import determinize_inplace
from splendor_env.rules import terminal_rewards

#: Playouts stepped together (one SplendorBatch): agents answer a batch of this many games a call.
PLAYOUT_BATCH = 2048


def playout_seed(seed: int, row: int, k: int, playouts: int) -> int:
    """The determinisation seed of playout ``k`` of decision ``row``: the same for any batch size."""
    return (int(seed) * 0x9E3779B97F4A7C15 + int(row) * int(playouts) + int(k)) % 2**64


def playout_values(
    states: np.ndarray,
    movers: np.ndarray,
    seating: np.ndarray,
    agents: Sequence[Any],
    playouts: int,
    seed: int,
    batch: int = PLAYOUT_BATCH,
) -> np.ndarray:
    """``[N, n]``: each seat's mean result over ``playouts`` playouts of each decision ``states[i]``.

    Playout ``k`` of row ``i`` starts from ``states[i]`` with everything hidden from seat
    ``movers[i]`` resampled (seed :func:`playout_seed`) and is played to the end with agent
    ``agents[seating[i, p]]`` in seat ``p``. Results are the engine's (+1 sole winner, -1 loser,
    0 shared); a playout that reaches the turn cap counts 0 for everyone.
    """
    from splendor_env.vector import SplendorBatch

    states = np.asarray(states, dtype=np.int32)
    if playouts < 1:
        raise ValueError(f"playouts must be >= 1, got {playouts}")
    n_rows = states.shape[0]
    n = int(states[0, st.N_PLAYERS]) if n_rows else 2
    out = np.zeros((n_rows, n))
    total = n_rows * playouts
    rng = np.random.default_rng([seed, 11])  # the determinisations of agents that search
    terminal = np.zeros(st.MAX_PLAYERS)
    for start in range(0, total, batch):
        units = np.arange(start, min(start + batch, total))
        rows, ks = units // playouts, units % playouts
        starts = states[rows].copy()
        for j in range(units.size):
            determinize_inplace(
                starts[j],
                int(movers[rows[j]]),
                np.array([playout_seed(seed, rows[j], ks[j], playouts)], np.uint64),
            )

        def on_end(
            unit: int, _slot: int, final_state: np.ndarray, _truncated: bool, rows: np.ndarray = rows
        ) -> None:
            terminal_rewards(final_state, terminal)  # all 0 for a playout cut at the turn cap
            out[rows[unit]] += terminal[:n]

        venv = SplendorBatch(units.size, n, copy=False, modules=st.module_names(int(starts[0, st.MODULES])))
        # one slot per playout, none refilled; no invariant check: determinisations of recorded (whole) states
        run = BatchedGames(venv, agents, seating[rows], rng, on_end, states=starts, check=False)
        while run.live.size:
            run.play_round()
    return out / playouts
