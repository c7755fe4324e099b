"""The torch side of the PPO policies: observation scaling and the card-slot network.

Why apart from the agent: training builds these modules and the agent only runs them; a
checkpoint names :class:`ScaledObs` and :class:`CardSlotPolicy` by import path (those saved
before this module existed say ``agents.players.ppo``, which still imports them), so loading one needs
only ``agents``. The numba copy of the network that search agents run is :mod:`agents.nets.numba_net`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, create_mlp

from agents.nets.card_slots import CARD_GAP_DIM, N_SLOTS
from splendor_env.actions import BUY_MARKET, BUY_RESERVED, NUM_ACTIONS, RESERVE_MARKET
from splendor_env.observation import (
    CARD_DIM,
    O_MARKET,
    O_SEATS,
    OBS_DIM,
    OBS_LAYOUT,
    S_BONUS,
    S_RES,
    S_TOKENS,
    SEAT_DIM,
)

# Typical maximum of each observation field: dividing by it puts every feature
# roughly in [0, 1], which keeps the first layer's pre-activations sane.
_FIELD_SCALE = {
    "bank": 7.0,
    "tokens": 7.0,
    "bonuses": 7.0,
    "prestige": 20.0,
    "cards_purchased": 20.0,
    "nobles": 3.0,
    "reserved_count": 3.0,
    "deck_sizes": 40.0,
}


def _card_scale() -> np.ndarray:
    scale = np.ones(CARD_DIM, dtype=np.float32)
    scale[10] = 5.0  # points
    scale[11:16] = 7.0  # cost per colour
    return scale


def obs_scale(dim: int = OBS_DIM) -> np.ndarray:
    """Per-feature divisor for the raw-count observation (``float32[dim]``; module sections stay 1)."""
    scale = np.ones(dim, dtype=np.float32)
    for name, off, size in OBS_LAYOUT:
        field = name.split(".")[-1]
        if field in _FIELD_SCALE:
            scale[off : off + size] = _FIELD_SCALE[field]
        elif field in ("reserved_cards", "market_cards"):
            scale[off : off + size] = np.tile(_card_scale(), size // CARD_DIM)
        elif field == "nobles_on_offer":
            block = np.array([1.0, 4.0, 4.0, 4.0, 4.0, 4.0], dtype=np.float32)
            scale[off : off + size] = np.tile(block, size // 6)
    return scale


def card_gaps(obs: th.Tensor) -> th.Tensor:
    """For the observer and the next seat, how far each card (12 market + own 3 reserved) is.

    Per card: tokens needed after bonuses, tokens still missing after held
    tokens, missing after gold, and an "affordable now" flag (4 numbers, 0
    for an empty slot or a card hidden from the observer). A plain MLP learns
    these differences of counts slowly; they are arithmetic on the
    observation, not rules, and they are what every Splendor decision turns on.
    """
    b = obs.shape[0]
    market = obs[:, O_MARKET : O_MARKET + 12 * CARD_DIM].reshape(b, 12, CARD_DIM)
    out = []
    for rel in (0, 1):
        so = O_SEATS + rel * SEAT_DIM
        tokens = obs[:, so + S_TOKENS : so + S_TOKENS + 6]
        bonus = obs[:, so + S_BONUS : so + S_BONUS + 5]
        reserved = obs[:, so + S_RES : so + S_RES + 3 * CARD_DIM].reshape(b, 3, CARD_DIM)
        cards = th.cat([market, reserved], dim=1)
        visible = cards[..., 0] if rel == 0 else cards[..., 0] * (1.0 - cards[..., 1])
        need = th.relu(cards[..., 11:16] - bonus[:, None, :])
        short = th.relu(need - tokens[:, None, :5])
        missing = th.relu(short.sum(-1) - tokens[:, None, 5])
        feats = th.stack(
            [need.sum(-1) / 10, short.sum(-1) / 10, missing / 10, (missing == 0).float()], dim=-1
        )
        out.append((feats * visible[..., None]).flatten(1))
    return th.cat(out, dim=1)


class ScaledObs(BaseFeaturesExtractor):
    """Features = observation / typical maximum (+ optional :func:`card_gaps`): fixed, no statistics."""

    def __init__(self, observation_space: gym.spaces.Box, card_features: bool = False) -> None:
        dim = int(np.prod(observation_space.shape)) + (CARD_GAP_DIM if card_features else 0)
        super().__init__(observation_space, features_dim=dim)
        self.card_features = card_features
        self.register_buffer(
            "inv_scale", th.as_tensor(1.0 / obs_scale(int(np.prod(observation_space.shape))))
        )

    def forward(self, observations: th.Tensor) -> th.Tensor:
        scaled = observations * self.inv_scale
        if not self.card_features:
            return scaled
        return th.cat([scaled, card_gaps(observations)], dim=1)


# -- card-slot actor: one shared scorer for every card the player could buy or reserve --------------

SLOT_IN = CARD_DIM + 8 + N_SLOTS  # card fields, gaps (self, next seat), slot one-hot


def slot_inputs(features: th.Tensor) -> th.Tensor:
    """Per-slot inputs ``[B, 15, SLOT_IN]`` from :class:`ScaledObs` features (with ``card_features``).

    The opponent's gaps are only defined for market slots (its reserved cards
    are other cards), so they are zero for the reserved slots.
    """
    b = features.shape[0]
    market = features[:, O_MARKET : O_MARKET + 12 * CARD_DIM].reshape(b, 12, CARD_DIM)
    reserved = features[:, O_SEATS + S_RES : O_SEATS + S_RES + 3 * CARD_DIM].reshape(b, 3, CARD_DIM)
    gaps = features[:, -CARD_GAP_DIM:].reshape(b, 2, N_SLOTS, 4)  # ScaledObs appends them last
    opp = th.cat([gaps[:, 1, :12], th.zeros_like(gaps[:, 1, 12:])], dim=1)
    onehot = th.eye(N_SLOTS, dtype=features.dtype, device=features.device).expand(b, -1, -1)
    return th.cat([th.cat([market, reserved], dim=1), gaps[:, 0], opp, onehot], dim=-1)


class ResidualBlock(th.nn.Module):
    """``x + W_2 act(W_1 x + b_1) + b_2``: a critic layer that starts near the identity, so a deep
    value trunk trains like a shallow one and only adds what helps (:class:`CardSlotExtractor`)."""

    def __init__(self, width: int, activation_fn: type[th.nn.Module]) -> None:
        super().__init__()
        self.inner = th.nn.Sequential(th.nn.Linear(width, width), activation_fn(), th.nn.Linear(width, width))

    def forward(self, x: th.Tensor) -> th.Tensor:
        return x + self.inner(x)


def critic_trunk(
    feature_dim: int, net_arch: list[int], activation_fn: type[th.nn.Module], blocks: int, width: int
) -> th.nn.Sequential:
    """The critic's trunk: the plain MLP of ``net_arch`` (``blocks`` 0, every model saved before
    0.5.0), or ``Linear(features, width)``, act and ``blocks`` :class:`ResidualBlock` of ``width``.

    Why a residual option: the search's leaf values come from the critic alone, so a larger
    critic is where capacity pays; residual blocks let it grow deeper without training worse.
    """
    if blocks <= 0:
        return th.nn.Sequential(*create_mlp(feature_dim, 0, net_arch, activation_fn))
    layers: list[th.nn.Module] = [th.nn.Linear(feature_dim, width), activation_fn()]
    layers += [ResidualBlock(width, activation_fn) for _ in range(blocks)]
    return th.nn.Sequential(*layers)


class CardSlotExtractor(th.nn.Module):
    """SB3 ``mlp_extractor``: MLP trunks for actor and critic, plus a shared per-card encoder.

    The actor latent is ``[h, z_1 .. z_15]``: the trunk output ``h`` and, per
    card slot, ``z_i = act(W_c card_i + W_h h)``. One set of weights scores
    every slot, so what the policy learns about buying the card in slot 3
    carries over to slot 7; a plain MLP head has to learn each slot apart.
    The critic trunk is :func:`critic_trunk` (``critic_blocks`` 0: the plain MLP, as every
    shipped model has).
    """

    def __init__(
        self,
        feature_dim: int,
        net_arch: list[int],
        activation_fn: type[th.nn.Module],
        slot_dim: int = 32,
        critic_blocks: int = 0,
        critic_width: int = 256,
    ) -> None:
        super().__init__()
        self.actor = th.nn.Sequential(*create_mlp(feature_dim, 0, net_arch, activation_fn))
        self.critic = critic_trunk(feature_dim, net_arch, activation_fn, critic_blocks, critic_width)
        hidden = net_arch[-1]
        self.card = th.nn.Sequential(th.nn.Linear(SLOT_IN, 64), activation_fn(), th.nn.Linear(64, slot_dim))
        self.context = th.nn.Linear(hidden, slot_dim)
        self.act = activation_fn()
        self.hidden, self.slot_dim = hidden, slot_dim
        self.critic_blocks = critic_blocks
        self.latent_dim_pi = hidden + N_SLOTS * slot_dim
        self.latent_dim_vf = critic_width if critic_blocks > 0 else hidden

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        h = self.actor(features)
        z = self.act(self.card(slot_inputs(features)) + self.context(h)[:, None, :])
        return th.cat([h, z.flatten(1)], dim=1)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.critic(features)


class CardSlotHead(th.nn.Module):
    """Action logits: a linear map of ``h`` for every id, plus per-slot buy/reserve scores of ``z_i``."""

    def __init__(self, hidden: int, slot_dim: int, n_actions: int = NUM_ACTIONS) -> None:
        super().__init__()
        self.hidden, self.slot_dim = hidden, slot_dim
        self.base = th.nn.Linear(hidden, n_actions)
        self.slot = th.nn.Linear(slot_dim, 2)  # (buy, reserve) score of a slot
        buy = list(range(BUY_MARKET, BUY_MARKET + 12)) + list(range(BUY_RESERVED, BUY_RESERVED + 3))
        reserve = list(range(RESERVE_MARKET, RESERVE_MARKET + 12))
        self.register_buffer("buy_ids", th.as_tensor(buy))
        self.register_buffer("reserve_ids", th.as_tensor(reserve))

    def forward(self, latent: th.Tensor) -> th.Tensor:
        h, z = latent[:, : self.hidden], latent[:, self.hidden :].reshape(-1, N_SLOTS, self.slot_dim)
        scores = self.slot(z)
        logits = self.base(h)
        logits = logits.index_add(1, self.buy_ids, scores[:, :, 0])
        return logits.index_add(1, self.reserve_ids, scores[:, :12, 1])


class CardSlotPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with :class:`CardSlotExtractor` and :class:`CardSlotHead` (any game).

    Needs ``features_extractor_class=ScaledObs`` with ``card_features=True``. The options past
    SB3's, in ``policy_kwargs`` and so in a saved model's (a model saved without them has their
    defaults, the layout of every model before 0.5.0): ``critic_blocks``/``critic_width``, the
    residual critic trunk (:func:`critic_trunk`); ``aux_outputs`` > 0, a linear head
    ``aux_net`` on the critic trunk for auxiliary value targets (search training's
    ``train.aux_coef``; nothing that plays reads it).
    """

    def __init__(
        self, *args: Any, critic_blocks: int = 0, critic_width: int = 256, aux_outputs: int = 0, **kwargs: Any
    ) -> None:
        self.critic_blocks, self.critic_width, self.aux_outputs = critic_blocks, critic_width, aux_outputs
        super().__init__(*args, **kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(
            critic_blocks=self.critic_blocks, critic_width=self.critic_width, aux_outputs=self.aux_outputs
        )
        return data

    def _build_mlp_extractor(self) -> None:
        arch = self.net_arch["pi"] if isinstance(self.net_arch, dict) else self.net_arch
        self.mlp_extractor = CardSlotExtractor(
            self.features_dim,
            list(arch),
            self.activation_fn,
            critic_blocks=self.critic_blocks,
            critic_width=self.critic_width,
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        ex = self.mlp_extractor
        self.action_net = CardSlotHead(ex.hidden, ex.slot_dim, int(self.action_space.n))
        if self.ortho_init:  # as SB3 does for its own action_net: near-uniform first policy
            self.action_net.apply(partial(self.init_weights, gain=0.01))
        if self.aux_outputs > 0:
            self.aux_net = th.nn.Linear(ex.latent_dim_vf, self.aux_outputs)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)


__all__ = [
    "CARD_GAP_DIM",
    "N_SLOTS",
    "SLOT_IN",
    "CardSlotExtractor",
    "CardSlotHead",
    "CardSlotPolicy",
    "ResidualBlock",
    "ScaledObs",
    "card_gaps",
    "critic_trunk",
    "obs_scale",
    "slot_inputs",
]
