"""The spec registry: every agent built from one spec string (the list: docs/agents.md).

``make(spec, seed=0, **options)`` builds the agent ``spec`` names, seeded, its options typed
and range-checked by the agent; ``build(spec_or_agent, seed)`` is what callers use: it also
takes an agent instance as is and a bare checkpoint (``run/best.zip``, ``ppo_2p``) as
``ppo:PATH``. Agents are imported only when asked for (``ppo`` and ``az`` need torch).

Three kinds of spec, tried in this order:

- a built-in name (:data:`_SPECS`): ``random``, ``mcts:sims=800``, ``ppo:ppo_2p``...
- a user's class, ``package.module:Class[,key=value...]``: imported, checked against the
  :class:`~agents.base.Agent` protocol (:func:`check_agent_class`) and built with its options
  as constructor keywords. Why a spec and not an object: commands, configs and worker processes
  (local or Ray) pass agents as strings, and a string imports the same class everywhere.
- a name an installed package adds in the entry-point group :data:`ENTRY_POINT_GROUP`
  (``name[:key=value...]``), its entry point's object built the same way.
"""

from __future__ import annotations

import importlib
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from agents.base import Agent, declaration_problem, misnamed_act
from agents.options import constructor_options, parse_options

#: The entry-point group through which an installed package adds named agents (``name = "pkg.mod:Class"``).
ENTRY_POINT_GROUP = "splendor_env.agents"
#: The methods an agent class must have (what the game loop and the job runners call).
PROTOCOL = ("act", "act_batch", "seed")
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

#: spec name -> one-line description (the registry's public face).
_SPECS: dict[str, str] = {
    "random": "uniform over legal actions",
    "greedy": "one-ply heuristic on the observation (agents/players/greedy/)",
    "mcts": "determinised MCTS; mcts:key=value,...",
    "ppo": "MaskablePPO checkpoint: ppo:NAME (a shipped model, agents.nets.shipped) or ppo:path/to/model.zip",
    "az": "PUCT search guided by a network (the shipped one for the game by default); az[:MODEL][,key=value...]",
    "lookahead": "one-ply lookahead over the engine: two-card purchase plan, denial of the opponent's best buy",
    "human": "a person at the terminal (agents/players/human.py): the board, the legal moves with codes, a prompt",
    "rllib": "a policy trained by RLlib (python -m training.rllib_ppo): rllib:runs/NAME/checkpoint; needs the rllib extra",
}


#: spec name -> the module whose ``PARAMS`` table types its options (their names end its description).
_OPTION_TABLES: dict[str, str] = {"mcts": "agents.players.mcts", "az": "agents.players.az"}


def known_specs() -> dict[str, str]:
    """Spec names accepted by :func:`make`, with a short description of each (installed agents too).

    The option names of ``mcts`` and ``az`` are read from their ``PARAMS`` tables here, not written
    out twice: a new option is listed the moment its agent accepts it. (Imported on call: the tables'
    modules load numba kernels, not torch, in a few tens of milliseconds.)
    """
    out = dict(_SPECS)
    for name, module in _OPTION_TABLES.items():
        keys = sorted(importlib.import_module(module).PARAMS)
        out[name] = f"{out[name]} with keys {', '.join(keys)}"
    for ep in _entry_points().values():
        out.setdefault(ep.name.lower(), f"installed agent {ep.value} (package {_dist_name(ep)})")
    return out


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``"name:rest"`` into ``(name, rest)``; ``rest`` is ``""`` without a colon.

    The name is lower-cased except in a class spec (``package.module:Class``), whose module
    path keeps its case.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}; known: {sorted(_SPECS)}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    return (name if is_class_spec(spec) else name.lower()), rest.strip()


def is_class_spec(spec: str) -> bool:
    """Whether ``spec`` is ``package.module:Class[,key=value...]`` (a user's agent class), not a built-in spec."""
    if not isinstance(spec, str):
        return False
    module, colon, rest = spec.strip().partition(":")
    attr = rest.split(",", 1)[0].strip()
    return (
        bool(colon)
        and module.strip().lower() not in _SPECS
        and _DOTTED.fullmatch(module.strip()) is not None
        and _DOTTED.fullmatch(attr) is not None
    )


def _entry_points() -> dict[str, metadata.EntryPoint]:
    """The installed agents: entry-point name (lower case) -> entry point, read on each call
    (cheap, and a package installed or put on ``sys.path`` meanwhile is seen)."""
    return {ep.name.lower(): ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _dist_name(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return str(getattr(dist, "name", "?"))


def check_agent_class(cls: object, label: str) -> None:
    """Refuse, naming what is missing, an object that is not an agent class (:data:`PROTOCOL`).

    Subclassing :class:`~agents.base.Agent` gives ``act_batch`` and ``seed``; a class of its own
    needs all three methods. A subclass must define ``act`` itself (:func:`~agents.base.misnamed_act`):
    the base class's only refuses to play, which would end the first game at its first move. The
    games it declares (``players``, ``plays_modules``) must be well formed
    (:func:`~agents.base.declaration_problem`): refused here, before any game, not game by game.
    """
    if not isinstance(cls, type):
        raise ValueError(f"agent {label!r} names a {type(cls).__name__}, not an agent class")
    missing = [m for m in PROTOCOL if not callable(getattr(cls, m, None))]
    if missing:
        raise ValueError(
            f"agent {label!r}: class {cls.__name__} does not follow the Agent protocol, it lacks "
            f"{', '.join(missing)} (subclass agents.base.Agent and implement act(observation, "
            "action_mask, state=None) -> int)"
        )
    problem = misnamed_act(cls) or declaration_problem(cls)
    if problem:
        raise ValueError(f"agent {label!r}: {problem}")


def load_class(spec: str) -> type:
    """The class a ``package.module:Class`` spec names, imported; a clear error when it is not there."""
    module_name, _, rest = spec.strip().partition(":")
    module_name, attr = module_name.strip(), rest.split(",", 1)[0].strip()
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise ValueError(
                f"agent spec {spec!r}: no module named {module_name!r} (is its folder on PYTHONPATH, "
                "or its package installed?)"
            ) from None
        raise ValueError(f"agent spec {spec!r}: importing {module_name!r} failed: {exc}") from exc
    except ImportError as exc:
        raise ValueError(f"agent spec {spec!r}: importing {module_name!r} failed: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"agent spec {spec!r}: module {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    check_agent_class(obj, spec)
    return obj


def construct(cls: type, label: str, seed: int | None, options: dict[str, Any]) -> Agent:
    """``cls(seed=seed, **options)``, its options typed by its signature (:func:`agents.options.constructor_options`).

    A class whose constructor takes no ``seed`` is built without it and then seeded with its
    ``seed`` method. Errors the constructor raises for bad values are named after the agent.
    """
    typed, takes_seed = constructor_options(cls, label, options)
    try:
        agent = cls(seed=seed, **typed) if takes_seed else cls(**typed)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"agent {label!r}: {exc}") from exc
    if not takes_seed and seed is not None:
        agent.seed(seed)
    return agent


def _options(spec: str, text: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = parse_options(text)
    clash = sorted(set(options) & set(kwargs))
    if clash:
        raise ValueError(f"agent {spec!r}: option(s) {clash} given both in the spec and as keyword arguments")
    return {**options, **kwargs}


def plugin_class(spec: str) -> type | None:
    """The class of a class spec or of an installed agent, imported and checked; ``None`` for a built-in
    spec (which this package's version and commit name: a run's provenance records only the others)."""
    if is_class_spec(spec):
        return load_class(spec)
    name, _ = parse_spec(spec)
    ep = _entry_points().get(name)
    if ep is None:
        return None
    try:
        cls = ep.load()
    except Exception as exc:  # a broken installed package: say which one
        raise ValueError(
            f"installed agent {name!r} ({ep.value}, package {_dist_name(ep)}) failed to load: {exc}"
        ) from exc
    check_agent_class(cls, name)
    return cls


def _make_plugin(spec: str, seed: int | None, kwargs: dict[str, Any]) -> Agent | None:
    """A class spec or an installed agent; ``None`` when ``spec`` is neither."""
    cls = plugin_class(spec)
    if cls is None:
        return None
    if is_class_spec(spec):
        _, _, rest = spec.strip().partition(":")
        _, _, text = rest.partition(",")
        return construct(cls, spec.strip(), seed, _options(spec, text, kwargs))
    name, rest = parse_spec(spec)
    return construct(cls, name, seed, _options(spec, rest, kwargs))


def _no_options(name: str, rest: str, kwargs: dict[str, Any]) -> None:
    if rest or kwargs:
        given = sorted(parse_options(rest)) + sorted(kwargs)
        raise ValueError(f"agent {name!r} takes no options (got {given}); valid keys: []")


def make(spec: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build the agent named by ``spec`` (the specs: :func:`known_specs`, docs/agents.md), seeded with ``seed``.

    ``spec`` may also be ``package.module:Class[,key=value...]`` or an installed agent's name
    (see the module docstring); ``kwargs`` are further options, as in the spec.
    """
    name, rest = parse_spec(spec)
    if name == "random":
        from agents.players.random_agent import RandomAgent

        _no_options(name, rest, kwargs)
        return RandomAgent(seed)
    if name == "greedy":
        from agents.players.greedy import GreedyAgent

        _no_options(name, rest, kwargs)
        return GreedyAgent(seed)
    if name == "mcts":
        from agents.players.mcts import MCTSAgent

        options: dict[str, Any] = parse_options(rest)
        clash = sorted(set(options) & set(kwargs))
        if clash:
            raise ValueError(f"mcts option(s) {clash} given both in the spec and as keyword arguments")
        options.update(kwargs)
        return MCTSAgent(seed, **options)
    if name == "human":
        from agents.players.human import HumanAgent

        if rest:
            raise ValueError(f"agent 'human' takes no options in its spec (got {rest!r})")
        return HumanAgent(seed, **kwargs)
    if name == "ppo":
        if not rest:
            raise ValueError(
                "the ppo spec needs a checkpoint path or shipped name: ppo:path/to/model.zip, ppo:ppo_2p"
            )
        try:
            from agents.players.ppo import PPOAgent
        except ImportError as exc:
            raise ImportError(
                f"agent spec {spec!r} needs agents/players/ppo.py and its dependencies "
                f"(torch, stable-baselines3, sb3-contrib: pip install -e '.[train]'): {exc}"
            ) from exc
        return PPOAgent(rest, seed=seed, **kwargs)
    if name == "az":
        try:
            from agents.players.az import AZAgent, parse_az_spec
        except ImportError as exc:
            raise ImportError(
                f"agent spec {spec!r} needs agents/players/az.py and its dependencies "
                f"(torch, stable-baselines3, sb3-contrib: pip install -e '.[train]'): {exc}"
            ) from exc
        path, az_options = parse_az_spec(rest)
        clash = sorted(set(az_options) & set(kwargs))
        if clash:
            raise ValueError(f"az option(s) {clash} given both in the spec and as keyword arguments")
        az_options.update(kwargs)
        return AZAgent(path, seed=seed, **az_options)
    if name == "lookahead":
        from agents.players.lookahead import LookaheadAgent

        _no_options(name, rest, kwargs)
        return LookaheadAgent(seed)
    if name == "rllib":
        from agents.players.rllib import RLlibAgent  # imports Ray only when built

        return RLlibAgent(rest, seed=seed, **kwargs)
    agent = _make_plugin(spec, seed, kwargs)
    if agent is not None:
        return agent
    raise ValueError(
        f"unknown agent spec {spec!r}; known: {', '.join(sorted(known_specs()))}, "
        "or package.module:Class for your own agent class"
    )


def is_model_path(spec: str) -> bool:
    """Whether ``spec`` is a bare checkpoint (``run/best.zip``, a shipped name such as ``ppo_2p``)
    rather than a registry spec."""
    name, _ = parse_spec(spec)
    text = spec.strip()
    if name in _SPECS or is_class_spec(text):
        return False
    if text.endswith(".zip") or Path(text).is_file():
        return True
    from agents.nets.shipped import resolve_model, retired_note

    try:
        resolve_model(text)
    except FileNotFoundError:
        return retired_note(text) is not None  # a retired network's name: loading it says where it is
    return True


def checkpoint_of(spec: str) -> str | None:
    """The checkpoint file a spec plays as a PPO policy, else ``None`` (an agent spec such as ``greedy``).

    ``x.zip``, ``ppo:x.zip``, a shipped name (``ppo_2p``, ``ppo:ppo_2p``) or an old
    ``models/ppo_2p.zip`` all resolve through :func:`agents.nets.shipped.resolve_model`, so the
    shipped models are found from any folder and from an installed wheel. A ``.zip`` (or ``ppo:``
    path) that does not exist comes back as given, for :func:`~agents.nets.checkpoint.model_zip_problem`
    to report; an agent spec whose option names a ``.zip`` (``az:run/best.zip``) is no checkpoint.
    """
    from agents.nets.shipped import resolve_model

    name, rest = parse_spec(spec)
    if name != "ppo" and not is_model_path(spec):
        return None
    path = rest if name == "ppo" else spec.strip()
    try:
        return str(resolve_model(path))
    except FileNotFoundError:
        return path if name == "ppo" or path.endswith(".zip") else None


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


__all__ = [
    "ENTRY_POINT_GROUP",
    "PROTOCOL",
    "build",
    "check_agent_class",
    "checkpoint_of",
    "construct",
    "is_class_spec",
    "is_model_path",
    "known_specs",
    "load_class",
    "make",
    "parse_spec",
    "plugin_class",
]
