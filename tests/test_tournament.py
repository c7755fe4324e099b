"""Tournament schedule, statistics, outputs, and game records that replay exactly."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from agents import build, runner
from agents.base import Agent, check_mask
from splendor_env import records as rec_mod
from splendor_env.observation import O_SEAT_ONEHOT, OBS_DIM, observe
from training.common.cli import CliError, run_cli
from training.common.stats import wilson
from training.matches import tournament as tour
from training.matches.ratings import bradley_terry_elo, elo_intervals, pair_score_tensor, pairwise_scores
from training.matches.report import figure
from training.matches.tournament import run_tasks, run_tournament, schedule, seatings, tables
from training.records import main as records_main
from training.tournament import main as tournament_main

# ---------------------------------------------------------------------------
# Schedule


def test_tables_and_seatings() -> None:
    assert tables(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert tables(4, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert tables(2, 3) == [(0, 0, 1), (0, 1, 1)]
    assert tables(2, 4) == [(0, 0, 0, 1), (0, 0, 1, 1), (0, 1, 1, 1)]
    assert seatings((0, 1, 2)) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert len(seatings((0, 1, 2), all_permutations=True)) == 6
    assert len(seatings((0, 0, 1), all_permutations=True)) == 3
    with pytest.raises(ValueError, match="two agents"):
        tables(1, 2)


def test_schedule_shares_deals_across_seatings() -> None:
    tasks = schedule(["a", "b", "c"], 2, 5, seed=3)
    assert len(tasks) == 3 * 6  # 3 tables, 5 games rounded up to 3 deals x 2 seatings
    assert [t.index for t in tasks] == list(range(len(tasks)))
    first = [t for t in tasks if t.table == 0 and t.deal == 0]
    assert [t.specs for t in first] == [("a", "b"), ("b", "a")]
    assert first[0].seed == first[1].seed
    assert len({t.seed for t in tasks}) == 3  # deals are shared by every table
    assert schedule(["a", "b"], 2, 4, seed=3) == schedule(["a", "b"], 2, 4, seed=3)
    assert schedule(["a", "b"], 2, 4, seed=3)[0].seed != schedule(["a", "b"], 2, 4, seed=4)[0].seed
    with pytest.raises(ValueError, match="players"):
        schedule(["a", "b"], 5, 4)


# ---------------------------------------------------------------------------
# Statistics


def test_wilson_interval() -> None:
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and 0.25 < hi < 0.35
    lo, hi = wilson(5, 10)
    assert abs((lo + hi) / 2 - 0.5) < 1e-12 and 0.2 < lo < 0.25
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(80, 100)
    assert lo < 0.8 < hi


def test_bradley_terry_elo() -> None:
    even = bradley_terry_elo(np.array([[0, 5, 5], [5, 0, 5], [5, 5, 0]], dtype=float))
    np.testing.assert_allclose(even, 1500.0)
    elo = bradley_terry_elo(np.array([[0, 9, 10], [1, 0, 7], [0, 3, 0]], dtype=float))
    assert elo[0] > elo[1] > elo[2]
    assert abs(elo.mean() - 1500.0) < 1e-6
    # 75% against an equal-strength field is about +191 Elo in a two-agent fit
    two = bradley_terry_elo(np.array([[0, 75], [25, 0]], dtype=float), prior=0.0)
    assert abs((two[0] - two[1]) - 400 * np.log10(3)) < 1e-3


def test_elo_intervals_are_reproducible_and_cover_the_fit() -> None:
    records = [
        {
            "num_players": 2,
            "winners": [w],
            "prestige": [15, 9] if w == 0 else [9, 15],
            "cards": [5, 5],
            "agent_ids": ids,
        }
        for ids, w in [((0, 1), 0)] * 14 + [((0, 1), 1)] * 6 + [((1, 0), 1)] * 5 + [((1, 0), 0)] * 5
    ]
    per_game = pair_score_tensor(records, 2)
    assert per_game.shape == (30, 2, 2) and per_game.sum() == 30
    fit = bradley_terry_elo(per_game.sum(axis=0))
    ci = elo_intervals(per_game, rounds=400, seed=0)
    np.testing.assert_array_equal(ci, elo_intervals(per_game, rounds=400, seed=0))
    assert (ci[:, 0] < fit).all() and (fit < ci[:, 1]).all()
    assert fit[0] > 1500 and ci[0, 1] - ci[0, 0] > 20  # 30 games: a wide interval, not a point
    # the batched fit gives the same answer as fitting each matrix alone
    mats = np.stack([per_game[:10].sum(0), per_game.sum(0)])
    np.testing.assert_allclose(bradley_terry_elo(mats)[1], fit)


def test_pairwise_scores_and_shares() -> None:
    record = {"num_players": 3, "winners": [0, 2], "prestige": [15, 9, 15], "cards": [10, 8, 10]}
    assert runner.win_shares(record) == [0.5, 0.0, 0.5]
    scores = {(i, j): s for i, j, s in pairwise_scores(record)}
    assert scores[(0, 2)] == 0.5 and scores[(0, 1)] == 1.0 and scores[(1, 2)] == 0.0


# ---------------------------------------------------------------------------
# Tournaments end to end


def test_two_player_tournament_outputs_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "t2"
    summary = run_tournament(
        ["random", "greedy"], players=2, games=4, workers=1, seed=0, out=out, save_games=True, progress=False
    )
    printed = capsys.readouterr().out
    assert "win rate % of row against column" in printed and "bradley-terry" in printed
    assert summary["games"] == 4
    greedy = summary["ratings"][1]
    assert greedy["elo"] > summary["ratings"][0]["elo"]
    for name in ("summary.json", "winrates.csv", "ratings.csv", "tournament.png", "games.jsonl"):
        assert (out / name).stat().st_size > 0
    assert (out / "tournament.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((out / "summary.json").read_text())
    assert data["matrix"][1][0]["games"] == 4 and data["matrix"][0][0]["rate"] is None
    rows = list(csv.DictReader((out / "winrates.csv").read_text().splitlines()))
    assert {(r["agent"], r["opponent"]) for r in rows} == {("random", "greedy"), ("greedy", "random")}
    ratings = list(csv.DictReader((out / "ratings.csv").read_text().splitlines()))
    assert [r["agent"] for r in ratings] == ["random", "greedy"] and "elo" in ratings[0]
    for r in data["ratings"]:  # every rating has an interval around it
        assert r["elo_ci95"][0] <= r["elo"] <= r["elo_ci95"][1]
    for row in ratings:
        assert float(row["elo_ci95_low"]) <= float(row["elo"]) <= float(row["elo_ci95_high"])
    # clean numbers: fixed decimals, no exponent (a 0% rate's lower bound is 0.0000, not 3.47e-18)
    cells = [c for r in rows + ratings for c in r.values()]
    assert not [c for c in cells if "e-" in c or "e+" in c]
    assert {r["ci95_low"] for r in rows if r["win_rate"] == "0.0000"} <= {"0.0000"}

    games = list(rec_mod.read_records(out / "games.jsonl"))
    assert len(games) == 4
    for g in games:
        assert {"num_players", "seed", "agents", "actions", "prestige", "winners"} <= set(g)
        ok, result, _ = rec_mod.replay(g)
        assert ok, (result, g)
    assert records_main(["replay", str(out / "games.jsonl")]) == 0
    assert records_main(["replay", str(out / "games.jsonl"), "--index", "1", "--render"]) == 0
    assert "1/1 record(s) reproduced" in capsys.readouterr().out

    tampered = dict(games[0], winners=[1 - games[0]["winners"][0]] if games[0]["winners"] else [0])
    assert not rec_mod.replay(tampered)[0]
    bad_file = tmp_path / "bad.jsonl"
    rec_mod.write_records(bad_file, [tampered])
    assert records_main(["replay", str(bad_file)]) == 1


def test_three_player_table_via_cli(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "t3"
    argv = ["--agents", "random", "greedy", "mcts:sims=8", "--players", "3", "--games", "3"]
    assert tournament_main([*argv, "--seed", "1", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "openskill" in printed
    data = json.loads((out / "summary.json").read_text())
    assert data["games"] == 3 and data["players"] == 3
    assert all("openskill" in r for r in data["ratings"])
    assert (out / "tournament.png").read_bytes()[:4] == b"\x89PNG"
    assert list(csv.DictReader((out / "ratings.csv").read_text().splitlines()))[0].keys() >= {
        "mu",
        "sigma",
        "ordinal",
    }


def test_cli_rejects_bad_specs(capsys: pytest.CaptureFixture) -> None:
    argv = ["--agents", "random", "nonsense", "--out", "unused", "--no-progress"]
    assert run_cli(tournament_main, argv, prog="tournament") == 2
    assert capsys.readouterr().err == (
        "tournament: error: unknown agent spec 'nonsense'; known: az, greedy, human, lookahead, mcts, ppo, random, rllib, "
        "or package.module:Class for your own agent class\n"
    )


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--agents", "random", "grredy"], "unknown agent spec 'grredy'"),
        (["--agents", "random"], "--agents needs at least two"),
        (["--agents", "random", "random"], "--agents lists the same spec twice"),
        (["--agents", "random", "ppo:nowhere.zip"], "nowhere.zip"),
        (["--agents", "random", "greedy", "--games", "0"], "--games must be >= 1, got 0"),
        (["--agents", "random", "greedy", "--games", "-3"], "--games must be >= 1, got -3"),
        (["--agents", "random", "greedy", "--workers", "0"], "--workers must be an integer >= 1, got 0"),
        (["--agents", "random", "greedy", "--seed", "-5"], "--seed must be >= 0, got -5"),
        (["--agents", "random", "greedy", "--max-turns", "0"], "--max-turns must be >= 1, got 0"),
        (["--agents", "random", "greedy", "--address", "auto"], "--address is only used with --backend ray"),
        (
            ["--agents", "random", "greedy", "--out", "file.txt"],
            "--out 'file.txt' exists and is not a directory",
        ),
    ],
)
def test_cli_bad_inputs_one_line_nothing_written(extra, match, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file.txt").write_text("x")
    assert run_cli(tournament_main, [*extra, "--no-progress"], prog="tournament") == 2
    err = capsys.readouterr().err
    assert err.startswith("tournament: error: ") and err.count("\n") == 1 and match in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]  # nothing created


def test_heatmap_colour_bar_is_in_percent_and_ratings_have_error_bars() -> None:
    summary = run_tournament(["random", "greedy"], games=4, progress=False, echo=None)
    fig = figure(summary)
    heat, bars, cbar = fig.axes
    image = heat.get_images()[0]
    assert image.get_clim() == (0, 100) and cbar.get_ylabel() == "win rate (%)"
    assert np.nanmax(image.get_array()) == pytest.approx(100 * summary["matrix"][1][0]["rate"])
    assert bars.containers and any(type(c).__name__ == "ErrorbarContainer" for c in bars.containers)


def test_csv_numbers_are_clean() -> None:
    from training.common.stats import clean_number

    assert clean_number(3.47e-18) == "0.0000" and clean_number(-1e-9) == "0.0000"
    assert clean_number(0.123456) == "0.1235" and clean_number(1523.456, 1) == "1523.5"
    assert clean_number(None) == "" and clean_number(float("nan")) == "" and clean_number(7) == "7"
    assert wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0


@pytest.mark.slow
def test_ray_backend_gives_the_same_results_as_local() -> None:
    """A 3-agent tournament on a tiny local Ray runtime matches the local backend game for game."""
    ray = pytest.importorskip("ray")
    specs = ["random", "greedy", "mcts:sims=4"]
    local = run_tournament(specs, games=4, seed=11, progress=False, echo=None)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)  # one tiny runtime for both calls
    try:
        ray_run = run_tournament(specs, games=4, seed=11, workers=2, progress=False, echo=None, backend="ray")
        tasks = schedule(specs, 2, 2, seed=11)
        assert run_tasks(tasks, 2, False, backend="ray") == run_tasks(tasks, 1, False)
    finally:
        ray.shutdown()
    assert ray_run["settings"]["backend"] == "ray" and ray_run["games"] == local["games"] == 12
    for key in ("matrix", "ratings", "mean_turns", "truncated"):
        assert ray_run[key] == local[key], key


@pytest.mark.slow
def test_worker_processes_give_the_same_games() -> None:
    tasks = schedule(["greedy", "mcts:sims=8"], 2, 2, seed=5)
    serial = run_tasks(tasks, workers=1, progress=False)
    parallel = run_tasks(tasks, workers=2, progress=False)
    assert [r["actions"] for r in serial] == [r["actions"] for r in parallel]


class _Spy(Agent):
    """A needs_state agent that checks the state it is given matches its observation."""

    name = "spy"
    needs_state = True

    def __init__(self) -> None:
        super().__init__(0)
        self.calls = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        assert state is not None
        seat = int(np.argmax(observation[O_SEAT_ONEHOT : O_SEAT_ONEHOT + 4]))
        view = np.empty(OBS_DIM, dtype=np.float32)
        observe(state, seat, view)
        np.testing.assert_array_equal(view, observation)
        self.calls += 1
        legal = check_mask(action_mask)
        return int(legal[self.rng.integers(legal.size)])


def test_search_agents_only_get_determinised_states(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = runner.determinize  # the one place a search agent's state is made (agents.runner.decision_state)

    def counting(s: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
        calls.append(seat)
        return real(s, seat, rng)

    monkeypatch.setattr(runner, "determinize", counting)
    spy = _Spy()
    task = schedule(["spy", "random"], 2, 1, seed=2)[0]
    record = tour.play_game(task, [spy, build("random")])
    assert spy.calls > 10 and calls == [0] * spy.calls
    assert rec_mod.replay(record)[0]


# ---------------------------------------------------------------------------
# Configurations: player counts and modules, with the agents that can play them

MODEL = Path(__file__).resolve().parents[1] / "agents" / "shipped" / "ppo_2p.zip"


@pytest.mark.slow
def test_one_round_robin_per_player_count_with_the_agents_that_can_play_it(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    lines: list[str] = []
    ppo = f"ppo:{MODEL}"
    out = tmp_path / "t"
    summary = run_tournament(
        ["random", "greedy", ppo], players=[2, 3], games=2, out=out, progress=False, echo=lines.append
    )
    two, three = summary["configurations"]
    assert (two["config"], two["agents"], two["skipped"]) == ("2p base", ["random", "greedy", ppo], {})
    assert (three["config"], three["agents"], three["players"]) == ("3p base", ["random", "greedy"], 3)
    assert three["skipped"][ppo].startswith("PPO model 'ppo_2p' was trained for 2 players, base game")
    assert two["games"] == 6 and three["games"] == 6  # 3 pairs x 2 games; 2 mixed tables x 3 seatings
    assert f"3p base: {ppo} sits out: PPO model" in "\n".join(lines)
    assert json.loads((out / "summary.json").read_text())["configurations"][1]["skipped"] == three["skipped"]
    for sub, players in (("2p_base", 2), ("3p_base", 3)):
        data = json.loads((out / sub / "summary.json").read_text())
        assert data["players"] == players and (out / sub / "winrates.csv").is_file()


def test_module_games_are_played_by_every_agent_that_can(tmp_path: Path) -> None:
    """Who plays a module game is decided by each agent's own ``plays_modules``, nothing hard-coded."""
    import agents

    specs = ["random", "greedy", "mcts:sims=4"]
    able = [s for s in specs if agents.make(s).plays_modules]
    if len(able) < 2:
        with pytest.raises(CliError, match="no configuration has two agents that can play it"):
            run_tournament(specs, games=1, progress=False, echo=None, modules=["cities"])
        return
    summary = run_tournament(
        specs, games=1, progress=False, echo=None, modules=["cities"], out=tmp_path / "m", save_games=True
    )
    assert summary["agents"] == able and summary["modules"] == ["cities"]
    assert set(summary["skipped"]) == set(specs) - set(able)
    games = list(rec_mod.read_records(tmp_path / "m" / "games.jsonl"))
    assert all(g["modules"] == ["cities"] for g in games) and rec_mod.replay(games[0])[0]


def test_a_module_game_task_plays_and_replays_with_its_modules() -> None:
    import agents

    task = schedule(["random", "random2"], 3, 1, seed=4, modules=("trading_posts", "strongholds"))[0]
    assert task.modules == ("trading_posts", "strongholds")
    record = tour.play_game(task, [agents.make("random", seed=i) for i in range(3)])
    assert record["modules"] == ["trading_posts", "strongholds"] and record["turns"] > 0
    assert rec_mod.replay(record)[0]  # the record carries what it needs to be replayed


def test_a_bare_shipped_name_is_checked_and_seated_as_the_games_build_it() -> None:
    """``ppo_2p`` (no ``ppo:``) is a model, as in the games themselves (agents.build), not a bad spec."""
    pytest.importorskip("sb3_contrib")
    tour.check_inputs(["ppo_2p", "greedy"], [2], 2, 1, 0, 100, None)
    (two,) = tour.configurations(["ppo_2p", "greedy"], [2])
    assert two["agents"] == ["ppo_2p", "greedy"] and two["skipped"] == {}
