"""training.common.jobs: jobs in order on every backend, and a local pool that outlives one call."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.processes import gone, wait_gone, wait_workers, worker_pids
from training.common.cli import CliError
from training.common.jobs import FAULT_ENV, MAX_ATTEMPTS, chunks, local_pool, map_jobs, stop_pool


def pid_and_square(x: int) -> tuple[int, int]:
    """A job that says which process ran it."""
    return os.getpid(), x * x


def test_results_come_back_in_job_order() -> None:
    assert map_jobs(abs, [-3, 1, -2]) == [3, 1, 2]
    seen = []
    map_jobs(abs, [-1, -2], on_result=lambda job, result: seen.append((job, result)))
    assert seen == [(-1, 1), (-2, 2)]


def test_a_kept_pool_serves_several_calls_with_the_same_workers() -> None:
    pool = local_pool(2)
    try:
        first = map_jobs(pid_and_square, list(range(6)), 2, pool=pool)
        second = map_jobs(pid_and_square, list(range(6)), 2, pool=pool)
    finally:
        pool.shutdown()
    assert [r[1] for r in first] == [r[1] for r in second] == [x * x for x in range(6)]
    workers = {pid for pid, _ in first} | {pid for pid, _ in second}
    assert os.getpid() not in workers and len(workers) <= 2  # no new processes for the second call


def test_bad_backend_arguments_are_named() -> None:
    with pytest.raises(CliError, match="--backend must be one of"):
        map_jobs(abs, [1], backend="cloud")
    with pytest.raises(CliError, match="--workers must be an integer >= 1"):
        map_jobs(abs, [1], workers=0)
    with pytest.raises(CliError, match="--address is only used with --backend ray"):
        map_jobs(abs, [1], address="auto")


def test_chunks_keep_order_and_size() -> None:
    assert chunks(list(range(5)), 2) == [[0, 1], [2, 3], [4]]


POOL_SCRIPT = """
import os, sys, time
from training.common.jobs import local_pool
pool = local_pool(1)
print(pool.submit(os.getpid).result(), flush=True)
pool.submit(time.sleep, 120)
time.sleep(120)
"""


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_workers_end_when_the_process_that_made_the_pool_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", POOL_SCRIPT], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(parent.stdout.readline())
        assert not gone(worker)
        parent.kill()  # SIGKILL: no finally, no shutdown; only the workers' own watch can end them
        parent.wait(timeout=30)
        assert wait_gone(worker), f"pool worker {worker} outlived its killed parent"
    finally:
        parent.kill()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_stop_pool_now_ends_a_worker_in_the_middle_of_a_job() -> None:
    pool = local_pool(1)
    worker = pool.submit(os.getpid).result()
    pool.submit(time.sleep, 120)
    queued = pool.submit(time.sleep, 120)
    stop_pool(pool, now=True)
    assert wait_gone(worker), "stop_pool(now=True) left the worker running its job"
    assert queued.cancelled() or queued.done()


def test_a_pool_says_which_worker_runs_which_job() -> None:
    """``running()``: what a drill that kills a busy worker needs (tests/test_fault_survival.py's clock)."""
    pool = local_pool(1)
    try:
        worker = pool.submit(os.getpid).result()
        assert pool.running() == []
        busy = pool.submit(time.sleep, 1.5)
        deadline = time.monotonic() + 30
        while not (running := pool.running()):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert running == [(worker, (1.5,))]
        busy.result()
        assert pool.running() == []
    finally:
        stop_pool(pool, now=True)


def exit_if_negative(x: int) -> int:
    """A job whose worker dies (as one killed by the kernel would) when ``x`` is negative."""
    if x < 0:
        os._exit(70)
    return x * x


def test_a_dead_worker_is_replaced_and_its_job_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAULT_ENV, f"2:{tmp_path}")  # the first try of job 2 kills its worker
    pool = local_pool(2)
    try:
        first = map_jobs(exit_if_negative, list(range(5)), 2, pool=pool)
        assert (tmp_path / "job-2").exists()  # the job did die once
        again = map_jobs(pid_and_square, list(range(3)), 2, pool=pool)  # the kept pool still works
    finally:
        stop_pool(pool)
    assert first == [x * x for x in range(5)]
    assert [r[1] for r in again] == [0, 1, 4]


def test_a_job_that_keeps_killing_its_worker_stops_the_run_naming_it() -> None:
    with pytest.raises(CliError) as err:
        map_jobs(exit_if_negative, [1, -1, 2], workers=2)
    assert str(err.value) == (
        f"job 1 of 3 (-1) failed {MAX_ATTEMPTS} times: its worker process died (exit code 70)"
    )
    assert "\n" not in str(err.value)


def test_a_job_that_raises_is_not_retried() -> None:
    with pytest.raises(ZeroDivisionError):
        map_jobs(divide_ten, [1, 0], workers=2)


def divide_ten(x: int) -> float:
    return 10 / x


def tries(folder: str, name: str) -> int:
    """How many times the job ``name`` of :func:`slow_or_dying` was started."""
    path = Path(folder) / name
    return len(path.read_text().splitlines()) if path.exists() else 0


def slow_or_dying(job: tuple[str, str]) -> str:
    """Each try logged in ``FOLDER/NAME``. ``die``: its first try ends its worker (exit code 70).
    ``slow``: runs until ``die`` has been tried twice, so it is in flight when ``die``'s worker dies."""
    folder, name = job
    with open(Path(folder) / name, "a") as fh:
        fh.write("try\n")
    if name == "die" and tries(folder, name) == 1:
        time.sleep(0.2)
        os._exit(70)
    deadline = time.monotonic() + 60
    while name == "slow" and tries(folder, "die") < 2:
        if time.monotonic() > deadline:
            return "slow, but die was not tried again"
        time.sleep(0.05)
    return name


def test_a_dead_worker_costs_only_its_own_job(tmp_path: Path) -> None:
    jobs = [(str(tmp_path), "slow"), (str(tmp_path), "die")]
    assert map_jobs(slow_or_dying, jobs, workers=2) == ["slow", "die"]
    assert tries(str(tmp_path), "die") == 2
    assert tries(str(tmp_path), "slow") == 1  # the live worker's job ran on, not again


def kill_idle_siblings(job: tuple[str, int]) -> int:
    """Kill the other (idle) workers of this pool ``times`` times, each time its replacement; one try
    logged in ``FOLDER/killer``."""
    folder, times = job
    with open(Path(folder) / "killer", "a") as fh:
        fh.write("try\n")
    for _ in range(times):
        deadline = time.monotonic() + 60
        while not (others := [p for p in worker_pids(os.getppid()) if p != os.getpid()]):
            assert time.monotonic() < deadline, "no replacement worker started"
            time.sleep(0.05)
        for pid in others:
            os.kill(pid, signal.SIGKILL)
            assert wait_gone(pid)
    return times


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_worker_that_dies_while_the_pool_is_idle_is_replaced(tmp_path: Path) -> None:
    pool = local_pool(2)
    try:
        map_jobs(pid_and_square, list(range(4)), 2, pool=pool)
        for _ in range(MAX_ATTEMPTS + 1):  # idle deaths use up no budget
            workers = wait_workers(2)
            os.kill(workers[0], signal.SIGKILL)  # between two calls (search training's train step)
            assert wait_gone(workers[0])
            assert [r[1] for r in map_jobs(pid_and_square, list(range(4)), 2, pool=pool)] == [0, 1, 4, 9]
        # a worker killed while the other runs a job: the running job goes on, nobody is blamed
        wait_workers(2)
        assert map_jobs(kill_idle_siblings, [(str(tmp_path), 2)], 2, pool=pool) == [2]
        assert tries(str(tmp_path), "killer") == 1
        assert [r[1] for r in map_jobs(pid_and_square, list(range(4)), 2, pool=pool)] == [0, 1, 4, 9]
    finally:
        stop_pool(pool)


NO_START_SCRIPT = """
if __name__ != "__main__":
    raise SystemExit(3)  # a worker cannot even start: importing the main module fails there
from training.common.cli import CliError
from training.common.jobs import map_jobs
try:
    map_jobs(abs, [1, 2, 3], workers=2)
except CliError as exc:
    print(exc)
"""


def test_workers_that_cannot_start_stop_the_run_in_one_line(tmp_path: Path) -> None:
    script = tmp_path / "no_start.py"
    script.write_text(NO_START_SCRIPT)
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout == "worker processes keep dying before they run a job (died (exit code 3))\n"
