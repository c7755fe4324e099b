"""The error contract of an agent's moves (docs/tutorials/own-agent.md, :mod:`agents.runner`).

Four faults of a user's agent class: ``act`` missing or misnamed, ``act`` raising, an illegal
action id, an answer that is not an action id. Every command that plays games (``training.play``,
``training.tournament``, ``training.evaluate``, ``training.benchmark``) must end in one line naming
the agent's spec, the game and the turn, exit 2, and leave nothing a later ``--resume`` trusts.
The agents live in a package in ``tmp_path`` (on ``sys.path`` here, on ``PYTHONPATH`` for workers).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.runner import AgentError, play_game
from tests.helpers.agent_package import write_agent_package
from training.benchmark import main as benchmark_main
from training.common.cli import run_cli
from training.common.progress import JobLog
from training.evaluate import main as evaluate_main
from training.matches import card as bm
from training.matches.match import play_match
from training.play import main as play_main
from training.tournament import main as tournament_main

ROOT = Path(__file__).resolve().parents[1]

SOURCE = '''
"""Faulty agents of a user's own package, for the tests."""
import os

import numpy as np

from agents.base import Agent


class Misnamed(Agent):
    def action(self, observation, action_mask, state=None):
        return int(np.flatnonzero(action_mask)[0])


class NoAct(Agent):
    pass


class Raises(Agent):
    def act(self, observation, action_mask, state=None):
        raise RuntimeError("boom")


class Illegal(Agent):
    def act(self, observation, action_mask, state=None):
        return int(np.flatnonzero(np.asarray(action_mask) == 0)[0])


class WrongType(Agent):
    def act(self, observation, action_mask, state=None):
        return "abc"


class Flaky(Agent):
    """Raises while FLAKY is set in the environment; plays its first legal id otherwise."""

    def act(self, observation, action_mask, state=None):
        if os.environ.get("FLAKY"):
            raise RuntimeError("flaky")
        return int(np.flatnonzero(action_mask)[0])


class BadBatch(Agent):
    """A batched agent whose act_batch answers floats."""

    def act(self, observation, action_mask, state=None):
        return int(np.flatnonzero(action_mask)[0])

    def act_batch(self, observations, action_masks):
        return np.zeros(len(observations), dtype=np.float64)
'''

PKG = "faultbots.bots"
#: fault -> (class, what the one line must say about it)
FAULTS = {
    "misnamed": (
        "Misnamed",
        "does not define act(observation, action_mask, state=None) -> int (it defines action",
    ),
    "no_act": ("NoAct", "does not define act(observation, action_mask, state=None) -> int"),
    "raises": ("Raises", "act raised RuntimeError: boom"),
    "illegal": ("Illegal", "act returned illegal action 10 (take 1 white, 1 blue); legal ids: 0, 1,"),
    "wrong_type": ("WrongType", "act returned 'abc' (a str), not an action id (an int)"),
}
BUILD_FAULTS = ("misnamed", "no_act")  # refused when the agent is built, before any game


def write_package(root: Path) -> Path:
    return write_agent_package(root, "faultbots", SOURCE)


@pytest.fixture
def faulty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package on ``sys.path`` and on ``PYTHONPATH`` (for spawned worker processes)."""
    root = write_package(tmp_path / "site")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), str(ROOT)]))
    monkeypatch.delenv("FLAKY", raising=False)
    yield root
    for name in [m for m in sys.modules if m == "faultbots" or m.startswith("faultbots.")]:
        del sys.modules[name]


@pytest.fixture
def small_protocol(monkeypatch: pytest.MonkeyPatch) -> dict:
    """The card's protocol at a test's cost: two cheap references, one configuration, 4 games."""
    monkeypatch.setitem(bm.PROTOCOL, "references", {"random": 624.0, "greedy": 1326.0})
    monkeypatch.setitem(bm.PROTOCOL, "configs", [[2, []]])
    monkeypatch.setitem(bm.PROTOCOL, "games", {"full": 6, "quick": 4})
    return bm.PROTOCOL


def one_line(err: str, prog: str, spec: str, says: str, alone: bool = True) -> str:
    """The one error line: the prog, the agent's spec, the fault; last on stderr, and (``alone``)
    nothing else there."""
    lines = err.splitlines()
    assert lines and "Traceback" not in err and (len(lines) == 1 or not alone), err
    assert lines[-1].startswith(f"{prog}: error: agent {spec!r}"), err
    assert says in lines[-1], err
    return lines[-1]


def command_argv(command: str, spec: str, out: Path) -> tuple[Callable, list[str]]:
    if command == "play":
        return play_main, ["--agents", spec, "random", "--games", "2", "--quiet", "--save-games", str(out)]
    if command == "tournament":
        argv = ["--agents", spec, "random", "--games", "2", "--out", str(out), "--no-progress"]
        return tournament_main, argv
    if command == "evaluate":
        argv = [spec, "--opponents", "random", "--games", "2", "--workers", "1", "--out", str(out)]
        return evaluate_main, argv
    return benchmark_main, [spec, "--quick", "--workers", "1", "--out", str(out), "--no-progress"]


@pytest.mark.parametrize("command", ["play", "tournament", "evaluate", "benchmark"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_command_ends_an_agent_fault_in_one_line(
    faulty: Path,
    small_protocol: dict,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    fault: str,
) -> None:
    cls, says = FAULTS[fault]
    spec = f"{PKG}:{cls}"
    out = tmp_path / "out"
    main, argv = command_argv(command, spec, out)
    assert run_cli(main, argv, prog=command) == 2
    line = one_line(capsys.readouterr().err, command, spec, says)
    if fault in BUILD_FAULTS:
        assert not out.exists()  # refused before any game or file
        return
    game = {
        "play": "of the game of seed 0 (2p base)",
        "tournament": "of game 0 of the schedule, seed ",
        "evaluate": "of game 0 of the match vs 'random', seed ",
        "benchmark": "of game 0 of the match vs 'random', seed ",
    }[command]
    assert "failed at turn 1, seat 0, " + game in line, line
    # nothing saved that a later run would trust: no record, no finished game or chunk, no result
    saved = [JobLog.read(p) for p in out.rglob("*.progress.jsonl")] if out.is_dir() else []
    assert all(done == {} for done in saved), saved
    if command == "play":
        assert not out.exists()
    assert not list(tmp_path.rglob("results.json")) and not list(tmp_path.rglob("summary.json"))
    assert not list(tmp_path.rglob("card.json"))


def test_resume_replays_the_games_an_agent_failed(
    faulty: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two worker processes: the error crosses back as its one line; the failed games are not saved,
    so once the agent is fixed ``--resume`` plays them (and the whole run is there)."""
    spec = f"{PKG}:Flaky"
    out = tmp_path / "tour"
    argv = ["--agents", spec, "random", "--games", "4", "--workers", "2", "--out", str(out), "--no-progress"]
    monkeypatch.setenv("FLAKY", "1")  # seen by the workers, spawned after this
    assert run_cli(tournament_main, argv, prog="tournament") == 2
    line = one_line(capsys.readouterr().err, "tournament", spec, "act raised RuntimeError: flaky")
    failed = int(re.search(r"of game (\d+) of the schedule", line).group(1))
    assert failed not in JobLog.read(out / "games.progress.jsonl")
    monkeypatch.delenv("FLAKY")
    assert run_cli(tournament_main, [*argv, "--resume"], prog="tournament") == 0
    assert len(JobLog.read(out / "games.progress.jsonl")) == 4
    assert json.loads((out / "summary.json").read_text())["games"] == 4

    out = tmp_path / "eval"
    argv = [spec, "--opponents", "random", "--games", "4", "--chunk-games", "2", "--workers", "2"]
    monkeypatch.setenv("FLAKY", "1")
    assert run_cli(evaluate_main, [*argv, "--out", str(out)], prog="evaluate") == 2
    one_line(capsys.readouterr().err, "evaluate", spec, "act raised RuntimeError: flaky")
    assert JobLog.read(out / "chunks.progress.jsonl") == {} and not (out / "results.json").exists()
    monkeypatch.delenv("FLAKY")
    assert run_cli(evaluate_main, [*argv, "--out", str(out), "--resume"], prog="evaluate") == 0
    assert json.loads((out / "results.json").read_text())[0]["games"] == 4


def test_the_play_command_in_a_subprocess(faulty: Path, tmp_path: Path) -> None:
    """The reported case: an illegal move printed a warning and exited 0."""
    spec = f"{PKG}:Illegal"
    done = subprocess.run(
        [sys.executable, "-m", "training.play", "--agents", spec, "greedy", "--quiet"],
        cwd=faulty,
        env=os.environ,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    one_line(done.stderr, "python -m training.play", spec, "act returned illegal action")
    assert "WARNING" not in done.stderr and "game 0" not in done.stdout


def test_the_runner_names_every_wrong_answer(faulty: Path) -> None:
    """The library form of the contract: :class:`AgentError` (a ValueError), from either loop."""
    from faultbots import bots

    random = agents.make("random", seed=0)
    with pytest.raises(AgentError, match=r"agent 'me' failed at turn 2, seat 1, of the game of seed 3"):
        play_game([random, bots.Raises()], seed=3, labels=["random", "me"])
    cases: list[tuple[object, str]] = [
        (None, "act returned None (a NoneType), not an action id"),
        (2.0, "act returned 2.0 (a float), not an action id"),
        (True, "act returned True (a bool), not an action id"),
        (np.array([1, 2]), "act returned array([1, 2]) (a ndarray), not an action id"),
        (999, "act returned action id 999, out of range 0..71"),
        (-1, "act returned action id -1, out of range 0..71"),
    ]
    for answer, message in cases:
        bots.WrongType.act = lambda self, o, m, state=None, answer=answer: answer
        with pytest.raises(AgentError, match=re.escape(message)):
            play_game([bots.WrongType(), random], seed=0)
    legal = agents.make("faultbots.bots:Flaky")
    legal.act = lambda o, m, state=None: np.int64(np.flatnonzero(m)[0])  # a numpy integer is an id
    assert play_game([legal, random], seed=0)["actions"]
    # the batched loop (evaluation, cards): act through the base act_batch, and an own act_batch
    with pytest.raises(
        AgentError, match=r"agent 'faultbots.bots:Raises' failed at turn 1, seat 0, of game 0"
    ):
        play_match(bots.Raises(), random, games=2, seed=0)
    with pytest.raises(AgentError, match=r"agent 'ill' failed .* act returned illegal action"):
        play_match(bots.Illegal(), random, games=2, seed=0, candidate_name="ill")
    with pytest.raises(
        AgentError, match=r"act_batch returned an array of shape \(1,\) and dtype float64, not one action id"
    ):
        play_match(bots.BadBatch(), random, games=2, seed=0)
    # a class without its own act is refused when built; an instance, at its first move
    with pytest.raises(ValueError, match="class NoAct subclasses agents.base.Agent but does not define act"):
        agents.make("faultbots.bots:NoAct")
    with pytest.raises(AgentError, match="act raised NotImplementedError: class NoAct does not define act"):
        play_game([bots.NoAct(), random], seed=0)


@pytest.mark.slow
def test_ray_workers_report_the_one_line(
    faulty: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray")
    spec = f"{PKG}:Raises"
    argv = [spec, "--opponents", "random", "--games", "2", "--workers", "1", "--backend", "ray"]
    assert run_cli(evaluate_main, [*argv, "--out", str(tmp_path / "eval")], prog="evaluate") == 2
    # (Ray logs its own start-up lines first)
    one_line(capsys.readouterr().err, "evaluate", spec, "act raised RuntimeError: boom", alone=False)
