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


def reap(driver: int, session: str, poll_seconds: float = 1.0) -> None:
    """Wait for ``driver`` to end, then kill what is left of its Ray runtime (:func:`training.common.ray_cluster.watch_runtime`).

    The driver's descendants are noted at every poll: when it dies, some of the runtime's processes
    (its raylet's agents) are handed to init and renamed, so only the last note still finds them.
    """
    seen: set[int] = below(processes(), {driver}) - {driver, os.getpid()}
    print("watching", flush=True)
    while Path(f"/proc/{driver}").exists():
        seen = below(processes(), {driver}) - {driver, os.getpid()}
        time.sleep(poll_seconds)
    procs = processes()
    doomed = below(procs, {p for p, (_, cmd) in procs.items() if session in cmd} | (seen & set(procs)))
    for p in doomed - {os.getpid()}:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)


if __name__ == "__main__":
    reap(int(sys.argv[1]), sys.argv[2])
