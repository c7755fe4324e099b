"""Agents and their registry: build any policy from a spec string.

Spec strings (``agents.known_specs()`` lists them):

* ``random``: uniform over legal actions (:mod:`agents.random_agent`);
* ``greedy``: one-ply heuristic on the observation (:mod:`agents.greedy`);
* ``mcts`` or ``mcts:sims=800,c=1.0``: determinised MCTS (:mod:`agents.mcts`),
  ``key=value`` pairs separated by commas, typed and range-checked;
* ``human``: a person at the terminal (:mod:`agents.human`; ``input=`` / ``output=``
  streams may be passed as keyword arguments);
* ``ppo:NAME`` or ``ppo:path/to/model.zip``: a MaskablePPO checkpoint (:mod:`agents.ppo`,
  imported only when asked for, since it needs torch and sb3-contrib); ``NAME`` is a
  shipped model (``ppo_2p``, ``ppo_base_3_4p``, ``ppo_modules_2p``: :mod:`agents.models`);
* ``az`` or ``az:ppo_2p,sims=200`` (a shipped name or a path): PUCT search
  guided by a PPO network (:mod:`agents.az`); the bare spec picks the shipped
  network trained for the game being played (2-player base, 3-4 player base,
  2-player with all four modules);
* ``lookahead``: one-ply lookahead over the engine with a two-card purchase
  plan and denial (:mod:`agents.lookahead`).

``make(spec, seed=0)`` seeds the agent; other keyword arguments are agent
options, validated like the spec's ``key=value`` pairs. ``build(spec_or_agent,
seed)`` is what every caller uses: it also takes an agent instance as is and a
bare ``.zip`` path as a PPO checkpoint. Games are played by :mod:`agents.runner`
and opponents drawn by :mod:`agents.pool`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import splendor_env
from splendor_env.numba_cache import package_sources, refresh_cache

from .base import Agent

# The compiled agents inline the engine's rules: their cache must follow changes to either package.
refresh_cache(
    Path(__file__).parent, package_sources(Path(__file__).parent, Path(splendor_env.__file__).parent)
)

#: spec name -> one-line description (the registry's public face).
_SPECS: dict[str, str] = {
    "random": "uniform over legal actions",
    "greedy": "one-ply heuristic on the observation (agents/greedy.py)",
    "mcts": "determinised MCTS; mcts:key=value,... with keys c, depth, eps, ms, noise, rollout, shaping, sims, widen",
    "ppo": "MaskablePPO checkpoint: ppo:NAME (a shipped model, agents.models) or ppo:path/to/model.zip",
    "az": "PUCT search guided by a network (the shipped one for the game by default); "
    "az[:MODEL][,key=value...] with keys batch, c, fpu, ms, ptemp, sims, stop",
    "lookahead": "one-ply lookahead over the engine: two-card purchase plan, denial of the opponent's best buy",
    "human": "a person at the terminal (agents/human.py): the board, the legal moves with codes, a prompt",
}


def known_specs() -> dict[str, str]:
    """Spec names accepted by :func:`make`, with a short description of each."""
    return dict(_SPECS)


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``"name:rest"`` into ``(name, rest)``; ``rest`` is ``""`` without a colon."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}; known: {sorted(_SPECS)}")
    name, _, rest = spec.strip().partition(":")
    return name.strip().lower(), rest.strip()


def parse_options(text: str) -> dict[str, str]:
    """``"a=1,b=x"`` -> ``{"a": "1", "b": "x"}`` (values stay strings; agents type them)."""
    options: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ValueError(f"agent option {part!r} must be key=value")
        if key.strip() in options:
            raise ValueError(f"agent option {key.strip()!r} given twice")
        options[key.strip()] = value.strip()
    return options


def _no_options(name: str, rest: str, kwargs: dict[str, Any]) -> None:
    if rest or kwargs:
        given = sorted(parse_options(rest)) + sorted(kwargs)
        raise ValueError(f"agent {name!r} takes no options (got {given}); valid keys: []")


def make(spec: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build the agent named by ``spec`` (see the module docstring), seeded with ``seed``."""
    name, rest = parse_spec(spec)
    if name == "random":
        from .random_agent import RandomAgent

        _no_options(name, rest, kwargs)
        return RandomAgent(seed)
    if name == "greedy":
        from .greedy import GreedyAgent

        _no_options(name, rest, kwargs)
        return GreedyAgent(seed)
    if name == "mcts":
        from .mcts import MCTSAgent

        options: dict[str, Any] = parse_options(rest)
        clash = sorted(set(options) & set(kwargs))
        if clash:
            raise ValueError(f"mcts option(s) {clash} given both in the spec and as keyword arguments")
        options.update(kwargs)
        return MCTSAgent(seed, **options)
    if name == "human":
        from .human import HumanAgent

        if rest:
            raise ValueError(f"agent 'human' takes no options in its spec (got {rest!r})")
        return HumanAgent(seed, **kwargs)
    if name == "ppo":
        if not rest:
            raise ValueError(
                "the ppo spec needs a checkpoint path or shipped name: ppo:path/to/model.zip, ppo:ppo_2p"
            )
        try:
            from .ppo import PPOAgent
        except ImportError as exc:
            raise ImportError(
                f"agent spec {spec!r} needs agents/ppo.py and its dependencies "
                f"(torch, stable-baselines3, sb3-contrib: pip install -e '.[train]'): {exc}"
            ) from exc
        return PPOAgent(rest, seed=seed, **kwargs)
    if name == "az":
        try:
            from .az import AZAgent, parse_az_spec
        except ImportError as exc:
            raise ImportError(
                f"agent spec {spec!r} needs agents/az.py and its dependencies "
                f"(torch, stable-baselines3, sb3-contrib: pip install -e '.[train]'): {exc}"
            ) from exc
        path, az_options = parse_az_spec(rest)
        clash = sorted(set(az_options) & set(kwargs))
        if clash:
            raise ValueError(f"az option(s) {clash} given both in the spec and as keyword arguments")
        az_options.update(kwargs)
        return AZAgent(path, seed=seed, **az_options)
    if name == "lookahead":
        from .lookahead import LookaheadAgent

        _no_options(name, rest, kwargs)
        return LookaheadAgent(seed)
    raise ValueError(f"unknown agent spec {spec!r}; known: {', '.join(sorted(_SPECS))}")


def is_model_path(spec: str) -> bool:
    """Whether ``spec`` is a bare checkpoint (``run/best.zip``, a shipped name such as ``ppo_2p``)
    rather than a registry spec."""
    name, _ = parse_spec(spec)
    text = spec.strip()
    if name in _SPECS:
        return False
    if text.endswith(".zip") or Path(text).is_file():
        return True
    from .models import resolve_model

    try:
        resolve_model(text)
    except FileNotFoundError:
        return False
    return True


def build(spec: str | Agent, seed: int | None = None, **kwargs: Any) -> Agent:
    """The one way to turn what a caller was given into an agent.

    An :class:`Agent` (anything with ``act``) is returned as is (scripted
    opponents, a model in memory); a bare ``.zip`` path is a PPO checkpoint
    (``ppo:PATH``); any other string goes to :func:`make` with ``seed`` and the
    agent options ``kwargs``.
    """
    if isinstance(spec, str):
        return make(f"ppo:{spec.strip()}" if is_model_path(spec) else spec, seed=seed, **kwargs)
    if callable(getattr(spec, "act", None)):
        return spec
    raise TypeError(f"an agent must be a spec string or an Agent, got {spec!r}")


__all__ = ["Agent", "build", "is_model_path", "known_specs", "make", "parse_options", "parse_spec"]
