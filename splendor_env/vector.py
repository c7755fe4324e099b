"""Batched engine: ``B`` games held in one ``[B, STATE_SIZE]`` array, stepped in one call.

There is no rule here: every game row goes through the same
:func:`splendor_env.rules.apply_action`, :func:`~splendor_env.rules.legal_mask`
and :func:`splendor_env.observation.observe` as the AEC env, inside one
numba-compiled loop, so a batch step costs one Python call.

Conventions (the same observation layout and action table as the AEC env):

* ``obs[b]`` is the view of the seat on move in game ``b`` (``player[b]``),
  ``mask[b]`` its legal actions.
* ``rewards[b, p]`` is what seat ``p`` of game ``b`` received on this step:
  the AEC env's terminal scheme (sole winner +1, losers -1, co-winners 0,
  truncation 0), plus prestige shaping if ``reward_mode="shaped"``.
* A game that ends is reset at once (auto-reset, as in Gymnasium's vector
  envs): ``terminated[b]`` / ``truncated[b]`` are set, ``obs[b]`` is already
  the new game's first observation, and ``info["final_observation"][b, p]``
  holds every seat's view of the finished game (``info["final_state"][b]``
  its state array).
* Seeding: ``reset(seed=s)`` deals game ``b`` with seed ``s + b``; each
  later game takes the next unused seed (``s + B``, ``s + B + 1``...) in slot
  order. ``splendor_env.env().reset(seed=k)`` deals exactly the same game for
  the same ``k``, so any batched game can be replayed in the AEC env.
* ``step(actions, env_ids=...)`` steps only the listed games (for self-play,
  where different games wait for different players); the others are untouched.
* Gymnasium's vector attributes: ``num_envs``, ``single_observation_space``,
  ``single_action_space`` and the batched ``observation_space`` / ``action_space``;
  ``action_masks()`` the current masks; ``sample_actions()`` draws one random legal
  action per game. An illegal action raises :class:`splendor_env.IllegalActionError`
  (a ``ValueError``), as the strict AEC env does.

The class is :class:`SplendorBatch`. Its API is its own (every seat's moves, the
seat on move returned beside the observation), so it is deliberately not named
``VectorEnv``: a Gymnasium ``VectorEnv`` for one learner is
:class:`agents.gym_vector.SplendorVectorEnv` (``gymnasium.make_vec``), built on
this class. ``splendor_env.vector.VectorEnv`` still answers, with a
``DeprecationWarning`` (0.5.0).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import state as st
from .actions import NUM_ACTIONS_ALL, num_actions
from .deal import setup
from .env import OBS_HIGH, EnvConfig, IllegalActionError
from .invariants import check_invariants
from .observation import obs_dim, observe
from .rng import rand_below
from .rules import (
    REASONS,
    apply_action_with,
    illegal_reason,
    is_over,
    legal_mask,
    legal_mask_after,
    terminal_rewards,
)
from .snapshot_checks import check_phase


def _row_prefetcher(write: int):
    """An intrinsic ``f(arr, row)`` asking the CPU to start loading every cache line of row ``row``
    of a C-contiguous 2-D array (``write``: 1 to load it for writing)."""

    @intrinsic
    def prefetch_row(typingctx, arr, row):  # pragma: no cover - compiled
        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            zero = context.get_constant(types.intp, 0)
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], zero])
            byte_ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [byte_ptr.type, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            itemsize = context.get_abi_sizeof(context.get_data_type(aryty.dtype))
            nbytes = builder.mul(
                builder.extract_value(ary.shape, 1), context.get_constant(types.intp, itemsize)
            )
            line = context.get_constant(types.intp, 64)
            with cgutils.for_range_slice(builder, zero, nbytes, line) as (off, _):
                args_ = [
                    builder.gep(byte_ptr, [off]),
                    ir.Constant(i32, write),
                    ir.Constant(i32, 3),
                    ir.Constant(i32, 1),
                ]
                builder.call(fn, args_)
            return context.get_dummy_value()

        return types.void(arr, row), codegen

    return prefetch_row


# While one game steps, the memory of the next one (its state row, and the observation and mask rows
# it will write) is already on its way into the cache: with 1024 games these rows do not stay cached
# between steps, and a module game's rows are large (2 KB of state, 4.5 KB of observation).
_prefetch_row = _row_prefetcher(0)
_prefetch_row_for_write = _row_prefetcher(1)


@njit(cache=True)
def _refresh(states, env_ids, obs, masks, players):  # pragma: no cover - compiled
    for i in range(env_ids.shape[0]):
        b = env_ids[i]
        p = states[b, st.CURRENT]
        players[b] = p
        observe(states[b], p, obs[b])
        legal_mask(states[b], masks[b])


@njit(cache=True)
def _reset_games(states, env_ids, seeds, num_players, max_turns, modules):  # pragma: no cover - compiled
    for i in range(env_ids.shape[0]):
        setup(states[env_ids[i]], num_players, seeds[i], max_turns, modules)


@njit(cache=True)
def _first_illegal(states, masks, env_ids, actions):  # pragma: no cover - compiled
    for i in range(env_ids.shape[0]):
        a = actions[i]
        if a < 0 or a >= masks.shape[1] or masks[env_ids[i], a] == 0:
            return i
    return -1


@njit(cache=True)
def _step(
    states,
    env_ids,
    actions,
    obs,
    masks,
    players,
    rewards,
    terminated,
    truncated,
    final_obs,
    final_states,
    next_seed,
    max_turns,
    shaping_scale,
    modules,
):  # pragma: no cover - compiled
    n = states[0, st.N_PLAYERS]
    terminal = np.zeros(st.MAX_PLAYERS, dtype=np.float64)
    scratch = np.zeros(NUM_ACTIONS_ALL + 1 if modules else 0, dtype=np.int8)  # lent to the rules
    for i in range(env_ids.shape[0]):
        b = env_ids[i]
        if i + 1 < env_ids.shape[0]:
            _prefetch_row(states, env_ids[i + 1])
            _prefetch_row_for_write(masks, env_ids[i + 1])
            _prefetch_row_for_write(obs, env_ids[i + 1])
        s = states[b]
        p = s[st.CURRENT]
        po = st.player_offset(p)
        before = s[po + st.P_PRESTIGE]
        apply_action_with(s, actions[i], scratch)
        for q in range(n):
            rewards[b, q] = 0.0
        if shaping_scale != 0.0:
            rewards[b, p] += shaping_scale * (s[po + st.P_PRESTIGE] - before)
        if is_over(s):
            if s[st.PHASE] == st.PHASE_GAME_OVER:
                terminal_rewards(s, terminal)
                for q in range(n):
                    rewards[b, q] += terminal[q]
                terminated[b] = True
            else:
                truncated[b] = True
            for q in range(n):
                observe(s, q, final_obs[b, q])
            final_states[b, :] = s
            setup(s, n, next_seed[0], max_turns, modules)
            next_seed[0] += 1
            if modules:
                scratch[NUM_ACTIONS_ALL] = 0  # a new game: nothing computed for it yet
        q = s[st.CURRENT]
        players[b] = q
        observe(s, q, obs[b])
        legal_mask_after(s, masks[b], scratch)


#: Largest ``reset`` seed: auto-reset seeds count up from ``seed + num_envs`` and
#: must stay below 2**63 (what ``env().reset(seed=...)`` accepts), so any game replays.
MAX_SEED = 2**62


def _check_seed(seed: Any, num_envs: int, name: str) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{name} must be an int in 0..{MAX_SEED}, got {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{name} must be in 0..{MAX_SEED} (2**62), got {seed}")
    return int(seed)


class SplendorBatch:
    """``num_envs`` Splendor games stepped together, every seat's moves; see the module docstring.

    Why the name: this is the multi-seat batched engine with its own API (``reset`` returns
    ``(obs, mask, player)``, ``step`` takes ``env_ids``), not a ``gymnasium.vector.VectorEnv``;
    ``SplendorBatch`` says so, where ``VectorEnv`` (its name before 0.5.0) suggested Gymnasium's
    class and ``BatchedGames`` is already :class:`agents.runner.BatchedGames` (agents playing in one).

    ``copy=False`` returns the internal buffers (valid until the next call)
    instead of fresh arrays, for the last bit of speed.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        seed: int | None = None,
        copy: bool = True,
        **options: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if "render_mode" in options:
            raise ValueError(
                "SplendorBatch does not render (render_mode is an option of splendor_env.env()); "
                "restore info['final_state'][b] into an env(render_mode='ansi') to see game b"
            )
        if seed is not None:
            _check_seed(seed, int(num_envs), "seed")
        self.config = EnvConfig.from_options({"num_players": num_players, **options})
        self.num_envs = int(num_envs)
        self.num_players = self.config.num_players
        self.copy = copy
        b, n = self.num_envs, self.num_players
        self.modules = self.config.module_bits
        self.num_actions = num_actions(self.modules)
        self.obs_dim = obs_dim(self.modules)
        size = st.state_size(self.modules)
        self.states = np.zeros((b, size), dtype=np.int32)
        self._obs = np.zeros((b, self.obs_dim), dtype=np.float32)
        self._masks = np.zeros((b, self.num_actions), dtype=np.int8)
        self._players = np.zeros(b, dtype=np.int32)
        self._rewards = np.zeros((b, n), dtype=np.float32)
        self._terminated = np.zeros(b, dtype=np.bool_)
        self._truncated = np.zeros(b, dtype=np.bool_)
        self._final_obs = np.zeros((b, n, self.obs_dim), dtype=np.float32)
        self._final_states = np.zeros((b, size), dtype=np.int32)
        self._next_seed = np.zeros(1, dtype=np.int64)
        self._game_seeds = np.zeros(b, dtype=np.int64)
        self._all = np.arange(b, dtype=np.int64)
        self._shaping = self.config.shaping_scale if self.config.reward_mode == "shaped" else 0.0
        self._has_reset = False
        self._seed = seed

    def _out(self, arr: np.ndarray) -> np.ndarray:
        return arr.copy() if self.copy else arr

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal ``num_envs`` new games; returns ``(obs, mask, player)``."""
        if seed is None:
            seed = self._seed if not self._has_reset and self._seed is not None else None
        if seed is None:
            seed = int(np.random.default_rng().integers(0, MAX_SEED))
        seed = _check_seed(seed, self.num_envs, "reset(seed=...)")
        seeds = np.arange(seed, seed + self.num_envs, dtype=np.int64)
        _reset_games(self.states, self._all, seeds, self.num_players, self.config.max_turns, self.modules)
        self._next_seed[0] = seed + self.num_envs
        self._game_seeds[:] = seeds
        _refresh(self.states, self._all, self._obs, self._masks, self._players)
        self._has_reset = True
        return self._out(self._obs), self._out(self._masks), self._out(self._players)

    def load(
        self, states: np.ndarray, env_ids: np.ndarray | None = None, check: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Put the given positions in games ``env_ids`` (all by default) and play on from them.

        Why: to continue positions that were not dealt here (a determinisation of a recorded
        decision, ``info["final_state"]``-style arrays, :func:`splendor_env.snapshot.from_dict`),
        for example many playouts of one position at once. Each state is copied and checked
        first: the batch's player count and modules, the engine's invariants
        (:func:`splendor_env.invariants.check_invariants`) and its phase
        (:func:`splendor_env.snapshot_checks.check_phase`), not finished; a bad one raises
        ``ValueError`` naming its row and problem, and no game changes. ``check=False`` skips the
        invariants and the phase (about 100 us a state), for states known to be whole, such as determinisations of
        a game's own states; the other checks always run. Before the first
        :meth:`reset` every game must be loaded. A loaded game keeps the turn cap its state
        carries; its :meth:`game_seeds` entry is -1 (it was not dealt from a seed), and when it
        ends the slot deals the next unused seed as usual. Returns ``(obs, mask, player)``.
        """
        ids = self._all if env_ids is None else self._env_ids(env_ids)
        if not self._has_reset and ids.size != self.num_envs:
            raise RuntimeError("load() before reset() must load every game (or call reset() first)")
        arr = np.asarray(states)
        size = self.states.shape[1]
        if arr.shape != (ids.size, size) or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(
                f"states must be an integer array of shape {(ids.size, size)}, got {arr.dtype} {arr.shape}"
            )
        if arr.size and (arr.min() < -(2**31) or arr.max() > 2**31 - 1):
            raise ValueError("states: values outside the int32 range")
        arr = arr.astype(np.int32)
        for i, s in enumerate(arr):
            if s[st.N_PLAYERS] != self.num_players or s[st.MODULES] != self.modules:
                raise ValueError(
                    f"states[{i}]: a {s[st.N_PLAYERS]}-player game with modules bitmask {s[st.MODULES]}, "
                    f"not this batch's {self.num_players} players and bitmask {self.modules}"
                )
            problems = check_invariants(s) if check else []
            if problems:
                raise ValueError(f"states[{i}]: {problems[0]}")
            if is_over(s):
                raise ValueError(f"states[{i}]: the game is over")
            if check:
                try:
                    check_phase(s)  # a module phase with nothing pending can leave no move, or hang a step
                except ValueError as exc:
                    raise ValueError(f"states[{i}]: {exc}") from None
        self.states[ids] = arr
        self._game_seeds[ids] = -1
        if not self._has_reset:
            self._next_seed[0] = (
                self._seed if self._seed is not None else int(np.random.default_rng().integers(0, MAX_SEED))
            )
            self._has_reset = True
        _refresh(self.states, ids, self._obs, self._masks, self._players)
        return self._out(self._obs), self._out(self._masks), self._out(self._players)

    def game_seeds(self) -> np.ndarray:
        """The seed each slot's current game was dealt from (``int64[num_envs]``, a copy).

        A finished game is dealt again at once inside :meth:`step`, from the next unused seed;
        ``raw_env(...).reset(seed=s)`` with the same game options deals the same game, so any
        game of a batch can be replayed or continued one at a time.
        """
        return self._game_seeds.copy()

    @property
    def next_seed(self) -> int:
        """The seed the next game dealt inside :meth:`step` will get (read-only)."""
        return int(self._next_seed[0])

    def current(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The current ``(obs, mask, player)`` of every game, as the last :meth:`reset` or :meth:`step`
        returned them (the internal buffers with ``copy=False``)."""
        return self._out(self._obs), self._out(self._masks), self._out(self._players)

    def action_masks(self) -> np.ndarray:
        """Current legal-action masks ``[B, num_actions]`` (int8).

        A method (a property before 0.5.0), as in sb3-contrib's ``MaskablePPO`` and the
        Gymnasium views, so every Splendor env asks for masks the same way.
        """
        return self._out(self._masks)

    def step(
        self, actions: np.ndarray, env_ids: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Play one action in each listed game (all games by default).

        Returns ``(obs, mask, player, rewards, terminated, truncated, info)``,
        all indexed by game slot ``[B, ...]``; games not in ``env_ids`` keep
        their observation and get zero rewards and False flags. An illegal
        action raises ``ValueError`` naming the game, the action and the
        reason, before any game is changed: :class:`splendor_env.IllegalActionError` (a
        ``ValueError``, so ``except ValueError`` written before 0.5.0 still catches it).
        """
        if not self._has_reset:
            raise RuntimeError("step() called before reset()")
        ids = self._all if env_ids is None else self._env_ids(env_ids)
        acts = np.asarray(actions)
        if acts.shape != ids.shape or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape {ids.shape}, got {acts.dtype} {acts.shape}"
            )
        acts = acts.astype(np.int64, copy=False)
        bad = _first_illegal(self.states, self._masks, ids, acts)
        if bad >= 0:
            b, a = int(ids[bad]), int(acts[bad])
            if not 0 <= a < self.num_actions:
                raise IllegalActionError(f"game {b}: action id {a} is out of range 0..{self.num_actions - 1}")
            reason = REASONS[illegal_reason(self.states[b], a)]
            raise IllegalActionError(f"game {b}: illegal action {a}: {reason}")
        self._rewards.fill(0.0)
        self._terminated.fill(False)
        self._truncated.fill(False)
        _step(
            self.states,
            ids,
            acts,
            self._obs,
            self._masks,
            self._players,
            self._rewards,
            self._terminated,
            self._truncated,
            self._final_obs,
            self._final_states,
            self._next_seed,
            self.config.max_turns,
            self._shaping,
            self.modules,
        )
        ended = ids[self._terminated[ids] | self._truncated[ids]]
        if ended.size:  # _step dealt them the seeds next_seed - k .. next_seed - 1, in ids order
            self._game_seeds[ended] = self._next_seed[0] - ended.size + np.arange(ended.size)
        info = {"final_observation": self._out(self._final_obs), "final_state": self._out(self._final_states)}
        return (
            self._out(self._obs),
            self._out(self._masks),
            self._out(self._players),
            self._out(self._rewards),
            self._out(self._terminated),
            self._out(self._truncated),
            info,
        )

    def _env_ids(self, env_ids: Any) -> np.ndarray:
        """``env_ids`` as distinct int64 game indices; bools, floats, strings, scalars and 2-D refused."""
        ids = np.asarray(env_ids)
        if ids.ndim != 1:
            raise ValueError(f"env_ids must be a 1-D sequence of game indices, got shape {ids.shape}")
        if ids.size and (ids.dtype == np.bool_ or not np.issubdtype(ids.dtype, np.integer)):
            raise TypeError(f"env_ids must be integer game indices, got dtype {ids.dtype}")
        ids = ids.astype(np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_envs or np.unique(ids).size != ids.size):
            raise ValueError(
                f"env_ids must be distinct game indices in 0..{self.num_envs - 1}, got {ids.tolist()}"
            )
        return ids

    def observe(self, seat: int) -> np.ndarray:
        """Every game seen by seat ``seat`` (``[B, OBS_DIM]``), e.g. for a fixed learner seat."""
        if not self._has_reset:
            raise RuntimeError("observe() called before reset()")
        if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)):
            raise TypeError(f"seat must be an int in 0..{self.num_players - 1}, got {seat!r}")
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be in 0..{self.num_players - 1}, got {seat}")
        out = np.empty((self.num_envs, self.obs_dim), dtype=np.float32)
        for b in range(self.num_envs):
            observe(self.states[b], seat, out[b])
        return out

    # -- Gymnasium vector conventions ------------------------------------------
    @property
    def single_observation_space(self) -> spaces.Box:
        """One game's observation space, ``Box(0, OBS_HIGH, (obs_dim,), float32)`` (Gymnasium's name)."""
        return spaces.Box(0.0, OBS_HIGH, (self.obs_dim,), np.float32)

    @property
    def single_action_space(self) -> spaces.Discrete:
        """One game's action space, ``Discrete(num_actions)``."""
        return spaces.Discrete(self.num_actions)

    @property
    def observation_space(self) -> spaces.Box:
        """The batched observation space ``[num_envs, obs_dim]``."""
        return batch_space(self.single_observation_space, self.num_envs)

    @property
    def action_space(self) -> spaces.MultiDiscrete:
        """The batched action space (one id per game; most ids are illegal at any time: see the masks)."""
        return batch_space(self.single_action_space, self.num_envs)

    def sample_actions(self, seed: int | None = None) -> np.ndarray:
        """One uniformly random *legal* action per game (``int64[num_envs]``), for random play and benchmarks.

        Drawn in compiled code from the venv's own random stream: ``seed``
        restarts that stream; without it the stream continues (first seeded
        from the constructor's ``seed``, else at random).
        """
        if not self._has_reset:
            raise RuntimeError("sample_actions() called before reset()")
        if seed is not None:
            seed = _check_seed(seed, self.num_envs, "sample_actions seed")
        if seed is not None or getattr(self, "_sample_stream", None) is None:
            if seed is None:
                seed = self._seed if self._seed is not None else int(np.random.default_rng().integers(2**62))
            self._sample_stream = np.array([seed], dtype=np.uint64)
        return sample_legal_actions(self._masks, self._sample_stream)


@intrinsic
def _load_u64(typingctx, arr, row, col):  # pragma: no cover - compiled
    """The 8 bytes at ``arr[row, col]`` of a C-contiguous 2-D byte array, as one (unaligned) ``uint64``."""

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], args[2]])
        word_ptr = builder.bitcast(ptr, ir.IntType(64).as_pointer())
        return builder.load(word_ptr, align=1)

    return types.uint64(arr, row, col), codegen


_EVEN_BYTES = np.uint64(0x00FF00FF00FF00FF)
_ONES16 = np.uint64(0x0001000100010001)
_WORDS_PER_SUM = 255  # words of 0/1 bytes added before a byte lane could overflow


@njit(cache=True, inline="always")
def _lane_sum(acc: np.uint64) -> int:  # pragma: no cover - compiled
    """Sum of the 8 byte lanes of ``acc`` (each up to 255): paired into 16-bit lanes, then added by
    one multiply into the top 16 bits."""
    pairs = (acc & _EVEN_BYTES) + ((acc >> np.uint64(8)) & _EVEN_BYTES)
    return int((pairs * _ONES16) >> np.uint64(48))


@njit(cache=True, inline="always")
def _count_legal(masks: np.ndarray, i: int, words: int) -> int:  # pragma: no cover - compiled
    """Legal ids in the first ``8 * words`` bytes of row ``i``: the words are added as they are (each
    byte lane counts its own ids) and the lanes summed once per 255 words."""
    n = 0
    for start in range(0, words, _WORDS_PER_SUM):
        acc = np.uint64(0)
        for w in range(start, min(words, start + _WORDS_PER_SUM)):
            acc += _load_u64(masks, i, 8 * w)
        n += _lane_sum(acc)
    return n


@njit(cache=True)
def sample_legal_actions(masks: np.ndarray, seed_state: np.ndarray) -> np.ndarray:  # pragma: no cover
    """One uniformly random legal action per row of ``masks`` (0/1 bytes); ``seed_state`` is a ``uint64[1]`` stream.

    The low-level kernel; :meth:`SplendorBatch.sample_actions` is the public way to call it.
    It counts the legal ids 8 bytes at a time, draws ``k`` and returns the ``k``-th legal id
    in id order (a module game's mask is 749 ids wide, with a few dozen legal).
    """
    b = masks.shape[0]
    width = masks.shape[1]
    words = width // 8 if masks.itemsize == 1 and masks.strides[1] == 1 else 0  # else id by id: any layout
    out = np.empty(b, dtype=np.int64)
    for i in range(b):
        n = _count_legal(masks, i, words)
        for a in range(8 * words, width):
            n += 1 if masks[i, a] else 0
        k = rand_below(seed_state, n)  # the k-th legal id, in id order
        a = 0
        for w in range(words):
            c = _lane_sum(_load_u64(masks, i, 8 * w))
            if k >= c:
                k -= c
                a += 8
                continue
            break
        while True:
            if masks[i, a]:
                if k == 0:
                    break
                k -= 1
            a += 1
        out[i] = a
    return out


def __getattr__(name: str) -> Any:
    """``VectorEnv``, the name of :class:`SplendorBatch` before 0.5.0, with a ``DeprecationWarning``."""
    if name == "VectorEnv":
        warnings.warn(
            "splendor_env.vector.VectorEnv is now splendor_env.vector.SplendorBatch (the old name will be "
            "removed); for a Gymnasium vector env use gymnasium.make_vec('splendor_env/Splendor-v1', ...)",
            DeprecationWarning,
            stacklevel=2,
        )
        return SplendorBatch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
