"""Jobs: where they run (this machine's processes or a Ray cluster), their seeds, and the agents they reuse.

Why one module: tournaments and evaluations both map a picklable, module-level
function over independent jobs and need the results in job order. Every job
carries its own seeds (derived from the master seed and the job's place in the
schedule, never from a worker id), so the results do not depend on the backend,
the number of workers or which worker ran which job.

Backends:

- ``local``: in this process (``workers=1``) or a ``spawn`` process pool.
- ``ray``: Ray tasks, one CPU each. With no ``address`` a private local Ray
  runtime with ``workers`` CPUs is started (and shut down afterwards); with an
  ``address`` (``auto``, ``HOST:6379`` or ``ray://HOST:10001``) the jobs go to
  that existing cluster, whose nodes need this package installed.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

import numpy as np

from training.common.cli import CliError

BACKENDS = ("local", "ray")
J = TypeVar("J")
R = TypeVar("R")


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
    pool: Executor | None = None,
) -> list[R]:
    """``[fn(job) for job in jobs]`` on the chosen backend, in job order.

    ``on_result`` is called in the main process as each job finishes (for a
    progress bar), in completion order. ``pool`` (local backend, from
    :func:`local_pool`) is a process pool kept open by the caller across calls, so
    repeated calls do not start their workers again.
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
    executor = local_pool(min(workers, len(jobs))) if own else pool
    done = False
    try:
        futures = {executor.submit(fn, job): i for i, job in enumerate(jobs)}
        for fut in as_completed(futures):
            i = futures[fut]
            results[i] = fut.result()
            if on_result is not None:
                on_result(jobs[i], results[i])
        done = True
    finally:
        if own:
            stop_pool(executor, now=not done)
    return results


def local_pool(workers: int) -> ProcessPoolExecutor:
    """A ``spawn`` process pool of ``workers`` processes for :func:`map_jobs`'s ``pool``.

    Why a caller keeps one open: a new worker imports torch, loads its models and numba's
    cache (several seconds), which dominated short repeated calls such as the self-play
    of each expert-iteration step. Shut it down (:func:`stop_pool`) when done.

    Its workers end themselves when the process that made the pool is gone (killed, say), so
    a stopped training run leaves no idle workers behind (:func:`exit_with_parent`).
    """
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=mp.get_context("spawn"),
        initializer=exit_with_parent,
        initargs=(os.getpid(),),
    )


def stop_pool(pool: ProcessPoolExecutor, now: bool = False) -> None:
    """Shut a :func:`local_pool` down: after its running jobs (``now=False``), or at once.

    ``now`` (a run stopped by an exception: Ctrl-C, SIGTERM, an error) cancels the queued jobs and
    terminates the workers instead of waiting for their current job, which can take minutes. Either
    way every future of the pool is settled when it returns (a job the workers had already taken
    fails with ``BrokenProcessPool``), so nothing is left pending.
    """
    if now:
        terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
        if terminate is not None:
            terminate()
            return
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
    # with the workers terminated this wait is short: the pool sees them gone and fails their jobs
    pool.shutdown(wait=True, cancel_futures=True)


def exit_with_parent(parent: int, poll_seconds: float = 1.0) -> None:
    """Pool initializer: a daemon thread ends this worker once its parent ``parent`` has gone.

    Why: a pool's workers wait for jobs forever; when their parent dies without shutting the
    pool down (SIGKILL, or SIGTERM in a program without a handler) they would idle on, holding
    memory and, with Ray or numba threads, CPU. An orphan is re-parented, so ``os.getppid()``
    changes.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_seconds)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _map_ray(
    fn: Callable[[J], R],
    jobs: Sequence[J],
    workers: int,
    address: str | None,
    on_result: Callable[[J, R], None] | None,
) -> list[R]:
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=1)(fn)
        refs = [remote.remote(job) for job in jobs]
        index = {ref: i for i, ref in enumerate(refs)}
        results: list[Any] = [None] * len(jobs)
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                i = index[ref]
                results[i] = ray.get(ref)
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


class AgentCache:
    """Agents built once per worker process and reused by every job it runs, the oldest dropped first.

    Why: building an agent can cost a second or more (loading a network), and a
    worker runs many jobs of the same agents. The key says what makes two agents
    the same (a spec and a seat, a network digest and options); the caller
    reseeds an agent before each game, so reuse never changes a result.
    """

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._agents: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The agent cached under ``key``, built by ``build()`` the first time."""
        if key in self._agents:
            self._agents.move_to_end(key)
            return self._agents[key]
        while len(self._agents) >= self.capacity:
            self._agents.popitem(last=False)
        self._agents[key] = agent = build()
        return agent

    def __len__(self) -> int:
        return len(self._agents)


#: The one per-process agent cache of every job runner (tournaments, evaluations, search self-play).
WORKER_AGENTS = AgentCache()
