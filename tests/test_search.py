"""The shared search core (agents/search/tree.py) and its two evaluators: per-seat values for 2-4 players,
module sub-decisions as tree levels, budgets, and ``az`` on every game a shipped network covers."""

from __future__ import annotations

import time

import numpy as np
import pytest

import agents
from agents.nets.numba_net import seat_values
from agents.players.mcts import rollout_value
from agents.search.driver import run_budget
from agents.search.tree import Tree, terminal_values
from splendor_env import rules
from splendor_env import state as st
from splendor_env.determinize import determinize
from tests.helpers.decisions import decision_inputs, sample_states

ALL = ("cities", "trading_posts", "orient", "strongholds")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_seat_values_are_zero_sum_differences(n: int) -> None:
    rng = np.random.default_rng(n)
    raw = np.zeros(st.MAX_PLAYERS)
    raw[:n] = rng.uniform(-1, 1, n)
    out = np.full(st.MAX_PLAYERS, 9.0)
    seat_values(raw, n, out)
    assert abs(out[:n].sum()) < 1e-12 and not out[n:].any()
    for p in range(n):
        others = [raw[q] for q in range(n) if q != p]
        assert out[p] == pytest.approx(0.5 * (raw[p] - np.mean(others)))
    if n == 2:  # az's two-player value: half the difference of the two critics
        assert out[0] == pytest.approx(0.5 * (raw[0] - raw[1]))


def _finished(n: int, seed: int) -> np.ndarray:
    s = sample_states(n, 1, seed=seed)[-1]
    mask = np.zeros(72, dtype=np.int8)
    while not rules.is_over(s):
        rules.legal_mask(s, mask)
        rules.apply_action(s, int(np.flatnonzero(mask)[0]))
    return s


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_finished_game_is_valued_from_the_engine_result(n: int) -> None:
    s = _finished(n, seed=n)
    rewards = np.zeros(st.MAX_PLAYERS)
    rules.terminal_rewards(s, rewards)
    values = np.zeros(st.MAX_PLAYERS)
    terminal_values(s, values)
    winners = [p for p in range(n) if rewards[p] == 1]
    if len(winners) == 1:  # a sole winner is worth +1 whatever the player count
        assert values[winners[0]] == pytest.approx(1.0)
        assert all(values[p] < 0 for p in range(n) if p != winners[0])
    shares = np.zeros(st.MAX_PLAYERS)
    rollout_value(s, shares, 0.0)  # the rollout evaluator's share of the win
    if len(winners) == 1:
        assert shares[:n] == pytest.approx((rewards[:n] + 1) / 2)


@pytest.mark.parametrize(
    ("n", "co_winners", "expected"),
    [
        (2, [0, 1], [0.5, 0.5]),
        (3, [1, 2], [0.0, 0.5, 0.5]),
        (4, [0, 2, 3], [1 / 3, 0.0, 1 / 3, 1 / 3]),
        (3, None, [1 / 3] * 3),  # None: truncated at the turn cap
        (4, None, [0.25] * 4),
    ],
)
def test_the_rollout_value_splits_a_shared_or_truncated_game(
    n: int, co_winners: list[int] | None, expected: list[float]
) -> None:
    s = _finished(n, seed=n)
    if co_winners is None:
        s[st.PHASE] = st.PHASE_TRUNCATED
    else:
        s[st.PHASE] = st.PHASE_GAME_OVER
        for p in range(n):
            s[st.OUTCOME + p] = int(p in co_winners)
    shares = np.zeros(st.MAX_PLAYERS)
    rollout_value(s, shares, 0.0)
    assert shares[:n] == pytest.approx(expected)
    assert shares[:n].sum() == pytest.approx(1.0)  # the seats share one win, whatever the count
    margins = np.zeros(st.MAX_PLAYERS)
    rollout_value(s, margins, 1.0)  # shaping 1: the material margin alone
    mixed = np.zeros(st.MAX_PLAYERS)
    rollout_value(s, mixed, 0.25)
    assert mixed[:n] == pytest.approx(0.75 * np.array(expected) + 0.25 * margins[:n])


def test_run_budget_counts_simulations_and_respects_the_clock() -> None:
    calls: list[int] = []

    def run(k: int, n: int) -> int:
        calls.append(k)
        return n + k

    assert run_budget(run, 9, 0.0, 4, 100) == 10 and calls == [9]  # one call: the batches one search has
    calls.clear()
    run_budget(run, 10, 5.0, 4, 1000)
    assert calls and set(calls) == {4}  # the clock, not sims, decides
    calls.clear()
    assert run_budget(run, 10, 1e6, 4, 20) <= 20  # a full tree stops a timed search


def test_run_budget_stops_once_decided_in_whole_chunks() -> None:
    calls: list[int] = []
    asked: list[int] = []

    def run(k: int, n: int) -> int:
        calls.append(k)
        return n + k

    def decided(left: int) -> bool:
        asked.append(left)
        return left <= 5

    assert run_budget(run, 17, 0.0, 4, 100, decided=decided) == 1 + 12  # the root node + 12 runs
    assert calls == [4, 4, 4] and asked == [17, 13, 9, 5]  # asked with what is left, before each chunk
    calls.clear()
    run_budget(run, 9, 0.0, 4, 100, decided=lambda left: False)
    assert calls == [4, 4, 1]  # never decided: every simulation, the last chunk short


def test_run_budget_caps_a_sims_search_at_max_ms() -> None:
    calls: list[int] = []

    def run(k: int, n: int) -> int:
        calls.append(k)
        return n + k

    assert run_budget(run, 9, 0.0, 4, 100, max_ms=1e6) == 10
    assert calls == [4, 4, 1]  # a cap never reached: every simulation, in chunks
    calls.clear()
    clock = iter(range(100))

    def slow(k: int, n: int) -> int:  # each chunk "takes" the whole cap
        calls.append(k)
        next(clock)
        time.sleep(0.002)
        return n + k

    assert run_budget(slow, 999, 0.0, 4, 2000, max_ms=1.0) < 1000
    assert len(calls) <= 2  # the cap stops it within a chunk or two


@pytest.mark.parametrize("spec", ["mcts:sims=64,depth=20", "az:sims=64,batch=4"])
def test_a_cap_the_search_does_not_reach_changes_no_move(spec: str) -> None:
    states = sample_states(2, 1, seed=3, max_per_game=40)[::8]
    plain, capped = agents.make(spec, seed=7), agents.make(spec + ",max_ms=60000", seed=7)
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    for s in states:
        obs, mask, seat = decision_inputs(s)
        assert plain.act(obs, mask, determinize(s, seat, rng_a)) == capped.act(
            obs, mask, determinize(s, seat, rng_b)
        )


def test_max_ms_stops_a_large_sims_search_and_is_not_a_second_clock() -> None:
    agent = agents.make("az:sims=20000,batch=4,stop=0,max_ms=30", seed=0)
    s = sample_states(2, 1, seed=1, max_per_game=10)[5]
    agent.root_visits(s)  # compiles and loads the network
    agent.root_visits(s)
    assert 0 < agent.simulations < 20000
    for spec, words in (("az:ms=50,max_ms=20", "max_ms=20.0"), ("mcts:max_ms=-1", "max_ms=-1.0")):
        with pytest.raises(ValueError, match=words + r".*not with ms"):
            agents.make(spec)


def test_root_lead_is_the_visits_between_the_two_most_visited_children() -> None:
    tree = Tree.alone(6, 4, priors=True)
    child, visits = tree.arrays[0], tree.arrays[2]
    assert tree.root_lead() == 0.0  # no child yet
    child[0, 3], visits[1] = 1, 7.0
    assert tree.root_lead() == 7.0  # an only child leads by all its visits
    child[0, 0], visits[2] = 2, 9.0
    child[0, 2], visits[3] = 3, 4.0
    assert tree.root_lead() == 2.0


def test_tree_reset_clears_what_the_last_search_used() -> None:
    tree = Tree.alone(5, 3, priors=True)
    child, _, visits, _, wsum = tree.arrays[:5]
    child[2, 1] = 4
    visits[3] = 7
    wsum[1, 2] = 0.5
    tree.reset(seat=2)
    assert (child == -1).all() and not visits.any() and not wsum.any() and tree.arrays[5][0] == 2


@pytest.mark.parametrize(
    "n, modules",
    [(3, ()), (4, ()), (3, ("cities", "orient")), (2, ALL), (4, ("strongholds", "trading_posts"))],
)
def test_mcts_counts_are_per_seat_and_legal(n: int, modules: tuple[str, ...]) -> None:
    agent = agents.make("mcts:sims=24,depth=15", seed=0)
    rng = np.random.default_rng(0)
    for s in sample_states(n, 1, seed=5, max_per_game=60, modules=modules)[::9]:
        obs, mask, seat = decision_inputs(s)
        counts = agent.root_counts(determinize(s, seat, rng))
        assert counts.shape == mask.shape and (counts[mask == 0] == 0).all()
        if mask.sum() > 1:
            assert counts.sum() > 0
        assert mask[agent.act(obs, mask, determinize(s, seat, rng))] == 1


def test_mcts_time_budget() -> None:
    agent = agents.make("mcts:ms=20", seed=0)
    s = sample_states(2, 1, seed=1, max_per_game=10)[5]
    counts = agent.root_counts(determinize(s, int(s[st.CURRENT]), 0))
    assert np.floor(counts).sum() >= 16  # at least one chunk of simulations


# ---------------------------------------------------------------------------
# az on every game a shipped network covers

pytest.importorskip("sb3_contrib")


@pytest.fixture(scope="module")
def az() -> agents.Agent:
    return agents.make("az:sims=24,batch=4", seed=0)


@pytest.mark.slow
@pytest.mark.parametrize(
    "n, modules, network",
    [(2, (), "az_2p_v5"), (3, (), "az_3_4p_v2"), (4, (), "az_3_4p_v2"), (2, ALL, "az_modules_2p_v2")],
)
def test_az_picks_the_network_of_the_game(az: agents.Agent, n: int, modules: tuple, network: str) -> None:
    az.check_game(n, modules)
    assert az.net.label == network
    rng = np.random.default_rng(1)
    phases = set()
    for s in sample_states(n, 2, seed=7, max_per_game=120, modules=modules)[::11]:
        obs, mask, seat = decision_inputs(s)
        phases.add(int(s[st.PHASE]))
        a = az.act(obs, mask, determinize(s, seat, rng))
        assert mask[a] == 1
        assert az.net.label == network  # the state's game chose the network
    if modules:
        assert len(phases) > 1  # sub-decisions of a turn were searched too


def test_az_three_and_four_players_share_one_network(az: agents.Agent) -> None:
    az.check_game(3, ())
    three = az.net
    az.check_game(4, ())
    assert az.net is three


@pytest.mark.slow
def test_az_visits_follow_the_budget_with_more_players() -> None:
    agent = agents.make("az:sims=33,batch=4", seed=0)
    for n in (3, 4):
        s = sample_states(n, 1, seed=3, max_per_game=20)[12]
        counts = agent.root_visits(determinize(s, int(s[st.CURRENT]), 0))
        assert int(np.floor(counts).sum()) == 33 - 1  # every simulation but the root's own


@pytest.mark.slow
def test_az_is_blind_to_hidden_information_with_three_players() -> None:
    s = sample_states(3, 1, seed=21, max_per_game=30)[24]
    obs, mask, seat = decision_inputs(s)
    moves = {agents.make("az:sims=40", seed=3).act(obs, mask, determinize(s, seat, k)) for k in range(3)}
    assert len(moves) == 1


def test_az_refuses_a_game_no_network_covers() -> None:
    agent = agents.make("az:sims=8")
    with pytest.raises(ValueError, match=r"no shipped network for 2 players, modules cities.*az:PATH"):
        agent.check_game(2, ("cities",))
    with pytest.raises(ValueError, match="no shipped network for 3 players"):
        agent.check_game(3, ALL)


def test_az_with_a_named_network_plays_only_its_games() -> None:
    agent = agents.make("az:ppo_base_3_4p,sims=8")
    agent.check_game(4, ())
    with pytest.raises(ValueError, match="plays only 3 or 4 players, base game; got 2 players"):
        agent.check_game(2, ())
    s = sample_states(2, 1, seed=0, max_per_game=5)[2]
    obs, mask, seat = decision_inputs(s)
    with pytest.raises(ValueError, match="plays only 3 or 4 players"):
        agent.act(obs, mask, determinize(s, seat, 0))
