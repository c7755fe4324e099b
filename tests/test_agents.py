"""Agents: registry parsing, legal actions in every phase, strength and fairness checks."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import agents
from agents.players.az import PARAMS as AZ_PARAMS
from agents.players.greedy import GreedyAgent
from agents.players.mcts import PARAMS, MCTSAgent
from agents.players.random_agent import RandomAgent
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import CHOOSE_NOBLE, DISCARD, RESERVE_DECK
from splendor_env.deal import new_state
from splendor_env.determinize import determinize
from tests.helpers import decision_inputs, noble_choice_state, sample_states
from training.matches.tournament import run_tasks, schedule

# ---------------------------------------------------------------------------
# States covering every phase


def phase_states() -> dict[int, list[np.ndarray]]:
    """Per player count: main, discard and noble-choice positions."""
    out = {}
    for n in (2, 3, 4):
        states = sample_states(n, 2, seed=10 + n, max_per_game=150)
        states += [noble_choice_state(n, seed) for seed in range(3)]
        out[n] = states
    return out


STATES = phase_states()


def test_phase_states_cover_every_phase() -> None:
    for n, states in STATES.items():
        phases = {int(s[st.PHASE]) for s in states}
        assert {st.PHASE_MAIN, st.PHASE_DISCARD, st.PHASE_NOBLE} <= phases, n
        for s in states:
            if s[st.PHASE] == st.PHASE_NOBLE:
                _, mask, _ = decision_inputs(s)
                assert mask[CHOOSE_NOBLE : CHOOSE_NOBLE + 5].sum() >= 2


# ---------------------------------------------------------------------------
# Registry


def test_known_specs_and_make() -> None:
    assert set(agents.known_specs()) == {
        "random",
        "greedy",
        "mcts",
        "ppo",
        "human",
        "az",
        "lookahead",
        "rllib",
    }
    assert agents.known_specs()["mcts"].endswith("keys " + ", ".join(sorted(PARAMS)))
    assert agents.known_specs()["az"].endswith("keys " + ", ".join(sorted(AZ_PARAMS)))
    assert isinstance(agents.make("random"), RandomAgent)
    assert isinstance(agents.make(" Greedy "), GreedyAgent)
    m = agents.make("mcts:sims=5, c=0.5,rollout=random", seed=1)
    assert isinstance(m, MCTSAgent) and m.needs_state
    assert m.params["sims"] == 5 and m.params["c"] == 0.5 and m.params["rollout"] == "random"
    assert agents.make("mcts").params["sims"] == PARAMS["sims"][1]
    assert agents.make("mcts", sims=7).params["sims"] == 7


@pytest.mark.parametrize(
    ("spec", "kwargs", "message"),
    [
        ("alphazero", {}, "known: az, greedy, human, lookahead, mcts, ppo, random"),
        ("", {}, "non-empty"),
        (
            "mcts:bogus=1",
            {},
            "valid keys: \\['c', 'depth', 'eps', 'max_ms', 'ms', 'noise', 'rollout', 'shaping', 'sims', 'widen'\\]",
        ),
        ("mcts:sims=lots", {}, "sims='lots' is not a valid int"),
        ("mcts:sims=1.5", {}, "not a valid int"),
        ("mcts:sims=0", {}, "out of range: sims=0"),
        ("mcts:eps=2", {}, "out of range: eps=2.0"),
        ("mcts:rollout=smart", {}, "rollout='smart'"),
        ("mcts:sims", {}, "must be key=value"),
        ("mcts:sims=3,sims=4", {}, "given twice"),
        ("mcts:sims=3", {"sims": 4}, "both in the spec and as keyword"),
        ("random:x=1", {}, "takes no options"),
        ("greedy", {"depth": 3}, "takes no options"),
        ("ppo", {}, "needs a checkpoint path"),
    ],
)
def test_make_errors(spec: str, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agents.make(spec, **kwargs)


def test_ppo_missing_module_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agents.players.ppo", None)
    with pytest.raises(ImportError, match="needs agents/players/ppo.py and its dependencies"):
        agents.make("ppo:model.zip")


def test_seed_makes_agents_reproducible() -> None:
    states = STATES[2][:60]
    for spec in ("random", "greedy"):
        runs = []
        for _ in range(2):
            agent = agents.make(spec, seed=42)
            runs.append([agent.act(*decision_inputs(s)[:2]) for s in states])
        assert runs[0] == runs[1]
    a, b = agents.make("random", seed=1), agents.make("random", seed=2)
    assert [a.act(*decision_inputs(s)[:2]) for s in states] != [
        b.act(*decision_inputs(s)[:2]) for s in states
    ]


# ---------------------------------------------------------------------------
# Legality


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_every_agent_plays_only_legal_actions(num_players: int) -> None:
    states = STATES[num_players]
    rng = np.random.default_rng(num_players)
    players = [agents.make("random", seed=0), agents.make("greedy", seed=0)]
    mcts = agents.make("mcts:sims=8", seed=0)
    for i, s in enumerate(states):
        obs, mask, seat = decision_inputs(s)
        for agent in players:
            a = agent.act(obs, mask)
            assert mask[a], (agent, a, st.PHASE_NAMES[s[st.PHASE]])
        if i % 4 == 0 or s[st.PHASE] != st.PHASE_MAIN:
            a = mcts.act(obs, mask, determinize(s, seat, rng))
            assert mask[a], ("mcts", a, st.PHASE_NAMES[s[st.PHASE]])


def test_act_batch_is_legal_and_checked() -> None:
    states = STATES[3]
    obs = np.stack([decision_inputs(s)[0] for s in states])
    masks = np.stack([decision_inputs(s)[1] for s in states])
    for spec in ("random", "greedy"):
        acts = agents.make(spec, seed=3).act_batch(obs, masks)
        assert acts.shape == (len(states),)
        assert masks[np.arange(len(states)), acts].all()
        bad = masks.copy()
        bad[0] = 0
        with pytest.raises(ValueError, match="legal action"):
            agents.make(spec).act_batch(obs, bad)
    counts = np.bincount(
        RandomAgent(0).act_batch(obs[:1].repeat(3000, 0), masks[:1].repeat(3000, 0)), minlength=72
    )
    legal = np.flatnonzero(masks[0])
    assert set(np.flatnonzero(counts)) == set(legal)
    assert counts[legal].min() > 0.5 * 3000 / legal.size


def test_greedy_discards_surplus_not_gold_and_prefers_buying() -> None:
    for s in STATES[2]:
        obs, mask, _ = decision_inputs(s)
        a = GreedyAgent(0).act(obs, mask)
        if s[st.PHASE] == st.PHASE_DISCARD and mask[DISCARD : DISCARD + 5].any():
            assert a != DISCARD + 5
        if s[st.PHASE] == st.PHASE_MAIN and mask[45:60].any():
            assert 45 <= a < 60


def test_empty_mask_is_an_error() -> None:
    obs, mask, _ = decision_inputs(STATES[2][0])
    for agent in (RandomAgent(0), GreedyAgent(0)):
        with pytest.raises(ValueError, match="no legal action"):
            agent.act(obs, np.zeros_like(mask))


# ---------------------------------------------------------------------------
# Strength


def _score(records: list[dict], agent_id: int) -> float:
    total = 0.0
    for rec in records:
        seat = rec["agent_ids"].index(agent_id)
        if seat in rec["winners"]:
            total += 1.0 / len(rec["winners"])
    return total / len(records)


def test_greedy_beats_random_clearly() -> None:
    records = run_tasks(schedule(["greedy", "random"], 2, 40, seed=0), workers=1, progress=False)
    assert len(records) == 40
    assert _score(records, 0) >= 0.8


def test_mcts_small_budget_beats_random() -> None:
    records = run_tasks(schedule(["mcts:sims=30", "random"], 2, 4, seed=1), workers=1, progress=False)
    assert _score(records, 0) >= 0.75


# ---------------------------------------------------------------------------
# MCTS fairness


def _blind_position() -> np.ndarray:
    """Seat 1 holds a blind reservation; seat 0 is on move."""
    s = new_state(2, 11)
    for a in (RESERVE_DECK + 0, RESERVE_DECK + 1):
        assert rules.step_checked(s, a) == 0
    assert s[st.CURRENT] == 0
    return s


def test_mcts_ignores_hidden_information() -> None:
    s = _blind_position()
    obs, mask, seat = decision_inputs(s)
    variants = [s, determinize(s, seat, 1), determinize(s, seat, 2)]
    assert not np.array_equal(variants[1], variants[2])
    counts = [MCTSAgent(seed=7, sims=60).root_counts(v) for v in variants]
    for c in counts[1:]:
        np.testing.assert_array_equal(c, counts[0])
    moves = {MCTSAgent(seed=7, sims=60).act(obs, mask, v) for v in variants}
    assert len(moves) == 1


def test_mcts_needs_a_matching_state() -> None:
    s = _blind_position()
    obs, mask, _ = decision_inputs(s)
    agent = MCTSAgent(seed=0, sims=4)
    with pytest.raises(ValueError, match="needs state="):
        agent.act(obs, mask)
    with pytest.raises(ValueError, match="does not match action_mask"):
        agent.act(obs, mask, noble_choice_state(2, 0))


@pytest.mark.slow
def test_speed_policies_any_game() -> None:
    """Win rates per player count in a module game; a policy is timed and played only where it can play."""
    from training.speed.policies import format_bench, run_bench

    bench = run_bench(["greedy", "ppo:ppo_2p"], ["random"], games=3, n_states=12, players=(2, 3), modules=())
    greedy, ppo = bench["agents"]["greedy"], bench["agents"]["ppo:ppo_2p"]
    assert greedy["latency"]["players"] == [2, 3, 4] and greedy["latency"]["calls"] == 12
    assert greedy["vs_random@3p"]["games"] == 3 and greedy["vs_random@2p"]["games"] == 3
    assert (
        ppo["latency"]["players"] == [2] and ppo["vs_random@3p"] is None and ppo["vs_random@2p"]["games"] == 3
    )
    table = format_bench(bench)
    assert "vs random 3p" in table and "base game" in table

    orient = run_bench(["greedy"], ["random"], games=3, n_states=5, players=(4,), modules=("orient",))
    assert orient["agents"]["greedy"]["vs_random@4p"]["games"] == 3
    assert "orient game" in format_bench(orient)
