"""The one search core: determinised tree search for every game, with pluggable evaluators.

Why one core: ``mcts`` (rollouts, :func:`search_rollouts`) and ``az`` (a network,
:func:`search_network`) are the same algorithm with a different leaf evaluation and selection
rule. One tree (a node per decision, per-seat value vectors for 2-4 players), one
determinisation loop (every simulation re-determinises the root state: the fairness rule,
:mod:`agents.runner`), one backup and one budget driver (:func:`run_budget`) mean a fix or a
game feature reaches both. How they search: docs/agents.md ("One search core").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from numba import njit

from splendor_env import rules
from splendor_env.determinize import determinize_inplace
from splendor_env.observation import observe
from splendor_env.rng import rand_unit
from splendor_env.state import CURRENT, MAX_PLAYERS, N_PLAYERS, P_CARDS, P_PRESTIGE, P_TOKENS, player_offset

from .greedy import policy_action, random_legal
from .net import net_forward, net_values, seat_values
from .subtree import reroot


class Tree:
    """The arrays of one search tree (node 0 = root), allocated once and reused between moves.

    ``child[node, action]`` is the child node or -1; ``visits``/``wsum[node, seat]`` the
    visit count and per-seat value sum; ``avail`` the UCB availability count (how often the
    node's action was legal when its parent was visited); ``prior`` the PUCT prior (only
    allocated for PUCT); ``mover`` the seat that chose the node's action; the rest is
    per-batch scratch for the simulations waiting for the evaluator.
    """

    def __init__(self, max_nodes: int, num_actions: int, batch: int = 1, priors: bool = False) -> None:
        m = max_nodes
        self.max_nodes, self.num_actions, self.batch = m, num_actions, batch
        self.arrays = (
            np.full((m, num_actions), -1, dtype=np.int32),  # child
            np.zeros((m, num_actions) if priors else (1, 1), dtype=np.float32),  # prior
            np.zeros(m),  # visits
            np.zeros(m),  # avail
            np.zeros((m, MAX_PLAYERS)),  # wsum
            np.zeros(m, dtype=np.int32),  # mover
            np.zeros(m, dtype=np.int8),  # expanded
            np.zeros((batch, m + 1), dtype=np.int32),  # paths
            np.zeros(batch, dtype=np.int32),  # plens
            np.zeros(batch, dtype=np.int32),  # leaf node
            np.zeros(batch, dtype=np.int32),  # leaf player
            np.zeros((batch, MAX_PLAYERS)),  # leaf value
            np.zeros(batch, dtype=np.int32),  # leaf's row in the evaluated batch, -1 = terminal
        )
        self.used = m

    def reset(self, seat: int) -> None:
        """Empty the tree for a new search by ``seat`` (only the rows the last search used)."""
        child, _, visits, avail, wsum, mover, expanded = self.arrays[:7]
        n = self.used
        child[:n] = -1
        visits[:n] = 0.0
        avail[:n] = 0.0
        wsum[:n] = 0.0
        expanded[:n] = 0
        mover[0] = seat

    def keep_subtree(self, path: np.ndarray, seat: int) -> int:
        """Keep the subtree the moves ``path`` lead to as the whole tree (:func:`agents.subtree.reroot`): its node
        count, or 0 when it is not there (the tree is then unchanged: :meth:`reset` it)."""
        return reroot(self.arrays, np.asarray(path, dtype=np.int64), self.used, seat)

    def root_stats(self, seat: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(actions, visits, mean value for seat)`` of the root's children."""
        child, visits, wsum = self.arrays[0], self.arrays[2], self.arrays[4]
        actions = np.flatnonzero(child[0] >= 0)
        nodes = child[0, actions]
        return actions, visits[nodes], wsum[nodes, seat]

    def root_lead(self) -> float:
        """How many more visits the root's most-visited child has than the next one (all of them
        if it is the only child)."""
        child, visits = self.arrays[0], self.arrays[2]
        v = visits[child[0][child[0] >= 0]]
        if v.size < 2:
            return float(v.sum())
        top2 = np.partition(v, v.size - 2)[-2:]
        return float(top2[1] - top2[0])


def run_budget(
    run: Callable[[int, int], int],
    sims: int,
    ms: float,
    chunk: int,
    max_nodes: int,
    first: int = 0,
    decided: Callable[[int], bool] | None = None,
    max_ms: float = 0.0,
    nodes: int = 1,
) -> int:
    """Drive a search: ``run(k, n_nodes) -> n_nodes`` runs ``k`` more simulations.

    ``ms == 0``: ``sims`` simulations (``first`` of them in a first call, e.g. the root's own
    evaluation so that its prior guides the rest); with ``decided``, in chunks of ``chunk``
    and stopping early once ``decided(simulations left)`` says the rest cannot matter; with
    ``max_ms > 0``, in chunks too, stopping once ``max_ms`` milliseconds have passed (a cap for
    a server or a tournament: the search it cuts short is no longer reproducible from the seed
    alone). The chunks keep the simulations' batches as one call would, so a search that stops
    neither early nor at the cap is the same search. ``ms > 0``: chunks of ``chunk`` simulations
    until the time is up or the tree is nearly full (then the result is no longer reproducible
    from the seed alone). The caller compiles the search before a timed move (:func:`warm_up`),
    so the first move's time is not spent compiling. ``nodes``: the tree's node count to start from
    (1, the root alone; more for a subtree kept from the last move, :meth:`Tree.keep_subtree`).
    """
    start = time.perf_counter()
    n = nodes
    done = 0
    if first:
        n = run(first, n)
        done = first
    if ms == 0:
        if decided is None and max_ms <= 0:
            return run(sims - done, n) if sims > done else n
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


def warm_up(run: Callable[[int, int], int], tree: Tree, seat: int) -> None:
    """One simulation, then an empty tree again: numba compiles (or loads) the search now."""
    run(1, 1)
    tree.reset(seat)


# ---------------------------------------------------------------------------
# Shared parts (numba)


@njit(cache=True)
def terminal_values(s: np.ndarray, out: np.ndarray) -> None:
    """Per-seat values of a finished game on the network's scale (+1 a sole winner)."""
    raw = np.zeros(MAX_PLAYERS)
    rules.terminal_rewards(s, raw)
    seat_values(raw, s[N_PLAYERS], out)


@njit(cache=True)
def _margins(s: np.ndarray, out: np.ndarray) -> None:
    """``sigmoid((h_p - max_{q != p} h_q) / 3)`` per seat, ``h`` the material heuristic."""
    n = s[N_PLAYERS]
    h = np.zeros(MAX_PLAYERS)
    for p in range(n):
        po = player_offset(p)
        gems = 0
        for c in range(5):
            gems += s[po + P_TOKENS + c]
        h[p] = s[po + P_PRESTIGE] + 0.3 * s[po + P_CARDS] + 0.04 * gems + 0.08 * s[po + P_TOKENS + 5]
    for p in range(n):
        best_other = -1e9
        for q in range(n):
            if q != p and h[q] > best_other:
                best_other = h[q]
        out[p] = 1.0 / (1.0 + math.exp(-(h[p] - best_other) / 3.0))


@njit(cache=True)
def rollout_value(s: np.ndarray, out: np.ndarray, shaping: float) -> None:
    """Value in [0, 1] for every seat after a rollout: the result if the game is over, else a heuristic.

    A finished game is worth ``(1 - shaping) * share + shaping * margin``, the share of the win:
    1 a sole winner, 1/k each of k co-winners, 1/n each seat of a truncated n-player game, 0 a
    loser. Why 1/k and not a flat 1/2: with 3-4 players a draw at 1/2 is worth more than a seat's
    fair 1/n, so a trailing seat would play for the turn cap. ``margin`` makes a lost game still
    prefer a closer loss; an unfinished one (depth cap) is worth ``margin``.
    """
    for p in range(MAX_PLAYERS):
        out[p] = 0.0
    _margins(s, out)
    if rules.is_over(s):
        n = s[N_PLAYERS]
        raw = np.zeros(MAX_PLAYERS)
        rules.terminal_rewards(s, raw)  # +1 sole winner, 0 co-winner or truncated, -1 loser
        sharing = 0
        for p in range(n):
            if raw[p] == 0.0:
                sharing += 1
        for p in range(n):
            share = 1.0 if raw[p] > 0.0 else (1.0 / sharing if raw[p] == 0.0 else 0.0)
            out[p] = (1.0 - shaping) * share + shaping * out[p]


@njit(cache=True)
def rollout(
    s: np.ndarray,
    depth: int,
    greedy: bool,
    noise: float,
    eps: float,
    rng: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    """Play ``s`` forward in place for at most ``depth`` plies with the rollout policy."""
    for _ in range(depth):
        if rules.is_over(s):
            return
        p = s[CURRENT]
        rules.legal_mask(s, mask)
        if greedy:
            observe(s, p, obs)
            a = policy_action(obs, mask, rng, noise, eps)
        else:
            a = random_legal(mask, rng)
        rules.apply_action(s, a)


@njit(cache=True)
def _select_ucb(tree: tuple, node: int, mask: np.ndarray, player: int, c: float, rng: np.ndarray) -> int:
    """UCB1 over the children legal in this world (availability counts); -1 if none exists."""
    child, visits, avail, wsum = tree[0], tree[2], tree[3], tree[4]
    best_a = -1
    best_u = -1e18
    for a in range(mask.shape[0]):
        ch = child[node, a]
        if mask[a] and ch >= 0:
            u = wsum[ch, player] / visits[ch] + c * math.sqrt(math.log(avail[ch]) / visits[ch])
            u += 1e-9 * rand_unit(rng)
            if u > best_u:
                best_u = u
                best_a = a
    return best_a


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
def _virtual_loss(wsum: np.ndarray, node: int, mover: int, n: int, sign: float) -> None:
    """A pending simulation counts as a loss for the seat that chose ``node`` (and a win shared
    by the others, so the sums stay zero-sum); ``sign=-1`` takes it back."""
    wsum[node, mover] -= sign
    for q in range(n):
        if q != mover:
            wsum[node, q] += sign / (n - 1)


@njit(cache=True)
def backup(tree: tuple, j: int, value: np.ndarray, virtual: bool, n: int) -> None:
    """Add simulation ``j``'s per-seat ``value`` to every node on its path.

    With ``virtual`` the visits below the root were counted on the way down (virtual loss),
    which is taken back here.
    """
    visits, wsum, mover, paths, plens = tree[2], tree[4], tree[5], tree[7], tree[8]
    for i in range(plens[j]):
        nd = paths[j, i]
        if virtual and i > 0:
            _virtual_loss(wsum, nd, mover[nd], n, -1.0)
        else:
            visits[nd] += 1.0
        for p in range(MAX_PLAYERS):
            wsum[nd, p] += value[p]


@njit(cache=True)
def step_down(tree: tuple, j: int, d: np.ndarray, node: int, a: int, n_nodes: int, virtual: bool) -> int:
    """Apply ``a`` in ``d``, move to (creating if needed) its child; returns the new node count."""
    child, visits, avail, wsum, mover, paths, plens = (
        tree[0],
        tree[2],
        tree[3],
        tree[4],
        tree[5],
        tree[7],
        tree[8],
    )
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
        _virtual_loss(wsum, ch, mover[ch], d[N_PLAYERS], 1.0)
    return n_nodes


# ---------------------------------------------------------------------------
# Evaluator: rollouts (UCB1, progressive widening)


@njit(cache=True)
def search_rollouts(
    root: np.ndarray,
    seat: int,
    sims: int,
    c_uct: float,
    depth: int,
    greedy: bool,
    noise: float,
    eps: float,
    shaping: float,
    widen: float,
    tree: tuple,
    n_nodes_in: int,
    rng: np.ndarray,
    obs: np.ndarray,
) -> int:
    """``sims`` more UCB1 simulations with rollouts; returns the new node count.

    Expansion: one untried action per simulation, in the rollout policy's order of
    preference (greedy) or at random; a node visited ``N`` times has at most
    ``1 + widen * sqrt(N)`` children (``widen=0``: all).
    """
    child, visits, avail, paths, plens = tree[0], tree[2], tree[3], tree[7], tree[8]
    max_nodes = child.shape[0]
    na = child.shape[1]
    d = np.empty_like(root)
    mask = np.zeros(na, dtype=np.int8)
    untried_mask = np.zeros(na, dtype=np.int8)
    value = np.zeros(MAX_PLAYERS)
    n_nodes = n_nodes_in
    for _ in range(sims):
        d[:] = root
        determinize_inplace(d, seat, rng)
        node = 0
        plens[0] = 1
        paths[0, 0] = 0
        while not rules.is_over(d):
            rules.legal_mask(d, mask)
            player = d[CURRENT]
            untried = 0
            tried = 0
            for a in range(na):
                untried_mask[a] = 0
                if mask[a]:
                    ch = child[node, a]
                    if ch < 0:
                        untried += 1
                        untried_mask[a] = 1
                    else:
                        tried += 1
                        avail[ch] += 1.0
            limit = na if widen <= 0.0 else 1.0 + widen * math.sqrt(visits[node])
            if untried > 0 and n_nodes < max_nodes and (tried == 0 or tried < limit):
                if greedy:
                    observe(d, player, obs)
                    a = policy_action(obs, untried_mask, rng, noise, 0.0)
                else:
                    a = random_legal(untried_mask, rng)
                n_nodes = step_down(tree, 0, d, node, a, n_nodes, False)
                break
            a = _select_ucb(tree, node, mask, player, c_uct, rng)
            if a < 0:  # node budget exhausted with only untried actions: roll out from here
                break
            step_down(tree, 0, d, node, a, n_nodes, False)
            node = child[node, a]
        rollout(d, depth, greedy, noise, eps, rng, obs, mask)
        rollout_value(d, value, shaping)
        backup(tree, 0, value, False, d[N_PLAYERS])
    return n_nodes


# ---------------------------------------------------------------------------
# Evaluator: a network (PUCT, batched leaves)


@njit(cache=True)
def descend(
    tree: tuple,
    j: int,
    d: np.ndarray,
    root: np.ndarray,
    seat: int,
    rng: np.ndarray,
    mask: np.ndarray,
    c_puct: float,
    fpu: float,
    forced: int,
    n_nodes: int,
    leaf_value: np.ndarray,
) -> tuple[int, int, int, bool]:
    """Simulation ``j`` of a PUCT batch: ``d`` becomes a fresh determinisation of ``root`` for ``seat``,
    walked down by PUCT (``forced`` at the root, where legal) with virtual loss until a node the
    network has not seen, a finished game (its values go to ``leaf_value``) or a full tree.

    Returns ``(node, seat on move there, node count, whether the network must evaluate it)``; ``mask``
    holds that position's legal ids. The one descent of :func:`search_network` and of the batched
    driver (:mod:`agents.search_batch`), so both build the same trees.
    """
    child, expanded = tree[0], tree[6]
    max_nodes = child.shape[0]
    d[:] = root
    determinize_inplace(d, seat, rng)
    node = 0
    tree[8][j] = 1
    tree[7][j, 0] = 0
    while True:
        player = d[CURRENT]
        if rules.is_over(d):
            terminal_values(d, leaf_value)
            return node, player, n_nodes, False
        rules.legal_mask(d, mask)
        if expanded[node] == 0:
            return node, player, n_nodes, True
        if node == 0 and forced >= 0 and mask[forced]:
            a = forced
        else:
            a = select_puct(tree, node, mask, player, c_puct, fpu)
        if child[node, a] < 0 and n_nodes >= max_nodes:  # tree full: evaluate here
            return node, player, n_nodes, True
        n_nodes = step_down(tree, j, d, node, a, n_nodes, True)
        node = child[node, a]


@njit(cache=True)
def search_network(
    root: np.ndarray,
    seat: int,
    sims: int,
    c_puct: float,
    fpu: float,
    batch: int,
    ptemp: float,
    weights: tuple,
    tree: tuple,
    n_nodes_in: int,
    rng: np.ndarray,
    obs: np.ndarray,
    other_obs: np.ndarray,
    leaf_mask: np.ndarray,
    feats: np.ndarray,
    h1: np.ndarray,
    h2: np.ndarray,
    ctx: np.ndarray,
    logits: np.ndarray,
    values: np.ndarray,
    other_values: np.ndarray,
    forced: int = -1,
) -> int:
    """``sims`` more PUCT simulations, leaves evaluated ``batch`` at a time; returns the node count.

    A leaf is an unexpanded node: the network gives the prior (softmax of the actor's
    logits over the legal moves, temperature ``ptemp``) and, from the critic of every
    seat's observation, the per-seat value (:func:`agents.net.seat_values`). Virtual loss
    keeps the simulations of one batch apart. Called again with the returned count, it
    goes on where it stopped.

    ``forced >= 0``: every simulation takes that action at the root (where legal) and PUCT below
    it, so a root rule other than PUCT (Gumbel's sequential halving, :meth:`agents.az.AZAgent.gumbel_search`)
    chooses where the simulations go without a second search core.
    """
    child, prior, expanded = tree[0], tree[1], tree[6]
    leaf_node, leaf_player, leaf_value, leaf_row = tree[9], tree[10], tree[11], tree[12]
    na = child.shape[1]
    n = root[N_PLAYERS]
    d = np.empty_like(root)
    mask = np.zeros(na, dtype=np.int8)
    raw = np.zeros(MAX_PLAYERS)
    value = np.zeros(MAX_PLAYERS)
    n_nodes = n_nodes_in
    done = 0
    while done < sims:
        k_batch = min(batch, sims - done)
        n_eval = 0
        for j in range(k_batch):
            node, player, n_nodes, needs_network = descend(
                tree, j, d, root, seat, rng, mask, c_puct, fpu, forced, n_nodes, leaf_value[j]
            )
            leaf_row[j] = n_eval if needs_network else -1
            leaf_node[j] = node
            leaf_player[j] = player
            if leaf_row[j] >= 0:
                observe(d, player, obs[n_eval])
                k = 0
                for q in range(n):
                    if q != player:
                        observe(d, q, other_obs[n_eval * (n - 1) + k])
                        k += 1
                for a in range(na):
                    leaf_mask[n_eval, a] = mask[a]
                n_eval += 1
        if n_eval > 0:
            net_forward(obs, n_eval, weights, feats, h1, h2, ctx, logits, values)
            net_values(other_obs, n_eval * (n - 1), weights, feats, h1, h2, other_values)
        for j in range(k_batch):
            e = leaf_row[j]
            if e >= 0:
                lp = leaf_player[j]
                raw[lp] = values[e]
                k = 0
                for q in range(n):
                    if q != lp:
                        raw[q] = other_values[e * (n - 1) + k]
                        k += 1
                seat_values(raw, n, leaf_value[j])
                node = leaf_node[j]
                if expanded[node] == 0:
                    set_prior(prior, node, logits[e], leaf_mask[e], ptemp)
                    expanded[node] = 1
            for p in range(MAX_PLAYERS):
                value[p] = leaf_value[j, p]
            backup(tree, j, value, True, n)
        done += k_batch
    return n_nodes


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
