"""The training commands refuse what they cannot honour, before they write anything.

Why: each case here once ran on and left wrong files: a new run into a folder of an earlier one kept
that run's networks (a stop in iteration 0 reported the old ``best.zip``, a later ``--resume`` trained
the old network); a resume with other players trained a 2-player network on 3-4 player games and
shipped it as a 3-4 player one; a resume with other ``ppo`` or ``network`` settings kept the saved
ones while ``config.yaml`` claimed the new; ``eval.opponents: []`` and network layouts the search
cannot run failed after the training they spoiled; a repeated ``selfplay.opponents`` spec kept the
later ones from playing; a last step on an ``eval.every`` mark was evaluated twice.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("sb3_contrib")

from tests.helpers.search_runs import tiny
from training.common.cli import CliError, run_cli
from training.common.config import ConfigError
from training.expert_iteration import config as search_config
from training.ppo import config as ppo_config


def ppo_raw(out: Path, **changes: Any) -> dict[str, Any]:
    """The smallest PPO run: 2 rollouts of 32 steps, a checkpoint and an evaluation after each."""
    raw: dict[str, Any] = {
        "n_envs": 4,
        "total_timesteps": 64,
        "output_dir": str(out),
        "checkpoint_every": 32,
        "torch_threads": 1,
        "network": {"net_arch": [8]},
        "ppo": {"n_steps": 8, "batch_size": 16, "n_epochs": 1},
        "opponents": {"pool": [{"spec": "random"}]},
        "eval": {"every": 32, "games": 2, "opponents": ["random"]},
    }
    raw.update(changes)
    return raw


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 2-player PPO run (a few seconds), copied by each test that changes it."""
    from training.ppo.loop import train

    out = tmp_path_factory.mktemp("ppo") / "run"
    train(ppo_config.from_dict(ppo_raw(out)), progress_bar=False)
    return out


def copy_of(run: Path, tmp_path: Path) -> Path:
    shutil.copytree(run, tmp_path / "run")
    return tmp_path / "run"


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


# ---------------------------------------------------------------------------
# 1. a new run into a folder that holds a run


def earlier_search_run(out: Path, players: int = 2) -> Path:
    """A search run's folder after its first checkpoint (a fresh network, no game played)."""
    from training.expert_iteration.learner import make_optimizer
    from training.expert_iteration.loop import Run
    from training.expert_iteration.network import fresh_model, game_sizes
    from training.expert_iteration.replay import ReplayBuffer

    cfg = search_config.from_dict(tiny(out.parent, players=players, snapshot_every=1), check_specs=False)
    run, learner = Run(cfg), fresh_model(cfg)
    run.begin_piece(False)
    buffer = ReplayBuffer(cfg.buffer.capacity, *game_sizes(cfg))
    run.save(learner, b"old best", make_optimizer(learner.policy, cfg), buffer, "selfplay")
    run.iteration = 1
    run.save(learner, b"old best", make_optimizer(learner.policy, cfg), buffer, "gate")
    (run.out / "config.yaml").write_text(yaml.safe_dump(search_config.to_dict(cfg), sort_keys=False))
    return run.out


def test_a_new_search_run_into_a_folder_of_a_run_is_refused_before_writing(tmp_path: Path) -> None:
    from training.expert_iteration.loop import search_train

    out = earlier_search_run(tmp_path / "run")
    before = files_of(out)
    assert {"checkpoints/learner.zip", "best.zip", "snapshots/best-0001.zip"} <= set(before)
    cfg = search_config.from_dict(tiny(tmp_path, iterations=3), check_specs=False)
    with pytest.raises(CliError, match="already holds a run: pass --resume to go on with it, or --force"):
        search_train(cfg, progress=False, log=lambda *_: None)
    assert files_of(out) == before  # config.yaml not rewritten, nothing added
    with pytest.raises(CliError, match="--resume and --force"):
        search_train(cfg, resume=True, progress=False, log=lambda *_: None, force=True)


def test_force_empties_a_search_runs_folder_and_only_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from training import search_train as command
    from training.expert_iteration import loop

    out = earlier_search_run(tmp_path / "run")
    config = tmp_path / "search.yaml"
    config.write_text(yaml.safe_dump(tiny(tmp_path)))
    argv = ["--config", str(config), "--no-progress"]
    assert run_cli(command.main, argv, prog="search_train") == 2
    assert f"output_dir {str(out)!r} already holds a run: pass --resume" in capsys.readouterr().err

    (out / "notes.txt").write_text("mine")  # not a run's: --force deletes nothing
    assert run_cli(command.main, [*argv, "--force"], prog="search_train") == 2
    assert "holds 'notes.txt', not something a training run writes: not emptied" in capsys.readouterr().err
    assert (out / "checkpoints" / "learner.zip").is_file()
    (out / "notes.txt").unlink()

    # --force: the run starts in an empty folder (its steps not played here: a stop before the first)
    monkeypatch.setattr(loop, "run_steps", lambda *args: True)
    assert run_cli(command.main, [*argv, "--force"], prog="search_train") == 0
    left = set(files_of(out))
    assert not {p for p in left if p.startswith(("checkpoints/", "snapshots/")) or p == "best.zip"}
    assert {"config.yaml", "summary.json"} <= left


def test_a_new_ppo_run_into_a_folder_of_a_run_is_refused_unless_forced(ppo_run: Path, tmp_path: Path) -> None:
    from training.ppo.loop import train

    out = copy_of(ppo_run, tmp_path)
    before = files_of(out)
    cfg = ppo_config.from_dict(
        ppo_raw(out, total_timesteps=32, eval={"every": 0, "games": 2, "opponents": ["random"]})
    )
    latest = out / "checkpoints" / "latest.zip"
    with pytest.raises(CliError, match=f"already holds a run: pass --resume {latest} to go on with it"):
        train(cfg, progress_bar=False)
    assert files_of(out) == before
    summary = train(cfg, progress_bar=False, force=True)
    assert summary["timesteps"] == 32
    checkpoints = {p.stem for p in (out / "checkpoints").iterdir()}
    assert checkpoints == {"latest", "best", "step_32"}  # the earlier run's step_64 went with the rest
    assert json.loads((out / "checkpoints" / "best.json").read_text())["best_timesteps"] == 32


# ---------------------------------------------------------------------------
# 2. a resume for another game; shipping takes the network's game


def test_a_ppo_resume_for_other_players_is_refused_naming_both_games(ppo_run: Path, tmp_path: Path) -> None:
    from training.ppo.loop import train

    out = copy_of(ppo_run, tmp_path)
    before = files_of(out)
    cfg = ppo_config.from_dict(ppo_raw(out, players=[3, 4], total_timesteps=128))
    with pytest.raises(
        ConfigError, match="is a network for 2 players, base game, but the config gives 3 or 4"
    ):
        train(cfg, resume=str(out / "checkpoints" / "latest.zip"), progress_bar=False)
    assert files_of(out) == before


def test_a_search_resume_for_other_players_is_refused_before_config_yaml_is_written(tmp_path: Path) -> None:
    from training.expert_iteration.loop import search_train

    out = earlier_search_run(tmp_path / "run")
    before = files_of(out)
    cfg = search_config.from_dict(tiny(tmp_path, players=[3, 4], iterations=3), check_specs=False)
    with pytest.raises(CliError, match="is a network for 2 players, base game, but the config gives 3 or 4"):
        search_train(cfg, resume=True, progress=False, log=lambda *_: None)
    assert files_of(out) == before


def test_ship_names_the_networks_own_game_and_refuses_a_config_yaml_of_another(tmp_path: Path) -> None:
    from training.expert_iteration.ship import ship

    out = earlier_search_run(tmp_path / "run")
    shutil.copyfile(out / "checkpoints" / "learner.zip", out / "best.zip")  # a 2-player network
    config = yaml.safe_load((out / "config.yaml").read_text())
    meta = json.loads(ship(out, "az_x", "d", "c", [], [], False, tmp_path / "dest").read_text())
    assert meta["game"] == {"players": [2], "modules": []}
    (out / "config.yaml").write_text(
        yaml.safe_dump({**config, "players": [3, 4]})
    )  # as a refused resume left it
    with pytest.raises(
        CliError, match="is a network for 2 players, base game, but its run's config.yaml names 3"
    ):
        ship(out, "az_y", "d", "c", [], [], False, tmp_path / "dest")
    assert not (tmp_path / "dest" / "az_y.json").exists()


# ---------------------------------------------------------------------------
# 3. a PPO resume with other network or PPO settings


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (
            {"ppo": {"n_steps": 8, "batch_size": 16, "n_epochs": 1, "learning_rate": 1e-3}},
            "ppo.learning_rate",
        ),
        ({"network": {"net_arch": [16]}}, "network.net_arch [8], the config gives [16]"),
    ],
)
def test_a_ppo_resume_with_other_settings_is_refused_naming_the_key(
    ppo_run: Path, tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    from training.ppo.loop import train
    from training.ppo.model import check_resume

    out = copy_of(ppo_run, tmp_path)
    latest = str(out / "checkpoints" / "latest.zip")
    before = files_of(out)
    cfg = ppo_config.from_dict(ppo_raw(out, total_timesteps=128, **change))
    with pytest.raises(ConfigError, match=re.escape(f"--resume: the run was trained with {named}")):
        train(cfg, resume=latest, progress_bar=False)
    assert files_of(out) == before
    check_resume(latest, ppo_config.from_dict(ppo_raw(out, total_timesteps=128)))  # only the length: fine
    # a checkpoint whose sidecar predates the config in it: the run folder's config.yaml says the same
    sidecar = out / "checkpoints" / "latest.json"
    sidecar.write_text(
        json.dumps({k: v for k, v in json.loads(sidecar.read_text()).items() if k != "config"})
    )
    with pytest.raises(ConfigError, match=named.split(" ")[0]):
        check_resume(latest, cfg)


# ---------------------------------------------------------------------------
# 4, 5. configs that would fail only after training


def test_ppo_eval_opponents_must_not_be_empty() -> None:
    with pytest.raises(ConfigError, match=r"^eval\.opponents: must not be empty"):
        ppo_config.from_dict({"eval": {"opponents": []}})


@pytest.mark.parametrize(
    ("network", "message"),
    [
        ({"net_arch": [64]}, r"network\.net_arch: must be two layer widths, got \[64\]"),
        ({"net_arch": [8, 8, 8]}, r"network\.net_arch: must be two layer widths"),
        ({"activation": "tanh"}, r"network\.activation: must be relu"),
        ({"activation": "gelu"}, r"network\.activation: must be relu"),
    ],
)
def test_search_network_layouts_the_search_cannot_run_are_refused(
    network: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=f"^{message}"):
        search_config.from_dict({"network": network}, check_specs=False)
    # read only for a fresh network: a run from a model ignores the section
    assert search_config.from_dict({"network": network, "init": "az_2p"}, check_specs=False)


# ---------------------------------------------------------------------------
# 6. repeated self-play opponents


def test_a_repeated_selfplay_opponent_is_a_weight_and_every_spec_plays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from training.expert_iteration import selfplay

    specs = ["greedy", "greedy", "random"]
    drawn = Counter(selfplay.opponent_spec(specs, 0, 3, g) for g in range(600))
    assert set(drawn) == {"greedy", "random"} and 0.25 < drawn["random"] / 600 < 0.42

    # the job itself: every game has opponents; the games are not played, their opponents counted
    monkeypatch.setattr(selfplay, "cached_agent", lambda *args, **kwargs: None)
    monkeypatch.setattr(
        selfplay, "play_games", lambda az, games, *rest: {g.index: ([], g.label) for g in games}
    )
    monkeypatch.setattr(selfplay, "concat", lambda parts: parts)
    sp = {"opponents": specs, "opponent_share": 1.0, "max_turns": 30, "batched": False}
    sp.update(batched_device="cpu", batched_games=1, batched_lane_trees=1, sims=2, c=1.0, fpu=0.0, batch=1)
    job = {"network": b"", "iteration": 3, "seed": 0, "games": list(range(60)), "player_counts": [2]}
    labels = selfplay.selfplay_job({**job, "modules": [], "selfplay": sp})["records"]
    assert Counter(labels)["random"] == sum(
        selfplay.opponent_spec(specs, 0, 3, g) == "random" for g in range(60)
    )
    assert Counter(labels)["random"] > 0
