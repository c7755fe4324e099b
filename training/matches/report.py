"""A tournament's report: the summary of its records, the text tables, the CSV files and the figure.

Why a module of its own: what a tournament prints and writes depends only on
its records (:mod:`splendor_env.records`), not on how they were scheduled or
played; :mod:`training.matches.tournament` plays and calls :func:`summarise`,
:func:`format_tables` and :func:`write_outputs`. The ratings come from
:mod:`training.matches.ratings`, the intervals and number formats from
:mod:`training.common.stats`.

Output in a configuration's folder: ``summary.json`` (everything),
``winrates.csv`` (pairwise matrix with intervals), ``ratings.csv``,
``tournament.png`` (heatmap and rating bars) and ``winrates.png`` (each agent's
win rate with its 95% interval: the plot a benchmark card draws, :func:`win_rate_panel`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.runner import win_shares
from training.common.stats import Z95, clean_number, percent, wilson
from training.matches.ratings import (
    bradley_terry_elo,
    elo_intervals,
    openskill_ratings,
    pair_score_tensor,
)

# ---------------------------------------------------------------------------
# Summary


def summarise(specs: Sequence[str], records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Win-rate matrix, per-agent win rates and ratings from game records."""
    k = len(specs)
    per_game = pair_score_tensor(records, k)  # once: the matrix and the Elo bootstrap both read it
    pair_score = per_game.sum(axis=0)
    pair_games = pair_score + pair_score.T  # a meeting scores s for one side and 1 - s for the other
    wins = np.zeros(k)
    seats_played = np.zeros(k)
    for rec in records:
        ids = rec["agent_ids"]
        for p, share in enumerate(win_shares(rec)):
            wins[ids[p]] += share
            seats_played[ids[p]] += 1
    matrix = []
    for i in range(k):
        row = []
        for j in range(k):
            n = pair_games[i, j]
            rate = pair_score[i, j] / n if n else None
            lo, hi = wilson(pair_score[i, j], n) if n else (None, None)
            row.append({"score": pair_score[i, j], "games": n, "rate": rate, "ci95": [lo, hi]})
        matrix.append(row)
    players = records[0]["num_players"] if records else 2
    agents_out = []
    for i, spec in enumerate(specs):
        lo, hi = wilson(wins[i], seats_played[i])
        agents_out.append(
            {
                "agent": spec,
                "games": int(seats_played[i]),
                "wins": float(wins[i]),
                "win_rate": wins[i] / seats_played[i] if seats_played[i] else None,
                "ci95": [lo, hi],
            }
        )
    if players == 2:
        intervals = elo_intervals(per_game)
        for a, elo, (lo, hi) in zip(agents_out, bradley_terry_elo(pair_score), intervals, strict=True):
            a["elo"] = float(elo)
            a["elo_ci95"] = [float(lo), float(hi)]
    else:
        for a, r in zip(agents_out, openskill_ratings(records, k), strict=True):
            a["openskill"] = r
    return {
        "agents": list(specs),
        "players": players,
        "games": len(records),
        "mean_turns": float(np.mean([r["turns"] for r in records])) if records else 0.0,
        "truncated": int(sum(r["truncated"] for r in records)),
        "matrix": matrix,
        "ratings": agents_out,
        "rating_kind": "bradley-terry elo" if players == 2 else "openskill plackett-luce",
        "rating_interval": (
            "95% percentile bootstrap over games (1000 resamples, seed 0)"
            if players == 2
            else "mu +- 1.96 sigma"
        ),
    }


# ---------------------------------------------------------------------------
# Text, CSV and PNG


def _pct(x: float | None) -> str:
    return percent(x, "  -  ")


def format_tables(summary: dict[str, Any]) -> str:
    """The win-rate matrix and the ratings as aligned text."""
    specs = summary["agents"]
    width = max(8, *(len(s) for s in specs))
    lines = [
        f"{summary['games']} games, {summary['players']} players"
        f"{', modules ' + '+'.join(summary['modules']) if summary.get('modules') else ''}, "
        f"mean {summary['mean_turns']:.1f} turns, "
        f"{summary['truncated']} truncated",
        "",
        "win rate % of row against column [95% CI]",
        " " * width + "".join(f" {s[:20]:>21}" for s in specs),
    ]
    for i, spec in enumerate(specs):
        cells = []
        for j in range(len(specs)):
            c = summary["matrix"][i][j]
            cell = (
                "-" if c["rate"] is None else f"{_pct(c['rate'])} [{_pct(c['ci95'][0])},{_pct(c['ci95'][1])}]"
            )
            cells.append(f" {cell:>21}")
        lines.append(f"{spec:<{width}}" + "".join(cells))
    lines += ["", f"ratings ({summary['rating_kind']})"]
    head = f"{'agent':<{width}} {'games':>6} {'win %':>6} {'95% CI':>13}"
    head += (
        f" {'elo':>7} {'95% CI':>13}"
        if summary["players"] == 2
        else f" {'mu':>7} {'sigma':>6} {'ordinal':>8} {'mu 95% CI':>15}"
    )
    lines.append(head)
    for r in sorted(summary["ratings"], key=_rating_key, reverse=True):
        line = (
            f"{r['agent']:<{width}} {r['games']:>6} {_pct(r['win_rate']):>6} "
            f"{_pct(r['ci95'][0]):>6}-{_pct(r['ci95'][1]).strip():<6}"
        )
        if "elo" in r:
            lo, hi = r["elo_ci95"]
            line += f" {r['elo']:7.0f} {f'{lo:.0f}-{hi:.0f}':>13}"
        else:
            o = r["openskill"]
            lo, hi = o["ci95"]
            line += f" {o['mu']:7.2f} {o['sigma']:6.2f} {o['ordinal']:8.2f} {f'{lo:.2f}-{hi:.2f}':>15}"
        lines.append(line)
    return "\n".join(lines)


def _rating_key(r: dict[str, Any]) -> float:
    return r["elo"] if "elo" in r else r["openskill"]["ordinal"]


def write_outputs(summary: dict[str, Any], out: Path) -> list[Path]:
    """``summary.json``, ``winrates.csv``, ``ratings.csv``, ``tournament.png`` and ``winrates.png`` in ``out``.

    CSV numbers are fixed-point (rates and intervals 4 decimals, Elo 1, OpenSkill 3).
    """
    out.mkdir(parents=True, exist_ok=True)
    paths = [
        out / "summary.json",
        out / "winrates.csv",
        out / "ratings.csv",
        out / "tournament.png",
        out / "winrates.png",
    ]
    paths[0].write_text(json.dumps(summary, indent=2), encoding="utf-8")
    with open(paths[1], "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["agent", "opponent", "games", "score", "win_rate", "ci95_low", "ci95_high"])
        for i, a in enumerate(summary["agents"]):
            for j, b in enumerate(summary["agents"]):
                c = summary["matrix"][i][j]
                if c["games"]:
                    nums = [c["score"], c["rate"], *c["ci95"]]
                    w.writerow([a, b, int(c["games"]), *(clean_number(x) for x in nums)])
    with open(paths[2], "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        cols = ["agent", "games", "wins", "win_rate", "ci95_low", "ci95_high"]
        two = summary["players"] == 2
        extra = (
            ["elo", "elo_ci95_low", "elo_ci95_high"]
            if two
            else ["mu", "sigma", "ordinal", "mu_ci95_low", "mu_ci95_high"]
        )
        w.writerow(cols + extra)
        for r in summary["ratings"]:
            vals = [
                r["agent"],
                r["games"],
                *(clean_number(x) for x in (r["wins"], r["win_rate"], *r["ci95"])),
            ]
            if two:
                vals += [clean_number(x, 1) for x in (r["elo"], *r["elo_ci95"])]
            else:
                o = r["openskill"]
                vals += [clean_number(x, 3) for x in (o["mu"], o["sigma"], o["ordinal"], *o["ci95"])]
            w.writerow(vals)
    plot(summary, paths[3])
    save_figure(win_rate_figure(summary), paths[4])
    return paths


def figure(summary: dict[str, Any]) -> Any:
    """Win-rate heatmap (percent, colour bar 0-100) and ratings with 95% intervals (matplotlib Figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = summary["agents"]
    k = len(specs)
    grid = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(k):
            rate = summary["matrix"][i][j]["rate"]
            if rate is not None:
                grid[i, j] = 100.0 * rate
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6 + 1.2 * k, 3 + 0.6 * k))
    im = ax1.imshow(grid, vmin=0, vmax=100, cmap="RdYlGn")
    ax1.set_xticks(range(k), specs, rotation=45, ha="right")
    ax1.set_yticks(range(k), specs)
    for i in range(k):
        for j in range(k):
            if not np.isnan(grid[i, j]):
                ax1.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=9)
    ax1.set_title("win rate of row vs column")
    fig.colorbar(im, ax=ax1, fraction=0.046, label="win rate (%)")
    if summary["players"] == 2:
        vals = np.array([r["elo"] for r in summary["ratings"]])
        bounds = np.array([r["elo_ci95"] for r in summary["ratings"]])
        yerr = np.abs(bounds.T - vals)  # asymmetric: below, above
        ax2.bar(range(k), vals - 1500, bottom=1500, yerr=yerr, capsize=4, color="tab:blue")
        ax2.axhline(1500, color="grey", lw=0.8)
        ax2.set_title("Bradley-Terry Elo (mean 1500, 95% bootstrap interval)")
    else:
        mus = [r["openskill"]["mu"] for r in summary["ratings"]]
        sig = [r["openskill"]["sigma"] for r in summary["ratings"]]
        ax2.bar(range(k), mus, yerr=[Z95 * s for s in sig], color="tab:blue", capsize=4)
        ax2.set_title("OpenSkill mu (95% interval: 1.96 sigma)")
    ax2.set_xticks(range(k), specs, rotation=45, ha="right")
    fig.suptitle(f"{summary['players']}-player tournament, {summary['games']} games")
    fig.tight_layout()
    return fig


def plot(summary: dict[str, Any], path: Path) -> None:
    """Write :func:`figure` as a PNG."""
    save_figure(figure(summary), path)


def save_figure(fig: Any, path: Path) -> None:
    """Write a matplotlib figure as a PNG and free it."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=100)
    plt.close(fig)


def win_rate_panel(
    ax: Any,
    labels: Sequence[str],
    rates: Sequence[float | None],
    intervals: Sequence[Sequence[float | None]],
    title: str,
    even: float | None = None,
) -> None:
    """Horizontal bars of win rates (percent) with their 95% intervals, one row per label.

    Why shared: a tournament (each agent's win rate) and a benchmark card (the candidate's against
    each reference) draw the same picture, so they read the same way. ``even`` is the win rate of
    an equal match (1/players), drawn dashed. A row without games is left empty.
    """
    y = np.arange(len(labels))
    vals = np.array([np.nan if r is None else 100.0 * r for r in rates])
    lows = np.array([np.nan if lo is None else 100.0 * lo for lo, _ in intervals])
    highs = np.array([np.nan if hi is None else 100.0 * hi for _, hi in intervals])
    err = np.nan_to_num(np.vstack([vals - lows, highs - vals]))
    ax.barh(y, np.nan_to_num(vals), xerr=err, capsize=4, color="tab:green", alpha=0.8)
    for i, v in enumerate(vals):
        if not np.isnan(v):
            ax.text(1, i, f"{v:.0f}%", va="center", fontsize=8)
    if even is not None:
        ax.axvline(100.0 * even, color="grey", ls="--", lw=0.8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("win rate (%), 95% Wilson interval")
    ax.set_title(title, fontsize=10)


def win_rate_figure(summary: dict[str, Any]) -> Any:
    """Each agent's win rate over all its games, with its 95% Wilson interval (:func:`win_rate_panel`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["ratings"]
    fig, ax = plt.subplots(figsize=(6.5, 1.5 + 0.4 * len(rows)))
    win_rate_panel(
        ax,
        [r["agent"] for r in rows],
        [r["win_rate"] for r in rows],
        [r["ci95"] for r in rows],
        f"{summary['players']}-player tournament, {summary['games']} games: win rate",
        even=1.0 / summary["players"],
    )
    fig.tight_layout()
    return fig


__all__ = [
    "figure",
    "format_tables",
    "plot",
    "save_figure",
    "summarise",
    "win_rate_figure",
    "win_rate_panel",
    "write_outputs",
]
