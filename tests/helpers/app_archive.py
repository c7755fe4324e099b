"""Saved-games databases for the table's tests: a store over one, and one a failing disk damaged."""

from __future__ import annotations

from pathlib import Path

from training.app.archive import FILE_NAME, Archive
from training.app.checks import Limits
from training.app.store import Store

LIMITS = Limits(Path("."), None, 1000.0)


def store_in(folder: Path) -> Store:
    return Store(LIMITS, archive=Archive(folder))


def corrupted_archive(folder: Path) -> Path:
    """A database of this server with some games, then bytes of its tables overwritten (a failing disk)."""
    store = store_in(folder)
    for seed in range(30):
        store.new_game({"agents": ["human", "greedy"], "seed": seed})
    store.archive.close()
    path = folder / FILE_NAME
    data = bytearray(path.read_bytes())
    for offset in (4096 + 100, 8192 + 50):
        data[offset : offset + 200] = b"\xff" * 200
    path.write_bytes(bytes(data))
    return path
