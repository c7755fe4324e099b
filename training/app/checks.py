"""What the app lets a request name: agent seats, model files, record files, and how deep a body may nest.

Why apart: the server may be left running and reached by any page the user
visits, so everything a request names is checked here against the folders and
budgets given at start (``--records-dir``, ``--models-dir``,
``--max-ms-per-move``) before anything is built or opened. Each refusal is an
:class:`ApiError` whose message names what was wrong.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

import agents
from agents.nets.shipped import shipped_names
from agents.options import parse_options


class ApiError(Exception):
    """A request the server refuses, with the HTTP status and the message the page shows."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST):
        super().__init__(message)
        self.status = status


#: The spec of a person at a page (not built from the registry: the page is the human's input).
HUMAN = "human"
#: Search agents whose ``sims`` and ``ms`` options spend time per move, and the simulations
#: per millisecond the cap assumes for each (conservative: ``mcts:sims=400`` takes well under
#: a second on a 2-core machine). A spec whose ``sims`` would need more than the cap is refused;
#: one admitted is still held to the cap as it runs (:mod:`training.app.seats`), so a wrong
#: estimate (a slower machine) costs strength, not time.
SIMS_PER_MS = {"mcts": 0.3, "az": 0.4}
#: Largest record file opened from the records folder (a records file of 10,000 games is about 10 MB).
MAX_RECORD_BYTES = 16 * 1024 * 1024
#: Most actions in a record the table opens: a real game has a few hundred, and each action is a position kept.
MAX_RECORD_ACTIONS = 20_000
#: Deepest nesting of a request body (a record is 2 deep; a snapshot 3).
MAX_JSON_DEPTH = 16


@dataclass(frozen=True)
class Limits:
    """What the server was started with: where records and models may come from, the time per agent move."""

    records_dir: Path
    models_dir: Path | None
    max_ms_per_move: float


def inside(folder: Path, name: str, what: str) -> Path:
    """``name`` as a path inside ``folder``, refused (before anything is opened) when it points outside."""
    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        raise ApiError(f"{what} must be a file name inside {folder}")
    root = folder.resolve()
    path = (root / name.strip()).resolve()  # resolves '..' and symbolic links before the check
    if not path.is_relative_to(root) or path == root:
        raise ApiError(f"{what} {name.strip()!r} is outside {folder}: only files there may be opened")
    return path


def read_record_file(folder: Path, name: str) -> str:
    """The text of a records file inside ``folder``: a regular file of at most MAX_RECORD_BYTES.

    Opened without blocking (a named pipe would hold the request forever) and
    checked on the open file, so a file swapped in after the name was checked
    is checked too.
    """
    path = inside(folder, name, "'path'")
    shown = path.relative_to(folder.resolve())
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        raise ApiError(f"no records file {str(shown)!r} in {folder}") from None
    info = os.fstat(fd)  # before fdopen, which raises IsADirectoryError (a 500) on a folder
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ApiError(f"{str(shown)!r} is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_RECORD_BYTES:
            raise ApiError(f"{str(shown)!r} is too large ({info.st_size} bytes; at most {MAX_RECORD_BYTES})")
        raw = handle.read(MAX_RECORD_BYTES + 1)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(f"{str(shown)!r} is not UTF-8 text: {exc}") from None


def record_files(folder: Path) -> list[str]:
    """The ``.jsonl`` files directly in ``folder`` and one level below, as the page lists them."""
    if not folder.is_dir():
        return []
    found = [*folder.glob("*.jsonl"), *folder.glob("*/*.jsonl")]
    return sorted(str(p.relative_to(folder)) for p in found if p.is_file())[:500]


def _model(name: str, limits: Limits, spec: str) -> str:
    """A model a seat names: a shipped model by name, or a ``.zip`` inside ``--models-dir`` (its full path)."""
    stem = name[: -len(".zip")] if name.endswith(".zip") else name
    if "/" not in name and "\\" not in name and stem in shipped_names():
        return stem
    if limits.models_dir is None:
        raise ApiError(
            f"agent spec {spec!r}: model {name!r} is not a shipped model ({', '.join(shipped_names())}); "
            "start the server with --models-dir to play models of your own"
        )
    path = inside(limits.models_dir, name if name.endswith(".zip") else name + ".zip", "model")
    if not path.is_file():
        raise ApiError(f"agent spec {spec!r}: no model {name!r} in {limits.models_dir}")
    return str(path)


def _budget(name: str, options: dict[str, str], limits: Limits, spec: str) -> None:
    """Refuse a search spec whose budget per move is beyond ``--max-ms-per-move``."""
    cap = limits.max_ms_per_move
    try:
        ms = float(options.get("ms", 0))
        sims = int(options["sims"]) if "sims" in options else None
    except ValueError:
        return  # not a number: the agent's own check says so
    if ms > cap:
        raise ApiError(f"agent spec {spec!r}: ms={ms:g} is over this server's --max-ms-per-move {cap:g}")
    most = int(cap * SIMS_PER_MS[name])
    if ms == 0 and sims is not None and sims > most:
        raise ApiError(
            f"agent spec {spec!r}: sims={sims} is over this server's cap of {most} for {name} "
            f"(--max-ms-per-move {cap:g}); give fewer sims or ms=..."
        )


def check_seat(spec: str, limits: Limits) -> str:
    """The seat spec the server will build: a registered name, models only shipped or from
    ``--models-dir`` (their full path; an RLlib checkpoint only from there), search budgets
    within ``--max-ms-per-move``."""
    name, rest = agents.parse_spec(spec)
    if name == HUMAN:
        if rest:
            raise ApiError(f"'human' takes no options, got {spec!r}")
        return HUMAN
    if name not in agents.known_specs():
        raise ApiError(f"unknown agent spec {spec!r}; known: {', '.join(sorted(agents.known_specs()))}")
    if name == "rllib":  # a checkpoint folder, unpickled when loaded: only from --models-dir
        if limits.models_dir is None:
            raise ApiError(
                f"agent spec {spec!r}: RLlib checkpoints load only from --models-dir (start the server with it)"
            )
        path = inside(limits.models_dir, rest, "checkpoint")
        if not path.is_dir():
            raise ApiError(
                f"agent spec {spec!r}: no checkpoint folder {rest.strip()!r} in {limits.models_dir}"
            )
        return f"rllib:{path}"
    if name == "ppo":
        if not rest:
            raise ApiError(f"agent spec {spec!r}: name a model, e.g. ppo:{shipped_names()[0]}")
        return f"ppo:{_model(rest, limits, spec)}"
    if name in SIMS_PER_MS:
        parts = [p.strip() for p in rest.split(",")] if rest else []
        model = parts.pop(0) if name == "az" and parts and "=" not in parts[0] else None
        try:
            options = parse_options(",".join(parts))
        except ValueError as exc:
            raise ApiError(f"agent spec {spec!r}: {exc}") from None
        _budget(name, options, limits, spec)
        if model is not None:
            parts.insert(0, _model(model, limits, spec))
        return f"{name}:{','.join(parts)}" if parts else name
    return spec.strip()


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep a parsed JSON value nests (a scalar is 0), counted no further than ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            depth += 1
            deepest = max(deepest, depth)
            if depth > limit:
                return depth
            stack.extend((v, depth) for v in (item.values() if isinstance(item, dict) else item))
    return deepest
