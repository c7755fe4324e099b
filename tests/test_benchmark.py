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
from training.matches.report import win_rate_figure
from training.matches.tournament import run_tournament

PNG = b"\x89PNG\r\n\x1a\n"


def test_protocol_is_pinned_to_its_version() -> None:
    """Changing the protocol changes every card's meaning: bump its version and this digest together.

    (The digest changed once within version 1, when ``az_networks`` named the networks the `az`
    reference had played in every card made until then: the games stayed the same.)"""
    text = json.dumps(bm.PROTOCOL, sort_keys=True)
    assert bm.PROTOCOL["version"] == 1
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
    monkeypatch.setitem(bm.PROTOCOL, "references", {"random": 624.0, "greedy": 1326.0})
    monkeypatch.setitem(bm.PROTOCOL, "configs", [[2, []], [2, ["cities"]]])
    monkeypatch.setitem(bm.PROTOCOL, "games", {"full": 6, "quick": 4})
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
    assert saved["spec"] == "greedy" and saved["protocol"]["version"] == 1
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
    bm.run_benchmark("greedy", tmp_path, quick=True, echo=lines.append, only=[(2, ())])
    err = capsys.readouterr().err.replace("\r", "\n").splitlines()
    moved = [line for line in err if line.startswith("games:") and " vs " in line]  # (redrawn too)
    assert list(dict.fromkeys(line.split(", ")[-1] for line in moved)) == [
        "2p base vs random]",
        "2p base vs greedy]",
    ]
    assert " 4/8 [" in moved[0] and " 8/8 [" in moved[-1]
    assert lines[0].startswith("2p base: Elo ")  # the card's own lines still go to echo
    # resumed with every chunk saved: the bar starts full and no game is played
    bm.run_benchmark("greedy", tmp_path, quick=True, echo=lines.append, only=[(2, ())], resume=True)
    assert " 8/8 [00:00" in capsys.readouterr().err


def test_out_must_be_a_folder(
    small_protocol: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    assert run_cli(benchmark_main, ["greedy", "--quick", "--out", str(target)], prog="benchmark") == 2
    assert "exists and is not a folder" in capsys.readouterr().err


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
