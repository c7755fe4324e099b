"""Protocol 2 and its anchors: the references' own cards, fitted jointly per game (training.matches.anchors)."""

from __future__ import annotations

import copy
import hashlib
import json
import random
from pathlib import Path

import pytest

from training.anchors import main as anchors_main
from training.common.cli import run_cli
from training.matches import anchors as A
from training.matches import card as bm
from training.matches.elo_fit import fit_anchors, fit_rating, p_first
from training.matches.protocol import PROTOCOL_1, PROTOCOL_2, anchor_of, played_protocol, protocol_of


def test_protocol_2_is_pinned_to_its_version() -> None:
    """What protocol 2's games depend on; its anchors are filled in once measured (not pinned here)."""
    text = json.dumps(played_protocol(PROTOCOL_2), sort_keys=True)
    assert PROTOCOL_2["version"] == 2
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == "d46c22e0b78ab4e9"


def test_protocol_2_plays_protocol_1_s_deals_with_the_same_references() -> None:
    for key in ("configs", "az_networks", "games", "seed", "deterministic", "prior"):
        assert PROTOCOL_2[key] == PROTOCOL_1[key], key
    assert PROTOCOL_2["references"] == list(PROTOCOL_1["references"])
    assert protocol_of(1) is PROTOCOL_1 and protocol_of(2) is PROTOCOL_2
    with pytest.raises(ValueError, match="unknown benchmark protocol 7"):
        protocol_of(7)


def test_an_anchor_is_measured_per_game_and_missing_until_then() -> None:
    protocol = {**PROTOCOL_2, "anchors": {"3p base": {"greedy": 1326.0, "random": 700.0}}}
    assert anchor_of(protocol, "random", 3, ()) == 700.0
    assert anchor_of(protocol, "random", 2, ()) is None
    assert anchor_of(PROTOCOL_1, "random", 4, ("orient",)) == 624.0  # protocol 1: one anchor everywhere


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_joint_fit_finds_the_ratings_that_made_the_games(players: int) -> None:
    true = {"a": 900.0, "b": 1326.0, "c": 1650.0, "d": 2000.0}
    rng = random.Random(players)
    meetings = []
    for x in true:
        for y in true:
            if x != y:
                p = p_first(true[x], true[y], players)
                meetings.append((x, y, float(sum(rng.random() < p for _ in range(4000))), 4000.0, players))
    fitted = fit_anchors(meetings, ("b", 1326.0), prior=0.5)
    assert fitted["b"] == 1326.0
    for name in true:
        assert abs(fitted[name] - true[name]) < 40, (name, fitted)


def test_a_reference_s_card_against_the_fitted_anchors_lands_near_its_own_anchor() -> None:
    """With two players the joint fit and a card's fit agree: each uses the same games of a pair."""
    true = {"a": 1000.0, "b": 1326.0, "c": 1700.0}
    meetings = [(x, y, 2000 * p_first(true[x], true[y], 2), 2000.0, 2) for x in true for y in true if x != y]
    anchors = fit_anchors(meetings, ("b", 1326.0), prior=0.0)
    rows = [(anchors[y], s, g, n) for x, y, s, g, n in meetings if x == "c"]
    elo, (lo, hi) = fit_rating(rows, prior=0.0)
    assert abs(elo - anchors["c"]) < 1 and lo < elo < hi


def test_the_pinned_reference_must_have_played() -> None:
    with pytest.raises(ValueError, match="the pinned reference 'greedy' played no game"):
        fit_anchors([("a", "b", 1.0, 2.0, 2)], ("greedy", 1326.0))


@pytest.fixture
def tiny_protocol() -> dict:
    protocol = copy.deepcopy(PROTOCOL_2)
    protocol.update(
        references=["random", "greedy", "lookahead"],
        configs=[[2, []], [3, []], [2, ["cities"]]],
        games={"full": 4, "quick": 2},
        anchors={},
    )
    return protocol


def test_the_round_robin_is_the_references_own_cards_and_goes_on_where_it_stopped(
    tiny_protocol: dict, tmp_path: Path
) -> None:
    out = tmp_path / "rr"
    said: list[str] = []
    meetings = A.play_round_robin(out, 1, echo=said.append, protocol=tiny_protocol)
    # every reference against every other one, itself left out; lookahead plays no module game
    assert sorted((c, r) for c, r, *_ in meetings["2p base"]) == sorted(
        (c, r) for c in ("random", "greedy", "lookahead") for r in ("random", "greedy", "lookahead") if c != r
    )
    assert "2p cities: lookahead cannot play it (no card)" in said
    assert all(g == 4 for *_, g, _ in meetings["3p base"])
    folders = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert folders == ["greedy", "lookahead", "random"]
    manifest = json.loads((out / "greedy" / "games" / "manifest.json").read_text())
    assert manifest["protocol"] == played_protocol(tiny_protocol) and "anchors" not in manifest["protocol"]
    progress = sorted(out.rglob("chunks.progress.jsonl"))
    before = {p: p.read_text() for p in progress}
    again = A.play_round_robin(out, 1, echo=lambda _: None, protocol=tiny_protocol)
    assert again == meetings and {p: p.read_text() for p in progress} == before  # nothing replayed
    path = A.write_anchors(out, meetings, tiny_protocol)
    data = json.loads(path.read_text())
    assert data["anchors"]["2p base"]["greedy"] == 1326.0 and set(data["anchors"]) == set(meetings)
    assert len(data["pieces"]) == 2 and all(p["ended"] == "finished" for p in data["pieces"])


def test_a_reference_card_under_protocol_2_leaves_itself_out_and_rates_once_anchors_exist(
    tiny_protocol: dict,
) -> None:
    card = bm.make_card("greedy", quick=True, echo=None, protocol=tiny_protocol, only=[(2, ())])
    entry = card["configs"][0]
    assert [r["reference"] for r in entry["results"]] == ["random", "lookahead"]
    assert entry["itself"] == ["greedy"] and entry["elo"] is None
    assert "not rated" in bm.card_markdown(card)
    rated = {
        **tiny_protocol,
        "anchors": {"2p base": {"random": 700.0, "greedy": 1326.0, "lookahead": 1600.0}},
    }
    card = bm.make_card("greedy", quick=True, echo=None, protocol=rated, only=[(2, ())])
    assert card["configs"][0]["elo"] is not None and "Not played against itself" in bm.card_markdown(card)


def test_the_command_refuses_a_bad_choice_of_games_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(anchors_main, ["--players", "5"], prog="anchors") == 2
    assert capsys.readouterr().err.strip() == "anchors: error: --players must be 2, 3 or 4, got 5"
    assert run_cli(anchors_main, ["--modules", "cities"], prog="anchors") == 2
    assert "--modules takes none or all" in capsys.readouterr().err


def test_the_frozen_anchors_are_the_fit_of_the_committed_round_robin() -> None:
    """Each game's anchors in the protocol are what ``python -m training.anchors`` fitted from the games
    committed in ``results/cards/protocol-2`` (and a game is frozen only once all its cards are there)."""
    path = Path(__file__).resolve().parents[1] / A.ROUND_ROBIN / "anchors.json"
    data = json.loads(path.read_text())
    meetings = {label: [tuple(m) for m in rows] for label, rows in data["meetings"].items()}
    fitted = A.fitted_anchors(meetings)
    assert PROTOCOL_2["anchors"], "no game's anchors frozen yet"
    for label, anchors in PROTOCOL_2["anchors"].items():
        assert anchors == fitted[label], label
        played = {c for c, *_ in meetings[label]}
        assert played == set(anchors), label  # every reference's card is in the fit


def test_a_stopped_round_robin_names_its_folder_and_the_same_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("training.anchors.play_round_robin", stopped)
    argv = ["--out", str(tmp_path / "rr"), "--players", "2", "--modules", "none"]
    assert run_cli(anchors_main, argv, prog="python -m training.anchors") == 130
    assert capsys.readouterr().err.strip() == (
        f"python -m training.anchors: stopped (Ctrl-C); what was finished is saved in {tmp_path / 'rr'}: "
        f"go on with python -m training.anchors {' '.join(argv)}"
    )
