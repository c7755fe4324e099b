"""A long run's output folder as it goes: its manifest and the results of its finished jobs.

Why: a tournament or an evaluation can take hours, and a run that is stopped
(Ctrl-C, SIGTERM, a lost machine) must not lose the games already played. Each
finished job is appended to a JSON-lines file as it completes, and the run's
arguments (everything its results depend on, seeds included) go into
``manifest.json``. ``--resume`` checks the arguments against the manifest (a
different one is refused, naming it) and plays only the jobs not in the file;
every job carries its seeds, so the final tables are those of an uninterrupted run.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from training.common.cli import CliError
from training.common.provenance import cpu_seconds, where_made

MANIFEST = "manifest.json"


def as_json(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists): what a resumed run compares and uses."""
    return json.loads(json.dumps(value))


def open_run(folder: Path, manifest: dict[str, Any], resume: bool) -> None:
    """Start a run in ``folder`` (write its manifest), or check that a resumed one has the same arguments."""
    path = folder / MANIFEST
    manifest = as_json(manifest)
    if not resume:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        return
    if not path.is_file():
        raise CliError(f"--resume: {str(folder)!r} has no {MANIFEST} (no run was started there)")
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CliError(f"--resume: {path} is not valid JSON ({exc})") from None
    for key in [*manifest, *(k for k in old if k not in manifest)]:
        if old.get(key) != manifest.get(key):
            raise CliError(
                f"--resume: {str(folder)!r} was started with {key} {old.get(key)!r}, "
                f"not {manifest.get(key)!r} (resume with the same arguments, or start a new folder)"
            )


class JobLog:
    """An append-only JSON-lines file of finished jobs, one ``{"job": key, "result": ...}`` a line.

    Why a line per job, flushed at once: a run killed at any moment leaves every job
    it finished readable; a line cut short by the kill is dropped when the run resumes.
    """

    def __init__(self, path: Path, resume: bool) -> None:
        self.path = path
        self.done: dict[int, Any] = self.read(path) if resume else {}
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = "a" if resume else "w"
        self._fh = open(path, mode, encoding="utf-8")  # noqa: SIM115 (closed by close())

    @staticmethod
    def read(path: Path) -> dict[int, Any]:
        """The finished jobs in ``path`` (none when it is missing); a cut-off last line is removed."""
        if not path.is_file():
            return {}
        text = path.read_text(encoding="utf-8")
        done: dict[int, Any] = {}
        good = 0
        for line in text.splitlines(keepends=True):
            try:
                entry = json.loads(line)
                key, result = int(entry["job"]), entry["result"]
            except (ValueError, KeyError, TypeError):
                break  # the line a kill cut short: it and anything after it are dropped
            if not line.endswith("\n"):
                break
            done[key] = result
            good += len(line.encode("utf-8"))
        with open(path, "r+b") as fh:
            fh.truncate(good)
        return done

    def add(self, key: int, result: Any) -> None:
        """Append one finished job and flush it to the file."""
        self._fh.write(json.dumps({"job": key, "result": result}, separators=(",", ":")) + "\n")
        self._fh.flush()
        self.done[key] = as_json(result)

    def close(self) -> None:
        """Close the file (what was added is already in it)."""
        self._fh.close()


PIECES = "pieces.jsonl"  # one line per invocation that played into a run's folder


def add_piece(folder: Path, piece: dict[str, Any]) -> None:
    """Append one piece of a run (when it started and ended, its wall and CPU seconds, its commit)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / PIECES, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(piece, separators=(",", ":")) + "\n")


def read_pieces(folder: Path) -> list[dict[str, Any]]:
    """Every piece recorded in ``folder`` (none when missing), oldest first; a cut-off last line is skipped."""
    path = folder / PIECES
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    pieces = []
    for number, line in enumerate(lines, 1):
        try:
            pieces.append(json.loads(line))
        except json.JSONDecodeError:
            if number < len(lines):
                raise CliError(f"{path}: line {number} is not valid JSON") from None
    return pieces


@contextmanager
def piece(folder: Path, **about: Any) -> Iterator[dict[str, Any]]:
    """Record one invocation's work in ``folder`` (:data:`PIECES`) when it ends, however it ends.

    Why: a run resumed three times cost the sum of its pieces, played at up to three commits; a
    card says so (:func:`read_pieces`) instead of quoting the last piece alone. ``about`` is
    stored with the piece (what it played).
    """
    made = where_made()
    t0, c0 = time.perf_counter(), cpu_seconds()
    entry: dict[str, Any] = {"start": made["date"], **about}
    try:
        yield entry
    finally:
        stopped = sys.exc_info()[0]
        entry.update(
            {
                "end": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "wall_s": round(time.perf_counter() - t0, 1),
                "cpu_s": round(cpu_seconds() - c0, 1),
                "version": made["version"],
                "commit": made["commit"],
                "dirty": made["dirty"],
                "machine": made["machine"],
                "ended": "finished" if stopped is None else f"stopped ({stopped.__name__})",
            }
        )
        add_piece(folder, entry)
