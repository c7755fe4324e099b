"""A benchmark card: one agent spec played through a fixed, versioned protocol, with a rating on a fixed scale.

Why a fixed protocol: a policy's strength is only comparable when the opponents, their budgets,
the deals and the scoring are the same. :data:`PROTOCOL` fixes them (and carries a version, so a
change is visible on every card): the reference agents at fixed budgets, the deal seed, the game
configurations (2, 3 and 4 players, the base game and all four modules), and each reference's
anchor rating. The games are played by :func:`training.matches.evaluate.evaluate` (seat-rotated,
chunk-seeded: the same results for any number of workers and on either backend).

The rating: each reference keeps its anchor Elo (measured once, in the 2-player base round
robin of all agents, and frozen); the candidate's Elo is the one value that best explains its
scores against them, under the model that a seat beats ``n - 1`` copies of an opponent with
probability ``q / (q + (n - 1) q_opp)`` (Elo with two players, Luce's choice model with more).
Cards made on different days therefore share one scale. How to read a card: docs/benchmark.md.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agents.nets.checkpoint import model_zip_problem
from agents.registry import checkpoint_of
from splendor_env.layout import MODULE_NAMES
from training.common.cli import CliError
from training.common.games import config_folder, config_label, plays
from training.common.progress import MANIFEST, open_run
from training.common.stats import Z95
from training.matches.evaluate import CANDIDATE, candidate_spec, evaluate
from training.matches.match import MatchResult, seated_agent
from training.matches.report import save_figure, win_rate_panel

#: The protocol every card is played under. Change anything here and bump ``version``.
PROTOCOL: dict[str, Any] = {
    "version": 1,
    # reference spec -> anchor Elo. Measured 2026-11-24 (commit 8850274) in the 2-player base round
    # robin of every agent, 100 games per pair (docs/results/ladder.md), and frozen: the scale of
    # every card. `random` won no game there, so its anchor is only a floor.
    "references": {
        "random": 624.0,
        "greedy": 1326.0,
        "lookahead": 1630.0,
        "mcts:sims=400": 1699.0,
        "az:sims=1000": 2021.0,
    },
    "configs": [
        [2, []],
        [3, []],
        [4, []],
        [2, list(MODULE_NAMES)],
        [3, list(MODULE_NAMES)],
        [4, list(MODULE_NAMES)],
    ],
    # the network the `az` reference searches with in each configuration, named so that shipping
    # new default networks leaves the protocol as it is (these are the defaults of 0.5.0, which
    # every card of version 1 played); where none is named, the `az` reference sits out
    "az_networks": [
        [2, [], "az_2p"],
        [3, [], "az_3_4p"],
        [4, [], "az_3_4p"],
        [2, list(MODULE_NAMES), "az_modules_2p"],
    ],
    "games": {"full": 200, "quick": 50},  # per reference and configuration, seat-rotated
    "seed": 20261127,  # the deals: every card plays the same ones
    "deterministic": True,  # a PPO candidate plays its argmax move
    "prior": 0.5,  # wins added each way per reference in the rating fit, so a perfect record stays finite
}


def p_first(rating: float, anchor: float, players: int) -> float:
    """The chance that a seat rated ``rating`` beats ``players - 1`` copies of one rated ``anchor``."""
    return 1.0 / (1.0 + (players - 1) * 10.0 ** ((anchor - rating) / 400.0))


def _loglik(rating: float, rows: Sequence[tuple[float, float, float, int]], prior: float) -> float:
    total = 0.0
    for anchor, score, games, n in rows:
        p = min(max(p_first(rating, anchor, n), 1e-300), 1 - 1e-16)
        total += (score + prior) * math.log(p) + (games - score + prior) * math.log(1 - p)
    return total


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Bisection for the sign change of a decreasing ``f`` on ``[lo, hi]`` (clipped to the ends)."""
    if f(lo) <= 0:
        return lo
    if f(hi) >= 0:
        return hi
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def fit_rating(
    rows: Sequence[tuple[float, float, float, int]], prior: float = 0.5
) -> tuple[float, tuple[float, float]]:
    """The candidate's Elo and its 95% likelihood-ratio interval from ``(anchor, score, games, players)`` rows.

    Maximum likelihood of :func:`p_first` with the anchors held fixed, ``prior`` wins added each
    way per row; the interval is where twice the log-likelihood drop stays below 3.84 (chi-square,
    one degree of freedom), so it is asymmetric where the record is lopsided.
    """
    if not rows:
        raise ValueError("fit_rating needs at least one result")
    lo, hi = -2000.0, 6000.0

    def slope(r: float) -> float:
        return sum((s + prior) - (g + 2 * prior) * p_first(r, a, n) for a, s, g, n in rows)

    best = _root(slope, lo, hi)
    top = _loglik(best, rows, prior)
    cut = Z95**2 / 2

    def above(r: float) -> float:
        return _loglik(r, rows, prior) - (top - cut)

    low = _root(lambda r: -above(r), lo, best)
    high = _root(above, best, hi)
    return best, (low, high)


def card_configs(spec: str) -> tuple[list[tuple[int, tuple[str, ...]]], dict[str, str]]:
    """The protocol's configurations ``spec`` plays, and why it skips each other one."""
    name, options = candidate_spec(spec, PROTOCOL["deterministic"])
    agent = seated_agent(name, CANDIDATE, **options)
    keep, skipped = [], {}
    for n, mods in PROTOCOL["configs"]:
        reason = plays(agent, spec, n, tuple(mods))
        if reason is None:
            keep.append((n, tuple(mods)))
        else:
            skipped[config_label(n, mods)] = reason
    return keep, skipped


def reference_spec(reference: str, players: int, modules: Sequence[str]) -> str | None:
    """The spec a reference plays in one configuration: the `az` reference with the network the
    protocol names for it (``None``: no network named, it sits out), every other one as it is."""
    name, _, options = reference.partition(":")
    if name != "az":
        return reference
    for n, mods, network in PROTOCOL["az_networks"]:
        if n == players and sorted(mods) == sorted(modules):
            return f"az:{network}" + (f",{options}" if options else "")
    return None


def config_rows(
    results: Sequence[MatchResult], players: int, labels: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """One row per reference played: its anchor, the games, score, win rate and 95% Wilson interval.

    ``labels``: the protocol's name of each reference spec as played (:func:`reference_spec`).
    """
    rows = []
    for r in results:
        lo, hi = r.ci
        reference = (labels or {}).get(r.opponent, r.opponent)
        rows.append(
            {
                "reference": reference,
                "anchor_elo": PROTOCOL["references"][reference],
                "games": r.games,
                "score": r.score,
                "win_rate": r.win_rate,
                "ci95": [lo, hi],
                "even": 1.0 / players,
            }
        )
    return rows


def cpu_seconds() -> float:
    """CPU seconds of this process and of its child processes that have ended (a local pool's workers)."""
    try:
        import resource
    except ImportError:  # Windows: this process only
        return time.process_time()
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def where_made() -> dict[str, str]:
    """Date (UTC), commit and machine, so a card says when and where it was measured."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit or "unknown",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}, Python {platform.python_version()}",
    }


def rate_in_config(
    spec: str,
    players: int,
    modules: tuple[str, ...],
    games: int,
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    folder: Path | None = None,
) -> dict[str, Any]:
    """``spec`` against every reference of :data:`PROTOCOL` in one game configuration, and its Elo there.

    ``folder``: where each finished chunk of games is saved; when it already holds a run's manifest,
    only the missing chunks are played (the caller has checked that the run is the same one).
    """
    t1 = time.perf_counter()
    refs = list(PROTOCOL["references"])
    pinned = {reference_spec(ref, players, modules): ref for ref in refs}
    # a reference with no network for the game sits out; it is the protocol's last (`az`), so
    # leaving it out moves no other reference's chunk seeds (drawn by its index in the list)
    pinned.pop(None, None)
    results = evaluate(
        spec,
        list(pinned),
        games,
        [players],
        workers,
        PROTOCOL["seed"],
        PROTOCOL["deterministic"],
        backend,
        address,
        modules,
        out=folder,
        resume=folder is not None and (folder / MANIFEST).is_file(),
    )
    rows = config_rows(results, players, pinned)
    elo, (lo, hi) = fit_rating(
        [(r["anchor_elo"], r["score"], r["games"], players) for r in rows], PROTOCOL["prior"]
    )
    played = {r["reference"] for r in rows}
    return {
        "config": config_label(players, modules),
        "players": players,
        "modules": list(modules),
        "results": rows,
        "sat_out": [ref for ref in refs if ref not in played],
        "elo": elo,
        "elo_ci95": [lo, hi],
        "wall_s": time.perf_counter() - t1,
    }


def make_card(
    spec: str,
    quick: bool = False,
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    echo: Callable[[str], None] | None = print,
    progress: Path | None = None,
    resume: bool = False,
) -> dict[str, Any]:
    """Play ``spec`` through :data:`PROTOCOL` (``quick``: fewer games) and return the card as a dict.

    With ``progress`` (a folder), every finished chunk of games is saved there as it finishes, one
    evaluation folder per game configuration; ``resume`` plays only the chunks missing from it,
    so an interrupted card resumes to the card an uninterrupted run writes.
    """
    path = checkpoint_of(spec)
    problem = model_zip_problem(path) if path is not None else None
    if problem:
        raise CliError(f"SPEC: {problem}")
    configs, skipped = card_configs(spec)
    if not configs:
        raise CliError(f"SPEC {spec!r} plays none of the protocol's games: " + "; ".join(skipped.values()))
    games = PROTOCOL["games"]["quick" if quick else "full"]
    if progress is not None:
        open_run(
            progress, {"command": "benchmark", "spec": spec, "quick": quick, "protocol": PROTOCOL}, resume
        )
    out: list[dict[str, Any]] = []
    made = where_made()  # the commit the games are played at, taken before they start
    t0, c0 = time.perf_counter(), cpu_seconds()
    for n, mods in configs:
        folder = None if progress is None else progress / config_folder(n, mods)
        entry = rate_in_config(spec, n, mods, games, workers, backend, address, folder)
        out.append(entry)
        if echo is not None:
            lo, hi = entry["elo_ci95"]
            echo(f"{entry['config']}: Elo {entry['elo']:.0f} [{lo:.0f}, {hi:.0f}] ({entry['wall_s']:.0f} s)")
    return {
        "spec": spec,
        "protocol": PROTOCOL,
        "kind": "quick" if quick else "full",
        "games_per_reference": games,
        "configs": out,
        "skipped": skipped,
        "rating": {"config": out[0]["config"], "elo": out[0]["elo"], "elo_ci95": out[0]["elo_ci95"]},
        "cost": {
            "games": sum(r["games"] for c in out for r in c["results"]),
            "wall_s": time.perf_counter() - t0,
            "cpu_s": cpu_seconds() - c0,  # this process and its finished local workers (not Ray's)
            "workers": workers,
            "backend": backend,
        },
        "made": made,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def card_markdown(card: dict[str, Any]) -> str:
    """The card as a Markdown page: the rating, per configuration a table of the references, the cost."""
    made, cost, rating = card["made"], card["cost"], card["rating"]
    lo, hi = rating["elo_ci95"]
    lines = [
        f"# Benchmark card: `{card['spec']}`",
        "",
        f"**Elo {rating['elo']:.0f}** [95%: {lo:.0f}, {hi:.0f}] in {rating['config']}, on the fixed scale of "
        f"protocol {card['protocol']['version']} ({card['kind']} card, {card['games_per_reference']} games "
        "per reference and configuration, seat-rotated, fixed deals).",
        "",
        f"Made {made['date']}, commit {made['commit']}, on {made['machine']}. "
        f"Cost: {cost['games']} games in {cost['wall_s']:.0f} s wall, {cost['cpu_s']:.0f} s CPU, "
        f"{cost['workers']} worker(s) ({cost['backend']}).",
    ]
    for c in card["configs"]:
        lo, hi = c["elo_ci95"]
        lines += [
            "",
            f"## {c['config']}: Elo {c['elo']:.0f} [{lo:.0f}, {hi:.0f}]",
            "",
            f"Win rate of an equal match: {_pct(1 / c['players'])}%.",
            "",
            "| reference | anchor Elo | games | win % | 95% interval |",
            "|---|---|---|---|---|",
        ]
        for r in c["results"]:
            lines.append(
                f"| `{r['reference']}` | {r['anchor_elo']:.0f} | {r['games']} | {_pct(r['win_rate'])} | "
                f"{_pct(r['ci95'][0])}-{_pct(r['ci95'][1])} |"
            )
        if c["sat_out"]:
            lines += [
                "",
                "Sat out (cannot play this game): " + ", ".join(f"`{s}`" for s in c["sat_out"]) + ".",
            ]
    if card["skipped"]:
        lines += ["", "## Not played", ""]
        lines += [f"- {k}: {v}" for k, v in card["skipped"].items()]
    return "\n".join(lines) + "\n"


def card_figure(card: dict[str, Any]) -> Any:
    """Win rate against each reference per configuration (:func:`~training.matches.report.win_rate_panel`)
    and the Elo of each configuration among the references' anchors."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = card["configs"]
    k = len(configs)
    fig, axes = plt.subplots(1, k + 1, figsize=(4.2 * (k + 1), 3.2), squeeze=False)
    for ax, c in zip(axes[0], configs, strict=False):
        rows = c["results"]
        win_rate_panel(
            ax,
            [r["reference"] for r in rows],
            [r["win_rate"] for r in rows],
            [r["ci95"] for r in rows],
            f"{c['config']}: win rate vs reference",
            even=1.0 / c["players"],
        )
    ax = axes[0][k]
    for ref, anchor in card["protocol"]["references"].items():
        ax.axhline(anchor, color="grey", lw=0.6)
        ax.text(-0.45, anchor, ref, fontsize=7, va="bottom", ha="left", color="grey")
    elos = [c["elo"] for c in configs]
    err = [[c["elo"] - c["elo_ci95"][0] for c in configs], [c["elo_ci95"][1] - c["elo"] for c in configs]]
    ax.errorbar(range(k), elos, yerr=err, fmt="o", capsize=4, color="tab:blue")
    ax.set_xticks(range(k), [c["config"] for c in configs], rotation=30, ha="right")
    ax.set_xlim(-0.5, k - 0.5)
    ax.set_title(f"Elo, protocol {card['protocol']['version']} scale (95%)", fontsize=10)
    fig.suptitle(f"{card['spec']}: {card['kind']} benchmark card")
    fig.tight_layout()
    return fig


def write_card(card: dict[str, Any], out: Path) -> list[Path]:
    """``card.json``, ``card.md`` and ``card.png`` in ``out`` (made if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "card.json", out / "card.md", out / "card.png"]
    paths[0].write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    paths[1].write_text(card_markdown(card), encoding="utf-8")
    save_figure(card_figure(card), paths[2])
    return paths


def run_benchmark(
    spec: str,
    out: Path,
    quick: bool = False,
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    echo: Callable[[str], None] = print,
    resume: bool = False,
) -> dict[str, Any]:
    """:func:`make_card`, then :func:`write_card`: what ``python -m training.benchmark`` does.

    The games are saved in ``out/games/`` as they finish; ``resume`` plays only what is missing there.
    """
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {str(out)!r} exists and is not a folder")
    card = make_card(spec, quick, workers, backend, address, echo, out / "games", resume)
    for path in write_card(card, out):
        echo(f"wrote {path}")
    return card


__all__ = [
    "PROTOCOL",
    "card_configs",
    "card_figure",
    "card_markdown",
    "fit_rating",
    "make_card",
    "p_first",
    "rate_in_config",
    "reference_spec",
    "run_benchmark",
    "where_made",
    "write_card",
]
