"""K network searches advanced in step, the leaves of many trees evaluated by one network call.

Why: self-play searches one game at a time, and about 70% of a search is the network,
called for ``batch`` (8) leaves at a time. On the CPU that cost is per row, however many rows a
call has, so batching trees there saves only the Python around each move; on a GPU a call of a
thousand leaves costs about what eight cost on the CPU, and the CPU is left with the tree
(selection, determinisation, observations, backup). So the trees are searched in step and
their leaves go to the network together: :class:`BatchedSearch` with a
:class:`~agents.torch_evaluator.TorchEvaluator` (on a GPU), or with numba on the CPU.

The search is :func:`agents.search.search_network`'s, tree by tree: each tree selects its next
``batch`` leaves exactly as that driver does (the same determinisations from the tree's own
random stream, the same PUCT selection and virtual loss, the same tree-full rule), the leaves of
a group of trees are evaluated together, then each tree expands and backs up its leaves in the
same order. :func:`agents.net.net_forward` computes every row on its own, so a tree searched
here with numba is bit for bit the tree ``search_network`` builds alone
(``tests/test_batched_selfplay.py`` checks it); torch rounds differently, so its trees are
close, not identical.

The parts (numba, ``cache=True``):

* :func:`select_leaves`: every tree of a range with simulations left picks its next leaves and
  writes their observations (the on-move seat's view for the actor and critic, every other
  seat's view for the critic) into one buffer;
* :func:`expand_backup`: every tree of the range reads its rows of the network's outputs, sets
  the priors of its new nodes and backs up its leaves;
* :func:`search_network_batched`: the two with :func:`~agents.net.net_forward` /
  :func:`~agents.net.net_values` between them, all in numba (the CPU path).

:class:`BatchedSearch` holds the stacked trees (:class:`TreeBatch`) and the buffers and runs one
move's search for K roots as ``AZAgent.root_visits`` does (the root alone first, then the rest
of the budget), returning each root's visit counts and value in that method's form.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from splendor_env import rules
from splendor_env.observation import observe
from splendor_env.state import CURRENT, MAX_PLAYERS, N_PLAYERS

from .gumbel import GumbelRoot
from .net import NetBuffers, net_forward, net_values, num_actions_of, observation_size, seat_values
from .search import backup, descend, set_prior
from .subtree import reroot
from .torch_evaluator import TorchEvaluator

#: Trees searched together by the numba evaluator (:func:`search_network_batched`'s ``group``): one,
#: as the network costs the same per row in any batch and one tree keeps the cache to itself.
CPU_GROUP = 1
#: Trees per lane with a torch evaluator (:class:`BatchedSearch`, which says why 64).
LANE_TREES = 64


class TreeBatch:
    """``trees`` search trees as stacked arrays (leading dimension = tree), in :class:`agents.search.Tree`'s
    order, so ``arrays[i][t]`` is tree ``t``'s array ``i`` of a ``Tree``; ``used[t]`` the rows its last
    search used (what :meth:`reset` clears)."""

    def __init__(self, trees: int, max_nodes: int, num_actions: int, batch: int) -> None:
        k, m = trees, max_nodes
        self.trees, self.max_nodes, self.num_actions, self.batch = k, m, num_actions, batch
        self.arrays = (
            np.full((k, m, num_actions), -1, dtype=np.int32),  # child
            np.zeros((k, m, num_actions), dtype=np.float32),  # prior
            np.zeros((k, m)),  # visits
            np.zeros((k, m)),  # avail
            np.zeros((k, m, MAX_PLAYERS)),  # wsum
            np.zeros((k, m), dtype=np.int32),  # mover
            np.zeros((k, m), dtype=np.int8),  # expanded
            np.zeros((k, batch, m + 1), dtype=np.int32),  # paths
            np.zeros((k, batch), dtype=np.int32),  # plens
            np.zeros((k, batch), dtype=np.int32),  # leaf node
            np.zeros((k, batch), dtype=np.int32),  # leaf player
            np.zeros((k, batch, MAX_PLAYERS)),  # leaf value
            np.zeros((k, batch), dtype=np.int32),  # leaf's row in the evaluated batch, -1 = terminal
        )
        self.used = np.full(k, m, dtype=np.int64)

    def reset(self, ids: np.ndarray, seats: np.ndarray) -> None:
        """Empty trees ``ids`` for new searches by ``seats`` (only the rows their last search used)."""
        _reset_trees(self.arrays, np.asarray(ids, np.int64), np.asarray(seats, np.int64), self.used)

    def move_trees(self, sources: np.ndarray) -> None:
        """Tree ``t`` becomes a copy of tree ``sources[t]`` (as it was before this call), for every ``t``
        of ``sources``: a game's tree follows it when the games change places between searches."""
        k = len(sources)
        for a in self.arrays[:7]:
            a[:k] = a[sources]
        self.used[:k] = self.used[sources]

    def root_stats(self, t: int, seat: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(actions, visits, mean value for seat)`` of tree ``t``'s root children (``Tree.root_stats``)."""
        child, visits, wsum = self.arrays[0][t], self.arrays[2][t], self.arrays[4][t]
        actions = np.flatnonzero(child[0] >= 0)
        nodes = child[0, actions]
        return actions, visits[nodes], wsum[nodes, seat]


@njit(cache=True)
def _reset_trees(arrays: tuple, ids: np.ndarray, seats: np.ndarray, used: np.ndarray) -> None:
    """:meth:`agents.search.Tree.reset` for the trees ``ids``."""
    child, visits, avail, wsum, mover, expanded = (
        arrays[0],
        arrays[2],
        arrays[3],
        arrays[4],
        arrays[5],
        arrays[6],
    )
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
def _tree(arrays: tuple, t: int) -> tuple:
    """Tree ``t`` as the tuple of 2-D/1-D views the shared search parts take."""
    return (
        arrays[0][t],
        arrays[1][t],
        arrays[2][t],
        arrays[3][t],
        arrays[4][t],
        arrays[5][t],
        arrays[6][t],
        arrays[7][t],
        arrays[8][t],
        arrays[9][t],
        arrays[10][t],
        arrays[11][t],
        arrays[12][t],
    )


@njit(cache=True)
def select_leaves(
    t0: int,
    t1: int,
    roots: np.ndarray,
    seats: np.ndarray,
    todo: np.ndarray,
    batch: int,
    c_puct: np.ndarray,
    fpu: np.ndarray,
    arrays: tuple,
    n_nodes: np.ndarray,
    rngs: np.ndarray,
    obs: np.ndarray,
    other_obs: np.ndarray,
    leaf_mask: np.ndarray,
    other_row: np.ndarray,
    taken: np.ndarray,
    forced: np.ndarray,
) -> tuple[int, int, int]:
    """Each tree ``t`` of ``t0..t1-1`` with ``todo[t] > 0`` selects its next ``min(batch, todo[t])`` leaves
    (``taken[t]``, 0 for the others) as :func:`agents.search.search_network` does, with its root move
    ``forced[t]`` when that is ``>= 0`` (its ``forced``: Gumbel's root); the leaves
    that need the network get consecutive rows of ``obs``/``leaf_mask`` (the seat on move's
    view) and, from ``other_row[t, j]`` on, rows of ``other_obs`` (every other seat's view).
    Returns ``(rows of obs, rows of other_obs, trees that took leaves)``."""
    active = 0
    n_eval = 0
    n_other = 0
    na = arrays[0].shape[2]
    d = np.empty(roots.shape[1], dtype=roots.dtype)
    mask = np.zeros(na, dtype=np.int8)
    for t in range(t0, t1):
        if todo[t] <= 0:
            taken[t] = 0
            continue
        tree = _tree(arrays, t)
        leaf_node, leaf_player, leaf_value, leaf_row = tree[9], tree[10], tree[11], tree[12]
        root = roots[t]
        seat = seats[t]
        rng = rngs[t]
        n = root[N_PLAYERS]
        k_batch = min(batch, todo[t])
        taken[t] = k_batch
        active += 1
        nn = n_nodes[t]
        for j in range(k_batch):
            node, player, nn, needs_network = descend(
                tree, j, d, root, seat, rng, mask, c_puct[t], fpu[t], forced[t], nn, leaf_value[j]
            )
            leaf_row[j] = n_eval if needs_network else -1
            leaf_node[j] = node
            leaf_player[j] = player
            if leaf_row[j] >= 0:
                observe(d, player, obs[n_eval])
                other_row[t, j] = n_other
                for q in range(n):
                    if q != player:
                        observe(d, q, other_obs[n_other])
                        n_other += 1
                for a in range(na):
                    leaf_mask[n_eval, a] = mask[a]
                n_eval += 1
        n_nodes[t] = nn
    return n_eval, n_other, active


@njit(cache=True)
def expand_backup(
    t0: int,
    t1: int,
    roots: np.ndarray,
    todo: np.ndarray,
    ptemp: np.ndarray,
    arrays: tuple,
    leaf_mask: np.ndarray,
    other_row: np.ndarray,
    taken: np.ndarray,
    logits: np.ndarray,
    values: np.ndarray,
    other_values: np.ndarray,
) -> None:
    """Each tree of ``t0..t1-1`` that took leaves in :func:`select_leaves` reads their rows of the network's outputs,
    expands them (prior: softmax of the logits over the legal ids at temperature ``ptemp[t]``) and
    backs them up in order, as :func:`agents.search.search_network` does; ``todo[t] -= taken[t]``."""
    raw = np.zeros(MAX_PLAYERS)
    value = np.zeros(MAX_PLAYERS)
    for t in range(t0, t1):
        k_batch = taken[t]
        if k_batch == 0:
            continue
        tree = _tree(arrays, t)
        prior, expanded = tree[1], tree[6]
        leaf_node, leaf_player, leaf_value, leaf_row = tree[9], tree[10], tree[11], tree[12]
        n = roots[t, N_PLAYERS]
        for j in range(k_batch):
            e = leaf_row[j]
            if e >= 0:
                lp = leaf_player[j]
                raw[lp] = values[e]
                k = other_row[t, j]
                for q in range(n):
                    if q != lp:
                        raw[q] = other_values[k]
                        k += 1
                seat_values(raw, n, leaf_value[j])
                node = leaf_node[j]
                if expanded[node] == 0:
                    set_prior(prior, node, logits[e], leaf_mask[e], ptemp[t])
                    expanded[node] = 1
            for p in range(MAX_PLAYERS):
                value[p] = leaf_value[j, p]
            backup(tree, j, value, True, n)
        todo[t] -= k_batch


@njit(cache=True)
def search_network_batched(
    roots: np.ndarray,
    seats: np.ndarray,
    todo: np.ndarray,
    batch: int,
    group: int,
    c_puct: np.ndarray,
    fpu: np.ndarray,
    ptemp: np.ndarray,
    weights: tuple,
    arrays: tuple,
    n_nodes: np.ndarray,
    rngs: np.ndarray,
    obs: np.ndarray,
    other_obs: np.ndarray,
    leaf_mask: np.ndarray,
    other_row: np.ndarray,
    taken: np.ndarray,
    forced: np.ndarray,
    feats: np.ndarray,
    h1: np.ndarray,
    h2: np.ndarray,
    ctx: np.ndarray,
    logits: np.ndarray,
    values: np.ndarray,
    other_values: np.ndarray,
) -> None:
    """``todo[t]`` more simulations of every tree ``t`` (:func:`agents.search.search_network`'s, from
    ``roots[t]`` for ``seats[t]`` with the stream ``rngs[t]``, root move ``forced[t]`` when ``>= 0``),
    ``batch`` leaves per tree and round; ``n_nodes[t]`` is updated, ``todo`` ends at 0.

    The trees go ``group`` at a time, the leaves of a group's round evaluated by one
    :func:`~agents.net.net_forward` and one :func:`~agents.net.net_values` call. Why groups on the
    CPU: the network costs the same per row however many rows a call has, but a few trees and their
    rows stay in the cache between rounds and hundreds do not (``group = len(roots)``: one call per
    round for all of them). The trees come out the same for any ``group``.
    """
    k = roots.shape[0]
    for t0 in range(0, k, group):
        t1 = min(k, t0 + group)
        while True:
            n_eval, n_other, active = select_leaves(
                t0, t1, roots, seats, todo, batch, c_puct, fpu, arrays, n_nodes, rngs, obs, other_obs, leaf_mask,
                other_row, taken, forced,
            )  # fmt: skip
            if active == 0:
                break
            if n_eval > 0:
                net_forward(obs, n_eval, weights, feats, h1, h2, ctx, logits, values)
                net_values(other_obs, n_other, weights, feats, h1, h2, other_values)
            expand_backup(
                t0, t1, roots, todo, ptemp, arrays, leaf_mask, other_row, taken, logits, values, other_values
            )


class _NumbaLane:
    """The numba evaluator's buffers, in a lane's shape (the outputs of :func:`agents.net.net_forward`)."""

    def __init__(self, weights: tuple[np.ndarray, ...], rows: int, obs_dim: int, num_actions: int) -> None:
        others = rows * (MAX_PLAYERS - 1)
        self.buf = NetBuffers(weights, rows, others=others)
        self.obs = np.zeros((rows, obs_dim), dtype=np.float32)
        self.other_obs = np.zeros((others, obs_dim), dtype=np.float32)


class BatchedSearch:
    """One move's search for up to ``trees`` roots at once, as ``AZAgent.root_visits`` runs it alone.

    ``weights`` is the exported network (:func:`agents.net.export_network`). ``evaluator`` ``None``
    evaluates in numba on this core, ``group`` trees at a time (:func:`search_network_batched`;
    the trees are bit-identical to :func:`agents.search.search_network`'s). A
    :class:`TorchEvaluator` evaluates the trees in lanes of ``lane_trees``, in a ring: the CPU
    selects lane ``i``'s leaves and submits them, then backs up lane ``i - 1``'s (evaluated on the
    GPU meanwhile). Why lanes and not one call for all trees: the GPU's work is hidden behind the
    next lane's selection, and a lane's trees are still in the CPU's cache when its leaves come
    back; each lane costs a few host calls, so lanes of 64 trees did best (256 games, H100 host:
    1113 positions/s, against 781 with 16 and 966 with one lane of 256). ``sims`` is the
    budget of every search; the trees hold ``sims + 1`` nodes, as ``AZAgent``'s do with a
    simulation budget.
    """

    def __init__(
        self,
        weights: tuple[np.ndarray, ...],
        trees: int,
        sims: int,
        batch: int,
        evaluator: TorchEvaluator | None = None,
        group: int = CPU_GROUP,
        lane_trees: int = LANE_TREES,
    ) -> None:
        self.weights, self.sims, self.batch, self.evaluator = weights, sims, batch, evaluator
        self.num_actions = num_actions_of(weights)
        dim = observation_size(weights)
        self.tree = TreeBatch(trees, sims + 1, self.num_actions, batch)
        self.other_row = np.zeros((trees, batch), dtype=np.int32)
        self.taken = np.zeros(trees, dtype=np.int64)
        if evaluator is None:
            self.group = max(1, min(group, trees))
            self.lanes: list[Any] = [_NumbaLane(weights, self.group * batch, dim, self.num_actions)]
        else:
            self.lane_trees = max(1, min(lane_trees, trees))
            rows = self.lane_trees * batch
            self.lanes = [
                evaluator.lane(rows, rows * (MAX_PLAYERS - 1), dim, self.num_actions)
                for _ in range(-(-trees // self.lane_trees))
            ]
        self.leaf_mask = [
            np.zeros((lane.obs.shape[0], self.num_actions), dtype=np.int8) for lane in self.lanes
        ]

    def run(
        self,
        roots: np.ndarray,
        seats: np.ndarray,
        todo: np.ndarray,
        c: np.ndarray,
        fpu: np.ndarray,
        ptemp: np.ndarray,
        n_nodes: np.ndarray,
        rngs: np.ndarray,
        forced: np.ndarray | None = None,
    ) -> None:
        """``todo[t]`` more simulations of each tree (the trees in ``roots``' order), with root move
        ``forced[t]`` where given and ``>= 0``."""
        arrays, taken, k = self.tree.arrays, self.taken, roots.shape[0]
        if forced is None:
            forced = np.full(k, -1, dtype=np.int64)
        if self.evaluator is None:
            lane = self.lanes[0]
            search_network_batched(
                roots, seats, todo, self.batch, self.group, c, fpu, ptemp, self.weights, arrays, n_nodes, rngs,
                lane.obs, lane.other_obs, self.leaf_mask[0], self.other_row, taken, forced, *lane.buf.search_args(),
            )  # fmt: skip
            return
        size = self.lane_trees
        n_lanes = -(-k // size)
        evaluated = [0] * n_lanes  # rows the lane's last selection sent to the network

        def select(i: int) -> bool:
            lane, t0 = self.lanes[i], i * size
            n_eval, n_other, active = select_leaves(
                t0, min(k, t0 + size), roots, seats, todo, self.batch, c, fpu, arrays, n_nodes, rngs, lane.obs,
                lane.other_obs, self.leaf_mask[i], self.other_row, taken, forced,
            )  # fmt: skip
            evaluated[i] = n_eval
            if n_eval:
                lane.submit(n_eval, n_other)
            return active > 0

        def back(i: int) -> None:
            lane, t0 = self.lanes[i], i * size
            if evaluated[i]:
                lane.wait()
            expand_backup(
                t0, min(k, t0 + size), roots, todo, ptemp, arrays, self.leaf_mask[i], self.other_row, taken,
                lane.logits, lane.values, lane.other_values,
            )  # fmt: skip

        live = list(range(n_lanes))
        pending = -1  # the lane whose leaves are being evaluated
        while live:
            still = []
            for i in live:
                if pending == i:  # a lane alone: its leaves come back before it selects again
                    back(i)
                    pending = -1
                active = select(i)
                if pending >= 0:
                    back(pending)
                pending = i if active else -1
                if active:
                    still.append(i)
            live = still
        if pending >= 0:
            back(pending)

    def search(
        self,
        roots: np.ndarray,
        seeds: np.ndarray,
        c: np.ndarray,
        fpu: np.ndarray,
        ptemp: np.ndarray,
        sims: np.ndarray | None = None,
        keep: list[tuple[int, np.ndarray] | None] | None = None,
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Search ``roots[t]`` (each for its seat on move, stream seeded ``seeds[t]``) in trees ``0..K-1``.

        Returns each root's visit counts over the action ids and its value for the seat on move, what
        ``AZAgent.root_visits`` returns and sets as ``root_value`` (the same arithmetic): the root
        alone first (its prior guides the rest), then ``sims - 1`` more simulations (``sims[t]``, at
        most the budget, for tree ``t`` when given: self-play's cheap searches).

        ``keep[t] = (u, path)``: root ``t`` goes on in the subtree that the moves ``path`` lead to in
        tree ``u`` (the tree of its game's last search, which the caller found to have
        :func:`agents.subtree.same_information` with this root), as ``AZAgent.root_visits(after=path)``
        does; its visits count in the budget. Where that subtree is not there the tree starts empty.
        """
        k = roots.shape[0]
        seats, todo, n_nodes, rngs = self._root_alone(roots, seeds, c, fpu, ptemp, keep)
        budget = self.sims if sims is None else np.minimum(sims, self.sims)
        todo[:] = np.maximum(budget - self.tree.arrays[2][:k, 0], 0)  # a kept subtree's visits count
        if todo.max() > 0:
            self.run(roots, seats, todo, c, fpu, ptemp, n_nodes, rngs)
        self.tree.used[:k] = n_nodes
        counts, root_values = [], np.zeros(k)
        for t in range(k):
            actions, visits, values = self.tree.root_stats(t, int(seats[t]))
            cnt = np.zeros(self.num_actions)
            # the value breaks ties (its term is below 0.5, so it never outweighs a visit)
            cnt[actions] = visits + 0.25 * (1.0 + np.clip(values / np.maximum(visits, 1.0), -1.0, 1.0))
            counts.append(cnt)
            root_values[t] = float(values.sum() / max(visits.sum(), 1.0))
        return counts, root_values

    def gumbel_search(
        self,
        roots: np.ndarray,
        seeds: np.ndarray,
        c: np.ndarray,
        fpu: np.ndarray,
        ptemp: np.ndarray,
        noise: list[np.ndarray],
        actions: int,
    ) -> tuple[list[int], list[np.ndarray], np.ndarray]:
        """Gumbel AlphaZero's root for every tree, as ``AZAgent.gumbel_search`` runs it for one
        (:class:`agents.gumbel.GumbelRoot`): ``(moves, policy targets, root values)``.

        ``noise[t]`` is root ``t``'s Gumbel draw, one per legal id in order (the caller draws it from
        the root's stream, as the agent does after the search seed). The trees go through the
        schedules in step: each round, every tree still in its halving runs its next survivor's
        simulations, so a tree sees the same calls in the same order as when searched alone.
        """
        k = roots.shape[0]
        seats, todo, n_nodes, rngs = self._root_alone(roots, seeds, c, fpu, ptemp)
        mask = np.zeros(self.num_actions, dtype=np.int8)
        schedules = []
        for t in range(k):
            mask[:] = 0
            rules.legal_mask(roots[t], mask)
            legal = np.flatnonzero(mask)
            if noise[t].shape != legal.shape:
                raise ValueError(f"root {t}: {noise[t].size} Gumbel draws for {legal.size} legal moves")
            tree = tuple(a[t] for a in self.tree.arrays)
            schedules.append(GumbelRoot(tree, legal, int(seats[t]), noise[t], actions, self.sims))
        forced = np.full(k, -1, dtype=np.int64)
        for phase in range(max(r.phases for r in schedules)):
            halving = [t for t in range(k) if phase < schedules[t].phases]
            plans = {t: schedules[t].plan() for t in halving}
            for j in range(max(len(p) for p in plans.values())):
                todo[:] = 0
                for t, plan in plans.items():
                    if j < len(plan):
                        forced[t], todo[t] = plan[j]
                self.run(roots, seats, todo, c, fpu, ptemp, n_nodes, rngs, forced)
            for t in halving:
                schedules[t].halve()
        self.tree.used[:k] = n_nodes
        moves, targets, root_values = [], [], np.zeros(k)
        for t in range(k):
            move, target = schedules[t].result(self.num_actions)
            moves.append(move)
            targets.append(target)
            _, visits, values = self.tree.root_stats(t, int(seats[t]))
            root_values[t] = float(values.sum() / max(visits.sum(), 1.0))
        return moves, targets, root_values

    def _root_alone(
        self,
        roots: np.ndarray,
        seeds: np.ndarray,
        c: np.ndarray,
        fpu: np.ndarray,
        ptemp: np.ndarray,
        keep: list[tuple[int, np.ndarray] | None] | None = None,
    ) -> tuple[np.ndarray, ...]:
        """Trees ``0..K-1`` for ``roots`` (empty, or a kept subtree: :meth:`search`'s ``keep``) and
        the first simulation of each empty one (its root's prior and value); ``(seats, todo, n_nodes,
        rngs)`` for the rest of the search."""
        k = roots.shape[0]
        if k > self.tree.trees:
            raise ValueError(f"{k} roots for {self.tree.trees} trees")
        seats = roots[:, CURRENT].astype(np.int64)
        n_nodes = np.zeros(k, dtype=np.int64)
        if keep is not None and any(x is not None for x in keep):
            sources = np.array([t if x is None else x[0] for t, x in enumerate(keep)], np.int64)
            if (sources != np.arange(k)).any():  # games changed places since their last search
                self.tree.move_trees(sources)
            for t, x in enumerate(keep):
                if x is not None:
                    n_nodes[t] = reroot(_tree(self.tree.arrays, t), np.asarray(x[1], np.int64),
                                        int(self.tree.used[t]), int(seats[t]))  # fmt: skip
        fresh = np.flatnonzero(n_nodes == 0)
        self.tree.reset(fresh, seats[fresh])
        rngs = np.asarray(seeds, dtype=np.uint64).reshape(k, 1).copy()
        todo = (n_nodes == 0).astype(np.int64)
        n_nodes[fresh] = 1
        self.run(roots, seats, todo, c, fpu, ptemp, n_nodes, rngs)
        return seats, todo, n_nodes, rngs
