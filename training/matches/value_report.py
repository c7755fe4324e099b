"""How good is a PPO critic as a position evaluator? Games, the critic's values, the report and its files.

Why: the ``az`` search (:mod:`agents.players.az`) evaluates every leaf with the critic of the
game's shipped network; this report measures how far that value predicts who wins,
overall and by game phase, so a change of network or of leaf formula can be judged by
one command (``python -m training.value_report``). The scoring is
:mod:`training.matches.value_scores`; the method and results: docs/results/value-report.md.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents import build
from agents.base import Agent
from agents.runner import play_batched, rotation_seating
from splendor_env import state as st
from splendor_env.observation import obs_dim, observe
from splendor_env.rules import terminal_rewards
from splendor_env.state import MAX_PLAYERS, PHASE, PHASE_MAIN, TURN
from training.common.cli import CliError, check_game_args
from training.common.games import check_plays, config_label
from training.common.stats import clean_number, percent
from training.matches.value_scores import PREDICTORS, Record, summarise

#: First deal seed by default: far from every seed the shipped models were trained or selected on.
DEFAULT_SEED = 10**9
#: Agent B by default; agent A is ``ppo:`` the game's shipped network (:func:`default_agents`).
DEFAULT_OPPONENT = "greedy"


# ---------------------------------------------------------------------------
# Playing and recording


def play_games(
    agents: tuple[Agent, Agent],
    games: int,
    seed: int = DEFAULT_SEED,
    batch: int = 100,
    max_turns: int | None = None,
    players: int = 2,
    modules: tuple[str, ...] | list[str] = (),
    keep_states: bool = False,
) -> Record:
    """Play ``games`` games of ``players`` with ``modules``, recording main decisions.

    Game ``g`` puts ``agents[0]`` in seat ``g % players`` and ``agents[1]`` in every
    other seat (:func:`agents.runner.rotation_seating`). ``max_turns`` overrides the
    env's turn cap (a game that reaches it is truncated). ``keep_states`` keeps each
    decision's state array (``Record.states``, for :func:`add_playouts`).
    """
    from splendor_env.vector import SplendorBatch

    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    options: dict[str, Any] = {} if max_turns is None else {"max_turns": max_turns}
    n_seats = int(players)
    venv = SplendorBatch(min(games, batch), n_seats, seed=seed, copy=False, modules=tuple(modules), **options)
    dim = obs_dim(venv.modules)
    result = np.full((games, n_seats), np.nan)
    rows_game, rows_turn, rows_mover, rows_pts, rows_obs, rows_state = [], [], [], [], [], []
    terminal = np.zeros(MAX_PLAYERS, dtype=np.float64)
    pts = [st.player_offset(p) + st.P_PRESTIGE for p in range(n_seats)]

    def before_round(slots: np.ndarray, numbers: np.ndarray, states: np.ndarray, player: np.ndarray) -> None:
        for b, g in zip(slots, numbers, strict=True):
            if states[b, PHASE] != PHASE_MAIN:
                continue
            views = np.empty((n_seats, dim), dtype=np.float32)
            for p in range(n_seats):
                observe(states[b], p, views[p])
            rows_obs.append(views)
            rows_game.append(g)
            rows_turn.append(states[b, TURN])
            rows_mover.append(player[b])
            rows_pts.append(states[b, pts])
            if keep_states:
                rows_state.append(states[b].copy())

    def on_end(game: int, _slot: int, final_state: np.ndarray, truncated: bool) -> None:
        if not truncated:
            terminal_rewards(final_state, terminal)
            result[game] = terminal[:n_seats]

    seating = rotation_seating(games, n_seats)  # A (agent 0) in seat g % n, B (agent 1) elsewhere
    play_batched(venv, agents, seating, np.random.default_rng([seed, 7]), on_end, before_round)
    n = len(rows_game)
    return Record(
        game=np.asarray(rows_game, dtype=np.int64).reshape(n),
        turn=np.asarray(rows_turn, dtype=np.int64).reshape(n),
        mover=np.asarray(rows_mover, dtype=np.int64).reshape(n),
        prestige=np.asarray(rows_pts, dtype=np.int64).reshape(n, n_seats),
        obs=np.stack(rows_obs) if rows_obs else np.zeros((0, n_seats, dim), np.float32),
        result=result,
        seating=seating,
        modules=tuple(venv.config.modules),
        states=np.stack(rows_state) if rows_state else None,
    )


def critic_values(policy: Any, observations: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``policy.predict_values`` of raw observations ``[N, D]`` -> ``float32[N]``, in batched torch calls."""
    import torch as th

    obs = np.asarray(observations, dtype=np.float32)
    out = np.empty(obs.shape[0], dtype=np.float32)
    with th.no_grad():
        for i in range(0, obs.shape[0], chunk):
            out[i : i + chunk] = policy.predict_values(th.as_tensor(obs[i : i + chunk])).numpy()[:, 0]
    return out


def add_playouts(record: Record, agents: tuple[Agent, Agent], playouts: int, seed: int) -> Record:
    """Fill ``record.playouts`` ``[N, n]``: each seat's mean result over ``playouts`` playouts of each
    decision by the agents of its game in their seats (:func:`training.matches.playouts.playout_values`),
    for the decisions of games won alone (the winner pick's rows; NaN elsewhere)."""
    from .playouts import playout_values

    if record.states is None:
        raise ValueError("the record has no states: play the games with keep_states=True")
    res = record.result
    rows = np.flatnonzero(((res == 1).sum(axis=1) == 1)[record.game])
    record.playouts = np.full(record.prestige.shape, np.nan)
    record.playout_count = playouts
    if rows.size:
        record.playouts[rows] = playout_values(
            record.states[rows], record.mover[rows], record.seating[record.game[rows]], agents, playouts, seed
        )
    return record


def attach_values(record: Record, policy: Any) -> Record:
    """Fill ``record.values`` ``[N, n]``: the critic's value of each seat's observation."""
    rows, seats, dim = record.obs.shape
    record.values = critic_values(policy, record.obs.reshape(rows * seats, dim)).reshape(rows, seats)
    return record


# ---------------------------------------------------------------------------
# Output


def _pct(x: float | None) -> str:
    return percent(x, "   -  ", "%")


def _ci(ci: list[float] | None) -> str:
    return "       -       " if not ci else f"[{100 * ci[0]:4.1f}, {100 * ci[1]:5.1f}]"


def _num(x: float | None, fmt: str = "+.3f") -> str:
    return "   -  " if x is None else format(x, fmt)


def _score_line(label: str, s: dict[str, Any], width: int = 10) -> str:
    return (
        f"  {label:<{width}} {s['positions']:>6} {s['games']:>5}  {_pct(s['sign_accuracy'])} "
        f"{_ci(s['sign_games95'])} {_ci(s['sign_wilson95'])}  {_num(s['mse'], '6.3f')}  {_num(s['corr'])}"
    )


def _winner_pick_lines(wp: dict[str, Any], n: int) -> list[str]:
    """The winner-pick table: leaf and prestige leader side by side, overall and by phase."""
    lines = [
        f"winner pick: is the seat with the highest leaf the sole winner? (k-way ties at the top count 1/k; "
        f"{wp['games_scored']} games won alone, {wp['shared_left_out']} shared left out)",
        f"  baselines: prestige = the prestige leader (ties split evenly), chance 1/{n} = {_pct(wp['chance']).strip()}",
        f"  {'phase':<5} {'bin':<6} {'rows':>6} {'games':>5}  {'leaf':>6} {'games 95% CI':<15}  "
        f"{'prestige':>8} {'games 95% CI'}",
    ]
    ov = wp["overall"]
    kinds = [k for k in ("leaf", "prestige", "playouts") if k in ov]
    if "playouts" in ov:
        lines.insert(
            2,
            f"  playouts = the seat that wins most of {wp['playouts']} playouts by the same agents from "
            "hidden cards resampled for the seat on move: what a perfect critic of these agents could reach",
        )
        lines[-1] += f"  {'playouts':>8} {'games 95% CI'}"
    rows = [("all", "all", [ov[k] for k in kinds])]
    for phase, key in (("turn", "by_turn"), ("lead", "by_lead")):
        rows += [
            (phase, cols[0]["bin"], list(cols)) for cols in zip(*(wp[key][k] for k in kinds), strict=True)
        ]
    for phase, label, cols in rows:
        a = cols[0]
        lines.append(
            f"  {phase:<5} {label:<6} {a['positions']:>6} {a['games']:>5}  {_pct(a['accuracy'])} {_ci(a['games95'])}"
            + "".join(f"  {_pct(b['accuracy']):>8} {_ci(b['games95'])}" for b in cols[1:])
        )
    if "gap" in ov:
        g = ov["gap"]
        lo, hi = g["games95"]
        lines.append(
            f"  playouts minus leaf on the same decisions: {100 * g['accuracy']:+.1f} points "
            f"[{100 * lo:+.1f}, {100 * hi:+.1f}] (games 95% CI): the critic's distance to the ceiling"
        )
    return lines


def format_report(summary: dict[str, Any]) -> str:
    """The readable tables (what the CLI prints)."""
    gm = summary["games"]
    game = summary.get("game", {"players": 2, "modules": []})
    n = game["players"]
    # a 2-player base game prints as it always did; any other game is named in the header
    where = "" if n == 2 and not game["modules"] else f" of {config_label(n, game['modules'])}"
    seats = "seats alternated" if n == 2 else f"A in seat g % {n}, B in the others"
    seat_wins = ", ".join(f"seat {p}{' won' if p == 0 else ''} {gm[f'seat{p}_wins']}" for p in range(n))
    base = summary.get("agent_baseline", {"A": 1, "B": -1})
    if (base["A"], base["B"]) == (1, -1):
        who = "agent = +1 when A is on move"
    else:
        who = f"agent = {base['A']:+d} when A is on move, {base['B']:+d} when B is"
    if n == 2:
        defs = [
            "  value = critic V of a seat's observation (both seats); leaf = az's (V(on move) - V(other)) / 2;",
            f"  lead = prestige difference, {who} (baselines, no network);",
        ]
    else:
        defs = [
            "  value = critic V of a seat's observation (every seat); "
            "leaf = az's (V(on move) - mean V(others)) / 2;",
            f"  lead = prestige minus the best other seat's, {who} (baselines, no network);",
        ]
    lines = [
        f"value report: critic of {summary['model']}; {gm['played']} games{where} {summary['agents'][0]} (A) vs "
        f"{summary['agents'][1]} (B), {seats}, seeds from {summary['seed']}",
        f"  A won {gm['a_wins']}, B won {gm['b_wins']} ({seat_wins}), "
        f"shared {gm['shared']}, truncated (left out) "
        f"{gm['truncated']}; {summary['decisions']} main decisions",
        *defs,
        "  sign = sign(x) == result on decisive games (x == 0 counts half).",
        "  " + summary["caveat"] + ".",
    ]
    head = f"  {'':<10} {'rows':>6} {'games':>5}  {'sign':>6} {'games 95% CI':<15} {'Wilson 95% CI':<15}  {'MSE':>6}  {'corr':>6}"
    for title, key in (("overall", None), ("by turn", "by_turn"), ("by leader's prestige", "by_lead")):
        lines.append("")
        lines.append(f"{title}:")
        for kind in PREDICTORS:
            lines.append(f" {kind}:")
            lines.append(head)
            if key is None:
                lines.append(_score_line("all", summary["overall"][kind]))
            else:
                lines.extend(_score_line(r["bin"], r) for r in summary[key][kind])
    if "winner_pick" in summary:
        lines.append("")
        lines.extend(_winner_pick_lines(summary["winner_pick"], n))
    lines.append("")
    lines.append("raw value by the agent whose seat it rates:")
    lines.append(head.replace(f"{'':<10}", f"{'':<24}"))
    for label, s in summary["value_by_agent"].items():
        lines.append(_score_line(label[:24], s, 24))
    for kind, rows in summary["calibration"].items():
        lines.append("")
        lines.append(f"calibration of {kind} (bins of x -> mean result; win share = fraction of rows won):")
        lines.append(
            f"  {'bin':<14} {'rows':>6} {'games':>5}  {'mean x':>7} {'mean result':>11}  {'games 95% CI':<17} {'win share':>9}"
        )
        for r in rows:
            if not r["positions"]:
                continue
            ci = r["mean_result_games95"]
            lines.append(
                f"  {r['bin']:<14} {r['positions']:>6} {r['games']:>5}  {r['mean_x']:+7.3f} {r['mean_result']:+11.3f}  "
                f"[{ci[0]:+.3f}, {ci[1]:+.3f}] {_pct(r['win_share']):>9}"
            )
    return "\n".join(lines)


CSV_FIELDS = ("decisive_positions", "sign_accuracy", "mse", "corr", "mean")
#: phases.csv rows that carry a winner pick: the leaf's, and the prestige leader's on the ``lead`` rows.
CSV_PICKS = {"leaf": "leaf", "lead": "prestige"}


def write_outputs(summary: dict[str, Any], out: Path) -> list[Path]:
    """``value_report.json`` (everything), ``phases.csv`` and ``calibration.csv`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "value_report.json", out / "phases.csv", out / "calibration.csv"]
    paths[0].write_text(json.dumps(summary, indent=2) + "\n")
    with paths[1].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "phase",
                "bin",
                "predictor",
                "positions",
                "games",
                *CSV_FIELDS,
                "sign_games95_lo",
                "sign_games95_hi",
                "winner_pick_positions",
                "winner_pick",
                "winner_pick_games95_lo",
                "winner_pick_games95_hi",
            ]
        )
        wp = summary.get("winner_pick", {})
        for phase, key in (("all", None), ("turn", "by_turn"), ("lead", "by_lead")):
            for kind in PREDICTORS:
                rows = [{"bin": "all", **summary["overall"][kind]}] if key is None else summary[key][kind]
                pick = CSV_PICKS.get(kind)
                picks = None
                if pick in wp.get("overall", {}):
                    picks = [wp["overall"][pick]] if key is None else wp[key][pick]
                for i, r in enumerate(rows):
                    ci = r["sign_games95"] or [None, None]
                    wr = picks[i] if picks else {"positions": None, "accuracy": None, "games95": None}
                    wci = wr["games95"] or [None, None]
                    w.writerow(
                        [phase, r["bin"], kind, r["positions"], r["games"]]
                        + [clean_number(r[c]) for c in CSV_FIELDS]
                        + [clean_number(ci[0]), clean_number(ci[1])]
                        + [clean_number(wr["positions"]), clean_number(wr["accuracy"])]
                        + [clean_number(wci[0]), clean_number(wci[1])]
                    )
    with paths[2].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["predictor", "bin", "positions", "games", "mean_x", "mean_result", "win_share", "lo", "hi"]
        )
        for kind, rows in summary["calibration"].items():
            for r in rows:
                ci = r["mean_result_games95"] or [None, None]
                w.writerow(
                    [kind, r["bin"], r["positions"], r["games"]]
                    + [clean_number(r[c]) for c in ("mean_x", "mean_result", "win_share")]
                    + [clean_number(ci[0]), clean_number(ci[1])]
                )
    return paths


# ---------------------------------------------------------------------------
# The model, the agents and the run


def shipped(path: str) -> str:
    """``path`` as a file: a shipped name (``ppo_2p``) or an old ``models/ppo_2p.zip`` is the packaged model.

    Resolved by :func:`agents.nets.shipped.resolve_model`, so the defaults work from any
    folder and from an installed wheel; a path that names nothing stays as given,
    for the file check to report.
    """
    from agents.nets.shipped import resolve_model

    try:
        return str(resolve_model(path))
    except FileNotFoundError:
        return path


def load_critic(path: str, players: int = 2, modules: tuple[str, ...] | list[str] = ()) -> Any:
    """The policy whose critic is measured; refused (one line, naming model and game) unless a readable
    model trained for ``players`` with ``modules`` (the check :meth:`agents.players.ppo.PPOAgent.check_game` makes)."""
    from agents.nets.checkpoint import load_model, model_zip_problem
    from agents.players.ppo import PPOAgent

    path = shipped(path)
    problem = model_zip_problem(path)
    if problem:
        raise CliError(f"--model: {problem}")
    model = load_model(path)
    try:
        PPOAgent(path, model=model).check_game(players, tuple(modules))
    except ValueError as exc:
        raise CliError(f"--model: {exc}") from None
    return model.policy


def default_agents(players: int, modules: tuple[str, ...], model: str) -> list[str]:
    """``[ppo:<the game's shipped network>, greedy]`` (``ppo:<model>`` when no shipped network covers the game)."""
    from agents.nets.shipped import default_model

    return [f"ppo:{default_model(players, modules) or model}", DEFAULT_OPPONENT]


def resolve_game_args(args: argparse.Namespace) -> None:
    """Check ``--players`` / ``--modules`` and fill in the defaults of ``--model`` and ``--agents`` for that game."""
    from agents.nets.checkpoint import describe_game
    from agents.nets.shipped import default_model, shipped_names

    check_game_args([args.players], args.modules)
    args.modules = list(st.module_names(st.parse_modules(tuple(args.modules))))  # the engine's order
    if args.model is None:
        args.model = default_model(args.players, tuple(args.modules))
        if args.model is None:
            raise CliError(
                f"--model: no shipped network covers {describe_game(args.players, args.modules)} "
                f"(shipped: {', '.join(shipped_names())}); pass --model PATH.zip"
            )
    if args.agents is None:
        args.agents = default_agents(args.players, tuple(args.modules), args.model)


def build_agents(specs: list[str], seed: int, players: int, modules: tuple[str, ...]) -> tuple[Agent, Agent]:
    """Agents ``A`` and ``B`` (seeded ``seed`` and ``seed + 1``), refused (one line naming the spec)
    unless each builds and plays the game."""
    built = []
    for k, spec in enumerate(specs):
        try:
            agent = build(spec, seed=seed + k)
            check_plays(agent, spec, players, modules)
        except (ValueError, OSError) as exc:
            raise CliError(f"--agents {spec!r}: {str(exc).splitlines()[0]}") from None
        built.append(agent)
    return built[0], built[1]


def run_report(
    agents: list[str],
    model: str,
    players: int = 2,
    modules: tuple[str, ...] | list[str] = (),
    games: int = 300,
    seed: int = DEFAULT_SEED,
    out: str | Path | None = None,
    echo: Callable[[str], None] = print,
    playouts: int = 0,
) -> dict[str, Any]:
    """Play the games, measure ``model``'s critic on them, print the report and (with ``out``) write
    its files: what ``python -m training.value_report`` does. ``playouts`` > 0 also plays each
    decision out that many times (:func:`add_playouts`): the winner pick's ceiling. Returns the summary."""
    import torch

    torch.set_num_threads(1)
    modules = tuple(modules)
    pair = build_agents(agents, seed, players, modules)
    policy = load_critic(model, players, modules)
    t0 = time.perf_counter()
    record = play_games(pair, games, seed, players=players, modules=modules, keep_states=playouts > 0)
    t_play = time.perf_counter() - t0
    attach_values(record, policy)
    if playouts > 0:
        t1 = time.perf_counter()
        add_playouts(record, pair, playouts, seed)
        t_playouts = time.perf_counter() - t1
    summary = summarise(record, (agents[0], agents[1]), model, seed)
    summary["seconds"] = {"games": round(t_play, 1), "total": round(time.perf_counter() - t0, 1)}
    if playouts > 0:
        summary["seconds"]["playouts"] = round(t_playouts, 1)
    echo(format_report(summary))
    echo(f"\n({summary['seconds']['games']} s of games, {summary['seconds']['total']} s in all)")
    if out is not None:
        for path in write_outputs(summary, Path(out)):
            echo(f"wrote {path}")
    return summary
