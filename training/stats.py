"""Confidence intervals shared by evaluation, tournaments and policy benchmarks."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n`` (95% by default).

    Fractional ``successes`` are allowed (a shared victory counts half a win);
    with no trials the interval is the whole ``[0, 1]``.
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
