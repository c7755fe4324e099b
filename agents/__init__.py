"""Agents for Splendor and the registry that builds any of them from a spec string.

``agents.make("mcts:sims=800", seed=0)`` / ``agents.build(spec_or_agent, seed)``
(:mod:`agents.registry`; your own class as ``"package.module:Class,key=value"``); every agent is an :class:`agents.base.Agent`; games are played by
:mod:`agents.runner`. The specs, what each agent does and how strong it is: docs/agents.md.
"""

from __future__ import annotations

from pathlib import Path

import splendor_env
from splendor_env.numba_cache import package_sources, refresh_cache

# Before any agent is compiled: the compiled agents inline the engine's rules, so their numba
# cache must follow changes to either package (once per process, on the first import of agents).
refresh_cache(
    Path(__file__).parent, package_sources(Path(__file__).parent, Path(splendor_env.__file__).parent)
)

from agents.base import Agent  # noqa: E402 - after the cache guard on purpose
from agents.options import parse_options  # noqa: E402 - after the cache guard on purpose
from agents.registry import (  # noqa: E402 - after the cache guard on purpose
    ENTRY_POINT_GROUP,
    build,
    is_class_spec,
    is_model_path,
    known_specs,
    make,
    parse_spec,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Agent",
    "build",
    "is_class_spec",
    "is_model_path",
    "known_specs",
    "make",
    "parse_options",
    "parse_spec",
]
