"""training.ship: a search-trained network lands in the shipped folder with metadata read from its run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sb3_contrib")

from agents.nets import shipped as models
from training.common.cli import CliError
from training.expert_iteration.ship import ship


def fake_run(tmp_path: Path) -> Path:
    """A run directory as search_train leaves it after two pieces (a tiny fresh network)."""
    from training.expert_iteration import config as search_config
    from training.expert_iteration.network import fresh_model

    cfg = search_config.from_dict({"players": [3, 4], "network": {"net_arch": [8, 8]}}, check_specs=False)
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    fresh_model(cfg).save(run / "best.zip")
    (run / "config.yaml").write_text(yaml.safe_dump(search_config.to_dict(cfg)))
    rows = [
        {"iteration": i, "positions": 100, "selfplay_seconds": 2.0, "gate_win_rate": 0.5, "new_value_loss": 1}
        for i in range(3)
    ]
    pieces = [
        {"resumed": False, "from_iteration": 0, "to_iteration": 2, "wall_seconds": 60.0},
        {"resumed": True, "from_iteration": 2, "to_iteration": 3, "wall_seconds": 30.5},
    ]
    state = {"iteration": 3, "positions": 300, "accepted": 1, "metrics": rows, "pieces": pieces}
    (run / "checkpoints" / "state.json").write_text(json.dumps(state))
    return run


def test_ship_copies_the_network_and_writes_what_the_registry_reads(tmp_path: Path) -> None:
    run = fake_run(tmp_path)
    evaluation = tmp_path / "vs_greedy.json"
    evaluation.write_text(json.dumps([{"opponent": "greedy", "games": 10, "win_rate": 0.9}]))
    dest = tmp_path / "shipped"
    cmd = "python -m training.evaluate az:az_test --opponents greedy --games 10"
    out = ship(
        run, "az_test", "3-4 players", "python -m training.search_train ...", [evaluation], [cmd], True, dest
    )
    meta = json.loads(out.read_text())
    assert (dest / "az_test.zip").read_bytes() == (run / "best.zip").read_bytes()
    assert meta["game"] == {"players": [3, 4], "modules": []} and meta["default"] is True
    assert (meta["observation_size"], meta["num_actions"]) == (497, 72)
    assert meta["training"]["wall_seconds"] == 90.5 and len(meta["training"]["pieces"]) == 2
    assert meta["training"]["selfplay_positions_per_s"] == 50.0
    assert meta["training_curve"][0] == {"iteration": 0, "gate_win_rate": 0.5}
    assert meta["evaluation"] == [{"opponent": "greedy", "games": 10, "win_rate": 0.9, "command": cmd}]
    assert meta["evaluation_command"] == cmd
    assert meta["config"]["players"] == [3, 4]


def test_a_snapshot_ships_with_the_facts_of_its_iterations_only(tmp_path: Path) -> None:
    run = fake_run(tmp_path)
    state_file = run / "checkpoints" / "state.json"
    state = json.loads(state_file.read_text())
    # the run's time at the end of each iteration: 20 s, 40 s, then 60 s + 25 s into the second piece
    for row, wall, accepted in zip(state["metrics"], [20.0, 40.0, 85.0], [1, 0, 1], strict=True):
        row.update(wall_seconds=wall, gate_accepted=accepted)
    state_file.write_text(json.dumps(state))
    (run / "snapshots").mkdir()
    shutil.copyfile(run / "best.zip", run / "snapshots" / "best-0001.zip")
    shutil.copyfile(run / "best.zip", run / "snapshots" / "best-0003.zip")
    with pytest.raises(CliError, match=r"--iteration 2: no snapshot .*best-0001.zip, best-0003.zip"):
        ship(run, "az_x", "d", "c", [], [], False, tmp_path / "out", iteration=2)
    meta = json.loads(ship(run, "az_x", "d", "c", [], [], False, tmp_path / "out", iteration=1).read_text())
    assert meta["source"].endswith("best-0001.zip")
    training = meta["training"]
    assert (training["iterations"], training["positions"], training["networks_accepted"]) == (1, 100, 1)
    assert training["pieces"] == [
        {"resumed": False, "from_iteration": 0, "to_iteration": 1, "wall_seconds": 20.0}
    ]
    assert training["wall_seconds"] == 20.0 and len(meta["training_curve"]) == 1
    # the last iteration falls in the second piece: the first piece whole, the second up to the row's time
    meta = json.loads(ship(run, "az_x", "d", "c", [], [], False, tmp_path / "out", iteration=3).read_text())
    assert [p["wall_seconds"] for p in meta["training"]["pieces"]] == [60.0, 25.0]
    assert meta["training"]["wall_seconds"] == 85.0


def test_a_snapshot_of_a_run_without_row_times_is_refused(tmp_path: Path) -> None:
    run = fake_run(tmp_path)
    (run / "snapshots").mkdir()
    shutil.copyfile(run / "best.zip", run / "snapshots" / "best-0002.zip")
    with pytest.raises(CliError, match="do not say when iteration 1 ended"):
        ship(run, "az_x", "d", "c", [], [], False, tmp_path / "out", iteration=2)
    with pytest.raises(CliError, match="--iteration 0: must be >= 1"):
        ship(run, "az_x", "d", "c", [], [], False, tmp_path / "out", iteration=0)


def test_ship_refuses_an_unfinished_run_and_a_bad_name(tmp_path: Path) -> None:
    run = fake_run(tmp_path)
    with pytest.raises(CliError, match="name 'az-2p'"):
        ship(run, "az-2p", "d", "c", [], [], False, tmp_path / "out")
    with pytest.raises(CliError, match="1 given for 0 --evaluation"):
        ship(run, "az_2p", "d", "c", [], ["python -m training.evaluate ..."], False, tmp_path / "out")
    (run / "checkpoints" / "state.json").unlink()
    with pytest.raises(CliError, match="state.json is missing"):
        ship(run, "az_2p", "d", "c", [], [], False, tmp_path / "out")


def test_a_run_without_pieces_is_refused(tmp_path: Path) -> None:
    run = fake_run(tmp_path)
    state_file = run / "checkpoints" / "state.json"
    state = json.loads(state_file.read_text())
    del state["pieces"]
    state_file.write_text(json.dumps(state))
    with pytest.raises(CliError, match="lists no pieces"):
        ship(run, "az_x", "d", "c", [], [], False, tmp_path / "out")


def test_default_takes_the_mark_from_the_model_it_replaces(tmp_path: Path) -> None:
    run = fake_run(tmp_path)  # a 3-4 player base-game network
    dest = tmp_path / "shipped"
    dest.mkdir()
    olds = {
        "old_3_4p": ({"players": [3, 4], "modules": []}, True),
        "old_2p": ({"players": [2], "modules": []}, True),
        "old_modules": ({"players": [3, 4], "modules": ["cities"]}, True),
        "other_3_4p": ({"players": [3, 4], "modules": []}, False),
    }
    for name, (game, default) in olds.items():
        (dest / f"{name}.json").write_text(json.dumps({"name": name, "game": game, "default": default}))
    ship(run, "new_3_4p", "d", "c", [], [], False, dest)  # not --default: nothing changes
    assert json.loads((dest / "old_3_4p.json").read_text())["default"] is True
    ship(run, "new_3_4p", "d", "c", [], [], True, dest)
    marks = {p.stem: json.loads(p.read_text())["default"] for p in dest.glob("*.json")}
    assert marks == {
        "new_3_4p": True,
        "old_3_4p": False,
        "old_2p": True,
        "old_modules": True,
        "other_3_4p": False,
    }


def test_default_refuses_to_leave_a_player_count_without_one(tmp_path: Path) -> None:
    run = fake_run(tmp_path)
    dest = tmp_path / "shipped"
    dest.mkdir()
    wide = {"name": "wide", "game": {"players": [2, 3, 4], "modules": []}, "default": True}
    (dest / "wide.json").write_text(json.dumps(wide))
    with pytest.raises(CliError, match=r"'wide' is the default for players \[2, 3, 4\].*players \[2\]"):
        ship(run, "new_3_4p", "d", "c", [], [], True, dest)
    assert json.loads((dest / "wide.json").read_text())["default"] is True
    assert not (dest / "new_3_4p.zip").exists()


def test_default_model_prefers_the_network_marked_default(monkeypatch: pytest.MonkeyPatch) -> None:
    game = {"players": [2], "modules": []}
    fake = {"ppo_2p": {"game": game}, "zz_2p": {"game": game, "default": True}, "aa_2p": {"game": game}}
    monkeypatch.setattr(models, "_load_all", lambda: fake)
    assert models.default_model(2, ()) == "zz_2p"
    fake["zz_2p"]["default"] = False
    assert models.default_model(2, ()) == "aa_2p"  # then by name
    assert models.default_model(3, ()) is None


def test_az_options_ship_with_the_network_and_bad_ones_are_refused(tmp_path: Path) -> None:
    run = fake_run(tmp_path)
    out = ship(run, "az_opt", "d", "c", [], [], False, tmp_path / "out", az_options=["ptemp=1.5", "c=2"])
    assert json.loads(out.read_text())["az"] == {"ptemp": 1.5, "c": 2.0}
    assert "az" not in json.loads(ship(run, "az_none", "d", "c", [], [], False, tmp_path / "out").read_text())
    for given, words in [
        (["sims=50"], r"sets az option\(s\) \['sims'\]; a network may set only c, fpu, ptemp"),
        (["ptemp=0"], "ptemp=0.0"),
        (["ptemp"], "'ptemp' must be key=value"),
        (["ptemp=1.5", "ptemp=2"], "'ptemp' given twice"),
    ]:
        with pytest.raises(CliError, match=words):
            ship(run, "az_bad", "d", "c", [], [], False, tmp_path / "out", az_options=given)
    assert not (tmp_path / "out" / "az_bad.json").exists()


def test_a_refit_of_a_run_ships_with_the_runs_pieces(tmp_path: Path) -> None:
    run = fake_run(tmp_path)
    refit = tmp_path / "refit"
    refit.mkdir()
    shutil.copy(run / "best.zip", refit / "best.zip")
    (refit / "config.yaml").write_text(
        yaml.safe_dump({"model": str(run / "best.zip"), "players": [3, 4], "modules": []})
    )
    (refit / "metrics.json").write_text(json.dumps([{"step": 0, "mse": 0.9}]))
    (refit / "fit.json").write_text(json.dumps({"model": str(run / "best.zip"), "wall_seconds": 12.0}))
    meta = json.loads(ship(refit, "az_refit", "a refit", "python -m training.critic_fit", [], [], False,
                           tmp_path / "shipped").read_text())  # fmt: skip
    base = meta["training"]["base_training"]
    assert base["run"] == str(run) and base["wall_seconds"] == 90.5 and len(base["pieces"]) == 2
    assert base["config"]["players"] == [3, 4] and meta["training"]["wall_seconds"] == 12.0
    # a refit of a snapshot lists only the iterations the snapshot had
    state_file = run / "checkpoints" / "state.json"
    state = json.loads(state_file.read_text())
    for row, wall in zip(state["metrics"], [20.0, 40.0, 85.0], strict=True):
        row.update(wall_seconds=wall)
    state_file.write_text(json.dumps(state))
    (run / "snapshots").mkdir()
    shutil.copyfile(run / "best.zip", run / "snapshots" / "best-0001.zip")
    snapshot = {"model": str(run / "snapshots" / "best-0001.zip"), "wall_seconds": 12.0}
    (refit / "fit.json").write_text(json.dumps(snapshot))
    meta = json.loads(ship(refit, "az_refit1", "a refit", "python -m training.critic_fit", [], [], False,
                           tmp_path / "shipped").read_text())  # fmt: skip
    base = meta["training"]["base_training"]
    assert (base["iterations"], base["wall_seconds"], len(base["pieces"])) == (1, 20.0, 1)
    (refit / "fit.json").write_text(
        json.dumps({"model": str(tmp_path / "elsewhere.zip"), "wall_seconds": 1.0})
    )
    meta = json.loads(ship(refit, "az_refit2", "a refit", "python -m training.critic_fit", [], [], False,
                           tmp_path / "shipped").read_text())  # fmt: skip
    assert "base_training" not in meta["training"]
