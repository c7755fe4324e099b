"""A checkpoint is written as one step: a run killed in the middle of writing one resumes from a whole one.

The kill is simulated by a write that raises (:class:`Killed`) at a chosen point of the
checkpoint; the resumed run must see either the checkpoint before it or the new one, all
of it, never the new files of a step with the state of the step before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tests.helpers.search_runs import tiny
from training.expert_iteration import config as search_config
from training.expert_iteration.learner import make_optimizer
from training.expert_iteration.loop import Run, start_learning
from training.expert_iteration.network import fresh_model
from training.expert_iteration.replay import ReplayBuffer


class Killed(BaseException):
    """The process was killed here (a BaseException: nothing on the way catches it)."""


def positions(policy: Any, size: int, seed: int) -> dict[str, np.ndarray]:
    n_obs, n_act = policy.observation_space.shape[0], policy.action_space.n
    rng = np.random.default_rng(seed)
    return {
        "obs": rng.random((size, n_obs), dtype=np.float32),
        "mask": np.ones((size, n_act), bool),
        "policy": np.full((size, n_act), 1 / n_act, np.float32),
        "value": np.sign(rng.random(size) - 0.5).astype(np.float32),
        "q": np.zeros(size, np.float32),
        "seat": np.zeros(size, np.int8),
        "phase": np.zeros(size, np.float32),
    }


def first_checkpoint(tmp_path: Path) -> tuple[Run, Any, Any, ReplayBuffer]:
    """A run's checkpoint after its first self-play step (16 positions in the buffer)."""
    cfg = search_config.from_dict(tiny(tmp_path), check_specs=False)
    run, learner = Run(cfg), fresh_model(cfg)
    optimizer = make_optimizer(learner.policy, cfg)
    n_obs, n_act = learner.policy.observation_space.shape[0], learner.policy.action_space.n
    buffer = ReplayBuffer(cfg.buffer.capacity, n_obs, n_act)
    buffer.add(positions(learner.policy, 16, seed=0))
    run.positions, run.step = 16, "train"
    run.save(learner, b"best-0", optimizer, buffer, "selfplay")
    return run, learner, optimizer, buffer


def resumed(run: Run) -> tuple[Run, Any]:
    again = Run(run.cfg)
    return again, start_learning(again, resume=True, log=lambda *_: None)


def weights(learner: Any) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in learner.policy.state_dict().items()}


def test_a_kill_after_the_new_buffer_resumes_with_the_state_that_goes_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, learner, optimizer, buffer = first_checkpoint(tmp_path)
    buffer.add(positions(learner.policy, 16, seed=1))  # a second self-play step
    run.positions = 32
    replace = Path.replace

    def killed_at_the_state(self: Path, target: Any) -> Path:
        if Path(target).name == "state.json":
            raise Killed
        return replace(self, target)

    monkeypatch.setattr(Path, "replace", killed_at_the_state)
    with pytest.raises(Killed):
        run.save(learner, b"best-0", optimizer, buffer, "selfplay")
    monkeypatch.undo()
    again, learning = resumed(run)
    # the buffer and the state of one step: its positions are not added a second time
    assert again.positions == learning.buffer.added == learning.buffer.size


def test_a_kill_between_the_learner_and_the_optimizer_resumes_from_the_step_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, learner, optimizer, buffer = first_checkpoint(tmp_path)
    before = weights(learner)
    with torch.no_grad():
        for p in learner.policy.parameters():
            p.add_(1.0)  # the train step changed the network
    run.step = "gate"

    save = torch.save

    def killed_at_the_optimizer(obj: Any, f: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(f, (str, Path)) and "optimizer" in Path(f).name:
            raise Killed
        save(obj, f, *args, **kwargs)

    monkeypatch.setattr(torch, "save", killed_at_the_optimizer)  # written after the learner's file
    with pytest.raises(Killed):
        run.save(learner, b"best-0", optimizer, buffer, "train")
    monkeypatch.undo()
    again, learning = resumed(run)
    assert again.step == "train"  # the train step runs again, from the network it started with
    after = weights(learning.learner)
    assert all(torch.equal(after[k], before[k]) for k in before)


class SavedSteps:
    """A stand-in for the PPO model: its checkpoint .zip says at which step it was saved."""

    def __init__(self) -> None:
        from types import SimpleNamespace

        self.num_timesteps = 0
        self.env = SimpleNamespace(pool=SimpleNamespace(snapshot_paths=[]))

    def save(self, path: Any) -> None:
        Path(path).write_text(f"model at {self.num_timesteps}")

    def get_env(self) -> Any:
        return self.env


def ppo_checkpoint(tmp_path: Path, steps: int) -> Any:
    """A PPO run's callback that saved its checkpoints at ``steps`` timesteps."""
    from training.common.budgets import WallBudget
    from training.ppo.callbacks import SelfPlayCallback

    state = {"best_score": -1.0, "best_timesteps": None, "eval_history": [], "pretrain": None}
    callback = SelfPlayCallback(None, tmp_path, state, WallBudget(None))  # type: ignore[arg-type]
    callback.model = SavedSteps()
    (tmp_path / "checkpoints").mkdir(exist_ok=True)  # as the run makes it
    at_step(callback, steps)
    callback.save_checkpoint(f"step_{steps}")
    return callback


def at_step(callback: Any, steps: int) -> None:
    callback.model.num_timesteps = callback.num_timesteps = steps


def saved_at(ckpt: Path, stem: str) -> tuple[str, int]:
    """What a PPO checkpoint's .zip and its .json sidecar say of its step."""
    return (ckpt / f"{stem}.zip").read_text(), json.loads((ckpt / f"{stem}.json").read_text())[
        "num_timesteps"
    ]


def test_a_ppo_checkpoint_killed_between_its_zip_and_its_sidecar_stays_the_one_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    callback = ppo_checkpoint(tmp_path, 100)
    at_step(callback, 200)
    write_text = Path.write_text

    def killed_at_the_sidecar(self: Path, *args: Any, **kwargs: Any) -> int:
        if self.name.startswith("latest") and self.name.endswith(".json"):
            raise Killed
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", killed_at_the_sidecar)
    with pytest.raises(Killed):
        callback.save_checkpoint("step_200")
    monkeypatch.undo()
    assert saved_at(tmp_path / "checkpoints", "latest") == ("model at 100", 100)


def test_a_ppo_checkpoint_killed_after_its_commit_is_finished_by_the_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training.ppo.loop import resume_meta

    callback = ppo_checkpoint(tmp_path, 100)
    at_step(callback, 200)
    replace = Path.replace

    def killed_at_the_latest_zip(self: Path, target: Any) -> Path:
        if Path(target).name == "latest.zip":
            raise Killed
        return replace(self, target)

    monkeypatch.setattr(Path, "replace", killed_at_the_latest_zip)
    with pytest.raises(Killed):
        callback.save_checkpoint("step_200")
    monkeypatch.undo()
    ckpt = tmp_path / "checkpoints"
    assert resume_meta(str(ckpt / "latest.zip"))["num_timesteps"] == 200
    assert saved_at(ckpt, "latest") == ("model at 200", 200) == saved_at(ckpt, "step_200")
    assert sorted(p.name for p in ckpt.iterdir()) == [
        "latest.json",
        "latest.zip",
        "step_100.json",
        "step_100.zip",
        "step_200.json",
        "step_200.zip",
    ]
