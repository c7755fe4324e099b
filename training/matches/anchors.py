"""Protocol 2's anchors: the round robin of the references, played as their own benchmark cards.

Why: a benchmark should measure its own anchors, in every game it rates. Each reference at its
budget plays its full card under :data:`~training.matches.protocol.PROTOCOL_2` (every other
reference, itself left out), one game at a time, into its own card folder; the anchors of a game are
the ratings that best explain all those cards together (:func:`~training.matches.elo_fit.fit_anchors`),
``greedy`` pinned. The same games are the references' own cards, so one set of games serves both.
Every chunk is saved as it finishes and every invocation is recorded (a piece), so the round robin
is played over as many sessions as it takes: ``python -m training.anchors`` goes on where it stopped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from training.common.games import config_label
from training.common.progress import MANIFEST, piece, read_pieces
from training.matches.card import card_configs, make_card
from training.matches.elo_fit import Meeting, fit_anchors
from training.matches.protocol import PROTOCOL_2, reference_spec, references, sorted_modules

#: where the references' cards and the fitted anchors are kept (committed: the next session resumes it)
ROUND_ROBIN = Path("results/cards/protocol-2")


def card_folder(spec: str) -> str:
    """A spec as a folder name: ``mcts:sims=400`` -> ``mcts-sims-400``."""
    return "".join(c if c.isalnum() or c in "_." else "-" for c in spec)


def round_robin_games(
    protocol: dict[str, Any] = PROTOCOL_2, only: Sequence[tuple[int, tuple[str, ...]]] | None = None
) -> list[tuple[int, tuple[str, ...], str, str]]:
    """``(players, modules, reference, spec it plays as)`` of every card game of the round robin, in order.

    The games in the protocol's order (2-player base first: the most used scale is measured first),
    the references in theirs; a reference with no network for a game sits it out.
    """
    wanted = None if only is None else {(n, sorted_modules(m)) for n, m in only}
    out = []
    for n, mods in protocol["configs"]:
        mods = sorted_modules(mods)
        if wanted is not None and (n, mods) not in wanted:
            continue
        for ref in references(protocol):
            spec = reference_spec(ref, n, mods, protocol)
            if spec is not None:
                out.append((n, mods, ref, spec))
    return out


def play_round_robin(
    out: Path = ROUND_ROBIN,
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    only: Sequence[tuple[int, tuple[str, ...]]] | None = None,
    echo: Callable[[str], None] = print,
    protocol: dict[str, Any] = PROTOCOL_2,
) -> dict[str, list[Meeting]]:
    """Play (or resume) the references' cards game by game; their meetings per game label.

    A reference that cannot play a game (``lookahead`` and the modules) has no card there.
    """
    meetings: dict[str, list[Meeting]] = {}
    plays_cache: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    with piece(out, command="anchors", only=None if only is None else [[n, list(m)] for n, m in only]):
        for n, mods, ref, spec in round_robin_games(protocol, only):
            if spec not in plays_cache:
                plays_cache[spec] = [(k, sorted_modules(m)) for k, m in card_configs(spec, protocol)[0]]
            label = config_label(n, mods)
            if (n, mods) not in plays_cache[spec]:
                echo(f"{label}: {ref} cannot play it (no card)")
                continue
            folder = out / card_folder(spec) / "games"
            card = make_card(
                spec,
                workers=workers,
                backend=backend,
                address=address,
                echo=None,
                progress=folder,
                resume=(folder / MANIFEST).is_file(),
                protocol=protocol,
                only=[(n, mods)],
            )
            entry = card["configs"][0]
            for r in entry["results"]:
                meetings.setdefault(label, []).append((ref, r["reference"], r["score"], r["games"], n))
            scores = ", ".join(f"{r['reference']} {100 * r['win_rate']:.1f}%" for r in entry["results"])
            echo(f"{label}: {spec} ({entry['wall_s']:.0f} s): {scores}")
    return meetings


def fitted_anchors(
    meetings: dict[str, list[Meeting]], protocol: dict[str, Any] = PROTOCOL_2
) -> dict[str, dict[str, float]]:
    """Each game's anchors from its meetings (``protocol["pin"]`` held fixed), rounded to a whole Elo."""
    name, value = protocol["pin"]
    return {
        label: {
            ref: round(elo) * 1.0 for ref, elo in fit_anchors(rows, (name, value), protocol["prior"]).items()
        }
        for label, rows in meetings.items()
    }


def write_anchors(
    out: Path, meetings: dict[str, list[Meeting]], protocol: dict[str, Any] = PROTOCOL_2
) -> Path:
    """``anchors.json``: every meeting, the fitted anchors per game and the pieces the round robin took.

    The games already in the file and not in ``meetings`` (played by an earlier invocation that
    asked for other games) are kept.
    """
    path = out / "anchors.json"
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8")).get("meetings", {})
        meetings = {**{k: [tuple(m) for m in v] for k, v in old.items()}, **meetings}
    data = {
        "protocol_version": protocol["version"],
        "pin": protocol["pin"],
        "anchors": fitted_anchors(meetings, protocol),
        "meetings": {label: [list(m) for m in rows] for label, rows in meetings.items()},
        "pieces": read_pieces(out),
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path


__all__ = [
    "ROUND_ROBIN",
    "card_folder",
    "fitted_anchors",
    "play_round_robin",
    "round_robin_games",
    "write_anchors",
]
