"""A local process pool whose workers are replaced one at a time, whenever one dies.

Why not ``concurrent.futures.ProcessPoolExecutor``: when one of its workers dies
(killed, out of memory) it fails every job in flight, terminates the other workers
and refuses every later ``submit``, even when the worker died idle between two
calls; which job the dead worker ran has to be guessed. Here each worker has a
pipe of its own and the pool knows which job it runs. A thread of the parent
watches all of them: a worker that dies fails its own job's future only (with
:class:`WorkerDied`; the jobs of the other workers run on), and is replaced at
once, whether it was running a job, idle or still starting.

Workers are ``spawn`` processes; they end themselves when the process that made
the pool is gone (:func:`exit_with_parent`).
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing as mp
import os
import pickle
import signal
import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

JOIN_SECONDS = 10.0  # how long a stopping or dead worker is waited for before it is killed


class WorkerDied(RuntimeError):
    """The worker process running this job died: only this try of the job is lost.

    Its one argument (``cause``) says how, e.g. ``died (killed by SIGKILL)``."""

    @property
    def cause(self) -> str:
        return str(self.args[0])


class PoolBroken(RuntimeError):
    """Worker processes keep dying before they run a job, so queued jobs cannot run."""


class PoolStopped(RuntimeError):
    """The pool was stopped before this job finished."""


class RemoteTraceback(Exception):
    """A job's exception's traceback in its worker, as its ``__cause__`` (as ``concurrent.futures`` does)."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


def exit_cause(code: int | None) -> str:
    """``died (killed by SIGKILL)``, ``died (exit code 70)``: why a worker process ended."""
    if code is None:
        return "died"
    if code < 0:
        try:
            return f"died (killed by {signal.Signals(-code).name})"
        except ValueError:
            return f"died (killed by signal {-code})"
    return f"died (exit code {code})"


def exit_with_parent(parent: int, poll_seconds: float = 1.0) -> None:
    """In a worker: a daemon thread ends this process once its parent ``parent`` has gone.

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


def serve(conn: Connection, parent: int) -> None:
    """A worker's life: say it is ready, then run ``(fn, args)`` jobs until told to stop.

    Ctrl-C is ignored here: the parent hears it too and stops the pool. A job's exception
    goes back with its traceback (as text); a result or exception that cannot be pickled goes
    back as a ``RuntimeError`` naming it, so the parent always gets an answer.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(parent)
    conn.send_bytes(pickle.dumps(("ready", os.getpid())))
    while True:
        try:
            payload = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if not payload:  # the stop message
            return
        try:
            fn, args = pickle.loads(payload)
            reply: tuple[Any, ...] = ("ok", fn(*args))
        except Exception as exc:
            reply = ("error", exc, traceback.format_exc())
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            what = "result" if reply[0] == "ok" else f"exception ({reply[1]!r})"
            problem = RuntimeError(f"a job's {what} could not be sent back from its worker: {exc!r}")
            data = pickle.dumps(("error", problem, traceback.format_exc()))
        conn.send_bytes(data)


@dataclass(eq=False)
class _Task:
    future: Future
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    started: bool = False  # its future was set running (it stays so if it is queued again)


@dataclass(eq=False)
class _Worker:
    process: Any  # a spawn-context Process
    conn: Connection
    ready: bool = False  # said so: it started and waits for jobs
    task: _Task | None = None  # the job it runs
    gone: bool = False  # found dead (or stopped) and dealt with
    waitables: list[Any] = field(default_factory=list)


_POOLS: weakref.WeakSet[LocalPool] = weakref.WeakSet()


class LocalPool:
    """``workers`` worker processes fed by :meth:`submit`; one that dies is replaced on its own.

    A dead worker's job fails with :class:`WorkerDied` (the caller decides whether to try it
    again: :func:`training.common.jobs.map_jobs` counts the tries of each job). Deaths that
    cost no job (a worker idle or starting) are replaced without limit as long as jobs keep
    finishing; ``idle_deaths`` of them in a row with no job finished in between leave that
    worker's place empty, and when no worker is left the queued jobs fail with
    :class:`PoolBroken`. The next :meth:`submit` starts the missing workers again.
    """

    def __init__(self, workers: int, idle_deaths: int = 3) -> None:
        self.workers = workers
        self.idle_deaths = idle_deaths
        self._ctx = mp.get_context("spawn")
        self._lock = threading.Lock()
        self._queue: deque[_Task] = deque()
        self._slots: list[_Worker | None] = [None] * workers
        self._wake_r, self._wake_w = self._ctx.Pipe(duplex=False)
        self._stopping: str | None = None  # "drain" (after the running jobs) or "now"
        self._deaths_in_a_row = 0  # of workers that ran no job, since a job last finished
        self._refill = True  # start the missing workers
        self._last_cause = "died"
        self._thread = threading.Thread(target=self._manage, name="local-pool", daemon=True)
        self._thread.start()
        _POOLS.add(self)

    # --- the caller's side -------------------------------------------------------------------

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        """Run ``fn(*args)`` on a worker; its :class:`~concurrent.futures.Future`."""
        future: Future = Future()
        with self._lock:
            if self._stopping is not None:
                raise RuntimeError("cannot submit a job to a pool that was shut down")
            self._queue.append(_Task(future, fn, args))
            self._deaths_in_a_row = 0
            self._refill = True
        self._wake()
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """Stop after the running jobs (and the queued ones unless ``cancel_futures``)."""
        with self._lock:
            if cancel_futures:
                self._fail_queued(PoolStopped("the pool was shut down"))
            self._stopping = self._stopping or "drain"
        self._wake()
        if wait:
            self._thread.join()

    def terminate(self) -> None:
        """Stop now: queued jobs are cancelled, running ones fail with :class:`PoolStopped`, the
        workers are terminated."""
        with self._lock:
            self._fail_queued(PoolStopped("the pool was stopped"))
            self._stopping = "now"
        self._wake()
        self._thread.join()

    def running(self) -> list[tuple[int, tuple[Any, ...]]]:
        """``(pid, args)`` of each worker running a job now (a snapshot: it may finish at once).

        For drills and tests that kill a busy worker, as the kernel or an operator would: ``args``
        are the job's (the objects :meth:`submit` got, so a job submitted again is recognised)."""
        found = []
        for worker in list(self._slots):
            task = worker.task if worker is not None and not worker.gone else None
            if task is not None:
                with contextlib.suppress(ValueError):  # closed by the manager meanwhile
                    found.append((worker.process.pid, task.args))
        return found

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # closed: the manager has stopped anyway
            self._wake_w.send_bytes(b"")

    def _fail_queued(self, error: Exception, cancel: bool = True) -> None:
        """(Under the lock.) Every queued job cancelled (``cancel``), else failed with ``error``; a job
        already set running (queued again after its worker died) fails with ``error`` either way.
        Waiters are told in both cases (``set_running_or_notify_cancel``)."""
        while self._queue:  # a queued future is pending, cancelled (not yet told), or running
            future = self._queue.popleft().future
            if future.running():
                future.set_exception(error)
                continue
            if cancel:
                future.cancel()
            if future.set_running_or_notify_cancel():  # tells the waiters of a cancelled one
                future.set_exception(error)

    # --- the manager thread --------------------------------------------------------------------

    def _manage(self) -> None:
        """Start, feed and watch the workers until the pool is stopped; settle every future."""
        error: BaseException | None = None
        try:
            while True:
                with self._lock:
                    stopping, refill, self._refill = self._stopping, self._refill, False
                    idle = stopping == "drain" and not self._queue
                if stopping == "now" or (idle and not any(w and w.task for w in self._slots)):
                    break
                if refill and stopping != "now":
                    self._start_missing()
                self._dispatch()
                self._watch()
        except BaseException as exc:  # a bug here must not leave futures pending forever
            error = exc
        finally:
            self._close(error)

    def _start_missing(self) -> None:
        for slot, worker in enumerate(self._slots):
            if worker is None:
                self._slots[slot] = self._spawn()

    def _spawn(self) -> _Worker:
        ours, theirs = self._ctx.Pipe()
        process = self._ctx.Process(target=serve, args=(theirs, os.getpid()), name="pool-worker")
        process.start()
        theirs.close()
        return _Worker(process, ours, waitables=[ours, process.sentinel])

    def _dispatch(self) -> None:
        """Give queued jobs to the workers that wait for one."""
        for worker in self._slots:
            while worker is not None and worker.ready and worker.task is None:
                with self._lock:
                    if not self._queue:
                        return
                    task = self._queue.popleft()
                if not task.started:
                    if not task.future.set_running_or_notify_cancel():
                        continue  # cancelled while queued
                    task.started = True
                try:
                    payload = pickle.dumps((task.fn, task.args), protocol=pickle.HIGHEST_PROTOCOL)
                except Exception as exc:
                    task.future.set_exception(exc)
                    continue
                try:
                    worker.conn.send_bytes(payload)
                    worker.task = task
                except OSError:  # it died before taking the job: the job waits for another
                    with self._lock:
                        self._queue.appendleft(task)
                    worker.ready = False

    def _watch(self) -> None:
        """Wait for an answer, a death or a wake-up, and deal with what came."""
        owners = {obj: w for w in self._slots if w is not None for obj in w.waitables}
        for obj in wait([self._wake_r, *owners]):
            if obj is self._wake_r:
                while self._wake_r.poll():
                    self._wake_r.recv_bytes()
                continue
            worker = owners[obj]
            if worker.gone:
                continue
            if obj is worker.conn:
                self._receive(worker)
            else:  # the process ended: read what it sent before it did, then bury it
                while not worker.gone and worker.conn.poll():
                    self._receive(worker)
                self._bury(worker)

    def _receive(self, worker: _Worker) -> None:
        try:
            data = worker.conn.recv_bytes()
        except (EOFError, OSError):
            self._bury(worker)
            return
        task, worker.task = worker.task, None
        try:
            message = pickle.loads(data)
        except Exception as exc:
            message = ("error", RuntimeError(f"a worker's answer could not be read: {exc!r}"), "")
        if message[0] == "ready":
            worker.ready = True
            return
        if task is None:
            return
        with self._lock:
            self._deaths_in_a_row = 0  # a job finished: the workers work
        if message[0] == "ok":
            task.future.set_result(message[1])
        else:
            exc, text = message[1], message[2]
            if text:
                exc.__cause__ = RemoteTraceback(text)
            task.future.set_exception(exc)

    def _bury(self, worker: _Worker) -> None:
        """A worker found dead: fail its job (if it ran one), and start another in its place."""
        if worker.gone:
            return
        code = self._end(worker, stop=False)
        slot = self._slots.index(worker)
        self._slots[slot] = None
        cause, given_up = exit_cause(code), False
        if worker.task is not None:
            worker.task.future.set_exception(WorkerDied(cause))
            worker.task = None
        else:
            with self._lock:
                self._deaths_in_a_row += 1
                given_up = self._deaths_in_a_row >= self.idle_deaths
            self._last_cause = cause
        with self._lock:
            stopping = self._stopping
        if stopping == "now":
            return
        if not given_up:
            self._slots[slot] = self._spawn()
        elif all(w is None for w in self._slots):
            with self._lock:
                broken = PoolBroken(f"worker processes keep dying before they run a job ({self._last_cause})")
                self._fail_queued(broken, cancel=False)

    def _end(self, worker: _Worker, stop: bool) -> int | None:
        """Wait for a worker to end (``stop``: ask it, or terminate it if it runs a job); its exit code."""
        worker.gone = True
        process = worker.process
        if stop:
            with contextlib.suppress(OSError):
                if worker.task is None:
                    worker.conn.send_bytes(b"")
                else:
                    process.terminate()
        process.join(JOIN_SECONDS)
        if process.exitcode is None:
            process.kill()
            process.join()
        code = process.exitcode
        worker.conn.close()
        process.close()
        return code

    def _close(self, error: BaseException | None) -> None:
        """Stop every worker and settle every future (the pool is done)."""
        with self._lock:
            self._stopping = self._stopping or "now"
            self._fail_queued(PoolStopped(f"the pool failed: {error!r}") if error else PoolStopped("stopped"))
        for worker in self._slots:
            if worker is None or worker.gone:
                continue
            task = worker.task
            self._end(worker, stop=True)
            if task is not None and not task.future.done():
                task.future.set_exception(PoolStopped("the pool was stopped before this job finished"))
        self._slots = [None] * self.workers
        self._wake_r.close()
        self._wake_w.close()


@atexit.register
def _stop_all() -> None:
    """At exit, stop the pools still open (their workers would otherwise keep the exit waiting)."""
    for pool in list(_POOLS):
        pool.terminate()
