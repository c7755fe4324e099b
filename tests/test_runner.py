"""The one runner (agents/runner.py): decision states, the one-game and batched loops, seat rotation."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents import runner
from agents.base import Agent
from splendor_env import records, rules
from splendor_env import state as st
from splendor_env.actions import num_actions
from splendor_env.deal import new_state
from splendor_env.env import raw_env
from splendor_env.vector import SplendorBatch

DECK = slice(st.DECK, st.DECK + 40)  # the level-1 deck order: hidden from every seat


class FirstLegal(Agent):
    """Deterministic: always the lowest legal id (no random stream, so batched == one at a time)."""

    name = "first"

    def act(self, observation, action_mask, state=None) -> int:
        return int(np.flatnonzero(action_mask)[0])


class LastLegal(FirstLegal):
    name = "last"

    def act(self, observation, action_mask, state=None) -> int:
        return int(np.flatnonzero(action_mask)[-1])


class Recorder(Agent):
    """A search agent stand-in: keeps every state it is handed and checks it is the decision asked."""

    name = "recorder"
    needs_state = True

    def __init__(self, seed: int | None = 0) -> None:
        super().__init__(seed)
        self.states: list[np.ndarray] = []

    def act(self, observation, action_mask, state=None) -> int:
        assert state is not None, "a needs_state agent must be handed a state"
        own = np.zeros(num_actions(int(state[st.MODULES])), dtype=np.int8)
        rules.legal_mask(state, own)
        assert np.array_equal(own, action_mask), "the state handed is not the decision asked about"
        self.states.append(np.array(state, copy=True))
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(legal.size)])


class Trusted(Recorder):
    name = "trusted"
    trusted_view = True


def _midgame(seed: int = 3, moves: int = 12) -> np.ndarray:
    s = new_state(3, seed)
    mask = np.zeros(num_actions(0), dtype=np.int8)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        rules.legal_mask(s, mask)
        legal = np.flatnonzero(mask)
        rules.apply_action(s, int(legal[rng.integers(legal.size)]))
    return s


# ---------------------------------------------------------------------------
# decision_state


def test_agents_without_needs_state_get_none_and_leave_the_rng_alone() -> None:
    rng = np.random.default_rng(1)
    before = rng.bit_generator.state
    assert runner.decision_state(agents.make("greedy"), _midgame(), 0, rng) is None
    assert rng.bit_generator.state == before


def test_a_search_agent_never_sees_the_true_hidden_state() -> None:
    s = _midgame()
    true = s.copy()
    seat = int(s[st.CURRENT])
    handed = runner.decision_state(agents.make("mcts:sims=4"), s, seat, np.random.default_rng(2))
    assert handed is not None and handed is not s
    np.testing.assert_array_equal(s, true)  # the true state is untouched
    assert not np.array_equal(handed[DECK], true[DECK])  # the deck order is resampled
    assert sorted(handed[DECK]) == sorted(true[DECK])  # ...from the same unseen cards


def test_a_trusted_view_agent_gets_a_copy_of_the_true_state() -> None:
    s = _midgame()
    rng = np.random.default_rng(4)
    before = rng.bit_generator.state
    for agent in (Trusted(), agents.make("human")):
        handed = runner.decision_state(agent, s, int(s[st.CURRENT]), rng)
        assert handed is not s
        np.testing.assert_array_equal(handed, s)
    assert rng.bit_generator.state == before


def test_in_a_game_every_state_handed_to_a_search_agent_hides_the_deck() -> None:
    rec = Recorder()
    truths: list[np.ndarray] = []

    def before_move(env: raw_env, seat: int) -> None:
        if seat == 1:
            truths.append(env.engine_state())

    runner.play_game([agents.make("random"), rec], 11, agent_seeds=[1, 2], before_move=before_move)
    assert len(rec.states) == len(truths) > 10
    assert all(not np.array_equal(h[DECK], t[DECK]) for h, t in zip(rec.states, truths, strict=True))


# ---------------------------------------------------------------------------
# One game


def test_a_seeded_game_gives_the_same_record_twice_and_replays() -> None:
    specs = ["greedy", "mcts:sims=4", "random"]
    seats = [agents.make(s) for s in specs]
    one = runner.play_game(
        seats, 21, labels=specs, agent_seeds=[5, 6, 7], rng=np.random.default_rng([21, 0, 7])
    )
    two = runner.play_game(
        seats, 21, labels=specs, agent_seeds=[5, 6, 7], rng=np.random.default_rng([21, 0, 7])
    )
    assert one == two
    assert one["agents"] == specs and one["agent_seeds"] == [5, 6, 7] and one["num_players"] == 3
    assert set(one) >= {
        "seed",
        "max_turns",
        "modules",
        "actions",
        "prestige",
        "cards",
        "winners",
        "truncated",
    }
    env = raw_env(num_players=3)
    env.reset(seed=21)
    for a in one["actions"]:
        env.step(a)
    assert records.game_result(env.game_state) == {k: one[k] for k in records.game_result(env.game_state)}


def test_play_out_reports_every_seat_and_the_hooks_see_each_move() -> None:
    env = raw_env(num_players=2, modules=("cities",))
    env.reset(seed=3)
    seen: list[tuple[int, int]] = []
    actions, rewards = runner.play_out(
        env,
        [FirstLegal(), LastLegal()],
        np.random.default_rng(0),
        on_move=lambda e, s, a: seen.append((s, a)),
    )
    assert [a for _, a in seen] == actions and records.is_over(env)
    assert set(rewards) == {"player_0", "player_1"}


def test_win_shares() -> None:
    assert runner.win_shares({"winners": [1], "num_players": 3}) == [0.0, 1.0, 0.0]
    assert runner.win_shares({"winners": [0, 2], "num_players": 3}) == [0.5, 0.0, 0.5]
    assert runner.win_shares({"winners": [], "num_players": 2}) == [0.0, 0.0]


# ---------------------------------------------------------------------------
# Building agents


def test_build_takes_specs_and_agents_as_they_are() -> None:
    first = FirstLegal()
    assert agents.build(first) is first
    assert isinstance(agents.build("greedy", seed=3), type(agents.make("greedy")))
    with pytest.raises(TypeError, match="spec string or an Agent"):
        agents.build(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown agent spec"):
        agents.build("gready")
    assert agents.is_model_path("runs/x/best.zip") and not agents.is_model_path("greedy")


# ---------------------------------------------------------------------------
# Seat rotation and the batched loop


def test_seat_rotation() -> None:
    assert [runner.rotated_seat(g, 3, 1) for g in range(4)] == [1, 2, 0, 1]
    np.testing.assert_array_equal(
        runner.rotation_seating(4, 3, first_game=1), [[1, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 1]]
    )


@pytest.mark.parametrize(("num_players", "modules"), [(2, ()), (3, ("orient",))])
def test_batched_games_are_the_one_game_loop_on_the_same_deals(
    num_players: int, modules: tuple[str, ...]
) -> None:
    """Game ``g`` of a batch run seeded ``s`` is deal ``s + g``; deterministic agents play it the same either way."""
    games, seed = 7, 40
    seating = runner.rotation_seating(games, num_players, first_game=2)
    pair = (FirstLegal(), LastLegal())
    batched: dict[int, dict] = {}
    movers: dict[int, set[tuple[int, int]]] = {}

    def on_end(game: int, slot: int, final_state: np.ndarray, truncated: bool) -> None:
        batched[game] = records.game_result(final_state)
        assert batched[game]["truncated"] == truncated

    def before_round(slots, numbers, states, player) -> None:
        for b, g in zip(slots, numbers, strict=True):
            movers.setdefault(int(g), set()).add((int(player[b]), int(seating[g, player[b]])))

    venv = SplendorBatch(3, num_players, seed=seed, copy=False, modules=modules)
    runner.play_batched(venv, pair, seating, np.random.default_rng(0), on_end, before_round)
    assert sorted(batched) == list(range(games))
    for g in range(games):
        seats = [pair[k] for k in seating[g]]
        record = runner.play_game(seats, seed + g, modules=modules)
        assert batched[g] == {k: record[k] for k in batched[g]}, f"game {g}"
        # the rotating agent (0) holds exactly seat (2 + g) % n
        assert {seat for seat, k in movers[g] if k == 0} == {runner.rotated_seat(g, num_players, 2)}


def test_batched_search_agents_get_a_state_per_game() -> None:
    rec = Recorder()
    venv = SplendorBatch(2, 2, seed=5, copy=False)
    ended: list[int] = []
    runner.play_batched(
        venv,
        (rec, FirstLegal()),
        runner.rotation_seating(3, 2),
        np.random.default_rng(1),
        lambda g, *_: ended.append(g),
    )
    assert sorted(ended) == [0, 1, 2] and len(rec.states) > 20


def test_play_game_refuses_a_seat_list_that_does_not_fit_the_env() -> None:
    """With a prebuilt env the agents, labels and seeds are one a seat: three agents at a 2-player table
    were recorded as three (the third never moved), two at a 3-player table failed mid-game."""
    three = [agents.make("random", seed=i) for i in range(3)]
    with pytest.raises(ValueError, match="3 seat_agents for a 2-player game"):
        runner.play_game(three, 0, env=raw_env(num_players=2))
    with pytest.raises(ValueError, match="2 seat_agents for a 3-player game"):
        runner.play_game(three[:2], 0, env=raw_env(num_players=3))
    with pytest.raises(ValueError, match="2 agent_seeds for a 3-player game"):
        runner.play_game(three, 0, env=raw_env(num_players=3), agent_seeds=[1, 2])
    with pytest.raises(ValueError, match="1 labels for a 2-player game"):
        runner.play_game(three[:2], 0, labels=["a"])
    assert runner.play_game(three, 0, env=raw_env(num_players=3))["num_players"] == 3
