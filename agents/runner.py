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

The error contract (one statement of it): an agent's answer is checked here, in the one place
every command asks for moves (:func:`decide`, :func:`batch_actions`). An exception from ``act``
(or ``act_batch``), an answer that is not an integer id, an id out of range or an illegal one
all become one :class:`AgentError`: a ``ValueError`` whose one-line message names the agent (its
spec as the caller knows it), the game, the turn and seat, and what went wrong. Commands print
it as their one-line error and exit 2 (:func:`training.common.cli.run_cli`); the move is never
played, so no result of that game is saved. Only :class:`~agents.base.AbandonGame` (a person
quitting) passes through as it is.

Loops: the AEC env (:func:`decide`, :func:`play_out`, :func:`play_game`, which
returns a record of :mod:`splendor_env.records`) and
batched games in a :class:`splendor_env.vector.SplendorBatch`
(:func:`batch_actions`, :class:`BatchedGames`, :func:`play_batched`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.base import AbandonGame, Agent
from splendor_env import state as st
from splendor_env.actions import describe
from splendor_env.determinize import determinize
from splendor_env.env import raw_env
from splendor_env.layout import MODULE_NAMES
from splendor_env.records import game_record, seat_of

#: ``before_move(env, seat)`` / ``on_move(env, seat, action)`` hooks of :func:`play_out` (rendering, logs).
MoveHook = Callable[[raw_env, int], None]
ActionHook = Callable[[raw_env, int, int], None]


# ---------------------------------------------------------------------------
# The error contract


class AgentError(ValueError):
    """An agent failed at a move: ``act`` raised, or did not answer with a legal action id.

    Its one argument is the whole one-line message (agent, game, turn, seat, fault), so it
    pickles to and from worker processes unchanged. Built by :func:`agent_error`.
    """


#: ``game(slot)``: how a batched run names the game in a slot, for an :class:`AgentError`.
GameName = Callable[[int], str]


def error_label(agent: Any, label: str | None = None) -> str:
    """The agent as an error names it: ``label`` (its spec, given by the caller), else its
    registered ``name``, else ``module:Class``."""
    if label:
        return label
    name = getattr(agent, "name", None)
    if isinstance(name, str) and name and name != "agent":
        return name
    return f"{type(agent).__module__}:{type(agent).__qualname__}"


def agent_error(
    agent: Any, label: str | None, game: str | None, state: np.ndarray, seat: int, problem: str
) -> AgentError:
    """The one error of the contract: ``agent 'SPEC' failed at turn T, seat S, of GAME (2p base): PROBLEM``."""
    n = int(state[st.N_PLAYERS])
    bits = int(state[st.MODULES])
    modules = "+".join(m for i, m in enumerate(MODULE_NAMES) if bits >> i & 1) or "base"
    where = f"{game} ({n}p {modules})" if game else f"a {n}p {modules} game"
    turn = int(state[st.TURN]) + 1
    return AgentError(
        f"agent {error_label(agent, label)!r} failed at turn {turn}, seat {seat}, of {where}: {problem}"
    )


def raised(exc: BaseException, method: str = "act") -> str:
    """``act raised RuntimeError: boom`` (the first line of the message)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{method} raised {type(exc).__name__}" + (f": {text}" if text else "")


def _short(value: Any, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def answer_problem(answer: Any, mask: np.ndarray, state: np.ndarray, method: str = "act") -> str | None:
    """What is wrong with ``answer`` as the move for ``mask`` (``None``: a legal id).

    An id is a Python or numpy integer (or a 0-d integer array), not a bool, a float or a string,
    as the env accepts (:func:`splendor_env.env.as_action_id`); it must be in range and legal.
    """
    if isinstance(answer, np.ndarray) and answer.shape == () and np.issubdtype(answer.dtype, np.integer):
        answer = answer.item()
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, (int, np.integer)):
        return f"{method} returned {_short(answer)} (a {type(answer).__name__}), not an action id (an int)"
    a, size = int(answer), len(mask)
    if not 0 <= a < size:
        return f"{method} returned action id {a}, out of range 0..{size - 1}"
    if not mask[a]:
        legal = np.flatnonzero(mask).tolist()
        shown = ", ".join(map(str, legal[:12])) + (", ..." if len(legal) > 12 else "")
        return f"{method} returned illegal action {a} ({describe(a, state)}); legal ids: {shown}"
    return None


def ask(
    agent: Any,
    observation: np.ndarray,
    mask: np.ndarray,
    state: np.ndarray,
    seat: int,
    decision: np.ndarray | None,
    label: str | None = None,
    game: str | None = None,
) -> int:
    """``agent.act`` for one decision (``decision``: its ``state=``, ``None`` for an agent that needs none),
    held to the error contract: a legal id, or an :class:`AgentError` (``state``: the true state)."""
    try:
        answer = agent.act(observation, mask, state=decision)
    except (AbandonGame, AgentError):
        raise
    except Exception as exc:
        raise agent_error(agent, label, game, state, seat, raised(exc)) from exc
    problem = answer_problem(answer, mask, state)
    if problem:
        raise agent_error(agent, label, game, state, seat, problem)
    return int(answer)


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


def decide(
    agent: Any, env: raw_env, rng: np.random.Generator, label: str | None = None, game: str | None = None
) -> int:
    """The move of ``agent`` for the seat on move in the AEC ``env``, with its decision state.

    Held to the error contract (:func:`ask`): ``label`` (the agent's spec) and ``game`` name
    them in an :class:`AgentError`.
    """
    seat = seat_of(env.agent_selection)
    view = env.observe(env.agent_selection)
    state = decision_state(agent, env.game_state, seat, rng)  # a view: copied only if the agent needs it
    return ask(agent, view["observation"], view["action_mask"], env.game_state, seat, state, label, game)


def batch_actions(
    agent: Any,
    states: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    player: np.ndarray,
    ids: np.ndarray,
    rng: np.random.Generator,
    label: str | None = None,
    game: GameName | None = None,
) -> np.ndarray:
    """``agent``'s actions in the batched games ``ids``: one ``act_batch`` call, or one ``act`` call
    per game (in ``ids`` order) for an agent that needs a state (with :func:`decision_state` for the
    seat on move) or whose ``act_batch`` is :class:`~agents.base.Agent`'s (which only calls ``act``).

    Held to the error contract (:func:`ask`, :func:`check_batch`): ``label`` (the agent's spec)
    and ``game(slot)`` name them in an :class:`AgentError`.
    """
    name = game or (lambda b: f"batched game {b}")
    needs_state = getattr(agent, "needs_state", False)
    if needs_state or getattr(type(agent), "act_batch", None) is Agent.act_batch:
        return np.array(
            [
                ask(
                    agent,
                    obs[b],
                    mask[b],
                    states[b],
                    int(player[b]),
                    decision_state(agent, states[b], int(player[b]), rng) if needs_state else None,
                    label,
                    name(int(b)),
                )
                for b in ids
            ],
            dtype=np.int64,
        )
    try:
        answer = agent.act_batch(obs[ids], mask[ids])
    except (AbandonGame, AgentError):
        raise
    except Exception as exc:
        b = int(ids[0])
        raise agent_error(agent, label, name(b), states[b], int(player[b]), raised(exc, "act_batch")) from exc
    return check_batch(agent, answer, states, mask, player, ids, label, name)


def check_batch(
    agent: Any,
    answer: Any,
    states: np.ndarray,
    mask: np.ndarray,
    player: np.ndarray,
    ids: np.ndarray,
    label: str | None,
    game: GameName,
) -> np.ndarray:
    """``act_batch``'s answer for the games ``ids`` as ``int64`` ids, or the :class:`AgentError` of
    the first game whose id is wrong (an array of another shape or type: of the first game)."""
    first = int(ids[0])
    arr = np.asarray(answer) if isinstance(answer, (np.ndarray, list, tuple)) else None
    if arr is None or arr.shape != (len(ids),) or not np.issubdtype(arr.dtype, np.integer):
        what = (
            f"an array of shape {arr.shape} and dtype {arr.dtype}"
            if arr is not None
            else f"{_short(answer)} (a {type(answer).__name__})"
        )
        problem = f"act_batch returned {what}, not one action id (an int) per game ({len(ids)} asked)"
        raise agent_error(agent, label, game(first), states[first], int(player[first]), problem)
    ids = np.asarray(ids)
    ok = (arr >= 0) & (arr < mask.shape[1])
    ok[ok] = mask[ids[ok], arr[ok]] != 0
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        b = int(ids[k])
        problem = answer_problem(arr[k], mask[b], states[b], "act_batch")
        raise agent_error(agent, label, game(b), states[b], int(player[b]), str(problem))
    return arr.astype(np.int64, copy=False)


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
    labels: Sequence[str] | None = None,
    game: str | None = None,
) -> tuple[list[int], dict[str, float]]:
    """Play the AEC ``env`` to its end (``seat_agents[seat]`` moves for ``seat``).

    Returns the actions in order and every seat's final reward (PettingZoo's
    ``last()`` at its end). ``before_move`` runs before an agent is asked,
    ``on_move`` after it answered and before the move is played. ``labels`` (per seat)
    and ``game`` name the agent and the game in an :class:`AgentError`.
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
        label = None if labels is None else labels[seat]
        action = decide(seat_agents[seat], env, rng, label, game)
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
    game: str | None = None,
) -> dict[str, Any]:
    """Deal game ``seed`` and play it to the end; returns its record.

    ``seat_agents[p]`` plays seat ``p`` and is first reseeded with
    ``agent_seeds[p]`` (recorded) when given; ``rng`` draws the
    determinisations (default ``default_rng(seed)``). ``env`` may be a
    prebuilt env (a render mode, ``splendor_env.env()``'s illegal-move rule);
    otherwise a strict :class:`~splendor_env.env.raw_env` of ``len(seat_agents)``
    players, ``max_turns`` and ``modules`` is built. An agent that fails a move raises an
    :class:`AgentError` naming its label, ``game`` (default: the game of seed ``seed``) and the turn.
    """
    if env is None:
        options: dict[str, Any] = {} if max_turns is None else {"max_turns": max_turns}
        env = raw_env(num_players=len(seat_agents), modules=tuple(modules), **options)
    n = len(env.possible_agents)
    for what, given in (("seat_agents", seat_agents), ("labels", labels), ("agent_seeds", agent_seeds)):
        if given is not None and len(given) != n:
            raise ValueError(f"play_game: {len(given)} {what} for a {n}-player game, one a seat")
    env.reset(seed=seed)
    if agent_seeds is not None:
        for agent, s in zip(seat_agents, agent_seeds, strict=True):
            agent.seed(s)
    rng = np.random.default_rng(seed) if rng is None else rng
    names = [label_of(a) for a in seat_agents] if labels is None else list(labels)
    where = game or f"the game of seed {seed}"
    actions, _ = play_out(env, seat_agents, rng, before_move, on_move, names, where)
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
    call (``rng`` draws the determinisations), then one engine step. ``labels`` (per agent)
    and ``game_name(game)`` name the agent and the game in an :class:`AgentError`.
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
        labels: Sequence[str] | None = None,
        game_name: GameName | None = None,
    ) -> None:
        self.venv, self.seat_agents, self.seating, self.rng = venv, seat_agents, seating, rng
        self.labels = labels
        self.game_name = game_name or (lambda g: f"game {g}")
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

    def slot_name(self, slot: int) -> str:
        """The game in ``slot``, as an :class:`AgentError` names it."""
        return self.game_name(int(self.game[slot]))

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
            label = None if self.labels is None else self.labels[k]
            actions = batch_actions(
                agent, venv.states, self.obs, self.mask, self.player, ids, self.rng, label, self.slot_name
            )
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
    labels: Sequence[str] | None = None,
    game_name: GameName | None = None,
) -> None:
    """Play the ``len(seating)`` games of :class:`BatchedGames` to their end.

    ``before_round`` sees the live games before each round (to record positions); ``labels``
    and ``game_name`` name the agent and the game in an :class:`AgentError`.
    """
    run = BatchedGames(venv, seat_agents, seating, rng, on_end, labels=labels, game_name=game_name)
    while (live := run.live).size:
        if before_round is not None:
            before_round(live, run.game[live], venv.states, run.player)
        run.play_round(live)


def win_shares(record: dict[str, Any]) -> list[float]:
    """Per seat: 1 for a sole winner, 1/k for each of k co-winners, else 0 (a truncated game: all 0)."""
    winners = record["winners"]
    return [1.0 / len(winners) if p in winners else 0.0 for p in range(record["num_players"])]


__all__ = [
    "AgentError",
    "BatchedGames",
    "agent_error",
    "answer_problem",
    "ask",
    "batch_actions",
    "check_batch",
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
