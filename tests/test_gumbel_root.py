"""Gumbel AlphaZero's root schedule (agents/search/gumbel.py) on hand-built trees: the completed values, the
transform, the budget split, the halving and the policy target, each against the paper's formulas
worked out by hand or with plain numpy."""

from __future__ import annotations

import numpy as np
import pytest

from agents.search.gumbel import C_SCALE, C_VISIT, GumbelRoot, _best_first, completed_q, sigma_scale

ACTIONS, SEAT = 6, 1


def _tree(
    visited: dict[int, tuple[float, float]], prior: list[float], root_value: float = 0.2, nodes: int = 0
) -> tuple:
    """A root (node 0) with one expanded child per ``visited`` action: ``{action: (visits, value sum
    for SEAT)}``; the root's own simulation holds ``root_value`` for SEAT; room for ``nodes`` nodes."""
    nodes = max(nodes, 1 + len(visited))
    child = np.full((nodes, ACTIONS), -1, dtype=np.int32)
    priors = np.zeros((nodes, ACTIONS), dtype=np.float32)
    priors[0] = prior
    visits = np.zeros(nodes)
    wsum = np.zeros((nodes, 4))
    visits[0], wsum[0, SEAT] = 1.0, root_value
    for node, (a, (n, w)) in enumerate(visited.items(), start=1):
        child[0, a] = node
        visits[node], wsum[node, SEAT] = n, w
    return child, priors, visits, np.zeros(nodes), wsum


def test_visited_moves_get_their_mean_and_the_others_the_mixed_value() -> None:
    prior = [0.1, 0.2, 0.3, 0.4, 0.0, 0.0]
    child, priors, visits, _, wsum = _tree({1: (2.0, 1.0), 3: (4.0, -2.0)}, prior, root_value=0.2)
    legal = np.array([0, 1, 2, 3])
    q = completed_q(child, visits, wsum, legal, priors[0, legal], SEAT, 0.2)
    # visited: value sum / visits
    assert q[1] == pytest.approx(0.5) and q[3] == pytest.approx(-0.5)
    # unvisited: (v_root + N * sum_b pi(b) q(b) / sum_b pi(b)) / (1 + N) over the visited b, N = 6 visits
    weighted = (0.2 * 0.5 + 0.4 * -0.5) / (0.2 + 0.4)
    mixed = (0.2 + 6 * weighted) / 7
    assert q[0] == pytest.approx(mixed) and q[2] == pytest.approx(mixed)


def test_with_nothing_visited_every_move_gets_the_roots_network_value() -> None:
    child, priors, visits, _, wsum = _tree({}, [0.5, 0.5, 0, 0, 0, 0], root_value=-0.3)
    legal = np.array([0, 1])
    assert completed_q(child, visits, wsum, legal, priors[0, legal], SEAT, -0.3).tolist() == [-0.3, -0.3]


def test_the_transform_grows_with_the_most_visited_childs_count() -> None:
    child, _, visits, _, _ = _tree({0: (3.0, 0.0), 2: (9.0, 0.0)}, [1 / 3, 1 / 3, 1 / 3, 0, 0, 0])
    assert sigma_scale(child, visits, np.array([0, 1, 2])) == pytest.approx((C_VISIT + 9) * C_SCALE)
    assert sigma_scale(child, visits, np.array([1])) == pytest.approx(C_VISIT * C_SCALE)  # none visited


@pytest.mark.parametrize("seed", range(5))
def test_best_first_is_a_stable_sort_on_the_score(seed: int) -> None:
    rng = np.random.default_rng(seed)
    score = rng.integers(0, 4, size=12).astype(np.float64)  # many ties
    items = rng.permutation(12)
    for keep in (1, 5, 12):
        expected = items[np.argsort(-score, kind="stable")][:keep]
        assert _best_first(score, items, keep).tolist() == expected.tolist()


def test_the_schedule_splits_the_budget_halves_by_score_and_targets_the_improved_policy() -> None:
    prior = [0.3, 0.25, 0.2, 0.15, 0.1, 0.0]  # action 5 illegal
    tree = _tree({}, prior, nodes=5)
    legal = np.arange(5)
    noise = np.zeros(5)
    root = GumbelRoot(tree, legal, SEAT, noise, actions=4, sims=16)
    # top-4 of noise + log prior: actions 0-3; 2 phases of 15 simulations after the root's own
    assert root.phases == 2
    assert root.plan() == [(0, 1), (1, 1), (2, 1), (3, 1)]  # 15 // 2 = 7 split over four, at least one each
    child, _, visits, _, wsum = tree
    # as if the simulations ran: give action 3 the best value by far, the others a poor one
    for node, (a, w) in enumerate([(0, -1.0), (1, -1.0), (2, -1.0), (3, 1.0)], start=1):
        child[0, a], visits[node], wsum[node, SEAT] = node, 1.0, w
    root.halve()
    assert root.plan() == [(3, 5), (0, 5)]  # best first; the last phase takes the rest: (15 - 4) // 2 each
    root.halve()
    move, target = root.result(ACTIONS)
    assert move == 3
    q = completed_q(child, visits, wsum, legal, tree[1][0, legal], SEAT, root.root_net_value)
    improved = np.log(np.array(prior[:5])) + (C_VISIT + 1.0) * C_SCALE * q
    expected = np.exp(improved - improved.max())
    assert target[:5] == pytest.approx(expected / expected.sum(), rel=1e-6)
    assert target[5] == 0.0 and target.dtype == np.float32
