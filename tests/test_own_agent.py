"""Bring your own agent: a ``package.module:Class`` spec and installed (entry-point) agents.

The agent package lives in ``tmp_path``, outside the repository: in this process it is put on
``sys.path``; the command tests run it in a subprocess with the folder only on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.registry import ENTRY_POINT_GROUP
from tests.helpers.agent_package import write_agent_package
from training.matches.match import play_match

ROOT = Path(__file__).resolve().parents[1]
BOT = "ownbots.bots:FirstLegal"

SOURCE = '''
"""Agents of a user's own package, for the tests."""
import numpy as np

from agents.base import Agent, check_mask


class FirstLegal(Agent):
    """The legal id at place ``offset`` (clipped) among the legal ids, or a random one."""

    name = "first_legal"

    def __init__(self, seed=None, offset: int = 0, noisy: bool = False, scale=1.5, tag=None):
        super().__init__(seed)
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        self.offset, self.noisy, self.scale, self.tag = offset, noisy, scale, tag

    def act(self, observation, action_mask, state=None):
        legal = check_mask(action_mask)
        if self.noisy:
            return int(self.rng.choice(legal))
        return int(legal[min(self.offset, len(legal) - 1)])


class Duck:
    """Not an Agent subclass, and no seed in its constructor: the protocol by hand."""

    def __init__(self, depth: int = 1):
        self.depth, self.seeded = depth, None

    def seed(self, seed):
        self.seeded = seed

    def act(self, observation, action_mask, state=None):
        return int(np.flatnonzero(action_mask)[0])

    def act_batch(self, observations, action_masks):
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks)])


class NoAct:
    def seed(self, seed):
        pass


class NeedsLevel(Agent):
    def __init__(self, level: float, seed=None):
        super().__init__(seed)
        self.level = level

    def act(self, observation, action_mask, state=None):
        return int(np.flatnonzero(action_mask)[0])
'''


def write_package(root: Path) -> Path:
    """``root/ownbots/bots.py`` (the agents above) and an empty ``__init__``; returns ``root``."""
    return write_agent_package(root, "ownbots", SOURCE)


@pytest.fixture
def own_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = write_package(tmp_path / "site")
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in [m for m in sys.modules if m == "ownbots" or m.startswith("ownbots.")]:
        del sys.modules[name]


def test_class_spec_builds_the_class_with_typed_options(own_package: Path) -> None:
    agent = agents.make(f"{BOT},offset=2,noisy=false,scale=3,tag=7", seed=4)
    assert type(agent).__name__ == "FirstLegal" and type(agent).__module__ == "ownbots.bots"
    assert agent.offset == 2 and agent.noisy is False  # typed by annotation
    assert agent.scale == 3.0 and isinstance(agent.scale, float)  # typed by its default
    assert agent.tag == "7"  # neither: stays a string
    assert agents.make(BOT, offset=1).offset == 1  # keyword options, as with built-in specs
    mask = np.zeros(10, dtype=np.int8)
    mask[[3, 5, 7]] = 1
    assert agent.act(np.zeros(4), mask) == 7
    # seeded: two agents built with the same seed play the same moves
    a, b = (agents.build(f"{BOT},noisy=yes", seed=9) for _ in range(2))
    assert [a.act(None, mask) for _ in range(20)] == [b.act(None, mask) for _ in range(20)]
    assert agents.is_class_spec(BOT) and not agents.is_class_spec("mcts:sims=5")
    assert not agents.is_model_path(BOT)


def test_a_class_of_its_own_is_seeded_through_its_seed_method(own_package: Path) -> None:
    duck = agents.make("ownbots.bots:Duck,depth=3", seed=5)
    assert duck.depth == 3 and duck.seeded == 5
    result = play_match(duck, agents.make("random", seed=0), games=4, seed=1, opponent_name="random")
    assert result.games == 4


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nosuchpkg.bots:FirstLegal", "no module named 'nosuchpkg.bots' \\(is its folder on PYTHONPATH"),
        ("ownbots.bots:Missing", "module 'ownbots.bots' has no 'Missing'"),
        ("ownbots.bots:NoAct", "class NoAct does not follow the Agent protocol, it lacks act, act_batch"),
        ("ownbots.bots:np", "names a module, not an agent class"),
        (
            f"{BOT},depth=3",
            "unknown option\\(s\\) \\['depth'\\]; valid keys: \\['noisy', 'offset', 'scale', 'tag'\\]",
        ),
        (f"{BOT},offset=two", "option offset='two' is not a valid int"),
        (f"{BOT},noisy=maybe", "option noisy='maybe' is not a bool"),
        (f"{BOT},offset=-1", "offset must be >= 0, got -1"),
        (f"{BOT},offset", "agent option 'offset' must be key=value"),
        (f"{BOT},seed=3", "seed is not an option"),
        ("ownbots.bots:NeedsLevel", "needs option\\(s\\) \\['level'\\]"),
    ],
)
def test_bad_class_specs_are_named(own_package: Path, spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agents.make(spec)


def test_entry_point_adds_a_named_agent(own_package: Path, tmp_path: Path) -> None:
    dist = own_package / "ownbots-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ownbots\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nfirst_legal = {BOT}\nbroken = ownbots.nothing:Here\n"
    )
    assert "first_legal" in agents.known_specs() and "ownbots" in agents.known_specs()["first_legal"]
    agent = agents.make("First_Legal:offset=1", seed=0)
    assert type(agent).__name__ == "FirstLegal" and agent.offset == 1
    with pytest.raises(
        ValueError, match="installed agent 'broken' \\(ownbots.nothing:Here, package ownbots\\)"
    ):
        agents.make("broken")
    with pytest.raises(ValueError, match="unknown option"):
        agents.make("first_legal:depth=2")


def test_unknown_spec_says_class_specs_exist() -> None:
    with pytest.raises(ValueError, match="or package.module:Class for your own agent class"):
        agents.make("nosuch")


# ---------------------------------------------------------------------------
# Every command, with the package only on PYTHONPATH of a subprocess


def run_command(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(ROOT)])}
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_commands_play_a_class_spec_from_pythonpath(tmp_path: Path) -> None:
    root = write_package(tmp_path / "outside")
    spec = f"{BOT},offset=1"
    out = tmp_path / "tour"
    done = run_command(
        root, "-m", "training.tournament", "--agents", spec, "random", "--games", "4", "--out", str(out),
        "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(next(out.rglob("summary.json")).read_text())
    assert summary["agents"] == [spec, "random"] and summary["games"] == 4
    report = tmp_path / "eval.json"
    done = run_command(
        root, "-m", "training.evaluate", spec, "--opponents", "random", "--games", "6", "--workers", "2",
        "--json", str(report),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(report.read_text())[0]["games"] == 6
    done = run_command(root, "-m", "training.play", "--agents", spec, "random", "--games", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "player_0 ownbots.bots:FirstLegal,offset=1" in done.stdout
    done = run_command(root, "-c", f"import agents; print(type(agents.make({spec!r})).__name__)")
    assert done.stdout.strip() == "FirstLegal", done.stderr
    done = run_command(root, "-m", "training.evaluate", "ownbots.bots:Missing", "--games", "2")
    assert done.returncode == 2 and "module 'ownbots.bots' has no 'Missing'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_ray_workers_import_the_class_from_pythonpath(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    root = write_package(tmp_path / "outside")
    report = tmp_path / "eval.json"
    done = run_command(
        root, "-m", "training.evaluate", f"{BOT},offset=1", "--opponents", "random", "--games", "4",
        "--workers", "1", "--backend", "ray", "--json", str(report),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(report.read_text())[0]["games"] == 4
