"""splendor-env: exact, fast Splendor for reinforcement learning.

``splendor_env.env(num_players=2)`` is the PettingZoo AEC environment (``splendor-v1``),
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
from .deal import new_state  # noqa: E402 - after the cache guard on purpose
from .env import EnvConfig, IllegalActionError, env, raw_env  # noqa: E402 - after the cache guard on purpose
from .observation import MODULE_OBS_LAYOUT, OBS_DIM, OBS_DIM_ALL, OBS_LAYOUT, layout_table  # noqa: E402 - after the cache guard on purpose
from .snapshot import SnapshotError, from_dict, to_dict  # noqa: E402 - after the cache guard on purpose
from .state import MODULE_NAMES  # noqa: E402 - after the cache guard on purpose

__version__ = "0.6.0"

__all__ = [
    "GYMNASIUM_ID",
    "MODULE_NAMES",
    "MODULE_OBS_LAYOUT",
    "NUM_ACTIONS",
    "NUM_ACTIONS_ALL",
    "OBS_DIM",
    "OBS_DIM_ALL",
    "OBS_LAYOUT",
    "PETTINGZOO_ID",
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


#: The registered ids. PettingZoo's ``splendor-v0`` (before 0.5.0: a 1114-float module observation,
#: ``state()`` the engine array) still resolves, with a deprecation warning (docs/environment/versions.md).
PETTINGZOO_ID, GYMNASIUM_ID = "splendor-v1", "splendor_env/Splendor-v1"
_OLD_PETTINGZOO_ID = "splendor-v0"


def _register() -> None:
    """Make ``pettingzoo.make("aec", "splendor-v1")`` work where PettingZoo has a registry.

    ``splendor-v1`` follows the registry's ``Name-vN`` convention; the registry
    also resolves the classic module-style name ``splendor_v1`` to it.
    ``splendor-v0`` makes the same env after a ``DeprecationWarning`` (PettingZoo's registry
    does not warn about old versions itself).
    """
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # older PettingZoo without a registry
        return
    if PETTINGZOO_ID not in aec_registry:
        register("aec", PETTINGZOO_ID, entry_point="splendor_env:env")
    if _OLD_PETTINGZOO_ID not in aec_registry:
        register("aec", _OLD_PETTINGZOO_ID, entry_point="splendor_env.env:_deprecated_v0_env")


_register()


def _register_gymnasium() -> None:
    """Make ``gymnasium.make("splendor_env/Splendor-v1", opponents=...)`` (the single-agent view) and
    ``gymnasium.make_vec("splendor_env/Splendor-v1", num_envs=N, opponents=...)`` (the batched vector
    view, :class:`agents.gym_vector.SplendorVectorEnv`) work.

    The entry points are strings: Gymnasium imports :mod:`agents` only when an env is made, so this
    package never imports ``agents`` (the views build agents, a higher layer).
    """
    import gymnasium

    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(
            id=GYMNASIUM_ID,
            entry_point="agents.gym_view:SplendorGymEnv",
            vector_entry_point="agents.gym_vector:SplendorVectorEnv",
        )


_register_gymnasium()
