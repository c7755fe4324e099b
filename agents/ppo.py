"""A trained MaskablePPO policy as an :class:`~agents.base.Agent` (spec ``"ppo:PATH"``).

Inference skips SB3's ``predict`` plumbing: one forward pass of the actor
gives logits for the whole batch, illegal actions are masked out, and the
action is the argmax (``deterministic=True``) or a Gumbel-max sample drawn
from the agent's own seeded generator, so stochastic play is reproducible.

:class:`ScaledObs` lives here (not in ``training``) because a saved model
refers to it by import path: loading a checkpoint must only need ``agents``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, create_mlp

from splendor_env.actions import BUY_MARKET, BUY_RESERVED, NUM_ACTIONS, NUM_ACTIONS_ALL, RESERVE_MARKET
from splendor_env.observation import (
    CARD_DIM,
    O_MARKET,
    O_MODULES,
    O_SEATS,
    OBS_DIM,
    OBS_DIM_ALL,
    OBS_LAYOUT,
    S_BONUS,
    S_PRESENT,
    S_RES,
    S_TOKENS,
    SEAT_DIM,
)
from splendor_env.state import MAX_PLAYERS, MODULE_NAMES

from .base import Agent, check_mask

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


CARD_GAP_DIM = 2 * 15 * 4


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


def load_model(path: str | Path) -> Any:
    """Load a MaskablePPO ``.zip`` on the CPU: a file or a shipped model's name (``ppo_2p``).

    The name goes through :func:`agents.models.resolve_model`, so a shipped
    model loads from an installed wheel too, and a missing file is one clear error.
    """
    from sb3_contrib import MaskablePPO

    from .models import resolve_model, shipped_names

    try:
        p = resolve_model(path)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"PPO model file not found: {str(path)!r} (expected a MaskablePPO .zip or a shipped model: "
            f"{', '.join(shipped_names())})"
        ) from None
    try:
        model = MaskablePPO.load(p, device="cpu")
    except Exception as exc:  # noqa: BLE001 - zipfile, torch and SB3 each raise their own kind
        detail = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"PPO model {str(p)!r} is not a readable MaskablePPO .zip: {detail}") from exc
    check_model_spaces(model, str(p))
    flush_subnormal_weights(model.policy)
    return model


def flush_subnormal_weights(policy: Any) -> int:
    """Set the policy's subnormal weights (below float32's 1.2e-38) to zero; returns how many there were.

    Why: CPUs compute with subnormals many times slower, and search training can leave thousands
    in a network (``az_2p`` holds 62,206); no output moves by more than about 1e-38. The search's
    numba copy is flushed too (:func:`agents.net.flush_subnormals`).
    """
    count = 0
    with th.no_grad():
        for param in policy.parameters():
            tiny = (param.abs() < th.finfo(param.dtype).tiny) & (param != 0)
            count += int(tiny.sum())
            param[tiny] = 0.0
    return count


#: Attribute of a MaskablePPO model (saved in the zip's ``data`` JSON by ``model.save``) that says
#: which games the policy was trained for: ``{"players": [3, 4], "modules": ["cities"]}``.
GAME_ATTR = "splendor_game"


def check_model_spaces(model: Any, name: str = "model") -> None:
    """Refuse at load time a model whose observation size / action count is no game of this env."""
    obs_shape = getattr(model.observation_space, "shape", None)
    n_actions = getattr(model.action_space, "n", None)
    if (obs_shape, n_actions) not in (((OBS_DIM,), NUM_ACTIONS), ((OBS_DIM_ALL,), NUM_ACTIONS_ALL)):
        raise ValueError(
            f"PPO model {name!r} expects observations of shape {obs_shape} and {n_actions} actions; "
            f"this env gives ({OBS_DIM},) and {NUM_ACTIONS} for the base game, ({OBS_DIM_ALL},) and "
            f"{NUM_ACTIONS_ALL} with modules (a model for another version?)"
        )
    game_of(model, name)


def game_record(players: list[int] | tuple[int, ...] | int, modules: list[str] | tuple[str, ...]) -> dict:
    """The :data:`GAME_ATTR` value training stores in a model: player counts and modules, normalised."""
    counts = sorted({int(players)} if isinstance(players, (int, np.integer)) else {int(n) for n in players})
    return {"players": counts, "modules": [m for m in MODULE_NAMES if m in set(modules)]}


def game_of(model: Any, name: str = "model") -> dict[str, Any]:
    """Which games ``model`` plays: ``{"players", "modules", "obs_dim", "num_actions", "inferred"}``.

    Read from the model's :data:`GAME_ATTR`; a model saved before it existed
    (``models/ppo_2p.zip``) is inferred from its sizes: a base-game model is a
    2-player base-game policy (that is how every such model was trained).
    """
    obs_dim = int(np.prod(model.observation_space.shape))
    n_actions = int(model.action_space.n)
    meta = getattr(model, GAME_ATTR, None)
    if meta is None:
        if obs_dim != OBS_DIM:
            raise ValueError(
                f"PPO model {name!r} plays module games but does not record which modules and player "
                f"counts it was trained for (no {GAME_ATTR!r} in the model); retrain it with training.train"
            )
        return {"players": [2], "modules": [], "obs_dim": obs_dim, "num_actions": n_actions, "inferred": True}
    try:
        game = game_record(meta["players"], meta["modules"])
        ok = (
            game["players"]
            and set(game["players"]) <= {2, 3, 4}
            and len(game["modules"]) == len(meta["modules"])
        )
    except (TypeError, KeyError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"PPO model {name!r} has an unreadable {GAME_ATTR!r} record: {meta!r}")
    if bool(game["modules"]) != (obs_dim == OBS_DIM_ALL):
        raise ValueError(
            f"PPO model {name!r} records modules {game['modules']} but has observations of size {obs_dim}"
        )
    return {**game, "obs_dim": obs_dim, "num_actions": n_actions, "inferred": False}


def describe_game(players: list[int] | int, modules: list[str] | tuple[str, ...]) -> str:
    """``"3 or 4 players, base game"`` / ``"2 players, modules cities+orient"`` (for messages)."""
    counts = [players] if isinstance(players, int) else list(players)
    who = " or ".join(str(n) for n in counts) + " players"
    return f"{who}, {'modules ' + '+'.join(modules) if modules else 'base game'}"


def game_mismatch(game: dict[str, Any], num_players: int, modules: list[str] | tuple[str, ...]) -> str | None:
    """What differs between a model's :func:`game_of` and a game (``None`` if it may play it)."""
    mods = game_record(num_players, modules)["modules"]
    problems = []
    if num_players not in game["players"]:
        problems.append(
            f"player count: trained for {' or '.join(map(str, game['players']))}, game has {num_players}"
        )
    if mods != game["modules"]:
        problems.append(
            f"modules: trained for {game['modules'] or 'none (base game)'}, game has {mods or 'none (base game)'}"
        )
    dim, acts = (OBS_DIM_ALL, NUM_ACTIONS_ALL) if mods else (OBS_DIM, NUM_ACTIONS)
    if (dim, acts) != (game["obs_dim"], game["num_actions"]):
        problems.append(
            f"observation size {game['obs_dim']} vs {dim}, action count {game['num_actions']} vs {acts}"
        )
    return "; ".join(problems) or None


class PPOAgent(Agent):
    """Plays a MaskablePPO policy; ``model=`` wraps an in-memory model instead of loading ``path``.

    ``game`` (from :func:`game_of`) says which games the policy was trained for;
    :meth:`check_game` refuses any other game naming what differs, and every
    move checks the observation's seats and modules against it, so a policy
    is never silently played in a game it has not learnt.
    """

    name = "ppo"

    def __init__(
        self,
        path: str | Path | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        model: Any = None,
    ) -> None:
        super().__init__(seed)
        if model is None:
            if path is None:
                raise ValueError("PPOAgent needs a model path (or model=)")
            model = load_model(path)
        self.path = None if path is None else str(path)
        self.label = self.path or "in-memory model"
        self.game = game_of(model, self.label)
        self.plays_modules = bool(self.game["modules"])  # read by agents.base.check_game
        self.model = model
        self.policy = model.policy
        self.deterministic = deterministic

    def check_game(self, num_players: int, modules: list[str] | tuple[str, ...] = ()) -> None:
        """Refuse a game the policy was not trained for, naming what differs."""
        problem = game_mismatch(self.game, int(num_players), tuple(modules))
        if problem:
            raise ValueError(
                f"PPO model {self.label!r} was trained for {describe_game(self.game['players'], self.game['modules'])}; "
                f"it cannot play {describe_game(int(num_players), game_record(num_players, modules)['modules'])} "
                f"({problem})"
            )

    def _check_observations(self, obs: np.ndarray) -> None:
        """The same check from the observations themselves (seat ``present`` flags, module flags)."""
        if obs.ndim != 2 or obs.shape[1] != self.game["obs_dim"]:
            got = obs.shape[-1] if obs.ndim else None
            mods = "a module game" if got == OBS_DIM_ALL else "the base game" if got == OBS_DIM else "no game"
            raise ValueError(
                f"PPO model {self.label!r} was trained for {describe_game(self.game['players'], self.game['modules'])}"
                f" (observations of size {self.game['obs_dim']}); got observations of size {got} ({mods})"
            )
        seats = obs[:, [O_SEATS + k * SEAT_DIM + S_PRESENT for k in range(MAX_PLAYERS)]].sum(axis=1)
        counts = np.unique(seats.astype(np.int64))
        if obs.shape[1] == OBS_DIM_ALL:
            flags = np.unique(obs[:, O_MODULES : O_MODULES + len(MODULE_NAMES)] > 0, axis=0)
            games = [[m for m, on in zip(MODULE_NAMES, row, strict=True) if on] for row in flags]
        else:
            games = [[]]
        for n in counts:
            for mods in games:
                self.check_game(int(n), mods)

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Unmasked actor logits ``[B, num_actions]`` for raw observations ``[B, obs_dim]``."""
        policy = self.policy
        with th.no_grad():
            obs = th.as_tensor(np.asarray(observations, dtype=np.float32))
            features = policy.pi_features_extractor(obs)
            return policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        observations = np.asarray(observations, dtype=np.float32)
        self._check_observations(observations)
        return self._choose(observations, action_masks)

    def _choose(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks).astype(bool)
        if not masks.any(axis=1).all():
            raise ValueError("an action_mask row has no legal action")
        logits = self.logits(observations)
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape).astype(logits.dtype)
        return np.where(masks, logits, -np.inf).argmax(axis=1).astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        observations = np.asarray(observation, dtype=np.float32)[None]
        self._check_observations(observations)
        check_mask(action_mask, self.game["num_actions"])
        return int(self._choose(observations, np.asarray(action_mask)[None])[0])

    def __repr__(self) -> str:
        return f"PPOAgent({self.path!r}, deterministic={self.deterministic})"


# -- card-slot actor: one shared scorer for every card the player could buy or reserve --------------

N_SLOTS = 15  # 12 market cards + the observer's 3 reserved cards
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


class CardSlotExtractor(th.nn.Module):
    """SB3 ``mlp_extractor``: MLP trunks for actor and critic, plus a shared per-card encoder.

    The actor latent is ``[h, z_1 .. z_15]``: the trunk output ``h`` and, per
    card slot, ``z_i = act(W_c card_i + W_h h)``. One set of weights scores
    every slot, so what the policy learns about buying the card in slot 3
    carries over to slot 7; a plain MLP head has to learn each slot apart.
    """

    def __init__(
        self, feature_dim: int, net_arch: list[int], activation_fn: type[th.nn.Module], slot_dim: int = 32
    ) -> None:
        super().__init__()
        self.actor = th.nn.Sequential(*create_mlp(feature_dim, 0, net_arch, activation_fn))
        self.critic = th.nn.Sequential(*create_mlp(feature_dim, 0, net_arch, activation_fn))
        hidden = net_arch[-1]
        self.card = th.nn.Sequential(th.nn.Linear(SLOT_IN, 64), activation_fn(), th.nn.Linear(64, slot_dim))
        self.context = th.nn.Linear(hidden, slot_dim)
        self.act = activation_fn()
        self.hidden, self.slot_dim = hidden, slot_dim
        self.latent_dim_pi = hidden + N_SLOTS * slot_dim
        self.latent_dim_vf = hidden

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

    Needs ``features_extractor_class=ScaledObs`` with ``card_features=True``.
    """

    def _build_mlp_extractor(self) -> None:
        arch = self.net_arch["pi"] if isinstance(self.net_arch, dict) else self.net_arch
        self.mlp_extractor = CardSlotExtractor(self.features_dim, list(arch), self.activation_fn)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        ex = self.mlp_extractor
        self.action_net = CardSlotHead(ex.hidden, ex.slot_dim, int(self.action_space.n))
        if self.ortho_init:  # as SB3 does for its own action_net: near-uniform first policy
            self.action_net.apply(partial(self.init_weights, gain=0.01))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)
