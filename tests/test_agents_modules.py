"""Agents in Cities of Splendor games: full games with legal actions only, module decisions, strength.

The README's module figures come from ``python -m training.evaluate`` (``--modules``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hst

import agents
from agents.base import check_game
from agents.players.greedy import GreedyAgent
from agents.players.mcts import MCTSAgent
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import (
    CHOOSE_TRADING_POST,
    CONQUEST,
    CONQUEST_BUY,
    RESERVE_DECK,
    RESERVE_ODECK,
    TAKE3,
)
from splendor_env.cards import ALL_CARD_COST, TP_DRAW_TWO
from splendor_env.deal import new_state
from splendor_env.determinize import determinize
from splendor_env.invariants import check_invariants
from tests.helpers import decision_inputs
from training.matches.match import play_match

ALL = st.MODULE_NAMES
CONFIGS = [(m,) for m in ALL] + [ALL]


def play_game(
    seat_agents: list[agents.Agent],
    modules: tuple[str, ...],
    seed: int,
    max_turns: int = st.DEFAULT_MAX_TURNS,
) -> tuple[np.ndarray, set[int]]:
    """Play one game to its end; every action is checked legal. Returns the final state and the phases met."""
    s = new_state(len(seat_agents), seed, modules=modules, max_turns=max_turns)
    rng = np.random.default_rng(seed)
    phases: set[int] = set()
    while not rules.is_over(s):
        obs, mask, seat = decision_inputs(s)
        agent = seat_agents[seat]
        state = determinize(s, seat, rng) if agent.needs_state else None
        a = int(agent.act(obs, mask, state))
        assert mask[a], (agent, a, st.PHASE_NAMES[s[st.PHASE]])
        phases.add(int(s[st.PHASE]))
        rules.apply_action(s, a)
    return s, phases


# ---------------------------------------------------------------------------
# Full games, legal actions only


def test_registry_agents_play_modules() -> None:
    for spec in ("random", "greedy", "mcts"):
        assert agents.make(spec).plays_modules, spec
        check_game(agents.make(spec), spec, ALL)  # not refused
    with pytest.raises(ValueError, match="plays only the base game"):
        check_game(type("BaseOnly", (), {"plays_modules": False})(), "base-only", ("orient",))


@pytest.mark.parametrize("modules", CONFIGS, ids=lambda m: "+".join(m))
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_greedy_and_mcts_play_full_module_games(num_players: int, modules: tuple[str, ...]) -> None:
    """Each module alone and all four, 2-4 players: a whole game to its end, only legal actions."""
    seed = 17 * num_players + len(modules)
    lineup = [
        GreedyAgent(seed),
        MCTSAgent(seed, sims=6, depth=20),
        agents.make("random", seed=seed),
        GreedyAgent(seed + 1),
    ]
    s, phases = play_game(lineup[:num_players], modules, seed)
    assert s[st.PHASE] == st.PHASE_GAME_OVER, "a game between these agents ends before the turn cap"
    assert check_invariants(s) == []
    assert st.PHASE_MAIN in phases
    if "strongholds" in modules:
        assert st.PHASE_STRONGHOLD in phases
    if "cities" in modules:
        winners = [p for p in range(num_players) if s[st.OUTCOME + p]]
        cities = s[st.CITY_OWNER : st.CITY_OWNER + 3]
        assert all(p in cities for p in winners), "with Cities only a city holder wins"


@given(seed=hst.integers(0, 2**31), modules=hst.sets(hst.sampled_from(ALL), min_size=1), n=hst.integers(2, 4))
def test_greedy_answers_every_sampled_module_position_legally(seed: int, modules: set[str], n: int) -> None:
    """Random play reaches module decisions (draw two forced on); greedy's answer is always legal."""
    mods = tuple(sorted(modules, key=ALL.index))
    s = new_state(n, seed, modules=mods)
    if "trading_posts" in mods:
        for p in range(n):
            s[st.TP_HELD + p] |= 1 << TP_DRAW_TWO
    rng = np.random.default_rng(seed)
    greedy = GreedyAgent(seed)
    for _ in range(150):
        if rules.is_over(s):
            break
        obs, mask, _ = decision_inputs(s)
        assert mask[greedy.act(obs, mask)]
        legal = np.flatnonzero(mask)
        rules.apply_action(s, int(legal[rng.integers(legal.size)]))


def test_act_batch_in_module_games() -> None:
    s = new_state(3, 4, modules=ALL)
    obs, mask, _ = decision_inputs(s)
    acts = GreedyAgent(0).act_batch(np.stack([obs, obs]), np.stack([mask, mask]))
    assert mask[acts].all()
    with pytest.raises(ValueError, match="observation must have shape"):
        GreedyAgent(0).act(obs[:497], mask)
    # a base game's observations with a module game's masks, or fewer masks than observations, are
    # refused (the kernel read past the rows it was given)
    with pytest.raises(ValueError, match=r"observations must have shape \(2, \d+\)"):
        GreedyAgent(0).act_batch(np.stack([obs[:497], obs[:497]]), np.stack([mask, mask]))
    with pytest.raises(ValueError, match=r"observations must have shape \(1, \d+\)"):
        GreedyAgent(0).act_batch(np.stack([obs, obs, obs]), mask[None])


# ---------------------------------------------------------------------------
# Module decisions


def _position(modules: tuple[str, ...], seed: int = 1) -> np.ndarray:
    return new_state(2, seed, modules=modules)


def test_greedy_takes_the_points_trading_post_first() -> None:
    s = _position(("trading_posts",))
    po = st.player_offset(0)
    s[po + st.P_BONUS : po + st.P_BONUS + 5] = [
        2,
        3,
        5,
        0,
        3,
    ]  # meets several powers; derived fields not needed
    s[st.PHASE] = st.PHASE_TRADING_POST_CHOICE
    obs, mask, _ = decision_inputs(s)
    assert mask[CHOOSE_TRADING_POST : CHOOSE_TRADING_POST + 5].sum() >= 2
    assert GreedyAgent(0).act(obs, mask) == CHOOSE_TRADING_POST + 4


def test_greedy_takes_a_conquest() -> None:
    """All three strongholds on an affordable card: after its main action greedy buys it too."""
    s = _position(("strongholds",))
    m = 0
    card = int(s[st.MARKET + m])
    po = st.player_offset(0)
    cost = ALL_CARD_COST[card]
    tokens = s[po + st.P_TOKENS : po + st.P_TOKENS + 5]
    for c in range(5):  # hand over what the card costs (the bank keeps enough for a take-3)
        give = min(int(cost[c]), int(s[st.BANK + c]) - 1)
        tokens[c] += give
        s[st.BANK + c] -= give
    s[po + st.P_TOKENS + 5] += 3
    s[st.BANK + 5] -= 3
    s[st.SH_SUPPLY + 0] = 0
    s[st.SH_ON + m * st.MAX_PLAYERS + 0] = 3
    assert check_invariants(s) == []
    legal_takes = [a for a in range(TAKE3, TAKE3 + 10) if rules.illegal_reason(s, a) == rules.OK]
    assert rules.step_checked(s, legal_takes[0]) == 0
    assert s[st.PHASE] == st.PHASE_CONQUEST
    obs, mask, _ = decision_inputs(s)
    assert GreedyAgent(0).act(obs, mask) == CONQUEST + CONQUEST_BUY


def test_greedy_heads_for_cities() -> None:
    """With Cities only a city ends the game: greedy claims one against random in most games."""
    claimed = 0
    for g in range(6):
        s, _ = play_game([GreedyAgent(g), agents.make("random", seed=g)], ("cities",), 300 + g)
        claimed += int(0 in s[st.CITY_OWNER : st.CITY_OWNER + 3])
    assert claimed >= 5


# ---------------------------------------------------------------------------
# Strength (small samples; the README figures come from the CLI below)


def test_greedy_beats_random_with_all_modules() -> None:
    result = play_match(agents.make("greedy", seed=0), agents.make("random", seed=1), 20, seed=5, modules=ALL)
    assert result.games == 20 and result.truncated == 0 and result.win_rate >= 0.85


@pytest.mark.slow
def test_mcts_small_budget_beats_random_with_all_modules() -> None:
    mcts = agents.make("mcts:sims=30,depth=40", seed=0)
    result = play_match(mcts, agents.make("random", seed=1), 4, seed=6, modules=ALL)
    assert result.games == 4 and result.win_rate >= 0.75


# ---------------------------------------------------------------------------
# MCTS fairness: the search sees only the seat's view


def _hidden_position() -> np.ndarray:
    """Seat 1 holds blind reserves from a base and an Orient deck; seat 0 is on move."""
    s = new_state(2, 11, modules=ALL)
    for a in (RESERVE_DECK + 0, RESERVE_DECK + 1, RESERVE_ODECK + 0, RESERVE_ODECK + 2):
        assert rules.step_checked(s, a) == 0
        while s[st.PHASE] != st.PHASE_MAIN:
            assert rules.step_checked(s, int(np.flatnonzero(decision_inputs(s)[1])[0])) == 0
    assert s[st.CURRENT] == 0
    return s


def test_mcts_ignores_hidden_information_in_module_games() -> None:
    s = _hidden_position()
    obs, mask, seat = decision_inputs(s)
    variants = [s, determinize(s, seat, 1), determinize(s, seat, 2)]
    assert not np.array_equal(variants[1], variants[2])
    counts = [MCTSAgent(seed=7, sims=40, depth=30).root_counts(v) for v in variants]
    for c in counts[1:]:
        np.testing.assert_array_equal(c, counts[0])
    assert counts[0].shape == (mask.size,)
    assert len({MCTSAgent(seed=7, sims=40, depth=30).act(obs, mask, v) for v in variants}) == 1


def test_mcts_needs_a_matching_module_state() -> None:
    s = _hidden_position()
    obs, mask, _ = decision_inputs(s)
    with pytest.raises(ValueError, match="needs state="):
        MCTSAgent(seed=0, sims=4).act(obs, mask)
    with pytest.raises(ValueError, match="action_mask must have shape"):
        MCTSAgent(seed=0, sims=4).act(obs, mask[:72], s)
