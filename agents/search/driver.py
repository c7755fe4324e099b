"""The one search driver: any number of network searches advanced in step, a single game a batch of one.

Why one driver: ``az``'s move, self-play (one game or hundreds at once, PUCT or Gumbel's root, kept
subtrees, playout caps) and the GPU path all search the same way, so they run through one
:class:`Search`. Each round every tree with simulations left walks its next ``batch`` leaves
(:func:`select_leaves`: determinisation from the tree's own random stream, PUCT with virtual loss,
:func:`agents.search.tree.descend`), the leaves go to the network together, then each tree expands
and backs up its leaves in order (:func:`expand_backup`). A tree's search depends
only on its root, its stream and its budget, not on which other trees share its rounds.

The network: numba on this core (:func:`simulate`, everything in one compiled call; the network
costs the same per row in any batch, so one tree at a time keeps the cache to itself), or a
:class:`~agents.nets.torch_evaluator.TorchEvaluator` (a GPU), where the trees go in lanes of
:data:`LANE_TREES` in a ring: the CPU selects lane ``i``'s leaves while lane ``i - 1``'s are evaluated
(256 games, H100 host: 1113 positions/s with lanes of 64, 781 with 16, 966 with one lane of 256).
Torch rounds differently from numba, so its trees are close, not identical.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from agents.nets.numba_net import (
    NetBuffers,
    net_forward,
    net_values,
    num_actions_of,
    observation_size,
    seat_values,
)
from agents.nets.torch_evaluator import TorchEvaluator
from agents.search.gumbel import GumbelRoot
from agents.search.tree import Trees, backup, descend, set_prior, tree_view
from splendor_env import rules
from splendor_env.determinize import determinize_inplace
from splendor_env.observation import observe
from splendor_env.state import CURRENT, MAX_PLAYERS, N_PLAYERS

Array = np.ndarray

#: Trees per lane with a torch evaluator (module docstring: why 64).
LANE_TREES = 64


class Job(NamedTuple):
    """One call's roots, as the kernels read and update them: root ``t``'s state, seat on move and random
    stream, ``params = (c, fpu, ptemp)`` arrays, its forced root move (``-1``: none), the simulations it has
    still to run and its node count; ``taken`` and ``other_row`` are a round's scratch (:func:`select_leaves`)."""

    roots: Array
    seats: Array
    rngs: Array
    params: tuple[Array, Array, Array]
    forced: Array
    todo: Array
    n_nodes: Array
    taken: Array
    other_row: Array


@njit(cache=True)
def select_leaves(t0: int, t1: int, batch: int, job: Job, arrays: tuple, lane: tuple) -> tuple[int, int]:
    """Each tree ``t`` of ``t0..t1-1`` with ``todo[t] > 0`` walks its next ``taken[t] = min(batch, todo[t])``
    leaves.

    ``lane = (obs, other_obs, leaf_mask)``: the leaves that need the network get consecutive rows of ``obs``
    and ``leaf_mask`` (the seat on move's view, its legal ids) and rows of ``other_obs`` (every other seat's
    view, for the critic) from ``other_row[t, j]`` on. Returns ``(rows of obs, rows of other_obs)``."""
    roots, seats, rngs, params, forced, todo, n_nodes, taken, other_row = job
    obs, other_obs, leaf_mask = lane
    n_eval = n_other = 0
    d = np.empty(roots.shape[1], dtype=roots.dtype)
    mask = np.zeros(leaf_mask.shape[1], dtype=np.int8)
    for t in range(t0, t1):
        taken[t] = max(0, min(batch, todo[t]))
        tree = tree_view(arrays, t)
        for j in range(taken[t]):
            d[:] = roots[t]
            determinize_inplace(d, seats[t], rngs[t])
            n_nodes[t], needs_network = descend(
                tree, j, d, mask, params[0][t], params[1][t], forced[t], n_nodes[t]
            )
            tree[12][j] = n_eval if needs_network else -1
            if needs_network:
                player = d[CURRENT]
                observe(d, player, obs[n_eval])
                other_row[t, j] = n_other
                for q in range(roots[t, N_PLAYERS]):
                    if q != player:
                        observe(d, q, other_obs[n_other])
                        n_other += 1
                leaf_mask[n_eval, :] = mask
                n_eval += 1
    return n_eval, n_other


@njit(cache=True)
def expand_backup(t0: int, t1: int, job: Job, arrays: tuple, leaf_mask: Array, out: tuple) -> None:
    """Each tree of ``t0..t1-1`` that took leaves in :func:`select_leaves` reads their rows of the network's
    outputs ``out = (logits, values, other_values)``: the prior of each new node (softmax of the logits over
    the legal ids at temperature ``ptemp[t]``), the per-seat value (:func:`agents.nets.numba_net.seat_values`),
    backed up in order; ``todo[t] -= taken[t]``."""
    roots, params, todo, taken, other_row = job.roots, job.params, job.todo, job.taken, job.other_row
    logits, values, other_values = out
    raw = np.zeros(MAX_PLAYERS)
    for t in range(t0, t1):
        tree = tree_view(arrays, t)
        prior, expanded = tree[1], tree[6]
        leaf_node, leaf_player, leaf_value, leaf_row = tree[9], tree[10], tree[11], tree[12]
        n = roots[t, N_PLAYERS]
        for j in range(taken[t]):
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
                if expanded[leaf_node[j]] == 0:
                    set_prior(prior, leaf_node[j], logits[e], leaf_mask[e], params[2][t])
                    expanded[leaf_node[j]] = 1
            backup(tree, j, leaf_value[j], True, n)
        todo[t] -= taken[t]


@njit(cache=True)
def simulate(batch: int, job: Job, arrays: tuple, lane: tuple, weights: tuple, net: tuple) -> None:
    """``todo[t]`` more simulations of every tree ``t`` with the numba network (``net``: its scratch and
    outputs, :meth:`agents.nets.numba_net.NetBuffers.search_args`), one tree at a time (the network costs
    the same per row in any batch, so a tree keeps the cache to itself), each round's leaves evaluated by
    one :func:`~agents.nets.numba_net.net_forward` and one :func:`~agents.nets.numba_net.net_values` call."""
    feats, h1, h2, ctx, logits, values, other_values = net
    for t in range(job.todo.shape[0]):
        while job.todo[t] > 0:
            n_eval, n_other = select_leaves(t, t + 1, batch, job, arrays, lane)
            if n_eval > 0:
                net_forward(lane[0], n_eval, weights, feats, h1, h2, ctx, logits, values)
                net_values(lane[1], n_other, weights, feats, h1, h2, other_values)
            expand_backup(t, t + 1, job, arrays, lane[2], (logits, values, other_values))


def run_budget(
    run: Callable[[int, int], int],
    sims: int,
    ms: float,
    chunk: int,
    max_nodes: int,
    decided: Callable[[int], bool] | None = None,
    max_ms: float = 0.0,
    nodes: int = 1,
) -> int:
    """Spend a search's budget: ``run(k, n_nodes) -> n_nodes`` runs ``k`` more simulations.

    ``ms == 0``: ``sims`` simulations; with ``decided``, in chunks of ``chunk``, stopping early once
    ``decided(simulations left)`` says the rest cannot matter; with ``max_ms > 0``, in chunks too,
    stopping once ``max_ms`` milliseconds have passed (a cap for a server or a tournament: the search
    it cuts short is no longer reproducible from the seed alone). Chunks of a multiple of the leaf
    batch keep the batches one call would have, so a search that stops neither early nor at the cap
    is the same search. ``ms > 0``: chunks until the time is up or the tree is nearly full. ``nodes``:
    the node count to start from. Returns the node count.
    """
    start = time.perf_counter()
    n, done = nodes, 0
    if ms == 0:
        if decided is None and max_ms <= 0:
            return run(sims, n) if sims > 0 else n
        cap = start + max_ms / 1000.0 if max_ms > 0 else math.inf
        while done < sims and not (decided is not None and decided(sims - done)):
            if time.perf_counter() >= cap:
                break
            k = min(chunk, sims - done)
            n = run(k, n)
            done += k
        return n
    deadline = start + ms / 1000.0
    while time.perf_counter() < deadline and n < max_nodes - chunk:
        n = run(chunk, n)
    return n


class Search:
    """Network searches of up to ``trees`` roots at once, each tree of ``max_nodes`` nodes.

    ``weights`` is the exported network (:func:`agents.nets.numba_net.export_network`); ``evaluator``
    ``None`` evaluates it in numba on this core; a :class:`TorchEvaluator` in lanes of ``lane_trees``
    (module docstring). A search's options are per tree (arrays of ``c``, ``fpu``, ``ptemp``), as
    self-play mixes player counts.
    """

    def __init__(
        self,
        weights: tuple[np.ndarray, ...],
        trees: int,
        max_nodes: int,
        batch: int,
        evaluator: TorchEvaluator | None = None,
        lane_trees: int = LANE_TREES,
    ) -> None:
        self.weights, self.batch, self.evaluator = weights, batch, evaluator
        self.num_actions, dim = num_actions_of(weights), observation_size(weights)
        self.trees = Trees(trees, max_nodes, self.num_actions, batch)
        self.other_row = np.zeros((trees, batch), dtype=np.int32)
        self.taken = np.zeros(trees, dtype=np.int64)
        self.lane_trees = 1 if evaluator is None else max(1, min(lane_trees, trees))
        rows = self.lane_trees * batch
        others = rows * (MAX_PLAYERS - 1)
        if evaluator is None:  # numba: one tree's leaves at a time, the network's buffers for them
            self.net = NetBuffers(weights, rows, others=others).search_args()
            views = [(np.zeros((rows, dim), np.float32), np.zeros((others, dim), np.float32))]
        else:
            lanes = -(-trees // self.lane_trees)
            self.lanes = [evaluator.lane(rows, others, dim, self.num_actions) for _ in range(lanes)]
            views = [(lane.obs, lane.other_obs) for lane in self.lanes]
        # what each call hands the kernels, built once: a lane's observations and its leaves' legal ids
        self.inputs = [(*v, np.zeros((rows, self.num_actions), dtype=np.int8)) for v in views]

    def run(self, job: Job) -> None:
        """``job.todo[t]`` more simulations of each of the job's trees."""
        k, arrays, inputs = job.roots.shape[0], self.trees.arrays, self.inputs
        if self.evaluator is None:
            simulate(self.batch, job, arrays, inputs[0], self.weights, self.net)
            return
        size = self.lane_trees
        evaluated = [0] * len(self.lanes)  # rows the lane's last selection sent to the network

        def select(i: int) -> bool:
            t0, t1 = i * size, min(k, (i + 1) * size)
            evaluated[i], n_other = select_leaves(t0, t1, self.batch, job, arrays, inputs[i])
            if evaluated[i]:
                self.lanes[i].submit(evaluated[i], n_other)
            return bool(job.taken[t0:t1].any())

        def back(i: int) -> None:
            lane = self.lanes[i]
            if evaluated[i]:
                lane.wait()
            out = (lane.logits, lane.values, lane.other_values)
            expand_backup(i * size, min(k, (i + 1) * size), job, arrays, inputs[i][2], out)

        live = list(range(-(-k // size)))
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

    def start(
        self,
        roots: np.ndarray,
        seeds: np.ndarray,
        params: tuple[np.ndarray, np.ndarray, np.ndarray],
        keep: list[tuple[int, np.ndarray] | None] | None = None,
    ) -> Job:
        """Trees ``0..K-1`` for ``roots`` (each for its seat on move, stream seeded ``seeds[t]``): empty, or
        ``keep[t] = (u, path)``, the subtree that the moves ``path`` lead to in tree ``u`` (the tree of
        the game's last search, which the caller found to have :func:`agents.search.subtree.same_information`
        with this root; empty where that subtree is not there); then the first simulation of each empty
        tree (its root's prior and value guide the rest)."""
        k = roots.shape[0]
        if k > self.trees.trees:
            raise ValueError(f"{k} roots for {self.trees.trees} trees")
        seats = roots[:, CURRENT].astype(np.int64)
        n_nodes = np.zeros(k, dtype=np.int64)
        if keep is not None and any(x is not None for x in keep):
            sources = np.array([t if x is None else x[0] for t, x in enumerate(keep)], np.int64)
            if (sources != np.arange(k)).any():  # games changed places since their last search
                self.trees.move_trees(sources)
            for t, x in enumerate(keep):
                if x is not None:
                    n_nodes[t] = self.trees.tree(t).keep_subtree(x[1], int(seats[t]))
        fresh = np.flatnonzero(n_nodes == 0)
        self.trees.reset(fresh, seats[fresh])
        rngs = np.asarray(seeds, dtype=np.uint64).reshape(k, 1).copy()
        todo = (n_nodes == 0).astype(np.int64)
        n_nodes[fresh] = 1
        job = Job(
            roots, seats, rngs, params, np.full(k, -1, np.int64), todo, n_nodes, self.taken, self.other_row
        )
        self.run(job)
        return job

    def results(self, job: Job) -> tuple[list[np.ndarray], np.ndarray]:
        """The searched trees' root visit counts over the action ids (the mean value breaking ties, below
        one visit) and the visit-weighted mean value of the root's children for the seat on move (what
        the search thinks the position is worth: self-play records it as a value target)."""
        k = job.roots.shape[0]
        self.trees.used[:k] = job.n_nodes
        counts, root_values = [], np.zeros(k)
        for t in range(k):
            actions, visits, values = self.trees.tree(t).root_stats(int(job.seats[t]))
            cnt = np.zeros(self.num_actions)
            # the value breaks ties (its term is below 0.5, so it never outweighs a visit)
            cnt[actions] = visits + 0.25 * (1.0 + np.clip(values / np.maximum(visits, 1.0), -1.0, 1.0))
            counts.append(cnt)
            root_values[t] = values.sum() / max(visits.sum(), 1.0)
        return counts, root_values

    def search(
        self,
        roots: np.ndarray,
        seeds: np.ndarray,
        params: tuple[np.ndarray, np.ndarray, np.ndarray],
        sims: np.ndarray,
        keep: list[tuple[int, np.ndarray] | None] | None = None,
        ms: float = 0.0,
        max_ms: float = 0.0,
        stop: float = 0.0,
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """PUCT searches of ``roots`` (:meth:`start`, then the rest of ``sims[t]`` simulations, a kept
        subtree's visits counted in it): :meth:`results`.

        The budget (:func:`run_budget`): ``ms > 0`` a time budget instead of ``sims``; ``max_ms`` a cap
        on a ``sims`` search; ``stop > 0`` ends a tree's search once its most-visited move leads the next
        by more than ``stop`` x its simulations left.
        """
        k = roots.shape[0]
        job = self.start(roots, seeds, params, keep)
        left = np.maximum(np.asarray(sims, np.int64) - self.trees.arrays[2][:k, 0].astype(np.int64), 0)

        def decided(_: int) -> bool:
            for t in np.flatnonzero(left > 0):
                if self.trees.tree(int(t)).root_lead() > stop * left[t]:
                    left[t] = 0
            return not left.any()

        def run(chunk: int, _: int) -> int:
            job.todo[:] = chunk if ms > 0 else np.minimum(left, chunk)
            left[:] -= job.todo if ms == 0 else 0
            self.run(job)
            return int(job.n_nodes.max())

        budget, nodes = int(left.max()) if k else 0, int(job.n_nodes.max())
        stopping = decided if stop > 0 else None
        run_budget(run, budget, ms, 4 * self.batch, self.trees.max_nodes, stopping, max_ms, nodes)
        return self.results(job)

    def gumbel_search(
        self,
        roots: np.ndarray,
        seeds: np.ndarray,
        params: tuple[np.ndarray, np.ndarray, np.ndarray],
        sims: int,
        noise: list[np.ndarray],
        actions: int,
    ) -> tuple[list[int], list[np.ndarray], np.ndarray]:
        """Gumbel AlphaZero's root for every tree (:class:`agents.search.gumbel.GumbelRoot`): ``(moves,
        policy targets, root values)``. ``noise[t]`` is root ``t``'s Gumbel draw, one per legal id in order.
        The trees go through their halving schedules in step: each round, every tree still halving runs
        its next survivor's simulations, so a tree sees the same calls in the same order as when alone.
        """
        k = roots.shape[0]
        job = self.start(roots, seeds, params)
        mask = np.zeros(self.num_actions, dtype=np.int8)
        schedules = []
        for t in range(k):
            rules.legal_mask(roots[t], mask)
            legal = np.flatnonzero(mask)
            if noise[t].shape != legal.shape:
                raise ValueError(f"root {t}: {noise[t].size} Gumbel draws for {legal.size} legal moves")
            schedules.append(
                GumbelRoot(self.trees.tree(t).arrays, legal, int(job.seats[t]), noise[t], actions, sims)
            )
        for phase in range(max(r.phases for r in schedules)):
            halving = [t for t in range(k) if phase < schedules[t].phases]
            plans = {t: schedules[t].plan() for t in halving}
            for j in range(max(len(p) for p in plans.values())):
                job.todo[:] = 0
                for t, plan in plans.items():
                    if j < len(plan):
                        job.forced[t], job.todo[t] = plan[j]
                self.run(job)
            for t in halving:
                schedules[t].halve()
        moves, targets = zip(*(r.result(self.num_actions) for r in schedules), strict=True)
        return list(moves), list(targets), self.results(job)[1]


__all__ = [
    "LANE_TREES",
    "Job",
    "Search",
    "expand_backup",
    "run_budget",
    "select_leaves",
    "simulate",
]
