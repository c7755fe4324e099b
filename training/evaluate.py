"""Head-to-head evaluation with seat rotation, batched on the SplendorBatch.

Game ``g`` puts the candidate in seat ``g % num_players`` and the opponent in
every other seat, so first-move advantage cancels out. The score counts a win
as 1, a shared victory among ``k`` co-winners as ``1/k`` (a half-win with two
players), a loss or a truncated game (turn cap) as 0; the win rate comes with
a Wilson 95% confidence interval.

CLI::

    python -m training.evaluate ppo:ppo_2p --opponents random greedy --games 1000 --workers 2 \\
        [--players 3 4] [--modules cities orient] [--backend ray [--address auto]]

Results are reported per configuration (player count, modules) and
opponent; ``--players`` takes several counts. In a game of ``n`` players the
candidate holds one seat and the opponent spec all the others. The candidate
must be able to play every configuration (module games need
``plays_modules``; a PPO policy also checks the player counts and modules it
was trained for), or the command stops naming what differs; an opponent that
cannot play a configuration sits out of it, and the report says why.

Games run in :func:`agents.runner.play_batched`: search agents (``needs_state``,
e.g. ``mcts``) are asked one game at a time and given their decision state
(:func:`agents.runner.decision_state`: the true state determinised for their
seat), as in the tournament; the others act on whole batches of observations.

Games are played in chunks of 100, each seeded from ``(--seed, opponent,
chunk)``: the results are the same for any ``--workers`` and on either backend.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents import build
from agents.base import Agent
from agents.runner import play_batched, rotated_seat, rotation_seating
from splendor_env.rules import terminal_rewards
from splendor_env.state import MAX_PLAYERS
from splendor_env.vector import SplendorBatch
from training.common.cli import CliError, check_game_args, run_cli
from training.common.games import check_plays, config_label
from training.common.jobs import BACKENDS, check_backend, job_seed, map_jobs
from training.common.model_file import model_zip_problem
from training.common.stats import wilson


@dataclass
class MatchResult:
    opponent: str
    games: int
    score: float  # wins + shared victories / co-winners
    wins: int
    shared: int
    losses: int
    truncated: int
    players: int = 2
    modules: tuple[str, ...] = ()

    @property
    def config(self) -> str:
        """The game configuration: ``"3p base"``, ``"2p cities+orient"``."""
        return config_label(self.players, self.modules)

    @property
    def win_rate(self) -> float:
        return self.score / self.games if self.games else 0.0

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.score, self.games)

    def merge(self, other: MatchResult) -> MatchResult:
        return MatchResult(
            self.opponent,
            self.games + other.games,
            self.score + other.score,
            self.wins + other.wins,
            self.shared + other.shared,
            self.losses + other.losses,
            self.truncated + other.truncated,
            self.players,
            self.modules,
        )

    def as_dict(self) -> dict[str, Any]:
        lo, hi = self.ci
        out = {**asdict(self), "win_rate": self.win_rate, "ci95": [lo, hi]}
        return {**out, "modules": list(self.modules), "config": self.config}

    def __str__(self) -> str:
        lo, hi = self.ci
        return (
            f"vs {self.opponent:<10} {self.games:>5} games: win rate {self.win_rate:6.1%} "
            f"[95% CI {lo:.1%}, {hi:.1%}]  (W {self.wins} / shared {self.shared} / "
            f"L {self.losses} / truncated {self.truncated})"
        )


def play_match(
    candidate: Agent,
    opponent: Agent,
    games: int,
    num_players: int = 2,
    seed: int = 0,
    batch: int = 250,
    opponent_name: str = "opponent",
    first_game: int = 0,
    **env_options: Any,
) -> MatchResult:
    """Play ``games`` seat-rotated games (game ``g`` -> candidate seat ``(first_game + g) % n``).

    The games run in :func:`agents.runner.play_batched` (``batch`` at a time);
    search agents get their decision states from ``default_rng([seed, first_game, 7])``.
    """
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    n = num_players
    venv = SplendorBatch(min(games, batch), n, seed=seed, copy=False, **env_options)
    result = MatchResult(opponent_name, 0, 0.0, 0, 0, 0, 0, n, tuple(venv.config.modules))
    terminal = np.zeros(MAX_PLAYERS, dtype=np.float64)

    def on_end(game: int, _slot: int, final_state: np.ndarray, truncated: bool) -> None:
        result.games += 1
        if truncated:
            result.truncated += 1
            return
        terminal_rewards(final_state, terminal)
        r = terminal[rotated_seat(game, n, first_game)]
        if r > 0:
            result.wins += 1
            result.score += 1.0
        elif r == 0:
            result.shared += 1
            result.score += 1.0 / int((terminal[:n] == 0).sum())
        else:
            result.losses += 1

    rng = np.random.default_rng([seed, first_game, 7])  # determinisations for agents that search
    play_batched(venv, (candidate, opponent), rotation_seating(games, n, first_game), rng, on_end)
    return result


CHUNK_GAMES = 100  # games per job: the unit of seeding and of work sent to a worker


def model_path(spec: str) -> str | None:
    """The checkpoint file a candidate names, else ``None`` (an agent spec such as ``greedy``).

    ``x.zip``, ``ppo:x.zip``, a shipped name (``ppo_2p``, ``ppo:ppo_2p``) or an old
    ``models/ppo_2p.zip`` all resolve through :func:`agents.models.resolve_model`,
    so the shipped models are found from any folder and from an installed wheel.
    A ``.zip`` (or ``ppo:`` path) that does not exist comes back as given, for
    :func:`~training.common.model_file.model_zip_problem` to report.
    """
    from agents import is_model_path
    from agents.models import resolve_model

    is_ppo = spec.startswith("ppo:")
    if not is_ppo and not is_model_path(spec):
        return None  # an agent spec, even one whose option names a .zip: az:run/best.zip
    path = spec[4:].strip() if is_ppo else spec
    try:
        return str(resolve_model(path))
    except FileNotFoundError:
        return path if is_ppo or path.endswith(".zip") else None


def candidate_spec(spec: str, deterministic: bool) -> tuple[str, dict[str, Any]]:
    """The spec and options :func:`agents.build` gets for a candidate: a checkpoint (:func:`model_path`)
    is ``ppo:PATH`` played ``deterministic`` (argmax) or sampled; any other spec as is, without options."""
    path = model_path(spec)
    return (spec, {}) if path is None else (f"ppo:{path}", {"deterministic": deterministic})


def _worker(job: dict[str, Any]) -> MatchResult:
    import torch

    torch.set_num_threads(1)
    spec, options = candidate_spec(job["candidate"], job["deterministic"])
    cand = build(spec, seed=job["seed"], **options)
    opp = build(job["opponent"], seed=job["seed"] + 1)
    modules = tuple(job.get("modules", ()))
    check_plays(cand, job["candidate"], job["players"], modules)
    check_plays(opp, job["opponent"], job["players"], modules)
    return play_match(
        cand,
        opp,
        job["games"],
        job["players"],
        seed=job["seed"],
        opponent_name=job["opponent"],
        first_game=job["first_game"],
        modules=modules,
    )


def player_list(players: int | list[int]) -> list[int]:
    """``3`` -> ``[3]``; a list stays as given (the order of the report)."""
    return [int(players)] if isinstance(players, (int, np.integer)) else [int(n) for n in players]


def evaluation_jobs(
    candidate: str,
    opponents: list[str],
    games: int,
    players: int | list[int],
    seed: int,
    deterministic: bool,
    modules: tuple[str, ...] = (),
    skip: dict[tuple[int, str], str] | None = None,
) -> list[dict[str, Any]]:
    """Chunks of :data:`CHUNK_GAMES` games per configuration and opponent, seeded from ``(seed, opponent, chunk)``.

    ``skip`` (from :func:`sit_outs`) leaves out the (player count, opponent) pairs that cannot be played.

    The split does not depend on the number of workers or the backend, so
    neither do the results.
    """
    return [
        {
            "candidate": candidate,
            "opponent": opp,
            "opponent_index": k,
            "games": min(CHUNK_GAMES, games - first),
            "players": n,
            "modules": list(modules),
            "seed": job_seed(seed, k, c),
            "first_game": first,
            "deterministic": deterministic,
        }
        for n in player_list(players)
        for k, opp in enumerate(opponents)
        if (n, opp) not in (skip or {})
        for c, first in enumerate(range(0, games, CHUNK_GAMES))
    ]


def sit_outs(
    opponents: list[str], players: int | list[int], modules: tuple[str, ...] = ()
) -> dict[tuple[int, str], str]:
    """``{(player count, opponent): why}`` for every opponent that cannot play that configuration."""
    from training.common.games import plays

    built = {spec: build(spec) for spec in opponents}
    out = {}
    for n in player_list(players):
        for spec, agent in built.items():
            reason = plays(agent, spec, n, modules)
            if reason is not None:
                out[(n, spec)] = reason
    return out


def evaluate(
    candidate: str,
    opponents: list[str],
    games: int,
    players: int | list[int] = 2,
    workers: int = 1,
    seed: int = 0,
    deterministic: bool = True,
    backend: str = "local",
    address: str | None = None,
    modules: tuple[str, ...] = (),
) -> list[MatchResult]:
    """Evaluate a candidate spec / model path against each opponent, per player count (in that order).

    Chunks of games are spread over workers; one :class:`MatchResult` per
    (player count, opponent) that can be played, with its ``players`` and
    ``modules`` (opponents that cannot play a configuration sit it out: :func:`sit_outs`).
    """
    skip = sit_outs(opponents, players, tuple(modules))
    jobs = evaluation_jobs(candidate, opponents, games, players, seed, deterministic, tuple(modules), skip)
    parts = map_jobs(_worker, jobs, workers, backend, address)
    results = []
    for n in player_list(players):
        for k, opp in enumerate(opponents):
            if (n, opp) in skip:
                continue
            mine = [
                part
                for job, part in zip(jobs, parts, strict=True)
                if job["opponent_index"] == k and job["players"] == n
            ]
            total = mine[0]
            for part in mine[1:]:
                total = total.merge(part)
            results.append(total)
    return results


def check_inputs(args: argparse.Namespace) -> None:
    """Refuse bad arguments before any game is played or file written (messages name the argument)."""
    for name, value, low in (("--games", args.games, 1), ("--seed", args.seed, 0)):
        if value < low:
            raise CliError(f"{name} must be >= {low}, got {value}")
    check_game_args(args.players, args.modules)
    check_backend(args.backend, args.address, args.workers)
    if model_path(args.candidate) is not None:
        problem = model_zip_problem(model_path(args.candidate))
        if problem:
            raise CliError(f"candidate: {problem}")
    spec, options = candidate_spec(args.candidate, True)
    candidate = build(spec, seed=0, **options)
    for n in args.players:  # the candidate must play every configuration: say what differs
        try:
            check_plays(candidate, args.candidate, n, tuple(args.modules))
        except ValueError as exc:
            raise CliError(
                f"candidate {args.candidate!r} cannot play {config_label(n, args.modules)}: {exc}"
            ) from None
    for spec in args.opponents:
        build(spec)
    skip = sit_outs(args.opponents, args.players, tuple(args.modules))
    for n in args.players:
        if all((n, spec) in skip for spec in args.opponents):
            reasons = "; ".join(skip[(n, spec)] for spec in args.opponents)
            raise CliError(f"--opponents: none can play {config_label(n, args.modules)} ({reasons})")
    if args.json:
        target = Path(args.json)
        if target.is_dir() or not target.parent.is_dir():
            raise CliError(
                f"--json {args.json!r}: not a writable file path (a folder, or its folder is missing)"
            )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m training.evaluate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("candidate", help="MaskablePPO .zip, or an agent spec")
    ap.add_argument("--opponents", nargs="+", default=["random", "greedy"])
    ap.add_argument("--games", type=int, default=1000, help="games per opponent")
    ap.add_argument("--players", type=int, nargs="+", default=[2], help="player counts, e.g. 3 4")
    ap.add_argument("--modules", nargs="*", default=[], help="Cities of Splendor modules of every game")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--backend", choices=BACKENDS, default="local", help="where the games run")
    ap.add_argument(
        "--address", default=None, help="existing Ray cluster (auto, HOST:PORT or ray://HOST:10001)"
    )
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--stochastic", action="store_true", help="sample the PPO policy instead of argmax")
    ap.add_argument("--json", help="also write the results to this JSON file")
    args = ap.parse_args(argv)
    check_inputs(args)
    skip = sit_outs(args.opponents, args.players, tuple(args.modules))
    t0 = time.perf_counter()
    results = evaluate(
        args.candidate,
        args.opponents,
        args.games,
        args.players,
        args.workers,
        args.seed,
        not args.stochastic,
        args.backend,
        args.address,
        tuple(args.modules),
    )
    elapsed = time.perf_counter() - t0
    for n in args.players:
        game = "base game" if not args.modules else "modules " + "+".join(args.modules)
        print(f"{args.candidate} ({n} players, {game}, seat-rotated, seed {args.seed}):")
        for r in results:
            if r.players == n:
                print("  " + str(r))
        for spec in args.opponents:
            if (n, spec) in skip:
                print(f"  vs {spec}: sits out ({skip[(n, spec)]})")
    print(f"  ({elapsed:.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps([r.as_dict() for r in results], indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m training.evaluate"))
