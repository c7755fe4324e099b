"""splendor-env: exact, fast Splendor for reinforcement learning.

``splendor_env.env(num_players=2)`` is the PettingZoo AEC environment,
``splendor_env.raw_env`` the strict one; ``modules=(...)`` adds any of the
Cities of Splendor expansions (``MODULE_NAMES``). The rules live in
:mod:`splendor_env.rules` over the state arrays of :mod:`splendor_env.state`.
"""

from pathlib import Path as _Path

from .numba_cache import package_sources as _package_sources
from .numba_cache import refresh_cache as _refresh_cache

# Before any compiled module is imported: never load cached code compiled from older sources.
_refresh_cache(_Path(__file__).parent, _package_sources(_Path(__file__).parent))

from .actions import NUM_ACTIONS, NUM_ACTIONS_ALL, action_table, describe  # noqa: E402 - after the cache guard on purpose
from .env import EnvConfig, IllegalActionError, env, raw_env  # noqa: E402 - after the cache guard on purpose
from .observation import MODULE_OBS_LAYOUT, OBS_DIM, OBS_DIM_ALL, OBS_LAYOUT, layout_table  # noqa: E402 - after the cache guard on purpose
from .snapshot import SnapshotError, from_dict, to_dict  # noqa: E402 - after the cache guard on purpose
from .state import MODULE_NAMES, new_state  # noqa: E402 - after the cache guard on purpose

__version__ = "0.3.0"

__all__ = [
    "MODULE_NAMES",
    "MODULE_OBS_LAYOUT",
    "NUM_ACTIONS",
    "NUM_ACTIONS_ALL",
    "OBS_DIM",
    "OBS_DIM_ALL",
    "OBS_LAYOUT",
    "SnapshotError",
    "EnvConfig",
    "IllegalActionError",
    "action_table",
    "describe",
    "env",
    "from_dict",
    "layout_table",
    "new_state",
    "raw_env",
    "to_dict",
    "__version__",
]


def _register() -> None:
    """Make ``pettingzoo.make("aec", "splendor-v0")`` work where PettingZoo has a registry.

    ``splendor-v0`` follows the registry's ``Name-vN`` convention; the registry
    also resolves the classic module-style name ``splendor_v0`` to it.
    """
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # older PettingZoo without a registry
        return
    if "splendor-v0" not in aec_registry:
        register("aec", "splendor-v0", entry_point="splendor_env:env")


_register()


def _register_gymnasium() -> None:
    """Make ``gymnasium.make("splendor_env/Splendor-v0", opponents=...)`` work (the single-agent view).

    The entry point is a string: Gymnasium imports :mod:`agents.gym_view` only when the env is
    made, so this package never imports ``agents`` (the view builds agents, a higher layer).
    """
    import gymnasium

    if "splendor_env/Splendor-v0" not in gymnasium.registry:
        gymnasium.register(id="splendor_env/Splendor-v0", entry_point="agents.gym_view:SplendorGymEnv")


_register_gymnasium()
