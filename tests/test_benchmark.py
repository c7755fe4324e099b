"""Benchmark cards: the rating fit on the fixed scale, the card's files, the command, the shared plot."""

from __future__ import annotations

import hashlib
import json
import math
import shlex
from pathlib import Path

import pytest

from training.benchmark import main as benchmark_main
from training.common.cli import CliError, run_cli
from training.common.games import config_folder
from training.matches import card as bm
from training.matches.protocol import PROTOCOL_1, PROTOCOL_2
from training.matches.report import win_rate_figure
from training.matches.tournament import run_tournament

PNG = b"\x89PNG\r\n\x1a\n"


def test_new_cards_are_protocol_2_and_protocol_1_stays_as_its_cards_were_played() -> None:
    """Changing a protocol changes every card's meaning: a change is a new version. New cards play
    protocol 2 (its games pinned in ``tests/test_anchors.py``); protocol 1 stays pinned, so its cards
    keep reading as they were made.

    (Protocol 1's digest changed once, when ``az_networks`` named the networks the `az`
    reference had played in every card made until then: the games stayed the same.)"""
    assert bm.PROTOCOL is PROTOCOL_2 and bm.PROTOCOL["version"] == 2
    text = json.dumps(PROTOCOL_1, sort_keys=True)
    assert PROTOCOL_1["version"] == 1
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == "6ea824413df9a415"


def test_the_az_reference_plays_the_network_the_protocol_names() -> None:
    all_four = ("cities", "trading_posts", "orient", "strongholds")
    assert bm.reference_spec("az:sims=1000", 2, ()) == "az:az_2p,sims=1000"
    assert bm.reference_spec("az:sims=1000", 4, ()) == "az:az_3_4p,sims=1000"
    assert bm.reference_spec("az:sims=1000", 2, all_four[::-1]) == "az:az_modules_2p,sims=1000"
    assert bm.reference_spec("az:sims=1000", 3, all_four) is None  # no network named: it sits out
    assert bm.reference_spec("mcts:sims=400", 3, all_four) == "mcts:sims=400"
    # the one reference that may sit out is the last: the others keep their chunk seeds
    assert list(bm.PROTOCOL["references"])[-1] == "az:sims=1000"


@pytest.mark.slow
def test_naming_the_network_keeps_version_1s_games_when_the_default_changes() -> None:
    """Version 1's cards were played with ``az`` picking its default network, then ``az_2p`` and
    ``az_3_4p``. The references name that network, so they search with it whatever the default is
    now (a later network at 2 and 3-4 players), and where it is still the default, naming it
    changes no game."""
    import agents
    from agents.nets.shipped import default_model
    from agents.runner import play_game

    def actions(spec: str, players: int) -> list[int]:
        seats = [agents.make(spec, seed=p) for p in range(players)]
        return play_game(seats, seed=5, max_turns=20)["actions"]

    for players, network in ((2, "az_2p"), (3, "az_3_4p")):
        reference = bm.reference_spec("az:sims=16", players, ())
        assert reference == f"az:{network},sims=16"
        agent = agents.make(reference)
        agent.check_game(players, ())
        assert agent.net.label == network
        if default_model(players, ()) == network:
            assert actions(reference, players) == actions("az:sims=16", players), players


def test_win_chance_is_elo_with_two_players_and_luce_with_more() -> None:
    assert bm.p_first(1500, 1500, 2) == pytest.approx(0.5)
    assert bm.p_first(1900, 1500, 2) == pytest.approx(1 / (1 + 10 ** (-1)))
    assert bm.p_first(1500, 1500, 3) == pytest.approx(1 / 3)
    assert bm.p_first(1500, 1500, 4) == pytest.approx(1 / 4)


def test_rating_fit_recovers_the_anchor_of_an_even_record() -> None:
    elo, (lo, hi) = bm.fit_rating([(1326.0, 50, 100, 2)])
    assert elo == pytest.approx(1326, abs=0.5) and lo < elo < hi
    elo3, _ = bm.fit_rating([(1326.0, 40, 120, 3)], prior=0)  # a third of 3-player games: even
    assert elo3 == pytest.approx(1326, abs=0.5)
    # a 76% record against one anchor is about +200 Elo; more games, a narrower interval
    elo, (lo, hi) = bm.fit_rating([(1500.0, 76, 100, 2)], prior=0)
    assert elo == pytest.approx(1500 + 400 * math.log10(76 / 24), abs=0.5)
    _, (lo2, hi2) = bm.fit_rating([(1500.0, 760, 1000, 2)], prior=0)
    assert hi2 - lo2 < (hi - lo) / 2


def test_rating_fit_stays_finite_and_ordered() -> None:
    perfect, (lo, hi) = bm.fit_rating([(624.0, 20, 20, 2), (1326.0, 20, 20, 2)])
    assert 1326 < perfect < 3000 and lo < perfect < hi < 6000
    weaker, _ = bm.fit_rating([(624.0, 20, 20, 2), (1326.0, 10, 20, 2)])
    assert weaker < perfect
    with pytest.raises(ValueError, match="at least one result"):
        bm.fit_rating([])


@pytest.fixture
def small_protocol(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Two cheap references, two configurations and 4 games: the protocol's shape at a test's cost."""
    monkeypatch.setitem(bm.PROTOCOL, "references", ["random", "greedy"])
    anchors = {"random": 624.0, "greedy": 1326.0}
    monkeypatch.setitem(bm.PROTOCOL, "anchors", {"2p base": anchors, "2p cities": anchors})
    monkeypatch.setitem(bm.PROTOCOL, "configs", [[2, []], [2, ["cities"]]])
    monkeypatch.setitem(bm.PROTOCOL, "games", {"full": 6, "quick": 4})
    # greedy's card meets greedy too, so these tests' cards play both references (the references'
    # own cards leaving themselves out is tested in tests/test_anchors.py)
    monkeypatch.setitem(bm.PROTOCOL, "skip_self", False)
    return bm.PROTOCOL


def test_card_files_say_what_was_played(small_protocol: dict, tmp_path: Path) -> None:
    out = tmp_path / "card"
    lines: list[str] = []
    card = bm.run_benchmark("greedy", out, quick=True, echo=lines.append)
    assert [c["config"] for c in card["configs"]] == ["2p base", "2p cities"]
    base = card["configs"][0]
    assert [r["reference"] for r in base["results"]] == ["random", "greedy"]
    assert all(r["games"] == 4 for r in base["results"]) and card["cost"]["games"] == 16
    assert base["results"][0]["ci95"][0] <= base["results"][0]["win_rate"] <= base["results"][0]["ci95"][1]
    assert card["rating"]["elo"] == base["elo"] and card["kind"] == "quick"
    saved = json.loads((out / "card.json").read_text())
    assert saved["spec"] == "greedy" and saved["protocol"]["version"] == 2
    text = (out / "card.md").read_text()
    assert text.startswith("# Benchmark card: `greedy`") and "| `random` | 624 | 4 |" in text
    assert "commit" in text and "16 games in" in text and "s CPU" in text  # where and at what cost
    assert (out / "card.png").read_bytes()[:8] == PNG
    assert lines[0].startswith("2p base: Elo ") and lines[-1] == f"wrote {out / 'card.png'}"


def test_a_base_game_agent_skips_the_module_games_and_says_why(small_protocol: dict, tmp_path: Path) -> None:
    card = bm.make_card("lookahead", quick=True, echo=None)
    assert [c["config"] for c in card["configs"]] == ["2p base"]
    assert "plays only the base game" in card["skipped"]["2p cities"]
    assert "## Not played" in bm.card_markdown(card)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nosuch"], "unknown agent spec 'nosuch'"),
        (["nosuch.mod:Agent"], "no module named 'nosuch.mod'"),
        (["missing/model.zip"], "SPEC: "),
        (["greedy", "--workers", "0"], "--workers must be an integer >= 1"),
        (["greedy", "--address", "auto"], "--address is only used with --backend ray"),
        (["greedy", "--players", "5"], "--players must be 2, 3 or 4, got 5"),
        (["greedy", "--modules", "cities"], "--modules takes none or all, got cities"),
        (["lookahead", "--modules", "all"], "SPEC 'lookahead' plays none of the games asked for"),
    ],
)
def test_command_refuses_bad_input_in_one_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(benchmark_main, [*argv, "--out", str(tmp_path / "card")], prog="benchmark") == 2
    err = capsys.readouterr().err
    assert err.startswith("benchmark: error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "card").exists()


def test_players_and_modules_keep_only_those_games(
    small_protocol: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    all_four = ["cities", "trading_posts", "orient", "strongholds"]
    monkeypatch.setitem(small_protocol, "configs", [[2, []], [3, []], [2, all_four], [3, all_four]])
    argv = ["greedy", "--quick", "--no-progress", "--out"]
    assert benchmark_main([*argv, str(tmp_path / "a"), "--players", "3", "--modules", "none"]) is None
    card = json.loads((tmp_path / "a" / "card.json").read_text())
    assert [c["config"] for c in card["configs"]] == ["3p base"] and card["cost"]["games"] == 8
    assert set(card["skipped"].values()) == {"not asked for"} and len(card["skipped"]) == 3
    assert benchmark_main([*argv, str(tmp_path / "b"), "--modules", "all"]) is None
    card = json.loads((tmp_path / "b" / "card.json").read_text())
    assert [c["config"] for c in card["configs"]] == [f"{n}p {'+'.join(all_four)}" for n in (2, 3)]


def test_each_finished_chunk_moves_the_progress_bar(
    small_protocol: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines: list[str] = []
    bm.run_benchmark("greedy", tmp_path, quick=True, echo=lines.append, only=[(2, ())], progress_bar=True)
    err = capsys.readouterr().err.replace("\r", "\n").splitlines()
    moved = [line for line in err if line.startswith("games:") and " vs " in line]  # (redrawn too)
    assert list(dict.fromkeys(line.split(", ")[-1] for line in moved)) == [
        "2p base vs random]",
        "2p base vs greedy]",
    ]
    assert " 4/8 [" in moved[0] and " 8/8 [" in moved[-1]
    assert lines[0].startswith("2p base: Elo ")  # the card's own lines still go to echo
    # resumed with every chunk saved: the bar runs through the saved chunks to full and no game is played
    saved = {p: p.read_bytes() for p in tmp_path.rglob("*.progress.jsonl")}
    bm.run_benchmark(
        "greedy", tmp_path, quick=True, echo=lines.append, only=[(2, ())], resume=True, progress_bar=True
    )
    bars = [
        line for line in capsys.readouterr().err.replace("\r", "\n").splitlines() if line.startswith("games:")
    ]
    assert saved and " 8/8 [" in bars[-1]
    assert {p: p.read_bytes() for p in saved} == saved


def test_out_must_be_a_folder(
    small_protocol: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    assert run_cli(benchmark_main, ["greedy", "--quick", "--out", str(target)], prog="benchmark") == 2
    assert "exists and is not a directory" in capsys.readouterr().err


def test_tournament_writes_the_card_s_win_rate_plot(tmp_path: Path) -> None:
    summary = run_tournament(["random", "greedy"], games=4, progress=False, echo=None, out=tmp_path)
    assert (tmp_path / "winrates.png").read_bytes()[:8] == PNG
    fig = win_rate_figure(summary)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["random", "greedy"]
    assert any(type(c).__name__ == "ErrorbarContainer" for c in ax.containers)
    widths = [p.get_width() for p in ax.patches]
    assert widths == pytest.approx([100 * r["win_rate"] for r in summary["ratings"]])


@pytest.mark.slow
def test_quick_card_of_a_shipped_policy(tmp_path: Path) -> None:
    """The real protocol: a 2-player base policy's quick card (about a minute on 2 cores)."""
    assert benchmark_main(["ppo:ppo_2p", "--quick", "--out", str(tmp_path), "--workers", "2"]) is None
    card = json.loads((tmp_path / "card.json").read_text())
    assert [c["config"] for c in card["configs"]] == ["2p base"]
    assert [r["reference"] for r in card["configs"][0]["results"]] == list(bm.PROTOCOL["references"])
    assert 1326 < card["rating"]["elo"] < 2021  # between greedy's and az's anchors


def printed_command(text: str) -> list[str]:
    """The arguments of the ``benchmark it: python -m training.benchmark ...`` line a run printed."""
    (line,) = [ln for ln in text.splitlines() if ln.startswith("benchmark it: ")]
    head, _, args = line.partition("python -m training.benchmark ")
    assert head == "benchmark it: "
    return shlex.split(args)


@pytest.mark.slow
def test_training_ends_with_the_command_that_benchmarks_its_model(
    small_protocol: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sb3_contrib")
    from training.ppo import config as ppo_config
    from training.ppo.loop import train

    raw = {
        "n_envs": 4,
        "total_timesteps": 10_000_000,
        "max_wall_minutes": 1e-4,  # stops after its first update
        "output_dir": str(tmp_path / "run"),
        "torch_threads": 1,
        "network": {"net_arch": [16]},
        "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1},
        "opponents": {"pool": [{"spec": "random"}]},
        "eval": {"every": 0, "games": 2, "opponents": ["random"]},
    }
    train(ppo_config.from_dict(raw), progress_bar=False)
    argv = printed_command(capsys.readouterr().out)
    assert argv == [
        f"ppo:{tmp_path / 'run' / 'final.zip'}",
        "--quick",
        "--out",
        str(tmp_path / "run" / "card"),
    ]
    assert benchmark_main(argv) is None  # the printed command runs as printed
    assert json.loads((tmp_path / "run" / "card" / "card.json").read_text())["spec"] == argv[0]


@pytest.mark.slow
def test_search_training_ends_with_the_command_that_benchmarks_its_model(
    small_protocol: dict, tmp_path: Path
) -> None:
    from training.expert_iteration import config as search_config
    from training.expert_iteration.loop import search_train

    raw = {
        "players": 2,
        "init": "fresh",
        "output_dir": str(tmp_path / "run"),
        "iterations": 1,
        "selfplay": {"games": 2, "sims": 8, "games_per_job": 1, "max_turns": 60},
        "buffer": {"capacity": 4000},
        "train": {"batch_size": 32, "epochs": 1, "min_positions": 10},
        "gate": {"games": 2, "sims": 8},
        "eval": {"every": 0, "games": 2, "sims": 8, "opponents": ["greedy"], "modes": ["ppo"]},
    }
    lines: list[str] = []
    search_train(search_config.from_dict(raw), progress=False, log=lambda *a: lines.append(" ".join(a)))
    argv = printed_command("\n".join(lines))
    assert argv[0] == f"az:{tmp_path / 'run' / 'best.zip'}" and argv[1:3] == ["--quick", "--out"]
    assert benchmark_main([*argv, "--workers", "1"]) is None


def test_an_interrupted_card_resumes_to_the_same_card(small_protocol: dict, tmp_path: Path) -> None:
    out = tmp_path / "card"
    whole = bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None)
    log = out / "games" / config_folder(2, ["cities"]) / "chunks.progress.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    assert len(lines) == 2  # one chunk a reference
    log.write_text(lines[0] + lines[1][:10])  # the second chunk cut short, as a kill leaves it
    resumed = bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, resume=True)
    assert [c["results"] for c in resumed["configs"]] == [c["results"] for c in whole["configs"]]
    assert len(log.read_text().splitlines()) == 2  # the cut chunk was played again, once
    with pytest.raises(CliError, match="was started with quick True, not False"):
        bm.run_benchmark("greedy", out, quick=False, echo=lambda _: None, resume=True)
    with pytest.raises(CliError, match="has no manifest.json"):
        bm.run_benchmark("greedy", tmp_path / "elsewhere", quick=True, echo=lambda _: None, resume=True)


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes: what a refused run must leave as it was."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_a_card_folder_is_refused_without_resume_and_started_afresh_with_force(
    small_protocol: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rerun into a card's folder once went on with the old games under a new date and commit."""
    out = tmp_path / "card"
    bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None)
    before = files_under(out / "games")
    assert run_cli(benchmark_main, ["greedy", "--quick", "--out", str(out)], prog="benchmark") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and repr(str(out)) in err, err
    assert "already holds games" in err and "--resume" in err and "--force" in err, err
    assert files_under(out / "games") == before  # nothing written, nothing played
    argv = ["greedy", "--quick", "--out", str(out), "--resume", "--force"]
    assert run_cli(benchmark_main, argv, prog="benchmark") == 2
    assert "--resume or --force" in capsys.readouterr().err
    assert benchmark_main(["greedy", "--quick", "--out", str(out), "--force"]) is None
    card = json.loads((out / "card.json").read_text())
    assert card["cost"]["games"] == 16 and len(card["cost"]["pieces"]) == 1  # afresh: one piece


def test_force_empties_only_a_folder_that_is_a_run_s(small_protocol: dict, tmp_path: Path) -> None:
    out = tmp_path / "card"
    bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None)
    (out / "notes.txt").write_text("mine")  # not the run's: --force keeps its hands off the folder
    before = files_under(out)
    with pytest.raises(CliError, match="notes.txt"):
        bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, force=True)
    assert files_under(out) == before
    (out / "notes.txt").unlink()
    (out / "games" / "manifest.json").unlink()  # games, but no run's manifest naming them
    with pytest.raises(CliError, match="no manifest.json"):
        bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, force=True)
    assert (out / "games").is_dir()


def test_a_resumed_card_costs_the_sum_of_its_pieces_and_lists_them(
    small_protocol: dict, tmp_path: Path
) -> None:
    out = tmp_path / "card"
    bm.make_card(
        "greedy", quick=True, echo=None, progress=out / "games", only=[(2, ())]
    )  # stopped after one game
    card = bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, resume=True)
    pieces = card["cost"]["pieces"]
    assert [p["games"] for p in pieces] == [8, 8] and card["cost"]["games"] == 16
    assert card["cost"]["wall_s"] == pytest.approx(sum(p["wall_s"] for p in pieces))
    assert card["cost"]["cpu_s"] == pytest.approx(sum(p["cpu_s"] for p in pieces))
    assert all(p["ended"] == "finished" and p["commit"] == card["made"]["commit"] for p in pieces)
    assert card["made"]["date"] >= pieces[-1]["end"]  # the card is dated when it was completed
    saved = json.loads((out / "card.json").read_text())
    assert saved["cost"]["pieces"] == pieces
    text = (out / "card.md").read_text()
    assert "16 games in" in text and "2 pieces" in text and "## Pieces" in text
    for p in pieces:
        assert f"| {p['start']} | {p['end']} | {p['wall_s']:.0f} | {p['cpu_s']:.0f} | {p['games']} |" in text
    assert "unrecorded_games" not in card["cost"] and "Not counted" not in text
    # written again from its saved games (another machine, one worker): dated and costed as it was played
    card = bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, resume=True, workers=3)
    assert card["cost"]["pieces"] == pieces and card["made"]["date"] == pieces[-1]["end"]
    assert card["cost"]["workers"] == 1 and "1 worker(s)" in (out / "card.md").read_text()
    # pieces played with different workers: the card names each
    (out / "games" / "pieces.jsonl").write_text(
        (out / "games" / "pieces.jsonl").read_text().replace('"workers":1', '"workers":2', 1)
    )
    card = bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, resume=True)
    assert card["cost"]["workers"] == "1 or 2" and "1 or 2 worker(s) (local)" in (out / "card.md").read_text()
    # a folder begun before pieces were recorded: its cost says which games it does not count
    (out / "games" / "pieces.jsonl").write_text(
        (out / "games" / "pieces.jsonl").read_text().splitlines()[1] + "\n"
    )
    card = bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, resume=True)
    assert card["cost"]["games"] == 8 and card["cost"]["unrecorded_games"] == 8
    assert "Not counted: 8 of its games" in (out / "card.md").read_text()


def test_a_resume_that_replays_a_set_aside_chunk_is_a_piece_of_the_cost(
    small_protocol: dict, tmp_path: Path
) -> None:
    """A saved chunk changed after it was written fails its checksum; the resume plays it again, and that
    is a piece with those games (it counted the bad line as saved and recorded a piece of no games)."""
    out = tmp_path / "card"
    first = bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, only=[(2, ())])
    log = next((out / "games").glob("*/chunks.progress.jsonl"))
    lines = log.read_text().splitlines(keepends=True)
    entry = json.loads(lines[0])
    entry["result"]["config"] += " "  # a changed value: the line's checksum no longer fits
    log.write_text(json.dumps(entry) + "\n" + "".join(lines[1:]))
    card = bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, resume=True, only=[(2, ())])
    pieces = card["cost"]["pieces"]
    assert len(pieces) == 2 and pieces[1]["games"] == entry["result"]["games"] > 0
    assert card["cost"]["games"] == first["cost"]["games"] + entry["result"]["games"]
    assert card["made"]["date"] >= pieces[1]["end"]


ILLEGAL = """
import numpy as np

from agents.base import Agent


class Illegal(Agent):
    def act(self, observation, action_mask, state=None):
        return int(np.flatnonzero(np.asarray(action_mask) == 0)[0])


class Plays(Agent):
    def act(self, observation, action_mask, state=None):
        return int(np.flatnonzero(action_mask)[0])
"""


@pytest.fixture
def own_bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's package ``cardbots`` (``cardbots.bots:Illegal``, ``cardbots.bots:Plays``) on ``sys.path``."""
    import os
    import sys

    from tests.helpers.agent_package import write_agent_package

    root = write_agent_package(tmp_path / "site", "cardbots", ILLEGAL)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), str(Path(__file__).resolve().parents[1])]))
    yield root
    for name in [m for m in sys.modules if m == "cardbots" or m.startswith("cardbots.")]:
        del sys.modules[name]


def test_a_refused_run_leaves_the_card_s_folder_to_resume(
    small_protocol: dict, own_bots: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent that plays an illegal move, sent into a card's folder, once overwrote its manifest."""
    out = tmp_path / "card"
    bm.make_card("greedy", quick=True, echo=None, progress=out / "games", only=[(2, ())])
    before = files_under(out)
    for extra in ([], ["--resume"]):
        argv = ["cardbots.bots:Illegal", "--quick", "--out", str(out), *extra]
        assert run_cli(benchmark_main, argv, prog="benchmark") == 2
        assert capsys.readouterr().err.count("\n") == 1
        assert files_under(out) == before
    card = bm.run_benchmark("greedy", out, quick=True, echo=lambda _: None, resume=True)
    assert card["cost"]["games"] == 16


def test_a_card_is_written_under_the_protocol_it_is_given(tmp_path: Path) -> None:
    """``run_benchmark(protocol=...)`` plays and labels that protocol, its anchors included, not the default."""
    cheap = {
        **PROTOCOL_1,
        "references": {"random": 624.0, "greedy": 1326.0},
        "games": {"quick": 2, "full": 2},
    }
    card = bm.run_benchmark(
        "greedy", tmp_path / "c", quick=True, echo=lambda _: None, only=[(2, ())], protocol=cheap
    )
    assert card["protocol"]["version"] == 1 != bm.PROTOCOL["version"]
    rows = card["configs"][0]["results"]
    # protocol 1: one anchor per reference in every game, and a card meets its own reference too
    assert [(r["reference"], r["anchor_elo"]) for r in rows] == [("random", 624.0), ("greedy", 1326.0)]
    assert json.loads((tmp_path / "c" / "card.json").read_text())["protocol"]["version"] == 1


def test_a_card_names_the_code_it_played(small_protocol: dict, own_bots: Path, tmp_path: Path) -> None:
    """An own agent's module file (not installed: no distribution) by its sha256, on the card and its page."""
    card = bm.run_benchmark("cardbots.bots:Plays", tmp_path / "card", quick=True, echo=lambda _: None)
    digest = hashlib.sha256((own_bots / "cardbots" / "bots.py").read_bytes()).hexdigest()
    agent = card["provenance"]["agent"]
    assert agent["spec"] == "cardbots.bots:Plays" and agent["networks"] == []
    assert agent["code"] == {
        "module": "cardbots.bots",
        "file": str(own_bots / "cardbots" / "bots.py"),
        "sha256": digest,
    }
    text = (tmp_path / "card" / "card.md").read_text()
    assert digest in text and "## Provenance" in text
    made = card["made"]
    assert {"version", "commit", "dirty", "machine", "date"} <= set(made)
    assert f"commit {made['commit']}" in text


def test_an_installed_agents_code_is_named_by_its_distribution_and_its_module_files_sha256() -> None:
    """An editable install keeps its version while its code is edited: the module file's sha256 tells."""
    import sys

    import numpy as np

    from training.common.provenance import agent_code
    from training.matches.card_page import _code

    cls = np.random.Generator  # any class of an installed distribution
    file = sys.modules[cls.__module__].__file__
    code = agent_code(cls)
    assert code == {
        "module": cls.__module__,
        "file": file,
        "sha256": sha(file),
        "distribution": "numpy",
        "version": np.__version__,
    }
    assert sha(file) in _code(code) and f"`numpy` {np.__version__}" in _code(code)


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_provenance_names_every_network_with_its_sha256() -> None:
    from agents.nets.shipped import resolve_model
    from training.common.provenance import agent_networks, agent_provenance

    for spec in ("ppo:ppo_2p", "ppo_2p", "az:az_2p,sims=5"):
        (net,) = agent_networks(spec, [(2, ())])
        assert net["network"] in ("ppo_2p", "az_2p") and net["games"] == ["2p base"], spec
        assert net["sha256"] == sha(resolve_model(net["network"])), spec
    # az with no network named plays the shipped one of each game it plays
    nets = agent_networks("az:sims=5", [(2, ()), (3, ())])
    assert [n["games"] for n in nets] in ([["2p base"], ["3p base"]], [["2p base", "3p base"]])
    assert all(n["sha256"] == sha(resolve_model(n["network"])) for n in nets)
    assert agent_provenance("greedy") == {"spec": "greedy", "networks": [], "code": "built in"}
    # the references: the az reference plays the networks the protocol names
    refs = bm.reference_provenance(bm.PROTOCOL)
    names = {n["network"]: n for n in refs["az:sims=1000"]}
    assert set(names) == {"az_2p", "az_3_4p", "az_modules_2p"}
    assert all(n["sha256"] == sha(resolve_model(name)) for name, n in names.items())
    assert names["az_3_4p"]["games"] == ["3p base", "4p base"]
    assert all(refs[r] == [] for r in bm.PROTOCOL["references"] if not r.startswith("az"))


def old_card() -> dict:
    """A protocol-1 card as cards were written before they recorded their provenance and pieces."""
    return {
        "spec": "ppo:ppo_2p",
        "protocol": bm.PROTOCOL,
        "kind": "quick",
        "games_per_reference": 50,
        "configs": [],
        "skipped": {},
        "rating": {"config": "2p base", "elo": 1685.0, "elo_ci95": [1628.0, 1742.0]},
        "cost": {"games": 250, "wall_s": 25.0, "cpu_s": 44.0, "workers": 2, "backend": "local"},
        "made": {
            "date": "2026-11-27 01:55 UTC",
            "version": "0.5.0",
            "commit": "39575ed",
            "machine": "x86_64",
        },
    }


def test_a_card_page_names_the_az_reference_s_networks_and_reads_older_cards() -> None:
    card = old_card()
    text = bm.card_markdown(card)
    assert "250 games in 25 s wall" in text and "commit 39575ed" in text
    assert text.count("not recorded") >= 3  # the dirty flag, the agent's networks, the pieces
    card["provenance"] = {"agent": {"spec": "ppo:ppo_2p", "networks": [], "code": "built in"}}
    card["provenance"]["references"] = bm.reference_provenance(bm.PROTOCOL)
    text = bm.card_markdown(card)
    for net in card["provenance"]["references"]["az:sims=1000"]:
        assert f"`{net['network']}`" in text and net["sha256"] in text


def test_a_six_game_card_s_figure_keeps_its_panels_readable() -> None:
    """A card of every game lays its panels out four a row, and a module game's label is broken
    after its ``+`` signs, so neither the titles nor the panels run into each other."""
    from training.matches.card_page import card_figure, wrapped

    label = "2p cities+trading_posts+orient+strongholds"
    lines = wrapped(label).split("\n")
    assert "".join(lines) == label and len(lines) == 2 and all(len(x) <= 26 for x in lines)
    assert wrapped("3p base") == "3p base"
    card = json.loads(
        (Path(__file__).parents[1] / "results/cards/protocol-2/mcts-sims-400/card.json").read_text()
    )
    assert len(card["configs"]) == 6
    fig = card_figure(card)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 7 and len(fig.axes) == 8  # 2 rows of 4, the last cell left empty
    assert fig.get_size_inches()[0] <= 4.2 * 4 + 1e-9
    assert "\n" in visible[3].get_title() and "orient+strongholds" in visible[3].get_title()
