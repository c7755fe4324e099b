"""One way for every command-line tool to fail on bad input: one line, exit status 2.

Why: users hand the CLIs their own arguments, configs and model files; a traceback
hides the one fact they need (which argument, which file, what was wrong). Every
``python -m training.X`` entry point runs its ``main`` through :func:`run_cli`.
``--debug`` (anywhere on the command line) or ``SPLENDOR_DEBUG=1`` re-raises
instead, with the full traceback, for bug reports.

Errors that count as user input errors: :class:`CliError`, ``ValueError`` (which
the library raises for a bad spec, option or snapshot), ``OSError`` (a missing or
unreadable file). Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from splendor_env.layout import MODULE_NAMES


class CliError(Exception):
    """A user-input error found by a CLI; its message names the argument and what was wrong."""


USER_ERRORS: tuple[type[BaseException], ...] = (CliError, ValueError, OSError)

#: the folders the running command saves its finished work into (:func:`note_saving`)
SAVING: list[str] = []
#: the flag that makes the running command go on with its saved work ("": it always goes on)
RESUME_FLAG: list[str] = ["--resume"]


def note_saving(folder: str | os.PathLike[str], resume_flag: str | None = None) -> None:
    """Say that this command saves its finished work in ``folder``, so a stop names it and the command
    that goes on (the first folder noted is the one named; ``resume_flag``: the flag that goes on,
    ``""`` for a command that always goes on where it stopped, ``"--resume PATH"`` for one that takes
    the checkpoint to go on from)."""
    if resume_flag is not None:
        RESUME_FLAG[0] = resume_flag
    if str(folder) not in SAVING:
        SAVING.append(str(folder))


def stop_line(prog: str, args: list[str], why: str) -> str:
    """One line for a stopped command: what was saved and the command that goes on (``--resume``)."""
    if not SAVING:
        return f"{prog}: stopped ({why})"
    flag, _, value = RESUME_FLAG[0].partition(" ")
    again = [a for a in args if a != "--force"]
    if value:  # the flag takes the checkpoint: the one given before (if any) makes way for it
        given = [i for i, a in enumerate(again) if a == flag]
        again = [a for i, a in enumerate(again) if i not in given and i - 1 not in given]
        again = [a for a in again if not a.startswith(flag + "=")] + [flag, value]
    elif flag and flag not in again:
        again = [*again, flag]
    command = " ".join([prog if prog.startswith("python") else f"python -m {prog}", *again])
    return f"{prog}: stopped ({why}); what was finished is saved in {SAVING[0]}: go on with {command}"


def run_cli(main: Callable[[list[str] | None], Any], argv: list[str] | None = None, prog: str = "") -> int:
    """Run ``main(argv)``; a user-input error prints ``prog: error: message`` and returns 2.

    Returns ``main``'s integer result (0 when it returns ``None``). ``--debug`` is
    removed from ``argv`` before ``main`` sees it.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("SPLENDOR_DEBUG", "") not in ("", "0")
    args = [a for a in args if a != "--debug"]
    prog = prog or os.path.basename(sys.argv[0])
    previous = exit_on_sigterm()
    SAVING.clear()
    RESUME_FLAG[0] = "--resume"
    try:
        result = main(args)
    except KeyboardInterrupt:
        print(stop_line(prog, args, "Ctrl-C"), file=sys.stderr)
        return 130
    except SystemExit as exc:
        if exc.code == 143:
            print(stop_line(prog, args, "SIGTERM"), file=sys.stderr)
        raise
    except USER_ERRORS as exc:
        if debug:
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"{prog}: error: {message}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return result if isinstance(result, int) else 0  # a main may return its figures (a dict)


def exit_on_sigterm() -> Any:
    """SIGTERM (``kill``, a job scheduler's stop) ends the program as Ctrl-C does: through its ``finally``.

    Why: Python's default SIGTERM ends the process at once, so a training run's ``finally``
    (worker pools shut down, TensorBoard flushed, Ray stopped) never ran and its workers idled on.
    ``SystemExit(143)`` (128 + 15, what a shell reports for SIGTERM) unwinds instead. Returns the
    handler it replaced (for :func:`run_cli` to put back), or ``None`` off the main thread, where
    no handler can be set and nothing changes.
    """

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        return None


def check_game_args(players: list[int], modules: list[str] | tuple[str, ...]) -> None:
    """``--players`` / ``--modules`` of any CLI: counts 2-4, none twice; known modules, none twice."""
    import splendor_env

    if not players:
        raise CliError("--players needs at least one player count")
    for n in players:
        if n not in (2, 3, 4):
            raise CliError(f"--players must be 2, 3 or 4, got {n}")
    if len(set(players)) != len(players):
        raise CliError(f"--players lists a player count twice: {list(players)}")
    if len(set(modules)) != len(modules):
        raise CliError(f"--modules lists a module twice: {list(modules)}")
    try:
        splendor_env.EnvConfig(num_players=players[0], modules=tuple(modules))
    except ValueError as exc:
        raise CliError(f"--modules: {exc}") from None


#: ``--modules`` of the commands that play a benchmark protocol's games: the base game or all four modules
MODULE_CHOICES: dict[str, tuple[str, ...]] = {
    "none": (),
    "all": tuple(MODULE_NAMES),
}


def chosen_games(
    players: list[int] | None, modules: list[str] | None
) -> list[tuple[int, tuple[str, ...]]] | None:
    """The games ``--players`` and ``--modules none|all`` ask for (``None``: every game)."""
    if players is None and modules is None:
        return None
    if players is not None:
        check_game_args(players, [])
    bad = [m for m in modules or () if m not in MODULE_CHOICES]
    if bad:
        raise CliError(f"--modules takes none or all, got {' '.join(bad)}")
    counts = [2, 3, 4] if players is None else players
    kinds = list(MODULE_CHOICES) if modules is None else modules
    return [(n, MODULE_CHOICES[k]) for n in counts for k in dict.fromkeys(kinds)]
