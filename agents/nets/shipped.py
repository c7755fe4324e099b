"""The shipped policies: package data addressed by name, each with its metadata.

Why one registry: the trained models ship inside the ``agents`` package
(``agents/shipped/NAME.zip`` beside ``NAME.json`` and the ``README.md`` that documents them and
their metadata), so they are found through :mod:`importlib.resources` from a checkout and from an
installed wheel alike. Every caller that names a model goes through :func:`resolve_model`, and
picks a model for a game with :func:`default_model`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

#: The data folder inside the ``agents`` package that holds the shipped models.
SHIPPED_DIR = "shipped"

#: The release that took the retired networks out of the package.
RETIRED_IN = "0.6.0"
#: Networks shipped once and retired from the package (:data:`RETIRED_IN`): name -> (sha256 of its
#: ``NAME.zip``, the commit that shipped it). Why retired: the package keeps only the networks a
#: default or the benchmark protocol names (each older 2-player default weighed 3 MB in every
#: install); the results in the docs still name these, and the commit gives each back byte for byte
#: (:func:`retired_note`). agents/shipped/README.md lists them.
RETIRED: dict[str, tuple[str, str]] = {
    "az_2p_v2": ("fa8330b99bf1779336664f57a4df2848794c485afc1d0e2016fd2e355587df15", "d2c8b7bc7e81"),
    "az_2p_v3": ("6e74daac142aabbcd2a97b7d4a6d051518037542abbf505bb189de8a47552262", "27f3db9d2e87"),
    "az_2p_v4": ("1e7777b925c5cd7306ed0365be6563fffed5f6cadcdd3005e8bf56276a02a2bb", "e1aa2cb32aef"),
}


def shipped_dir() -> Path:
    """The folder holding the shipped ``.zip`` / ``.json`` files (a real folder: wheels install unzipped)."""
    return Path(str(files("agents").joinpath(SHIPPED_DIR)))


def model_label(path: str | Path) -> str:
    """A model file as messages and cards name it: a shipped network by its name (``ppo_2p``: the same on
    every machine, where its path names the checkout it was found in), any other by its path."""
    p = Path(path)
    if p.suffix == ".zip" and p.parent.resolve() == shipped_dir().resolve():
        return p.stem
    return str(path)


@cache
def _load_all() -> dict[str, dict[str, Any]]:
    models: dict[str, dict[str, Any]] = {}
    folder = shipped_dir()
    for meta_file in sorted(folder.glob("*.json")):
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        name = meta_file.stem
        models[name] = {**meta, "name": name, "path": str(folder / f"{name}.zip")}
    return models


def shipped_models() -> dict[str, dict[str, Any]]:
    """Shipped model name -> its metadata (the ``NAME.json`` contents plus ``name`` and ``path``).

    Returns a deep copy, so callers may change what they get.
    """
    return json.loads(json.dumps(_load_all()))


def shipped_names() -> list[str]:
    """The names of the shipped models, sorted, e.g. ``["az_2p", "az_modules_2p", "ppo_2p", "ppo_base_3_4p", "ppo_modules_2p"]``."""
    return sorted(_load_all())


def _shipped_name(text: str) -> str | None:
    """The shipped model ``text`` names: ``NAME`` or ``NAME.zip`` (no folder), else ``None``."""
    p = Path(text)
    stem = p.name[: -len(".zip")] if p.name.endswith(".zip") else p.name
    return stem if len(p.parts) == 1 and stem in _load_all() else None


def retired_note(name_or_path: str | Path) -> str | None:
    """Where to get a retired network back, when ``name_or_path`` names one (``NAME`` or ``NAME.zip``);
    else ``None``. The file it brings back, left in the working folder, is what ``NAME`` then names."""
    p = Path(str(name_or_path).strip())
    stem = p.name[: -len(".zip")] if p.name.endswith(".zip") else p.name
    if len(p.parts) != 1 or stem not in RETIRED:
        return None
    sha, commit = RETIRED[stem]
    return (
        f"{stem!r} was retired from the package in {RETIRED_IN} (sha256 {sha[:16]}...); get it back from "
        f"the commit that shipped it, in a clone of the repository: "
        f"git show {commit}:agents/shipped/{stem}.zip > {stem}.zip, then name that file ({stem}.zip)"
    )


def resolve_model(name_or_path: str | Path) -> Path:
    """The model file ``name_or_path`` names.

    In order: an existing file (``NAME`` or ``NAME.zip``) is itself; a shipped
    name (``ppo_2p``, ``ppo_2p.zip``) is the packaged file. Anything else raises
    :class:`FileNotFoundError`: for a retired network's name, where to get it back
    (:func:`retired_note`); otherwise naming the shipped models.
    """
    text = str(name_or_path).strip()
    if text:
        p = Path(text).expanduser()
        if p.is_file():
            return p
        if p.suffix != ".zip" and p.with_name(p.name + ".zip").is_file():
            return p.with_name(p.name + ".zip")
        name = _shipped_name(text)
        if name is not None:
            return Path(_load_all()[name]["path"])
        note = retired_note(text)
        if note is not None:
            raise FileNotFoundError(f"model not found: {note}")
    raise FileNotFoundError(
        f"model not found: {text!r} is neither a file nor a shipped model; "
        f"shipped models: {', '.join(shipped_names())}"
    )


def search_options(name_or_path: str | Path) -> dict[str, Any]:
    """The ``az`` options a shipped model's metadata records (``"az"``); ``{}`` for any other file.

    Whatever ``resolve_model`` makes of ``name_or_path`` decides: a shipped name or a path into
    the shipped folder has the options; a file of one's own (even one named like a shipped model)
    has none.
    """
    try:
        path = Path(resolve_model(name_or_path)).resolve()
    except FileNotFoundError:
        return {}
    if path.parent != shipped_dir().resolve() or path.stem not in _load_all():
        return {}
    return dict(_load_all()[path.stem].get("az", {}))


def default_model(num_players: int, modules: tuple[str, ...] | list[str] = ()) -> str | None:
    """The shipped model trained for ``num_players`` and exactly ``modules``, or ``None`` if none is.

    Where several cover the game, the one whose metadata says ``"default": true`` comes first
    (each game's default is marked: a new network does not take over by its name), then by name.
    """
    wanted = set(modules)
    covering = [
        name
        for name, meta in _load_all().items()
        if int(num_players) in meta["game"]["players"] and set(meta["game"]["modules"]) == wanted
    ]
    if not covering:
        return None
    return min(covering, key=lambda name: (not _load_all()[name].get("default", False), name))


__all__ = [
    "model_label",
    "RETIRED",
    "RETIRED_IN",
    "default_model",
    "resolve_model",
    "retired_note",
    "search_options",
    "shipped_dir",
    "shipped_models",
    "shipped_names",
]
