"""The leaderboard: one ranking per protocol version and game, generated from the cards, the committed page current."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from training.leaderboard import main as leaderboard_main
from training.matches.leaderboard import CARDS, PAGE, REPO_LINK_ROOT, leaderboard_markdown, read_cards
from training.matches.protocol import PROTOCOL, PROTOCOLS

ROOT = Path(__file__).resolve().parents[1]
REFS = ["random", "greedy", "lookahead", "mcts:sims=400", "az:sims=1000"]


def config_entry(config: str, elo: float | None, games: int = 200) -> dict[str, Any]:
    players = int(config[0])
    modules = [] if config.endswith("base") else config.split(" ")[1].split("+")
    results = [
        {
            "reference": r,
            "anchor_elo": None,
            "games": games,
            "score": 0.5,
            "win_rate": 0.5,
            "ci95": [0.4, 0.6],
        }
        for r in REFS
    ]
    return {
        "config": config,
        "players": players,
        "modules": modules,
        "results": results,
        "sat_out": [],
        "itself": [],
        "elo": elo,
        "elo_ci95": None if elo is None else [elo - 30, elo + 31],
        "wall_s": 1.0,
    }


def write_card(
    root: Path,
    folder: str,
    spec: str,
    version: int,
    configs: list[tuple[str, float | None]],
    kind: str = "full",
) -> None:
    """A card.json shaped like :func:`training.matches.card.make_card`'s, with its card.md and card.png."""
    entries = [config_entry(c, elo) for c, elo in configs]
    card = {
        "spec": spec,
        "protocol": PROTOCOLS.get(version, {"version": version}),
        "kind": kind,
        "games_per_reference": 200,
        "configs": entries,
        "skipped": {},
        "rating": {k: entries[0][k] for k in ("config", "elo", "elo_ci95")},
        "cost": {"games": 1000, "wall_s": 10.0, "cpu_s": 20.0, "workers": 2, "backend": "local"},
        "made": {
            "date": "2026-12-01 10:00 UTC",
            "version": "0.6.0",
            "commit": "abc1234",
            "dirty": False,
            "machine": "x86_64",
        },
    }
    out = root / folder
    out.mkdir(parents=True)
    (out / "card.json").write_text(json.dumps(card), encoding="utf-8")
    (out / "card.md").write_text(f"# Benchmark card: `{spec}`\n", encoding="utf-8")
    (out / "card.png").write_bytes(b"\x89PNG\r\n\x1a\n")


MODULES = "2p cities+trading_posts+orient+strongholds"


@pytest.fixture
def cards(tmp_path: Path) -> Path:
    root = tmp_path / "results" / "cards"
    write_card(root, "ppo_2p", "ppo:ppo_2p", 1, [("2p base", 1698.0)])
    write_card(root, "az_2p", "az:az_2p", 1, [("2p base", 2021.0)])
    write_card(root, "greedy", "greedy", 1, [("2p base", 1326.0), ("3p base", 1300.0), (MODULES, 1350.0)])
    write_card(root, "protocol-2/greedy", "greedy", 2, [("2p base", 1326.0), ("3p base", None)])
    write_card(root, "protocol-2/random", "random", 2, [("2p base", None)])
    (root / "protocol-2" / "greedy" / "games").mkdir()  # a run's chunks: not cards
    return root


def section(text: str, heading: str) -> str:
    """The lines under ``heading`` up to the next heading of its level or above."""
    level = heading.split(" ")[0]
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1 :]
    stop = re.search(rf"^#{{1,{len(level)}}} ", rest, flags=re.M)
    return rest[: stop.start()] if stop else rest


def rows(table: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip("|").split(" | ")] for line in table.splitlines() if line[:2] == "| "
    ][1:]


def test_the_committed_page_is_what_the_cards_generate() -> None:
    """Run ``python -m training.leaderboard`` after committing a card under results/cards/."""
    assert (ROOT / PAGE).read_text(encoding="utf-8") == leaderboard_markdown(ROOT / CARDS), (
        "docs/results/leaderboard.md is not current: run python -m training.leaderboard"
    )


def test_no_cards_says_so(tmp_path: Path) -> None:
    for root in (tmp_path / "absent", tmp_path):
        assert "No cards yet" in leaderboard_markdown(root)
    assert "## " not in leaderboard_markdown(tmp_path)


def test_each_game_is_ranked_by_elo_with_interval_games_protocol_date_and_link(cards: Path) -> None:
    text = leaderboard_markdown(cards)
    first = re.search(r"^## Protocol 1 .*$", text, flags=re.M)  # the fixture's protocol-1 cards
    assert first is not None
    current = section(text, first.group(0))
    table = rows(section(current, "### 2p base"))
    assert [r[:3] for r in table] == [
        ["1", "`az:az_2p`", "**2021** [1991, 2052]"],
        ["2", "`ppo:ppo_2p`", "**1698** [1668, 1729]"],
        ["3", "`greedy`", "**1326** [1296, 1357]"],
    ]
    assert table[0][3:] == [
        "1000 (full)",
        "1",
        "2026-12-01 10:00 UTC, commit abc1234",
        "[card](../../results/cards/az_2p/card.md), [figure](../../results/cards/az_2p/card.png)",
    ]
    # a card is in the table of every game it played, the games in the protocol's order
    games = re.findall(r"^### (.+)$", current, flags=re.M)
    assert games == ["2p base", "3p base", MODULES]
    assert [r[1] for r in rows(section(current, f"### {MODULES}"))] == ["`greedy`"]


def test_protocol_versions_are_never_ranked_together(cards: Path) -> None:
    text = leaderboard_markdown(cards)
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings[0] == f"Protocol {PROTOCOL['version']} (current)"
    assert len(headings) == 2 and "(current)" not in headings[1]
    other = 2 if PROTOCOL["version"] == 1 else 1
    label = "not yet current" if other > PROTOCOL["version"] else "older"
    assert headings[1].startswith(f"Protocol {other} ({label}")
    for heading in headings:
        version = heading.split(" ")[1]
        for table in re.split(r"^### .+$", section(text, f"## {heading}"), flags=re.M)[1:]:
            assert {r[4] for r in rows(table)} == {version}


def test_older_protocols_follow_newest_first(cards: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from training.matches import leaderboard

    write_card(cards, "protocol-3/greedy", "greedy", 3, [("2p base", 1326.0)])
    monkeypatch.setattr(leaderboard, "PROTOCOL", PROTOCOLS[2])
    headings = re.findall(r"^## (.+)$", leaderboard_markdown(cards), flags=re.M)
    assert [h.split(" (")[0] for h in headings] == ["Protocol 2", "Protocol 3", "Protocol 1"]
    assert headings[0].endswith("(current)") and "older" in headings[2]
    assert "unknown" in headings[1]


def test_a_card_not_rated_is_listed_after_the_rated_ones(cards: Path) -> None:
    text = section(
        leaderboard_markdown(cards),
        "## "
        + next(
            h
            for h in re.findall(r"^## (.+)$", leaderboard_markdown(cards), flags=re.M)
            if h.startswith("Protocol 2")
        ),
    )
    assert [r[:3] for r in rows(section(text, "### 2p base"))] == [
        ["1", "`greedy`", "**1326** [1296, 1357]"],
        ["-", "`random`", "not rated"],
    ]
    assert [r[:3] for r in rows(section(text, "### 3p base"))] == [["-", "`greedy`", "not rated"]]


def test_the_links_reach_the_cards_from_the_committed_page(cards: Path) -> None:
    page = cards.parents[1] / PAGE
    page.parent.mkdir(parents=True)
    for link in re.findall(r"\]\(([^)]+)\)", leaderboard_markdown(cards)):
        if link.startswith(REPO_LINK_ROOT):
            assert (page.parent / link).is_file(), link
    assert [f for f, _ in read_cards(cards)] == [
        "az_2p",
        "greedy",
        "ppo_2p",
        "protocol-2/greedy",
        "protocol-2/random",
    ]


def test_the_command_writes_the_page_and_checks_it(cards: Path, tmp_path: Path) -> None:
    out = tmp_path / "leaderboard.md"
    args = ["--cards", str(cards), "--out", str(out)]
    assert leaderboard_main([*args, "--check"]) == 1
    assert leaderboard_main(args) == 0
    assert out.read_text(encoding="utf-8") == leaderboard_markdown(cards)
    assert leaderboard_main([*args, "--check"]) == 0


def test_the_site_build_regenerates_the_page_and_carries_the_cards(
    cards: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mkdocs.config import load_config
    from mkdocs.structure.files import Files

    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    hooks = config.plugins["docs/hooks.py"]  # docs/hooks.py as the build loads it
    monkeypatch.setattr(hooks, "ROOT", cards.parents[1])
    files = config.plugins.run_event("files", Files([]), config=config)
    uris = sorted(f.src_uri for f in files)
    assert "cards/protocol-2/greedy/card.md" in uris and "cards/az_2p/card.png" in uris
    assert len(uris) == 10
    page = type("Page", (), {"file": type("F", (), {"src_uri": "results/leaderboard.md"})()})()
    text = hooks.on_page_markdown("stale", page, config, files)
    assert text == leaderboard_markdown(cards, link_root="../cards")
    for link in re.findall(r"\]\(\.\./(cards/[^)]+)\)", text):
        assert link in uris
