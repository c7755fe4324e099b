"""A search-training run's learning curve: each kept network's Elo on the benchmark scale over training time.

Why the benchmark's scale: a curve is only worth reading if its points compare with each other,
with other runs and with the shipped agents' cards. So each point is the network's quick
benchmark card (:data:`training.matches.card.PROTOCOL`: the fixed references at their fixed
budgets, the fixed deals, the anchored Elo) in the run's own game, played by the network as
``az`` (or alone, as ``ppo``). The points are the run's starting network (hour 0, when ``init``
names one) and every snapshot ``snapshot_every`` kept (``snapshots/best-NNNN.zip``), placed at
the run's wall time when that snapshot was taken, every resumed piece included.

Each point's games are saved under ``OUT/games/`` as they finish: running the curve again as the
run goes on plays only the new snapshots (and the missing games of an interrupted point).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from agents.nets.shipped import shipped_names
from training.common.cli import CliError
from training.common.config import player_counts
from training.common.games import config_label
from training.common.progress import MANIFEST, open_run
from training.expert_iteration.snapshots import snapshot_iteration
from training.matches.card import PROTOCOL, rate_in_config, where_made
from training.matches.protocol import anchor_of, played_protocol, references
from training.matches.report import save_figure

#: How a point's network plays: with the search (``az``) or its policy alone (``ppo``, argmax).
AGENTS = ("az", "ppo")


def curve_points(run_dir: Path, every_hours: float | None = None) -> list[dict[str, Any]]:
    """The networks to rate, oldest first: ``{"iteration", "hours", "model"}`` (``hours`` None when the
    run's metrics do not record its wall time).

    ``every_hours``: not every snapshot but the start, the first snapshot at or after each multiple of
    it, and the newest (a 12-hour run keeps over a hundred snapshots, two minutes of games each). The
    marks are fixed, so a rerun as the run goes on keeps the points it played, but for the newest."""
    config_file = run_dir / "config.yaml"
    if not config_file.is_file():
        raise CliError(f"{str(run_dir)!r} is not a search-training run: config.yaml is missing")
    config = yaml.safe_load(config_file.read_text())
    metrics_file = run_dir / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else []
    wall = {int(row["iteration"]): row.get("wall_seconds") for row in metrics}
    points = []
    init = str(config.get("init", "fresh"))
    if init in shipped_names() or (init.endswith(".zip") and Path(init).is_file()):
        points.append({"iteration": 0, "hours": 0.0, "model": init})
    snapshots = run_dir / "snapshots"
    for path in sorted(snapshots.iterdir()) if snapshots.is_dir() else []:
        done = snapshot_iteration(path)  # iterations finished when it was kept
        if done is None:
            continue
        seconds = wall.get(done - 1)
        points.append(
            {"iteration": done, "hours": None if seconds is None else seconds / 3600, "model": str(path)}
        )
    if not points:
        raise CliError(
            f"{str(run_dir)!r} has no network to rate: no snapshots/ (set snapshot_every in its config) "
            "and its init is not a model"
        )
    return points if every_hours is None else thin_points(points, every_hours)


def thin_points(points: list[dict[str, Any]], every_hours: float) -> list[dict[str, Any]]:
    """The points of :func:`curve_points` at most one per ``every_hours`` mark (see there)."""
    if not every_hours > 0:
        raise CliError(f"--every-hours must be a positive number of hours, got {every_hours}")
    if any(p["hours"] is None for p in points):
        raise CliError("--every-hours needs the run's wall time, and its metrics.json does not record it")
    kept, next_mark = [], 0.0
    for point in points:
        if point["hours"] >= next_mark:
            kept.append(point)
            next_mark = (point["hours"] // every_hours + 1) * every_hours
    if kept[-1] is not points[-1]:
        kept.append(points[-1])
    return kept


def make_curve(
    run_dir: Path,
    out: Path,
    agent: str = "az",
    options: str = "",
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    echo: Callable[[str], None] | None = print,
    every_hours: float | None = None,
    players: int | None = None,
) -> dict[str, Any]:
    """Rate every point of :func:`curve_points` (a quick card in the run's game) and return the curve.

    ``options``: the agent spec's options after the model (``sims=200``), the same for every point;
    ``every_hours``: one point per that many hours of training (:func:`curve_points`); ``players``: the
    game to rate in, needed when the run trains several player counts (one curve per count).
    """
    if agent not in AGENTS:
        raise CliError(f"--agent must be one of {list(AGENTS)}, got {agent!r}")
    points = curve_points(run_dir, every_hours)
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    counts, modules = player_counts(config["players"]), tuple(config.get("modules") or ())
    if players is None and len(counts) > 1:
        raise CliError(
            f"the run trains {counts} players: pass --players with one of them (a curve per count)"
        )
    players = counts[0] if players is None else players
    if players not in counts:
        raise CliError(f"--players {players}: the run trains {counts} players")
    games = PROTOCOL["games"]["quick"]
    progress = out / "games"
    manifest = {
        "command": "learning_curve",
        "run": str(run_dir),
        "agent": agent,
        "options": options,
        "protocol": played_protocol(PROTOCOL),
        **({"players": players} if len(counts) > 1 else {}),  # a run of one count: its game, as before
    }
    open_run(progress, manifest, resume=(progress / MANIFEST).is_file())
    rated = []
    for point in points:
        spec = f"{agent}:{point['model']}" + (f",{options}" if options else "")
        folder = progress / f"iteration-{point['iteration']:04d}"
        again = (folder / MANIFEST).is_file()  # a point played (or begun) by an earlier run of the curve
        entry = rate_in_config(spec, players, modules, games, workers, backend, address, folder, resume=again)
        rated.append(
            {**point, "spec": spec, **{k: entry[k] for k in ("elo", "elo_ci95", "results", "wall_s")}}
        )
        if echo is not None:
            lo, hi = entry["elo_ci95"]
            echo(f"iteration {point['iteration']}: Elo {entry['elo']:.0f} [{lo:.0f}, {hi:.0f}]")
    return {
        "run": str(run_dir),
        "game": config_label(players, modules),
        "agent": agent,
        "options": options,
        "protocol_version": PROTOCOL["version"],
        "references": {  # each reference's anchor in the run's game, for the plot's lines
            ref: anchor
            for ref in references(PROTOCOL)
            if (anchor := anchor_of(PROTOCOL, ref, players, modules)) is not None
        },
        "games_per_reference": games,
        "points": rated,
        "made": where_made(),
    }


def curve_figure(curve: dict[str, Any]) -> Any:
    """Elo (95% interval) against training hours (iterations when the run did not record its time),
    with the references' anchors as grey lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = curve["points"]
    by_hours = all(p["hours"] is not None for p in points)
    xs = [p["hours"] if by_hours else p["iteration"] for p in points]
    elos = [p["elo"] for p in points]
    err = [[p["elo"] - p["elo_ci95"][0] for p in points], [p["elo_ci95"][1] - p["elo"] for p in points]]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    lo = min(e - d for e, d in zip(elos, err[0], strict=True)) - 80
    hi = max(e + d for e, d in zip(elos, err[1], strict=True)) + 80
    for ref, anchor in curve["references"].items():
        if lo <= anchor <= hi:
            ax.axhline(anchor, color="grey", lw=0.6, ls="--")
            ax.text(xs[0], anchor, f" {ref}", fontsize=7, va="bottom", color="grey")
    ax.errorbar(xs, elos, yerr=err, fmt="o-", capsize=3, color="tab:blue")
    ax.set_ylim(lo, hi)
    ax.set_xlabel("training wall time (hours, all pieces)" if by_hours else "iterations")
    ax.set_ylabel(f"Elo (benchmark protocol {curve['protocol_version']})")
    ax.set_title(f"{Path(curve['run']).name}: {curve['agent']} in {curve['game']}", fontsize=10)
    fig.tight_layout()
    return fig


def write_curve(curve: dict[str, Any], out: Path) -> list[Path]:
    """``curve.json`` and ``curve.png`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "curve.json", out / "curve.png"]
    paths[0].write_text(json.dumps(curve, indent=1) + "\n", encoding="utf-8")
    save_figure(curve_figure(curve), paths[1])
    return paths


__all__ = ["AGENTS", "curve_figure", "curve_points", "make_curve", "thin_points", "write_curve"]
