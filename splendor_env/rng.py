"""The counter-based random stream used inside compiled code (splitmix64).

Why not numpy's generators: numba-compiled code (setup, determinisation,
rollouts, the batched sampler) needs a stream whose state is a plain array it
can carry per game, so the same seed deals the same game in the AEC env, the
batched engine and any worker process. The stream state is a one-element
``uint64`` array, advanced in place.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def next_u64(rng: np.ndarray) -> np.uint64:
    """Next 64-bit value of the splitmix64 stream held in ``rng[0]``."""
    x = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = x
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def rand_below(rng: np.ndarray, n: int) -> int:
    """Uniform integer in ``[0, n)``."""
    return int(next_u64(rng) % np.uint64(n))


@njit(cache=True)
def rand_unit(rng: np.ndarray) -> float:
    """Uniform float in ``[0, 1)``."""
    return float(next_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def shuffle(arr: np.ndarray, n: int, rng: np.ndarray) -> None:
    """Fisher-Yates shuffle of ``arr[:n]`` in place (a view into a state array is fine)."""
    for i in range(n - 1, 0, -1):
        j = rand_below(rng, i + 1)
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t
