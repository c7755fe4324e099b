"""Keeping a search's subtree between moves (self-play's ``selfplay.reuse``).

:func:`agents.search.subtree.reroot` must carry the subtree over node for node, and only where
:func:`agents.search.subtree.same_information` says the old search's worlds are the new one's; the
per-game and batched paths must keep the same subtrees (``tests/test_batched_selfplay.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from agents import build
from agents.search.subtree import same_information
from splendor_env.actions import RESERVE_MARKET, TAKE3, num_actions
from splendor_env.deal import setup
from splendor_env.state import (
    DECK_COUNT,
    MOD_ORIENT,
    ODECK_COUNT,
    P_RESERVED,
    P_RESERVED_BLIND,
    PD_DRAWN0,
    parse_modules,
    player_offset,
    state_size,
)
from tests.helpers import play
from tests.helpers.selfplay_jobs import selfplay_test_job
from training.expert_iteration import config as search_config

SIMS = 48


def _deal(players: int = 2, seed: int = 3, modules: int = 0) -> np.ndarray:
    s = np.zeros(state_size(modules), dtype=np.int32)
    setup(s, players, seed, 100, modules)
    return s


def _subtree(arrays: tuple, node: int) -> list[tuple]:
    """The subtree under ``node`` breadth first: (visits, value sums, expanded, priors, children's
    actions) per node, which must not depend on where the nodes sit in the arrays."""
    child, prior, visits, _, wsum, _, expanded = arrays[:7]
    out, queue = [], [node]
    while queue:
        nd = queue.pop(0)
        acts = np.flatnonzero(child[nd] >= 0)
        out.append((visits[nd], tuple(wsum[nd]), expanded[nd], tuple(prior[nd]), tuple(acts)))
        queue.extend(int(child[nd, a]) for a in acts)
    return out


def _searched(sims: int = SIMS) -> tuple:
    az = build(f"az:az_2p,sims={sims}", seed=5)
    s = _deal()
    az.root_visits(s)
    return az, s, az.last_tree


def test_a_kept_subtree_is_the_old_subtree_node_for_node() -> None:
    _, _, tree = _searched()
    child, visits = tree.arrays[0], tree.arrays[2]
    acts = np.flatnonzero(child[0] >= 0)
    a = int(acts[np.argmax(visits[child[0, acts]])])  # the most visited move
    below = int(child[0, a])
    replies = np.flatnonzero(child[below] >= 0)
    b = int(replies[np.argmax(visits[child[below, replies]])])  # and the most visited reply
    expected = _subtree(tree.arrays, int(child[below, b]))
    m = tree.keep_subtree(np.array([a, b]), seat=0)
    assert m == len(expected) > 1
    assert _subtree(tree.arrays, 0) == expected
    used = tree.used
    assert (tree.arrays[0][m:used] == -1).all() and (tree.arrays[2][m:used] == 0).all()
    assert (tree.arrays[6][m:used] == 0).all() and (tree.arrays[4][m:used] == 0).all()
    assert tree.arrays[5][0] == 0  # the new root's seat


def test_a_path_that_leaves_the_tree_keeps_nothing_and_changes_nothing() -> None:
    _, _, tree = _searched(sims=4)
    before = [a.copy() for a in tree.arrays[:7]]
    unexplored = int(np.flatnonzero(tree.arrays[0][0] < 0)[0])
    assert tree.keep_subtree(np.array([unexplored]), seat=1) == 0
    assert all(np.array_equal(x, y) for x, y in zip(before, tree.arrays[:7], strict=True))


def test_same_information_only_without_draws_or_hidden_cards() -> None:
    s = _deal()
    assert same_information(s, play(s, TAKE3))  # tokens: no card drawn
    assert not same_information(s, play(s, RESERVE_MARKET))  # the market slot is refilled
    blind = s.copy()
    po = player_offset(1)
    blind[po + P_RESERVED] = int(s[DECK_COUNT])  # any card id: only the flag matters here
    blind[po + P_RESERVED_BLIND] = 1
    assert not same_information(s, blind) and not same_information(blind, s)
    orient = _deal(modules=MOD_ORIENT)
    assert same_information(orient, orient.copy())
    drawn = orient.copy()
    drawn[ODECK_COUNT + 1] -= 1
    assert not same_information(orient, drawn)
    pending = orient.copy()
    pending[PD_DRAWN0] = 0
    assert not same_information(orient, pending)


def test_the_search_goes_on_in_the_subtree_and_counts_its_visits() -> None:
    az, s, tree = _searched()
    fresh = build(f"az:az_2p,sims={SIMS}", seed=5)
    fresh.root_visits(s)
    new = play(s, TAKE3)
    kept_visits = tree.arrays[2][int(tree.arrays[0][0, TAKE3])]
    assert kept_visits > 1
    kept = az.root_visits(new, after=[TAKE3])
    alone = fresh.root_visits(new)
    assert az.simulations == fresh.simulations == SIMS  # the budget counts the kept visits
    assert np.floor(kept).sum() == np.floor(alone).sum() == SIMS - 1
    assert not np.array_equal(kept, alone)  # the kept subtree made it another search


def test_across_a_draw_the_search_starts_afresh() -> None:
    az, s, _ = _searched()
    fresh = build(f"az:az_2p,sims={SIMS}", seed=5)
    fresh.root_visits(s)
    new = play(s, RESERVE_MARKET)
    assert np.array_equal(az.root_visits(new, after=[RESERVE_MARKET]), fresh.root_visits(new))


def test_a_selfplay_job_keeps_subtrees_only_where_it_sees_every_move() -> None:
    from training.expert_iteration.selfplay import selfplay_job

    def policy(**extra: object) -> np.ndarray:
        return selfplay_job(selfplay_test_job([2], [], "az_2p", 2, **extra))["positions"]["policy"]

    assert not np.array_equal(policy(reuse=True), policy())
    # against a fixed opponent the recorder does not see the opponent's moves: nothing is kept
    versus = {"opponents": ["greedy"], "opponent_share": 1.0}
    assert np.array_equal(policy(reuse=True, **versus), policy(**versus))


def test_reuse_needs_the_puct_root() -> None:
    with pytest.raises(ValueError, match="selfplay.reuse"):
        search_config.from_dict(
            {"players": 2, "init": "fresh", "selfplay": {"reuse": True, "root": "gumbel"}}, check_specs=False
        )


def test_the_actions_of_the_module_game_fit_the_tree() -> None:
    """A kept module-game subtree: the tree of ``num_actions(modules)`` ids carries over too."""
    az = build("az:az_modules_2p,sims=24", seed=1)
    mods = parse_modules(("cities", "trading_posts", "orient", "strongholds"))
    s = _deal(modules=mods)
    az.root_visits(s)
    assert az.last_tree.num_actions == num_actions(mods)
    new = play(s, TAKE3)
    assert same_information(s, new)
    az.root_visits(new, after=[TAKE3])
    assert az.simulations == 24
