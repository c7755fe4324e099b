"""The ``lookahead`` agent: one-ply lookahead over the engine with a purchase plan and denial."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.base import check_game
from agents.players.lookahead import WEIGHTS, LookaheadAgent, weight_array
from splendor_env import state as st
from splendor_env.actions import BUY_MARKET, RESERVE_MARKET
from splendor_env.cards import CARD_COST, CARD_LEVEL, CARD_POINTS
from splendor_env.determinize import determinize
from tests.helpers import (
    Position,
    decision_inputs,
    noble_choice_state,
    points_cards,
    sample_states,
    winning_position,
)
from training.matches.tournament import run_tasks, schedule


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_legal_in_every_phase(num_players: int) -> None:
    agent = agents.make("lookahead", seed=0)
    rng = np.random.default_rng(0)
    states = sample_states(num_players, 2, seed=num_players, max_per_game=120)
    states += [noble_choice_state(num_players, 0)]
    phases = set()
    for s in states:
        obs, mask, seat = decision_inputs(s)
        phases.add(int(s[st.PHASE]))
        assert mask[agent.act(obs, mask, determinize(s, seat, rng))] == 1
    assert {st.PHASE_MAIN, st.PHASE_DISCARD, st.PHASE_NOBLE} <= phases


def test_deterministic_given_seed() -> None:
    states = sample_states(2, 1, seed=5, max_per_game=40)
    a1, a2 = agents.make("lookahead", seed=3), agents.make("lookahead", seed=3)
    for s in states:
        obs, mask, seat = decision_inputs(s)
        d = determinize(s, seat, 1)
        assert a1.act(obs, mask, d) == a2.act(obs, mask, d)


def test_picks_the_winning_purchase() -> None:
    s, winning = winning_position()
    obs, mask, seat = decision_inputs(s)
    assert agents.make("lookahead", seed=0).act(obs, mask, determinize(s, seat, 0)) == winning


def test_denies_the_opponent_its_winning_card() -> None:
    """Seat 0 on move cannot buy anything; seat 1, at 13 points, can buy the 2-point card in
    slot 4 next turn and would reach 15: reserving it is the move."""
    target = next(
        int(c) for c in np.flatnonzero((CARD_LEVEL == 1) & (CARD_POINTS == 2)) if CARD_COST[c].max() <= 4
    )
    p = Position(2, seed=8).slot(4, target)
    p.give(1, *points_cards(13, {target}))
    s = p.tokens(1, [int(x) for x in CARD_COST[target]]).tokens(0, "1W").current(0).turn(40).build()
    obs, mask, seat = decision_inputs(s)
    assert mask[RESERVE_MARKET + 4] == 1 and mask[BUY_MARKET + 4] == 0
    assert agents.make("lookahead", seed=0).act(obs, mask, determinize(s, seat, 0)) == RESERVE_MARKET + 4


def test_options_and_games_refused() -> None:
    with pytest.raises(ValueError, match="takes no options"):
        agents.make("lookahead:depth=2")
    with pytest.raises(ValueError, match="unknown lookahead weight"):
        weight_array(SPEED=1.0)
    assert list(weight_array()) == list(WEIGHTS.values())
    agent = LookaheadAgent(0)
    with pytest.raises(ValueError, match="plays only the base game"):
        check_game(agent, "lookahead", ("orient",), 2)
    s = sample_states(2, 1, seed=2, max_per_game=5)[3]
    obs, mask, _ = decision_inputs(s)
    with pytest.raises(ValueError, match="needs state="):
        agent.act(obs, mask)


def test_plays_tournament_games() -> None:
    records = run_tasks(schedule(["lookahead", "greedy"], 2, 4, 0), workers=1, progress=False)
    assert len(records) == 4 and all(r["winners"] is not None for r in records)
