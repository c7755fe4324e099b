"""A benchmark card: one agent spec played through a fixed, versioned protocol, with a rating on a fixed scale.

Why a fixed protocol: a policy's strength is only comparable when the opponents, their budgets,
the deals and the scoring are the same; :mod:`training.matches.protocol` fixes them, with a version
shown on every card. The games are played by :func:`training.matches.evaluate.evaluate`
(seat-rotated, chunk-seeded: the same results for any number of workers and on either backend).

The rating: each reference keeps its anchor Elo (frozen in the protocol); the candidate's Elo is
the one value that best explains its scores against them (:func:`training.matches.elo_fit.fit_rating`),
so cards made on different days share one scale. How to read a card: docs/benchmark.md.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.nets.checkpoint import model_zip_problem
from agents.registry import checkpoint_of
from training.common.cli import CliError
from training.common.games import config_folder, config_label, plays
from training.common.progress import MANIFEST, claim_folder, open_run, parse_record, piece, read_pieces
from training.common.provenance import agent_networks, agent_provenance, run_provenance, where_made
from training.matches.card_page import card_figure, card_markdown, elo_text, write_card
from training.matches.elo_fit import fit_rating, p_first
from training.matches.evaluate import CANDIDATE, PROGRESS, candidate_spec, evaluate, sit_outs
from training.matches.match import MatchResult, seated_agent
from training.matches.protocol import PROTOCOL, anchor_of, played_protocol, reference_spec, references


def card_configs(
    spec: str, protocol: dict[str, Any] | None = None
) -> tuple[list[tuple[int, tuple[str, ...]]], dict[str, str]]:
    """The protocol's configurations ``spec`` plays, and why it skips each other one."""
    protocol = protocol or PROTOCOL
    name, options = candidate_spec(spec, protocol["deterministic"])
    agent = seated_agent(name, CANDIDATE, **options)
    keep, skipped = [], {}
    for n, mods in protocol["configs"]:
        reason = plays(agent, spec, n, tuple(mods))
        if reason is None:
            keep.append((n, tuple(mods)))
        else:
            skipped[config_label(n, mods)] = reason
    return keep, skipped


def config_rows(
    results: list[MatchResult],
    players: int,
    labels: dict[str, str] | None = None,
    protocol: dict[str, Any] | None = None,
    modules: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """One row per reference played: its anchor, the games, score, win rate and 95% Wilson interval.

    ``labels``: the protocol's name of each reference spec as played (:func:`reference_spec`);
    ``anchor_elo`` is ``None`` where the protocol has not measured that reference in this game.
    """
    protocol = protocol or PROTOCOL
    rows = []
    for r in results:
        lo, hi = r.ci
        reference = (labels or {}).get(r.opponent, r.opponent)
        rows.append(
            {
                "reference": reference,
                "anchor_elo": anchor_of(protocol, reference, players, modules),
                "games": r.games,
                "score": r.score,
                "win_rate": r.win_rate,
                "ci95": [lo, hi],
                "even": 1.0 / players,
            }
        )
    return rows


def config_opponents(
    spec: str, players: int, modules: tuple[str, ...], protocol: dict[str, Any]
) -> tuple[list[str], list[str], dict[int, str]]:
    """The references, the spec each plays in one game, and ``{index: why}`` of those left out."""
    refs = references(protocol)
    played_as = [reference_spec(ref, players, modules, protocol) for ref in refs]
    # a reference with no network for the game sits out, and (protocol 2) a reference's own card
    # leaves itself out; the others keep their index in the list, which seeds their games
    left_out = {k: "no network named for this game" for k, s in enumerate(played_as) if s is None}
    if protocol.get("skip_self"):
        left_out.update({k: "itself" for k, s in enumerate(played_as) if spec in (s, refs[k])})
    opponents = [s if s is not None else refs[k] for k, s in enumerate(played_as)]
    return refs, opponents, left_out


def card_games(
    spec: str, configs: list[tuple[int, tuple[str, ...]]], games: int, protocol: dict[str, Any]
) -> int:
    """How many games a card plays: ``games`` per game and reference that plays it (the progress bar's total)."""
    total = 0
    for n, mods in configs:
        _, opponents, left_out = config_opponents(spec, n, mods, protocol)
        skip = sit_outs(opponents, [n], mods)
        total += games * sum(
            left_out.get(k) != "itself" and (n, opp) not in skip for k, opp in enumerate(opponents)
        )
    return total


def rate_in_config(
    spec: str,
    players: int,
    modules: tuple[str, ...],
    games: int,
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    folder: Path | None = None,
    protocol: dict[str, Any] | None = None,
    resume: bool = False,
    on_chunk: Callable[[dict[str, Any], MatchResult], None] | None = None,
) -> dict[str, Any]:
    """``spec`` against every reference of the protocol in one game configuration, and its Elo there.

    ``folder``: where each finished chunk of games is saved; ``resume``: play only the chunks missing
    from it (its manifest must be this run's). Without ``resume`` a folder that holds games is
    refused (:func:`~training.common.progress.open_run`): old games are never counted as new ones.
    The Elo is ``None`` where the protocol has not measured an anchor of a reference played.
    ``on_chunk``: called as each chunk of games finishes (:func:`~training.matches.evaluate.evaluate`).
    """
    protocol = protocol or PROTOCOL
    t1 = time.perf_counter()
    refs, opponents, left_out = config_opponents(spec, players, modules, protocol)
    results = evaluate(
        spec,
        opponents,
        games,
        [players],
        workers,
        protocol["seed"],
        protocol["deterministic"],
        backend,
        address,
        modules,
        out=folder,
        resume=folder is not None and resume,
        left_out={k: why for k, why in left_out.items() if why == "itself"},
        on_chunk=on_chunk,
    )
    rows = config_rows(results, players, dict(zip(opponents, refs, strict=True)), protocol, modules)
    if any(r["anchor_elo"] is None for r in rows):
        elo, ci = None, None
    else:
        elo, ci = fit_rating(
            [(r["anchor_elo"], r["score"], r["games"], players) for r in rows], protocol["prior"]
        )
    played = {r["reference"] for r in rows}
    return {
        "config": config_label(players, modules),
        "players": players,
        "modules": list(modules),
        "results": rows,
        "sat_out": [ref for k, ref in enumerate(refs) if ref not in played and left_out.get(k) != "itself"],
        "itself": [ref for k, ref in enumerate(refs) if left_out.get(k) == "itself"],
        "elo": elo,
        "elo_ci95": None if ci is None else list(ci),
        "wall_s": time.perf_counter() - t1,
    }


def card_plan(
    spec: str, protocol: dict[str, Any] | None = None, only: list[tuple[int, tuple[str, ...]]] | None = None
) -> tuple[list[tuple[int, tuple[str, ...]]], dict[str, str], list[tuple[int, tuple[str, ...]]]]:
    """The games ``spec``'s card plays now, why it skips the others, and every game it may play (``only``
    aside); refuses (:class:`CliError`) a checkpoint that does not load and an agent that plays none of
    them, before anything is written."""
    protocol = protocol or PROTOCOL
    path = checkpoint_of(spec)
    problem = model_zip_problem(path) if path is not None else None
    if problem:
        raise CliError(f"SPEC: {problem}")
    configs, skipped = card_configs(spec, protocol)
    playable = list(configs)
    if only is not None:
        wanted = {(n, tuple(sorted(m))) for n, m in only}
        skipped.update(
            {config_label(n, m): "not asked for" for n, m in configs if (n, tuple(sorted(m))) not in wanted}
        )
        configs = [(n, m) for n, m in configs if (n, tuple(sorted(m))) in wanted]
    if not configs:
        raise CliError(f"SPEC {spec!r} plays none of the games asked for: " + "; ".join(skipped.values()))
    return configs, skipped, playable


def saved_games(progress: Path | None) -> int:
    """The games saved in a card's folder (every finished chunk of every game configuration) that a
    resume keeps: a line a kill cut short or one that fails its checksum is played again, so counting
    it would take its replay out of this piece's games."""
    total = 0
    for path in [] if progress is None else sorted(progress.glob(f"*/{PROGRESS}")):
        for line in path.read_bytes().splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break  # a kill cut it short (JobLog.read drops it)
            try:
                total += int(parse_record(line)[1]["games"])
            except (ValueError, KeyError, TypeError):
                continue
    return total


def reference_provenance(protocol: dict[str, Any] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Each reference's networks (file and sha256) with the games it plays them in: the `az` reference
    plays the networks ``protocol["az_networks"]`` names; the other references load none."""
    protocol = protocol or PROTOCOL
    out: dict[str, list[dict[str, Any]]] = {}
    for ref in references(protocol):
        nets: dict[str, dict[str, Any]] = {}
        for n, mods in protocol["configs"]:
            played = reference_spec(ref, n, mods, protocol)
            for net in [] if played is None else agent_networks(played, [(n, tuple(mods))]):
                nets.setdefault(net["network"], {**net, "games": []})["games"] += net["games"]
        out[ref] = list(nets.values())
    return out


class CardBar:
    """A card's progress: a tqdm bar on stderr (as a tournament's), one step per finished chunk of games.

    Why: a card plays for minutes to hours, in chunks of up to 100 games; the bar says how many of
    its games are done and which game and reference finished last. Lines printed meanwhile go
    through :meth:`echo`, so the bar does not cut them.
    """

    def __init__(self, total: int, enabled: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(  # every chunk drawn, nothing else: one line a chunk in a log file
            total=total,
            desc="games",
            unit="game",
            disable=not enabled,
            file=sys.stderr,
            mininterval=0,
            miniters=1,
        )

    def chunk_done(self, job: dict[str, Any], result: MatchResult) -> None:
        """One chunk finished (the callback of :func:`~training.matches.evaluate.evaluate`)."""
        self.bar.set_postfix_str(f"{result.config} vs {result.opponent}", refresh=False)
        self.bar.update(result.games)

    def echo(self, echo: Callable[[str], None], line: str) -> None:
        """``echo(line)`` with the bar moved out of the way."""
        with self.bar.external_write_mode():
            echo(line)

    def __enter__(self) -> CardBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()


def make_card(
    spec: str,
    quick: bool = False,
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    echo: Callable[[str], None] | None = print,
    progress: Path | None = None,
    resume: bool = False,
    protocol: dict[str, Any] | None = None,
    only: list[tuple[int, tuple[str, ...]]] | None = None,
    progress_bar: bool = False,
) -> dict[str, Any]:
    """Play ``spec`` through the protocol (``quick``: fewer games) and return the card as a dict.

    With ``progress`` (a folder), every finished chunk of games is saved there as it finishes, one
    evaluation folder per game configuration; ``resume`` plays only the chunks missing from it,
    so an interrupted card resumes to the card an uninterrupted run writes. Without ``resume`` a
    folder that holds games is refused. ``only``: the games (player count, modules) to play of those
    the agent plays (each is saved on its own, so a card can be played one game at a time into one
    folder). Every invocation is a piece of the card (:func:`~training.common.progress.piece`): the
    cost is the sum of the pieces, all listed, and the card is dated when it was completed.
    ``progress_bar``: a bar on stderr, moved on as each chunk of games finishes (games done of the
    card's, the game and reference just played).
    """
    protocol = protocol or PROTOCOL
    configs, skipped, playable = card_plan(spec, protocol, only)
    games = protocol["games"]["quick" if quick else "full"]
    if progress is not None:
        manifest = {
            "command": "benchmark",
            "spec": spec,
            "quick": quick,
            "protocol": played_protocol(protocol),
        }
        # every game the card may play, not only those asked for now: a card played one game at a time
        # into one folder keeps one manifest (the references' networks are in each game's own folder)
        manifest.update(run_provenance([spec], playable))
        open_run(progress, manifest, resume)
    out: list[dict[str, Any]] = []
    before = saved_games(progress)
    labels = [config_label(n, mods) for n, mods in configs]
    total = card_games(spec, configs, games, protocol) if progress_bar else 0
    with (
        piece(progress, command="benchmark", configs=labels, workers=workers, backend=backend) as entry,
        CardBar(total, progress_bar) as bar,
    ):
        try:
            for n, mods in configs:
                folder = None if progress is None else progress / config_folder(n, mods)
                again = resume and folder is not None and (folder / MANIFEST).is_file()
                rated = rate_in_config(
                    spec, n, mods, games, workers, backend, address, folder, protocol, again, bar.chunk_done
                )
                out.append(rated)
                if echo is not None:
                    bar.echo(echo, f"{rated['config']}: {elo_text(rated)} ({rated['wall_s']:.0f} s)")
        finally:
            played = sum(r["games"] for c in out for r in c["results"])
            entry["games"] = played if progress is None else saved_games(progress) - before
    pieces = [entry] if progress is None else read_pieces(progress)
    in_pieces = sum(int(p.get("games", 0)) for p in pieces)
    unrecorded = sum(r["games"] for c in out for r in c["results"]) - in_pieces
    name, options = candidate_spec(spec, protocol["deterministic"])
    agent = seated_agent(name, CANDIDATE, **options)
    made = where_made()
    playing = [p for p in pieces if p.get("games")]
    if playing and not entry["games"]:  # a card written again from its saved games: completed back then
        made["date"] = playing[-1]["end"]
    # the workers and backend that played its games (pieces that differ: all of them, "1 or 2")
    used = [
        sorted({str(p.get(key, now)) for p in playing} or {str(now)})
        for key, now in (("workers", workers), ("backend", backend))
    ]
    workers = int(used[0][0]) if len(used[0]) == 1 else " or ".join(used[0])
    backend = " or ".join(used[1])
    return {
        "spec": spec,
        "protocol": protocol,
        "kind": "quick" if quick else "full",
        "games_per_reference": games,
        "configs": out,
        "skipped": skipped,
        "rating": {"config": out[0]["config"], "elo": out[0]["elo"], "elo_ci95": out[0]["elo_ci95"]},
        "cost": {
            "games": in_pieces,
            "wall_s": sum(float(p["wall_s"]) for p in pieces),
            "cpu_s": sum(float(p["cpu_s"]) for p in pieces),  # each piece: its process and local workers
            "workers": workers,
            "backend": backend,
            "pieces": pieces,
            # games of the card played before its folder recorded pieces: their cost is unknown
            **({"unrecorded_games": unrecorded} if unrecorded > 0 else {}),
        },
        "provenance": {
            "agent": agent_provenance(spec, configs, agent),
            "references": reference_provenance(protocol),
        },
        "made": made,  # when its last game was played; the commit that wrote it (each piece names its own)
    }


def run_benchmark(
    spec: str,
    out: Path,
    quick: bool = False,
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    echo: Callable[[str], None] = print,
    resume: bool = False,
    force: bool = False,
    only: list[tuple[int, tuple[str, ...]]] | None = None,
    progress_bar: bool = False,
    protocol: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`make_card`, then :func:`write_card`: what ``python -m training.benchmark`` does.

    The games are saved in ``out/games/`` as they finish; ``resume`` plays only what is missing there,
    ``force`` empties a card's folder first (:func:`~training.common.progress.claim_folder`, after
    the agent is checked); without either, a folder that holds games is refused. ``only``: the games
    to play, of those the agent plays (``--players``, ``--modules``). ``protocol``: :data:`PROTOCOL`
    unless given (one of :data:`~training.matches.protocol.PROTOCOLS`).
    """
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {str(out)!r} exists and is not a directory")
    card_plan(spec, protocol, only)  # the agent checked before the folder is touched
    claim_folder(out, resume, force, run=out / "games")
    card = make_card(
        spec,
        quick,
        workers,
        backend,
        address,
        echo,
        out / "games",
        resume,
        protocol=protocol,
        only=only,
        progress_bar=progress_bar,
    )
    for path in write_card(card, out):
        echo(f"wrote {path}")
    return card


__all__ = [
    "PROTOCOL",
    "CardBar",
    "card_configs",
    "card_games",
    "config_opponents",
    "card_figure",
    "card_markdown",
    "card_plan",
    "fit_rating",
    "make_card",
    "p_first",
    "rate_in_config",
    "reference_provenance",
    "reference_spec",
    "run_benchmark",
    "where_made",
    "write_card",
]
