"""Refit a network's critic on the results of many games of the network alone; the actor is kept.

Why: expert iteration gives the critic one result per searched game, a few thousand a minute on
two cores, and its value targets are one game's result repeated over its every position. Games of
the network alone cost about a thousandth of that, so a refit sees hundreds of thousands of results
(the value network of AlphaGo was fitted the same way, on its policy's own games). The actor and
its logits are untouched, so ``ppo:`` plays exactly as before and ``az:`` searches with the new
values. The command is :mod:`training.critic_fit`; the method: docs/training.md; what it gained: docs/development-notes.md.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from training.common.cli import CliError
from training.critic.config import CriticFitConfig, FitSection, to_dict
from training.critic.positions import Positions, collect
from training.matches.value_scores import Record


def replace_critic(model: Any, blocks: int, width: int) -> None:
    """Give ``model`` a new residual critic (trunk and value head, :func:`agents.nets.policy_net.critic_trunk`),
    recorded in its ``policy_kwargs`` so that the saved ``.zip`` loads with it."""
    import torch

    from agents.nets.policy_net import critic_trunk

    policy = model.policy
    extractor = policy.mlp_extractor
    first = next(m for m in extractor.critic.modules() if isinstance(m, torch.nn.Linear))
    extractor.critic = critic_trunk(
        first.in_features, list(policy.net_arch), policy.activation_fn, blocks, width
    )
    extractor.critic_blocks, extractor.latent_dim_vf = blocks, width
    policy.value_net = torch.nn.Linear(width, 1)
    policy.critic_blocks, policy.critic_width = blocks, width
    if getattr(policy, "aux_outputs", 0):  # the auxiliary head reads the critic trunk: a new one of its width
        policy.aux_net = torch.nn.Linear(width, policy.aux_outputs)
    model.policy_kwargs = {**model.policy_kwargs, "critic_blocks": blocks, "critic_width": width}
    # SB3 saves the policy's optimizer with the model: it must know the new parameters to load again
    lr = policy.optimizer.param_groups[0]["lr"]
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=lr, **policy.optimizer_kwargs)


def critic_parameters(policy: Any) -> list[Any]:
    """What a refit trains: the critic trunk and the value head (not the actor, not an auxiliary head)."""
    return [*policy.mlp_extractor.critic.parameters(), *policy.value_net.parameters()]


def critic_state(policy: Any) -> dict[str, Any]:
    """A copy of the trained parameters (the best held-out check's, restored at the end)."""
    return copy.deepcopy(
        {"critic": policy.mlp_extractor.critic.state_dict(), "value_net": policy.value_net.state_dict()}
    )


def load_critic_state(policy: Any, state: dict[str, Any]) -> None:
    policy.mlp_extractor.critic.load_state_dict(state["critic"])
    policy.value_net.load_state_dict(state["value_net"])


def seat_views(positions: dict[int, Positions]) -> tuple[np.ndarray, np.ndarray]:
    """Every seat's view of every drawn decision, over the player counts: ``float16[M, D]``, targets ``float32[M]``."""
    views = [p.obs.reshape(-1, p.obs.shape[-1]) for p in positions.values()]
    targets = [p.result.reshape(-1) for p in positions.values()]
    return np.concatenate(views), np.concatenate(targets)


def score_games(policy: Any, records: dict[int, Record]) -> dict[str, float]:
    """Held-out scores per player count: the critic's squared error to each seat's result, and the value
    report's winner pick (:func:`training.matches.value_scores.winner_pick_summary`) overall and in the
    first turns (its first turn bin)."""
    from training.matches.value_report import attach_values
    from training.matches.value_scores import turn_edges, winner_pick_summary

    policy.set_training_mode(False)
    out: dict[str, float] = {}
    for n, record in sorted(records.items()):
        attach_values(record, policy)
        done = ~np.isnan(record.result[record.game, 0])
        if not done.any():
            raise CliError(
                f"none of the {record.result.shape[0]} held-out games of {n} players ended within max_turns "
                f"({record.turn.max() + 1} turns); raise max_turns or validation_games"
            )
        err = (record.values[done] - record.result[record.game[done]]) ** 2
        wp = winner_pick_summary(record, turn_edges(n))
        first = wp["by_turn"]["leaf"][0]
        out[f"{n}p_mse"] = round(float(err.mean()), 5)
        out[f"{n}p_winner_pick"] = _rounded(wp["overall"]["leaf"]["accuracy"])
        out[f"{n}p_winner_pick_turns_{first['bin']}"] = _rounded(first["accuracy"])
    out["mse"] = round(float(np.mean([v for k, v in out.items() if k.endswith("_mse")])), 5)
    return out


def _rounded(x: float | None) -> float | None:
    """A share to 5 decimals; None where no game was won alone (shared games are not scored)."""
    return None if x is None else round(float(x), 5)


def train_critic(
    policy: Any, views: np.ndarray, targets: np.ndarray, fit: FitSection, seed: int, check: Any
) -> list[dict[str, Any]]:
    """Adam on the critic's squared error over random views; ``check()`` (held-out scores) ``fit.evals``
    times; the parameters of the check with the lowest ``mse`` are loaded at the end. Returns the rows."""
    import torch

    rng = np.random.default_rng([seed, 17])
    steps = max(1, int(round(fit.epochs * views.shape[0] / fit.batch_size)))
    marks = sorted({int(round(steps * (i + 1) / fit.evals)) for i in range(fit.evals)})
    optimizer = torch.optim.Adam(critic_parameters(policy), lr=fit.learning_rate)
    rows = [{"step": 0, "views_seen": 0, **check()}]
    print(format_row(rows[0]), flush=True)
    best, best_mse = critic_state(policy), rows[0]["mse"]
    losses: list[float] = []
    for step in range(1, steps + 1):
        policy.set_training_mode(True)
        idx = rng.integers(0, views.shape[0], fit.batch_size)
        x = torch.as_tensor(views[idx].astype(np.float32))
        loss = ((policy.predict_values(x)[:, 0] - torch.as_tensor(targets[idx])) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step in marks:
            row = {
                "step": step,
                "views_seen": step * fit.batch_size,
                "train_mse": round(float(np.mean(losses)), 5),
            }
            rows.append({**row, **check()})
            losses = []
            if rows[-1]["mse"] < best_mse:
                best, best_mse = critic_state(policy), rows[-1]["mse"]
            print(format_row(rows[-1]), flush=True)
    load_critic_state(policy, best)
    policy.set_training_mode(False)
    return rows


def format_row(row: dict[str, Any]) -> str:
    """One line of a held-out check (what the command prints)."""
    scores = " ".join(
        f"{k} {'-' if v is None else format(v, '.4f')}"
        for k, v in row.items()
        if k not in ("step", "views_seen")
    )
    return f"step {row['step']:>7}: {scores}"


def critic_fit(
    cfg: CriticFitConfig, workers: int = 1, backend: str = "local", address: str | None = None
) -> dict[str, Any]:
    """Play the games, refit the critic, write ``output_dir``: ``best.zip`` (the model, the refit critic
    with the lowest held-out error), ``config.yaml``, ``metrics.json`` (one row per held-out check) and
    ``fit.json`` (the facts :mod:`training.ship` reads). Returns the facts."""
    import torch

    from agents.nets.checkpoint import load_model, model_bytes

    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    start = time.perf_counter()
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
    model = load_model(cfg.model)
    network = model_bytes(model)
    held_out, positions = collect(cfg, network, workers, backend, address)
    played = time.perf_counter() - start
    views, targets = seat_views(positions)
    print(f"played {cfg.games} games in {played:.0f} s: {views.shape[0]} views to fit", flush=True)
    if cfg.fit.critic_blocks > 0:
        replace_critic(model, cfg.fit.critic_blocks, cfg.fit.critic_width)
    rows = train_critic(
        model.policy, views, targets, cfg.fit, cfg.seed, lambda: score_games(model.policy, held_out)
    )
    model.save(out / "best.zip")
    best = min(rows, key=lambda r: r["mse"])  # the critic saved (step 0: the model's own)
    facts = {
        "model": cfg.model,
        "games": {str(n): p.games for n, p in positions.items()},
        "truncated": {str(n): p.truncated for n, p in positions.items()},
        "views": int(views.shape[0]),
        "validation_games": cfg.validation_games,
        "play_seconds": round(played, 3),
        "wall_seconds": round(time.perf_counter() - start, 3),
        "before": rows[0],
        "best": best,
    }
    (out / "metrics.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "fit.json").write_text(json.dumps(facts, indent=1) + "\n")
    return facts
