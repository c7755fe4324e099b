"""Where and when a result was made: date, package version, commit (and whether the tree was dirty), machine, cost,
and what an agent played with: the sha256 of its networks and the code of its class.

Why one module: a benchmark card, a learning curve and a long run's pieces all say what produced
them, and a number a paper quotes must name the code it came from; one function writes that
record so every page names it the same way. A spec names a network or a class, not its contents:
a file retrained under the same name, or an own agent edited, plays other games, and only the
digest (or the installed distribution's version) tells the two apart.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from training.common.games import config_label

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


@cache
def commit_state() -> tuple[str, bool | None]:
    """The checkout's short commit and whether tracked files differ from it (``"unknown"``, ``None``
    outside a git checkout: an installed wheel).

    Read once per process: a long run reports the commit whose code it loaded, not a later one
    checked out under it while it ran."""
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


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes, as hex (read in blocks: a network is megabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def network_file(name: str) -> dict[str, Any]:
    """A network as a spec names it, the file that name resolves to and its sha256 (``None`` both
    when it resolves to no file)."""
    from agents.nets.shipped import resolve_model

    try:
        path = resolve_model(name)
    except FileNotFoundError:
        return {"network": name, "file": None, "sha256": None}
    return {"network": name, "file": str(path), "sha256": file_sha256(path)}


def agent_networks(spec: str, games: Sequence[tuple[int, Sequence[str]]] = ()) -> list[dict[str, Any]]:
    """Every network file ``spec`` loads (:func:`network_file`), with the ``games`` (labels) it plays.

    A ``ppo:`` spec or a bare checkpoint loads one (:func:`agents.registry.checkpoint_of`), as does
    an ``az:`` spec that names one; ``az`` naming none plays the shipped network of each game, so
    each of ``games`` is looked up (:func:`agents.nets.shipped.default_model`). Other specs load none.
    """
    from agents.nets.shipped import default_model
    from agents.registry import checkpoint_of, parse_spec

    labels = [config_label(n, tuple(m)) for n, m in games]
    name, rest = parse_spec(spec)
    if checkpoint_of(spec) is not None:
        return [{**network_file(rest if name == "ppo" else spec.strip()), "games": labels}]
    if name != "az":
        return []
    from agents.players.az import parse_az_spec

    path, _ = parse_az_spec(rest)
    if path is not None:
        return [{**network_file(path), "games": labels}]
    by_network: dict[str, dict[str, Any]] = {}
    for (n, mods), label in zip(games, labels, strict=True):
        network = default_model(n, tuple(mods))
        if network is not None:
            by_network.setdefault(network, {**network_file(network), "games": []})["games"].append(label)
    return list(by_network.values())


def network_digests(
    specs: Sequence[str], games: Sequence[tuple[int, Sequence[str]]] = ()
) -> dict[str, dict[str, str | None]]:
    """``{spec: {network: sha256}}`` of the specs among ``specs`` that load a network in ``games``.

    Why: a run's manifest holds it, so a ``--resume`` after a network file changed under the same
    name (a retrained ``ppo_2p.zip``, a new shipped default) is refused instead of counting games
    of the old weights as the new one's.
    """
    digests = {}
    for spec in dict.fromkeys(specs):
        networks = {n["network"]: n["sha256"] for n in agent_networks(spec, games)}
        if networks:
            digests[spec] = networks
    return digests


#: the top-level packages of this project: an agent class from one of them is built in
OWN_PACKAGES = ("agents", "splendor_env", "training")


def agent_code(cls: type) -> dict[str, Any] | str:
    """Where an agent's class comes from: ``"built in"`` (this package, at the card's commit), or its
    module file and that file's sha256, with the installed distribution and its version when there is
    one (the sha256 too: an editable install keeps its version while its code is edited)."""
    module = cls.__module__
    top = module.split(".")[0]
    if top in OWN_PACKAGES:
        return "built in"
    file = getattr(sys.modules.get(module), "__file__", None)
    code = {"module": module, "file": file, "sha256": None if file is None else file_sha256(file)}
    dists = metadata.packages_distributions().get(top)
    if dists:
        code.update(distribution=dists[0], version=metadata.version(dists[0]))
    return code


def agent_codes(specs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``{spec: code}`` (:func:`agent_code`) of the specs among ``specs`` that name a class of their own
    (``package.module:Class`` or an installed agent); built-in specs are left out."""
    from agents.registry import plugin_class

    codes = {}
    for spec in dict.fromkeys(specs):
        cls = plugin_class(spec)
        if cls is not None:
            code = agent_code(cls)
            if code != "built in":
                codes[spec] = code
    return codes


def run_provenance(specs: Sequence[str], games: Sequence[tuple[int, Sequence[str]]]) -> dict[str, Any]:
    """What a run's manifest records of its agents so that a ``--resume`` can tell they are the same:
    ``networks`` (:func:`network_digests`) and ``code`` (:func:`agent_codes`), each only when not empty
    (so an older folder of built-in, network-free agents still resumes)."""
    found = {"networks": network_digests(specs, games), "code": agent_codes(specs)}
    return {key: value for key, value in found.items() if value}


def agent_provenance(
    spec: str, games: Sequence[tuple[int, Sequence[str]]] = (), agent: object | None = None
) -> dict[str, Any]:
    """What ``spec`` played with: the spec, its networks (:func:`agent_networks`) and its class's code
    (:func:`agent_code`). ``agent``: the agent already built from ``spec`` (else it is built here)."""
    if agent is None:
        from agents import build

        agent = build(spec)
    return {"spec": spec, "networks": agent_networks(spec, games), "code": agent_code(type(agent))}


__all__ = [
    "agent_code",
    "agent_codes",
    "agent_networks",
    "agent_provenance",
    "commit_state",
    "cpu_seconds",
    "file_sha256",
    "network_digests",
    "network_file",
    "run_provenance",
    "where_made",
]
