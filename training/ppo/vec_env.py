"""Self-play as an SB3 ``VecEnv``: the learner against a pool of opponents, batched.

Each of the ``B`` games in a :class:`splendor_env.vector.SplendorBatch` has one
learner seat (redrawn for every new game) and opponents drawn per game and
seat from an :class:`OpponentPool` (fixed agents such as ``random`` /
``greedy``, and frozen snapshots of the learner). SB3 only ever sees the
learner: after its action, ``step`` plays every opponent move (one batched
``act_batch`` per opponent per round, stepping just those games) until the
learner is on move again in every game, including new games where an
opponent moves first.

Rewards are the learner's: ``rewards[b, learner_seat]`` summed over its own
move and all the opponent moves that follow, so a game lost on an opponent's
move gives the learner its -1 (a classic self-play wrapper bug is to drop it).
The pool and this routing are :mod:`agents.pool`'s (shared with the Gymnasium
view); opponents move through :func:`agents.runner.batch_actions`, so a search
agent in the pool (``mcts``, ``az``) gets a determinised state per game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from agents.pool import SNAPSHOTS, LearnerReward, OpponentPool, PoolSlot
from agents.runner import opponent_rounds
from splendor_env.env import OBS_HIGH
from splendor_env.rules import terminal_rewards
from splendor_env.state import MAX_PLAYERS
from splendor_env.vector import SplendorBatch


class _MaskedVecEnvPlumbing:
    """The parts of SB3's ``VecEnv`` interface that the self-play envs answer alike: no attributes to
    set, no wrappers, and ``action_masks`` (sb3_contrib's ``get_action_masks()`` calls
    ``np.stack(env.env_method("action_masks"))``)."""

    num_envs: int

    def action_masks(self) -> np.ndarray:  # pragma: no cover - defined by each env
        raise NotImplementedError

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        n = len(self._get_indices(indices))
        if attr_name == "render_mode":
            return [None] * n
        if attr_name == "action_masks":
            return [self.action_masks] * n
        raise AttributeError(f"{type(self).__name__} games have no attribute {attr_name!r}")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"{type(self).__name__} does not support setting {attr_name!r}")

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        if method_name == "action_masks":
            return list(self.action_masks()[self._get_indices(indices)])
        raise AttributeError(f"{type(self).__name__} games have no method {method_name!r}")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._get_indices(indices))

    def _get_indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)


class SelfPlayVecEnv(_MaskedVecEnvPlumbing, VecEnv):
    """``num_envs`` games seen from the learner's seat; see the module docstring."""

    def __init__(
        self,
        num_envs: int,
        pool: OpponentPool,
        num_players: int = 2,
        seed: int | None = None,
        **env_options: Any,
    ) -> None:
        self.venv = SplendorBatch(num_envs, num_players, seed=seed, copy=False, **env_options)
        self.pool = pool
        self.num_players = num_players
        self.modules = tuple(self.venv.config.modules)
        pool.check_game(num_players, self.modules)
        self.rng = np.random.default_rng(seed)
        self.state_rng = np.random.default_rng(None if seed is None else [seed, 7])  # determinisations
        self._seed = seed
        obs_space = spaces.Box(0.0, OBS_HIGH, (self.venv.obs_dim,), np.float32)
        super().__init__(num_envs, obs_space, spaces.Discrete(self.venv.num_actions))
        b = num_envs
        self.seat = np.zeros(b, dtype=np.int64)  # learner seat per game
        self.opp = np.full((b, num_players), -1, dtype=np.int64)  # opponent agent index per game and seat
        self.ep_return = np.zeros(b, dtype=np.float64)
        self.ep_length = np.zeros(b, dtype=np.int64)
        self.opponent_steps = 0  # engine steps played by opponents (throughput accounting)
        self._actions: np.ndarray | None = None
        self._terminal = np.zeros(MAX_PLAYERS, dtype=np.float64)
        self._obs = self._mask = self._player = None

    # -- game bookkeeping -----------------------------------------------------
    def _new_games(self, ids: np.ndarray) -> None:
        """Draw the learner seat and the opponents for fresh games in slots ``ids``."""
        n = self.num_players
        self.seat[ids] = self.rng.integers(n, size=ids.size)
        self.opp[ids] = self.pool.draw(ids.size * n).reshape(ids.size, n)
        self.opp[ids, self.seat[ids]] = -1
        self.ep_return[ids] = 0.0
        self.ep_length[ids] = 0

    def _outcome(self, state: np.ndarray, seat: int) -> float:
        terminal_rewards(state, self._terminal)
        return float(self._terminal[seat])

    def _after_step(self, ids: np.ndarray, out: tuple, acc: LearnerReward, infos: list[dict]) -> None:
        """Credit the learner's rewards for games ``ids``; finish and replace games that ended."""
        obs, mask, player, rewards, term, trunc, info = out
        self._obs, self._mask, self._player = obs, mask, player
        ended = acc.credit(ids, rewards[ids, self.seat[ids]], term[ids] | trunc[ids])
        for b in ended:
            s = int(self.seat[b])
            info_b = infos[b]
            info_b["terminal_observation"] = info["final_observation"][b, s].copy()
            info_b["TimeLimit.truncated"] = bool(trunc[b])
            info_b["outcome"] = self._outcome(info["final_state"][b], s) if term[b] else None
            others = [self.pool.labels[k] for k in self.opp[b] if k >= 0]
            info_b["opponent"] = others[0] if len(set(others)) == 1 else "mixed"
            info_b["episode"] = {
                "r": float(self.ep_return[b] + acc.reward[b]),
                "l": int(self.ep_length[b]),
            }
        restarted = ids[term[ids] | trunc[ids]]
        if restarted.size:
            self._new_games(restarted)

    def _play_opponents(self, acc: LearnerReward, infos: list[dict]) -> None:
        """Play opponent moves, batched per opponent, until the learner is on move in every game."""

        def play(ids: np.ndarray, actions: np.ndarray) -> None:
            self._after_step(ids, self.venv.step(actions, ids), acc, infos)
            self.opponent_steps += ids.size

        def view() -> tuple[np.ndarray, ...]:
            return self.venv.states, self._obs, self._mask, self._player

        opponent_rounds(self.seat, self.opp, self.pool.agents, view, play, self.state_rng)

    def _new_acc(self) -> LearnerReward:
        return LearnerReward(self.num_envs)

    # -- VecEnv API --------------------------------------------------------------
    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds[0] is not None else self._seed
        if self._seeds[0] is not None:
            self.rng = np.random.default_rng(seed)
            self.state_rng = np.random.default_rng([seed, 7])
        self._obs, self._mask, self._player = self.venv.reset(seed=seed)
        self._new_games(np.arange(self.num_envs))
        self._play_opponents(self._new_acc(), [{} for _ in range(self.num_envs)])
        self._reset_seeds()
        return self._obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        acc = self._new_acc()
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        self.ep_length += 1
        everyone = np.arange(self.num_envs)
        self._after_step(everyone, self.venv.step(self._actions, everyone), acc, infos)
        self._play_opponents(acc, infos)
        self.ep_return += np.where(acc.done, 0.0, acc.reward)
        return self._obs.copy(), acc.reward.astype(np.float32), acc.done.copy(), infos

    def action_masks(self) -> np.ndarray:
        """Legal moves of the learner in every game, ``bool[B, num_actions]`` (MaskablePPO reads this)."""
        return self._mask.astype(bool)


class MixedSelfPlayVecEnv(_MaskedVecEnvPlumbing, VecEnv):
    """One learner over several player counts: a :class:`SelfPlayVecEnv` per count, games side by side.

    The ``num_envs`` games are split evenly (the first counts get the
    remainder); every part shares one :class:`OpponentPool`, so fixed agents
    and learner snapshots serve every table size. The observation has the
    same size for 2, 3 and 4 players, which is what lets one policy play all.
    """

    def __init__(
        self,
        num_envs: int,
        pool: OpponentPool,
        player_counts: Sequence[int],
        seed: int | None = None,
        **env_options: Any,
    ) -> None:
        counts = list(player_counts)
        if not counts or num_envs < len(counts):
            raise ValueError(f"need at least one game per player count, got {num_envs} for {counts}")
        sizes = [num_envs // len(counts) + (i < num_envs % len(counts)) for i in range(len(counts))]
        self.parts = [
            SelfPlayVecEnv(size, pool, n, seed=None if seed is None else seed + 7919 * i, **env_options)
            for i, (n, size) in enumerate(zip(counts, sizes, strict=True))
        ]
        self.bounds = np.cumsum([0] + sizes)
        self.pool = pool
        self.player_counts = counts
        self.modules = self.parts[0].modules
        self._seed = seed
        first = self.parts[0]
        super().__init__(num_envs, first.observation_space, first.action_space)

    @property
    def opponent_steps(self) -> int:
        return sum(part.opponent_steps for part in self.parts)

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        for i, part in enumerate(self.parts):
            part.seed(None if seed is None else seed + 7919 * i)
        out = np.concatenate([part.reset() for part in self.parts])
        self._reset_seeds()
        return out

    def step_async(self, actions: np.ndarray) -> None:
        actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)
        for i, part in enumerate(self.parts):
            part.step_async(actions[self.bounds[i] : self.bounds[i + 1]])

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        outs = [part.step_wait() for part in self.parts]
        for part, (_, _, _, infos) in zip(self.parts, outs, strict=True):
            for info in infos:
                if "opponent" in info:
                    info["players"] = part.num_players
        return (
            np.concatenate([o[0] for o in outs]),
            np.concatenate([o[1] for o in outs]),
            np.concatenate([o[2] for o in outs]),
            [info for o in outs for info in o[3]],
        )

    def action_masks(self) -> np.ndarray:
        return np.concatenate([part.action_masks() for part in self.parts])


__all__ = ["SNAPSHOTS", "MixedSelfPlayVecEnv", "OpponentPool", "PoolSlot", "SelfPlayVecEnv"]
