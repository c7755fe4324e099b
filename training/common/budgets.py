"""A run's wall-clock budget and its progress line, shared by PPO and expert-iteration training."""

from __future__ import annotations

import time


class WallBudget:
    """The run's one wall-clock limit (``max_wall_minutes``), shared by the warm start and training."""

    def __init__(self, minutes: float | None, start: float | None = None) -> None:
        self.start = time.perf_counter() if start is None else start
        self.seconds = None if minutes is None else 60.0 * minutes

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float | None:
        """Seconds left (never negative), or None without a limit."""
        return None if self.seconds is None else max(0.0, self.seconds - self.elapsed())

    def expired(self) -> bool:
        return self.seconds is not None and self.elapsed() >= self.seconds


def clock(seconds: float) -> str:
    """``3725`` -> ``"1:02:05"``."""
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def describe_progress(
    steps: int, total: int, steps_per_s: float, wall_elapsed: float = 0.0, wall_left: float | None = None
) -> tuple[float, str]:
    """Fraction done and a one-line status: steps, steps/s and the time left by the binding limit.

    The run ends at ``total`` steps or when the wall budget runs out, whichever
    comes first; the fraction and the time left follow that limit.
    """
    to_go = (total - steps) / steps_per_s if steps_per_s > 0 else None
    by_wall = wall_left is not None and (to_go is None or wall_left < to_go)
    text = f"{steps:,}/{total:,} steps, {steps_per_s:,.0f} steps/s, "
    if by_wall:
        text += f"{clock(wall_left)} left (wall limit)"
    elif to_go is not None:
        text += f"{clock(to_go)} left"
    else:
        text += "time left unknown"
    fraction = steps / total if total else 1.0
    if by_wall and wall_elapsed + wall_left > 0:
        fraction = wall_elapsed / (wall_elapsed + wall_left)
    return min(1.0, fraction), text
