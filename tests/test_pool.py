"""The one opponent pool and reward routing (agents/pool.py), and both learners that use them:
self-play training's ``SelfPlayVecEnv`` and the Gymnasium view."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.base import Agent
from agents.gym_view import SplendorGymEnv
from agents.pool import SNAPSHOTS, LearnerReward, OpponentPool
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import num_actions


class Recorder(Agent):
    """A search agent stand-in: checks every state it is handed is the decision asked, plays at random."""

    name = "recorder"
    needs_state = True

    def __init__(self, seed: int | None = 0) -> None:
        super().__init__(seed)
        self.calls = 0

    def act(self, observation, action_mask, state=None) -> int:
        assert state is not None, "a needs_state opponent must be handed a state"
        own = np.zeros(num_actions(int(state[st.MODULES])), dtype=np.int8)
        rules.legal_mask(state, own)
        assert np.array_equal(own, action_mask), "the state handed is not the decision asked about"
        self.calls += 1
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(legal.size)])


# ---------------------------------------------------------------------------
# Reward routing, written once


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_routing_sums_the_learners_move_and_every_opponent_move(num_players: int) -> None:
    """Game 0 ends on the last opponent's move (a loss: -1 reaches the learner); game 1 goes on."""
    credit = LearnerReward(2)
    both = np.array([0, 1])
    credit.credit(both, np.array([0.04, 0.02]), np.array([False, False]))  # the learner's own move (shaped)
    for k in range(1, num_players):
        last = k == num_players - 1
        credit.credit(both, np.array([-1.0 if last else 0.0, 0.0]), np.array([last, False]))
    np.testing.assert_allclose(credit.reward, [0.04 - 1.0, 0.02])
    np.testing.assert_array_equal(credit.done, [True, False])


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_routing_ignores_moves_after_the_end_and_reports_each_end_once(num_players: int) -> None:
    credit = LearnerReward(3)
    ended = credit.credit(np.array([0, 2]), np.array([1.0, 0.0]), np.array([True, False]))
    assert ended.tolist() == [0]
    # the next game dealt in slot 0 moves on in the same step: not the learner's reward of this step
    later = []
    for _ in range(num_players - 1):
        later += credit.credit(
            np.array([0, 1, 2]), np.array([0.5, 0.0, -1.0]), np.array([True, False, True])
        ).tolist()
    assert later == [2] and credit.reward.tolist() == [1.0, 0.0, -1.0]
    assert credit.done.tolist() == [True, False, True]


def _final_outcome(state: np.ndarray, seat: int) -> float:
    out = np.zeros(st.MAX_PLAYERS)
    rules.terminal_rewards(state, out)
    return float(out[seat])


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_gym_view_credits_a_game_ended_by_an_opponent(num_players: int) -> None:
    """With the learner in seat 0 every game ends on the last seat's move, an opponent's: its reward is the learner's."""
    env = SplendorGymEnv(opponents="greedy", num_players=num_players, learner_seat=0)
    learner = agents.make("random", seed=1)
    finals = []
    for episode in range(4):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            obs, reward, term, trunc, info = env.step(learner.act(obs, info["action_mask"]))
            done = term or trunc
            if not done:
                assert reward == 0.0
        assert info["opponent_moves"] and info["opponent_moves"][-1][0] == num_players - 1
        finals.append((reward, _final_outcome(env.game.game_state, 0) if term else 0.0))
    assert all(r == expected for r, expected in finals)
    assert any(r == -1.0 for r, _ in finals)  # random against greedy: losses on the opponent's move count


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_gym_view_credits_a_game_ended_by_the_learner(num_players: int) -> None:
    env = SplendorGymEnv(opponents="random", num_players=num_players, learner_seat=num_players - 1)
    learner = agents.make("greedy", seed=1)
    obs, info = env.reset(seed=3)
    while True:
        obs, reward, term, trunc, info = env.step(learner.act(obs, info["action_mask"]))
        if term or trunc:
            break
    assert info["opponent_moves"] == []
    assert reward == (_final_outcome(env.game.game_state, num_players - 1) if term else 0.0)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_selfplay_credits_games_ended_by_opponents(num_players: int) -> None:
    pytest.importorskip("stable_baselines3")
    from training.ppo.vec_env import SelfPlayVecEnv

    env = SelfPlayVecEnv(16, OpponentPool([("greedy", 1.0, None)], seed=0), num_players, seed=1)
    obs = env.reset()
    learner = agents.make("random", seed=2)
    rewards = []
    while len(rewards) < 24:
        obs, reward, dones, infos = env.step(learner.act_batch(obs, env.action_masks()))
        for b in np.flatnonzero(dones):
            assert reward[b] == infos[b]["outcome"]
            rewards.append(float(reward[b]))
        assert (reward[~dones] == 0).all()
    assert -1.0 in rewards


# ---------------------------------------------------------------------------
# The pool


def test_weights_follow_the_schedule() -> None:
    pool = OpponentPool([("greedy", 1.0, 3.0), ("random", 3.0, None)], seed=0)
    for progress, expected in ((0.0, [0.25, 0.75]), (0.5, [0.4, 0.6]), (1.0, [0.5, 0.5])):
        pool.progress = progress
        np.testing.assert_allclose(pool.weights(), expected)
    assert pool.labels == ["greedy", "random"]


def test_draws_are_the_rng_choice_over_the_weights() -> None:
    pool = OpponentPool([("greedy", 1.0, None), ("random", 2.0, None)], seed=0)
    got = pool.draw(50, rng=np.random.default_rng(9))
    want = np.random.default_rng(9).choice(2, size=50, p=[1 / 3, 2 / 3])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        OpponentPool([("greedy", 1.0, None), ("random", 2.0, None)], seed=4).draw(20),
        np.random.default_rng(4).choice(2, size=20, p=[1 / 3, 2 / 3]),
    )


def test_agents_are_built_in_order_with_consecutive_seeds() -> None:
    scripted = Recorder()
    pool = OpponentPool([("random", 1.0, None), (SNAPSHOTS, 1.0, None), (scripted, 1.0, None)], seed=5)
    assert pool.agents[1] is scripted and pool.labels == ["random", "recorder"]
    a, b = pool.agents[0], agents.make("random", seed=5)
    mask = np.ones(10, dtype=np.int8)
    assert [a.act(None, mask) for _ in range(20)] == [b.act(None, mask) for _ in range(20)]


def test_snapshots_are_drawn_only_once_saved_and_only_the_newest() -> None:
    pool = OpponentPool([(SNAPSHOTS, 1.0, None)], max_snapshots=2, seed=0)
    with pytest.raises(RuntimeError, match="no drawable entry"):
        pool.weights()
    mixed = OpponentPool([("random", 1.0, None), (SNAPSHOTS, 1.0, None)], seed=0)
    np.testing.assert_allclose(mixed.weights(), [1.0, 0.0])
    for k in range(3):
        pool.add_snapshot(f"snap_{k}.zip", agent=agents.make("random", seed=k))
    assert pool.snapshot_paths == ["snap_1.zip", "snap_2.zip"] and pool.snapshot_indices == [1, 2]
    assert len(pool.agents) == 3  # an evicted snapshot stays for games in progress
    assert set(pool.draw(200).tolist()) == {1, 2}


def test_bad_entries_are_refused() -> None:
    with pytest.raises(ValueError, match="weights must be >= 0"):
        OpponentPool([("random", -1.0, None)])
    pool = OpponentPool([("lookahead", 1.0, None), (SNAPSHOTS, 1.0, None)])
    with pytest.raises(ValueError, match="lookahead"):
        pool.check_game(2, ("cities",))
    pool.check_game(2, ())


# ---------------------------------------------------------------------------
# Search opponents get a determinised state (self-play used to give none)


def test_search_opponents_get_their_decision_state_in_selfplay_and_the_gym_view() -> None:
    pytest.importorskip("stable_baselines3")
    from training.ppo.vec_env import SelfPlayVecEnv

    rec = Recorder()
    env = SelfPlayVecEnv(4, OpponentPool([(rec, 1.0, None)], seed=0), 3, seed=0)
    obs = env.reset()
    learner = agents.make("random", seed=0)
    for _ in range(30):
        obs, *_ = env.step(learner.act_batch(obs, env.action_masks()))
    assert rec.calls > 30
    gym_rec = Recorder()
    view = SplendorGymEnv(opponents=gym_rec, num_players=3, learner_seat=0)
    obs, info = view.reset(seed=0)
    obs, *_ = view.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert gym_rec.calls >= 2


def test_a_search_teacher_gets_its_decision_state_in_the_warm_start() -> None:
    pytest.importorskip("sb3_contrib")
    from splendor_env.vector import SplendorBatch
    from training.ppo.pretrain import teacher_games

    class Bar:
        def update(self, n: int) -> None:
            pass

    venv = SplendorBatch(4, 3, seed=0, copy=False)
    rows = 60
    data = {
        "obs": np.zeros((rows, venv.obs_dim), np.float32),
        "mask": np.zeros((rows, venv.num_actions), bool),
        "action": np.zeros(rows, np.int64),
        "value": np.zeros(rows, np.float32),
    }
    rec = Recorder()
    end = teacher_games(
        venv, rec, data, 0, rows, 3, 0.99, None, Bar(), np.zeros(st.MAX_PLAYERS), np.random.default_rng(0)
    )
    assert end == rows and rec.calls == rows
    assert data["mask"][np.arange(rows), data["action"]].all()


def test_the_gym_view_draws_from_a_training_pool_and_its_schedule() -> None:
    pool = OpponentPool([("random", 1.0, 0.0), ("greedy", 0.0, 1.0)], seed=0)
    env = SplendorGymEnv(opponents=pool, num_players=3)
    for progress, label in ((0.0, "random"), (1.0, "greedy")):
        pool.progress = progress
        env.reset(seed=1)
        assert set(env.opponent_labels.values()) == {label}
