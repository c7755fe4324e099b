"""A training run's output folder: a new run into one that holds an earlier run is refused, or emptied.

Why: a new run writes some of its files only when they change (a search run's ``learner.zip``,
``optimizer.pt`` and ``best.zip`` at the step that changes them; a PPO run's ``best.zip`` when an
evaluation beats the last), so an earlier run's copies stayed beside the new ones: a new run stopped
early reported the old ``best.zip``, and a later ``--resume`` trained the old network. The rule is
the one the commands that save games follow (:func:`training.common.progress.claim_folder`): without
``--resume``, a folder that holds a run is refused in one line, unless ``--force`` starts afresh,
which empties it, once the inputs are checked and only when it holds nothing but what a training run
writes. Each training command names what it writes (a :class:`RunLayout`) beside its loop.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from training.common.cli import CliError
from training.common.commit import aside


@dataclass(frozen=True)
class RunLayout:
    """What a training command writes in its ``output_dir``."""

    files: tuple[str, ...]  # its files at the top of the folder (config.yaml first)
    folders: tuple[str, ...]  # the folders only it writes in (emptied whole by --force)
    checkpoint: str  # the file a resume goes on from, relative to the folder
    resume: str  # the flag that goes on, ``{checkpoint}`` standing for that file's path

    def names(self) -> set[str]:
        """Every top-level name a run may leave (its files, their copies written aside, its folders)."""
        return {*self.files, *(aside(Path(f)).name for f in self.files), *self.folders}


def holds_run(out: Path, layout: RunLayout) -> bool:
    """Whether ``out`` holds (part of) an earlier run: one of its files besides ``config.yaml`` (which
    every run writes anew), or one of its folders with anything in it."""
    if not out.is_dir():
        return False
    if any((out / name).exists() for name in layout.names() - {"config.yaml", *layout.folders}):
        return True
    return any((out / name).is_dir() and any((out / name).iterdir()) for name in layout.folders)


def claim_run_folder(out: Path, resume: bool, force: bool, layout: RunLayout) -> bool:
    """The folder rule of a training run; call it before anything is written. Returns whether the
    caller must empty ``out`` (:func:`empty_run_folder`) once its inputs are checked (``--force``).

    ``resume``: nothing to do (the caller checks the checkpoint). Else a folder that holds a run is
    refused in one line, naming ``--resume`` (when it has a checkpoint to go on from) and ``--force``;
    with ``force``, a folder holding anything a run does not write is refused too, so ``--force``
    deletes nothing else.
    """
    if resume and force:
        raise CliError(
            "--resume and --force: pass --resume to go on with the run, or --force to start afresh"
        )
    if resume or not holds_run(out, layout):
        return False
    if not force:
        checkpoint = out / layout.checkpoint
        if checkpoint.is_file():
            flag = layout.resume.format(checkpoint=checkpoint)
            raise CliError(
                f"output_dir {str(out)!r} already holds a run: pass {flag} to go on with it, "
                "or --force to start afresh (it empties the folder)"
            )
        raise CliError(
            f"output_dir {str(out)!r} already holds a run's files but no {layout.checkpoint} to resume "
            "from: pass --force to start afresh (it empties the folder), or choose another output_dir"
        )
    names = layout.names()
    for entry in sorted(out.iterdir()):
        kind = entry.is_dir() and not entry.is_symlink()
        if entry.name not in names or kind != (entry.name in layout.folders):
            raise CliError(
                f"--force: output_dir {str(out)!r} holds {entry.name!r}, not something a training run "
                "writes: not emptied (move it, or choose another output_dir)"
            )
    return True


def empty_run_folder(out: Path, layout: RunLayout) -> None:
    """Remove what :func:`claim_run_folder` found in ``out`` (the folder itself stays)."""
    for entry in sorted(out.iterdir()):
        if entry.name in layout.folders and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


__all__ = ["RunLayout", "claim_run_folder", "empty_run_folder", "holds_run"]
