"""Learning curves (training/learning_curve.py): each network of a run rated on the benchmark scale over time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from agents.nets.shipped import resolve_model
from training.common.cli import CliError, run_cli
from training.expert_iteration.curve import curve_points, make_curve
from training.learning_curve import main as curve_main
from training.matches import card as bm

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def small_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cheap references and 4 games a point: the protocol's shape at a test's cost."""
    monkeypatch.setitem(bm.PROTOCOL, "references", ["random", "greedy"])
    monkeypatch.setitem(bm.PROTOCOL, "games", {"full": 6, "quick": 4})


def fake_run(
    tmp_path: Path, snapshots: list[int], init: str = "ppo_2p", players: int | list[int] = 2
) -> Path:
    """A run folder as search_train leaves it: config, metrics with wall time, kept networks."""
    run = tmp_path / "run"
    (run / "snapshots").mkdir(parents=True, exist_ok=True)
    (run / "config.yaml").write_text(yaml.safe_dump({"players": players, "modules": [], "init": init}))
    metrics = [{"iteration": i, "wall_seconds": 1800.0 * (i + 1)} for i in range(max(snapshots, default=0))]
    (run / "metrics.json").write_text(json.dumps(metrics))
    for k in snapshots:
        shutil.copy(
            resolve_model(init if init != "fresh" else "ppo_2p"), run / "snapshots" / f"best-{k:04d}.zip"
        )
    return run


def test_points_are_the_start_and_each_snapshot_at_the_runs_wall_time(tmp_path: Path) -> None:
    run = fake_run(tmp_path, [2, 4])
    (run / "snapshots" / "notes.txt").write_text("not a network")
    points = curve_points(run)
    assert [(p["iteration"], p["hours"]) for p in points] == [(0, 0.0), (2, 1.0), (4, 2.0)]
    assert points[0]["model"] == "ppo_2p" and points[2]["model"].endswith("best-0004.zip")
    fresh = fake_run(tmp_path / "fresh", [], init="fresh")
    with pytest.raises(CliError, match="no network to rate: no snapshots/"):
        curve_points(fresh)
    with pytest.raises(CliError, match="is not a search-training run: config.yaml is missing"):
        curve_points(tmp_path / "nowhere")


def test_every_hours_keeps_the_start_the_first_snapshot_past_each_mark_and_the_newest(tmp_path: Path) -> None:
    run = fake_run(tmp_path, [1, 2, 3, 4, 5, 7])  # kept at 0.5, 1.0, 1.5, 2.0, 2.5 and 3.5 hours
    hours = [p["hours"] for p in curve_points(run, every_hours=1.0)]
    assert hours == [0.0, 1.0, 2.0, 3.5]
    assert [p["hours"] for p in curve_points(run, every_hours=1.2)] == [0.0, 1.5, 2.5, 3.5]
    # the marks do not move as the run goes on: a rerun keeps the points already played
    for k in (9, 10):
        shutil.copy(resolve_model("ppo_2p"), run / "snapshots" / f"best-{k:04d}.zip")
    (run / "metrics.json").write_text(
        json.dumps([{"iteration": i, "wall_seconds": 1800.0 * (i + 1)} for i in range(10)])
    )
    assert [p["hours"] for p in curve_points(run, every_hours=1.0)] == [0.0, 1.0, 2.0, 3.5, 4.5, 5.0]
    assert len(curve_points(run)) == 9
    with pytest.raises(CliError, match="--every-hours must be a positive number of hours, got 0"):
        curve_points(run, every_hours=0)
    (run / "metrics.json").write_text("[]")
    with pytest.raises(CliError, match="needs the run's wall time"):
        curve_points(run, every_hours=1.0)


def test_curve_rates_each_point_and_a_rerun_plays_only_new_snapshots(
    small_protocol: None, tmp_path: Path
) -> None:
    run = fake_run(tmp_path, [2])
    out = tmp_path / "curve"
    curve = make_curve(run, out, agent="ppo", echo=None)
    assert [p["iteration"] for p in curve["points"]] == [0, 2]
    for p in curve["points"]:
        assert [r["reference"] for r in p["results"]] == ["random", "greedy"]
        assert all(r["games"] == 4 for r in p["results"])
        assert p["elo_ci95"][0] < p["elo"] < p["elo_ci95"][1]
    # the same network at hour 0 and at iteration 2 plays the same deals: the same results
    assert curve["points"][0]["results"] == curve["points"][1]["results"]
    saved = {f: f.read_bytes() for f in (out / "games").rglob("*") if f.is_file()}
    fake_run(tmp_path, [2, 4])
    again = make_curve(run, out, agent="ppo", echo=None)
    assert [p["iteration"] for p in again["points"]] == [0, 2, 4]
    assert all(f.read_bytes() == data for f, data in saved.items())  # nothing replayed or rewritten
    assert again["points"][2]["results"] == curve["points"][1]["results"]
    with pytest.raises(CliError, match="was started with agent 'ppo', not 'az'"):
        make_curve(run, out, agent="az", echo=None)


def test_command_writes_the_json_and_the_plot(small_protocol: None, tmp_path: Path) -> None:
    run = fake_run(tmp_path, [1])
    assert run_cli(curve_main, [str(run), "--agent", "ppo", "--workers", "1"], prog="x") == 0
    curve = json.loads((run / "curve" / "curve.json").read_text())
    assert curve["game"] == "2p base" and curve["protocol_version"] == 2
    # the plot's lines are the references' anchors in the run's game
    assert curve["references"] == {r: bm.PROTOCOL["anchors"]["2p base"][r] for r in ("random", "greedy")}
    assert (run / "curve" / "curve.png").read_bytes().startswith(PNG)


def test_a_run_of_several_player_counts_is_rated_in_the_count_asked_for(
    small_protocol: None, tmp_path: Path
) -> None:
    run = fake_run(tmp_path, [1], init="ppo_base_3_4p", players=[3, 4])
    with pytest.raises(CliError, match=r"the run trains \[3, 4\] players: pass --players"):
        make_curve(run, tmp_path / "c", agent="ppo", echo=None)
    with pytest.raises(CliError, match=r"--players 2: the run trains \[3, 4\] players"):
        make_curve(run, tmp_path / "c", agent="ppo", echo=None, players=2)
    assert run_cli(curve_main, [str(run), "--agent", "ppo", "--players", "4"], prog="x") == 0
    curve = json.loads((run / "curve-4p" / "curve.json").read_text())
    assert curve["game"] == "4p base" and [p["iteration"] for p in curve["points"]] == [0, 1]
    assert curve["references"] == {r: bm.PROTOCOL["anchors"]["4p base"][r] for r in ("random", "greedy")}
    # the other count's curve is a folder of its own; the same folder for it is refused
    with pytest.raises(CliError, match="was started with players 4, not 3"):
        make_curve(run, run / "curve-4p", agent="ppo", echo=None, players=3)
