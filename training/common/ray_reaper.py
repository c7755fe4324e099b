"""The watcher of a private Ray runtime: kills what is left of it once the process that started it is gone.

Why a file of its own that imports the standard library only: it is started by path
(``python ray_reaper.py DRIVER_PID SESSION_DIR``, :func:`training.common.ray_cluster.watch_runtime`),
so it watches within a fraction of a second instead of after importing the package; it prints
``watching`` once its first note of the driver's processes is taken. Linux only (``/proc``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

#: set by the driver (to its pid) before it starts its runtime, so every process of that runtime inherits it
MARK = "SPLENDOR_RAY_DRIVER"


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process readable in ``/proc``."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = (
                    Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            out[int(entry)] = (ppid, cmd)
    return out


def below(procs: dict[int, tuple[int, str]], roots: set[int]) -> set[int]:
    """``roots`` and every process under them in ``procs``."""
    found, grew = set(roots), True
    while grew:
        grew = False
        for p, (ppid, _) in procs.items():
            if ppid in found and p not in found:
                found.add(p)
                grew = True
    return found


def marked(mark: str) -> set[int]:
    """The processes whose environment holds ``mark`` (``NAME=value``): inherited from the driver, it finds
    a runtime's processes even once they are handed to init and renamed (``ray::IDLE``)."""
    found, needle = set(), mark.encode() + b"\0"
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes() + b"\0"
            except OSError:
                continue
            if b"\0" + needle in b"\0" + environ:
                found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed and not yet waited for, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def reap(driver: int, session: str, poll_seconds: float = 0.5) -> None:
    """Wait for ``driver`` to end, then kill what is left of its Ray runtime (:func:`training.common.ray_cluster.watch_runtime`).

    Three ways to find them, each catching what another can miss: the mark in their environment
    (:data:`MARK`), the session folder on their command line, and the driver's descendants noted at
    every poll (when it dies, its raylet's agents are handed to init and renamed).
    """
    seen: set[int] = below(processes(), {driver}) - {driver, os.getpid()}
    print("watching", flush=True)
    while alive(driver):
        now = below(processes(), {driver}) - {driver, os.getpid()}
        if alive(driver):  # a note taken while it lived: a dead (zombie) driver's children are init's already
            seen = now
        time.sleep(poll_seconds)
    procs = processes()
    named = {p for p, (_, cmd) in procs.items() if session in cmd}
    doomed = below(procs, named | (seen & set(procs)) | marked(f"{MARK}={driver}"))
    for p in doomed - {os.getpid()}:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)


if __name__ == "__main__":
    reap(int(sys.argv[1]), sys.argv[2])
