"""The one interface every policy implements.

An agent is built from a spec string by :func:`agents.make` and answers
``act(observation, action_mask) -> int`` on the env's own observation vector
(``float32[OBS_DIM]``) and mask (``int8[NUM_ACTIONS]``), always returning a
legal id. Agents that search the game tree also need a state to search from:
the caller passes ``state=``, a *determinised* state array in which all
information hidden from the acting seat has been resampled
(:func:`splendor_env.determinize.determinize`), so a search agent can never
see a deck order or an opponent's blind reservation it would not know at the
table. ``act_batch`` is the batched form, with a default loop. Callers never
build that state themselves: :func:`agents.runner.decision_state` does, for
every loop that plays agents (:mod:`agents.runner`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np


class Agent:
    """Base class: subclasses implement :meth:`act`; ``seed`` makes them reproducible."""

    #: Spec name this agent is registered under (``"random"``, ``"greedy"``...).
    name: ClassVar[str] = "agent"
    #: True for agents that need ``state=`` (a determinised state) in :meth:`act`.
    needs_state: ClassVar[bool] = False
    #: False for agents that understand only the base game's observation and actions: they are
    #: refused up front (:func:`check_game`) for module games instead of failing on the first move.
    plays_modules: ClassVar[bool] = True

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(check_seed(seed))

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(check_seed(seed))

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions for a batch ``[B, OBS_DIM]`` / ``[B, NUM_ACTIONS]``; override when it can be vectorised."""
        return np.array(
            [self.act(o, m) for o, m in zip(observations, action_masks, strict=True)], dtype=np.int64
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def check_game(agent: object, label: str, modules: tuple[str, ...], num_players: int | None = None) -> None:
    """Refuse, naming the agent and what differs, a game it cannot play.

    A module game needs ``plays_modules``; with ``num_players``, an agent that
    knows which games it was trained for (a PPO policy's own ``check_game``)
    also checks the player count and the exact modules.
    """
    if modules and not getattr(agent, "plays_modules", True):
        raise ValueError(
            f"agent {label!r} plays only the base game; modules {list(modules)} need an agent that "
            "plays module games (random, greedy, mcts, human)"
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


def typed_options(
    noun: str, table: dict[str, tuple[type, object, str]], given: dict[str, object], hint: str = ""
) -> dict[str, object]:
    """``given`` options typed by ``table`` (name -> (type, default, help)), defaults filled in.

    Unknown names, non-numbers, booleans, fractional ints and non-finite floats are refused with
    the option named (``noun`` is e.g. ``"mcts parameter"``); range checks stay with each agent.
    """
    import math

    unknown = sorted(set(given) - set(table))
    if unknown:
        raise ValueError(f"unknown {noun}(s) {unknown}; valid keys: {sorted(table)}{hint}")
    out = {k: default for k, (_, default, _) in table.items()}
    for key, raw in given.items():
        typ = table[key][0]
        try:
            if isinstance(raw, bool) and typ is not str:
                raise ValueError
            value = typ(raw)
            if typ is int and isinstance(raw, float) and raw != int(raw):
                raise ValueError
            if typ is float and not math.isfinite(value):
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError(f"{noun} {key}={raw!r} is not a valid {typ.__name__}") from None
        out[key] = value
    return out
