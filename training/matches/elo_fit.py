"""Ratings on a benchmark's fixed scale: one candidate against anchored references, and the anchors themselves.

Why a module of its own: a card rates one agent against references whose ratings are held fixed
(:func:`fit_rating`), and the protocol's anchors are fitted once from the references' games among
themselves (:func:`fit_anchors`); both use the same model, so a reference's own card lands on its
anchor. The model: a seat rated ``R`` beats ``n - 1`` copies of an opponent rated ``A`` with
probability ``1 / (1 + (n - 1) 10^((A - R) / 400))`` (Elo with two players, Luce's choice model with
more), with ``prior`` wins added each way per result so that a perfect record stays finite. The
prior pulls toward a 50% score, so with three or four players an even (``1/n``) result rates a few
Elo above its anchor: 2.5 and 4.5 at 50 games, 0.7 and 1.2 at 200 (docs/benchmark.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from training.common.stats import Z95

#: the search interval of every fit (a rating outside it is clipped to its end)
LOW, HIGH = -2000.0, 6000.0


def p_first(rating: float, anchor: float, players: int) -> float:
    """The chance that a seat rated ``rating`` beats ``players - 1`` copies of one rated ``anchor``."""
    return 1.0 / (1.0 + (players - 1) * 10.0 ** ((anchor - rating) / 400.0))


def _loglik(rating: float, rows: Sequence[tuple[float, float, float, int]], prior: float) -> float:
    total = 0.0
    for anchor, score, games, n in rows:
        p = min(max(p_first(rating, anchor, n), 1e-300), 1 - 1e-16)
        total += (score + prior) * math.log(p) + (games - score + prior) * math.log(1 - p)
    return total


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Bisection for the sign change of a decreasing ``f`` on ``[lo, hi]`` (clipped to the ends)."""
    if f(lo) <= 0:
        return lo
    if f(hi) >= 0:
        return hi
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def fit_rating(
    rows: Sequence[tuple[float, float, float, int]], prior: float = 0.5
) -> tuple[float, tuple[float, float]]:
    """The candidate's Elo and its 95% likelihood-ratio interval from ``(anchor, score, games, players)`` rows.

    Maximum likelihood of :func:`p_first` with the anchors held fixed, ``prior`` wins added each
    way per row; the interval is where twice the log-likelihood drop stays below 3.84 (chi-square,
    one degree of freedom), so it is asymmetric where the record is lopsided.
    """
    if not rows:
        raise ValueError("fit_rating needs at least one result")

    def slope(r: float) -> float:
        return sum((s + prior) - (g + 2 * prior) * p_first(r, a, n) for a, s, g, n in rows)

    best = _root(slope, LOW, HIGH)
    top = _loglik(best, rows, prior)
    cut = Z95**2 / 2

    def above(r: float) -> float:
        return _loglik(r, rows, prior) - (top - cut)

    low = _root(lambda r: -above(r), LOW, best)
    high = _root(above, best, HIGH)
    return best, (low, high)


#: one result between references: (candidate, reference, candidate's score, games, players)
Meeting = tuple[str, str, float, float, int]


def fit_anchors(
    meetings: Sequence[Meeting], pin: tuple[str, float], prior: float = 0.5, tol: float = 1e-4
) -> dict[str, float]:
    """Every reference's rating from their meetings in one game, ``pin`` (name, rating) held fixed.

    The joint maximum likelihood of :func:`p_first` over every meeting (each reference as the
    candidate against copies of each other one), ``prior`` wins added each way per meeting, found
    by coordinate ascent (the log-likelihood is concave in each rating) until no rating moves by
    ``tol``. Both seatings count: ``a`` alone against copies of ``b`` and ``b`` alone against
    copies of ``a`` are different games with three or more players.
    """
    names = sorted({m[0] for m in meetings} | {m[1] for m in meetings})
    pinned, value = pin
    if pinned not in names:
        raise ValueError(f"fit_anchors: the pinned reference {pinned!r} played no game ({', '.join(names)})")
    ratings = {name: value for name in names}

    def slope(name: str, r: float) -> float:
        total = 0.0
        for c, o, s, g, n in meetings:
            if name == c:
                total += (s + prior) - (g + 2 * prior) * p_first(r, ratings[o], n)
            elif name == o:
                total -= (s + prior) - (g + 2 * prior) * p_first(ratings[c], r, n)
        return total

    for _ in range(10_000):
        moved = 0.0
        for name in names:
            if name == pinned:
                continue
            new = _root(lambda r, name=name: slope(name, r), LOW, HIGH)
            moved = max(moved, abs(new - ratings[name]))
            ratings[name] = new
        if moved < tol:
            break
    return ratings


__all__ = ["HIGH", "LOW", "Meeting", "fit_anchors", "fit_rating", "p_first"]
