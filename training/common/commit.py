"""Several files replaced as one step: after a kill at any moment, either all of them are new or none is.

Why: a checkpoint is several files (a network, its optimizer, a replay buffer, the state
that says which step they are after). Replaced one by one, a kill between two replacements
leaves new files beside the old state, and a resume redoes a step on data that step already
changed (the same self-play positions added to the buffer twice, a network trained twice).

How: each file is written aside first (``NAME.new.EXT``, :func:`aside`); then a small
journal naming them is moved into place, the one atomic rename that commits the step; the
files are moved over the old ones and the journal removed. A reader calls
:func:`finish_commit` first: a journal a kill left behind is carried out (its step was
whole), and files written aside without one are not used (their step was not).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

JOURNAL = "commit.json"  # the usual journal's name, in a checkpoint folder, there only during a commit


def aside(path: Path) -> Path:
    """Where :func:`commit_files` writes ``path`` before the commit: ``NAME.new.EXT`` beside it
    (the extension kept, for writers that add theirs)."""
    return path.with_name(f"{path.stem}.new{path.suffix}")


def commit_files(journal: Path, writes: Sequence[tuple[Path, Callable[[Path], None]]]) -> None:
    """Write every ``(path, write)`` of ``writes`` (``write(p)`` writes the file ``p``) as one step.

    ``journal`` (a file name beside the first checkpoint files, say ``checkpoints/commit.json``)
    holds the step's file names, relative to its folder, between the commit and its end.
    """
    moves = []
    for path, write in writes:
        path.parent.mkdir(parents=True, exist_ok=True)
        new = aside(path)
        write(new)
        moves.append([os.path.relpath(new, journal.parent), os.path.relpath(path, journal.parent)])
    tmp = journal.with_name(journal.name + ".tmp")
    tmp.write_text(json.dumps(moves) + "\n", encoding="utf-8")
    tmp.replace(journal)  # the commit: from here on the step is whole, even if killed
    finish_commit(journal)


def finish_commit(journal: Path, leftovers: Iterable[Path] = ()) -> bool:
    """Carry out the commit a kill interrupted (``journal`` is there), if any; True if there was one.

    ``leftovers``: files whose copy written aside (:func:`aside`) belongs to no commit, removed
    (a step killed before its commit; running it again writes them anew)."""
    done = journal.is_file()
    if done:
        for new, path in json.loads(journal.read_text(encoding="utf-8")):
            source = journal.parent / new
            if source.exists():  # not moved yet when the kill came
                source.replace(journal.parent / path)
        journal.unlink()
    for path in leftovers:
        with contextlib.suppress(FileNotFoundError):
            aside(path).unlink()
    return done
