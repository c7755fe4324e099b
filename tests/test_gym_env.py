"""The single-agent Gymnasium view: env checkers, reward routing, seats, opponents, masks."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import splendor_env  # noqa: F401 - registers splendor_env/Splendor-v1
from agents.base import Agent
from agents.gym_view import SplendorGymEnv
from splendor_env import IllegalActionError
from splendor_env.actions import NUM_ACTIONS, NUM_ACTIONS_ALL
from splendor_env.observation import OBS_DIM, OBS_DIM_ALL

ENV_ID = "splendor_env/Splendor-v1"


def play_random(env: gymnasium.Env, seed: int) -> tuple[list[float], dict]:
    """One episode with uniformly random legal learner moves: (rewards, last info)."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    rewards, done = [], False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        assert env.unwrapped.action_masks()[action]
        _, reward, term, trunc, info = env.step(action)
        rewards.append(reward)
        done = term or trunc
    return rewards, info


@pytest.mark.parametrize("modules", [(), ("cities", "orient")])
def test_gymnasium_and_sb3_env_checkers_pass(modules: tuple) -> None:
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checkers step blind (illegal) actions on purpose
        check_env(SplendorGymEnv(opponents="random", modules=modules), skip_render_check=True)
        sb3_checker.check_env(SplendorGymEnv(opponents="random", modules=modules), warn=False)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_make_gives_the_learner_view_for_2_to_4_players(num_players: int) -> None:
    env = gymnasium.make(ENV_ID, opponents="random", num_players=num_players)
    assert env.observation_space.shape == (OBS_DIM,)
    assert env.action_space.n == NUM_ACTIONS
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    seat = info["learner_seat"]
    assert env.unwrapped.game.agent_selection == f"player_{seat}"  # opponents before the learner have moved
    np.testing.assert_array_equal(env.unwrapped.action_masks(), info["action_mask"].astype(bool))
    rewards, last = play_random(env, 1)
    assert set(last["winners"]) <= set(range(num_players)) or last["winners"] == []
    assert rewards[-1] in (1.0, -1.0, 0.0)


def test_module_games_use_the_module_spaces() -> None:
    env = gymnasium.make(ENV_ID, opponents="random", num_players=3, modules=("trading_posts", "strongholds"))
    assert env.observation_space.shape == (OBS_DIM_ALL,)
    assert env.action_space.n == NUM_ACTIONS_ALL
    rewards, last = play_random(env, 4)
    assert "winners" in last and len(rewards) > 10


def test_a_loss_on_the_opponents_move_reaches_the_learner() -> None:
    """Learner in seat 0: the game always ends on seat 1's (greedy's) move, so the -1 must be routed."""
    env = gymnasium.make(ENV_ID, opponents="greedy", learner_seat=0)
    losses = 0
    for seed in range(6):
        rewards, last = play_random(env, seed)
        assert last["opponent_moves"], "the last move of the game is the opponent's"
        assert all(r == 0.0 for r in rewards[:-1])
        if last["winners"] == [1]:
            assert rewards[-1] == -1.0 and not last["is_success"]
            losses += 1
    assert losses >= 5  # a random learner loses to greedy


@pytest.mark.parametrize("num_players", [3, 4])
def test_terminal_reward_is_the_learners_outcome(num_players: int) -> None:
    env = gymnasium.make(ENV_ID, opponents="greedy", num_players=num_players, max_turns=400)
    for seed in range(3):
        rewards, last = play_random(env, seed)
        seat, winners = last["learner_seat"], last["winners"]
        if not winners or (seat in winners and len(winners) > 1):
            expected = 0.0  # truncation or shared victory
        else:
            expected = 1.0 if winners == [seat] else -1.0
        assert rewards[-1] == expected
        assert sum(rewards) == expected  # terminal reward only, by default


def test_shaped_rewards_are_the_learners_own_prestige() -> None:
    env = gymnasium.make(ENV_ID, opponents="greedy", learner_seat=1, reward_mode="shaped", shaping_scale=0.5)
    rewards, last = play_random(env, 2)
    prestige = int(env.unwrapped.game.snapshot()["players"][1]["prestige"])
    terminal = 1.0 if last["winners"] == [1] else (-1.0 if 1 not in last["winners"] else 0.0)
    assert sum(rewards) == pytest.approx(0.5 * prestige + terminal)


def test_same_seed_same_episode_and_random_seat() -> None:
    env = gymnasium.make(ENV_ID, opponents={"random": 1.0, "greedy": 1.0})
    first = [play_random(env, 9)[0], env.unwrapped.game.snapshot()]
    second = [play_random(env, 9)[0], env.unwrapped.game.snapshot()]
    assert first == second
    seats = {env.reset(seed=s)[1]["learner_seat"] for s in range(20)}
    assert seats == {0, 1}
    # the deal is the AEC env's deal for the same seed
    aec = splendor_env.env()
    aec.reset(seed=9)
    fixed = gymnasium.make(ENV_ID, opponents="random", learner_seat=0)
    fixed.reset(seed=9)
    np.testing.assert_array_equal(fixed.unwrapped.game.engine_state(), aec.engine_state())


def test_a_pool_draws_opponents_per_episode_and_lists_go_per_seat() -> None:
    env = gymnasium.make(ENV_ID, opponents={"random": 1.0, "greedy": 1.0}, num_players=3).unwrapped
    labels = set()
    for s in range(10):
        env.reset(seed=s)
        labels.update(env.opponent_labels.values())
    assert labels == {"random", "greedy"}
    env = gymnasium.make(ENV_ID, opponents=["greedy", "random"], num_players=3, learner_seat=2).unwrapped
    env.reset(seed=0)
    assert env.opponent_labels == {0: "greedy", 1: "random"}
    # 'snapshots' has no agent to seat: only a pool draws it (a seat of it failed at the first move)
    for given in ("snapshots", ["greedy", "snapshots"]):
        with pytest.raises(ValueError, match="'snapshots' is drawn from a pool, not given a seat"):
            gymnasium.make(ENV_ID, opponents=given, num_players=3)


class Recorder(Agent):
    """Random agent that records the states it is given."""

    name = "recorder"
    needs_state = True

    def __init__(self) -> None:
        super().__init__(0)
        self.states: list[np.ndarray] = []

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        self.states.append(state)
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(legal.size)])


def test_state_agents_get_a_determinised_state_and_mcts_plays() -> None:
    rec = Recorder()
    env = gymnasium.make(ENV_ID, opponents=rec, learner_seat=0)
    play_random(env, 3)
    true = env.unwrapped.game.engine_state()
    assert rec.states and all(s is not None for s in rec.states)
    from splendor_env import state as st

    deck = slice(st.DECK, st.DECK + 10)
    assert any(not np.array_equal(s[deck], true[deck]) for s in rec.states)  # hidden deck order resampled
    env = gymnasium.make(ENV_ID, opponents="mcts:sims=8", learner_seat=1)
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert len(info["opponent_moves"]) >= 1


def test_illegal_actions_end_the_episode_or_raise() -> None:
    env = gymnasium.make(ENV_ID, opponents="random", learner_seat=0)
    _, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.warns(UserWarning, match="illegal action"):
        _, reward, term, trunc, info = env.step(bad)
    assert (reward, term, trunc, info["illegal_action"]) == (-1.0, True, False, True)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    strict = gymnasium.make(ENV_ID, opponents="random", learner_seat=0, illegal_action="raise")
    strict.reset(seed=0)
    before = strict.unwrapped.game.engine_state()
    with pytest.raises(IllegalActionError, match=f"illegal action {bad}"):
        strict.step(bad)
    np.testing.assert_array_equal(strict.unwrapped.game.engine_state(), before)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"opponents": ["random"], "num_players": 3}, "one entry per opponent seat"),
        ({"opponents": "gready"}, "gready"),
        ({"opponents": {}}, "pool is empty"),
        ({"learner_seat": 2}, "learner_seat"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        SplendorGymEnv(**kwargs)


def test_reset_from_a_snapshot_continues_that_game() -> None:
    aec = splendor_env.raw_env()
    aec.reset(seed=5)
    for _ in range(6):
        aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))
    env = gymnasium.make(ENV_ID, opponents="random", learner_seat=int(aec.agent_selection[-1]))
    env.reset(seed=0, options={"snapshot": aec.snapshot()})
    np.testing.assert_array_equal(env.unwrapped.game.engine_state(), aec.engine_state())
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"snap": 1})


def test_base_game_only_opponents_are_refused_for_module_games(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.players.greedy import GreedyAgent

    monkeypatch.setattr(GreedyAgent, "plays_modules", False)  # stands for any base-game-only agent
    with pytest.raises(ValueError, match="agent 'greedy' plays only the base game"):
        SplendorGymEnv(opponents="greedy", modules=("cities",))


@pytest.mark.parametrize("spec", ["greedy", "mcts:sims=10,depth=10"])
def test_search_and_heuristic_opponents_play_module_games(spec: str) -> None:
    env = SplendorGymEnv(opponents=spec, modules=("cities", "trading_posts", "orient", "strongholds"))
    _, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(400):
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            break
    assert term or trunc


def test_module_games_accept_module_playing_opponents() -> None:
    env = SplendorGymEnv(opponents={"random": 1.0}, modules=("orient",))
    _, info = env.reset(seed=0)
    assert info["action_mask"].any()


@pytest.mark.slow
def test_a_policy_trained_for_another_table_size_is_refused_up_front() -> None:
    with pytest.raises(ValueError, match="trained for 2 players, base game; it cannot play 3 players"):
        SplendorGymEnv(num_players=3, opponents="ppo:ppo_2p")


@pytest.mark.slow
def test_gym_quickstart_plays_any_game(capsys) -> None:
    """The README's Gymnasium example trains and evaluates at 3 players with a module, not only 2p base."""
    pytest.importorskip("sb3_contrib")
    from training import gym_quickstart

    gym_quickstart.main(
        ["--steps", "64", "--minutes", "0", "--n-envs", "2", "--eval-games", "3", "--players", "3"]
        + ["--modules", "orient"]
    )
    out = capsys.readouterr().out
    assert "3 players, orient, vs random over 3 games" in out
