"""Long runs survive faults: a killed worker costs only its job, and a stopped run resumes.

Workers are killed with the jobs module's fault hook (``SPLENDOR_FAULT_JOBS``): the
worker that takes job K for the first time calls ``os._exit``, as one killed by the
kernel would, and its replacement plays the job again. Every case compares with an
undisturbed run of the same seeds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers.processes import wait_gone, wait_workers
from tests.helpers.search_runs import tiny
from training.common.cli import CliError
from training.common.jobs import FAULT_ENV
from training.common.progress import JobLog, open_run
from training.matches.evaluate import evaluate
from training.matches.tournament import PROGRESS, run_tournament

AGENTS = ["greedy", "random", "lookahead"]
ROOT = Path(__file__).resolve().parents[1]


def tables(out: Path) -> dict[str, Any]:
    """What a tournament's tables say, without its clock, worker count and file paths."""
    summary = json.loads((out / "summary.json").read_text())
    for key in ("seconds", "files"):
        summary.pop(key, None)
    summary["settings"].pop("workers")
    summary["settings"].pop("backend")
    return {
        "summary": summary,
        "winrates": (out / "winrates.csv").read_text(),
        "ratings": (out / "ratings.csv").read_text(),
    }


def tournament(out: Path, workers: int, **kwargs: Any) -> dict[str, Any]:
    run_tournament(AGENTS, 2, 4, workers, seed=5, out=out, progress=False, echo=None, **kwargs)
    return tables(out)


@pytest.mark.slow
def test_a_tournament_whose_worker_is_killed_gives_the_undisturbed_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    undisturbed = tournament(tmp_path / "plain", workers=1)
    monkeypatch.setenv(FAULT_ENV, f"3,7:{tmp_path}")
    assert tournament(tmp_path / "faulty", workers=2) == undisturbed
    assert (tmp_path / "job-3").exists() and (tmp_path / "job-7").exists()  # two workers did die


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", pytest.param("ray", id="ray-local-mode")])
def test_an_evaluation_whose_worker_is_killed_gives_the_undisturbed_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    if backend == "ray":
        pytest.importorskip("ray")
    undisturbed = evaluate("greedy", ["random"], games=250, players=2, workers=1, seed=3)
    monkeypatch.setenv(FAULT_ENV, f"1:{tmp_path}")
    faulty = evaluate("greedy", ["random"], games=250, players=2, workers=2, seed=3, backend=backend)
    assert faulty == undisturbed and faulty[0].games == 250
    assert (tmp_path / "job-1").exists()


@pytest.mark.slow
def test_a_ray_tournament_whose_worker_is_killed_gives_the_undisturbed_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ray")
    undisturbed = tournament(tmp_path / "plain", workers=1)
    monkeypatch.setenv(FAULT_ENV, f"0:{tmp_path}")
    assert tournament(tmp_path / "faulty", workers=2, backend="ray") == undisturbed
    assert (tmp_path / "job-0").exists()


@pytest.mark.slow
def test_an_evaluation_resumes_from_its_saved_chunks(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    whole = evaluate("greedy", ["random"], games=250, players=[2, 3], workers=1, seed=3, out=out)
    saved = (out / "chunks.progress.jsonl").read_text().splitlines(keepends=True)
    assert len(saved) == 6  # 3 chunks for each player count
    (out / "chunks.progress.jsonl").write_text("".join(saved[:2]) + saved[2][:15])  # stopped mid-line
    again = evaluate("greedy", ["random"], 250, [2, 3], workers=1, seed=3, out=out, resume=True)
    assert again == whole
    assert len((out / "chunks.progress.jsonl").read_text().splitlines()) == 6
    with pytest.raises(CliError, match=r"--resume: .* was started with seed 3, not 4"):
        evaluate("greedy", ["random"], 250, [2, 3], workers=1, seed=4, out=out, resume=True)


@pytest.mark.slow
def test_a_search_training_iteration_survives_a_killed_selfplay_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training.expert_iteration import config as search_config
    from training.expert_iteration.loop import search_train

    def run(name: str) -> dict[str, np.ndarray]:
        raw = {
            "players": 2,
            "init": "fresh",
            "output_dir": str(tmp_path / name),
            "iterations": 1,
            "selfplay": {"games": 4, "sims": 8, "games_per_job": 1, "max_turns": 60},
            "buffer": {"capacity": 4000},
            "train": {"batch_size": 32, "epochs": 1, "min_positions": 10},
            "gate": {"games": 2, "sims": 8},
        }
        search_train(search_config.from_dict(raw), workers=2, progress=False, log=lambda *_: None)
        with np.load(tmp_path / name / "checkpoints" / "buffer.npz") as data:
            return {key: data[key] for key in data.files}

    undisturbed = run("plain")
    monkeypatch.setenv(FAULT_ENV, f"2:{tmp_path}")
    faulty = run("faulty")
    assert (tmp_path / "job-2").exists()
    assert faulty.keys() == undisturbed.keys()
    for key in undisturbed:
        np.testing.assert_array_equal(faulty[key], undisturbed[key])


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_search_training_worker_killed_while_the_network_trains_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training.expert_iteration import config as search_config
    from training.expert_iteration import loop

    train = loop.STEP_FUNCTIONS["train"]
    killed = []

    def kill_a_worker_then_train(*args: Any) -> None:
        pid = wait_workers(2)[0]  # idle: self-play is done, the gate has not begun
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(pid)
        killed.append(pid)
        train(*args)

    monkeypatch.setitem(loop.STEP_FUNCTIONS, "train", kill_a_worker_then_train)
    raw = tiny(tmp_path, eval__every=0)  # the smallest run, no evaluation: the gate is what follows the kill
    summary = loop.search_train(search_config.from_dict(raw), workers=2, progress=False, log=lambda *_: None)
    assert killed and summary["iterations"] == 1  # the gate's games ran on the replaced worker


def command(out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "training.tournament",
        "--agents",
        "greedy",
        "mcts:sims=30",
        "--games",
        "10",
        "--seed",
        "2",
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


@pytest.mark.slow
def test_a_tournament_stopped_by_sigterm_resumes_playing_only_the_missing_games(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = tmp_path / "plain"
    subprocess.run(command(plain), cwd=ROOT, env=env, check=True, capture_output=True)
    out = tmp_path / "stopped"
    run = subprocess.Popen(command(out), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    progress = out / PROGRESS
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
        not progress.exists() or len(progress.read_text().splitlines()) < 3
    ):
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=60) == 143
    last = run.stderr.read().decode().strip().splitlines()[-1]
    assert last.startswith("python -m training.tournament: stopped (SIGTERM); what was finished is saved in ")
    assert last.endswith(" ".join(command(out)[3:]) + " --resume"), last
    before = progress.read_text()
    played = len(before.splitlines())
    assert 3 <= played < 10 and not (out / "summary.json").exists()

    changed = subprocess.run(
        command(out, "--resume", "--max-turns", "50"), cwd=ROOT, env=env, capture_output=True
    )
    assert changed.returncode == 2
    assert "was started with max_turns 1000, not 50" in changed.stderr.decode()

    subprocess.run(command(out, "--resume"), cwd=ROOT, env=env, check=True, capture_output=True)
    after = progress.read_text()
    assert after.startswith(before)  # the games already played are kept, not played again
    indexes = [json.loads(line)["job"] for line in after.splitlines()]
    assert sorted(indexes) == list(range(10))  # each missing game played once
    assert tables(out) == tables(plain)


def test_a_resume_needs_a_started_run(tmp_path: Path) -> None:
    with pytest.raises(CliError, match="has no manifest.json"):
        open_run(tmp_path, {"seed": 1}, resume=True)


def test_a_job_log_drops_the_line_a_kill_cut_short(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = JobLog(path, resume=False)
    log.add(0, {"a": 1})
    log.add(2, [1, 2])
    log.close()
    with open(path, "a") as fh:
        fh.write('{"job": 3, "res')
    resumed = JobLog(path, resume=True)
    assert resumed.done == {0: {"a": 1}, 2: [1, 2]}
    resumed.add(3, 7)
    resumed.close()
    assert JobLog.read(path) == {0: {"a": 1}, 2: [1, 2], 3: 7}


def test_resume_without_a_run_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from training.common.cli import run_cli
    from training.evaluate import main as evaluate_main
    from training.tournament import main as tournament_main

    assert run_cli(evaluate_main, ["greedy", "--opponents", "random", "--resume"], prog="evaluate") == 2
    assert (
        capsys.readouterr().err
        == "evaluate: error: --resume needs --out, the folder of the evaluation to resume\n"
    )
    argv = ["--agents", "random", "greedy", "--out", str(tmp_path / "new"), "--resume", "--no-progress"]
    assert run_cli(tournament_main, argv, prog="tournament") == 2
    err = capsys.readouterr().err
    assert err.startswith("tournament: error: --resume: ") and err.endswith(
        "has no manifest.json (no run was started there)\n"
    )


def test_a_policy_benchmark_resumes_its_matches_from_the_saved_games(tmp_path: Path) -> None:
    from training.speed.policies import run_bench

    args: dict[str, Any] = {"anchors": ["random"], "games": 4, "n_states": 4, "players": (2,)}
    whole = run_bench(["greedy", "lookahead"], **args, out=tmp_path / "b")
    log = tmp_path / "b" / "agent1-column0" / "chunks.progress.jsonl"
    log.write_text("")  # the second agent's match lost, as a stop before its first chunk leaves it
    resumed = run_bench(["greedy", "lookahead"], **args, out=tmp_path / "b", resume=True)
    for spec in ("greedy", "lookahead"):
        assert resumed["agents"][spec]["vs_random@2p"] == whole["agents"][spec]["vs_random@2p"]
    assert len(log.read_text().splitlines()) == 1
    with pytest.raises(CliError, match="was started with games 4, not 6"):
        run_bench(["greedy", "lookahead"], **{**args, "games": 6}, out=tmp_path / "b", resume=True)
    with pytest.raises(CliError, match="already holds games: pass --resume"):  # the one folder rule
        run_bench(["greedy", "lookahead"], **args, out=tmp_path / "b")


def folder_files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


RUNS = {
    "tournament": ["--agents", "random", "greedy", "--games", "2", "--no-progress", "--out"],
    "evaluate": ["greedy", "--opponents", "random", "--games", "2", "--out"],
}


@pytest.mark.parametrize("command", list(RUNS))
def test_a_run_folder_is_refused_without_resume_or_force(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One folder rule: a second run into a folder that holds games says how to go on, in one line."""
    from training.common.cli import run_cli
    from training.evaluate import main as evaluate_main
    from training.tournament import main as tournament_main

    main = {"tournament": tournament_main, "evaluate": evaluate_main}[command]
    out = tmp_path / "run"
    argv = [*RUNS[command], str(out)]
    assert run_cli(main, argv, prog=command) == 0
    capsys.readouterr()
    before = folder_files(out)
    assert run_cli(main, argv, prog=command) == 2
    err = capsys.readouterr().err
    assert err == (
        f"{command}: error: --out {str(out)!r} already holds games: pass --resume to go on with them, "
        "or --force to start afresh\n"
    )
    assert folder_files(out) == before
    assert run_cli(main, [*argv, "--resume", "--force"], prog=command) == 2
    assert "--resume or --force" in capsys.readouterr().err
    # a bad agent is refused before --force empties anything
    bad = [a if a != "greedy" else "nosuch" for a in argv]
    assert run_cli(main, [*bad, "--force"], prog=command) == 2
    assert "nosuch" in capsys.readouterr().err and folder_files(out) == before
    # files of the run's kind, records a resume set aside among them: emptied with the rest
    kinds = ("stale.progress.jsonl", "games.progress.jsonl.bad", "games.progress.jsonl.tmp")
    for name in kinds:
        (out / name).write_text("")
    assert run_cli(main, [*argv, "--force"], prog=command) == 0
    after = folder_files(out)
    assert not set(kinds) & set(after) and set(after) == set(before)
    assert run_cli(main, [*argv, "--resume"], prog=command) == 0


def test_force_refuses_a_folder_that_is_not_a_run_s(tmp_path: Path) -> None:
    from training.common.progress import claim_folder

    (tmp_path / "games.progress.jsonl").write_text("")
    with pytest.raises(CliError, match="already holds games"):
        claim_folder(tmp_path, resume=False, force=False)
    with pytest.raises(CliError, match="no manifest.json"):
        claim_folder(tmp_path, resume=False, force=True)
    (tmp_path / "manifest.json").write_text('{"command": "tournament"}')
    (tmp_path / "thesis.tex").write_text("mine")
    with pytest.raises(CliError, match="thesis.tex"):
        claim_folder(tmp_path, resume=False, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "games.progress.jsonl",
        "manifest.json",
        "thesis.tex",
    ]
    claim_folder(tmp_path / "new", resume=False, force=True)  # nothing there: nothing to empty
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("training.evaluate", ["greedy", "--opponents", "random", "--games", "2", "--json", "{ro}/r.json"]),
        ("training.evaluate", ["greedy", "--opponents", "random", "--games", "2", "--out", "{ro}/eval"]),
        (
            "training.tournament",
            ["--agents", "random", "greedy", "--games", "2", "--out", "{ro}/t", "--no-progress"],
        ),
        ("training.benchmark", ["greedy", "--quick", "--out", "{ro}/card", "--no-progress"]),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_the_first_game(
    tmp_path: Path, module: str, argv: list[str]
) -> None:
    """``evaluate --json`` into a read-only folder once failed only after every game."""
    if os.geteuid() == 0:
        ro = "/proc/self"  # root writes through file modes: a folder no one can write in instead
    else:
        (tmp_path / "ro").mkdir()
        (tmp_path / "ro").chmod(0o500)
        ro = str(tmp_path / "ro")
    args = [a.format(ro=ro) for a in argv]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert "cannot write in" in last or "does not exist" in last, last
    assert "games" not in done.stdout and time.monotonic() - started < 60


class PoolClock(threading.Thread):
    """A clock beside a search run's local pool (:meth:`pool` stands in for ``loop.local_pool``).

    It notes how long each try of a job runs and, given ``kill_every`` seconds, SIGKILLs a worker busy
    with a job that often, ``max_kills`` times at most, as an operator or the kernel would. It kills only
    a job no kill has cost a try yet: a fresh worker's first job (torch and numba's cache to load) can
    outlast any short period, and the same job killed on every tick would use up its tries
    (:data:`training.common.jobs.MAX_ATTEMPTS`); on a 60 s clock that does not happen."""

    def __init__(self, kill_every: float | None = None, max_kills: int = 0) -> None:
        super().__init__(name="pool-clock", daemon=True)
        self.kill_every, self.max_kills = kill_every, max_kills
        self.pools: list[Any] = []
        self.tries: dict[int, list[Any]] = {}  # id(args) -> [args, first seen, last seen]
        self.killed: list[Any] = []  # the jobs a kill cost a try (held: their ids stay theirs)
        self.kill_times: list[float] = []
        self.done = threading.Event()

    def pool(self, workers: int) -> Any:
        from training.common.jobs import local_pool

        self.pools.append(local_pool(workers))
        return self.pools[-1]

    def durations(self) -> list[float]:
        return [last - first for _, first, last in self.tries.values()]

    def run(self) -> None:
        next_kill = time.monotonic() + (self.kill_every or 0.0)
        while not self.done.wait(0.02):
            running = self.pools[-1].running() if self.pools else []  # (pid, (fn, index, job))
            now = time.monotonic()
            for _, args in running:
                self.tries.setdefault(id(args), [args, now, now])[2] = now
            if self.kill_every is None or len(self.kill_times) >= self.max_kills or now < next_kill:
                continue
            fresh = [(pid, args[2]) for pid, args in running if not any(args[2] is j for j in self.killed)]
            if fresh:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(fresh[0][0], signal.SIGKILL)
                self.killed.append(fresh[0][1])
                self.kill_times.append(now)
                next_kill = now + self.kill_every


def four_iterations(out: Path, clock: PoolClock) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Four iterations of the smallest search run on 2 local workers, ``clock`` beside its pool; the
    buffer and ``state.json`` it ends with."""
    from training.expert_iteration import config as search_config
    from training.expert_iteration import loop

    raw = tiny(out, iterations=4, selfplay__games=6, eval__every=4)
    clock.start()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(loop, "local_pool", clock.pool)
            loop.search_train(
                search_config.from_dict(raw, check_specs=False),
                workers=2,
                progress=False,
                log=lambda *_: None,
            )
    finally:
        clock.done.set()
        clock.join()
    ckpt = out / "run" / "checkpoints"
    with np.load(ckpt / "buffer.npz") as data:
        buffer = {key: data[key] for key in data.files}
    return buffer, json.loads((ckpt / "state.json").read_text())


@dataclass
class Undisturbed:
    """The undisturbed four-iteration run: its buffer and state, how long each try of a job ran, its wall time."""

    buffer: dict[str, np.ndarray]
    state: dict[str, Any]
    durations: list[float]
    seconds: float


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory: pytest.TempPathFactory) -> Undisturbed:
    clock, t0 = PoolClock(), time.monotonic()
    buffer, state = four_iterations(tmp_path_factory.mktemp("undisturbed"), clock)
    return Undisturbed(buffer, state, clock.durations(), time.monotonic() - t0)


def assert_same_run(run: tuple[dict[str, np.ndarray], dict[str, Any]], undisturbed: Undisturbed) -> None:
    from tests.helpers.search_runs import untimed

    (buffer, state), plain_buffer, plain_state = run, undisturbed.buffer, undisturbed.state
    assert state["iteration"] == plain_state["iteration"] == 4
    assert untimed(state) == untimed(plain_state)
    assert buffer.keys() == plain_buffer.keys()
    for key in plain_buffer:
        np.testing.assert_array_equal(buffer[key], plain_buffer[key])


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_search_training_run_with_workers_killed_again_and_again_ends_as_an_undisturbed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, undisturbed: Undisturbed
) -> None:
    """An unattended run survives workers killed at chosen moments: over four iterations a worker dies
    busy (the first try of self-play jobs 1 and 4) and one is killed idle before every step (self-play,
    training, gate: twelve kills); the run ends with the undisturbed run's buffer and state."""
    from training.expert_iteration import loop

    killed: list[int] = []
    for step, function in list(loop.STEP_FUNCTIONS.items()):

        def kill_then(*args: Any, function: Any = function) -> None:
            pid = wait_workers(2)[len(killed) % 2]  # idle: between two steps
            os.kill(pid, signal.SIGKILL)
            assert wait_gone(pid)
            killed.append(pid)
            function(*args)

        monkeypatch.setitem(loop.STEP_FUNCTIONS, step, kill_then)
    monkeypatch.setenv(FAULT_ENV, f"1,4:{tmp_path}")
    run = four_iterations(tmp_path / "killed", PoolClock())
    assert len(killed) >= 8 and (tmp_path / "job-1").exists() and (tmp_path / "job-4").exists()
    assert_same_run(run, undisturbed)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_search_training_run_with_a_busy_worker_killed_on_a_clock_ends_as_an_undisturbed_one(
    tmp_path: Path, undisturbed: Undisturbed
) -> None:
    """The unattended-run target, a worker killed every 60 s, on a faster clock: a busy worker is SIGKILLed
    every tenth of the undisturbed run's wall time (at least twice its median job), 6 times at most,
    whatever the run is doing (self-play, gate or evaluation games, a fresh worker's first job); the run
    ends with the undisturbed run's buffer and state. A job is killed once at most (:class:`PoolClock`)."""
    durations = sorted(undisturbed.durations)
    period = max(2 * durations[len(durations) // 2], undisturbed.seconds / 10, 1.0)
    clock = PoolClock(kill_every=period, max_kills=6)
    run = four_iterations(tmp_path / "clocked", clock)
    assert len(clock.kill_times) >= 3, f"{len(clock.kill_times)} kills every {period:.1f} s"
    assert all(b - a >= period for a, b in zip(clock.kill_times, clock.kill_times[1:], strict=False))
    assert_same_run(run, undisturbed)
