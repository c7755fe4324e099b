"""Where and when a result was made: date, package version, commit (and whether the tree was dirty), machine, cost.

Why one module: a benchmark card, a learning curve and a long run's pieces all say what produced
them, and a number a paper quotes must name the code it came from; one function writes that
record so every page names it the same way.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]


def cpu_seconds() -> float:
    """CPU seconds of this process and of its child processes that have ended (a local pool's workers)."""
    try:
        import resource
    except ImportError:  # Windows: this process only
        return time.process_time()
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=_REPO, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def commit_state() -> tuple[str, bool | None]:
    """The checkout's short commit and whether tracked files differ from it (``"unknown"``, ``None``
    outside a git checkout: an installed wheel)."""
    commit = (_git("rev-parse", "--short", "HEAD") or "").strip()
    if not commit:
        return "unknown", None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return commit, None if status is None else bool(status.strip())


def where_made() -> dict[str, object]:
    """Date (UTC), package version, commit and dirty flag, and machine: what a result names as its origin."""
    import splendor_env

    commit, dirty = commit_state()
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "version": splendor_env.__version__,
        "commit": commit,
        "dirty": dirty,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}, Python {platform.python_version()}",
    }


__all__ = ["commit_state", "cpu_seconds", "where_made"]
