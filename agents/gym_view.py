"""Single-agent Gymnasium view (``splendor_env/Splendor-v1``): one learner seat, the opponents move inside ``step``.

Why: most RL libraries (Stable-Baselines3, sb3-contrib's ``MaskablePPO``, CleanRL...) train one
agent on a ``gymnasium.Env``. The game runs in the strict AEC env (no second copy of any rule);
opponents come from an :class:`agents.pool.OpponentPool` and move through
:func:`agents.runner.decide`; rewards are routed by :class:`agents.pool.LearnerReward`. It lives
in ``agents`` because it builds agents (``splendor_env`` never imports ``agents``). Options,
masks, seeds and snapshots: docs/environment/gymnasium.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agents.pool import SNAPSHOTS, LearnerReward, OpponentPool
from agents.runner import decide
from splendor_env import state as st
from splendor_env.env import OBS_HIGH, IllegalActionError, as_action_id, raw_env
from splendor_env.records import is_over, seat_of
from splendor_env.render import render_as

OpponentsArg = Any  # str | Agent | Sequence[str | Agent] | Mapping[str, float] | OpponentPool


def check_learner_seat(learner_seat: Any, num_players: int) -> None:
    """A learner seat is ``None`` (a random seat per episode) or an int seat of the game; named if not."""
    if learner_seat is not None and (
        isinstance(learner_seat, bool) or not isinstance(learner_seat, (int, np.integer))
    ):
        raise TypeError(f"learner_seat must be None or an int seat, got {learner_seat!r}")
    if learner_seat is not None and not 0 <= learner_seat < num_players:
        raise ValueError(
            f"learner_seat must be in 0..{num_players - 1} (or None for random), got {learner_seat}"
        )


def opponent_pool(opponents: OpponentsArg, n: int) -> tuple[OpponentPool, bool]:
    """A Gymnasium view's ``opponents=`` as ``(pool, per_seat)``, read the same way by both views.

    A ``{spec: weight}`` pool is drawn from per episode; a spec, an agent or a list keeps one
    agent per opponent seat (pool entry ``k`` for the ``k``-th seat after the learner).
    """
    if isinstance(opponents, OpponentPool):
        return opponents, False
    if isinstance(opponents, Mapping):
        if not opponents:
            raise ValueError("opponents pool is empty: give at least one {spec: weight}")
        weights = np.array([float(w) for w in opponents.values()])
        if (weights < 0).any() or weights.sum() <= 0:
            raise ValueError(f"opponents pool weights must be >= 0 with a positive sum, got {opponents}")
        return OpponentPool([(s, float(w), None) for s, w in opponents.items()], seed=0), False
    if isinstance(opponents, Sequence) and not isinstance(opponents, str):
        if len(opponents) != n - 1:
            raise ValueError(
                f"opponents: a list needs one entry per opponent seat ({n - 1} for {n} players), "
                f"got {len(opponents)}; use a dict {{spec: weight}} for a pool"
            )
        specs = list(opponents)
    else:
        specs = [opponents] * (n - 1)
    for s in specs:
        if not isinstance(s, str) and not callable(getattr(s, "act", None)):
            raise TypeError(f"an opponent must be an agent spec string or an Agent, got {s!r}")
        if s == SNAPSHOTS:  # no agent of its own: the learner's saved copies, drawn per episode
            raise ValueError(
                f"opponents: {SNAPSHOTS!r} is drawn from a pool, not given a seat; use a dict such as "
                f"{{{SNAPSHOTS!r}: 1.0, 'random': 1.0}}"
            )
    return OpponentPool([(s, 1.0, None) for s in specs], seed=0), True


class SplendorGymEnv(gym.Env):
    """Splendor for one learner against fixed or pooled opponents (options: docs/environment/gymnasium.md)."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        opponents: OpponentsArg = "random",
        num_players: int = 2,
        learner_seat: int | None = None,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        **options: Any,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            # TypeError, not ValueError: SB3's make_vec_env asks for "rgb_array" and retries
            # without a render_mode only on a TypeError.
            raise TypeError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}")
        self.game = raw_env(num_players=num_players, **options)
        self.config = self.game.config
        n = self.config.num_players
        check_learner_seat(learner_seat, n)
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.fixed_seat = None if learner_seat is None else int(learner_seat)
        self.pool, self._per_seat = opponent_pool(opponents, n)
        self.pool.check_game(n, self.config.modules)
        obs_dim = self.game.observation_space("player_0")["observation"].shape[0]
        self.observation_space = spaces.Box(0.0, OBS_HIGH, (obs_dim,), np.float32)
        self.action_space = spaces.Discrete(self.game.action_space("player_0").n)
        self.learner_seat = 0 if self.fixed_seat is None else self.fixed_seat
        self.seat_agents: dict[int, int] = {}  # opponent seat -> index into self.pool.agents, this episode
        self._done = True

    # -- opponents ------------------------------------------------------------
    def _draw_opponents(self) -> None:
        """Assign an agent to every opponent seat for the new episode (turn order after the learner)."""
        n = self.config.num_players
        seats = [(self.learner_seat + k) % n for k in range(1, n)]
        if self._per_seat:
            self.seat_agents = dict(zip(seats, range(len(seats)), strict=True))
        else:
            picks = self.pool.draw(len(seats), rng=self.np_random)
            self.seat_agents = {s: int(k) for s, k in zip(seats, picks, strict=True)}

    @property
    def opponent_labels(self) -> dict[int, str]:
        """This episode's opponent spec per seat."""
        return {s: self.pool.labels[k] for s, k in self.seat_agents.items()}

    def _play_opponents(self, credit: LearnerReward) -> list[tuple[int, int]]:
        """Opponent moves until the learner is on move or the game is over, each credited to the learner."""
        game, me = self.game, f"player_{self.learner_seat}"
        moves = []
        while not is_over(game) and game.agent_selection != me:
            seat = seat_of(game.agent_selection)
            action = decide(self.pool.agents[self.seat_agents[seat]], game, self.np_random)
            game.step(action)
            moves.append((seat, action))
            self._credit(credit)
        return moves

    def _credit(self, credit: LearnerReward) -> None:
        """Route the move just played to the learner's reward (:class:`agents.pool.LearnerReward`)."""
        me = f"player_{self.learner_seat}"
        credit.credit(
            np.zeros(1, dtype=np.int64), np.array([self.game.rewards[me]]), np.array([is_over(self.game)])
        )

    # -- Gymnasium API ---------------------------------------------------------
    def _obs_info(self) -> tuple[np.ndarray, dict[str, Any]]:
        view = self.game.observe(f"player_{self.learner_seat}")
        info: dict[str, Any] = {"action_mask": view["action_mask"], "learner_seat": self.learner_seat}
        return view["observation"], info

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new game (or restore ``options["snapshot"]``) and play the opponents up to the learner's turn."""
        super().reset(seed=seed)
        unknown = sorted(set(options or {}) - {"snapshot"})
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; known: ['snapshot']")
        if seed is not None:
            self.pool.reseed(self.np_random)
        if self.fixed_seat is None:
            self.learner_seat = int(self.np_random.integers(self.config.num_players))
        self._draw_opponents()
        if options and "snapshot" in options:
            self.game.restore(options["snapshot"])
        else:
            self.game.reset(seed=int(seed) if seed is not None else int(self.np_random.integers(2**62)))
        if is_over(self.game):
            raise ValueError("reset: the snapshot is a finished game")
        moves = self._play_opponents(LearnerReward(1))
        self._done = is_over(self.game)  # only a corrupt snapshot could end before the learner moves
        obs, info = self._obs_info()
        info["opponent_moves"] = moves
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's move, then the opponents' until the learner is on move again or the game ends."""
        if self._done:
            raise RuntimeError("step() called before reset() or after the episode ended; call reset()")
        game, me = self.game, f"player_{self.learner_seat}"
        a = as_action_id(action, self.action_space.n)
        legal = 0 <= a < self.action_space.n and bool(game.observe(me)["action_mask"][a])
        if not legal:
            if self.illegal_action == "raise":
                game.step(a)  # raises IllegalActionError naming the action and the reason
                raise IllegalActionError(f"illegal action {a}")  # pragma: no cover - step always raises
            warnings.warn(
                f"illegal action {a} by the learner: episode ended with reward {self.config.illegal_reward}",
                stacklevel=2,
            )
            self._done = True
            obs, info = self._obs_info()
            info.update(illegal_action=True, opponent_moves=[], is_success=False)
            return obs, float(self.config.illegal_reward), True, False, info
        game.step(a)
        credit = LearnerReward(1)
        self._credit(credit)
        moves = self._play_opponents(credit)
        reward = float(credit.reward[0])
        terminated, truncated = bool(game.terminations[me]), bool(game.truncations[me])
        self._done = terminated or truncated
        obs, info = self._obs_info()
        info["opponent_moves"] = moves
        if self._done:
            winners = [p for p in range(self.config.num_players) if game.game_state[st.OUTCOME + p]]
            info["winners"] = winners
            info["is_success"] = winners == [self.learner_seat]
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as ``bool[n_actions]`` (all False once the episode is over)."""
        return self.game.observe(f"player_{self.learner_seat}")["action_mask"].astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The board as the learner sees it (other players' blind reserves hidden).

        ``"rgb_array"``: ``uint8[H, W, 3]`` from :mod:`splendor_env.picture` (Pillow,
        the ``render`` extra, imported only then), what Gymnasium's ``RecordVideo`` records.
        """
        return render_as(self.game.game_state, self.render_mode, viewer=self.learner_seat)
