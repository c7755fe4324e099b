"""MaskablePPO checkpoints: checking a ``.zip`` cheaply, loading it, and the games it records.

Why one module: every caller that takes a model (``ppo:PATH``, ``az``, training's ``--resume``
and ``init_from``, evaluation, the workers that receive networks as bytes) goes through these
functions, so a truncated, foreign or mismatched file is refused the same way everywhere:
:func:`model_zip_problem` reads only the zip's directory, CRCs and small ``data`` member (no
unpickling) and names what is wrong in one line, before anything depends on the file.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from splendor_env.actions import NUM_ACTIONS, NUM_ACTIONS_ALL
from splendor_env.observation import OBS_DIM, OBS_DIM_ALL
from splendor_env.state import MODULE_NAMES

#: Attribute of a MaskablePPO model (saved in the zip's ``data`` JSON by ``model.save``) that says
#: which games the policy was trained for: ``{"players": [3, 4], "modules": ["cities"]}``.
GAME_ATTR = "splendor_game"

REQUIRED_MEMBERS = ("data", "policy.pth")


def model_zip_problem(path: str | Path, modules: Sequence[str] | None = None) -> str | None:
    """What is wrong with ``path`` as a model for this version of the env, or None if nothing.

    ``modules`` (the run's) also requires the sizes of that game: base-game
    sizes for ``[]``, the module sizes otherwise; ``None`` accepts either.
    """
    p = Path(path)
    if not p.is_file():
        from agents.nets.shipped import retired_note

        note = retired_note(path)
        return f"model file not found: {note or repr(str(path))}"
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


def load_model(path: str | Path) -> Any:
    """Load a MaskablePPO ``.zip`` on the CPU: a file or a shipped model's name (``ppo_2p``).

    The name goes through :func:`agents.nets.shipped.resolve_model`, so a shipped
    model loads from an installed wheel too, and a missing file is one clear error.
    """

    from agents.nets.shipped import resolve_model, retired_note, shipped_names

    try:
        p = resolve_model(path)
    except FileNotFoundError:
        note = retired_note(path)
        if note is not None:
            raise FileNotFoundError(f"PPO model file not found: {note}") from None
        raise FileNotFoundError(
            f"PPO model file not found: {str(path)!r} (expected a MaskablePPO .zip or a shipped model: "
            f"{', '.join(shipped_names())})"
        ) from None
    try:
        model = load_ppo(p)
    except Exception as exc:  # noqa: BLE001 - zipfile, torch and SB3 each raise their own kind
        detail = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"PPO model {str(p)!r} is not a readable MaskablePPO .zip: {detail}") from exc
    check_model_spaces(model, str(p))
    flush_subnormal_weights(model.policy)
    return model


#: Modules that checkpoints of earlier layouts name in their pickled policy class (the network classes
#: lived in ``agents.ppo``, then ``agents.policy_net``): every shipped network and users' own runs.
LEGACY_MODULES = ("agents.ppo", "agents.policy_net")


def load_ppo(source: Any, **kwargs: Any) -> Any:
    """``MaskablePPO.load(source, device="cpu", **kwargs)``, reading checkpoints of every layout: the
    network classes' old module names (:data:`LEGACY_MODULES`) resolve to :mod:`agents.nets.policy_net`."""
    import sys

    from sb3_contrib import MaskablePPO

    from agents.nets import policy_net

    for name in LEGACY_MODULES:
        sys.modules.setdefault(name, policy_net)
    return MaskablePPO.load(source, device="cpu", **kwargs)


def flush_subnormal_weights(policy: Any) -> int:
    """Set the policy's subnormal weights (below float32's 1.2e-38) to zero; returns how many there were.

    Why: CPUs compute with subnormals many times slower, and search training can leave thousands
    in a network (``az_2p`` holds 62,206); no output moves by more than about 1e-38. The search's
    numba copy is flushed too (:func:`agents.nets.numba_net.flush_subnormals`).
    """
    import torch as th

    count = 0
    with th.no_grad():
        for param in policy.parameters():
            tiny = (param.abs() < th.finfo(param.dtype).tiny) & (param != 0)
            count += int(tiny.sum())
            param[tiny] = 0.0
    return count


def check_model_spaces(model: Any, name: str = "model") -> None:
    """Refuse at load time a model whose observation size / action count is no game of this env."""
    obs_shape = getattr(model.observation_space, "shape", None)
    n_actions = getattr(model.action_space, "n", None)
    if (obs_shape, n_actions) not in (((OBS_DIM,), NUM_ACTIONS), ((OBS_DIM_ALL,), NUM_ACTIONS_ALL)):
        raise ValueError(
            f"PPO model {name!r} expects observations of shape {obs_shape} and {n_actions} actions; "
            f"this env gives ({OBS_DIM},) and {NUM_ACTIONS} for the base game, ({OBS_DIM_ALL},) and "
            f"{NUM_ACTIONS_ALL} with modules (a model for another version?)"
        )
    game_of(model, name)


def game_meta(players: list[int] | tuple[int, ...] | int, modules: list[str] | tuple[str, ...]) -> dict:
    """The :data:`GAME_ATTR` value training stores in a model: player counts and modules, normalised."""
    counts = sorted({int(players)} if isinstance(players, (int, np.integer)) else {int(n) for n in players})
    return {"players": counts, "modules": [m for m in MODULE_NAMES if m in set(modules)]}


def game_of(model: Any, name: str = "model") -> dict[str, Any]:
    """Which games ``model`` plays: ``{"players", "modules", "obs_dim", "num_actions", "inferred"}``.

    Read from the model's :data:`GAME_ATTR`; a model saved before it existed
    (the shipped ``ppo_2p``) is inferred from its sizes: a base-game model is a
    2-player base-game policy (that is how every such model was trained).
    """
    obs_dim = int(np.prod(model.observation_space.shape))
    n_actions = int(model.action_space.n)
    meta = getattr(model, GAME_ATTR, None)
    if meta is None:
        if obs_dim != OBS_DIM:
            raise ValueError(
                f"PPO model {name!r} plays module games but does not record which modules and player "
                f"counts it was trained for (no {GAME_ATTR!r} in the model); retrain it with training.train"
            )
        return {"players": [2], "modules": [], "obs_dim": obs_dim, "num_actions": n_actions, "inferred": True}
    try:
        game = game_meta(meta["players"], meta["modules"])
        ok = (
            game["players"]
            and set(game["players"]) <= {2, 3, 4}
            and len(game["modules"]) == len(meta["modules"])
        )
    except (TypeError, KeyError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"PPO model {name!r} has an unreadable {GAME_ATTR!r} record: {meta!r}")
    if bool(game["modules"]) != (obs_dim == OBS_DIM_ALL):
        raise ValueError(
            f"PPO model {name!r} records modules {game['modules']} but has observations of size {obs_dim}"
        )
    return {**game, "obs_dim": obs_dim, "num_actions": n_actions, "inferred": False}


def zip_data(path: str | Path) -> dict[str, Any]:
    """The ``data`` member of a model's zip (its spaces and recorded game), read without unpickling."""
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("data").decode("utf-8"))


def recorded_game(path: str | Path) -> dict[str, Any] | None:
    """The game a model's zip records (:data:`GAME_ATTR`, normalised by :func:`game_meta`), read without
    unpickling; ``None`` when it records none (saved before models did) or none readable."""
    meta = zip_data(path).get(GAME_ATTR)
    try:
        return game_meta(meta["players"], meta["modules"])
    except (KeyError, TypeError, ValueError):
        return None


def describe_game(players: list[int] | int, modules: list[str] | tuple[str, ...]) -> str:
    """``"3 or 4 players, base game"`` / ``"2 players, modules cities+orient"`` (for messages)."""
    counts = [players] if isinstance(players, int) else list(players)
    who = " or ".join(str(n) for n in counts) + " players"
    return f"{who}, {'modules ' + '+'.join(modules) if modules else 'base game'}"


def game_mismatch(game: dict[str, Any], num_players: int, modules: list[str] | tuple[str, ...]) -> str | None:
    """What differs between a model's :func:`game_of` and a game (``None`` if it may play it)."""
    mods = game_meta(num_players, modules)["modules"]
    problems = []
    if num_players not in game["players"]:
        problems.append(
            f"player count: trained for {' or '.join(map(str, game['players']))}, game has {num_players}"
        )
    if mods != game["modules"]:
        problems.append(
            f"modules: trained for {game['modules'] or 'none (base game)'}, game has {mods or 'none (base game)'}"
        )
    dim, acts = (OBS_DIM_ALL, NUM_ACTIONS_ALL) if mods else (OBS_DIM, NUM_ACTIONS)
    if (dim, acts) != (game["obs_dim"], game["num_actions"]):
        problems.append(
            f"observation size {game['obs_dim']} vs {dim}, action count {game['num_actions']} vs {acts}"
        )
    return "; ".join(problems) or None


def model_bytes(model: Any) -> bytes:
    """A MaskablePPO model as the bytes of its ``.zip`` (what a worker is sent)."""
    buf = io.BytesIO()
    model.save(buf)
    return buf.getvalue()


def model_from_bytes(data: bytes) -> Any:
    """The MaskablePPO model of :func:`model_bytes`, on the CPU."""

    return load_ppo(io.BytesIO(data))


__all__ = [
    "GAME_ATTR",
    "check_model_spaces",
    "describe_game",
    "flush_subnormal_weights",
    "game_meta",
    "game_mismatch",
    "game_of",
    "load_model",
    "model_bytes",
    "model_from_bytes",
    "model_zip_problem",
    "recorded_game",
    "zip_data",
]
