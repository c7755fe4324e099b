"""The RLlib recipe (training/rllib/, agents/players/rllib.py, docs/tutorials/rllib.md): trains, resumes, plays as an agent.

Runs only where the ``rllib`` extra is installed (it pins gymnasium 1.2.2, so CI gives it a
virtual environment of its own: .ci/run); elsewhere the whole file skips. Ray's ``local_mode``
is gone from Ray 2.60 (it raises), so "local" here is ``num_env_runners: 0``: the games are
sampled and learnt in this process, with one Ray instance for the file.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402 - after the skip

import agents  # noqa: E402
from training.common.cli import CliError  # noqa: E402
from training.common.config import ConfigError  # noqa: E402
from training.rllib import config as config_mod  # noqa: E402
from training.rllib.env import SplendorMultiAgentEnv, env_config  # noqa: E402
from training.rllib.loop import check_resume, train  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ALL_MODULES = ["cities", "trading_posts", "orient", "strongholds"]
#: One short iteration in this process: what every training test runs.
TINY = [
    "iterations=1",
    "env_runners.num_env_runners=0",
    "ppo.train_batch_size=200",
    "ppo.minibatch_size=100",
    "ppo.num_epochs=1",
    "network.hidden=[32]",
    "eval.games=2",
    "checkpoint_every=1",
]


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def tiny_config(tmp_path: Path, *extra: str) -> config_mod.RLlibConfig:
    return config_mod.load(ROOT / "configs/rllib_ppo_2p.yaml", [*TINY, f"output_dir={tmp_path}", *extra])


@pytest.mark.parametrize(("players", "modules"), [(2, []), (3, ["cities"]), (4, ALL_MODULES)])
def test_env_adapter_gives_the_masking_module_keys_and_plays_legal_games(
    players: int, modules: list[str]
) -> None:
    env = SplendorMultiAgentEnv(env_config(players, modules))
    space = env.observation_space["player_0"]
    assert set(space.spaces) == {"observations", "action_mask"}
    assert space["action_mask"].dtype == np.float32
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    while True:
        ((agent, o),) = obs.items()  # one observation: the seat on move
        assert o["action_mask"].dtype == np.float32 and space.contains(o)
        obs, rewards, terminated, truncated, _ = env.step(
            {agent: int(rng.choice(np.flatnonzero(o["action_mask"])))}
        )
        if terminated["__all__"] or truncated["__all__"]:
            break
    assert set(obs) == set(env.possible_agents)  # everyone sees the end
    assert terminated["__all__"] and sorted(rewards.values())[-1] == 1.0


def test_config_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^ppo.bogus: unknown key 'bogus'"):
        tiny_config(tmp_path, "ppo.bogus=1")
    with pytest.raises(ConfigError, match=r"^players: must be <= 4"):
        tiny_config(tmp_path, "players=5")
    with pytest.raises(ConfigError, match=r"^modules\[0\]: unknown module 'castles'"):
        tiny_config(tmp_path, "modules=[castles]")
    with pytest.raises(ConfigError, match=r"^ppo.minibatch_size: must be <= ppo.train_batch_size"):
        tiny_config(tmp_path, "ppo.minibatch_size=400")
    with pytest.raises(ConfigError, match=r"^eval.opponents\[0\]: unknown or unusable agent spec 'nobody'"):
        tiny_config(tmp_path, "eval.opponents=[nobody]")
    with pytest.raises(CliError, match="--resume: no checkpoint in"):
        check_resume(tiny_config(tmp_path))


def test_the_command_refuses_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from training.common.cli import run_cli
    from training.rllib_ppo import main

    config = str(ROOT / "configs/rllib_ppo_2p.yaml")
    for argv, message in [
        (["--resume", "--set", f"output_dir={tmp_path}"], "--resume: no checkpoint in"),
        (["--set", "env_runners.num_env_runners=-1"], "env_runners.num_env_runners: must be >= 0"),
        (["--set", "eval.opponents=[rllib:nowhere]"], "eval.opponents[0]: unknown or unusable agent spec"),
    ]:
        assert run_cli(main, ["--config", config, *argv], prog="rllib_ppo") == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"rllib_ppo: error: {message}") and "\n" not in err, err
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_address_is_the_cluster_ray_joins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--address`` goes to ``ray.init``; a process already in Ray cannot join another cluster."""
    seen: dict[str, object] = {}

    class Joined(Exception):
        pass

    def fake_init(**kwargs: object) -> None:
        seen.update(kwargs)
        raise Joined

    monkeypatch.setenv(
        "RAY_AUTH_MODE", "disabled"
    )  # left as set: the process's other Ray tests see no change
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", fake_init)
    with pytest.raises(Joined):
        train(tiny_config(tmp_path), address="10.0.0.1:6379")
    assert seen["address"] == "10.0.0.1:6379"
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    with pytest.raises(CliError, match="--address: Ray is already initialised"):
        train(tiny_config(tmp_path), address="auto")


def test_the_agent_spec_refuses_a_folder_without_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no RLlib checkpoint at"):
        agents.make(f"rllib:{tmp_path}")


@pytest.mark.slow
@pytest.mark.parametrize(("players", "modules"), [(2, []), (4, ALL_MODULES)])
def test_one_iteration_trains_saves_evaluates_and_plays_as_an_agent(
    ray_local: None, tmp_path: Path, players: int, modules: list[str]
) -> None:
    cfg = tiny_config(tmp_path, f"players={players}", f"modules={json.dumps(modules)}")
    summary = train(cfg, log=lambda _line: None)
    assert summary["iterations"] == 1 and summary["env_steps"] >= 200
    assert [r["opponent"] for r in summary["eval"]] == ["random", "greedy"]
    assert all(r["games"] == 2 and r["players"] == players for r in summary["eval"])
    agent = agents.make(summary["agent_spec"], seed=0)
    agent.check_game(players, tuple(modules))
    with pytest.raises(ValueError, match="cannot play this game"):
        agent.check_game(2 if players != 2 else 3, tuple(modules))
    import splendor_env

    env = splendor_env.env(num_players=players, modules=tuple(modules))
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    action = agent.act(obs["observation"], obs["action_mask"])
    assert obs["action_mask"][action] == 1
    (tmp_path / "game.json").unlink()  # without it a module game's policy cannot say which modules it knows
    if modules:
        with pytest.raises(ValueError, match="plays module games but no game.json says which"):
            agents.make(summary["agent_spec"])
    else:
        assert agents.make(summary["agent_spec"]).game["players"] == [2]


@pytest.mark.slow
def test_resume_continues_the_checkpoint_up_to_the_iterations(ray_local: None, tmp_path: Path) -> None:
    train(tiny_config(tmp_path, "eval.games=0"), log=lambda _line: None)
    lines: list[str] = []
    summary = train(tiny_config(tmp_path, "eval.games=0", "iterations=2"), resume=True, log=lines.append)
    assert lines[0].startswith("resumed from") and "after 1 iterations" in lines[0]
    assert summary["iterations"] == 2 and summary["eval"] == []


@pytest.mark.slow
def test_a_run_stopped_after_a_checkpoint_names_its_folder_and_the_command_that_goes_on(
    ray_local: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from training.common.cli import run_cli
    from training.rllib import loop
    from training.rllib_ppo import main

    real = loop._save

    def save_then_stop(*args: object) -> None:  # Ctrl-C right after the first checkpoint
        real(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "_save", save_then_stop)
    sets = [x for value in [*TINY, "eval.games=0", f"output_dir={tmp_path}"] for x in ("--set", value)]
    argv = ["--config", str(ROOT / "configs/rllib_ppo_2p.yaml"), *sets]
    assert run_cli(main, argv, prog="python -m training.rllib_ppo") == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"python -m training.rllib_ppo: stopped (Ctrl-C); what was finished is saved in {tmp_path}: "
        f"go on with python -m training.rllib_ppo {' '.join(argv)} --resume"
    )
    monkeypatch.undo()
    assert (
        run_cli(main, [*argv, "--set", "iterations=2", "--resume"], prog="python -m training.rllib_ppo") == 0
    )
    assert json.loads((tmp_path / "summary.json").read_text())["iterations"] == 2


# The tutorial's blocks use the ```py fence, which tests/test_docs_code.py (```python only) leaves to this
# file: they need Ray RLlib. The budget shortens the run as that file's BUDGETS do.
TUTORIAL = ROOT / "docs/tutorials/rllib.md"
BUDGET = [
    ("iterations=20", "iterations=1"),
    ("games=100", "games=2"),
    ("games=20", "games=1"),
    (
        '"env_runners.num_env_runners=1"',
        '"env_runners.num_env_runners=0", "ppo.train_batch_size=200", "ppo.minibatch_size=100"',
    ),
]


@pytest.mark.slow
def test_tutorial_blocks_run(tmp_path: Path) -> None:
    text = TUTORIAL.read_text(encoding="utf-8")
    blocks = re.findall(r"^```py\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) >= 3
    source = "\n".join(blocks)
    for old, new in BUDGET:
        assert old in source, f"the tutorial no longer contains {old!r}"
        source = source.replace(old, new)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(source, str(TUTORIAL), "exec"), {"__name__": "__docs__"})  # noqa: S102
    finally:
        os.chdir(cwd)
        if ray.is_initialized():
            ray.shutdown()
    assert (tmp_path / "results/rllib_tutorial/summary.json").is_file()


@pytest.mark.slow
def test_a_run_on_a_real_cluster_survives_the_loss_of_its_env_runner_s_node(tmp_path: Path) -> None:
    """``--address`` against a head and a node started by ``ray start`` (token authentication on), not a
    mocked ``ray.init``. The head has no CPU, so the one env runner samples on the joined node; that node's
    raylet is SIGKILLed while the runner works in the second of three iterations, and a new node joins (a lost
    machine replaced). Ray restarts the runner's actor there, RLlib gives it the current weights, and the run ends
    with each iteration's ``train_batch_size`` steps sampled and a checkpoint that loads and plays.

    What it does not claim: the local run's result. The steps lost with the node are sampled again by a
    runner that starts afresh, so which games the learner sees (and its weights) differ from an undisturbed
    run's; equal results are asserted only where jobs carry their seeds (tests/test_ray_cluster.py).
    The test stops only the cluster it started."""
    import subprocess
    import sys
    import time

    from tests.helpers.ray_cluster import LocalCluster

    cluster = LocalCluster(head_cpus=0).start()
    logs = {name: (tmp_path / f"{name}.txt").open("w") for name in ("out", "err")}  # no pipe to fill
    run = None
    try:
        cluster.add_node()
        items = [*TINY, "iterations=3", "ppo.train_batch_size=400", "env_runners.num_env_runners=1"]
        sets = [arg for item in [*items, f"output_dir={tmp_path}"] for arg in ("--set", item)]
        run = subprocess.Popen(
            [sys.executable, "-m", "training.rllib_ppo", "--config", "configs/rllib_ppo_2p.yaml", *sets,
             "--address", cluster.address],
            cwd=ROOT, stdout=logs["out"], stderr=logs["err"], text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 600
        # the first iteration saved (progress.json), the runner working on the second: kill its node
        while not (
            (tmp_path / "progress.json").is_file()
            and cluster.running_on_last_node("MultiAgentEnvRunner.apply")
        ):
            assert run.poll() is None, (tmp_path / "err.txt").read_text()[-3000:]
            assert time.monotonic() < deadline, "the env runner never worked after the first iteration"
            time.sleep(0.02)
        cluster.kill_node()
        assert run.poll() is None, "the run ended before the node was killed"
        cluster.add_node()
        recreated = False
        while run.poll() is None:  # the runner's actor restarted on the new node
            recreated = recreated or bool(cluster.running_on_last_node("MultiAgentEnvRunner"))
            assert time.monotonic() < deadline + 300, "the run did not end after the node was replaced"
            time.sleep(0.2)
        out, err = ((tmp_path / f"{name}.txt").read_text() for name in ("out", "err"))
        assert run.returncode == 0, err[-3000:]
    finally:
        if run is not None and run.poll() is None:
            run.kill()
            run.wait()
        cluster.stop()
        for log in logs.values():
            log.close()
    assert not cluster.own_processes(), "the cluster's processes outlived it"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["iterations"] == 3 and summary["env_steps"] >= 3 * 400, summary
    steps = [int(m) for m in re.findall(r"^iteration \d+: (\d+) env steps", out, flags=re.M)]
    assert len(steps) == 3 and min(steps) >= 400, out
    assert recreated, "no env runner ran on the node that replaced the lost one"
    assert [r["games"] for r in summary["eval"]] == [2, 2]  # the saved module played its evaluation
    agent = agents.make(summary["agent_spec"], seed=0)
    import splendor_env

    env = splendor_env.env(num_players=2)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"])] == 1
