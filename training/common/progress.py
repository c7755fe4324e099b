"""A long run's output folder as it goes: its manifest and the results of its finished jobs.

Why: a tournament or an evaluation can take hours, and a run that is stopped
(Ctrl-C, SIGTERM, a lost machine) must not lose the games already played. Each
finished job is appended to a JSON-lines file as it completes, and the run's
arguments (everything its results depend on, seeds included) go into
``manifest.json``. ``--resume`` checks the arguments against the manifest (a
different one is refused, naming it) and plays only the jobs not in the file;
every job carries its seeds, so the final tables are those of an uninterrupted run.

One folder rule for every command that saves games (:func:`claim_folder`): a folder that already
holds games is refused unless ``--resume`` goes on with them or ``--force`` starts afresh, so a
rerun never passes off old games as new ones, nor a refused run's manifest as the folder's.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from training.common.cli import CliError, note_saving
from training.common.provenance import cpu_seconds, where_made

MANIFEST = "manifest.json"
PIECES = "pieces.jsonl"  # one line per invocation that played into a run's folder
PROGRESS_SUFFIX = ".progress.jsonl"  # a run's finished jobs (JobLog), one file per folder that plays
#: a progress file, its records a resume set aside (``.bad``) and its rewrite in progress (``.tmp``)
RUN_SUFFIXES = (PROGRESS_SUFFIX, PROGRESS_SUFFIX + ".bad", PROGRESS_SUFFIX + ".tmp")
#: the other files a run writes into its folder: with its progress files, all ``--force`` may remove
RUN_FILES = frozenset(
    {
        MANIFEST,
        PIECES,
        "results.json",
        "summary.json",
        "games.jsonl",
        "winrates.csv",
        "ratings.csv",
        "tournament.png",
        "winrates.png",
        "card.json",
        "card.md",
        "card.png",
    }
)


def as_json(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists): what a resumed run compares and uses."""
    return json.loads(json.dumps(value))


def holds_games(folder: Path) -> bool:
    """Whether ``folder`` holds a run's games: its manifest, its pieces, or a progress file in it or
    in a folder of it (a tournament's game configurations)."""
    if not folder.is_dir():
        return False
    if (folder / MANIFEST).is_file() or (folder / PIECES).is_file():
        return True
    return any(folder.glob(f"*{PROGRESS_SUFFIX}")) or any(folder.glob(f"*/*{PROGRESS_SUFFIX}"))


def refusal(folder: Path, flag: str = "--out") -> CliError:
    """The one line a run into a folder that holds games gets without ``--resume`` or ``--force``."""
    return CliError(
        f"{flag} {str(folder)!r} already holds games: pass --resume to go on with them, "
        "or --force to start afresh"
    )


def is_run_manifest(path: Path) -> bool:
    """Whether ``path`` is a run's manifest: a JSON object naming the command that wrote it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("command"), str)


def claim_folder(
    folder: Path, resume: bool, force: bool, run: Path | None = None, flag: str = "--out"
) -> None:
    """The folder rule of every command that saves games; call it after the inputs and the agents
    are checked, before anything is written.

    ``run``: the folder of the games (``folder`` itself, or a card's ``games/``). ``resume``: nothing
    to do here (:func:`open_run` checks the manifest). Else a folder that holds games is refused in
    one line, unless ``force``: then ``folder`` is removed, but only when ``run`` has a run's manifest
    and every file under ``folder`` is one a run writes (:data:`RUN_FILES`, progress files), so
    ``--force`` on a folder of other files deletes nothing.
    """
    run = folder if run is None else run
    if resume and force:
        raise CliError("--resume and --force: pass --resume or --force, not both")
    if folder.exists() and not folder.is_dir():
        raise CliError(f"{flag} {str(folder)!r} exists and is not a directory")
    if resume or not holds_games(run):
        return
    if not force:
        raise refusal(folder, flag)
    if not is_run_manifest(run / MANIFEST):
        raise CliError(
            f"--force: {str(run)!r} holds games but no {MANIFEST} of a run: not emptied "
            f"(empty it yourself, or choose another {flag})"
        )
    for path in sorted(folder.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        if not path.is_file() or path.name not in RUN_FILES and not path.name.endswith(RUN_SUFFIXES):
            raise CliError(
                f"--force: {str(folder)!r} holds {path.relative_to(folder).as_posix()!r}, "
                "not a file a run writes: not emptied (move it, or choose another " + flag + ")"
            )
    shutil.rmtree(folder)


def open_run(folder: Path, manifest: dict[str, Any], resume: bool) -> None:
    """Start a run in ``folder`` (write its manifest), or check that a resumed one has the same arguments.

    A start into a folder that holds games is refused (:func:`claim_folder` empties it first when asked
    to): a run's games are never overwritten by, nor mistaken for, another's.
    """
    path = folder / MANIFEST
    manifest = as_json(manifest)
    if not resume:
        if holds_games(folder):
            raise refusal(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        note_saving(folder)
        return
    if not path.is_file():
        raise CliError(f"--resume: {str(folder)!r} has no {MANIFEST} (no run was started there)")
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CliError(f"--resume: {path} is not valid JSON ({exc})") from None
    for key in [*manifest, *(k for k in old if k not in manifest)]:
        if key == "networks" and old.get(key) != manifest.get(key):
            raise CliError(f"--resume: {str(folder)!r} {changed_networks(old.get(key), manifest.get(key))}")
        if key == "code" and old.get(key) != manifest.get(key):
            raise CliError(f"--resume: {str(folder)!r} {changed_code(old.get(key), manifest.get(key))}")
        if old.get(key) != manifest.get(key):
            raise CliError(
                f"--resume: {str(folder)!r} was started with {key} {old.get(key)!r}, "
                f"not {manifest.get(key)!r} (resume with the same arguments, or start a new folder)"
            )
    note_saving(folder)


#: what a refused resume can do instead
ADVICE = " (start a new folder, or --force to empty it)"


def changed_networks(old: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    """What differs between two manifests' ``networks`` (:func:`~training.common.provenance.network_digests`),
    in words: the first network whose weights changed, or the spec that loads one now or no longer."""
    old, new = old or {}, new or {}
    for spec in [*new, *(s for s in old if s not in new)]:
        before, now = old.get(spec, {}), new.get(spec, {})
        for network in [*now, *(n for n in before if n not in now)]:
            if network not in before:
                return f"was played without {spec} loading network {network}, which it loads now{ADVICE}"
            if network not in now:
                return f"was played with {spec} loading network {network}, which it no longer loads{ADVICE}"
            if before[network] != now[network]:
                return (
                    f"was played with {spec}'s network {network} of sha256 {str(before[network])[:12]}, "
                    f"which is now {str(now[network])[:12]}: the weights changed under the same name, "
                    f"so its games are not this run's{ADVICE}"
                )
    return f"was played with other networks{ADVICE}"


def changed_code(old: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    """What differs between two manifests' ``code`` (:func:`~training.common.provenance.agent_codes`), in
    words: the first agent whose module file or distribution version changed."""
    old, new = old or {}, new or {}
    for spec in [*new, *(s for s in old if s not in new)]:
        before, now = old.get(spec) or {}, new.get(spec) or {}
        for key in ("version", "sha256", "file"):
            if before.get(key) != now.get(key):
                what = {"version": "version", "sha256": "module file's sha256", "file": "module file"}[key]
                shown = [
                    str(v)[:12] if key == "sha256" and v else str(v) for v in (before.get(key), now.get(key))
                ]
                return (
                    f"was played with agent {spec} of {what} {shown[0]}, which is now {shown[1]}: "
                    f"its code changed, so its games are not this run's{ADVICE}"
                )
    return f"was played with other agent code{ADVICE}"


class JobLog:
    """An append-only JSON-lines file of finished jobs, one ``{"job": key, "result": ..., "sha256": ...}``
    a line.

    Why a line per job, flushed at once: a run killed at any moment leaves every job
    it finished readable; a line cut short by the kill (the last one) is dropped when
    the run resumes. Why a checksum (:func:`checksummed`): a resumed run's tables are
    built from these records, so one changed by a disk fault or a hand edit, even into
    valid JSON, must not count. A record that fails it, does not parse, lacks a key, is
    not UTF-8 or fails ``check`` (a caller's test of its content) is reported with its
    file and line (``report``), moved to ``PATH.bad`` and its job played again; the
    records after it are kept. Lines written before checksums are read unverified.
    """

    def __init__(
        self,
        path: Path,
        resume: bool,
        report: Callable[[str], None] | None = None,
        check: Callable[[Any], str | None] | None = None,
    ) -> None:
        self.path = path
        self.done: dict[int, Any] = self.read(path, report, check) if resume else {}
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = "a" if resume else "w"
        self._fh = open(path, mode, encoding="utf-8")  # noqa: SIM115 (closed by close())

    @staticmethod
    def read(
        path: Path,
        report: Callable[[str], None] | None = None,
        check: Callable[[Any], str | None] | None = None,
    ) -> dict[int, Any]:
        """The finished jobs in ``path`` (none when it is missing), each record verified.

        The file is left holding the good records only: a cut-off last line is removed,
        bad records are moved to ``PATH.bad`` and said to ``report`` (stderr by default).
        """
        if not path.is_file():
            return {}
        report = report or _to_stderr
        lines = path.read_bytes().splitlines(keepends=True)
        done: dict[int, Any] = {}
        good: list[bytes] = []
        bad: list[bytes] = []
        for number, line in enumerate(lines, 1):
            if number == len(lines) and not line.endswith(b"\n"):
                break  # the line a kill cut short
            try:
                key, result = parse_record(line)
                problem = check(result) if check is not None else None
            except ValueError as exc:
                problem = str(exc)
            if problem is None:
                done[key] = result
                good.append(line)
                continue
            bad.append(line)
            report(f"{path}: line {number}: {problem}; set aside in {path}.bad, its job will be played again")
        if bad:
            with open(f"{path}.bad", "ab") as fh:
                fh.writelines(bad)
        if len(good) < len(lines):
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(b"".join(good))
            tmp.replace(path)
        return done

    def add(self, key: int, result: Any) -> None:
        """Append one finished job (with its checksum) and flush it to the file."""
        body = record_body(key, result)
        try:
            self._fh.write(checksummed(body))
            self._fh.flush()
        except OSError as exc:  # a full disk: the error names no file unless told
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None
        self.done[key] = json.loads(body)["result"]  # as it reads back (as_json)

    def close(self) -> None:
        """Close the file (what was added is already in it)."""
        self._fh.close()


CHECKSUM = "sha256"


def record_body(key: int, result: Any) -> str:
    """A record's canonical JSON (compact, keys in their order): what its checksum is of."""
    return json.dumps({"job": key, "result": result}, separators=(",", ":"))


def checksummed(body: str) -> str:
    """A record's line: its canonical JSON ``body`` with the sha256 of that JSON as the last key.

    Why of the content and not of the line's bytes: a record re-encoded with other spacing
    (by a tool that keeps the keys' order) still verifies; a changed value does not."""
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return f'{body[:-1]},"{CHECKSUM}":"{digest}"}}\n'


def parse_record(line: bytes) -> tuple[int, Any]:
    """``(job, result)`` of one line of a :class:`JobLog`; ``ValueError`` says what is wrong with it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    try:
        entry = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(entry, dict):
        raise ValueError("not a record (a JSON object)")
    for name in ("job", "result"):
        if name not in entry:
            raise ValueError(f"the record has no {name} (keys: {', '.join(entry)})")
    key, result = entry["job"], entry["result"]
    if not isinstance(key, int) or isinstance(key, bool):
        raise ValueError(f"the record's job is {key!r}, not an integer")
    if CHECKSUM in entry:  # a line written before checksums has none: read unverified
        if len(entry) != 3:
            raise ValueError(f"job {key}'s record has other keys than job, result and {CHECKSUM}")
        digest = hashlib.sha256(record_body(key, result).encode("utf-8")).hexdigest()
        if digest != entry[CHECKSUM]:
            raise ValueError(f"job {key}'s record does not match its checksum (changed after it was written)")
    return key, result


def needs_keys(*names: str) -> Callable[[Any], str | None]:
    """A :class:`JobLog` ``check``: the result is a JSON object holding ``names`` (what its reader
    indexes), so a record saved before checksums that lacks one is replayed, not a ``KeyError``."""

    def check(result: Any) -> str | None:
        if not isinstance(result, dict):
            return f"the result is {type(result).__name__}, not a record"
        missing = [name for name in names if name not in result]
        return f"the result has no {', '.join(missing)}" if missing else None

    return check


def _to_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


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
def piece(folder: Path | None, **about: Any) -> Iterator[dict[str, Any]]:
    """Record one invocation's work in ``folder`` (:data:`PIECES`) when it ends, however it ends.

    Why: a run resumed three times cost the sum of its pieces, played at up to three commits; a
    card says so (:func:`read_pieces`) instead of quoting the last piece alone. ``about`` is
    stored with the piece (what it played), and the caller may add to the entry it gets (the games
    it played). ``folder`` ``None``: the entry is filled in but written nowhere (a run not saved).
    A piece that finished having played no game (a resume of a finished run, to write its tables
    again) is not written: it added nothing to the result, and a card played one game at a time
    would list one such piece per game and session. One that stopped is written, whatever it played.
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
        if folder is not None and not (stopped is None and entry.get("games") == 0):
            add_piece(folder, entry)


def check_writable(path: Path, flag: str, is_file: bool = False) -> None:
    """Refuse, before the first game, an output this process cannot write (read-only, missing folder).

    Why: a read-only ``--json`` folder used to fail only after every game was played. The nearest
    existing folder (``path`` or one above it) is probed with a file made and removed at once.
    """
    import tempfile

    where = path.parent if is_file else path
    while not where.exists() and where != where.parent:
        if is_file:
            raise CliError(f"{flag} {str(path)!r}: its folder {str(where)!r} does not exist")
        where = where.parent
    if is_file and path.is_dir():
        raise CliError(f"{flag} {str(path)!r} is a folder, not a file")
    if not is_file and where == path and not path.is_dir():
        raise CliError(f"{flag} {str(path)!r} exists and is not a directory")
    try:
        with tempfile.NamedTemporaryFile(dir=where, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise CliError(
            f"{flag} {str(path)!r}: cannot write in {str(where)!r} ({exc.strerror or exc})"
        ) from None


def save_text(path: str | Path, text: str) -> None:
    """``Path(path).write_text(text)``, whose errors name the file (a full disk's did not: ``[Errno 28]
    No space left on device`` alone, the write failing after the open)."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from None
