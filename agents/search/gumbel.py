"""Gumbel AlphaZero's root (Danihelka et al. 2022): which root moves the simulations go to, the move
played and the policy target, over one search tree.

Why a class of its own: :meth:`agents.search.driver.Search.gumbel_search` runs many roots' schedules
in step (``az``'s move is one root). :class:`GumbelRoot` holds one root's schedule and reads its tree's
arrays; the caller runs the simulations it asks for (``k`` simulations with the root's move forced,
:class:`agents.search.driver.Job`'s ``forced``), so there is one copy of the rule.

The schedule: ``actions`` moves drawn without replacement (Gumbel-top-k over the prior's logits,
the noise given by the caller from its seeded stream); sequential halving spends the budget on
them, phase by phase, halving the survivors by ``g + logits + sigma(q)``; the move is the last
survivor; the target is ``softmax(logits + sigma(completed q))`` over the legal ids.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Gumbel AlphaZero's ``sigma(q) = (C_VISIT + max_b N(b)) * C_SCALE * q`` (the paper's constants).
C_VISIT, C_SCALE = 50.0, 0.1


@njit(cache=True)
def sigma_scale(child: np.ndarray, visits: np.ndarray, legal: np.ndarray) -> float:
    """The factor of Gumbel's monotone transform ``sigma(q) = factor * q``: it grows with the most-visited
    root child's count, so the values outweigh the prior more the longer the search ran."""
    most = 0.0
    for a in legal:
        node = child[0, a]
        if node >= 0 and visits[node] > most:
            most = visits[node]
    return (C_VISIT + most) * C_SCALE


@njit(cache=True)
def completed_q(
    child: np.ndarray,
    visits: np.ndarray,
    wsum: np.ndarray,
    legal: np.ndarray,
    prior: np.ndarray,
    seat: int,
    root_net_value: float,
) -> np.ndarray:
    """Each legal root action's value for ``seat``: its child's mean when visited, else the mixed
    value (the root's network value and the prior-weighted mean of the visited children, by the
    visits; the paper's appendix), so an unvisited action is neither favoured nor dropped.

    ``prior`` is the prior of the ``legal`` ids, in their order."""
    k = legal.shape[0]
    q = np.zeros(k)
    seen = np.zeros(k, dtype=np.bool_)
    total = 0.0
    prior_sum = 0.0
    for i in range(k):
        prior_sum += prior[i]
        node = child[0, legal[i]]
        if node >= 0 and visits[node] > 0:
            seen[i] = True
            q[i] = wsum[node, seat] / visits[node]
            total += visits[node]
    mixed = root_net_value
    if total > 0:
        norm = max(prior_sum, 1e-30)
        num = 0.0
        den = 0.0
        for i in range(k):
            if seen[i]:
                pi = prior[i] / norm
                num += pi * q[i]
                den += pi
        mixed = (root_net_value + total * (num / max(den, 1e-30))) / (1.0 + total)
    for i in range(k):
        if not seen[i]:
            q[i] = mixed
    return q


@njit(cache=True)
def _best_first(score: np.ndarray, items: np.ndarray, keep: int) -> np.ndarray:
    """The ``keep`` items with the highest scores, highest first, ties in the items' order
    (``items[np.argsort(-score, kind="stable")][:keep]``; an insertion sort: a few dozen items)."""
    order = items.copy()
    key = score.copy()
    for i in range(1, order.shape[0]):
        s, it = key[i], order[i]
        j = i - 1
        while j >= 0 and key[j] < s:
            key[j + 1], order[j + 1] = key[j], order[j]
            j -= 1
        key[j + 1], order[j + 1] = s, it
    return order[:keep].copy()


@njit(cache=True)
def _start(prior_legal: np.ndarray, noise: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``(logits, alive)``: the prior's log over the legal ids and Gumbel-top-``m`` of ``noise + logits``
    (indices into the legal ids)."""
    k = prior_legal.shape[0]
    logits = np.empty(k)
    for i in range(k):
        logits[i] = np.log(max(np.float64(prior_legal[i]), 1e-30))
    return logits, _best_first(noise + logits, np.arange(k), m)


@njit(cache=True)
def _softmax_target(legal: np.ndarray, improved: np.ndarray, num_actions: int) -> np.ndarray:
    """``softmax(improved)`` over the legal ids, as float32 over ``num_actions`` ids."""
    top = improved.max()
    e = np.exp(improved - top)
    total = e.sum()
    target = np.zeros(num_actions, dtype=np.float32)
    for i in range(legal.shape[0]):
        target[legal[i]] = e[i] / total
    return target


class GumbelRoot:
    """One root's sequential halving, over a tree whose root alone has been searched (one simulation:
    its prior and value are in the tree).

    ``tree`` is the tree's ``(child, prior, visits, avail, wsum, ...)`` arrays
    (:class:`agents.search.tree.Tree`'s order), ``legal`` the root's legal ids, ``noise`` one Gumbel draw
    per legal id, ``sims`` the whole budget (the root's simulation included). Drive it as
    ``for phase in range(root.phases): for move, k in root.plan(): <k simulations forced to move>;
    root.halve()``, then :meth:`result`. The arithmetic is numba (a move's schedule costs a few
    microseconds, not the search's time again in numpy calls on a handful of values).
    """

    def __init__(
        self, tree: tuple, legal: np.ndarray, seat: int, noise: np.ndarray, actions: int, sims: int
    ) -> None:
        self.child, self.prior, self.visits, self.wsum = tree[0], tree[1], tree[2], tree[4]
        self.legal = np.ascontiguousarray(legal, dtype=np.int64)
        self.seat, self.g = int(seat), np.ascontiguousarray(noise, dtype=np.float64)
        self.prior_legal = np.ascontiguousarray(self.prior[0, self.legal])
        self.root_net_value = float(self.wsum[0, seat] / max(self.visits[0], 1.0))
        m = min(int(actions), self.legal.size)
        self.logits, self.alive = _start(self.prior_legal, self.g, m)  # alive: indices into legal
        self.budget = int(sims) - 1
        self.phases = max(1, int(np.ceil(np.log2(m)))) if m > 1 else 1
        self.phase, self.used = 0, 0

    def plan(self) -> list[tuple[int, int]]:
        """This phase's ``(move, simulations)``, in order: its share of the budget split evenly over
        the survivors (the last phase takes what is left), at least one each."""
        last = self.phase == self.phases - 1
        share = self.budget - self.used if last else self.budget // self.phases
        per = max(1, share // self.alive.size)
        self.used += per * self.alive.size
        return [(int(self.legal[i]), per) for i in self.alive]

    def q(self) -> np.ndarray:
        """The completed values of the legal moves, from the tree as it is now."""
        tree = (self.child, self.visits, self.wsum, self.legal, self.prior_legal)
        return completed_q(*tree, self.seat, self.root_net_value)

    def sigma_q(self) -> np.ndarray:
        """``sigma(completed q)`` of the legal moves, from the tree as it is now."""
        return sigma_scale(self.child, self.visits, self.legal) * self.q()

    def halve(self) -> None:
        """End the phase: keep the better half of the survivors (one after the last phase), by
        ``g + logits + sigma(q)``."""
        keep = 1 if self.phase == self.phases - 1 else -(-self.alive.size // 2)
        i = self.alive
        self.alive = _best_first(self.g[i] + self.logits[i] + self.sigma_q()[i], i, keep)
        self.phase += 1

    def result(self, num_actions: int) -> tuple[int, np.ndarray]:
        """``(move, policy target over the num_actions ids)``, after the last phase."""
        target = _softmax_target(self.legal, self.logits + self.sigma_q(), int(num_actions))
        return int(self.legal[self.alive[0]]), target


__all__ = ["C_SCALE", "C_VISIT", "GumbelRoot", "completed_q", "sigma_scale"]
