"""PettingZoo AEC adapter over the rules in :mod:`splendor_env.rules`.

``raw_env`` is strict: an illegal action raises :class:`IllegalActionError`
(naming the action and why it is illegal) and leaves the game unchanged.
``env()`` gives the behaviour of PettingZoo's standard wrapper stack
(order enforcement, out-of-bounds assertion, terminate-on-illegal-move with a
-1 penalty) in one lean layer, because the generic wrappers cost as much per
step as the whole Splendor engine.

Agents are ``player_0 .. player_{n-1}``; ``observe(agent)`` returns
``{"observation": float32[OBS_DIM], "action_mask": int8[NUM_ACTIONS]}`` with
an all-zero mask for agents not on move. Rewards are terminal by default: the
sole winner +1, every loser -1, co-winners of a shared victory 0, everyone 0
on truncation (turn cap). ``reward_mode="shaped"`` adds, for the acting
player, ``shaping_scale * prestige gained`` on every step.

``modules=("cities", "trading_posts", "orient", "strongholds")`` (any subset)
enables the Cities of Splendor expansions: the action space becomes
``Discrete(NUM_ACTIONS_ALL)`` and the observation ``float32[OBS_DIM_ALL]``
(base layout first, module sections appended). Without modules both are
exactly the base game's.

``state()`` is PettingZoo's global state for centralised training: every seat's
observation, in seat order (``state_space``); what the players know between
them, never the deck order. The engine's array, hidden cards included, is
``engine_state()``. ``reset(options={"snapshot": snap})`` starts from a snapshot.

Version history (docs/environment/versions.md): 0.2.0 first release (base game and
Cities of Splendor modules); 0.5.0 ``splendor-v1``: ``state()`` the global observation,
``engine_state()`` the array, ``reset(options={"snapshot": ...})``, strict validation,
module observation with cards per colour, payment keeps unneeded tokens.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from . import rules
from . import snapshot as snap
from . import state as st
from .actions import describe, num_actions
from .deal import setup
from .observation import obs_dim, observe
from .render import render_as

OBS_HIGH = 127.0
#: Range of ``shaping_scale`` (reward per prestige point; the terminal reward is +-1).
SHAPING_RANGE = (0.0, 1.0)


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the current state."""


@dataclass(frozen=True)
class EnvConfig:
    """Options accepted by :func:`env` / :func:`raw_env` (validated on creation)."""

    num_players: int = 2
    max_turns: int = st.DEFAULT_MAX_TURNS
    reward_mode: str = "terminal"
    shaping_scale: float = 0.01
    illegal_reward: float = -1.0
    modules: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        st.validate_setup_args(self.num_players, 0, self.max_turns)
        # numpy integers in, plain ints kept: sizes computed from them and records written from them
        object.__setattr__(self, "num_players", int(self.num_players))
        object.__setattr__(self, "max_turns", int(self.max_turns))
        bits = st.parse_modules(self.modules)
        object.__setattr__(self, "modules", st.module_names(bits))
        if self.reward_mode not in ("terminal", "shaped"):
            raise ValueError(f"reward_mode must be 'terminal' or 'shaped', got {self.reward_mode!r}")
        for name in ("shaping_scale", "illegal_reward"):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)
            ):
                raise TypeError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))
        lo, hi = SHAPING_RANGE
        if not lo <= self.shaping_scale <= hi:
            raise ValueError(
                f"shaping_scale must be in {lo}..{hi} (reward per prestige point), got {self.shaping_scale}"
            )
        if self.illegal_reward > 0:
            raise ValueError(f"illegal_reward is a penalty and must be <= 0, got {self.illegal_reward}")

    @property
    def module_bits(self) -> int:
        """The MODULES bitmask of the enabled modules (0 for the base game)."""
        return st.parse_modules(self.modules)

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> EnvConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown option(s) {unknown}; known options: {sorted(known | {'render_mode'})}")
        return cls(**options)


def as_action_id(action: Any, n_actions: int = 72) -> int:
    """Accept Python/numpy integers (and 0-d integer arrays); reject anything else clearly."""
    if isinstance(action, (bool, np.bool_)):
        raise TypeError(f"action must be an integer id, got bool {action!r}")
    if isinstance(action, (int, np.integer)):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    raise TypeError(
        f"action must be an integer id in 0..{n_actions - 1}, got {type(action).__name__} {action!r}"
    )


class raw_env(AECEnv):  # noqa: N801 - PettingZoo naming convention
    """Splendor as a PettingZoo AEC environment (strict: illegal actions raise)."""

    metadata = {
        "name": "splendor_v1",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, num_players: int = 2, render_mode: str | None = None, **options: Any):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.config = EnvConfig.from_options({"num_players": num_players, **options})
        self.render_mode = render_mode
        self._terminate_on_illegal = False
        n = self.config.num_players
        bits = self.config.module_bits
        self._modules = bits
        self._n_actions = num_actions(bits)
        self._obs_dim = obs_dim(bits)
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, OBS_HIGH, (self._obs_dim,), np.float32),
                "action_mask": spaces.Box(0, 1, (self._n_actions,), np.int8),
            }
        )
        act_space = spaces.Discrete(self._n_actions)
        #: ``state()``: every seat's observation, in seat order (see :meth:`state`).
        self.state_space = spaces.Box(0.0, OBS_HIGH, (n * self._obs_dim,), np.float32)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act_space)
        self._state = np.zeros(st.state_size(bits), dtype=np.int32)
        self._mask = np.zeros(self._n_actions, dtype=np.int8)
        self._zero_mask = np.zeros(self._n_actions, dtype=np.int8)
        self._terminal = np.zeros(st.MAX_PLAYERS, dtype=np.float64)
        self._rng = np.random.default_rng()
        self._has_reset = False

    # -- spaces ---------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- game access ----------------------------------------------------
    @property
    def game_state(self) -> np.ndarray:
        """The engine's state array (a read-only view; use :meth:`restore` to change it)."""
        view = self._state.view()
        view.flags.writeable = False
        return view

    def _require_reset(self, what: str) -> None:
        if not self._has_reset:
            raise RuntimeError(f"{what} called before reset() (or restore())")

    def state(self) -> np.ndarray:
        """PettingZoo's global state, for centralised critics: every seat's observation, in seat order.

        ``float32[num_players * obs_dim]`` in :attr:`state_space`: seat ``p``'s own view (as
        ``observe(f"player_{p}")["observation"]``) at ``[p * obs_dim, (p + 1) * obs_dim)``. Why this
        and not the engine array: it is what the players know between them (each one's blind
        reserves included), never the order of the decks, so a critic trained on it cannot learn
        from cards nobody at the table has seen, and it is already scaled like the observations.
        Before 0.5.0 ``state()`` returned the engine array: that is :meth:`engine_state` now.
        """
        self._require_reset("state()")
        out = np.empty((self.config.num_players, self._obs_dim), dtype=np.float32)
        for p in range(self.config.num_players):
            observe(self._state, p, out[p])
        return out.reshape(-1)

    def engine_state(self) -> np.ndarray:
        """Copy of the engine's full state array (hidden information included: deck order, every card).

        What search agents determinise, :meth:`restore` and ``splendor_env.snapshot.from_array``
        accept, and what ``state()`` returned before 0.5.0.
        """
        self._require_reset("engine_state()")
        return self._state.copy()

    def snapshot(self) -> dict[str, Any]:
        """JSON-serialisable snapshot of the whole game (see :func:`splendor_env.snapshot.to_dict`)."""
        self._require_reset("snapshot()")
        return snap.to_dict(self._state)

    def restore(self, snapshot: dict[str, Any] | np.ndarray) -> None:
        """Continue from a snapshot dict (or a state array), validated first.

        A refused snapshot raises :class:`splendor_env.SnapshotError` (a
        ``ValueError``) naming the field, and leaves the env exactly as it was.
        """
        s = snap.from_dict(snapshot) if isinstance(snapshot, dict) else snap.from_array(snapshot)
        if int(s[st.MODULES]) != self._modules:
            raise snap.SnapshotError(
                f'snapshot["modules"]: snapshot has modules {list(st.module_names(int(s[st.MODULES])))}, '
                f"this env {list(self.config.modules)}"
            )
        if int(s[st.N_PLAYERS]) != self.config.num_players:
            raise snap.SnapshotError(
                f'snapshot["num_players"]: snapshot is a {int(s[st.N_PLAYERS])}-player game, '
                f"this env has {self.config.num_players}"
            )
        self._reset_bookkeeping()
        self._state[:] = s
        self._sync_after_step(prev_prestige=None, actor=None)

    def describe_action(self, action: int) -> str:
        """The action id in words, naming the card it concerns in the current state."""
        self._require_reset("describe_action()")
        return describe(self._check_range(as_action_id(action, self._n_actions)), self._state)

    # -- AEC API --------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game. ``reset(seed=s)`` always deals the same game for the same ``s``.

        ``options={"snapshot": snap}`` continues from a snapshot instead (a dict from
        :meth:`snapshot` or an engine array), validated as :meth:`restore` does (the same
        function, as the Gymnasium view's ``reset``); ``seed`` then only reseeds the env's
        generator. Other keys are ignored, as before 0.5.0 and as PettingZoo's ``api_test`` expects
        (it passes options of its own): game options are fixed when the env is created.
        """
        if seed is not None:
            st.validate_setup_args(self.config.num_players, seed, self.config.max_turns)
        if options and "snapshot" in options:
            self.restore(options["snapshot"])  # refused: the env is unchanged, its generator included
            if seed is not None:
                self._rng = np.random.default_rng(seed)
        else:
            if seed is not None:
                self._rng = np.random.default_rng(seed)
            game_seed = int(seed) if seed is not None else int(self._rng.integers(0, 2**63 - 1))
            self._reset_bookkeeping()
            setup(self._state, self.config.num_players, game_seed, self.config.max_turns, self._modules)
            self._sync_after_step(prev_prestige=None, actor=None)
        if self.render_mode == "human":
            self.render()

    def _reset_bookkeeping(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._has_reset = True
        self._illegal_ended = False

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._require_reset("observe()")
        if agent not in self._seat:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        seat = self._seat[agent]
        obs = np.empty(self._obs_dim, dtype=np.float32)
        observe(self._state, seat, obs)
        # a dead agent's entries are gone once it has been stepped (PettingZoo's _was_dead_step)
        ended = self.terminations.get(agent, True) or self.truncations.get(agent, True)
        on_move = agent == self.agent_selection and not ended
        mask = self._mask.copy() if on_move else self._zero_mask.copy()
        return {"observation": obs, "action_mask": mask}

    def _check_range(self, a: int) -> int:
        if not 0 <= a < self._n_actions:
            raise IllegalActionError(f"action id {a} is out of range: valid ids are 0..{self._n_actions - 1}")
        return a

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last()``, with clear errors before reset and once every agent is removed."""
        self._require_reset("last()")
        if not self.agents:
            raise RuntimeError("last() called after every agent was removed (the game is over); call reset()")
        return super().last(observe)

    def step(self, action: Any) -> None:
        self._require_reset("step()")
        if not self.agents:  # as PettingZoo's OrderEnforcingWrapper: a warning, nothing happens
            warnings.warn(
                "step() called after every agent was removed (the game is over); call reset()", stacklevel=2
            )
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = self._check_range(as_action_id(action, self._n_actions))
        if not self._mask[a]:
            if self._terminate_on_illegal:
                self._end_by_illegal_move(agent, a)
                return
            reason = rules.REASONS[rules.illegal_reason(self._state, a)]
            raise IllegalActionError(f"illegal action {a} ({describe(a, self._state)}) for {agent}: {reason}")
        seat = self._seat[agent]
        prev = self._state[st.player_offset(seat) + st.P_PRESTIGE]
        self._cumulative_rewards[agent] = 0.0
        rules.apply_action(self._state, a)
        self._sync_after_step(prev_prestige=prev, actor=agent)
        if self.render_mode == "human":
            self.render()

    def _sync_after_step(self, prev_prestige: int | None, actor: str | None) -> None:
        """Mirror the engine state into PettingZoo's dicts (rewards, flags, selection, mask)."""
        s = self._state
        for a in self.rewards:
            self.rewards[a] = 0.0
        phase = s[st.PHASE]
        if phase == st.PHASE_GAME_OVER:
            rules.terminal_rewards(s, self._terminal)
            for i, a in enumerate(self.possible_agents):
                self.rewards[a] = float(self._terminal[i])
                self.terminations[a] = True
        elif phase == st.PHASE_TRUNCATED:
            for a in self.possible_agents:
                self.truncations[a] = True
        if actor is not None and self.config.reward_mode == "shaped":
            gained = s[st.player_offset(self._seat[actor]) + st.P_PRESTIGE] - prev_prestige
            self.rewards[actor] += self.config.shaping_scale * float(gained)
        self.agent_selection = self.possible_agents[s[st.CURRENT]]
        rules.legal_mask(s, self._mask)
        self._accumulate_rewards()

    def _end_by_illegal_move(self, agent: str, action: int) -> None:
        """PettingZoo's TerminateIllegalWrapper convention: offender gets the penalty, game ends."""
        warnings.warn(
            f"[WARNING]: Illegal move made by {agent}: action {action}; game terminated with "
            f"reward {self.config.illegal_reward} for {agent}",
            stacklevel=3,
        )
        self._illegal_ended = True
        self._cumulative_rewards[agent] = 0.0
        for a in self.agents:
            self.rewards[a] = 0.0
            self.terminations[a] = True
            self.truncations[a] = True
        self.rewards[agent] = float(self.config.illegal_reward)
        self._accumulate_rewards()
        self._deads_step_first()

    def render(self) -> str | np.ndarray | None:
        """The board: text (``"ansi"``, printed for ``"human"``) or a picture (``"rgb_array"``).

        ``"rgb_array"`` returns ``uint8[H, W, 3]`` drawn by :mod:`splendor_env.picture`
        as a spectator sees the game (no hidden card); it needs Pillow, the
        ``render`` extra. The text shows every card (a spectator with full knowledge).
        """
        if not self._has_reset:
            raise RuntimeError("render() called before reset()")
        return render_as(self._state, self.render_mode, viewer=None)

    def close(self) -> None:
        pass


def env(num_players: int = 2, render_mode: str | None = None, **options: Any) -> raw_env:
    """The environment with PettingZoo's usual guarantees, delivered by one lean layer.

    Differences from :class:`raw_env`: a masked (illegal) action id ends the game with ``illegal_reward`` (default -1) for the offender and 0
    for the others, with a warning, as PettingZoo's ``TerminateIllegalWrapper``
    does. An out-of-range id or a non-integer action still raises
    (``IllegalActionError`` / ``TypeError``), as ``AssertOutOfBoundsWrapper`` would.
    """
    e = raw_env(num_players=num_players, render_mode=render_mode, **options)
    e._terminate_on_illegal = True
    return e


def _deprecated_v0_env(**kwargs: Any) -> raw_env:
    """``pettingzoo.make("aec", "splendor-v0")``: the current env, after a ``DeprecationWarning``."""
    warnings.warn(
        "splendor-v0 is out of date (0.5.0: state() is the global observation, engine_state() the array; "
        "module games observe 1134 floats); use pettingzoo.make('aec', 'splendor-v1')",
        DeprecationWarning,
        stacklevel=2,
    )
    return env(**kwargs)
