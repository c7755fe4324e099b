"""A training command stopped (Ctrl-C, SIGTERM) after its first checkpoint says in one line where its work is
saved and the command that goes on from it, as the match commands do; that command does go on.

Why: the PPO and search-training commands printed a bare ``stopped (Ctrl-C)``, naming neither the folder
nor how to resume (PPO's ``--resume`` takes the checkpoint file, not a flag alone)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.helpers.search_runs import tiny
from training.common.cli import run_cli


def last_line(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.slow
def test_search_training_stopped_after_a_checkpoint_names_its_folder_and_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from training import search_train
    from training.expert_iteration import loop

    config = tmp_path / "search.yaml"
    config.write_text(yaml.safe_dump(tiny(tmp_path, eval__every=0)))
    real = loop.STEP_FUNCTIONS["train"]

    def stopped(*args: object) -> None:  # self-play's step is checkpointed, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setitem(loop.STEP_FUNCTIONS, "train", stopped)
    argv = ["--config", str(config), "--no-progress"]
    assert run_cli(search_train.main, argv, prog="python -m training.search_train") == 130
    command = f"python -m training.search_train --config {config} --no-progress --resume"
    assert last_line(capsys) == (
        f"python -m training.search_train: stopped (Ctrl-C); what was finished is saved in "
        f"{tmp_path / 'run'}: go on with {command}"
    )
    monkeypatch.setitem(loop.STEP_FUNCTIONS, "train", real)
    assert run_cli(search_train.main, command.split()[3:], prog="python -m training.search_train") == 0
    assert (tmp_path / "run" / "best.zip").is_file()


@pytest.mark.slow
def test_ppo_training_stopped_after_a_checkpoint_names_the_checkpoint_to_resume_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from training import train as train_command
    from training.ppo import callbacks

    raw = {
        "n_envs": 4,
        "total_timesteps": 512,
        "output_dir": str(tmp_path / "run"),
        "checkpoint_every": 128,
        "torch_threads": 1,
        "network": {"net_arch": [16]},
        "ppo": {"n_steps": 32, "batch_size": 64, "n_epochs": 1},
        "opponents": {"pool": [{"spec": "random"}]},
        "eval": {"every": 0},
    }
    config = tmp_path / "ppo.yaml"
    config.write_text(yaml.safe_dump(raw))
    real = callbacks.SelfPlayCallback.save_checkpoint

    def save_then_stop(self: callbacks.SelfPlayCallback, name: str, also_latest: bool = True) -> None:
        real(self, name, also_latest)
        if also_latest:
            raise KeyboardInterrupt

    monkeypatch.setattr(callbacks.SelfPlayCallback, "save_checkpoint", save_then_stop)
    argv = ["--config", str(config), "--no-progress"]
    assert run_cli(train_command.main, argv, prog="python -m training.train") == 130
    latest = tmp_path / "run" / "checkpoints" / "latest.zip"
    command = f"python -m training.train --config {config} --no-progress --resume {latest}"
    assert last_line(capsys) == (
        f"python -m training.train: stopped (Ctrl-C); what was finished is saved in {tmp_path / 'run'}: "
        f"go on with {command}"
    )
    monkeypatch.undo()
    assert run_cli(train_command.main, command.split()[3:], prog="python -m training.train") == 0
    assert (tmp_path / "run" / "final.zip").is_file()
