"""The leaderboard: every committed benchmark card, one ranking per protocol version and game.

Why generated: a table typed by hand drifts from the cards it quotes. :func:`leaderboard_markdown`
reads every ``card.json`` under ``results/cards/`` and writes the page; ``docs/results/leaderboard.md`` is
its output committed (``python -m training.leaderboard`` rewrites it, a test fails when it drifts),
and the site's build regenerates it (``docs/hooks.py``), so the repository and the site read the same.

Why one ranking per protocol version: an Elo is only on a scale within its protocol (the anchors
differ), so cards of two versions never share a table. The current protocol's come first, then the
others, newest first, each labelled. A card not rated in a game (protocol 2 before its anchors there
are measured) is listed after the rated ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from training.common.games import config_label
from training.matches.protocol import PROTOCOL, PROTOCOLS

#: where the committed cards are, from the repository root
CARDS = Path("results/cards")
#: the committed page, from the repository root
PAGE = Path("docs/results/leaderboard.md")
#: the cards' folder as a link from the committed page (``docs/results/``): right when reading the repository
REPO_LINK_ROOT = "../../results/cards"


def read_cards(cards_root: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every ``card.json`` under ``cards_root`` (any depth, a run's ``games/`` left alone), with its
    folder relative to ``cards_root`` (``"ppo_2p"``, ``"protocol-2/greedy"``), in folder order."""
    if not cards_root.is_dir():
        return []
    out = []
    for path in sorted(cards_root.rglob("card.json")):
        folder = path.parent.relative_to(cards_root)
        if "games" in folder.parts:
            continue
        try:
            card = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: not a readable card ({exc})") from exc
        out.append((folder.as_posix(), card))
    return out


def _protocol_heading(version: int) -> str:
    current = PROTOCOL["version"]
    if version == current:
        return f"Protocol {version} (current)"
    if version not in PROTOCOLS:
        return f"Protocol {version} (unknown to this version of the code)"
    if version < current:
        return f"Protocol {version} (older: its Elos do not compare with protocol {current}'s)"
    return f"Protocol {version} (not yet current: its Elos do not compare with protocol {current}'s)"


def _version_order(versions: set[int]) -> list[int]:
    """The current protocol first, then the others, newest first."""
    current = PROTOCOL["version"]
    return sorted(versions, key=lambda v: (v != current, -v))


def _config_order(protocol_version: int) -> list[str]:
    protocol = PROTOCOLS.get(protocol_version, PROTOCOL)
    return [config_label(n, mods) for n, mods in protocol["configs"]]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _row(rank: str, folder: str, card: dict[str, Any], entry: dict[str, Any], link_root: str) -> str:
    if entry["elo"] is None:
        elo = "not rated"
    else:
        lo, hi = entry["elo_ci95"]
        elo = f"**{entry['elo']:.0f}** [{lo:.0f}, {hi:.0f}]"
    games = sum(r["games"] for r in entry["results"])
    made = card["made"]
    commit = str(made.get("commit", "?")) + (" (dirty)" if made.get("dirty") else "")
    link = f"{link_root}/{folder}"
    cells = [
        rank,
        f"`{_cell(card['spec'])}`",
        elo,
        f"{games} ({card['kind']})",
        str(card["protocol"]["version"]),
        f"{made['date']}, commit {_cell(commit)}",
        f"[card]({link}/card.md), [figure]({link}/card.png)",
    ]
    return "| " + " | ".join(cells) + " |"


def _game_table(rows: list[tuple[str, dict[str, Any], dict[str, Any]]], link_root: str) -> list[str]:
    rated = sorted(
        (r for r in rows if r[2]["elo"] is not None), key=lambda r: (-r[2]["elo"], r[1]["spec"], r[0])
    )
    unrated = sorted((r for r in rows if r[2]["elo"] is None), key=lambda r: (r[1]["spec"], r[0]))
    lines = [
        "| rank | SPEC | Elo [95%] | games | protocol | made | card |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [_row(str(k), *r, link_root) for k, r in enumerate(rated, 1)]
    lines += [_row("-", *r, link_root) for r in unrated]
    return lines


def leaderboard_markdown(cards_root: Path = CARDS, link_root: str = REPO_LINK_ROOT) -> str:
    """The leaderboard page of the cards under ``cards_root``.

    A card appears in the table of every game it played. ``link_root``: the cards' folder as a link
    from the page (the committed page's default works when reading the repository; the site's
    build passes the place it copies the cards to).
    """
    cards = read_cards(cards_root)
    lines = [
        "# Leaderboard",
        "",
        "Every committed [benchmark card](../benchmark.md) (`results/cards/*/card.json`), ranked by its Elo "
        "in each game it played, with the 95% interval. One table per protocol version and game: "
        "an Elo compares only with the Elos of its protocol and game. A card not rated in a game "
        "(its protocol's anchors there not measured yet) comes after the rated ones.",
        "",
        "Generated from the cards by `python -m training.leaderboard` (and at every build of the "
        "site): do not edit it by hand.",
    ]
    if not cards:
        lines += ["", "No cards yet: none is committed under `results/cards/`."]
        return "\n".join(lines) + "\n"
    by_version: dict[int, dict[str, list[tuple[str, dict[str, Any], dict[str, Any]]]]] = {}
    for folder, card in cards:
        games = by_version.setdefault(int(card["protocol"]["version"]), {})
        for entry in card["configs"]:
            games.setdefault(entry["config"], []).append((folder, card, entry))
    for version in _version_order(set(by_version)):
        games = by_version[version]
        order = _config_order(version)
        lines += ["", f"## {_protocol_heading(version)}"]
        for label in sorted(games, key=lambda g: (order.index(g) if g in order else len(order), g)):
            lines += ["", f"### {label}", "", *_game_table(games[label], link_root)]
    return "\n".join(lines) + "\n"


__all__ = ["CARDS", "PAGE", "REPO_LINK_ROOT", "leaderboard_markdown", "read_cards"]
