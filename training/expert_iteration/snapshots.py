"""Where a search-training run keeps its snapshots (``snapshot_every``), and back from a path.

Why a module of its own: the loop writes them, and shipping and the learning curve read them
without importing torch and the loop; one place names them, both ways.
"""

from __future__ import annotations

import re
from pathlib import Path

_NAME = re.compile(r"^best-(\d{4,})\.zip$")


def snapshot_path(out: Path, iteration: int) -> Path:
    """Where ``snapshot_every`` keeps the gated network after ``iteration`` iterations."""
    return out / "snapshots" / f"best-{iteration:04d}.zip"


def snapshot_iteration(path: Path) -> int | None:
    """The iterations finished when the snapshot ``path`` (``RUN/snapshots/best-NNNN.zip``) was kept;
    None for any other file."""
    match = _NAME.match(path.name) if path.parent.name == "snapshots" else None
    return None if match is None else int(match.group(1))


__all__ = ["snapshot_iteration", "snapshot_path"]
