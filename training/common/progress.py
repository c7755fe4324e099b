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
from pathlib import Path
from typing import Any

from training.common.cli import CliError

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
