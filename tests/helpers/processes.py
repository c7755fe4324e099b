"""Processes seen from /proc: whether one has ended, and a pool's live workers (Linux only).

Shared by the tests that kill pool workers on purpose (a killed worker is the fault they test).
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def gone(pid: int) -> bool:
    """The process has ended (a zombie that nobody reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.split()[1:2] == ["Z"] for line in f if line.startswith("State:"))
    except (FileNotFoundError, ProcessLookupError):  # (reaped before the open, or between open and read)
        return True


def wait_gone(pid: int, seconds: float = 20.0) -> bool:
    """Whether process ``pid`` ended within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.2)
    return gone(pid)


def worker_pids(parent: int) -> list[int]:
    """The live pool workers (``spawn`` children) of process ``parent``."""
    pids = []
    for children in Path(f"/proc/{parent}/task").glob("*/children"):
        try:
            listed = children.read_text().split()
        except (FileNotFoundError, ProcessLookupError):  # a thread that ended meanwhile
            continue
        for pid in listed:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if b"spawn_main" in cmdline and not gone(int(pid)):
                pids.append(int(pid))
    return sorted(pids)


def wait_workers(count: int, seconds: float = 60.0) -> list[int]:
    """This process's pool workers, once there are ``count`` of them."""
    deadline = time.monotonic() + seconds
    while len(workers := worker_pids(os.getpid())) < count:
        assert time.monotonic() < deadline, f"{len(workers)} pool workers, not {count}"
        time.sleep(0.05)
    return workers
