"""The ``az`` agent: PUCT over determinised states guided by the shipped PPO network (agents/players/az.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents
from agents.base import check_game
from agents.nets.numba_net import check_export, forward_numpy
from agents.nets.shipped import resolve_model
from agents.players.az import AZAgent
from splendor_env import rules
from splendor_env import state as st
from splendor_env.determinize import determinize
from tests.helpers import decision_inputs, noble_choice_state, sample_states, winning_position
from training.matches.tournament import run_tasks, schedule


@pytest.fixture(scope="module")
def az() -> AZAgent:
    return agents.make("az:ppo_2p,sims=32", seed=0)


def two_player_states() -> list[np.ndarray]:
    """Main, discard and noble-choice positions of 2-player games."""
    states = sample_states(2, 2, seed=3, max_per_game=80)
    return [*states, noble_choice_state(2, 0), noble_choice_state(2, 1)]


@pytest.mark.slow
def test_export_matches_torch(az: AZAgent) -> None:
    obs = np.stack([decision_inputs(s)[0] for s in two_player_states()[::7]])
    assert check_export(az.ppo.policy, az.weights, obs) < 1e-3
    logits, values = forward_numpy(az.weights, obs)
    assert logits.shape == (len(obs), 72) and values.shape == (len(obs),)


@pytest.mark.slow
def test_legal_in_every_phase(az: AZAgent) -> None:
    rng = np.random.default_rng(0)
    phases = set()
    states = two_player_states()
    for s in states[:-2:3] + states[-2:]:
        obs, mask, seat = decision_inputs(s)
        phases.add(int(s[st.PHASE]))
        a = az.act(obs, mask, determinize(s, seat, rng))
        assert mask[a] == 1
    assert {st.PHASE_MAIN, st.PHASE_DISCARD, st.PHASE_NOBLE} <= phases


@pytest.mark.slow
def test_deterministic_given_seed_and_blind_to_hidden_information() -> None:
    s = sample_states(2, 1, seed=11, max_per_game=30)[20]
    obs, mask, seat = decision_inputs(s)
    moves = set()
    for hidden_seed in range(3):  # the input's hidden cards differ; the move must not
        agent = agents.make("az:sims=40", seed=7)
        moves.add(agent.act(obs, mask, determinize(s, seat, hidden_seed)))
    assert len(moves) == 1
    a1 = agents.make("az:sims=40", seed=7)
    a2 = agents.make("az:sims=40", seed=7)
    states = sample_states(2, 1, seed=12, max_per_game=15)
    for s in states:
        obs, mask, seat = decision_inputs(s)
        d = determinize(s, seat, 0)
        assert a1.act(obs, mask, d) == a2.act(obs, mask, d)


def test_gumbels_root_plays_its_search_move_reproducibly_and_blind_to_hidden_cards() -> None:
    """``gumbel=M``: the move is the last survivor of sequential halving over M sampled moves
    (:meth:`AZAgent.gumbel_search` from the same seed), whatever the hidden cards of the input."""
    states = sample_states(2, 2, seed=13, max_per_game=30)[5::6]
    for i, s in enumerate(states):
        obs, mask, seat = decision_inputs(s)
        moves = set()
        for hidden_seed in range(2):
            agent = agents.make("az:sims=24,gumbel=4", seed=i)
            moves.add(agent.act(obs, mask, determinize(s, seat, hidden_seed)))
        assert len(moves) == 1
        move = moves.pop()
        assert mask[move]
        if int(mask.sum()) > 1:
            search = agents.make("az:sims=24", seed=i)
            assert move == search.gumbel_search(determinize(s, seat, 0), 4)[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    "players, modules", [(3, ()), (4, ()), (2, ("cities", "trading_posts", "orient", "strongholds"))]
)
def test_gumbels_root_plays_whole_games_at_every_table_a_network_covers(
    players: int, modules: tuple[str, ...]
) -> None:
    from agents.runner import play_game

    seats = [agents.make("az:sims=8,gumbel=4", seed=0)] + [
        agents.make("greedy", seed=p) for p in range(1, players)
    ]
    record = play_game(seats, seed=5, modules=modules)  # a strict env: an illegal move would raise
    assert len(record["actions"]) > 4 * players


@pytest.mark.slow
@pytest.mark.parametrize("sims", [2, 17, 64])
def test_simulation_budget(sims: int) -> None:
    agent = agents.make(f"az:sims={sims},batch=4", seed=0)
    s = sample_states(2, 1, seed=1, max_per_game=10)[5]
    counts = agent.root_visits(determinize(s, int(s[st.CURRENT]), 0))
    # every simulation but the root's own evaluation goes through one root action
    assert int(np.floor(counts).sum()) == sims - 1


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, 3])
def test_stop_plays_the_full_searchs_move_with_fewer_simulations(num_players: int) -> None:
    full = agents.make("az:stop=0", seed=3)
    fast = agents.make("az", seed=3)  # stop=1, the default
    sims = {2: 1000, 3: 2000}[num_players]  # the default budget of each count
    used = []
    for s in sample_states(num_players, 1, seed=5, max_per_game=60)[::4]:
        obs, mask, seat = decision_inputs(s)
        if mask.sum() < 2:
            continue
        d = determinize(s, seat, 0)
        assert fast.act(obs, mask, d) == full.act(obs, mask, d)
        assert full.simulations == sims and fast.simulations <= sims
        used.append(fast.simulations)
    assert len(used) >= 5 and np.mean(used) < 0.9 * sims  # most moves are decided well before the end


@pytest.mark.slow
def test_an_early_stop_below_one_ends_sooner() -> None:
    s = sample_states(3, 1, seed=5, max_per_game=30)[20]
    obs, mask, seat = decision_inputs(s)
    d = determinize(s, seat, 0)
    used = {}
    for stop in (0.0, 0.25, 1.0):
        agent = agents.make(f"az:sims=600,stop={stop}", seed=1)
        agent.act(obs, mask, d)
        used[stop] = agent.simulations
    assert used[0.25] <= used[1.0] <= used[0.0] == 600 and used[0.25] < 600


def test_default_budget_by_player_count_and_the_spec_wins() -> None:
    agent = agents.make("az", seed=0)
    net = agent.network(3, ())
    assert agent.search_params(agent.network(2, ()), 2)["sims"] == 1000
    assert agent.search_params(net, 3)["sims"] == 2000 and agent.search_params(net, 4)["sims"] == 2000
    assert agents.make("az:sims=300").search_params(net, 3)["sims"] == 300
    s = sample_states(3, 1, seed=2, max_per_game=10)[5]
    training_counts = agent.root_visits(determinize(s, int(s[st.CURRENT]), 0))  # no early stop: every visit
    assert agent.simulations == 2000 and int(np.floor(training_counts).sum()) == 1999


def test_time_budget_runs_until_time_is_up() -> None:
    agent = agents.make("az:ms=30", seed=0)
    s = sample_states(2, 1, seed=1, max_per_game=10)[5]
    counts = agent.root_visits(determinize(s, int(s[st.CURRENT]), 0))
    assert np.floor(counts).sum() >= 4 * agent.params["batch"]  # at least one chunk after the root


def test_picks_the_winning_purchase(az: AZAgent) -> None:
    s, winning = winning_position()
    obs, mask, seat = decision_inputs(s)
    assert seat == 1 and mask[winning] == 1 and mask.sum() > 5
    d = s.copy()
    rules.apply_action(d, winning)
    assert rules.is_over(d) and d[st.OUTCOME + 1] == 1  # the position is what the test says
    assert az.act(obs, mask, determinize(s, seat, 0)) == winning


@pytest.mark.parametrize(
    "spec, words",
    [
        ("az:sims=0", "sims=0"),
        ("az:sims=x", "sims='x'"),
        ("az:batch=0", "batch=0"),
        ("az:c=-1", "c=-1.0"),
        ("az:ms=-5", "ms=-5.0"),
        ("az:ptemp=0", "ptemp=0.0"),
        ("az:fpu=nan", "fpu='nan'"),
        ("az:depth=3", "unknown az option(s) ['depth']"),
        ("az:sims=10,sims=20", "given twice"),
        ("az:stop=1.5", "stop=1.5"),
        ("az:gumbel=1", "gumbel=1"),
        ("az:gumbel=8,ms=50", "gumbel=8"),
        ("az:gumbel=8,max_ms=50", "gumbel=8"),
        ("az:gumbel=8,stop=0.5", "gumbel=8"),
    ],
)
def test_bad_options_are_named(spec: str, words: str) -> None:
    with pytest.raises(ValueError) as err:
        agents.make(spec)
    assert words in str(err.value)


def test_missing_model_is_named() -> None:
    with pytest.raises(FileNotFoundError, match="nowhere.zip"):
        agents.make("az:nowhere.zip,sims=5")


def test_refuses_other_games(az: AZAgent) -> None:
    with pytest.raises(ValueError, match="plays only the base game"):
        check_game(az, "az", ("cities",), 2)
    with pytest.raises(ValueError, match="plays only 2 players, base game; got 3 players"):
        check_game(az, "az", (), 3)
    s = sample_states(3, 1, seed=0, max_per_game=5)[2]
    obs, mask, seat = decision_inputs(s)
    with pytest.raises(ValueError, match="plays only 2 players, base game"):
        az.act(obs, mask, determinize(s, seat, 0))


def test_needs_a_matching_state(az: AZAgent) -> None:
    s = sample_states(2, 1, seed=2, max_per_game=5)[3]
    obs, mask, seat = decision_inputs(s)
    with pytest.raises(ValueError, match="needs state="):
        az.act(obs, mask)
    other = sample_states(2, 1, seed=4, max_per_game=5)[1]
    wrong = np.zeros_like(mask)
    rules.legal_mask(other, wrong)
    if not np.array_equal(wrong, mask):
        with pytest.raises(ValueError, match="does not match"):
            az.act(obs, mask, determinize(other, int(other[st.CURRENT]), 0))


@pytest.mark.slow
def test_plays_tournament_games() -> None:
    records = run_tasks(schedule(["az:sims=8", "greedy"], 2, 2, 0), workers=1, progress=False)
    assert len(records) == 2 and all(r["winners"] is not None for r in records)


def test_spec_and_keyword_options() -> None:
    agent = agents.make("az", sims=12, c=2.0)
    assert agent.params["sims"] == 12 and agent.params["c"] == 2.0 and agent.needs_state
    assert agents.make("az:ppo_2p").params["sims"] == 1000
    with pytest.raises(ValueError, match="both in the spec and as keyword"):
        agents.make("az:sims=3", sims=4)


def test_subnormal_weights_are_flushed_on_load_and_export(tmp_path) -> None:
    """Subnormal weights (search training's weight decay leaves thousands) slow every CPU product;
    loading and exporting set them to zero, and the network's outputs do not move."""
    import torch

    from agents.nets.checkpoint import flush_subnormal_weights, load_model
    from agents.nets.numba_net import export_network

    # a search-training test earlier in this process may have set torch to flush subnormals
    # itself (training.expert_iteration.loop does), which would zero the planted weights on write
    torch.set_flush_denormal(False)
    model = load_model("ppo_2p")
    with torch.no_grad():
        model.policy.mlp_extractor.actor[0].weight.view(-1)[:500] = 1e-40
        model.policy.value_net.weight.view(-1)[:10] = -1e-41
    obs = torch.as_tensor(np.stack([decision_inputs(s)[0] for s in two_player_states()[::9]]))

    def outputs() -> tuple[np.ndarray, np.ndarray]:
        with torch.no_grad():
            logits = model.policy.get_distribution(obs).distribution.logits
            return logits.numpy().copy(), model.policy.predict_values(obs).numpy().copy()

    before = outputs()
    tiny = np.finfo(np.float32).tiny
    assert all(not np.any((np.abs(w) < tiny) & (w != 0)) for w in export_network(model.policy))
    path = tmp_path / "sub.zip"
    model.save(path)
    assert flush_subnormal_weights(load_model(path).policy) == 0  # already clean once loaded
    assert flush_subnormal_weights(model.policy) == 510
    for a, b in zip(before, outputs(), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def _with_network_options(monkeypatch: pytest.MonkeyPatch, name: str, options: dict[str, object]) -> None:
    """Make the shipped model ``name``'s metadata record ``options`` (``"az"``) for this test."""
    from agents.nets import shipped as models

    real = models.shipped_models()
    real[name]["az"] = options
    monkeypatch.setattr(models, "_load_all", lambda: real)


def test_a_shipped_networks_options_are_used_unless_the_spec_sets_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _with_network_options(monkeypatch, "ppo_2p", {"ptemp": 3.0, "c": 0.5})
    s = sample_states(2, 1, seed=1, max_per_game=10)[5]
    d = determinize(s, int(s[st.CURRENT]), 0)

    def visits(spec: str) -> tuple[np.ndarray, dict[str, object]]:
        agent = agents.make(spec, seed=0)
        return agent.root_visits(d), agent.search_params(agent.network(2, ()), 2)

    own, own_params = visits("az:ppo_2p,sims=64")
    assert (own_params["ptemp"], own_params["c"], own_params["sims"]) == (3.0, 0.5, 64)
    spelled_out, _ = visits("az:ppo_2p.zip,sims=64,ptemp=3,c=0.5")  # the file name: same network
    assert np.array_equal(own, spelled_out)  # the metadata's options are exactly the spec's
    overridden, params = visits("az:ppo_2p,sims=64,ptemp=1")
    assert (params["ptemp"], params["c"]) == (1.0, 0.5)  # the spec wins, key by key
    defaults, _ = visits("az:ppo_2p,sims=64,ptemp=1,c=1.5")
    assert not np.array_equal(own, defaults)  # the options change the search
    copy = shutil.copy(resolve_model("ppo_2p"), tmp_path)  # a plain file now, not a shipped model
    bare, params = visits(f"az:{copy},sims=64")
    assert (params["ptemp"], params["c"]) == (1.0, 1.5) and np.array_equal(bare, defaults)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"sims": 10}, r"sets az option\(s\) \['sims'\]; a network may set only c, fpu, ptemp"),
        ({"ptemp": 0}, "ptemp=0.0"),
    ],
)
def test_a_network_with_bad_options_is_refused_naming_them(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, object], words: str
) -> None:
    _with_network_options(monkeypatch, "ppo_2p", options)
    with pytest.raises(ValueError, match=words):
        agents.make("az:ppo_2p")
