"""The critic options (issue 41): the residual critic trunk, in torch and in the numba copy the search
runs, and the auxiliary value targets (final prestige margin, turns left) from self-play to the loss."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch

from agents.nets.checkpoint import load_model, model_bytes, model_from_bytes
from agents.nets.numba_net import NetBuffers, check_export, export_network, forward_numpy, net_values
from agents.nets.policy_net import ResidualBlock
from splendor_env import state as st
from splendor_env.deal import new_state
from tests.helpers import decision_inputs, sample_states
from training.common.config import ConfigError
from training.expert_iteration import config as search_config
from training.expert_iteration.network import fresh_model, with_aux_head
from training.expert_iteration.replay import AUX_FIELDS, FIELDS, ReplayBuffer
from training.expert_iteration.selfplay import aux_targets

SHIPPED = sorted(p.stem for p in (Path(__file__).parents[1] / "agents" / "shipped").glob("*.zip"))


def config(**sections: dict[str, Any]) -> search_config.SearchTrainConfig:
    raw: dict[str, Any] = {"players": 2, "train": {"min_positions": 10}, "buffer": {"capacity": 100}}
    for name, values in sections.items():
        raw.setdefault(name, {}).update(values)
    return search_config.from_dict(raw, check_specs=False)


def observations(players: int = 2) -> np.ndarray:
    return np.stack([decision_inputs(s)[0] for s in sample_states(players, 1, seed=5, max_per_game=40)[::3]])


def perturbed(policy: Any, seed: int = 0) -> Any:
    """Every weight moved at random: a fresh network's zero biases and small head hide layout errors."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=gen))
    return policy


# -- the residual critic ------------------------------------------------------------------------


def test_the_default_critic_is_the_plain_trunk_and_saves_no_new_option() -> None:
    model = fresh_model(config())
    trunk = model.policy.mlp_extractor.critic
    assert [type(m).__name__ for m in trunk] == ["Linear", "ReLU", "Linear", "ReLU"]
    assert not hasattr(model.policy, "aux_net")
    assert not {"critic_blocks", "critic_width", "aux_outputs"} & set(model.policy_kwargs)
    weights = export_network(model.policy)
    assert weights[21].shape == (0, 128, 128) and weights[5].shape == (128, 128)


def test_residual_critic_is_built_from_the_config() -> None:
    model = fresh_model(config(network={"critic_blocks": 2, "critic_width": 48}))
    trunk = model.policy.mlp_extractor.critic
    assert trunk[0].weight.shape[0] == 48 and sum(isinstance(m, ResidualBlock) for m in trunk) == 2
    assert model.policy.value_net.in_features == 48
    assert model.policy.mlp_extractor.actor[0].weight.shape[0] == 128  # the actor is untouched


@pytest.mark.parametrize(("blocks", "width"), [(0, 128), (1, 128), (3, 40), (2, 200)])
def test_numba_network_equals_torch_for_both_critic_layouts(blocks: int, width: int) -> None:
    model = fresh_model(config(network={"critic_blocks": blocks, "critic_width": width}))
    policy = perturbed(model.policy)
    weights = export_network(policy)
    obs = observations()
    assert check_export(policy, weights, obs) < 1e-3
    # the critic alone (the other seats' views of a leaf in the search) gives the same values
    _, values = forward_numpy(weights, obs)
    buf = NetBuffers(weights, len(obs))
    out = np.zeros(len(obs), np.float32)
    net_values(obs, len(obs), weights, buf.feats, buf.h1, buf.h2, out)
    np.testing.assert_allclose(out, values, atol=1e-4)
    with torch.no_grad():
        ref = policy.predict_values(torch.as_tensor(obs)).numpy()[:, 0]
    np.testing.assert_allclose(out, ref, atol=1e-3)


def test_a_residual_critic_network_round_trips_and_plays_with_search() -> None:
    from agents.players.az import AZAgent

    model = fresh_model(config(network={"critic_blocks": 1, "critic_width": 64}))
    again = model_from_bytes(model_bytes(model))
    for a, b in zip(model.policy.state_dict().values(), again.policy.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    az = AZAgent(model=again, seed=0, sims=8)
    state = sample_states(2, 1, seed=1, max_per_game=5)[-1]
    obs, mask, _ = decision_inputs(state)
    assert mask[az.act(obs, mask, state)]


@pytest.mark.parametrize(
    ("network", "message"),
    [
        ({"critic_blocks": 2, "activation": "tanh"}, "network.critic_blocks: a residual critic needs"),
        ({"critic_blocks": -1}, "network.critic_blocks: must be >= 0, got -1"),
        ({"critic_width": 0}, "network.critic_width: must be >= 1, got 0"),
    ],
)
def test_critic_config_errors_name_the_key(network: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{message}"):
        config(network=network)


def test_aux_coef_must_not_be_negative() -> None:
    with pytest.raises(ConfigError, match="^train.aux_coef: must be >= 0"):
        config(train={"aux_coef": -1})


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[] if n == "az_2p" else pytest.mark.slow) for n in SHIPPED]
)
def test_shipped_networks_keep_the_plain_critic_layout(name: str) -> None:
    """Every shipped network loads (SB3 loads its weights strictly) into the plain critic trunk,
    and its export has no residual block."""
    model = load_model(name)
    ex = model.policy.mlp_extractor
    assert not any(isinstance(m, ResidualBlock) for m in ex.critic)
    assert ex.latent_dim_vf == ex.hidden and not hasattr(model.policy, "aux_net")
    weights = export_network(model.policy)
    assert weights[21].shape[0] == 0 and weights[5].shape[0] == ex.hidden


# -- auxiliary value targets ---------------------------------------------------------------------


def test_aux_targets_are_each_seats_margin_and_the_turns_left() -> None:
    final = new_state(3, seed=0, max_turns=200)
    for seat, points in enumerate((15, 12, 9)):
        final[st.player_offset(seat) + st.P_PRESTIGE] = points
    final[st.TURN] = 60
    margin, left = aux_targets(final, np.array([0, 1, 2, 0]), np.array([0, 1, 2, 60]))
    np.testing.assert_allclose(margin, np.array([3, -3, -6, 3]) / 15)
    np.testing.assert_allclose(left, np.array([60, 59, 58, 0]) / 200)


def test_selfplay_positions_carry_the_aux_targets() -> None:
    from agents.players.az import AZAgent
    from tests.helpers.selfplay_jobs import selfplay_options
    from training.expert_iteration.selfplay import game_seeds, play_selfplay_game

    az = AZAgent(model=fresh_model(config()), seed=0, sims=4)
    data, record = play_selfplay_game(
        az, selfplay_options(sample_moves=4, max_turns=200), 2, (), game_seeds(0, 0, 0)
    )
    assert set(FIELDS) <= set(data)
    assert not record["truncated"]
    winner, loser = record["winners"][0], 1 - record["winners"][0]
    gap = (record["prestige"][winner] - record["prestige"][loser]) / 15
    np.testing.assert_allclose(data["margin"][data["seat"] == winner], gap, rtol=1e-6)
    np.testing.assert_allclose(data["margin"][data["seat"] == loser], -gap, rtol=1e-6)
    left = data["moves_left"]
    assert np.all(np.diff(left) <= 0) and 0 <= left[-1] < left[0] <= record["turns"] / 200


def test_the_buffer_keeps_aux_fields_only_when_asked_and_loads_old_files(tmp_path: Path) -> None:
    k = 3
    data = {"obs": np.zeros((k, 3), np.float32), "mask": np.ones((k, 4), bool)}
    data |= {"policy": np.full((k, 4), 0.25, np.float32), "value": np.ones(k, np.float32)}
    data |= {"q": np.zeros(k, np.float32), "seat": np.zeros(k, np.int8), "phase": np.zeros(k, np.float32)}
    data |= {"margin": np.full(k, 0.2, np.float32), "moves_left": np.full(k, 0.5, np.float32)}
    plain = ReplayBuffer(5, 3, 4)
    plain.add(data)
    plain.save(tmp_path / "plain.npz")
    with np.load(tmp_path / "plain.npz") as z:
        assert not set(AUX_FIELDS) & set(z.files)  # the default run's buffer.npz as before
    old = ReplayBuffer.load(tmp_path / "plain.npz", 5, 3, 4, aux=True)  # an old-format buffer
    assert np.isnan(old.ordered()["margin"]).all()
    old.add(data)
    old.save(tmp_path / "aux.npz")
    again = ReplayBuffer.load(tmp_path / "aux.npz", 5, 3, 4, aux=True)
    np.testing.assert_array_equal(again.ordered()["moves_left"][-3:], 0.5)


def _aux_buffer(policy: Any, size: int) -> ReplayBuffer:
    n_obs, n_act = policy.observation_space.shape[0], policy.action_space.n
    rng = np.random.default_rng(0)
    buf = ReplayBuffer(size, n_obs, n_act, aux=True)
    obs = observations()
    rows = rng.integers(0, len(obs), size)
    margin = rng.uniform(-0.5, 0.5, size).astype(np.float32)
    margin[: size // 4] = np.nan  # unknown targets count for nothing
    buf.add(
        {
            "obs": obs[rows],
            "mask": np.ones((size, n_act), bool),
            "policy": np.full((size, n_act), 1 / n_act, np.float32),
            "value": np.sign(np.nan_to_num(margin)).astype(np.float32),
            "q": np.zeros(size, np.float32),
            "seat": np.zeros(size, np.int8),
            "phase": np.zeros(size, np.float32),
            "margin": margin,
            "moves_left": rng.uniform(0, 1, size).astype(np.float32),
        }
    )
    return buf


def test_aux_loss_trains_the_aux_head_and_is_reported() -> None:
    from training.common.budgets import WallBudget
    from training.expert_iteration.learner import aux_loss, critic_parameters, make_optimizer, train_network

    cfg = config(train={"aux_coef": 1.0, "batch_size": 32, "epochs": 4, "learning_rate": 3e-3})
    model = fresh_model(cfg)
    policy = model.policy
    assert policy.aux_net.out_features == len(AUX_FIELDS)
    assert {id(p) for p in policy.aux_net.parameters()} <= {id(p) for p in critic_parameters(policy)}
    buf = _aux_buffer(policy, 128)
    before = aux_loss(policy, buf.ordered(), torch.device("cpu")).item()
    assert np.isfinite(before)
    row = train_network(
        policy,
        make_optimizer(policy, cfg),
        buf,
        cfg,
        np.random.default_rng(0),
        torch.device("cpu"),
        WallBudget(None),
    )
    assert np.isfinite(row["train_aux_loss"])
    assert aux_loss(policy, buf.ordered(), torch.device("cpu")).item() < before
    again = model_from_bytes(model_bytes(model))  # the head is saved with the network
    assert torch.equal(again.policy.aux_net.weight, policy.aux_net.weight)


def test_without_aux_coef_no_aux_loss_is_reported() -> None:
    from training.common.budgets import WallBudget
    from training.expert_iteration.learner import make_optimizer, train_network

    cfg = config(train={"batch_size": 32, "epochs": 1})
    policy = fresh_model(cfg).policy
    row = train_network(
        policy,
        make_optimizer(policy, cfg),
        _aux_buffer(policy, 64),
        cfg,
        np.random.default_rng(0),
        torch.device("cpu"),
        WallBudget(None),
    )
    assert "train_aux_loss" not in row


def test_a_loaded_network_gets_an_aux_head_that_saves_with_it() -> None:
    cfg = config(train={"aux_coef": 0.5})
    model = with_aux_head(fresh_model(config()), cfg)
    assert model.policy_kwargs["aux_outputs"] == len(AUX_FIELDS)
    again = model_from_bytes(model_bytes(model))
    assert torch.equal(again.policy.aux_net.bias, model.policy.aux_net.bias)
    weights = export_network(again.policy)  # the search's copy ignores the head
    assert check_export(again.policy, weights, observations()) < 1e-3
