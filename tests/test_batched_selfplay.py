"""The one search driver (agents/search/driver.py) and self-play's games at once (training/expert_iteration/selfplay.py):
a tree searched beside others is the tree searched alone, a job's games played at once are the games
played one at a time, and torch's evaluator answers as numba's to float rounding."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import numpy as np
import pytest
import torch

from agents.nets.numba_net import forward_numpy
from agents.nets.shipped import resolve_model
from agents.nets.torch_evaluator import TorchEvaluator
from agents.players.az import AZAgent
from agents.positions import sample_states
from agents.search.driver import Search
from agents.search.subtree import same_information
from splendor_env import state as st
from splendor_env.determinize import determinize
from tests.helpers import legal, play
from tests.helpers.selfplay_jobs import SIMS, selfplay_test_job
from training.expert_iteration import config as search_config
from training.expert_iteration.replay import FIELDS
from training.expert_iteration.selfplay import selfplay_job

ALL = ("cities", "trading_posts", "orient", "strongholds")


#: Marks a test that runs only where torch sees a CUDA GPU (CI has none).
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
#: Where the torch evaluator runs: always the CPU, and the GPU on a machine that has one.
DEVICES = ["cpu", pytest.param("cuda", marks=needs_cuda)]


@cache
def _agent(model: str) -> AZAgent:
    return AZAgent(str(resolve_model(model)), seed=0, sims=SIMS, batch=4)


def _roots(n: int, modules: tuple[str, ...], k: int, seed: int) -> list[np.ndarray]:
    """``k`` decision states from random games, determinised for the seat on move."""
    states = sample_states(n, 3, seed=seed, modules=modules)
    step = max(1, len(states) // k)
    return [determinize(s, int(s[st.CURRENT]), seed + i) for i, s in enumerate(states[::step][:k])]


def _search_alone(az: AZAgent, roots: list[np.ndarray], seeds: list[int]) -> list[tuple[Any, ...]]:
    """``AZAgent.root_visits`` one root at a time: counts, root value and the tree's arrays."""
    out = []
    for s, seed in zip(roots, seeds, strict=True):
        az.seed(seed)
        counts = az.root_visits(s)
        tree = az.last_tree
        assert tree is not None
        out.append((counts, az.root_value, [a[: tree.used].copy() for a in tree.arrays[:7]]))
    return out


def _params(az: AZAgent, n: int, modules: tuple[str, ...], k: int) -> tuple[np.ndarray, ...]:
    """``(c, fpu, ptemp)`` of ``az``'s search for ``k`` roots."""
    p = az.search_params(az.network(n, modules), n)
    return tuple(np.full(k, float(p[key])) for key in ("c", "fpu", "ptemp"))


@pytest.mark.parametrize(
    ("model", "n", "modules"),
    [("az_2p", 2, ()), ("az_3_4p", 3, ()), ("az_3_4p", 4, ()), ("az_modules_2p", 2, ALL)],
)
def test_a_tree_searched_beside_others_is_the_tree_searched_alone(
    model: str, n: int, modules: tuple[str, ...]
) -> None:
    az = _agent(model)
    net = az.network(n, modules)
    roots = _roots(n, modules, 6, seed=n)
    seeds = [100 + i for i in range(len(roots))]
    alone = _search_alone(az, roots, seeds)
    search = Search(net.weights, len(roots) + 2, SIMS + 1, 4)
    k = len(roots)
    streams = np.array([np.random.default_rng(s).integers(0, 2**63) for s in seeds], dtype=np.uint64)
    counts, values = search.search(
        np.array(roots, np.int32), streams, _params(az, n, modules, k), np.full(k, SIMS)
    )
    for t, (ref_counts, ref_value, ref_arrays) in enumerate(alone):
        assert np.array_equal(counts[t], ref_counts)
        assert values[t] == ref_value
        used = int(search.trees.used[t])
        assert used == ref_arrays[0].shape[0]
        mine = [a[t][:used] for a in search.trees.arrays[:7]]
        expanded = ref_arrays[6] == 1
        assert np.array_equal(mine[6], ref_arrays[6])
        for i in (0, 2, 3, 4, 5):  # child, visits, avail, wsum, mover: bit for bit
            assert np.array_equal(mine[i], ref_arrays[i]), i
        assert np.array_equal(mine[1][expanded], ref_arrays[1][expanded])  # the priors of expanded nodes


@pytest.mark.parametrize(("model", "n", "modules"), [("az_2p", 2, ()), ("az_3_4p", 4, ())])
def test_gumbels_root_beside_other_trees_searches_as_the_agent_does_alone(
    model: str, n: int, modules: tuple[str, ...]
) -> None:
    az = _agent(model)
    net = az.network(n, modules)
    roots = _roots(n, modules, 5, seed=10 + n)
    seeds = [200 + i for i in range(len(roots))]
    alone, streams, noise = [], [], []
    for s, seed in zip(roots, seeds, strict=True):
        az.seed(seed)
        move, target = az.gumbel_search(s, 4)
        alone.append((move, target, az.root_value))
        rng = np.random.default_rng(seed)  # the agent's stream: the search seed, then the noise
        streams.append(rng.integers(0, 2**63))
        noise.append(rng.gumbel(size=int(target.astype(bool).sum())))
    k = len(roots)
    search = Search(net.weights, k, SIMS + 1, 4)
    params = _params(az, n, modules, k)
    moves, targets, values = search.gumbel_search(
        np.array(roots, np.int32), np.array(streams, np.uint64), params, SIMS, noise, 4
    )
    for t, (move, target, value) in enumerate(alone):
        assert moves[t] == move and values[t] == value
        np.testing.assert_array_equal(targets[t], target)
    with pytest.raises(ValueError, match="root 0: 2 Gumbel draws for"):
        search.gumbel_search(
            np.array(roots, np.int32), np.array(streams, np.uint64), params, SIMS, [np.zeros(2)] * k, 4
        )
    # torch's rounding gives other trees, but the same kind of answer: a legal move, a distribution
    ev = TorchEvaluator(copy.deepcopy(net.ppo.policy), "cpu")
    moves, targets, _ = Search(net.weights, k, SIMS + 1, 4, ev, lane_trees=2).gumbel_search(
        np.array(roots, np.int32), np.array(streams, np.uint64), params, SIMS, noise, 4
    )
    for t in range(k):
        legal = alone[t][1] > 0
        assert legal[moves[t]] and abs(float(targets[t].sum()) - 1.0) < 1e-5
        assert np.array_equal(targets[t] > 0, legal)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_evaluates_as_numba_does_to_float_rounding(device: str) -> None:
    az = _agent("az_2p")
    net = az.network(2, ())
    roots = _roots(2, (), 8, seed=5)
    k = len(roots)
    ev = TorchEvaluator(copy.deepcopy(net.ppo.policy), device)
    lane = ev.lane(k, k, net.obs_dim, net.num_actions)
    from splendor_env.observation import observe

    for i, s in enumerate(roots):
        observe(s, int(s[st.CURRENT]), lane.obs[i])
        observe(s, 1 - int(s[st.CURRENT]), lane.other_obs[i])
    lane.submit(k, k)
    lane.wait()
    logits, values = forward_numpy(net.weights, lane.obs[:k])
    _, other = forward_numpy(net.weights, lane.other_obs[:k])
    assert np.abs(lane.logits[:k] - logits).max() < 1e-3
    assert (
        np.abs(lane.values[:k] - values).max() < 1e-4 and np.abs(lane.other_values[:k] - other).max() < 1e-4
    )
    seeds = np.arange(k, dtype=np.uint64)
    params = _params(az, 2, (), k)
    budget = np.full(k, SIMS)
    ref_counts, ref_values = Search(net.weights, k, SIMS + 1, 4).search(
        np.array(roots, np.int32), seeds, params, budget
    )
    for lane_trees in (1, 3, k):  # lanes in a ring, the last one shorter
        counts, vals = Search(net.weights, k, SIMS + 1, 4, ev, lane_trees=lane_trees).search(
            np.array(roots, np.int32), seeds, params, budget
        )
        assert np.abs(vals - ref_values).max() < 1e-3
        assert (
            sum(np.array_equal(np.floor(a), np.floor(b)) for a, b in zip(counts, ref_counts, strict=True))
            >= k - 1
        )


@pytest.mark.parametrize("device", DEVICES)
def test_torch_lanes_go_on_in_kept_subtrees(device: str) -> None:
    """``selfplay.reuse`` on the GPU path: with torch's evaluator, trees in a ring of lanes, the next
    search of each game goes on in the subtree of its move (the games in other places, so the trees
    follow them): its moves keep at least the visits they had there, the budget counts them, and
    the answer is numba's to float rounding."""
    az = _agent("az_2p")
    sims = 48  # enough for the visited moves to include one that draws no card
    net = az.network(2, ())
    roots = [r for r in _roots(2, (), 60, seed=7) if len(legal(r)) > 1][:6]
    k = len(roots)
    seeds = np.arange(k, dtype=np.uint64)
    params = _params(az, 2, (), k)
    ev = TorchEvaluator(copy.deepcopy(net.ppo.policy), device)
    numba = Search(net.weights, k, sims + 1, 4)
    lanes = Search(net.weights, k, sims + 1, 4, ev, lane_trees=2)
    budget = np.full(k, sims)
    numba_counts, _ = numba.search(np.array(roots, np.int32), seeds, params, budget)
    lanes.search(np.array(roots, np.int32), seeds, params, budget)
    keep, after, before = [], [], []
    for t, s in enumerate(roots):  # each tree's most visited move that draws no card, if one has visits
        moves = [int(a) for a in np.argsort(-numba_counts[t]) if numba_counts[t][a] >= 2]
        a = next((a for a in moves if same_information(s, play(s, a))), None)
        after.append(play(s, moves[0] if a is None else a))
        if a is None:  # a card is drawn: this game's tree starts afresh beside the kept ones
            keep.append(None)
            before.append(None)
            continue
        child, visits = lanes.trees.arrays[0][t], lanes.trees.arrays[2][t]
        below = int(child[0, a])
        assert below > 0
        before.append(np.where(child[below] >= 0, visits[np.maximum(child[below], 0)], 0))
        keep.append((t, np.array([a], np.int64)))
    assert sum(x is not None for x in keep) >= 4
    order = np.arange(k)[::-1]  # the games changed places since their last search
    new_roots = np.array([after[t] for t in order], np.int32)
    ref_counts, ref_values = numba.search(new_roots, seeds, params, budget, keep=[keep[t] for t in order])
    counts, values = lanes.search(new_roots, seeds, params, budget, keep=[keep[t] for t in order])
    for i, t in enumerate(order):
        assert np.floor(counts[i]).sum() == sims - 1  # the budget counts the kept visits
        if before[t] is not None:
            assert (np.floor(counts[i]) >= before[t]).all() and before[t].sum() > 0
    assert np.abs(values - ref_values).max() < 1e-3
    same = sum(np.array_equal(np.floor(a), np.floor(b)) for a, b in zip(counts, ref_counts, strict=True))
    assert same >= k - 1


def _assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    for k in FIELDS:
        assert a["positions"][k].dtype == b["positions"][k].dtype, k
        assert np.array_equal(a["positions"][k], b["positions"][k]), k
    assert a["records"] == b["records"]


@pytest.mark.parametrize(
    ("players", "modules", "init", "games", "extra"),
    [
        ([2], [], "az_2p", 3, {}),
        ([3], [], "az_3_4p", 3, {"batched_games": 2}),  # two at a time: the slots refill
        ([3, 4], [], "az_3_4p", 2, {}),  # player counts alternate within a job
        ([2], ["cities", "orient"], "fresh", 2, {}),  # a module game, a fresh network of that game
        ([2], [], "az_2p", 3, {"full_share": 0.5, "cheap_sims": 4}),  # playout-cap randomisation
        ([3, 4], [], "az_3_4p", 2, {"full_share": 0.3, "cheap_sims": 3, "record_share": 0.5}),
        ([2], [], "az_2p", 3, {"root": "gumbel", "gumbel_actions": 4}),  # Gumbel's root
        ([2], [], "az_2p", 3, {"reuse": True}),  # subtrees kept between a game's searches
        ([3, 4], [], "az_3_4p", 3, {"reuse": True, "full_share": 0.5, "cheap_sims": 4, "batched_games": 2}),
        ([2], ["cities", "trading_posts", "orient", "strongholds"], "az_modules_2p", 1, {"reuse": True}),
        (
            [3, 4],
            [],
            "az_3_4p",
            2,
            {"root": "gumbel", "gumbel_actions": 16, "full_share": 0.5, "cheap_sims": 4},
        ),
        (
            [2],
            ["cities", "trading_posts", "orient", "strongholds"],
            "az_modules_2p",
            1,
            {"root": "gumbel", "gumbel_actions": 3, "record_share": 0.5},
        ),
    ],
)
def test_a_jobs_games_at_once_are_its_games_one_at_a_time(
    players: list[int], modules: list[str], init: str, games: int, extra: dict[str, Any]
) -> None:
    per_game = selfplay_job(selfplay_test_job(players, modules, init, games, **{**extra, "batched_games": 1}))
    batched = selfplay_job(selfplay_test_job(players, modules, init, games, batched=True, **extra))
    assert len(batched["positions"]["value"]) > 0
    _assert_same(per_game, batched)


@needs_cuda
@pytest.mark.parametrize(
    "extra", [{}, {"root": "gumbel", "gumbel_actions": 4}, {"reuse": True}], ids=["puct", "gumbel", "reuse"]
)
def test_a_batched_job_on_the_gpu_plays_the_jobs_games_with_legal_targets(extra: dict[str, Any]) -> None:
    """On a GPU the leaves' float rounding differs from numba's, so the games may differ from the
    per-game path's: every game of the job recorded, every field of a position filled, every target
    a distribution over the legal moves of its position."""
    batched = selfplay_job(
        selfplay_test_job([2], [], "az_2p", 3, batched=True, batched_device="cuda", **extra)
    )
    pos = batched["positions"]
    assert len(batched["records"]) == 3 and len(pos["value"]) > 0
    assert set(pos) == set(FIELDS)
    assert np.allclose(pos["policy"].sum(axis=1), 1.0, atol=1e-4)
    assert not (pos["policy"][pos["mask"] == 0] > 0).any()


def test_games_with_opponents_are_played_one_at_a_time_in_job_order() -> None:
    versus = {"opponents": ["greedy"], "opponent_share": 0.5}
    per_game = selfplay_job(selfplay_test_job([2], [], "az_2p", 4, batched_games=1, **versus))
    batched = selfplay_job(selfplay_test_job([2], [], "az_2p", 4, **versus))
    seats = [r["search_seat"] for r in batched["records"]]
    assert any(s >= 0 for s in seats) and any(s < 0 for s in seats)  # both kinds of game in the job
    _assert_same(per_game, batched)


@pytest.mark.slow
def test_a_run_with_batched_selfplay_trains_on_the_same_positions(tmp_path) -> None:
    """How many games a worker plays at once changes how it plays an iteration's games, not what it records."""
    from training.expert_iteration.loop import search_train

    buffers = {}
    for batched in (False, True):
        raw = {
            "players": 2,
            "init": "fresh",
            "output_dir": str(tmp_path / f"run-{batched}"),
            "iterations": 1,
            "selfplay": {
                "games": 4,
                "sims": 8,
                "games_per_job": 4,
                "max_turns": 40,
                "batched_games": 4 if batched else 1,
            },
            "buffer": {"capacity": 4000},
            "train": {"batch_size": 32, "epochs": 1, "min_positions": 10},
            "gate": {"games": 2, "sims": 8},
            "eval": {"every": 5, "games": 2, "sims": 8, "opponents": ["greedy"], "modes": ["ppo"]},
        }
        search_train(search_config.from_dict(raw), workers=1, progress=False, log=lambda *_: None)
        with np.load(tmp_path / f"run-{batched}" / "checkpoints" / "buffer.npz") as saved:
            buffers[batched] = {k: saved[k].copy() for k in saved.files}
    assert buffers[False].keys() == buffers[True].keys() and len(buffers[False]["obs"]) > 0
    for key in buffers[False]:
        np.testing.assert_array_equal(buffers[False][key], buffers[True][key], err_msg=key)


def test_batched_options_are_checked_with_the_config() -> None:
    with pytest.raises(ValueError, match="selfplay.batched_device"):
        search_config.from_dict({"players": 2, "init": "fresh", "selfplay": {"batched_device": "tpu"}})


def test_a_game_against_opponents_is_the_same_whatever_else_its_job_holds() -> None:
    """A job's games share their opponents' agents; each game seeds them as it starts, so a game's moves
    depend on its own seeds only, not on which games were cut into its job (they took the last built
    game's streams)."""
    job = selfplay_test_job([3], [], "az_3_4p", 4, opponents=["random"], opponent_share=1.0, max_turns=12)
    together = {r["game"]: r["actions"] for r in selfplay_job(job)["records"]}
    for g in job["games"]:
        alone = selfplay_job({**job, "games": [g]})["records"][0]
        assert alone["search_seat"] >= 0 and alone["actions"] == together[g], g
