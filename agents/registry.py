"""The spec registry: every agent built from one spec string (the list: docs/agents.md).

``make(spec, seed=0, **options)`` builds the agent ``spec`` names, seeded, its options typed
and range-checked by the agent; ``build(spec_or_agent, seed)`` is what callers use: it also
takes an agent instance as is and a bare checkpoint (``run/best.zip``, ``ppo_2p``) as
``ppo:PATH``. Agents are imported only when asked for (``ppo`` and ``az`` need torch).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Agent
from .options import parse_options

#: spec name -> one-line description (the registry's public face).
_SPECS: dict[str, str] = {
    "random": "uniform over legal actions",
    "greedy": "one-ply heuristic on the observation (agents/greedy/)",
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


def _no_options(name: str, rest: str, kwargs: dict[str, Any]) -> None:
    if rest or kwargs:
        given = sorted(parse_options(rest)) + sorted(kwargs)
        raise ValueError(f"agent {name!r} takes no options (got {given}); valid keys: []")


def make(spec: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build the agent named by ``spec`` (the specs: :func:`known_specs`, docs/agents.md), seeded with ``seed``."""
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


__all__ = ["build", "is_model_path", "known_specs", "make", "parse_spec"]
