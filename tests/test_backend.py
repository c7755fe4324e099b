"""training.backend: jobs in order on every backend, and a local pool that outlives one call."""

from __future__ import annotations

import os

import pytest

from training.backend import chunks, local_pool, map_jobs
from training.cli import CliError


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
