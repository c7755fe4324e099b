"""Gumbel AlphaZero's root (Danihelka et al. 2022): which root moves the simulations go to, the move
played and the policy target, over one search tree.

Why a class of its own: the one-tree search (:meth:`agents.az.AZAgent.gumbel_search`) and the
batched one (:meth:`agents.search_batch.BatchedSearch.gumbel_search`) run the same schedule, one
root at a time or many in step. :class:`GumbelRoot` holds one root's schedule and reads its tree's
arrays; the caller runs the simulations it asks for (``k`` simulations with the root's move forced,
:func:`agents.search.search_network`'s ``forced``), so there is one copy of the rule.

The schedule: ``actions`` moves drawn without replacement (Gumbel-top-k over the prior's logits,
the noise given by the caller from its seeded stream); sequential halving spends the budget on
them, phase by phase, halving the survivors by ``g + logits + sigma(q)``; the move is the last
survivor; the target is ``softmax(logits + sigma(completed q))`` over the legal ids.
"""

from __future__ import annotations

import numpy as np

#: Gumbel AlphaZero's ``sigma(q) = (C_VISIT + max_b N(b)) * C_SCALE * q`` (the paper's constants).
C_VISIT, C_SCALE = 50.0, 0.1


def sigma(q: np.ndarray, visits: np.ndarray, child: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Gumbel's monotone transform of root values: it grows with the most-visited child's count, so
    the values outweigh the prior more the longer the search ran."""
    nodes = child[0, legal]
    most = float(visits[nodes[nodes >= 0]].max()) if (nodes >= 0).any() else 0.0
    return (C_VISIT + most) * C_SCALE * q


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
    visits; the paper's appendix), so an unvisited action is neither favoured nor dropped."""
    nodes = child[0, legal]
    n = np.where(nodes >= 0, visits[np.maximum(nodes, 0)], 0.0)
    seen = n > 0
    q = np.zeros(legal.size)
    q[seen] = wsum[nodes[seen], seat] / n[seen]
    total = n.sum()
    mixed = root_net_value
    if total > 0:
        pi = prior / max(prior.sum(), 1e-30)
        weighted = float((pi[seen] * q[seen]).sum() / max(pi[seen].sum(), 1e-30))
        mixed = (root_net_value + total * weighted) / (1.0 + total)
    q[~seen] = mixed
    return q


class GumbelRoot:
    """One root's sequential halving, over a tree whose root alone has been searched (one simulation:
    its prior and value are in the tree).

    ``tree`` is the tree's ``(child, prior, visits, avail, wsum, ...)`` arrays
    (:class:`agents.search.Tree`'s order), ``legal`` the root's legal ids, ``noise`` one Gumbel draw
    per legal id, ``sims`` the whole budget (the root's simulation included). Drive it as
    ``for phase in range(root.phases): for move, k in root.plan(): <k simulations forced to move>;
    root.halve()``, then :meth:`result`.
    """

    def __init__(
        self, tree: tuple, legal: np.ndarray, seat: int, noise: np.ndarray, actions: int, sims: int
    ) -> None:
        self.child, self.prior, self.visits, self.wsum = tree[0], tree[1], tree[2], tree[4]
        self.legal, self.seat, self.g = legal, seat, noise
        self.logits = np.log(np.maximum(self.prior[0, legal].astype(np.float64), 1e-30))
        self.root_net_value = float(self.wsum[0, seat] / max(self.visits[0], 1.0))
        m = min(int(actions), legal.size)
        self.alive = np.argsort(-(noise + self.logits), kind="stable")[:m]  # indices into legal
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
        prior = self.prior[0, self.legal]
        return completed_q(
            self.child, self.visits, self.wsum, self.legal, prior, self.seat, self.root_net_value
        )

    def halve(self) -> None:
        """End the phase: keep the better half of the survivors (one after the last phase)."""
        q = self.q()
        score = (
            self.g[self.alive]
            + self.logits[self.alive]
            + sigma(q[self.alive], self.visits, self.child, self.legal)
        )
        keep = 1 if self.phase == self.phases - 1 else -(-self.alive.size // 2)
        self.alive = self.alive[np.argsort(-score, kind="stable")[:keep]]
        self.phase += 1

    def result(self, num_actions: int) -> tuple[int, np.ndarray]:
        """``(move, policy target over the num_actions ids)``, after the last phase."""
        improved = self.logits + sigma(self.q(), self.visits, self.child, self.legal)
        target = np.zeros(num_actions, dtype=np.float32)
        e = np.exp(improved - improved.max())
        target[self.legal] = e / e.sum()
        return int(self.legal[self.alive[0]]), target


__all__ = ["C_SCALE", "C_VISIT", "GumbelRoot", "completed_q", "sigma"]
