"""Shipping a network that expert iteration trained (or whose critic was refit): ``agents/shipped/NAME.{zip,json}``.

Why read the run directory and not take the facts as arguments: a shipped model
is found by :mod:`agents.nets.shipped` from its ``NAME.json`` (the game it covers, its
sizes), and the models page promises the config, the command, the training time
of every piece of a resumed run and the measured results beside each file; read
from ``config.yaml``, ``checkpoints/state.json`` and ``metrics.json``
(:func:`run_facts`), they stay true. The command is :mod:`training.ship`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from training.common.cli import CliError
from training.expert_iteration.snapshots import snapshot_iteration, snapshot_path


def network_file(run_dir: Path, iteration: int | None) -> Path:
    """The run's result (``best.zip``), or its snapshot after ``iteration`` iterations."""
    if iteration is None:
        return run_dir / "best.zip"
    path = snapshot_path(run_dir, iteration)
    if not path.is_file():
        kept = sorted(p.name for p in path.parent.glob("best-*.zip"))
        raise CliError(
            f"--iteration {iteration}: no snapshot {str(path)!r}; the run kept "
            + (", ".join(kept) if kept else "none (train with snapshot_every: K to keep them)")
        )
    return path


def truncate_state(state: dict[str, Any], iteration: int, run_dir: Path) -> dict[str, Any]:
    """The run's state as it was after its first ``iteration`` iterations (for a snapshot).

    Why: a snapshot's models-page entry gives the time, positions and pieces that made it, not the
    whole run's. Each metrics row's ``wall_seconds`` is the run's time when that iteration ended.
    """
    if iteration < 1:
        raise CliError(f"--iteration {iteration}: must be >= 1 (the iterations the snapshot had done)")
    rows = state["metrics"][:iteration]
    if len(rows) < iteration or "wall_seconds" not in rows[-1]:
        raise CliError(
            f"--iteration {iteration}: {str(run_dir)!r}'s metrics do not say when iteration "
            f"{iteration - 1} ended (no wall_seconds in its row)"
        )
    pieces, spent = [], 0.0
    for piece in state.get("pieces", []):
        if piece["from_iteration"] >= iteration:
            break
        if piece["to_iteration"] >= iteration:
            piece = {
                **piece,
                "to_iteration": iteration,
                "wall_seconds": round(rows[-1]["wall_seconds"] - spent, 1),
            }
        pieces.append(piece)
        spent += piece["wall_seconds"]
    return {
        **state,
        "iteration": iteration,
        "positions": sum(r["positions"] for r in rows),
        "accepted": sum(r.get("gate_accepted", 0) for r in rows),
        "pieces": pieces,
        "metrics": rows,
    }


def critic_fit_facts(run_dir: Path, iteration: int | None) -> dict[str, Any]:
    """The config, facts and held-out checks of a critic refit's folder (:mod:`training.critic_fit`),
    with the training of the network it refit (:func:`base_training`)."""
    if iteration is not None:
        raise CliError(
            f"--iteration {iteration}: {str(run_dir)!r} is a critic refit, which keeps no snapshots"
        )
    for needed in ("best.zip", "config.yaml", "metrics.json"):
        if not (run_dir / needed).is_file():
            raise CliError(f"{str(run_dir)!r} is not a finished critic refit: {needed} is missing")

    fit = json.loads((run_dir / "fit.json").read_text())
    base = base_training(fit["model"])
    return {
        "config": yaml.safe_load((run_dir / "config.yaml").read_text()),
        "training": {
            "critic_fit": fit,
            "wall_seconds": fit["wall_seconds"],
            **({"base_training": base} if base is not None else {}),
        },
        "training_curve": json.loads((run_dir / "metrics.json").read_text()),
    }


def base_training(model: str) -> dict[str, Any] | None:
    """The training of the network a critic refit started from, so the shipped metadata lists every
    piece: a shipped model's ``training``, or the facts of the search-training run whose ``best.zip``
    (or snapshot) it names; None for any other file."""
    from agents.nets.shipped import shipped_models

    shipped = shipped_models().get(model)
    if shipped is not None:
        return shipped.get("training")
    path = Path(model)
    snapshot = snapshot_iteration(path)
    if snapshot is not None:  # RUN/snapshots/best-NNNN.zip: that run's first NNNN iterations only
        run_dir, iteration = path.parent.parent, snapshot
    elif path.name == "best.zip":
        run_dir, iteration = path.parent, None
    else:
        return None
    if not ((run_dir / "checkpoints" / "state.json").is_file() and (run_dir / "best.zip").is_file()):
        return None
    facts = run_facts(run_dir, iteration)
    return {"run": str(run_dir), "config": facts["config"], **facts["training"]}


def run_facts(run_dir: Path, iteration: int | None = None) -> dict[str, Any]:
    """The config, training pieces, totals and learning curve of a search-training run directory
    (up to its first ``iteration`` iterations when given), or of a critic refit's folder (``fit.json``)."""
    if (run_dir / "fit.json").is_file():
        return critic_fit_facts(run_dir, iteration)
    state_file = run_dir / "checkpoints" / "state.json"
    for needed in (run_dir / "best.zip", run_dir / "config.yaml", state_file):
        if not needed.is_file():
            raise CliError(
                f"{str(run_dir)!r} is not a finished search-training run: {needed.name} is missing"
            )
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    state = json.loads(state_file.read_text())
    if iteration is not None:
        state = truncate_state(state, iteration, run_dir)
    metrics = state["metrics"]
    curve = [
        {k: v for k, v in row.items() if k == "iteration" or k.startswith(("eval_", "gate_"))}
        for row in metrics
    ]
    pieces = state.get("pieces")
    if not pieces:
        raise CliError(
            f"{str(run_dir)!r}: checkpoints/state.json lists no pieces (the run's timed invocations)"
        )
    return {
        "config": config,
        "training": {
            "iterations": state["iteration"],
            "positions": state["positions"],
            "networks_accepted": state["accepted"],
            "wall_seconds": round(sum(p["wall_seconds"] for p in pieces), 1),
            "pieces": pieces,
            "selfplay_positions_per_s": round(
                sum(r["positions"] for r in metrics) / max(1e-9, sum(r["selfplay_seconds"] for r in metrics)),
                1,
            ),
        },
        "training_curve": curve,
    }


def parse_az_options(items: list[str]) -> dict[str, object]:
    """``["ptemp=1.5"]`` -> ``{"ptemp": 1.5}``: the ``az`` options the network ships with, checked as
    ``az`` checks them when it reads the metadata (:func:`agents.players.az.check_network_options`)."""
    from agents import parse_options
    from agents.players.az import check_network_options

    try:
        return check_network_options(dict(parse_options(",".join(items))), "the shipped metadata")
    except ValueError as e:
        raise CliError(f"--az-option: {e}") from None


def network_sizes(model_path: Path) -> tuple[int, int]:
    """(observation floats, action ids) the network's zip declares."""
    from agents.nets.checkpoint import zip_data

    data = zip_data(model_path)
    return int(data["observation_space"]["_shape"][0]), int(data["action_space"]["n"])


def shipped_game(network: Path, cfg: dict[str, Any], refit: bool) -> dict[str, Any]:
    """The game the shipped metadata names: the one the network records (``GAME_ATTR``), or the config's
    for a network that records none.

    Why the network's: ``config.yaml`` is the run's config as last written, and a refused ``--resume``
    with other players used to rewrite it, so a 2-player network shipped claiming 3-4 players. A search
    run's ``config.yaml`` that names another game than its network is refused (the metadata's config
    would misname it too); a critic refit's config names the games it fit on, which may be fewer."""
    from agents.nets.checkpoint import describe_game, game_meta, recorded_game

    configured = game_meta(cfg["players"], cfg.get("modules") or [])
    game = recorded_game(network)
    if game is None:
        return configured  # a network saved before networks recorded their game
    if not refit and game != configured:
        raise CliError(
            f"{str(network)!r} is a network for {describe_game(game['players'], game['modules'])}, but its "
            f"run's config.yaml names {describe_game(configured['players'], configured['modules'])} (changed "
            "after training?): restore the run's players and modules in config.yaml, or ship another run"
        )
    return game


def ship(
    run_dir: Path,
    name: str,
    description: str,
    command: str,
    evaluations: list[Path],
    commands: list[str],
    default: bool,
    dest: Path,
    iteration: int | None = None,
    az_options: list[str] | None = None,
) -> Path:
    """Copy ``run_dir/best.zip`` (or the snapshot after ``iteration`` iterations) to ``dest/NAME.zip``
    and write ``dest/NAME.json``; returns the JSON's path."""
    if not name.isidentifier():
        raise CliError(
            f"name {name!r}: use letters, digits and underscores (it becomes NAME.zip and ppo:NAME)"
        )
    facts = run_facts(run_dir, iteration)
    network = network_file(run_dir, iteration)
    game = shipped_game(network, facts["config"], refit=(run_dir / "fit.json").is_file())
    obs, actions = network_sizes(network)
    meta: dict[str, Any] = {
        "name": name,
        "model": f"{name}.zip",
        "description": description,
        "game": game,
        "default": default,
        "observation_size": obs,
        "num_actions": actions,
        "source": str(network),
        "command": command,
        **({"az": parse_az_options(az_options)} if az_options else {}),
        **facts,
        "evaluation_command": "\n".join(commands),
        "evaluation": [],
    }
    if len(commands) != len(evaluations):
        raise CliError(
            f"--evaluation-command: {len(commands)} given for {len(evaluations)} --evaluation file(s); "
            "give the command that wrote each file, in the same order"
        )
    for path, command in zip(evaluations, commands, strict=True):
        if not path.is_file():
            raise CliError(f"--evaluation {str(path)!r}: no such file")
        meta["evaluation"] += [{**row, "command": command} for row in json.loads(path.read_text())]
    dest.mkdir(parents=True, exist_ok=True)
    replaced = take_default_mark(dest, name, meta["game"]) if default else []
    shutil.copyfile(network, dest / f"{name}.zip")
    out = dest / f"{name}.json"
    out.write_text(json.dumps(meta, indent=1) + "\n")
    for path, old in replaced:
        path.write_text(json.dumps({**old, "default": False}, indent=1) + "\n")
    return out


def take_default_mark(dest: Path, name: str, game: dict[str, Any]) -> list[tuple[Path, dict[str, Any]]]:
    """The metadata files in ``dest`` (path and contents) whose ``"default": true`` the new default
    ``name`` replaces.

    Why: each game has exactly one default (``agents.nets.shipped.default_model``); a model marked
    default for the same modules and only player counts the new one covers gives its mark up.
    One that also covers a count the new one does not would leave that count without a
    default, so it is refused, naming both.
    """
    replaced = []
    for path in sorted(dest.glob("*.json")):
        other = json.loads(path.read_text())
        if path.stem == name or not other.get("default") or "game" not in other:
            continue
        theirs = other["game"]
        if sorted(theirs.get("modules", [])) != sorted(game["modules"]):
            continue
        common = set(theirs["players"]) & set(game["players"])
        if not common:
            continue
        if not set(theirs["players"]) <= set(game["players"]):
            raise CliError(
                f"--default: {path.stem!r} is the default for players {theirs['players']}; {name!r} covers "
                f"only {game['players']}, so players {sorted(set(theirs['players']) - common)} would keep "
                "no default"
            )
        replaced.append((path, other))
    return replaced
