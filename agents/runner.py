"""The one runner: how any caller asks agents for moves and plays games with them.

Why one module: tournaments, evaluation, the value report, policy benchmarks,
``training.play``, the warm-start teacher, self-play opponents and the
Gymnasium views all hand agents decisions through it, so the fairness rule
holds everywhere.

The fairness rule (the one statement of it; other modules link here): an agent
is only ever handed a state through :func:`decision_state`: ``None`` for agents
without ``needs_state``; the true state (a copy) for agents that only show
their own seat's view (``trusted_view``, the human); otherwise the true state
*determinised* for the acting seat (:func:`splendor_env.determinize.determinize`):
deck order and opponents' blind reservations resampled, so a search agent
never sees what it would not know at the table.

Loops: the AEC env (:func:`decide`, :func:`play_out`, :func:`play_game`, which
returns a record of :mod:`splendor_env.records`) and
batched games in a :class:`splendor_env.vector.SplendorBatch`
(:func:`batch_actions`, :class:`BatchedGames`, :func:`play_batched`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from splendor_env.determinize import determinize
from splendor_env.env import raw_env
from splendor_env.records import game_record, seat_of

#: ``before_move(env, seat)`` / ``on_move(env, seat, action)`` hooks of :func:`play_out` (rendering, logs).
MoveHook = Callable[[raw_env, int], None]
ActionHook = Callable[[raw_env, int, int], None]


# ---------------------------------------------------------------------------
# Decisions


def decision_state(agent: Any, state: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray | None:
    """What ``agent`` may be handed as ``state=`` when ``seat`` is on move (see the module docstring).

    ``rng`` is drawn from only for a determinisation, so agents without
    ``needs_state`` leave every other random stream as it was.
    """
    if not getattr(agent, "needs_state", False):
        return None
    if getattr(agent, "trusted_view", False):
        return np.array(state, copy=True)
    return determinize(state, seat, rng)


def decide(agent: Any, env: raw_env, rng: np.random.Generator) -> int:
    """The move of ``agent`` for the seat on move in the AEC ``env``, with its decision state."""
    seat = seat_of(env.agent_selection)
    view = env.observe(env.agent_selection)
    state = decision_state(agent, env.game_state, seat, rng)  # a view: copied only if the agent needs it
    return int(agent.act(view["observation"], view["action_mask"], state=state))


def batch_actions(
    agent: Any,
    states: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    player: np.ndarray,
    ids: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """``agent``'s actions in the batched games ``ids``: one ``act_batch`` call, or for an agent that
    needs a state one call per game (in ``ids`` order) with :func:`decision_state` for the seat on move."""
    if getattr(agent, "needs_state", False):
        return np.array(
            [
                agent.act(obs[b], mask[b], state=decision_state(agent, states[b], int(player[b]), rng))
                for b in ids
            ],
            dtype=np.int64,
        )
    return np.asarray(agent.act_batch(obs[ids], mask[ids]), dtype=np.int64)


def opponent_rounds(
    learner_seat: int | np.ndarray,
    opponent_of: np.ndarray,
    agents: Sequence[Any],
    view: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    play: Callable[[np.ndarray, np.ndarray], None],
    rng: np.random.Generator,
) -> None:
    """Opponent moves in batched games until the learner is on move in every game.

    Each round, every opponent agent moves in all the games where it is on move with one
    :func:`batch_actions` call (agents in index order); ``play(ids, actions)`` steps those
    games. ``view()`` gives the batch's current ``(states, obs, mask, player)``;
    ``opponent_of[game, seat]`` is the index into ``agents`` of the agent in that seat.
    Self-play training and the Gymnasium vector view both run their opponents through it.
    """
    while True:
        player = view()[3]
        pending = np.flatnonzero(player != learner_seat)
        if pending.size == 0:
            return
        who = opponent_of[pending, player[pending]]
        for k in np.unique(who):
            ids = pending[who == k]
            states, obs, mask, player = view()
            play(ids, batch_actions(agents[k], states, obs, mask, player, ids, rng))


# ---------------------------------------------------------------------------
# One game in the AEC env


def play_out(
    env: raw_env,
    seat_agents: Sequence[Any],
    rng: np.random.Generator,
    before_move: MoveHook | None = None,
    on_move: ActionHook | None = None,
) -> tuple[list[int], dict[str, float]]:
    """Play the AEC ``env`` to its end (``seat_agents[seat]`` moves for ``seat``).

    Returns the actions in order and every seat's final reward (PettingZoo's
    ``last()`` at its end). ``before_move`` runs before an agent is asked,
    ``on_move`` after it answered and before the move is played.
    """
    actions: list[int] = []
    rewards: dict[str, float] = {}
    for name in env.agent_iter():
        _, reward, term, trunc, _ = env.last(observe=False)
        if term or trunc:
            rewards[name] = float(reward)
            env.step(None)
            continue
        seat = seat_of(name)
        if before_move is not None:
            before_move(env, seat)
        action = decide(seat_agents[seat], env, rng)
        if on_move is not None:
            on_move(env, seat, action)
        env.step(action)
        actions.append(action)
    return actions, rewards


def label_of(agent: Any) -> str:
    """A spec string as is, else an agent's registered ``name`` (or its class name)."""
    if isinstance(agent, str):
        return agent
    return str(getattr(agent, "name", type(agent).__name__))


def play_game(
    seat_agents: Sequence[Any],
    seed: int,
    *,
    labels: Sequence[str] | None = None,
    agent_seeds: Sequence[int] | None = None,
    max_turns: int | None = None,
    modules: Sequence[str] = (),
    rng: np.random.Generator | None = None,
    env: raw_env | None = None,
    before_move: MoveHook | None = None,
    on_move: ActionHook | None = None,
) -> dict[str, Any]:
    """Deal game ``seed`` and play it to the end; returns its record.

    ``seat_agents[p]`` plays seat ``p`` and is first reseeded with
    ``agent_seeds[p]`` (recorded) when given; ``rng`` draws the
    determinisations (default ``default_rng(seed)``). ``env`` may be a
    prebuilt env (a render mode, ``splendor_env.env()``'s illegal-move rule);
    otherwise a strict :class:`~splendor_env.env.raw_env` of ``len(seat_agents)``
    players, ``max_turns`` and ``modules`` is built.
    """
    if env is None:
        options: dict[str, Any] = {} if max_turns is None else {"max_turns": max_turns}
        env = raw_env(num_players=len(seat_agents), modules=tuple(modules), **options)
    env.reset(seed=seed)
    if agent_seeds is not None:
        for agent, s in zip(seat_agents, agent_seeds, strict=True):
            agent.seed(s)
    rng = np.random.default_rng(seed) if rng is None else rng
    actions, _ = play_out(env, seat_agents, rng, before_move, on_move)
    names = [label_of(a) for a in seat_agents] if labels is None else list(labels)
    return game_record(env, seed, names, actions, agent_seeds)


# ---------------------------------------------------------------------------
# Batched games in the SplendorBatch


def rotated_seat(game: int | np.ndarray, num_players: int, first_game: int = 0) -> Any:
    """The seat of the rotating agent in game ``game``: ``(first_game + game) % num_players``."""
    return (first_game + game) % num_players


def rotation_seating(games: int, num_players: int, first_game: int = 0) -> np.ndarray:
    """``[games, num_players]`` agent index per seat: agent 0 in :func:`rotated_seat`, agent 1 elsewhere."""
    seats = rotated_seat(np.arange(games), num_players, first_game)
    return (np.arange(num_players)[None, :] != seats[:, None]).astype(np.int64)


#: ``on_end(game, slot, final_state, truncated)``: a game of :class:`BatchedGames` has ended.
EndHook = Callable[[int, int, np.ndarray, bool], None]
#: ``on_actions(slots, actions, obs, mask, player)``: an agent answered in ``slots``, before the moves are played.
ActionsHook = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]
#: ``before_round(slots, games, states, player)``: the live games, before anyone moves this round.
RoundHook = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]


class BatchedGames:
    """Games in a :class:`~splendor_env.vector.SplendorBatch`, played round by round.

    Game ``g`` seats agent ``seating[g, p]`` (an index into ``seat_agents``) in
    seat ``p``; ``seating=None`` is an endless run in which ``seat_agents[0]``
    plays every seat (self-play). Slots start with games ``0..num_envs-1``
    (``venv`` is reset here, so game ``g`` is the engine's deal ``seed + g``;
    with ``states``, slot ``g`` starts from ``states[g]`` instead, through
    :meth:`~splendor_env.vector.SplendorBatch.load` and its ``check``: playouts
    of given positions) and take the next game as one ends. In a round every agent, in index
    order, moves in the games where it is on move: one :func:`batch_actions`
    call (``rng`` draws the determinisations), then one engine step.
    """

    def __init__(
        self,
        venv: Any,
        seat_agents: Sequence[Any],
        seating: np.ndarray | None,
        rng: np.random.Generator,
        on_end: EndHook,
        on_actions: ActionsHook | None = None,
        states: np.ndarray | None = None,
        check: bool = True,
    ) -> None:
        self.venv, self.seat_agents, self.seating, self.rng = venv, seat_agents, seating, rng
        self.on_end, self.on_actions = on_end, on_actions
        self.games = None if seating is None else len(seating)
        slots = venv.num_envs
        if self.games is not None and self.games < slots:
            raise ValueError(
                f"{self.games} games for {slots} slots: build the SplendorBatch with at most one per game"
            )
        self.obs, self.mask, self.player = venv.reset() if states is None else venv.load(states, check=check)
        self.game = np.arange(slots)  # game number per slot, -1 = slot finished
        self.next_game = slots

    @property
    def live(self) -> np.ndarray:
        """The slots whose game is still being played."""
        return np.flatnonzero(self.game >= 0)

    def play_round(self, slots: np.ndarray | None = None) -> None:
        """One move in each of ``slots`` (default: every live game), agent by agent."""
        active = self.live if slots is None else np.asarray(slots)
        if self.seating is None:
            who = np.zeros(active.size, dtype=np.int64)
        else:
            who = self.seating[self.game[active], self.player[active]]
        for k, agent in enumerate(self.seat_agents):
            ids = active[who == k]
            if ids.size == 0:
                continue
            venv = self.venv
            actions = batch_actions(agent, venv.states, self.obs, self.mask, self.player, ids, self.rng)
            if self.on_actions is not None:
                self.on_actions(ids, actions, self.obs, self.mask, self.player)
            self.obs, self.mask, self.player, _, term, trunc, info = venv.step(actions, ids)
            for b in ids[term[ids] | trunc[ids]]:
                self.on_end(int(self.game[b]), int(b), info["final_state"][b], bool(trunc[b]))
                if self.games is None or self.next_game < self.games:
                    self.game[b] = self.next_game
                    self.next_game += 1
                else:
                    self.game[b] = -1


def play_batched(
    venv: Any,
    seat_agents: Sequence[Any],
    seating: np.ndarray,
    rng: np.random.Generator,
    on_end: EndHook,
    before_round: RoundHook | None = None,
) -> None:
    """Play the ``len(seating)`` games of :class:`BatchedGames` to their end.

    ``before_round`` sees the live games before each round (to record positions).
    """
    run = BatchedGames(venv, seat_agents, seating, rng, on_end)
    while (live := run.live).size:
        if before_round is not None:
            before_round(live, run.game[live], venv.states, run.player)
        run.play_round(live)


def win_shares(record: dict[str, Any]) -> list[float]:
    """Per seat: 1 for a sole winner, 1/k for each of k co-winners, else 0 (a truncated game: all 0)."""
    winners = record["winners"]
    return [1.0 / len(winners) if p in winners else 0.0 for p in range(record["num_players"])]


__all__ = [
    "BatchedGames",
    "batch_actions",
    "decide",
    "decision_state",
    "label_of",
    "opponent_rounds",
    "play_batched",
    "play_game",
    "play_out",
    "rotated_seat",
    "rotation_seating",
    "win_shares",
]
