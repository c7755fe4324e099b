"""Gymnasium vector view: ``num_envs`` learner games against opponents, stepped by the batched engine.

Why: ``gymnasium.make_vec("splendor_env/Splendor-v1", num_envs=N)`` over ``SyncVectorEnv`` pays
a Python loop over N games and N opponents per step; this class runs the N games in one
:class:`splendor_env.vector.SplendorBatch` and asks each opponent agent once per round for all
the games where it is on move (:func:`agents.runner.opponent_rounds`). The options, opponents
and reward routing are :class:`agents.gym_view.SplendorGymEnv`'s; its conventions (same-step
autoreset, spaces, masks, seeds): docs/environment/gymnasium.md.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from agents.gym_view import OpponentsArg, check_learner_seat, opponent_pool
from agents.pool import LearnerReward
from agents.runner import opponent_rounds
from splendor_env import state as st
from splendor_env.env import OBS_HIGH
from splendor_env.vector import MAX_SEED, SplendorBatch, sample_legal_actions


class SplendorVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` single-agent Splendor games against opponents, in one batched engine.

    Options and conventions: docs/environment/gymnasium.md. ``copy=False`` returns the internal observation buffer (valid until
    the next call) instead of a fresh array.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        opponents: OpponentsArg = "random",
        num_players: int = 2,
        learner_seat: int | None = None,
        copy: bool = True,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        if render_mode is not None:
            raise TypeError(
                "SplendorVectorEnv does not render; replay game b from its seed info['game_seed'][b] in "
                "splendor_env.env(render_mode='ansi') or the single-agent view to see it"
            )
        self.batch = SplendorBatch(num_envs, num_players, copy=False, **options)
        self.config = self.batch.config
        n = self.config.num_players
        check_learner_seat(learner_seat, n)
        if self.config.max_turns < n:  # a game could end before the learner's seat moves: no step to return
            raise ValueError(
                f"max_turns must be at least num_players ({n}) in the vector view, got {self.config.max_turns}"
            )
        self.fixed_seat = None if learner_seat is None else int(learner_seat)
        self.pool, self._per_seat = opponent_pool(opponents, n)
        self.pool.check_game(n, self.config.modules)
        self.num_envs = self.batch.num_envs
        self.copy = copy
        self.render_mode = None
        self.single_observation_space = spaces.Box(0.0, OBS_HIGH, (self.batch.obs_dim,), np.float32)
        self.single_action_space = spaces.Discrete(self.batch.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        b = self.num_envs
        self.learner_seat = np.zeros(b, dtype=np.int64)  # the learner's seat in each game, this episode
        self._opponent = np.full((b, n), -1, dtype=np.int64)  # pool agent index per (game, seat); -1: learner
        self.game_seeds = np.zeros(b, dtype=np.int64)  # the AEC env seed of each game being played
        self._all = np.arange(b, dtype=np.int64)
        self._ones = np.ones(b, dtype=bool)
        self._ones.flags.writeable = False
        self._has_reset = False

    # -- episodes ---------------------------------------------------------------
    def _new_episodes(self, games: np.ndarray) -> None:
        """Draw the learner seat and the opponents of the episodes starting in ``games``."""
        n, k = self.config.num_players, games.size
        rng = self.np_random
        seat = np.full(k, self.fixed_seat) if self.fixed_seat is not None else rng.integers(n, size=k)
        self.learner_seat[games] = seat
        self._opponent[games] = -1
        picks = None if self._per_seat else self.pool.draw(k * (n - 1), rng=rng).reshape(k, n - 1)
        for j in range(1, n):  # the j-th seat after the learner, in turn order
            self._opponent[games, (seat + j) % n] = j - 1 if picks is None else picks[:, j - 1]

    def _play(self, ids: np.ndarray, result: tuple, credit: LearnerReward, finals: dict[str, Any]) -> None:
        """Route the engine step just played in games ``ids`` to the learner (``credit``), note the
        games that ended for the learner in ``finals`` and start the next episodes of every ended game."""
        _, _, _, rewards, term, trunc, info = result
        ended = term[ids] | trunc[ids]
        newly = credit.credit(ids, rewards[ids, self.learner_seat[ids]], ended)
        if newly.size:
            seats = self.learner_seat[newly]
            finals["terminated"][newly] = term[newly]
            finals["truncated"][newly] = trunc[newly]
            finals["obs"][newly] = info["final_observation"][newly, seats]
            outcome = info["final_state"][newly, st.OUTCOME : st.OUTCOME + self.config.num_players]
            finals["winners"][newly] = outcome != 0
            finals["seat"][newly] = seats
            finals["seed"][newly] = self.game_seeds[newly]
            finals["ended"][newly] = True
        if ended.any():
            restarted = ids[ended]
            self.game_seeds[restarted] = self.batch.game_seeds()[restarted]
            self._new_episodes(restarted)

    def _opponents_move(self, credit: LearnerReward, finals: dict[str, Any]) -> None:
        """Opponent rounds until the learner is on move in every game: each agent moves in all the
        games where it is on move with one :func:`~agents.runner.batch_actions` call and one engine step."""
        batch = self.batch

        def play(ids: np.ndarray, actions: np.ndarray) -> None:
            self._play(ids, batch.step(actions, ids), credit, finals)

        def view() -> tuple[np.ndarray, ...]:
            return (batch.states, *batch.current())

        opponent_rounds(self.learner_seat, self._opponent, self.pool.agents, view, play, self.np_random)

    def _finals(self) -> dict[str, Any]:
        b, n = self.num_envs, self.config.num_players
        return {
            "ended": np.zeros(b, dtype=bool),
            "terminated": np.zeros(b, dtype=bool),
            "truncated": np.zeros(b, dtype=bool),
            "obs": np.zeros((b, self.batch.obs_dim), dtype=np.float32),
            "winners": np.zeros((b, n), dtype=bool),
            "seat": np.zeros(b, dtype=np.int64),
            "seed": np.zeros(b, dtype=np.int64),
        }

    def _obs_info(self, finals: dict[str, Any] | None) -> tuple[np.ndarray, dict[str, Any]]:
        obs, mask, _ = self.batch.current()  # the batch's own buffers (it is built with copy=False)
        obs = obs.copy() if self.copy else obs
        info: dict[str, Any] = {
            "action_mask": mask.copy(),
            "_action_mask": self._ones,
            "learner_seat": self.learner_seat.copy(),
            "_learner_seat": self._ones,
            "game_seed": self.game_seeds.copy(),
            "_game_seed": self._ones,
        }
        if finals is not None and finals["ended"].any():
            ended = finals["ended"]
            final_obs = np.empty(self.num_envs, dtype=object)
            winners = np.empty(self.num_envs, dtype=object)
            for b in np.flatnonzero(ended):
                final_obs[b] = finals["obs"][b]
                winners[b] = [int(p) for p in np.flatnonzero(finals["winners"][b])]
            seat = finals["seat"]
            sole = finals["winners"].sum(axis=1) == 1
            is_success = ended & sole & finals["winners"][np.arange(self.num_envs), seat]
            info["final_obs"], info["_final_obs"] = final_obs, ended
            info["final_info"] = {
                "winners": winners,
                "_winners": ended,
                "is_success": is_success,
                "_is_success": ended,
                "learner_seat": np.where(ended, seat, 0),
                "_learner_seat": ended,
                "game_seed": np.where(ended, finals["seed"], 0),
                "_game_seed": ended,
            }
            info["_final_info"] = ended
        return obs, info

    # -- Gymnasium vector API ------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal ``num_envs`` new games (game ``b``: seed ``seed + b``) and play the opponents up to
        the learner's turn in each."""
        if options:
            raise ValueError(f"unknown reset option(s) {sorted(options)}; the vector view takes none")
        super().reset(seed=seed)
        if seed is not None:
            self.pool.reseed(self.np_random)
            first = int(seed)
        else:
            first = int(self.np_random.integers(0, MAX_SEED - self.num_envs))
        self.batch.reset(seed=first)
        self._sample_stream = np.array([self.np_random.integers(2**62)], dtype=np.uint64)
        self.game_seeds[:] = first + self._all
        self._new_episodes(self._all)
        self._has_reset = True
        self._opponents_move(LearnerReward(self.num_envs), self._finals())
        return self._obs_info(None)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learners' moves in every game, then the opponents' until each learner is on move again.

        Returns ``(obs, rewards, terminations, truncations, info)`` (Gymnasium's vector step).
        """
        if not self._has_reset:
            raise RuntimeError("step() called before reset()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), got {acts.dtype} {acts.shape}"
            )
        credit, finals = LearnerReward(self.num_envs), self._finals()
        self._play(self._all, self.batch.step(acts), credit, finals)  # raises IllegalActionError, unchanged
        self._opponents_move(credit, finals)
        obs, info = self._obs_info(finals)
        return obs, credit.reward, finals["terminated"], finals["truncated"], info

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, ``bool[num_envs, num_actions]`` (what ``MaskablePPO`` calls)."""
        return self.batch.action_masks().astype(bool)

    def sample_actions(self) -> np.ndarray:
        """One uniformly random legal learner action per game (benchmarks, smoke tests), in compiled
        code; the stream is seeded at each ``reset`` from :attr:`np_random`, so a seeded run repeats."""
        if not self._has_reset:
            raise RuntimeError("sample_actions() called before reset()")
        return sample_legal_actions(self.batch.action_masks(), self._sample_stream)


__all__ = ["SplendorVectorEnv"]
