"""Cheap checks that a file is a usable MaskablePPO ``.zip`` before a run depends on it.

Why: ``--resume``, ``init_from`` and ``evaluate MODEL.zip`` used to fail deep
inside SB3 (``wasn't a zip-file``, ``No data found``, a torch shape error),
after the run directory had been created. These checks read only the zip's
directory, its CRCs and the small JSON ``data`` member (no unpickling), so a
truncated, foreign or incompatible file is refused first, with one line.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from pathlib import Path

from splendor_env.actions import NUM_ACTIONS, NUM_ACTIONS_ALL
from splendor_env.observation import OBS_DIM, OBS_DIM_ALL

REQUIRED_MEMBERS = ("data", "policy.pth")


def model_zip_problem(path: str | Path, modules: Sequence[str] | None = None) -> str | None:
    """What is wrong with ``path`` as a model for this version of the env, or None if nothing.

    ``modules`` (the run's) also requires the sizes of that game: base-game
    sizes for ``[]``, the module sizes otherwise; ``None`` accepts either.
    """
    p = Path(path)
    if not p.is_file():
        return f"model file not found: {str(path)!r}"
    if not zipfile.is_zipfile(p):
        return f"{str(path)!r} is not a zip file (truncated, or not a MaskablePPO .zip)"
    try:
        with zipfile.ZipFile(p) as z:
            missing = [m for m in REQUIRED_MEMBERS if m not in z.namelist()]
            if missing:
                return f"{str(path)!r} holds no saved model (no {', '.join(missing)} inside)"
            bad = z.testzip()
            if bad is not None:
                return f"{str(path)!r} is corrupt (bad checksum in {bad})"
            data = json.loads(z.read("data").decode("utf-8"))
    except (zipfile.BadZipFile, OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"{str(path)!r} is truncated or corrupt ({type(exc).__name__}: {str(exc).splitlines()[0]})"
    obs = data.get("observation_space") if isinstance(data, dict) else None
    shape = obs.get("_shape") if isinstance(obs, dict) else None
    if modules is None:
        sizes = {OBS_DIM: NUM_ACTIONS, OBS_DIM_ALL: NUM_ACTIONS_ALL}
        game = "this env's games"
    else:
        sizes = {OBS_DIM_ALL: NUM_ACTIONS_ALL} if modules else {OBS_DIM: NUM_ACTIONS}
        game = f"modules {list(modules)}" if modules else "the base game"
    if not isinstance(shape, list) or len(shape) != 1 or shape[0] not in sizes:
        want = " or ".join(f"[{d}]" for d in sizes)
        return (
            f"{str(path)!r} expects observations of shape {shape}, "
            f"but {game} give observations of shape {want} (a model for another game or version?)"
        )
    act = data.get("action_space")
    want_n = sizes[shape[0]]
    if not isinstance(act, dict) or str(act.get("n")) != str(int(want_n)):
        n = act.get("n") if isinstance(act, dict) else None
        return f"{str(path)!r} has {n} actions, {game} have {want_n}"
    return None
