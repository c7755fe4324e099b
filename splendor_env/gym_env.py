"""Deprecated location of the single-agent Gymnasium view: use :mod:`agents.gym_view`.

Why a shim: the view builds agents (its opponents), and ``splendor_env`` must
not depend on ``agents`` (the layers go ``splendor_env <- agents <- training``).
Old code that imports ``splendor_env.gym_env.SplendorGymEnv`` (or
``agent_state``, now :func:`agents.runner.decision_state`) keeps working: the
name is looked up in its new module on use, with a :class:`DeprecationWarning`. This is the only reference
from ``splendor_env`` to a higher layer (``tests/test_layering.py`` allows it
by name). ``gymnasium.make("splendor_env/Splendor-v1")`` does not come through
here: the registration names ``agents.gym_view:SplendorGymEnv``.
"""

from __future__ import annotations

import warnings
from typing import Any

#: Old name -> (its new module, its name there).
_MOVED = {
    "SplendorGymEnv": ("agents.gym_view", "SplendorGymEnv"),
    "OpponentsArg": ("agents.gym_view", "OpponentsArg"),
    "agent_state": ("agents.runner", "decision_state"),
}


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, new = _MOVED[name]
    warnings.warn(
        f"splendor_env.gym_env.{name} moved to {module}.{new}; import it from there",
        DeprecationWarning,
        stacklevel=2,
    )
    from agents import gym_view, runner  # the one allowed upward reference: see the module docstring

    return getattr(gym_view if module == "agents.gym_view" else runner, new)


def __dir__() -> list[str]:
    return sorted(_MOVED)
