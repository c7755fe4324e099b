"""The one interface every policy implements: ``act(observation, action_mask, state=None) -> int``.

An agent answers on the env's own observation vector and mask, always with a legal id;
``act_batch`` is the batched form. Search agents (``needs_state``) also get ``state=``, given
only by :func:`agents.runner.decision_state` (the fairness rule: :mod:`agents.runner`).

The protocol a user's class follows to be built from a ``package.module:Class`` spec (checked by
:func:`agents.registry.check_agent_class`): methods ``act``, ``act_batch`` and ``seed(seed)``
(subclassing :class:`Agent` gives the last two); a constructor taking ``seed=`` (or none, then
``seed`` is called) and its options as keywords, typed by annotation or default; optional class
attributes ``name``, ``needs_state`` (defaults: the class name, False) and the games it plays,
``players`` and ``plays_modules`` (defaults: ``(2, 3, 4)``, True; checked when it is built,
:func:`declaration_problem`), and optionally ``check_game(num_players, modules)`` raising
``ValueError`` for a game it cannot play (a finer rule than the two attributes can say).

Why declare the games: every command asks :func:`check_game` before a game is played, so a game
the agent does not play is refused up front (``training.play``, ``training.evaluate``) or skipped
with the reason (a tournament, a benchmark card), instead of failing on the first move or costing
a card's games in games the agent was never meant for.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

#: The player counts a game of Splendor has.
PLAYER_COUNTS: tuple[int, ...] = (2, 3, 4)


class Agent:
    """Base class: subclasses implement :meth:`act`; ``seed`` makes them reproducible.

    A class declares the games it plays with two class attributes, so that every command
    (``training.play``, ``training.evaluate``, ``training.tournament``, ``training.benchmark``)
    refuses or skips the others up front (:func:`check_game`) instead of failing at the first move:

    - ``players``: the player counts it plays, a tuple of 2, 3 and 4 (default ``(2, 3, 4)``);
      ``players = (2,)`` for a 2-player agent.
    - ``plays_modules``: False for an agent that understands only the base game's observation
      and actions (default True).

    A class of its own (not a subclass) may set the same attributes. A malformed one
    (``players = (5,)``, ``players = 2``) is refused when the class is built from its spec
    (:func:`declaration_problem`). Finer rules (say, modules with 2 players only) go in an optional
    method ``check_game(num_players, modules)`` raising ``ValueError``; it is asked after the
    attributes.
    """

    #: Spec name this agent is registered under (``"random"``, ``"greedy"``...).
    name: ClassVar[str] = "agent"
    #: True for agents that need ``state=`` (a determinised state) in :meth:`act`.
    needs_state: ClassVar[bool] = False
    #: False for agents that understand only the base game's observation and actions: they are
    #: refused up front (:func:`check_game`) for module games instead of failing on the first move.
    plays_modules: ClassVar[bool] = True
    #: The player counts it plays, a tuple of 2, 3 and 4: ``(2,)`` for a 2-player agent, which
    #: every command then refuses (or skips) in 3- and 4-player games (:func:`check_game`).
    players: ClassVar[tuple[int, ...]] = PLAYER_COUNTS

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(check_seed(seed))

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(check_seed(seed))

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        raise NotImplementedError(
            f"class {type(self).__name__} does not define act(observation, action_mask, state=None) -> int"
        )

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions for a batch ``[B, OBS_DIM]`` / ``[B, NUM_ACTIONS]``; override when it can be vectorised."""
        return np.array(
            [self.act(o, m) for o, m in zip(observations, action_masks, strict=True)], dtype=np.int64
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class AbandonGame(Exception):
    """Raised by an agent to end its game on purpose (a person quitting at the prompt).

    The runner (:mod:`agents.runner`) passes it on as it is; any other exception from ``act``
    is the agent's fault and becomes an :class:`agents.runner.AgentError`.
    """


def misnamed_act(cls: type) -> str | None:
    """Why a subclass of :class:`Agent` cannot play, or ``None``: it must define ``act`` itself.

    A subclass that leaves ``act`` as the base class's (a misspelt or misnamed method) would
    otherwise fail on its first move; the reason names the methods it does define.
    """
    if not (isinstance(cls, type) and issubclass(cls, Agent)) or cls.act is not Agent.act:
        return None
    own = sorted(
        name
        for klass in cls.__mro__
        if klass is not Agent and klass is not object
        for name, value in vars(klass).items()
        if callable(value) and not name.startswith("_") and not hasattr(Agent, name)
    )
    hint = ""
    if len(own) == 1:
        hint = f" (it defines {own[0]}: should that be act?)"
    elif own:
        hint = f" (it defines {', '.join(own)}: should one of them be act?)"
    return (
        f"class {cls.__name__} subclasses agents.base.Agent but does not define "
        f"act(observation, action_mask, state=None) -> int{hint}"
    )


def declaration_problem(agent: object) -> str | None:
    """What is wrong with the games an agent class (or agent) declares, or ``None``.

    ``players`` must be a non-empty tuple (or list) of player counts 2, 3 and 4, and
    ``plays_modules`` True or False: a mistake there would otherwise make every game look
    undeclared, or every game declared, with no word why.
    """
    cls = agent if isinstance(agent, type) else type(agent)
    players = getattr(agent, "players", PLAYER_COUNTS)
    if isinstance(players, property):  # a class that works it out per agent: checked on the agent
        players = PLAYER_COUNTS
    counts = list(players) if isinstance(players, (tuple, list, set, frozenset)) else None
    if (
        not counts
        or any(
            isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n not in PLAYER_COUNTS
            for n in counts
        )
        or len(set(counts)) != len(counts)
    ):
        one = isinstance(players, int) and players in PLAYER_COUNTS
        hint = f" (write players = ({players},))" if one else ""
        return (
            f"class {cls.__name__} declares players = {players!r}: it must be a non-empty tuple of "
            f"distinct player counts among 2, 3 and 4, such as (2,) or (2, 3, 4){hint}"
        )
    plays_modules = getattr(agent, "plays_modules", True)
    if not isinstance(plays_modules, property) and not isinstance(plays_modules, (bool, np.bool_)):
        return f"class {cls.__name__} declares plays_modules = {plays_modules!r}: it must be True or False"
    return None


def check_game(agent: object, label: str, modules: tuple[str, ...], num_players: int | None = None) -> None:
    """Refuse, naming the agent and what differs, a game it cannot play.

    The agent declares its games (:class:`Agent`): a module game needs ``plays_modules``, and
    with ``num_players`` the count must be one of its ``players``; then its own ``check_game``,
    if it has one, applies its finer rules (a PPO policy checks the exact game it was trained for).
    """
    problem = declaration_problem(agent)
    if problem:
        raise ValueError(f"agent {label!r}: {problem}")
    players = tuple(getattr(agent, "players", PLAYER_COUNTS))
    if num_players is not None and num_players not in players:
        game = f"{num_players}p {'+'.join(modules) if modules else 'base'}"
        raise ValueError(f"agent {label!r} does not play {game}: it declares players = {players!r}")
    if modules and not getattr(agent, "plays_modules", True):
        raise ValueError(
            f"agent {label!r} plays only the base game; modules {list(modules)} need an agent that "
            "plays module games (random, greedy, mcts, human, or az / ppo with a network trained for "
            "them, such as az_modules_2p)"
        )
    own_check = getattr(agent, "check_game", None)
    if num_players is not None and callable(own_check):
        own_check(num_players, tuple(modules))


def check_seed(seed: object) -> int | None:
    """An agent seed: ``None`` or an int >= 0 (what numpy's generators accept), named when wrong."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"agent seed must be None or an int >= 0, got {seed!r}")
    return int(seed)


def check_mask(action_mask: np.ndarray, size: int | None = None) -> np.ndarray:
    """Indices of the legal actions; a clear error for an all-zero mask or one of the wrong length."""
    mask = np.asarray(action_mask)
    if mask.ndim != 1 or (size is not None and mask.shape[0] != size):
        want = f"({size},)" if size is not None else "1-D"
        raise ValueError(f"action_mask must have shape {want}, got {mask.shape}")
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        raise ValueError(
            "action_mask has no legal action: is this agent on move, and is the game still running?"
        )
    return legal


def search_inputs(
    name: str, state: np.ndarray | None, action_mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a search agent's ``act`` checks first: ``(state as int32, legal ids, the state's own mask)``.

    ``state`` must be given (already determinised for the acting seat) and must be the
    decision ``action_mask`` asks about; each refusal names what was wrong.
    """
    from splendor_env import rules
    from splendor_env import state as st
    from splendor_env.actions import num_actions

    if state is None:
        raise ValueError(
            f"{name} needs state=: a state determinised for the acting seat "
            "(splendor_env.determinize.determinize), see agents.runner.decision_state"
        )
    s = np.ascontiguousarray(state, dtype=np.int32)
    size = num_actions(int(s[st.MODULES]))
    legal = check_mask(action_mask, size)
    mask = np.zeros(size, dtype=np.int8)
    rules.legal_mask(s, mask)
    if not np.array_equal(mask != 0, np.asarray(action_mask) != 0):
        raise ValueError("state= does not match action_mask: pass the state of the decision being asked")
    return s, legal, mask
