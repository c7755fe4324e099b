"""Keeping a search's subtree between moves: self-play's ``selfplay.reuse``.

Why: AlphaZero kept the subtree below the move played, so the next search starts with its
visits. Here a search determinises hidden cards per simulation, so a subtree is only worth
keeping where the old search's worlds are the new one's (:func:`same_information`); then
:func:`reroot` moves it to the top of the tree (``agents.search.tree.Tree.keep_subtree``, the batched
trees of :mod:`agents.search.driver`) and the search counts its visits in the budget.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from splendor_env.state import (
    DECK_COUNT,
    MAX_RESERVED,
    MOD_ORIENT,
    MODULES,
    N_PLAYERS,
    ODECK_COUNT,
    P_RESERVED,
    P_RESERVED_BLIND,
    PD_DRAWN0,
    player_offset,
)


@njit(cache=True)
def _hides_more_than_decks(s: np.ndarray) -> bool:
    """Whether some seat of ``s`` cannot see more than the deck orders: a blind reserve is held, or
    the "draw two" trading post's cards are pending (seen by the seat on move only)."""
    for p in range(s[N_PLAYERS]):
        po = player_offset(p)
        for r in range(MAX_RESERVED):
            if s[po + P_RESERVED + r] >= 0 and s[po + P_RESERVED_BLIND + r] != 0:
                return True
    return s[MODULES] != 0 and s[PD_DRAWN0] >= 0


@njit(cache=True)
def same_information(old: np.ndarray, new: np.ndarray) -> bool:
    """Whether a tree searched from ``old`` may go on from ``new``, a later position of the same game.

    True when no card was drawn in between (every deck, and with the Orient every Orient deck,
    holds as many cards: a draw always lowers a count, the "draw two" post puts back one of two)
    and in neither position does any seat hide more than the deck orders. Then every seat of either
    position sees everything but the decks, whose unseen cards are the same, so the worlds the old
    search drew for its seat are distributed as those a fresh search from ``new`` draws for its seat,
    and the subtree's statistics are samples of the search ``new`` would run. Across a draw they are
    not: below the move that drew, each simulation drew its own card, while the real card is now
    known (an action id names a market slot, whatever card lies there).
    """
    for d in range(3):
        if old[DECK_COUNT + d] != new[DECK_COUNT + d]:
            return False
    if (old[MODULES] & MOD_ORIENT) != 0:
        for d in range(3):
            if old[ODECK_COUNT + d] != new[ODECK_COUNT + d]:
                return False
    return not _hides_more_than_decks(old) and not _hides_more_than_decks(new)


@njit(cache=True)
def reroot(tree: tuple, path: np.ndarray, used: int, seat: int) -> int:
    """Keep the subtree that the moves ``path`` lead to from the root as the whole tree.

    Its nodes move to rows ``0..m-1`` breadth first (the new root at 0, for ``seat`` on move), with
    their visits, values, priors and children; the other rows of the ``used`` the last search used
    are cleared. Returns ``m``, or 0 (and nothing changed) when ``path`` leaves the tree or ends at
    a node the network never evaluated: the caller then starts an empty tree. ``m`` is at most the
    new root's visits (a simulation adds at most one node), so the rest of a ``sims`` budget fits.
    """
    child, prior, visits, avail, wsum, mover, expanded = tree[:7]
    na = child.shape[1]
    node = 0
    for i in range(path.shape[0]):
        node = child[node, path[i]]
        if node < 0:
            return 0
    if expanded[node] == 0:
        return 0
    order = np.empty(used, dtype=np.int64)
    order[0] = node
    m = 1
    i = 0
    while i < m:
        for a in range(na):
            ch = child[order[i], a]
            if ch >= 0:
                order[m] = ch
                m += 1
        i += 1
    remap = np.full(used, -1, dtype=np.int64)
    for i in range(m):
        remap[order[i]] = i
    kid = np.empty((m, na), dtype=child.dtype)
    pri = np.empty((m, na), dtype=prior.dtype)
    vis = np.empty(m)
    av = np.empty(m)
    ws = np.empty((m, wsum.shape[1]))
    mv = np.empty(m, dtype=mover.dtype)
    ex = np.empty(m, dtype=expanded.dtype)
    for i in range(m):
        o = order[i]
        for a in range(na):
            ch = child[o, a]
            kid[i, a] = remap[ch] if ch >= 0 else -1
            pri[i, a] = prior[o, a]
        vis[i], av[i], mv[i], ex[i] = visits[o], avail[o], mover[o], expanded[o]
        for p in range(wsum.shape[1]):
            ws[i, p] = wsum[o, p]
    child[:m] = kid
    prior[:m] = pri
    visits[:m] = vis
    avail[:m] = av
    wsum[:m] = ws
    mover[:m] = mv
    expanded[:m] = ex
    child[m:used] = -1
    visits[m:used] = 0.0
    avail[m:used] = 0.0
    wsum[m:used] = 0.0
    expanded[m:used] = 0
    mover[0] = seat
    return m


__all__ = ["reroot", "same_information"]
