"""Search trees and the kernels that walk them: one stack of trees for every search.

Why one stack: a single game's search is a stack of one tree (``az``'s move, ``mcts``), self-play
searches many games' trees in step (:mod:`agents.search.driver`); both walk the same arrays with the
same kernels, so there is one tree and one copy of selection, virtual loss, backup and expansion.

A tree is a tuple of arrays (:data:`FIELDS`, node 0 the root): ``child[node, action]`` the child node
or -1; ``prior`` the PUCT prior; ``visits``/``wsum[node, seat]`` the visit count and per-seat value
sum; ``avail`` how often a node's action was legal when its parent was visited (UCB's availability
count); ``mover`` the seat that chose the node's action; ``expanded`` whether the network evaluated
it; the rest is scratch for the simulations of one batch (their paths and leaves).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from agents.nets.numba_net import seat_values
from agents.search.subtree import reroot
from splendor_env import rules
from splendor_env.state import CURRENT, MAX_PLAYERS, N_PLAYERS

FIELDS = (
    "child", "prior", "visits", "avail", "wsum", "mover", "expanded",
    "paths", "plens", "leaf_node", "leaf_player", "leaf_value", "leaf_row",
)  # fmt: skip


class Tree:
    """Tree ``t`` of a :class:`Trees` stack: ``arrays`` are its views in :data:`FIELDS` order."""

    def __init__(self, trees: Trees, t: int) -> None:
        self.stack, self.t = trees, t
        self.arrays = tuple(a[t] for a in trees.arrays)
        self.max_nodes, self.num_actions = trees.max_nodes, trees.num_actions

    @classmethod
    def alone(cls, max_nodes: int, num_actions: int, batch: int = 1, priors: bool = False) -> Tree:
        """A stack of one tree, that tree (a single game's search)."""
        return Trees(1, max_nodes, num_actions, batch, priors).tree(0)

    @property
    def used(self) -> int:
        """The rows the last search used (what :meth:`reset` clears)."""
        return int(self.stack.used[self.t])

    @used.setter
    def used(self, n: int) -> None:
        self.stack.used[self.t] = n

    def reset(self, seat: int) -> None:
        """Empty the tree for a new search by ``seat``."""
        self.stack.reset(np.array([self.t]), np.array([seat]))

    def keep_subtree(self, path: np.ndarray, seat: int) -> int:
        """Keep the subtree the moves ``path`` lead to as the whole tree (:func:`agents.search.subtree.reroot`):
        its node count, or 0 when it is not there (the tree is then unchanged: :meth:`reset` it)."""
        return reroot(self.arrays, np.asarray(path, dtype=np.int64), self.used, seat)

    def root_stats(self, seat: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(actions, visits, value sums for seat)`` of the root's children."""
        child, visits, wsum = self.arrays[0], self.arrays[2], self.arrays[4]
        actions = np.flatnonzero(child[0] >= 0)
        nodes = child[0, actions]
        return actions, visits[nodes], wsum[nodes, seat]

    def root_lead(self) -> float:
        """How many more visits the most-visited root child has than the next (all of them if it is the only one)."""
        child, visits = self.arrays[0], self.arrays[2]
        v = visits[child[0][child[0] >= 0]]
        if v.size < 2:
            return float(v.sum())
        top2 = np.partition(v, v.size - 2)[-2:]
        return float(top2[1] - top2[0])


class Trees:
    """``trees`` search trees as stacked arrays (leading dimension = tree), allocated once and reused.

    ``priors=False`` (rollout search) allocates no priors; ``batch`` is the most simulations a tree
    walks before its leaves are evaluated.
    """

    def __init__(
        self, trees: int, max_nodes: int, num_actions: int, batch: int = 1, priors: bool = True
    ) -> None:
        k, m = trees, max_nodes
        self.trees, self.max_nodes, self.num_actions, self.batch = k, m, num_actions, batch
        self.arrays = (
            np.full((k, m, num_actions), -1, dtype=np.int32),
            np.zeros((k, m, num_actions) if priors else (k, 1, 1), dtype=np.float32),
            np.zeros((k, m)),
            np.zeros((k, m)),
            np.zeros((k, m, MAX_PLAYERS)),
            np.zeros((k, m), dtype=np.int32),
            np.zeros((k, m), dtype=np.int8),
            np.zeros((k, batch, m + 1), dtype=np.int32),
            np.zeros((k, batch), dtype=np.int32),
            np.zeros((k, batch), dtype=np.int32),
            np.zeros((k, batch), dtype=np.int32),
            np.zeros((k, batch, MAX_PLAYERS)),
            np.zeros((k, batch), dtype=np.int32),
        )
        self.used = np.full(k, m, dtype=np.int64)

    def tree(self, t: int) -> Tree:
        return Tree(self, t)

    def reset(self, ids: np.ndarray, seats: np.ndarray) -> None:
        """Empty trees ``ids`` for new searches by ``seats`` (only the rows their last search used)."""
        reset_trees(self.arrays, np.asarray(ids, np.int64), np.asarray(seats, np.int64), self.used)

    def move_trees(self, sources: np.ndarray) -> None:
        """Tree ``t`` becomes a copy of tree ``sources[t]`` (as it was before this call), for every ``t``
        of ``sources``: a game's tree follows it when the games change places between searches."""
        k = len(sources)
        for a in self.arrays[:7]:
            a[:k] = a[sources]
        self.used[:k] = self.used[sources]


@njit(cache=True)
def reset_trees(arrays: tuple, ids: np.ndarray, seats: np.ndarray, used: np.ndarray) -> None:
    """Empty the trees ``ids`` (their first ``used`` rows) for searches by ``seats``."""
    child, _, visits, avail, wsum, mover, expanded = arrays[:7]
    for i in range(ids.shape[0]):
        t = ids[i]
        for nd in range(used[t]):
            child[t, nd, :] = -1
            visits[t, nd] = 0.0
            avail[t, nd] = 0.0
            wsum[t, nd, :] = 0.0
            expanded[t, nd] = 0
        mover[t, 0] = seats[i]


@njit(cache=True)
def tree_view(arrays: tuple, t: int) -> tuple:
    """Tree ``t`` of a stack as the tuple of its arrays, what the kernels below take."""
    a = arrays
    return (
        a[0][t], a[1][t], a[2][t], a[3][t], a[4][t], a[5][t], a[6][t],
        a[7][t], a[8][t], a[9][t], a[10][t], a[11][t], a[12][t],
    )  # fmt: skip


@njit(cache=True)
def select_puct(tree: tuple, node: int, mask: np.ndarray, player: int, c: float, fpu: float) -> int:
    """PUCT ``Q + c * P * sqrt(N) / (1 + n)`` over the legal actions (priors renormalised to them);
    an unvisited child counts its parent's ``Q`` minus ``fpu``."""
    child, prior, visits, wsum = tree[0], tree[1], tree[2], tree[4]
    sq = math.sqrt(visits[node] + 1.0)
    q_parent = wsum[node, player] / visits[node] if visits[node] > 0 else 0.0
    psum = 0.0
    n_legal = 0
    for a in range(mask.shape[0]):
        if mask[a]:
            psum += prior[node, a]
            n_legal += 1
    best_a = -1
    best_u = -1e30
    for a in range(mask.shape[0]):
        if not mask[a]:
            continue
        p = prior[node, a] / psum if psum > 0 else 1.0 / n_legal
        ch = child[node, a]
        if ch >= 0 and visits[ch] > 0:
            q = wsum[ch, player] / visits[ch]
            n_ch = visits[ch]
        else:
            q = q_parent - fpu
            n_ch = 0.0
        u = q + c * p * sq / (1.0 + n_ch)
        if u > best_u:
            best_u = u
            best_a = a
    return best_a


@njit(cache=True)
def virtual_loss(wsum: np.ndarray, node: int, mover: int, n: int, sign: float) -> None:
    """A pending simulation counts as a loss for the seat that chose ``node`` (and a win shared
    by the others, so the sums stay zero-sum); ``sign=-1`` takes it back."""
    wsum[node, mover] -= sign
    for q in range(n):
        if q != mover:
            wsum[node, q] += sign / (n - 1)


@njit(cache=True)
def backup(tree: tuple, j: int, value: np.ndarray, virtual: bool, n: int) -> None:
    """Add simulation ``j``'s per-seat ``value`` to every node on its path; with ``virtual`` the visits
    below the root were counted on the way down (virtual loss), which is taken back here."""
    visits, wsum, mover, paths, plens = tree[2], tree[4], tree[5], tree[7], tree[8]
    for i in range(plens[j]):
        nd = paths[j, i]
        if virtual and i > 0:
            virtual_loss(wsum, nd, mover[nd], n, -1.0)
        else:
            visits[nd] += 1.0
        for p in range(MAX_PLAYERS):
            wsum[nd, p] += value[p]


@njit(cache=True)
def step_down(tree: tuple, j: int, d: np.ndarray, node: int, a: int, n_nodes: int, virtual: bool) -> int:
    """Apply ``a`` in ``d``, move to (creating if needed) its child; returns the new node count."""
    child, _, visits, avail, wsum, mover, _, paths, plens = tree[:9]
    ch = child[node, a]
    if ch < 0:
        ch = n_nodes
        n_nodes += 1
        child[node, a] = ch
        mover[ch] = d[CURRENT]
        avail[ch] = 1.0
    rules.apply_action(d, a)
    paths[j, plens[j]] = ch
    plens[j] += 1
    if virtual:
        visits[ch] += 1.0
        virtual_loss(wsum, ch, mover[ch], d[N_PLAYERS], 1.0)
    return n_nodes


@njit(cache=True)
def terminal_values(s: np.ndarray, out: np.ndarray) -> None:
    """Per-seat values of a finished game on the network's scale (+1 a sole winner)."""
    raw = np.zeros(MAX_PLAYERS)
    rules.terminal_rewards(s, raw)
    seat_values(raw, s[N_PLAYERS], out)


@njit(cache=True)
def descend(
    tree: tuple, j: int, d: np.ndarray, mask: np.ndarray, c: float, fpu: float, forced: int, n_nodes: int
) -> tuple[int, bool]:
    """Simulation ``j`` of a batch walks the determinisation ``d`` down by PUCT (``forced`` at the root, where
    legal) with virtual loss until a node the network has not seen, a finished game (its values go to
    ``leaf_value[j]``) or a full tree; that node and the seat on move there go to ``leaf_node[j]`` and
    ``leaf_player[j]``, its legal ids to ``mask``. Returns ``(node count, whether the network must evaluate it)``.
    """
    child, expanded, leaf_node, leaf_player = tree[0], tree[6], tree[9], tree[10]
    node = 0
    tree[8][j] = 1
    tree[7][j, 0] = 0
    while True:
        leaf_node[j] = node
        leaf_player[j] = d[CURRENT]
        if rules.is_over(d):
            terminal_values(d, tree[11][j])
            return n_nodes, False
        rules.legal_mask(d, mask)
        if expanded[node] == 0:
            return n_nodes, True
        if node == 0 and forced >= 0 and mask[forced]:
            a = forced
        else:
            a = select_puct(tree, node, mask, d[CURRENT], c, fpu)
        if child[node, a] < 0 and n_nodes >= child.shape[0]:  # tree full: evaluate here
            return n_nodes, True
        n_nodes = step_down(tree, j, d, node, a, n_nodes, True)
        node = child[node, a]


@njit(cache=True)
def set_prior(prior: np.ndarray, node: int, logits: np.ndarray, mask: np.ndarray, ptemp: float) -> None:
    """Softmax of ``logits / ptemp`` over the legal ids of ``mask`` into ``prior[node]``."""
    mx = -1e30
    for a in range(mask.shape[0]):
        if mask[a] and logits[a] > mx:
            mx = logits[a]
    tot = 0.0
    for a in range(mask.shape[0]):
        if mask[a]:
            pr = math.exp((logits[a] - mx) / ptemp)
            prior[node, a] = pr
            tot += pr
        else:
            prior[node, a] = 0.0
    for a in range(mask.shape[0]):
        prior[node, a] /= tot


__all__ = [
    "FIELDS",
    "Tree",
    "Trees",
    "backup",
    "descend",
    "select_puct",
    "set_prior",
    "step_down",
    "terminal_values",
]
