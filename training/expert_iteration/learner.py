"""What the network learns from self-play: the losses, the value target, the training passes and Adam.

Why apart from the loop: the learner is the one place a batch of positions
(:data:`training.expert_iteration.replay.Positions`) becomes tensors. The actor's masked
log-probabilities are trained by cross-entropy towards the search's visit shares,
the critic by squared error towards each seat's result, mixed with the search's
own value by ``train.search_value_weight``; ``train.value_learning_rate`` gives
the critic (its trunk and head) its own Adam group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from training.common.budgets import WallBudget
from training.common.config import ConfigError
from training.expert_iteration.config import SearchTrainConfig
from training.expert_iteration.replay import AUX_FIELDS, Positions, ReplayBuffer

#: Winner-pick phases by the mover's own turn (a round per seat): (name, first round, past the last).
PICK_PHASES = (("0_9", 0, 10), ("10_19", 10, 20), ("20", 20, 10**9))

#: Game phases for the value sign accuracy: (name, from, to) as shares of a game's decisions.
PHASES = (("early", 0.0, 1 / 3), ("mid", 1 / 3, 2 / 3), ("late", 2 / 3, 1.01))


def policy_outputs(policy: Any, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities over the legal ids (illegal ids at about -1e9) and critic values of a batch."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        latent_pi = policy.mlp_extractor.forward_actor(features[0])
        latent_vf = policy.mlp_extractor.forward_critic(features[1])
    logits = policy.action_net(latent_pi).masked_fill(~mask, -1e9)
    return torch.log_softmax(logits, dim=1), policy.value_net(latent_vf).squeeze(-1)


def losses(
    policy: Any, batch: Positions, device: torch.device, search_value_weight: float = 0.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(policy cross-entropy to the visit targets, value MSE, the values) of a batch.

    The value target is the outcome, mixed with the search's root value by ``search_value_weight``.
    """
    obs = torch.as_tensor(batch["obs"], device=device)
    mask = torch.as_tensor(batch["mask"], device=device)
    logp, values = policy_outputs(policy, obs, mask)
    visits = torch.as_tensor(batch["policy"], device=device)
    policy_loss = -(visits * logp).sum(dim=1).mean()
    wanted = torch.as_tensor(value_target(batch, search_value_weight), device=device)
    return policy_loss, torch.nn.functional.mse_loss(values, wanted), values


def aux_loss(policy: Any, batch: Positions, device: torch.device) -> torch.Tensor:
    """MSE of the policy's auxiliary head (``aux_net``, on the critic trunk) to the batch's
    :data:`training.expert_iteration.replay.AUX_FIELDS`; unknown targets (NaN: a buffer saved without them)
    count for nothing. Why: the margin and the turns left vary within a game, the result does not,
    so they shape the critic trunk where one outcome per game cannot.
    """
    obs = torch.as_tensor(batch["obs"], device=device)
    features = policy.extract_features(obs)
    vf = features if policy.share_features_extractor else features[1]
    predicted = policy.aux_net(policy.mlp_extractor.forward_critic(vf))
    target = torch.as_tensor(np.stack([batch[k] for k in AUX_FIELDS], axis=1), device=device)
    known = torch.isfinite(target)
    squared = (predicted - torch.nan_to_num(target)) ** 2 * known
    return squared.sum() / known.sum().clamp(min=1)


def value_target(batch: Positions, search_value_weight: float) -> np.ndarray:
    """The critic's target: each seat's result, mixed with the search's value by ``search_value_weight``."""
    if search_value_weight > 0:
        return (1.0 - search_value_weight) * batch["value"] + search_value_weight * batch["q"]
    return batch["value"]


def value_accuracy(values: np.ndarray, targets: np.ndarray, phase: np.ndarray) -> dict[str, float]:
    """How often the critic has the sign of the result, per game phase (decided games only)."""
    out = {}
    for name, lo, hi in PHASES:
        sel = (phase >= lo) & (phase < hi) & (targets != 0)
        if sel.any():
            out[name] = float((np.sign(values[sel]) == np.sign(targets[sel])).mean())
    return out


def winner_pick(policy: Any, records: list[dict[str, Any]]) -> dict[str, float]:
    """How often the critic picks the winner of the new games, overall and by the mover's turn (rounds
    0-9, 10-19, 20 on): the value report's rule (:mod:`training.matches.value_scores`).

    Why: the value report measures this after a run; during it, it tells whether the critic gets better
    at the early positions, where a search needs it most. Every decision of a game won alone is
    replayed from its record; each seat's critic value gives az's leaf value
    (:func:`agents.nets.numba_net.seat_values`; 2 players: the sign of the mover's), the seat with the highest is
    the pick (a k-way tie at the top counts 1/k). Shared and truncated games are left out.
    """
    from splendor_env import state as st
    from splendor_env.records import new_env
    from training.matches.value_scores import pick_hits, seat_leaf_values

    obs, winners, rounds, seats = [], [], [], []
    for record in records:
        if len(record.get("winners", [])) != 1 or record.get("truncated"):
            continue
        env = new_env(record)
        n = int(record["num_players"])
        for action in record["actions"]:
            s = env.game_state
            obs.extend(env.observe(f"player_{q}")["observation"] for q in range(n))
            winners.append(int(record["winners"][0]))
            rounds.append(int(s[st.TURN]) // n)
            seats.append(n)
            env.step(int(action))
    if not winners:
        return {}
    policy.set_training_mode(False)
    with torch.no_grad():
        values = policy.predict_values(torch.as_tensor(np.asarray(obs, np.float32))).numpy()[:, 0]
    hits, start = np.zeros(len(winners)), 0
    for i, n in enumerate(seats):  # a game's player count may differ from the next one's
        leaf = seat_leaf_values(values[start : start + n].reshape(1, n))
        hits[i] = pick_hits(leaf, np.array([winners[i]]))[0]
        start += n
    out = {"winner_pick": float(hits.mean())}
    turn = np.array(rounds)
    for name, lo, hi in PICK_PHASES:
        sel = (turn >= lo) & (turn < hi)
        if sel.any():
            out[f"winner_pick_{name}"] = float(hits[sel].mean())
    return out


def evaluate_positions(
    policy: Any, data: Positions, device: torch.device, search_value_weight: float = 0.0
) -> dict[str, float]:
    """Losses and value sign accuracy of the network on positions it has not trained on (the new games).

    ``value_loss`` is the error to the results; ``value_target_loss`` to the training target (the
    results mixed with the search values), the one ``train_value_loss`` measures: only the two
    losses to the same target tell memorising from learning.
    """
    policy.set_training_mode(False)
    with torch.no_grad():
        pl, vl, values = losses(policy, data, device)
    values = values.cpu().numpy()
    acc = value_accuracy(values, data["value"], data["phase"])
    return {
        "policy_loss": pl.item(),
        "value_loss": vl.item(),
        "value_target_loss": float(np.mean((values - value_target(data, search_value_weight)) ** 2)),
        **{f"value_sign_acc_{k}": v for k, v in acc.items()},
    }


def train_network(
    policy: Any,
    optimizer: torch.optim.Optimizer,
    buffer: ReplayBuffer,
    cfg: SearchTrainConfig,
    rng: np.random.Generator,
    device: torch.device,
    budget: WallBudget,
) -> dict[str, float]:
    """``train.epochs`` shuffled passes over the buffer (stops between batches when the wall budget ends)."""
    t = cfg.train
    policy.to(device)
    optimizer_to(optimizer, device)
    policy.set_training_mode(True)
    sums, batches, aux_sum = np.zeros(2), 0, 0.0
    for epoch in range(int(np.ceil(t.epochs))):
        # the last (or only) pass may be a part of the buffer: epochs 0.25 trains on a random quarter
        share = min(1.0, t.epochs - epoch)
        order = rng.permutation(buffer.size)[: max(1, int(round(share * buffer.size)))]
        for start in range(0, order.size, t.batch_size):
            if budget.expired():
                break
            idx = np.sort(order[start : start + t.batch_size])
            batch = buffer.get(idx)
            pl, vl, _ = losses(policy, batch, device, t.search_value_weight)
            loss = pl + t.value_coef * vl
            if t.aux_coef > 0:
                al = aux_loss(policy, batch, device)
                loss = loss + t.aux_coef * al
                aux_sum += al.item()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), t.max_grad_norm)
            optimizer.step()
            sums += (pl.item(), vl.item())
            batches += 1
    policy.set_training_mode(False)
    policy.to("cpu")
    mean = sums / max(1, batches)
    out = {"train_policy_loss": float(mean[0]), "train_value_loss": float(mean[1]), "train_batches": batches}
    if t.aux_coef > 0:
        out["train_aux_loss"] = aux_sum / max(1, batches)
    return out


def resume_optimizer(policy: Any, cfg: SearchTrainConfig, path: Path) -> torch.optim.Optimizer:
    """Adam with its saved moments, at the config's rates (the saved state would bring back its own).

    A run resumed with ``train.aux_coef`` switched on has a new auxiliary head that the saved
    optimizer never saw: Adam loads its moments for the rest and starts the head's from zero.
    """
    saved = torch.load(path, map_location="cpu")
    head = list(policy.aux_net.parameters()) if hasattr(policy, "aux_net") else []
    saved_count = sum(len(group["params"]) for group in saved["param_groups"])
    new_head = bool(head) and saved_count == sum(1 for _ in policy.parameters()) - len(head)
    optimizer = make_optimizer(policy, cfg, leave_out=head if new_head else [])
    fresh = [dict(group) for group in optimizer.param_groups]
    if len(saved["param_groups"]) != len(fresh):
        raise ConfigError(
            "train.value_learning_rate: the checkpoint's optimizer has "
            f"{'no ' if len(fresh) == 2 else 'a '}separate critic group; resume with the run's setting"
        )
    try:
        optimizer.load_state_dict(saved)
    except ValueError as err:
        raise ConfigError(
            f"the checkpoint's optimizer does not fit this network ({err}): resume with the run's network.* settings"
        ) from None
    for group, settings in zip(optimizer.param_groups, fresh, strict=True):
        group["lr"], group["weight_decay"] = settings["lr"], settings["weight_decay"]
    if new_head:
        optimizer.param_groups[-1]["params"].extend(head)  # the critic's group (or the only one)
    return optimizer


def optimizer_to(optimizer: torch.optim.Optimizer, device: torch.device) -> None:
    """Adam's moments onto the parameters' device (a resumed state loads on the CPU); ``step`` stays."""
    for state in optimizer.state.values():
        for key, value in state.items():
            if torch.is_tensor(value) and key != "step":
                state[key] = value.to(device)


def critic_parameters(policy: Any) -> list[torch.nn.Parameter]:
    """The parameters only the value uses: the critic trunk (card-slot or SB3 MLP extractor) and the value head."""
    extractor = policy.mlp_extractor
    trunk = getattr(extractor, "critic", None) or getattr(extractor, "value_net", None)
    params = list(policy.value_net.parameters()) + (list(trunk.parameters()) if trunk is not None else [])
    if hasattr(policy, "aux_net"):  # the auxiliary head (train.aux_coef) reads the critic trunk too
        params += list(policy.aux_net.parameters())
    if not policy.share_features_extractor:
        params += list(policy.vf_features_extractor.parameters())
    return params


def make_optimizer(
    policy: Any, cfg: SearchTrainConfig, leave_out: list[torch.nn.Parameter] | None = None
) -> torch.optim.Optimizer:
    """Adam; with ``train.value_learning_rate`` set, the critic is a second group at that rate.

    ``leave_out``: parameters not given to Adam (:func:`resume_optimizer` adds them after loading).
    """
    t = cfg.train
    skip = {id(p) for p in leave_out or []}
    params = [p for p in policy.parameters() if id(p) not in skip]
    if t.value_learning_rate is None:
        return torch.optim.Adam(params, lr=t.learning_rate, weight_decay=t.weight_decay)
    critic = {id(p) for p in critic_parameters(policy)}
    groups = [
        {"params": [p for p in params if id(p) not in critic], "lr": t.learning_rate},
        {"params": [p for p in params if id(p) in critic], "lr": t.value_learning_rate},
    ]
    return torch.optim.Adam(groups, weight_decay=t.weight_decay)
