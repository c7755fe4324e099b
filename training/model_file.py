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
from pathlib import Path

from splendor_env.actions import NUM_ACTIONS
from splendor_env.observation import OBS_DIM

REQUIRED_MEMBERS = ("data", "policy.pth")


def model_zip_problem(path: str | Path) -> str | None:
    """What is wrong with ``path`` as a model for this version of the env, or None if nothing."""
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
    if shape != [OBS_DIM]:
        return (
            f"{str(path)!r} expects observations of shape {shape}, "
            f"but this env's observations have shape [{OBS_DIM}] (a model for another version?)"
        )
    act = data.get("action_space")
    if not isinstance(act, dict) or str(act.get("n")) != str(int(NUM_ACTIONS)):
        n = act.get("n") if isinstance(act, dict) else None
        return f"{str(path)!r} has {n} actions, this env has {NUM_ACTIONS}"
    return None
