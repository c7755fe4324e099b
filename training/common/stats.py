"""Confidence intervals and number formats shared by evaluation, tournaments, the value report and benchmarks.

One implementation of each (the Wilson interval, the bootstrap over games,
percentages and CSV numbers), so two reports never disagree on how they count.
"""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n`` (95% by default).

    Fractional ``successes`` are allowed (a shared victory counts half a win);
    with no trials the interval is the whole ``[0, 1]``. A rate of exactly 0
    (or 1) gets a bound of exactly 0 (or 1), not a rounding residue like 3e-18.
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return lo, hi


def clean_number(x: float | int | None, digits: int = 4) -> str:
    """A number for a CSV cell: fixed ``digits`` decimals, no ``-0`` or ``1e-18`` residue; None -> ''."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return str(int(x))
    value = round(float(x), digits) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{value:.{digits}f}"


def bootstrap_counts(n: int, rounds: int, seed: int = 0) -> np.ndarray:
    """How often each of ``n`` units is drawn in each of ``rounds`` resamples with replacement: ``(rounds, n)``.

    The units are whole games (positions or seats of one game are correlated);
    a statistic of resample ``r`` is then ``counts[r] @ per_game``. The seed is
    fixed by the caller, so an interval is the same on every run.
    """
    return np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=rounds)


def percent(x: float | None, blank: str, suffix: str = "") -> str:
    """A rate as a percentage in five characters (``" 52.3"`` plus ``suffix``); ``blank`` for None."""
    return blank if x is None else f"{100 * x:5.1f}{suffix}"
