"""Jobs: where they run (this machine's processes or a Ray cluster) and their seeds.

Why one module: tournaments and evaluations both map a picklable, module-level
function over independent jobs and need the results in job order. Every job
carries its own seeds (derived from the master seed and the job's place in the
schedule, never from a worker id), so the results do not depend on the backend,
the number of workers or which worker ran which job. The agents a worker reuses
across its jobs are :mod:`training.common.agent_cache`'s.

Backends:

- ``local``: in this process (``workers=1``) or a ``spawn`` process pool
  (:mod:`training.common.pool`) whose dead workers are replaced one at a time.
- ``ray``: Ray tasks, one CPU each. With no ``address`` a private local Ray
  runtime with ``workers`` CPUs is started (and shut down afterwards); with an
  ``address`` (``auto``, ``HOST:6379`` or ``ray://HOST:10001``) the jobs go to
  that existing cluster, whose nodes need this package installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any, TypeVar

import numpy as np

from training.common.cli import CliError
from training.common.pool import LocalPool, PoolBroken, WorkerDied
from training.common.ray_cluster import connect_ray, use_token_auth

BACKENDS = ("local", "ray")
MAX_ATTEMPTS = 3  # tries of one job whose worker dies, on either backend, before the run stops
J = TypeVar("J")
R = TypeVar("R")


def add_backend_arguments(
    parser: Any,
    workers: int | None = None,
    workers_help: str = "worker processes (Ray: CPUs of a local runtime)",
) -> None:
    """``--workers`` (default ``workers``, else up to 2 of this machine's cores), ``--backend`` and
    ``--address``: where a command's jobs run, the same three options in every command."""
    default = min(2, os.cpu_count() or 1) if workers is None else workers
    parser.add_argument("--workers", type=int, default=default, help=workers_help)
    parser.add_argument("--backend", choices=BACKENDS, default="local", help="where the jobs run")
    parser.add_argument(
        "--address", default=None, help="existing Ray cluster (auto, HOST:PORT or ray://HOST:10001)"
    )


def check_backend(backend: str, address: str | None, workers: int) -> None:
    """Refuse a bad backend choice before any job starts (the message names the argument)."""
    if backend not in BACKENDS:
        raise CliError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise CliError(f"--workers must be an integer >= 1, got {workers!r}")
    if address is not None and backend != "ray":
        raise CliError("--address is only used with --backend ray")
    if address is not None and not address.strip():
        raise CliError("--address must not be empty")
    if backend == "ray":
        use_token_auth(address)  # before Ray is imported: it reads RAY_AUTH_MODE then
        try:
            import ray  # noqa: F401
        except ImportError:
            raise CliError("--backend ray needs Ray: pip install 'splendor-env[ray]'") from None


def map_jobs(
    fn: Callable[[J], R],
    jobs: Sequence[J],
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    on_result: Callable[[J, R], None] | None = None,
    pool: LocalPool | None = None,
) -> list[R]:
    """``[fn(job) for job in jobs]`` on the chosen backend, in job order.

    ``on_result`` is called in the main process as each job finishes (for a
    progress bar, or to save it), in completion order. ``pool`` (local backend, from
    :func:`local_pool`) is a process pool kept open by the caller across calls, so
    repeated calls do not start their workers again.

    A worker process that dies (killed, out of memory) costs only the job it was
    running: the worker is replaced and that job runs again (a job carries its seeds,
    so its result is the same); the other workers' jobs run on. After :data:`MAX_ATTEMPTS`
    tries of one job the run stops with a :class:`~training.common.cli.CliError` naming the
    job and the cause; deaths that cost other jobs, or none (an idle worker), do not count.
    """
    check_backend(backend, address, workers)
    if backend == "ray":
        return _map_ray(fn, jobs, workers, address, on_result)
    results: list[Any] = [None] * len(jobs)
    if pool is None and (workers == 1 or len(jobs) <= 1):
        for i, job in enumerate(jobs):
            results[i] = fn(job)
            if on_result is not None:
                on_result(job, results[i])
        return results
    own = pool is None
    local = local_pool(min(workers, len(jobs))) if own else pool
    done = False
    try:
        _map_local(fn, jobs, local, on_result, results)
        done = True
    finally:
        if own:
            stop_pool(local, now=not done)
    return results


def _map_local(
    fn: Callable[[J], R],
    jobs: Sequence[J],
    pool: LocalPool,
    on_result: Callable[[J, R], None] | None,
    results: list[Any],
) -> None:
    """Run ``jobs`` on ``pool``; a job whose worker died is submitted again, up to its own budget.

    Why per job: a death costs only the dead worker's job (the pool says which), so only that
    job's tries are counted; the jobs of the other workers run on, and a worker that dies idle
    costs no job anything. What is left queued when this stops (an error) is cancelled.
    """
    failures = [0] * len(jobs)
    pending: dict[Future, int] = {pool.submit(run_attempt, fn, i, job): i for i, job in enumerate(jobs)}
    try:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=pending.__getitem__):
                i = pending.pop(fut)
                try:
                    result = fut.result()
                except WorkerDied as died:
                    failures[i] += 1
                    if failures[i] >= MAX_ATTEMPTS:
                        raise CliError(
                            f"job {i} of {len(jobs)} ({describe_job(jobs[i])}) failed {failures[i]} times: "
                            f"its worker process {died.cause}"
                        ) from None
                    pending[pool.submit(run_attempt, fn, i, jobs[i])] = i
                    continue
                except PoolBroken as exc:
                    raise CliError(str(exc)) from None
                results[i] = result
                if on_result is not None:
                    on_result(jobs[i], result)
    finally:
        for fut in pending:
            fut.cancel()


def describe_job(job: Any, width: int = 80) -> str:
    """A job in a few words for an error message (its repr, cut to ``width`` characters)."""
    text = repr(job)
    return text if len(text) <= width else text[: width - 3] + "..."


def run_attempt(fn: Callable[[J], R], index: int, job: J) -> R:
    """One try of job ``index`` in a worker, through the fault hook.

    The fault hook (:data:`FAULT_ENV`, for tests and drills, off unless set) makes
    the worker die on the first try of the jobs it names, as a killed process would.
    """
    inject_fault(index)
    return fn(job)


#: ``K[,K...]:FOLDER``: a worker dies (``os._exit(70)``) on the first try of job ``K`` of
#: any :func:`map_jobs` call; a marker file ``FOLDER/job-K`` records the try, so the replacement
#: runs it. For fault-survival tests and drills; unset (the default), it does nothing.
FAULT_ENV = "SPLENDOR_FAULT_JOBS"


def inject_fault(index: int) -> None:
    """The fault hook of :data:`FAULT_ENV` (a no-op unless the variable is set)."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    names, _, folder = spec.partition(":")
    if str(index) not in names.split(","):
        return
    marker = os.path.join(folder, f"job-{index}")
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os._exit(70)


def local_pool(workers: int) -> LocalPool:
    """A ``spawn`` process pool of ``workers`` processes for :func:`map_jobs`'s ``pool``
    (:class:`training.common.pool.LocalPool`).

    Why a caller keeps one open: a new worker imports torch, loads its models and numba's
    cache (several seconds), which dominated short repeated calls such as the self-play
    of each expert-iteration step. A worker that dies, busy or idle, is replaced on its own.
    Shut it down (:func:`stop_pool`) when done.

    Its workers end themselves when the process that made the pool is gone (killed, say), so
    a stopped training run leaves no idle workers behind.
    """
    return LocalPool(workers, idle_deaths=MAX_ATTEMPTS)


def stop_pool(pool: LocalPool, now: bool = False) -> None:
    """Shut a :func:`local_pool` down: after its running jobs (``now=False``), or at once.

    ``now`` (a run stopped by an exception: Ctrl-C, SIGTERM, an error) cancels the queued jobs and
    terminates the workers instead of waiting for their current job, which can take minutes. Either
    way every future of the pool is settled when it returns (a job a worker had already taken
    fails with :class:`~training.common.pool.PoolStopped`), so nothing is left pending.
    """
    if now:
        pool.terminate()
    else:
        pool.shutdown(wait=True, cancel_futures=True)


def _map_ray(
    fn: Callable[[J], R],
    jobs: Sequence[J],
    workers: int,
    address: str | None,
    on_result: Callable[[J, R], None] | None,
) -> list[R]:
    import ray

    from agents.runner import AgentError

    started_here = connect_ray(workers, address)
    try:
        # a task whose worker dies runs again (Ray's retries), as a local job does; an exception
        # raised by the job itself is not retried: it is the same on every try
        remote = ray.remote(num_cpus=1, max_retries=MAX_ATTEMPTS - 1, retry_exceptions=False)(run_attempt)
        refs = [remote.remote(fn, i, job) for i, job in enumerate(jobs)]
        index = {ref: i for i, ref in enumerate(refs)}
        results: list[Any] = [None] * len(jobs)
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                i = index[ref]
                try:
                    results[i] = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    if isinstance(exc.cause, AgentError):  # an agent's fault: its one line, as locally
                        raise exc.cause from None
                    raise
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
                    cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    raise CliError(
                        f"job {i} of {len(jobs)} ({describe_job(jobs[i])}) failed {MAX_ATTEMPTS} times: "
                        f"its Ray worker died ({cause})"
                    ) from None
                if on_result is not None:
                    on_result(jobs[i], results[i])
        return results
    finally:
        if started_here:
            ray.shutdown()


def chunks(items: Sequence[J], size: int) -> list[list[J]]:
    """``items`` cut into consecutive lists of at most ``size`` (fewer round trips to a worker)."""
    return [list(items[i : i + size]) for i in range(0, len(items), max(1, size))]


def job_seed(*key: int, bits: int = 31) -> int:
    """A ``bits``-bit seed (31 or 63) from integers: the same for a job wherever and by whichever worker it runs."""
    if bits == 31:
        return int(np.random.SeedSequence(list(key)).generate_state(1)[0] >> 1)
    if bits == 63:
        return int(np.random.SeedSequence(list(key)).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    raise ValueError(f"job_seed: bits must be 31 or 63, got {bits}")
